"""The transport layer: requests and responses as values, the exception tree, the mock, and
the real HttpxTransport against the real test server on 127.0.0.1 (no mocks on that path):
answers, keep-alive, every fault kind mapped to its outcome, deadlines, body caps, and the API
key kept out of every message, repr and traceback."""

from __future__ import annotations

import asyncio
import builtins
import json
import random
import socket
import sys
import time
import traceback
from typing import Any

import pytest
from oai_server import Faults, ServerConfig, Sheet, serve

from verdictpack._errors import InputError, UsageError, VerdictpackError
from verdictpack.evidence.live._retry import RetryPolicy, send_with_retries
from verdictpack.evidence.live._transport import (
    HttpRequest,
    HttpResponse,
    HttpStatusError,
    HttpxTransport,
    LiveError,
    MockTransport,
    RequestTimeout,
    RetriesExhausted,
    Transport,
    TransportError,
    redact,
    safe_url,
)

KEY = "sk-live-6f1c2a9e0b7d4c3f8a5e"


def _request(url: str, tag: int = 0, timeout: float = 5.0, key: str = KEY) -> HttpRequest:
    body = {
        "model": "judge",
        "messages": [{"role": "user", "content": f"A: <<treatment>> B: <<null>> ({tag})"}],
    }
    return HttpRequest(
        "POST",
        f"{url}/chat/completions",
        (("Content-Type", "application/json"), ("Authorization", f"Bearer {key}")),
        json.dumps(body).encode(),
        timeout,
    )


def _run(coro: Any) -> Any:
    return asyncio.run(coro)


def _no_key(*texts: str) -> None:
    for text in texts:
        assert KEY not in text, text


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


# ---- values ---------------------------------------------------------------------------------
def test_request_repr_shows_header_names_never_values() -> None:
    req = _request("https://api.example.test/v1?key=" + KEY)
    text = repr(req)
    assert "Authorization" in text and "Content-Type" in text
    _no_key(text, str(req))
    assert "?key" not in text


@pytest.mark.parametrize(
    ("field", "kwargs"),
    [
        ("method", {"method": "PO ST"}),
        ("url", {"url": "ftp://example.test"}),
        ("headers", {"headers": [("a", "b")]}),
        ("body", {"body": "text"}),
        ("timeout", {"timeout": 0}),
        ("timeout", {"timeout": float("inf")}),
        ("timeout", {"timeout": True}),
    ],
)
def test_request_refuses_bad_fields_by_name(field: str, kwargs: dict) -> None:
    base: dict[str, Any] = {
        "method": "POST",
        "url": "http://127.0.0.1:1/v1",
        "headers": (),
        "body": b"",
        "timeout": 1.0,
    }
    with pytest.raises(InputError) as err:
        HttpRequest(**{**base, **kwargs})
    assert err.value.parameter == field


def test_response_lowercases_header_names_and_refuses_bad_status() -> None:
    resp = HttpResponse(200, {"Retry-After": "3", "X-Thing": "y"}, b"{}", 0.1)
    assert dict(resp.headers) == {"retry-after": "3", "x-thing": "y"}
    with pytest.raises(TypeError):
        resp.headers["new"] = "x"  # type: ignore[index]
    with pytest.raises(InputError) as err:
        HttpResponse(42, {}, b"", 0.0)
    assert err.value.parameter == "status"


def test_redact_blanks_every_credential_form() -> None:
    req = HttpRequest(
        "POST",
        "http://127.0.0.1:1/v1",
        (("Authorization", f"Bearer {KEY}"), ("api-key", "azure-key-123456"), ("X-Other", "keep")),
        b"",
        1.0,
    )
    text = f"got Bearer {KEY}; bare {KEY}; azure azure-key-123456; other keep"
    out = redact(text, req)
    _no_key(out)
    assert "azure-key-123456" not in out and "keep" in out
    assert out.count("<redacted>") == 3
    assert redact("nothing", None) == "nothing"


