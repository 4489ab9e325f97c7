"""Self-audit checks of the study kind's judges: every judge's rate, position bias and their
clustered intervals, and the humans' rate, re-derived from judgments.csv by code written here
(the root as the cluster: Wilson's interval on the effective count, the MOVER for the position
bias; docs/statistics.md §15), the humans' between-root ICC (its one-way ANOVA point, roots
and votes; the bootstrap interval is not re-drawn), and the fitted panel's clips. Nothing is
imported from kinds/, evidence/ or core/; the quantiles come from the self-audit's own inverses
(_rederive).
"""

from __future__ import annotations

import math
from collections import Counter, defaultdict
from dataclasses import dataclass
from typing import Any

from verdictpack.verify._findings import _Auditor
from verdictpack.verify._rederive import _t_critical, _z
from verdictpack.verify._study_tables import _half_bounds, _Row

__all__ = ["_study_judges"]


def _t_two_sided(level: float, roots: int) -> float:
    """The intervals' quantile: Student's t at roots − 1 degrees of freedom (normal for one)."""
    p = 0.5 + level / 2.0
    # the upper p quantile by the self-audit's own t (incomplete beta) and normal inverses
    return _t_critical(1.0 - p, roots - 1) if roots >= 2 else _z(p)


def _wilson_iv(m: float, n_eff: float, q: float) -> tuple[float, float]:
    """Wilson's score interval, by its quadratic: p with (m − p)² = q²·p(1 − p)/n_eff."""
    a = 1.0 + q * q / n_eff
    b = 2.0 * m + q * q / n_eff
    disc = math.sqrt(max(b * b - 4.0 * a * m * m, 0.0))
    return max(0.0, min((b - disc) / (2.0 * a), m)), min(1.0, max((b + disc) / (2.0 * a), m))


@dataclass(frozen=True)
class _ByRoot:
    """A ratio mean over roots: its residual per root, cluster-robust variance, the effective
    count and basis of its Wilson interval, and its design effect."""

    mean: float
    n: int
    resid: dict[str, float]
    variance: float
    n_eff: float
    basis: str
    deff: float | None


def _by_root(pairs: list[tuple[str, float]], roots: list[str]) -> _ByRoot:
    sums: dict[str, float] = defaultdict(float)
    cells: Counter[str] = Counter()
    for root, v in pairs:
        sums[root] += v
        cells[root] += 1
    n = len(pairs)
    m = math.fsum(v for _, v in pairs) / n
    resid = {r: sums[r] - m * cells[r] for r in roots}
    g = len(roots)
    var = g / (g - 1) * math.fsum(e * e for e in resid.values()) / n**2 if g >= 2 else math.nan
    pq = m * (1.0 - m)
    if len(cells) < 2:
        n_eff, basis = 1.0, "wilson_single_root"
    elif pq <= 0.0:
        n_eff, basis = float(len(cells)), "wilson_on_roots_no_variation"
    elif var <= 0.0:
        n_eff, basis = float(n), "wilson_on_judgments_equal_root_means"
    else:
        n_eff, basis = min(max(pq / var, 1.0), float(n)), "wilson_effective_n"
    deff = var * n / pq if pq > 0.0 and math.isfinite(var) else None
    return _ByRoot(m, n, resid, var, n_eff, basis, deff)


def _rate_interval(pairs: list[tuple[str, float]], level: float) -> dict[str, Any]:
    roots = sorted({r for r, _ in pairs})
    c = _by_root(pairs, roots)
    lo, hi = _wilson_iv(c.mean, c.n_eff, _t_two_sided(level, len(roots)))
    return {
        "ci": [lo, hi],
        "roots": len(roots),
        "basis": c.basis,
        "design_effect": c.deff,
        "effective_n": c.n_eff,
    }


def _bias_interval(
    first: list[tuple[str, float]], second: list[tuple[str, float]], level: float
) -> dict[str, Any]:
    roots = sorted({r for r, _ in first} | {r for r, _ in second})
    g = len(roots)
    a, b = _by_root(first, roots), _by_root(second, roots)
    q = _t_two_sided(level, g)
    l1, u1 = _wilson_iv(a.mean, a.n_eff, q)
    l2, u2 = _wilson_iv(b.mean, b.n_eff, q)
    cov = 0.0
    corr = 0.0
    if g >= 2 and a.variance > 0.0 and b.variance > 0.0:
        cov = g / (g - 1) * math.fsum(a.resid[r] * b.resid[r] for r in roots) / (a.n * b.n)
        corr = min(max(cov / math.sqrt(a.variance * b.variance), -1.0), 1.0)
    d = a.mean - b.mean
    lo = d - math.sqrt(
        max((a.mean - l1) ** 2 + (u2 - b.mean) ** 2 - 2 * corr * (a.mean - l1) * (u2 - b.mean), 0)
    )
    hi = d + math.sqrt(
        max((u1 - a.mean) ** 2 + (b.mean - l2) ** 2 - 2 * corr * (u1 - a.mean) * (b.mean - l2), 0)
    )
    independent = a.mean * (1 - a.mean) / a.n + b.mean * (1 - b.mean) / b.n
    clustered = a.variance + b.variance - 2 * cov
    return {
        "ci": [max(lo / 2, -0.5), min(hi / 2, 0.5)],
        "roots": g,
        "design_effect": clustered / independent
        if independent > 0 and math.isfinite(clustered)
        else None,
    }


