"""The paired-difference (hybrid) region buys shorter runs at the same guarantee (§7 of
docs/statistics.md)."""

from __future__ import annotations

import numpy as np
import pytest
from scipy.stats import binom

from conftest import load_example
from verdictpack.config._blocks import (
    HumanSpec,
    PanelSpec,
    RoutesSpec,
    SequentialSpec,
    build_sequential,
)
from verdictpack.config._compiler import ConstructSpec, compile_construct
from verdictpack.simulate._judges import TruthScenario, make_scenario
from verdictpack.simulate._operating import Job, simulate_scenarios
from verdictpack.simulate._panels import build_panel
from verdictpack.simulate._routes import route_design


def example_design(
    cap: int,
    construction: str = "hybrid",
    per_tail: float | None = None,
    baseline: float | None = None,
):
    cfg = load_example("engine_summarization.json")
    spec = dict(cfg["construct"])
    if per_tail is not None:
        spec.update(alpha=4 * per_tail, per_tail_alpha=per_tail, e_boundary=1 / per_tail)
    if baseline is not None:
        spec["human_baseline_rate"] = baseline
    construct = compile_construct(ConstructSpec.model_validate(spec))
    seq = build_sequential(SequentialSpec(construction=construction, cap_roots=cap))
    panel_cfg = cfg["panel"]
    if baseline is not None:  # judges whose standing preference matches the human baseline
        judge = {
            "role": "judge",
            "baseline_rate": baseline,
            "lean_h": 0.5,
            "noise": 0.1,
            "position_bias": 0.05,
            "cost_per_judgment": 0.004,
        }
        panel_cfg = {
            "name": "matched",
            "latent_correlation": 0.3,
            "judges": [{"name": f"j{i}", **judge} for i in range(3)],
        }
    panel = build_panel(PanelSpec.model_validate(panel_cfg))
    human = HumanSpec.model_validate({"judgments_per_root": 2, "cost_per_judgment": 0.4})
    routes = RoutesSpec(sprt_beta=0.05, fixed_n_power=0.95)
    return construct, panel, route_design(construct, panel, human, seq, routes)


def _median_roots_to_effect(oc, construction: str) -> tuple[float, float]:
    route = oc.route("eprocess", construction)
    return route.roots_quantiles["q50"].value, route.p_verdict_issued.value


def test_hybrid_needs_at_most_0_6_of_the_corners_roots_at_h_0_45() -> None:
    construct, panel, design = example_design(cap=4000)
    scenario = make_scenario("above_threshold", panel, construct.human_baseline_rate, true_h=0.45)
    (oc,) = simulate_scenarios(
        [Job(design, scenario, "test/hybrid/long")], seed=8, replicates=200, block_size=200
    )
    med_h, issued_h = _median_roots_to_effect(oc, "hybrid")
    med_c, issued_c = _median_roots_to_effect(oc, "corners")
    # the cap is high enough that at least 95 % of runs reach a verdict, for both constructions
    assert issued_h >= 0.95 and issued_c >= 0.95
    for c in ("hybrid", "corners"):
        assert oc.route("eprocess", c).p_verdict["EFFECT_SUPPORTED"].value >= 0.95
    assert med_h <= 0.6 * med_c, (med_h, med_c)


def test_hybrid_wins_more_often_at_the_registered_cap() -> None:
    construct, panel, design = example_design(cap=600)
    scenario = make_scenario("above_threshold", panel, construct.human_baseline_rate, true_h=0.45)
    (oc,) = simulate_scenarios(
        [Job(design, scenario, "test/hybrid/cap")], seed=8, replicates=400, block_size=400
    )
    p_h = oc.route("eprocess", "hybrid").p_verdict["EFFECT_SUPPORTED"]
    p_c = oc.route("eprocess", "corners").p_verdict["EFFECT_SUPPORTED"]
    assert p_h.value - p_c.value > 4 * np.hypot(p_h.mcse, p_c.mcse)


@pytest.mark.parametrize("baseline", [0.15, 0.5])
@pytest.mark.parametrize("stream_correlation", [0.0, 0.5])
def test_boundary_null_false_effect_rate_within_alpha(baseline, stream_correlation) -> None:
    """At true h exactly at the threshold, P(false EFFECT_SUPPORTED) <= 2a per side, for both
    constructions, measured at an informative per-tail alpha (a = 0.025)."""
    a = 0.025
    construct, panel, design = example_design(cap=300, per_tail=a, baseline=baseline)
    base = make_scenario(
        "registered_alternative",
        panel,
        construct.human_baseline_rate,
        threshold_h=construct.governing_threshold_h,
    )
    scenario = TruthScenario(
        name="boundary null",
        effect_scale=base.effect_scale,
        stream_correlation=stream_correlation,
    )
    reps = 600
    (oc,) = simulate_scenarios(
        [Job(design, scenario, f"test/boundary/{baseline}")],
        seed=8,
        replicates=reps,
        block_size=reps,
    )
    assert abs(oc.true_h - construct.governing_threshold_h) < 1e-9
    for c in ("hybrid", "corners"):
        count = round(oc.route("eprocess", c).p_verdict["EFFECT_SUPPORTED"].value * reps)
        # fail only when observing this many false claims is implausible at the bound 2a
        assert binom.sf(count - 1, reps, 2 * a) >= 1e-3, (c, count)
