"""The ledger's SQLite schema (its tables, their constraints and the triggers that make rows
append-only), how a file is created or checked on opening (pragmas, version, hash chain) and the
checks every value passes before it is written (exact integer units for costs, texts, keys,
counts, probabilities and bounds). Part of :mod:`verdictpack.evidence._ledger`."""

from __future__ import annotations

import math
import re
import sqlite3
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from verdictpack._errors import InputError
from verdictpack.evidence._ledger_chain import CHAIN_SCHEMA, Chain
from verdictpack.evidence._ledger_chain import damaged as _damaged
from verdictpack.evidence._ledger_chain import verify as verify_chain
from verdictpack.evidence._ledger_records import LedgerError

# "VPLG": marks the file as a verdictpack ledger (PRAGMA application_id)
_APPLICATION_ID = 0x56504C47
# 2: a commit holds M_i and H_i as bounds (unknown answers bounded both ways); 3: every call that
# may be billed is in ``sent`` before it leaves and in ``settled`` once its cost is known; 4: every
# row is linked into the hash chain (:mod:`verdictpack.evidence._ledger_chain`)
_SCHEMA_VERSION = 4

# every finite float is an integer multiple of 2**-1074
_SCALE = 1 << 1074
_TABLES = (
    "manifest",
    "requests",
    "attempts",
    "answers",
    "commits",
    "cancelled",
    "events",
    "sent",
    "settled",
)
_KEY = re.compile(r"[0-9a-f]{64}")
# the column whose conflict an INSERT OR REPLACE would resolve by deleting (commits.seq is
# covered by the contiguity trigger)
_UNIQUE = {
    "requests": "key",
    "attempts": "seq",
    "answers": "key",
    "commits": "root_id",
    "cancelled": "seq",
    "events": "seq",
    "sent": "seq",
    "settled": "sent",
}


_SCHEMA = """
CREATE TABLE manifest (
    hash TEXT PRIMARY KEY NOT NULL,
    json TEXT NOT NULL
);
CREATE TABLE requests (
    key TEXT PRIMARY KEY NOT NULL,
    manifest TEXT NOT NULL,
    root_id TEXT NOT NULL,
    judge TEXT NOT NULL,
    "order" TEXT NOT NULL CHECK ("order" IN ('treatment_first', 'null_first')),
    trial INTEGER NOT NULL CHECK (trial >= 0),
    body TEXT NOT NULL
);
CREATE TABLE attempts (
    seq INTEGER PRIMARY KEY,
    manifest TEXT NOT NULL,
    key TEXT NOT NULL REFERENCES requests(key),
    attempt INTEGER NOT NULL CHECK (attempt >= 0),
    outcome TEXT NOT NULL,
    latency REAL NOT NULL CHECK (latency >= 0),
    bytes INTEGER NOT NULL CHECK (bytes >= 0)
);
CREATE TABLE answers (
    key TEXT PRIMARY KEY NOT NULL REFERENCES requests(key),
    manifest TEXT NOT NULL,
    raw TEXT NOT NULL,
    prompt_tokens INTEGER NOT NULL CHECK (prompt_tokens >= 0),
    completion_tokens INTEGER NOT NULL CHECK (completion_tokens >= 0),
    cost REAL NOT NULL CHECK (cost >= 0),
    model_id TEXT,
    latency REAL NOT NULL CHECK (latency >= 0),
    choice TEXT NOT NULL CHECK (choice IN ('treatment', 'null_partner', 'tie', 'invalid')),
    path TEXT NOT NULL CHECK (path IN ('logprobs', 'structured', 'parser', 'none')),
    p_treatment REAL CHECK (p_treatment BETWEEN 0 AND 1)
);
CREATE TABLE commits (
    seq INTEGER PRIMARY KEY NOT NULL CHECK (seq >= 1),
    manifest TEXT NOT NULL,
    root_id TEXT NOT NULL UNIQUE,
    m_lo REAL NOT NULL CHECK (m_lo BETWEEN 0 AND 1),
    m_hi REAL NOT NULL CHECK (m_hi BETWEEN m_lo AND 1),
    h_lo REAL CHECK (h_lo BETWEEN 0 AND 1),
    h_hi REAL CHECK (h_hi BETWEEN h_lo AND 1),
    state TEXT NOT NULL,
    CHECK ((h_lo IS NULL) = (h_hi IS NULL))
);
CREATE TABLE cancelled (
    seq INTEGER PRIMARY KEY,
    manifest TEXT NOT NULL,
    key TEXT NOT NULL REFERENCES requests(key),
    cost_estimate REAL NOT NULL CHECK (cost_estimate >= 0),
    reason TEXT NOT NULL
);
CREATE TABLE events (
    seq INTEGER PRIMARY KEY,
    manifest TEXT NOT NULL,
    kind TEXT NOT NULL,
    json TEXT NOT NULL
);
CREATE TABLE sent (
    seq INTEGER PRIMARY KEY,
    manifest TEXT NOT NULL,
    key TEXT NOT NULL REFERENCES requests(key),
    attempt INTEGER NOT NULL CHECK (attempt >= 1),
    cost_max REAL NOT NULL CHECK (cost_max >= 0)
);
CREATE TABLE settled (
    sent INTEGER PRIMARY KEY NOT NULL REFERENCES sent(seq),
    manifest TEXT NOT NULL,
    kind TEXT NOT NULL CHECK (kind IN ('answered', 'failed', 'cancelled')),
    cost REAL NOT NULL CHECK (cost >= 0),
    outcome TEXT NOT NULL
);
CREATE TRIGGER manifest_single BEFORE INSERT ON manifest
WHEN (SELECT count(*) FROM manifest) > 0
BEGIN SELECT RAISE(ABORT, 'ledger: a ledger holds exactly one manifest'); END;
CREATE TRIGGER commits_prefix BEFORE INSERT ON commits
WHEN NEW.seq IS NOT (SELECT coalesce(max(seq), 0) + 1 FROM commits)
BEGIN SELECT RAISE(ABORT, 'ledger: commits form a contiguous prefix 1, 2, ...'); END;
"""


