"""The sizing layer reproduces the docs/statistics.md §4 anchors from the bundled example."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from conftest import EXAMPLES
from verdictpack._cli import main


@pytest.fixture(scope="module")
def results(tmp_path_factory) -> dict:
    out = tmp_path_factory.mktemp("sizing") / "run"
    assert main([str(EXAMPLES / "sizing_summarization.json"), "--out", str(out)]) == 0
    return json.loads((out / "results.json").read_text())


def arm(results: dict, name: str) -> dict:
    return next(a for a in results["arms"] if a["name"].startswith(name))


def size(a: dict, design: str) -> dict:
    return next(s for s in a["sizes"] if s["design"] == design)


def test_stage2_paired_t_anchors(results) -> None:
    a = arm(results, "Stage 2")
    std, dec = size(a, "standard"), size(a, "decisive")
    assert (std["n"]["value"], std["normal_n"]["value"]) == (34, 32)
    assert (dec["n"]["value"], dec["normal_n"]["value"]) == (75, 72)
    assert std["n"]["basis"] == "exact" and std["normal_n"]["basis"] == "closed_form"
    assert std["power_at_n_minus_1"]["value"] < 0.80 <= std["power_at_n"]["value"]
    current = next(p for p in a["at_current_n"] if p["design"] == "standard")
    assert current["n"] == 20
    assert current["exact_power"]["value"] == pytest.approx(0.5645, abs=5e-5)


def test_stage2_simulated_check_at_32(results) -> None:
    a = arm(results, "Stage 2")
    check = next(p for p in a["checks"] if p["design"] == "standard" and p["n"] == 32)
    sim = check["simulated_power"]
    assert sim["basis"] == "simulated" and sim["replicates"] == 20000
    assert check["exact_power"]["value"] == pytest.approx(0.7823, abs=5e-4)
    assert abs(sim["value"] - check["exact_power"]["value"]) <= 4 * sim["mcse"]
    assert check["known_variance_power"]["value"] == pytest.approx(0.808, abs=1e-3)
    for s in a["sizes"]:
        assert abs(s["simulated_minus_exact_in_mcse"]) <= 4


def test_density_calibration_anchor(results) -> None:
    dec = size(arm(results, "Density"), "decisive")
    assert dec["first_n"]["value"] == 202
    assert dec["region_upper"] == 120 and dec["region_lower"] is None
    assert dec["achieved_alpha"]["value"] == pytest.approx(0.00453, abs=5e-6)
    assert dec["normal_n"]["value"] == 197
    assert dec["power_at_first_minus_1"]["value"] < 0.95 <= dec["power_at_first"]["value"]


def test_reader_validation_anchor_and_saw_tooth(results) -> None:
    dec = size(arm(results, "SI reader"), "decisive")
    assert dec["first_n"]["value"] == 195
    assert (dec["region_lower"], dec["region_upper"]) == (79, 116)
    assert dec["stable_n"]["value"] == 202
    assert dec["failing_between"] == [196, 197, 199, 201]
    assert dec["normal_n"]["value"] == 191


def test_report_numbers_come_from_results(results, tmp_path: Path) -> None:
    out = tmp_path / "r"
    assert main([str(EXAMPLES / "sizing_summarization.json"), "--out", str(out)]) == 0
    report = (out / "report.md").read_text()
    assert "| 202 |" in report and "X ≤ 79 or X ≥ 116" in report
    assert "0.5645" in report
