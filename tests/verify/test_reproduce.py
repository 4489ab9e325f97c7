"""Reproduction: the comparison ignores only provenance.json's wall_clock; differences are named.

The full reproduction is not run here (scripts/reproduce.sh does it); one small end-to-end pass
runs the sizing example with the console script and compares it with outputs written in-process.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from conftest import EXAMPLES, ROOT
from verdictpack._cli import main, run_config
from verdictpack.verify._reproduce import compare_outputs, reproduce
from verdictpack.verify._seal import compare_folders, same_output


@pytest.fixture(scope="module")
def sizing_run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("reproduce") / "sizing_summarization"
    run_config(str(EXAMPLES / "sizing_summarization.json"), str(out))
    return out


def _copy(src: Path, dest: Path) -> Path:
    shutil.copytree(src, dest)
    return dest


def _set_wall_clock(path: Path, value: object) -> None:
    data = json.loads(path.read_text())
    data["wall_clock"] = value
    path.write_text(json.dumps(data, indent=2, ensure_ascii=False) + "\n")


def test_identical_folders_and_a_different_wall_clock_compare_equal(
    sizing_run: Path, tmp_path: Path
) -> None:
    other = _copy(sizing_run, tmp_path / "other")
    assert compare_folders(sizing_run, other) == []
    _set_wall_clock(
        other / "provenance.json",
        {"started_utc": "1999-01-01T00:00:00+00:00", "elapsed_seconds": 123.4},
    )
    assert compare_folders(sizing_run, other) == []


def test_a_planted_byte_difference_is_reported_with_the_file_name(
    sizing_run: Path, tmp_path: Path
) -> None:
    other = _copy(sizing_run, tmp_path / "other")
    text = (other / "report.md").read_bytes()
    at = text.index(b"34 pairs")
    (other / "report.md").write_bytes(text[:at] + b"32" + text[at + 2 :])
    diffs = compare_folders(sizing_run, other)
    assert len(diffs) == 1 and diffs[0].startswith("report.md: bytes differ from offset")


def test_provenance_differs_outside_wall_clock_is_reported(
    sizing_run: Path, tmp_path: Path
) -> None:
    other = _copy(sizing_run, tmp_path / "other")
    data = json.loads((other / "provenance.json").read_text())
    data["seed"] += 1
    (other / "provenance.json").write_text(json.dumps(data, indent=2) + "\n")
    diffs = compare_folders(sizing_run, other)
    assert diffs == [f"provenance.json: field 'seed' differs: {data['seed'] - 1} vs {data['seed']}"]
    # whitespace outside wall_clock is a byte difference too
    raw = (sizing_run / "provenance.json").read_bytes().replace(b'"seed": ', b'"seed":  ')
    assert same_output("provenance.json", (sizing_run / "provenance.json").read_bytes(), raw)


def test_missing_extra_and_uncommitted_folders_are_reported(
    sizing_run: Path, tmp_path: Path
) -> None:
    regenerated = tmp_path / "regenerated"
    committed = tmp_path / "committed"
    _copy(sizing_run, regenerated / "sizing")
    _copy(sizing_run, committed / "sizing")
    (committed / "sizing" / "report.md").unlink()
    (committed / "sizing" / "extra.txt").write_text("x")
    diffs = compare_outputs(regenerated, committed, ["sizing", "engine"])
    assert "sizing/extra.txt: only in " + str(committed / "sizing") in diffs
    assert "sizing/report.md: only in " + str(regenerated / "sizing") in diffs
    assert any(d.startswith("engine: no committed outputs") for d in diffs)


def test_small_reproduction_end_to_end(sizing_run: Path, tmp_path: Path) -> None:
    examples = tmp_path / "examples"
    examples.mkdir()
    shutil.copy(EXAMPLES / "sizing_summarization.json", examples)
    _copy(sizing_run, examples / "outputs" / "sizing_summarization")  # written in-process
    lines: list[str] = []
    result = reproduce(tmp_path / "out", examples=examples, run_seal=False, echo=lines.append)
    assert result.ok, lines
    assert lines[-1].startswith("REPRODUCE PASS") and "0 difference(s)" in lines[-1]
    # a planted byte in the committed outputs is named, and the exit is a failure
    report = examples / "outputs" / "sizing_summarization" / "results.json"
    report.write_bytes(report.read_bytes().replace(b'"seed": 20261130', b'"seed": 20261131'))
    result = reproduce(tmp_path / "out", examples=examples, run_seal=False, force=True)
    assert not result.ok
    assert result.differences[0].startswith("sizing_summarization/results.json: bytes differ")


def test_reproduce_refuses_bad_arguments(tmp_path: Path) -> None:
    assert main(["reproduce"]) == 2  # --out is required unless --update
    busy = tmp_path / "busy"
    busy.mkdir()
    (busy / "x").write_text("x")
    assert main(["reproduce", "--out", str(busy), "--examples", str(EXAMPLES)]) == 2
    assert (
        main(["reproduce", "--out", str(tmp_path / "o"), "--examples", str(tmp_path / "none")]) == 2
    )


def test_reproduce_script_is_a_two_line_wrapper() -> None:
    script = ROOT / "scripts" / "reproduce.sh"
    lines = script.read_text().splitlines()
    assert lines == [
        "#!/usr/bin/env bash",
        'exec verdictpack reproduce --out "${1:-reproduce-out}"',
    ]
    assert script.stat().st_mode & 0o111
