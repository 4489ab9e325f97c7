"""``verdictpack status`` tells the truth about a live run stopped by Ctrl-C or killed outright,
and the CLI's plain progress lines reach a log file.

The CLI runs a small live study in a subprocess (stderr to a file: not a terminal, so progress
comes as plain lines) against the test server, whose latency spreads the run over seconds. Once
the log holds two progress lines the run is asked for its status (a run is active), then sent
SIGINT or SIGKILL. ``status`` must then give the stopped run's duration (> 0, within the wall
time the process lived), its calls sent (the ledger's sent records, and between the server's
count of requests received and that plus the calls that may have been in flight) and say that
no run is active now. Every process has a timeout and is killed in a ``finally``.
"""

from __future__ import annotations

import os
import re
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pytest

pytest.importorskip("httpx")

from live_helpers import live_study, serve, server_config

from verdictpack._cli import main

pytestmark = pytest.mark.skipif(sys.platform == "win32", reason="POSIX signals")

CONCURRENCY = 1  # per judge: two calls in flight at most
LATENCY = 0.2  # seconds per answer: a root takes about 0.4 s
TIMEOUT = 60.0
RUN_LINE = re.compile(
    r"run 1, started [-0-9]+ [:0-9]+ UTC: (?P<how>[^;]*?) (?P<secs>[0-9.]+) s; "
    r"(?P<sent>[0-9,]+) calls sent(?: \([0-9.]+/s\))?, (?P<answered>[0-9,]+) answers received"
)


def _status(folder: Path, capsys: pytest.CaptureFixture[str]) -> str:
    capsys.readouterr()
    assert main(["status", str(folder)]) == 0
    return capsys.readouterr().out


def _sent_records(folder: Path) -> int:
    db = sqlite3.connect(f"{(folder / 'ledger.sqlite').resolve().as_uri()}?mode=ro", uri=True)
    try:
        return int(db.execute("SELECT count(*) FROM sent").fetchone()[0])
    finally:
        db.close()


@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGKILL], ids=["sigint", "sigkill"])
def test_status_after_a_stopped_run_and_plain_progress_in_a_log_file(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], sig: signal.Signals
) -> None:
    probe, _ = live_study(tmp_path / "probe", "http://127.0.0.1:9/v1")
    log = tmp_path / "run.log"
    folder = tmp_path / "out"
    with serve(server_config(probe, latency=LATENCY)) as url:
        study, _ = live_study(tmp_path / "run", url, concurrency=CONCURRENCY)
        argv = [sys.executable, "-m", "verdictpack", str(study), "--out", str(folder)]
        argv += ["--progress-interval", "0.5"]
        with log.open("wb") as err:
            began = time.monotonic()
            proc = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=err)
        try:
            deadline = time.monotonic() + TIMEOUT
            while (
                log.read_text().count("verdictpack: progress live ") < 3
            ):  # >= 1.4 s into the live run
                assert proc.poll() is None, log.read_text()
                assert time.monotonic() < deadline, "no progress lines in time"
                time.sleep(0.05)
            assert "a run is active now (process " in _status(folder, capsys)
            proc.send_signal(sig)
            proc.wait(timeout=TIMEOUT)
            lived = time.monotonic() - began
        finally:
            if proc.poll() is None:
                proc.kill()
                proc.wait(timeout=10)
        received = url.counts()["requests"]
    assert proc.returncode == (130 if sig == signal.SIGINT else -signal.SIGKILL)

    text = log.read_text()
    assert "\r" not in text and "Traceback" not in text, text
    lines = [ln for ln in text.splitlines() if ln.startswith("verdictpack: progress live ")]
    assert len(lines) >= 3
    for ln in lines:  # what, done/total, rate, time left, time so far, spend against the cap
        assert re.search(r"/40 \([0-9]+%\)", ln) and "elapsed" in ln and "spend " in ln, ln
    assert any("/s, ETA " in ln for ln in lines), lines

    status = _status(folder, capsys)
    assert "no run is active now" in status and "a run is active" not in status, status
    found = RUN_LINE.search(status)
    assert found, status
    how = "stopped on interrupted after" if sig == signal.SIGINT else "killed (no end recorded)"
    assert found["how"].startswith(how), status
    assert 0 < float(found["secs"]) <= lived, (status, lived)
    sent = int(found["sent"].replace(",", ""))
    assert sent == _sent_records(folder)
    assert received <= sent <= received + 2 * CONCURRENCY, (sent, received)
    assert 0 < int(found["answered"].replace(",", "")) <= sent


