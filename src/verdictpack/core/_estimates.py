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
:func:`estimate_panel` validates the rows once and returns every estimate below as the fields of
one :class:`PanelEstimates`.

**The root is the unit.** A judge's judgments on one root (both orders, every trial) share the
root: its text, its difficulty, the judge's reading of it. They are correlated, so intervals
that treat judgments as independent are too narrow by the square root of the design effect
(with 5 correlated trials per order a 95 % binomial interval covered 0.54-0.85 in the seeded
Monte Carlo of tests/core/test_estimates.py). Every interval below is cluster-robust with the
root as the cluster; the design effect is reported beside it.

**Preference rate** (``PanelEstimates.rates``, :func:`clustered_rate`): the mean value
m = Σ_i S_i / N (S_i the sum of the rater's values on root i, N its judgments). Its
cluster-robust (linearised ratio) variance is V = G/(G − 1)·Σ_i (S_i − m·n_i)² / N² over the
G roots (with equal cells per root this is s²/G of the per-root means: the t interval on the
mean of per-root means). The interval is Wilson's score interval on the *effective count*
n_eff = m(1 − m)/V, clamped to [1, N] (a design effect below 1 is not credited), with the
Student t quantile at G − 1 degrees of freedom in place of the normal one (Korn & Graubard's
effective-n interval): it stays inside [0, 1], is never of zero width, and behaves at rates
near 0 or 1 where a plain t interval on per-root means undercovers. Fallbacks, named by
``ci_basis``: every value equal (m ∈ {0, 1}, V = 0): n_eff = G, i.e. full correlation within a
root assumed (``wilson_on_roots_no_variation``); every root's mean equal but m inside (0, 1)
(V = 0): n_eff = N (``wilson_on_judgments_equal_root_means``); a single root: n_eff = 1 with
the normal quantile (``wilson_single_root``). ``design_effect`` = N·V/(m(1 − m)) as estimated
(below 1 allowed); ``effective_n`` the count the interval used.

**Position bias** (``PanelEstimates.position_biases``): δ̂ = (m_first − m_second) / 2, m_first
the mean value when the treatment was shown first (order 0), m_second when it was shown second
(order 1); rows of unknown order do not enter. This is the δ of
:class:`verdictpack.simulate._judges.JudgeSheet` (p ± δ per order). Interval: the MOVER for
correlated estimates (Zou & Donner 2008) built from the two orders' root-clustered Wilson
intervals above (over the G roots with a known order, t quantile at G − 1), with r̂ the
cluster-robust correlation of m_first and m_second (0 when either variance is 0), halved and kept
in [−0.5, 0.5]:

    L = d − √((m₁ − l₁)² + (u₂ − m₂)² − 2r̂(m₁ − l₁)(u₂ − m₂)),
    U = d + √((u₁ − m₁)² + (m₂ − l₂)² − 2r̂(u₁ − m₁)(m₂ − l₂)),  d = m₁ − m₂.

With equal cells it is close to the t interval on the per-root differences; near the ends of
[0, 1] it keeps Wilson's behaviour, and it never has zero width. ``design_effect``: the
cluster-robust variance of d over m₁(1 − m₁)/N₁ + m₂(1 − m₂)/N₂. It is undefined (``None``)
when the rater has no row in one of the two orders.

**Pairwise κ** (``PanelEstimates.kappas``): Cohen's κ
(:func:`verdictpack.core._agreement.cohens_kappa`, categories the values observed among
{0, 0.5, 1, ...}) between two raters over the (root, order, trial) keys both judged, with its
asymptotic interval; ``None`` when fewer than 2 keys are shared or κ is 0/0.

**Latent correlation** (``PanelEstimates.latent``): the Gaussian-copula (tetrachoric) relation of
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
from verdictpack.core import _libm
from verdictpack.core._agreement import KappaResult, _sort_key, cohens_kappa

__all__ = [
    "LatentCorrelation",
    "PairKappa",
    "PairLatent",
    "PanelEstimates",
    "PositionBias",
    "RaterRate",
    "bivariate_normal_cdf",
    "clustered_rate",
    "estimate_panel",
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
# rates: the root is the unit
# --------------------------------------------------------------------------------------------


def _quantile(level: float, roots: int) -> float:
    """The two-sided quantile of the intervals: Student's t with roots − 1 degrees of freedom
    (the normal quantile when there is a single root, with no degrees of freedom to spend)."""
    p = 0.5 + level / 2.0
    if roots >= 2:
        return float(special.stdtrit(roots - 1, p))
    return float(special.ndtri(p))


def _wilson(mean: float, n_eff: float, q: float) -> tuple[float, float]:
    """Wilson's score interval at ``mean`` on ``n_eff`` observations, quantile ``q``; widened to
    hold ``mean`` (against rounding) and kept in [0, 1]."""
    q2n = q * q / n_eff
    centre = (mean + q2n / 2.0) / (1.0 + q2n)
    half = q / (1.0 + q2n) * math.sqrt(max(mean * (1.0 - mean), 0.0) / n_eff + q2n / (4.0 * n_eff))
    return max(0.0, min(centre - half, mean)), min(1.0, max(centre + half, mean))


@dataclass(frozen=True)
class _Cluster:
    """A ratio mean Σ y / Σ n over roots, its cluster-robust (linearised) variance, and the
    effective count of Wilson's interval (module docstring)."""

    mean: float
    n: int
    roots: int
    variance: float  # cluster-robust, G/(G − 1)·Σ_i (S_i − m·n_i)² / N²
    resid: NDArray[np.float64]  # S_i − m·n_i per root (on the roots passed)
    effective_n: float
    design_effect: float | None
    basis: str


def _cluster(
    root: NDArray[np.int64], values: NDArray[np.float64], codes: NDArray[np.int64] | None = None
) -> _Cluster:
    """``values`` grouped by ``root``; ``codes`` (sorted root ids) fixes the roots summed over
    (a root of ``codes`` without a value contributes a zero residual)."""
    if codes is None:
        codes = np.unique(root)
    g = int(codes.size)
    n = int(values.size)
    where = np.searchsorted(codes, root)
    s = np.bincount(where, weights=values, minlength=g)
    c = np.bincount(where, minlength=g).astype(np.float64)
    mean = float(s.sum() / n)
    resid = s - mean * c
    pq = mean * (1.0 - mean)
    g_own = int(np.count_nonzero(c))
    var = g / (g - 1) * _libm.dot(resid, resid) / (n * n) if g >= 2 else math.nan
    deff = var * n / pq if pq > 0.0 and math.isfinite(var) else None
    if g_own < 2:
        n_eff, basis = 1.0, "wilson_single_root"
    elif pq <= 0.0:
        n_eff, basis = float(g_own), "wilson_on_roots_no_variation"
    elif var <= 0.0:
        n_eff, basis = float(n), "wilson_on_judgments_equal_root_means"
    else:
        n_eff, basis = min(max(pq / var, 1.0), float(n)), "wilson_effective_n"
    return _Cluster(mean, n, g_own, var, resid, n_eff, deff, basis)


@dataclass(frozen=True)
class RaterRate:
    """One rater's preference rate: the mean value with an interval that takes the root as the
    unit (Wilson's interval on the effective count, module docstring), the number of roots, the
    design effect (cluster-robust variance over the variance if the judgments were independent;
    ``None`` when undefined) and the effective count the interval used. ``rate`` etc. are
    ``None`` when the rater has no judgment."""

    rater: int
    n: int
    n_ties: int
    rate: float | None
    ci_low: float | None
    ci_high: float | None
    level: float
    ci_basis: str = "wilson_effective_n"
    n_roots: int = 0
    design_effect: float | None = None
    effective_n: float | None = None


def _rate_of(j: int, root: NDArray[np.int64], vals: NDArray[np.float64], level: float) -> RaterRate:
    ties = int(np.count_nonzero((vals > 0.0) & (vals < 1.0)))
    if vals.size == 0:
        return RaterRate(j, 0, 0, None, None, None, level, n_roots=0)
    cl = _cluster(root, vals)
    low, high = _wilson(cl.mean, cl.effective_n, _quantile(level, cl.roots))
    return RaterRate(
        j,
        int(vals.size),
        ties,
        cl.mean,
        low,
        high,
        level,
        cl.basis,
        cl.roots,
        cl.design_effect,
        cl.effective_n,
    )


def _rates(rows: _Rows, level: float) -> tuple[RaterRate, ...]:
    return tuple(
        _rate_of(j, rows.root[rows.by_rater[j]], rows.value[rows.by_rater[j]], level)
        for j in range(rows.n_raters)
    )


def clustered_rate(root: Any, value: Any, *, level: float = 0.95) -> RaterRate:
    """The mean of ``value`` (numbers in [0, 1]) with the rates' root-clustered interval, for
    judgments with no rater/order/trial key (e.g. the humans pooled: several judgments per
    root); reported as rater 0."""
    lev = _level(level)
    r = _int_array("root", root)
    v = np.asarray(value, dtype=np.float64)
    if v.ndim != 1 or v.size != r.size:
        raise InputError("value", f"as many numbers as root ({r.size})", v.shape)
    if np.any(~np.isfinite(v) | (v < 0.0) | (v > 1.0)):
        raise InputError("value", "numbers in [0, 1]", v[:5].tolist())
    return _rate_of(0, r, v, lev)


# --------------------------------------------------------------------------------------------
# position bias
# --------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class PositionBias:
    """δ̂ = (m_first − m_second)/2 with the root-clustered MOVER interval (module docstring);
    ``None`` when the rater lacks one of the two known orders. ``n_roots``: roots with a
    judgment in a known order; ``design_effect``: the cluster-robust variance of δ̂ over its
    variance if the judgments were independent (``None`` when undefined)."""

    rater: int
    n_first: int
    n_second: int
    rate_first: float | None
    rate_second: float | None
    bias: float | None
    ci_low: float | None
    ci_high: float | None
    level: float
    ci_basis: str = "mover_correlated_wilson_effective_n"
    n_roots: int = 0
    design_effect: float | None = None


def _bias_of(
    j: int,
    root: NDArray[np.int64],
    order: NDArray[np.int64],
    vals: NDArray[np.float64],
    level: float,
) -> PositionBias:
    known = order < 2
    codes = np.unique(root[known])
    first_sel, second_sel = order == 0, order == 1
    first, second = vals[first_sel], vals[second_sel]
    if first.size == 0 or second.size == 0:
        return PositionBias(
            j,
            int(first.size),
            int(second.size),
            float(first.mean()) if first.size else None,
            float(second.mean()) if second.size else None,
            None,
            None,
            None,
            level,
            n_roots=int(codes.size),
        )
    a = _cluster(root[first_sel], first, codes)
    b = _cluster(root[second_sel], second, codes)
    g = int(codes.size)
    q = _quantile(level, g)
    l1, u1 = _wilson(a.mean, a.effective_n, q)
    l2, u2 = _wilson(b.mean, b.effective_n, q)
    if g >= 2 and a.variance > 0.0 and b.variance > 0.0:
        cov = g / (g - 1) * _libm.dot(a.resid, b.resid) / (a.n * b.n)
        corr = min(max(cov / math.sqrt(a.variance * b.variance), -1.0), 1.0)
    else:
        cov, corr = 0.0, 0.0
    m1, m2 = a.mean, b.mean
    d = m1 - m2
    dl1, du1, dl2, du2 = m1 - l1, u1 - m1, m2 - l2, u2 - m2
    low = d - math.sqrt(max(dl1 * dl1 + du2 * du2 - 2.0 * corr * dl1 * du2, 0.0))
    high = d + math.sqrt(max(du1 * du1 + dl2 * dl2 - 2.0 * corr * du1 * dl2, 0.0))
    independent = m1 * (1 - m1) / a.n + m2 * (1 - m2) / b.n
    clustered = a.variance + b.variance - 2.0 * cov
    deff = clustered / independent if independent > 0.0 and math.isfinite(clustered) else None
    return PositionBias(
        j,
        a.n,
        b.n,
        m1,
        m2,
        d / 2.0,
        max(low / 2.0, -0.5),
        min(high / 2.0, 0.5),
        level,
        n_roots=g,
        design_effect=deff,
    )


def _biases(rows: _Rows, level: float) -> tuple[PositionBias, ...]:
    out = []
    for j in range(rows.n_raters):
        mine = rows.by_rater[j]
        out.append(_bias_of(j, rows.root[mine], rows.order[mine], rows.value[mine], level))
    return tuple(out)


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
        (wa, ca), (wb, cb) = sorted(readings, key=lambda x: _sort_key(x[0]))
        if wa == wb:
            raise InputError(f"root {r!r}", "two readings by two different readers", [wa, wb])
        first.append(ca)
        second.append(cb)
    if len(first) < 2:
        raise InputError("root", "double readings of at least 2 roots", len(first))
    return cohens_kappa(first, second, categories=categories, level=lev)
