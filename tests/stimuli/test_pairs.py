"""Tests of reading user stimulus files (JSONL and CSV of pairs) with file-and-line defects."""

# The refusal tests pass ill-typed arguments on purpose.
# mypy: disable-error-code="arg-type,dict-item"

from __future__ import annotations

import json
from pathlib import Path

import pytest

from conftest import assert_refused_by_name
from verdictpack._errors import MISSING
from verdictpack.stimuli import Stimulus
from verdictpack.stimuli._pairs import MAX_DEFECTS, PairsResult, read_pairs
from verdictpack.stimuli._realtext import gate_counts, real_text_gates

MAPPING = {
    "id": "pair_id",
    "source": "article",
    "treatment": "text_a",
    "null_partner": "text_b",
    "metadata": ["topic"],
}

ARTICLE = (
    "The city council of Bergen approved a budget of 4.2 billion kroner on Tuesday. "
    "Mayor Ingrid Dahl said the plan funds 350 new teachers."
)
NULL = (
    "On Tuesday, the Bergen city council approved a budget of 4.2 billion kroner. "
    "Mayor Ingrid Dahl said that the plan funds 350 new teachers."
)
TREATMENT = (
    "On Tuesday, the Bergen city council formally approved a budget of 4.2 billion kroner. "
    "Mayor Ingrid Dahl stated that the plan funds 350 new teachers."
)
LYON_A = "Officials in Lyon confirmed on Monday that 12 people were injured in a tram accident."
LYON_B = "Officials in Lyon said on Monday that 12 people were injured in a tram accident."


def write_jsonl(path: Path, rows: list[object]) -> Path:
    path.write_text("\n".join(r if isinstance(r, str) else json.dumps(r) for r in rows) + "\n")
    return path


def row(pid: object, a: object = TREATMENT, b: object = NULL, **extra: object) -> dict:
    return {"pair_id": pid, "article": ARTICLE, "text_a": a, "text_b": b, "topic": "city", **extra}


def messages(result: PairsResult) -> list[str]:
    return [d.message() for d in result.defects]


def test_reads_a_clean_jsonl_file(tmp_path: Path) -> None:
    p = write_jsonl(
        tmp_path / "pairs.jsonl",
        [row("bergen-1"), "", row(7, LYON_A, LYON_B, article=LYON_A, topic="transport")],
    )
    result = read_pairs(p, MAPPING)
    assert isinstance(result, PairsResult) and len(result) == 2 and result.defects == ()
    stimuli, _ = result
    assert [s.id for s in stimuli] == ["bergen-1", "7"]  # an integer id is read as text
    first = stimuli[0]
    assert isinstance(first, Stimulus)
    assert (first.source, first.treatment, first.null_partner) == (ARTICLE, TREATMENT, NULL)
    assert dict(first.metadata) == {"topic": "city"}
    assert dict(stimuli[1].metadata) == {"topic": "transport"}


def test_source_and_metadata_are_optional(tmp_path: Path) -> None:
    p = write_jsonl(tmp_path / "pairs.jsonl", [{"id": "x", "t": LYON_A, "n": LYON_B}])
    stimuli, defects = read_pairs(p, {"id": "id", "treatment": "t", "null_partner": "n"})
    assert defects == ()
    assert stimuli[0].source is None and dict(stimuli[0].metadata) == {}


def test_reads_a_csv_file_with_quoted_multiline_fields_and_bom(tmp_path: Path) -> None:
    p = tmp_path / "pairs.csv"
    text = (
        "pair_id,article,text_a,text_b,topic\r\n"
        f'b1,"{ARTICLE}","{TREATMENT}","{NULL}",city\r\n'
        f'l1,"{LYON_A}\nSecond line.","{LYON_A}","{LYON_B}",transport\r\n'
        f'l2,"{LYON_A}","","{LYON_B}",transport\r\n'
    )
    p.write_bytes(b"\xef\xbb\xbf" + text.encode("utf-8"))
    result = read_pairs(p, MAPPING, display="data/pairs.csv")
    assert [s.id for s in result.stimuli] == ["b1", "l1"]
    assert result.stimuli[1].source == f"{LYON_A}\nSecond line."
    # the record of l2 starts on physical line 5: l1 spans lines 3 and 4
    assert messages(result) == [
        'data/pairs.csv: line 5: received ""; expected a non-empty text in '
        "'text_a' (mapping 'treatment')"
    ]


