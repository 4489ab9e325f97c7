"""A live study killed at random moments resumes to exactly the result of an uninterrupted run.

The study (120 roots, cap 120, two judges behind one deterministic test server in its own process,
with latency, random delays and transient faults) is run by the CLI in a subprocess and SIGKILLed
at seeded random moments: each kill point is a number of answers in the ledger drawn from
``random.Random(SEED)``, then a random delay of up to 50 ms, so a kill lands mid-run at a random
phase (between answers, inside a transaction, while a commit is written). After every kill the run
is started again; once it has run to completion its report must equal byte for byte that of an
uninterrupted run of the same study in another folder, and the ledger must show that nothing was
counted twice (each request key answered at most once, each cell once in judgments.csv), nothing
paid for was lost (every answer recorded before a kill is still there, unchanged) and the commits
are the contiguous prefix 1..n. Ctrl-C (SIGINT) mid-run exits 130 and resumes the same way, and
so does a study sent SIGTERM mid-run (that SIGTERM should also stop it cleanly, as Ctrl-C does, is
marked as a known failure below; so is the count of roots a rerun after the verdict reports).

Every subprocess has a timeout and every process started here is killed in a ``finally``.
"""

from __future__ import annotations

import json
import random
import signal
import sqlite3
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("httpx")

from live_helpers import Faults, live_study, serve, server_config

SEED = 20261201
ROOTS = 120
KILLS = 6
CONCURRENCY = 4  # per judge: 8 requests in flight at most
RUN_TIMEOUT = 120.0  # seconds for one run of the CLI
REPORT_FILES = ("judgments.csv", "evidence.jsonl", "verdict.json")
# latency and delays spread the run over seconds so the kill points land mid-run; the transient
# faults make retries straddle the kills
FAULTS = Faults(rate_limit=0.05, server_error=0.05, max_delay=0.02)
LATENCY = 0.02

pytestmark = pytest.mark.skipif(sys.platform == "win32", reason="POSIX signals")


def _command(study: Path, out: Path) -> list[str]:
    return [sys.executable, "-m", "verdictpack", str(study), "--out", str(out), "--quiet"]


@contextmanager
def _processes() -> Iterator[list[subprocess.Popen[bytes]]]:
    """Every process started in the block is killed at its end if it is still running."""
    started: list[subprocess.Popen[bytes]] = []
    try:
        yield started
    finally:
        for proc in started:
            if proc.poll() is None:
                proc.kill()
            proc.wait(timeout=10)


