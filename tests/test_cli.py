"""The CLI contract: exit codes, every defect on its own line, nothing half-written."""

from __future__ import annotations

import copy
import json
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import EXAMPLES, load_example, write_tiny_study
from verdictpack._cli import main
from verdictpack.render import html_available

SIZING = EXAMPLES / "sizing_summarization.json"


def test_report_to_stdout(capsys) -> None:
    assert main([str(SIZING)]) == 0
    out = capsys.readouterr().out
    assert out.startswith("# verdictpack sizing")
    assert "| 34 pairs |" in out


def test_out_writes_report_results_and_provenance(tmp_path: Path) -> None:
    out = tmp_path / "run"
    assert main([str(SIZING), "--out", str(out)]) == 0
    assert sorted(p.name for p in out.iterdir()) == [
        ".verdictpack-output.json",
        "provenance.json",
        *(["report.html"] if html_available() else []),
        "report.md",
        "results.json",
    ]
    results = json.loads((out / "results.json").read_text())
    assert results["kind"] == "sizing"
    prov = json.loads((out / "provenance.json").read_text())
    assert prov["config_name"] == "sizing_summarization.json"
    assert str(tmp_path) not in (out / "provenance.json").read_text()
    assert set(prov["wall_clock"]) >= {"elapsed_seconds", "started_utc"}
    assert len(prov["seed_commitment"]) == 64


def test_two_runs_are_byte_identical_apart_from_wall_clock(tmp_path: Path) -> None:
    a, b = tmp_path / "a", tmp_path / "b"
    assert main([str(SIZING), "--out", str(a)]) == 0
    assert main([str(SIZING), "--out", str(b)]) == 0
    for name in ("report.md", "results.json"):
        assert (a / name).read_bytes() == (b / name).read_bytes()
    pa = json.loads((a / "provenance.json").read_text())
    pb = json.loads((b / "provenance.json").read_text())
    pa.pop("wall_clock")
    pb.pop("wall_clock")
    assert pa == pb


def test_refused_config_exit_2_every_defect_and_nothing_written(tmp_path, capsys) -> None:
    data = copy.deepcopy(load_example("sizing_summarization.json"))
    del data["construct"]["thresholds"]["h"]
    data["construct"]["e_boundary"] = 500
    data["construct"]["human_baseline_rate"] = 1.2
    data["construct"]["treshold"] = 0.3
    cfg = tmp_path / "broken.json"
    cfg.write_text(json.dumps(data))
    out = tmp_path / "out"
    assert main([str(cfg), "--out", str(out)]) == 2
    err = capsys.readouterr().err
    lines = [ln for ln in err.splitlines() if ln.startswith(str(cfg))]
    assert len(lines) == 4
    assert all("received" in ln and "expected" in ln for ln in lines)
    assert not out.exists()
    assert [p.name for p in tmp_path.iterdir()] == ["broken.json"]


@pytest.mark.parametrize(
    "content",
    ['{"kind": "sizing",', "[]", '{"kind": "nope"}', '{"seed": 1}', "\xff\xfe"],
)
def test_bad_files_are_refused_without_traceback(tmp_path, capsys, content) -> None:
    cfg = tmp_path / "c.json"
    cfg.write_bytes(content.encode("latin-1"))
    assert main([str(cfg)]) == 2
    err = capsys.readouterr().err
    assert "Traceback" not in err and str(cfg) in err


def test_missing_file_and_directory(tmp_path, capsys) -> None:
    assert main([str(tmp_path / "absent.json")]) == 2
    assert main([str(tmp_path)]) == 2
    err = capsys.readouterr().err
    assert "no such file" in err and "directory" in err


def test_non_empty_out_refused_unless_force(tmp_path, capsys) -> None:
    out = tmp_path / "out"
    out.mkdir()
    (out / "keep.txt").write_text("mine")
    assert main([str(SIZING), "--out", str(out)]) == 2
    assert "--force" in capsys.readouterr().err
    assert (out / "keep.txt").read_text() == "mine"
    # a folder verdictpack did not write is refused even with --force (tests/test_output.py)
    assert main([str(SIZING), "--out", str(out), "--force"]) == 2
    assert [p.name for p in out.iterdir()] == ["keep.txt"]
    (out / "keep.txt").unlink()
    assert main([str(SIZING), "--out", str(out)]) == 0  # an empty folder is fine
    assert main([str(SIZING), "--out", str(out)]) == 2  # now it holds an earlier run
    assert main([str(SIZING), "--out", str(out), "--force"]) == 0  # which --force replaces
    assert (out / "report.md").exists()
    assert [p.name for p in tmp_path.iterdir()] == ["out"]


def test_usage_errors(capsys) -> None:
    assert main([]) == 2
    assert main(["schema", "nope"]) == 2
    assert main([str(SIZING), "--workers", "0"]) == 2
    assert main([str(SIZING), "--scheduler", "tcp://127.0.0.1:9"]) == 2  # ignored otherwise
    assert "expected with --executor dask" in capsys.readouterr().err
    assert main([str(SIZING), "--executor", "dask"]) == 2
    assert "expected --scheduler ADDRESS" in capsys.readouterr().err
    assert "Traceback" not in capsys.readouterr().err