def _check_interval(
    A: _Auditor, where: str, what: str, ours: Any, found: Any, tol: float = 1e-9
) -> None:
    if ours is None or found is None:
        A.eq(where, what, ours, found)
    elif isinstance(ours, list):
        if A.true(where, what, isinstance(found, list) and len(found) == len(ours), ours, found):
            for k, (x, y) in enumerate(zip(ours, found, strict=True)):
                A.num(f"{where}[{k}]", what, x, y, abs_tol=tol)
    elif isinstance(ours, str):
        A.eq(where, what, ours, found)
    else:
        A.num(where, what, float(ours), found, abs_tol=tol, rel_tol=1e-9)


def _study_judge_intervals(
    A: _Auditor,
    jw: str,
    j: dict[str, Any],
    pairs: dict[str, list[tuple[str, float]]],
    level: float,
) -> None:
    """One judge's intervals re-derived with the root as the unit (module docstring)."""
    every = pairs["treatment_first"] + pairs["null_first"]
    if every:
        r = _rate_interval(every, level)
        for key, ours in (
            ("rate_ci", r["ci"]),
            ("roots", r["roots"]),
            ("rate_ci_basis", r["basis"]),
            ("rate_design_effect", r["design_effect"]),
            ("rate_effective_n", r["effective_n"]),
        ):
            _check_interval(A, f"{jw}.{key}", f"{key}, the root as the unit", ours, j.get(key))
    if pairs["treatment_first"] and pairs["null_first"]:
        b = _bias_interval(pairs["treatment_first"], pairs["null_first"], level)
        for key, ours in (
            ("position_bias_ci", b["ci"]),
            ("position_bias_design_effect", b["design_effect"]),
        ):
            _check_interval(A, f"{jw}.{key}", f"{key}, the root as the unit", ours, j.get(key))
    else:
        A.eq(
            jw + ".position_bias_ci",
            "no interval without both orders",
            None,
            j.get("position_bias_ci"),
        )


def _study_fitted_clips(A: _Auditor, jr: dict[str, Any]) -> None:
    """The fitted panel writes what was estimated: each judge's estimated position bias is the
    judges report's, and every value the block changed is named in ``clips``."""
    est = jr.get("fitted_panel_estimated")
    block = jr.get("fitted_panel")
    w = "results.json $.judges_report.fitted_panel_estimated"
    if not block or est is None:
        return
    reported = {j["name"]: j for j in jr["judges"]}
    clipped = {(c["judge"], c["field"]) for c in jr.get("fitted_panel_clips") or []}
    written = {j["name"]: j for j in block["judges"]}
    for k, e in enumerate(est["judges"]):
        ew = f"{w}.judges[{k}]"
        A.eq(
            ew + ".position_bias",
            "the position bias as estimated (judges report)",
            reported[e["name"]]["position_bias"],
            e["position_bias"],
        )
        shown = written[e["name"]]["position_bias"]
        if e["position_bias"] is not None and shown != e["position_bias"]:
            A.true(
                ew + ".position_bias",
                "a position bias written otherwise than estimated is named in clips",
                (e["name"], "position_bias") in clipped,
                f"a clip of {e['name']}'s position_bias",
                "none",
            )


