"""The self-audit of the study kind (verify/_kinds_study.py): clean study runs audit PASS, and a
wrong value planted in a COPY of a run (a judgment, an M value, the verdict's root, the kappa,
the registered order) makes the audit FAIL naming the check.

The runs are made once per module from small study folders written here: seeded pairs (a few
the gates refuse), judgments of three judges in both presentation orders with ties, invalid and
missing cells, roots with fewer humans than expected or none, admitted roots not yet judged, and
double readings; the root order is the keyed hash of the seed (one run brings an order file).
The data hold more roots than the registered verdict needs, so the tracks read on past it.
"""

from __future__ import annotations

import csv
import io
import json
import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from conftest import EXAMPLES
from verdictpack.verify import AuditReport, Finding, audit_run

JUDGES = ("judge-a", "judge-b", "judge-c")


def _pairs(n: int, refused: set[int]) -> str:
    out = []
    for i in range(n):
        null = f"The market in town {i} covers {i % 50 + 3} hectares and employs many people."
        treatment = (
            null
            if i in refused  # identical texts: the diff budget refuses the pair
            else f"Remarkably, the market in town {i} covers {i % 50 + 3} hectares and employs "
            "many people."
        )
        out.append({"id": f"p-{i:04d}", "treatment": treatment, "null_partner": null})
    return "".join(json.dumps(x) + "\n" for x in out)


def _choice(rng: np.random.Generator, p_treatment: float) -> str:
    u = rng.random()
    if u < 0.05:
        return "tie"
    if u < 0.07:
        return "invalid"
    return "treatment" if rng.random() < p_treatment else "null_partner"


def _judgments(rng: np.random.Generator, n: int, unjudged: set[int]) -> str:
    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\n")
    w.writerow(["root_id", "rater_id", "rater_kind", "order", "choice", "trial", "cost"])
    rows = []
    for i in range(n):
        rid = f"p-{i:04d}"
        if i not in unjudged:
            for j, judge in enumerate(JUDGES):
                for order in ("treatment_first", "null_first"):
                    if rng.random() < 0.03:
                        continue  # a missing cell
                    cost = f"{0.01 * (j + 1):.2f}" if j == 0 else ""
                    rows.append([rid, judge, "model", order, _choice(rng, 0.85), 0, cost])
        humans = int(rng.choice([0, 1, *[2] * 10]))
        for k in range(humans):
            rows.append([rid, f"human-{k}", "human", "unknown", _choice(rng, 0.35), 0, ""])
    rng.shuffle(rows)  # file order never matters
    w.writerows(rows)
    return buf.getvalue()


def _readings(rng: np.random.Generator, roots: int) -> str:
    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\n")
    w.writerow(["root_id", "reader_id", "category"])
    for i in range(roots):
        a = int(rng.integers(3))
        b = a if rng.random() < 0.8 else int(rng.integers(3))
        w.writerow([f"audit-{i:03d}", "reader-b", f"c{b}"])
        w.writerow([f"audit-{i:03d}", "reader-a", f"c{a}"])
    return buf.getvalue()


def write_study(
    folder: Path,
    *,
    seed: int = 7,
    kappa_min: float = 0.5,
    order_file: bool = False,
    cap_roots: int | None = None,
) -> Path:
    """A study folder (config and data files); returns the config path."""
    engine = json.loads((EXAMPLES / "engine_summarization.json").read_text())
    rng = np.random.default_rng(20261201)
    n = 220
    refused = {3, 40, 41}
    unjudged = {n - 1, n - 2}
    folder.mkdir(parents=True)
    (folder / "pairs.jsonl").write_text(_pairs(n, refused))
    (folder / "judgments.csv").write_text(_judgments(rng, n, unjudged))
    (folder / "readings.csv").write_text(_readings(rng, 80))
    config: dict[str, Any] = {
        "kind": "study",
        "seed": seed,
        "construct": engine["construct"],
        "sequential": engine["sequential"],
        "panel": {
            "name": "three judges",
            "judges": [{"name": j, "cost_per_judgment": 0.002} for j in JUDGES],
        },
        "humans": {"judgments_per_root": 2, "cost_per_judgment": 0.4},
        "data": {
            "stimuli": {
                "path": "pairs.jsonl",
                "mapping": {"id": "id", "treatment": "treatment", "null_partner": "null_partner"},
            },
            "judgments": [{"format": "table", "path": "judgments.csv"}],
            "reader_audit": {
                "path": "readings.csv",
                "kappa_min": kappa_min,
                "cost_per_reading": 0.5,
            },
        },
        "gates": {
            "length_tolerance": 5.0,
            "max_diff_tokens": 50,
            "content_threshold": 0.01,
            "fragment_threshold": 1.0,
            "require_numbers": False,
        },
    }
    if cap_roots is not None:
        config["sequential"]["cap_roots"] = cap_roots
    if order_file:
        ids = [f"p-{i:04d}" for i in range(n)]
        (folder / "order.txt").write_text("".join(f"{r}\n" for r in reversed(ids)))
        config["data"]["root_order"] = "order.txt"
    path = folder / "study.json"
    path.write_text(json.dumps(config, indent=2))
    return path


