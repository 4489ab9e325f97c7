"""A study's fitted panel plans the next study: fitted_panel.json drops into the battery and
judges kinds as their panel block and runs."""

from __future__ import annotations

import json
import math
from pathlib import Path

from conftest import load_example, write_tiny_study
from verdictpack._cli import main


def _fitted(tmp_path: Path) -> dict:
    study = write_tiny_study(tmp_path / "study")
    out = tmp_path / "out"
    assert main([str(study), "--out", str(out), "--quiet"]) == 0
    fitted = json.loads((out / "fitted_panel.json").read_text())["panel"]
    judges = json.loads((out / "judges.json").read_text())["judges"]
    report = json.loads((out / "judges.json").read_text())
    # each judge relative to the humans: baseline the humans' rate, lean its distance on the
    # phi scale, so effect scale 1 gives back the judge's counterbalanced rate
    for sheet, est in zip(fitted["judges"], judges, strict=True):
        assert sheet["name"] == est["name"]
        assert sheet["baseline_rate"] == report["human_rate"]
        mean = 0.5 * (est["rate_treatment_first"] + est["rate_treatment_second"])
        back = math.sin((math.asin(math.sqrt(sheet["baseline_rate"])) * 2 + sheet["lean_h"]) / 2)
        assert abs(back**2 - mean) < 1e-9
    return fitted


def test_fitted_panel_runs_as_the_panel_of_a_battery_and_a_judges_config(tmp_path: Path) -> None:
    fitted = _fitted(tmp_path)
    battery = load_example("battery_summarization.json")
    battery.update(panel=fitted, replicates=100, block_size=50)
    battery.pop("true_h_grid", None)
    battery.pop("designs", None)
    battery["sequential"]["cap_roots"] = 60
    path = tmp_path / "battery.json"
    path.write_text(json.dumps(battery))
    assert main([str(path), "--out", str(tmp_path / "b"), "--quiet"]) == 0
    results = json.loads((tmp_path / "b" / "results.json").read_text())
    assert [j["name"] for j in results["panel"]["judges"]] == ["judge-a", "judge-b"]

    judges = load_example("judges_summarization.json")
    judges["compositions"] = [{**fitted, "name": "fitted from the study"}]
    judges["replicates"], judges["sequential"]["cap_roots"] = 100, 60
    path = tmp_path / "judges.json"
    path.write_text(json.dumps(judges))
    assert main([str(path), "--out", str(tmp_path / "j"), "--quiet"]) == 0
