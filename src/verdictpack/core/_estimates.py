"""Judges as the data show them: per-rater estimates from a long table of judgments.

Pure mathematics on arrays (no config, no I/O). The input is one row per judgment, as equal-length
arrays:

* ``root``  — integer root index (>= 0),
* ``rater`` — integer rater index (>= 0; rater r is the r-th entry of ``names`` when given),
* ``order`` — 0 treatment shown first, 1 null partner shown first, 2 unknown,
* ``value`` — float in [0, 1]: 1 prefers the treatment, 0 the null partner, 0.5 a tie (an invalid
  judgment has already been mapped to a value by the declared policy upstream),
* ``trial`` — optional integer trial index (default 0 for every row).

A key (root, rater, order, trial) may occur at most once (InputError naming it otherwise).

What is estimated, and how
--------------------------
**Preference rate** (:func:`rater_rates`): the mean value of the rater's judgments, with a 95 %
*bracketing Clopper–Pearson* interval. For values in [0, 1] the mean m satisfies
P(value = 1) <= m <= P(value > 0), so the interval [CP_low(#{value = 1}), CP_high(#{value > 0})]
(each side at (1 − level)/2) covers m with probability at least ``level``. With no ties it is
exactly the Clopper–Pearson interval; ties widen it conservatively (a tie counts 0 for the lower
side and 1 for the upper side). Chosen over Wilson because it is exact (never anti-conservative)
and needs no variance model for the ties.

**Position bias** (:func:`position_bias`): δ̂ = (m_first − m_second) / 2, m_first the mean value
when the treatment was shown first (order 0), m_second when it was shown second (order 1); rows of
unknown order do not enter. This is the δ of :class:`verdictpack.simulate._judges.JudgeSheet`
(p ± δ per order). Interval: Newcombe's square-and-add (MOVER) combination of the two bracketing
intervals above, halved (approximate, not exact; conservative as far as its parts are):

    L = d − √((m₁ − l₁)² + (u₂ − m₂)²),  U = d + √((u₁ − m₁)² + (m₂ − l₂)²),  d = m₁ − m₂.

It is undefined (``None``) when the rater has no row in one of the two orders.

**Pairwise κ** (:func:`pairwise_kappa`): Cohen's κ
(:func:`verdictpack.core._agreement.cohens_kappa`, categories the values observed among
{0, 0.5, 1, ...}) between two raters over the (root, order, trial) keys both judged, with its
asymptotic interval; ``None`` when fewer than 2 keys are shared or κ is 0/0.

**Latent correlation** (:func:`latent_correlation`): the Gaussian-copula (tetrachoric) relation of
the simulated panel model: rater j prefers the treatment iff Z_j < Φ⁻¹(p_j,o), so for two raters on
the same key P(both prefer) = Φ₂(Φ⁻¹(p_j,o), Φ⁻¹(p_k,o); ρ). Per pair, on the shared keys whose two
values are both binary (ties leave the pair's estimate), the thresholds are the raters' rates on
those keys *per order* (so a position bias does not masquerade as correlation), and ρ solves

    Σ_o n_o·Φ₂(Φ⁻¹(p̂_j,o), Φ⁻¹(p̂_k,o); ρ) = #{both prefer}

by bisection on [−1, 1] (the left side increases in ρ; an observed count outside its range gives
the nearer end). A pair whose raters never vary on the shared keys carries no information
(``None``). The panel's ρ̂ is the plain mean over the informative pairs, and the effective panel
size is Kish's J / (1 + (J − 1)ρ̂) with J the number of raters that judged at least once.
Φ₂ is computed by Plackett's identity Φ₂(a, b; r) = Φ(a)Φ(b) + ∫₀ʳ φ₂(a, b; t) dt.

**Reader audit** (:func:`reader_audit_from_readings`): the double readings of the reconstruction
audit, (root, reader, category) per reading; exactly two readings per root by two different
readers. Per root the reading of the reader that sorts first is "reader A", the other "reader B";
Cohen's κ of A against B with its interval. κ is symmetric in A and B, so the assignment only
fixes the table's orientation.

Bad arguments raise :class:`~verdictpack._errors.InputError`.
"""

