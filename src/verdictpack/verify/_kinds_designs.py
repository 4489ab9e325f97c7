"""Self-audit of the battery's designs side by side (``$.designs`` of a battery's results.json).

Re-derived: each row's verdict probabilities sum to 1, its human-judgment quantiles are ordered
and within [k, k × cap], the cost per valid verdict is the expected cost over P(right verdict),
the fixed-n human judgments are the fixed-n roots × k, each design's RNG purposes and blocks.
The simulated figures themselves stay UNVERIFIED (a second simulation agrees only within Monte
Carlo error).
"""

from __future__ import annotations

from typing import Any

from verdictpack.verify._findings import _Auditor, _fv, _is_number

__all__ = ["DESIGNS_PREFIX", "audit_designs"]

DESIGNS_PREFIX = "$.designs"


def audit_designs(A: _Auditor, res: dict[str, Any]) -> None:
    """The designs of a battery's results.json (nothing when the battery has none)."""
    block = res.get("designs")
    if block is None:
        return
    w = "results.json " + DESIGNS_PREFIX
    reps, size = block.get("replicates"), block.get("block_size")
    A.eq(w + ".block_size", "the battery's block size", res.get("block_size"), size)
    A.eq(w + ".cap_roots", "the battery's cap", res.get("cap_roots"), block.get("cap_roots"))
    A.eq(
        w + ".construction",
        "the registered construction",
        res.get("construction"),
        block.get("construction"),
    )
    A.eq(
        w + ".fixed_n_roots",
        "the battery's fixed-n roots",
        res.get("fixed_n_roots"),
        block.get("fixed_n_roots"),
    )
    if isinstance(reps, int) and isinstance(size, int) and size > 0:
        A.eq_at(w, block, "n_blocks", "blocks = replicates / block size", -(-reps // size))
    labels = [row.get("label") for row in res.get("scenarios") or []]
    cap, fixed_n = block.get("cap_roots"), block.get("fixed_n_roots")
    for i, design in enumerate(block.get("designs") or []):
        dw = f"{w}.designs[{i}]"
        k = design.get("humans_per_root")
        rows = design.get("rows") or []
        A.eq(
            dw + ".rows[*].scenario",
            "one row per scenario, in order",
            labels,
            [r.get("scenario") for r in rows],
        )
        A.eq(
            dw + ".rows[*].purpose",
            "each row's own RNG purpose battery-designs/<design>/<scenario>",
            [f"battery-designs/{design.get('name')}/{lab}" for lab in labels],
            [r.get("purpose") for r in rows],
        )
        for j, row in enumerate(rows):
            _audit_row(A, f"{dw}.rows[{j}]", row, k, cap, fixed_n)
    A.unverified(
        w + ".designs[*].rows[*]",
        "simulated verdict probabilities, human judgments and costs of each design",
        "simulated: a second simulation agrees only within Monte Carlo error",
    )


def _audit_row(A: _Auditor, rw: str, row: dict[str, Any], k: Any, cap: Any, fixed_n: Any) -> None:
    probs = [_fv(p) for p in (row.get("p_verdict") or {}).values()]
    total = sum(probs) if probs and all(_is_number(p) for p in probs) else None
    A.num(rw + ".p_verdict", "verdict probabilities sum to 1", 1.0, total, abs_tol=1e-9)
    q = row.get("human_judgments_quantiles") or {}
    qs = [_fv(q.get(name)) for name in ("q10", "q50", "q90")]
    ok = all(_is_number(x) for x in qs) and qs[0] <= qs[1] <= qs[2]
    if ok and isinstance(k, int) and isinstance(cap, int):
        ok = k <= qs[0] and qs[2] <= k * cap
    A.true(
        rw + ".human_judgments_quantiles", "q10 ≤ q50 ≤ q90 within [k, k × cap]", ok, "ordered", qs
    )
    cost, right = _fv(row.get("expected_cost")), _fv(row.get("p_right"))
    per_valid = row.get("cost_per_valid_verdict")
    if _is_number(right) and right == 0:
        A.eq(rw + ".cost_per_valid_verdict", "none when no verdict is right", None, per_valid)
    elif _is_number(cost) and _is_number(right):
        A.num(
            rw + ".cost_per_valid_verdict",
            "expected cost / P(right verdict)",
            cost / right,
            _fv(per_valid),
            abs_tol=0.0,
            rel_tol=1e-9,
        )
    if isinstance(k, int) and isinstance(fixed_n, int):
        A.eq(
            rw + ".fixed_n_human_judgments",
            "fixed-n roots × humans per root",
            fixed_n * k,
            _fv(row.get("fixed_n_human_judgments")),
        )
