"""The evidence ledger's hash chain: every row the ledger writes is linked to the one before it.

Tamper evidence for :mod:`verdictpack.evidence._ledger`. The ledger's tables are append-only by
triggers, but a SQLite file can be edited by anything that opens it (the triggers dropped, a
choice edited, an answer or a commit deleted, a cost lowered). The chain makes every such edit
visible: resume, ``verdictpack status`` and ``verdictpack audit`` (which checks the chain again
with code of its own, :mod:`verdictpack.verify._ledger_audit`) refuse a ledger whose chain does
not hold, naming the table and the row.

The chain (version 1), in the table ``chain(seq, tbl, rid, link)``:

* link 0, the *head*: ``tbl`` is ``""``, ``rid`` 0 and ``link`` the SHA-256 (hex) of
  ``"verdictpack/ledger-chain/v1\\nschema\\n"`` followed by the canonical JSON of the schema as
  SQLite stores it: ``[[type, name, tbl_name, sql], ...]`` for every row of ``sqlite_master``
  with an ``sql`` and a name not starting with ``sqlite_``, sorted by (type, name). Dropping,
  adding or changing a table, an index or a trigger (the append-only triggers included) changes
  it.
* link k >= 1: one row of table ``tbl`` with rowid ``rid``, written in the same transaction as
  that row; ``link`` is the SHA-256 (hex) of ``link[k-1] + "\\n"`` followed by the canonical JSON
  of ``[tbl, rid, [value, ...]]``, the row's values in the table's column order, each value
  tagged by its SQLite type: ``null`` for NULL, ``["i", "<decimal>"]`` for an INTEGER,
  ``["r", "<float.hex()>"]`` for a REAL (exact), ``["t", text]`` for TEXT, ``["b", "<hex>"]``
  for a BLOB. Canonical JSON: sorted keys, no whitespace, UTF-8 as is
  (``ensure_ascii=False``).

Verification (:func:`verify`): the schema digest equals the head; the links are 0, 1, 2, ...
contiguous; every chained row is still there and hashes to its link; no table holds a row the
chain does not list. Without a secret key the chain cannot stop someone who rewrites every link
after an edit; it stops every edit made by other means than verdictpack's writer, which is what
resume and the audit need to tell (a forger has to know and recompute this format).
"""

from __future__ import annotations

import hashlib
import json
import re
import sqlite3
from collections.abc import Sequence
from typing import Any

__all__ = ["CHAIN_SCHEMA", "Chain", "damaged", "schema_digest", "table_of", "verify"]

_DOMAIN = "verdictpack/ledger-chain/v1\n"
_INSERT = re.compile(r"\s*INSERT\s+INTO\s+(\w+)", re.IGNORECASE)
_ALTERED = (
    "the ledger was altered outside verdictpack (rows edited, deleted or added, or its schema "
    "changed, by other means than a verdictpack run); refused: its evidence can no longer be "
    "trusted. Restore the ledger from a backup, or start the study afresh in a new folder"
)

CHAIN_SCHEMA = (
    "CREATE TABLE chain (\n"
    "    seq INTEGER PRIMARY KEY NOT NULL CHECK (seq >= 0),\n"
    "    tbl TEXT NOT NULL,\n"
    "    rid INTEGER NOT NULL,\n"
    "    link TEXT NOT NULL\n"
    ")",
    "CREATE TRIGGER chain_no_update BEFORE UPDATE ON chain "
    "BEGIN SELECT RAISE(ABORT, 'ledger is append-only: UPDATE on chain refused'); END",
    "CREATE TRIGGER chain_no_delete BEFORE DELETE ON chain "
    "BEGIN SELECT RAISE(ABORT, 'ledger is append-only: DELETE on chain refused'); END",
    "CREATE TRIGGER chain_prefix BEFORE INSERT ON chain "
    "WHEN NEW.seq IS NOT (SELECT coalesce(max(seq) + 1, 0) FROM chain) "
    "BEGIN SELECT RAISE(ABORT, 'ledger: the chain is a contiguous prefix 0, 1, ...'); END",
)


def _canonical(value: Any) -> bytes:
    text = json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return text.encode("utf-8")


def _tag(v: Any) -> Any:
    if v is None:
        return None
    if isinstance(v, int):
        return ["i", str(v)]
    if isinstance(v, float):
        return ["r", v.hex()]
    if isinstance(v, str):
        return ["t", v]
    return ["b", bytes(v).hex()]


def schema_digest(db: sqlite3.Connection) -> str:
    """The head link: SHA-256 of the schema as ``sqlite_master`` holds it (module docstring)."""
    rows = db.execute(
        "SELECT type, name, tbl_name, sql FROM sqlite_master "
        "WHERE sql IS NOT NULL AND name NOT LIKE 'sqlite\\_%' ESCAPE '\\' ORDER BY type, name"
    ).fetchall()
    data = _DOMAIN.encode() + b"schema\n" + _canonical([list(r) for r in rows])
    return hashlib.sha256(data).hexdigest()


def _link(prev: str, table: str, rid: int, values: Sequence[Any]) -> str:
    data = prev.encode() + b"\n" + _canonical([table, rid, [_tag(v) for v in values]])
    return hashlib.sha256(data).hexdigest()


def table_of(sql: str) -> str:
    """The table an ``INSERT INTO <table>`` statement writes."""
    m = _INSERT.match(sql)
    if m is None:
        raise ValueError(f"not an INSERT statement: {sql[:40]!r}")
    return m.group(1)


