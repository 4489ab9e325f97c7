"""The OpenAI-compatible test server behaves as documented: answers drawn from the character
sheets (rates, position bias, invalid answers), deterministic per request body, OpenAI's
response shape (logprobs, structured output), every fault at its configured rate, the HTTP
details (keep-alive, errors, auth), counters, and bounded lifetimes. Read with the standard
library's http.client, independent of the transport under test elsewhere."""

from __future__ import annotations

import http.client
import json
import math
import socket
import time
from urllib.parse import urlsplit

import pytest
from oai_server import Faults, ServerConfig, Sheet, serve

TREATMENT = "The council approved 120 new homes near the river today."
NULL = "The council approved 120 new homes near the river now."


def _conn(base_url: str, timeout: float = 5.0) -> http.client.HTTPConnection:
    parts = urlsplit(base_url)
    return http.client.HTTPConnection("127.0.0.1", parts.port, timeout=timeout)


def _post(
    conn: http.client.HTTPConnection, body: dict | bytes, headers: dict | None = None
) -> tuple[int, dict, bytes]:
    raw = body if isinstance(body, bytes) else json.dumps(body).encode()
    conn.request(
        "POST",
        "/v1/chat/completions",
        body=raw,
        headers={"Content-Type": "application/json", **(headers or {})},
    )
    resp = conn.getresponse()
    data = resp.read()
    return resp.status, {k.lower(): v for k, v in resp.getheaders()}, data


def _body(first: str, second: str, model: str = "judge", tag: int = 0, **extra: object) -> dict:
    prompt = f"Which is better?\nA: {first}\nB: {second}\nAnswer A or B. (case {tag})"
    return {
        "model": model,
        "messages": [
            {"role": "system", "content": "You compare two texts."},
            {"role": "user", "content": prompt},
        ],
        **extra,
    }


def _content(data: bytes) -> str:
    return json.loads(data)["choices"][0]["message"]["content"]


def test_same_request_same_answer_and_response_shape() -> None:
    cfg = ServerConfig(judges={"judge": Sheet(rate=0.5, model_id="judge-2026-01-01")}, seed=3)
    with serve(cfg) as url:
        conn = _conn(url)
        answers = [_post(conn, _body("<<treatment>> x", "<<null>> y", tag=7)) for _ in range(3)]
        conn.close()
    assert {a[2] for a in answers} == {answers[0][2]}  # byte-identical
    status, headers, raw = answers[0]
    assert status == 200 and headers["content-type"] == "application/json"
    data = json.loads(raw)
    assert data["object"] == "chat.completion"
    assert data["model"] == "judge-2026-01-01"
    assert data["choices"][0]["message"]["role"] == "assistant"
    assert data["choices"][0]["message"]["content"] in {"A", "B"}
    assert data["choices"][0]["logprobs"] is None
    assert data["usage"]["prompt_tokens"] > 0 and data["usage"]["completion_tokens"] == 1


def test_different_seeds_give_different_answer_streams() -> None:
    def stream(seed: int) -> list[str]:
        with serve(ServerConfig(seed=seed)) as url:
            conn = _conn(url)
            out = [
                _content(_post(conn, _body("<<treatment>>", "<<null>>", tag=i))[2])
                for i in range(40)
            ]
            conn.close()
        return out

    assert stream(1) == stream(1)
    assert stream(1) != stream(2)


def _rate(url: str, n: int, treatment_first: bool, model: str = "judge") -> tuple[float, dict]:
    first, second = (TREATMENT, NULL) if treatment_first else (NULL, TREATMENT)
    conn = _conn(url)
    picked_treatment = 0
    for i in range(n):
        label = _content(_post(conn, _body(first, second, model=model, tag=i))[2])
        picked_first = label == "A"
        picked_treatment += picked_first == treatment_first
    conn.close()
    return picked_treatment / n, url.counts()


