"""Judge verdicts in the files evaluation teams hold: OpenAI Batch output and Inspect AI logs,
read through the live judges' parser into the same canonical table as the equivalent CSV."""

from __future__ import annotations

import io
import json
import zipfile
from pathlib import Path

import pytest

from verdictpack._errors import InputError
from verdictpack.evidence._table import read_table
from verdictpack.evidence.importers import read_inspect, read_openai_batch
from verdictpack.evidence.live._extract import TextParser

DATA = Path(__file__).parent / "data"
PARSER = TextParser(("A", "B"), patterns=("bold", "named", "brackets_anywhere"), ties=("C",))
CUSTOM_ID = r"(?P<root>[^|]+)\|(?P<order>[a-z_]+)\|(?P<trial>\d+)"
SHOWN = {"treatment": "treatment_first", "null": "null_first"}


def _rows(result: object) -> list[tuple[object, ...]]:
    return sorted(
        (j.root_id, j.rater_id, j.rater_kind, j.order, j.choice, j.trial)
        for j in result.judgments  # type: ignore[attr-defined]
    )


def _csv(tmp_path: Path, rows: list[tuple[object, ...]]) -> list[tuple[object, ...]]:
    """The same judgments written as the canonical CSV and read back by read_table."""
    text = "root_id,rater_id,rater_kind,order,choice,trial\n"
    text += "".join(",".join(str(c) for c in row) + "\n" for row in rows)
    path = tmp_path / "same.csv"
    path.write_text(text)
    result = read_table(path)
    assert result.defects == ()
    return _rows(result)


def test_openai_batch_output_reads_into_the_canonical_table(tmp_path: Path) -> None:
    result = read_openai_batch(
        DATA / "openai_batch_output.jsonl", custom_id=CUSTOM_ID, parser=PARSER
    )
    assert result.defects == ()
    judge = "gpt-4o-mini-2024-07-18"
    expected = [
        ("r1", judge, "model", "null_first", "treatment", 0),  # **B**: second, the treatment
        ("r1", judge, "model", "treatment_first", "treatment", 0),  # A
        ("r2", judge, "model", "null_first", "invalid", 0),  # not a verdict: invalid, counted
        ("r2", judge, "model", "treatment_first", "null_partner", 0),  # Assistant B is better.
        ("r3", judge, "model", "null_first", "tie", 0),  # [[C]]
        ("r3", judge, "model", "treatment_first", "invalid", 0),  # expired: invalid, counted
    ]
    assert _rows(result) == expected == _csv(tmp_path, expected)
    raws = {j.raw for j in result.judgments}
    assert "Assistant B is better." in raws and any("expired" in (r or "") for r in raws)


def test_openai_batch_defects_name_the_line(tmp_path: Path) -> None:
    path = tmp_path / "out.jsonl"
    good = (DATA / "openai_batch_output.jsonl").read_text().splitlines()[0]
    bad = json.loads(good)
    bad["custom_id"] = "r1-treatment_first"
    odd = json.loads(good)
    odd["custom_id"] = "r1|sideways|0"
    path.write_text("\n".join([good, json.dumps(bad), json.dumps(odd), "{not json"]) + "\n")
    result = read_openai_batch(path, custom_id=CUSTOM_ID, parser=PARSER, judge="j")
    places = [(d.path, str(d.received)) for d in result.defects]
    assert places == [
        ("line 2", "r1-treatment_first"),
        ("line 3", "sideways"),
        ("line 4", "{not json"),
    ]
    assert [j.rater_id for j in result.judgments] == ["j"]
    with pytest.raises(InputError, match="custom_id"):
        read_openai_batch(path, custom_id=r"(?P<root>.*)", parser=PARSER)
    with pytest.raises(InputError, match="order_map"):
        read_openai_batch(path, custom_id=CUSTOM_ID, parser=PARSER, order_map={"x": "first"})


def _eval_archive(tmp_path: Path) -> Path:
    """The JSON log's samples packed as Inspect's .eval archive (header + one file a sample)."""
    log = json.loads((DATA / "inspect_log.json").read_text())
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as archive:
        header = {k: v for k, v in log.items() if k != "samples"}
        archive.writestr("_journal/start.json", json.dumps({"version": 2, "eval": log["eval"]}))
        for s in log["samples"]:
            archive.writestr(f"samples/{s['id']}_epoch_{s['epoch']}.json", json.dumps(s))
        archive.writestr("header.json", json.dumps(header))
    path = tmp_path / "2026-11-20T10-02-11_pairwise-judge_Fk2.eval"
    path.write_bytes(buffer.getvalue())
    return path


INSPECT_EXPECTED = [
    ("r1", "openai/gpt-4o-mini", "model", "null_first", "treatment", 0),  # Response B
    ("r1", "openai/gpt-4o-mini", "model", "treatment_first", "null_partner", 1),  # ... [[B]]
    ("r1", "openai/gpt-4o-mini", "model", "treatment_first", "treatment", 0),  # A
    ("r2", "openai/gpt-4o-mini", "model", "null_first", "invalid", 0),  # the sample's error
    ("r2", "openai/gpt-4o-mini", "model", "treatment_first", "null_partner", 0),  # b.
    ("r3", "openai/gpt-4o-mini", "model", "null_first", "invalid", 0),  # no verdict
]


def test_an_inspect_json_log_and_its_eval_archive_read_alike(tmp_path: Path) -> None:
    kwargs = {
        "root_key": "metadata.pair_id",
        "order_key": "metadata.shown_first",
        "order_map": SHOWN,
        "parser": PARSER,
    }
    from_json = read_inspect(DATA / "inspect_log.json", **kwargs)  # type: ignore[arg-type]
    from_eval = read_inspect(_eval_archive(tmp_path), **kwargs)  # type: ignore[arg-type]
    assert from_json.defects == () and from_eval.defects == ()
    assert _rows(from_json) == _rows(from_eval) == INSPECT_EXPECTED
    assert _rows(from_json) == _csv(tmp_path, INSPECT_EXPECTED)
    assert {j.origin.where for j in from_eval.judgments} >= {"samples/1_epoch_2.json"}


def test_inspect_answers_from_a_scorer_and_defects_by_place(tmp_path: Path) -> None:
    log = json.loads((DATA / "inspect_log.json").read_text())
    log["samples"][1]["metadata"]["shown_first"] = "sideways"
    del log["samples"][2]["metadata"]["pair_id"]
    path = tmp_path / "log.json"
    path.write_text(json.dumps(log))
    result = read_inspect(
        path,
        root_key="metadata.pair_id",
        order_key="metadata.shown_first",
        order_map=SHOWN,
        parser=PARSER,
        answer="score:verdict_parser",
        judge="judge-1",
    )
    assert [(d.path, d.received) for d in result.defects] == [
        ("$.samples[1].metadata.shown_first", "sideways"),
        ("$.samples[2].metadata.pair_id", "(missing)"),
    ]
    assert {j.rater_id for j in result.judgments} == {"judge-1"}
    with pytest.raises(InputError, match="answer"):
        read_inspect(path, root_key="id", order_key="x", parser=PARSER, answer="score:")


def test_a_file_that_is_not_a_log_is_one_defect(tmp_path: Path) -> None:
    path = tmp_path / "x.eval"
    path.write_bytes(b"PK\x03\x04 not really a zip")
    result = read_inspect(path, root_key="id", order_key="metadata.o", parser=PARSER)
    assert [d.path for d in result.defects] == ["(file)"] and result.judgments == ()
