"""Judgment tables as people hold them: free-text verdict columns, row filters, ignored raters,
Parquet files and DataFrames, each read into the same canonical table as the equivalent CSV."""

from __future__ import annotations

import builtins
import csv
import hashlib
import io
import json
from pathlib import Path
from typing import Any

import pytest

import verdictpack
from conftest import write_tiny_study
from verdictpack._api import frame_bytes
from verdictpack._cli import main
from verdictpack.evidence._table import read_table

ROOTS = 16
# the styles of verdict text a judge writes, each read by a declared rule of the parser
STYLES = ("{}", "**{}**", "Assistant {} is better.", "[[{}]]", " {}. ")
PATTERNS = ["bold", "named", "brackets"]


def _rows(path: Path) -> list[dict[str, str]]:
    return list(csv.DictReader(io.StringIO(path.read_text(), newline="")))


def _write_csv(path: Path, rows: list[dict[str, str]]) -> None:
    with path.open("w", newline="") as f:
        w = csv.DictWriter(f, list(rows[0]), lineterminator="\n")
        w.writeheader()
        w.writerows(rows)


@pytest.fixture(scope="module")
def tiny(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, verdictpack.Result]:
    """The tiny study from canonical CSV, and its result."""
    cfg = write_tiny_study(tmp_path_factory.mktemp("tiny") / "study", roots=ROOTS)
    return cfg, verdictpack.run(cfg)


def _text_of(row: dict[str, str], k: int) -> str:
    first = (row["choice"] == "treatment") == (row["order"] == "treatment_first")
    return STYLES[k % len(STYLES)].format("A" if first else "B")