def test_unknown_csv_column_is_named_once_against_the_header(tmp_path: Path) -> None:
    p = tmp_path / "pairs.csv"
    p.write_text(
        "pair_id,article,text_a,text_b\n"
        + "".join(f'p{i},"{ARTICLE}","{TREATMENT}","{NULL}"\n' for i in range(5))
    )
    result = read_pairs(p, {**MAPPING, "null_partner": "text_c"})
    assert result.stimuli == ()
    assert len(result.defects) == 2  # text_c and the metadata column topic, once each
    a, b = result.defects
    assert (a.path, a.received) == ("line 1", "text_c")
    assert "mapping 'null_partner'" in a.expected and "header: pair_id" in a.expected
    assert (b.path, b.received) == ("line 1", "topic")


def test_absent_jsonl_key_is_named_once(tmp_path: Path) -> None:
    rows = [{k: v for k, v in row(f"p{i}").items() if k != "topic"} for i in range(4)]
    p = write_jsonl(tmp_path / "pairs.jsonl", ["", *rows])
    result = read_pairs(p, MAPPING)
    assert result.stimuli == ()
    assert [(d.path, d.received) for d in result.defects] == [("line 2", "topic")]


def test_every_row_defect_with_its_line(tmp_path: Path) -> None:
    p = write_jsonl(
        tmp_path / "pairs.jsonl",
        [
            row("a"),  # 1 ok
            row("b", b="   "),  # 2 empty null partner
            row("a"),  # 3 duplicate of line 1
            "{not json",  # 4
            "[1, 2]",  # 5 not an object
            {k: v for k, v in row("c", b="").items() if k != "text_a"},  # 6 missing key, empty
            row("", a=5),  # 7 empty id and a non-string treatment: both reported
            row("d", article=""),  # 8 empty source
            row("b"),  # 9 duplicate of line 2 (refused there for another defect)
            row("e"),  # 10 ok
        ],
    )
    result = read_pairs(p, MAPPING, display="pairs.jsonl")
    assert [s.id for s in result.stimuli] == ["a", "e"]
    got = [(d.path, d.received) for d in result.defects]
    assert got == [
        ("line 2", "   "),
        ("line 3", "a"),
        ("line 4", "{not json"),
        ("line 5", [1, 2]),
        ("line 6", MISSING),
        ("line 6", ""),
        ("line 7", ""),
        ("line 7", 5),
        ("line 8", ""),
        ("line 9", "b"),
    ]
    assert messages(result)[4] == (
        "pairs.jsonl: line 6: received (missing); expected a value for 'text_a' "
        "(mapping 'treatment')"
    )
    d = result.defects
    assert d[1].expected == "a unique id (first used at line 1)"
    assert d[9].expected == "a unique id (first used at line 2)"
    assert "mapping 'source'" in d[8].expected
    assert "'text_a'" in d[4].expected
    assert all(x.file == "pairs.jsonl" for x in d)
    assert messages(result)[1] == (
        'pairs.jsonl: line 3: received "a"; expected a unique id (first used at line 1)'
    )


def test_csv_field_count_and_empty_file(tmp_path: Path) -> None:
    p = tmp_path / "pairs.csv"
    p.write_text(f'pair_id,text_a,text_b\nx,"{LYON_A}"\ny,"{LYON_A}","{LYON_B}"\n\n')
    result = read_pairs(p, {"id": "pair_id", "treatment": "text_a", "null_partner": "text_b"})
    assert [s.id for s in result.stimuli] == ["y"]
    assert [(d.path, d.received) for d in result.defects] == [("line 2", 2)]
    empty = tmp_path / "empty.csv"
    empty.write_text("")
    out = read_pairs(empty, MAPPING)
    assert out.stimuli == () and [d.path for d in out.defects] == ["line 1"]
    header_only = tmp_path / "header.csv"
    header_only.write_text("pair_id,article,text_a,text_b,topic\n")
    out = read_pairs(header_only, MAPPING)
    assert [(d.path, d.received) for d in out.defects] == [("line 1", "(no records)")]
    blank = write_jsonl(tmp_path / "blank.jsonl", ["", "  "])
    out = read_pairs(blank, MAPPING)
    assert [(d.path, d.expected) for d in out.defects] == [("line 1", "at least one JSON object")]
    out = read_pairs(tmp_path / "absent.csv", MAPPING)
    assert out.stimuli == () and [d.path for d in out.defects] == ["(file)"]