class Chain:
    """The writer's end of the chain: the last link, advanced by :meth:`append` inside the
    transaction of the row it links."""

    def __init__(self, seq: int, link: str) -> None:
        self.seq = seq
        self.link = link

    @classmethod
    def start(cls, db: sqlite3.Connection) -> Chain:
        """Write the head (link 0) of a new ledger, inside its schema's transaction, after the
        schema is complete."""
        head = schema_digest(db)
        db.execute("INSERT INTO chain (seq, tbl, rid, link) VALUES (0, '', 0, ?)", (head,))
        return cls(0, head)

    @classmethod
    def load(cls, db: sqlite3.Connection) -> Chain:
        """The last link of an existing ledger (its chain verified apart)."""
        row = db.execute("SELECT seq, link FROM chain ORDER BY seq DESC LIMIT 1").fetchone()
        if row is None:
            raise sqlite3.DatabaseError("the ledger's chain has no head")
        return cls(int(row[0]), str(row[1]))

    def append(self, db: sqlite3.Connection, table: str, rid: int) -> None:
        """Link the row ``rid`` of ``table`` just inserted (same transaction); the in-memory
        link advances only once the link row is written."""
        values = db.execute(f'SELECT * FROM "{table}" WHERE rowid = ?', (rid,)).fetchone()
        if values is None:
            raise sqlite3.DatabaseError(f"row {rid} of {table} not found right after its insert")
        link = _link(self.link, table, rid, values)
        db.execute(
            "INSERT INTO chain (seq, tbl, rid, link) VALUES (?, ?, ?, ?)",
            (self.seq + 1, table, rid, link),
        )
        self.seq, self.link = self.seq + 1, link


def _row_name(db: sqlite3.Connection, table: str, rid: int) -> str:
    """``row <rid> of table <t>`` with its key columns' values when the row is there."""
    name = f"row {rid} of table {table}"
    try:
        cols = [c[1] for c in db.execute(f'PRAGMA table_info("{table}")') if c[5]]
        if cols:
            sel = ", ".join(f'"{c}"' for c in cols)
            got = db.execute(f'SELECT {sel} FROM "{table}" WHERE rowid = ?', (rid,)).fetchone()
            if got is not None:
                keys = ", ".join(f"{c} {str(v)[:16]!r}" for c, v in zip(cols, got, strict=True))
                name += f" ({keys})"
    except sqlite3.DatabaseError:
        pass
    return name


def verify(db: sqlite3.Connection) -> str | None:
    """None when the chain holds; else what broke it, naming the table and row, and what to
    do. Reads inside one read transaction (a run may be writing meanwhile)."""
    db.execute("BEGIN")
    try:
        return _verify(db)
    finally:
        db.execute("ROLLBACK")


def _verify(db: sqlite3.Connection) -> str | None:
    tables = [
        t
        for (t,) in db.execute(
            "SELECT name FROM sqlite_master WHERE type = 'table' "
            "AND name NOT LIKE 'sqlite\\_%' ESCAPE '\\' ORDER BY name"
        )
    ]
    if "chain" not in tables:
        return f"its hash chain (table chain) is missing: {_ALTERED}"
    links = db.execute("SELECT seq, tbl, rid, link FROM chain ORDER BY seq")
    prev = ""
    chained: dict[str, set[int]] = {}
    for k, (seq, tbl, rid, link) in enumerate(links):
        if seq != k:
            return f"link {k} of its hash chain is missing (found link {seq}): {_ALTERED}"
        if k == 0:
            if link != schema_digest(db):
                return (
                    "its schema (tables, indexes or the append-only triggers) is not the one it "
                    f"was created with: {_ALTERED}"
                )
            prev = link
            continue
        if tbl not in tables:
            return f"table {tbl} (row {rid}, chain link {k}) is gone: {_ALTERED}"
        values = db.execute(f'SELECT * FROM "{tbl}" WHERE rowid = ?', (rid,)).fetchone()
        if values is None:
            return f"row {rid} of table {tbl} (chain link {k}) was deleted: {_ALTERED}"
        expected = _link(prev, tbl, rid, values)
        if expected != link:
            return (
                f"{_row_name(db, tbl, rid)} (chain link {k}) does not hold the values it was "
                f"written with: {_ALTERED}"
            )
        chained.setdefault(tbl, set()).add(int(rid))
        prev = link
    if not prev:
        return f"its hash chain has no head: {_ALTERED}"
    for t in tables:
        if t == "chain":
            continue
        known = chained.get(t, set())
        (count,) = db.execute(f'SELECT count(*) FROM "{t}"').fetchone()
        if count != len(known):
            extra = next(
                (
                    r
                    for (r,) in db.execute(f'SELECT rowid FROM "{t}" ORDER BY rowid')
                    if r not in known
                ),
                None,
            )
            where = "a row" if extra is None else _row_name(db, t, int(extra))
            return f"{where} is not in the hash chain (added outside verdictpack): {_ALTERED}"
    return None


def damaged(exc: BaseException) -> str:
    """What to say of a ledger SQLite cannot read (not SQLite, truncated, corrupted)."""
    return (
        f"not a readable SQLite ledger ({exc}): the file is damaged or is not a verdictpack "
        "ledger; restore it from a backup, or start the study afresh in a new folder (nothing "
        "was written)"
    )
