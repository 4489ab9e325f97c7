"""The evidence ledger of a live study: its cache and its crash-safe memory, in one SQLite file.

A live study asks judge endpoints for judgments, pays for every answer and commits evidence to the
e-process root by root in the registered order. The ledger (``ledger.sqlite`` in the study's
output folder, stdlib :mod:`sqlite3`) records all of it as it happens, so that a rerun after any
interruption (Ctrl-C, SIGKILL, a power cut) resumes without asking any answered request again and
without re-deciding anything already committed.

Identity. A ledger belongs to exactly one study manifest (the study's config hash, judges,
endpoints without keys, prompts, sampling, the registered order's hash ...). The manifest is
canonicalised (``json.dumps(sort_keys=True, separators=(",", ":"), ensure_ascii=False)``) and
hashed with SHA-256; every row carries that hash, and :meth:`Ledger.open` refuses a ledger that
holds another one. A request's key is :func:`request_key`: the SHA-256 of
``manifest_hash + "\\n" + canonical JSON`` of what identifies the request (the request body, or a
mapping wrapping it with the judge, trial and endpoint URL). Only what is passed enters the key:
never pass headers, so never an API key. Two requests with the same key are the same request
and share one cached answer.

Tables (append only: triggers RAISE on every UPDATE and DELETE, ``recursive_triggers`` is on so an
``INSERT OR REPLACE`` cannot delete through the back door, and an INSERT whose manifest hash is not
the ledger's is refused)::

    manifest(hash PRIMARY KEY, json)                      exactly one row
    requests(key PRIMARY KEY, root_id, judge, "order", trial, body)
    attempts(seq, key, attempt, outcome (HTTP status or error text), latency, bytes)
    answers(key PRIMARY KEY, raw, prompt_tokens, completion_tokens, cost, model_id, latency,
            choice, path, p_treatment)
    commits(seq PRIMARY KEY = 1, 2, ... contiguous, root_id UNIQUE, m_lo <= m_hi,
            h_lo <= h_hi (both NULL: no H_i), state)
    cancelled(seq, key, cost_estimate, reason)
    events(seq, kind, json)                               a run's start, heartbeats, end ...
    sent(seq, key, attempt, cost_max)                     a call about to leave, its worst case
    settled(sent, kind (answered, failed, cancelled), cost, outcome)
                                                          what became of a sent call

Durability. ``journal_mode=WAL``: readers (:meth:`Ledger.open_readonly`, e.g. a status command)
never block the writer. That one run at a time writes a study folder is the folder lock's job
(:class:`verdictpack.evidence._live_folder.LiveFolder`), not the ledger's. Each ``record_*`` call
is one transaction, so a crash loses at most the call in flight, and SQLite's
WAL recovery keeps exactly a prefix of the committed transactions, never part of one.
``synchronous`` is chosen per transaction:

* ``FULL`` (the WAL is fsynced at commit) for the manifest, sent calls, answers, commits,
  settlements, cancellations and events: what was paid for and what was decided survives a
  power cut once the call returns;
* ``NORMAL`` for requests and attempts. In WAL mode NORMAL still survives any process crash
  (SIGKILL included: the written frames are in the operating system's cache); only an operating
  system crash or power cut can lose the newest of those rows, and never one that a durable row
  depends on, because a FULL commit syncs every frame written before it and recovery replays the
  WAL as a prefix. Losing the newest request or attempt rows costs a diagnostic line, not money.

``with ledger.batch():`` groups several records into one transaction (committed ``FULL``), for
throughput where fsyncs are slow; a crash inside a batch loses the whole batch and nothing
else. If the body of a batch raises, the records already made are committed (each is whole) and
the exception propagates.

Money. Every call that may be billed is recorded by :meth:`Ledger.record_sent` (its attempt and
worst-case cost) in a transaction that is durable before the call leaves; each such row is then
settled once: by the answer (its cost), a failure (:meth:`Ledger.record_failed`: a malformed body
at its ``usage`` or else its worst case, a call that timed out or dropped at its worst case, an
error status at 0) or a cancellation (its worst case: stopped in flight, or found unsettled when
a killed run is resumed). A sent call not yet settled counts at its worst case, so the spend is
never below what the provider can bill at the configured prices. :meth:`Ledger.spend` sums costs
exactly (integers in units of 2**-1074, the smallest
float step), so the totals are correctly rounded and do not depend on the order in which answers
arrived: a resumed study sees to the last bit the spend an uninterrupted one would.

Secrets. :meth:`Ledger.open` takes the study's secret values (the API keys read from the
environment); any text about to be stored that contains one is refused, nothing is written, and
the message never repeats the secret.

Reading. Every record (:class:`Answer`, :class:`Commit`, :class:`Event`) reads by attribute or by
field name (``answer.cost`` or ``answer["cost"]``).
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import sqlite3
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

from verdictpack._errors import InputError
from verdictpack.evidence._choice import ORDERS, PATHS
from verdictpack.evidence._ledger_chain import Chain, table_of
from verdictpack.evidence._ledger_chain import damaged as _damaged
from verdictpack.evidence._ledger_guard import _check_secrets, _guard
from verdictpack.evidence._ledger_records import (
    Answer,
    Commit,
    Event,
    LedgerError,
    Spend,
    _mapping,
    canonical_json,
    manifest_hash,
    request_key,
)
from verdictpack.evidence._ledger_schema import (
    _bounds,
    _choice,
    _count,
    _float,
    _key,
    _nonneg,
    _prepare,
    _text,
    _unit,
    _units,
)
from verdictpack.evidence._table import CHOICES

__all__ = [
    "CHOICES",
    "LEDGER_FILENAME",
    "ORDERS",
    "Answer",
    "Commit",
    "Event",
    "Ledger",
    "LedgerError",
    "Spend",
    "canonical_json",
    "manifest_hash",
    "request_key",
]

LEDGER_FILENAME = "ledger.sqlite"
_MISMATCH = "a study never mixes manifests; start a fresh study in a new folder"


class Ledger:
    """An open evidence ledger: :meth:`open` (read-write) or :meth:`open_readonly`."""

    def __init__(
        self,
        conn: sqlite3.Connection,
        path: Path,
        digest: str,
        manifest_text: str,
        secrets: tuple[str, ...],
        readonly: bool,
    ) -> None:
        self._conn: sqlite3.Connection | None = conn
        self.path = path
        self.manifest_hash = digest
        self.manifest: dict[str, Any] = json.loads(manifest_text)
        self.readonly = readonly
        self._secrets = secrets
        self._sync = ""
        self._batch_depth = 0
        self._next_seq = 1
        self._committed_roots: set[str] = set()
        self._committed_units = 0
        self._pending_units: dict[str, int] = {}
        self._cancelled_units = 0
        # sent calls not yet settled: key -> [(sent seq, worst-case units)]; their sum; the
        # count of sent rows by key (the next attempt's number)
        self._open: dict[str, list[tuple[int, int]]] = {}
        self._open_units = 0
        self._tries: dict[str, int] = {}
        self._chain = Chain.load(conn)
        self._load_state()

    # ---- opening -------------------------------------------------------------------------

    @classmethod
    def open(
        cls, path: Path | str, manifest: Mapping[str, Any], *, secrets: Sequence[str] = ()
    ) -> Ledger:
        """Create the ledger at ``path`` or open the one there, refusing another manifest.

        ``path`` is the ledger file, or a folder (then ``folder / "ledger.sqlite"``); the folder
        must exist. ``secrets`` are values that must never be stored (each at least 8
        characters): the API keys of the study's endpoints.
        """
        manifest_text = canonical_json(_mapping("manifest", manifest), "manifest")
        digest = hashlib.sha256(manifest_text.encode("utf-8")).hexdigest()
        guards = _check_secrets(secrets)
        _guard(guards, "manifest", manifest_text)
        p = _ledger_path(path)
        if not p.parent.is_dir():
            raise LedgerError(f"ledger {p}: the folder {p.parent} does not exist")
        return cls._connect(p, (digest, manifest_text), guards)

    @classmethod
    def open_readonly(cls, path: Path | str) -> Ledger:
        """Open an existing ledger for reading only (whatever its manifest); writes are refused.

        Safe while a run writes the same ledger: WAL readers see the last committed state.
        """
        p = _ledger_path(path)
        if not p.is_file():
            raise LedgerError(f"ledger {p}: no such file")
        return cls._connect(p, None, ())

    @classmethod
    def _connect(
        cls, p: Path, manifest: tuple[str, str] | None, secrets: tuple[str, ...]
    ) -> Ledger:
        """Connect to the ledger file ``p`` and open the ledger there: read-write with the
        study's ``manifest`` (hash, canonical text; refused if the file holds another one),
        read-only without. The connection is closed again if the opening fails."""
        try:
            if manifest is None:
                conn = sqlite3.connect(
                    f"{p.resolve().as_uri()}?mode=ro", uri=True, isolation_level=None
                )
            else:  # one thread at a time, but not always the opening one (commit_batch)
                conn = sqlite3.connect(p, isolation_level=None, check_same_thread=False)
        except sqlite3.Error as exc:
            raise LedgerError(f"ledger {p}: cannot be opened ({exc})") from None
        try:
            digest, text = _prepare(conn, p, manifest)
            if manifest is None:
                conn.execute("PRAGMA query_only=ON")
            elif digest != manifest[0]:
                raise LedgerError(
                    f"ledger {p} holds manifest {digest[:12]}, this study's manifest is "
                    f"{manifest[0][:12]}: {_MISMATCH}"
                )
            else:
                text = manifest[1]
            return cls(conn, p, digest, text, secrets, readonly=manifest is None)
        except sqlite3.DatabaseError as exc:
            conn.close()
            raise LedgerError(f"ledger {p}: {_damaged(exc)}") from None
        except BaseException:
            conn.close()
            raise

    def _load_state(self) -> None:
        db = self._db
        roots = [r for (r,) in db.execute("SELECT root_id FROM commits ORDER BY seq")]
        self._committed_roots = done = set(roots)
        self._next_seq = len(roots) + 1
        committed = 0
        pending: dict[str, int] = {}
        rows = db.execute(
            "SELECT r.root_id, a.cost FROM answers a JOIN requests r ON r.key = a.key"
        )
        for root, cost in rows:
            u = _units(cost)
            if root in done:
                committed += u
            else:
                pending[root] = pending.get(root, 0) + u
        self._committed_units = committed
        self._pending_units = pending
        self._cancelled_units = sum(
            _units(c) for (c,) in db.execute("SELECT cost_estimate FROM cancelled")
        )
        self._cancelled_units += sum(
            _units(c) for (c,) in db.execute("SELECT cost FROM settled WHERE kind = 'failed'")
        )
        rows = db.execute(
            "SELECT s.seq, s.key, s.cost_max FROM sent s "
            "WHERE NOT EXISTS (SELECT 1 FROM settled t WHERE t.sent = s.seq) ORDER BY s.seq"
        )
        for seq, key, cost_max in rows:
            self._open.setdefault(key, []).append((seq, _units(cost_max)))
            self._open_units += _units(cost_max)
        for key, n in db.execute("SELECT key, count(*) FROM sent GROUP BY key"):
            self._tries[key] = n

    # ---- plumbing ------------------------------------------------------------------------

    @property
    def _db(self) -> sqlite3.Connection:
        if self._conn is None:
            raise LedgerError(f"ledger {self.path}: already closed")
        return self._conn

    def _writable(self, what: str) -> sqlite3.Connection:
        db = self._db
        if self.readonly:
            raise LedgerError(f"ledger {self.path}: opened read-only; {what} refused")
        return db

    def _write(self, sync: str, sql: str, params: Sequence[Any], what: str) -> sqlite3.Cursor:
        db = self._writable(what)
        if self._batch_depth == 0 and sync != self._sync:
            db.execute(f"PRAGMA synchronous={sync}")
            self._sync = sync
        # the row and its link in the hash chain, in one transaction (a savepoint inside a batch)
        chain = (self._chain.seq, self._chain.link)
        try:
            db.execute("SAVEPOINT ledger_write")
            try:
                cur = db.execute(sql, params)
                self._chain.append(db, table_of(sql), int(cur.lastrowid or 0))
                db.execute("RELEASE ledger_write")
            except BaseException:
                self._chain.seq, self._chain.link = chain
                if not db.in_transaction:  # pragma: no cover - a failed COMMIT rolled back
                    raise
                db.execute("ROLLBACK TO ledger_write")
                db.execute("RELEASE ledger_write")
                raise
            return cur
        except sqlite3.IntegrityError as exc:
            raise LedgerError(f"ledger {self.path}: {what} refused ({exc})") from None
        except sqlite3.Error as exc:
            raise LedgerError(f"ledger {self.path}: {what} failed ({exc})") from None

    @contextlib.contextmanager
    def batch(self) -> Iterator[Ledger]:
        """Group the records made inside into one transaction (committed with FULL sync).

        Nested batches join the outermost one. A crash inside loses the whole batch; an
        exception raised by the body commits the records already made, then propagates.
        """
        if self._batch_depth:
            self._batch_depth += 1
            try:
                yield self
            finally:
                self._batch_depth -= 1
            return
        self.begin_batch()
        try:
            yield self
        finally:
            self.commit_batch()

    def begin_batch(self) -> None:
        """Open a batch that :meth:`commit_batch` ends: the two halves of :meth:`batch`, for a
        caller whose commit runs elsewhere (a live run syncs in a worker thread, so its event
        loop goes on receiving answers meanwhile). From here until the commit returns, the
        ledger belongs to that batch: nothing else may use it, from any thread."""
        db = self._writable("batch")
        if self._batch_depth:
            raise LedgerError(f"ledger {self.path}: begin_batch inside an open batch")
        if self._sync != "FULL":
            db.execute("PRAGMA synchronous=FULL")
            self._sync = "FULL"
        db.execute("BEGIN IMMEDIATE")
        self._batch_depth = 1

    def commit_batch(self) -> None:
        """Commit the batch :meth:`begin_batch` opened (FULL sync). It may run in another
        thread than the one that opened it, while no other thread uses the ledger."""
        db = self._db
        if self._batch_depth != 1:
            raise LedgerError(f"ledger {self.path}: commit_batch without an open batch")
        self._batch_depth = 0
        try:
            db.execute("COMMIT")
        except sqlite3.Error as exc:
            self._conn = None
            db.close()
            raise LedgerError(
                f"ledger {self.path}: a batch could not be committed ({exc}); "
                "the ledger is closed, reopen it to resume"
            ) from None

    def close(self) -> None:
        """Close the ledger (idempotent); the last connection checkpoints the WAL."""
        if self._conn is not None:
            conn, self._conn = self._conn, None
            conn.close()

    def __enter__(self) -> Ledger:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # ---- requests, attempts, answers: the cache ------------------------------------------

    def request_key(self, body: Mapping[str, Any]) -> str:
        """This ledger's cache key of a request (see :func:`request_key`); pass no headers."""
        return request_key(body, self.manifest_hash)

    def record_request(
        self,
        key: str,
        root_id: str,
        judge: str,
        order: str,
        trial: int,
        body: Mapping[str, Any],
        *,
        canonical: str | None = None,
    ) -> None:
        """Record a request (its JSON body, as canonical text) before it is sent.

        Recording the same key again with the same root, judge, order and trial is a no-op (a
        resumed study does it); the same key for another root, judge, order or trial is
        refused: the two would share one cached answer, so the key must tell them apart.
        ``canonical`` is the body's canonical JSON when the caller has made it already (the
        live runner splices it from the pieces its request keys are made of, and sends those
        very bytes); it is stored as given, so it must be what :func:`canonical_json` gives.
        """
        data = _mapping("body", body)
        if canonical is None:
            text = canonical_json(data, "body")
        elif isinstance(canonical, str) and canonical.startswith("{") and canonical.endswith("}"):
            text = canonical
        else:
            raise InputError("canonical", "the canonical JSON text of the body", canonical)
        row = (
            _text("root_id", root_id),
            _text("judge", judge),
            _choice("order", order, ORDERS),
            _count("trial", trial, 0),
        )
        for name, value in (("root_id", root_id), ("judge", judge), ("body", text)):
            _guard(self._secrets, name, value)
        old = (
            self._writable("record_request")
            .execute(
                'SELECT root_id, judge, "order", trial FROM requests WHERE key = ?', (_key(key),)
            )
            .fetchone()
        )
        if old is None:
            self._write(
                "NORMAL",
                'INSERT INTO requests (key, manifest, root_id, judge, "order", trial, body) '
                "VALUES (?, ?, ?, ?, ?, ?, ?)",
                (key, self.manifest_hash, *row, text),
                "record_request",
            )
        elif tuple(old) != row:
            raise LedgerError(
                f"record_request: key {key[:12]} was recorded for (root {old[0]!r}, judge "
                f"{old[1]!r}, {old[2]}, trial {old[3]}); refused for (root {row[0]!r}, judge "
                f"{row[1]!r}, {row[2]}, trial {row[3]}): the two would share one cached "
                "answer (the request key must tell them apart)"
            )

    def record_attempt(
        self, key: str, attempt: int, outcome: int | str, latency: float = 0.0, nbytes: int = 0
    ) -> None:
        """Record one try of a request: ``outcome`` is its HTTP status or its error text.

        ``attempt`` counts from 1 for the tries of one send; 0 marks a note outside the
        retry loop (e.g. an unreadable body). ``latency`` in seconds, ``nbytes`` received.
        """
        if isinstance(outcome, int) and not isinstance(outcome, bool):
            if not 100 <= outcome <= 599:
                raise InputError("outcome", "an HTTP status 100..599 or an error text", outcome)
            text = str(outcome)
        else:
            text = _text("outcome", outcome)
            _guard(self._secrets, "outcome", text)
        self._write(
            "NORMAL",
            "INSERT INTO attempts (manifest, key, attempt, outcome, latency, bytes) "
            "VALUES (?, ?, ?, ?, ?, ?)",
            (
                self.manifest_hash,
                _key(key),
                _count("attempt", attempt, 0),
                text,
                _nonneg("latency", latency),
                _count("nbytes", nbytes, 0),
            ),
            f"record_attempt of request {key[:12]} (recorded requests only)",
        )

    def record_answer(
        self,
        key: str,
        *,
        raw: str | bytes,
        prompt_tokens: int,
        completion_tokens: int,
        cost: float,
        model_id: str | None,
        latency: float,
        choice: str,
        path: str,
        p_treatment: float | None,
    ) -> None:
        """Record the answer to a recorded request (once: a request is answered only once).

        ``raw`` is the response body as received (bytes must be UTF-8); ``choice`` one of
        :data:`CHOICES`; ``path`` how it was read, one of
        :data:`~verdictpack.evidence._choice.PATHS`; ``p_treatment`` P(treatment) from the
        logprobs, or None.
        """
        if isinstance(raw, bytes):
            try:
                raw = raw.decode("utf-8")
            except UnicodeDecodeError:
                raise InputError("raw", "UTF-8 text", f"({len(raw)} bytes, not UTF-8)") from None
        raw = _text("raw", raw, empty=True)
        if model_id is not None:
            _guard(self._secrets, "model_id", _text("model_id", model_id))
        _guard(self._secrets, "raw", raw)
        amount = _nonneg("cost", cost)
        params = (
            _key(key),
            self.manifest_hash,
            raw,
            _count("prompt_tokens", prompt_tokens, 0),
            _count("completion_tokens", completion_tokens, 0),
            amount,
            model_id,
            _nonneg("latency", latency),
            _choice("choice", choice, CHOICES),
            _choice("path", path, PATHS),
            _unit("p_treatment", p_treatment, optional=True),
        )
        db = self._writable("record_answer")
        found = db.execute(
            "SELECT r.root_id, a.key FROM requests r LEFT JOIN answers a ON a.key = r.key "
            "WHERE r.key = ?",
            (key,),
        ).fetchone()
        if found is None:
            raise LedgerError(f"record_answer: no request recorded under key {key[:12]}")
        if found[1] is not None:
            raise LedgerError(
                f"record_answer: request {key[:12]} is already answered; the ledger keeps the "
                "first answer and a request already answered is never sent again"
            )
        self._write(
            "FULL",
            "INSERT INTO answers (key, manifest, raw, prompt_tokens, completion_tokens, cost, "
            "model_id, latency, choice, path, p_treatment) "
            "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            params,
            f"record_answer of request {key[:12]}",
        )
        root, u = found[0], _units(amount)
        if root in self._committed_roots:
            self._committed_units += u
        else:
            self._pending_units[root] = self._pending_units.get(root, 0) + u
        self._settle(key, "answered", amount, "answered")

    def answers_by_key(self) -> dict[str, Answer]:
        """Every stored answer by request key, in the order they were recorded."""
        rows = self._db.execute(_ANSWER_SELECT + " ORDER BY a.rowid")
        return {row[0]: Answer(*row) for row in rows}

    def answer_choices(self) -> dict[str, tuple[str, float | None, str, float]]:
        """Every stored answer's ``(choice, p_treatment, path, cost)`` by request key, in the
        order recorded: what a resumed run needs of each answer, read without the raw bodies
        (a fraction of :meth:`answers_by_key`'s time on a large ledger)."""
        rows = self._db.execute(
            "SELECT key, choice, p_treatment, path, cost FROM answers ORDER BY rowid"
        )
        return {row[0]: (row[1], row[2], row[3], row[4]) for row in rows}

    # ---- commits: the prefix of the registered order --------------------------------------

    def commit_root(
        self,
        seq: int,
        root_id: str,
        m: float | tuple[float, float],
        h: float | tuple[float, float] | None,
        state: str,
    ) -> None:
        """Commit root ``root_id`` as the ``seq``-th root of the registered order.

        Only the next seq is accepted (commits are a contiguous prefix 1, 2, ...), and a root
        is committed once. ``m`` is M_i, ``h`` is H_i or None (no human judgment), each a number
        or its bounds (lower, upper); ``state`` the e-process state after it (text, e.g. JSON).
        """
        seq = _count("seq", seq, 1)
        root_id = _text("root_id", root_id)
        if seq != self._next_seq:
            raise LedgerError(
                f"commit_root: seq {seq} refused; the next commit is seq {self._next_seq} "
                "(commits are a contiguous prefix of the registered order)"
            )
        if root_id in self._committed_roots:
            raise LedgerError(f"commit_root: root {root_id!r} is already committed")
        state = _text("state", state)
        _guard(self._secrets, "state", state)
        _guard(self._secrets, "root_id", root_id)
        m_lo, m_hi = _bounds("m", m, optional=False)
        h_lo, h_hi = _bounds("h", h, optional=True)
        self._write(
            "FULL",
            "INSERT INTO commits (seq, manifest, root_id, m_lo, m_hi, h_lo, h_hi, state) "
            "VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
            (seq, self.manifest_hash, root_id, m_lo, m_hi, h_lo, h_hi, state),
            f"commit_root of seq {seq}",
        )
        self._next_seq = seq + 1
        self._committed_roots.add(root_id)
        self._committed_units += self._pending_units.pop(root_id, 0)

    def committed(self) -> list[Commit]:
        """Every commit, in seq order."""
        rows = self._db.execute(
            "SELECT seq, root_id, m_lo, m_hi, h_lo, h_hi, state FROM commits ORDER BY seq"
        )
        return [Commit(*row) for row in rows]

    # ---- money and events ----------------------------------------------------------------

    def record_cancelled(self, key: str, cost_estimate: float, reason: str) -> None:
        """Record a recorded request abandoned in flight, with the cost it may still be billed."""
        reason = _text("reason", reason)
        _guard(self._secrets, "reason", reason)
        estimate = _nonneg("cost_estimate", cost_estimate)
        self._write(
            "FULL",
            "INSERT INTO cancelled (manifest, key, cost_estimate, reason) VALUES (?, ?, ?, ?)",
            (self.manifest_hash, _key(key), estimate, reason),
            f"record_cancelled of request {key[:12]} (recorded requests only)",
        )
        self._cancelled_units += _units(estimate)
        self._settle(key, "cancelled", estimate, reason)

    def record_sent(self, key: str, attempt: int, cost_max: float) -> None:
        """Record that a call of the recorded request ``key`` is about to leave: its attempt
        number (from 1, over every run of the study) and the most it can cost. Commit it (FULL,
        e.g. by a batch) before the call leaves; it counts at ``cost_max`` until settled."""
        worst = _nonneg("cost_max", cost_max)
        seq_units = _units(worst)
        cur = self._write(
            "FULL",
            "INSERT INTO sent (manifest, key, attempt, cost_max) VALUES (?, ?, ?, ?)",
            (self.manifest_hash, _key(key), _count("attempt", attempt, 1), worst),
            f"record_sent of request {key[:12]} (recorded requests only)",
        )
        self._open.setdefault(key, []).append((int(cur.lastrowid or 0), seq_units))
        self._open_units += seq_units
        self._tries[key] = self._tries.get(key, 0) + 1

    def record_failed(self, key: str, cost: float, outcome: str) -> None:
        """Settle the oldest unsettled call of ``key`` as failed at ``cost`` (a malformed body:
        its usage, else its worst case; no response: its worst case; an error status: 0)."""
        outcome = _text("outcome", outcome)
        _guard(self._secrets, "outcome", outcome)
        amount = _nonneg("cost", cost)
        if not self._open.get(_key(key)):
            raise LedgerError(f"record_failed: request {key[:12]} has no call in flight")
        self._settle(key, "failed", amount, outcome, first_only=True)
        self._cancelled_units += _units(amount)

    def _settle(
        self, key: str, kind: str, cost: float, outcome: str, *, first_only: bool = False
    ) -> None:
        """Settle the unsettled sent calls of ``key`` (the oldest only, ``first_only``)."""
        calls = self._open.get(key)
        if not calls:
            return
        done = calls[:1] if first_only else list(calls)
        for seq, units in done:
            self._write(
                "FULL",
                "INSERT INTO settled (sent, manifest, kind, cost, outcome) VALUES (?, ?, ?, ?, ?)",
                (seq, self.manifest_hash, kind, cost, outcome),
                f"settling call {seq} of request {key[:12]}",
            )
            self._open_units -= units
        del calls[: len(done)]
        if not calls:
            del self._open[key]

    def open_sent(self) -> dict[str, float]:
        """The sent calls not yet settled: request key -> the sum of their worst cases (after a
        kill: the calls that were in flight, or answered without the answer made durable)."""
        _ = self._db
        return {k: _float(sum(u for _, u in calls)) for k, calls in self._open.items()}

    def sent_count(self, key: str) -> int:
        """How many calls of request ``key`` were sent (in every run): the last attempt number."""
        return self._tries.get(key, 0)

    def spend(self) -> Spend:
        """(cost of answers of committed roots, of answers of other roots, calls sent without an
        answer: cancelled and unsettled at their worst case, failed at their cost)."""
        _ = self._db  # refuses a closed ledger
        pending = sum(self._pending_units.values())
        unanswered = self._cancelled_units + self._open_units
        return Spend(_float(self._committed_units), _float(pending), _float(unanswered))

    def record_event(self, kind: str, data: Mapping[str, Any] | None = None) -> int:
        """Record a study-level event with plain-JSON ``data``; return its seq."""
        kind = _text("kind", kind)
        text = canonical_json(_mapping("data", {} if data is None else data), "data")
        _guard(self._secrets, "kind", kind)
        _guard(self._secrets, "data", text)
        cur = self._write(
            "FULL",
            "INSERT INTO events (manifest, kind, json) VALUES (?, ?, ?)",
            (self.manifest_hash, kind, text),
            f"record_event {kind!r}",
        )
        return int(cur.lastrowid or 0)

    def events(self) -> list[Event]:
        """Every event, in seq order, with its data parsed."""
        rows = self._db.execute("SELECT seq, kind, json FROM events ORDER BY seq")
        return [Event(seq, kind, json.loads(text)) for seq, kind, text in rows]

    def sent_tally(self, after: int = 0, upto: int = 1 << 62) -> tuple[int, int, int]:
        """(last seq, calls, calls answered) of sent records with after < seq <= upto (a run's)."""
        last, calls, answered = self._db.execute(
            "SELECT coalesce(max(s.seq), ?), count(*), count(t.sent) FROM sent s LEFT JOIN "
            "settled t ON t.sent = s.seq AND t.kind = 'answered' WHERE s.seq > ? AND s.seq <= ?",
            (after, after, upto),
        ).fetchone()
        return int(last), int(calls), int(answered)

    def chain_head(self, seq: int | None = None) -> tuple[int, str | None]:
        """(the number of links of the hash chain, its last link or its link ``seq``; None when
        it has none): the anchor a live study's report records outside the ledger, checked on
        resume and by ``status`` (:func:`verdictpack.kinds._study_live.check_chain`)."""
        got = self._db.execute("SELECT link FROM chain WHERE seq = ?", (seq,)).fetchone()
        last = self._chain.link if seq is None else None if got is None else str(got[0])
        return self._chain.seq + 1, last


_ANSWER_SELECT = (
    'SELECT a.key, r.root_id, r.judge, r."order", r.trial, a.raw, a.prompt_tokens, '
    "a.completion_tokens, a.cost, a.model_id, a.latency, a.choice, a.path, a.p_treatment "
    "FROM answers a JOIN requests r ON r.key = a.key"
)


def _ledger_path(path: Path | str) -> Path:
    p = Path(path)
    return p / LEDGER_FILENAME if p.is_dir() else p
