"""The HTTP layer of live judges: one request in, one response (or one classified error) out.

:class:`Transport` is the whole interface the rest of the live stack sees: ``send`` an
:class:`HttpRequest`, get an :class:`HttpResponse` for *any* HTTP status (classifying statuses
is the retry layer's business, :mod:`verdictpack.evidence.live._retry`), or a
:class:`TransportError` when no response arrived at all. Two implementations:

* :class:`HttpxTransport`: httpx's connection pools (HTTP/1.1, keep-alive). httpx is the
  optional extra ``verdictpack[live]`` and is imported inside ``__init__`` only, so the rest of
  verdictpack never needs it. Every request has one total deadline, ``request.timeout`` seconds
  from the moment the client starts waiting for a pooled connection to the last byte of the body
  (httpx's own timeouts are per phase: a server that drips one byte a second would never trip
  them), and a body cap (``max_body_bytes``).
* :class:`MockTransport`: a function stands in for the network (unit tests of the layers above).

The exception tree of live I/O (all under :class:`verdictpack._errors.VerdictpackError`)::

    LiveError                   base: a live request failed for a reason named in the message
    ├── TransportError          no HTTP response: refused, reset, dropped, malformed framing;
    │   │                       retryable
    │   └── RequestTimeout      the total deadline passed first; retryable
    ├── HttpStatusError         a status that retrying cannot fix (4xx other than 408/409/429,
    │                           or anything the policy does not retry): judge, status, reason
    └── RetriesExhausted        every attempt the policy allows failed; names the last outcome

Secrets. A request's credentials travel in its headers (``Authorization``, ``api-key``,
``x-api-key``, ...). They are never part of a repr or an exception message: :class:`HttpRequest`
prints header *names* only, and every message built from text a server or a library produced
passes through :func:`redact` *before* any truncation, which blanks the value of every
credential header of the request, its bare token after ``Bearer``, and any run of 8 or more
consecutive characters of either (a key cut in half is still a key), plus any ``Bearer <token>``
and any credential header written out in the text (``Authorization: ...``) -- a server that echoes
the key back in an error body, a text page or even a 200 does not get it into a log, a ledger
row or a report. URLs are printed without their query string or user info (some providers take
the key as ``?key=...``).
"""

from __future__ import annotations

import asyncio
import inspect
import re
import ssl
import time
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, field
from types import MappingProxyType, TracebackType
from typing import Any, Protocol, Self, runtime_checkable
from urllib.parse import urlsplit, urlunsplit
from urllib.request import getproxies

from verdictpack._errors import InputError, UsageError, VerdictpackError

__all__ = [
    "SECRET_HEADERS",
    "HttpRequest",
    "HttpResponse",
    "HttpStatusError",
    "HttpxTransport",
    "LiveError",
    "MockTransport",
    "RequestTimeout",
    "RetriesExhausted",
    "Transport",
    "TransportError",
    "redact",
    "safe_url",
]

# header names (lower case) whose values are credentials: never printed, always redacted
SECRET_HEADERS = frozenset(
    {
        "authorization",
        "proxy-authorization",
        "api-key",
        "x-api-key",
        "x-goog-api-key",
        "cookie",
    }
)
_REDACTED = "<redacted>"
_MAX_REASON = 300


def safe_url(url: str) -> str:
    """``url`` without query string, fragment or user info: the part fit for a message."""
    try:
        parts = urlsplit(url)
    except ValueError:
        return "(unparseable URL)"
    host = parts.hostname or ""
    if parts.port is not None:
        host = f"{host}:{parts.port}"
    return urlunsplit((parts.scheme, host, parts.path, "", ""))


