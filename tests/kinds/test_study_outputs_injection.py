"""Issue 22 row 12: user strings reach the outputs inert. Ids and names a spreadsheet would run as
a formula are neutralised in every CSV (a leading ``'``) and read back exactly by the importers and
the self-audit; names with ``|`` or raw HTML neither forge table cells nor inject markup in
report.md and report.html."""

from __future__ import annotations

import csv
import io
import json
import re
from pathlib import Path

import pytest

from conftest import write_tiny_study
from verdictpack._cells import FORMULA_START, csv_cell, csv_value
from verdictpack._cli import main
from verdictpack.evidence._readings import read_readings
from verdictpack.evidence._table import read_table

JUDGE_A = "=A1+1 | <b>bold</b> judge"
JUDGE_B = "@judge | b"
ROOTS = {"r000": "=r000", "r001": "+r001", "r002": "-r002", "r003": "@r003"}


def _hostile_study(tmp_path: Path) -> Path:
    study = write_tiny_study(tmp_path / "study")
    data = study.parent / "data"
    names = {"judge-a": JUDGE_A, "judge-b": JUDGE_B, "h1": "-h1"}

    def rename(line: str) -> str:
        cells = line.split(",")
        cells[0] = ROOTS.get(cells[0], cells[0])
        cells[1] = names.get(cells[1], cells[1])
        return ",".join(cells)

    lines = (data / "judgments.csv").read_text().splitlines()
    (data / "judgments.csv").write_text("\n".join(map(rename, lines)) + "\n")
    pairs = [json.loads(x) for x in (data / "pairs.jsonl").read_text().splitlines()]
    for p in pairs:
        p["id"] = ROOTS.get(p["id"], p["id"])
    (data / "pairs.jsonl").write_text("".join(json.dumps(p) + "\n" for p in pairs))
    readings = (data / "readings.csv").read_text().splitlines()
    readings = [readings[0]] + [
        r.replace("a0,", "=a0,").replace(",x,", ",@x,").replace(",b", ",=b") for r in readings[1:]
    ]
    (data / "readings.csv").write_text("\n".join(readings) + "\n")
    config = json.loads(study.read_text())
    config["panel"]["judges"] = [{"name": JUDGE_A}, {"name": JUDGE_B}]
    study.write_text(json.dumps(config, indent=2))
    return study


def test_the_cell_rule_round_trips_every_string() -> None:
    cases = ["", "a", "=1+1", "+1", "-1", "@x", "\tx", "\rx", "'", "'=x", "''+x", "'a", "x=1"]
    for value in cases:
        cell = csv_cell(value)
        assert cell[:1] not in FORMULA_START
        assert csv_value(cell) == value


