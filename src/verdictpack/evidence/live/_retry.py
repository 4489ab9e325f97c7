"""Retries of live requests: which failures to retry, how long to wait, when to give up.

A failure is *retryable* when no response arrived (:class:`TransportError`, timeouts included)
or the status is in ``RetryPolicy.retry_statuses`` (by default 408, 409, 429 and every 5xx: the
statuses a server uses for "not now"). Any other non-2xx status raises
:class:`HttpStatusError` at once: a request refused as malformed, unauthorised or for an unknown
model is refused again, and retrying it only spends budget.

The wait after failed attempt ``n`` (1-based), :func:`retry_delay`::

    backoff(n) = u * min(max_delay, base_delay * 2**(n-1))        full jitter, u in [0, 1)
    delay(n)   = min(max_delay, max(backoff(n), retry_after))     when the server asked
    delay(n)   = backoff(n)                                       otherwise

where ``retry_after`` is the server's own request, in seconds: the ``retry-after-ms`` header
(milliseconds; sent by OpenAI and Azure OpenAI, and honoured by their SDKs) when present and
valid, else ``Retry-After`` as delta-seconds (a non-negative number; RFC 9110 sec. 10.2.3 asks
for an integer, fractions are accepted) or as an HTTP-date (its distance from now, never
negative). An unparseable value counts as absent. The server's wait is a floor (never retry
sooner than asked, within the cap); ``max_delay`` caps everything, so one misconfigured header
cannot park a study for an hour: a retry sent before the server's time is up meets another 429
and the attempts budget bounds the whole. Full jitter (the whole wait uniform in
[0, backoff)) spreads retries of concurrent requests that failed together. ``u`` comes from the
caller (``send_with_retries`` draws it from its seeded ``rng``) so a delay is a pure function of
its arguments.
"""

from __future__ import annotations

import asyncio
import json
import math
import random
import time
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, field
from email.utils import parsedate_to_datetime
from http import HTTPStatus
from typing import Any

from verdictpack._errors import InputError

from ._transport import (
    HttpRequest,
    HttpResponse,
    HttpStatusError,
    RetriesExhausted,
    Transport,
    TransportError,
    redact,
)

__all__ = [
    "DEFAULT_RETRY_STATUSES",
    "RetryPolicy",
    "parse_retry_after",
    "reason_of",
    "retry_delay",
    "send_with_retries",
]

DEFAULT_RETRY_STATUSES = frozenset({408, 409, 429} | set(range(500, 600)))

OnAttempt = Callable[[int, "int | TransportError", "float | None"], None]


def _finite(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool) and math.isfinite(value)


@dataclass(frozen=True)
class RetryPolicy:
    """How often and how patiently to retry: at most ``max_attempts`` attempts in all (the
    first included), waits from :func:`retry_delay`, retried statuses ``retry_statuses``."""

    max_attempts: int = 6
    base_delay: float = 0.5
    max_delay: float = 30.0
    retry_statuses: frozenset[int] = field(default=DEFAULT_RETRY_STATUSES)

    def __post_init__(self) -> None:
        if (
            not isinstance(self.max_attempts, int)
            or isinstance(self.max_attempts, bool)
            or not 1 <= self.max_attempts <= 100
        ):
            raise InputError("max_attempts", "an integer in 1..100", self.max_attempts)
        if not _finite(self.base_delay) or self.base_delay < 0:
            raise InputError("base_delay", "a finite number of seconds >= 0", self.base_delay)
        if not _finite(self.max_delay) or self.max_delay < self.base_delay:
            raise InputError(
                "max_delay",
                f"a finite number of seconds >= base_delay ({self.base_delay})",
                self.max_delay,
            )
        statuses = self.retry_statuses
        if not isinstance(statuses, frozenset | set) or not all(
            isinstance(s, int) and not isinstance(s, bool) and 400 <= s <= 599 for s in statuses
        ):
            raise InputError(
                "retry_statuses", "a set of HTTP error statuses in 400..599", sorted(statuses)
            )
        object.__setattr__(self, "retry_statuses", frozenset(statuses))


def parse_retry_after(headers: Mapping[str, str] | None, now: float | None = None) -> float | None:
    """The wait in seconds a response asks for (see the module docstring), or None.

    ``headers`` has lower-case names (:class:`HttpResponse` guarantees it); ``now`` is the
    current Unix time for an HTTP-date (default ``time.time()``)."""
    if not headers:
        return None
    raw_ms = headers.get("retry-after-ms")
    if raw_ms is not None:
        try:
            ms = float(raw_ms.strip())
        except ValueError:
            ms = math.nan
        if math.isfinite(ms) and ms >= 0:
            return ms / 1000.0
    raw = headers.get("retry-after")
    if raw is None:
        return None
    raw = raw.strip()
    try:
        seconds = float(raw)
    except ValueError:
        pass
    else:
        return seconds if math.isfinite(seconds) and seconds >= 0 else None
    try:
        when = parsedate_to_datetime(raw)
    except (TypeError, ValueError, IndexError):
        return None
    if when.tzinfo is None:  # an HTTP-date is GMT by definition
        return None
    current = time.time() if now is None else now
    return max(0.0, when.timestamp() - current)


