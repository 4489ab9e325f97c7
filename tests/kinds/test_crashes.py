"""Every accepted config runs without an internal error (issue 12, items 4 and 5).

Each input that once crashed a kind's run (IndexError, OverflowError, MemoryError, inf in the
results, a hang) is run through the CLI on a copy of a bundled example: it must end with exit 0
and finite results, or with exit 2, the config's JSON path on stderr, no traceback and no output
folder. Refusals raised inside the statistics name the config field they came from (item 5).
The two memory bounds are also checked to leave every number as it was.
"""

from __future__ import annotations

import copy
import json
import math
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from conftest import ROOT, load_example
from verdictpack._cli import main
from verdictpack.simulate import _draw, _judges, _operating

ENGINE = "engine_summarization.json"
SIZING = "sizing_summarization.json"
VERDICT = "verdict_summarization.json"
JUDGES = "judges_summarization.json"
BATTERY = "battery_summarization.json"


def small(name: str) -> dict[str, Any]:
    """An example shrunk to run in about a second (fewer replicates, a shorter cap)."""
    data = copy.deepcopy(load_example(name))
    if data["kind"] == "engine":
        data["power"]["replicates"] = 50
        data["human"]["baseline"]["replicates"] = 1000
        data["human"]["audit"]["roots"] = 50
        data["sequential"]["cap_roots"] = 100
        data["stimuli"]["candidates"] = 120
    elif data["kind"] == "sizing":
        data["simulation"]["replicates"] = 1000
    elif data["kind"] == "battery":
        data["replicates"], data["block_size"] = 100, 100
        data.pop("true_h_grid", None)
        data.pop("designs", None)
    else:
        data["replicates"] = 100
    return data


def set_at(data: dict[str, Any], path: str, value: Any) -> dict[str, Any]:
    """Set ``a.b.0.c`` in a config (integers index lists)."""
    keys = [int(k) if k.isdigit() else k for k in path.split(".")]
    cur: Any = data
    for key in keys[:-1]:
        cur = cur[key]
    cur[keys[-1]] = value
    return data


def _no_constants(token: str) -> Any:
    raise AssertionError(f"results.json holds {token}")


def run_cli(tmp_path: Path, capsys: Any, data: Any, *, raw: str | None = None) -> tuple[int, str]:
    """Run the CLI on ``data`` (or raw config text) with --out; check the contract of the exit:
    0 -> finite results.json; 2 -> nothing written; never 1, never a traceback."""
    tmp_path.mkdir(parents=True, exist_ok=True)
    cfg = tmp_path / "config.json"
    cfg.write_text(raw if raw is not None else json.dumps(data))
    out = tmp_path / "out"
    rc = main([str(cfg), "--out", str(out), "--quiet"])
    err = capsys.readouterr().err
    assert "Traceback" not in err
    assert rc in (0, 2), err
    if rc == 0:
        results = json.loads((out / "results.json").read_text(), parse_constant=_no_constants)
        assert _all_finite(results)
    else:
        assert not out.exists()
        assert sorted(p.name for p in tmp_path.iterdir()) == ["config.json"]
    return rc, err


def _all_finite(value: Any) -> bool:
    if isinstance(value, float):
        return math.isfinite(value)
    if isinstance(value, dict):
        return all(_all_finite(v) for v in value.values())
    if isinstance(value, list):
        return all(_all_finite(v) for v in value)
    return True


def refused_at(tmp_path: Path, capsys: Any, data: Any, path: str, *words: str) -> str:
    """Exit 2 with a defect line at ``path`` holding every one of ``words``; that line."""
    rc, err = run_cli(tmp_path, capsys, data)
    assert rc == 2, err
    lines = [ln for ln in err.splitlines() if f": {path}: received " in ln]
    assert lines, err
    for word in words:
        assert word in lines[0], lines[0]
    return lines[0]


