"""The anytime-valid sequential core: mixture e-processes, confidence sequences, h-intervals.

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
with the previous bound. Rows that do not settle within 6 evaluations fall back to the brief's
method, Newton on E(m) − 1/a from the conservative side (which, by convexity, never overshoots:
every iterate stays conservative), safeguarded, with bisection on the bracket when its
iteration cap is hit. The tests check every path against a naive reference (products over the
whole history, grid scan then bisection): equal to 1e-9 and never narrower than it.

Cost: counts are kept per observed value, so
log E_t(m) = LSE_k(log w_k + Σ_v n_v log(1 + λ_k(v − m))) costs O(K·V) for any m, independent
of t. The state at the running bounds — log-wealth W_k and its first two m-derivatives — is kept
incrementally (O(K) per observation), so the "bound does not move" step costs O(K) and a search
costs one or two O(K·V) evaluations.

The interface (confseq style)
-----------------------------
:class:`ConfidenceSequence` is the protocol every construction implements:

* ``alpha`` — the per-tail level a (each end errs with probability ≤ a, time-uniformly);
* ``t`` — observations so far;
* ``update(x)`` / ``extend(xs)`` — feed one / several observations in order;
* ``lower`` / ``upper`` — the current running bounds;
* ``log_e_upper(m)`` / ``log_e_lower(m)`` — current log E⁺_t(m) / log E⁻_t(m) at a candidate mean.

:class:`MixtureCS` implements it for arbitrary values in [0, 1]. :class:`BatchMixtureCS` is the
vectorised twin over R replicates whose observations take values on a fixed ``support``; it gives
the same bounds as :class:`MixtureCS` on the same data.

The h-interval
--------------
φ(p) = 2·asin(√p) and h = φ(μ_M) − φ(μ_H).

* Corners (:func:`corners_h_interval`): h_lo = φ(l_M) − φ(u_H), h_hi = φ(u_M) − φ(l_H), each
  stream at per-tail a. The lower end is wrong only if l_M or u_H fails: ≤ 2a per side, 4a jointly.
* Hybrid (:func:`hybrid_h_interval`): a third confidence sequence on D_i = M_i − H_i ∈ [−1, 1]
  (a [0, 1] CS on (D_i + 1)/2, mapped back), fed by complete pairs only. Region
  P = {x ∈ [l_M, u_M], y ∈ [l_H, u_H], x − y ∈ [l_D, u_D]}; h_lo = min_P φ(x) − φ(y), h_hi = max.

  Where the extremes lie. ∇(φ(x) − φ(y)) = (φ'(x), −φ'(y)) never vanishes, so the extremes are on
  the boundary. Along a box edge f is monotone, so only vertices count. Along a diagonal edge
  x − y = d, g(y) = φ(y + d) − φ(y) has g' = φ'(y + d) − φ'(y); φ'(p) = 1/√(p(1 − p)) is
  symmetric about ½ and strictly monotone on each half, so g' = 0 only at y* = (1 − d)/2 (x* =
  (1 + d)/2). For d > 0, g' → −∞ at the left end and +∞ at the right end: y* is the edge minimum
  (value 2·asin(d), the exact reduction min{φ(x) − φ(y): x − y ≥ d} = 2·asin(d)). For d < 0 the
  signs flip and y* is the edge maximum; for d = 0, g ≡ 0. Moreover f increases in x and
  decreases in y, so the box corner (l_M, u_H) minimises f over the box, and when it violates
  x − y ≥ l_D the minimiser over P lies on the edge x − y = l_D. :func:`hybrid_h_interval` thus
  evaluates, for h_lo, that corner or the edge's two ends and y = clamp((1 − d)/2) (exact either
  way), and symmetrically for h_hi with the corner (u_M, l_H) and the edge x − y = u_D. The tests
  compare it with a brute-force optimisation and with an enumeration of all polygon vertices.

  Error accounting (why the default split is not a/2 for M and H). h_lo > h_true can happen
  when any of FIVE tails fails: l_M, u_H, l_D — and also u_M or l_H, because the box's upper ends
  push the diagonal edge's minimiser. Example: μ = (0.9, 0.5), h = 0.927; M ∈ [0.30, 0.37]
  (u_M fails), H ∈ [0, 0.6], D ∈ [0.35, 0.45] (both cover) gives h_lo = 1.024 > h. (u_D failing
  alone cannot raise h_lo: the segment from (l_M, u_H) to μ crosses the strip with f ≤ h.) So
  the provable per-side error is 4·a_MH + a_D. The default split a_MH = a/4, a_D = a makes it
  exactly 2a, the corners' per-side error (joint: 3a). ``hybrid_alphas=(a/2, a)`` gives the
  split M, H at a/2 per tail, D at a — per-side error 3a, reported as such by
  ``error_per_side``.

Empty region. Each stream CS is a running intersection and can only cross (lower > upper) on a
miscovering path; the hybrid polygon is nested in t and can become empty likewise. Our choice: the
h-interval is frozen at its last non-empty value, ``region_empty`` is set (it never clears), and
the verdict keeps being evaluated on the frozen interval (it cannot newly become
EFFECT_SUPPORTED, NO_POSITIVE_EFFECT or BELOW after the freeze; at the cap it becomes
INCONCLUSIVE). Any decision on such a path is already charged to the miscoverage probability.

Verdicts
--------
:func:`classify` precedence, first match wins:

1. INSTRUMENT_INVALID — the instrument audit failed; no preference claim is evaluated;
2. EFFECT_SUPPORTED — h_lo ≥ threshold;
3. NO_POSITIVE_EFFECT — h_hi ≤ 0 (for the hybrid this is implied by u_D ≤ 0);
4. BELOW_PRACTICAL_THRESHOLD — h_hi < threshold;
5. INCONCLUSIVE — the cap is reached;
6. ``None`` — CONTINUE (keep sampling).

:func:`classify_codes` is the vectorised variant (int8 codes, see ``VERDICT_CODES``).
"""

from __future__ import annotations

import enum
import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any, Literal, Protocol, runtime_checkable

import numpy as np
from numpy.typing import ArrayLike, NDArray

from verdictpack._errors import InputError
from verdictpack._stats import phi

