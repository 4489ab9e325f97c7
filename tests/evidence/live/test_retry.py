"""Retries: the delay rule (full-jitter backoff, Retry-After / retry-after-ms as a floor, the
cap), which outcomes are retried, the attempt hook, and the errors at the end. Unit tests over
MockTransport with an injected sleep (nothing waits for real); one end-to-end run over the
real transport and test server with every fault kind switched on."""

from __future__ import annotations

import asyncio
import json
import math
import random
from datetime import UTC, datetime
from email.utils import format_datetime

import pytest
from oai_server import Faults, ServerConfig, serve

from verdictpack._errors import InputError
from verdictpack.evidence.live._retry import (
    DEFAULT_RETRY_STATUSES,
    RetryPolicy,
    parse_retry_after,
    reason_of,
    retry_delay,
    send_with_retries,
)
from verdictpack.evidence.live._transport import (
    HttpRequest,
    HttpResponse,
    HttpStatusError,
    HttpxTransport,
    LiveError,
    MockTransport,
    RequestTimeout,
    RetriesExhausted,
    TransportError,
)

URL = "http://127.0.0.1:9/v1/chat/completions"
REQUEST = HttpRequest("POST", URL, (("Authorization", "Bearer sk-abcdef123456"),), b"{}", 1.0)
NOW = 1_800_000_000.0


def _resp(status: int, headers: dict | None = None, body: object = None) -> HttpResponse:
    raw = b"" if body is None else body if isinstance(body, bytes) else json.dumps(body).encode()
    return HttpResponse(status, headers or {}, raw, 0.01)


class Script:
    """A handler playing a fixed list of outcomes, and a sleep that only records."""

    def __init__(self, *outcomes: HttpResponse | TransportError) -> None:
        self.outcomes = list(outcomes)
        self.sleeps: list[float] = []

    def __call__(self, request: HttpRequest) -> HttpResponse:
        outcome = self.outcomes.pop(0)
        if isinstance(outcome, TransportError):
            raise outcome
        return outcome

    async def sleep(self, delay: float) -> None:
        self.sleeps.append(delay)


def _send(script: Script, policy: RetryPolicy | None = None, **kw: object) -> tuple:
    return asyncio.run(
        send_with_retries(
            MockTransport(script),
            REQUEST,
            policy or RetryPolicy(),
            judge="judge-x",
            rng=random.Random(7),
            sleep=script.sleep,
            **kw,  # type: ignore[arg-type]
        )
    )


# ---- the delay rule ---------------------------------------------------------------------------
def test_backoff_is_full_jitter_doubling_up_to_the_cap() -> None:
    p = RetryPolicy(base_delay=0.5, max_delay=30.0)
    assert [retry_delay(p, n, None, 0.5) for n in range(1, 9)] == [
        0.25,
        0.5,
        1.0,
        2.0,
        4.0,
        8.0,
        15.0,
        15.0,
    ]
    assert retry_delay(p, 3, None, 0.0) == 0.0
    assert retry_delay(p, 3, None, 0.999) == pytest.approx(0.999 * 2.0)
    assert retry_delay(p, 10_000, None, 0.9) == pytest.approx(27.0)  # no overflow


def test_retry_after_seconds_is_a_floor_under_the_cap() -> None:
    p = RetryPolicy(base_delay=0.5, max_delay=30.0)
    assert retry_delay(p, 1, {"retry-after": "7"}, 0.1) == 7.0
    assert retry_delay(p, 8, {"retry-after": "1"}, 0.9) == pytest.approx(27.0)  # backoff larger
    assert retry_delay(p, 1, {"retry-after": "2.5"}, 0.0) == 2.5
    assert retry_delay(p, 1, {"retry-after": "3600"}, 0.0) == 30.0  # capped
    assert retry_delay(p, 1, {"retry-after": "0"}, 0.5) == 0.25


def test_retry_after_http_date_and_milliseconds() -> None:
    p = RetryPolicy()
    date = format_datetime(datetime.fromtimestamp(NOW + 12, tz=UTC), usegmt=True)
    assert retry_delay(p, 1, {"retry-after": date}, 0.0, now=NOW) == pytest.approx(12.0)
    past = format_datetime(datetime.fromtimestamp(NOW - 100, tz=UTC), usegmt=True)
    assert retry_delay(p, 1, {"retry-after": past}, 0.5, now=NOW) == 0.25
    # retry-after-ms wins over retry-after when both are there
    both = {"retry-after-ms": "1500", "retry-after": "20"}
    assert retry_delay(p, 1, both, 0.0) == 1.5
    assert parse_retry_after({"retry-after-ms": "junk", "retry-after": "4"}) == 4.0


@pytest.mark.parametrize(
    "value",
    ["soon", "-3", "nan", "inf", "", "Mon, 99 Foo 2026 00:00:00 GMT", "Sun, 06 Nov 1994 08:49:37"],
)
def test_unusable_retry_after_counts_as_absent(value: str) -> None:
    assert parse_retry_after({"retry-after": value}, now=NOW) is None
    assert retry_delay(RetryPolicy(), 2, {"retry-after": value}, 0.5, now=NOW) == 0.5


