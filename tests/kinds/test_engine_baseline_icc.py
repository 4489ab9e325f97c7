"""The engine sizes its human baseline with the humans' ICC_H (``human.icc``): more confirmatory
roots than without, the ICC and design effect in the report, and a self-audit that re-derives
the clustered test (and fails on a tampered critical count)."""

from __future__ import annotations

import copy
import json
from pathlib import Path

from conftest import load_example
from verdictpack._cli import main


def _engine(tmp_path: Path, name: str, icc: float | None) -> tuple[Path, Path]:
    cfg = copy.deepcopy(load_example("engine_summarization.json"))
    cfg["stimuli"]["candidates"] = 500
    cfg["power"]["replicates"] = 50
    cfg["human"]["baseline"]["replicates"] = 2000
    if icc is not None:
        cfg["human"]["icc"] = icc
    config, out = tmp_path / f"{name}.json", tmp_path / name
    config.write_text(json.dumps(cfg))
    assert main([str(config), "--out", str(out), "--quiet"]) == 0
    return config, out


def test_the_engine_sizes_the_baseline_with_the_humans_icc(tmp_path: Path, capsys) -> None:
    _, plain = _engine(tmp_path, "plain", None)
    config, out = _engine(tmp_path, "icc", 0.4)
    without = json.loads((plain / "results.json").read_text())["baseline"]
    res = json.loads((out / "results.json").read_text())
    b = res["baseline"]
    assert "icc" not in without and "latent_correlation" not in without
    assert b["icc"] == 0.4 and 0.5 < b["latent_correlation"] < 0.7
    assert b["confirmatory_roots"] > 1.2 * without["confirmatory_roots"]  # design effect 1.4
    assert "clustered" in b["test"]
    assert "ICC_H 0.4000" in (out / "report.md").read_text()
    assert main(["audit", str(out), "--config", str(config)]) == 0
    b["critical_value"] += 1
    (out / "results.json").write_text(json.dumps(res, indent=2) + "\n")
    capsys.readouterr()
    assert main(["audit", str(out), "--config", str(config)]) != 0
    failed = [line for line in capsys.readouterr().out.splitlines() if "FAIL results" in line]
    assert any("$.baseline.critical_value" in line and "clustered" in line for line in failed)
