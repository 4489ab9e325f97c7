"""The self-audit of the engine kind (verify/_kinds_engine.py): a wrong value planted in a COPY
of an engine run (verdict.json, evidence.jsonl, cost_comparison.csv) is named."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from audit_runs import copy_run, edit_json, failed, runs

from verdictpack.verify import audit_run

__all__ = ["copy_run", "runs"]  # the fixtures, imported by name


def test_planted_cost_cell_in_cost_comparison_csv_is_named(
    copy_run: Callable[[str], Path],
) -> None:
    run = copy_run("engine")
    lines = (run / "cost_comparison.csv").read_text().splitlines()
    i = next(k for k, line in enumerate(lines) if ",null,human layer," in line)
    cells = lines[i].split(",")
    cells[5] = f"{float(cells[5]) + 10:.4f}"  # the cost column
    lines[i] = ",".join(cells)
    (run / "cost_comparison.csv").write_text("\n".join(lines) + "\n")
    report = audit_run(run)
    hits = failed(report, "cost_comparison.csv")
    assert hits and any(f"line {i + 1}" in f.found for f in hits)


@pytest.mark.parametrize("plant", ["verdict", "bound"])
def test_planted_engine_verdict_is_named(copy_run: Callable[[str], Path], plant: str) -> None:
    run = copy_run("engine")
    before = json.loads((run / "verdict.json").read_text())["registered"]

    def edit(d: Any) -> None:
        if plant == "verdict":
            d["registered"]["verdict"] = (
                "EFFECT_SUPPORTED" if before["verdict"] != "EFFECT_SUPPORTED" else "INCONCLUSIVE"
            )
        else:  # a narrower (anti-conservative) lower end of the model CS by 1e-4
            d["registered"]["model_bounds"][0] += 1e-4

    edit_json(run / "verdict.json", edit)
    report = audit_run(run)
    field = "verdict" if plant == "verdict" else "model_bounds"
    hits = failed(report, f"verdict.json $.registered.{field}")
    assert any("rebuilt" in f.what for f in hits), [f.line() for f in report.failures()]


@pytest.mark.parametrize("bets", ["plugin", "kelly", "horizon", "horizon without N"])
def test_bets_planted_in_provenance_are_named(copy_run: Callable[[str], Path], bets: str) -> None:
    """A grid run whose provenance claims other bets: the audit re-derives with the bets named
    and the grid's bounds no longer match them; an unknown name is refused by name, and the
    horizon bets without their recorded N too."""
    run = copy_run("engine")

    def edit(d: Any) -> None:
        d["settings"]["bets"] = bets.split()[0]
        if bets == "horizon":
            d["settings"]["horizon"] = d["settings"]["cap_roots"]

    edit_json(run / "provenance.json", edit)
    report = audit_run(run)
    if bets == "kelly":
        assert failed(report, "provenance.json $.settings.bets")
    elif bets == "horizon without N":
        assert failed(report, "provenance.json $.settings.horizon")
    else:
        assert any("rebuilt" in f.what for f in failed(report, "verdict.json $.registered"))


def test_tampered_evidence_row_is_caught(copy_run: Callable[[str], Path]) -> None:
    run = copy_run("engine")
    rows = [json.loads(x) for x in (run / "evidence.jsonl").read_text().splitlines()]
    rows[10]["M"] = 1.0 - rows[10]["M"]  # inconsistent with the recorded choices
    (run / "evidence.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    report = audit_run(run)
    assert failed(report, "evidence.jsonl $[*].M,H")


@pytest.mark.parametrize("plant", ["lower_bound", "passed", "gated_on"])
def test_planted_reader_audit_gate_is_named(copy_run: Callable[[str], Path], plant: str) -> None:
    """The self-audit re-derives the kappa lower bound from the agreement table (its own
    binomial-tail bisection) and checks the gate on it."""
    run = copy_run("engine")

    def edit(d: Any) -> None:
        a = d["audit"]
        if plant == "lower_bound":
            a["lower_bound"]["value"] += 1e-4
        elif plant == "passed":
            a["passed"] = not a["passed"]
        else:
            a["gated_on"] = "point_estimate"

    edit_json(run / "results.json", edit)
    report = audit_run(run)
    hits = failed(report, f"results.json $.audit.{plant}")
    assert hits, [f.line() for f in report.failures()]
    if plant == "lower_bound":
        assert any("Clopper–Pearson" in f.what for f in hits)


def test_an_engine_run_with_blend_bets_passes_its_audit(tmp_path: Path) -> None:
    """An engine run (a reduced copy of the example) with ``sequential.bets`` "blend": the
    self-audit re-derives its bounds and e-values with its own plug-in and blend bets and passes;
    a bound moved in results.json and verdict.json fails it (SLOW_CHECKS; the tracks against the
    re-derivation stay in CI, tests/verify/test_rederive.py)."""
    from conftest import load_example
    from verdictpack._cli import main

    config = load_example("engine_summarization.json")
    config["power"]["replicates"], config["sequential"]["cap_roots"] = 50, 300
    config["sequential"]["bets"] = "blend"
    path = tmp_path / "engine_blend.json"
    path.write_text(json.dumps(config, indent=2))
    out = tmp_path / "out"
    assert main([str(path), "--out", str(out)]) == 0
    assert json.loads((out / "provenance.json").read_text())["settings"]["bets"] == "blend"
    assert main(["audit", str(out), "--config", str(path)]) == 0

    def nudge(d: Any) -> None:
        d["registered"]["model_bounds"][0] += 0.01

    edit_json(out / "results.json", nudge)
    edit_json(out / "verdict.json", nudge)
    report = audit_run(out, path)
    hits = failed(report, "verdict.json $.registered.model_bounds")
    assert any("bounds rebuilt" in f.what for f in hits)
