"""The battery (kind ``battery``): executors agree, error rates hold, refusals name their paths."""

from __future__ import annotations

import copy
import json
import sys
from pathlib import Path
from typing import Any

import pytest
from scipy import stats

from conftest import EXAMPLES, ROOT, load_example
from verdictpack._cli import main, run_config
from verdictpack._results import to_jsonable
from verdictpack.config._blocks import build_sequential
from verdictpack.config._compiler import compile_construct, load_source, parse_config
from verdictpack.kinds._base import RunOptions
from verdictpack.kinds._battery import (
    BatteryConfig,
    battery_tasks,
    build_scenario,
    execute_tasks,
    run_battery,
    simulate_with_grid,
)
from verdictpack.kinds._engine import EngineConfig
from verdictpack.simulate._judges import scenario_panel, true_rates
from verdictpack.simulate._operating import Job, simulate_scenarios
from verdictpack.simulate._panels import build_panel
from verdictpack.simulate._routes import route_design

BATTERY = "battery_summarization.json"
EPROCESS_LABELS = (
    "EFFECT_SUPPORTED",
    "NO_POSITIVE_EFFECT",
    "BELOW_PRACTICAL_THRESHOLD",
    "INCONCLUSIVE",
)


def reduced(replicates: int, block: int, cap: int, scenarios: list[dict[str, Any]]) -> dict:
    data = copy.deepcopy(load_example(BATTERY))
    data["replicates"] = replicates
    data["block_size"] = block
    data["sequential"]["cap_roots"] = cap
    data["scenarios"] = scenarios
    data.pop("true_h_grid")  # the grid has its own tests (test_battery_grid.py)
    data.pop("designs", None)  # so have the designs (test_battery_designs.py)
    return data


SMALL_SCENARIOS = [{"name": "null"}, {"name": "above_threshold", "true_h": 0.45}]


def _without_wall_clock(text: str) -> dict:
    data = json.loads(text)
    data.pop("wall_clock")
    return data


def _design_and_jobs(path: Path) -> tuple[BatteryConfig, list[Job]]:
    from verdictpack.kinds._battery import RULES

    cfg = parse_config(load_source(path), BatteryConfig, RULES)
    construct = compile_construct(cfg.construct_spec)
    panel = build_panel(cfg.panel)
    design = route_design(construct, panel, cfg.human, build_sequential(cfg.sequential), cfg.routes)
    jobs = [
        Job(design, build_scenario(s, panel, construct), f"battery/{s.display}")
        for s in cfg.scenarios
    ]
    return cfg, jobs


# ----------------------------------------------------------------------------------------------
# Executors: the numbers do not depend on how the blocks ran
# ----------------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def small_config(tmp_path_factory) -> Path:
    path = tmp_path_factory.mktemp("battery") / "small.json"
    path.write_text(json.dumps(reduced(400, 100, 150, SMALL_SCENARIOS)))
    return path


@pytest.fixture(scope="module")
def tiny_config(tmp_path_factory) -> Path:
    path = tmp_path_factory.mktemp("battery") / "tiny.json"
    path.write_text(json.dumps(reduced(200, 50, 80, SMALL_SCENARIOS)))
    return path


@pytest.fixture(scope="module")
def in_process(small_config: Path) -> dict[str, str]:
    return run_config(str(small_config), workers=1)


def test_two_local_workers_identical_to_one(small_config: Path, in_process) -> None:
    files = run_config(str(small_config), workers=2)
    assert files["results.json"] == in_process["results.json"]
    assert files["report.md"] == in_process["report.md"]
    assert _without_wall_clock(files["provenance.json"]) == _without_wall_clock(
        in_process["provenance.json"]
    )
    assert json.loads(files["provenance.json"])["wall_clock"]["workers"] == 2


def test_dask_local_cluster_identical_to_one_worker(small_config: Path, in_process) -> None:
    distributed = pytest.importorskip(
        "distributed", reason="dask[distributed] not installed (the dask extra)"
    )
    with distributed.LocalCluster(
        n_workers=2,
        threads_per_worker=1,
        processes=True,
        host="127.0.0.1",
        dashboard_address=None,
    ) as cluster:
        files = run_config(str(small_config), executor="dask", scheduler=cluster.scheduler_address)
    assert files["results.json"] == in_process["results.json"]
    assert files["report.md"] == in_process["report.md"]
    assert _without_wall_clock(files["provenance.json"]) == _without_wall_clock(
        in_process["provenance.json"]
    )


