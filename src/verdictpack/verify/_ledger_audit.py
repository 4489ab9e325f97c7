"""Self-audit of a live study folder's ledger: ``verdictpack audit DIR`` where DIR holds
``.verdictpack-live.json``, ``ledger.sqlite`` and ``report/``.

Written here again, never imported from ``evidence/`` (the point of a self-audit): the ledger is
read read-only with the stdlib :mod:`sqlite3`, and

* **the hash chain** is checked from its own definition (docs of the ledger's chain, version 1):
  the head is SHA-256 of ``"verdictpack/ledger-chain/v1\\nschema\\n"`` and the canonical JSON of
  ``[type, name, tbl_name, sql]`` of ``sqlite_master`` (rows with ``sql``, names not starting
  with ``sqlite_``, sorted by type and name); link k is SHA-256 of ``link[k-1] + "\\n"`` and the
  canonical JSON of ``[table, rowid, values]``, each value tagged by its type (``null``,
  ``["i", decimal]``, ``["r", float.hex()]``, ``["t", text]``, ``["b", hex]``); every row of
  every table is in the chain once. Any break is a failure naming the table and row: the ledger
  was altered outside verdictpack.
* **the committed evidence** is re-derived: the commits are the registered order's first roots
  (the manifest's ``root_order``, itself the keyed-hash order of the seed, one id per admitted
  root) and exactly the roots of ``report/root_order.txt``; the ledger's answers on committed
  roots are the live rows of ``report/judgments.csv``, cell for cell; every commit's bounds on
  M_i and H_i are rebuilt from the ledger's answers plus the file judgments and human judgments
  of ``report/judgments.csv`` (half units, an unknown answer or a missing cell 0 below and 2
  above); the registered verdict and the last run's stop are those of ``report/results.json``.
* **the folder's marker**: ``.verdictpack-live.json`` is the marker verdictpack writes
  (``{"format": 1, "manifest": HASH, "written_by": "verdictpack"}``) and names the ledger's
  manifest: HASH is the ``hash`` of the ledger's one ``manifest`` row, itself the SHA-256 of that
  row's ``json`` (resume reads the marker to tell this study from another).
* **the chain's anchor**: ``report/provenance.json`` ``$.settings.ledger_chain`` records the
  chain's length and last link as the run that wrote the report left it; the ledger's chain
  holds that link at that place (grown since: fine; shorter or different: rows were deleted
  from its end with their links, or the chain was rewritten whole).
"""

from __future__ import annotations

import hashlib
import json
import math
import sqlite3
from collections import defaultdict
from pathlib import Path
from typing import Any

from verdictpack.verify._findings import _Auditor
from verdictpack.verify._study_tables import (
    _LIVE_STOPS,
    _half_bounds,
    _keyed_order,
    _read_judgments,
    _read_lines,
    _Row,
)

__all__ = ["LIVE_MARKER_NAME", "audit_ledger", "is_live_folder"]

LIVE_MARKER_NAME = ".verdictpack-live.json"
_LEDGER = "ledger.sqlite"
_CHAIN_DOMAIN = b"verdictpack/ledger-chain/v1\n"
_ALTERED = "the ledger was altered outside verdictpack"


def is_live_folder(folder: Path) -> bool:
    """A live study's folder: its marker and its report folder."""
    return (folder / LIVE_MARKER_NAME).is_file() and (folder / "report").is_dir()


def _canon(value: Any) -> bytes:
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False).encode()


def _typed(v: Any) -> Any:
    if v is None:
        return None
    if isinstance(v, int):
        return ["i", str(v)]
    if isinstance(v, float):
        return ["r", v.hex()]
    if isinstance(v, str):
        return ["t", v]
    return ["b", bytes(v).hex()]


