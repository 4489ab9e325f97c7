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
    config["planning"] = {"bets": ["grid"]}  # the grid alone: these tests are not about bets
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


_SHEET = {"name": "judge-a", "baseline_rate": 0.5}
_BOTH = [_SHEET, {**_SHEET, "name": "judge-b"}]


@pytest.mark.parametrize(
    ("sheets", "where", "expected"),
    [
        ([], "$", "a JSON object"),
        ({"panel": 5}, "$.panel", "a JSON object"),
        ({"judges": _BOTH}, "$.panel", "this required field"),
        ({"panel": {"judges": [1]}}, "$.panel.judges[0]", "a JSON object"),
        ({"panel": {"judges": [{"name": "judge-a"}]}}, "$.panel.judges[0].baseline_rate", ""),
        (
            {"panel": {"judges": [{**_SHEET, "baseline_rate": "0.5"}, _BOTH[1]]}},
            "$.panel.judges[0].baseline_rate",
            "a valid number",
        ),
        ({"panel": {"judges": [_SHEET, _SHEET]}}, "$.panel.judges[1].name", "used once"),
        ({"panel": {"judges": _BOTH}, "human_icc": {"icc": "a"}}, "$.human_icc.icc", ""),
        ({"panel": {"judges": _BOTH}, "human_rate": 1.0}, "$.human_rate", "less than 1"),
        # a correlation the simulator cannot build, named where it is
        (
            {"panel": {"latent_correlation": -0.9, "judges": _BOTH}},
            "$.panel.latent_correlation",
            "positive semi-definite",
        ),
    ],
)
def test_a_sheets_file_that_is_not_a_fitted_panel_is_refused_by_path(
    tmp_path: Path, capsys, sheets, where: str, expected: str
) -> None:
    """A hand-edited or wrong --sheets file is refused like a config (exit 2, its JSON path and
    line), never an internal error."""
    study = _live(tmp_path)
    path = tmp_path / "fitted_panel.json"
    path.write_text(json.dumps(sheets))
    assert main([str(study), "--plan", "--sheets", str(path)]) == 2
    err = capsys.readouterr().err
    assert f"{path}: {where}: received " in err and expected in err
    assert "Traceback" not in err and "internal error" not in err and "_Panel" not in err


def test_a_missing_sheets_file_is_named_as_a_fitted_panel(tmp_path: Path, capsys) -> None:
    study = _live(tmp_path)
    assert main([str(study), "--plan", "--sheets", str(tmp_path / "nope.json")]) == 2
    assert "expected an existing fitted_panel.json" in capsys.readouterr().err


def test_plan_compares_humans_per_root_and_names_the_field_to_set(tmp_path: Path, capsys) -> None:
    """A fitted ICC_H of 0.6 and a human budget: one human per root is chosen over today's two,
    the saving printed with its MCSE, and the config field that takes it exists; a negative fit
    is read as 0 and said."""
    from verdictpack.kinds._study_allocation import FIELD
    from verdictpack.kinds._study_config import StudyConfig

    study = write_tiny_study(tmp_path / "study", roots=300)
    config = json.loads(study.read_text())
    for judge in config["panel"]["judges"]:
        judge["endpoint"] = {
            "base_url": "http://127.0.0.1:9/v1",  # nothing listens: --plan must not call
            "model": judge["name"],
            "price": {"per_call": 0.002},
        }
    config["sequential"]["cap_roots"] = 300
    config["humans"] = {"judgments_per_root": 2, "cost_per_judgment": 0.5}
    config["budget"] = {"humans": 200}  # 400 human judgments: 200 roots at two per root
    config["data"]["reader_audit"]["cost_per_reading"] = 0.1  # 60 readings over 300 roots
    study.write_text(json.dumps(config))
    judges = [{"name": n, "baseline_rate": 0.5, "lean_h": 0.9} for n in ("judge-a", "judge-b")]
    sheets = {
        "panel": {"name": "fitted", "latent_correlation": 0.2, "judges": judges},
        "human_rate": 0.5,
        "human_icc": {"icc": 0.6},
    }
    path = tmp_path / "fitted_panel.json"
    path.write_text(json.dumps(sheets))
    assert main([str(study), "--plan", "--sheets", str(path)]) == 0
    out = capsys.readouterr().out
    section = out[out.index("## Humans per root") :]
    assert "ICC_H 0.600, fitted with the sheets" in section
    # the tiny study's readers (kappa-hat 0.687, gate 0.35): 33 roots double-read, 66 readings
    assert "a human judgment 0.5, a root's model judgments 0.008, the reader audit 6.6" in section
    assert "n_a = 33 roots double-read" in section and "kappa-hat 0.687" in section
    passing = float(section.split("default pass_probability): ")[1].split()[0])
    assert passing >= 0.8 and "(simulated, MCSE " in section
    assert "double-read share" in section
    every = {
        (line.split("|")[1].strip(), line.split("|")[2].strip()): line
        for line in section.splitlines()
        if line.startswith("| ") and line.split("|")[1].strip().isdigit()
    }
    # by default the allocations are compared under every bets construction, the config's first
    bets = ["grid", "plugin", "blend", "horizon"]
    assert set(every) == {(k, b) for k in "123" for b in bets}
    assert [b for k, b in every if k == "1"] == bets
    # the horizon bets keep their cap (bets tuned to it): roots N is the cap, ± 0
    for k in "123":
        cells = [c.strip() for c in every[(k, "horizon")].split("|")]
        assert cells[4] in (f"{cells[3]} ± 0", "—"), cells
    rows = {k: line for (k, b), line in every.items() if b == "grid"}
    assert rows["2"].rstrip(" |").endswith("today") and "| 200 |" in rows["2"]
    chosen = [key for key, line in every.items() if line.rstrip(" |").endswith("chosen")]
    assert len(chosen) == 1 and chosen[0][0] == "1" and "| 300 |" in every[chosen[0]]
    assert "Predicted saving against today's 2 per root:" in section and " ± " in section
    assert f"set `{FIELD}` to 1" in section
    assert ("`sequential.bets` to " in section) == (chosen[0][1] != "grid")
    group, name = FIELD.split(".")
    assert name in StudyConfig.model_fields[group].annotation.model_fields  # type: ignore[union-attr]
    sheets["human_icc"] = {"icc": -0.04}
    path.write_text(json.dumps(sheets))
    config["planning"] = {"bets": ["grid"]}  # the grid alone: three rows
    study.write_text(json.dumps(config))
    assert main([str(study), "--plan", "--sheets", str(path)]) == 0
    out = capsys.readouterr().out
    assert "the fitted ICC_H -0.040 is negative, read as 0" in out
    assert "| plugin |" not in out and "| blend |" not in out and "| grid |" in out
    config["planning"] = {"bets": ["grid", "blend", "grid"]}
    study.write_text(json.dumps(config))
    assert main([str(study), "--plan", "--sheets", str(path)]) == 2
    err = capsys.readouterr().err
    assert "planning.bets[2]" in err and "a bets name used once" in err