@pytest.mark.parametrize(("rate", "bias"), [(0.8, 0.0), (0.6, 0.15)])
def test_answers_follow_the_sheet_rate_and_position_bias(rate: float, bias: float) -> None:
    n = 500
    cfg = ServerConfig(
        judges={"judge": Sheet(rate=rate, position_bias=bias)},
        items={TREATMENT: True, NULL: False},
        seed=11,
    )
    with serve(cfg) as url:
        p_first, _ = _rate(url, n, treatment_first=True)
        p_second, counts = _rate(url, n, treatment_first=False)
    tol = 4 * math.sqrt(0.25 / n)  # four standard errors at worst
    assert abs(p_first - (rate + bias)) < tol
    assert abs(p_second - (rate - bias)) < tol
    assert counts["prefers_treatment"] + counts["prefers_null"] == 2 * n
    assert counts.get("unmatched", 0) == 0


def test_item_texts_that_prefix_each_other_are_placed_correctly() -> None:
    short, long = "The cat sat", "The cat sat on the mat"
    cfg = ServerConfig(judges={"judge": Sheet(rate=1.0)}, items={short: False, long: True})
    with serve(cfg) as url:
        conn = _conn(url)
        # rate 1: always the treatment (the long text), whichever position it is in
        assert _content(_post(conn, _body(long, short))[2]) == "A"
        assert _content(_post(conn, _body(short, long))[2]) == "B"
        conn.close()


def test_markers_unmatched_and_invalid_answers() -> None:
    cfg = ServerConfig(judges={"judge": Sheet(rate=0.0), "flaky": Sheet(invalid=1.0)})
    with serve(cfg) as url:
        conn = _conn(url)
        # rate 0: never the treatment; the markers say which is first
        assert _content(_post(conn, _body("<<treatment>> a", "<<null>> b"))[2]) == "B"
        assert _content(_post(conn, _body("<<null>> a", "<<treatment>> b"))[2]) == "A"
        _post(conn, _body("no marker", "none here"))
        assert _content(_post(conn, _body("<<null>>", "<<treatment>>", model="flaky"))[2]) == (
            "Both responses are equally good."
        )
        conn.close()
        counts = url.counts()
    assert counts["unmatched"] == 1
    assert counts["invalid"] == 1
    assert counts["ok"] == 4


def test_logprobs_in_the_openai_shape_agree_with_the_label() -> None:
    with serve(ServerConfig(judges={"judge": Sheet(rate=0.5)}, seed=5)) as url:
        conn = _conn(url)
        for i in range(20):
            raw = _post(
                conn, _body("<<treatment>>", "<<null>>", tag=i, logprobs=True, top_logprobs=5)
            )[2]
            choice = json.loads(raw)["choices"][0]
            label = choice["message"]["content"]
            first = choice["logprobs"]["content"][0]
            assert first["token"] == label and first["bytes"] == list(label.encode())
            top = first["top_logprobs"]
            assert len(top) == 5
            assert [t["logprob"] for t in top] == sorted((t["logprob"] for t in top), reverse=True)
            probs = {t["token"]: math.exp(t["logprob"]) for t in top}
            other = "B" if label == "A" else "A"
            assert 0.55 <= probs[label] < 0.95 and probs[other] < probs[label]
            assert sum(math.exp(t["logprob"]) for t in top) <= 1 + 1e-9
        # top_logprobs absent: OpenAI's default of no alternatives
        raw = _post(conn, _body("<<treatment>>", "<<null>>", logprobs=True))[2]
        assert json.loads(raw)["choices"][0]["logprobs"]["content"][0]["top_logprobs"] == []
        conn.close()


@pytest.mark.parametrize(
    "extra",
    [
        {"response_format": {"type": "json_schema", "json_schema": {"name": "c", "schema": {}}}},
        {"response_format": {"type": "json_object"}},
        {"guided_json": {"type": "object"}},
        {"json_schema": {"type": "object"}},
        {"structured_outputs": {"json": {"type": "object"}}},
    ],
)
def test_structured_output_answers_a_json_object(extra: dict) -> None:
    with serve(ServerConfig()) as url:
        conn = _conn(url)
        raw = _post(
            conn, _body("<<treatment>>", "<<null>>", logprobs=True, top_logprobs=2, **extra)
        )[2]
        conn.close()
    choice = json.loads(raw)["choices"][0]
    assert json.loads(choice["message"]["content"])["choice"] in {"A", "B"}
    assert choice["logprobs"]["content"][0]["token"] == '{"'


