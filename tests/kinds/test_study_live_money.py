"""The judges' budget is a hard cap on what the provider can bill (issue 22, rows 1 and 3).

Every call that may be billed is in the ledger (durable) before it leaves, at its worst case
until its real cost is known: a 200 whose body is cut off costs its usage, else its worst case; a
call that dropped or timed out after the server generated its answer costs its worst case; a
killed run's calls in flight are counted at their worst case when it is resumed. So at every
moment the ledger's spend is at least the server's bill at the configured prices, and no call is
sent when the spend plus the worst case of what is in flight plus its own would pass the budget.

The test server bills what it generated (``billed``, ``billed_prompt_tokens``,
``billed_completion_tokens``: answers sent whole or cut off, stalled or dropped after
generating). Every subprocess has a timeout and every process started here is killed.
"""

from __future__ import annotations

import json
import random
import signal
import sqlite3
import sys
import time
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("httpx")

from live_helpers import Faults, live_study, serve, server_config
from test_study_live_resume import _answers, _interrupt_at, _processes, _report, _run

from verdictpack._cli import _parsed
from verdictpack.evidence._ledger import Ledger
from verdictpack.evidence.live._transport import HttpRequest, HttpResponse, HttpxTransport
from verdictpack.kinds._study_live import run_live_study

pytestmark = pytest.mark.skipif(sys.platform == "win32", reason="POSIX signals")

# prices where tokens matter: a dropped call billed at its usage is far above the flat fee
PRICE = {"per_million_input": 200.0, "per_million_output": 2_000.0, "per_call": 0.0005}
MAX_TOKENS = 16


def _bill(counts: dict[str, int]) -> float:
    """The server's bill at the configured prices."""
    return (
        counts.get("billed", 0) * PRICE["per_call"]
        + counts.get("billed_prompt_tokens", 0) * PRICE["per_million_input"] / 1e6
        + counts.get("billed_completion_tokens", 0) * PRICE["per_million_output"] / 1e6
    )


def _spend(out: Path) -> float:
    """The durable spend: what a reader of the ledger sees now (0 before it exists)."""
    path = out / "ledger.sqlite"
    if not path.exists():
        return 0.0
    try:
        ledger = Ledger.open_readonly(path)
    except Exception:  # the schema not yet written
        return 0.0
    try:
        return sum(ledger.spend())
    finally:
        ledger.close()


def _priced(study: Path, config: dict[str, Any], **extra: Any) -> None:
    for judge in config["panel"]["judges"]:
        judge["endpoint"]["price"] = dict(PRICE)
        sampling = judge["endpoint"].setdefault("sampling", {})
        sampling["max_tokens"] = MAX_TOKENS
        judge["endpoint"].update(extra)
    study.write_text(json.dumps(config, indent=2))


class _Watched:
    """The real transport, the ledger's spend held against the server's bill around every call
    (the bill read first: a call's share of the spend never falls below its share of the bill)."""

    def __init__(self, url: Any, out: Path) -> None:
        self.inner = HttpxTransport()
        self.url, self.out = url, out
        self.checks = 0
        self.worst_gap = 0.0

    def check(self) -> None:
        bill = _bill(self.url.counts())
        spend = _spend(self.out)
        self.checks += 1
        self.worst_gap = max(self.worst_gap, bill - spend)

    async def send(self, request: HttpRequest) -> HttpResponse:
        self.check()
        try:
            return await self.inner.send(request)
        finally:
            self.check()

    async def aclose(self) -> None:
        await self.inner.aclose()


