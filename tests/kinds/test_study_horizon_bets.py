"""A study run with the horizon bets (``sequential.bets`` "horizon"): the bets tuned to the
registered cap reach the tracks, provenance records their design N, the self-audit re-derives the
bounds with its own horizon bets and passes, and fails when the recorded N is changed."""

from __future__ import annotations

import json
from pathlib import Path

from conftest import write_tiny_study
from verdictpack._cli import main


def _run(tmp_path: Path, bets: str) -> tuple[Path, Path]:
    study = write_tiny_study(tmp_path / bets, roots=60)
    config = json.loads(study.read_text())
    config["sequential"]["bets"] = bets
    config["sequential"]["cap_roots"] = 60
    # the continuation of an INCONCLUSIVE study: short (the adaptive bets cost O(t²) a replicate)
    config["planning"] = {"replicates": 100, "max_extra_roots": 200}
    study.write_text(json.dumps(config))
    out = tmp_path / f"out-{bets}"
    assert main([str(study), "--out", str(out), "--quiet"]) == 0
    return study, out


def test_a_study_with_horizon_bets_records_its_horizon_and_passes_its_audit(
    tmp_path: Path, capsys
) -> None:
    study, out = _run(tmp_path, "horizon")
    settings = json.loads((out / "provenance.json").read_text())["settings"]
    assert settings["bets"] == "horizon" and settings["horizon"] == 60
    assert main(["audit", str(out), "--config", str(study)]) == 0
    # other bets, other bounds: the plug-in bets' run differs at the last root
    _, plug = _run(tmp_path, "plugin")
    ours = json.loads((out / "results.json").read_text())["registered"]["h_interval"]
    theirs = json.loads((plug / "results.json").read_text())["registered"]["h_interval"]
    assert ours != theirs
    # a changed design N: the audit's bounds no longer match the recorded ones
    prov = out / "provenance.json"
    data = json.loads(prov.read_text())
    data["settings"]["horizon"] = 30
    prov.write_text(json.dumps(data, indent=2) + "\n")
    capsys.readouterr()
    assert main(["audit", str(out), "--config", str(study)]) == 1
    assert "rebuilt" in capsys.readouterr().out