def test_a_word_before_the_config_is_named_neither_command_nor_file(
    tmp_path: Path, monkeypatch, capsys
) -> None:
    monkeypatch.chdir(tmp_path)
    assert main(["run", str(SIZING), "--out", "out"]) == 2
    err = capsys.readouterr().err
    assert "'run' is neither a command (schema, validate" in err
    assert "verdictpack CONFIG --out FOLDER" in err and not (tmp_path / "out").exists()
    # a config file whose name is a plain word still runs
    (tmp_path / "run").write_bytes(SIZING.read_bytes())
    assert main(["run", "--out", "out", "--quiet"]) == 0


def test_schema_prints_json_schema(capsys) -> None:
    assert main(["schema", "sizing"]) == 0
    schema = json.loads(capsys.readouterr().out)
    assert schema["additionalProperties"] is False
    assert "construct" in schema["properties"]


def test_python_dash_m_and_console_script(tmp_path) -> None:
    proc = subprocess.run(
        [sys.executable, "-m", "verdictpack", "schema", "sizing"],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        check=False,
    )
    assert proc.returncode == 0 and json.loads(proc.stdout)


def test_reads_only_the_given_path(tmp_path, monkeypatch) -> None:
    """A same-named decoy in the working directory is never read."""
    real = tmp_path / "real"
    real.mkdir()
    (real / "sizing_summarization.json").write_text(SIZING.read_text())
    decoy = copy.deepcopy(load_example("sizing_summarization.json"))
    decoy["arms"][0]["dz"] = 0.9
    work = tmp_path / "work"
    work.mkdir()
    (work / "sizing_summarization.json").write_text(json.dumps(decoy))
    monkeypatch.chdir(work)
    monkeypatch.setenv("VERDICTPACK_SEED", "1")
    files = __import__("verdictpack._cli", fromlist=["run_config"]).run_config(
        str(real / "sizing_summarization.json")
    )
    assert "| 34 pairs |" in files["report.md"]


def test_validate_a_study_prints_a_summary_and_writes_nothing(tmp_path: Path, capsys) -> None:
    study = write_tiny_study(tmp_path / "study")
    before = sorted(p.name for p in study.parent.rglob("*"))
    assert main(["validate", str(study)]) == 0
    out = capsys.readouterr().out
    assert "valid (no defects)" in out
    assert "pairs: 40; admitted by the gates 40, refused 0" in out
    assert "judgments: 160 model, 80 human" in out
    assert sorted(p.name for p in study.parent.rglob("*")) == before


def test_validate_names_every_data_defect_with_file_and_line(tmp_path: Path, capsys) -> None:
    study = write_tiny_study(tmp_path / "study")
    judgments = study.parent / "data" / "judgments.csv"
    lines = judgments.read_text().splitlines()
    lines[1] = lines[1].replace("treatment_first", "sideways")
    lines[2] = lines[2].replace("judge-a", "judge-z")
    lines.append("r999,judge-a,model,null_first,treatment")
    judgments.write_text("\n".join(lines) + "\n")
    assert main(["validate", str(study)]) == 2
    err = capsys.readouterr().err
    assert 'data/judgments.csv: line 2: received "sideways"' in err
    assert (
        'data/judgments.csv: line 3: received "judge-z"; expected a judge of the registered' in err
    )
    assert f'data/judgments.csv: line {len(lines)}: received "r999"; expected a stimulus id' in err
    assert "Traceback" not in err


def test_validate_other_kinds_and_usage(capsys) -> None:
    assert main(["validate", str(SIZING)]) == 0
    assert "a valid sizing config" in capsys.readouterr().out
    assert main(["validate"]) == 2
    assert "expected one config file" in capsys.readouterr().err


def test_version_and_the_one_line_after_a_run(tmp_path: Path, capsys) -> None:
    from importlib import metadata

    assert main(["--version"]) == 0
    assert capsys.readouterr().out == f"verdictpack {metadata.version('verdictpack')}\n"
    out = tmp_path / "run"
    # progress off: a slow machine's run of over two seconds would add plain progress lines
    assert main([str(SIZING), "--out", str(out), "--progress", "off"]) == 0
    assert capsys.readouterr().err == f"verdictpack: sizing: done; files in {out}\n"
    assert main([str(SIZING), "--out", str(out), "--force", "--quiet"]) == 0
    assert capsys.readouterr().err == ""


@pytest.mark.parametrize(
    "command", ["schema", "validate", "status", "audit", "seal-test", "reproduce"]
)
def test_every_command_has_help(command: str, capsys) -> None:
    try:
        code = main([command, "--help"])
    except SystemExit as exc:  # argparse's own --help
        code = int(exc.code or 0)
    assert code == 0
    assert capsys.readouterr().out.startswith(f"usage: verdictpack {command}")


def test_the_module_entry_point_exits_with_main_s_code(tmp_path: Path) -> None:
    bad = tmp_path / "bad.json"
    bad.write_text('{"kind": "sizing", "kind": "sizing"}')
    ok = subprocess.run(
        [sys.executable, "-m", "verdictpack", "--version"], capture_output=True, text=True
    )
    assert ok.returncode == 0 and ok.stdout.startswith("verdictpack ")
    refused = subprocess.run(
        [sys.executable, "-m", "verdictpack", str(bad)], capture_output=True, text=True
    )
    assert refused.returncode == 2
    assert "bad.json" in refused.stderr and "Traceback" not in refused.stderr
