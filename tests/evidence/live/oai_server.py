"""An OpenAI-compatible chat-completions server for the tests of live judges (stdlib only).

``with serve(config) as base_url:`` starts it on 127.0.0.1 on a free port (in a thread, or with
``process=True`` in a subprocess so a benchmark's client does not share the GIL with it) and
stops it when the block exits. ``base_url`` is a ``str`` (``http://127.0.0.1:PORT/v1``) that also
carries the server's counters: ``base_url.counts()``, and its log of answers:
``base_url.answers()`` (with ``config.log_answers``; below).

HTTP: HTTP/1.1 with keep-alive (``Connection: close`` and HTTP/1.0 honoured), bodies framed by
Content-Length only (chunked uploads are refused with 411). Endpoints:

* ``POST /v1/chat/completions``: a ``chat.completion`` JSON answer (below);
* ``GET /v1/models``: the configured judges as an OpenAI model list;
* ``GET /_stats``: the counters as JSON (how a subprocess server is read);
* ``GET /_answers``: the log of answers as JSON (likewise).

Every loop is bounded: the server lives at most ``config.lifetime`` seconds; a connection
serves at most ``MAX_REQUESTS_PER_CONNECTION`` requests and is closed after ``idle_timeout``
seconds without one; head and body sizes are capped; stopping cancels every open connection
(a stalled one included) and joins the thread or process with a timeout. A subprocess server
also stops when its parent's end of the pipe closes (the parent died).

Which item is shown first. The prompt text (every message's content, concatenated) is searched
for each text of ``config.items`` (a mapping item text -> is it the treatment); the item found
earliest is the first shown (at the same position, the longer text wins, so an item that is a
prefix of the other is not mistaken for it). Without a match the server looks for the markers
``<<treatment>>`` and ``<<null>>`` (whichever comes first); without either the request is
answered at random (first or second with probability 1/2) and counted ``unmatched``.

The answer. The judge is ``body["model"]``, looked up in ``config.judges`` (unknown: 404
``model_not_found``). Its :class:`Sheet` gives ``rate`` = P(prefers the treatment) and
``position_bias`` b: P(prefers the treatment) is ``rate + b`` when the treatment is shown first
and ``rate - b`` when it is shown second (clipped to [0, 1]); with probability ``invalid`` the
answer names no label ("Both responses are equally good."). The label sent is
``config.labels[0]`` for the first-shown item, ``labels[1]`` for the second. With
``deterministic=True`` every draw is a function of SHA-256(seed, what is drawn, request body):
the same request body always gets the same answer (faults also hash the attempt number, see
below); with ``deterministic=False`` draws come from ``random.Random(seed)`` in arrival order.

Response shape (OpenAI's): ``choices[0].message.content`` is the label; when the request
carries ``response_format`` (json_schema / json_object), ``guided_json``, ``json_schema`` or
``structured_outputs.json`` it is the JSON text ``{"choice": label}``. With
``"logprobs": true`` the choice carries ``logprobs.content[i]`` entries ``{token, logprob,
bytes, top_logprobs: [{token, logprob, bytes}, ...]}`` with ``top_logprobs`` (0..20) alternatives:
for a plain answer the first token is the label sent, with probability q uniform in [0.55, 0.95),
the other label (1 - q) * 0.9, filler words the rest (so logprobs agree with the sampled label);
for a JSON answer the first token is ``{"``; for an invalid answer no label is among them.
A sheet's ``logprob_treatment`` (in (0, 1), default None) makes the probabilities independent of
the answer: in a plain answer whose order is known the treatment's label has probability
``logprob_treatment * 0.9``, the null partner's ``(1 - logprob_treatment) * 0.9``, fillers the
rest, whatever label was sent (the first token is still the label sent, with its listed
probability): a judge whose label probability and choices disagree (``rate=0`` with
``logprob_treatment=0.45`` always answers the null partner while giving the treatment's label
0.45), or, with ``rate`` equal to it, a judge sampled at temperature 1 from those probabilities.
``usage`` counts prompt characters / 4 and one completion token; with ``billing="bytes"`` the
prompt counts as the most verdictpack's budget allows for: a token per UTF-8 byte of the
messages' text, 16 a message and 64 a request (a byte-fallback tokenizer behind a chat template);
``billing="over"`` three times that (a server billing above the bound).

Faults, each with a configured probability (:class:`Faults`), drawn from SHA-256(seed, body,
attempt) where ``attempt`` counts how often this exact body has arrived (1 for the first time):
a retry of a faulted request draws afresh, so retries converge; ``max_faulty_attempt`` makes
every attempt after it clean. In order of the cumulative draw: ``rate_limit`` (429 with
``Retry-After: retry_after`` and, if set, ``retry-after-ms``), ``server_error`` (500 or 503,
half each), ``stall`` (no answer for ``stall_seconds``, then the connection closes: beyond the
client's timeout), ``drop`` (the connection closes without a response), ``malformed`` (200 with
a JSON body cut in half). Independently every answer may wait uniform [0, ``max_delay``] seconds,
plus the fixed ``latency``. ``api_key`` set: requests without ``Authorization: Bearer <key>`` get
401 (``echo_key_in_errors`` puts the received header value in the error message, as careless
servers do: what the client's redaction is tested against). ``echo_key`` (default None: off)
echoes the request's ``Authorization`` value on every chat request, whatever the key:
``"json"`` a 401 whose JSON ``error.message`` holds it; ``"text"`` a 401 text body holding it
after ``ECHO_PAD`` blank lines (a key of 30+ characters straddles byte 1,000: a client that
cuts the body there before redacting keeps most of it); ``"headers"`` a 401 text body that
lists every request header as ``Name: value`` lines; ``"ok"`` the normal 200 answer with the
value added as ``x_request_authorization`` (and in ``system_fingerprint``).

Counters (``counts()``): ``requests`` (complete requests read), ``connections``, one per outcome
(``ok``, ``rate_limited``, ``server_error``, ``stall``, ``drop``, ``malformed``,
``unauthorized``, ``unknown_model``, ``bad_request``, ``not_found``), ``unmatched``, the
answers ``first``/``second``/``invalid`` and ``prefers_treatment``/``prefers_null``, and the bill:
``billed`` (answers generated: ok, malformed, stalled or dropped after generating -- not 429s,
5xx or refusals), ``billed_prompt_tokens`` and ``billed_completion_tokens`` (their ``usage``).

The log of answers (``answers()``, only with ``config.log_answers``: off by default, so a long
benchmark keeps no list): one entry per whole answer sent (200, not malformed), in the order sent:
``{"sha256": hex SHA-256 of the request body, "model", "seed": the request's seed or None,
"first_item": the item text (or marker) found first or None, "treatment_first": bool or None,
"position": "first"/"second"/"invalid", "label": the label sent or None}``.
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import json
import math
import os
import random
import select
import subprocess
import sys
import threading
import urllib.request
from collections import Counter
from collections.abc import Iterator, Mapping
from dataclasses import asdict, dataclass, field
from typing import Any

__all__ = ["Faults", "ServedUrl", "ServerConfig", "Sheet", "serve"]

MAX_REQUESTS_PER_CONNECTION = 100_000
MAX_HEAD_BYTES = 64 * 1024
MAX_BODY_BYTES = 4 * 1024 * 1024
CHAT_PATH = "/v1/chat/completions"
FILLERS = ("The", "Answer", "Both", "I", "Neither", "Response", "It", "Option", "Based", "In")
INVALID_ANSWER = "Both responses are equally good."
CREATED = 1_700_000_000  # a fixed timestamp: answers are byte-reproducible
ECHO_MODES = (None, "json", "text", "headers", "ok")
ECHO_PAD = 938  # filler before a "text" echo: the key's 30th character is its byte 1,000


@dataclass(frozen=True)
class Sheet:
    """A judge's character sheet: P(prefers the treatment), position bias, invalid rate."""

    rate: float = 0.5
    position_bias: float = 0.0
    invalid: float = 0.0
    model_id: str | None = None  # the "model" the answers report (default: the one asked)
    # P(treatment label) the logprobs report whatever the answer (default: they agree with it)
    logprob_treatment: float | None = None

    def __post_init__(self) -> None:
        p = self.logprob_treatment
        if p is not None and not 0.0 < p < 1.0:
            raise ValueError(f"logprob_treatment must be in (0, 1) or None; received {p}")


