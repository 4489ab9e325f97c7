"""The self-audit's own reader-audit gate: the one-sided lower confidence bound of Cohen's kappa
re-derived from the agreement table, by a numeric route of its own, and the gate checked on it.

Method (docs/statistics.md, "The reader-audit gate"): the X agreeing roots of n are
Binomial(n, P_o); the exact (Clopper–Pearson) lower bound of P_o at ``level`` is the p with
P_p(X' ≥ X) = 1 − level (0 when X = 0); the kappa bound maps it through the chance correction
with the observed P_e, κ_L = max(−1, (p_L − P_e) / (1 − P_e)).

The package computes p_L as a Beta quantile (scipy's inverse incomplete beta); here the binomial
upper tail is summed term by term in log space (math.lgamma) and p_L is found by bisection, so
the two share no code. Written here, imported from nothing but the standard library.
"""

from __future__ import annotations

import math
from typing import Any

from verdictpack.verify._findings import _Auditor

#: The only method the package's gate knows; results.json must name it.
KAPPA_BOUND_METHOD = "clopper_pearson_agreement"


def _log_upper_tail(x: int, n: int, p: float) -> float:
    """log P(X' ≥ x), X' ~ Binomial(n, p), 0 < p < 1, summed term by term (log-sum-exp)."""
    lp, lq = math.log(p), math.log1p(-p)
    base = math.lgamma(n + 1)
    terms = [
        base - math.lgamma(j + 1) - math.lgamma(n - j + 1) + j * lp + (n - j) * lq
        for j in range(x, n + 1)
    ]
    top = max(terms)
    return top + math.log(sum(math.exp(t - top) for t in terms))


def agreement_lower_bound(x: int, n: int, level: float) -> float:
    """The Clopper–Pearson lower bound of a binomial proportion: the p with P_p(X' ≥ x) = 1 −
    level (the tail rises with p), by 200 bisection steps; 0 when x = 0."""
    if x <= 0:
        return 0.0
    target = math.log(1.0 - level)
    lo, hi = 0.0, 1.0
    for _ in range(200):
        mid = 0.5 * (lo + hi)
        if mid <= 0.0 or mid >= 1.0 or mid in (lo, hi):
            break
        if _log_upper_tail(x, n, mid) < target:
            lo = mid
        else:
            hi = mid
    return 0.5 * (lo + hi)


def kappa_lower_bound_from_table(table: list[list[int]], level: float) -> float | None:
    """κ_L from a k × k table (reader A by rows); None when P_e = 1 (kappa undefined)."""
    n = sum(sum(row) for row in table)
    k = len(table)
    x = sum(table[i][i] for i in range(k))
    rows = [sum(table[i]) / n for i in range(k)]
    cols = [sum(table[i][j] for i in range(k)) / n for j in range(k)]
    pe = sum(rows[i] * cols[i] for i in range(k))
    if pe >= 1.0 - 1e-12:
        return None
    return max(-1.0, (agreement_lower_bound(x, n, level) - pe) / (1.0 - pe))


def check_kappa_gate(
    A: _Auditor, w: str, a: dict[str, Any], table: list[list[int]] | None, source: str
) -> None:
    """The audit block ``a`` (at ``w`` in results.json): the gate is on the lower bound, the bound
    is the one re-derived here from ``table`` (when there is one) and passed = bound ≥ kappa_min."""
    A.eq(w + ".gated_on", "the gate is on the lower confidence bound", "lower_bound", a["gated_on"])
    A.eq(w + ".bound_method", "the bound's method", KAPPA_BOUND_METHOD, a["bound_method"])
    lev = a["bound_level"]
    A.true(w + ".bound_level", "a one-sided level in (0.5, 1)", 0.5 < lev < 1.0, "(0.5, 1)", lev)
    bound = float(a["lower_bound"]["value"])
    A.eq_at(
        w,
        a,
        "passed",
        "gate on the lower confidence bound: lower_bound ≥ kappa_min",
        bound >= a["kappa_min"],
    )
    if table is None:
        A.unverified(
            w + ".lower_bound",
            "the kappa lower bound re-derived from the agreement table",
            "the reader table is not in the outputs; only the gate on the printed bound was "
            "checked",
        )
        return
    n = sum(sum(row) for row in table)
    A.eq_at(
        w,
        a,
        "agreements",
        f"agreeing roots (the diagonal) of {source}",
        sum(table[i][i] for i in range(len(table))),
    )
    ours = kappa_lower_bound_from_table(table, lev)
    if ours is None:
        A.true(w + ".lower_bound", f"kappa defined by {source}", False, "P_e < 1", "P_e = 1")
        return
    A.num(
        w + ".lower_bound",
        f"(Clopper–Pearson lower bound of the agreement − P_e)/(1 − P_e) from {source} "
        f"({n} roots; binomial tail summed, bisection)",
        ours,
        bound,
        abs_tol=1e-9,
    )
    A.eq_at(w, a, "passed", "the gate on our lower bound", ours >= a["kappa_min"])
