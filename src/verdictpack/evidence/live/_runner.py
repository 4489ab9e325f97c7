"""The live run: judges asked over HTTP, evidence committed in the registered order, a stop at the
verdict, within a hard budget, resumable from the ledger.

The unit of work is a *cell*: (root, judge, presentation order, trial). Cells are dispatched in
the registered order -- root by root, and within a root judge by judge, order by order, trial by
trial -- by workers of each endpoint (as many as its concurrency), so work runs ahead of the
commits; but evidence reaches the e-process only as a contiguous prefix: root i is committed once
every cell of roots 1..i is answered, whatever order the answers arrived in. The stop is decided on
the committed prefix alone (the registered track's first verdict); then nothing more is dispatched,
the calls in flight are cancelled and their estimated cost recorded apart.

Every answer is written to the ledger before it counts (one transaction each); a request already
answered -- in this run or an earlier one of the same manifest -- is never sent again, so a rerun
after any interruption replays the ledger's answers and goes on from there, reaching the same
commits as an uninterrupted run against a deterministic server, at any concurrency.

The budget: before each dispatch, the model spend so far (answers recorded) plus the worst-case
cost of every call in flight plus the worst case of the next call must fit within the cap;
otherwise nothing more is dispatched and the study stops INCONCLUSIVE at the budget once the
calls in flight have landed (their answers are kept: paid evidence is never thrown away).
"""

from __future__ import annotations

import asyncio
import math
import random
import time
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from verdictpack.core._tracks import TrackRun
from verdictpack.evidence._ledger import Ledger
from verdictpack.evidence.live._extract import (
    canonical_choice,
    extract_choice,
    model_id_of,
    usage_of,
)
from verdictpack.evidence.live._limits import EndpointLimits
from verdictpack.evidence.live._prices import Price, call_cost, max_call_cost
from verdictpack.evidence.live._profiles import Sampling, chat_url, request_body
from verdictpack.evidence.live._prompts import PromptTemplate, render_messages
from verdictpack.evidence.live._retry import RetryPolicy, send_with_retries
from verdictpack.evidence.live._transport import (
    HttpRequest,
    HttpStatusError,
    LiveError,
    RetriesExhausted,
    Transport,
)
from verdictpack.stimuli._stimulus import Stimulus

__all__ = ["Cell", "LiveJudge", "LiveOutcome", "run_live"]

ORDERS = ("treatment_first", "null_first")
# a 200 whose body is not a JSON object is asked again this many times in all, then recorded as
# an invalid judgment (the calls were paid for: the answer is kept, never dropped)
_MALFORMED_TRIES = 3


@dataclass(frozen=True)
class LiveJudge:
    """One registered judge behind an endpoint (its key only in ``headers``, never stored)."""

    name: str
    base_url: str
    model: str
    profile: str
    sampling: Sampling
    prompt: PromptTemplate
    price: Price
    concurrency: int = 8
    requests_per_second: float | None = None
    timeout: float = 60.0
    headers: tuple[tuple[str, str], ...] = field(default=(), repr=False)
    retry: RetryPolicy = field(default_factory=RetryPolicy)

    @property
    def endpoint(self) -> str:
        return chat_url(self.base_url)


@dataclass(frozen=True)
class Cell:
    """One judgment to obtain: root ``index`` (0-based, registered order) by ``judge``."""

    index: int
    root_id: str
    judge: str
    order: str
    trial: int
    body: Mapping[str, Any]
    key: str


@dataclass(frozen=True)
class Answer:
    choice: str
    p_treatment: float | None
    path: str
    cost: float


@dataclass
class LiveOutcome:
    """What a live run did (the answers themselves are in the ledger)."""

    committed: int = 0
    stop: str = "data"  # verdict | budget | data | failed
    message: str = ""
    sent: int = 0
    cached: int = 0
    cancelled: int = 0
    cancelled_cost: float = 0.0
    seconds: float = 0.0


def _prompt_tokens(messages: Sequence[Mapping[str, str]]) -> int:
    """A generous estimate of a prompt's tokens for the budget check (a token per 3 chars)."""
    return math.ceil(sum(len(m.get("content", "")) for m in messages) / 3) + 16