def test_redact_blanks_any_8_character_run_of_the_key_and_echoed_headers() -> None:
    # issue 22 row 2: the old redaction looked for the whole key only
    req = HttpRequest(
        "POST", "http://127.0.0.1:1/v1", (("Authorization", f"Bearer {KEY}"),), b"", 1.0
    )
    runs = [KEY[i : i + 8] for i in range(len(KEY) - 7)]
    for text in (
        f"key {KEY[:20]}... was cut",  # a body cut mid-key
        f"tail {KEY[-9:]} and middle {KEY[5:14]}",
        f'{{"authorization": "Bearer {KEY[2:]}"}}',
    ):
        out = redact(text, req)
        assert not [r for r in runs if r in out], out
    # credentials echoed whatever the request held: header lines and bearer tokens
    other = "Authorization: Bearer tok-unknown-123\r\nX-Api-Key: other-secret-456\r\nHost: h"
    out = redact(other, None)
    assert "tok-unknown-123" not in out and "other-secret-456" not in out and "Host: h" in out
    # ordinary text is untouched (7 characters of the key are not a run)
    assert redact(f"max tokens; basic plan; {KEY[:7]}", req) == f"max tokens; basic plan; {KEY[:7]}"


def test_safe_url_drops_query_and_user_info() -> None:
    assert safe_url(f"https://user:{KEY}@api.test:8443/v1/x?key={KEY}#f") == (
        "https://api.test:8443/v1/x"
    )


def test_exception_tree() -> None:
    assert issubclass(LiveError, VerdictpackError)
    assert issubclass(TransportError, LiveError)
    assert issubclass(RequestTimeout, TransportError)
    assert issubclass(HttpStatusError, LiveError) and not issubclass(
        HttpStatusError, TransportError
    )
    assert issubclass(RetriesExhausted, LiveError)
    err = HttpStatusError(401, "Incorrect API key provided.", "gpt-judge")
    assert "'gpt-judge'" in str(err) and "401" in str(err) and "Incorrect API key" in str(err)
    exhausted = RetriesExhausted("j", 6, TransportError("dropped", "http://h/v1?key=s", "gone"))
    assert (
        "6 attempts" in str(exhausted)
        and "dropped" in str(exhausted)
        and "key=s" not in str(exhausted)
    )
    assert "HTTP 503 (busy)" in str(RetriesExhausted("j", 2, 503, "busy"))


# ---- the mock -------------------------------------------------------------------------------
def test_mock_transport_sync_and_async_handlers() -> None:
    ok = HttpResponse(200, {}, b"{}", 0.0)

    async def async_handler(request: HttpRequest) -> HttpResponse:
        await asyncio.sleep(0)
        return ok

    async def go() -> None:
        for handler in (lambda r: ok, async_handler):
            t = MockTransport(handler)
            assert isinstance(t, Transport)
            assert await t.send(_request("http://127.0.0.1:1/v1")) is ok
            assert len(t.requests) == 1
            await t.aclose()
            with pytest.raises(LiveError, match="closed"):
                await t.send(_request("http://127.0.0.1:1/v1"))

        def refuse(r: HttpRequest) -> HttpResponse:
            raise TransportError("connect", r.url, "refused")

        with pytest.raises(TransportError):
            await MockTransport(refuse).send(_request("http://127.0.0.1:1/v1"))
        with pytest.raises(InputError) as err:
            await MockTransport(lambda r: "not a response").send(_request("http://127.0.0.1:1/v1"))
        assert err.value.parameter == "handler"

    _run(go())
    with pytest.raises(InputError):
        MockTransport("not callable")  # type: ignore[arg-type]


# ---- httpx against the test server ------------------------------------------------------------
def test_missing_httpx_is_a_usage_error_naming_the_extra(monkeypatch: pytest.MonkeyPatch) -> None:
    real_import = builtins.__import__

    def no_httpx(name: str, *args: Any, **kwargs: Any) -> Any:
        if name == "httpx" or name.startswith("httpx."):
            raise ImportError("No module named 'httpx'")
        return real_import(name, *args, **kwargs)

    monkeypatch.delitem(sys.modules, "httpx", raising=False)
    monkeypatch.setattr(builtins, "__import__", no_httpx)
    with pytest.raises(UsageError, match=r"pip install 'verdictpack\[live\]'"):
        HttpxTransport()