def _secrets_of(headers: tuple[tuple[str, str], ...]) -> list[str]:
    found: list[str] = []
    for name, value in headers:
        if name.lower() not in SECRET_HEADERS or not value:
            continue
        found.append(value)
        scheme, _, token = value.partition(" ")
        if token.strip() and scheme.lower() in {"bearer", "basic", "token"}:
            found.append(token.strip())
    # longest first, so a token inside its own "Bearer ..." value is blanked as one piece
    return sorted({s for s in found if len(s) >= 4}, key=len, reverse=True)


# a run of this many consecutive characters of a secret is treated as the secret: a server that
# echoes a truncated or split key (or a body cut mid-key) must not leak most of it
SECRET_RUN = 8
# credentials a server may echo whatever the request held: a bearer token, and the value of a
# credential header written as a header line, a JSON member or a key=value pair
_TOKEN_RE = re.compile(r"(?i)\b(bearer)(\s+)[A-Za-z0-9._~+/=:-]{4,}")
_HEADER_RE = re.compile(
    r"(?i)(?<![A-Za-z0-9-])(proxy-authorization|authorization|api-key|x-api-key|x-goog-api-key"
    r"|cookie)(\\?[\"']?\s*[:=]\s*\\?[\"']?)([^\"'\\\r\n,;}\]]*)"
)


def _secret_spans(text: str, secret: str, *, runs: bool = True) -> list[tuple[int, int]]:
    """Where ``text`` holds ``secret`` or (``runs``) any run of :data:`SECRET_RUN` or more of
    its consecutive characters (a secret shorter than that: the whole secret only)."""
    if len(secret) <= SECRET_RUN or not runs:
        pieces = {secret}
    else:
        pieces = {secret[i : i + SECRET_RUN] for i in range(len(secret) - SECRET_RUN + 1)}
    spans: list[tuple[int, int]] = []
    for piece in pieces:
        start = text.find(piece)
        # bounded: each step moves past the previous match
        while start != -1:
            spans.append((start, start + len(piece)))
            start = text.find(piece, start + 1)
    return spans


def _blank(text: str, spans: list[tuple[int, int]]) -> str:
    """``text`` with each union of overlapping or touching ``spans`` replaced by one marker."""
    if not spans:
        return text
    spans.sort()
    out: list[str] = []
    last = 0
    lo, hi = spans[0]
    for a, b in spans[1:]:
        if a <= hi:
            hi = max(hi, b)
            continue
        out += [text[last:lo], _REDACTED]
        last, (lo, hi) = hi, (a, b)
    out += [text[last:lo], _REDACTED, text[hi:]]
    return "".join(out)


def redact(text: str, request: HttpRequest | None) -> str:
    """``text`` with every credential blanked: each credential of ``request`` (see
    :data:`SECRET_HEADERS`; its whole value, its token after ``Bearer``/``Basic``/``Token``, and
    any run of :data:`SECRET_RUN` or more consecutive characters of either), and, whatever the
    request, any ``Bearer <token>`` and the value of a credential header written out in the
    text (``Authorization: ...``, ``"api-key": "..."``). Redact before any truncation: a cut
    can split a key, and a run of it is still blanked, but only the whole text is certain."""
    if request is not None:
        spans: list[tuple[int, int]] = []
        for secret in _secrets_of(request.headers):
            # runs of a header value such as "Bearer <token>" are runs of its token (found
            # as such), but for the ones across the scheme's space, which are not the key's
            scheme, _, token = secret.partition(" ")
            whole = bool(token.strip()) and scheme.lower() in {"bearer", "basic", "token"}
            spans += _secret_spans(text, secret, runs=not whole)
        text = _blank(text, spans)
    text = _HEADER_RE.sub(lambda m: f"{m.group(1)}{m.group(2)}{_REDACTED}", text)
    return _TOKEN_RE.sub(lambda m: f"{m.group(1)}{m.group(2)}{_REDACTED}", text)


def _clip(text: str, limit: int = _MAX_REASON) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 3] + "..."


