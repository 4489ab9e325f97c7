"""One judgment file read by its declared format (verdictpack.evidence._files)."""

from __future__ import annotations

import hashlib
import os
from pathlib import Path
from typing import Any

import pytest

from verdictpack._errors import ConfigError, InputError
from verdictpack.evidence._files import FORMATS, read_inside, read_judgment_file, read_study
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
    assert FORMATS == ("table", "labelstudio", "argilla", "mturk", "openai_batch", "inspect")


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


def test_read_study_hashes_what_it_parsed_and_lists_every_defect_by_file_and_line(
    tmp_path: Path,
) -> None:
    from conftest import write_tiny_study
    from verdictpack._cli import _parsed

    cfg = write_tiny_study(tmp_path / "s")
    source, _, parsed = _parsed(str(cfg))
    judges = [j.name for j in parsed.panel.judges]
    data = read_study(parsed.data, judges, parsed.panel.trials, source)
    assert [f.role for f in data.files] == ["stimuli", "judgments", "reader_audit"]
    for f in data.files:
        blob = (cfg.parent / f.path).read_bytes()
        assert (f.sha256, f.bytes) == (hashlib.sha256(blob).hexdigest(), len(blob))
    # defects in two files, the later lines first in each: listed by file (as read), then line
    folder = cfg.parent / "data"
    for name, broken in (("judgments.csv", "r000,judge-a,model,sideways,treatment,0"),
                         ("readings.csv", "a0,,treatment")):  # fmt: skip
        lines = (folder / name).read_text().splitlines()
        lines[5] = lines[2] = broken
        (folder / name).write_text("\n".join(lines) + "\n")
    with pytest.raises(ConfigError) as refused:
        read_study(parsed.data, judges, parsed.panel.trials, source)
    places = [(d.file, d.path) for d in refused.value.defects]
    assert [p for p in places if p[1] in ("line 3", "line 6")] == [
        ("data/judgments.csv", "line 3"),
        ("data/judgments.csv", "line 6"),
        ("data/readings.csv", "line 3"),
        ("data/readings.csv", "line 6"),
    ]
    assert places == sorted(places, key=lambda p: (p[0] != "data/judgments.csv", p))


# ---------------------------------------------------------------- issue 22: files and inputs

_DEEP = "[" * 5000 + "]" * 5000  # json.loads: RecursionError (exit 1) before issue 22
_HUGE = "9" * 5000  # json.loads: ValueError past Python's 4,300 digits (exit 1)


def _one_record(fmt: str, value: str) -> tuple[str, str, dict[str, Any]]:
    """A file of ``fmt`` whose single record holds ``value`` (raw JSON) in a field read past."""
    if fmt == "table":
        row = '{"root_id": "p1", "rater_id": "j", "rater_kind": "model", "order": "null_first",'
        return "t.jsonl", row + f' "choice": "treatment", "extra": {value}}}\n', {}
    if fmt == "labelstudio":
        task = (
            f'[{{"data": {{"pair_id": "p1", "tside": "left", "x": {value}}}, "annotations": []}}]'
        )
        return "ls.json", task, LABELSTUDIO
    record = f'{{"pair_id": "p1", "treatment_side": "A", "x": {value}, "responses": {{}}}}'
    return "ar.jsonl", record + "\n", ARGILLA


@pytest.mark.parametrize("fmt", ["table", "labelstudio", "argilla"])
@pytest.mark.parametrize(
    ("value", "expected"),
    [(_DEEP, "at most 200 levels of nested"), (_HUGE, "an integer of at most 100 digits")],
    ids=["deep", "huge-integer"],
)
def test_deep_nesting_and_giant_integers_refused_by_name(
    tmp_path: Path, fmt: str, value: str, expected: str
) -> None:
    """Issue 22 row 8: every JSON data file reader refuses them as a defect of the file."""
    name, text, options = _one_record(fmt, value)
    p = tmp_path / name
    p.write_text(text)
    _, defects = read_judgment_file(fmt, p, name, options)
    assert [d.file for d in defects] == [name]
    assert defects[0].path in ("line 1", "$")
    assert expected in defects[0].expected


def test_nesting_at_the_limit_is_read(tmp_path: Path) -> None:
    p = tmp_path / "t.jsonl"
    nested = "[" * 199 + "]" * 199  # 200 levels with the record's own object
    p.write_text(
        '{"root_id": "p1", "rater_id": "j", "rater_kind": "model", "order": "null_first", '
        f'"choice": "treatment", "extra": {nested}, "n": {"9" * 100}}}\n'
    )
    table, defects = read_judgment_file("table", p, "t.jsonl", {})
    assert defects == () and len(table) == 1


def test_read_inside_reads_regular_files_inside_the_folder(tmp_path: Path) -> None:
    folder = tmp_path / "study"
    (folder / "data").mkdir(parents=True)
    (folder / "data" / "pairs.jsonl").write_bytes(b"{}\n")
    (folder / "link.jsonl").symlink_to(folder / "data" / "pairs.jsonl")
    for rel in ("data/pairs.jsonl", "data/../data/pairs.jsonl", "link.jsonl"):
        got = read_inside(folder, rel)
        assert got == (folder / rel, b"{}\n"), rel


@pytest.mark.parametrize("case", ["dotdot", "symlink-out", "proc", "fifo", "directory"])
def test_read_inside_refuses_what_leaves_the_folder_or_is_no_regular_file(
    tmp_path: Path, case: str
) -> None:
    """Issue 22 row 4: ``..`` and symlinks out of the config's folder, /proc and FIFOs."""
    folder = tmp_path / "study"
    folder.mkdir()
    (tmp_path / "secret.csv").write_text("KEY=sk-123\n")
    rel = "pairs.csv"
    if case == "dotdot":
        rel = "../secret.csv"
    elif case == "symlink-out":
        (folder / rel).symlink_to(tmp_path / "secret.csv")
    elif case == "proc":
        (folder / rel).symlink_to("/proc/self/environ")
    elif case == "fifo":
        os.mkfifo(folder / rel)
    else:
        (folder / rel).mkdir()
    got = read_inside(folder, rel)
    assert isinstance(got, str)
    assert "a regular file inside the config's folder" in got
    assert "sk-123" not in got
