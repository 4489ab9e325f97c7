"""The self-audit of every kind and of the sizing kind (verify/_kinds.py): untouched outputs pass,
every committed example is there, a wrong value planted in a COPY is named."""

from __future__ import annotations

import math
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from audit_runs import KINDS, copy_run, edit_json, failed, missing_examples, runs

from conftest import EXAMPLES
from verdictpack._cli import rerender
from verdictpack.verify import audit_run

__all__ = ["copy_run", "runs"]  # the fixtures, imported by name


def test_every_committed_example_is_present() -> None:
    # a deleted example is a failure, never a skip that looks like a pass
    assert missing_examples() == []


def test_a_missing_example_is_named(tmp_path: Path) -> None:
    partial = tmp_path / "examples"
    (partial / "outputs").mkdir(parents=True)
    for path in EXAMPLES.glob("*.json"):
        if path.name != "battery_summarization.json":
            (partial / path.name).write_bytes(path.read_bytes())
            (partial / "outputs" / path.stem).mkdir()
            (partial / "outputs" / path.stem / "results.json").write_text("{}")
    assert missing_examples(partial) == [
        "battery_summarization.json",
        "outputs/battery_summarization/results.json",
    ]


@pytest.mark.parametrize("kind", KINDS)
def test_untouched_outputs_pass_with_zero_failures(runs: dict[str, Path], kind: str) -> None:
    assert kind in runs  # every kind's example was run (a missing one fails the fixture)
    report = audit_run(runs[kind], None, rerender)
    assert report.kind == kind
    assert report.failed == 0, "\n".join(f.line() for f in report.failures())
    assert report.checks > 100  # the audit really ran its checks on this kind
    assert [f.status for f in report.findings if f.where == "report.md"] == ["pass", "pass"]
    # every simulated probability is named UNVERIFIED, never passed silently
    if kind != "sizing":
        assert any(
            "simulated figures" in f.what for f in report.findings if f.status == "unverified"
        )


def test_planted_stage2_size_is_named(copy_run: Callable[[str], Path]) -> None:
    run = copy_run("sizing")

    def plant(d: Any) -> None:
        cell = d["arms"][0]["sizes"][0]["n"]
        assert cell["value"] == 34  # the anchor, before planting
        cell["value"] = 32

    edit_json(run / "results.json", plant)
    report = audit_run(run, None, rerender)
    hits = failed(report, "results.json $.arms[0].sizes[0].n")
    assert hits and hits[0].expected == "34" and hits[0].found == "32"
    # and the report still prints 34: rendered again from results.json, its line is named too
    printed = failed(report, "report.md line")
    assert printed and "32" in printed[0].expected and "34" in printed[0].found


def test_planted_decisive_power_is_named(copy_run: Callable[[str], Path]) -> None:
    run = copy_run("sizing")
    original: list[float] = []

    def plant(d: Any) -> None:
        size = d["arms"][0]["sizes"][1]
        assert size["design"] == "decisive"
        original.append(size["power_at_n"]["value"])
        size["power_at_n"]["value"] += 0.002

    edit_json(run / "results.json", plant)
    report = audit_run(run)
    hits = failed(report, "results.json $.arms[0].sizes[1].power_at_n")
    assert hits
    assert math.isclose(float(hits[0].expected), original[0], abs_tol=1e-10)


def test_planted_monte_carlo_cell_is_named(copy_run: Callable[[str], Path]) -> None:
    run = copy_run("sizing")

    def plant(d: Any) -> None:
        fig = d["arms"][0]["checks"][0]["simulated_power"]
        fig["value"] = round(fig["value"] + 8 * fig["mcse"], 5)  # a 'Monte Carlo' cell moved

    edit_json(run / "results.json", plant)
    report = audit_run(run)
    where = "results.json $.arms[0].checks[0]"
    assert failed(report, where + ".simulated_minus_exact_in_mcse")
    assert failed(report, where + ".simulated_power")