@dataclass(frozen=True)
class Faults:
    """Probabilities of each fault (their sum at most 1) and their parameters."""

    rate_limit: float = 0.0
    retry_after: str = "0"
    retry_after_ms: str | None = None
    server_error: float = 0.0
    stall: float = 0.0
    stall_seconds: float = 5.0
    drop: float = 0.0
    malformed: float = 0.0
    max_delay: float = 0.0
    max_faulty_attempt: int | None = None


@dataclass(frozen=True)
class ServerConfig:
    """Everything the server does; see the module docstring."""

    judges: Mapping[str, Sheet] = field(default_factory=lambda: {"judge": Sheet()})
    seed: int = 0
    deterministic: bool = True
    faults: Faults = field(default_factory=Faults)
    items: Mapping[str, bool] = field(default_factory=dict)
    labels: tuple[str, str] = ("A", "B")
    api_key: str | None = None
    echo_key_in_errors: bool = False
    echo_key: str | None = None  # None, "json", "text", "headers" or "ok" (module docstring)
    latency: float = 0.0
    lifetime: float = 600.0
    idle_timeout: float = 30.0
    log_answers: bool = False  # keep the log of answers (module docstring)
    billing: str = "chars"  # "chars" (a token per 4 characters), "bytes" or "over" (docstring)

    def __post_init__(self) -> None:
        f = self.faults
        total = f.rate_limit + f.server_error + f.stall + f.drop + f.malformed
        if not 0 <= total <= 1:
            raise ValueError(f"fault probabilities must sum to at most 1; received {total}")
        if self.billing not in ("chars", "bytes", "over"):
            raise ValueError(f"billing: 'chars', 'bytes' or 'over'; received {self.billing!r}")
        if self.echo_key not in ECHO_MODES:
            raise ValueError(f"echo_key must be one of {ECHO_MODES}; received {self.echo_key!r}")
        if self.lifetime <= 0 or not math.isfinite(self.lifetime):
            raise ValueError(f"lifetime must be a finite number > 0; received {self.lifetime}")

    def to_json(self) -> str:
        return json.dumps(asdict(self))

    @classmethod
    def from_json(cls, text: str) -> ServerConfig:
        data = json.loads(text)
        data["judges"] = {k: Sheet(**v) for k, v in data["judges"].items()}
        data["faults"] = Faults(**data["faults"])
        data["labels"] = tuple(data["labels"])
        return cls(**data)


