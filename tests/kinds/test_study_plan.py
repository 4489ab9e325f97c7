"""verdictpack STUDY --plan: every route projected from the judges' sheets, nothing sent."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from conftest import write_tiny_study
from verdictpack._cli import main


def _live(tmp_path: Path, priors: bool = True) -> Path:
    study = write_tiny_study(tmp_path / "study")
    config = json.loads(study.read_text())
    for judge in config["panel"]["judges"]:
        judge["endpoint"] = {
            "base_url": "http://127.0.0.1:9/v1",  # nothing listens: --plan must not call
            "model": judge["name"],
            "price": {"per_call": 0.002},
        }
        if priors:
            judge["prior"] = {"baseline_rate": 0.5, "lean_h": 0.8, "position_bias": 0.05}
    config["budget"] = {"judges": 0.2}
    config["sequential"]["cap_roots"] = 40
    study.write_text(json.dumps(config))
    return study


def test_plan_prints_every_route_and_the_budget_chance(tmp_path: Path, capsys) -> None:
    study = _live(tmp_path)
    assert main([str(study), "--plan"]) == 0
    out = capsys.readouterr().out
    assert out.startswith("# verdictpack study plan")
    for route in ("e-process (hybrid)", "e-process (corners)", "SPRT", "fixed-n"):
        assert route in out
    # 0.2 / (2 judges x 2 orders x 0.002) = 25 roots
    assert "covers 25)" in out and "Nothing was sent" in out
    assert not (tmp_path / "study" / "report").exists()


def test_plan_needs_a_sheet_for_every_judge(tmp_path: Path, capsys) -> None:
    study = _live(tmp_path, priors=False)
    assert main([str(study), "--plan"]) == 2
    err = capsys.readouterr().err
    assert "needs a character sheet" in err and "judge-a" in err


@pytest.mark.parametrize("kind", ["sizing_summarization.json"])
def test_plan_refuses_other_kinds(kind: str, capsys) -> None:
    from conftest import EXAMPLES

    assert main([str(EXAMPLES / kind), "--plan"]) == 2
    assert "expected a study config" in capsys.readouterr().err