def test_batching_and_completion_order_do_not_move_a_number(tiny_config: Path) -> None:
    cfg, jobs = _design_and_jobs(tiny_config)
    battery = simulate_with_grid(jobs, cfg.seed, cfg.replicates, cfg.block_size)[0]
    # each scenario alone, through the runner the other layers use: same numbers
    for job, oc in zip(jobs, battery, strict=True):
        alone = simulate_scenarios([job], cfg.seed, cfg.replicates, cfg.block_size)[0]
        assert to_jsonable(alone) == to_jsonable(oc)
    # tasks finishing in reverse order are still assembled in block order
    tasks = battery_tasks(jobs, cfg.seed, cfg.replicates, cfg.block_size)
    forward = execute_tasks(
        battery_tasks(jobs, cfg.seed, cfg.replicates, cfg.block_size), RunOptions()
    )
    backward = execute_tasks(tasks[::-1], RunOptions())
    assert [t.index for t in tasks] == list(range(cfg.replicates // cfg.block_size))
    assert to_jsonable(forward) == to_jsonable(backward)


def test_results_carry_no_wall_clock(in_process) -> None:
    text = in_process["results.json"] + in_process["report.md"]
    for word in ("elapsed", "seconds", "wall", "started_utc", "per second"):
        assert word not in text.lower()


def test_dask_missing_is_a_usage_error_naming_the_extra(
    small_config: Path, monkeypatch, capsys, tmp_path: Path
) -> None:
    monkeypatch.setitem(sys.modules, "distributed", None)  # import distributed -> ImportError
    out = tmp_path / "out"
    code = main(
        [
            str(small_config),
            "--out",
            str(out),
            "--executor",
            "dask",
            "--scheduler",
            "tcp://127.0.0.1:8786",
        ]
    )
    assert code == 2
    err = capsys.readouterr().err
    assert "pip install 'verdictpack[dask]'" in err
    assert not out.exists()


# ----------------------------------------------------------------------------------------------
# Statistics: error rates, invariants
# ----------------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def informative(tmp_path_factory) -> dict:
    """An informative alpha (per tail 0.05) so that error-rate checks have power."""
    data = reduced(
        2000,
        500,
        200,
        [
            {"name": "null"},
            {"name": "registered_alternative"},
            {"name": "above_threshold", "true_h": 0.6},
        ],
    )
    data["construct"].update(alpha=0.2, per_tail_alpha=0.05, e_boundary=20.0)
    path = tmp_path_factory.mktemp("battery") / "informative.json"
    path.write_text(json.dumps(data))
    return json.loads(run_config(str(path))["results.json"])


def _eprocess(result: dict, label: str) -> list[dict]:
    row = next(s for s in result["scenarios"] if s["label"] == label)
    return [r for r in row["outcome"]["routes"] if r["route"] == "eprocess"]


def _count(route: dict, verdict: str) -> int:
    fig = route["p_verdict"][verdict]
    return round(fig["value"] * fig["replicates"])


def test_null_false_effect_rate_within_per_tail_alpha(informative) -> None:
    per_tail = informative["construct"]["per_tail_alpha"]
    routes = _eprocess(informative, "null")
    assert [r["construction"] for r in routes] == ["hybrid", "corners"]  # registered first
    for route in routes:
        count = _count(route, "EFFECT_SUPPORTED")
        reps = route["p_verdict"]["EFFECT_SUPPORTED"]["replicates"]
        assert reps == 2000
        assert stats.binom.sf(count - 1, reps, per_tail) >= 1e-3, (route["construction"], count)


def test_boundary_false_effect_rate_within_per_tail_alpha(informative) -> None:
    """True h exactly at the threshold: EFFECT_SUPPORTED would claim h >= threshold while the
    lower bound of the interval has crossed the truth -- the hardest null for that claim."""
    per_tail = informative["construct"]["per_tail_alpha"]
    for route in _eprocess(informative, "registered_alternative"):
        count = _count(route, "EFFECT_SUPPORTED")
        assert stats.binom.sf(count - 1, 2000, per_tail) >= 1e-3, (route["construction"], count)


def test_power_lives_above_the_threshold(informative) -> None:
    """The same design does call the effect when it is there (the checks above have teeth)."""
    for above, boundary in zip(
        _eprocess(informative, "above_threshold"),
        _eprocess(informative, "registered_alternative"),
        strict=True,
    ):
        hi, lo = above["p_verdict"]["EFFECT_SUPPORTED"], boundary["p_verdict"]["EFFECT_SUPPORTED"]
        assert hi["value"] - lo["value"] > 10 * (hi["mcse"] + lo["mcse"] + 1e-3)


def _check_invariants(result: dict) -> None:
    cap = result["cap_roots"]
    for row in result["scenarios"]:
        oc = row["outcome"]
        assert oc["replicates"] == result["replicates"]
        for route in oc["routes"]:
            route_cap = result["fixed_n_roots"] if route["route"] == "fixed_n" else cap
            assert route["cap"] == route_cap
            assert route["mean_roots"]["value"] <= route_cap
            assert route["max_roots"] <= route_cap
            assert all(q["value"] <= route_cap for q in route["roots_quantiles"].values())
            total = sum(f["value"] for f in route["p_verdict"].values())
            assert abs(total - 1.0) <= 1e-12, (row["label"], route["route"], total)
            if route["route"] == "eprocess":
                assert tuple(route["p_verdict"]) == EPROCESS_LABELS


def test_invariants_roots_within_cap_probabilities_sum_to_one(informative, in_process) -> None:
    _check_invariants(informative)
    _check_invariants(json.loads(in_process["results.json"]))


# ----------------------------------------------------------------------------------------------
# The example config
# ----------------------------------------------------------------------------------------------


def test_example_is_the_issue_battery() -> None:
    from verdictpack.kinds._battery import RULES

    cfg = parse_config(load_source(EXAMPLES / BATTERY), BatteryConfig, RULES)
    assert cfg.replicates == 10_000 and len(cfg.scenarios) == 5
    assert cfg.sequential.cap_roots == 600 and cfg.human.judgments_per_root == 2
    assert cfg.replicates % cfg.block_size == 0
    construct = compile_construct(cfg.construct_spec)
    engine = parse_config(load_source(EXAMPLES / "engine_summarization.json"), EngineConfig)
    assert cfg.construct_spec == engine.construct_spec
    panel = build_panel(cfg.panel)
    h = {}
    for spec in cfg.scenarios:
        sc = build_scenario(spec, panel, construct)
        h[spec.name] = true_rates(scenario_panel(panel, sc), sc, construct.human_baseline_rate)[2]
        if spec.name == "correlated_stress":
            assert sc.latent_correlation == 0.5 and sc.stream_correlation == 0.5
        if spec.name == "confounded":
            assert sc.effect_scale == 0.0 and sc.model_shift_h == 0.15
    assert abs(h["null"]) < 1e-12
    assert abs(h["registered_alternative"] - construct.governing_threshold_h) < 1e-9
    assert abs(h["correlated_stress"] - construct.governing_threshold_h) < 1e-9
    assert abs(h["above_threshold"] - 0.45) < 1e-9


def test_example_report_reduced(write_config) -> None:
    data = copy.deepcopy(load_example(BATTERY))
    data["replicates"], data["block_size"] = 200, 100
    data["true_h_grid"].update(points=3, replicates=100)
    data["designs_replicates"] = 100
    files = run_config(str(write_config(data)))
    report = files["report.md"]
    assert "a boundary, not a power point" in report
    summary = report.split("## Summary")[1].split("## Reading")[0]
    rows = [line for line in summary.splitlines() if line.startswith("| `")]
    assert [r.split("`")[1] for r in rows] == [s["name"] for s in data["scenarios"]]
    assert report.count("| route | guarantee it carries |") == 1
    assert report.count("| cost line (mean per run) |") == 5
    result = json.loads(files["results.json"])
    assert result["sequential_runs"] == 5 * 200
    _check_invariants(result)


@pytest.mark.slow
def test_committed_example_outputs_regenerate(tmp_path: Path) -> None:
    committed = ROOT / "examples" / "outputs" / "battery_summarization"
    files = run_config(str(EXAMPLES / BATTERY), workers=2)
    for name in ("report.md", "results.json"):
        assert files[name] == (committed / name).read_text()


# ----------------------------------------------------------------------------------------------
# Refusals: exit 2, every defect at its JSON path, nothing written
# ----------------------------------------------------------------------------------------------


def _refused(write_config, capsys, tmp_path: Path, data: dict) -> str:
    out = tmp_path / "out"
    assert main([str(write_config(data)), "--out", str(out)]) == 2
    assert not out.exists()
    return capsys.readouterr().err


@pytest.mark.parametrize(
    ("edit", "path", "expected"),
    [
        (
            lambda d: d["scenarios"][1].update(name="registered_alternate"),
            "$.scenarios[1].name",
            "one of null, registered_alternative",
        ),
        (lambda d: d.update(block_size=300), "$.replicates", "a multiple of block_size = 300"),
        (lambda d: d.update(block_size=20_000), "$.block_size", "at most replicates"),
        (lambda d: d.update(block_size=10), "$.block_size", "greater than or equal to 50"),
        (lambda d: d["scenarios"][4].pop("true_h"), "$.scenarios[4].true_h", "needs it"),
        (
            lambda d: d["scenarios"][0].update(true_h=0.4),
            "$.scenarios[0].true_h",
            "does not use it",
        ),
        (
            lambda d: d["scenarios"][4].update(true_h=3.0),
            "$.scenarios[4].true_h",
            "reachable range",
        ),
        (
            lambda d: d["scenarios"][3].update(stress_latent_correlation=-0.9),
            "$.scenarios[3].stress_latent_correlation",
            "",
        ),
        (
            lambda d: d["scenarios"][2].update(model_shift_h=2.5),
            "$.scenarios[2].model_shift_h",
            "the generative model refused position_bias",
        ),
        (
            lambda d: d["scenarios"].append({"name": "null"}),
            "$.scenarios[5].name",
            "a label not used by scenario 0",
        ),
        (
            lambda d: d["construct"].update(
                thresholds={"h": 0.001, "odds_ratio": 2.0}, extension_minimum_h=0.0005
            ),
            "$.construct.thresholds.h",
            "a threshold the fixed-n route can reach within 1,000,000 roots",
        ),
    ],
)
def test_refusals_name_their_path(write_config, capsys, tmp_path, edit, path, expected) -> None:
    data = copy.deepcopy(load_example(BATTERY))
    edit(data)
    err = _refused(write_config, capsys, tmp_path, data)
    lines = [line for line in err.splitlines() if f": {path}: " in line]
    assert lines, err
    assert expected in lines[0]


def test_every_defect_reported_at_once(write_config, capsys, tmp_path) -> None:
    data = copy.deepcopy(load_example(BATTERY))
    data["scenarios"][0]["name"] = "nul"
    data["scenarios"][2].pop("model_shift_h")
    data["block_size"] = 3000
    data.pop("true_h_grid")  # its replicates (2000) would be a fourth defect
    err = _refused(write_config, capsys, tmp_path, data)
    for path in ("$.scenarios[0].name", "$.scenarios[2].model_shift_h", "$.replicates"):
        assert f": {path}: " in err, err
    assert "3 defect(s)" in err


# ----------------------------------------------------------------------------------------------
# Progress bar
# ----------------------------------------------------------------------------------------------


def test_progress_counts_blocks_into_the_hook(tiny_config: Path) -> None:
    cfg, jobs = _design_and_jobs(tiny_config)
    tasks = battery_tasks(jobs, cfg.seed, cfg.replicates, cfg.block_size)
    calls: list[tuple[str, int, int]] = []
    execute_tasks(tasks, RunOptions(progress=lambda *a: calls.append(a)))
    assert calls == [("battery, blocks", k, len(tasks)) for k in range(len(tasks) + 1)]
    calls.clear()
    assert execute_tasks([], RunOptions(progress=lambda *a: calls.append(a))) == []
    assert calls == []  # no blocks: nothing to tell


def test_run_tells_progress_only_when_asked(tiny_config: Path, capsys) -> None:
    from verdictpack.kinds._battery import RULES

    cfg = parse_config(load_source(tiny_config), BatteryConfig, RULES)
    calls: list[tuple[str, int, int]] = []
    first = run_battery(cfg, load_source(tiny_config), RunOptions())
    second = run_battery(
        cfg, load_source(tiny_config), RunOptions(progress=lambda *a: calls.append(a))
    )
    assert capsys.readouterr().err == ""  # the hook, not the kind, writes to a terminal
    assert calls and calls[-1][1] == calls[-1][2] and calls[0][1] == 0
    assert first == second  # progress never changes a number