class ServedUrl(str):
    """The base URL of a running server (``http://127.0.0.1:PORT/v1``) with its counters."""

    _counts: Any
    _answers: Any

    def __new__(cls, url: str, counts: Any, answers: Any = None) -> ServedUrl:
        obj = super().__new__(cls, url)
        obj._counts = counts
        obj._answers = answers
        return obj

    def counts(self) -> dict[str, int]:
        """A snapshot of the counters (module docstring)."""
        return dict(self._counts())

    def answers(self) -> list[dict[str, Any]]:
        """A snapshot of the log of answers (module docstring; empty without ``log_answers``)."""
        return [] if self._answers is None else list(self._answers())

    @property
    def chat_url(self) -> str:
        return f"{self}/chat/completions"


def _json_bytes(data: Any) -> bytes:
    return json.dumps(data, separators=(",", ":")).encode()


def _error(status: int, message: str, kind: str, code: str | None = None) -> tuple[int, bytes]:
    return status, _json_bytes({"error": {"message": message, "type": kind, "code": code}})


_PHRASES = {
    200: "OK",
    400: "Bad Request",
    401: "Unauthorized",
    404: "Not Found",
    405: "Method Not Allowed",
    411: "Length Required",
    413: "Content Too Large",
    429: "Too Many Requests",
    500: "Internal Server Error",
    503: "Service Unavailable",
}


