"""Simulated evidence written as a study's data files: the bridge from the engine to real data.

A simulated run (the engine's evidence trail: per root, each judge's choice in both presentation
orders and the humans' choices) becomes the files a study reads -- the pairs, the canonical
judgment table, the reader audit's double readings and the registered order -- so the same
evidence can be fed through the study path and compared with the engine (the round trip), and so
the bundled examples are made by the project's own generator (every file it writes says it is
synthetic). Nothing here draws a random number: the evidence comes in, files go out.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from verdictpack._errors import InputError
from verdictpack.evidence._readings import Readings
from verdictpack.evidence._table import CHOICES, ORDERS, RATER_KINDS, JudgmentTable
from verdictpack.simulate._human import ReaderAudit
from verdictpack.simulate._judges import ORDER_LABELS
from verdictpack.stimuli._stimulus import Stimulus

__all__ = ["SYNTHETIC_NOTE", "judgments_from_evidence", "pairs_jsonl", "readings_from_audit"]

SYNTHETIC_NOTE = "synthetic: simulated by verdictpack's own generator, not real judgments"
_ORDER_OF = {
    ORDER_LABELS[0]: ORDERS.index("treatment_first"),
    ORDER_LABELS[1]: ORDERS.index("null_first"),
}


def pairs_jsonl(stimuli: Sequence[Stimulus]) -> str:
    """The pairs as JSONL with keys ``id, source, treatment, null_partner, note``."""
    lines = []
    for s in stimuli:
        rec = {
            "id": s.id,
            "source": s.source,
            "treatment": s.treatment,
            "null_partner": s.null_partner,
            "note": SYNTHETIC_NOTE,
        }
        lines.append(json.dumps(rec, ensure_ascii=False))
    return "\n".join(lines) + "\n"


def judgments_from_evidence(
    rows: Sequence[Mapping[str, Any]],
    orders: Sequence[str] = ORDER_LABELS,
    human_prefix: str = "human-",
    model_cost: Mapping[str, float] | None = None,
) -> JudgmentTable:
    """The canonical table of an engine evidence trail (``stimulus_id``, ``model_choices``
    {judge: [first order, second order]}, ``human_choices``); 1 = prefers the treatment.
    Human j of a root is rater ``human-j``; model rows carry ``model_cost[judge]`` if given."""
    if len(orders) != 2 or any(o not in _ORDER_OF for o in orders):
        raise InputError("orders", "the two engine order labels", list(orders))
    root, rater, kind, order, choice, cost = [], [], [], [], [], []
    treat, null = CHOICES.index("treatment"), CHOICES.index("null_partner")
    m_kind, h_kind = RATER_KINDS.index("model"), RATER_KINDS.index("human")
    for row in rows:
        rid = str(row["stimulus_id"])
        for judge, pair in row["model_choices"].items():
            for o, v in zip(orders, pair, strict=True):
                root.append(rid)
                rater.append(str(judge))
                kind.append(m_kind)
                order.append(_ORDER_OF[o])
                choice.append(treat if int(v) == 1 else null)
                cost.append(np.nan if model_cost is None else float(model_cost[judge]))
        for j, v in enumerate(row["human_choices"]):
            root.append(rid)
            rater.append(f"{human_prefix}{j}")
            kind.append(h_kind)
            order.append(ORDERS.index("unknown"))
            choice.append(treat if int(v) == 1 else null)
            cost.append(np.nan)
    return JudgmentTable.from_columns(
        root,
        rater,
        np.array(kind, np.int8),
        np.array(order, np.int8),
        np.array(choice, np.int8),
        cost=np.array(cost, np.float64),
    )


def readings_from_audit(audit: ReaderAudit, prefix: str = "audit-") -> Readings:
    """A simulated reader audit as double readings: root ``audit-0001``..., readers
    ``reader-a`` and ``reader-b``, categories ``c0``, ``c1``..."""
    roots, readers, cats = [], [], []
    width = max(4, len(str(audit.n_roots)))
    for i, (a, b) in enumerate(zip(audit.reader_a, audit.reader_b, strict=True), start=1):
        rid = f"{prefix}{i:0{width}d}"
        roots += [rid, rid]
        readers += ["reader-a", "reader-b"]
        cats += [f"c{a}", f"c{b}"]
    return Readings(tuple(roots), tuple(readers), tuple(cats), tuple(range(2, 2 + len(roots))))
