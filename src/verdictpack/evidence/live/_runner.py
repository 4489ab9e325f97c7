"""The live run: judges asked over HTTP, evidence committed in the registered order, a stop at the
verdict, within a hard budget, resumable from the ledger.

The unit of work is a *cell*: (root, judge, presentation order, trial). Cells are dispatched in
the registered order -- root by root, and within a root judge by judge, order by order, trial by
trial -- by workers of each endpoint (as many as its concurrency), so work runs ahead of the
commits; but evidence reaches the e-process only as a contiguous prefix: root i is committed once
every cell of roots 1..i is answered, whatever order the answers arrived in. The stop is decided on
the committed prefix alone (the registered track's first verdict); then nothing more is dispatched,
the calls in flight are cancelled and their estimated cost recorded apart.

Every answer is written to the ledger before it counts; a request already answered -- in this run
or an earlier one of the same manifest -- is never sent again, so a rerun after any interruption
replays the ledger's answers and goes on from there, reaching the same commits as an
uninterrupted run against a deterministic server, at any concurrency.

Writes are grouped (a group commit: one fsync for many answers, where one each would cap a study
at the disk's fsync rate). Every ledger write of the run -- a request as it is sent, its
attempts, its answer as it lands -- waits in order for the next group; the main loop makes the
group's writes and the commits of the roots they complete in one transaction, whose COMMIT (the
fsync) runs in a worker thread while the event loop goes on sending and receiving, and the next
group gathers meanwhile. Between a group's start and its commit's end only the main loop touches
the ledger. A call's concurrency slot is free once its answer has arrived, but the answer counts
-- towards a commit, and in the spend instead of its worst-case estimate -- from its group on;
a crash loses at most the groups not yet durable (their requests are asked again on the rerun,
as every unanswered request is), and what landed as a run ends -- at the verdict, on Ctrl-C --
is still recorded. A write the ledger refuses stops the run (failed, with the ledger's reason).

Money. Every call that may be billed -- each attempt, retries and re-asks of a malformed body
included -- is a ``sent`` record (attempt number, worst-case cost) in a group whose commit (FULL)
ends before the call leaves; it is then settled: by its answer (its ``usage``, else its worst
case), as failed (a 200 cut off or malformed: its ``usage`` if the text shows one, else its worst
case; no response -- timeout, dropped connection -- its worst case; an error status 0), or
cancelled at its worst case (in flight when the run stops; or found unsettled when a killed run is
resumed: "killed in flight", then asked again). The ledger's spend counts an unsettled call at its
worst case, so it is never below what the provider can have billed at the configured prices.

The budget, a hard cap in those terms: before each call leaves (a retry included), the ledger's
spend, plus the worst case of the calls whose sent record is not yet in it, plus this call's worst
case must fit within the cap; otherwise nothing more is sent and the study stops INCONCLUSIVE at
the budget once the calls in flight have landed (their answers are kept: paid evidence is never
thrown away). A call's worst case is its price at the prompt's bound and ``max_tokens``
(:func:`~verdictpack.evidence.live._prices.prompt_token_bound`). A server that bills a call above
it (more prompt tokens than the bound, more completion tokens than ``max_tokens``) is taken at its
word -- the answer costs its ``usage`` -- and every later worst case of that judge is scaled by
the largest ratio of billed cost to worst case seen, in this run or in the ledger's answers of an
earlier one: the cap can then be passed only by the calls in flight when the excess was first seen.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import gc
import hashlib
import random
import re
import time
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from verdictpack._errors import VerdictpackError
from verdictpack.core._tracks import TrackStream
from verdictpack.evidence._choice import ORDERS
from verdictpack.evidence._ledger import Ledger, canonical_json
from verdictpack.evidence.live._extract import canonical_choice, extract_choice, model_id_of
from verdictpack.evidence.live._limits import EndpointLimits
from verdictpack.evidence.live._prices import (
    Price,
    call_cost,
    max_call_cost,
    prompt_token_bound,
)
from verdictpack.evidence.live._profiles import Sampling, chat_url, request_body
from verdictpack.evidence.live._prompts import PromptTemplate, render_messages
from verdictpack.evidence.live._retry import RetryPolicy, send_with_retries
from verdictpack.evidence.live._transport import (
    HttpRequest,
    HttpResponse,
    HttpStatusError,
    LiveError,
    RetriesExhausted,
    Transport,
    TransportError,
    redact,
)
from verdictpack.stimuli._stimulus import Stimulus

__all__ = ["Cell", "LiveJudge", "LiveOutcome", "run_live"]

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
    # the canonical JSON of ``body`` in three pieces to join (shared with the other cells of
    # the root and the plan, so a cell costs no text of its own), or None: serialise ``body``
    text: tuple[str, str, str] | None = field(default=None, repr=False, compare=False)


@dataclass(frozen=True)
class Answer:
    choice: str
    p_treatment: float | None
    path: str
    cost: float


@dataclass(frozen=True)
class _Landed:
    """An answer received, waiting for the group transaction that records it."""

    cell: Cell
    fields: Mapping[str, Any]
    answer: Answer


class _OverBudget(Exception):
    """A call (a retry included) whose worst case no longer fits within the budget."""


class _Metered:
    """The transport as one cell's calls see it: ``send`` is the cell's metered send."""

    def __init__(self, send: Callable[[HttpRequest], Awaitable[HttpResponse]]) -> None:
        self._send = send

    async def send(self, request: HttpRequest) -> HttpResponse:
        return await self._send(request)

    async def aclose(self) -> None:
        return None


_USAGE = re.compile(rb'"(prompt_tokens|completion_tokens)"\s*:\s*(\d{1,12})\b')


def _cost_of(price: Price, data: Any, raw: bytes, worst: float) -> float:
    """What a 200 costs: its reported usage at ``price``, else the call's worst case."""
    usage = _reported_usage(data, raw)
    return worst if usage is None else call_cost(price, *usage)


