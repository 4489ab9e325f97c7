"""Agreement between two readers: Cohen's κ with its asymptotic interval.

κ = (P_o − P_e) / (1 − P_e), P_o the observed agreement and P_e = Σ_c p_a(c)·p_b(c) the agreement
expected from the two readers' marginals; the standard error is the non-null large-sample one of
Fleiss, Cohen & Everitt (1969) (:func:`cohens_kappa_from_table`). This is mathematics only; the
simulated reader-reconstruction audit lives in :mod:`verdictpack.simulate._human`.

The reader-audit gate (:class:`AuditGate`) is on a one-sided lower confidence bound of κ, not on
κ̂: an instrument at true κ 0.5 passes a 40-root audit with gate 0.6 about 23 % of the time when
κ̂ is gated, and the asymptotic interval collapses to [1, 1] at κ̂ = 1. The bound
(:func:`kappa_lower_bound`, method ``clopper_pearson_agreement``) is the exact Clopper–Pearson
lower bound of the observed agreement P_o (the X agreeing roots of n are Binomial(n, P_o)) mapped
through the chance correction with the observed P_e:

    κ_L = (B_{1−level}(X, n − X + 1) − P_e) / (1 − P_e),  clipped at −1 (κ_L = (0 − P_e)/(1 − P_e)
    when X = 0),

B_q(a, b) the q-quantile of Beta(a, b). κ is increasing in P_o at fixed P_e, so the bound is
exact up to the sampling error of P_e, whose first-order effect ∂κ/∂P_e = −(1 − P_o)/(1 − P_e)²
vanishes as P_o → 1 and whose variance vanishes at balanced marginals; the conservatism of the
exact binomial bound absorbed it at every measured point with κ ≥ 0 (coverage and the gate's
pass rates: ``docs/statistics.md``, "The reader-audit gate"). At κ̂ = 1 (X = n) the bound is
((1 − level)^{1/n} − P_e)/(1 − P_e) < 1: finite.

Population κ of the simulated reader model (:func:`expected_kappa`). True labels are uniform on k
categories; each reader independently answers the true label with probability r and otherwise one
of the k − 1 other labels uniformly. Each reader's marginal is then uniform, so P_e = 1/k, and

    P_o = r² + (1 − r)² / (k − 1)        (both right, or both wrong on the same wrong label)

so κ = (P_o − 1/k) / (1 − 1/k) simplifies to κ(r, k) = ((k·r − 1) / (k − 1))² (the numerator
k·P_o − 1 = k²r² − 2kr + 1 = (kr − 1)²).

Bad arguments raise :class:`~verdictpack._errors.InputError`.
"""

from __future__ import annotations

import math
from collections.abc import Hashable, Iterable, Sequence
from dataclasses import dataclass
from typing import Any, Literal

import numpy as np
from numpy.typing import NDArray
from scipy import special

from verdictpack._errors import InputError
from verdictpack._results import Quantity, closed_form, exact
from verdictpack._validate import closed_unit, int_at_least, is_finite_real, open_unit
from verdictpack.core import _libm

__all__ = [
    "KAPPA_BOUND_METHOD",
    "AuditDecision",
    "AuditGate",
    "KappaResult",
    "cohens_kappa",
    "cohens_kappa_from_table",
    "expected_kappa",
    "kappa_lower_bound",
    "kappa_lower_bounds",
    "reconstruction_rate_for",
]

#: The name of the lower-bound method, as results.json and the reports print it.
KAPPA_BOUND_METHOD = "clopper_pearson_agreement"


def _z_two_sided(level: float) -> float:
    return float(special.ndtri(0.5 + level / 2.0))


