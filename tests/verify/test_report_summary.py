"""The report's opening summary and the simulated worlds against their names, in the self-audit
(verify/_report_summary.py): every summary number is mapped to results.json, a number planted in
the summary (or a world's entry) is named, and the honest-worlds line must appear exactly when a
world departs."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from audit_runs import KINDS, config_of, copy_run, edit_json, failed, runs

from verdictpack.verify import audit_run

__all__ = ["copy_run", "runs"]  # the fixtures, imported by name


@pytest.mark.parametrize("kind", KINDS)
def test_every_summary_line_is_mapped_and_passes(runs: dict[str, Path], kind: str) -> None:
    report = audit_run(runs[kind])
    summary = [f for f in report.findings if f.where.startswith("report.md › summary")]
    assert len(summary) >= 4
    assert [f for f in summary if f.status == "fail"] == []
    assert not [f for f in summary if f.status == "unverified"], "a summary line is not mapped"
    assert report.passed


def _plant_in_summary(text: str, lead: str) -> str:
    """Shift the first decimal number (outside backticks) of the summary line with ``lead``."""
    lines = text.splitlines(keepends=True)
    for i, line in enumerate(lines):
        if line.startswith("- " + lead):
            parts = re.split(r"(`[^`]*`)", line)
            for k, part in enumerate(parts):
                if part.startswith("`"):
                    continue
                m = re.search(r"\d+\.\d+", part)
                if m:
                    old = m.group(0)
                    new = f"{float(old) + 0.3:.{len(old.split('.')[1])}f}"
                    parts[k] = part.replace(old, new, 1)
                    lines[i] = "".join(parts)
                    return "".join(lines)
    raise AssertionError(f"no summary line {lead!r} with a decimal")


@pytest.mark.parametrize(
    ("kind", "lead"),
    [
        ("engine", "**Registered verdict"),
        ("engine", "Planning"),
        ("engine", "Cost of this run"),
        ("verdict", "No effect"),
        ("judges", "Effect present"),
        ("sizing", "**Sizes**"),
    ],
)
def test_a_number_planted_in_the_summary_is_named(copy_run, kind: str, lead: str) -> None:  # type: ignore[no-untyped-def]
    run = copy_run(kind)
    md = run / "report.md"
    md.write_text(_plant_in_summary(md.read_text(), lead))
    report = audit_run(run)
    assert failed(report, "report.md › summary"), lead
    assert not report.passed


def test_a_dropped_worlds_line_is_named(copy_run) -> None:  # type: ignore[no-untyped-def]
    run = copy_run("judges")
    md = run / "report.md"
    text = md.read_text()
    assert "- Simulated worlds:" in text  # the example's adversarial panel leans against the truth
    md.write_text("".join(x for x in text.splitlines(True) if not x.startswith("- Simulated")))
    bad = failed(audit_run(run), "report.md › summary › 'Simulated worlds' line")
    assert bad and "printed exactly when" in bad[0].what


@pytest.mark.parametrize("field", ["departs", "true_h", "named_h"])
def test_a_world_entry_planted_in_results_is_named(copy_run, field: str) -> None:  # type: ignore[no-untyped-def]
    run = copy_run("judges")

    def plant(data: dict) -> None:  # type: ignore[type-arg]
        w = data["worlds"][0]
        if field == "departs":
            w["departs"] = not w["departs"]
        elif field == "true_h":
            w["true_h"]["value"] += 0.05
        else:
            w["named_h"] += 0.05

    edit_json(run / "results.json", plant)
    assert failed(audit_run(run), f"results.json $.worlds[0].{field}")


def test_a_missing_world_entry_is_named(copy_run) -> None:  # type: ignore[no-untyped-def]
    run = copy_run("battery")
    edit_json(run / "results.json", lambda d: d["worlds"].pop())
    bad = failed(audit_run(run), "results.json $.worlds")
    assert any("every named simulated world has its entry" in f.what for f in bad)


def test_the_engine_world_is_re_derived_from_the_sheets(
    copy_run,
) -> None:  # type: ignore[no-untyped-def]
    run = copy_run("engine")
    report = audit_run(run)
    assert any(
        "re-derived from the judge sheets" in f.what and f.status == "pass"
        for f in report.findings
        if f.where.startswith("results.json $.worlds[0]")
    )
    edit_json(run / "results.json", lambda d: d.update(truth_effect_scale=0.5))
    assert failed(audit_run(run), "results.json $.worlds[0].true_h")


def test_the_engine_world_name_is_checked_against_the_config(
    runs: dict[str, Path], tmp_path: Path
) -> None:
    config = config_of(runs, "engine")
    report = audit_run(runs["engine"], config)
    named = [f for f in report.findings if f.where == "results.json $.worlds[0].named_h"]
    assert [f.status for f in named] == ["pass"]
    without = audit_run(runs["engine"])
    assert [
        f.status for f in without.findings if f.where == "results.json $.worlds[0].named_h"
    ] == ["unverified"]
    other = tmp_path / config.name
    data = json.loads(config.read_text())
    data["truth"]["true_h"] = 0.6
    other.write_text(json.dumps(data))
    assert failed(audit_run(runs["engine"], other), "results.json $.worlds[0].named_h")
