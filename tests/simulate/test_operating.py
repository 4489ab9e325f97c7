"""Operating characteristics (simulate/_operating.py): common random numbers, blocks, batching."""

from __future__ import annotations

import copy
import math

import numpy as np
import pytest

from conftest import load_example
from verdictpack.config._blocks import (
    HumanSpec,
    PanelSpec,
    RoutesSpec,
    SequentialSpec,
    build_sequential,
)
from verdictpack.config._compiler import ConstructSpec, compile_construct
from verdictpack.simulate._judges import make_scenario
from verdictpack.simulate._operating import (
    BlockOutcome,
    Cell,
    Job,
    merge_blocks,
    run_cells,
    simulate_scenarios,
)
from verdictpack.simulate._panels import build_panel
from verdictpack.simulate._routes import route_design


@pytest.fixture(scope="module")
def design():
    cfg = copy.deepcopy(load_example("engine_summarization.json"))
    cfg["sequential"]["cap_roots"] = 150
    construct = compile_construct(ConstructSpec.model_validate(cfg["construct"]))
    panel = build_panel(PanelSpec.model_validate(cfg["panel"]))
    human = HumanSpec.model_validate(
        {k: cfg["human"][k] for k in ("judgments_per_root", "cost_per_judgment")}
    )
    seq = build_sequential(SequentialSpec.model_validate(cfg["sequential"]))
    return route_design(construct, panel, human, seq, RoutesSpec.model_validate(cfg["routes"]))


def _scenario(design, name: str, **kw):
    kw.setdefault("threshold_h", design.construct.governing_threshold_h)
    return make_scenario(name, design.panel, design.construct.human_baseline_rate, **kw)


def _numbers(oc) -> list[tuple]:
    return [
        (r.route, r.construction, {k: v.value for k, v in r.p_verdict.items()}, r.mean_roots.value)
        for r in oc.routes
    ]


def test_sprt_steps_are_walds(design) -> None:
    log_a, log_b, up, down = design.sprt_steps()
    a, b = design.per_side_alpha, design.sprt_beta
    p0, p1 = design.construct.human_baseline_rate, design.construct.p1_at_threshold
    # Wald's boundaries and steps, to the bit (BernoulliSPRT's own arithmetic)
    assert log_a == math.log((1 - b) / a)
    assert log_b == math.log(b / (1 - a))
    assert up == math.log(p1 / p0) and up > 0
    assert down == math.log((1 - p1) / (1 - p0)) and down < 0
    assert design.horizon == max(design.sequential.cap_roots, design.fixed_n)


def test_routes_and_verdict_distributions(design) -> None:
    job = Job(design, _scenario(design, "null"), "test/operating/null")
    (oc,) = simulate_scenarios([job], seed=3, replicates=60, block_size=30)
    assert [r.route for r in oc.routes] == ["eprocess", "eprocess", "sprt", "fixed_n"]
    assert oc.routes[0].construction == design.sequential.construction  # registered first
    for r in oc.routes:
        assert sum(p.value for p in r.p_verdict.values()) == pytest.approx(1.0)
        assert 0.0 <= r.p_wrong.value <= 1.0
        assert r.max_roots <= r.cap
    with pytest.raises(KeyError):
        oc.route("no-such-route")


def test_same_seed_same_numbers_and_threads_change_nothing(design) -> None:
    job = Job(design, _scenario(design, "registered_alternative"), "test/operating/alt")
    one = simulate_scenarios([job], seed=5, replicates=40, block_size=20)
    two = simulate_scenarios([job], seed=5, replicates=40, block_size=20, threads=2)
    other = simulate_scenarios([job], seed=6, replicates=40, block_size=20)
    assert _numbers(one[0]) == _numbers(two[0])
    assert _numbers(one[0]) != _numbers(other[0])


def test_a_job_batched_with_others_gives_its_numbers_alone(design) -> None:
    jobs = [
        Job(design, _scenario(design, "null"), "test/operating/a"),
        Job(design, _scenario(design, "registered_alternative"), "test/operating/b"),
    ]
    together = simulate_scenarios(jobs, seed=9, replicates=40, block_size=20)
    for job, oc in zip(jobs, together, strict=True):
        (alone,) = simulate_scenarios([job], seed=9, replicates=40, block_size=20)
        assert _numbers(alone) == _numbers(oc)


def test_no_jobs_no_work() -> None:
    assert simulate_scenarios([], seed=1, replicates=10, block_size=10) == []


def test_merge_blocks_keeps_block_order(design) -> None:
    scenario = _scenario(design, "null")
    a, b = run_cells(
        [
            Cell(design, scenario, 5, np.random.default_rng(1)),
            Cell(design, scenario, 7, np.random.default_rng(2)),
        ]
    )
    merged = merge_blocks([a, b])
    assert isinstance(merged, BlockOutcome)
    assert merged.sprt_codes.tolist() == a.sprt_codes.tolist() + b.sprt_codes.tolist()
    for i in range(len(a.eprocess_codes)):
        assert merged.eprocess_roots[i].tolist() == (
            a.eprocess_roots[i].tolist() + b.eprocess_roots[i].tolist()
        )
    assert merged.fixed_effect.shape == (12,)