def test_delay_arguments_are_checked() -> None:
    for bad in (1.0, -0.1, math.nan):
        with pytest.raises(InputError) as err:
            retry_delay(RetryPolicy(), 1, None, bad)
        assert err.value.parameter == "u"
    with pytest.raises(InputError) as err:
        retry_delay(RetryPolicy(), 0, None, 0.5)
    assert err.value.parameter == "attempt"


@pytest.mark.parametrize(
    ("field", "kwargs"),
    [
        ("max_attempts", {"max_attempts": 0}),
        ("max_attempts", {"max_attempts": 2.5}),
        ("base_delay", {"base_delay": -1}),
        ("max_delay", {"max_delay": math.inf}),
        ("max_delay", {"base_delay": 5, "max_delay": 1}),
        ("retry_statuses", {"retry_statuses": frozenset({200})}),
    ],
)
def test_policy_refuses_bad_fields_by_name(field: str, kwargs: dict) -> None:
    with pytest.raises(InputError) as err:
        RetryPolicy(**kwargs)
    assert err.value.parameter == field


def test_default_policy() -> None:
    p = RetryPolicy()
    assert (p.max_attempts, p.base_delay, p.max_delay) == (6, 0.5, 30.0)
    assert p.retry_statuses == DEFAULT_RETRY_STATUSES
    assert {408, 409, 429, 500, 503, 599} <= p.retry_statuses
    assert not {400, 401, 403, 404, 422} & p.retry_statuses


# ---- send_with_retries -----------------------------------------------------------------------
def test_success_at_once_sleeps_never() -> None:
    script = Script(_resp(200, body={"ok": 1}))
    response, attempts = _send(script)
    assert (response.status, attempts, script.sleeps) == (200, 1, [])


def test_retryable_statuses_and_errors_until_success_with_seeded_jitter() -> None:
    script = Script(
        _resp(503),
        TransportError("dropped", URL, "server closed the connection"),
        RequestTimeout(URL, 1.0),
        _resp(500),
        _resp(200),
    )
    response, attempts = _send(script)
    assert (response.status, attempts) == (200, 5)
    rng = random.Random(7)
    expected = [retry_delay(RetryPolicy(), n, None, rng.random()) for n in range(1, 5)]
    assert script.sleeps == expected


def test_retry_after_is_honoured_by_the_loop() -> None:
    script = Script(
        _resp(429, {"Retry-After": "9"}), _resp(429, {"retry-after-ms": "2500"}), _resp(200)
    )
    _, attempts = _send(script)
    assert attempts == 3
    assert script.sleeps[0] == 9.0 and script.sleeps[1] == 2.5


@pytest.mark.parametrize("status", [400, 401, 403, 404, 422, 301])
def test_other_statuses_fail_at_once_naming_judge_status_reason(status: int) -> None:
    script = Script(
        _resp(
            status, body={"error": {"message": f"nope {status}", "type": "invalid_request_error"}}
        ),
        _resp(200),
    )
    with pytest.raises(HttpStatusError) as err:
        _send(script)
    assert script.sleeps == [] and len(script.outcomes) == 1  # one attempt only
    e = err.value
    assert (e.status, e.judge, e.reason) == (status, "judge-x", f"nope {status}")
    assert "'judge-x'" in str(e) and str(status) in str(e) and f"nope {status}" in str(e)


def test_exhaustion_names_the_last_outcome() -> None:
    script = Script(*[_resp(503, body={"error": {"message": "overloaded"}})] * 3)
    with pytest.raises(RetriesExhausted) as err:
        _send(script, RetryPolicy(max_attempts=3))
    assert (err.value.attempts, err.value.last, err.value.reason) == (3, 503, "overloaded")
    assert "3 attempts" in str(err.value) and "HTTP 503 (overloaded)" in str(err.value)
    assert len(script.sleeps) == 2

    script = Script(*[TransportError("connect", URL, "refused")] * 2)
    with pytest.raises(RetriesExhausted) as err:
        _send(script, RetryPolicy(max_attempts=2))
    assert isinstance(err.value.last, TransportError) and "connect error" in str(err.value)


def test_one_attempt_policy_never_sleeps() -> None:
    script = Script(_resp(500))
    with pytest.raises(RetriesExhausted):
        _send(script, RetryPolicy(max_attempts=1))
    assert script.sleeps == []


def test_custom_retry_statuses() -> None:
    policy = RetryPolicy(retry_statuses=frozenset({404}))
    _, attempts = _send(Script(_resp(404), _resp(200)), policy)
    assert attempts == 2
    with pytest.raises(HttpStatusError):
        _send(Script(_resp(503)), policy)


