"""Per-endpoint limits of live requests: how many in flight, how many started per second.

``async with limits.slot():`` around one attempt waits, in this order, for

1. a **concurrency slot** (an ``asyncio.Semaphore`` of ``concurrency`` slots, first come first
   served), then
2. a **rate token** from a token bucket refilled at ``requests_per_second`` tokens a second,
   holding at most ``burst = max(1, concurrency)`` tokens and full at the start.

Taking the slot first means the rate limits when requests *start*, which is what a provider's
requests-per-minute quota counts. The bucket is a reservation scheme, not a polling loop:
each request takes its token at once (the balance may go negative) and sleeps exactly until the
balance it left behind has been refilled, so waiters are served in arrival order and every wait
is one sleep. A request cancelled while waiting hands its token back. Over any window of T
seconds at most ``burst + requests_per_second * T`` requests start.

``requests_per_second=None`` means no rate limit (slots only). ``clock`` (monotonic seconds)
and ``sleep`` are injectable so tests run on a fake clock without real waiting. An instance
belongs to one event loop (its semaphore binds to the loop that first waits on it).
"""

from __future__ import annotations

import asyncio
import math
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from typing import Any

from verdictpack._errors import InputError

__all__ = ["EndpointLimits"]


class EndpointLimits:
    """Concurrency slots and a request-rate token bucket for one endpoint (module docstring)."""

    def __init__(
        self,
        concurrency: int,
        requests_per_second: float | None = None,
        *,
        clock: Callable[[], float] = time.monotonic,
        sleep: Callable[[float], Awaitable[Any]] = asyncio.sleep,
    ) -> None:
        if (
            not isinstance(concurrency, int)
            or isinstance(concurrency, bool)
            or not 1 <= concurrency <= 10_000
        ):
            raise InputError("concurrency", "an integer in 1..10000", concurrency)
        if requests_per_second is not None and (
            not isinstance(requests_per_second, int | float)
            or isinstance(requests_per_second, bool)
            or not math.isfinite(requests_per_second)
            or requests_per_second <= 0
        ):
            raise InputError(
                "requests_per_second",
                "a finite number > 0, or null for no rate limit",
                requests_per_second,
            )
        self.concurrency = concurrency
        self.requests_per_second = (
            None if requests_per_second is None else float(requests_per_second)
        )
        self.burst = max(1, concurrency)
        self._clock = clock
        self._sleep = sleep
        self._slots = asyncio.Semaphore(concurrency)
        self._tokens = float(self.burst)
        self._stamp = clock()
        self.in_flight = 0
        self.max_in_flight = 0
        self.started = 0

    def __repr__(self) -> str:
        return (
            f"EndpointLimits(concurrency={self.concurrency}, "
            f"requests_per_second={self.requests_per_second}, in_flight={self.in_flight})"
        )

    def _take_token(self) -> float:
        """Take one token; return how long to sleep until it is really there (0 if it is)."""
        rate = self.requests_per_second
        if rate is None:
            return 0.0
        now = self._clock()
        elapsed = max(0.0, now - self._stamp)
        self._stamp = max(self._stamp, now)
        self._tokens = min(float(self.burst), self._tokens + elapsed * rate)
        self._tokens -= 1.0
        return 0.0 if self._tokens >= 0 else -self._tokens / rate

    @asynccontextmanager
    async def slot(self) -> AsyncIterator[None]:
        """Hold a concurrency slot and a spent rate token for the body of the block."""
        async with self._slots:
            wait = self._take_token()
            if wait > 0:
                try:
                    await self._sleep(wait)
                except BaseException:
                    self._tokens += 1.0  # the request never started: its token goes back
                    raise
            self.in_flight += 1
            self.started += 1
            self.max_in_flight = max(self.max_in_flight, self.in_flight)
            try:
                yield
            finally:
                self.in_flight -= 1