def test_status_counts_each_runs_calls_and_tells_a_held_lock_from_a_stale_one(
    tmp_path: Path,
) -> None:
    """Per run: its duration (to its end, or a killed run's last heartbeat), the sent records
    between its start and the next run's, those answered; a run of an earlier version (no times
    in its events) by its end's figures. Active only while a process holds the lock."""
    import fcntl

    from verdictpack.evidence._ledger import Ledger
    from verdictpack.evidence._live_folder import LIVE_LOCK, LIVE_MARKER
    from verdictpack.kinds._study_status import status_lines

    (tmp_path / LIVE_MARKER).write_text("{}")
    led = Ledger.open(tmp_path / "ledger.sqlite", {"study": 1})
    keys = [led.request_key({"n": n}) for n in range(5)]
    for n, key in enumerate(keys):
        led.record_request(key, f"r{n}", "judge", "treatment_first", 0, {"n": n})

    def answer(key: str) -> None:
        led.record_answer(
            key, raw="{}", prompt_tokens=1, completion_tokens=1, cost=0.001, model_id=None,
            latency=0.1, choice="treatment", path="parser", p_treatment=None,
        )  # fmt: skip

    led.record_event("run_start", {"budget_judges": None, "judges": 1})  # no times: old
    led.record_event("run_end", {"stop": "data", "seconds": 4.0, "sent": 7, "cached": 0})
    led.record_event("run_start", {"t": 1000.0, "sent_before": 0, "pid": 1})
    for key in keys[:3]:
        led.record_sent(key, 1, 0.002)
    answer(keys[0])
    answer(keys[1])
    led.record_event("run_progress", {"t": 1001.5})
    led.record_event("run_progress", {"t": 1003.25})  # then SIGKILL: no end
    led.record_event("run_start", {"t": 2000.0, "sent_before": 3, "pid": 2})
    led.record_cancelled(keys[2], 0.002, "killed in flight")
    led.record_sent(keys[2], 2, 0.002)
    led.record_sent(keys[3], 1, 0.002)
    answer(keys[2])
    led.record_event("run_end", {"t": 2010.0, "stop": "verdict", "cached": 2})
    led.close()

    lines = status_lines(tmp_path)
    assert lines[2] == "  no run is active now"  # no lock file at all
    assert lines[3] == (
        "  run 1: stopped on data after 4.0 s; 7 calls sent (1.8/s), 0 answers from the ledger"
    )
    assert lines[4] == (
        "  run 2, started 1970-01-01 00:16:40 UTC: killed (no end recorded), to its last "
        "record 3.2 s; 3 calls sent (0.9/s), 2 answers received"
    )
    assert lines[5] == (
        "  run 3, started 1970-01-01 00:33:20 UTC: stopped on verdict after 10.0 s; 2 calls "
        "sent (0.2/s), 1 answers received, 2 answers from the ledger"
    )
    lock = tmp_path / LIVE_LOCK
    lock.write_text("")  # left by a killed run: nobody holds it
    assert status_lines(tmp_path) == lines
    fd = os.open(lock, os.O_RDWR)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)  # as a run holds it
        # run 3 ended: a new run is starting (its start not yet recorded)
        assert status_lines(tmp_path)[2] == "  a run is active now"
        led = Ledger.open(tmp_path / "ledger.sqlite", {"study": 1})
        led.record_event("run_start", {"t": time.time() - 60, "sent_before": 5, "pid": 3})
        held = status_lines(tmp_path)
        # its last record a minute old: killed; the lock is a new run's, not yet recorded
        assert held[2] == "  a run is active now" and "killed (no end recorded)" in held[6]
        led.record_event("run_start", {"t": time.time() - 5, "sent_before": 5, "pid": 4})
        led.close()
        held = status_lines(tmp_path)
        assert held[2] == "  a run is active now (process 4)"
        assert re.fullmatch(
            r"  run 5, started .* UTC: running now, for 5\.[0-9] s; "
            "0 calls sent, 0 answers received",
            held[7],
        ), held
    finally:
        os.close(fd)
