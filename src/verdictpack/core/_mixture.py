"""Mixture e-processes and their confidence sequences: the anytime-valid sequential core.

The h-intervals and the verdicts built on these bounds are in :mod:`verdictpack.core._hinterval`;
the trackers that run the streams of a construct to a verdict are in
:mod:`verdictpack.core._tracker`.

One bounded stream
------------------
Observations X_i ∈ [0, 1]. For a candidate mean m and a fixed bet grid (λ_k, w_k)
(:class:`MixtureSpec`, fixed before data, hence predictable):

* upper process  E⁺_t(m) = Σ_k w_k Π_{i≤t} (1 + λ_k (X_i − m)),
* lower process  E⁻_t(m) = Σ_k w_k Π_{i≤t} (1 − λ_k (X_i − m)).

Under the true conditional mean μ each is a nonnegative martingale starting at 1, so by Ville's
inequality P(∃t: E_t(μ) ≥ 1/a) ≤ a whatever the stopping rule. Everything is computed in log
space (log-sum-exp over k).

The confidence sequence at per-tail level ``a`` is the running intersection, rounded outward:
lower_t = max_{s≤t} inf{m : E⁺_s(m) < 1/a}, upper_t = min_{s≤t} sup{m : E⁻_s(m) < 1/a},
within [0, 1]. E⁺(m) is a positive mixture of products of positive decreasing linear functions of
m, hence convex and decreasing (E⁻ convex and increasing).

Inversion (warm-started, conservative). The start is the previous running bound: if
E_t(previous bound) < 1/a the bound does not move and no search runs at all (the common case).
Otherwise the root lies beyond the start and is found by Newton's method in log space on
h(m) = log E(m) − log(1/a): h is nearly linear in m, so Newton converges in one or two exact
evaluations, where Newton on E itself (convergence constant ≈ |h'|/2, growing with t) needs four
or five. The first step is the root of the second-order Taylor model of h at the start, taken
from the incremental state (no evaluation); each further step follows an exact evaluation from
the counts, until Newton's own error estimate |h''|/(2|h'|)·step² is ≤ 1e-12, i.e. until the
next step would be below the tolerance. The bound is the last iterate moved outward by 1e-12 plus
twice that error estimate (a log-space step may overshoot by about the estimate) and intersected
with the previous bound. Rows that do not settle within 6 evaluations fall back to
Newton on E(m) − 1/a itself from the conservative side (which, by convexity, never overshoots:
every iterate stays conservative), safeguarded, with bisection on the bracket when its
iteration cap is hit. The tests check every path against a naive reference (products over the
whole history, grid scan then bisection): equal to 1e-9 and never narrower than it.

Cost: counts are kept per observed value, so
log E_t(m) = LSE_k(log w_k + Σ_v n_v log(1 + λ_k(v − m))) costs O(K·V) for any m, independent
of t. The state at the running bounds — log-wealth W_k and its first two m-derivatives — is kept
incrementally (O(K) per observation), so the "bound does not move" step costs O(K) and a search
costs one or two O(K·V) evaluations. The scalar classes hold that state in Python lists and
evaluate with :mod:`math` (numpy's per-call overhead exceeds the arithmetic of a few bets and
distinct values). The batch classes run every stream of a tracker in one compiled engine
(:class:`_Bank` over the C extension :mod:`verdictpack.core._kernel`): one state row per replicate,
advanced replicate by replicate with the scalar classes' algorithm; the move test is kept in
linear space (Σ_k P_k ≥ 1: one multiply per bet and observation, no log or exp; the exact
log-wealth is folded in periodically) and the exact evaluations take their logs from a
branch-free, vectorised log (within 1 ulp of the C library's, identical on every machine). The
numbers are those of the scalar classes (to rounding); a replicate's numbers never depend on
which replicates share the array, the call or the thread. ``BatchHTracker.run`` runs whole
replicates to their verdicts in one call (no Python per root).

The interface (confseq style)
-----------------------------
:class:`ConfidenceSequence` is the protocol every construction implements:

* ``alpha`` — the per-tail level a (each end errs with probability ≤ a, time-uniformly);
* ``t`` — observations so far;
* ``update(x)`` / ``extend(xs)`` — feed one / several observations in order;
* ``lower`` / ``upper`` — the current running bounds;
* ``log_e_upper(m)`` / ``log_e_lower(m)`` — current log E⁺_t(m) / log E⁻_t(m) at a candidate mean.

:class:`MixtureCS` implements it for arbitrary values in [0, 1]; the vectorised twin over R
replicates whose observations take values on a fixed ``support``,
:class:`~verdictpack.core._mixture_batch.BatchMixtureCS`, gives the same bounds on the same data.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any, Literal, Protocol, runtime_checkable

import numpy as np
from numpy.typing import NDArray

from verdictpack._errors import InputError
from verdictpack._validate import closed_unit, int_at_least, is_finite_real, open_interval
from verdictpack.core import _libm
from verdictpack.core._scales import _clip01

__all__ = [
    "MAX_BETS",
    "ConfidenceSequence",
    "MixtureCS",
    "MixtureSpec",
]

FloatArray = NDArray[np.float64]
BoolArray = NDArray[np.bool_]
IntArray = NDArray[np.intp]

#: most bets a mixture may hold (the compiled kernel's fixed per-bet scratch)
MAX_BETS = 64

# Numerical policy of the inversion (module constants so that tests can exercise the fallback).
_NEWTON_TOL = 1e-12  # stop when |Newton step| < this
_NEWTON_MAX_ITER = 60  # then bisection on the bracket
_BISECT_ITER = 200  # bisection stops earlier once the bracket no longer shrinks
_OUTWARD = 1e-12  # outward margin applied to every moved bound
_FAST_ERR = 1e-12  # log-space Newton stops once its error estimate is below this
_FAST_ITER = 6  # then the safeguarded E-space Newton takes over
_REGION_TOL = 1e-12  # tolerance of the region tests in hybrid_h_interval (conservative side)
_PY_MAX_VALUES = 24  # scalar streams evaluate in pure Python up to this many distinct values
_REBASE_EVERY = 32  # batch: fold the pending products into the log-wealth this often (steps)
_THREAD_ROWS = 32  # batch: replicates per block at least when runs are spread over threads
_LOG_FLOOR = -600.0  # batch: log of the smallest bet term kept in linear space (relative to c)

# Sides of a stream: 0 = upper process E⁺ (gives the lower bound), 1 = lower process E⁻.
_SIGNS = np.array([1.0, -1.0])

Construction = Literal["corners", "hybrid"]

# --------------------------------------------------------------------------------------------
# Validation helpers
# --------------------------------------------------------------------------------------------


def _check_alpha(value: Any, name: str = "alpha") -> float:
    allowed = "a per-tail level strictly between 0 and 0.5"
    return open_interval(name, value, 0.0, 0.5, allowed)


def _check_mean(value: Any, name: str) -> float:
    allowed = "a candidate mean in [0, 1]"
    return closed_unit(name, value, allowed)


def _check_observation(value: Any, name: str) -> float:
    allowed = "a finite observation in [0, 1]"
    return closed_unit(name, value, allowed) + 0.0  # normalise -0.0


def _check_threshold(value: Any) -> float:
    allowed = "a practical threshold on the h scale, strictly between 0 and π"
    return open_interval("threshold", value, 0.0, math.pi, allowed)


def _check_replicates(value: Any) -> int:
    return int_at_least("n_replicates", value, 1)


def _check_support(value: Any, name: str) -> FloatArray:
    allowed = "a non-empty, strictly increasing 1-D array of finite values in [0, 1]"
    try:
        arr = np.asarray(value, dtype=np.float64)
    except (TypeError, ValueError):
        raise InputError(name, allowed, value) from None
    if (
        arr.ndim != 1
        or arr.size == 0
        or not np.all(np.isfinite(arr))
        or np.any(arr < 0.0)
        or np.any(arr > 1.0)
        or np.any(np.diff(arr) <= 0.0)
    ):
        raise InputError(name, allowed, np.asarray(value).tolist())
    return arr + 0.0


def _check_construction(value: Any) -> Construction:
    if value == "corners":
        return "corners"
    if value == "hybrid":
        return "hybrid"
    raise InputError("construction", '"corners" or "hybrid"', value)


# --------------------------------------------------------------------------------------------
# The bet grid
# --------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class MixtureSpec:
    """The fixed bet grid of the mixture e-process: λ_k ∈ (0, 1) with weights w_k (sum 1).

    ``weights=None`` means equal weights (stored resolved, so ``weights`` is always a tuple after
    construction). Every λ < 1 keeps every factor 1 ± λ(x − m) ≥ 1 − λ > 0 for x, m ∈ [0, 1].
    """

    lambdas: tuple[float, ...] = (0.05, 0.10, 0.20, 0.40, 0.80)
    weights: tuple[float, ...] | None = None

    def __post_init__(self) -> None:
        lam_allowed = f"1 to {MAX_BETS} bets λ, each strictly between 0 and 1"
        try:
            lam = tuple(self.lambdas)
        except TypeError:
            raise InputError("lambdas", lam_allowed, self.lambdas) from None
        if (
            not lam
            or len(lam) > MAX_BETS
            or not all(is_finite_real(v) and 0.0 < float(v) < 1.0 for v in lam)
        ):
            raise InputError("lambdas", lam_allowed, list(lam))
        lam_f = tuple(float(v) for v in lam)
        if self.weights is None:
            w_f = tuple(1.0 / len(lam_f) for _ in lam_f)
        else:
            w_allowed = f"{len(lam_f)} positive weights (one per λ) summing to 1 (to 1e-12)"
            try:
                w = tuple(self.weights)
            except TypeError:
                raise InputError("weights", w_allowed, self.weights) from None
            if (
                len(w) != len(lam_f)
                or not all(is_finite_real(v) and float(v) > 0 for v in w)
                or abs(math.fsum(float(v) for v in w) - 1.0) > 1e-12
            ):
                raise InputError("weights", w_allowed, list(w))
            w_f = tuple(float(v) for v in w)
        object.__setattr__(self, "lambdas", lam_f)
        object.__setattr__(self, "weights", w_f)

    @property
    def lambda_array(self) -> FloatArray:
        return np.array(self.lambdas, dtype=np.float64)

    @property
    def log_weights(self) -> FloatArray:
        weights = self.weights if self.weights is not None else ()
        return _libm.log(np.array(weights, dtype=np.float64))


def _resolve_spec(spec: MixtureSpec | None) -> MixtureSpec:
    if spec is None:
        return MixtureSpec()
    if not isinstance(spec, MixtureSpec):
        raise InputError("spec", "a MixtureSpec (or None for the default grid)", repr(spec))
    return spec


# --------------------------------------------------------------------------------------------
# numpy kernels: the scalar classes' fallbacks and the batch classes' e-values
# --------------------------------------------------------------------------------------------


def _state_at(values: FloatArray, counts: FloatArray, m: FloatArray, slam: FloatArray) -> Any:
    """Exact state at m for each row from the counts: (W, G, C) = Σ_v n_v (log u, q, q²) with
    u = 1 + s·λ_k (v − m) and q = s·λ_k / u, stacked as a (3, K, Rm) array.

    ``values`` (V,), ``counts`` (V, Rm), ``m`` (Rm,), ``slam`` (K, Rm). Layout: the row axis
    last, so that every reduction runs over a leading axis (fast in numpy).
    """
    out = np.empty((3, slam.shape[0], m.size))
    sl = slam[:, None, :]
    u = sl * (values[:, None] - m[None, :])[None, :, :]
    u += 1.0
    np.einsum("kvr,vr->kr", _libm.log(u), counts, out=out[0])
    q = np.divide(sl, u, out=u)
    np.einsum("kvr,vr->kr", q, counts, out=out[1])
    q *= q
    np.einsum("kvr,vr->kr", q, counts, out=out[2])
    return out


def _log_e_rows(
    values: FloatArray, counts: FloatArray, m: FloatArray, slam: FloatArray, logw: FloatArray
) -> FloatArray:
    """log E at m for each row (log-sum-exp over the bets), shape (Rm,)."""
    u = 1.0 + slam[:, None, :] * (values[:, None] - m[None, :])[None, :, :]
    a = np.einsum("kvr,vr->kr", _libm.log(u), counts) + logw[:, None]
    mx = a.max(axis=0)
    return np.asarray(mx + _libm.log(_libm.exp(a - mx).sum(axis=0)), dtype=np.float64)


def _log_e_derivs(state: Any, logw: FloatArray) -> tuple[FloatArray, FloatArray, FloatArray]:
    """log E, d log E/dm and d² log E/dm² from the per-bet state (W, G, C); each (Rm,)."""
    w, g, c = state[0], state[1], state[2]
    a = w + logw[:, None]
    mx = a.max(axis=0)
    a -= mx
    e = _libm.exp(a, out=a)
    z = e.sum(axis=0)
    d1 = np.einsum("kr,kr->r", e, g)
    d1 /= -z
    c = g * g - c
    d2 = np.einsum("kr,kr->r", e, c)
    d2 /= z
    d2 -= d1 * d1
    return mx + _libm.log(z), d1, d2


def _advance_newton(
    values: FloatArray,
    counts: FloatArray,
    start: FloatArray,
    slam: FloatArray,
    logw: FloatArray,
    logc: float,
) -> FloatArray:
    """Exact safeguarded Newton from the start (fallback of the fast search); new bounds.

    Call an iterate *inside* when E(m) ≥ c (the conservative side of the root) and *outside*
    otherwise. By convexity the tangent of E lies below E, so the E-space Newton step
    m − (E − c)/E' = m + expm1(log c − log E)/(d log E/dm) lands inside from ANY point and, from
    an inside point, never overshoots (docs/statistics.md §5). From an inside iterate we take the
    log-space step (log c − log E)/(d log E/dm), much faster; if it lands outside, the E-space
    step from there lands back inside. Converged when an iterate's E-space step is below
    ``_NEWTON_TOL`` (the returned point is that step's image: inside by convexity). If an outside
    step makes no progress the row switches to pure E-space Newton from its best inside point;
    rows that hit the cap finish by bisection on their bracket. If E(start) < c on exact
    recomputation, the bound stays. The new bound is the running intersection of ``start`` with
    the result moved outward by ``_OUTWARD``.
    """
    sgn = np.sign(slam[0])
    n_rows = start.size
    inside = start.copy()  # best iterate known to satisfy E ≥ c
    outside = np.where(sgn > 0, 1.0, 0.0)  # nearest point known to satisfy E < c
    m = start.copy()
    final = start.copy()
    safe = np.zeros(n_rows, dtype=np.bool_)
    work = np.arange(n_rows)
    for _ in range(_NEWTON_MAX_ITER):
        if work.size == 0:
            break
        mw = m[work]
        s = sgn[work]
        loge, dloge, _ = _log_e_derivs(_state_at(values, counts[:, work], mw, slam[:, work]), logw)
        ins = loge >= logc
        u = logc - loge
        e_step = _libm.expm1(u) / dloge
        best = np.where(ins, mw, inside[work])
        inside[work] = best
        outside[work] = np.where(ins, outside[work], mw)
        conv = np.abs(e_step) < _NEWTON_TOL
        final[work] = np.where(conv, mw + e_step, final[work])
        at_start = ~ins & (mw == best)  # E(start) < c on recomputation: the bound stays
        done = conv | at_start
        step = np.where(safe[work], e_step, u / dloge)
        step = np.maximum(step * s, 0.0) * s
        nxt_out = mw + e_step
        stall = ~ins & ((nxt_out - best) * s <= 0.0)
        safe[work[stall]] = True
        nxt = np.where(ins, mw + step, np.where(stall, best, nxt_out))
        m[work] = np.clip(nxt, 0.0, 1.0)
        work = work[~done]
    if work.size:
        final[work] = _bisect(
            values, counts[:, work], inside[work], outside[work], slam[:, work], logw, logc
        )
    bound = start + sgn * np.maximum(sgn * (final - start) - _OUTWARD, 0.0)
    return np.asarray(np.clip(bound, 0.0, 1.0), dtype=np.float64)


def _bisect(
    values: FloatArray,
    counts: FloatArray,
    inside: FloatArray,
    outside: FloatArray,
    slam: FloatArray,
    logw: FloatArray,
    logc: float,
) -> FloatArray:
    """Bisection fallback on [inside, outside]: E(inside) ≥ c > E(outside) (the far edge has
    E ≤ 1 < c). Returns the conservative end (E ≥ c)."""
    inside = inside.copy()
    outside = outside.copy()
    for _ in range(_BISECT_ITER):
        mid = 0.5 * (inside + outside)
        if np.all((mid == inside) | (mid == outside)):
            break
        hit = _log_e_rows(values, counts, mid, slam, logw) >= logc
        inside = np.where(hit, mid, inside)
        outside = np.where(hit, outside, mid)
    return inside


# --------------------------------------------------------------------------------------------
# Scalar kernels (pure Python: a handful of bets and distinct values cost less than numpy calls)
# --------------------------------------------------------------------------------------------


def _derivs_py(
    w: Sequence[float], g: Sequence[float], c: Sequence[float], logw: Sequence[float]
) -> tuple[float, float, float]:
    """:func:`_log_e_derivs` for one row held in Python lists."""
    a = [wk + lw for wk, lw in zip(w, logw, strict=True)]
    mx = max(a)
    e = [math.exp(ak - mx) for ak in a]
    z = sum(e)
    s1 = 0.0
    s2 = 0.0
    for ek, gk, ck in zip(e, g, c, strict=True):
        s1 += ek * gk
        s2 += ek * (gk * gk - ck)
    d1 = -s1 / z
    return mx + math.log(z), d1, s2 / z - d1 * d1


def _taylor_start_py(h: float, d1: float, d2: float) -> float:
    """Root of the second-order Taylor model h + d1·s + d2·s²/2 nearest 0 (Newton's step where
    the quadratic has no real root)."""
    disc = d1 * d1 - 2.0 * d2 * h
    if d1 == 0.0:
        return 0.0
    if disc >= 0.0:
        den = d1 + math.copysign(math.sqrt(disc), d1)
        if den != 0.0:
            quad = -2.0 * h / den
            if math.isfinite(quad):
                return quad
    return -h / d1


# --------------------------------------------------------------------------------------------
# The interface and the scalar construction
# --------------------------------------------------------------------------------------------


@runtime_checkable
class ConfidenceSequence(Protocol):
    """A time-uniform confidence sequence for the mean of a bounded stream (see module doc)."""

    @property
    def alpha(self) -> float: ...

    @property
    def t(self) -> int: ...

    def update(self, x: float) -> None: ...

    def extend(self, xs: Iterable[float]) -> None: ...

    @property
    def lower(self) -> float: ...

    @property
    def upper(self) -> float: ...

    def log_e_upper(self, m: float) -> float: ...

    def log_e_lower(self, m: float) -> float: ...


class MixtureCS:
    """Scalar mixture confidence sequence for one stream of values in [0, 1].

    Counts are kept per distinct observed value (a dict keyed by value), so any value in [0, 1]
    is accepted; evaluation costs O(K·V) with V the number of distinct values seen. The state
    is held in Python lists and evaluated with :mod:`math` (a few bets and distinct values cost
    less than numpy's per-call overhead); exact evaluations switch to numpy beyond
    ``_PY_MAX_VALUES`` distinct values.
    """

    def __init__(self, alpha: float, spec: MixtureSpec | None = None) -> None:
        self._alpha = _check_alpha(alpha)
        self._spec = _resolve_spec(spec)
        lam = self._spec.lambdas
        self._logw_arr = self._spec.log_weights
        self._logw = tuple(float(v) for v in self._logw_arr)
        self._logc = -math.log(self._alpha)
        self._lc = tuple(lw - self._logc for lw in self._logw)  # log(w_k / c)
        self._slams = (tuple(lam), tuple(-v for v in lam))  # signed bets: side 0 E⁺, side 1 E⁻
        self._index: dict[float, int] = {}
        self._vals: list[float] = []
        self._cnts: list[float] = []
        self._t = 0
        self._b = [0.0, 1.0]  # running lower, upper
        # state at the running bounds, per side and bet: log-wealth W, G = −dW/dm, C = −d²W/dm²
        k = len(lam)
        self._w = [[0.0] * k, [0.0] * k]
        self._g = [[0.0] * k, [0.0] * k]
        self._c = [[0.0] * k, [0.0] * k]
        self._moved = False

    # -- properties ------------------------------------------------------------------------
    @property
    def alpha(self) -> float:
        return self._alpha

    @property
    def spec(self) -> MixtureSpec:
        return self._spec

    @property
    def t(self) -> int:
        return self._t

    @property
    def lower(self) -> float:
        return self._b[0]

    @property
    def upper(self) -> float:
        return self._b[1]

    @property
    def empty(self) -> bool:
        """True once the running intersection has crossed (only on a miscovering path)."""
        return self._b[0] > self._b[1]

    @property
    def counts(self) -> dict[float, int]:
        """Observations per distinct value."""
        return {v: int(self._cnts[j]) for v, j in self._index.items()}

    # -- updates ---------------------------------------------------------------------------
    def update(self, x: float) -> None:
        """Add one observation in [0, 1] (InputError naming its index otherwise)."""
        self._add(_check_observation(x, f"observation {self._t}"))

    def extend(self, xs: Iterable[float]) -> None:
        """Add observations in order; all are validated before any is added."""
        checked = [
            _check_observation(x, f"xs[{j}] (observation {self._t + j})") for j, x in enumerate(xs)
        ]
        for x in checked:
            self._add(x)

    def _add(self, x: float) -> None:
        j = self._index.get(x)
        if j is None:
            self._index[x] = len(self._vals)
            self._vals.append(x)
            self._cnts.append(1.0)
        else:
            self._cnts[j] += 1.0
        self._t += 1
        log, exp = math.log, math.exp
        lc = self._lc
        moved = False
        for side in (0, 1):
            d = x - self._b[side]
            w, g, c = self._w[side], self._g[side], self._c[side]
            tot = 0.0
            for k, sl in enumerate(self._slams[side]):
                u = 1.0 + sl * d
                q = sl / u
                wk = w[k] + log(u)
                w[k] = wk
                g[k] += q
                c[k] += q * q
                tot += exp(wk + lc[k])
            if tot >= 1.0:
                moved = True
                self._search(side)
        self._moved = moved

    def _search(self, side: int) -> None:
        """Move the bound of one side (the fast path of :meth:`_Bank._search`, one row)."""
        sg = 1.0 if side == 0 else -1.0
        slams = self._slams[side]
        logw, logc = self._logw, self._logc
        start = self._b[side]
        loge, d1, d2 = _derivs_py(self._w[side], self._g[side], self._c[side], logw)
        m = _clip01(start + _taylor_start_py(loge - logc, d1, d2))
        for _ in range(_FAST_ITER):
            w, g, c = self._eval(m, slams)
            loge, d1, d2 = _derivs_py(w, g, c, logw)
            if d1 == 0.0 or not math.isfinite(d1):
                break
            step = (logc - loge) / d1
            err = 0.5 * abs(d2 / d1) * step * step
            nxt = m + step
            if err <= _FAST_ERR:
                bound = _clip01(start + sg * max(sg * (nxt - start) - _OUTWARD - 2.0 * err, 0.0))
                delta = bound - m
                self._b[side] = bound
                self._w[side] = [wk - gk * delta for wk, gk in zip(w, g, strict=True)]
                self._g[side] = [gk + ck * delta for gk, ck in zip(g, c, strict=True)]
                self._c[side] = c
                return
            m = _clip01(nxt)
        # not settled: the exact safeguarded Newton on E(m) − 1/a (docs/statistics.md §5)
        nv = len(self._vals)
        values = np.array(self._vals)
        counts = np.array(self._cnts).reshape(nv, 1)
        slam = np.array(slams).reshape(-1, 1)
        b2 = _advance_newton(values, counts, np.array([start]), slam, self._logw_arr, logc)
        state = _state_at(values, counts, b2, slam)
        self._b[side] = float(b2[0])
        self._w[side] = state[0, :, 0].tolist()
        self._g[side] = state[1, :, 0].tolist()
        self._c[side] = state[2, :, 0].tolist()

    def _eval(
        self, m: float, slams: Sequence[float]
    ) -> tuple[list[float], list[float], list[float]]:
        """Exact (W, G, C) at m from the counts, one entry per bet."""
        if len(self._vals) > _PY_MAX_VALUES:
            nv = len(self._vals)
            state = _state_at(
                np.array(self._vals),
                np.array(self._cnts).reshape(nv, 1),
                np.array([m]),
                np.array(slams).reshape(-1, 1),
            )
            return state[0, :, 0].tolist(), state[1, :, 0].tolist(), state[2, :, 0].tolist()
        log = math.log
        pairs = [(v - m, n) for v, n in zip(self._vals, self._cnts, strict=True)]
        ws: list[float] = []
        gs: list[float] = []
        cs: list[float] = []
        for sl in slams:
            w = g = c = 0.0
            for dv, n in pairs:
                u = 1.0 + sl * dv
                q = sl / u
                w += n * log(u)
                nq = n * q
                g += nq
                c += nq * q
            ws.append(w)
            gs.append(g)
            cs.append(c)
        return ws, gs, cs

    # -- e-values --------------------------------------------------------------------------
    def _log_e(self, m: float, side: int) -> float:
        if len(self._vals) > _PY_MAX_VALUES:
            nv = len(self._vals)
            out = _log_e_rows(
                np.array(self._vals),
                np.array(self._cnts).reshape(nv, 1),
                np.array([m]),
                np.array(self._slams[side]).reshape(-1, 1),
                self._logw_arr,
            )
            return float(out[0])
        log = math.log
        pairs = [(v - m, n) for v, n in zip(self._vals, self._cnts, strict=True)]
        a = []
        for sl, lw in zip(self._slams[side], self._logw, strict=True):
            w = 0.0
            for dv, n in pairs:
                w += n * log(1.0 + sl * dv)
            a.append(w + lw)
        mx = max(a)
        return mx + math.log(sum(math.exp(ak - mx) for ak in a))

    def log_e_upper(self, m: float) -> float:
        """log E⁺_t(m): evidence that the mean is above m."""
        return self._log_e(_check_mean(m, "m"), 0)

    def log_e_lower(self, m: float) -> float:
        """log E⁻_t(m): evidence that the mean is below m."""
        return self._log_e(_check_mean(m, "m"), 1)