from __future__ import annotations

import math
from collections.abc import Hashable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
from numpy.typing import NDArray
from scipy import integrate, special

from verdictpack._errors import InputError
from verdictpack._validate import open_unit
from verdictpack.core._agreement import KappaResult, cohens_kappa

__all__ = [
    "LatentCorrelation",
    "PairKappa",
    "PairLatent",
    "PanelEstimates",
    "PositionBias",
    "RaterRate",
    "bivariate_normal_cdf",
    "estimate_panel",
    "latent_correlation",
    "pairwise_kappa",
    "position_bias",
    "rater_rates",
    "reader_audit_from_readings",
]

_ORDERS = 3  # 0 treatment first, 1 null first, 2 unknown
_BISECT_STEPS = 60


# --------------------------------------------------------------------------------------------
# input
# --------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class _Rows:
    root: NDArray[np.int64]
    rater: NDArray[np.int64]
    order: NDArray[np.int64]
    value: NDArray[np.float64]
    trial: NDArray[np.int64]
    n_raters: int
    by_rater: tuple[NDArray[np.int64], ...]  # row indices of each rater, in row order
    keys: NDArray[np.int64]  # one integer per (root, order, trial)


def _int_array(name: str, values: Any) -> NDArray[np.int64]:
    arr = np.asarray(values)
    if arr.ndim != 1:
        raise InputError(name, "a one-dimensional array of integers", f"shape {arr.shape}")
    if arr.size == 0:
        return np.zeros(0, dtype=np.int64)
    if arr.dtype.kind in "iu":
        out = arr.astype(np.int64)
    elif arr.dtype.kind == "b":
        raise InputError(name, "integers (not booleans)", "bool array")
    elif arr.dtype.kind == "f" and np.all(np.isfinite(arr)) and np.all(arr == np.round(arr)):
        out = arr.astype(np.int64)
    else:
        raise InputError(name, "integers", arr[:5].tolist())
    if np.any(out < 0):
        bad = int(np.flatnonzero(out < 0)[0])
        raise InputError(f"{name}[{bad}]", "an integer >= 0", int(out[bad]))
    return out


def _rows(
    root: Any, rater: Any, order: Any, value: Any, trial: Any | None, n_raters: int | None
) -> _Rows:
    r = _int_array("root", root)
    j = _int_array("rater", rater)
    o = _int_array("order", order)
    v = np.asarray(value, dtype=np.float64) if np.asarray(value).dtype.kind in "iuf" else None
    if v is None or v.ndim != 1:
        raise InputError("value", "a one-dimensional array of numbers in [0, 1]", repr(value)[:60])
    t = np.zeros(r.size, dtype=np.int64) if trial is None else _int_array("trial", trial)
    for name, arr in (("rater", j), ("order", o), ("value", v), ("trial", t)):
        if arr.size != r.size:
            raise InputError(name, f"as many entries as root ({r.size})", arr.size)
    if np.any(o >= _ORDERS):
        bad = int(np.flatnonzero(o >= _ORDERS)[0])
        raise InputError(
            f"order[{bad}]", "0 (treatment first), 1 (null first) or 2 (unknown)", int(o[bad])
        )
    outside = ~(np.isfinite(v) & (v >= 0.0) & (v <= 1.0))
    if np.any(outside):
        bad = int(np.flatnonzero(outside)[0])
        raise InputError(f"value[{bad}]", "a number in [0, 1]", float(v[bad]))
    seen = int(j.max()) + 1 if j.size else 0
    if n_raters is None:
        count = seen
    else:
        if isinstance(n_raters, bool) or not isinstance(n_raters, (int, np.integer)):
            raise InputError("n_raters", "an integer >= 0", n_raters)
        count = int(n_raters)
        if count < seen:
            raise InputError("n_raters", f"at least the largest rater index + 1 ({seen})", count)
    span_t = int(t.max()) + 1 if t.size else 1
    if r.size:
        span_r = int(r.max()) + 1
        if span_r * _ORDERS * span_t >= 2**62:
            raise InputError("root, trial", "indices small enough to combine into one key", span_r)
        keys = (r * _ORDERS + o) * span_t + t
    else:
        keys = np.zeros(0, dtype=np.int64)
    sort = np.argsort(j, kind="stable")
    bounds = np.searchsorted(j[sort], np.arange(count + 1))
    groups = tuple(sort[bounds[i] : bounds[i + 1]] for i in range(count))
    for rater_index, group in enumerate(groups):
        mine = np.sort(keys[group])
        same = np.flatnonzero(mine[1:] == mine[:-1])
        if same.size:
            dup = int(mine[same[0]])
            trial_of, rest = dup % span_t, dup // span_t
            raise InputError(
                "root, rater, order, trial",
                "each (root, rater, order, trial) at most once",
                {
                    "root": rest // _ORDERS,
                    "rater": rater_index,
                    "order": rest % _ORDERS,
                    "trial": trial_of,
                },
            )
    return _Rows(r, j, o, v, t, count, groups, keys)


