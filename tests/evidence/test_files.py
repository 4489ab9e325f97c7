"""One judgment file read by its declared format (verdictpack.evidence._files)."""

from __future__ import annotations

import hashlib
from pathlib import Path
from typing import Any

import pytest

from verdictpack._errors import InputError
from verdictpack.evidence._files import FORMATS, file_sha256, read_judgment_file
from verdictpack.evidence.importers import read_argilla, read_labelstudio, read_mturk

DATA = Path(__file__).parent / "data"

MTURK: dict[str, Any] = {
    "root_column": "pair_id",
    "treatment_side_column": "Input.tside",
    "side_map": {"A": "left", "B": "right"},
    "answer_column": "pref",
    "value_map": {"A": "left", "B": "right", "same": "tie"},
}
ARGILLA: dict[str, Any] = {
    "question": "preference",
    "root_key": "pair_id",
    "treatment_side_key": "treatment_side",
    "side_map": {"A": "left", "B": "right"},
    "value_map": {"A": "left", "B": "right", "Tie": "tie"},
    "include_suggestions": True,
}
LABELSTUDIO: dict[str, Any] = {
    "root_field": "pair_id",
    "treatment_side_field": "tside",
    "control": "pref",
}


def _rows(table: Any) -> list[tuple[Any, ...]]:
    return [(j.root_id, j.rater_id, j.rater_kind, j.order, j.choice, j.origin) for j in table]


def test_formats() -> None:
    assert FORMATS == ("table", "labelstudio", "argilla", "mturk")


def test_table_format_with_a_mapping(tmp_path: Path) -> None:
    p = tmp_path / "mine.csv"
    p.write_text(
        "pair,who,kind,ord,pick\n"
        "r1,ja,model,treatment_first,treatment\n"
        "r1,h1,human,unknown,sideways\n"
    )
    mapping = {"root_id": "pair", "rater_id": "who", "rater_kind": "kind", "order": "ord"}
    mapping["choice"] = "pick"
    table, (d,) = read_judgment_file("table", p, "data/mine.csv", {"mapping": mapping})
    assert [(j.root_id, j.rater_id, j.choice) for j in table] == [("r1", "ja", "treatment")]
    assert (d.file, d.path, d.received) == ("data/mine.csv", "line 3", "sideways")
    assert table.origin(0) is not None and table.origin(0).where == "line 2"  # type: ignore[union-attr]


@pytest.mark.parametrize(
    ("fmt", "name", "options", "reader"),
    [
        ("mturk", "mturk_batch.csv", MTURK, read_mturk),
        ("argilla", "argilla_records.json", ARGILLA, read_argilla),
        ("labelstudio", "labelstudio_pairwise.json", LABELSTUDIO, read_labelstudio),
        ("mturk", "mturk_bad.csv", MTURK, read_mturk),
        ("argilla", "argilla_bad.json", ARGILLA, read_argilla),
    ],
)
def test_importer_formats_equal_the_importers(
    fmt: str, name: str, options: dict[str, Any], reader: Any
) -> None:
    table, defects = read_judgment_file(fmt, DATA / name, name, options)
    direct = reader(DATA / name, display=name, **options)
    assert _rows(table) == [
        (j.root_id, j.rater_id, j.rater_kind, j.order, j.choice, j.origin) for j in direct.judgments
    ]
    assert defects == tuple(direct.defects)
    assert len(table) > 0 or defects


def test_unknown_format() -> None:
    with pytest.raises(InputError) as err:
        read_judgment_file("xlsx", DATA / "mturk_batch.csv", "x", {})
    assert err.value.parameter == "format"


def test_options_the_importer_refuses_raise() -> None:
    with pytest.raises((InputError, TypeError)):
        read_judgment_file("mturk", DATA / "mturk_batch.csv", "x", {"root_column": "pair_id"})
    with pytest.raises(InputError):
        read_judgment_file(
            "mturk", DATA / "mturk_batch.csv", "x", {**MTURK, "treatment_side": "left"}
        )


def test_sha256_of_the_bytes(tmp_path: Path) -> None:
    p = tmp_path / "big.bin"
    blob = bytes(range(256)) * 9000  # crosses the 1 MiB chunk boundary
    p.write_bytes(blob)
    assert file_sha256(p) == hashlib.sha256(blob).hexdigest()
    e = tmp_path / "empty"
    e.write_bytes(b"")
    assert file_sha256(e) == hashlib.sha256(b"").hexdigest()