def _run(study: Path, out: Path, procs: list[subprocess.Popen[bytes]]) -> tuple[int, str]:
    """One run of the CLI to its end (bounded); its exit code and stderr."""
    proc = subprocess.Popen(_command(study, out), stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    procs.append(proc)
    _, err = proc.communicate(timeout=RUN_TIMEOUT)
    return proc.returncode, err.decode(errors="replace")


def _answers(out: Path) -> dict[str, tuple[Any, ...]]:
    """Every answer row of the ledger by request key (read-only; empty before the ledger)."""
    path = out / "ledger.sqlite"
    if not path.exists():
        return {}
    db = sqlite3.connect(f"{path.resolve().as_uri()}?mode=ro", uri=True, timeout=10)
    try:
        rows = db.execute("SELECT * FROM answers").fetchall()
    except sqlite3.OperationalError:  # the schema is not yet written
        return {}
    finally:
        db.close()
    return {row[0]: tuple(row) for row in rows}


def _interrupt_at(
    study: Path,
    out: Path,
    procs: list[subprocess.Popen[bytes]],
    answers: int,
    delay: float,
    sig: signal.Signals,
) -> tuple[int, str]:
    """Start a run, wait until the ledger holds ``answers`` answers, wait ``delay`` seconds more,
    send ``sig``; the run's exit code and stderr. The run must still be running when signalled
    (the kill point lands mid-run)."""
    proc = subprocess.Popen(_command(study, out), stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    procs.append(proc)
    deadline = time.monotonic() + RUN_TIMEOUT
    while len(_answers(out)) < answers and proc.poll() is None:
        if time.monotonic() > deadline:
            raise AssertionError(f"the ledger did not reach {answers} answers in time")
        time.sleep(0.005)
    time.sleep(delay)
    assert proc.poll() is None, (
        f"the run ended before its kill point ({answers} answers + {delay:.3f} s): exit "
        f"{proc.returncode}; the kill points must land mid-run"
    )
    proc.send_signal(sig)
    _, err = proc.communicate(timeout=RUN_TIMEOUT)
    return proc.returncode, err.decode(errors="replace")


def _report(out: Path) -> dict[str, bytes]:
    return {name: (out / "report" / name).read_bytes() for name in REPORT_FILES}


def _ledger_facts(out: Path) -> dict[str, Any]:
    with sqlite3.connect(out / "ledger.sqlite") as db:
        return {
            "seqs": [s for (s,) in db.execute("SELECT seq FROM commits ORDER BY seq")],
            "roots": [r for (r,) in db.execute("SELECT root_id FROM commits ORDER BY seq")],
            "twice": db.execute(
                "SELECT key, count(*) FROM answers GROUP BY key HAVING count(*) > 1"
            ).fetchall(),
            "answers": db.execute("SELECT count(*) FROM answers").fetchone()[0],
            "cells": db.execute(
                'SELECT count(*), count(DISTINCT root_id || judge || "order" || trial) '
                "FROM requests"
            ).fetchone(),
            "ends": [
                json.loads(j)
                for (j,) in db.execute("SELECT json FROM events WHERE kind = 'run_end'")
            ],
        }


def test_killed_at_random_moments_the_study_resumes_to_the_uninterrupted_result(
    tmp_path: Path,
) -> None:
    rng = random.Random(SEED)
    probe, _ = live_study(tmp_path / "probe", "http://127.0.0.1:9/v1", roots=ROOTS, cap=ROOTS)
    config = server_config(probe, latency=LATENCY, faults=FAULTS)
    with serve(config, process=True) as url, _processes() as procs:
        kw = {"roots": ROOTS, "cap": ROOTS, "concurrency": CONCURRENCY}
        reference_study, _ = live_study(tmp_path / "reference", url, **kw)
        reference = tmp_path / "reference_out"
        code, err = _run(reference_study, reference, procs)
        assert code == 0, err
        total = len(_answers(reference))
        assert total >= 120, f"the uninterrupted run asked too little to kill it mid-run: {total}"
        ok_reference = url.counts()["ok"]

        study, _ = live_study(tmp_path / "run", url, **kw)
        out = tmp_path / "out"
        # kill points: answers in the ledger, increasing, all well before the run's end
        points = sorted(rng.sample(range(5, total - 40), KILLS))
        snapshots: list[dict[str, tuple[Any, ...]]] = []
        for k, point in enumerate(points):
            # at least one new answer in each run (a run may be killed while it replays)
            target = max(point, len(snapshots[-1]) + 1 if snapshots else 1)
            code, err = _interrupt_at(
                study, out, procs, target, rng.uniform(0.0, 0.05), signal.SIGKILL
            )
            assert code == -signal.SIGKILL, (k, code, err)
            snapshots.append(_answers(out))
            assert len(snapshots[-1]) >= target
            facts = _ledger_facts(out)
            assert facts["seqs"] == list(range(1, len(facts["seqs"]) + 1))
            assert facts["twice"] == []
        # Ctrl-C once: exit 130, the interruption recorded, resumable like any other stop
        sigint_at = len(snapshots[-1]) + rng.randrange(5, 20)
        code, err = _interrupt_at(study, out, procs, sigint_at, 0.0, signal.SIGINT)
        assert code == 130, err
        assert "interrupted" in err and "Traceback" not in err, err
        snapshots.append(_answers(out))
        assert _ledger_facts(out)["ends"][-1]["stop"] == "interrupted"
        # and run to completion
        code, err = _run(study, out, procs)
        assert code == 0, err
        ok_total = url.counts()["ok"]

    assert _report(out) == _report(reference)
    facts, ref_facts = _ledger_facts(out), _ledger_facts(reference)
    assert facts["roots"] == ref_facts["roots"]
    assert facts["seqs"] == list(range(1, len(facts["seqs"]) + 1))
    assert facts["twice"] == []
    count, distinct = facts["cells"]
    assert count == distinct, "a cell was recorded under two request keys"
    final = _answers(out)
    for k, snapshot in enumerate(snapshots):
        lost = [key for key in snapshot if key not in final]
        changed = [key for key in snapshot if key in final and final[key] != snapshot[key]]
        assert not lost and not changed, (k, len(lost), len(changed))
    # no answered request is asked again: beyond the final ledger's answers, the server answered
    # at most the requests in flight at each of the interrupted runs' ends and at the verdict
    in_flight = 2 * CONCURRENCY
    answered_by_server = ok_total - ok_reference
    assert len(final) <= answered_by_server <= len(final) + in_flight * (KILLS + 2)
    # judgments.csv holds each cell once
    rows = (out / "report" / "judgments.csv").read_text().splitlines()
    header = rows[0].split(",")
    cols = [header.index(c) for c in ("root_id", "rater_id", "order", "trial")]
    cells = [tuple(r.split(",")[i] for i in cols) for r in rows[1:]]
    assert len(cells) == len(set(cells))


def _sigterm_mid_run(tmp_path: Path, url: str, procs: list[subprocess.Popen[bytes]]) -> Any:
    """A 40-root study sent SIGTERM once 20 answers are in: (study, folder, exit code, stderr)."""
    study, _ = live_study(tmp_path / "run", url, concurrency=CONCURRENCY)
    out = tmp_path / "out"
    code, err = _interrupt_at(study, out, procs, 20, 0.01, signal.SIGTERM)
    return study, out, code, err


def test_sigterm_mid_run_leaves_a_study_that_resumes_to_the_uninterrupted_result(
    tmp_path: Path,
) -> None:
    probe, _ = live_study(tmp_path / "probe", "http://127.0.0.1:9/v1")
    config = server_config(probe, latency=LATENCY, faults=FAULTS)
    with serve(config, process=True) as url, _processes() as procs:
        reference_study, _ = live_study(tmp_path / "reference", url, concurrency=CONCURRENCY)
        reference = tmp_path / "reference_out"
        code, err = _run(reference_study, reference, procs)
        assert code == 0, err
        study, out, code, err = _sigterm_mid_run(tmp_path, url, procs)
        assert code != 0, err
        before = _answers(out)
        assert len(before) >= 20
        code, err = _run(study, out, procs)
        assert code == 0, err
    assert _report(out) == _report(reference)
    final = _answers(out)
    assert all(final.get(key) == row for key, row in before.items())
    facts = _ledger_facts(out)
    assert facts["seqs"] == list(range(1, len(facts["seqs"]) + 1))
    assert facts["twice"] == []


def test_sigterm_mid_run_stops_cleanly_like_ctrl_c(tmp_path: Path) -> None:
    probe, _ = live_study(tmp_path / "probe", "http://127.0.0.1:9/v1")
    config = server_config(probe, latency=LATENCY, faults=FAULTS)
    with serve(config, process=True) as url, _processes() as procs:
        _, out, code, err = _sigterm_mid_run(tmp_path, url, procs)
    # 130 as for Ctrl-C (or the shell's 128 + 15, as the battery's SIGTERM handler exits)
    assert code in (130, 128 + signal.SIGTERM), (code, err)
    assert "Traceback" not in err, err
    assert [e["stop"] for e in _ledger_facts(out)["ends"][-1:]] == ["interrupted"]
    assert (out / "report" / "verdict.json").is_file()


def test_a_rerun_after_the_verdict_reports_the_roots_committed(tmp_path: Path) -> None:
    probe, _ = live_study(tmp_path / "probe", "http://127.0.0.1:9/v1")
    with serve(server_config(probe)) as url, _processes() as procs:
        study, _ = live_study(tmp_path / "run", url)
        out = tmp_path / "out"
        code, err = _run(study, out, procs)
        assert code == 0, err
        code, err = _run(study, out, procs)
        assert code == 0, err
    facts = _ledger_facts(out)
    roots = len(facts["seqs"])
    assert roots > 0
    assert f" {roots} roots committed" in err, err
    assert [end["committed"] for end in facts["ends"]] == [roots, roots]
