"""``verdictpack status DIR``: a few lines on a live study, read from its ledger only.

What a researcher asks of a study running (or killed) in another terminal: the roots committed
and the answers held, the registered track's state at the last commit, the spend against the
cap, whether a run holds the folder's lock now, and each run's start, duration, calls and stop.
Nothing is written; the ledger is opened read-only and its hash chain checked first.
"""

from __future__ import annotations

import json
import time
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from verdictpack._errors import UsageError
from verdictpack.evidence._ledger import Ledger
from verdictpack.evidence._live_folder import LEDGER_NAME, LIVE_MARKER, run_active
from verdictpack.kinds._study_live import _refuse_lost_ledger, check_chain, recorded_chain

__all__ = ["status_lines"]


def status_lines(out: str | Path) -> list[str]:
    """``verdictpack status DIR``: a few lines on a live study, read from its ledger only, and
    whether a run holds the folder's lock now."""
    folder = Path(out)
    marker = folder / LIVE_MARKER
    if not marker.is_file():
        raise UsageError(
            f"verdictpack status {out}: expected a live study's folder (no {LIVE_MARKER})"
        )
    anchor = recorded_chain(folder)
    _refuse_lost_ledger(folder / LEDGER_NAME, begun=True, anchor=anchor)
    active = run_active(folder)
    ledger = Ledger.open_readonly(folder / LEDGER_NAME)
    try:
        check_chain(ledger, anchor)
        commits = ledger.committed()
        answers = len(ledger.answer_choices())
        runs = _runs(ledger)
        spend_committed, spend_pending, cancelled = ledger.spend()
    finally:
        ledger.close()
    lines = [f"live study {folder}: {len(commits):,} roots committed, {answers:,} answers"]
    if commits:
        state = json.loads(commits[-1].state)
        lo, hi = state["h_interval"]
        lines.append(f"  registered track: {state['registered']}; h-interval [{lo:.4f}, {hi:.4f}]")
    cap = runs[-1]["start"].get("budget_judges") if runs else None
    spent = spend_committed + spend_pending
    lines.append(
        f"  spend: {spent:.6g} on judges"
        + ("" if cap is None else f" of a cap of {cap:.6g}")
        + (f"; {cancelled:.6g} estimated for cancelled calls" if cancelled else "")
    )
    # the lock held, the last run not ended and heard from lately (a heartbeat a second): that
    # run is running; else a run is starting (the last one ended, or was killed)
    now = time.time()
    last = runs[-1] if runs else {"end": {}}
    running = active and last["end"] is None and now - (last["last"] or 0) < _STALE_SECONDS
    pid = last["start"].get("pid") if running else None
    lines.append(
        ("  a run is active now" + ("" if pid is None else f" (process {pid})"))
        if active
        else "  no run is active now"
    )
    shown = runs[-_RUNS_SHOWN:]
    if len(runs) > len(shown):
        lines.append(f"  {len(runs):,} runs; the last {len(shown)}:")
    for k, run in enumerate(shown, len(runs) - len(shown) + 1):
        lines.append(f"  run {k}" + _run_text(run, running and k == len(runs), now))
    return lines


_RUNS_SHOWN = 5
_STALE_SECONDS = 15.0  # a running run's last record is never older (a heartbeat each second)


def _runs(ledger: Ledger) -> list[dict[str, Any]]:
    """Each run's start and end events (end None: killed, or running), the time of its last
    record, and its calls sent and answered: the sent records between its start and the next."""
    runs: list[dict[str, Any]] = []
    for e in ledger.events():
        if e.kind == "run_start":
            runs.append({"start": e.data, "end": None, "last": e.data.get("t")})
        elif runs and e.kind in ("run_progress", "run_end"):
            runs[-1]["last"] = e.data.get("t", runs[-1]["last"])
            if e.kind == "run_end":
                runs[-1]["end"] = e.data
    bounds = [r["start"].get("sent_before") for r in runs] + [1 << 62]
    for run, lo, hi in zip(runs, bounds, bounds[1:], strict=False):
        if lo is not None and hi is not None:  # else a run of an earlier version: its end says
            _, run["sent"], run["answered"] = ledger.sent_tally(lo, hi)
    return runs


def _run_text(run: dict[str, Any], active: bool, now: float) -> str:
    """One run: when it started, how long it ran (a killed run: to its last record), what it
    sent and received, how it stopped."""
    start, end = run["start"], run["end"] or {}
    t0 = start.get("t")
    secs = end.get("seconds") if t0 is None else max((now if active else run["last"]) - t0, 0)
    sent, answered = run.get("sent", end.get("sent")), run.get("answered")
    text = "" if t0 is None else datetime.fromtimestamp(t0, UTC).strftime(", started %F %T UTC")
    if active:
        text += ": running now, for"
    elif run["end"] is None:
        text += ": killed (no end recorded), to its last record"
    else:
        text += f": stopped on {end['stop']} after"
    text += " ?" if secs is None else f" {secs:.1f} s"
    if sent is not None:
        rate = f" ({sent / secs:.1f}/s)" if secs and sent else ""
        text += f"; {sent:,} calls sent{rate}"
    if answered is not None:
        text += f", {answered:,} answers received"
    if "cached" in end:
        text += f", {end['cached']:,} answers from the ledger"
    return text