@dataclass(frozen=True)
class KappaResult:
    """Cohen's κ of two readers with its asymptotic (non-null) standard error and interval.

    ``kappa`` = (P_o − P_e) / (1 − P_e): P_o the observed agreement, P_e = Σ_c p_a(c)·p_b(c) the
    agreement expected from the two readers' marginals. ``se`` is the large-sample standard error
    of Fleiss, Cohen & Everitt (1969), see :func:`cohens_kappa_from_table`. The interval is
    κ ± z_{(1+level)/2}·se clipped to [−1, 1]; its basis is ``closed_form`` (asymptotic normal,
    not exact). ``n`` is the number of rated roots, ``categories`` the label set in table order,
    ``table`` the k × k counts (reader A by rows) the result was computed from.
    """

    kappa: float
    observed_agreement: float
    expected_agreement: float
    n: int
    se: float
    level: float
    ci_low: float
    ci_high: float
    categories: tuple[Any, ...]
    ci_basis: Literal["closed_form"] = "closed_form"
    table: tuple[tuple[int, ...], ...] | None = None

    def interval(self, level: float) -> tuple[float, float]:
        """The asymptotic interval κ ± z·se at another ``level`` in (0, 1), clipped to [−1, 1]."""
        lev = open_unit("level", level)
        half = _z_two_sided(lev) * self.se
        return (max(-1.0, self.kappa - half), min(1.0, self.kappa + half))

    @property
    def agreements(self) -> int:
        """The number of roots on which the two readers agree (the table's diagonal)."""
        if self.table is not None:
            return sum(self.table[i][i] for i in range(len(self.table)))
        return round(self.observed_agreement * self.n)

    def lower_bound(self, level: float = 0.95) -> float:
        """The one-sided lower confidence bound of κ at ``level`` (:func:`kappa_lower_bound`)."""
        return kappa_lower_bound(self.agreements, self.n, self.expected_agreement, level)


def cohens_kappa_from_table(table: Any, level: float = 0.95) -> KappaResult:
    """Cohen's κ from a k × k table of counts (rows: reader A's label, columns: reader B's).

    Standard error (Fleiss, Cohen & Everitt 1969, the non-null large-sample variance), with
    p_ij = table / n, p_i. the row and p_.j the column marginals, P_e = Σ_i p_i.·p_.i:

        Var(κ̂) = [ Σ_i p_ii·(1 − (p_i. + p_.i)(1 − κ))²
                   + (1 − κ)²·Σ_{i≠j} p_ij·(p_.i + p_j.)²
                   − (κ − P_e·(1 − κ))² ] / (n·(1 − P_e)²)

    (rounding can make the bracket a hair negative when κ = 1; it is floored at 0).
    Degenerate case: P_e = 1 (both readers used one and the same single category throughout)
    leaves κ undefined (0/0) and raises InputError naming ``table``; no NaN is returned.
    """
    lev = open_unit("level", level)
    arr = np.asarray(table)
    if arr.ndim != 2 or arr.shape[0] != arr.shape[1] or arr.shape[0] < 2:
        raise InputError("table", "a square k × k table of counts with k >= 2", arr.tolist())
    if arr.dtype.kind not in "iu" and not (
        arr.dtype.kind == "f" and np.all(np.isfinite(arr)) and np.all(arr == np.round(arr))
    ):
        raise InputError("table", "non-negative integer counts", arr.tolist())
    counts = arr.astype(np.int64)
    if np.any(counts < 0):
        raise InputError("table", "non-negative integer counts", arr.tolist())
    n = int(counts.sum())
    if n < 2:
        raise InputError("table", "counts summing to at least 2 rated roots", arr.tolist())
    return _kappa_from_counts(counts, lev, tuple(range(arr.shape[0])))


def _kappa_from_counts(
    counts: NDArray[np.int64], level: float, categories: tuple[Any, ...]
) -> KappaResult:
    n = int(counts.sum())
    p = counts / n
    row = p.sum(axis=1)
    col = p.sum(axis=0)
    p_o = float(np.trace(p))
    p_e = _libm.dot(row, col)
    if p_e >= 1.0 - 1e-12:
        raise InputError(
            "table",
            "ratings whose expected agreement is below 1 (κ is 0/0 when both readers use one "
            "and the same single category throughout)",
            counts.tolist(),
        )
    kappa = (p_o - p_e) / (1.0 - p_e)
    diag = np.diag(p)
    term_a = float(np.sum(diag * (1.0 - (row + col) * (1.0 - kappa)) ** 2))
    # cell (i, j) weighs (p_.i + p_j.)²: column marginal of i plus row marginal of j
    weights = (col[:, None] + row[None, :]) ** 2
    off = p * weights
    np.fill_diagonal(off, 0.0)
    term_b = (1.0 - kappa) ** 2 * float(off.sum())
    term_c = (kappa - p_e * (1.0 - kappa)) ** 2
    var = max(0.0, (term_a + term_b - term_c) / (n * (1.0 - p_e) ** 2))
    se = math.sqrt(var)
    half = _z_two_sided(level) * se
    return KappaResult(
        kappa=float(kappa),
        observed_agreement=p_o,
        expected_agreement=p_e,
        n=n,
        se=se,
        level=level,
        ci_low=max(-1.0, kappa - half),
        ci_high=min(1.0, kappa + half),
        categories=categories,
        table=tuple(tuple(int(v) for v in row) for row in counts.tolist()),
    )