def test_hostile_ids_and_names_are_inert_in_every_output(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    study = _hostile_study(tmp_path)
    out = tmp_path / "out"
    assert main([str(study), "--out", str(out), "--quiet"]) == 0, capsys.readouterr().err
    report = out  # a file study writes its outputs straight into --out
    # no CSV cell starts as a formula
    for name in ("judgments.csv", "reader_audit.csv", "cost_comparison.csv"):
        rows = list(csv.reader(io.StringIO((report / name).read_text(), newline="")))
        assert rows
        for row in rows:
            for cell in row:
                assert cell[:1] not in FORMULA_START, (name, cell)
    judgments = (report / "judgments.csv").read_text()
    assert "'=r000," in judgments and "'@r003," in judgments and "'=A1+1 | <b>" in judgments
    assert "'=a0,'@x" in (report / "reader_audit.csv").read_text()
    # the importers read the ids back exactly
    table = read_table(report / "judgments.csv").table
    assert set(ROOTS.values()) <= set(table.roots)
    assert {JUDGE_A, JUDGE_B, "-h1"} <= set(table.raters)
    readings, defects = read_readings(report / "reader_audit.csv")
    assert not defects and "=a0" in readings.root and "@x" in readings.reader
    assert "=b" in readings.category
    # report.md: a name's "|" is escaped in table cells and its HTML is inert
    md = (report / "report.md").read_text()
    assert "<b>" not in md
    blocks: list[list[str]] = [[]]
    for line in md.splitlines():
        if line.startswith("|"):
            blocks[-1].append(line)
        elif blocks[-1]:
            blocks.append([])
    width = lambda line: len(re.split(r"(?<!\\)\|", line.strip())) - 2  # noqa: E731
    named = [b for b in blocks if any("bold" in line for line in b)]
    assert named, "the judge names appear in report.md tables"
    for block in named:
        assert {width(line) for line in block} == {width(block[0])}, block
        assert all("\\|" in line for line in block if "bold" in line)
    # report.html: no markup from a name, no forged cell
    html = (report / "report.html").read_text()
    assert "<b>bold</b>" not in html and "=A1+1 | &lt;b&gt;bold&lt;/b&gt; judge" in html
    for tbl in re.findall(r"<table>.*?</table>", html, flags=re.S):
        if "bold" in tbl:
            heads = tbl.count("<th>")
            for row in re.findall(r"<tr>(.*?)</tr>", tbl.split("</thead>")[1], flags=re.S):
                assert row.count("<td>") == heads, row
    # the self-audit still passes: it reads the CSVs and the report's tables back
    assert main(["audit", str(out)]) == 0, capsys.readouterr().out


def test_user_strings_in_report_text_are_escaped_and_the_audit_agrees(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Issue 22 row 12: outside its tables, report.md wrote the construct name (title, construct
    line), the claim, the currency and the judges' names raw: HTML ran and ``|`` forged cells.
    They are escaped as in the tables, and the self-audit compares the escaped forms."""
    study = _hostile_study(tmp_path)
    config = json.loads(study.read_text())
    config["construct"]["name"] = "<i>construct</i> | x"
    config["construct"]["registered_claim"] += " <script>alert(1)</script>"
    config["currency"] = "<b>E</b>|y"
    study.write_text(json.dumps(config, indent=2))
    out = tmp_path / "out"
    assert main([str(study), "--out", str(out), "--quiet"]) == 0, capsys.readouterr().err
    md = (out / "report.md").read_text()
    for raw in ("<i>", "<b>", "<script>"):
        assert raw not in md, raw
    assert md.startswith("# verdictpack study — &lt;i>construct&lt;/i> \\| x\n")
    assert "**Construct** &lt;i>construct&lt;/i> \\| x (version" in md
    assert "&lt;script>alert(1)&lt;/script>" in md
    cost = next(line for line in md.splitlines() if line.startswith("- Cost to the registered"))
    assert "&lt;b>E&lt;/b>\\|y" in cost
    # the self-audit reads the summary's lines against the escaped strings
    assert main(["audit", str(out)]) == 0, capsys.readouterr().out
    assert "AUDIT PASS" in capsys.readouterr().out


def test_cost_comparison_cells_follow_the_spreadsheet_rule() -> None:
    """Issue 22 row 12: cost_comparison.csv was joined with commas, its cells written raw; they
    pass through the one cell rule (and the csv quoting) like every other CSV's."""
    from types import SimpleNamespace as N

    from verdictpack.render._engine import render_cost_csv as engine_costs
    from verdictpack.render._study import render_cost_csv as study_costs

    q = N(value=2, basis="@basis")
    line = N(
        route="=HYPERLINK(1)", line="+line, with a comma", touches=q, cost=N(value=0.5, basis="-b")
    )
    engine = N(costs=[line], power=[])
    for text in (study_costs([line]), engine_costs(engine)):
        rows = list(csv.reader(io.StringIO(text, newline="")))
        assert len(rows) == 2 and len({len(r) for r in rows}) == 1, rows
        for cell in rows[1]:
            assert cell[:1] not in FORMULA_START, cell
        values = [csv_value(c) for c in rows[1]]
        assert "=HYPERLINK(1)" in values and "+line, with a comma" in values
