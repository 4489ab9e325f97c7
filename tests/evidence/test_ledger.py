"""The evidence ledger of a live study (verdictpack.evidence._ledger)."""

from __future__ import annotations

import dataclasses
import hashlib
import json
import os
import random
import select
import signal
import sqlite3
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import pytest

from verdictpack._errors import InputError
from verdictpack.evidence._ledger import (
    LEDGER_FILENAME,
    ORDERS,
    Ledger,
    LedgerError,
    canonical_json,
    manifest_hash,
    request_key,
)

MANIFEST: dict[str, Any] = {
    "format": 1,
    "config_sha256": "ab" * 32,
    "judges": [
        {
            "name": "judge-a",
            "base_url": "http://127.0.0.1:9/v1",
            "model": "m-a",
            "api_key_env": "K",
        },
        {
            "name": "judge-b",
            "base_url": "http://127.0.0.1:9/v1",
            "model": "m-b",
            "api_key_env": "K",
        },
    ],
    "sampling": {"temperature": 0.0, "max_tokens": 8, "seed": 7},
    "root_order_sha256": "cd" * 32,
}
DIGEST = manifest_hash(MANIFEST)
JUDGES = ("judge-a", "judge-b")
FAKE_KEY = "sk-test-" + "Zq7vX3pL" * 6


def _body(root: str, judge: str, order: str, trial: int) -> dict[str, Any]:
    first, second = ("treatment", "null") if order == "treatment_first" else ("null", "treatment")
    return {
        "model": judge.replace("judge", "m"),
        "messages": [
            {"role": "system", "content": "Answer with exactly one label: A or B."},
            {"role": "user", "content": f"{root} A: {first} text B: {second} text"},
        ],
        "temperature": 0.0,
        "max_tokens": 8,
        "seed": 7 + trial,
        "logprobs": True,
        "top_logprobs": 5,
    }


def _wrapped(root: str, judge: str, order: str, trial: int) -> dict[str, Any]:
    return {
        "judge": judge,
        "trial": trial,
        "url": "http://127.0.0.1:9/v1/chat/completions",
        "body": _body(root, judge, order, trial),
    }


def _raw(choice: str) -> str:
    label = "A" if choice == "treatment" else "B"
    return json.dumps(
        {
            "id": "chatcmpl-1",
            "object": "chat.completion",
            "model": "m-a",
            "choices": [{"index": 0, "message": {"role": "assistant", "content": label}}],
            "usage": {"prompt_tokens": 41, "completion_tokens": 1},
        }
    )


def _judge_one(
    ledger: Ledger, root: str, judge: str, order: str, trial: int = 0, cost: float = 0.001
) -> str:
    """Record one request, one attempt and its answer; return the key."""
    key = ledger.request_key(_wrapped(root, judge, order, trial))
    ledger.record_request(key, root, judge, order, trial, _body(root, judge, order, trial))
    ledger.record_attempt(key, 1, 200, 0.05, 312)
    ledger.record_answer(
        key,
        raw=_raw("treatment"),
        prompt_tokens=41,
        completion_tokens=1,
        cost=cost,
        model_id="m-a",
        latency=0.05,
        choice="treatment",
        path="parser",
        p_treatment=None,
    )
    return key


def _all_bytes(folder: Path) -> bytes:
    return b"".join(p.read_bytes() for p in sorted(folder.iterdir()) if p.is_file())


_REQUESTS = 'SELECT key, root_id, judge, "order", trial, body FROM requests ORDER BY rowid'
_ATTEMPTS = "SELECT key, attempt, outcome, latency, bytes FROM attempts ORDER BY seq"
_CANCELLED = "SELECT key, cost_estimate, reason FROM cancelled ORDER BY seq"


def _rows(led: Ledger, sql: str, *params: Any) -> list[tuple[Any, ...]]:
    """The rows of a query on the ledger's tables (its own connection: what it recorded)."""
    return led._db.execute(sql, params).fetchall()


# ---- opening, identity -----------------------------------------------------------------------