def _level(level: float) -> float:
    return open_unit("level", level)


# --------------------------------------------------------------------------------------------
# rates
# --------------------------------------------------------------------------------------------


def _cp_low(successes: int, n: int, alpha_half: float) -> float:
    if successes <= 0:
        return 0.0
    return float(special.betaincinv(successes, n - successes + 1, alpha_half))


def _cp_high(successes: int, n: int, alpha_half: float) -> float:
    if successes >= n:
        return 1.0
    return float(special.betaincinv(successes + 1, n - successes, 1.0 - alpha_half))


def _bracket(values: NDArray[np.float64], level: float) -> tuple[float, float, float]:
    """(mean, low, high) of the bracketing Clopper–Pearson interval (module docstring)."""
    n = int(values.size)
    mean = float(values.mean())
    half = (1.0 - level) / 2.0
    ones = int(np.count_nonzero(values >= 1.0))
    positive = int(np.count_nonzero(values > 0.0))
    return mean, min(_cp_low(ones, n, half), mean), max(_cp_high(positive, n, half), mean)


@dataclass(frozen=True)
class RaterRate:
    """One rater's preference rate: the mean value, its bracketing Clopper–Pearson interval
    (exact Clopper–Pearson when ``n_ties`` is 0), and counts. ``rate`` etc. are ``None`` when the
    rater has no judgment."""

    rater: int
    n: int
    n_ties: int
    rate: float | None
    ci_low: float | None
    ci_high: float | None
    level: float
    ci_basis: str = "bracketing_clopper_pearson"


def _rates(rows: _Rows, level: float) -> tuple[RaterRate, ...]:
    out = []
    for j in range(rows.n_raters):
        vals = rows.value[rows.by_rater[j]]
        ties = int(np.count_nonzero((vals > 0.0) & (vals < 1.0)))
        if vals.size == 0:
            out.append(RaterRate(j, 0, 0, None, None, None, level))
            continue
        mean, low, high = _bracket(vals, level)
        out.append(RaterRate(j, int(vals.size), ties, mean, low, high, level))
    return tuple(out)


def rater_rates(
    root: Any,
    rater: Any,
    order: Any,
    value: Any,
    *,
    trial: Any | None = None,
    n_raters: int | None = None,
    level: float = 0.95,
) -> tuple[RaterRate, ...]:
    """Per rater (index 0 .. n_raters − 1): preference rate, interval, n (module docstring)."""
    lev = _level(level)
    return _rates(_rows(root, rater, order, value, trial, n_raters), lev)


# --------------------------------------------------------------------------------------------
# position bias
# --------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class PositionBias:
    """δ̂ = (m_first − m_second)/2 with Newcombe's square-and-add interval (halved); ``None``
    when the rater lacks one of the two known orders."""

    rater: int
    n_first: int
    n_second: int
    rate_first: float | None
    rate_second: float | None
    bias: float | None
    ci_low: float | None
    ci_high: float | None
    level: float
    ci_basis: str = "newcombe_square_and_add"