def kappa_lower_bounds(
    agreements: NDArray[np.integer[Any]] | NDArray[np.floating[Any]],
    n: int | NDArray[np.integer[Any]],
    expected_agreement: NDArray[np.floating[Any]],
    level: float,
) -> NDArray[np.float64]:
    """:func:`kappa_lower_bound` vectorised over arrays of (agreements, n, P_e), unchecked: the
    Monte Carlo path of the simulations (the arguments are assumed valid, P_e < 1)."""
    x = np.asarray(agreements, dtype=np.float64)
    m = np.broadcast_to(np.asarray(n, dtype=np.float64), x.shape)
    p_e = np.asarray(expected_agreement, dtype=np.float64)
    safe_x = np.where(x > 0, x, 1.0)
    p_lo = np.where(x > 0, special.betaincinv(safe_x, m - x + 1.0, 1.0 - level), 0.0)
    return np.asarray(np.maximum(-1.0, (p_lo - p_e) / (1.0 - p_e)), dtype=np.float64)


def kappa_lower_bound(
    agreements: int, n: int, expected_agreement: float, level: float = 0.95
) -> float:
    """One-sided lower confidence bound of Cohen's κ at ``level`` (method
    ``clopper_pearson_agreement``): the exact Clopper–Pearson lower bound of the observed
    agreement, B_{1−level}(X, n − X + 1) (0 when X = 0), mapped through the chance correction,
    κ_L = (P_o,L − P_e) / (1 − P_e), clipped at −1. ``agreements`` X of ``n`` rated roots agree;
    ``expected_agreement`` P_e ∈ [0, 1) is the observed chance agreement Σ_c p_a(c)·p_b(c).

    Finite below 1 even at κ̂ = 1: ((1 − level)^{1/n} − P_e) / (1 − P_e). Why a bound and why this
    one: module docstring. InputError names the argument refused (n < 1, X outside 0..n, P_e
    outside [0, 1), level outside (0.5, 1)).
    """
    m = int_at_least("n", n, 1)
    x = int_at_least("agreements", agreements, 0)
    if x > m:
        raise InputError("agreements", f"an integer from 0 to n ({m})", agreements)
    if not is_finite_real(expected_agreement) or not 0.0 <= float(expected_agreement) < 1.0:
        raise InputError("expected_agreement", "a number in [0, 1)", expected_agreement)
    lev = _bound_level(level)
    out = kappa_lower_bounds(np.array([x]), m, np.array([float(expected_agreement)]), lev)
    return float(out[0])


def _bound_level(level: Any) -> float:
    if not is_finite_real(level) or not 0.5 < float(level) < 1.0:
        raise InputError("level", "a confidence level in (0.5, 1)", level)
    return float(level)


@dataclass(frozen=True)
class AuditDecision:
    """The reader-audit gate's decision: passed iff the one-sided lower confidence bound of κ at
    ``bound_level`` reaches ``kappa_min`` (``gated_on`` "lower_bound").

    Why on a bound: gating κ̂ passes an instrument at true κ 0.5 in 23 % of 40-root audits at
    gate 0.6; with a valid bound the pass rate of any instrument below the gate is at most
    1 − ``bound_level``. ``kappa`` is the point estimate (exact from the readings),
    ``lower_bound`` the bound (method ``bound_method``; closed form), ``ci_low``..``ci_high`` the
    two-sided asymptotic interval at ``level`` (reported, not gated). ``agreements`` of
    ``n_roots`` roots agree, ``expected_agreement`` is P_e. ``readings`` = 2N touches.
    """

    passed: bool
    kappa: Quantity
    kappa_min: float
    ci_low: Quantity
    ci_high: Quantity
    level: float
    n_roots: int
    readings: int
    se: float
    agreement_table: tuple[tuple[int, ...], ...] | None
    lower_bound: Quantity
    bound_level: float
    bound_method: str
    agreements: int
    expected_agreement: float
    gated_on: Literal["lower_bound"] = "lower_bound"