def test_httpx_transport_round_trip_and_keep_alive() -> None:
    cfg = ServerConfig(judges={"judge": Sheet(rate=0.7)}, seed=2)

    async def go(url: str) -> list[HttpResponse]:
        async with HttpxTransport(trust_env=False) as t:
            return [await t.send(_request(url, tag=i)) for i in range(20)]

    with serve(cfg) as url:
        responses = _run(go(url))
        counts = url.counts()
    assert all(r.status == 200 for r in responses)
    assert all(r.headers["content-type"] == "application/json" for r in responses)
    assert all(r.elapsed > 0 for r in responses)
    labels = [json.loads(r.body)["choices"][0]["message"]["content"] for r in responses]
    assert set(labels) <= {"A", "B"}
    assert counts["requests"] == 20 and counts["connections"] == 1


def test_httpx_transport_concurrent_answers_equal_sequential_ones() -> None:
    cfg = ServerConfig(seed=9, faults=Faults(max_delay=0.02))

    async def go(url: str, concurrent: bool) -> list[bytes]:
        async with HttpxTransport(trust_env=False, max_connections=32) as t:
            reqs = [_request(url, tag=i) for i in range(64)]
            if concurrent:
                got = await asyncio.gather(*(t.send(r) for r in reqs))
            else:
                got = [await t.send(r) for r in reqs]
            return [r.body for r in got]

    with serve(cfg) as url:
        together = _run(go(url, True))
        one_by_one = _run(go(url, False))
        assert url.counts()["connections"] <= 33
    assert together == one_by_one


def test_connections_are_split_into_small_pools_within_the_bound() -> None:
    async def go(url: str, max_connections: int, pool_size: int) -> None:
        async with HttpxTransport(
            trust_env=False, max_connections=max_connections, pool_size=pool_size
        ) as t:
            assert (
                repr(t) == f"HttpxTransport(pools={-(-max_connections // pool_size)}, closed=False)"
            )
            for _ in range(2):  # the second round reuses the kept-alive connections
                await asyncio.gather(*(t.send(_request(url, tag=i)) for i in range(12)))

    with serve(ServerConfig(latency=0.05)) as url:
        _run(go(url, 5, 2))  # pools of 2, 2 and 1
        assert url.counts()["connections"] == 5
    with serve(ServerConfig(latency=0.05)) as url:
        _run(go(url, 12, 8))  # pools of 8 and 4: all 12 requests in flight at once
        assert url.counts()["connections"] == 12


def test_statuses_come_back_as_responses_not_errors() -> None:
    cfg = ServerConfig(faults=Faults(rate_limit=1.0, retry_after="2", retry_after_ms="1500"))

    async def go(url: str) -> tuple[HttpResponse, HttpResponse]:
        async with HttpxTransport(trust_env=False) as t:
            limited = await t.send(_request(url))
            other = _request(url)
            missing = HttpRequest(
                "POST", url + "/nowhere", other.headers, other.body, other.timeout
            )
            return limited, await t.send(missing)

    with serve(cfg) as url:
        limited, missing = _run(go(url))
    assert limited.status == 429
    assert limited.headers["retry-after"] == "2" and limited.headers["retry-after-ms"] == "1500"
    assert missing.status == 404


def test_server_errors_500_and_503_are_responses() -> None:
    cfg = ServerConfig(faults=Faults(server_error=1.0))

    async def go(url: str) -> set[int]:
        async with HttpxTransport(trust_env=False) as t:
            return {(await t.send(_request(url, tag=i))).status for i in range(30)}

    with serve(cfg) as url:
        assert _run(go(url)) == {500, 503}


def test_refused_connection_is_a_transport_error() -> None:
    port = _free_port()

    async def go() -> None:
        async with HttpxTransport(trust_env=False) as t:
            await t.send(_request(f"http://127.0.0.1:{port}/v1"))

    with pytest.raises(TransportError) as err:
        _run(go())
    assert err.value.kind == "connect"
    assert not isinstance(err.value, RequestTimeout)
    _no_key(str(err.value), repr(err.value))