def test_defects_are_capped_with_a_count_of_the_rest(tmp_path: Path) -> None:
    p = write_jsonl(tmp_path / "pairs.jsonl", [row(f"p{i}", a="") for i in range(MAX_DEFECTS + 10)])
    result = read_pairs(p, MAPPING)
    assert len(result.defects) == MAX_DEFECTS + 1
    assert result.defects[MAX_DEFECTS - 1].path == f"line {MAX_DEFECTS}"
    tail = result.defects[-1]
    assert tail.path == "(more)" and tail.received == 10 and "10 more" in tail.expected


def test_invalid_utf8_is_a_defect_with_its_line(tmp_path: Path) -> None:
    p = tmp_path / "pairs.jsonl"
    p.write_bytes(json.dumps(row("a")).encode() + b'\n{"pair_id": "\xff"}\n')
    result = read_pairs(p, MAPPING)
    assert result.stimuli == () and [d.path for d in result.defects] == ["line 2"]


def test_malformed_mappings_and_paths_are_refused(tmp_path: Path) -> None:
    p = write_jsonl(tmp_path / "pairs.jsonl", [row("a")])
    assert_refused_by_name("mapping", lambda: read_pairs(p, ["pair_id"]))
    assert_refused_by_name("mapping", lambda: read_pairs(p, {**MAPPING, "label": "x"}))
    assert_refused_by_name("mapping", lambda: read_pairs(p, {"id": "pair_id", "treatment": "a"}))
    assert_refused_by_name("mapping.treatment", lambda: read_pairs(p, {**MAPPING, "treatment": ""}))
    assert_refused_by_name("mapping.metadata", lambda: read_pairs(p, {**MAPPING, "metadata": "t"}))
    assert_refused_by_name("mapping", lambda: read_pairs(p, {**MAPPING, "null_partner": "text_a"}))
    assert_refused_by_name("path", lambda: read_pairs(tmp_path / "pairs.txt", MAPPING))
    assert_refused_by_name("display", lambda: read_pairs(p, MAPPING, display=""))


def test_read_pairs_then_gate_counts_lists_refused_ids(tmp_path: Path) -> None:
    p = write_jsonl(
        tmp_path / "pairs.jsonl",
        [
            row("good"),
            row("changed", b=NULL.replace("350", "360")),
            row("same", a=NULL),
        ],
    )
    stimuli, defects = read_pairs(p, MAPPING)
    assert defects == ()
    counts = gate_counts(stimuli, real_text_gates(length_tolerance=0.10, max_diff_tokens=6))
    assert counts.admitted == ("good",)
    assert counts.refused == ("changed", "same")
    assert dict(counts.failed) == {"changed": ("content_overlap",), "same": ("diff_budget",)}


# ---------------------------------------------------------------- issue 22


@pytest.mark.parametrize("pid", [" bergen-1", "bergen-1 ", "bergen\n1", "bergen\x001", "b\u2028"])
def test_an_id_with_spaces_or_control_characters_is_refused(tmp_path: Path, pid: str) -> None:
    """Issue 22 row 6: root_order.txt cannot hold such an id; the run failed its self-audit."""
    p = write_jsonl(tmp_path / "pairs.jsonl", [row(pid), row("lyon-2", LYON_A, LYON_B)])
    stimuli, defects = read_pairs(p, MAPPING)
    assert [s.id for s in stimuli] == ["lyon-2"]
    assert [(d.path, d.received) for d in defects] == [("line 1", pid)]


@pytest.mark.parametrize(
    ("value", "expected"),
    [("[" * 3000 + "]" * 3000, "200 levels"), ("9" * 5000, "at most 100 digits")],
)
def test_deep_or_giant_json_values_are_defects_at_their_line(
    tmp_path: Path, value: str, expected: str
) -> None:
    """Issue 22 row 8: RecursionError / ValueError (exit 1) before."""
    bad = json.dumps(row("bergen-1"))[:-1] + f', "x": {value}}}'
    p = write_jsonl(tmp_path / "pairs.jsonl", [row("lyon-2", LYON_A, LYON_B), bad])
    stimuli, defects = read_pairs(p, MAPPING)
    assert [s.id for s in stimuli] == ["lyon-2"]
    assert [d.path for d in defects] == ["line 2"] and expected in defects[0].expected


def test_the_bytes_given_are_parsed_not_the_file(tmp_path: Path) -> None:
    """Issue 22 row 10: a study parses (and hashes) the bytes it read once."""
    p = write_jsonl(tmp_path / "pairs.jsonl", [row("on-disk")])
    given = (json.dumps(row("given")) + "\n").encode()
    assert [s.id for s in read_pairs(p, MAPPING, data=given).stimuli] == ["given"]
