"""The round trip, as an acceptance test: an engine run, written as study files and read back by
the study kind, gives the engine's verdict and root on all three tracks (exactly), its h-intervals
and bounds (to the compiled kernel's last bits) and its reader-audit kappa (exactly). And the
bundled study examples: the three annotation-tool formats carry the same evidence as
study_summarization, so they give its verdict, and the generator rewrites them byte for byte."""

from __future__ import annotations

import copy
import importlib.util
import json
import sys
from pathlib import Path
from typing import Any

import pytest

from conftest import EXAMPLES, load_example
from verdictpack._rng import stream
from verdictpack.config._compiler import ConfigSource, load_source, parse_config
from verdictpack.core._tracks import TRACKS
from verdictpack.kinds import _engine, _study
from verdictpack.render._study import render_study_report
from verdictpack.simulate._export import judgments_from_evidence, pairs_jsonl, readings_from_audit
from verdictpack.simulate._human import simulate_reader_audit

# gates that admit every engine pair (the engine's own gates already admitted them)
OPEN_GATES = {
    "length_tolerance": 5.0,
    "max_diff_tokens": 1000,
    "content_threshold": 0.01,
    "fragment_threshold": 1.0,
    "require_numbers": False,
}


def engine_config(construction: str, truth: dict[str, Any], cap: int) -> dict[str, Any]:
    """The bundled engine example, made small: ``cap`` roots, as many candidates as needed."""
    raw = copy.deepcopy(load_example("engine_summarization.json"))
    raw["sequential"]["construction"] = construction
    raw["sequential"]["cap_roots"] = cap
    raw["stimuli"]["candidates"] = cap + cap // 2
    raw["truth"].update(truth)
    # readers well above the gate: the example's 200 roots at reconstruction rate 0.92 (planning
    # kappa 0.71) pass the gate on the kappa lower bound only about 58 % of the time, and these
    # round trips are about the preference verdict, not the reader audit
    raw["human"]["audit"]["reconstruction_rate"] = 0.97
    return raw


def run_engine(raw: dict[str, Any]) -> tuple[Any, Any, Any]:
    source = ConfigSource(display="engine.json", name="engine.json", data=json.dumps(raw).encode())
    cfg = parse_config(source, _engine.EngineConfig, _engine.RULES)
    plan = _engine.plan_engine(cfg)
    tracks = _engine.run_sequential(plan, _engine.simulated_source(cfg, plan))
    return cfg, plan, tracks


def write_study(folder: Path, raw: dict[str, Any], cfg: Any, plan: Any, tracks: Any) -> Path:
    """The engine run as study files (pairs, table, readings, the engine's order) + config."""
    folder.mkdir(parents=True, exist_ok=True)
    stimuli = [g.stimulus for g in plan.factory.admitted[: tracks.roots_run]]
    (folder / "pairs.jsonl").write_text(pairs_jsonl(stimuli), encoding="utf-8")
    (folder / "judgments.csv").write_bytes(judgments_from_evidence(tracks.rows).to_csv_bytes())
    a = cfg.human.audit
    audit = simulate_reader_audit(
        plan.reader_audit.n_roots,
        a.reconstruction_rate,
        stream(cfg.seed, "engine/audit"),
        a.categories,
    )
    (folder / "readings.csv").write_bytes(readings_from_audit(audit).to_csv_bytes())
    (folder / "order.txt").write_text("".join(f"{r['stimulus_id']}\n" for r in tracks.rows))
    judges = raw["panel"]["judges"]
    study = {
        "kind": "study",
        "seed": raw["seed"],
        "construct": raw["construct"],
        "sequential": raw["sequential"],
        "panel": {
            "name": raw["panel"]["name"],
            "judges": [
                {"name": j["name"], "cost_per_judgment": j["cost_per_judgment"]} for j in judges
            ],
        },
        "humans": {
            "judgments_per_root": raw["human"]["judgments_per_root"],
            "cost_per_judgment": raw["human"]["cost_per_judgment"],
        },
        "data": {
            "stimuli": {
                "path": "pairs.jsonl",
                "mapping": {
                    "id": "id",
                    "source": "source",
                    "treatment": "treatment",
                    "null_partner": "null_partner",
                },
            },
            "judgments": [{"format": "table", "path": "judgments.csv"}],
            "reader_audit": {
                "path": "readings.csv",
                "kappa_min": a.kappa_min,
                "kappa_bound_level": a.kappa_bound_level,
                "cost_per_reading": a.cost_per_reading,
            },
            "root_order": "order.txt",
        },
        "gates": OPEN_GATES,
    }
    path = folder / "study.json"
    path.write_text(json.dumps(study, indent=2), encoding="utf-8")
    return path


def run_study_file(path: Path) -> _study.StudyResult:
    source = load_source(path)
    return _study.run_study(parse_config(source, _study.StudyConfig, _study.RULES), source)


CASES = [
    pytest.param(
        "hybrid",
        {"scenario": "above_threshold", "true_h": 0.45},
        20261130,
        "EFFECT_SUPPORTED",
        id="hybrid-effect-supported",
    ),
    pytest.param(
        "corners",
        {"scenario": "null"},
        3,
        "BELOW_PRACTICAL_THRESHOLD",
        id="corners-below-threshold",
    ),
]
CAP = 300

# The study reads its tracks off one compiled pass per track (core._tracks.TrackTrace), the
# engine updates HTracker root by root: the two agree to the last bits of the floating-point
# search (measured: at most 1.4e-15 on any root's bound or interval). Verdicts and roots are
# compared exactly, numbers to this tolerance.
KERNEL_TOLERANCE = 1e-12


