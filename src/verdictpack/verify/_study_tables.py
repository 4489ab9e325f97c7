"""The study folder's tables as the self-audit reads them (the csv module, nothing imported
from the modules it checks): judgments.csv as rows, root_order.txt as ids, and each judgment's
value bounds in half units (treatment 2, null partner 0, tie 1; an unknown answer 0 .. 2;
docs/statistics.md §14); the registered order's keyed hash and a live run's stop reasons
(shared by the study audit and the ledger audit).
"""

from __future__ import annotations

import csv
import hashlib
import io
import math
from collections import Counter
from dataclasses import dataclass
from pathlib import Path

from verdictpack._cells import csv_value
from verdictpack.verify._findings import _Auditor

_COLUMNS = ("root_id", "rater_id", "rater_kind", "order", "choice", "trial", "cost")
_CHOICES = ("treatment", "null_partner", "tie", "invalid")
_ORDERS = ("treatment_first", "null_first", "unknown")
_ORDER_DOMAIN = "verdictpack/root-order/v1"
# a live run's own stops before its data ran out, by the ledger's name of the stop (kinds' stop
# reasons: each reason starts with its text)
_LIVE_STOPS = {
    "budget": "the judges' budget (",
    "failed": "the live run stopped on an endpoint error (rerun to resume)",
    "interrupted": "interrupted (rerun to resume)",
}


def _keyed_order(seed: int, ids: list[str]) -> list[str]:
    """The ids sorted by SHA-256 of the order domain, the decimal seed and the id (lines)."""
    keyed = sorted(
        (hashlib.sha256(f"{_ORDER_DOMAIN}\n{seed}\n{rid}".encode()).digest(), rid) for rid in ids
    )
    return [rid for _, rid in keyed]


@dataclass(frozen=True)
class _Row:
    """One judgment of judgments.csv."""

    line: int
    root: str
    rater: str
    kind: str
    order: str
    choice: str
    trial: int
    cost: float | None
    p_treatment: float | None = None  # a live judge's P(treatment): its observation


def _read_judgments(A: _Auditor, path: Path) -> list[_Row]:
    """judgments.csv by the csv module; every unreadable row a failure naming its line (and a
    free-text row no parser rule read, ``parse_path`` none, must be invalid)."""
    text = path.read_text(encoding="utf-8")
    reader = csv.DictReader(io.StringIO(text, newline=""))
    header = tuple(reader.fieldnames or ())
    missing = [c for c in _COLUMNS if c not in header]
    if not A.true(
        "judgments.csv line 1",
        "the canonical columns",
        not missing,
        ", ".join(_COLUMNS),
        ", ".join(header),
    ):
        return []
    out: list[_Row] = []
    bad: list[str] = []
    for n, rec in enumerate(reader, start=2):
        try:
            kind, order, choice = rec["rater_kind"], rec["order"], rec["choice"]
            if kind not in ("model", "human") or order not in _ORDERS or choice not in _CHOICES:
                raise ValueError(f"{kind} / {order} / {choice}")
            trial = int(rec["trial"] or 0)
            cost = float(rec["cost"]) if rec["cost"] else None
            if cost is not None and not math.isfinite(cost):
                raise ValueError(f"cost {rec['cost']}")
            text_p = rec.get("p_treatment") or ""
            p_t = float(text_p) if text_p else None
            if p_t is not None and not 0.0 <= p_t <= 1.0:
                raise ValueError(f"p_treatment {text_p}")
            if rec.get("parse_path") == "none" and choice != "invalid":  # no rule read the text
                raise ValueError(f"parse_path none but choice {choice}")
        except (ValueError, TypeError) as exc:
            bad.append(f"line {n}: {exc}")
            continue
        # ids as written by the spreadsheet rule (verdictpack._cells), undone exactly
        root_id, rater_id = csv_value(rec["root_id"]), csv_value(rec["rater_id"])
        out.append(_Row(n, root_id, rater_id, kind, order, choice, trial, cost, p_t))
    A.true(
        "judgments.csv",
        "every row a judgment (rater kind, order and choice known; trial an integer)",
        not bad,
        "all rows",
        "; ".join(bad[:4]),
    )
    return out


def _read_lines(A: _Auditor, path: Path) -> list[str]:
    """root_order.txt: one root id a line, each once."""
    ids = [line.strip() for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]
    repeats = [rid for rid, k in Counter(ids).items() if k > 1]
    A.true("root_order.txt", "each root id once", not repeats, "distinct ids", repeats[:5])
    return ids


_CHOICE_HALF = {"treatment": 2.0, "null_partner": 0.0, "tie": 1.0}


def _half_bounds(r: _Row, observation: str) -> tuple[float, float]:
    """A judgment's (lower, upper) value in half units (module docstring)."""
    if r.kind == "model" and observation == "probability":
        if r.p_treatment is None or r.choice == "invalid":
            return 0.0, 2.0
        return 2.0 * r.p_treatment, 2.0 * r.p_treatment
    if r.choice == "invalid":
        return 0.0, 2.0
    v = _CHOICE_HALF[r.choice]
    return v, v
