"""The simulated worlds held to their names in the self-audit (verify/_worlds.py): a world's
entry planted in results.json is named, a missing entry is named, the engine's proof-run world is
re-derived from the judge sheets and its name checked against the config."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from audit_runs import config_of, copy_run, edit_json, failed, runs

from verdictpack.verify import audit_run

__all__ = ["copy_run", "runs"]  # the fixtures, imported by name


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