def run_limited(tmp_path: Path, data: Any, limit_bytes: int, timeout: float = 120) -> str:
    """Run the CLI in a child process whose address space is capped at ``limit_bytes``: a run
    that tries to hold more fails there (MemoryError, exit 1) instead of paging this machine."""
    cfg = tmp_path / "config.json"
    cfg.write_text(json.dumps(data))
    out = tmp_path / "out"
    code = (
        "import resource, sys\n"
        f"resource.setrlimit(resource.RLIMIT_AS, ({limit_bytes}, {limit_bytes}))\n"
        "from verdictpack._cli import main\n"
        "sys.exit(main(sys.argv[1:]))\n"
    )
    env = dict(os.environ, OPENBLAS_NUM_THREADS="1", OMP_NUM_THREADS="1", MALLOC_ARENA_MAX="2")
    env["PYTHONPATH"] = os.pathsep.join([str(ROOT / "src"), env.get("PYTHONPATH", "")])
    proc = subprocess.run(
        [sys.executable, "-c", code, str(cfg), "--out", str(out), "--quiet"],
        capture_output=True,
        text=True,
        timeout=timeout,
        env=env,
    )
    assert "Traceback" not in proc.stderr
    assert proc.returncode == 0, proc.stderr
    results = json.loads((out / "results.json").read_text(), parse_constant=_no_constants)
    assert _all_finite(results)
    return proc.stderr


# ------------------------------------------------------------------------------------------
# the engine: no confound arm at all
# ------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "confounds",
    [[], [{"name": "reader", "description": "readers reconstruct it", "crossed_with": []}]],
    ids=["none", "reader-only"],
)
def test_engine_without_a_simulated_confound_arm_runs(tmp_path, capsys, confounds) -> None:
    data = small(ENGINE)
    data["construct"]["known_confounds"] = confounds
    rc, err = run_cli(tmp_path, capsys, data)
    assert rc == 0, err
    results = json.loads((tmp_path / "out" / "results.json").read_text())
    arms = results["confound_arms"]
    assert len(arms) == len(confounds)
    assert all(arm["outcome"] is None for arm in arms)


# ------------------------------------------------------------------------------------------
# thresholds.h and e_boundary: huge or not a number
# ------------------------------------------------------------------------------------------


@pytest.mark.parametrize("example", [SIZING, VERDICT, JUDGES, ENGINE, BATTERY])
@pytest.mark.parametrize("field", ["thresholds.h", "e_boundary"])
def test_huge_threshold_or_boundary_refused_at_its_path(tmp_path, capsys, example, field) -> None:
    data = set_at(small(example), f"construct.{field}", 1e308)
    refused_at(tmp_path, capsys, data, f"$.construct.{field}", "1e+308")


@pytest.mark.parametrize("field", ["thresholds.h", "e_boundary"])
@pytest.mark.parametrize("token", ["NaN", "Infinity", "-Infinity"])
def test_non_finite_threshold_or_boundary_refused_at_its_path(
    tmp_path, capsys, field, token
) -> None:
    data = set_at(small(VERDICT), f"construct.{field}", "MARK")
    raw = json.dumps(data).replace('"MARK"', token)
    rc, err = run_cli(tmp_path, capsys, None, raw=raw)
    assert rc == 2 and f"$.construct.{field}: received {token}" in err


def test_a_boundary_of_1e308_that_matches_its_alpha(tmp_path, capsys) -> None:
    """e_boundary 1e308 with per_tail_alpha 1e-308: sizing does not use the construct's alpha
    and runs; a sequential kind refuses the alpha whose normal quantile is infinite."""
    edits = {"alpha": 4e-308, "per_tail_alpha": 1e-308, "e_boundary": 1e308}
    sizing = small(SIZING)
    sizing["construct"].update(edits)
    assert run_cli(tmp_path / "sizing", capsys, sizing)[0] == 0
    verdict = small(VERDICT)
    verdict["construct"].update(edits)
    refused_at(tmp_path / "verdict", capsys, verdict, "$.construct.alpha", "normal quantile")


# ------------------------------------------------------------------------------------------
# costs of 1e308: bounded, so every total stays finite
# ------------------------------------------------------------------------------------------