def _biases(rows: _Rows, level: float) -> tuple[PositionBias, ...]:
    out = []
    for j in range(rows.n_raters):
        mine = rows.by_rater[j]
        first = rows.value[mine[rows.order[mine] == 0]]
        second = rows.value[mine[rows.order[mine] == 1]]
        if first.size == 0 or second.size == 0:
            out.append(
                PositionBias(
                    j,
                    int(first.size),
                    int(second.size),
                    float(first.mean()) if first.size else None,
                    float(second.mean()) if second.size else None,
                    None,
                    None,
                    None,
                    level,
                )
            )
            continue
        m1, l1, u1 = _bracket(first, level)
        m2, l2, u2 = _bracket(second, level)
        d = m1 - m2
        low = d - math.hypot(m1 - l1, u2 - m2)
        high = d + math.hypot(u1 - m1, m2 - l2)
        out.append(
            PositionBias(
                j, int(first.size), int(second.size), m1, m2, d / 2.0, low / 2.0, high / 2.0, level
            )
        )
    return tuple(out)


def position_bias(
    root: Any,
    rater: Any,
    order: Any,
    value: Any,
    *,
    trial: Any | None = None,
    n_raters: int | None = None,
    level: float = 0.95,
) -> tuple[PositionBias, ...]:
    """Per rater: half the difference of the preference rate between the two orders."""
    lev = _level(level)
    return _biases(_rows(root, rater, order, value, trial, n_raters), lev)


# --------------------------------------------------------------------------------------------
# pairs
# --------------------------------------------------------------------------------------------


def _pair_values(
    rows: _Rows, a: int, b: int
) -> tuple[NDArray[np.int64], NDArray[np.float64], NDArray[np.float64]]:
    """(order, value_a, value_b) on the (root, order, trial) keys both raters judged."""
    ra = rows.by_rater[a]
    rb = rows.by_rater[b]
    _, ia, ib = np.intersect1d(
        rows.keys[ra], rows.keys[rb], assume_unique=True, return_indices=True
    )
    return rows.order[ra[ia]], rows.value[ra[ia]], rows.value[rb[ib]]


@dataclass(frozen=True)
class PairKappa:
    """Cohen's κ of raters ``a`` < ``b`` on their shared keys; ``kappa`` is ``None`` when it is
    undefined (fewer than 2 shared keys, or both raters constant on one same value)."""

    a: int
    b: int
    n_shared: int
    kappa: KappaResult | None


def _kappas(rows: _Rows, level: float) -> tuple[PairKappa, ...]:
    out = []
    for a in range(rows.n_raters):
        for b in range(a + 1, rows.n_raters):
            _, va, vb = _pair_values(rows, a, b)
            result: KappaResult | None = None
            if va.size >= 2:
                cats = sorted(set(va.tolist()) | set(vb.tolist()))
                if len(cats) >= 2:
                    try:
                        result = cohens_kappa(va, vb, categories=cats, level=level)
                    except InputError:
                        result = None
            out.append(PairKappa(a, b, int(va.size), result))
    return tuple(out)


def pairwise_kappa(
    root: Any,
    rater: Any,
    order: Any,
    value: Any,
    *,
    trial: Any | None = None,
    n_raters: int | None = None,
    level: float = 0.95,
) -> tuple[PairKappa, ...]:
    """Cohen's κ (with its interval) for every pair of raters, on the (root, order, trial) keys
    both judged."""
    lev = _level(level)
    return _kappas(_rows(root, rater, order, value, trial, n_raters), lev)


# --------------------------------------------------------------------------------------------
# latent correlation
# --------------------------------------------------------------------------------------------