def test_dropped_connection_is_a_transport_error() -> None:
    with serve(ServerConfig(faults=Faults(drop=1.0))) as url:

        async def go() -> None:
            async with HttpxTransport(trust_env=False) as t:
                await t.send(_request(url))

        with pytest.raises(TransportError) as err:
            _run(go())
        assert url.counts()["drop"] >= 1
    assert err.value.kind in {"dropped", "network"}
    _no_key(str(err.value))


def test_stall_beyond_the_deadline_is_a_request_timeout() -> None:
    cfg = ServerConfig(faults=Faults(stall=1.0, stall_seconds=20.0))
    with serve(cfg) as url:

        async def go() -> float:
            async with HttpxTransport(trust_env=False) as t:
                t0 = time.perf_counter()
                with pytest.raises(RequestTimeout) as err:
                    await t.send(_request(url, timeout=0.3))
                assert err.value.timeout == 0.3 and "0.3 s" in str(err.value)
                return time.perf_counter() - t0

        took = _run(go())
    assert 0.25 < took < 3.0


def test_slow_drip_is_cut_by_the_total_deadline() -> None:
    # a server sending one byte at a time never trips a per-read timeout; the total one fires
    import threading

    srv = socket.socket()
    srv.bind(("127.0.0.1", 0))
    srv.listen(1)
    srv.settimeout(5)
    stop = threading.Event()

    def drip() -> None:
        try:
            conn, _ = srv.accept()
        except OSError:
            return
        with conn:
            conn.recv(65536)
            conn.sendall(b"HTTP/1.1 200 OK\r\nContent-Length: 1000\r\n\r\n")
            for _ in range(100):  # bounded: 100 bytes at most, 50 ms apart
                if stop.wait(0.05):
                    return
                try:
                    conn.sendall(b"x")
                except OSError:
                    return

    thread = threading.Thread(target=drip, daemon=True)
    thread.start()
    port = srv.getsockname()[1]

    async def go() -> float:
        async with HttpxTransport(trust_env=False) as t:
            t0 = time.perf_counter()
            with pytest.raises(RequestTimeout):
                await t.send(_request(f"http://127.0.0.1:{port}/v1", timeout=0.4))
            return time.perf_counter() - t0

    try:
        took = _run(go())
    finally:
        stop.set()
        thread.join(5)
        srv.close()
    assert 0.35 < took < 2.0


def test_malformed_json_arrives_as_a_200_with_a_broken_body() -> None:
    with serve(ServerConfig(faults=Faults(malformed=1.0))) as url:

        async def go() -> HttpResponse:
            async with HttpxTransport(trust_env=False) as t:
                return await t.send(_request(url))

        resp = _run(go())
    assert resp.status == 200
    with pytest.raises(ValueError):
        json.loads(resp.body)


def test_random_delays_show_in_elapsed() -> None:
    with serve(ServerConfig(latency=0.05)) as url:

        async def go() -> HttpResponse:
            async with HttpxTransport(trust_env=False) as t:
                return await t.send(_request(url))

        assert _run(go()).elapsed >= 0.05


def test_body_cap_is_a_transport_error() -> None:
    with serve(ServerConfig()) as url:

        async def go() -> None:
            async with HttpxTransport(trust_env=False, max_body_bytes=50) as t:
                await t.send(_request(url))

        with pytest.raises(TransportError) as err:
            _run(go())
    assert err.value.kind == "oversized"


def test_closed_and_misconfigured_transports() -> None:
    async def go() -> None:
        t = HttpxTransport(trust_env=False)
        await t.aclose()
        await t.aclose()  # idempotent
        with pytest.raises(LiveError, match="closed"):
            await t.send(_request("http://127.0.0.1:1/v1"))

    _run(go())
    for name, kwargs in [
        ("max_connections", {"max_connections": 0}),
        ("max_body_bytes", {"max_body_bytes": 0}),
    ]:
        with pytest.raises(InputError) as err:
            HttpxTransport(**kwargs)
        assert err.value.parameter == name