def test_labels_are_configurable() -> None:
    cfg = ServerConfig(judges={"judge": Sheet(rate=1.0)}, labels=("1", "2"))
    with serve(cfg) as url:
        conn = _conn(url)
        assert _content(_post(conn, _body("<<null>>", "<<treatment>>"))[2]) == "2"
        conn.close()


def test_http_errors_and_auth() -> None:
    key = "sk-test-0123456789abcdef"
    cfg = ServerConfig(api_key=key, echo_key_in_errors=True)
    with serve(cfg) as url:
        conn = _conn(url)
        status, _, raw = _post(conn, _body("a", "b"))
        assert status == 401 and json.loads(raw)["error"]["code"] == "invalid_api_key"
        status, _, raw = _post(conn, _body("a", "b"), {"Authorization": "Bearer sk-wrong-key"})
        assert status == 401 and "sk-wrong-key" in json.loads(raw)["error"]["message"]
        auth = {"Authorization": f"Bearer {key}"}
        assert _post(conn, _body("a", "b"), auth)[0] == 200
        status, _, raw = _post(conn, _body("a", "b", model="nobody"), auth)
        assert status == 404 and json.loads(raw)["error"]["code"] == "model_not_found"
        assert _post(conn, b"{not json", auth)[0] == 400
        assert _post(conn, {"model": "judge"}, auth)[0] == 400
        conn.request("GET", "/v1/chat/completions")
        resp = conn.getresponse()
        assert resp.status == 405
        resp.read()
        conn.request("GET", "/v1/elsewhere")
        resp = conn.getresponse()
        assert resp.status == 404
        resp.read()
        conn.request("GET", "/v1/models")
        resp = conn.getresponse()
        assert [m["id"] for m in json.loads(resp.read())["data"]] == ["judge"]
        conn.close()
        counts = url.counts()
    assert counts["unauthorized"] == 2 and counts["unknown_model"] == 1
    assert counts["bad_request"] == 3 and counts["not_found"] == 1 and counts["ok"] == 1
    assert counts["connections"] == 1  # all of it over one kept-alive connection


def test_connection_close_and_http10_are_honoured() -> None:
    with serve(ServerConfig()) as url:
        conn = _conn(url)
        status, headers, _ = _post(conn, _body("a", "b"), {"Connection": "close"})
        assert status == 200 and headers["connection"] == "close"
        conn.close()
        port = urlsplit(url).port
        with socket.create_connection(("127.0.0.1", port), timeout=5) as s:
            s.sendall(b"GET /v1/models HTTP/1.0\r\n\r\n")
            data = b""
            while chunk := s.recv(65536):  # the server closes: recv returns b"" at the end
                data += chunk
        assert data.startswith(b"HTTP/1.1 200") and b"Connection: close" in data


def test_each_fault_at_its_rate_and_attempts_converge() -> None:
    n = 400
    faults = Faults(rate_limit=0.2, server_error=0.1, drop=0.1, malformed=0.1, retry_after="7")
    cfg = ServerConfig(faults=faults, seed=21)
    seen: dict[int | str, int] = {}
    with serve(cfg) as url:
        conn = _conn(url)
        for i in range(n):
            try:
                status, headers, raw = _post(conn, _body("<<treatment>>", "<<null>>", tag=i))
            except (http.client.RemoteDisconnected, ConnectionError):
                seen["drop"] = seen.get("drop", 0) + 1
                conn.close()
                conn = _conn(url)
                continue
            if status == 429:
                assert headers["retry-after"] == "7"
            key: int | str = status
            if status == 200:
                try:
                    json.loads(raw)
                except ValueError:
                    key = "malformed"
            seen[key] = seen.get(key, 0) + 1
        conn.close()
        counts = url.counts()
    assert counts["rate_limited"] == seen[429]
    assert counts["server_error"] == seen.get(500, 0) + seen.get(503, 0)
    assert seen.get(500, 0) > 0 and seen.get(503, 0) > 0
    assert counts["drop"] == seen["drop"] and counts["malformed"] == seen["malformed"]
    for name, p in [
        ("rate_limited", 0.2),
        ("server_error", 0.1),
        ("drop", 0.1),
        ("malformed", 0.1),
    ]:
        assert abs(counts[name] / n - p) < 4 * math.sqrt(p * (1 - p) / n), name
    assert counts["requests"] == n