def test_on_attempt_sees_every_attempt_with_its_delay() -> None:
    calls: list[tuple] = []
    script = Script(_resp(429, {"retry-after": "1"}), TransportError("dropped", URL), _resp(200))
    _send(script, on_attempt=lambda n, what, delay: calls.append((n, what, delay)))
    assert [c[0] for c in calls] == [1, 2, 3]
    assert calls[0][1] == 429 and calls[0][2] == script.sleeps[0]
    assert isinstance(calls[1][1], TransportError) and calls[1][2] == script.sleeps[1]
    assert calls[2] == (3, 200, None)

    calls.clear()
    with pytest.raises(HttpStatusError):
        _send(Script(_resp(400)), on_attempt=lambda n, what, delay: calls.append((n, what, delay)))
    assert calls == [(1, 400, None)]


def test_other_live_errors_and_cancellation_propagate_unretried() -> None:
    def closed(request: HttpRequest) -> HttpResponse:
        raise LiveError("the transport is closed")

    script = Script()
    with pytest.raises(LiveError, match="closed") as err:
        asyncio.run(
            send_with_retries(
                MockTransport(closed),
                REQUEST,
                RetryPolicy(),
                judge="j",
                rng=random.Random(0),
                sleep=script.sleep,
            )
        )
    assert not isinstance(err.value, RetriesExhausted) and script.sleeps == []

    async def cancelled() -> None:
        async def hang(request: HttpRequest) -> HttpResponse:
            await asyncio.sleep(30)
            raise AssertionError("not reached")

        task = asyncio.create_task(
            send_with_retries(
                MockTransport(hang), REQUEST, RetryPolicy(), judge="j", rng=random.Random(0)
            )
        )
        await asyncio.sleep(0.01)
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task

    asyncio.run(cancelled())


def test_reason_of_reads_the_common_error_shapes() -> None:
    assert reason_of(_resp(400, body={"error": {"message": "bad  \n thing"}})) == "bad thing"
    assert reason_of(_resp(400, body={"error": "flat"})) == "flat"
    assert reason_of(_resp(400, body={"object": "error", "message": "vllm says"})) == "vllm says"
    assert reason_of(_resp(422, body={"detail": "fastapi says"})) == "fastapi says"
    assert reason_of(_resp(502, body=b"<html>Bad gateway</html>")) == "<html>Bad gateway</html>"
    assert reason_of(_resp(404)) == "Not Found"
    assert reason_of(_resp(400, body={"unrelated": 1})) == "Bad Request"
    long = reason_of(_resp(400, body={"error": {"message": "x" * 1000}}))
    assert len(long) == 300 and long.endswith("...")
    echoed = _resp(401, body={"error": {"message": "bad key Bearer sk-abcdef123456"}})
    assert "sk-abcdef123456" not in reason_of(echoed, REQUEST)


# ---- end to end: every fault, real transport, real server ----------------------------------------
def test_every_fault_kind_is_survived_over_the_real_transport() -> None:
    faults = Faults(
        rate_limit=0.15,
        retry_after="3",
        server_error=0.15,
        stall=0.05,
        stall_seconds=30.0,  # cut short when the server stops
        drop=0.1,
        max_delay=0.01,
        max_faulty_attempt=3,  # the 4th attempt of any request is clean: all must succeed
    )
    seen: list[tuple[object, float | None]] = []

    async def fake_sleep(delay: float) -> None:
        return None

    async def go(url: str) -> list[int]:
        async with HttpxTransport(trust_env=False) as t:

            async def one(i: int) -> int:
                content = f"case {i}"
                body = json.dumps(
                    {"model": "judge", "messages": [{"role": "user", "content": content}]}
                )
                req = HttpRequest("POST", url.chat_url, (), body.encode(), 1.5)
                _, attempts = await send_with_retries(
                    t,
                    req,
                    RetryPolicy(),
                    judge="judge",
                    rng=random.Random(i),
                    sleep=fake_sleep,
                    on_attempt=lambda n, what, delay: seen.append((what, delay)),
                )
                return attempts

            return await asyncio.gather(*(one(i) for i in range(60)))

    with serve(ServerConfig(faults=faults, seed=5)) as url:
        attempts = asyncio.run(go(url))
        counts = url.counts()
    # every request succeeded; the server saw no attempt the client did not make (a client
    # deadline on a busy machine may pass before the server reads an attempt: hence >=)
    assert counts["ok"] == 60 and max(attempts) <= 4 and sum(attempts) >= counts["requests"]
    for kind in ("rate_limited", "server_error", "stall", "drop"):
        assert counts.get(kind, 0) > 0, kind
    # Retry-After: 3 is the floor of every wait after a 429 (backoff alone stays below 2 s here)
    assert sum(1 for what, _ in seen if what == 429) == counts["rate_limited"]
    assert all(delay == 3.0 for what, delay in seen if what == 429)
    assert all(delay is not None and delay < 3.0 for what, delay in seen if what in {500, 503})
    assert sum(1 for what, _ in seen if isinstance(what, RequestTimeout)) >= counts["stall"]
    assert [delay for what, delay in seen if what == 200] == [None] * 60