def _study_human_icc(A: _Auditor, w: str, pairs: list[tuple[str, float]], icc: Any) -> None:
    """The humans' one-way ANOVA ICC over the roots with two or more human values."""
    if not isinstance(icc, dict):  # a result written before the ICC was fitted
        return
    by_root: dict[str, list[float]] = defaultdict(list)
    for root, v in pairs:
        by_root[root].append(v)
    groups = [g for g in by_root.values() if len(g) >= 2]
    k, n = len(groups), sum(len(g) for g in groups)
    A.eq(w + ".roots", "roots with two or more human judgments", k, icc.get("roots"))
    A.eq(w + ".votes", "human judgments on those roots", n, icc.get("votes"))
    if icc.get("icc") is None or k < 2:
        return
    grand = math.fsum(x for g in groups for x in g) / n
    means = [math.fsum(g) / len(g) for g in groups]
    msb = math.fsum(len(g) * (m - grand) ** 2 for g, m in zip(groups, means, strict=True)) / (k - 1)
    msw = math.fsum((x - m) ** 2 for g, m in zip(groups, means, strict=True) for x in g) / (n - k)
    n0 = (n - math.fsum(len(g) ** 2 for g in groups) / n) / (k - 1)
    ours = (msb - msw) / (msb + (n0 - 1) * msw)
    A.num(w + ".icc", "the one-way ANOVA ICC from judgments.csv", ours, icc["icc"], abs_tol=1e-9)


def _study_judges(A: _Auditor, res: dict[str, Any], table: list[_Row], entered: list[str]) -> None:
    """The judges' point estimates from judgments.csv on the roots entered, each judgment at its
    policy value (half units / 2): judgments, ties (value ½), rate (mean value), the rates with
    the treatment shown first and second, position bias (their half difference), and the
    humans' pooled rate and count. Their intervals re-derived with the root as the unit (own
    code above: Wilson on the root-clustered effective count, the correlated MOVER for the
    bias), with roots, bases and design effects; the fitted panel's estimated position biases
    and their clips. The pairwise agreement and the rest of the fitted panel stay UNVERIFIED."""
    observation = res["policy"].get("model_observation", "choice")
    inside = set(entered)
    rows = [r for r in table if r.root in inside]
    jr = res["judges_report"]
    w = "results.json $.judges_report"

    def mean(xs: list[float]) -> float | None:
        return math.fsum(xs) / len(xs) if xs else None

    level = float(jr.get("level", 0.95))
    for k, j in enumerate(jr["judges"]):
        jw = f"{w}.judges[{k}]"
        pairs = {
            o: [
                (r.root, b[0] / 2)
                for r in rows
                if r.rater == j["name"] and r.order == o
                for b in [_half_bounds(r, observation)]
                if b[0] == b[1]  # unknown answers are left out of the judges' estimates
            ]
            for o in ("treatment_first", "null_first")
        }
        vals = {o: [v for _, v in p] for o, p in pairs.items()}
        _study_judge_intervals(A, jw, j, pairs, level)
        every = vals["treatment_first"] + vals["null_first"]
        A.eq(
            jw + ".judgments",
            f"{j['name']}'s judgments on the roots entered",
            len(every),
            j["judgments"],
        )
        A.eq(
            jw + ".ties",
            "judgments valued ½ under the policy",
            sum(1 for x in every if x == 0.5),
            j["ties"],
        )
        first, second = mean(vals["treatment_first"]), mean(vals["null_first"])
        expected = {
            "rate": mean(every),
            "rate_treatment_first": first,
            "rate_treatment_second": second,
            "position_bias": None if first is None or second is None else (first - second) / 2,
        }
        for key, ours in expected.items():
            if ours is None or j.get(key) is None:
                A.eq(jw + "." + key, "no estimate without judgments", ours, j.get(key))
            else:
                A.num(jw + "." + key, f"{key} from judgments.csv", ours, j[key], abs_tol=1e-12)
    human_pairs = [
        (r.root, b[0] / 2)
        for r in rows
        if r.kind == "human"
        for b in [_half_bounds(r, observation)]
        if b[0] == b[1]
    ]
    humans = [v for _, v in human_pairs]
    if human_pairs:
        h = _rate_interval(human_pairs, level)
        for key, ours in (
            ("human_rate_ci", h["ci"]),
            ("human_roots", h["roots"]),
            ("human_rate_ci_basis", h["basis"]),
            ("human_rate_design_effect", h["design_effect"]),
        ):
            _check_interval(A, f"{w}.{key}", f"{key}, the root as the unit", ours, jr.get(key))
    _study_fitted_clips(A, jr)
    _study_human_icc(A, w + ".human_icc", human_pairs, jr.get("human_icc"))
    A.eq(
        w + ".human_judgments",
        "human judgments on the roots entered",
        len(humans),
        jr["human_judgments"],
    )
    ours = mean(humans)
    if ours is None or jr.get("human_rate") is None:
        A.eq(w + ".human_rate", "no human rate without human judgments", ours, jr.get("human_rate"))
    else:
        A.num(
            w + ".human_rate",
            "mean human value from judgments.csv",
            ours,
            jr["human_rate"],
            abs_tol=1e-12,
        )