def retry_delay(
    policy: RetryPolicy,
    attempt: int,
    headers: Mapping[str, str] | None,
    u: float,
    *,
    now: float | None = None,
) -> float:
    """Seconds to wait after failed attempt ``attempt`` (1-based); the rule is in the module
    docstring. ``u`` in [0, 1) is the jitter draw; ``now`` the Unix time for an HTTP-date."""
    if not isinstance(attempt, int) or isinstance(attempt, bool) or attempt < 1:
        raise InputError("attempt", "an integer >= 1", attempt)
    if not _finite(u) or not 0 <= u < 1:
        raise InputError("u", "a number in [0, 1)", u)
    # 2**(attempt-1) overflows nothing: the exponent is capped where the product passes max_delay
    exponent = min(attempt - 1, 64)
    ceiling = min(policy.max_delay, policy.base_delay * 2.0**exponent)
    delay = u * ceiling
    asked = parse_retry_after(headers, now)
    if asked is not None:
        delay = max(delay, asked)
    return min(policy.max_delay, delay)


def reason_of(response: HttpResponse, request: HttpRequest | None = None) -> str:
    """The server's explanation of a status, credentials of ``request`` redacted.

    In order: a JSON body's ``error.message`` (OpenAI's shape), ``error`` as a string,
    ``message`` or ``detail`` (vLLM, FastAPI-style servers); else the body's text; else the
    standard reason phrase of the status."""
    text = ""
    try:
        data = json.loads(response.body)
    except (ValueError, UnicodeDecodeError):
        data = None
    if isinstance(data, dict):
        error = data.get("error")
        if isinstance(error, dict) and isinstance(error.get("message"), str):
            text = error["message"]
        elif isinstance(error, str):
            text = error
        else:
            for key in ("message", "detail"):
                if isinstance(data.get(key), str):
                    text = data[key]
                    break
    if not text.strip() and data is None and response.body:
        # the whole body (the transport caps its size): redacted before it is cut, since a cut
        # can split a key that the redaction would otherwise have found whole
        text = response.body.decode("utf-8", errors="replace")
    # redact first, then clip: never the other way round
    text = " ".join(redact(text, request).split())
    if not text:
        try:
            text = HTTPStatus(response.status).phrase
        except ValueError:
            text = "no reason given"
    return text if len(text) <= 300 else text[:297] + "..."


async def send_with_retries(
    transport: Transport,
    request: HttpRequest,
    policy: RetryPolicy,
    *,
    judge: str,
    rng: random.Random,
    sleep: Callable[[float], Awaitable[Any]] = asyncio.sleep,
    on_attempt: OnAttempt | None = None,
) -> tuple[HttpResponse, int]:
    """Send ``request`` until a 2xx response, retrying what the policy retries.

    Returns the response and the number of attempts it took. Raises
    :class:`HttpStatusError` for a status the policy does not retry (at once) and
    :class:`RetriesExhausted` after ``policy.max_attempts`` retryable failures; any other
    exception of the transport (e.g. a closed transport, cancellation) propagates unchanged.
    ``on_attempt(attempt, status_or_error, delay)`` is called after every attempt with its
    status (an int) or its :class:`TransportError`, and the wait before the next attempt
    (None when none follows). The jitter is drawn from ``rng`` (seeded by the caller);
    ``sleep`` does the waiting (inject a fake one in tests).
    """
    attempt = 0
    while True:  # bounded: every pass is an attempt, and the last one returns or raises
        attempt += 1
        headers: Mapping[str, str] | None = None
        reason = ""
        try:
            response = await transport.send(request)
        except TransportError as exc:
            outcome: int | TransportError = exc
        else:
            outcome = response.status
            if 200 <= response.status < 300:
                if on_attempt is not None:
                    on_attempt(attempt, outcome, None)
                return response, attempt
            if response.status not in policy.retry_statuses:
                if on_attempt is not None:
                    on_attempt(attempt, outcome, None)
                raise HttpStatusError(response.status, reason_of(response, request), judge)
            headers = response.headers
            reason = reason_of(response, request)
        if attempt == policy.max_attempts:
            if on_attempt is not None:
                on_attempt(attempt, outcome, None)
            raise RetriesExhausted(judge, attempt, outcome, reason)
        delay = retry_delay(policy, attempt, headers, rng.random())
        if on_attempt is not None:
            on_attempt(attempt, outcome, delay)
        await sleep(delay)
