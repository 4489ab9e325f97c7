"""Throughput of the live path (HTTP, extraction, ledger, prefix commits, trackers) and its resume.

The OpenAI-compatible test server (tests/evidence/live/oai_server.py) runs in a subprocess on
127.0.0.1, so the client measured here has the interpreter to itself. Workload (fixed, seeded):
roots whose texts carry the server's ``<<treatment>>`` / ``<<null>>`` markers (a source of about
60 words, two responses of about 40), one judge (profile ``openai``: a JSON-schema answer with
logprobs), ``--trials`` trials per presentation order, so 2 x trials judgments a root. Timed,
each the median of ``--repeats`` runs, interleaved so both variants see the same machine load:

* **bare httpx**: an ``httpx.AsyncClient`` (one pool of ``c`` connections) posting the very
  bodies the live run sends, ``c`` workers, reading each response's JSON, nothing else (the
  reference of the acceptance);
* **bare, pools of 1** (for ``c`` > 1): the same over ``c`` clients of one connection each,
  as :class:`HttpxTransport` splits its connections (httpcore's pool does work proportional to
  its connections on every request, so one client of 32 or 64 is CPU-bound in that bookkeeping:
  this is the stronger reference at high concurrency);
* **live path**: :func:`verdictpack.evidence.live._runner.run_live` over
  :class:`HttpxTransport` with a fresh ledger in a temporary folder (``--dir``: put it on the
  disk study folders live on, fsync costs what it costs there), the three tracks of
  :class:`TrackStream`, the judge's concurrency ``c``, no humans (the tracks never stop before the
  cap, so every root is asked and committed).

Settings: concurrency 1, 8 and 32 (and ``--also`` others) with no server latency, the
judgments/s of both variants and their ratio (the acceptance: the live path at least 1,000
judgments/s and at least half the bare rate, judged at concurrency 8, a judge's default
``concurrency`` and the README's example); concurrency 64 with 100 ms of server latency per
answer (the ceiling is 640/s; the acceptance asks for 80 % of it), the live path over
``--latency-judgments`` (6,400: a 10 s run, so connection set-up and the last wave weigh
little), the bare loops over ``--latency-bare-judgments`` (1,600). Rates are judgments sent
over the whole call's seconds (``run_live`` from its start: building the cells included).

Resume: a ledger of ``--resume-roots`` roots (default 12,500) x 4 judges x 2 orders = 100,000
answers, written directly with the Ledger API (batches of roots) under the keys ``build_cells``
gives, every root committed but the last 10. Timed on a fresh copy each repeat: the whole resume
path of a live study -- ``Ledger.open``, ``committed()``, the replay of the committed prefix into
a ``TrackStream`` (as kinds/_study_live.py does), then ``run_live`` (``build_cells`` keys,
``answers_by_key``, the 10 roots committed from the ledger's answers, no request sent); the
acceptance asks for at most 5 s.

Usage: python benchmarks/bench_live.py [--repeats 3] [--judgments 4000] [--also 16]
       [--only throughput|latency|resume] [--dir DIR]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import random
import shutil
import statistics
import sys
import tempfile
import time
from collections.abc import Mapping
from pathlib import Path

import httpx
import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests" / "evidence" / "live"))
from common import machine, report
from oai_server import ServerConfig, Sheet, serve

from verdictpack.core._mixture import MixtureSpec
from verdictpack.core._tracks import TrackSettings, TrackStream
from verdictpack.evidence._ledger import LEDGER_FILENAME, Ledger, canonical_json
from verdictpack.evidence.live._prices import Price
from verdictpack.evidence.live._profiles import Sampling
from verdictpack.evidence.live._prompts import DEFAULT_PROMPT
from verdictpack.evidence.live._runner import LiveJudge, build_cells, run_live
from verdictpack.evidence.live._transport import HttpResponse, HttpxTransport, MockTransport
from verdictpack.stimuli._stimulus import Stimulus

MANIFEST = {"format": 1, "bench": "live", "seed": 15}
CLAIMS = {"registered": "at 0.3", "extension": "at 0.2", "comparison": "at 0.3"}
# fmt: off
WORDS = (
    "the", "model", "answer", "states", "a", "figure", "of", "twelve", "percent", "for",
    "period", "and", "cites", "report", "with", "its", "source", "while", "summary", "keeps",
    "each", "claim", "short", "plain", "reader",
)
# fmt: on
# a choice's score in half units (treatment 2, null 0, tie 1, invalid 1): M_i = sum / (2 cells)
SCORE = {"treatment": 2.0, "null_partner": 0.0, "tie": 1.0, "invalid": 1.0}
# a judge's default concurrency (kinds/_study_config.py) and the README's: the acceptance row
DEFAULT_CONCURRENCY = 8
# connections per pool of HttpxTransport (its default pool_size)
POOL = 1


def _text(rng: random.Random, n: int) -> str:
    return " ".join(rng.choice(WORDS) for _ in range(n))


def make_roots(n: int, seed: int = 15) -> list[Stimulus]:
    rng = random.Random(seed)
    return [
        Stimulus(
            id=f"root-{i:06d}",
            source=_text(rng, 60),
            treatment="<<treatment>> " + _text(rng, 40),
            null_partner="<<null>> " + _text(rng, 40),
        )
        for i in range(n)
    ]


def make_judge(name: str, base_url: str, concurrency: int) -> LiveJudge:
    return LiveJudge(
        name=name,
        base_url=base_url,
        model=name,
        profile="openai",
        sampling=Sampling(temperature=0.0, max_tokens=8, seed=7, top_logprobs=5),
        prompt=DEFAULT_PROMPT,
        price=Price(per_million_input=2.5, per_million_output=10.0),
        concurrency=concurrency,
        timeout=30.0,
    )


def make_tracks() -> TrackStream:
    settings = TrackSettings("hybrid", "corners", 0.05, MixtureSpec(), 0.3, 0.2, CLAIMS)
    return TrackStream(settings, 1 << 30, np.array([]), np.array([]))


def root_value(i: int, cells: Mapping[tuple[str, str, int], tuple[str, float | None]]) -> float:
    total = sum(
        2.0 * p if p is not None and c != "invalid" else SCORE[c] for c, p in cells.values()
    )
    return total / (2 * len(cells))


def no_human(i: int) -> float | None:
    return None


# ---- throughput -----------------------------------------------------------------------------


async def bare(url: str, bodies: list[bytes], concurrency: int, pool: int | None = None) -> float:
    """Seconds for a bare httpx loop to post ``bodies`` at ``concurrency``, reading the JSON:
    one AsyncClient, or (``pool``) clients of that many connections, workers round robin."""
    size = pool or concurrency
    limits = httpx.Limits(max_connections=size, max_keepalive_connections=size)
    clients = [
        httpx.AsyncClient(limits=limits, timeout=30.0, trust_env=False)
        for _ in range(-(-concurrency // size))
    ]
    queue = list(reversed(bodies))
    headers = {"content-type": "application/json"}

    async def worker(client: httpx.AsyncClient) -> None:
        while queue:
            resp = await client.post(url, content=queue.pop(), headers=headers)
            if resp.status_code != 200 or not isinstance(resp.json(), dict):
                raise RuntimeError(f"HTTP {resp.status_code}")

    try:
        t0 = time.perf_counter()
        await asyncio.gather(*(worker(clients[k % len(clients)]) for k in range(concurrency)))
        return time.perf_counter() - t0
    finally:
        for client in clients:
            await client.aclose()


def live(
    base_url: str, roots: list[Stimulus], trials: int, concurrency: int, folder: Path
) -> tuple[float, int]:
    """Seconds of one whole live run from a fresh ledger, and the judgments it sent."""
    judge = make_judge("judge-a", base_url, concurrency)
    ledger = Ledger.open(folder, MANIFEST)
    tracks = make_tracks()

    async def go() -> tuple[float, int]:
        async with HttpxTransport(max_connections=max(concurrency, 1), trust_env=False) as t:
            t0 = time.perf_counter()
            outcome = await run_live(
                roots, [judge], trials, ledger, t, tracks, root_value, no_human, cap=len(roots)
            )
            seconds = time.perf_counter() - t0
        if outcome.committed != len(roots) or outcome.stop not in ("cap", "data"):
            raise SystemExit(f"unexpected live outcome: {outcome}")
        return seconds, outcome.sent

    try:
        return asyncio.run(go())
    finally:
        ledger.close()


def bodies_of(base_url: str, roots: list[Stimulus], trials: int) -> list[bytes]:
    """The request bodies a live run of ``roots`` sends, serialised as the runner does."""
    with tempfile.TemporaryDirectory(prefix="bench_live_keys_") as tmp:
        led = Ledger.open(Path(tmp), MANIFEST)
        try:
            cells = build_cells(roots, [make_judge("judge-a", base_url, 1)], trials, led)
        finally:
            led.close()
    # the runner sends each body's canonical JSON (sorted keys, no whitespace, UTF-8)
    return [canonical_json(c.body).encode("utf-8") for c in cells]


def throughput(args: argparse.Namespace) -> None:
    trials = args.trials
    per_root = 2 * trials
    settings = []
    if args.only in (None, "throughput"):
        settings += [(c, 0.0) for c in sorted({1, DEFAULT_CONCURRENCY, 32, *args.also})]
    if args.only in (None, "latency"):
        settings.append((64, 0.1))
    for concurrency, latency in settings:
        judgments = args.judgments if not latency else args.latency_judgments
        n_roots = -(-judgments // per_root)
        # at 100 ms the bare loops post fewer requests (one client of 64 connections is slow)
        bare_roots = n_roots if not latency else -(-args.latency_bare_judgments // per_root)
        cfg = ServerConfig(
            judges={"judge-a": Sheet(rate=0.7, position_bias=0.05)},
            latency=latency,
            lifetime=3600.0,
            seed=3,
        )
        pooled = f"bare, pools of {POOL}"
        rates: dict[str, list[float]] = {"bare httpx": [], pooled: [], "live path": []}
        with (
            serve(cfg, process=True) as base,
            tempfile.TemporaryDirectory(dir=args.dir, prefix="bench_live_") as tmp,
        ):
            url = base.chat_url
            warm = make_roots(min(50, n_roots), seed=99)
            asyncio.run(bare(url, bodies_of(base, warm, trials), concurrency))
            for run in range(args.repeats):
                # each run asks new roots (a fresh ledger each time); the live run sends what
                # the single-client bare loop just sent (the server answers it the same again)
                roots = make_roots(n_roots, seed=1000 + run)
                bodies = bodies_of(base, roots[:bare_roots], trials)
                seconds = asyncio.run(bare(url, bodies, concurrency))
                rates["bare httpx"].append(len(bodies) / seconds)
                if concurrency > POOL:  # as HttpxTransport splits its connections
                    again = bodies_of(base, make_roots(bare_roots, seed=5000 + run), trials)
                    seconds = asyncio.run(bare(url, again, concurrency, pool=POOL))
                    rates[pooled].append(len(again) / seconds)
                folder = Path(tmp) / f"run{run}"
                folder.mkdir()
                seconds, sent = live(base, roots, trials, concurrency, folder)
                if sent != len(roots) * per_root:
                    raise SystemExit(f"unexpected: {sent} sent, {len(roots) * per_root} expected")
                rates["live path"].append(sent / seconds)
            served = base.counts()
        ideal = f"; ceiling {concurrency / latency:.0f}/s" if latency else ""
        rates = {k: v for k, v in rates.items() if v}
        med = {k: statistics.median(v) for k, v in rates.items()}
        for label, values in rates.items():
            print(
                f"concurrency {concurrency:>2}, latency {latency * 1000:>3.0f} ms, {label:<16}: "
                f"median {med[label]:7.0f} judgments/s (min {min(values):.0f}, "
                f"max {max(values):.0f}; {bare_roots * per_root if 'bare' in label else judgments}"
                f" a run){ideal}"
            )
        line = f"  live / bare: {med['live path'] / med['bare httpx']:.2f}"
        if pooled in med:
            line += f"; live / {pooled[6:]}: {med['live path'] / med[pooled]:.2f}"
        if latency:
            line += f"; live / ceiling: {med['live path'] / (concurrency / latency):.2f}"
        print(line + f"; server answered {served.get('ok', 0)}")
        if concurrency == DEFAULT_CONCURRENCY and not latency:
            ok = med["live path"] >= 1000 and med["live path"] >= 0.5 * med["bare httpx"]
            print(
                f"  acceptance at the default concurrency {concurrency}: live >= 1,000/s and "
                f">= 0.5 x bare: {'met' if ok else 'NOT met'}"
            )


# ---- resume ---------------------------------------------------------------------------------


def raw_answer(rng: random.Random, label: str, model: str) -> str:
    tops = [{"token": t, "logprob": round(rng.uniform(-9, 0), 6)} for t in ('{"', "{", "A")]
    return json.dumps(
        {
            "id": f"chatcmpl-{rng.getrandbits(96):024x}",
            "object": "chat.completion",
            "created": 1700000000,
            "model": model,
            "system_fingerprint": "fp_verdictpack_test",
            "choices": [
                {
                    "index": 0,
                    "message": {"role": "assistant", "content": json.dumps({"choice": label})},
                    "logprobs": {
                        "content": [{"token": '{"', "logprob": -0.01, "top_logprobs": tops}],
                        "refusal": None,
                    },
                    "finish_reason": "stop",
                }
            ],
            "usage": {"prompt_tokens": 187, "completion_tokens": 1, "total_tokens": 188},
        },
        separators=(",", ":"),
    )


RESUME_JUDGES = ("judge-a", "judge-b", "judge-c", "judge-d")
UNCOMMITTED = 10


def build_resume_ledger(folder: Path, roots: list[Stimulus]) -> list[LiveJudge]:
    """A ledger of every root answered by 4 judges x 2 orders, committed but the last 10."""
    judges = [make_judge(name, "http://127.0.0.1:9/v1", 8) for name in RESUME_JUDGES]
    rng = random.Random(16)
    led = Ledger.open(folder, MANIFEST)
    try:
        cells = build_cells(roots, judges, 1, led)
        per_root = len(judges) * 2
        tracks = make_tracks()
        chunk = 250
        for start in range(0, len(roots), chunk):
            with led.batch():
                for i in range(start, min(start + chunk, len(roots))):
                    mine = cells[i * per_root : (i + 1) * per_root]
                    answered = {}
                    for c in mine:
                        led.record_request(c.key, c.root_id, c.judge, c.order, c.trial, c.body)
                        led.record_attempt(c.key, 1, 200, 0.2, 1100)
                        label = "A" if rng.random() < 0.6 else "B"
                        treat = (label == "A") == (c.order == "treatment_first")
                        led.record_answer(
                            c.key,
                            raw=raw_answer(rng, label, c.judge),
                            prompt_tokens=187,
                            completion_tokens=1,
                            cost=187 * 2.5e-6 + 1e-5,
                            model_id=c.judge,
                            latency=0.2,
                            choice="treatment" if treat else "null_partner",
                            path="structured",
                            p_treatment=None,
                        )
                        answered[(c.judge, c.order, c.trial)] = (
                            "treatment" if treat else "null_partner",
                            None,
                        )
                    if i < len(roots) - UNCOMMITTED:
                        m = root_value(i, answered)
                        tracks.step(m, None, at_cap=i + 1 == len(roots))
                        lo, hi = tracks.registered.h_interval
                        state = json.dumps(
                            {
                                "registered": tracks.state_labels()["registered"],
                                "h_interval": [lo, hi],
                            },
                            separators=(",", ":"),
                        )
                        led.commit_root(i + 1, c.root_id, m, None, state)
    finally:
        led.close()
    return judges


def resume_once(path: Path, roots: list[Stimulus], judges: list[LiveJudge]) -> dict[str, float]:
    """The whole resume path on the ledger at ``path``; seconds per phase and in all."""

    def refuse(request: object) -> HttpResponse:
        raise SystemExit("resume sent a request: every answer should come from the ledger")

    times: dict[str, float] = {}
    t0 = time.perf_counter()
    led = Ledger.open(path, MANIFEST)
    times["Ledger.open"] = time.perf_counter() - t0
    try:
        t = time.perf_counter()
        committed = led.committed()
        times["committed"] = time.perf_counter() - t
        t = time.perf_counter()
        tracks = make_tracks()
        n = len(roots)
        for k, c in enumerate(committed):
            if c["root_id"] != roots[k].id:
                raise SystemExit("commits out of the registered order")
            h = None if c["h_lo"] is None else (c["h_lo"], c["h_hi"])
            tracks.step((c["m_lo"], c["m_hi"]), h, at_cap=k + 1 == n)
        times["replay"] = time.perf_counter() - t
        t = time.perf_counter()
        outcome = asyncio.run(
            run_live(
                roots, judges, 1, led, MockTransport(refuse), tracks, root_value, no_human, cap=n
            )
        )
        times["run_live"] = time.perf_counter() - t
    finally:
        led.close()
    times["total"] = time.perf_counter() - t0
    if outcome.committed != n or outcome.sent != 0 or outcome.cached != n * 8:
        raise SystemExit(f"unexpected resume outcome: {outcome}")
    return times


def check_keys(roots: list[Stimulus], judges: list[LiveJudge], trials: int) -> None:
    """build_cells' keys and bodies equal the whole computation (request_key of each mapping)."""
    from verdictpack.evidence.live._profiles import request_body
    from verdictpack.evidence.live._prompts import render_messages

    with tempfile.TemporaryDirectory(prefix="bench_live_check_") as tmp:
        led = Ledger.open(Path(tmp), MANIFEST)
        try:
            cells = iter(build_cells(roots, judges, trials, led))
            for stim in roots:
                for judge in judges:
                    for order in ("treatment_first", "null_first"):
                        messages = render_messages(judge.prompt, stim, order)
                        for trial in range(trials):
                            s = judge.sampling
                            if s.seed is not None and trial:
                                s = Sampling(
                                    s.temperature, s.max_tokens, s.seed + trial, s.top_logprobs
                                )
                            body = request_body(
                                judge.profile, judge.model, messages, s, judge.prompt.labels
                            )
                            key = led.request_key(
                                {
                                    "root_id": stim.id,
                                    "judge": judge.name,
                                    "order": order,
                                    "trial": trial,
                                    "url": judge.endpoint,
                                    "body": body,
                                }
                            )
                            cell = next(cells)
                            if cell.key != key or cell.body != body:
                                raise SystemExit(f"build_cells differs at {cell}")
                            # the spliced canonical text (what is sent and recorded)
                            if cell.text is None or "".join(cell.text) != canonical_json(body):
                                raise SystemExit(f"build_cells' text differs at {cell}")
        finally:
            led.close()