def bivariate_normal_cdf(a: float, b: float, r: float) -> float:
    """P(X < a, Y < b) for standard normals with correlation r ∈ [−1, 1] (Plackett's identity)."""
    if a == -math.inf or b == -math.inf:
        return 0.0
    pa = float(special.ndtr(a))
    pb = float(special.ndtr(b))
    if a == math.inf or b == math.inf:
        return min(pa, pb)
    if r >= 1.0:
        return float(special.ndtr(min(a, b)))
    if r <= -1.0:
        return max(0.0, pa + pb - 1.0)
    if r == 0.0:
        return pa * pb

    def density(t: float) -> float:
        one = 1.0 - t * t
        return math.exp(-(a * a - 2.0 * t * a * b + b * b) / (2.0 * one)) / (
            2.0 * math.pi * math.sqrt(one)
        )

    area, _ = integrate.quad(density, 0.0, r, epsabs=1e-13, epsrel=1e-11, limit=200)
    return min(max(pa * pb + float(area), 0.0), 1.0)


@dataclass(frozen=True)
class PairLatent:
    """The tetrachoric ρ of raters ``a`` < ``b`` (``None`` when the pair is uninformative);
    ``n_binary`` shared keys with two binary values entered."""

    a: int
    b: int
    n_binary: int
    rho: float | None


@dataclass(frozen=True)
class LatentCorrelation:
    """The panel's latent correlation: the mean of the informative pairs' ρ, and Kish's
    effective size J / (1 + (J − 1)ρ) (``None`` when no pair is informative or the
    denominator is not positive)."""

    rho: float | None
    n_raters: int
    effective_size: float | None
    pairs: tuple[PairLatent, ...]


def _solve_rho(groups: list[tuple[int, float, float]], both: int) -> float | None:
    cuts = []
    for n_o, pa, pb in groups:
        za = float(special.ndtri(pa)) if 0.0 < pa < 1.0 else (math.inf if pa >= 1 else -math.inf)
        zb = float(special.ndtri(pb)) if 0.0 < pb < 1.0 else (math.inf if pb >= 1 else -math.inf)
        cuts.append((n_o, za, zb))
    if all(not (math.isfinite(za) and math.isfinite(zb)) for _, za, zb in cuts):
        return None  # no order in which both raters vary: Φ₂ does not depend on ρ

    def expected(r: float) -> float:
        return math.fsum(n_o * bivariate_normal_cdf(za, zb, r) for n_o, za, zb in cuts)

    lo, hi = -1.0, 1.0
    if both <= expected(lo):
        return lo
    if both >= expected(hi):
        return hi
    for _ in range(_BISECT_STEPS):
        mid = 0.5 * (lo + hi)
        if expected(mid) < both:
            lo = mid
        else:
            hi = mid
    return 0.5 * (lo + hi)


def _pair_latent(rows: _Rows, a: int, b: int) -> PairLatent:
    order, va, vb = _pair_values(rows, a, b)
    binary = ((va == 0.0) | (va == 1.0)) & ((vb == 0.0) | (vb == 1.0))
    order, va, vb = order[binary], va[binary], vb[binary]
    if va.size < 2:
        return PairLatent(a, b, int(va.size), None)
    groups = []
    for o in range(_ORDERS):
        sel = order == o
        n_o = int(np.count_nonzero(sel))
        if n_o:
            groups.append((n_o, float(va[sel].mean()), float(vb[sel].mean())))
    both = int(np.count_nonzero((va == 1.0) & (vb == 1.0)))
    return PairLatent(a, b, int(va.size), _solve_rho(groups, both))


def _latent(rows: _Rows) -> LatentCorrelation:
    pairs = tuple(
        _pair_latent(rows, a, b) for a in range(rows.n_raters) for b in range(a + 1, rows.n_raters)
    )
    active = len(np.unique(rows.rater))
    rhos = [p.rho for p in pairs if p.rho is not None]
    if not rhos:
        return LatentCorrelation(None, active, None, pairs)
    rho = float(np.mean(rhos))
    denom = 1.0 + (active - 1) * rho
    size = active / denom if denom > 0.0 else None
    return LatentCorrelation(rho, active, size, pairs)