def _chain_problems(db: sqlite3.Connection) -> list[tuple[str, str]]:
    """(where, what) for every break of the chain found (at most a few)."""
    out: list[tuple[str, str]] = []
    master = db.execute(
        "SELECT type, name, tbl_name, sql FROM sqlite_master WHERE sql IS NOT NULL"
    ).fetchall()
    schema = sorted(
        ([t, n, tb, s] for t, n, tb, s in master if not str(n).startswith("sqlite_")),
        key=lambda r: (r[0], r[1]),
    )
    tables = sorted(r[1] for r in schema if r[0] == "table")
    if "chain" not in tables:
        return [("ledger.sqlite table chain", "the hash chain is missing")]
    head = hashlib.sha256(_CHAIN_DOMAIN + b"schema\n" + _canon(schema)).hexdigest()
    seen: dict[str, set[int]] = defaultdict(set)
    prev = None
    for expected_seq, (seq, tbl, rid, link) in enumerate(
        db.execute("SELECT seq, tbl, rid, link FROM chain ORDER BY seq")
    ):
        if seq != expected_seq:
            out.append((f"ledger.sqlite chain link {expected_seq}", "the link is missing"))
            return out
        if seq == 0:
            if link != head:
                out.append(
                    (
                        "ledger.sqlite schema",
                        "the tables and triggers (append-only) the ledger was created with",
                    )
                )
            prev = link
            continue
        where = f"ledger.sqlite table {tbl} row {rid}"
        if tbl not in tables:
            out.append((where, f"the table is gone (chain link {seq})"))
            return out
        row = db.execute(f'SELECT * FROM "{tbl}" WHERE rowid = ?', (rid,)).fetchone()
        if row is None:
            out.append((where, f"the row is gone: deleted (chain link {seq})"))
        else:
            text = _canon([tbl, rid, [_typed(v) for v in row]])
            if hashlib.sha256(str(prev).encode() + b"\n" + text).hexdigest() != link:
                out.append((where, f"the row's values do not hash to its chain link {seq}: edited"))
        seen[tbl].add(int(rid))
        prev = link
        if len(out) >= 5:
            return out
    if prev is None:
        return [("ledger.sqlite table chain", "the hash chain has no head")]
    for t in tables:
        if t == "chain":
            continue
        for (rid,) in db.execute(f'SELECT rowid FROM "{t}" ORDER BY rowid'):
            if rid not in seen[t]:
                out.append((f"ledger.sqlite table {t} row {rid}", "the row is in the chain"))
                break
    return out


def audit_ledger(A: _Auditor, folder: Path, res: dict[str, Any]) -> None:
    """The ledger checks of the module docstring (results.json ``res`` of ``folder/report``)."""
    path = folder / _LEDGER
    if not A.true(str(path), "the live study's ledger is there", path.is_file(), "a file", "none"):
        return
    try:
        db = sqlite3.connect(f"{path.resolve().as_uri()}?mode=ro", uri=True)
    except sqlite3.Error as exc:
        A.true(str(path), "a readable SQLite ledger", False, "readable", str(exc))
        return
    try:
        db.execute("BEGIN")  # one snapshot for every read
        problems = _chain_problems(db)
        A.true(
            "ledger.sqlite",
            f"the hash chain holds (else {_ALTERED})",
            not problems,
            "every row and the schema as chained",
            "; ".join(f"{w}: {what}" for w, what in problems),
        )
        for where, what in problems:
            A.record(False, where, f"{what}: {_ALTERED}", "the row as chained", "altered")
        _audit_marker(A, db, folder / LIVE_MARKER_NAME)
        if problems:
            A.unverified(
                "ledger.sqlite",
                "the committed evidence re-derived from the ledger",
                "the ledger was altered: its rows cannot be trusted",
            )
            return
        _audit_anchor(A, db, folder / "report" / "provenance.json")
        _audit_evidence(A, db, folder / "report", res)
    except (sqlite3.Error, ValueError, KeyError, TypeError) as exc:
        A.true(str(path), "a readable ledger", False, "readable", f"{type(exc).__name__}: {exc}")
    finally:
        db.close()


def _audit_marker(A: _Auditor, db: sqlite3.Connection, path: Path) -> None:
    """The folder's marker: verdictpack's, naming the ledger's manifest (module docstring)."""
    rows = db.execute("SELECT hash, json FROM manifest").fetchall()
    held = rows[0][0] if len(rows) == 1 else None
    A.true(
        "ledger.sqlite table manifest",
        "one manifest, its hash the SHA-256 of its JSON",
        held is not None and hashlib.sha256(str(rows[0][1]).encode()).hexdigest() == held,
        "one row, hash = SHA-256(json)",
        f"{len(rows)} rows" if held is None else f"hash {str(held)[:16]}…",
    )
    try:
        marker = json.loads(path.read_bytes())
    except (OSError, ValueError, RecursionError) as exc:
        A.true(LIVE_MARKER_NAME, "verdictpack's marker (JSON)", False, "JSON", type(exc).__name__)
        return
    expected = {"format": 1, "manifest": held, "written_by": "verdictpack"}
    A.eq(
        LIVE_MARKER_NAME,
        "verdictpack's marker, naming the ledger's manifest",
        expected,
        marker,
    )