@dataclass(frozen=True)
class HttpRequest:
    """One HTTP request as the live stack builds it (bytes in, nothing lazy).

    ``headers`` is a tuple of (name, value) pairs, sent in that order; ``timeout`` is the total
    deadline in seconds (connection, upload, wait and download together). The repr shows header
    names only: credential values never reach a log through it.
    """

    method: str
    url: str
    headers: tuple[tuple[str, str], ...] = field(repr=False)
    body: bytes = field(repr=False)
    timeout: float

    def __post_init__(self) -> None:
        if not isinstance(self.method, str) or not self.method.isalpha():
            raise InputError("method", "an HTTP method such as 'POST'", self.method)
        if not isinstance(self.url, str) or urlsplit(self.url).scheme not in {"http", "https"}:
            raise InputError("url", "an http:// or https:// URL", safe_url(str(self.url)))
        if not isinstance(self.headers, tuple) or not all(
            isinstance(h, tuple) and len(h) == 2 and all(isinstance(x, str) for x in h)
            for h in self.headers
        ):
            raise InputError(
                "headers", "a tuple of (name, value) string pairs", type(self.headers).__name__
            )
        if not isinstance(self.body, bytes | bytearray):
            raise InputError("body", "bytes", type(self.body).__name__)
        object.__setattr__(self, "body", bytes(self.body))
        if (
            not isinstance(self.timeout, int | float)
            or isinstance(self.timeout, bool)
            or not 0 < self.timeout < float("inf")
        ):
            raise InputError("timeout", "a finite number of seconds > 0", self.timeout)

    def __repr__(self) -> str:
        names = ", ".join(name for name, _ in self.headers)
        return (
            f"HttpRequest(method={self.method!r}, url={safe_url(self.url)!r}, "
            f"headers=[{names}], body=<{len(self.body)} bytes>, timeout={self.timeout!r})"
        )


@dataclass(frozen=True)
class HttpResponse:
    """One HTTP response: status, headers (lower-case names; repeated ones joined by ``", "``),
    the whole body and the seconds the request took (``elapsed``)."""

    status: int
    headers: Mapping[str, str]
    body: bytes = field(repr=False)
    elapsed: float

    def __post_init__(self) -> None:
        if not isinstance(self.status, int) or not 100 <= self.status <= 599:
            raise InputError("status", "an HTTP status in 100..599", self.status)
        lowered = {str(k).lower(): str(v) for k, v in self.headers.items()}
        object.__setattr__(self, "headers", MappingProxyType(lowered))

    def __repr__(self) -> str:
        return (
            f"HttpResponse(status={self.status}, headers={dict(self.headers)!r}, "
            f"body=<{len(self.body)} bytes>, elapsed={self.elapsed:.3f})"
        )


class LiveError(VerdictpackError):
    """A live request failed; the message says which request and why (never a credential)."""


class TransportError(LiveError):
    """No HTTP response arrived (connection refused, reset or dropped; broken framing; an
    oversized body). Retryable. ``kind`` names the failure in one word, ``url`` is safe."""

    def __init__(self, kind: str, url: str, detail: str = "") -> None:
        self.kind = kind
        self.url = safe_url(url)
        self.detail = _clip(detail)
        text = f"{kind} error on {self.url}"
        super().__init__(f"{text}: {self.detail}" if self.detail else text)


class RequestTimeout(TransportError):
    """The request's total deadline passed before its response was complete. Retryable."""

    def __init__(self, url: str, timeout: float, detail: str = "") -> None:
        self.timeout = timeout
        super().__init__("timeout", url, detail or f"no complete response within {timeout:g} s")


class HttpStatusError(LiveError):
    """The endpoint answered a status retrying cannot fix (e.g. 400, 401, 403, 404, 422).

    ``reason`` is the server's own explanation (its JSON ``error.message`` or the body's first
    characters, credentials redacted, or the standard reason phrase)."""

    def __init__(self, status: int, reason: str, judge: str) -> None:
        self.status = status
        self.reason = _clip(reason)
        self.judge = judge
        super().__init__(
            f"judge {judge!r}: the endpoint answered HTTP {status} ({self.reason}); "
            "not retried: a request it refuses this way will be refused again"
        )