def resume(args: argparse.Namespace) -> None:
    roots = make_roots(args.resume_roots, seed=7)
    check_keys(roots[:50], [make_judge(n, "http://127.0.0.1:9/v1", 8) for n in RESUME_JUDGES], 3)
    with tempfile.TemporaryDirectory(dir=args.dir, prefix="bench_live_resume_") as tmp:
        pristine = Path(tmp) / "pristine"
        pristine.mkdir()
        t0 = time.perf_counter()
        judges = build_resume_ledger(pristine, roots)
        size = (pristine / LEDGER_FILENAME).stat().st_size
        print(
            f"resume ledger: {len(roots) * 8:,} answers, {len(roots) - UNCOMMITTED:,} commits, "
            f"{size / 1e6:.1f} MB, written in {time.perf_counter() - t0:.1f} s"
        )
        runs: list[dict[str, float]] = []
        for r in range(args.repeats):
            copy = Path(tmp) / f"copy{r}"
            copy.mkdir()
            shutil.copy(pristine / LEDGER_FILENAME, copy / LEDGER_FILENAME)
            runs.append(resume_once(copy / LEDGER_FILENAME, roots, judges))
        for phase in runs[0]:
            if phase != "total":
                values = [r[phase] for r in runs]
                print(f"  {phase:<12}: median {statistics.median(values):.3f} s")
        report("resume: open + committed + replay + run_live", [r["total"] for r in runs], 5.0)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--judgments", type=int, default=4000, help="judgments a run, no latency")
    ap.add_argument("--latency-judgments", type=int, default=6400, help="at 100 ms, c = 64")
    ap.add_argument("--latency-bare-judgments", type=int, default=1600, help="bare loops, 100 ms")
    ap.add_argument("--trials", type=int, default=2)
    ap.add_argument("--also", type=int, nargs="*", default=[], help="more concurrencies")
    ap.add_argument("--resume-roots", type=int, default=12_500)
    ap.add_argument("--only", choices=("throughput", "latency", "resume"), default=None)
    ap.add_argument("--dir", type=Path, default=None, help="where the temporary ledgers go")
    args = ap.parse_args()
    print(machine())
    print(f"httpx {httpx.__version__}; median of {args.repeats} runs")
    if args.only in (None, "throughput", "latency"):
        throughput(args)
    if args.only in (None, "resume"):
        resume(args)


if __name__ == "__main__":
    main()