@dataclass(frozen=True)
class AuditGate:
    """Instrument-validity gate: the reader audit passes when the one-sided lower confidence
    bound of κ at ``level`` (default 0.95, in (0.5, 1)) reaches ``kappa_min`` (default 0.60, in
    (0, 1)). The gate is on the bound, not on κ̂, so that an instrument whose true κ is below
    ``kappa_min`` passes with probability at most about 1 − ``level`` (module docstring)."""

    kappa_min: float = 0.60
    level: float = 0.95

    def __post_init__(self) -> None:
        if not is_finite_real(self.kappa_min) or not 0.0 < float(self.kappa_min) < 1.0:
            raise InputError("kappa_min", "a number in (0, 1)", self.kappa_min)
        _bound_level(self.level)

    def evaluate(self, result: Any) -> AuditDecision:
        """Gate a :class:`KappaResult` (or any object whose ``kappa`` is one, e.g. a simulated
        reader audit)."""
        k = result if isinstance(result, KappaResult) else getattr(result, "kappa", None)
        if not isinstance(k, KappaResult):
            raise InputError("result", "a KappaResult or a reader audit", type(result).__name__)
        bound = k.lower_bound(self.level)
        return AuditDecision(
            passed=bool(bound >= self.kappa_min),
            kappa=exact(k.kappa),
            kappa_min=float(self.kappa_min),
            ci_low=closed_form(k.ci_low),
            ci_high=closed_form(k.ci_high),
            level=k.level,
            n_roots=k.n,
            readings=2 * k.n,
            se=k.se,
            agreement_table=k.table,
            lower_bound=closed_form(bound),
            bound_level=float(self.level),
            bound_method=KAPPA_BOUND_METHOD,
            agreements=k.agreements,
            expected_agreement=k.expected_agreement,
        )

    def passes(self, agreements: Any, n: int, expected_agreement: Any) -> int:
        """How many audits of ``n`` roots pass, given as arrays of agreements and P_e (the
        simulations' vectorised path, unchecked); an audit with P_e = 1 (κ undefined) fails."""
        p_e = np.asarray(expected_agreement, dtype=np.float64)
        defined = p_e < 1.0 - 1e-12
        bound = kappa_lower_bounds(agreements, n, np.where(defined, p_e, 0.0), self.level)
        return int(np.count_nonzero(defined & (bound >= self.kappa_min)))


def _sort_key(label: Any) -> tuple[str, str]:
    return (type(label).__name__, repr(label))