class RetriesExhausted(LiveError):
    """Every attempt the retry policy allows failed. ``last`` is the last outcome: an HTTP
    status (with ``reason``) or the last :class:`TransportError`."""

    def __init__(
        self, judge: str, attempts: int, last: int | TransportError, reason: str = ""
    ) -> None:
        self.judge = judge
        self.attempts = attempts
        self.last = last
        self.reason = _clip(reason)
        if isinstance(last, int):
            what = f"HTTP {last}" + (f" ({self.reason})" if self.reason else "")
        else:
            what = str(last)
        super().__init__(f"judge {judge!r}: gave up after {attempts} attempts; last: {what}")


@runtime_checkable
class Transport(Protocol):
    """Sends requests; returns a response for any status, raises :class:`TransportError` when
    none arrived. ``aclose`` releases connections; a closed transport refuses to send."""

    async def send(self, request: HttpRequest) -> HttpResponse: ...

    async def aclose(self) -> None: ...


class HttpxTransport:
    """:class:`Transport` over httpx (needs ``pip install 'verdictpack[live]'``).

    ``max_connections`` bounds the connections in all (keep it at least the endpoint's
    concurrency, or requests queue for a connection inside their own deadline); ``trust_env``
    lets httpx read proxy settings (``HTTP_PROXY``, ``HTTPS_PROXY``, ``ALL_PROXY``,
    ``NO_PROXY``) and ``SSL_CERT_FILE`` / ``SSL_CERT_DIR`` from the environment (httpx's
    default; tests turn it off); ``verify`` is httpx's TLS verification argument (True, False,
    a CA bundle path, or an ``ssl.SSLContext``). Redirects are not followed: a 3xx comes back as
    a response like any other status.

    The connections are split into pools of at most ``pool_size`` (by default 1: one
    connection each), and each request goes to a pool with a free connection (the one freed
    last, so a run at concurrency c keeps c connections warm), or, when none is free, to the
    least loaded one. httpcore's pool does work proportional to its number of connections on
    every request (it checks each idle connection's socket, twice a request), so the cost per
    request is lowest with one connection a pool.

    A request goes straight to httpx's connection pool (``httpx.AsyncHTTPTransport``), with
    the headers an ``httpx.AsyncClient`` sends by default (``User-Agent``, ``Accept``,
    ``Accept-Encoding``, and ``Host`` and ``Content-Length``); the client's per-request layers
    (auth flows, redirect handling, a cookie jar, event hooks) take about a third of a
    request's CPU time and a chat endpoint needs none of them (cookies a server sets are not
    sent back). When ``trust_env`` is on and the environment names a proxy, every request goes
    through ``httpx.AsyncClient`` instead (one per pool), which applies the proxy settings
    exactly as httpx does.
    """

    def __init__(
        self,
        *,
        max_connections: int = 100,
        pool_size: int = 1,
        max_body_bytes: int = 8 * 1024 * 1024,
        trust_env: bool = True,
        verify: Any = True,
    ) -> None:
        try:
            import httpx
        except ImportError:
            raise UsageError(
                "live judges need the httpx package: pip install 'verdictpack[live]'"
            ) from None
        if not isinstance(max_connections, int) or max_connections < 1:
            raise InputError("max_connections", "an integer >= 1", max_connections)
        if not isinstance(pool_size, int) or pool_size < 1:
            raise InputError("pool_size", "an integer >= 1", pool_size)
        if not isinstance(max_body_bytes, int) or max_body_bytes < 1:
            raise InputError("max_body_bytes", "an integer >= 1", max_body_bytes)
        self._httpx = httpx
        self._max_body = max_body_bytes
        self._closed = False
        if not isinstance(verify, ssl.SSLContext):
            # one TLS context shared by every pool (building one loads the CA bundle)
            verify = httpx.create_ssl_context(verify=verify, trust_env=trust_env)
        sizes = [pool_size] * (max_connections // pool_size)
        if max_connections % pool_size:
            sizes.append(max_connections % pool_size)
        # the environment's proxies, read as httpx reads them (urllib's getproxies)
        proxied = trust_env and any(getproxies().get(s) for s in ("http", "https", "all"))
        self._proxied = proxied

        def limits(n: int) -> Any:
            return httpx.Limits(max_connections=n, max_keepalive_connections=n)

        if proxied:
            self._pools: list[Any] = [
                httpx.AsyncClient(
                    limits=limits(n),
                    # the total deadline is ours (asyncio.timeout in send); httpx's per-phase
                    # timeouts are set per request to the same value so a dead socket trips them
                    timeout=None,
                    follow_redirects=False,
                    trust_env=trust_env,
                    verify=verify,
                )
                for n in sizes
            ]
        else:
            self._pools = [httpx.AsyncHTTPTransport(verify=verify, limits=limits(n)) for n in sizes]
        # what an httpx.AsyncClient adds to every request (User-Agent, Accept, ...)
        with httpx.Client(trust_env=False, verify=False) as defaults:
            self._default_headers = [(k.lower(), v) for k, v in defaults.headers.raw]
        self._sizes = sizes
        self._load = [0] * len(sizes)
        # pools with a free connection, the one freed last on top
        self._free = list(reversed(range(len(sizes))))
        self._urls: dict[str, Any] = {}
        self._headers: dict[tuple[tuple[str, str], ...], Any] = {}
        self._timeouts: dict[float, dict[str, Any]] = {}

    def __repr__(self) -> str:
        return f"HttpxTransport(pools={len(self._pools)}, closed={self._closed})"

    def _request(self, request: HttpRequest) -> Any:
        """The ``httpx.Request`` of ``request`` (its URL, headers and timeouts made once)."""
        httpx = self._httpx
        url = self._urls.get(request.url)
        if url is None:
            url = httpx.URL(request.url)
            if len(self._urls) < 64:
                self._urls[request.url] = url
        headers = self._headers.get(request.headers)
        if headers is None:
            # the caller's headers replace defaults of the same name, as a client's would
            merged: dict[bytes, tuple[bytes, bytes]] = {k: (k, v) for k, v in self._default_headers}
            for name, value in request.headers:
                merged[name.lower().encode("utf-8")] = (name.encode("utf-8"), value.encode("utf-8"))
            headers = httpx.Headers(list(merged.values()))
            if len(self._headers) < 64:
                self._headers[request.headers] = headers
        timeout = self._timeouts.get(request.timeout)
        if timeout is None:
            timeout = httpx.Timeout(request.timeout).as_dict()
            if len(self._timeouts) < 64:
                self._timeouts[request.timeout] = timeout
        return httpx.Request(
            request.method,
            url,
            headers=headers,
            content=request.body,
            extensions={"timeout": timeout},
        )

    async def send(self, request: HttpRequest) -> HttpResponse:
        if self._closed:
            raise LiveError("the transport is closed; no request can be sent")
        httpx = self._httpx
        load, free = self._load, self._free
        # a pool with a free connection, else (every one busy) the least loaded: the request
        # queues there for a connection, inside its deadline
        pool = free[-1] if free else load.index(min(load))
        load[pool] += 1
        if load[pool] == self._sizes[pool]:
            free.pop()  # the pool just taken: the top of the stack
        started = time.perf_counter()
        try:
            async with asyncio.timeout(request.timeout):
                req = self._request(request)
                if self._proxied:
                    resp = await self._pools[pool].send(req, stream=True)
                else:
                    resp = await self._pools[pool].handle_async_request(req)
                try:
                    chunks: list[bytes] = []
                    size = 0
                    async for chunk in resp.aiter_bytes():
                        size += len(chunk)
                        if size > self._max_body:
                            raise TransportError(
                                "oversized",
                                request.url,
                                f"response body above {self._max_body} bytes",
                            )
                        chunks.append(chunk)
                finally:
                    await resp.aclose()
                status = resp.status_code
                headers: dict[str, str] = {}
                for raw_name, raw_value in resp.headers.raw:
                    name = raw_name.decode("latin-1").lower()
                    value = _header_text(raw_value)
                    headers[name] = f"{headers[name]}, {value}" if name in headers else value
        except TimeoutError:
            raise RequestTimeout(request.url, request.timeout) from None
        except httpx.TimeoutException as exc:
            raise RequestTimeout(
                request.url,
                request.timeout,
                redact(f"{type(exc).__name__}: {exc}", request),
            ) from None
        except (httpx.InvalidURL, httpx.UnsupportedProtocol) as exc:
            # a malformed endpoint is a configuration fault: retrying cannot help
            raise LiveError(
                f"cannot send to {safe_url(request.url)}: {redact(str(exc), request)}"
            ) from None
        except httpx.HTTPError as exc:
            raise TransportError(
                _kind_of(httpx, exc), request.url, redact(f"{type(exc).__name__}: {exc}", request)
            ) from None
        except RuntimeError as exc:
            # httpx raises RuntimeError when the client was closed under a pending request
            raise LiveError(f"the transport failed: {redact(str(exc), request)}") from None
        finally:
            if load[pool] == self._sizes[pool]:
                free.append(pool)
            load[pool] -= 1
        return HttpResponse(status, headers, b"".join(chunks), time.perf_counter() - started)

    async def aclose(self) -> None:
        if not self._closed:
            self._closed = True
            for pool in self._pools:
                await pool.aclose()

    async def __aenter__(self) -> Self:
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        await self.aclose()


def _header_text(raw: bytes) -> str:
    """A header value as text: ASCII (nearly always), else UTF-8, else Latin-1."""
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError:
        return raw.decode("latin-1")


def _kind_of(httpx: Any, exc: Exception) -> str:
    if isinstance(exc, httpx.ConnectError):
        return "connect"
    if isinstance(exc, httpx.RemoteProtocolError):
        return "dropped"
    if isinstance(exc, httpx.ProtocolError):
        return "protocol"
    if isinstance(exc, httpx.ProxyError):
        return "proxy"
    if isinstance(exc, httpx.DecodingError):
        return "decoding"
    if isinstance(exc, httpx.ReadError | httpx.WriteError | httpx.CloseError):
        return "network"
    return "transport"


Handler = Callable[[HttpRequest], HttpResponse | Awaitable[HttpResponse]]


class MockTransport:
    """:class:`Transport` whose network is a function: ``handler(request)`` returns an
    :class:`HttpResponse` or raises :class:`TransportError`; it may be sync or async.

    ``requests`` lists every request sent, in order (for assertions)."""

    def __init__(self, handler: Handler) -> None:
        if not callable(handler):
            raise InputError("handler", "a callable HttpRequest -> HttpResponse", handler)
        self._handler = handler
        self._closed = False
        self.requests: list[HttpRequest] = []

    def __repr__(self) -> str:
        return f"MockTransport(sent={len(self.requests)}, closed={self._closed})"

    async def send(self, request: HttpRequest) -> HttpResponse:
        if self._closed:
            raise LiveError("the transport is closed; no request can be sent")
        self.requests.append(request)
        result = self._handler(request)
        if inspect.isawaitable(result):
            result = await result
        if not isinstance(result, HttpResponse):
            raise InputError(
                "handler", "a function returning an HttpResponse", type(result).__name__
            )
        return result

    async def aclose(self) -> None:
        self._closed = True

    async def __aenter__(self) -> Self:
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        await self.aclose()