def test_open_creates_a_wal_ledger_and_reopens(tmp_path: Path) -> None:
    with Ledger.open(tmp_path, MANIFEST) as led:
        assert led.path == tmp_path / LEDGER_FILENAME
        assert led.manifest_hash == DIGEST
        assert led.manifest == json.loads(canonical_json(MANIFEST))
        assert led.committed() == [] and led.answers_by_key() == {}
        conn = sqlite3.connect(led.path)
        assert conn.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
        conn.close()
        _judge_one(led, "root-1", "judge-a", "treatment_first")
    # key order and whitespace do not change the manifest's identity
    shuffled = dict(reversed(list(MANIFEST.items())))
    with Ledger.open(tmp_path / LEDGER_FILENAME, shuffled) as led:
        assert len(led.answers_by_key()) == 1


def test_manifest_hash_is_sha256_of_the_canonical_json() -> None:
    text = json.dumps(MANIFEST, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    assert hashlib.sha256(text.encode("utf-8")).hexdigest() == DIGEST
    with pytest.raises(InputError, match="manifest"):
        manifest_hash({"x": float("nan")})
    with pytest.raises(InputError, match="manifest"):
        manifest_hash(["not", "a", "mapping"])  # type: ignore[arg-type]


def test_another_manifest_is_refused_naming_both_hashes(tmp_path: Path) -> None:
    Ledger.open(tmp_path, MANIFEST).close()
    other = {**MANIFEST, "sampling": {"temperature": 0.7, "max_tokens": 8, "seed": 7}}
    with pytest.raises(LedgerError) as info:
        Ledger.open(tmp_path, other)
    msg = str(info.value)
    assert DIGEST[:12] in msg and manifest_hash(other)[:12] in msg
    assert "a study never mixes manifests; start a fresh study in a new folder" in msg
    # the refusal wrote nothing: the ledger still opens with its own manifest
    with Ledger.open(tmp_path, MANIFEST) as led:
        assert led.manifest_hash == DIGEST


def test_files_that_are_not_ledgers_are_refused(tmp_path: Path) -> None:
    junk = tmp_path / "junk.sqlite"
    junk.write_bytes(b"this is not a database at all" * 100)
    with pytest.raises(LedgerError, match="not a readable SQLite ledger"):
        Ledger.open(junk, MANIFEST)
    other = tmp_path / "other.sqlite"
    with sqlite3.connect(other) as conn:
        conn.execute("CREATE TABLE t (x)")
    with pytest.raises(LedgerError, match="not a verdictpack ledger"):
        Ledger.open(other, MANIFEST)
    with pytest.raises(LedgerError, match="does not exist"):
        Ledger.open(tmp_path / "missing" / LEDGER_FILENAME, MANIFEST)
    with pytest.raises(LedgerError, match="no such file"):
        Ledger.open_readonly(tmp_path / "absent.sqlite")


# ---- append only -----------------------------------------------------------------------------


def _one_row_each(folder: Path) -> Path:
    with Ledger.open(folder, MANIFEST) as led:
        key = _judge_one(led, "root-1", "judge-a", "treatment_first")
        k2 = led.request_key(_wrapped("root-1", "judge-b", "null_first", 0))
        led.record_request(k2, "root-1", "judge-b", "null_first", 0, {"x": 1})
        led.record_cancelled(k2, 0.002, "budget")
        led.commit_root(1, "root-1", 0.75, None, '{"registered":"continue"}')
        led.record_event("verdict", {"registered": "accept"})
        assert key in led.answers_by_key()
    return folder / LEDGER_FILENAME


@pytest.mark.parametrize(
    "table", ["manifest", "requests", "attempts", "answers", "commits", "cancelled", "events"]
)
def test_update_and_delete_raise_on_every_table(tmp_path: Path, table: str) -> None:
    path = _one_row_each(tmp_path)
    conn = sqlite3.connect(path)
    column = "hash" if table == "manifest" else "manifest"
    before = conn.execute(f"SELECT * FROM {table}").fetchall()
    assert before
    with pytest.raises(sqlite3.IntegrityError, match=f"append-only: UPDATE on {table}"):
        conn.execute(f"UPDATE {table} SET {column} = {column} || ''")
    with pytest.raises(sqlite3.IntegrityError, match=f"append-only: DELETE on {table}"):
        conn.execute(f"DELETE FROM {table}")
    assert conn.execute(f"SELECT * FROM {table}").fetchall() == before
    conn.close()


def test_replace_and_foreign_rows_are_refused_by_the_schema(tmp_path: Path) -> None:
    path = _one_row_each(tmp_path)
    conn = sqlite3.connect(path)  # recursive_triggers off: REPLACE must still be refused
    (key,) = conn.execute("SELECT key FROM answers").fetchone()
    with pytest.raises(sqlite3.IntegrityError, match="cannot be replaced"):
        conn.execute(
            "INSERT OR REPLACE INTO answers SELECT key, manifest, 'forged', prompt_tokens, "
            "completion_tokens, 0, model_id, latency, 'null_partner', path, p_treatment "
            "FROM answers"
        )
    with pytest.raises(sqlite3.IntegrityError, match="cannot be replaced"):
        conn.execute(
            "INSERT OR REPLACE INTO events (seq, manifest, kind, json) "
            "SELECT 1, hash, 'forged', '{}' FROM manifest"
        )
    with pytest.raises(sqlite3.IntegrityError, match="cannot be replaced"):
        conn.execute(
            "INSERT OR REPLACE INTO commits SELECT 2, manifest, root_id, 0, 0, NULL, NULL, 's' "
            "FROM commits"
        )
    with pytest.raises(sqlite3.IntegrityError, match="another manifest"):
        conn.execute(
            "INSERT INTO events (manifest, kind, json) VALUES (?, 'x', '{}')", ("ee" * 32,)
        )
    with pytest.raises(sqlite3.IntegrityError, match="exactly one manifest"):
        conn.execute("INSERT INTO manifest VALUES (?, '{}')", ("ee" * 32,))
    with pytest.raises(sqlite3.IntegrityError, match="contiguous prefix"):
        conn.execute(
            "INSERT INTO commits SELECT 3, hash, 'root-9', 0, 0, NULL, NULL, 's' FROM manifest"
        )
    conn.close()
    with Ledger.open(path, MANIFEST) as led:
        a = led.answers_by_key().get(key)
        assert a is not None and a.raw == _raw("treatment") and a.choice == "treatment"


# ---- commits -------------------------------------------------------------------------------


def test_commits_form_a_contiguous_prefix(tmp_path: Path) -> None:
    with Ledger.open(tmp_path, MANIFEST) as led:
        with pytest.raises(LedgerError, match="seq 2 refused; the next commit is seq 1"):
            led.commit_root(2, "root-2", 0.5, 0.5, "s")
        led.commit_root(1, "root-1", 0.5, None, "s1")
        with pytest.raises(LedgerError, match="seq 1 refused; the next commit is seq 2"):
            led.commit_root(1, "root-x", 0.5, None, "s")
        with pytest.raises(LedgerError, match="already committed"):
            led.commit_root(2, "root-1", 0.5, None, "s")
        with pytest.raises(InputError, match="'m'"):
            led.commit_root(2, "root-2", 1.5, None, "s")
        with pytest.raises(InputError, match="'h'"):
            led.commit_root(2, "root-2", 0.5, float("nan"), "s")
        with pytest.raises(InputError, match="lower <= upper"):
            led.commit_root(2, "root-2", (0.5, 0.25), None, "s")
        led.commit_root(2, "root-2", 0.25, 1.0, "s2")
        led.commit_root(3, "root-3", (0.25, 0.75), (0.0, 0.5), "s3")
    with Ledger.open(tmp_path, MANIFEST) as led:
        got = [
            (c.seq, c["root_id"], c.m_lo, c.m_hi, c.h_lo, c.h_hi, c.state) for c in led.committed()
        ]
        assert got == [
            (1, "root-1", 0.5, 0.5, None, None, "s1"),
            (2, "root-2", 0.25, 0.25, 1.0, 1.0, "s2"),
            (3, "root-3", 0.25, 0.75, 0.0, 0.5, "s3"),
        ]
        with pytest.raises(LedgerError, match="next commit is seq 4"):
            led.commit_root(5, "root-5", 0.5, None, "s")


# ---- the cache -------------------------------------------------------------------------------


def test_an_answered_request_is_a_cache_hit_across_reopen(tmp_path: Path) -> None:
    with Ledger.open(tmp_path, MANIFEST) as led:
        key = _judge_one(led, "root-1", "judge-a", "treatment_first", cost=0.0125)
        miss = led.request_key(_wrapped("root-1", "judge-a", "null_first", 0))
        assert miss not in led.answers_by_key()
        first = led.answers_by_key()[key]
        with pytest.raises(LedgerError, match="already answered"):
            led.record_answer(
                key,
                raw="{}",
                prompt_tokens=0,
                completion_tokens=0,
                cost=0.0,
                model_id=None,
                latency=0.0,
                choice="invalid",
                path="none",
                p_treatment=None,
            )
    with Ledger.open(tmp_path, MANIFEST) as led:
        again = led.answers_by_key()[key]
        assert again == first
        assert (again.root_id, again.judge, again.order, again.trial) == (
            "root-1",
            "judge-a",
            "treatment_first",
            0,
        )
        assert again["cost"] == 0.0125 and again["choice"] == "treatment"
        assert led.answers_by_key() == {key: again}
        # the same request recorded again on resume is a no-op; nothing is unanswered
        led.record_request(
            key, "root-1", "judge-a", "treatment_first", 0, _body("root-1", "judge-a", "t", 0)
        )
        assert _rows(led, "SELECT key FROM requests") == [(key,)]
        assert _rows(led, "SELECT key FROM requests EXCEPT SELECT key FROM answers") == []
        assert _rows(led, "SELECT outcome FROM attempts WHERE key = ?", key) == [("200",)]


def test_request_key_is_the_body_and_manifest_hash_only() -> None:
    body = _wrapped("root-1", "judge-a", "treatment_first", 0)
    text = json.dumps(body, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    expected = hashlib.sha256(f"{DIGEST}\n{text}".encode()).hexdigest()
    assert request_key(body, DIGEST) == expected
    assert request_key(dict(reversed(list(body.items()))), DIGEST) == expected
    assert request_key(body, manifest_hash({"other": 1})) != expected
    assert request_key({**body, "trial": 1}, DIGEST) != expected


def test_a_request_body_given_as_canonical_text_is_stored_as_given(tmp_path: Path) -> None:
    body = _body("root-1", "judge-a", "treatment_first", 0)
    key = request_key(_wrapped("root-1", "judge-a", "treatment_first", 0), DIGEST)
    other = request_key(_wrapped("root-2", "judge-a", "treatment_first", 0), DIGEST)
    with Ledger.open(tmp_path, MANIFEST) as led:
        # the live runner passes the text it sends (spliced from its keys' pieces)
        led.record_request(
            key, "root-1", "judge-a", "treatment_first", 0, body, canonical=canonical_json(body)
        )
        led.record_request(other, "root-2", "judge-a", "treatment_first", 0, body)
        for bad in (b"{}", json.dumps(body, indent=1)[1:], 7):
            with pytest.raises(InputError) as err:
                led.record_request(
                    other, "root-2", "judge-a", "treatment_first", 0, body, canonical=bad
                )
            assert err.value.parameter == "canonical"
        texts = [body for (body,) in _rows(led, "SELECT body FROM requests ORDER BY rowid")]
    assert texts == [canonical_json(body)] * 2


def test_one_key_for_two_judgments_is_refused(tmp_path: Path) -> None:
    with Ledger.open(tmp_path, MANIFEST) as led:
        key = led.request_key({"same": "body"})
        led.record_request(key, "root-1", "judge-a", "treatment_first", 0, {"same": "body"})
        with pytest.raises(LedgerError, match="share one cached answer"):
            led.record_request(key, "root-2", "judge-a", "treatment_first", 0, {"same": "body"})
        with pytest.raises(LedgerError, match="no request recorded"):
            led.record_answer(
                "0" * 64,
                raw="",
                prompt_tokens=0,
                completion_tokens=0,
                cost=0.0,
                model_id=None,
                latency=0.0,
                choice="invalid",
                path="none",
                p_treatment=None,
            )
        with pytest.raises(LedgerError, match="recorded requests only"):
            led.record_attempt("1" * 64, 1, "connection reset")
        with pytest.raises(InputError, match="'key'"):
            led.record_attempt("not-a-key", 1, 200)
        assert len(_rows(led, _REQUESTS)) == 1 and _rows(led, _ATTEMPTS) == []


@pytest.mark.parametrize(
    ("field", "value"),
    [
        ("prompt_tokens", -1),
        ("completion_tokens", 1.5),
        ("cost", float("inf")),
        ("cost", -0.01),
        ("latency", True),
        ("choice", "A"),
        ("path", "guess"),
        ("p_treatment", 1.01),
        ("raw", b"\xff\xfe"),
    ],
)
def test_answer_fields_are_checked_and_nothing_is_written(
    tmp_path: Path, field: str, value: Any
) -> None:
    with Ledger.open(tmp_path, MANIFEST) as led:
        key = led.request_key({"b": 1})
        led.record_request(key, "root-1", "judge-a", "null_first", 0, {"b": 1})
        fields: dict[str, Any] = {
            "raw": "B",
            "prompt_tokens": 3,
            "completion_tokens": 1,
            "cost": 0.0,
            "model_id": None,
            "latency": 0.1,
            "choice": "null_partner",
            "path": "parser",
            "p_treatment": None,
        }
        fields[field] = value
        with pytest.raises(InputError, match=f"'{field}'"):
            led.record_answer(key, **fields)
        assert led.answers_by_key() == {} and led.spend() == (0.0, 0.0, 0.0)


# ---- money -----------------------------------------------------------------------------------


def test_spend_is_exact_order_free_and_survives_reopen(tmp_path: Path) -> None:
    rng = random.Random(5)
    costs = [rng.choice([0.1, 0.2, 0.3, 1e-9, 123.456, 1e-300]) for _ in range(40)]
    with Ledger.open(tmp_path, MANIFEST) as led:
        for i, c in enumerate(costs):
            _judge_one(led, f"root-{i // 4}", JUDGES[i % 2], ORDERS[(i // 2) % 2], cost=c)
        for r in range(5):  # roots 0..4 committed, 5..9 pending
            led.commit_root(r + 1, f"root-{r}", 0.5, None, "s")
        k = led.request_key(_wrapped("root-99", "judge-a", "treatment_first", 0))
        led.record_request(k, "root-99", "judge-a", "treatment_first", 0, {"x": 0})
        led.record_cancelled(k, 0.004, "budget")
        before = led.spend()
    from fractions import Fraction

    def exact(xs: Sequence[float]) -> float:
        return float(sum((Fraction(x) for x in xs), Fraction(0)))

    assert before.committed == exact(costs[:20])
    assert before.pending == exact(costs[20:])
    assert before.cancelled == 0.004
    with Ledger.open(tmp_path, MANIFEST) as led:
        assert led.spend() == before
        # a pending root's cost moves to committed when the root commits
        led.commit_root(6, "root-5", 0.5, None, "s")
        after = led.spend()
        assert after.committed == exact(costs[:24]) and after.pending == exact(costs[24:])
    ro = Ledger.open_readonly(tmp_path)
    try:
        assert ro.spend() == after
        with pytest.raises(LedgerError, match="read-only"):
            ro.record_event("x")
    finally:
        ro.close()


# ---- batches ---------------------------------------------------------------------------------


def test_a_batch_commits_at_exit_and_keeps_records_when_its_body_raises(tmp_path: Path) -> None:
    with Ledger.open(tmp_path, MANIFEST) as led:
        with led.batch():
            _judge_one(led, "root-1", "judge-a", "treatment_first")
            with led.batch():  # nested: joins the outer transaction
                _judge_one(led, "root-1", "judge-a", "null_first")
            reader = Ledger.open_readonly(tmp_path)
            try:
                assert reader.answers_by_key() == {}  # not committed yet
            finally:
                reader.close()
        assert len(led.answers_by_key()) == 2
        with pytest.raises(RuntimeError, match="boom"), led.batch():
            _judge_one(led, "root-2", "judge-a", "treatment_first")
            raise RuntimeError("boom")
        with pytest.raises(LedgerError, match="already answered"), led.batch():
            _judge_one(led, "root-3", "judge-a", "treatment_first")
            _judge_one(led, "root-3", "judge-a", "treatment_first")
    with Ledger.open(tmp_path, MANIFEST) as led:
        roots = sorted(a.root_id for a in led.answers_by_key().values())
        assert roots == ["root-1", "root-1", "root-2", "root-3"]


# ---- no secret is ever stored -----------------------------------------------------------------


def _live_flow(led: Ledger, headers: Sequence[tuple[str, str]]) -> None:
    """What the live runner does with one judgment, the headers carrying the API key."""
    wrapped = _wrapped("root-1", "judge-a", "treatment_first", 0)
    key = led.request_key(wrapped)
    led.record_request(key, "root-1", "judge-a", "treatment_first", 0, wrapped["body"])
    led.record_attempt(key, 1, 429, 0.01, 20)
    led.record_attempt(key, 2, "connection reset by peer", 0.02, 0)
    led.record_answer(
        key,
        raw=_raw("treatment").encode("utf-8"),
        prompt_tokens=41,
        completion_tokens=1,
        cost=0.00041,
        model_id="m-a",
        latency=0.3,
        choice="treatment",
        path="parser",
        p_treatment=None,
    )
    led.commit_root(1, "root-1", 1.0, None, json.dumps({"registered": "continue"}))
    led.record_event("run_end", {"stop": "data", "headers_sent": len(headers)})


def test_no_api_key_reaches_the_ledger_file(tmp_path: Path) -> None:
    headers = (("authorization", f"Bearer {FAKE_KEY}"), ("content-type", "application/json"))
    clean = tmp_path / "clean"
    clean.mkdir()
    with Ledger.open(clean, MANIFEST, secrets=[FAKE_KEY]) as led:
        _live_flow(led, headers)
        # a server error echoing the key is refused, without repeating it, and writes nothing
        with pytest.raises(LedgerError, match="secret") as info:
            led.record_attempt(_rows(led, _REQUESTS)[0][0], 3, f"401: bad key Bearer {FAKE_KEY}")
        assert FAKE_KEY not in str(info.value)
        assert len(_rows(led, _ATTEMPTS)) == 2
        assert FAKE_KEY.encode() not in _all_bytes(clean)  # WAL included, before checkpoint
    data = _all_bytes(clean)
    assert len(data) > 0 and FAKE_KEY.encode() not in data and b"Bearer" not in data
    # the grep does find a key that was stored (so the check above can fail)
    leaky = tmp_path / "leaky"
    leaky.mkdir()
    with Ledger.open(leaky, MANIFEST) as led:
        _live_flow(led, headers)
        led.record_attempt(_rows(led, _REQUESTS)[0][0], 3, f"401: bad key Bearer {FAKE_KEY}")
    assert FAKE_KEY.encode() in _all_bytes(leaky)
    with pytest.raises(LedgerError, match="secret") as info:
        Ledger.open(tmp_path, {**MANIFEST, "oops": FAKE_KEY}, secrets=[FAKE_KEY])
    assert FAKE_KEY not in str(info.value)
    with pytest.raises(InputError, match="at least 8") as info2:
        Ledger.open(tmp_path, MANIFEST, secrets=["short"])
    assert "short" not in str(info2.value)


# ---- SIGKILL in the middle of writing ---------------------------------------------------------

Op = tuple[int | None, str, tuple[Any, ...]]  # (batch id or None, kind, arguments)
_TABLE = {
    "request": "requests",
    "attempt": "attempts",
    "answer": "answers",
    "commit": "commits",
    "cancel": "cancelled",
    "event": "events",
}


def _script(seed: int, roots: int = 24) -> list[Op]:
    """A deterministic run: per root 2 judges x 2 orders (request, 1-3 attempts, answer), then
    its commit; some roots written in one batch; an event every 8 roots; a cancellation."""
    rng = random.Random(seed)
    failures: list[int | str] = [429, 503, "connection reset"]
    ops: list[Op] = []
    for r in range(roots):
        root = f"root-{r:03d}"
        batch = r if rng.random() < 0.3 else None
        for judge in JUDGES:
            for order in ORDERS:
                w = _wrapped(root, judge, order, 0)
                key = request_key(w, DIGEST)
                ops.append((batch, "request", (key, root, judge, order, 0, w["body"])))
                tries = rng.randint(1, 3)
                for a in range(1, tries + 1):
                    outcome: int | str = 200 if a == tries else rng.choice(failures)
                    lat = round(rng.uniform(0, 2), 6)
                    ops.append((batch, "attempt", (key, a, outcome, lat, rng.randint(0, 900))))
                choice = rng.choice(["treatment", "null_partner", "tie", "invalid"])
                p = round(rng.random(), 6) if rng.random() < 0.5 else None
                answer = (
                    key,
                    _raw(choice) + " " * rng.randint(0, 400),
                    rng.randint(30, 90),
                    1,
                    rng.uniform(0, 0.01),
                    "m-a",
                    lat,
                    choice,
                    "logprobs" if p is not None else "parser",
                    p,
                )
                ops.append((batch, "answer", answer))
        h = rng.choice([None, 0.0, 0.5, 1.0])
        ops.append((None, "commit", (r + 1, root, rng.random(), h, f'{{"roots":{r + 1}}}')))
        if r % 8 == 7:
            ops.append((None, "event", ("progress", {"roots": r + 1, "note": "ünïcode"})))
    w = _wrapped("root-999", "judge-a", "treatment_first", 0)
    key = request_key(w, DIGEST)
    ops.append((None, "request", (key, "root-999", "judge-a", "treatment_first", 0, w["body"])))
    ops.append((None, "cancel", (key, 0.0123, "budget")))
    ops.append((None, "event", ("budget_stop", {"spent": 1.5})))
    return ops


def _apply_one(led: Ledger, kind: str, args: tuple[Any, ...]) -> None:
    if kind == "request":
        led.record_request(*args)
    elif kind == "attempt":
        led.record_attempt(*args)
    elif kind == "answer":
        names: tuple[str, ...] = ("raw", "prompt_tokens", "completion_tokens", "cost")
        names += ("model_id", "latency", "choice", "path", "p_treatment")
        led.record_answer(args[0], **dict(zip(names, args[1:], strict=True)))
    elif kind == "commit":
        led.commit_root(*args)
    elif kind == "cancel":
        led.record_cancelled(*args)
    else:
        led.record_event(*args)


def _apply(led: Ledger, ops: Sequence[Op], after: Callable[[], object] = lambda: None) -> None:
    i = 0
    while i < len(ops):
        batch = ops[i][0]
        j = i + 1
        while batch is not None and j < len(ops) and ops[j][0] == batch:
            j += 1
        if batch is None:
            _apply_one(led, ops[i][1], ops[i][2])
            after()
        else:
            with led.batch():
                for _, kind, args in ops[i:j]:
                    _apply_one(led, kind, args)
                    after()
        i = j


def _cuts(ops: Sequence[Op]) -> list[int]:
    """The op counts at transaction boundaries (a crash keeps exactly one of these prefixes)."""
    cuts = [0]
    for i in range(1, len(ops) + 1):
        if ops[i - 1][0] is None or i == len(ops) or ops[i][0] != ops[i - 1][0]:
            cuts.append(i)
    return cuts


def _snapshot(led: Ledger) -> dict[str, list[tuple[Any, ...]]]:
    def rows(records: Any) -> list[tuple[Any, ...]]:
        return [dataclasses.astuple(r) for r in records]

    return {
        "requests": _rows(led, _REQUESTS),
        "attempts": _rows(led, _ATTEMPTS),
        "answers": rows(led.answers_by_key().values()),
        "commits": rows(led.committed()),
        "cancelled": _rows(led, _CANCELLED),
        "events": rows(led.events()),
    }


def _prefix(full: dict[str, list[tuple[Any, ...]]], ops: Sequence[Op], k: int) -> Any:
    counts = {t: 0 for t in full}
    for _, kind, _args in ops[:k]:
        counts[_TABLE[kind]] += 1
    return {t: rows[: counts[t]] for t, rows in full.items()}


def _run_child(path: Path, ops: Sequence[Op], kill_at: int, kill_after_ops: int | None) -> int:
    """Fork a writer; it SIGKILLs itself at its ``kill_at``-th SQLite progress callback (mid
    statement), or the parent SIGKILLs it once ``kill_after_ops`` calls have returned. Returns
    how many calls the child reported done. Bounded: 30 s at most."""
    r, w = os.pipe()
    pid = os.fork()
    if pid == 0:  # the child: never returns into pytest
        code = 0
        try:
            os.close(r)
            led = Ledger.open(path, MANIFEST)
            if kill_at:
                ticks = [0]

                def tick() -> int:
                    ticks[0] += 1
                    if ticks[0] == kill_at:
                        os.kill(os.getpid(), signal.SIGKILL)
                    return 0

                led._db.set_progress_handler(tick, 8)
            _apply(led, ops, lambda: os.write(w, b"."))
            led.close()
        except BaseException:
            code = 3
        os._exit(code)
    os.close(w)
    done = 0
    deadline = time.monotonic() + 30.0
    killed = False
    try:
        while time.monotonic() < deadline:
            if kill_after_ops is not None and done >= kill_after_ops and not killed:
                os.kill(pid, signal.SIGKILL)
                killed = True
            ready, _, _ = select.select([r], [], [], 0.5)
            if ready:
                chunk = os.read(r, 4096)
                if not chunk:
                    break
                done += len(chunk)
        else:
            os.kill(pid, signal.SIGKILL)
            pytest.fail("the writer child did not finish within 30 s")
    finally:
        os.close(r)
        _, status = os.waitpid(pid, 0)
    if kill_at or (kill_after_ops is not None and kill_after_ops < len(ops)):
        assert os.WIFSIGNALED(status) and os.WTERMSIG(status) == signal.SIGKILL
    else:
        assert os.WIFEXITED(status) and os.WEXITSTATUS(status) == 0
    return done


@pytest.fixture(scope="module")
def reference(tmp_path_factory: pytest.TempPathFactory) -> tuple[list[Op], Any, int, Any]:
    """The script, the snapshot of an uninterrupted run, its progress-callback count, spend."""
    ops = _script(seed=11)
    folder = tmp_path_factory.mktemp("reference")
    led = Ledger.open(folder, MANIFEST)
    ticks = [0]

    def tick() -> int:
        ticks[0] += 1
        return 0

    led._db.set_progress_handler(tick, 8)
    _apply(led, ops)
    led._db.set_progress_handler(None, 8)
    snap, spend = _snapshot(led), led.spend()
    led.close()
    return ops, snap, ticks[0], spend


def _check_killed_ledger(folder: Path, reference: Any, reported: int) -> int:
    ops, full, _, spend = reference
    path = folder / LEDGER_FILENAME
    with Ledger.open(path, MANIFEST) as led:
        snap = _snapshot(led)
        k = sum(len(rows) for rows in snap.values())
        assert k in _cuts(ops), f"{k} rows: not a transaction boundary"
        # every call that had returned outside a batch survived
        assert k >= max(c for c in _cuts(ops) if c <= reported)
        assert snap == _prefix(full, ops, k)
        assert led._next_seq == len(snap["commits"]) + 1
        # resume: the rest of the script, then the ledger is the uninterrupted one
        _apply(led, ops[k:])
        assert _snapshot(led) == full
        assert led.spend() == spend
    with sqlite3.connect(path) as conn:
        assert conn.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
    return k


@pytest.mark.skipif(not hasattr(os, "fork"), reason="needs os.fork")
@pytest.mark.parametrize("seed", range(12))
def test_sigkill_mid_statement_leaves_a_prefix(tmp_path: Path, reference: Any, seed: int) -> None:
    ops, _, ticks, _ = reference
    kill_at = random.Random(1000 + seed).randint(1, ticks - 1)
    reported = _run_child(tmp_path / LEDGER_FILENAME, ops, kill_at, None)
    k = _check_killed_ledger(tmp_path, reference, reported)
    assert k < len(ops)


@pytest.mark.skipif(not hasattr(os, "fork"), reason="needs os.fork")
@pytest.mark.parametrize("seed", range(8))
def test_sigkill_from_outside_leaves_a_prefix(tmp_path: Path, reference: Any, seed: int) -> None:
    ops = reference[0]
    after = random.Random(2000 + seed).randint(0, len(ops) - 1)
    reported = _run_child(tmp_path / LEDGER_FILENAME, ops, 0, after)
    assert reported >= after
    _check_killed_ledger(tmp_path, reference, reported)


def test_the_kill_script_exercises_batches_and_every_table() -> None:
    ops = _script(seed=11)
    kinds = {kind for _, kind, _ in ops}
    assert kinds == set(_TABLE)
    assert any(b is not None for b, _, _ in ops) and any(b is None for b, _, _ in ops)
    assert len(_cuts(ops)) < len(ops) + 1  # some ops sit inside batches, between cut points


def test_the_guard_refuses_any_8_character_run_of_a_key(tmp_path: Path) -> None:
    # issue 22 row 2: the old guard looked for the whole key only
    header = f"Bearer {FAKE_KEY}"
    with Ledger.open(tmp_path, MANIFEST, secrets=[header, FAKE_KEY]) as led:
        _live_flow(led, ())
        key = _rows(led, _REQUESTS)[0][0]
        for part in (FAKE_KEY[:8], FAKE_KEY[-8:], FAKE_KEY[9:30]):
            with pytest.raises(LedgerError, match="secret") as info:
                led.record_attempt(key, 3, f"401: bad key {part}")
            assert part not in str(info.value)
        # seven characters are not a run; "Bearer" alone is not the key
        led.record_attempt(key, 3, f"401: Bearer token {FAKE_KEY[:7]} refused")
        assert len(_rows(led, _ATTEMPTS)) == 3