COST_FIELDS = [
    (ENGINE, "panel.judges.0.cost_per_judgment"),
    (ENGINE, "human.cost_per_judgment"),
    (ENGINE, "human.audit.cost_per_reading"),
    (ENGINE, "stimuli.spot_check.cost_per_touch"),
    (VERDICT, "streams.cost_per_judgment"),
    (VERDICT, "streams.human.cost_per_judgment"),
    (JUDGES, "compositions.0.judges.0.cost_per_judgment"),
    (JUDGES, "human.cost_per_judgment"),
    (BATTERY, "panel.judges.0.cost_per_judgment"),
    (BATTERY, "human.cost_per_judgment"),
]


@pytest.mark.parametrize(("example", "field"), COST_FIELDS)
def test_cost_of_1e308_refused_at_its_path(tmp_path, capsys, example, field) -> None:
    data = set_at(small(example), field, 1e308)
    path = "$." + ".".join(f"[{k}]" if k.isdigit() else k for k in field.split("."))
    refused_at(tmp_path, capsys, data, path.replace(".[", "["), "1e+308", "1000000000")


def test_every_cost_at_its_bound_gives_finite_totals(tmp_path, capsys) -> None:
    data = small(ENGINE)
    for example, field in COST_FIELDS:
        if example == ENGINE:
            set_at(data, field, 1e9)
    for judge in data["panel"]["judges"]:
        judge["cost_per_judgment"] = 1e9
    rc, err = run_cli(tmp_path, capsys, data)
    assert rc == 0, err
    results = json.loads((tmp_path / "out" / "results.json").read_text())
    total = next(c for c in results["costs"] if c["line"] == "total")
    assert 1e9 < total["cost"]["value"] < 1e20


# ------------------------------------------------------------------------------------------
# sizes beyond every bound
# ------------------------------------------------------------------------------------------


def test_binomial_arm_needing_gigabytes_refused_with_its_closed_form_n(tmp_path, capsys) -> None:
    data = set_at(small(SIZING), "arms.1.effect_h", 1e-4)
    line = refused_at(tmp_path, capsys, data, "$.arms[1].effect_h", "1,000,000", "closed form")
    assert "1,781,416,439" in line  # n at the decisive point, by the normal approximation


@pytest.mark.parametrize(
    ("field", "value", "path"),
    [
        ("arms.2.p1", 0.5000001, "$.arms[2].p1"),
        ("arms.0.dz", 1e-3, "$.arms[0].dz"),
        ("arms.0.dz", 1e-300, "$.arms[0].dz"),
        ("design_points.decisive.alpha", 1e-300, "$.design_points.decisive.alpha"),
    ],
)
def test_sizing_arms_beyond_the_maximum_n_refused(tmp_path, capsys, field, value, path) -> None:
    refused_at(tmp_path, capsys, set_at(small(SIZING), field, value), path)


@pytest.mark.parametrize("example", [SIZING, VERDICT, JUDGES, ENGINE, BATTERY])
def test_threshold_of_1e_320_refused_at_its_path(tmp_path, capsys, example) -> None:
    data = small(example)
    data["construct"]["thresholds"]["h"] = 1e-320
    data["construct"]["extension_minimum_h"] = 1e-320
    refused_at(tmp_path, capsys, data, "$.construct.thresholds.h", "1,000,000")


def test_threshold_whose_fixed_n_route_exceeds_the_cap_limit(tmp_path, capsys) -> None:
    data = small(VERDICT)
    data["construct"]["thresholds"]["h"] = 1e-3
    data["construct"]["extension_minimum_h"] = 1e-3
    refused_at(tmp_path, capsys, data, "$.construct.thresholds.h", "35,628,329")


def test_spot_check_error_rate_near_zero_refused_not_looping(tmp_path, capsys) -> None:
    data = set_at(small(ENGINE), "stimuli.spot_check.error_rate", 1e-300)
    refused_at(tmp_path, capsys, data, "$.stimuli.spot_check.error_rate", "1,000,000 pairs")