def test_a_free_text_study_with_filtered_rows_and_ignored_raters_gives_the_csv_verdict(
    tiny: tuple[Path, verdictpack.Result], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The model judgments as free text in five styles, beside probe rows (left out by
    ``where``) and a control judge (ignored): the same verdict, h-interval and estimate as the
    canonical CSV; every row left out counted in import_notes; judgments.csv records the rule
    that read each text; the self-audit passes the written folder and fails a row whose text no
    rule read (parse_path none) that is not invalid."""
    cfg, expected = tiny
    rows = _rows(cfg.parent / "data" / "judgments.csv")
    models = [dict(r, probe="main") for r in rows if r["rater_kind"] == "model"]
    text = [
        {**{k: r[k] for k in ("root_id", "rater_id", "order", "probe")}, "rater_kind": "model"}
        | {"judge_output": _text_of(r, k)}
        for k, r in enumerate(models)
    ]
    extra = [dict(r, probe="length-probe", judge_output="A") for r in text[:7]]
    control = [dict(r, rater_id="control-judge", judge_output="B") for r in text[:5]]
    folder = tmp_path / "study"
    (folder / "data").mkdir(parents=True)
    for name in ("pairs.jsonl", "readings.csv"):
        (folder / "data" / name).write_bytes((cfg.parent / "data" / name).read_bytes())
    _write_csv(folder / "data" / "judge_text.csv", text + extra + control)
    _write_csv(folder / "data" / "humans.csv", [r for r in rows if r["rater_kind"] == "human"])
    config = json.loads(cfg.read_text())
    config["data"]["judgments"] = [
        {
            "format": "table",
            "path": "data/judge_text.csv",
            "verdict_text_column": "judge_output",
            "patterns": PATTERNS,
            "where": {"column": "probe", "in": ["main"]},
            "ignore_raters": ["control-judge"],
        },
        {"format": "table", "path": "data/humans.csv"},
    ]
    (folder / "study.json").write_text(json.dumps(config))
    got = verdictpack.run(folder / "study.json")
    assert (got.verdict, got.h_interval) == (expected.verdict, expected.h_interval)
    assert got.estimate == expected.estimate
    notes = got.to_dict()["import_notes"]
    assert "data/judge_text.csv: 7 rows left out by where (probe in [main])" in notes
    assert "data/judge_text.csv: 5 rows of ignored rater 'control-judge' left out" in notes
    files = got.files()
    assert "7 rows left out by where" in files["report.md"]
    out = _rows_text(files["judgments.csv"])
    by_path = {r["parse_path"] for r in out if r["rater_kind"] == "model"}
    assert by_path == {"exact label", "pattern bold", "pattern named", "pattern brackets"}
    assert {r["parse_path"] for r in out if r["rater_kind"] == "human"} == {""}
    assert "Assistant A is better." in {r["raw"] for r in out}
    got.write(tmp_path / "out")
    assert main(["audit", str(tmp_path / "out")]) == 0
    written = tmp_path / "out" / "judgments.csv"
    lines = written.read_text().split("\n")
    k = next(i for i, line in enumerate(lines) if ",model," in line and ",treatment," in line)
    lines[k] = lines[k].rsplit(",", 1)[0] + ",none"
    written.write_text("\n".join(lines))
    capsys.readouterr()
    assert main(["audit", str(tmp_path / "out")]) == 1
    assert "parse_path none but choice" in capsys.readouterr().out


def _rows_text(text: str) -> list[dict[str, str]]:
    return list(csv.DictReader(io.StringIO(text, newline="")))


def test_a_free_text_column_reads_each_style_and_counts_what_it_cannot_read(
    tmp_path: Path,
) -> None:
    """Positions become choices through the row's order (or the treatment side); ties are
    read; an unreadable text, an empty one and a position under an unknown order are invalid
    (path none), never guessed."""
    lines = [
        "root_id,rater_id,rater_kind,order,out",
        "r1,j,model,treatment_first,**A**",
        "r2,j,model,null_first,**A**",
        "r3,j,model,treatment_first,Assistant B is better.",
        "r4,j,model,null_first,[[B]]",
        "r5,j,model,treatment_first,C",
        "r6,j,model,treatment_first,I prefer neither",
        "r7,j,model,treatment_first,",
        "r8,j,model,unknown,A",
        'r9,j,model,null_first,"[[A]] or maybe [[B]]"',
    ]
    p = tmp_path / "j.csv"
    p.write_text("\n".join(lines) + "\n")
    res = read_table(p, verdict_text_column="out", patterns=PATTERNS, ties=["C"])
    assert res.defects == ()
    choices = [j.choice for j in res.judgments]
    assert choices == [
        "treatment",
        "null_partner",
        "null_partner",
        "treatment",
        "tie",
        "invalid",
        "invalid",
        "invalid",
        "invalid",
    ]
    paths = res.table.parse_path
    assert paths is not None
    assert list(paths) == [
        "pattern bold",
        "pattern bold",
        "pattern named",
        "pattern brackets",
        "exact label",
        "none",
        "none",
        "exact label",
        "none",
    ]
    sided = tmp_path / "s.csv"
    sided.write_text("root_id,rater_id,rater_kind,side,out\nr1,j,model,B,A\nr2,j,model,B,B\n")
    res = read_table(sided, treatment_side_column="side", verdict_text_column="out")
    assert [(j.order, j.choice) for j in res.judgments] == [
        ("null_first", "null_partner"),
        ("null_first", "treatment"),
    ]


def test_parser_settings_without_a_text_column_and_a_choice_mapping_beside_it_are_refused(
    tmp_path: Path,
) -> None:
    p = tmp_path / "j.csv"
    p.write_text("root_id,rater_id,rater_kind,order,choice\nr1,j,model,unknown,tie\n")
    with pytest.raises(verdictpack.InputError, match="verdict_text_column"):
        read_table(p, patterns=["bold"])
    with pytest.raises(verdictpack.InputError, match="mapping"):
        read_table(p, mapping={"choice": "choice"}, verdict_text_column="choice")


def test_where_and_ignored_raters_leave_rows_out_counted_before_any_check(tmp_path: Path) -> None:
    """Rows left out are never checked (a control judge's odd values are no defect) and each
    reason is counted; a ``where`` column the file lacks is a defect of the header."""
    p = tmp_path / "j.jsonl"
    recs = [
        {"root_id": "r1", "rater_id": "j", "rater_kind": "model", "order": "null_first",
         "choice": "tie", "probe": "main"},
        {"root_id": "r2", "rater_id": "j", "rater_kind": "model", "order": "null_first",
         "choice": "tie", "probe": "extra"},
        {"root_id": "r3", "rater_id": "ctl", "rater_kind": "robot", "order": "?",
         "choice": "?", "probe": "main"},
        {"root_id": "r4", "rater_id": "j", "rater_kind": "model", "order": "null_first",
         "choice": "tie", "probe": 3},
    ]  # fmt: skip
    p.write_text("".join(json.dumps(r) + "\n" for r in recs))
    res = read_table(p, where=[{"column": "probe", "in": ["main", "3"]}], ignore_raters=["ctl"])
    assert res.defects == ()
    assert [j.root_id for j in res.judgments] == ["r1", "r4"]
    assert res.notes == (
        "1 rows left out by where (probe in [3, main])",
        "1 rows of ignored rater 'ctl' left out",
    )
    csv_p = tmp_path / "j.csv"
    csv_p.write_text("root_id,rater_id,rater_kind,order,choice\nr1,j,model,unknown,tie\n")
    res = read_table(csv_p, where={"column": "batch", "in": ["1"]})
    assert len(res.table) == 0
    assert "'batch'" in res.defects[0].expected and res.defects[0].path == "line 1"


def _frame(path: Path) -> Any:
    pd = pytest.importorskip("pandas")
    return pd.read_csv(path, dtype=str, keep_default_na=False)


def test_a_parquet_file_reads_into_the_table_of_the_equivalent_csv(
    tiny: tuple[Path, verdictpack.Result], tmp_path: Path
) -> None:
    pytest.importorskip("pyarrow")
    cfg, _ = tiny
    src = cfg.parent / "data" / "judgments.csv"
    frame = _frame(src)
    frame["trial"] = 0  # an integer column: read as its text, as JSONL reads numbers
    frame.to_parquet(tmp_path / "j.parquet")
    want = read_table(src).table.to_csv_bytes()
    assert read_table(tmp_path / "j.parquet").table.to_csv_bytes() == want


def test_parquet_defects_name_the_file_and_row(tmp_path: Path) -> None:
    pytest.importorskip("pyarrow")
    pd = pytest.importorskip("pandas")
    frame = pd.DataFrame(
        {
            "root_id": ["r1", "r2", "r3"],
            "rater_id": ["j", "j", "j"],
            "rater_kind": ["model", "model", "model"],
            "order": ["null_first", "sideways", "null_first"],
            "choice": ["tie", "tie", "B"],
        }
    )
    frame.to_parquet(tmp_path / "j.parquet")
    res = read_table(tmp_path / "j.parquet", display="data/j.parquet")
    assert [(d.file, d.path, d.received) for d in res.defects] == [
        ("data/j.parquet", "row 2", "sideways"),
        ("data/j.parquet", "row 3", "B"),
    ]
    assert res.judgments[0].origin is not None and res.judgments[0].origin.where == "row 1"
    frame.drop(columns=["order"]).to_parquet(tmp_path / "k.parquet")
    (d,) = read_table(tmp_path / "k.parquet").defects
    assert (d.path, d.expected) == ("(file)", "a column named 'order'")
    (tmp_path / "bad.parquet").write_bytes(b"PAR1 not really")
    (d,) = read_table(tmp_path / "bad.parquet").defects
    assert d.path == "(file)" and d.expected == "a Parquet file"


def test_without_pyarrow_a_parquet_study_exits_2_naming_the_extra(
    tiny: tuple[Path, verdictpack.Result],
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    cfg, _ = tiny
    folder = tmp_path / "study"
    (folder / "data").mkdir(parents=True)
    for name in ("pairs.jsonl", "readings.csv"):
        (folder / "data" / name).write_bytes((cfg.parent / "data" / name).read_bytes())
    (folder / "data" / "judgments.parquet").write_bytes(b"PAR1")
    config = json.loads(cfg.read_text())
    config["data"]["judgments"] = [{"format": "table", "path": "data/judgments.parquet"}]
    (folder / "study.json").write_text(json.dumps(config))
    real_import = builtins.__import__

    def no_pyarrow(name: str, *args: Any, **kwargs: Any) -> Any:
        if name == "pyarrow" or name.startswith("pyarrow."):
            raise ImportError(f"No module named {name!r}")
        return real_import(name, *args, **kwargs)

    monkeypatch.setattr(builtins, "__import__", no_pyarrow)
    assert main([str(folder / "study.json"), "--out", str(tmp_path / "out")]) == 2
    err = capsys.readouterr().err
    assert "data/judgments.parquet" in err and "verdictpack[parquet]" in err
    assert "Traceback" not in err and not (tmp_path / "out").exists()


def test_a_dataframe_study_equals_the_csv_study(
    tiny: tuple[Path, verdictpack.Result],
) -> None:
    """A pandas DataFrame given for the judgment file: the same verdict and numbers; the
    provenance records the hash of the frame's canonical CSV, labelled as a frame."""
    cfg, expected = tiny
    src = cfg.parent / "data" / "judgments.csv"
    config = json.loads(cfg.read_text())
    text = _frame(src)
    text["trial"] = "0"
    got = verdictpack.run(config, base=str(cfg.parent), frames={"data/judgments.csv": text})
    assert (got.verdict, got.h_interval) == (expected.verdict, expected.h_interval)
    assert got.estimate == expected.estimate
    assert got.files()["judgments.csv"] == expected.files()["judgments.csv"]
    (entry,) = [f for f in got.to_dict()["data_files"] if f["role"] == "judgments"]
    assert entry["format"] == "table (frame)"
    frame = _frame(src)
    frame["trial"] = 0  # numbers: the same canonical text, the same hash
    assert entry["sha256"] == hashlib.sha256(frame_bytes(frame)).hexdigest()
    assert frame_bytes(frame) == frame_bytes(text)
    with pytest.raises(verdictpack.UsageError, match="table judgment file"):
        verdictpack.run(config, base=str(cfg.parent), frames={"data/other.csv": frame})


def test_a_polars_dataframe_study_equals_the_pandas_one(
    tiny: tuple[Path, verdictpack.Result],
) -> None:
    """A polars DataFrame for the judgment file: the same verdict, numbers and frame hash as
    the pandas frame of the same rows (numbers and strings alike reach one canonical text)."""
    import polars as pl

    cfg, expected = tiny
    src = cfg.parent / "data" / "judgments.csv"
    config = json.loads(cfg.read_text())
    frame = pl.read_csv(src, infer_schema_length=0).with_columns(pl.lit(0).alias("trial"))
    got = verdictpack.run(config, base=str(cfg.parent), frames={"data/judgments.csv": frame})
    assert (got.verdict, got.h_interval, got.estimate) == (
        expected.verdict,
        expected.h_interval,
        expected.estimate,
    )
    assert got.files()["judgments.csv"] == expected.files()["judgments.csv"]
    pandas_frame = _frame(src)
    pandas_frame["trial"] = 0
    (entry,) = [f for f in got.to_dict()["data_files"] if f["role"] == "judgments"]
    assert entry["format"] == "table (frame)"
    assert entry["sha256"] == hashlib.sha256(frame_bytes(pandas_frame)).hexdigest()
    assert frame_bytes(frame) == frame_bytes(pandas_frame)
