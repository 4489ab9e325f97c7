"""Double readings of the reader audit (verdictpack.evidence._readings)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from verdictpack.evidence._readings import Readings, read_readings


def _csv(tmp_path: Path, lines: list[str], name: str = "r.csv") -> Path:
    p = tmp_path / name
    p.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return p


GOOD = [
    "root_id,reader_id,category",
    "a1,x,treatment",
    "a2,x,null_partner",
    "a1,y,treatment",
    "a2,y,treatment",
]


def test_good_file(tmp_path: Path) -> None:
    r, defects = read_readings(_csv(tmp_path, GOOD))
    assert defects == ()
    assert len(r) == 4
    assert r.root == ("a1", "a2", "a1", "a2")
    assert r.reader == ("x", "x", "y", "y")
    assert r.category == ("treatment", "null_partner", "treatment", "treatment")
    assert r.lines == (2, 3, 4, 5)
    assert r.to_csv_bytes() == ("\n".join(GOOD) + "\n").encode()


def test_three_readings_of_a_root(tmp_path: Path) -> None:
    r, defects = read_readings(_csv(tmp_path, [*GOOD, "a1,z,treatment"]), display="audit.csv")
    assert [(d.file, d.path, d.received) for d in defects] == [
        ("audit.csv", "line 2", "a1"),
        ("audit.csv", "line 4", "a1"),
        ("audit.csv", "line 6", "a1"),
    ]
    assert all("(3)" in d.expected for d in defects)
    assert r.root == ("a2", "a2")  # the root read three times is left out, the rest kept


def test_one_reading_of_a_root(tmp_path: Path) -> None:
    _, (d,) = read_readings(_csv(tmp_path, [*GOOD, "a3,x,treatment"]))
    assert (d.path, d.received) == ("line 6", "a3") and "(1)" in d.expected


def test_same_reader_twice(tmp_path: Path) -> None:
    lines = [*GOOD, "a3,x,treatment", "a3,x,null_partner"]
    r, (d,) = read_readings(_csv(tmp_path, lines))
    assert (d.path, d.received) == ("line 7", "x")
    assert "line 6 has the same reader" in d.expected
    assert "a3" not in r.root


def test_empty_category(tmp_path: Path) -> None:
    lines = [*GOOD, "a3,x,treatment", "a3,y,  "]
    _, defects = read_readings(_csv(tmp_path, lines))
    paths = [(d.path, d.expected) for d in defects]
    assert ("line 7", "a non-empty 'category' (category)") in paths
    # the root is then read once only: its other line is named too
    assert any(p == "line 6" and "two readings" in e for p, e in paths)
    assert [d.path for d in defects] == sorted((d.path for d in defects), key=lambda s: int(s[5:]))


def test_mapping_names_the_columns(tmp_path: Path) -> None:
    lines = ["item,annotator,label,extra", "a1,x,c0,1", "a1,y,c1,2"]
    r, defects = read_readings(
        _csv(tmp_path, lines), {"root_id": "item", "reader_id": "annotator", "category": "label"}
    )
    assert defects == ()
    assert r.category == ("c0", "c1")
    _, defects = read_readings(_csv(tmp_path, lines))
    assert defects and all("non-empty 'root_id'" in d.expected for d in defects)


def test_jsonl(tmp_path: Path) -> None:
    recs = [
        {"root_id": "a1", "reader_id": "x", "category": "t"},
        {"root_id": "a1", "reader_id": 7, "category": "n"},
    ]
    p = tmp_path / "r.jsonl"
    p.write_text("\n".join(json.dumps(x) for x in recs) + "\n\nnot json\n[1]\n")
    r, defects = read_readings(p)
    assert r.reader == ("x", "7")
    assert [d.path for d in defects] == ["line 4", "line 5"]


def test_ragged_csv_row(tmp_path: Path) -> None:
    _, defects = read_readings(_csv(tmp_path, [*GOOD, "a3,x"]))
    assert [(d.path, d.received) for d in defects] == [("line 6", 2)]


@pytest.mark.parametrize("suffix", [".txt", ".json"])
def test_unknown_suffix(tmp_path: Path, suffix: str) -> None:
    r, (d,) = read_readings(_csv(tmp_path, GOOD, "r" + suffix))
    assert len(r) == 0 and d.path == "(file)"


def test_unreadable_and_empty(tmp_path: Path) -> None:
    _, (d,) = read_readings(tmp_path / "absent.csv")
    assert d.path == "(file)"
    p = tmp_path / "empty.csv"
    p.write_text("")
    _, (d,) = read_readings(p)
    assert (d.path, d.received) == ("line 1", "(empty file)")


def test_empty_readings_write_a_header() -> None:
    assert Readings((), (), (), ()).to_csv_bytes() == b"root_id,reader_id,category\n"


# ---------------------------------------------------------------- issue 22


def test_a_column_named_twice_is_refused(tmp_path: Path) -> None:
    """Issue 22 row 15: the last of the two columns was read silently."""
    lines = ["root_id,reader_id,category,category", *(f"{r},x" for r in GOOD[1:])]
    r, defects = read_readings(_csv(tmp_path, lines))
    assert len(r) == 0
    assert [(d.path, d.received) for d in defects] == [("line 1", ["category"])]
    assert "each column named once" in defects[0].expected


@pytest.mark.parametrize("root", [" a1", "a1 ", "a\t1", "a1\x00"])
def test_a_root_id_with_spaces_or_control_characters_is_refused(tmp_path: Path, root: str) -> None:
    """Issue 22 row 6: such ids cannot be written one a line and read back as themselves."""
    p = tmp_path / "r.jsonl"
    rows = [(root, "x"), (root, "y"), ("a2", "x"), ("a2", "y")]
    p.write_text(
        "".join(
            json.dumps({"root_id": r, "reader_id": w, "category": "treatment"}) + "\n"
            for r, w in rows
        )
    )
    r, defects = read_readings(p)
    assert r.root == ("a2", "a2")
    assert [(d.path, d.received) for d in defects] == [("line 1", root), ("line 2", root)]


@pytest.mark.parametrize(
    ("value", "expected"),
    [("[" * 3000 + "]" * 3000, "200 levels"), ("9" * 5000, "at most 100 digits")],
)
def test_deep_or_giant_jsonl_values_are_defects(tmp_path: Path, value: str, expected: str) -> None:
    """Issue 22 row 8: RecursionError / ValueError (exit 1) before."""
    p = tmp_path / "r.jsonl"
    p.write_text(f'{{"root_id": "a1", "reader_id": "x", "category": "t", "x": {value}}}\n')
    _, defects = read_readings(p)
    assert defects[0].path == "line 1" and expected in defects[0].expected