def assert_same_track(study: Any, engine: Any, track: str) -> None:
    for name in ("track", "construction", "threshold_h", "claim", "verdict", "roots_at_verdict"):
        assert getattr(study, name) == getattr(engine, name), (track, name)
    assert study.error_per_side == engine.error_per_side, track
    for name in ("h_interval", "model_bounds", "human_bounds", "diff_bounds"):
        s, e = getattr(study, name), getattr(engine, name)
        if e is None:
            assert s is None, (track, name)
        else:
            assert s == pytest.approx(e, rel=0, abs=KERNEL_TOLERANCE), (track, name)


@pytest.mark.parametrize(("construction", "truth", "seed", "verdict"), CASES)
def test_round_trip_gives_the_engine_verdict(
    tmp_path: Path, construction: str, truth: dict[str, Any], seed: int, verdict: str
) -> None:
    raw = engine_config(construction, truth, CAP)
    raw["seed"] = seed
    cfg, plan, tracks = run_engine(raw)
    assert tracks.registered.verdict == verdict
    assert tracks.registered.construction == construction
    assert tracks.roots_run < CAP  # the verdict came before the cap: the case is what it says
    res = run_study_file(write_study(tmp_path / "study", raw, cfg, plan, tracks))
    assert res.gates.refused == 0
    assert res.roots_available == tracks.roots_run
    assert res.roots_run == tracks.roots_run
    for track in TRACKS:
        assert_same_track(getattr(res, track), getattr(tracks, track), track)
    for engine_row, study_row in zip(tracks.rows, res.evidence, strict=True):
        assert study_row["root_id"] == engine_row["stimulus_id"]
        assert (study_row["M"], study_row["H"]) == (engine_row["M"], engine_row["H"])
        assert study_row["state"] == engine_row["state"]
        for name in ("h_interval", "comparison_h_interval", "model_bounds", "human_bounds"):
            assert study_row[name] == pytest.approx(engine_row[name], rel=0, abs=KERNEL_TOLERANCE)
    assert res.audit.passed == plan.reader_audit.passed
    assert res.audit.kappa == plan.reader_audit.kappa
    assert (res.audit.ci_low, res.audit.ci_high) == (
        plan.reader_audit.ci_low,
        plan.reader_audit.ci_high,
    )


# ---------------------------------------------------------------- the bundled study examples

FORMATS = ("labelstudio", "argilla", "mturk")


@pytest.fixture(scope="module")
def summarization() -> _study.StudyResult:
    return run_study_file(EXAMPLES / "study_summarization.json")


def test_study_summarization_has_something_for_the_policy(
    summarization: _study.StudyResult,
) -> None:
    res = summarization
    c = res.coverage
    # the unknown answers bounded both ways leave the data short of a verdict (scored against
    # the claim, as before, they had pushed the interval below the threshold at root 149: the
    # imputation, not the data, made that BELOW_PRACTICAL_THRESHOLD)
    assert res.registered.verdict == "INCONCLUSIVE"
    assert res.registered.roots_at_verdict == res.roots_available
    e = res.estimate
    assert e.model_unknown == c.model_invalid + c.model_missing_cells > 0
    assert e.human_unknown == c.human_invalid > 0
    assert e.width_bounded is not None and e.width_midpoint is not None
    assert e.width_bounded > e.width_midpoint  # the width the unknowns cost
    assert e.roots_without_humans_unbounded == c.roots_entered - c.roots_with_humans > 0
    assert 0 < res.gates.refused < res.gates.admitted // 10
    assert res.audit.passed
    assert c.model_ties > 0 and c.model_invalid > 0 and c.human_invalid > 0
    assert c.roots_one_order_only > 0 and c.model_missing_cells > 0
    assert 0 < c.roots_with_humans < c.roots_entered  # humans on part of the roots
    assert res.root_order.startswith("keyed hash")


@pytest.mark.parametrize("fmt", FORMATS)
def test_format_examples_give_the_verdict_of_study_summarization(
    fmt: str, summarization: _study.StudyResult
) -> None:
    res = run_study_file(EXAMPLES / f"study_{fmt}.json")
    assert fmt in {f.format for f in res.data_files}
    for track in TRACKS:
        assert getattr(res, track) == getattr(summarization, track), track
        assert res.all_data[track] == summarization.all_data[track], track
    assert res.coverage == summarization.coverage
    assert res.order == summarization.order
    assert res.audit == summarization.audit
    # issue 22 row 9: the records an export holds but nobody answered reach the run's results
    # and report, not only `validate`
    unanswered = {
        "argilla": "argilla_records.json: 45 of 180 records have no response to 'preference' "
        "and give no judgment",
        "labelstudio": "labelstudio_export.json: 45 of 180 tasks have no annotation and give no "
        "judgment",
    }
    if fmt in unanswered:
        assert [n.endswith(unanswered[fmt]) for n in res.import_notes] == [True]
        assert f"- Note: {res.import_notes[0]}\n" in render_study_report(res)
    else:
        assert res.import_notes == ()


def test_generator_rewrites_the_examples_byte_for_byte(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    spec = importlib.util.spec_from_file_location(
        "make_study_examples", EXAMPLES.parent / "scripts" / "make_study_examples.py"
    )
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    monkeypatch.setitem(sys.modules, spec.name, module)  # its dataclasses look their module up
    spec.loader.exec_module(module)
    assert module.main(["--check"]) == 0, capsys.readouterr().out