def _reported_usage(data: Any, raw: bytes) -> tuple[int, int] | None:
    """The token counts a 200's body reported: its ``usage`` (both counts), else -- a body cut
    off or malformed -- both counts found in its text, else None (the cost is unknown)."""
    usage = data.get("usage") if isinstance(data, dict) else None
    if isinstance(usage, dict):
        p, c = usage.get("prompt_tokens"), usage.get("completion_tokens")
        if all(isinstance(x, int) and not isinstance(x, bool) and x >= 0 for x in (p, c)):
            return usage["prompt_tokens"], usage["completion_tokens"]
    if data is None:
        found = {m.group(1): int(m.group(2)) for m in _USAGE.finditer(raw)}
        if len(found) == 2:
            return found[b"prompt_tokens"], found[b"completion_tokens"]
    return None


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


# markers standing for a root's id and its messages in a cell's key template (build_cells)
_ROOT_MARK = "\x00verdictpack-root-id\x00"
_MESSAGES_MARK = "\x00verdictpack-messages\x00"


def _trial_sampling(sampling: Sampling, trial: int) -> Sampling:
    """A trial's sampling: the judge's own, its seed moved on by the trial (when it has one)."""
    if sampling.seed is None or not trial:
        return sampling
    return replace(sampling, seed=sampling.seed + trial)


def _key_mapping(
    root_id: str, judge: LiveJudge, order: str, trial: int, body: Mapping[str, Any]
) -> dict[str, Any]:
    """What a cell's ledger key is the hash of."""
    return {
        "root_id": root_id,
        "judge": judge.name,
        "order": order,
        "trial": trial,
        "url": judge.endpoint,
        "body": body,
    }


@dataclass(frozen=True)
class _Plan:
    """One (judge, order, trial) of every root: the request body with its messages to fill in,
    and the canonical text of the key mapping cut around the root's id and the messages (None:
    the markers do not cut it cleanly, so each key is computed whole)."""

    judge: LiveJudge
    order: str
    trial: int
    body: Mapping[str, Any]
    pieces: tuple[str, str, str] | None
    root_first: bool
    # the canonical JSON of the body cut around its messages (None: not cut cleanly)
    body_pieces: tuple[str, str] | None = None


