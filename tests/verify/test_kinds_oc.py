"""The self-audit of the operating characteristics (verify/_kinds_oc.py): a wrong value planted
in a COPY of a verdict or judges run is named."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from audit_runs import copy_run, edit_json, failed, runs

from verdictpack.verify import audit_run

__all__ = ["copy_run", "runs"]  # the fixtures, imported by name


def test_planted_cost_cell_is_named(copy_run: Callable[[str], Path]) -> None:
    run = copy_run("verdict")

    def plant(d: Any) -> None:
        d["scenarios"][0]["routes"][0]["mean_human_cost"]["value"] += 1.5

    edit_json(run / "results.json", plant)
    report = audit_run(run)
    route = "results.json $.scenarios[0].routes[0]"
    assert failed(report, route + ".mean_cost") or failed(report, route + ".mean_human_cost")
    assert failed(report, route + ".mean_human_cost")


def test_planted_judge_stream_rate_is_named(copy_run: Callable[[str], Path]) -> None:
    run = copy_run("judges")

    def plant(d: Any) -> None:
        d["compositions"][1]["effect_present"]["mu_model"] += 0.02

    edit_json(run / "results.json", plant)
    report = audit_run(run)
    hits = failed(report, "results.json $.compositions[1].effect_present.mu_model")
    assert hits and "judge sheets" in hits[0].what