def _audit_anchor(A: _Auditor, db: sqlite3.Connection, path: Path) -> None:
    """The chain's length and last link recorded outside the ledger, in the report's
    provenance.json: the ledger's chain holds that link at that place (it may have grown since,
    by a run killed after its report; never shrunk below it, never diverged from it)."""
    where = "report/provenance.json $.settings.ledger_chain"
    try:
        prov = json.loads(path.read_bytes())
    except (OSError, ValueError, RecursionError) as exc:
        A.true(where, "a readable provenance.json", False, "JSON", f"{type(exc).__name__}")
        return
    settings = prov.get("settings") if isinstance(prov, dict) else None
    held = settings.get("ledger_chain") if isinstance(settings, dict) else None
    if held is None:
        A.unverified(
            where,
            "the ledger's chain against the last link the report recorded",
            "the report records none (written before reports recorded the ledger's chain)",
        )
        return
    length = held.get("length") if isinstance(held, dict) else None
    head = held.get("head") if isinstance(held, dict) else None
    if type(length) is not int or length < 1 or not isinstance(head, str):
        A.true(where, "the ledger chain's length and last link", False, "both", repr(held))
        return
    (links,) = db.execute("SELECT count(*) FROM chain").fetchone()
    row = db.execute("SELECT link FROM chain WHERE seq = ?", (length - 1,)).fetchone()
    found = (
        f"{links:,} links (rows deleted from the ledger's end with their links)"
        if links < length
        else f"link {length - 1:,} {str(row[0] if row else None)[:16]}… (the chain rewritten)"
    )
    A.true(
        "ledger.sqlite table chain",
        f"the hash chain holds the last link {where} recorded, at its place (else {_ALTERED})",
        links >= length and row is not None and row[0] == head,
        f"at least {length:,} links, link {length - 1:,} {head[:16]}…",
        found,
    )


def _close(a: float | None, b: float | None) -> bool:
    if a is None or b is None:
        return a is None and b is None
    return math.isclose(a, b, rel_tol=1e-9, abs_tol=1e-12)