# ------------------------------------------------------------------------------------------
# memory: large panels and long caps run in bounded memory
# ------------------------------------------------------------------------------------------

# Both runs below peak near 0.4 GB of address space; before the bounds they needed 1.9 GB (the
# panel's latents in one array) and 5.7 GB (a block's counts over a cap of 10^6 roots).
MEMORY_LIMIT = 3 * 2**29


def test_ten_thousand_judges_run_in_bounded_memory(tmp_path) -> None:
    data = small(JUDGES)
    judge = data["compositions"][0]["judges"][0]
    data["compositions"] = [
        {
            "name": "ten thousand",
            "latent_correlation": 0.2,
            "judges": [dict(judge, name=f"judge-{i}") for i in range(10_000)],
        }
    ]
    data["construct"]["thresholds"].update(h=1.0, odds_ratio=100.0)  # fixed-n route: 36 roots
    data["construct"]["extension_minimum_h"] = 0.5
    data["sequential"]["cap_roots"] = 20
    run_limited(tmp_path, data, MEMORY_LIMIT)
    results = json.loads((tmp_path / "out" / "results.json").read_text())
    assert results["compositions"][0]["nominal_size"] == 10_000


def test_cap_roots_at_its_limit_runs_in_bounded_memory(tmp_path) -> None:
    data = small(VERDICT)
    data["sequential"]["cap_roots"] = 1_000_000  # the documented upper limit
    data["streams"]["judges_per_root"] = 1
    data["streams"]["human"]["judgments_per_root"] = 1
    data["scenarios"] = [{"name": "above", "true_h": 0.6}]
    run_limited(tmp_path, data, MEMORY_LIMIT)
    results = json.loads((tmp_path / "out" / "results.json").read_text())
    assert results["cap_roots"] == 1_000_000


@pytest.mark.parametrize("icc", [None, 0.45])
def test_judge_blocks_draw_the_same_numbers(monkeypatch, icc: float | None) -> None:
    """The blocked draw of a large panel gives exactly the numbers of the one-shot draw (with
    and without a human sheet's ICC, whose shared root latent V sits between E and U)."""
    judges = tuple(
        _judges.JudgeSheet(f"j{i}", "r", 0.3 + 0.04 * (i % 10), 0.5 * (-1) ** i, 0.1, 0.05)
        for i in range(13)
    )
    panel = _judges.Panel(judges, 0.3)
    scenario = _judges.TruthScenario("s", effect_scale=0.3, stream_correlation=0.4)

    def draw(limit: int) -> tuple[Any, ...]:
        monkeypatch.setattr(_draw, "_DRAW_NORMALS", limit)
        rng = np.random.default_rng(7)
        model, human = _draw.simulate_panel(panel, scenario, 0.5, 5, 70, 11, rng, icc)
        return model, human, rng.standard_normal()

    one_shot = draw(1 << 22)
    for limit in (1, 37, 1000):
        blocked = draw(limit)
        assert np.array_equal(blocked[0], one_shot[0])
        assert np.array_equal(blocked[1], one_shot[1])
        assert blocked[2] == one_shot[2]  # the generator ends where it did


def test_replicate_slices_give_the_same_outcomes(monkeypatch) -> None:
    """Running a block's replicates in slices (the memory bound) changes no outcome."""
    from verdictpack.config._blocks import build_sequential
    from verdictpack.config._compiler import compile_construct
    from verdictpack.simulate._panels import build_panel
    from verdictpack.simulate._routes import route_design

    cfg = load_example(BATTERY)
    from verdictpack.kinds._battery import BatteryConfig

    config = BatteryConfig.model_validate(cfg)
    design = route_design(
        compile_construct(config.construct_spec),
        build_panel(config.panel),
        config.human,
        build_sequential(config.sequential),
        config.routes,
    )

    def outcomes(limit: int) -> list[Any]:
        monkeypatch.setattr(_operating, "BATCH_BYTES", limit)
        cells = [
            _operating.Cell(design, _judges.TruthScenario("a", 0.3), 230, np.random.default_rng(1)),
            _operating.Cell(design, _judges.TruthScenario("b"), 170, np.random.default_rng(2)),
        ]
        out = []
        for block in _operating.run_cells(cells, threads=2):
            out += [*block.eprocess_codes, *block.eprocess_roots, block.sprt_codes]
            out += [block.sprt_roots, block.fixed_effect]
        return out

    whole = outcomes(1 << 40)
    for limit in (1, 3 * _operating.replicate_bytes(design)):
        assert all(np.array_equal(a, b) for a, b in zip(outcomes(limit), whole, strict=True))


