"""A data file that is not UTF-8 is refused at the line and column of its first bad byte, with the
byte and what the file most likely is (a spreadsheet's UTF-16 or Windows-1252 export), by every
reader: pairs, judgment tables, readings, the registered order, and each importer. Exit code 2,
no traceback, nothing written."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from verdictpack._cli import main
from verdictpack._errors import not_utf8

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"

WINDOWS = "the bytes read as Windows-1252 or Latin-1 text"


def _study(tmp_path: Path, example: str) -> tuple[Path, dict]:
    cfg = json.loads((EXAMPLES / f"{example}.json").read_text())
    for folder in {example, "study_summarization"}:
        if (EXAMPLES / folder).is_dir():
            shutil.copytree(EXAMPLES / folder, tmp_path / folder, dirs_exist_ok=True)
    return tmp_path / "study.json", cfg


def _break_line(path: Path, line: int, data: bytes = b"\xe9") -> None:
    """Put ``data`` at the start of 1-based ``line``."""
    lines = path.read_bytes().split(b"\n")
    lines[line - 1] = data + lines[line - 1]
    path.write_bytes(b"\n".join(lines))


def _refused(config: Path, cfg: dict, tmp_path: Path, capsys) -> str:
    config.write_text(json.dumps(cfg))
    out = tmp_path / "out"
    assert main([str(config), "--out", str(out), "--quiet"]) == 2
    err = capsys.readouterr().err
    assert "Traceback" not in err
    assert not out.exists()
    return err


@pytest.mark.parametrize(
    ("example", "file", "line"),
    [
        ("study_summarization", "study_summarization/pairs.jsonl", 7),
        ("study_summarization", "study_summarization/model_judgments.csv", 3),
        ("study_summarization", "study_summarization/human_judgments.csv", 12),
        ("study_summarization", "study_summarization/readings.csv", 5),
        ("study_mturk", "study_mturk/batch_results.csv", 2),
        ("study_argilla", "study_argilla/argilla_records.json", 4),
        ("study_labelstudio", "study_labelstudio/labelstudio_export.json", 9),
    ],
)
def test_a_windows_1252_byte_is_named_at_its_line_by_every_reader(
    tmp_path: Path, capsys, example: str, file: str, line: int
) -> None:
    config, cfg = _study(tmp_path, example)
    _break_line(tmp_path / file, line)
    err = _refused(config, cfg, tmp_path, capsys)
    assert f'{file}: line {line}: received "byte 0xE9 at column 1"; expected UTF-8 text' in err
    assert WINDOWS in err


def test_the_registered_order_file_names_its_line(tmp_path: Path, capsys) -> None:
    config, cfg = _study(tmp_path, "study_summarization")
    ids = [json.loads(x)["id"] for x in (tmp_path / "study_summarization/pairs.jsonl").open()]
    # the bad byte in the middle of an id, after a UTF-8 letter (columns count characters)
    head = "".join(f"{i}\n" for i in ids[:4]).encode()
    (tmp_path / "order.txt").write_bytes(head + "éro".encode() + b"\x96t\n")
    cfg["data"]["root_order"] = "order.txt"
    err = _refused(config, cfg, tmp_path, capsys)
    assert 'order.txt: line 5: received "byte 0x96 at column 4"' in err
    assert WINDOWS in err


def test_a_utf16_export_is_named_as_such(tmp_path: Path, capsys) -> None:
    config, cfg = _study(tmp_path, "study_summarization")
    table = tmp_path / "study_summarization/model_judgments.csv"
    table.write_bytes(table.read_text().encode("utf-16"))
    err = _refused(config, cfg, tmp_path, capsys)
    assert 'model_judgments.csv: line 1: received "byte 0xFF at column 1"' in err
    assert "this file is UTF-16" in err and WINDOWS not in err


@pytest.mark.parametrize(
    ("data", "where", "received", "hint"),
    [
        (b"ok\nfine\n\xe9t\xe9\n", "line 3", "byte 0xE9 at column 1", WINDOWS),
        (b"\xef\xbb\xbfa,b\nc,\xe2\x82\xacd\xff\n", "line 2", "byte 0xFF at column 5", WINDOWS),
        # 0x81 is a hole in Windows-1252: no guess offered
        (b"a\n\x81b\n", "line 2", "byte 0x81 at column 1", None),
        (b"\xfe\xff\x00a", "line 1", "byte 0xFE at column 1", "UTF-16"),
    ],
)
def test_not_utf8_places_the_first_bad_byte(
    data: bytes, where: str, received: str, hint: str | None
) -> None:
    defect = not_utf8("f.csv", data)
    assert (defect.file, defect.path, defect.received) == ("f.csv", where, received)
    assert defect.expected.startswith("UTF-8 text")
    assert (hint in defect.expected) if hint else defect.expected == "UTF-8 text"