_RUNS: dict[str, Path] = {}


@pytest.fixture(scope="module")
def study_runs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    if not _RUNS:
        from verdictpack._cli import run_config

        base = tmp_path_factory.mktemp("study-runs")
        variants: dict[str, dict[str, Any]] = {
            "keyed": {},
            "order_file": {"order_file": True},
            "invalid": {"kappa_min": 0.95},
            "cap": {"cap_roots": 60},
        }
        for name, kwargs in variants.items():
            cfg = write_study(base / f"{name}-data", **kwargs)
            run_config(str(cfg), str(base / name))
            _RUNS[name] = base / name
    return dict(_RUNS)


@pytest.fixture
def copy_study(study_runs: dict[str, Path], tmp_path: Path) -> Callable[[str], Path]:
    def _copy(name: str) -> Path:
        dest = tmp_path / name
        shutil.copytree(study_runs[name], dest)
        return dest

    return _copy


def _failed(report: AuditReport, where: str) -> list[Finding]:
    return [f for f in report.failures() if where in f.where]


def _edit_json(path: Path, edit: Callable[[Any], None]) -> None:
    data = json.loads(path.read_text())
    edit(data)
    path.write_text(json.dumps(data, indent=2) + "\n")


def _config(run: Path) -> Path:
    return run.parent / f"{run.name}-data" / "study.json"


@pytest.mark.parametrize("name", ["keyed", "order_file", "invalid", "cap"])
def test_clean_study_audits_pass(study_runs: dict[str, Path], name: str) -> None:
    run = study_runs[name]
    report = audit_run(run, _config(run))
    assert report.kind == "study"
    assert report.passed, [f.line() for f in report.failures()]
    wheres = {f.where for f in report.findings if f.status == "pass"}
    assert "results.json $.audit.kappa" in wheres
    assert "provenance.json $.settings.data_files[1].sha256" in wheres
    res = json.loads((run / "results.json").read_text())
    if name == "invalid":
        assert res["registered"]["verdict"] == "INSTRUMENT_INVALID"
        return
    if name == "cap":  # INCONCLUSIVE at the cap; the tracks read on to the end of the data
        assert (res["registered"]["verdict"], res["roots_run"]) == ("INCONCLUSIVE", 60)
        assert res["roots_available"] > 60
        return
    # the fixture exercises what the audit re-derives: a verdict before the data ran out,
    # refused pairs, ties, invalid and missing cells, roots without humans, unjudged roots
    assert res["roots_run"] < res["roots_available"]
    assert res["gates"]["refused"] == 3
    cov = res["coverage"]
    for key in ("model_ties", "model_invalid", "model_missing_cells", "human_missing"):
        assert cov[key] > 0, key
    assert cov["roots_with_humans"] < cov["roots_entered"] <= cov["admitted_roots"]
    # the two unjudged roots: gaps entering with every cell unknown, or after the last judged one
    assert cov["gap_roots"] + cov["admitted_roots_unjudged"] == 2
    assert (
        "evidence.jsonl $[*].M" in wheres
        and "results.json $.all_data.extension.h_interval" in wheres
    )
    keyed = "root_order.txt" in {f.where for f in report.findings if "keyed-hash" in f.what}
    assert keyed == (name == "keyed")