# ------------------------------------------------------------------------------------------
# item 5: refusals of the statistics at the config's path, with a hint
# ------------------------------------------------------------------------------------------


def test_too_few_candidates_names_the_field_and_the_gates(tmp_path, capsys) -> None:
    data = set_at(small(ENGINE), "stimuli.candidates", 1)
    line = refused_at(tmp_path, capsys, data, "$.stimuli.candidates", "n_admitted", "29")
    assert "admitted 1 of 1 candidates" in line and "parameter 'n_admitted'" not in line


def test_gates_admitting_nothing_are_named(tmp_path, capsys) -> None:
    data = set_at(small(ENGINE), "stimuli.family", "length")  # length templates, register gates
    line = refused_at(tmp_path, capsys, data, "$.stimuli.candidates", "admitted 0 of 120")
    assert "length_match 120" in line and "stimuli.gates.length_tolerance" in line
    assert "more candidates cannot help" in line


@pytest.mark.parametrize(
    ("example", "field", "value", "path", "word"),
    [
        (ENGINE, "truth.true_h", 1e308, "$.truth.true_h", "reachable range"),
        (ENGINE, "truth.true_h", -0.0, "$.truth.true_h", "reachable range"),
        (ENGINE, "power.above_threshold_h.0", 3.0, "$.power.above_threshold_h[0]", "target_h"),
        (ENGINE, "confound_stress.model_shift_h", 3.0, "$.confound_stress.model_shift_h", "p ±"),
        (ENGINE, "human.baseline.power", 1e-300, "$.human.baseline.power", "above alpha"),
        (
            JUDGES,
            "worlds.effect_present.effect_scale",
            10.0,
            "$.worlds.effect_present.effect_scale",
            "p ±",
        ),
        (VERDICT, "streams.latent_correlation", -1.0, "$.streams.latent_correlation", "semi"),
    ],
)
def test_statistics_refusals_name_the_config_field(
    tmp_path, capsys, example, field, value, path, word
) -> None:
    line = refused_at(tmp_path, capsys, set_at(small(example), field, value), path, word)
    assert "refused" in line  # which statistic refused which of its parameters


def test_refusals_map_parameters_and_pass_through_without_a_config(tmp_path) -> None:
    from verdictpack._errors import ConfigError, InputError
    from verdictpack.config._compiler import load_source
    from verdictpack.config._refusals import Refusals

    cfg = tmp_path / "c.json"
    cfg.write_text(json.dumps({"a": {"b": [1, 2.5]}, "c": 3}))
    refusals = Refusals(load_source(cfg))
    mapped = refusals.at(("c",), "the test statistic", params={"x": ("a", "b", 1)})
    with pytest.raises(ConfigError) as err, mapped:
        raise InputError("x", "a number above 3", 2.5)
    (defect,) = err.value.defects
    assert (defect.path, defect.received) == ("$.a.b[1]", 2.5)
    assert defect.expected == (
        "a value the test statistic can work with (it refused x = 2.5, expecting a number above 3)"
    )
    with pytest.raises(ConfigError) as err, refusals.at(("c",), "the statistic", hint="raise c"):
        raise InputError("y", "something else", 0)
    assert err.value.defects[0].path == "$.c" and "raise c" in err.value.defects[0].expected
    # API callers without a config keep the InputError
    with pytest.raises(InputError), Refusals.none().at(("c",), "the test statistic"):
        raise InputError("y", "something else", 0)