__all__ = [
    "CONTINUE_CODE",
    "VERDICT_CODES",
    "BatchHTracker",
    "BatchMixtureCS",
    "ConfidenceSequence",
    "HTracker",
    "MixtureCS",
    "MixtureSpec",
    "Verdict",
    "classify",
    "classify_codes",
    "corners_h_interval",
    "hybrid_h_interval",
]

FloatArray = NDArray[np.float64]
BoolArray = NDArray[np.bool_]
IntArray = NDArray[np.intp]

# Numerical policy of the inversion (module constants so that tests can exercise the fallback).
_NEWTON_TOL = 1e-12  # stop when |Newton step| < this
_NEWTON_MAX_ITER = 60  # then bisection on the bracket
_BISECT_ITER = 200  # bisection stops earlier once the bracket no longer shrinks
_OUTWARD = 1e-12  # outward margin applied to every moved bound
_FAST_ERR = 1e-12  # log-space Newton stops once its error estimate is below this
_FAST_ITER = 6  # then the safeguarded E-space Newton takes over
_BLOCK_ELEMENTS = 32768  # (K, V, rows) temporaries per block in exact evaluations
_REGION_TOL = 1e-12  # tolerance of the region tests in hybrid_h_interval (conservative side)

# Sides of a stream: 0 = upper process E⁺ (gives the lower bound), 1 = lower process E⁻.
_SIGNS = np.array([1.0, -1.0])

Construction = Literal["corners", "hybrid"]


# --------------------------------------------------------------------------------------------
# Validation helpers
# --------------------------------------------------------------------------------------------


def _is_real(value: Any) -> bool:
    return isinstance(value, (int, float, np.integer, np.floating)) and not isinstance(
        value, (bool, np.bool_)
    )


def _check_alpha(value: Any, name: str = "alpha") -> float:
    allowed = "a per-tail level strictly between 0 and 0.5"
    if not _is_real(value) or not math.isfinite(float(value)) or not 0.0 < float(value) < 0.5:
        raise InputError(name, allowed, value)
    return float(value)


def _check_mean(value: Any, name: str) -> float:
    allowed = "a candidate mean in [0, 1]"
    if not _is_real(value) or not math.isfinite(float(value)) or not 0.0 <= float(value) <= 1.0:
        raise InputError(name, allowed, value)
    return float(value)


def _check_observation(value: Any, name: str) -> float:
    allowed = "a finite observation in [0, 1]"
    if not _is_real(value):
        raise InputError(name, allowed, value)
    x = float(value)
    if not (math.isfinite(x) and 0.0 <= x <= 1.0):
        raise InputError(name, allowed, value)
    return x + 0.0  # normalise -0.0


def _check_threshold(value: Any) -> float:
    allowed = "a practical threshold on the h scale, strictly between 0 and π"
    if not _is_real(value) or not math.isfinite(float(value)) or not 0.0 < float(value) < math.pi:
        raise InputError("threshold", allowed, value)
    return float(value)


def _check_replicates(value: Any) -> int:
    if not isinstance(value, (int, np.integer)) or isinstance(value, (bool, np.bool_)):
        raise InputError("n_replicates", "an integer >= 1", value)
    if int(value) < 1:
        raise InputError("n_replicates", "an integer >= 1", value)
    return int(value)


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
        lam_allowed = "a non-empty sequence of bets λ, each strictly between 0 and 1"
        try:
            lam = tuple(self.lambdas)
        except TypeError:
            raise InputError("lambdas", lam_allowed, self.lambdas) from None
        if not lam or not all(_is_real(v) and 0.0 < float(v) < 1.0 for v in lam):
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
                or not all(_is_real(v) and math.isfinite(float(v)) and float(v) > 0 for v in w)
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
        return np.log(np.array(weights, dtype=np.float64))


def _resolve_spec(spec: MixtureSpec | None) -> MixtureSpec:
    if spec is None:
        return MixtureSpec()
    if not isinstance(spec, MixtureSpec):
        raise InputError("spec", "a MixtureSpec (or None for the default grid)", repr(spec))
    return spec


# --------------------------------------------------------------------------------------------
# Kernels shared by the scalar and the batch constructions
# --------------------------------------------------------------------------------------------


def _observe(dx: Any, slam: Any, state: Any) -> None:
    """Add one observation to the state at the running bounds, in place.

    ``dx`` = x − b broadcast against ``slam`` (signed bets s·λ_k). With u = 1 + s·λ_k (x − b)
    and q = s·λ_k / u: log-wealth W += log u, G += q, C += q², so that at the bound
    L_k = W_k, dL_k/dm = −G_k and d²L_k/dm² = −C_k; ``state`` stacks (W, G, C) on axis 0.
    Shared by the scalar and batch classes.
    """
    u = dx * slam
    u += 1.0
    q = np.divide(slam, u)
    np.log(u, out=u)
    state[0] += u
    state[1] += q
    q *= q
    state[2] += q