def _plan(
    judge: LiveJudge, order: str, trial: int, ledger: Ledger, sample: Stimulus | None
) -> _Plan:
    sampling = _trial_sampling(judge.sampling, trial)
    dummy = [{"role": "user", "content": _MESSAGES_MARK}]
    body = request_body(judge.profile, judge.model, dummy, sampling, judge.prompt.labels)
    body["messages"] = _MESSAGES_MARK  # same place in the key order: filled per root
    text = ledger.manifest_hash + "\n"
    text += canonical_json(_key_mapping(_ROOT_MARK, judge, order, trial, body))
    root_mark, messages_mark = canonical_json(_ROOT_MARK), canonical_json(_MESSAGES_MARK)
    pieces: tuple[str, str, str] | None = None
    root_first = False
    if text.count(root_mark) == 1 and text.count(messages_mark) == 1:
        r, m = text.index(root_mark), text.index(messages_mark)
        root_first = r < m
        (a, a_len), (b, b_len) = sorted(((r, len(root_mark)), (m, len(messages_mark))))
        pieces = (text[:a], text[a + a_len : b], text[b + b_len :])
    body_text = canonical_json(body)
    body_pieces: tuple[str, str] | None = None
    if body_text.count(messages_mark) == 1:
        cut = body_text.index(messages_mark)
        body_pieces = (body_text[:cut], body_text[cut + len(messages_mark) :])
    plan = _Plan(judge, order, trial, body, pieces, root_first, body_pieces)
    if (pieces is not None or body_pieces is not None) and sample is not None:
        # the templates must give what the whole computation gives (else they are not used)
        messages = render_messages(judge.prompt, sample, order)
        whole = request_body(judge.profile, judge.model, messages, sampling, judge.prompt.labels)
        messages_json = canonical_json(messages)
        fast = _fill(plan, sample.id, messages, canonical_json(sample.id), messages_json)
        key = ledger.request_key(_key_mapping(sample.id, judge, order, trial, whole))
        if fast[0] != whole or list(fast[0]) != list(whole) or fast[1] not in (key, None):
            pieces = None
        if body_pieces is not None:
            text = body_pieces[0] + messages_json + body_pieces[1]
            if text != canonical_json(fast[0]):
                body_pieces = None
        plan = _Plan(judge, order, trial, body, pieces, root_first, body_pieces)
    return plan


def _fill(
    plan: _Plan, root_id: str, messages: list[dict[str, str]], root_json: str, messages_json: str
) -> tuple[dict[str, Any], str | None]:
    """A cell's body and (when the plan has a template) its key's canonical text hashed."""
    body = dict(plan.body)
    body["messages"] = messages
    if plan.pieces is None:
        return body, None
    a, b = (root_json, messages_json) if plan.root_first else (messages_json, root_json)
    head, mid, tail = plan.pieces
    return body, hashlib.sha256((head + a + mid + b + tail).encode("utf-8")).hexdigest()


def build_cells(
    roots: Sequence[Stimulus], judges: Sequence[LiveJudge], trials: int, ledger: Ledger
) -> list[Cell]:
    """Every cell of every root, in dispatch order, with its request body and ledger key.

    A cell's key is ``ledger.request_key`` of {root_id, judge, order, trial, url, body}. Its
    canonical JSON is the same text for every root but for the root's id and the messages, so
    that text is made once per (judge, order, trial) and each root's id and messages are
    serialised once (the messages once per root, order and prompt, whatever the judges and
    trials) and spliced in: the same bytes as serialising each mapping whole, at a fraction of
    the cost (a resumed study recomputes every key). The body's own canonical JSON is made the
    same way (``Cell.text``: the plan's text cut around the messages, and the root's messages
    as serialised for the key): it is what the ledger records and, byte for byte, what is sent,
    so a request costs no serialisation when it is asked. The first root's cells are checked
    against the whole computation; a template that differs, or whose markers do not cut it
    cleanly, is not used.
    """
    sample = roots[0] if roots else None
    plans = [
        [
            [_plan(judge, order, trial, ledger, sample) for trial in range(trials)]
            for order in ORDERS
        ]
        for judge in judges
    ]
    cells = []
    for i, stim in enumerate(roots):
        root_json = canonical_json(stim.id)
        rendered: dict[tuple[PromptTemplate, str], tuple[list[dict[str, str]], str]] = {}
        for judge, by_order in zip(judges, plans, strict=True):
            for order, by_trial in zip(ORDERS, by_order, strict=True):
                got = rendered.get((judge.prompt, order))
                if got is None:
                    messages = render_messages(judge.prompt, stim, order)
                    got = rendered[(judge.prompt, order)] = (messages, canonical_json(messages))
                for plan in by_trial:
                    body, key = _fill(plan, stim.id, got[0], root_json, got[1])
                    if key is None:
                        key = ledger.request_key(
                            _key_mapping(stim.id, judge, order, plan.trial, body)
                        )
                    bp = plan.body_pieces
                    text = None if bp is None else (bp[0], got[1], bp[1])
                    cells.append(Cell(i, stim.id, judge.name, order, plan.trial, body, key, text))
    return cells


