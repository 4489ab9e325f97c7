"""Throughput of live requests against the OpenAI-compatible test server on 127.0.0.1.

The server (tests/evidence/live/oai_server.py) runs in a subprocess, so the client measured here
has the interpreter to itself. Workload: ``--requests`` chat-completion POSTs with distinct
bodies (a one-line prompt, as a judge call carries), spread over ``c`` workers that each send
one request after another over a shared keep-alive pool of ``c`` connections. Timed, each the
median of ``--repeats`` runs, in requests per second:

* **bare httpx**: ``httpx.AsyncClient.post`` in the loop, nothing else, one client holding
  all ``c`` connections;
* **bare httpx, pools of 8**: the same over ``ceil(c / 8)`` clients of 8 connections each
  (workers assigned round robin): what :class:`HttpxTransport` did before its pools of one
  connection (``pool_size=1``, its default now) over ``httpx.AsyncHTTPTransport``;
* **verdictpack stack**: the same requests through :class:`HttpxTransport`,
  ``send_with_retries`` and an :class:`EndpointLimits` slot (no rate limit), i.e. the per-call
  path of a live study minus prompt rendering, extraction and the ledger.

Three settings: concurrency 1 and 32 with no server latency (client overhead), and concurrency
64 with 100 ms of server latency per answer (the realistic regime: the ideal is 640 requests/s).

Usage: python benchmarks/bench_live_transport.py [--repeats 3] [--requests 2000]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import random
import statistics
import sys
import time
from pathlib import Path

import httpx

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests" / "evidence" / "live"))
from common import machine
from oai_server import ServerConfig, Sheet, serve

from verdictpack.evidence.live._limits import EndpointLimits
from verdictpack.evidence.live._retry import RetryPolicy, send_with_retries
from verdictpack.evidence.live._transport import HttpRequest, HttpxTransport

HEADERS = {"Content-Type": "application/json", "Authorization": "Bearer sk-bench"}


def _bodies(n: int, run: int) -> list[bytes]:
    return [
        json.dumps(
            {
                "model": "judge",
                "messages": [
                    {"role": "system", "content": "Answer with exactly one label: A or B."},
                    {"role": "user", "content": f"A: <<treatment>> text {run}-{i}\nB: <<null>> x"},
                ],
                "max_tokens": 1,
                "temperature": 0,
            }
        ).encode()
        for i in range(n)
    ]


async def _bare(url: str, bodies: list[bytes], concurrency: int, pool: int | None = None) -> float:
    """Bare httpx; ``pool`` splits the connections over clients of that many (round robin)."""
    size = pool or concurrency
    count = -(-concurrency // size)
    limits = httpx.Limits(max_connections=size, max_keepalive_connections=size)
    clients = [
        httpx.AsyncClient(limits=limits, timeout=30.0, trust_env=False) for _ in range(count)
    ]
    queue = list(reversed(bodies))

    async def worker(client: httpx.AsyncClient) -> None:
        while queue:
            resp = await client.post(url, content=queue.pop(), headers=HEADERS)
            if resp.status_code != 200:
                raise RuntimeError(f"HTTP {resp.status_code}")

    t0 = time.perf_counter()
    await asyncio.gather(*(worker(clients[k % count]) for k in range(concurrency)))
    seconds = time.perf_counter() - t0
    for client in clients:
        await client.aclose()
    return seconds


async def _bare_pools(url: str, bodies: list[bytes], concurrency: int) -> float:
    return await _bare(url, bodies, concurrency, pool=8)


async def _stack(url: str, bodies: list[bytes], concurrency: int) -> float:
    limits = EndpointLimits(concurrency, None)
    policy = RetryPolicy()
    rng = random.Random(0)
    headers = tuple(HEADERS.items())
    async with HttpxTransport(max_connections=concurrency, trust_env=False) as transport:
        queue = list(reversed(bodies))

        async def worker() -> None:
            while queue:
                request = HttpRequest("POST", url, headers, queue.pop(), 30.0)
                async with limits.slot():
                    await send_with_retries(transport, request, policy, judge="judge", rng=rng)

        t0 = time.perf_counter()
        await asyncio.gather(*(worker() for _ in range(concurrency)))
        return time.perf_counter() - t0


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--requests", type=int, default=2000, help="requests per timed run")
    args = ap.parse_args()
    print(machine())
    print(f"httpx {httpx.__version__}; {args.requests} requests per run; median of {args.repeats}")
    settings = [(1, 0.0), (32, 0.0), (64, 0.1)]
    for concurrency, latency in settings:
        cfg = ServerConfig(judges={"judge": Sheet(rate=0.6)}, latency=latency, lifetime=1800.0)
        with serve(cfg, process=True) as base:
            url = base.chat_url
            asyncio.run(_bare(url, _bodies(min(200, args.requests), -1), concurrency))  # warm-up
            variants = (
                ("bare httpx", _bare),
                ("bare httpx, pools of 8", _bare_pools),
                ("verdictpack stack", _stack),
            )
            rates: dict[str, list[float]] = {label: [] for label, _ in variants}
            for run in range(args.repeats):
                for k, (label, fn) in enumerate(variants):
                    bodies = _bodies(args.requests, run * len(variants) + k)
                    seconds = asyncio.run(fn(url, bodies, concurrency))
                    rates[label].append(args.requests / seconds)
            served = base.counts()
        ideal = f"; ideal {concurrency / latency:.0f}/s" if latency else ""
        for label, values in rates.items():
            print(
                f"concurrency {concurrency:>2}, latency {latency * 1000:>3.0f} ms, {label:<22}: "
                f"median {statistics.median(values):7.0f} requests/s "
                f"(min {min(values):.0f}, max {max(values):.0f}){ideal}"
            )
        print(
            f"  server: {served.get('ok', 0)} answered, {served.get('connections', 0)} connections"
        )


if __name__ == "__main__":
    main()
