"""A study with live judges, end to end against the OpenAI-compatible test server on 127.0.0.1:
the verdict, resume from the ledger without a second call, determinism across concurrency, the
budget stop, the folder contract and the API key kept out of every file."""

from __future__ import annotations

import json
import os
import sqlite3
from pathlib import Path
from typing import Any

import pytest

from conftest import load_example, write_tiny_study
from verdictpack._cli import main

pytest.importorskip("httpx")

import sys  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "evidence" / "live"))
from oai_server import Faults, ServerConfig, Sheet, serve  # noqa: E402

KEY = "sk-test-0123456789abcdef-never-stored"


def live_study(tmp_path: Path, base_url: str, **endpoint: Any) -> tuple[Path, dict[str, Any]]:
    """The tiny study with its two judges asked live (humans and readings from files)."""
    study = write_tiny_study(tmp_path / "study")
    config = json.loads(study.read_text())
    # the judges' file rows go: they are asked live now
    judgments = study.parent / "data" / "judgments.csv"
    rows = judgments.read_text().splitlines()
    judgments.write_text("\n".join([rows[0], *[r for r in rows[1:] if ",human," in r]]) + "\n")
    for judge in config["panel"]["judges"]:
        judge["endpoint"] = {
            "base_url": base_url,
            "model": judge["name"],
            "profile": "openai",
            "concurrency": 4,
            "price": {"per_call": 0.001},
            "retries": {"base_delay_seconds": 0.005, "max_delay_seconds": 0.05},
            **endpoint,
        }
    config["sequential"]["cap_roots"] = 40
    study.write_text(json.dumps(config, indent=2))
    return study, config


def items(study: Path) -> dict[str, bool]:
    out = {}
    for line in (study.parent / "data" / "pairs.jsonl").read_text().splitlines():
        rec = json.loads(line)
        out[rec["treatment"]] = True
        out[rec["null_partner"]] = False
    return out


def server_config(study: Path, **kw: Any) -> ServerConfig:
    judges = {"judge-a": Sheet(rate=0.9, position_bias=0.05), "judge-b": Sheet(rate=0.85)}
    return ServerConfig(judges=judges, items=items(study), seed=7, **kw)


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