def test_malformed_dropped_and_stalled_calls_count_and_the_budget_is_a_hard_cap(
    tmp_path: Path,
) -> None:
    """Row 1: the ledger's spend is never below the server's bill, and the run stops within
    the budget (old main: cut-off answers at the flat fee, drops and timeouts at 0)."""
    probe, _ = live_study(tmp_path / "probe", "http://127.0.0.1:9/v1")
    faults = Faults(malformed=0.2, drop=0.15, stall=0.05, stall_seconds=1.0, max_delay=0.01)
    budget = 3.0  # a worst case a call is about 0.17: tens of calls
    with serve(server_config(probe, faults=faults)) as url:
        study, config = live_study(tmp_path / "run", url, concurrency=3)
        config["budget"] = {"judges": budget}
        _priced(study, config, timeout_seconds=0.25)
        out = tmp_path / "out"
        watched = _Watched(url, out)
        source, _, cfg = _parsed(str(study))
        _, outcome = run_live_study(cfg, source, out, transport=watched)
        watched.check()
        counts = url.counts()
    assert counts.get("drop", 0) > 0 and counts.get("malformed", 0) > 0, counts
    assert watched.checks > 20
    assert watched.worst_gap <= 1e-12, f"the bill passed the ledger's spend by {watched.worst_gap}"
    assert outcome.stop == "budget", outcome
    spend = _spend(out)
    assert _bill(counts) <= spend <= budget
    # a hard cap, not a soft one: the run went as far as the budget allowed
    assert spend > budget / 2


def test_the_budget_holds_for_a_prompt_in_chinese_billed_a_token_a_byte(tmp_path: Path) -> None:
    """A prompt of 3-byte characters billed as a byte-fallback tokenizer behind a chat template
    bills it (a token per UTF-8 byte, 16 a message, 64 a request: the most the budget's bound
    allows): the run still stops within its budget, having gone more than half way (before: a
    prompt's worst case was a token per 3 characters, a ninth of what such a server bills, and
    the calls in flight at the cap carried the spend past it)."""
    probe, _ = live_study(tmp_path / "probe", "http://127.0.0.1:9/v1")
    budget = 0.15
    with serve(server_config(probe, billing="bytes")) as url:
        spend, counts, outcome = _chinese_study(tmp_path, url, budget)
    assert outcome.stop == "budget", outcome
    assert counts["billed"] >= 20, counts
    assert _bill_input(counts) <= spend + 1e-12, (counts, spend)
    assert spend <= budget, f"the spend {spend} passed the budget {budget}"
    assert spend > budget / 2


# about 900 characters of Chinese: 2,700 bytes, 300 characters by the old count
SYSTEM_ZH = "你是一位认真、公正的评审员。请比较两个回答，只用一个标签作答。" * 30
PRICE_INPUT = {"per_million_input": 1.0, "per_million_output": 0.0, "per_call": 0.0}


def _bill_input(counts: dict[str, int]) -> float:
    return counts.get("billed_prompt_tokens", 0) * PRICE_INPUT["per_million_input"] / 1e6


def _chinese_study(
    tmp_path: Path, url: Any, budget: float, name: str = "run"
) -> tuple[float, dict[str, int], Any]:
    """The tiny live study with a Chinese system prompt and input-priced judges, run (or
    resumed) within ``budget``: (its spend, the server's counts, the run's outcome)."""
    study, config = live_study(tmp_path / name, url, concurrency=3)
    config["budget"] = {"judges": budget}
    for judge in config["panel"]["judges"]:
        judge["endpoint"]["price"] = dict(PRICE_INPUT)
        judge["endpoint"]["prompt"] = {"system": SYSTEM_ZH}
    study.write_text(json.dumps(config, indent=2, ensure_ascii=False), encoding="utf-8")
    source, _, cfg = _parsed(str(study))
    out = tmp_path / "out"
    _, outcome = run_live_study(cfg, source, out)
    return _spend(out), url.counts(), outcome


def test_a_server_billing_above_the_bound_scales_its_judges_worst_cases(tmp_path: Path) -> None:
    """A server billing three times the prompt's bound: the answers cost what it bills, and each
    judge's later worst cases are scaled by the ratio seen, so the run stops within its budget;
    resumed with headroom for two more calls, the ratio is read back from the ledger's answers
    and the budget holds again (without it the first calls of the rerun would pass it)."""
    probe, _ = live_study(tmp_path / "probe", "http://127.0.0.1:9/v1")
    budget = 0.3
    with serve(server_config(probe, billing="over")) as url:
        spend, counts, outcome = _chinese_study(tmp_path, url, budget)
        assert outcome.stop == "budget", outcome
        assert _bill_input(counts) <= spend + 1e-12, (counts, spend)
        assert budget / 2 < spend <= budget, spend
        per_call = _bill_input(counts) / counts["billed"]
        more = spend + 2.5 * per_call
        spend2, counts2, outcome2 = _chinese_study(tmp_path, url, more, name="rerun")
    assert outcome2.stop == "budget", outcome2
    assert counts2["billed"] - counts["billed"] in (1, 2), (counts, counts2)
    assert spend2 <= more, f"the spend {spend2} passed the raised budget {more}"