class _Drop(Exception):
    """Close the connection without answering."""


class _Server:
    def __init__(self, config: ServerConfig) -> None:
        self.config = config
        self._lock = threading.Lock()
        self._counts: Counter[str] = Counter()
        self._answers: list[dict[str, Any]] = []
        self._seen: Counter[bytes] = Counter()
        self._rng = random.Random(config.seed)
        self._tasks: set[asyncio.Task[Any]] = set()
        self._seed = str(int(config.seed)).encode()
        self.loop: asyncio.AbstractEventLoop | None = None
        self.stop_event: asyncio.Event | None = None
        self.port = 0

    # ---- counters -------------------------------------------------------------------------
    def count(self, key: str, n: int = 1) -> None:
        with self._lock:
            self._counts[key] += n

    def snapshot(self) -> dict[str, int]:
        with self._lock:
            return dict(self._counts)

    def answers_log(self) -> list[dict[str, Any]]:
        with self._lock:
            return [dict(a) for a in self._answers]

    # ---- draws ----------------------------------------------------------------------------
    def _draw(self, tag: bytes, body: bytes, attempt: int = 0) -> float:
        if not self.config.deterministic:
            return self._rng.random()
        h = hashlib.sha256(self._seed + b"\n" + tag + b"\n" + str(attempt).encode() + b"\n")
        h.update(body)
        return int.from_bytes(h.digest()[:8], "big") / 2.0**64

    # ---- lifecycle ------------------------------------------------------------------------
    async def run(self, ready: threading.Event) -> None:
        self.loop = asyncio.get_running_loop()
        self.stop_event = asyncio.Event()
        server = await asyncio.start_server(
            self._connection, "127.0.0.1", 0, limit=MAX_HEAD_BYTES, backlog=1024
        )
        self.port = server.sockets[0].getsockname()[1]
        ready.set()
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(self.stop_event.wait(), self.config.lifetime)
        server.close()
        for task in list(self._tasks):
            task.cancel()
        await asyncio.gather(*self._tasks, return_exceptions=True)
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(server.wait_closed(), 5.0)

    def stop(self) -> None:
        if self.loop is not None and self.stop_event is not None:
            with contextlib.suppress(RuntimeError):  # the loop already ended (lifetime)
                self.loop.call_soon_threadsafe(self.stop_event.set)

    # ---- HTTP -----------------------------------------------------------------------------
    async def _connection(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        task = asyncio.current_task()
        if task is not None:
            self._tasks.add(task)
        self.count("connections")
        dropped = False
        try:
            for _ in range(MAX_REQUESTS_PER_CONNECTION):
                if not await self._one_request(reader, writer):
                    break
        except (_Drop, asyncio.CancelledError):
            # a drop fault, or the server stopping: end the task quietly (a cancelled
            # connection task would make asyncio log a traceback)
            dropped = True
        except (ConnectionError, TimeoutError, asyncio.IncompleteReadError):
            pass
        finally:
            if task is not None:
                self._tasks.discard(task)
            if dropped:
                writer.transport.abort()  # no response, no orderly shutdown
            else:
                writer.close()  # flushes what was written, then closes

    async def _one_request(
        self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter
    ) -> bool:
        """Serve one request; False when the connection is to close."""
        try:
            head = await asyncio.wait_for(reader.readuntil(b"\r\n\r\n"), self.config.idle_timeout)
        except (TimeoutError, asyncio.IncompleteReadError, asyncio.LimitOverrunError):
            return False
        lines = head.decode("latin-1").split("\r\n")
        try:
            method, target, version = lines[0].split(" ", 2)
        except ValueError:
            return False
        headers: dict[str, str] = {}
        for line in lines[1:101]:
            if ":" in line:
                name, _, value = line.partition(":")
                headers[name.strip().lower()] = value.strip()
        keep = version == "HTTP/1.1" and headers.get("connection", "").lower() != "close"
        if "transfer-encoding" in headers:
            await self._write(
                writer, 411, _error(411, "chunked bodies are not supported", "x")[1], False
            )
            return False
        try:
            length = int(headers.get("content-length", "0"))
        except ValueError:
            length = -1
        if not 0 <= length <= MAX_BODY_BYTES:
            await self._write(writer, 413, _error(413, "bad Content-Length", "x")[1], False)
            return False
        body = await asyncio.wait_for(reader.readexactly(length), self.config.idle_timeout)
        self.count("requests")
        status, payload, extra = await self._route(method, target, headers, body)
        await self._write(writer, status, payload, keep, extra)
        return keep

    async def _write(
        self,
        writer: asyncio.StreamWriter,
        status: int,
        payload: bytes,
        keep: bool,
        extra: tuple[tuple[str, str], ...] = (),
    ) -> None:
        head = [
            f"HTTP/1.1 {status} {_PHRASES.get(status, 'Status')}",
            "Content-Type: application/json",
            f"Content-Length: {len(payload)}",
            f"Connection: {'keep-alive' if keep else 'close'}",
            *(f"{k}: {v}" for k, v in extra),
        ]
        writer.write(("\r\n".join(head) + "\r\n\r\n").encode("latin-1") + payload)
        await writer.drain()

    async def _route(
        self, method: str, target: str, headers: dict[str, str], body: bytes
    ) -> tuple[int, bytes, tuple[tuple[str, str], ...]]:
        path = target.split("?", 1)[0]
        if path == "/_stats" and method == "GET":
            return 200, _json_bytes(self.snapshot()), ()
        if path == "/_answers" and method == "GET":
            return 200, _json_bytes(self.answers_log()), ()
        if path == "/v1/models" and method == "GET":
            models = [{"id": m, "object": "model", "owned_by": "test"} for m in self.config.judges]
            return 200, _json_bytes({"object": "list", "data": models}), ()
        if path != CHAT_PATH:
            self.count("not_found")
            return (*_error(404, f"no route {path}", "invalid_request_error"), ())
        if method != "POST":
            self.count("bad_request")
            return (*_error(405, f"{method} is not allowed here", "invalid_request_error"), ())
        return await self._chat(headers, body)

    async def _chat(
        self, headers: dict[str, str], body: bytes
    ) -> tuple[int, bytes, tuple[tuple[str, str], ...]]:
        cfg = self.config
        received = headers.get("authorization", "(none)")
        if cfg.echo_key in ("json", "text", "headers"):
            self.count("unauthorized")
            if cfg.echo_key == "json":
                message = f"Incorrect API key provided: {received}."
                return (*_error(401, message, "invalid_request_error", "invalid_api_key"), ())
            if cfg.echo_key == "text":
                # blank lines (as an HTML error page has): a client that collapses whitespace
                # shows the key near the start of what it prints
                text = "Unauthorized. " + "\n" * ECHO_PAD + f" You sent: {received}\n"
            else:
                text = "Unauthorized; the request was:\n" + "".join(
                    f"{name.title()}: {value}\r\n" for name, value in headers.items()
                )
            return 401, text.encode("utf-8"), ()
        if cfg.api_key is not None and headers.get("authorization") != f"Bearer {cfg.api_key}":
            self.count("unauthorized")
            received = headers.get("authorization", "(none)")
            message = (
                f"Incorrect API key provided: {received}."
                if cfg.echo_key_in_errors
                else "Incorrect API key provided."
            )
            return (*_error(401, message, "invalid_request_error", "invalid_api_key"), ())
        try:
            request = json.loads(body)
        except (ValueError, UnicodeDecodeError):
            request = None
        if (
            not isinstance(request, dict)
            or not isinstance(request.get("model"), str)
            or not isinstance(request.get("messages"), list)
        ):
            self.count("bad_request")
            return (
                *_error(
                    400, "expected a JSON object with model and messages", "invalid_request_error"
                ),
                (),
            )
        model = request["model"]
        sheet = cfg.judges.get(model)
        if sheet is None:
            self.count("unknown_model")
            return (
                *_error(
                    404,
                    f"The model `{model}` does not exist",
                    "invalid_request_error",
                    "model_not_found",
                ),
                (),
            )
        fault = self._fault(body)
        faults = cfg.faults
        wait = cfg.latency + (
            self._draw(b"delay", body) * faults.max_delay if faults.max_delay else 0
        )
        if wait > 0:
            await asyncio.sleep(wait)
        if fault == "rate_limited":
            self.count(fault)
            extra = [("Retry-After", faults.retry_after)]
            if faults.retry_after_ms is not None:
                extra.append(("retry-after-ms", faults.retry_after_ms))
            return (
                *_error(429, "Rate limit reached for requests", "requests", "rate_limit_exceeded"),
                tuple(extra),
            )
        if fault == "server_error":
            self.count(fault)
            status = 500 if self._draw(b"which-error", body) < 0.5 else 503
            return (*_error(status, "The server had an error", "server_error"), ())
        if fault in (None, "stall", "drop", "malformed"):
            self._bill(request)  # generated, so billed: answered, cut off, or never delivered
        if fault == "stall":
            self.count(fault)
            await asyncio.sleep(faults.stall_seconds)
            raise _Drop
        if fault == "drop":
            self.count(fault)
            raise _Drop
        payload, logged = self._answer(request, sheet, body)
        if fault == "malformed":
            self.count(fault)
            return 200, payload[: len(payload) // 2], ()
        self.count("ok")
        if cfg.echo_key == "ok":
            echoed = json.loads(payload)
            echoed["x_request_authorization"] = received
            echoed["system_fingerprint"] = received.rpartition(" ")[2]
            payload = _json_bytes(echoed)
        if cfg.log_answers:
            with self._lock:
                self._answers.append(logged)
        return 200, payload, ()

    def _prompt_tokens(self, request: dict[str, Any]) -> int:
        """The prompt tokens ``usage`` reports and the bill counts (module docstring)."""
        messages = [m for m in request["messages"] if isinstance(m, dict)]
        if self.config.billing in ("bytes", "over"):
            text = sum(len(_content_text(m).encode("utf-8")) for m in messages)
            bound = text + 16 * len(messages) + 64
            return bound if self.config.billing == "bytes" else 3 * bound
        return max(1, len("\n".join(_content_text(m) for m in messages)) // 4)

    def _bill(self, request: dict[str, Any]) -> None:
        """Count a generated answer on the bill, at the tokens its ``usage`` reports."""
        with self._lock:
            self._counts["billed"] += 1
            self._counts["billed_prompt_tokens"] += self._prompt_tokens(request)
            self._counts["billed_completion_tokens"] += 1

    def _fault(self, body: bytes) -> str | None:
        f = self.config.faults
        key = hashlib.sha256(body).digest()
        with self._lock:
            self._seen[key] += 1
            attempt = self._seen[key]
        if f.max_faulty_attempt is not None and attempt > f.max_faulty_attempt:
            return None
        u = self._draw(b"fault", body, attempt)
        for name, p in (
            ("rate_limited", f.rate_limit),
            ("server_error", f.server_error),
            ("stall", f.stall),
            ("drop", f.drop),
            ("malformed", f.malformed),
        ):
            if u < p:
                return name
            u -= p
        return None

    # ---- the answer -----------------------------------------------------------------------
    def _first_shown(self, text: str) -> tuple[str | None, bool | None]:
        """The item (or marker) shown first and whether it is the treatment (None: unknown)."""
        best: tuple[int, int, bool, str] | None = None
        for item, is_treatment in self.config.items.items():
            i = text.find(item)
            if i >= 0:
                cand = (i, -len(item), bool(is_treatment), item)
                if best is None or cand[:2] < best[:2]:
                    best = cand
        if best is not None:
            return best[3], best[2]
        t, n = text.find("<<treatment>>"), text.find("<<null>>")
        if t >= 0 and (n < 0 or t < n):
            return "<<treatment>>", True
        if n >= 0:
            return "<<null>>", False
        return None, None

    def _answer(
        self, request: dict[str, Any], sheet: Sheet, body: bytes
    ) -> tuple[bytes, dict[str, Any]]:
        """The response body and its entry in the log of answers."""
        cfg = self.config
        text = "\n".join(_content_text(m) for m in request["messages"] if isinstance(m, dict))
        first_item, first_is_treatment = self._first_shown(text)
        u = self._draw(b"answer", body)
        if self._draw(b"invalid", body) < sheet.invalid:
            position = "invalid"
        elif first_is_treatment is None:
            self.count("unmatched")
            position = "first" if u < 0.5 else "second"
        else:
            bias = sheet.position_bias if first_is_treatment else -sheet.position_bias
            prefers_treatment = u < min(1.0, max(0.0, sheet.rate + bias))
            self.count("prefers_treatment" if prefers_treatment else "prefers_null")
            position = "first" if prefers_treatment == first_is_treatment else "second"
        self.count(position)
        label = {"first": cfg.labels[0], "second": cfg.labels[1]}.get(position)
        structured = _wants_json(request)
        if label is None:
            content = INVALID_ANSWER
        elif structured:
            content = json.dumps({"choice": label})
        else:
            content = label
        choice: dict[str, Any] = {
            "index": 0,
            "message": {"role": "assistant", "content": content},
            "logprobs": None,
            "finish_reason": "stop",
        }
        if request.get("logprobs") is True:
            k = request.get("top_logprobs", 0)
            k = max(0, min(20, k)) if isinstance(k, int) else 0
            q = 0.55 + 0.4 * self._draw(b"confidence", body)
            if label is None:
                first_token, ranked = "Both", [(t, 0.6 / (i + 1)) for i, t in enumerate(FILLERS)]
            elif structured:
                first_token, ranked = '{"', [('{"', 0.99), ("{", 0.01)]
            elif sheet.logprob_treatment is not None and first_is_treatment is not None:
                # the probabilities are the sheet's, whatever label was sent
                p_t = sheet.logprob_treatment
                t_label, n_label = cfg.labels if first_is_treatment else cfg.labels[::-1]
                rest = 0.1 / len(FILLERS)
                first_token = label
                pair = sorted(
                    [(t_label, p_t * 0.9), (n_label, (1 - p_t) * 0.9)], key=lambda x: -x[1]
                )
                ranked = [*pair, *((t, rest) for t in FILLERS)]
            else:
                other = cfg.labels[1] if label == cfg.labels[0] else cfg.labels[0]
                rest = (1 - q) * 0.1 / len(FILLERS)
                first_token = label
                ranked = [(label, q), (other, (1 - q) * 0.9), *((t, rest) for t in FILLERS)]
            top = [_logprob(t, p) for t, p in ranked[:k]]
            p_first = dict(ranked).get(first_token, 0.5)
            choice["logprobs"] = {
                "content": [{**_logprob(first_token, p_first), "top_logprobs": top}],
                "refusal": None,
            }
        prompt_tokens = self._prompt_tokens(request)
        answer = {
            "id": "chatcmpl-" + hashlib.sha256(self._seed + body).hexdigest()[:24],
            "object": "chat.completion",
            "created": CREATED,
            "model": sheet.model_id or request["model"],
            "system_fingerprint": "fp_verdictpack_test",
            "choices": [choice],
            "usage": {
                "prompt_tokens": prompt_tokens,
                "completion_tokens": 1,
                "total_tokens": prompt_tokens + 1,
            },
        }
        logged = {
            "sha256": hashlib.sha256(body).hexdigest(),
            "model": request["model"],
            "seed": request.get("seed"),
            "first_item": first_item,
            "treatment_first": first_is_treatment,
            "position": position,
            "label": label,
        }
        return _json_bytes(answer), logged


def _logprob(token: str, p: float) -> dict[str, Any]:
    return {"token": token, "logprob": math.log(p), "bytes": list(token.encode())}


def _content_text(message: Mapping[str, Any]) -> str:
    content = message.get("content")
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "\n".join(
            part["text"]
            for part in content
            if isinstance(part, dict) and isinstance(part.get("text"), str)
        )
    return ""


def _wants_json(request: Mapping[str, Any]) -> bool:
    fmt = request.get("response_format")
    if isinstance(fmt, dict) and fmt.get("type") in {"json_schema", "json_object"}:
        return True
    if "guided_json" in request or "json_schema" in request:
        return True
    so = request.get("structured_outputs")
    return isinstance(so, dict) and "json" in so


# ---- running it -------------------------------------------------------------------------------
@contextlib.contextmanager
def serve(config: ServerConfig, *, process: bool = False) -> Iterator[ServedUrl]:
    """Run a server for the duration of the block; yields its base URL (with ``counts()``)."""
    if process:
        with _serve_process(config) as url:
            yield url
        return
    server = _Server(config)
    ready = threading.Event()
    thread = threading.Thread(
        target=asyncio.run, args=(server.run(ready),), name="oai-test-server", daemon=True
    )
    thread.start()
    try:
        if not ready.wait(10.0):
            raise RuntimeError("the test server did not start within 10 s")
        yield ServedUrl(f"http://127.0.0.1:{server.port}/v1", server.snapshot, server.answers_log)
    finally:
        server.stop()
        thread.join(10.0)


def _fetch_stats(origin: str, path: str = "/_stats") -> Any:
    opener = urllib.request.build_opener(urllib.request.ProxyHandler({}))
    with opener.open(f"{origin}{path}", timeout=10) as resp:
        return json.loads(resp.read())


@contextlib.contextmanager
def _serve_process(config: ServerConfig) -> Iterator[ServedUrl]:
    proc = subprocess.Popen(
        [sys.executable, os.path.abspath(__file__), config.to_json()],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
    )
    try:
        if proc.stdout is None:
            raise RuntimeError("no pipe to the test server process")
        ready, _, _ = select.select([proc.stdout], [], [], 20.0)
        line = proc.stdout.readline().decode().strip() if ready else ""
        if not line.isdigit():
            raise RuntimeError(f"the test server process did not start (said {line!r})")
        origin = f"http://127.0.0.1:{line}"
        yield ServedUrl(
            f"{origin}/v1", lambda: _fetch_stats(origin), lambda: _fetch_stats(origin, "/_answers")
        )
    finally:
        if proc.stdin is not None:
            proc.stdin.close()  # the child stops when its stdin closes
        try:
            proc.wait(10.0)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(10.0)
        if proc.stdout is not None:
            proc.stdout.close()


def _main(config_json: str) -> None:
    server = _Server(ServerConfig.from_json(config_json))
    ready = threading.Event()

    def announce_then_watch() -> None:
        if not ready.wait(10.0):
            return
        sys.stdout.write(f"{server.port}\n")
        sys.stdout.flush()
        sys.stdin.buffer.read()  # returns at EOF: the parent closed the pipe or died
        server.stop()

    threading.Thread(target=announce_then_watch, daemon=True).start()
    asyncio.run(server.run(ready))


if __name__ == "__main__":
    _main(sys.argv[1])