# ---- the key never leaks ----------------------------------------------------------------------
def _all_text(exc: BaseException) -> str:
    parts = [str(exc), repr(exc), *map(str, exc.args), "".join(traceback.format_exception(exc))]
    parts += [repr(v) for v in vars(exc).values()]
    return "\n".join(parts)


def test_the_key_appears_in_no_error_even_when_the_server_echoes_it() -> None:
    # the server refuses the key and, carelessly, quotes it back in its error message
    cfg = ServerConfig(api_key="sk-the-right-one", echo_key_in_errors=True)
    with serve(cfg) as url:

        async def go() -> HttpStatusError:
            async with HttpxTransport(trust_env=False) as t:
                raw = await t.send(_request(url))
                assert KEY.encode() in raw.body  # it really is echoed
                with pytest.raises(HttpStatusError) as err:
                    await send_with_retries(
                        t, _request(url), RetryPolicy(), judge="gpt-judge", rng=random.Random(0)
                    )
                return err.value

        err = _run(go())
    assert err.status == 401 and err.judge == "gpt-judge"
    assert "gpt-judge" in str(err) and "401" in str(err) and "Incorrect API key" in str(err)
    assert "<redacted>" in err.reason
    _no_key(_all_text(err))


def test_the_key_appears_in_no_transport_error_or_exhaustion() -> None:
    port = _free_port()
    seen: list[str] = []

    async def fake_sleep(delay: float) -> None:
        return None

    async def go() -> RetriesExhausted:
        async with HttpxTransport(trust_env=False) as t:
            with pytest.raises(RetriesExhausted) as err:
                await send_with_retries(
                    t,
                    _request(f"http://127.0.0.1:{port}/v1?api_key={KEY}"),
                    RetryPolicy(max_attempts=3),
                    judge="j",
                    rng=random.Random(0),
                    sleep=fake_sleep,
                    on_attempt=lambda k, what, delay: seen.append(f"{k} {what} {delay}"),
                )
            return err.value

    err = _run(go())
    assert err.attempts == 3 and isinstance(err.last, TransportError)
    _no_key(_all_text(err), _all_text(err.last), *seen)
    assert len(seen) == 3 and "connect error" in seen[0]


# ---- the wire: what HttpxTransport sends and how it reads -------------------------------------
class _RawServer:
    """A one-route HTTP/1.1 server on 127.0.0.1 that records each request's head and answers
    every request with ``reply`` (raw bytes: status line, headers, body), keeping the
    connection open."""

    def __init__(self, reply: bytes) -> None:
        self.reply = reply
        self.heads: list[str] = []
        self.connections = 0

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self.connections += 1
        try:
            while True:
                head = (await reader.readuntil(b"\r\n\r\n")).decode("latin-1")
                self.heads.append(head)
                length = next(
                    int(line.split(":", 1)[1])
                    for line in head.split("\r\n")
                    if line.lower().startswith("content-length:")
                )
                await reader.readexactly(length)
                writer.write(self.reply)
                await writer.drain()
        except (asyncio.IncompleteReadError, ConnectionError):
            pass
        finally:
            writer.close()

    async def send(self, requests: list[HttpRequest], concurrent: bool) -> list[HttpResponse]:
        server = await asyncio.start_server(self._serve, "127.0.0.1", 0)
        port = server.sockets[0].getsockname()[1]
        try:
            async with HttpxTransport(trust_env=False) as t:
                reqs = [
                    HttpRequest(r.method, r.url.format(port=port), r.headers, r.body, r.timeout)
                    for r in requests
                ]
                if concurrent:
                    return list(await asyncio.gather(*(t.send(r) for r in reqs)))
                return [await t.send(r) for r in reqs]
        finally:
            server.close()
            await server.wait_closed()


def _head_fields(head: str) -> dict[str, str]:
    return {
        name.strip().lower(): value.strip()
        for name, _, value in (line.partition(":") for line in head.split("\r\n")[1:] if line)
    }