def cohens_kappa(
    a: Iterable[Hashable],
    b: Iterable[Hashable],
    categories: Sequence[Hashable] | None = None,
    level: float = 0.95,
) -> KappaResult:
    """Cohen's κ of two readers' labels ``a`` and ``b`` (one label per root, same order).

    ``categories``: the admissible labels (distinct, at least 2); every label must be one of them.
    When omitted, the categories are the labels observed in ``a`` or ``b`` (sorted). The standard
    error and interval are those of :func:`cohens_kappa_from_table` (Fleiss, Cohen & Everitt 1969):

        Var(κ̂) = [ Σ_i p_ii·(1 − (p_i. + p_.i)(1 − κ))² + (1 − κ)²·Σ_{i≠j} p_ij·(p_.i + p_j.)²
                   − (κ − P_e·(1 − κ))² ] / (n·(1 − P_e)²)

    InputError when the lengths differ, fewer than 2 roots are given, a label is not a category,
    or P_e = 1 (κ undefined; see :func:`cohens_kappa_from_table`).
    """
    lev = open_unit("level", level)
    if isinstance(a, (str, bytes)) or isinstance(b, (str, bytes)):
        raise InputError("a, b", "sequences of labels (not a string)", type(a).__name__)
    fast = _numeric_codes(a, b, categories)
    if fast is not None:
        fa, fb, fcats = fast
        fk = max(len(fcats), 2)
        fcounts = np.bincount(fa * fk + fb, minlength=fk * fk).reshape(fk, fk).astype(np.int64)
        return _kappa_from_counts(fcounts, lev, fcats)
    labels_a = list(np.asarray(a).tolist()) if isinstance(a, np.ndarray) else list(a)
    labels_b = list(np.asarray(b).tolist()) if isinstance(b, np.ndarray) else list(b)
    if len(labels_a) != len(labels_b):
        raise InputError("b", f"as many labels as a ({len(labels_a)})", len(labels_b))
    if len(labels_a) < 2:
        raise InputError("a", "at least 2 rated roots", len(labels_a))
    try:
        if categories is None:
            observed = set(labels_a) | set(labels_b)
            cats: tuple[Any, ...] = tuple(sorted(observed, key=_sort_key))
        else:
            if isinstance(categories, (str, bytes)):
                raise InputError("categories", "a sequence of distinct labels", categories)
            cats = tuple(categories)
            if len(set(cats)) != len(cats):
                raise InputError("categories", "distinct labels", list(cats))
        index = {c: i for i, c in enumerate(cats)}
    except TypeError as err:
        raise InputError("a, b", "hashable labels", str(err)) from None
    if categories is not None and len(cats) < 2:
        raise InputError("categories", "at least 2 distinct labels", list(cats))
    k = max(len(cats), 2)
    try:
        ia = np.fromiter((index[x] for x in labels_a), dtype=np.int64, count=len(labels_a))
        ib = np.fromiter((index[x] for x in labels_b), dtype=np.int64, count=len(labels_b))
    except KeyError as err:
        raise InputError("a, b", f"labels among the categories {list(cats)}", err.args[0]) from None
    except TypeError as err:
        raise InputError("a, b", "hashable labels", str(err)) from None
    counts = np.bincount(ia * k + ib, minlength=k * k).reshape(k, k).astype(np.int64)
    return _kappa_from_counts(counts, lev, cats)


def _numeric_codes(
    a: Any, b: Any, categories: Sequence[Hashable] | None
) -> tuple[NDArray[np.int64], NDArray[np.int64], tuple[Any, ...]] | None:
    """The category codes of two numeric label arrays, vectorised; None when the general path
    must decide (not two 1-d int/float arrays of one length >= 2, categories not given, not
    distinct, fewer than 2, not all int/float, or some label not among them -- the general path
    then gives the same counts or raises its InputError)."""
    if categories is None or isinstance(categories, (str, bytes)):
        return None
    if not (isinstance(a, np.ndarray) and isinstance(b, np.ndarray)):
        return None
    if a.ndim != 1 or b.ndim != 1 or a.dtype.kind not in "iuf" or b.dtype.kind not in "iuf":
        return None
    if len(a) != len(b) or len(a) < 2:
        return None
    cats = tuple(categories)
    if len(cats) < 2 or len(set(cats)) != len(cats):
        return None
    if not all(type(c) in (int, float) for c in cats):
        return None
    values = np.asarray(cats, dtype=np.float64)
    if not np.all(np.isfinite(values)) or len(np.unique(values)) != len(cats):
        return None
    order = np.argsort(values, kind="stable")
    sorted_values = values[order]
    codes = []
    for labels in (a, b):
        if labels.dtype.kind in "iu" and len(labels) and int(np.abs(labels).max()) > 2**53:
            return None  # not exact as a float
        x = labels.astype(np.float64)
        pos = np.searchsorted(sorted_values, x)
        hit = pos < len(cats)
        hit[hit] = sorted_values[pos[hit]] == x[hit]
        if not hit.all():
            return None
        codes.append(order[pos].astype(np.int64))
    return codes[0], codes[1], cats


def expected_kappa(reconstruction_rate: float, n_categories: int = 2) -> float:
    """Population κ of the simulated reader model: ((k·r − 1)/(k − 1))² (derivation: module doc)."""
    r = closed_unit("reconstruction_rate", reconstruction_rate)
    k = int_at_least("n_categories", n_categories, 2)
    return ((k * r - 1.0) / (k - 1.0)) ** 2


def reconstruction_rate_for(kappa: float, n_categories: int = 2) -> float:
    """The inverse of :func:`expected_kappa` on r ≥ 1/k: the reconstruction rate whose readers
    agree at population κ (a κ below 0 read as 0), (1 + (k − 1)·√κ)/k."""
    k = int_at_least("n_categories", n_categories, 2)
    return (1.0 + (k - 1) * math.sqrt(max(float(kappa), 0.0))) / k