def _kill_loop(tmp_path: Path, roots: int, kills: int, seed: int) -> None:
    """Row 3: a live study SIGKILLed at seeded random moments and resumed until it is done."""
    rng = random.Random(seed)
    concurrency = 2  # per judge: 4 calls in flight at most
    in_flight = 2 * concurrency
    probe, _ = live_study(tmp_path / "probe", "http://127.0.0.1:9/v1", roots=roots, cap=roots)
    # faults at most twice per body: three cut-off answers in a row (an invalid judgment) never
    # happen, so the evidence does not depend on when the kills land
    faults = Faults(
        malformed=0.04, drop=0.04, rate_limit=0.03, max_delay=0.02, max_faulty_attempt=2
    )
    config = server_config(probe, latency=0.02, faults=faults, log_answers=True)
    kw = {"roots": roots, "cap": roots, "concurrency": concurrency}
    with _processes() as procs:
        with serve(config, process=True) as ref_url:
            ref_study, ref_config = live_study(tmp_path / "reference", ref_url, **kw)
            _priced(ref_study, ref_config)
            reference = tmp_path / "reference_out"
            code, err = _run(ref_study, reference, procs)
            assert code == 0, err
            total = len(_answers(reference))
        with serve(config, process=True) as url:
            study, run_config = live_study(tmp_path / "run", url, **kw)
            _priced(study, run_config)
            out = tmp_path / "out"
            points = sorted(rng.sample(range(3, max(4, total - 25)), kills))
            logged = 0
            seen: set[str] = set()
            for k, point in enumerate(points):
                target = max(point, len(_answers(out)) + 1)
                code, err = _interrupt_at(
                    study, out, procs, target, rng.uniform(0.0, 0.03), signal.SIGKILL
                )
                assert code == -signal.SIGKILL, (k, code, err)
                time.sleep(0.15)  # the server finishes (and bills) what the dead run sent
                bill, spend = _bill(url.counts()), _spend(out)
                assert spend >= bill - 1e-12, (k, spend, bill)
                log = url.answers()
                rebought = 0
                for entry in log[logged:]:
                    rebought += entry["sha256"] in seen
                    seen.add(entry["sha256"])
                logged = len(log)
                assert rebought <= in_flight, (k, rebought)
            code, err = _run(study, out, procs)
            assert code == 0, err
            time.sleep(0.1)
            counts, log = url.counts(), url.answers()
    bill, spend = _bill(counts), _spend(out)
    assert spend >= bill - 1e-12, (spend, bill)
    rebought = len(log) - len({e["sha256"] for e in log})
    assert rebought <= in_flight * kills, rebought
    # every call a kill left in flight is on the ledger, at its worst case
    with sqlite3.connect(out / "ledger.sqlite") as db:
        killed = db.execute(
            "SELECT count(*) FROM cancelled WHERE reason = 'killed in flight'"
        ).fetchone()[0]
        open_calls = db.execute(
            "SELECT count(*) FROM sent s WHERE NOT EXISTS "
            "(SELECT 1 FROM settled t WHERE t.sent = s.seq)"
        ).fetchone()[0]
    assert killed >= rebought and open_calls == 0, (killed, rebought, open_calls)
    assert _report(out) == _report(reference)


def test_killed_and_resumed_never_spends_below_the_bill_nor_rebuys_more_than_in_flight(
    tmp_path: Path,
) -> None:
    _kill_loop(tmp_path, roots=40, kills=2, seed=20260422)


def test_killed_and_resumed_many_times_never_spends_below_the_bill(tmp_path: Path) -> None:
    _kill_loop(tmp_path, roots=120, kills=8, seed=20260423)