def _state_at(values: FloatArray, counts: FloatArray, m: FloatArray, slam: FloatArray) -> Any:
    """Exact state at m for each row from the counts: (W, G, C) = Σ_v n_v (log u, q, q²),
    stacked as a (3, K, Rm) array.

    ``values`` (V,), ``counts`` (V, Rm), ``m`` (Rm,), ``slam`` (K, Rm). Layout: the row axis
    last, so that every reduction runs over a leading axis (fast in numpy). Rows are processed
    in blocks whose (K, V, rows) temporaries stay in cache (the work is memory-bound).
    """
    k, rows = slam.shape
    out = np.empty((3, k, rows))
    block = max(64, _BLOCK_ELEMENTS // (k * values.size))
    for i in range(0, rows, block):
        j = min(i + block, rows)
        _state_block(values, counts[:, i:j], m[i:j], slam[:, i:j], out[:, :, i:j])
    return out


def _state_block(
    values: FloatArray, counts: FloatArray, m: FloatArray, slam: FloatArray, out: Any
) -> None:
    u = slam[:, None, :] * (values[:, None] - m[None, :])[None, :, :]
    u += 1.0
    r = 1.0 / u
    np.einsum("kvr,vr->kr", np.log(u, out=u), counts, out=out[0])
    np.einsum("kvr,vr->kr", r, counts, out=out[1])
    out[1] *= slam
    r *= r
    np.einsum("kvr,vr->kr", r, counts, out=out[2])
    out[2] *= slam * slam


def _log_e_rows(
    values: FloatArray, counts: FloatArray, m: FloatArray, slam: FloatArray, logw: FloatArray
) -> FloatArray:
    """log E at m for each row (log-sum-exp over the bets), shape (Rm,)."""
    u = 1.0 + slam[:, None, :] * (values[:, None] - m[None, :])[None, :, :]
    a = np.einsum("kvr,vr->kr", np.log(u), counts) + logw[:, None]
    mx = a.max(axis=0)
    return np.asarray(mx + np.log(np.exp(a - mx).sum(axis=0)), dtype=np.float64)


def _log_e_derivs(state: Any, logw: FloatArray) -> tuple[FloatArray, FloatArray, FloatArray]:
    """log E, d log E/dm and d² log E/dm² from the per-bet state (W, G, C); each (Rm,)."""
    w, g, c = state[0], state[1], state[2]
    a = w + logw[:, None]
    mx = a.max(axis=0)
    e = np.exp(a - mx)
    z = e.sum(axis=0)
    d1 = -np.einsum("kr,kr->r", e, g) / z
    d2 = np.einsum("kr,kr->r", e, g * g - c) / z - d1 * d1
    return mx + np.log(z), d1, d2


def _advance(
    values: FloatArray,
    counts: FloatArray,
    start: FloatArray,
    slam: FloatArray,
    state: Any,
    logw: FloatArray,
    logc: float,
) -> tuple[FloatArray, Any]:
    """Move running bounds that may have to move; return (bounds, state (3, K, Rm)) there.

    Row r is the lower bound of a stream when ``slam[:, r] > 0`` (root of E⁺ = c; E⁺ convex
    decreasing in m) and the upper bound when ``slam[:, r] < 0`` (E⁻ convex increasing).
    ``start`` is the previous running bound and ``state`` its incremental (W, G, C).

    Fast path, Newton in log space on h(m) = log E(m) − log c. h is nearly linear (its Newton
    constant |h''|/2|h'| is O(λ), while E-space Newton's grows with |h'|, i.e. with t), so:
    (1) from the start, the root of the second-order Taylor model of h (h, h', h'' from the
    incremental state: no evaluation); (2) exact evaluations from the counts (one log and one
    reciprocal per bet and support value) with a Newton step each, until Newton's own error
    estimate for the step, err = |h''|/(2|h'|)·step², is at most ``_FAST_ERR`` (≤ 1e-12: the next
    step would be below the brief's tolerance). The bound is that iterate moved outward by
    ``_OUTWARD`` + 2·err (a log-space step may overshoot by ≈ err), intersected with the start.
    Rows still unsettled after ``_FAST_ITER`` evaluations go to :func:`_advance_newton`, the
    exact safeguarded E-space Newton of the brief (also the reference of the tests). The state
    returned is the exact evaluation at the last iterate, shifted to the bound by a first-order
    Taylor step (the shift is ~1e-12); it only decides whether the next observation searches.
    """
    sgn = np.sign(slam[0])
    h, d1, d2 = _log_e_derivs(state, logw)
    h = h - logc
    disc = d1 * d1 - 2.0 * d2 * h
    root = np.sqrt(np.maximum(disc, 0.0))
    with np.errstate(divide="ignore", invalid="ignore"):
        quad = -2.0 * h / (d1 + np.sign(d1) * root)
    step0 = np.where((disc >= 0.0) & np.isfinite(quad), quad, -h / d1)
    m = np.clip(start + step0, 0.0, 1.0)
    # First evaluation on every row (no indexing), then only on the rows not yet settled.
    new = _state_at(values, counts, m, slam)
    loge, d1, d2 = _log_e_derivs(new, logw)
    step = (logc - loge) / d1
    err = 0.5 * np.abs(d2 / d1) * step * step
    nxt = m + step
    bound = np.clip(start + sgn * np.maximum(sgn * (nxt - start) - _OUTWARD - 2.0 * err, 0.0), 0, 1)
    delta = bound - m
    new[0] -= new[1] * delta
    new[1] += new[2] * delta
    work = np.flatnonzero(~(err <= _FAST_ERR))
    m = np.clip(nxt, 0.0, 1.0)
    for _ in range(_FAST_ITER - 1):
        if work.size == 0:
            break
        mw = m[work]
        st_w = _state_at(values, counts[:, work], mw, slam[:, work])
        loge, d1, d2 = _log_e_derivs(st_w, logw)
        step = (logc - loge) / d1
        err = 0.5 * np.abs(d2 / d1) * step * step
        nxt = mw + step
        s = sgn[work]
        st = start[work]
        b = np.clip(st + s * np.maximum(s * (nxt - st) - _OUTWARD - 2.0 * err, 0.0), 0.0, 1.0)
        delta = b - mw
        bound[work] = b
        st_w[0] -= st_w[1] * delta
        st_w[1] += st_w[2] * delta
        new[:, :, work] = st_w
        m[work] = np.clip(nxt, 0.0, 1.0)
        work = work[~(err <= _FAST_ERR)]
    if work.size:
        b2 = _advance_newton(values, counts[:, work], start[work], slam[:, work], logw, logc)
        bound[work] = b2
        new[:, :, work] = _state_at(values, counts[:, work], b2, slam[:, work])
    return bound, new


def _advance_newton(
    values: FloatArray,
    counts: FloatArray,
    start: FloatArray,
    slam: FloatArray,
    logw: FloatArray,
    logc: float,
) -> FloatArray:
    """Exact safeguarded Newton from the start (fallback of :func:`_advance`); new bounds.

    Call an iterate *inside* when E(m) ≥ c (the conservative side of the root) and *outside*
    otherwise. By convexity the tangent of E lies below E, so the E-space Newton step
    m − (E − c)/E' = m + expm1(log c − log E)/(d log E/dm) lands inside from ANY point and, from
    an inside point, never overshoots (the brief's method). From an inside iterate we take the
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
        e_step = np.expm1(u) / dloge
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
    is accepted; evaluation costs O(K·V) with V the number of distinct values seen.
    """

    def __init__(self, alpha: float, spec: MixtureSpec | None = None) -> None:
        self._alpha = _check_alpha(alpha)
        self._spec = _resolve_spec(spec)
        lam = self._spec.lambda_array
        self._logw = self._spec.log_weights
        self._logc = -math.log(self._alpha)
        self._lc = (self._logw - self._logc)[:, None]  # log(w_k / c), (K, 1)
        self._slam = lam[:, None] * _SIGNS[None, :]  # (K, 2): column 0 E⁺, column 1 E⁻
        self._index: dict[float, int] = {}
        self._values = np.zeros(8)
        self._counts = np.zeros(8)
        self._nv = 0
        self._t = 0
        self._b = np.array([0.0, 1.0])  # running lower, upper
        # state at the running bounds, per bet and side: log-wealth W, G = −dW/dm, C = −d²W/dm²
        self._s = np.zeros((3, lam.size, 2))
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
        return float(self._b[0])

    @property
    def upper(self) -> float:
        return float(self._b[1])

    @property
    def empty(self) -> bool:
        """True once the running intersection has crossed (only on a miscovering path)."""
        return bool(self._b[0] > self._b[1])

    @property
    def moved(self) -> bool:
        """Whether the last update searched for a new bound (the bound may not have changed)."""
        return self._moved

    @property
    def counts(self) -> dict[float, int]:
        """Observations per distinct value."""
        return {v: int(self._counts[j]) for v, j in self._index.items()}

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
            j = self._nv
            if j == self._values.size:
                self._values = np.concatenate([self._values, np.zeros(j)])
                self._counts = np.concatenate([self._counts, np.zeros(j)])
            self._values[j] = x
            self._index[x] = j
            self._nv += 1
        self._counts[j] += 1.0
        self._t += 1
        _observe(x - self._b, self._slam, self._s)
        hit = np.exp(self._s[0] + self._lc).sum(axis=0) >= 1.0
        self._moved = bool(hit[0] or hit[1])
        if self._moved:
            sides = np.flatnonzero(hit)
            nv = self._nv
            counts = np.repeat(self._counts[:nv, None], sides.size, axis=1)
            bound, state = _advance(
                self._values[:nv],
                counts,
                self._b[sides],
                self._slam[:, sides],
                self._s[:, :, sides],
                self._logw,
                self._logc,
            )
            self._b[sides] = bound
            self._s[:, :, sides] = state

    # -- e-values --------------------------------------------------------------------------
    def _log_e(self, m: float, side: int) -> float:
        nv = self._nv
        out = _log_e_rows(
            self._values[:nv],
            self._counts[:nv, None],
            np.array([m]),
            self._slam[:, side : side + 1],
            self._logw,
        )
        return float(out[0])

    def log_e_upper(self, m: float) -> float:
        """log E⁺_t(m): evidence that the mean is above m."""
        return self._log_e(_check_mean(m, "m"), 0)

    def log_e_lower(self, m: float) -> float:
        """log E⁻_t(m): evidence that the mean is below m."""
        return self._log_e(_check_mean(m, "m"), 1)


# --------------------------------------------------------------------------------------------
# The batch construction
# --------------------------------------------------------------------------------------------


class BatchMixtureCS:
    """R independent mixture confidence sequences whose observations lie on a fixed support.

    ``update(value_index, active)`` feeds, for each active replicate r, the observation
    ``support[value_index[r]]``. Same bounds as :class:`MixtureCS` on the same data. Per step:
    a handful of numpy operations on (K, 2, R) arrays, plus Newton on the bounds that may move.
    Internal layout keeps the replicate axis last so that every reduction (over the bets, the
    support) runs over a leading axis.
    """

    def __init__(
        self,
        n_replicates: int,
        alpha: float,
        spec: MixtureSpec | None = None,
        support: ArrayLike = (0.0, 1.0),
    ) -> None:
        self._r = _check_replicates(n_replicates)
        self._alpha = _check_alpha(alpha)
        self._spec = _resolve_spec(spec)
        self._support = _check_support(support, "support")
        lam = self._spec.lambda_array
        self._logw = self._spec.log_weights
        self._logc = -math.log(self._alpha)
        self._lc = (self._logw - self._logc)[:, None, None]  # (K, 1, 1)
        self._slam2 = lam[:, None] * _SIGNS[None, :]  # (K, 2)
        self._slam = self._slam2[:, :, None]  # (K, 2, 1)
        r, v, k = self._r, self._support.size, lam.size
        self._cols = np.arange(r)
        self._counts = np.zeros((v, r))
        self._t = np.zeros(r, dtype=np.int64)
        self._b = np.empty((2, r))
        self._b[0] = 0.0
        self._b[1] = 1.0
        # state at the running bounds: log-wealth W, G = −dW/dm, C = −d²W/dm² (axis 0)
        self._s = np.zeros((3, k, 2, r))
        self._moved = np.zeros(r, dtype=np.bool_)
        self.searches = 0  # bound searches run so far (diagnostic: the warm start's hit rate)

    @property
    def n_replicates(self) -> int:
        return self._r

    @property
    def alpha(self) -> float:
        return self._alpha

    @property
    def spec(self) -> MixtureSpec:
        return self._spec

    @property
    def support(self) -> FloatArray:
        return self._support.copy()

    @property
    def t(self) -> NDArray[np.int64]:
        return self._t.copy()

    @property
    def lower(self) -> FloatArray:
        return np.array(self._b[0], dtype=np.float64)

    @property
    def upper(self) -> FloatArray:
        return np.array(self._b[1], dtype=np.float64)

    @property
    def empty(self) -> BoolArray:
        return np.asarray(self._b[0] > self._b[1])

    @property
    def moved(self) -> BoolArray:
        """Replicates whose bounds were searched in the last update."""
        return self._moved.copy()

    @property
    def counts(self) -> FloatArray:
        """(R, V) observation counts per support value."""
        return self._counts.T.copy()

    def _check_update(self, value_index: ArrayLike, active: ArrayLike | None) -> Any:
        idx = np.asarray(value_index)
        if idx.shape != (self._r,) or idx.dtype.kind not in "iu":
            raise InputError(
                "value_index",
                f"an integer array of shape ({self._r},)",
                f"shape {idx.shape}, dtype {idx.dtype}",
            )
        rows: IntArray | None = None
        if active is not None:
            act = np.asarray(active)
            if act.shape != (self._r,) or act.dtype != np.bool_:
                raise InputError(
                    "active",
                    f"a boolean array of shape ({self._r},) or None",
                    f"shape {act.shape}, dtype {act.dtype}",
                )
            if not act.all():
                rows = np.flatnonzero(act)
        sel = idx if rows is None else idx[rows]
        if sel.size and (sel.min() < 0 or sel.max() >= self._support.size):
            bad = int(np.flatnonzero((idx < 0) | (idx >= self._support.size))[0])
            raise InputError(
                f"value_index[{bad}]",
                f"an index into the support (0..{self._support.size - 1})",
                int(idx[bad]),
            )
        return sel, rows

    def update(self, value_index: ArrayLike, active: ArrayLike | None = None) -> None:
        """Feed ``support[value_index[r]]`` to every active replicate r (all when None)."""
        sel, rows = self._check_update(value_index, active)
        self._step(sel, rows)

    def _step(self, sel: IntArray, rows: IntArray | None) -> None:
        """One observation for the replicates ``rows`` (all when None); ``sel`` their indices."""
        self._moved[:] = False
        if rows is None:
            x = self._support[sel]
            self._counts[sel, self._cols] += 1.0
            self._t += 1
            _observe(x - self._b, self._slam, self._s)
            tmp = self._s[0] + self._lc
            np.exp(tmp, out=tmp)
            ms, mr = np.nonzero(tmp.sum(axis=0) >= 1.0)
        elif rows.size == 0:
            return
        elif 2 * rows.size >= self._r:
            # most replicates active: full-width arithmetic with inactive increments zeroed
            act = np.zeros(self._r)
            act[rows] = 1.0
            idx = np.zeros(self._r, dtype=np.intp)
            idx[rows] = sel
            self._counts[idx, self._cols] += act
            self._t[rows] += 1
            dx = (self._support[idx] - self._b) * act
            u = dx * self._slam
            u += 1.0
            q = np.divide(self._slam, u)
            q *= act
            np.log(u, out=u)
            self._s[0] += u
            self._s[1] += q
            q *= q
            self._s[2] += q
            tmp = self._s[0] + self._lc
            np.exp(tmp, out=tmp)
            ms, mr = np.nonzero((tmp.sum(axis=0) >= 1.0) & (act > 0.0))
        else:
            x = self._support[sel]
            self._counts[sel, rows] += 1.0
            self._t[rows] += 1
            sub = self._s[:, :, :, rows]
            _observe(x - self._b[:, rows], self._slam, sub)
            self._s[:, :, :, rows] = sub
            tmp = sub[0] + self._lc
            np.exp(tmp, out=tmp)
            ms, mr = np.nonzero(tmp.sum(axis=0) >= 1.0)
            mr = rows[mr]
        if mr.size:
            self.searches += int(mr.size)
            flat = ms * self._r + mr  # position in the (side, replicate) plane
            sf = self._s.reshape(3, self._s.shape[1], 2 * self._r)
            bf = self._b.reshape(-1)
            bound, state = _advance(
                self._support,
                np.take(self._counts, mr, axis=1),
                np.take(bf, flat),
                np.take(self._slam2, ms, axis=1),
                np.take(sf, flat, axis=2),
                self._logw,
                self._logc,
            )
            bf[flat] = bound
            sf[:, :, flat] = state
            self._moved[mr] = True

    def _log_e(self, m: ArrayLike, side: int) -> FloatArray:
        arr = np.asarray(m, dtype=np.float64)
        if arr.ndim == 0:
            mm = _check_mean(float(arr), "m")
            table = np.log1p(self._slam2[:, side][:, None] * (self._support - mm)[None, :])
            lw = table @ self._counts + self._logw[:, None]  # (K, R)
            mx = lw.max(axis=0)
            return np.asarray(mx + np.log(np.exp(lw - mx).sum(axis=0)), dtype=np.float64)
        if (
            arr.shape != (self._r,)
            or not np.all(np.isfinite(arr))
            or np.any(arr < 0)
            or np.any(arr > 1)
        ):
            raise InputError(
                "m", f"a candidate mean in [0, 1] or an array of shape ({self._r},)", arr.tolist()
            )
        slam = np.broadcast_to(self._slam2[:, side][:, None], (self._slam2.shape[0], self._r))
        return _log_e_rows(self._support, self._counts, arr, slam, self._logw)

    def log_e_upper(self, m: ArrayLike) -> FloatArray:
        """log E⁺_t(m) per replicate; m a scalar (fast: one matrix product) or an (R,) array."""
        return self._log_e(m, 0)

    def log_e_lower(self, m: ArrayLike) -> FloatArray:
        """log E⁻_t(m) per replicate."""
        return self._log_e(m, 1)


# --------------------------------------------------------------------------------------------
# h-intervals
# --------------------------------------------------------------------------------------------


def _phi01(p: Any) -> Any:
    """φ = 2·asin(√p) after clipping into [0, 1] (bounds are clipped by construction; the
    validated :func:`verdictpack._stats.phi` is used for scalars, this for hot arrays)."""
    arr = np.asarray(p, dtype=np.float64)
    if arr.ndim == 0:
        return phi(min(max(float(arr), 0.0), 1.0))
    return 2.0 * np.arcsin(np.sqrt(np.clip(arr, 0.0, 1.0)))


def _as_arrays(*xs: ArrayLike) -> list[FloatArray]:
    arrs = np.broadcast_arrays(*(np.asarray(x, dtype=np.float64) for x in xs))
    return [np.asarray(a, dtype=np.float64) for a in arrs]


def corners_h_interval(
    m_lower: ArrayLike, m_upper: ArrayLike, h_lower: ArrayLike, h_upper: ArrayLike
) -> tuple[FloatArray, FloatArray, BoolArray]:
    """Corner h-interval: (φ(l_M) − φ(u_H), φ(u_M) − φ(l_H), empty); arrays broadcast.

    ``empty`` flags a crossed stream (lower > upper), possible only on a miscovering path.
    """
    lm, um, lh, uh = _as_arrays(m_lower, m_upper, h_lower, h_upper)
    h_lo = np.asarray(_phi01(lm) - _phi01(uh), dtype=np.float64)
    h_hi = np.asarray(_phi01(um) - _phi01(lh), dtype=np.float64)
    empty = np.asarray((lm > um) | (lh > uh))
    return h_lo, h_hi, empty


def _edge_extreme(
    lm: FloatArray, um: FloatArray, lh: FloatArray, uh: FloatArray, d: FloatArray, lowest: bool
) -> FloatArray:
    """Min (``lowest``) or max of g(y) = φ(y + d) − φ(y) on the edge x − y = d of the box.

    The edge is y ∈ [max(l_H, l_M − d), min(u_H, u_M − d)]; g has a single stationary point
    y* = (1 − d)/2 (a minimum for d > 0, a maximum for d < 0), so the extreme is at an end or at
    y* clamped to the edge; all three points lie on the edge, so evaluating all three is exact.
    """
    y_lo = np.maximum(lh, lm - d)
    y_hi = np.minimum(uh, um - d)
    y_st = np.minimum(np.maximum(0.5 * (1.0 - d), y_lo), y_hi)
    ys = np.stack([y_lo, y_hi, y_st])
    g = _phi01(ys + d) - _phi01(ys)
    return np.asarray(g.min(axis=0) if lowest else g.max(axis=0), dtype=np.float64)


def hybrid_h_interval(
    m_lower: ArrayLike,
    m_upper: ArrayLike,
    h_lower: ArrayLike,
    h_upper: ArrayLike,
    d_lower: ArrayLike,
    d_upper: ArrayLike,
) -> tuple[FloatArray, FloatArray, BoolArray]:
    """Min and max of f = φ(x) − φ(y) over P = {x ∈ [l_M,u_M], y ∈ [l_H,u_H], x − y ∈ [l_D,u_D]}.

    Returns (h_lo, h_hi, empty); arrays broadcast. f increases in x and decreases in y, so the
    box corner (l_M, u_H) minimises f over the box; if it satisfies x − y ≥ l_D it is the
    minimiser over P (it cannot violate x − y ≤ u_D unless P is empty). Otherwise the minimiser
    lies on the edge x − y = l_D (a minimiser off that line could move towards smaller x or
    larger y, lowering f, unless it is the corner itself), where :func:`_edge_extreme` is exact
    (module doc). Symmetrically for the maximum with the corner (u_M, l_H) and the edge
    x − y = u_D. The corner test uses a 1e-12 tolerance in the conservative direction (the
    corner value bounds f over P from below / above anyway). P is empty iff a box side is
    crossed, l_D > u_D, or the strip misses the box's range of x − y, [l_M − u_H, u_M − l_H];
    there ``empty`` is True and h_lo = −π, h_hi = π.
    """
    lm, um, lh, uh, ld, ud = _as_arrays(m_lower, m_upper, h_lower, h_upper, d_lower, d_upper)
    shape = lm.shape
    lm, um, lh, uh, ld, ud = (a.reshape(-1) for a in (lm, um, lh, uh, ld, ud))
    tol = _REGION_TOL
    lo_corner = _phi01(lm) - _phi01(uh)
    hi_corner = _phi01(um) - _phi01(lh)
    h_lo = np.where(lm - uh >= ld - tol, lo_corner, _edge_extreme(lm, um, lh, uh, ld, lowest=True))
    h_hi = np.where(um - lh <= ud + tol, hi_corner, _edge_extreme(lm, um, lh, uh, ud, lowest=False))
    empty = (
        (lm > um + tol)
        | (lh > uh + tol)
        | (ld > ud + tol)
        | (um - lh < ld - tol)
        | (lm - uh > ud + tol)
    )
    h_lo = np.where(empty, -math.pi, h_lo)
    h_hi = np.where(empty, math.pi, h_hi)
    return (
        np.asarray(h_lo.reshape(shape), dtype=np.float64),
        np.asarray(h_hi.reshape(shape), dtype=np.float64),
        np.asarray(empty.reshape(shape)),
    )


# --------------------------------------------------------------------------------------------
# Verdicts
# --------------------------------------------------------------------------------------------


class Verdict(enum.StrEnum):
    """Terminal states of the sequential verdict (None means CONTINUE)."""

    EFFECT_SUPPORTED = "EFFECT_SUPPORTED"
    NO_POSITIVE_EFFECT = "NO_POSITIVE_EFFECT"
    BELOW_PRACTICAL_THRESHOLD = "BELOW_PRACTICAL_THRESHOLD"
    INCONCLUSIVE = "INCONCLUSIVE"
    INSTRUMENT_INVALID = "INSTRUMENT_INVALID"


CONTINUE_CODE = 0
#: code -> verdict for :func:`classify_codes` (code 0 is CONTINUE, i.e. None).
VERDICT_CODES: tuple[Verdict | None, ...] = (
    None,
    Verdict.EFFECT_SUPPORTED,
    Verdict.NO_POSITIVE_EFFECT,
    Verdict.BELOW_PRACTICAL_THRESHOLD,
    Verdict.INCONCLUSIVE,
    Verdict.INSTRUMENT_INVALID,
)


def classify(
    h_lo: float,
    h_hi: float,
    threshold: float,
    at_cap: bool = False,
    instrument_valid: bool = True,
) -> Verdict | None:
    """The verdict of an h-interval (precedence in the module doc); None means CONTINUE."""
    thr = _check_threshold(threshold)
    if not instrument_valid:
        return Verdict.INSTRUMENT_INVALID
    if h_lo >= thr:
        return Verdict.EFFECT_SUPPORTED
    if h_hi <= 0.0:
        return Verdict.NO_POSITIVE_EFFECT
    if h_hi < thr:
        return Verdict.BELOW_PRACTICAL_THRESHOLD
    if at_cap:
        return Verdict.INCONCLUSIVE
    return None


def classify_codes(
    h_lo: ArrayLike,
    h_hi: ArrayLike,
    threshold: float,
    at_cap: ArrayLike = False,
    instrument_valid: ArrayLike = True,
) -> NDArray[np.int8]:
    """Vectorised :func:`classify`: int8 codes indexing ``VERDICT_CODES`` (0 = CONTINUE)."""
    thr = _check_threshold(threshold)
    lo, hi = _as_arrays(h_lo, h_hi)
    cap = np.asarray(at_cap, dtype=np.bool_)
    valid = np.asarray(instrument_valid, dtype=np.bool_)
    code = np.where(cap, np.int8(4), np.int8(0))
    code = np.where(hi < thr, np.int8(3), code)
    code = np.where(hi <= 0.0, np.int8(2), code)
    code = np.where(lo >= thr, np.int8(1), code)
    code = np.where(valid, code, np.int8(5))
    return np.asarray(code, dtype=np.int8)


# --------------------------------------------------------------------------------------------
# Trackers
# --------------------------------------------------------------------------------------------


def _stream_alphas(
    construction: Construction, alpha: float, hybrid_alphas: Sequence[float] | None
) -> tuple[float, float | None]:
    """(per-tail alpha of M and H, per-tail alpha of D or None)."""
    if construction == "corners":
        if hybrid_alphas is not None:
            raise InputError("hybrid_alphas", "None for the corners construction", hybrid_alphas)
        return alpha, None
    if hybrid_alphas is None:
        return alpha / 4.0, alpha
    try:
        pair = tuple(hybrid_alphas)
    except TypeError:
        raise InputError("hybrid_alphas", "(alpha_MH, alpha_D) per tail", hybrid_alphas) from None
    if len(pair) != 2:
        raise InputError("hybrid_alphas", "(alpha_MH, alpha_D) per tail", list(pair))
    return _check_alpha(pair[0], "hybrid_alphas[0]"), _check_alpha(pair[1], "hybrid_alphas[1]")


class HTracker:
    """Scalar tracker of one construct: model and human streams (and D for the hybrid).

    ``update(m, h)`` consumes one root: ``m`` always feeds the model stream; when ``h`` is given
    it feeds the human stream and, for the hybrid, the pair feeds D = m − h (as (D + 1)/2).
    ``alpha`` is the per-tail level a of the corners; the hybrid uses ``hybrid_alphas``
    (default (a/4, a): M and H at a/4 per tail, D at a), which keeps the provable error per side
    of the h-interval at 2a (see the module doc). ``error_per_side`` states the bound in force.
    """

    def __init__(
        self,
        construction: str,
        alpha: float,
        spec: MixtureSpec | None,
        threshold: float,
        *,
        hybrid_alphas: Sequence[float] | None = None,
    ) -> None:
        self._construction = _check_construction(construction)
        self._alpha = _check_alpha(alpha)
        self._threshold = _check_threshold(threshold)
        self._spec = _resolve_spec(spec)
        a_mh, a_d = _stream_alphas(self._construction, self._alpha, hybrid_alphas)
        self._model = MixtureCS(a_mh, self._spec)
        self._human = MixtureCS(a_mh, self._spec)
        self._diff = MixtureCS(a_d, self._spec) if a_d is not None else None
        self._error_per_side = 2 * a_mh if a_d is None else 4 * a_mh + a_d
        self._h_lo = -math.pi
        self._h_hi = math.pi
        self._empty = False
        self._n = 0

    @property
    def construction(self) -> Construction:
        return self._construction

    @property
    def alpha(self) -> float:
        return self._alpha

    @property
    def threshold(self) -> float:
        return self._threshold

    @property
    def error_per_side(self) -> float:
        """Provable probability that h_lo > h (or h_hi < h) ever happens (union of tails)."""
        return self._error_per_side

    @property
    def stream_alphas(self) -> dict[str, float]:
        out = {"model": self._model.alpha, "human": self._human.alpha}
        if self._diff is not None:
            out["diff"] = self._diff.alpha
        return out

    @property
    def n_roots(self) -> int:
        return self._n

    @property
    def model(self) -> MixtureCS:
        return self._model

    @property
    def human(self) -> MixtureCS:
        return self._human

    @property
    def diff(self) -> MixtureCS | None:
        """The [0, 1]-scale CS on (D + 1)/2 (hybrid only)."""
        return self._diff

    @property
    def model_bounds(self) -> tuple[float, float]:
        return self._model.lower, self._model.upper

    @property
    def human_bounds(self) -> tuple[float, float]:
        return self._human.lower, self._human.upper

    @property
    def diff_bounds(self) -> tuple[float, float] | None:
        """Bounds on the mean of D = M − H (on [−1, 1]), hybrid only."""
        if self._diff is None:
            return None
        return 2.0 * self._diff.lower - 1.0, 2.0 * self._diff.upper - 1.0

    @property
    def h_interval(self) -> tuple[float, float]:
        return self._h_lo, self._h_hi

    @property
    def region_empty(self) -> bool:
        """True once the region became empty; the h-interval is then frozen."""
        return self._empty

    def update(self, m_value: float, h_value: float | None = None) -> None:
        """Consume one root (model evidence, and human evidence when available)."""
        m = _check_observation(m_value, f"m_value (root {self._n})")
        h = None if h_value is None else _check_observation(h_value, f"h_value (root {self._n})")
        self._model.update(m)
        moved = self._model.moved
        if h is not None:
            self._human.update(h)
            moved = moved or self._human.moved
            if self._diff is not None:
                self._diff.update((m - h + 1.0) / 2.0)
                moved = moved or self._diff.moved
        self._n += 1
        if moved and not self._empty:
            self._refresh()

    def _refresh(self) -> None:
        lm, um = self.model_bounds
        lh, uh = self.human_bounds
        if self._diff is None:
            lo, hi, empty = corners_h_interval(lm, um, lh, uh)
        else:
            ld = 2.0 * self._diff.lower - 1.0
            ud = 2.0 * self._diff.upper - 1.0
            lo, hi, empty = hybrid_h_interval(lm, um, lh, uh, ld, ud)
        if bool(empty):
            self._empty = True
        else:
            self._h_lo = float(lo)
            self._h_hi = float(hi)

    def verdict(self, at_cap: bool = False, instrument_valid: bool = True) -> Verdict | None:
        """The verdict state now (None = CONTINUE)."""
        return classify(self._h_lo, self._h_hi, self._threshold, at_cap, instrument_valid)

    def log_e_values(self, m_mean: float, h_mean: float) -> dict[str, float]:
        """Current log e-values of every stream at candidate means (D at m_mean − h_mean)."""
        mm = _check_mean(m_mean, "m_mean")
        hm = _check_mean(h_mean, "h_mean")
        out = {
            "model_upper": self._model.log_e_upper(mm),
            "model_lower": self._model.log_e_lower(mm),
            "human_upper": self._human.log_e_upper(hm),
            "human_lower": self._human.log_e_lower(hm),
        }
        if self._diff is not None:
            dm = min(max((mm - hm + 1.0) / 2.0, 0.0), 1.0)
            out["diff_upper"] = self._diff.log_e_upper(dm)
            out["diff_lower"] = self._diff.log_e_lower(dm)
        return out


class BatchHTracker:
    """R replicates of :class:`HTracker` over fixed supports (same numbers, vectorised).

    ``model_support`` and ``human_support`` are the sorted values M_i and H_i can take; the D
    support is every (m − h + 1)/2. ``update(m_index, h_index, h_present, active)``: active
    replicates consume a root; ``h_present`` marks those with human evidence on it (complete
    pairs). ``verdict_codes(at_cap)`` classifies all replicates (codes index ``VERDICT_CODES``).
    """

    def __init__(
        self,
        n_replicates: int,
        construction: str,
        alpha: float,
        spec: MixtureSpec | None,
        threshold: float,
        model_support: ArrayLike,
        human_support: ArrayLike,
        *,
        hybrid_alphas: Sequence[float] | None = None,
    ) -> None:
        self._r = _check_replicates(n_replicates)
        self._construction = _check_construction(construction)
        self._alpha = _check_alpha(alpha)
        self._threshold = _check_threshold(threshold)
        self._spec = _resolve_spec(spec)
        ms = _check_support(model_support, "model_support")
        hs = _check_support(human_support, "human_support")
        a_mh, a_d = _stream_alphas(self._construction, self._alpha, hybrid_alphas)
        self._model = BatchMixtureCS(self._r, a_mh, self._spec, ms)
        self._human = BatchMixtureCS(self._r, a_mh, self._spec, hs)
        self._diff: BatchMixtureCS | None = None
        self._d_table: IntArray = np.zeros((ms.size, hs.size), dtype=np.intp)
        if a_d is not None:
            dv = (ms[:, None] - hs[None, :] + 1.0) / 2.0
            d_support, inverse = np.unique(dv, return_inverse=True)
            self._d_table = inverse.reshape(dv.shape).astype(np.intp)
            self._diff = BatchMixtureCS(self._r, a_d, self._spec, d_support)
        self._error_per_side = 2 * a_mh if a_d is None else 4 * a_mh + a_d
        self._h_lo = np.full(self._r, -math.pi)
        self._h_hi = np.full(self._r, math.pi)
        self._empty = np.zeros(self._r, dtype=np.bool_)
        self._n = np.zeros(self._r, dtype=np.int64)

    @property
    def n_replicates(self) -> int:
        return self._r

    @property
    def construction(self) -> Construction:
        return self._construction

    @property
    def alpha(self) -> float:
        return self._alpha

    @property
    def threshold(self) -> float:
        return self._threshold

    @property
    def error_per_side(self) -> float:
        return self._error_per_side

    @property
    def model(self) -> BatchMixtureCS:
        return self._model

    @property
    def human(self) -> BatchMixtureCS:
        return self._human

    @property
    def diff(self) -> BatchMixtureCS | None:
        return self._diff

    @property
    def n_roots(self) -> NDArray[np.int64]:
        return self._n.copy()

    @property
    def diff_lower(self) -> FloatArray | None:
        return None if self._diff is None else 2.0 * self._diff._b[0] - 1.0

    @property
    def diff_upper(self) -> FloatArray | None:
        return None if self._diff is None else 2.0 * self._diff._b[1] - 1.0

    @property
    def h_lo(self) -> FloatArray:
        return self._h_lo.copy()

    @property
    def h_hi(self) -> FloatArray:
        return self._h_hi.copy()

    @property
    def region_empty(self) -> BoolArray:
        return self._empty.copy()

    def update(
        self,
        m_index: ArrayLike,
        h_index: ArrayLike | None = None,
        h_present: ArrayLike | None = None,
        active: ArrayLike | None = None,
    ) -> None:
        """One root for every active replicate; human evidence where ``h_present`` (default:
        everywhere when ``h_index`` is given, nowhere when it is None)."""
        m_sel, m_rows = self._model._check_update(m_index, active)
        act = np.ones(self._r, dtype=np.bool_) if m_rows is None else np.zeros(self._r, np.bool_)
        if m_rows is not None:
            act[m_rows] = True
        h_sel = h_rows = None
        if h_index is not None:
            if h_present is None:
                h_act = act
            else:
                hp = np.asarray(h_present)
                if hp.shape != (self._r,) or hp.dtype != np.bool_:
                    raise InputError(
                        "h_present",
                        f"a boolean array of shape ({self._r},) or None",
                        f"shape {hp.shape}, dtype {hp.dtype}",
                    )
                h_act = act & hp
            h_sel, h_rows = self._human._check_update(h_index, h_act)
        elif h_present is not None and np.any(h_present):
            raise InputError("h_index", "an index array when h_present has True entries", None)
        self._model._step(m_sel, m_rows)
        changed = self._model._moved.copy()
        if h_sel is not None:
            self._human._step(h_sel, h_rows)
            changed |= self._human._moved
            if self._diff is not None:
                m_idx = np.asarray(m_index)
                if h_rows is None:
                    d_sel = self._d_table[m_idx, h_sel]
                else:
                    d_sel = self._d_table[m_idx[h_rows], h_sel]
                self._diff._step(d_sel, h_rows)
                changed |= self._diff._moved
        if m_rows is None:
            self._n += 1
        else:
            self._n[m_rows] += 1
        changed &= ~self._empty
        rows = np.flatnonzero(changed)
        if rows.size:
            self._refresh(rows)

    def _refresh(self, rows: IntArray) -> None:
        bm = self._model._b[:, rows]
        bh = self._human._b[:, rows]
        if self._diff is None:
            lo, hi, empty = corners_h_interval(bm[0], bm[1], bh[0], bh[1])
        else:
            bd = 2.0 * self._diff._b[:, rows] - 1.0
            lo, hi, empty = hybrid_h_interval(bm[0], bm[1], bh[0], bh[1], bd[0], bd[1])
        keep = ~empty
        self._h_lo[rows[keep]] = lo[keep]
        self._h_hi[rows[keep]] = hi[keep]
        self._empty[rows[empty]] = True

    def verdict_codes(
        self, at_cap: ArrayLike = False, instrument_valid: ArrayLike = True
    ) -> NDArray[np.int8]:
        """Verdict code per replicate now (0 = CONTINUE; see ``VERDICT_CODES``)."""
        return classify_codes(self._h_lo, self._h_hi, self._threshold, at_cap, instrument_valid)
