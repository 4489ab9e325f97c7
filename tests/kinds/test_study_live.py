"""A study with live judges, end to end against the OpenAI-compatible test server on 127.0.0.1:
the verdict, resume from the ledger without a second call, determinism across concurrency, the
budget stop, the folder contract and the API key kept out of every file."""

from __future__ import annotations

import json
import os
import sqlite3
from pathlib import Path

import pytest

from verdictpack._cli import main

pytest.importorskip("httpx")

from live_helpers import Faults, live_study, serve, server_config

KEY = "sk-test-0123456789abcdef-never-stored"


def _tree_bytes(folder: Path) -> bytes:
    return b"".join(p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file())


def test_live_study_reaches_its_verdict_and_resumes_without_a_second_call(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    probe, _ = live_study(tmp_path / "probe", "http://127.0.0.1:9/v1")
    with serve(server_config(probe)) as url:
        study, _ = live_study(tmp_path / "run", url)
        out = tmp_path / "out"
        assert main([str(study), "--out", str(out), "--quiet"]) == 0
        first = url.counts()["requests"]
        assert first > 0
        verdict = json.loads((out / "report" / "verdict.json").read_text())
        assert verdict["registered"]["verdict"] in (
            "EFFECT_SUPPORTED",
            "INCONCLUSIVE",
        )
        report = (out / "report").iterdir()
        assert {p.name for p in report} >= {"judgments.csv", "evidence.jsonl", "report.md"}
        before = (out / "report" / "results.json").read_bytes()
        # rerun: every request is answered from the ledger, the same outputs
        assert main([str(study), "--out", str(out), "--quiet"]) == 0
        assert url.counts()["requests"] == first
        assert (out / "report" / "results.json").read_bytes() == before
        err = capsys.readouterr().err
        assert "0 calls sent" in err
        # status: a few lines from the ledger
        assert main(["status", str(out)]) == 0
        status = capsys.readouterr().out
        assert "roots committed" in status and "h-interval" in status


def test_same_commits_and_verdict_at_concurrency_1_and_32(tmp_path: Path) -> None:
    probe, _ = live_study(tmp_path / "probe", "http://127.0.0.1:9/v1")
    faults = Faults(rate_limit=0.1, server_error=0.1, drop=0.05, malformed=0.05, max_delay=0.01)
    results = []
    with serve(server_config(probe, faults=faults)) as url:
        for c in (1, 32):
            study, _ = live_study(tmp_path / f"c{c}", url, concurrency=c)
            out = tmp_path / f"out{c}"
            assert main([str(study), "--out", str(out), "--quiet"]) == 0
            results.append(
                (
                    (out / "report" / "judgments.csv").read_bytes(),
                    (out / "report" / "evidence.jsonl").read_bytes(),
                    json.loads((out / "report" / "verdict.json").read_text()),
                )
            )
    assert results[0] == results[1]


def test_budget_stops_inconclusive_and_keeps_what_was_paid(tmp_path: Path) -> None:
    probe, _ = live_study(tmp_path / "probe", "http://127.0.0.1:9/v1")
    with serve(server_config(probe)) as url:
        study, config = live_study(tmp_path / "run", url, concurrency=2)
        config["budget"] = {"judges": 0.0305}  # about 30 calls of 0.001
        study.write_text(json.dumps(config))
        out = tmp_path / "out"
        assert main([str(study), "--out", str(out), "--quiet"]) == 0
        sent = url.counts()["requests"]
        assert 0 < sent <= 31
        verdict = json.loads((out / "report" / "verdict.json").read_text())
        assert verdict["registered"]["verdict"] == "INCONCLUSIVE"
        assert "budget" in verdict["stop_reason"]
        # raising the budget resumes the same study (the budget is not in the manifest)
        config["budget"] = {"judges": 10.0}
        study.write_text(json.dumps(config))
        assert main([str(study), "--out", str(out), "--quiet"]) == 0
        assert url.counts()["requests"] > sent


def test_folder_contract_and_the_key_stays_out(tmp_path: Path, monkeypatch) -> None:
    probe, _ = live_study(tmp_path / "probe", "http://127.0.0.1:9/v1")
    monkeypatch.setenv("VP_TEST_KEY", KEY)
    with serve(server_config(probe, api_key=KEY, echo_key_in_errors=True)) as url:
        study, config = live_study(tmp_path / "run", url, api_key_env="VP_TEST_KEY")
        out = tmp_path / "out"
        assert main([str(study), "--out", str(out), "--quiet"]) == 0
        assert KEY.encode() not in _tree_bytes(out)
        # --force never replaces a live folder; a changed prompt is another study
        assert main([str(study), "--out", str(out), "--force", "--quiet"]) == 2
        for judge in config["panel"]["judges"]:
            judge["endpoint"]["prompt"] = {"system": "Judge carefully."}
        study.write_text(json.dumps(config))
        assert main([str(study), "--out", str(out), "--quiet"]) == 2
        # a wrong key: 401, stopped with the judge, status and reason, the key never shown
        monkeypatch.setenv("VP_TEST_KEY", "sk-wrong-key-also-secret")
        fresh = tmp_path / "out2"
        code = main([str(study), "--out", str(fresh), "--quiet"])
        assert code == 2
    assert KEY.encode() not in _tree_bytes(fresh)
    assert b"sk-wrong-key-also-secret" not in _tree_bytes(fresh)
    with sqlite3.connect(out / "ledger.sqlite") as db:
        assert db.execute("SELECT count(*) FROM answers").fetchone()[0] > 0


def test_missing_key_variable_is_refused_by_name(tmp_path: Path, capsys) -> None:
    study, _ = live_study(tmp_path / "run", "http://127.0.0.1:9/v1", api_key_env="VP_NOT_SET_X")
    os.environ.pop("VP_NOT_SET_X", None)
    assert main([str(study), "--out", str(tmp_path / "out"), "--quiet"]) == 2
    assert "VP_NOT_SET_X" in capsys.readouterr().err


def test_the_live_progress_goes_through_the_runs_hook(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """The live loop tells how far it is through the run's progress hook (on a terminal, the
    CLI's line), never by writing to stderr itself."""
    import io

    from verdictpack import _cli

    class Eager(_cli.ProgressLine):
        def __init__(self, out: io.StringIO, **_: object) -> None:
            super().__init__(out, delay=0.0, interval=0.0)

    monkeypatch.setattr(_cli, "ProgressLine", Eager)
    monkeypatch.setenv("COLUMNS", "250")  # the whole line, never cut to a terminal's width
    probe, _ = live_study(tmp_path / "probe", "http://127.0.0.1:9/v1")
    with serve(server_config(probe)) as url:
        study, _ = live_study(tmp_path / "run", url, roots=12, cap=12)
        line = io.StringIO()
        _cli.run_config(str(study), str(tmp_path / "out"), progress=line)
    assert "\rverdictpack: live study (h-interval [" in line.getvalue(), line.getvalue()
    assert "from the ledger; spend 0.0" in line.getvalue()
    assert "): roots committed [" in line.getvalue()
    assert "\r" not in capsys.readouterr().err