def _schema_statements() -> list[str]:
    out = [s for s in _SCHEMA.split(";\n") if s.strip()]
    for t in _TABLES:
        for op in ("UPDATE", "DELETE"):
            out.append(
                f"CREATE TRIGGER {t}_no_{op.lower()} BEFORE {op} ON {t} "
                f"BEGIN SELECT RAISE(ABORT, 'ledger is append-only: {op} on {t} refused'); END"
            )
        if t != "manifest":
            out.append(
                f"CREATE TRIGGER {t}_manifest BEFORE INSERT ON {t} "
                "WHEN NEW.manifest IS NOT (SELECT hash FROM manifest) "
                "BEGIN SELECT RAISE(ABORT, 'ledger: a row of another manifest refused'); END"
            )
            # INSERT OR REPLACE deletes the row it conflicts with; refuse the conflict itself
            # (BEFORE INSERT runs ahead of conflict resolution, whatever recursive_triggers is)
            out.append(
                f"CREATE TRIGGER {t}_no_replace BEFORE INSERT ON {t} "
                f"WHEN EXISTS (SELECT 1 FROM {t} WHERE {_UNIQUE[t]} = NEW.{_UNIQUE[t]}) "
                f"BEGIN SELECT RAISE(ABORT, 'ledger is append-only: a row of {t} "
                "cannot be replaced'); END"
            )
    # last: the chain's head hashes the complete schema (evidence/_ledger_chain.py)
    out.extend(CHAIN_SCHEMA)
    return out


