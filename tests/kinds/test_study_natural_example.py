"""The bundled natural-pairs example (examples/study_natural.json), run as a new user would: no
code, free-text judge verdicts, a probe and a control judge in the same log, one expert label per
pair, no reader audit, the length gate off. Its data are what its seeded script writes."""

from __future__ import annotations

import csv
import io
import json
import runpy
import shutil
from pathlib import Path

import pytest

from conftest import EXAMPLES
from verdictpack._cli import main

CONFIG = EXAMPLES / "study_natural.json"
DATA = EXAMPLES / "study_natural"


def test_the_example_gives_a_verdict_whose_first_lines_say_what_a_reader_needs(
    tmp_path: Path,
) -> None:
    out = tmp_path / "out"
    assert main([str(CONFIG), "--out", str(out), "--quiet"]) == 0
    res = json.loads((out / "results.json").read_text())
    est = res["estimate"]
    summary = (out / "report.md").read_text().split("\n\n")[1].splitlines()
    verdict, plain, estimate, evidence = summary[:4]
    assert res["registered"]["verdict"] == "EFFECT_SUPPORTED"
    assert verdict.startswith("- **Registered verdict: EFFECT_SUPPORTED** at root ")
    assert "instrument not validated (no reader audit)" in verdict
    rates = f"({est['model_rate']:.4f} vs {est['human_rate']:.4f}; h = {est['h_point']:.4f})"
    assert plain.startswith(
        "- In plain words: the judges prefer the treatment more often than the humans do " + rates
    )
    assert estimate.startswith(f"- Estimate: h = {est['h_point']:.4f} from the judges' answers")
    assert evidence.endswith("gates not applied (switched off): length_match.")
    assert (res["audit_status"], res["instrument_valid"]) == ("not_run", None)
    assert res["gates"]["off"] == ["length_match"]
    # what the config left out and what no rule could read, each counted
    notes = "study_natural/judge_calls.csv: "
    assert res["import_notes"] == [
        notes + "300 rows left out by where (prompt_variant in [standard])",
        notes + "360 rows of ignored rater 'control-always-first' left out",
        notes + "360 rows of ignored rater 'control-random' left out",
    ]
    rows = list(csv.DictReader(io.StringIO((out / "judgments.csv").read_text(), newline="")))
    unread = [r for r in rows if r["parse_path"] == "none"]
    assert len(unread) == res["coverage"]["model_invalid"] == 29
    assert {r["choice"] for r in unread} == {"invalid"}
    assert {r["rater_id"] for r in rows if r["rater_kind"] == "model"} == {
        "judge-frontier",
        "judge-open-70b",
        "judge-open-8b",
    }
    # one pair of two equally long answers names no treatment: refused, counted and listed
    assert res["coverage"]["roots_with_humans"] == res["gates"]["admitted"] == 179
    validity = json.loads((out / "validity_report.json").read_text())
    assert validity["gates"]["refused_pairs"] == [
        {"id": "q09-model-detailed-vs-model-balanced", "failed": ["treatment_rule"]}
    ]
    assert main(["audit", str(out), "--config", str(CONFIG)]) == 0


def test_the_example_data_are_what_its_script_writes(tmp_path: Path) -> None:
    script = runpy.run_path(str(DATA / "make_data.py"))
    script["main"](tmp_path)
    for name in ("pairs.csv", "judge_calls.csv", "human_labels.csv"):
        assert (tmp_path / name).read_bytes() == (DATA / name).read_bytes(), name


def test_a_defect_in_one_where_clause_names_the_path_the_file_holds(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """One clause is read as a list of one; its defect names the file's path (where.column),
    a clause in a list its index (where[1].column)."""
    shutil.copytree(DATA, tmp_path / "study_natural")
    config = json.loads(CONFIG.read_text())
    clause = config["data"]["judgments"][0]["where"]
    for where, path in (
        ({**clause, "column": 5}, "$.data.judgments[0].where.column"),
        ([clause, {**clause, "column": 5}], "$.data.judgments[0].where[1].column"),
    ):
        config["data"]["judgments"][0]["where"] = where
        (tmp_path / "study.json").write_text(json.dumps(config, indent=2))
        assert main(["validate", str(tmp_path / "study.json")]) == 2
        err = capsys.readouterr().err
        assert f"study.json: {path}: received 5; expected a valid string" in err, err
        assert "Traceback" not in err
