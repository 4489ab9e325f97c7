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
    assert "covers 25 roots" in out and "Nothing was sent" in out
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


def _right_wrong(out: str) -> dict[str, str]:
    """The e-process rows of the route table: route -> its P(wrong) cell."""
    rows = {}
    for line in out.splitlines():
        cells = [c.strip() for c in line.strip("|").split("|")]
        if len(cells) > 3 and cells[0].startswith("e-process"):
            rows.setdefault(cells[0], cells[2])
    return rows


def test_plan_scores_verdicts_from_the_true_h_when_judges_lean_away(tmp_path: Path, capsys) -> None:
    """Judges who prefer the treatment less than the humans do (true h < 0): NO_POSITIVE_EFFECT
    and BELOW are the right verdicts, so the routes' P(wrong) is 0, not 1."""
    study = _live(tmp_path)
    config = json.loads(study.read_text())
    for judge in config["panel"]["judges"]:
        judge["prior"] = {"baseline_rate": 0.5, "lean_h": -0.8, "position_bias": 0.0}
    config.pop("budget")
    study.write_text(json.dumps(config))
    assert main([str(study), "--plan"]) == 0
    out = capsys.readouterr().out
    assert "true h -" in out
    wrong = _right_wrong(out)
    assert wrong and all(float(v.split()[0]) == 0.0 for v in wrong.values()), wrong


def test_plan_says_one_cap_in_its_sentence_and_tables(tmp_path: Path, capsys) -> None:
    study = _live(tmp_path)
    assert main([str(study), "--plan"]) == 0
    out = capsys.readouterr().out
    # cap 40, 40 admitted roots, a budget covering 25: the plan's one cap is 25
    assert "One cap for the whole plan: 25 roots" in out
    assert "within 25 roots" in out and "cap 25)" in out
    assert "cap 40" not in out


def test_plan_takes_the_fitted_human_rate_with_fitted_sheets(tmp_path: Path, capsys) -> None:
    study = _live(tmp_path)
    sheets = {
        "panel": {
            "name": "fitted",
            "latent_correlation": 0.0,
            "judges": [
                {"name": n, "baseline_rate": 0.2, "lean_h": 0.1} for n in ("judge-a", "judge-b")
            ],
        },
        "human_rate": 0.2,
    }
    path = tmp_path / "fitted_panel.json"
    path.write_text(json.dumps(sheets))
    assert main([str(study), "--plan", "--sheets", str(path)]) == 0
    out = capsys.readouterr().out
    assert "human rate 0.2000" in out and "fitted with the sheets" in out
    assert "true h 0.1000" in out
    del sheets["human_rate"]
    path.write_text(json.dumps(sheets))
    assert main([str(study), "--plan", "--sheets", str(path)]) == 0
    out = capsys.readouterr().out
    assert "carry no fitted human rate" in out and "human rate 0.5000" in out