@pytest.mark.parametrize("per_root", [1, 2])
def test_the_study_path_honours_the_humans_per_root_the_plan_names(
    tmp_path: Path, per_root: int
) -> None:
    """One human judgment on every root: complete at humans.judgments_per_root 1, a shortfall
    of one judgment per root (scored by the missing policy, bounded) at 2."""
    from verdictpack._cli import _parsed
    from verdictpack.kinds._study import prepare_study

    study = write_tiny_study(tmp_path / "study", roots=40)
    judgments = study.parent / "data" / "judgments.csv"
    rows = judgments.read_text().splitlines()
    judgments.write_text("\n".join(r for r in rows if ",h2," not in r) + "\n")
    config = json.loads(study.read_text())
    config["humans"] = {"judgments_per_root": per_root}
    study.write_text(json.dumps(config))
    source, _, parsed = _parsed(str(study))
    values = prepare_study(parsed, source).values
    assert values.coverage.human_missing == 40 * (per_root - 1)
    bounded = values.h_hi - values.h_lo
    assert (bounded > 0).sum() == (40 if per_root == 2 else 0)


def test_plan_prices_judges_read_from_files_and_the_humans(tmp_path: Path, capsys) -> None:
    """Judges read from files are priced at their cost_per_judgment and humans at theirs (the
    plan's cost rows were 0.00 for both); budget.judges, a cap on live spend, caps nothing."""
    study = write_tiny_study(tmp_path / "study")
    config = json.loads(study.read_text())
    for judge in config["panel"]["judges"]:
        judge["cost_per_judgment"] = 0.25
        judge["prior"] = {"baseline_rate": 0.5, "lean_h": 0.8, "position_bias": 0.05}
    config["humans"] = {"judgments_per_root": 1, "cost_per_judgment": 0.5}
    config["budget"] = {"judges": 0.2}
    config["sequential"]["cap_roots"] = 40
    config["planning"] = {"bets": ["grid"]}  # the grid alone: this test is about prices
    study.write_text(json.dumps(config))
    assert main([str(study), "--plan"]) == 0
    out = capsys.readouterr().out
    rows = {
        line.split("|")[1].strip(): [
            float(c.split("±")[0].replace(",", "")) for c in line.split("|")[2:-1]
        ]
        for line in out.splitlines()
        if line.startswith(("| model judgments (", "| human layer ("))
    }
    for touches, cost in zip(
        rows["model judgments (touches)"], rows["model judgments (cost)"], strict=True
    ):
        assert cost == pytest.approx(0.25 * touches, rel=1e-3, abs=0.006)
    for touches, cost in zip(
        rows["human layer (touches)"], rows["human layer (cost)"], strict=True
    ):
        assert cost == pytest.approx(0.5 * touches, rel=1e-3, abs=0.006)
    assert max(rows["human layer (cost)"]) > 1.0
    assert "covers" not in out  # no live judge: the judges' budget caps no roots