def _audit_evidence(A: _Auditor, db: sqlite3.Connection, report: Path, res: dict[str, Any]) -> None:
    (text,) = db.execute("SELECT json FROM manifest").fetchone()
    manifest = json.loads(text)
    registered = [str(r) for r in manifest["root_order"]]
    commits = db.execute(
        "SELECT seq, root_id, m_lo, m_hi, h_lo, h_hi, state FROM commits ORDER BY seq"
    ).fetchall()
    roots = [c[1] for c in commits]
    A.eq(
        "ledger.sqlite table commits",
        "the commits are the registered order's first roots (the manifest's root_order)",
        registered[: len(roots)],
        roots,
    )
    A.eq(
        "ledger.sqlite table manifest $.root_order",
        "one root per admitted root",
        res["gates"]["admitted"],
        len(registered),
    )
    seed = manifest.get("seed")
    if isinstance(seed, int) and str(res.get("root_order", "")).startswith("keyed hash"):
        keyed = _keyed_order(seed, registered)
        A.true(
            "ledger.sqlite table manifest $.root_order",
            f"the keyed-hash order of seed {seed}",
            keyed == registered,
            keyed[:3],
            registered[:3],
        )
    order = _read_lines(A, report / "root_order.txt")
    A.eq(
        "report/root_order.txt",
        "the report covers exactly the committed roots, in the registered order",
        roots,
        order,
    )
    live = {j["name"] for j in manifest["judges"] if j.get("live")}
    judges = [j["name"] for j in manifest["judges"]]
    trials = int(manifest["trials"])
    observation = str(res["policy"]["model_observation"])
    table = _read_judgments(A, report / "judgments.csv")
    committed = set(roots)
    answers = db.execute(
        'SELECT r.root_id, r.judge, r."order", r.trial, a.choice, a.p_treatment, a.cost '
        "FROM answers a JOIN requests r ON r.key = a.key ORDER BY a.rowid"
    ).fetchall()
    ledger_cells = {
        (root, judge, order_, trial): (choice, p)
        for root, judge, order_, trial, choice, p, _ in answers
        if root in committed
    }
    report_cells = {
        (r.root, r.rater, r.order, r.trial): (r.choice, r.p_treatment)
        for r in table
        if r.kind == "model" and r.rater in live
    }
    differ = sorted(
        k
        for k in ledger_cells.keys() | report_cells.keys()
        if ledger_cells.get(k) != report_cells.get(k)
    )
    A.true(
        "report/judgments.csv (live judges)",
        "the ledger's answers on committed roots, cell for cell",
        not differ,
        "the same cells and answers",
        [f"{k}: ledger {ledger_cells.get(k)}, report {report_cells.get(k)}" for k in differ[:3]],
    )
    rows: dict[str, list[_Row]] = defaultdict(list)
    for r in table:
        if not (r.kind == "model" and r.rater in live):
            rows[r.root].append(r)
    for (root, judge, order_, trial), (choice, p) in ledger_cells.items():
        rows[root].append(_Row(0, root, judge, "model", order_, choice, trial, None, p))
    cells = 2 * len(judges) * trials
    expected_h = int(res.get("humans_per_root") or 0)
    bad = []
    for seq, root, m_lo, m_hi, h_lo, h_hi, _ in commits:
        mine = rows.get(root, [])
        model = [_half_bounds(r, observation) for r in mine if r.kind == "model"]
        human = [_half_bounds(r, observation) for r in mine if r.kind == "human"]
        lo = sum(b[0] for b in model) / (2 * cells)
        hi = (sum(b[1] for b in model) + 2 * (cells - len(model))) / (2 * cells)
        n_h = max(len(human), expected_h)
        hl = None if n_h == 0 else sum(b[0] for b in human) / (2 * n_h)
        hh = None if n_h == 0 else (sum(b[1] for b in human) + 2 * (n_h - len(human))) / (2 * n_h)
        got = (m_lo, m_hi, h_lo, h_hi)
        if not all(_close(a, b) for a, b in zip((lo, hi, hl, hh), got, strict=True)):
            bad.append(f"commit {seq} (root {root}): rebuilt {(lo, hi, hl, hh)}, ledger {got}")
    A.true(
        "ledger.sqlite table commits $.m_lo, m_hi, h_lo, h_hi",
        "every commit's bounds on M_i and H_i rebuilt from the ledger's answers and the file "
        "and human judgments of report/judgments.csv",
        not bad,
        "equal",
        bad[:3],
    )
    _audit_verdict(A, db, commits, res)


def _audit_verdict(
    A: _Auditor, db: sqlite3.Connection, commits: list[Any], res: dict[str, Any]
) -> None:
    states = [json.loads(c[6]) for c in commits]
    labels = [s.get("registered") for s in states]
    reg = res["registered"]
    verdict = reg["verdict"]
    first = next((k + 1 for k, lab in enumerate(labels) if lab not in (None, "CONTINUE")), None)
    if first is None:
        A.true(
            "results.json $.registered.verdict",
            "the ledger's commits reached no verdict",
            verdict in ("INCONCLUSIVE", "INSTRUMENT_INVALID"),
            "INCONCLUSIVE or INSTRUMENT_INVALID",
            verdict,
        )
    else:
        A.eq(
            "results.json $.registered",
            "the registered verdict and its root as the ledger's commits hold them",
            [labels[first - 1], first],
            [verdict, reg.get("roots_at_verdict")],
        )
        lo, hi = states[first - 1]["h_interval"]
        got = reg.get("h_interval") or [None, None]
        A.true(
            "results.json $.registered.h_interval",
            "the h-interval of the verdict's commit in the ledger",
            _close(lo, got[0]) and _close(hi, got[1]),
            [lo, hi],
            got,
        )
    ends = db.execute("SELECT json FROM events WHERE kind = 'run_end' ORDER BY seq").fetchall()
    stop = json.loads(ends[-1][0]).get("stop") if ends else None
    reason = str(res.get("stop_reason", ""))
    if stop in _LIVE_STOPS and verdict == "INCONCLUSIVE":
        A.true(
            "results.json $.stop_reason",
            f"the last run's stop in the ledger ({stop})",
            reason.startswith(_LIVE_STOPS[stop]),
            _LIVE_STOPS[stop] + "...",
            reason,
        )
    else:
        A.true(
            "results.json $.stop_reason",
            "no live stop (budget, endpoint error, interrupt) unless the ledger's last run says so",
            not any(reason.startswith(s) for s in _LIVE_STOPS.values()),
            f"not a live stop (the ledger's last run: {stop})",
            reason,
        )