def test_requests_carry_the_callers_headers_and_httpx_clients_defaults() -> None:
    import httpx

    raw = _RawServer(
        b"HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: 2\r\n\r\n{}"
    )
    request = _request("http://127.0.0.1:{port}/v1")
    (response,) = _run(raw.send([request], concurrent=False))
    assert response.status == 200 and response.body == b"{}"
    line, fields = raw.heads[0].split("\r\n")[0], _head_fields(raw.heads[0])
    assert line == "POST /v1/chat/completions HTTP/1.1"
    assert fields["host"].startswith("127.0.0.1:")
    assert fields["content-type"] == "application/json"
    assert fields["authorization"] == f"Bearer {KEY}"
    assert fields["content-length"] == str(len(request.body))
    # what an httpx.AsyncClient would have added (a server behind a CDN may want a user agent)
    with httpx.Client(trust_env=False) as client:
        defaults = {k.lower(): v for k, v in client.headers.items()}
    for name in ("user-agent", "accept", "accept-encoding"):
        assert fields[name] == defaults[name], name


def test_chunked_gzip_bodies_and_repeated_headers_are_read_whole() -> None:
    import gzip

    payload = json.dumps({"choices": [{"message": {"content": "A"}}]}).encode()
    packed = gzip.compress(payload)
    chunks = b"".join(
        b"%x\r\n%s\r\n" % (len(packed[i : i + 7]), packed[i : i + 7])
        for i in range(0, len(packed), 7)
    )
    reply = (
        b"HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-encoding: gzip\r\n"
        b"transfer-encoding: chunked\r\nX-Multi: one\r\nx-multi: two\r\n\r\n"
        + chunks
        + b"0\r\n\r\n"
    )
    raw = _RawServer(reply)
    responses = _run(raw.send([_request("http://127.0.0.1:{port}/v1", i) for i in range(3)], False))
    for r in responses:
        assert r.status == 200 and r.body == payload
        assert r.headers["x-multi"] == "one, two"
        assert r.headers["content-encoding"] == "gzip"
    assert raw.connections == 1  # the chunked body was read to its end: the connection reused


def test_a_run_keeps_as_many_connections_warm_as_requests_in_flight() -> None:
    # 100 connections allowed (the default), 8 requests at a time, three waves: 8 connections
    async def go(url: str) -> None:
        async with HttpxTransport(trust_env=False) as t:
            for wave in range(3):
                got = await asyncio.gather(*(t.send(_request(url, 8 * wave + i)) for i in range(8)))
                assert all(r.status == 200 for r in got)

    with serve(ServerConfig(latency=0.02)) as url:
        _run(go(url))
        assert url.counts()["connections"] == 8


def test_more_requests_than_connections_queue_within_the_bound() -> None:
    async def go(url: str) -> list[int]:
        async with HttpxTransport(trust_env=False, max_connections=3) as t:
            got = await asyncio.gather(*(t.send(_request(url, i)) for i in range(10)))
            return [r.status for r in got]

    with serve(ServerConfig(latency=0.02)) as url:
        assert _run(go(url)) == [200] * 10
        assert url.counts()["connections"] == 3


def test_an_environment_proxy_is_honoured_only_with_trust_env(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # the proxy the environment names refuses connections: with trust_env the request goes
    # there (and fails as a connection error); without, it reaches the server directly
    for name in ("NO_PROXY", "no_proxy", "ALL_PROXY", "all_proxy", "HTTPS_PROXY", "https_proxy"):
        monkeypatch.delenv(name, raising=False)
    proxy = f"http://127.0.0.1:{_free_port()}"
    monkeypatch.setenv("HTTP_PROXY", proxy)
    monkeypatch.setenv("http_proxy", proxy)

    async def go(url: str, trust_env: bool) -> int:
        async with HttpxTransport(trust_env=trust_env) as t:
            return (await t.send(_request(url))).status

    with serve(ServerConfig()) as url:
        assert _run(go(url, False)) == 200
        with pytest.raises(TransportError) as err:
            _run(go(url, True))
        assert err.value.kind in {"connect", "proxy"}
        assert url.counts()["requests"] == 1