def test_plan_takes_the_configs_humans_icc_without_sheets(tmp_path: Path, capsys) -> None:
    """humans.icc is the human sheet `--plan` simulates when no fitted panel is given (a planning
    prior, as a judge's `prior`); a fitted ICC_H given with --sheets takes precedence."""
    study = write_tiny_study(tmp_path / "study", roots=300)
    config = json.loads(study.read_text())
    for judge in config["panel"]["judges"]:
        judge["prior"] = {"baseline_rate": 0.5, "lean_h": 0.9}
    config["sequential"]["cap_roots"] = 300
    config["humans"] = {"judgments_per_root": 2, "cost_per_judgment": 0.5, "icc": 0.6}
    config["budget"] = {"humans": 200}
    config["planning"] = {"bets": ["grid"]}  # the grid alone (this test is about the ICC_H)
    study.write_text(json.dumps(config))
    assert main([str(study), "--plan"]) == 0
    section = capsys.readouterr().out.split("## Humans per root")[1]
    assert "ICC_H 0.600, the config's humans.icc" in section
    chosen = [r for r in section.splitlines() if r.rstrip(" |").endswith("chosen")]
    assert chosen and chosen[0].split("|")[1].strip() == "1"
    judges = [{"name": n, "baseline_rate": 0.5, "lean_h": 0.9} for n in ("judge-a", "judge-b")]
    sheets = tmp_path / "fitted_panel.json"
    sheets.write_text(
        json.dumps({"panel": {"name": "f", "judges": judges}, "human_icc": {"icc": 0.3}})
    )
    assert main([str(study), "--plan", "--sheets", str(sheets)]) == 0
    assert "ICC_H 0.300, fitted with the sheets" in capsys.readouterr().out
    config["humans"]["icc"] = 1.5
    study.write_text(json.dumps(config))
    assert main([str(study), "--plan"]) == 2
    err = capsys.readouterr().err
    assert "humans.icc" in err and "1.5" in err


def _audit_plan(tmp_path: Path, audit: object, agree: int = 30) -> tuple[int | None, str]:
    """plan_reader_audit of the tiny study with ``audit`` as its data.reader_audit, the
    readings rewritten so that ``agree`` of 30 double-read roots agree (two categories)."""
    from verdictpack._cli import _parsed
    from verdictpack.kinds._study import prepare_study
    from verdictpack.kinds._study_allocation import plan_reader_audit

    study = write_tiny_study(tmp_path / "study", roots=40)
    lines = ["root_id,reader_id,category"]
    for i in range(30):
        cat = "a" if i % 2 else "b"
        other = cat if i < agree else ("b" if cat == "a" else "a")
        lines += [f"a{i},x,{cat}", f"a{i},y,{other}"]
    (study.parent / "data" / "readings.csv").write_text("\n".join(lines) + "\n")
    config = json.loads(study.read_text())
    config["data"]["reader_audit"] = audit
    study.write_text(json.dumps(config))
    source, _, parsed = _parsed(str(study))
    _, _, roots, note = plan_reader_audit(parsed, prepare_study(parsed, source))
    return roots, note


def test_plan_sizes_the_reader_audit_from_the_studys_kappa(tmp_path: Path) -> None:
    """Readers agreeing on 28 of 30 roots (kappa-hat 0.867): a small audit passes the gate at
    0.35 with probability >= 0.8; the audit grows as the gate nears kappa-hat (monotone, as the
    bound's margin shrinks), and at or above kappa-hat no size passes."""
    sizes = []
    for gate in (0.35, 0.6, 0.75):
        roots, note = _audit_plan(tmp_path / str(gate), {**_AUDIT, "kappa_min": gate}, agree=28)
        assert roots is not None and "kappa-hat 0.867" in note, note
        passing = float(note.split("default pass_probability): ")[1].split()[0])
        assert passing >= 0.8 and "(simulated, MCSE " in note
        sizes.append(roots)
    assert sizes[0] <= 20 and sizes[0] < sizes[1] < sizes[2], sizes
    again, _ = _audit_plan(tmp_path / "again", {**_AUDIT, "kappa_min": 0.6}, agree=28)
    assert again == sizes[1]  # seeded
    for gate in (0.867, 0.95):
        roots, note = _audit_plan(tmp_path / f"at{gate}", {**_AUDIT, "kappa_min": gate}, agree=28)
        assert roots is None and "cannot pass its gate: no reader-audit size passes them" in note


def test_plan_without_a_reader_audit_says_so(tmp_path: Path) -> None:
    roots, note = _audit_plan(tmp_path, "none")
    assert roots is None and "The plan includes no reader audit" in note


_AUDIT = {"path": "data/readings.csv", "cost_per_reading": 0.1}
