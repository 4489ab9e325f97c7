"""The self-audit of the battery's true-h grid (verify/_kinds_grid.py): an untouched grid passes,
a wrong value planted in a COPY of the run is named at its JSON path."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from audit_runs import copy_run, edit_json, failed, runs

from verdictpack.verify import audit_run

__all__ = ["copy_run", "runs"]  # the fixtures, imported by name

GRID = "results.json $.true_h_grid"


def test_untouched_grid_is_audited_and_passes(runs: dict[str, Path]) -> None:
    report = audit_run(runs["battery"])
    assert report.failures() == []
    grid_checks = [f for f in report.findings if f.where.startswith(GRID)]
    assert len(grid_checks) > 100  # the rows' OC blocks and the grid's own checks
    assert any("χ² variance law" in f.what for f in grid_checks)
    assert any(".outcome.routes[" in f.where for f in grid_checks)  # the OC block audit ran


def _plant(run: Path, edit: Callable[[dict[str, Any]], None]) -> Any:
    edit_json(run / "results.json", lambda d: edit(d["true_h_grid"]))
    return audit_run(run)


@pytest.mark.parametrize(
    ("edit", "where"),
    [
        (lambda g: g.update(stop=0.5), ".stop"),
        (lambda g: g.update(start=0.1), ".start"),
        (lambda g: g.update(points=3), ".points"),
        (lambda g: g["rows"][1].update(purpose="battery/above_threshold"), ".rows[*].purpose"),
        (
            lambda g: g["rows"][1]["fixed_n_closed_form"]["power"].update(value=0.9),
            ".rows[1].fixed_n_closed_form.power",
        ),
        (
            lambda g: g["rows"][0]["fixed_n_closed_form"].update(critical_t=2.4),
            ".rows[0].fixed_n_closed_form.critical_t",
        ),
        (
            lambda g: g["rows"][1]["fixed_n_closed_form"].update(noncentrality=1.0),
            ".rows[1].fixed_n_closed_form.noncentrality",
        ),
        (
            lambda g: g["rows"][1]["fixed_n_closed_form"].update(mean_d=0.01),
            ".rows[1].fixed_n_closed_form.mean_d",
        ),
        (lambda g: g["rows"][0]["outcome"].update(replicates=200), ".rows[0].outcome.replicates"),
        (
            lambda g: g["rows"][1]["outcome"]["routes"][0]["p_verdict"]["INCONCLUSIVE"].update(
                value=0.5
            ),
            ".rows[1].outcome.routes[0].p_verdict",
        ),
        (
            lambda g: g["rows"][0]["outcome"]["routes"][3]["p_verdict"]["EFFECT"].update(
                value=0.2, mcse=(0.2 * 0.8 / 100) ** 0.5
            ),
            ".rows[0].outcome.routes[fixed_n].p_verdict.EFFECT",
        ),
    ],
)
def test_planted_grid_value_is_named(
    copy_run: Callable[[str], Path], edit: Callable[[dict[str, Any]], None], where: str
) -> None:
    report = _plant(copy_run("battery"), edit)
    assert failed(report, GRID + where), [f.where for f in report.failures()]


def test_reordered_grid_is_named(copy_run: Callable[[str], Path]) -> None:
    def swap(g: dict[str, Any]) -> None:
        g["rows"].reverse()
        g["start"], g["stop"] = g["rows"][0]["true_h"], g["rows"][-1]["true_h"]

    report = _plant(copy_run("battery"), swap)
    hits = failed(report, GRID + ".rows")
    assert any("strictly increasing" in f.what for f in hits)