def test_flipped_judgment_is_named(copy_study: Callable[[str], Path]) -> None:
    run = copy_study("keyed")
    lines = (run / "judgments.csv").read_text().splitlines()
    i = next(k for k, line in enumerate(lines) if ",model," in line and ",null_partner," in line)
    lines[i] = lines[i].replace(",null_partner,", ",treatment,")
    (run / "judgments.csv").write_text("\n".join(lines) + "\n")
    rows = [json.loads(x) for x in (run / "evidence.jsonl").read_text().splitlines()]
    root = next(r["root"] for r in rows if r["root_id"] == lines[i].split(",")[0])
    report = audit_run(run)
    hits = _failed(report, "evidence.jsonl $[*].M")
    assert hits and hits[0].found.startswith(f"root {root}:"), [f.line() for f in report.failures()]


def test_tampered_evidence_m_is_named(copy_study: Callable[[str], Path]) -> None:
    run = copy_study("keyed")
    rows = [json.loads(x) for x in (run / "evidence.jsonl").read_text().splitlines()]
    rows[10]["M"] = 1.0 - rows[10]["M"] + 0.125
    (run / "evidence.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    report = audit_run(run)
    hits = _failed(report, "evidence.jsonl $[*].M")
    assert hits and "root 11:" in hits[0].found, [f.line() for f in report.failures()]


def test_tampered_verdict_root_is_named(copy_study: Callable[[str], Path]) -> None:
    run = copy_study("keyed")

    def edit(d: Any) -> None:
        d["registered"]["roots_at_verdict"] -= 1

    _edit_json(run / "results.json", edit)
    report = audit_run(run)
    hits = _failed(report, "results.json $.registered.roots_at_verdict")
    assert any("root of the verdict" in f.what for f in hits), [f.line() for f in report.failures()]


def test_tampered_kappa_is_named(copy_study: Callable[[str], Path]) -> None:
    run = copy_study("keyed")

    def edit(d: Any) -> None:
        d["audit"]["kappa"]["value"] += 0.01

    _edit_json(run / "results.json", edit)
    report = audit_run(run)
    hits = _failed(report, "results.json $.audit.kappa")
    assert any("reader_audit.csv" in f.what for f in hits), [f.line() for f in report.failures()]


def test_swapped_root_order_is_named(copy_study: Callable[[str], Path]) -> None:
    run = copy_study("keyed")
    ids = (run / "root_order.txt").read_text().splitlines()
    ids[4], ids[5] = ids[5], ids[4]
    (run / "root_order.txt").write_text("".join(f"{r}\n" for r in ids))
    report = audit_run(run)
    keyed = [f for f in _failed(report, "root_order.txt") if "keyed-hash" in f.what]
    assert keyed, [f.line() for f in report.failures()]
    assert _failed(report, "judgments.csv"), "the table no longer follows root_order.txt"


def test_judges_intervals_are_rederived_with_the_root_as_the_unit(
    study_runs: dict[str, Path],
) -> None:
    report = audit_run(study_runs["keyed"], _config(study_runs["keyed"]))
    passed = {f.where for f in report.findings if f.status == "pass"}
    w = "results.json $.judges_report"
    for key in ("rate_ci[0]", "rate_ci[1]", "position_bias_ci[1]", "rate_design_effect", "roots"):
        assert f"{w}.judges[0].{key}" in passed, key
    assert f"{w}.human_rate_ci[0]" in passed


def test_tampered_judge_interval_is_named(copy_study: Callable[[str], Path]) -> None:
    run = copy_study("keyed")

    def edit(d: Any) -> None:
        j = d["judges_report"]["judges"][0]
        j["position_bias_ci"] = [j["position_bias_ci"][0] + 0.01, j["position_bias_ci"][1]]

    _edit_json(run / "results.json", edit)
    _edit_json(run / "judges.json", lambda d: edit({"judges_report": d}))
    report = audit_run(run)
    hits = _failed(report, "judges[0].position_bias_ci[0]")
    assert any("root as the unit" in f.what for f in hits), [f.line() for f in report.failures()]