def _units(x: float) -> int:
    n, d = x.as_integer_ratio()
    return n * (_SCALE // d)


def _float(units: int) -> float:
    return units / _SCALE  # int / int is correctly rounded


def _text(name: str, value: Any, *, empty: bool = False) -> str:
    if not isinstance(value, str) or (not empty and not value):
        raise InputError(name, "a string" if empty else "a non-empty string", value)
    return value


def _key(value: Any) -> str:
    if not isinstance(value, str) or _KEY.fullmatch(value) is None:
        raise InputError("key", "a request key (64 lower-case hex digits)", value)
    return value


def _count(name: str, value: Any, low: int) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < low:
        raise InputError(name, f"an integer >= {low}", value)
    return value


def _nonneg(name: str, value: Any) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise InputError(name, "a finite number >= 0", value)
    x = float(value)
    if not math.isfinite(x) or x < 0:
        raise InputError(name, "a finite number >= 0", value)
    return x


def _unit(name: str, value: Any, *, optional: bool) -> float | None:
    if value is None and optional:
        return None
    if isinstance(value, bool) or not isinstance(value, int | float) or not 0 <= value <= 1:
        raise InputError(name, "a number in [0, 1]" + (" or None" if optional else ""), value)
    return float(value)


def _bounds(name: str, value: Any, *, optional: bool) -> tuple[float | None, float | None]:
    """A value in [0, 1] or its bounds (lower <= upper); (None, None) for None if optional."""
    if value is None and optional:
        return None, None
    lo, hi = value if isinstance(value, tuple) and len(value) == 2 else (value, value)
    a, b = _unit(name, lo, optional=False), _unit(name, hi, optional=False)
    if a is None or b is None or a > b:
        raise InputError(name, "a number in [0, 1] or bounds (lower <= upper) in it", value)
    return a, b


def _choice(name: str, value: Any, allowed: Sequence[str]) -> str:
    if value not in allowed:
        raise InputError(name, "one of " + ", ".join(allowed), value)
    return str(value)


def _prepare(
    conn: sqlite3.Connection, path: Path, create: tuple[str, str] | None
) -> tuple[str, str]:
    """Set the pragmas, create the schema in a new file (when ``create`` gives the manifest
    hash and text), check the file is a ledger; return its stored manifest hash and text."""
    try:
        if create is not None:
            mode = conn.execute("PRAGMA journal_mode=WAL").fetchone()[0]
            if mode != "wal":
                raise LedgerError(f"ledger {path}: cannot use WAL journal mode (got {mode!r})")
            conn.execute("PRAGMA foreign_keys=ON")
            conn.execute("PRAGMA recursive_triggers=ON")
        app = conn.execute("PRAGMA application_id").fetchone()[0]
        version = conn.execute("PRAGMA user_version").fetchone()[0]
        tables = conn.execute("SELECT count(*) FROM sqlite_master").fetchone()[0]
    except sqlite3.DatabaseError as exc:
        raise LedgerError(f"ledger {path}: {_damaged(exc)}") from None
    if create is not None and app == 0 and version == 0 and tables == 0:
        conn.execute("PRAGMA synchronous=FULL")
        conn.execute("BEGIN IMMEDIATE")
        try:
            for stmt in _schema_statements():
                conn.execute(stmt)
            chain = Chain.start(conn)
            cur = conn.execute("INSERT INTO manifest (hash, json) VALUES (?, ?)", create)
            chain.append(conn, "manifest", int(cur.lastrowid or 0))
            conn.execute(f"PRAGMA application_id={_APPLICATION_ID}")
            conn.execute(f"PRAGMA user_version={_SCHEMA_VERSION}")
            conn.execute("COMMIT")
        except BaseException:
            conn.execute("ROLLBACK")
            raise
        return create
    if app != _APPLICATION_ID:
        raise LedgerError(f"ledger {path}: this SQLite file is not a verdictpack ledger")
    if version != _SCHEMA_VERSION:
        raise LedgerError(
            f"ledger {path}: schema version {version}; this verdictpack reads version "
            f"{_SCHEMA_VERSION}"
        )
    try:
        broken = verify_chain(conn)
        rows = conn.execute("SELECT hash, json FROM manifest").fetchall()
    except sqlite3.DatabaseError as exc:
        raise LedgerError(f"ledger {path}: {_damaged(exc)}") from None
    if broken is not None:
        raise LedgerError(f"ledger {path}: {broken}")
    if len(rows) != 1:
        raise LedgerError(f"ledger {path}: holds {len(rows)} manifests; expected exactly one")
    return str(rows[0][0]), str(rows[0][1])