def latent_correlation(
    root: Any,
    rater: Any,
    order: Any,
    value: Any,
    *,
    trial: Any | None = None,
    n_raters: int | None = None,
) -> LatentCorrelation:
    """The panel's latent correlation by the Gaussian-copula relation, averaged over pairs."""
    return _latent(_rows(root, rater, order, value, trial, n_raters))


# --------------------------------------------------------------------------------------------
# everything at once
# --------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class PanelEstimates:
    """Every estimate of one panel; ``names[r]`` names rater index r."""

    names: tuple[str, ...]
    rates: tuple[RaterRate, ...]
    position_biases: tuple[PositionBias, ...]
    kappas: tuple[PairKappa, ...]
    latent: LatentCorrelation
    level: float


def estimate_panel(
    root: Any,
    rater: Any,
    order: Any,
    value: Any,
    *,
    names: Sequence[str],
    trial: Any | None = None,
    level: float = 0.95,
) -> PanelEstimates:
    """Rates, position biases, pairwise κ and the latent correlation of raters ``names``
    (index r of ``rater`` is ``names[r]``), validating the rows once."""
    lev = _level(level)
    if isinstance(names, str) or not all(isinstance(x, str) and x for x in names):
        raise InputError("names", "a sequence of non-empty rater names", repr(names)[:60])
    if len(set(names)) != len(names):
        raise InputError("names", "distinct rater names", list(names))
    rows = _rows(root, rater, order, value, trial, len(names))
    return PanelEstimates(
        names=tuple(names),
        rates=_rates(rows, lev),
        position_biases=_biases(rows, lev),
        kappas=_kappas(rows, lev),
        latent=_latent(rows),
        level=lev,
    )


# --------------------------------------------------------------------------------------------
# reader audit
# --------------------------------------------------------------------------------------------


def _label_key(x: Any) -> tuple[str, str]:
    return (type(x).__name__, repr(x))


def reader_audit_from_readings(
    root: Sequence[Hashable],
    reader: Sequence[Hashable],
    category: Sequence[Hashable],
    *,
    categories: Sequence[Hashable] | None = None,
    level: float = 0.95,
) -> KappaResult:
    """Cohen's κ of the reconstruction audit's two readings per root, with its interval.

    Exactly two readings per root, by two different readers; otherwise InputError naming the
    root. Reader A of a root is the one whose id sorts first (module docstring)."""
    lev = _level(level)
    roots = list(np.asarray(root).tolist()) if isinstance(root, np.ndarray) else list(root)
    readers = list(np.asarray(reader).tolist()) if isinstance(reader, np.ndarray) else list(reader)
    cats = (
        list(np.asarray(category).tolist()) if isinstance(category, np.ndarray) else list(category)
    )
    if len(readers) != len(roots):
        raise InputError("reader", f"as many entries as root ({len(roots)})", len(readers))
    if len(cats) != len(roots):
        raise InputError("category", f"as many entries as root ({len(roots)})", len(cats))
    grouped: dict[Hashable, list[tuple[Hashable, Hashable]]] = {}
    try:
        for r, who, c in zip(roots, readers, cats, strict=True):
            grouped.setdefault(r, []).append((who, c))
    except TypeError as err:
        raise InputError("root", "hashable root ids", str(err)) from None
    first: list[Hashable] = []
    second: list[Hashable] = []
    for r, readings in grouped.items():
        if len(readings) != 2:
            raise InputError(
                f"root {r!r}", "exactly two readings (double reading)", f"{len(readings)} readings"
            )
        (wa, ca), (wb, cb) = sorted(readings, key=lambda x: _label_key(x[0]))
        if wa == wb:
            raise InputError(f"root {r!r}", "two readings by two different readers", [wa, wb])
        first.append(ca)
        second.append(cb)
    if len(first) < 2:
        raise InputError("root", "double readings of at least 2 roots", len(first))
    return cohens_kappa(first, second, categories=categories, level=lev)