async def run_live(
    roots: Sequence[Stimulus],
    judges: Sequence[LiveJudge],
    trials: int,
    ledger: Ledger,
    transport: Transport,
    tracks: TrackStream,
    root_value: Callable[
        [int, Mapping[tuple[str, str, int], tuple[str, float | None]]], tuple[float, float]
    ],
    human_value: Callable[[int], tuple[float, float] | None],
    *,
    cap: int,
    budget: float | None = None,
    spent_before: float = 0.0,
    retry: RetryPolicy | None = None,  # overrides every judge's own policy (tests)
    seed: int = 0,
    progress: Callable[[LiveOutcome, TrackStream], None] | None = None,
    sleep: Callable[[float], Awaitable[None]] = asyncio.sleep,
    heartbeat: float = 1.0,
) -> LiveOutcome:
    """Run (or resume) the live study until the registered verdict, the cap, the budget or the
    end of the roots; see the module docstring. ``root_value(i, cells)`` turns root i's answered
    cells {(judge, order, trial): (choice, p_treatment)} into M_i's bounds (the study's policy,
    and any judges read from files); ``human_value(i)`` is H_i's bounds or None. Every
    ``heartbeat`` seconds a ``run_progress`` event records the wall-clock time (``t``), so a
    killed run's duration is still known (``verdictpack status``)."""
    t0 = time.perf_counter()
    outcome = LiveOutcome(committed=tracks.roots)
    by_name = {j.name: j for j in judges}
    # each judge's URL and request headers, made once (the same for every request it is sent)
    wire = {
        j.name: (j.endpoint, (("content-type", "application/json"), *j.headers)) for j in judges
    }
    n = min(cap, len(roots))
    cells = build_cells(roots[:n], judges, trials, ledger)
    per_root = len(judges) * 2 * trials
    stored = ledger.answer_choices()
    results: dict[str, Answer] = {}
    for c in cells:
        a = stored.get(c.key)
        if a is not None:
            results[c.key] = Answer(*a)
            outcome.cached += 1
    # the calls an earlier run sent and never settled (it was killed): counted as spent at their
    # worst case, recorded below as cancelled "killed in flight"; they are asked again
    killed = ledger.open_sent()
    # worst cases of the calls whose sent record waits for its group (not yet in the ledger)
    queued = [0.0]
    in_flight: dict[str, float] = {}
    done = asyncio.Event()
    wake = asyncio.Event()  # set whenever the main loop has something to look at
    # the ledger writes waiting for the next group, in the order they happened: (the record
    # call, its arguments, the answer it records, or the gate a sent call waits behind, or None)
    writes: list[
        tuple[Callable[..., None], tuple[Any, ...], _Landed | asyncio.Future[None] | None]
    ] = []
    gates: list[asyncio.Future[None]] = []  # sent records staged: released once durable
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

    # each judge's worst cases scaled by the largest billed/worst-case ratio seen (docstring)
    scale = dict.fromkeys(by_name, 1.0)

    def worst_case(c: Cell) -> float:
        """The cell's call at its prompt's bound and max_tokens, unscaled."""
        judge = by_name[c.judge]
        messages = c.body.get("messages", [])
        return max_call_cost(judge.price, prompt_token_bound(messages), judge.sampling.max_tokens)

    def observe(c: Cell, cost: float, worst: float) -> None:
        """A call of ``c`` billed ``cost`` against its unscaled worst case ``worst``."""
        if cost > worst * scale[c.judge] and worst > 0.0:
            scale[c.judge] = cost / worst

    for c in cells:  # the answers of earlier runs: a cheap screen before the exact bound
        held = results.get(c.key)
        if held is None or held.cost <= 0.0:
            continue
        judge = by_name[c.judge]
        chars = sum(len(str(m.get("content") or "")) for m in c.body.get("messages", []))
        if held.cost > max_call_cost(judge.price, chars, judge.sampling.max_tokens):
            observe(c, held.cost, worst_case(c))

    def fits(estimate: float) -> bool:
        """The hard cap: everything the ledger counts (answers, failures and cancellations at
        their cost, sent calls unsettled at their worst case), the sent calls not yet in it,
        and this call's worst case, within the budget."""
        if budget is None:
            return True
        return spent_before + ledger.spend().total + queued[0] + estimate <= budget

    async def ask(c: Cell) -> None:
        judge = by_name[c.judge]
        worst = worst_case(c)
        estimate = worst * scale[c.judge]
        if not fits(estimate):
            raise _OverBudget
        in_flight[c.key] = estimate  # until its answer is recorded (or the call fails)
        key = c.key
        handed = False

        async def metered(request: HttpRequest) -> HttpResponse:
            """One call: within the budget, in the ledger (durable) before it leaves, settled
            as failed when no response came (worst case) or an error status did (0)."""
            if not fits(estimate):
                raise _OverBudget
            gate: asyncio.Future[None] = asyncio.get_running_loop().create_future()
            queued[0] += estimate
            attempt = ledger.sent_count(key) + 1
            writes.append((ledger.record_sent, (key, attempt, estimate), gate))
            wake.set()
            await gate  # the group holding the sent record is committed (FULL)
            try:
                response = await transport.send(request)
            except TransportError as exc:
                writes.append((ledger.record_failed, (key, estimate, f"{exc.kind}"), None))
                raise
            if not 200 <= response.status < 300:
                writes.append((ledger.record_failed, (key, 0.0, f"{response.status}"), None))
            return response

        def note(attempt: int, what: int | LiveError, delay: float | None) -> None:
            after = "no further try" if delay is None else f"next try in {delay:.3f} s"
            writes.append((ledger.record_attempt, (key, attempt, f"{what}; {after}"), None))

        try:
            # the body's canonical JSON: what the ledger records and, byte for byte, what is sent
            text = canonical_json(c.body) if c.text is None else "".join(c.text)
            writes.append(
                (
                    _record_request,
                    (ledger, c.key, c.root_id, c.judge, c.order, c.trial, c.body, text),
                    None,
                )
            )
            url, headers = wire[c.judge]
            request = HttpRequest("POST", url, headers, text.encode("utf-8"), judge.timeout)
            data: Any = None
            for tries in range(1, _MALFORMED_TRIES + 1):
                response, _attempts = await send_with_retries(
                    _Metered(metered),
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
                writes.append(
                    (
                        ledger.record_attempt,
                        (c.key, 0, "malformed JSON body", response.elapsed),
                        None,
                    )
                )
                if tries < _MALFORMED_TRIES:  # billed all the same: its usage, else worst case
                    spent = _cost_of(judge.price, None, response.body, estimate)
                    observe(c, spent, worst)
                    writes.append((ledger.record_failed, (key, spent, "malformed body"), None))
            # a 200 costs its usage; without one (a body cut off or silent) its worst case
            usage = _reported_usage(data, response.body)
            cost = _cost_of(judge.price, data, response.body, estimate)
            observe(c, cost, worst)
            if data is None:  # paid for, unreadable: an invalid judgment, never a lost one
                data = {}
            extraction = extract_choice(data, judge.prompt.labels)
            choice, p_t = canonical_choice(extraction, c.order)
            prompt_tokens, completion_tokens = usage or (0, 0)
            fields = {
                # a server's text, kept: credentials it echoed are blanked (never stored)
                "raw": redact(response.body.decode("utf-8", errors="replace"), request),
                "prompt_tokens": prompt_tokens,
                "completion_tokens": completion_tokens,
                "cost": cost,
                "model_id": _redacted_id(model_id_of(data), request),
                "latency": response.elapsed,
                "choice": choice,
                "path": extraction.path,
                "p_treatment": p_t,
            }
            item = _Landed(c, fields, Answer(choice, p_t, extraction.path, cost))
            writes.append((_record_answer, (ledger, item), item))
            handed = True
        finally:
            if not handed:
                in_flight.pop(c.key, None)
            wake.set()

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
                except _OverBudget:  # nothing more is sent; the calls in flight land
                    stop_dispatch[0] = True
                    if outcome.stop != "verdict":
                        outcome.stop = "budget"
                    wake.set()
                    return
                except (HttpStatusError, RetriesExhausted, VerdictpackError) as exc:
                    failure.append(exc)
                    stop_dispatch[0] = True
                    wake.set()
                    return

    next_root = [tracks.roots]

    def commit_ready() -> None:
        """Commit every root, in the registered order, whose cells are all answered."""
        while next_root[0] < n and not tracks.stopped:
            i = next_root[0]
            mine = cells[i * per_root : (i + 1) * per_root]
            if not all(c.key in results for c in mine):
                return
            answered = {
                (c.judge, c.order, c.trial): (results[c.key].choice, results[c.key].p_treatment)
                for c in mine
            }
            m = root_value(i, answered)
            h = human_value(i)
            tracks.step(m, h, at_cap=i + 1 == n)
            lo, hi = tracks.interval("registered")
            state = {"registered": tracks.state_labels()["registered"], "h_interval": [lo, hi]}
            ledger.commit_root(i + 1, roots[i].id, m, h, _json_bytes(state).decode("utf-8"))
            outcome.committed = i + 1
            next_root[0] = i + 1
            if progress is not None:
                progress(outcome, tracks)

    def stage(commit: bool) -> None:
        """Make every waiting write (and, ``commit``, the commits of the roots they complete)
        inside the open batch. A write the ledger refuses stops the run (failed, its reason)."""
        done_writes = 0
        try:
            for record, args, item in writes:
                try:
                    record(*args)
                except VerdictpackError as exc:
                    failure.append(exc)
                    stop_dispatch[0] = True
                    if isinstance(item, _Landed):
                        in_flight.pop(item.cell.key, None)
                    elif isinstance(item, asyncio.Future):  # never sent: the call fails
                        queued[0] -= args[2]
                        if not item.done():
                            item.set_exception(exc)
                    elif record is _record_request:  # never held: nothing to cancel later
                        in_flight.pop(args[1], None)
                    done_writes += 1
                    continue
                done_writes += 1
                if isinstance(item, _Landed):
                    results[item.cell.key] = item.answer
                    in_flight.pop(item.cell.key, None)
                elif isinstance(item, asyncio.Future):  # in the ledger now; leaves once durable
                    queued[0] -= args[2]
                    gates.append(item)
        finally:  # an interruption leaves the writes not yet made waiting, not lost
            del writes[:done_writes]
        if commit:
            commit_ready()

    # the group's COMMIT (its fsync) runs in this thread while the event loop goes on; between
    # begin_batch and the commit's end only this code touches the ledger
    syncer = concurrent.futures.ThreadPoolExecutor(1, thread_name_prefix="verdictpack-ledger")
    syncing: list[concurrent.futures.Future[None]] = []

    async def write_group() -> None:
        """One group: stage the writes in a batch, then wait for its commit off the loop."""
        ledger.begin_batch()
        try:
            stage(commit=True)
        except BaseException:
            ledger.commit_batch()  # what was staged is kept, as ``batch`` does; then raise
            raise
        syncing.append(syncer.submit(ledger.commit_batch))
        # shielded: a cancelled run still waits for this commit (in the finally below)
        await asyncio.shield(asyncio.wrap_future(syncing[-1]))
        syncing.clear()
        for gate in gates:  # their sent records are durable: the calls may leave
            if not gate.done():
                gate.set_result(None)
        gates.clear()

    workers: list[asyncio.Task[None]] = []
    for endpoint, lim in limits.items():
        for _ in range(max(1, lim.concurrency)):
            task = asyncio.create_task(worker(endpoint))
            task.add_done_callback(lambda _t: wake.set())
            workers.append(task)
    synced = True
    # what exists now (the cells, the ledger's answers, every module) lives through the run:
    # kept out of the collector's passes, which would otherwise walk it again and again while
    # the run allocates (a fifth to a quarter of the time of a fast run); objects made during
    # the run are collected as usual. Only when nothing else froze objects (unfreeze is global).
    frozen = gc.isenabled() and gc.get_freeze_count() == 0
    if frozen:
        gc.freeze()
    beat = asyncio.get_running_loop().call_later(heartbeat, wake.set)  # wakes the loop below
    next_beat = time.monotonic() + heartbeat
    try:
        with ledger.batch():
            for key, worst in killed.items():
                ledger.record_cancelled(key, worst, "killed in flight")
            commit_ready()  # the roots a resumed study already holds every answer of
        while next_root[0] < n and not tracks.stopped:
            if time.monotonic() >= next_beat:  # the run's heartbeat, durable with its group
                writes.append((_heartbeat, (ledger,), None))
                next_beat = time.monotonic() + heartbeat
                beat = asyncio.get_running_loop().call_later(heartbeat, wake.set)
                await write_group()
                continue
            if any(item is not None for _, _, item in writes):
                await write_group()
                continue
            if all(w.done() for w in workers) or (stop_dispatch[0] and not in_flight):
                break
            wake.clear()
            await wake.wait()
        if tracks.stopped:
            reached = tracks.verdicts["registered"]
            outcome.stop = "cap" if reached == "INCONCLUSIVE" else "verdict"
        elif failure:
            outcome.stop = "failed"
            outcome.message = str(failure[0])
        elif outcome.stop != "budget":
            outcome.stop = "data"
    finally:
        beat.cancel()
        done.set()
        stop_dispatch[0] = True
        for w in workers:
            w.cancel()
        await asyncio.gather(*workers, return_exceptions=True)
        for fut in syncing:  # a commit still running in the thread: the ledger is its until done
            concurrent.futures.wait([fut])
            synced = fut.exception() is None
        syncer.shutdown(wait=True)
        if synced:
            # a sent record still waiting for its group: its call never left
            writes[:] = [w for w in writes if not isinstance(w[2], asyncio.Future)]
            if writes:  # what landed as the run ended (answers are paid for): recorded, no commit
                with ledger.batch():
                    stage(commit=False)
            # every call sent and not settled (in flight, or landed unrecorded) may be billed:
            # cancelled at its worst case
            with ledger.batch():
                for key, worst in ledger.open_sent().items():
                    ledger.record_cancelled(key, worst, outcome.stop)
                    outcome.cancelled += 1
                    outcome.cancelled_cost += worst
        if frozen:
            gc.unfreeze()
        outcome.seconds = time.perf_counter() - t0
    return outcome


def _heartbeat(ledger: Ledger) -> None:
    """A run's heartbeat: the wall-clock time (seconds since the epoch, to the millisecond)."""
    ledger.record_event("run_progress", {"t": round(time.time(), 3)})


def _record_request(
    ledger: Ledger,
    key: str,
    root_id: str,
    judge: str,
    order: str,
    trial: int,
    body: Mapping[str, Any],
    text: str,
) -> None:
    ledger.record_request(key, root_id, judge, order, trial, body, canonical=text)


def _record_answer(ledger: Ledger, item: _Landed) -> None:
    ledger.record_answer(item.cell.key, **item.fields)


def _json_bytes(body: Mapping[str, Any]) -> bytes:
    import json

    return json.dumps(body, separators=(",", ":"), ensure_ascii=False).encode("utf-8")


def _redacted_id(model_id: str | None, request: HttpRequest) -> str | None:
    """The model id a server reported, credentials it echoed there blanked."""
    return None if model_id is None else redact(model_id, request)


def _json_of(raw: bytes) -> Any:
    """The response's JSON object, or None when the body is not one (a malformed answer)."""
    import json

    try:
        value = json.loads(raw)
    except (ValueError, UnicodeDecodeError):
        return None
    return value if isinstance(value, dict) else None