def test_faults_redraw_per_attempt_and_stop_after_max_faulty_attempt() -> None:
    cfg = ServerConfig(faults=Faults(server_error=1.0, max_faulty_attempt=2))
    body = _body("<<treatment>>", "<<null>>")
    with serve(cfg) as url:
        conn = _conn(url)
        statuses = [_post(conn, body)[0] for _ in range(4)]
        conn.close()
    assert statuses[:2] != [200, 200] and all(s in {500, 503} for s in statuses[:2])
    assert statuses[2:] == [200, 200]


def test_stall_holds_the_answer_and_stops_with_the_server() -> None:
    cfg = ServerConfig(faults=Faults(stall=1.0, stall_seconds=30.0))
    t0 = time.perf_counter()
    with serve(cfg) as url:
        conn = _conn(url, timeout=0.3)
        with pytest.raises(TimeoutError):
            _post(conn, _body("a", "b"))
        conn.close()
        assert url.counts()["stall"] == 1
    # leaving the block cancelled the stalled connection instead of waiting 30 s
    assert time.perf_counter() - t0 < 10


def test_random_delays_are_bounded_by_max_delay() -> None:
    cfg = ServerConfig(faults=Faults(max_delay=0.05), latency=0.02)
    with serve(cfg) as url:
        conn = _conn(url)
        times = []
        for i in range(10):
            t0 = time.perf_counter()
            _post(conn, _body("a", "b", tag=i))
            times.append(time.perf_counter() - t0)
        conn.close()
    assert min(times) >= 0.02
    assert max(times) < 0.07 + 0.5  # generous: a loaded machine
    assert max(times) - min(times) > 0.001  # the delays vary


def test_nondeterministic_mode_is_seeded() -> None:
    def stream() -> list[str]:
        with serve(ServerConfig(deterministic=False, seed=4)) as url:
            conn = _conn(url)
            body = _body("<<treatment>>", "<<null>>")
            out = [_content(_post(conn, body)[2]) for _ in range(30)]
            conn.close()
        return out

    first = stream()
    assert len(set(first)) == 2  # the same body gets different answers
    assert stream() == first  # but one seed, one stream (sequential requests)


def test_lifetime_bounds_the_server() -> None:
    with serve(ServerConfig(lifetime=0.3)) as url:
        time.sleep(0.6)
        with pytest.raises(OSError):
            conn = _conn(url, timeout=1.0)
            _post(conn, _body("a", "b"))


def test_subprocess_mode_serves_and_reports_counters() -> None:
    cfg = ServerConfig(judges={"j": Sheet(rate=1.0)}, items={TREATMENT: True, NULL: False})
    with serve(cfg, process=True) as url:
        conn = _conn(url)
        assert _content(_post(conn, _body(NULL, TREATMENT, model="j"))[2]) == "B"
        conn.close()
        counts = url.counts()
    assert counts["ok"] == 1 and counts["prefers_treatment"] == 1


def test_config_round_trips_through_json() -> None:
    cfg = ServerConfig(
        judges={"a": Sheet(rate=0.7, position_bias=0.1, invalid=0.05, model_id="a-1")},
        faults=Faults(rate_limit=0.1, retry_after_ms="250", max_faulty_attempt=3),
        items={"x": True},
        labels=("1", "2"),
        api_key="k",
    )
    assert ServerConfig.from_json(cfg.to_json()) == cfg
    with pytest.raises(ValueError, match="sum to at most 1"):
        ServerConfig(faults=Faults(rate_limit=0.6, drop=0.6))