def build_cells(
    roots: Sequence[Stimulus], judges: Sequence[LiveJudge], trials: int, ledger: Ledger
) -> list[Cell]:
    """Every cell of every root, in dispatch order, with its request body and ledger key."""
    cells = []
    for i, stim in enumerate(roots):
        for judge in judges:
            for order in ORDERS:
                messages = render_messages(judge.prompt, stim, order)
                for trial in range(trials):
                    sampling = judge.sampling
                    if sampling.seed is not None and trial:
                        sampling = Sampling(
                            temperature=sampling.temperature,
                            max_tokens=sampling.max_tokens,
                            seed=sampling.seed + trial,
                            top_logprobs=sampling.top_logprobs,
                        )
                    body = request_body(
                        judge.profile, judge.model, messages, sampling, judge.prompt.labels
                    )
                    key = ledger.request_key(
                        {
                            "root_id": stim.id,
                            "judge": judge.name,
                            "order": order,
                            "trial": trial,
                            "url": judge.endpoint,
                            "body": body,
                        }
                    )
                    cells.append(Cell(i, stim.id, judge.name, order, trial, body, key))
    return cells


async def run_live(
    roots: Sequence[Stimulus],
    judges: Sequence[LiveJudge],
    trials: int,
    ledger: Ledger,
    transport: Transport,
    tracks: TrackRun,
    root_value: Callable[[int, Mapping[tuple[str, str, int], tuple[str, float | None]]], float],
    human_value: Callable[[int], float | None],
    *,
    cap: int,
    budget: float | None = None,
    spent_before: float = 0.0,
    retry: RetryPolicy | None = None,  # overrides every judge's own policy (tests)
    seed: int = 0,
    progress: Callable[[LiveOutcome, TrackRun], None] | None = None,
    sleep: Callable[[float], Awaitable[None]] = asyncio.sleep,
) -> LiveOutcome:
    """Run (or resume) the live study until the registered verdict, the cap, the budget or the
    end of the roots; see the module docstring. ``root_value(i, cells)`` turns root i's answered
    cells {(judge, order, trial): (choice, p_treatment)} into M_i (the study's policy, and any
    judges read from files); ``human_value(i)`` is H_i or None."""
    t0 = time.perf_counter()
    outcome = LiveOutcome()
    by_name = {j.name: j for j in judges}
    n = min(cap, len(roots))
    cells = build_cells(roots[:n], judges, trials, ledger)
    per_root = len(judges) * 2 * trials
    stored = ledger.answers_by_key()
    results: dict[str, Answer] = {}
    for c in cells:
        a = stored.get(c.key)
        if a is not None:
            results[c.key] = Answer(a["choice"], a["p_treatment"], a["path"], a["cost"])
            outcome.cached += 1
    spend = [spent_before + sum(a.cost for a in results.values())]
    in_flight: dict[str, float] = {}
    done = asyncio.Event()
    landed = asyncio.Condition()
    stop_dispatch = [False]
    failure: list[BaseException] = []
    limits = {
        j.endpoint + "\x00" + j.model: EndpointLimits(j.concurrency, j.requests_per_second)
        for j in judges
    }
    # one queue per endpoint, each in the registered order
    queues: dict[str, asyncio.Queue[Cell]] = {e: asyncio.Queue() for e in limits}
    for c in cells:
        if c.key not in results:
            j = by_name[c.judge]
            queues[j.endpoint + "\x00" + j.model].put_nowait(c)
    rng = random.Random(seed)

    async def ask(c: Cell) -> None:
        judge = by_name[c.judge]
        estimate = max_call_cost(
            judge.price, _prompt_tokens(c.body.get("messages", [])), judge.sampling.max_tokens
        )
        if budget is not None and spend[0] + sum(in_flight.values()) + estimate > budget:
            stop_dispatch[0] = True
            if outcome.stop != "verdict":
                outcome.stop = "budget"
            return
        in_flight[c.key] = estimate
        try:
            ledger.record_request(c.key, c.root_id, c.judge, c.order, c.trial, c.body)
            request = HttpRequest(
                "POST",
                judge.endpoint,
                (("content-type", "application/json"), *judge.headers),
                _json_bytes(c.body),
                judge.timeout,
            )
            data: Any = None
            key = c.key

            def note(attempt: int, what: int | LiveError, delay: float | None) -> None:
                after = "no further try" if delay is None else f"next try in {delay:.3f} s"
                ledger.record_attempt(key, attempt, f"{what}; {after}")

            for _ in range(_MALFORMED_TRIES):
                response, _attempts = await send_with_retries(
                    transport,
                    request,
                    retry or judge.retry,
                    judge=judge.name,
                    rng=rng,
                    sleep=sleep,
                    on_attempt=note,
                )
                outcome.sent += 1
                data = _json_of(response.body)
                if data is not None:
                    break
                ledger.record_attempt(c.key, 0, "malformed JSON body", response.elapsed)
            if data is None:  # paid for, unreadable: an invalid judgment, never a lost one
                data = {}
            extraction = extract_choice(data, judge.prompt.labels)
            choice, p_t = canonical_choice(extraction, c.order)
            prompt_tokens, completion_tokens = usage_of(data)
            cost = call_cost(judge.price, prompt_tokens, completion_tokens)
            ledger.record_answer(
                c.key,
                raw=response.body.decode("utf-8", errors="replace"),
                prompt_tokens=prompt_tokens,
                completion_tokens=completion_tokens,
                cost=cost,
                model_id=model_id_of(data),
                latency=response.elapsed,
                choice=choice,
                path=extraction.path,
                p_treatment=p_t,
            )
            results[c.key] = Answer(choice, p_t, extraction.path, cost)
            spend[0] += cost
        finally:
            in_flight.pop(c.key, None)
            async with landed:
                landed.notify_all()

    async def worker(endpoint: str) -> None:
        lim = limits[endpoint]
        while not done.is_set() and not stop_dispatch[0]:
            try:
                c = queues[endpoint].get_nowait()
            except asyncio.QueueEmpty:
                return
            async with lim.slot():
                if done.is_set() or stop_dispatch[0]:
                    return
                try:
                    await ask(c)
                except (HttpStatusError, RetriesExhausted, LiveError) as exc:
                    failure.append(exc)
                    stop_dispatch[0] = True
                    async with landed:
                        landed.notify_all()
                    return

    workers: list[asyncio.Task[None]] = []
    for endpoint, lim in limits.items():
        for _ in range(max(1, lim.concurrency)):
            workers.append(asyncio.create_task(worker(endpoint)))
    try:
        i = tracks.roots
        while i < n and not tracks.stopped:
            mine = cells[i * per_root : (i + 1) * per_root]
            async with landed:
                while not all(c.key in results for c in mine):
                    idle = all(w.done() for w in workers)
                    if idle or (stop_dispatch[0] and not in_flight):
                        break
                    await landed.wait()
            if not all(c.key in results for c in mine):
                break
            answered = {
                (c.judge, c.order, c.trial): (results[c.key].choice, results[c.key].p_treatment)
                for c in mine
            }
            m = root_value(i, answered)
            h = human_value(i)
            tracks.step(m, h, at_cap=i + 1 == n)
            lo, hi = tracks.registered.h_interval
            state = {"registered": tracks.state_labels()["registered"], "h_interval": [lo, hi]}
            ledger.commit_root(i + 1, roots[i].id, m, h, _json_bytes(state).decode("utf-8"))
            outcome.committed = i + 1
            i += 1
            if progress is not None:
                progress(outcome, tracks)
        if tracks.stopped:
            reached = tracks.verdicts["registered"].verdict
            outcome.stop = "cap" if reached == "INCONCLUSIVE" else "verdict"
        elif failure:
            outcome.stop = "failed"
            outcome.message = str(failure[0])
        elif outcome.stop != "budget":
            outcome.stop = "data"
    finally:
        done.set()
        stop_dispatch[0] = True
        for w in workers:
            w.cancel()
        pending = dict(in_flight)
        await asyncio.gather(*workers, return_exceptions=True)
        for key, estimate in pending.items():
            if key not in results:
                ledger.record_cancelled(key, estimate, outcome.stop)
                outcome.cancelled += 1
                outcome.cancelled_cost += estimate
        outcome.seconds = time.perf_counter() - t0
    return outcome


def _json_bytes(body: Mapping[str, Any]) -> bytes:
    import json

    return json.dumps(body, separators=(",", ":"), ensure_ascii=False).encode("utf-8")


def _json_of(raw: bytes) -> Any:
    """The response's JSON object, or None when the body is not one (a malformed answer)."""
    import json

    try:
        value = json.loads(raw)
    except (ValueError, UnicodeDecodeError):
        return None
    return value if isinstance(value, dict) else None
