"""The report.md <-> results.json mapping (verify/_report_map.py): the headline tables are mapped
and swept; a number planted in report.md only (results.json untouched) is named."""

from __future__ import annotations

import re
from collections.abc import Callable
from pathlib import Path

from audit_runs import copy_run, failed, runs

from verdictpack.verify import audit_run

__all__ = ["copy_run", "runs"]  # the fixtures, imported by name


def test_report_tables_are_mapped_and_swept(runs: dict[str, Path]) -> None:
    report = audit_run(runs["judges"])
    cells = [f for f in report.findings if f.where.startswith("report.md ›")]
    assert len(cells) > 100
    assert any("price next to accuracy" in f.where for f in cells)
    assert any("sweep of" in f.where and f.status == "pass" for f in report.findings)


def _plant_in_table_row(text: str, row_start: str, row_has: str, col: int) -> tuple[str, str]:
    """Change the first number of one cell of the first matching table row."""
    lines = text.splitlines(keepends=True)
    for i, line in enumerate(lines):
        if line.startswith(row_start) and row_has in line:
            cells = line.split(" | ")
            m = re.search(r"\d+\.\d+", cells[col])
            assert m is not None
            old = m.group(0)
            value = float(old)
            new = f"{(value + 0.25) % 1.0:.{len(old.split('.')[1])}f}"
            cells[col] = cells[col].replace(old, new, 1)
            lines[i] = " | ".join(cells)
            return "".join(lines), new
    raise AssertionError(f"row {row_start!r} not found")


def test_planted_printed_rate_in_report_only_is_named(copy_run: Callable[[str], Path]) -> None:
    run = copy_run("judges")
    results_before = (run / "results.json").read_bytes()
    text = (run / "report.md").read_text()
    # the summary row of composition 'registered', world 'effect present': P(correct verdict)
    planted, _ = _plant_in_table_row(text, "| registered |", "effect present", 4)
    (run / "report.md").write_text(planted)
    report = audit_run(run)
    assert (run / "results.json").read_bytes() == results_before
    assert failed(
        report,
        "report.md › price next to accuracy › row 'registered / effect "
        "present' › column 'P(correct verdict)'",
    )
    assert not [f for f in report.failures() if f.where.startswith("results.json")]
