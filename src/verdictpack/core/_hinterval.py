"""The h-interval of a construct from its stream bounds (corners and hybrid), and the verdicts.

The bounds come from the confidence sequences of :mod:`verdictpack.core._mixture`.

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

import numpy as np
from numpy.typing import ArrayLike, NDArray

from verdictpack.core._mixture import _REGION_TOL, BoolArray, FloatArray, _check_threshold
from verdictpack.core._scales import _phi_clipped, _phi_clipped_array, _phi_clipped_inplace

__all__ = [
    "CONTINUE_CODE",
    "VERDICT_CODES",
    "Verdict",
    "classify",
    "classify_codes",
    "corners_h_interval",
    "hybrid_h_interval",
]


# --------------------------------------------------------------------------------------------
# h-intervals
# --------------------------------------------------------------------------------------------


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
    h_lo = np.asarray(_phi_clipped_array(lm) - _phi_clipped_array(uh), dtype=np.float64)
    h_hi = np.asarray(_phi_clipped_array(um) - _phi_clipped_array(lh), dtype=np.float64)
    empty = np.asarray((lm > um) | (lh > uh))
    return h_lo, h_hi, empty


def _corners_py(lm: float, um: float, lh: float, uh: float) -> tuple[float, float, bool]:
    """:func:`corners_h_interval` for one replicate (pure Python)."""
    return (
        _phi_clipped(lm) - _phi_clipped(uh),
        _phi_clipped(um) - _phi_clipped(lh),
        lm > um or lh > uh,
    )


def _hybrid_rows(
    lm: FloatArray,
    um: FloatArray,
    lh: FloatArray,
    uh: FloatArray,
    ld: FloatArray,
    ud: FloatArray,
    d: FloatArray | None = None,
) -> tuple[FloatArray, FloatArray, BoolArray]:
    """:func:`hybrid_h_interval` on 1-D arrays of one length: every φ evaluated in one pass.

    The extreme of g(y) = φ(y + d) − φ(y) on the edge x − y = d of the box, y ∈ [y_lo, y_hi]
    with y_lo = max(l_H, l_M − d) and y_hi = min(u_H, u_M − d): g has a single stationary
    point y* = (1 − d)/2 (a minimum for d > 0, a maximum for d < 0), so the extreme is at an
    end or at y* clamped to the edge; all three points lie on the edge, so taking the extreme
    of the three is exact. Evaluated for every row and both edges (d = l_D for h_lo, d = u_D
    for h_hi), with the box corners alongside, in one pass of φ. ``d``, when given, is
    (l_D, u_D) stacked as one (2, n) array.
    """
    n = lm.size
    tol = _REGION_TOL
    buf = np.empty(16 * n)
    ph = buf[: 4 * n].reshape(4, n)  # l_M, u_M, l_H, u_H
    xs = buf[4 * n : 10 * n].reshape(3, 2, n)  # x = y + d at the three points, both edges
    ys = buf[10 * n :].reshape(3, 2, n)
    ph[0] = lm
    ph[1] = um
    ph[2] = lh
    ph[3] = uh
    if d is None:
        d = np.stack((ld, ud))
    np.subtract(lm, d, out=ys[0])
    np.maximum(ys[0], lh, out=ys[0])  # y_lo = max(l_H, l_M − d)
    np.subtract(um, d, out=ys[1])
    np.minimum(ys[1], uh, out=ys[1])  # y_hi = min(u_H, u_M − d)
    np.subtract(1.0, d, out=ys[2])
    ys[2] *= 0.5
    np.maximum(ys[2], ys[0], out=ys[2])
    np.minimum(ys[2], ys[1], out=ys[2])  # y* clamped to the edge
    np.add(ys, d, out=xs)
    _phi_clipped_inplace(buf)
    g = xs - ys
    lo_corner = ph[0] - ph[3]
    hi_corner = ph[1] - ph[2]
    h_lo = np.where(lm - uh >= ld - tol, lo_corner, g[:, 0].min(axis=0))
    h_hi = np.where(um - lh <= ud + tol, hi_corner, g[:, 1].max(axis=0))
    empty = (
        (lm > um + tol)
        | (lh > uh + tol)
        | (ld > ud + tol)
        | (um - lh < ld - tol)
        | (lm - uh > ud + tol)
    )
    if empty.any():
        h_lo[empty] = -math.pi
        h_hi[empty] = math.pi
    return h_lo, h_hi, empty


def _edge_py(lm: float, um: float, lh: float, uh: float, d: float, lowest: bool) -> float:
    """The edge extreme of :func:`_hybrid_rows` for one replicate (pure Python)."""
    y_lo = max(lh, lm - d)
    y_hi = min(uh, um - d)
    y_st = min(max(0.5 * (1.0 - d), y_lo), y_hi)
    g = [_phi_clipped(y + d) - _phi_clipped(y) for y in (y_lo, y_hi, y_st)]
    return min(g) if lowest else max(g)


def _hybrid_py(
    lm: float, um: float, lh: float, uh: float, ld: float, ud: float
) -> tuple[float, float, bool]:
    """:func:`hybrid_h_interval` for one replicate (pure Python, same arithmetic)."""
    tol = _REGION_TOL
    if lm > um + tol or lh > uh + tol or ld > ud + tol or um - lh < ld - tol or lm - uh > ud + tol:
        return -math.pi, math.pi, True
    if lm - uh >= ld - tol:
        h_lo = _phi_clipped(lm) - _phi_clipped(uh)
    else:
        h_lo = _edge_py(lm, um, lh, uh, ld, lowest=True)
    if um - lh <= ud + tol:
        h_hi = _phi_clipped(um) - _phi_clipped(lh)
    else:
        h_hi = _edge_py(lm, um, lh, uh, ud, lowest=False)
    return h_lo, h_hi, False


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
    larger y, lowering f, unless it is the corner itself), where :func:`_hybrid_rows` is exact
    (module doc). Symmetrically for the maximum with the corner (u_M, l_H) and the edge
    x − y = u_D. The corner test uses a 1e-12 tolerance in the conservative direction (the
    corner value bounds f over P from below / above anyway). P is empty iff a box side is
    crossed, l_D > u_D, or the strip misses the box's range of x − y, [l_M − u_H, u_M − l_H];
    there ``empty`` is True and h_lo = −π, h_hi = π.
    """
    lm, um, lh, uh, ld, ud = _as_arrays(m_lower, m_upper, h_lower, h_upper, d_lower, d_upper)
    shape = lm.shape
    h_lo, h_hi, empty = _hybrid_rows(*(a.reshape(-1) for a in (lm, um, lh, uh, ld, ud)))
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
    cap = np.asarray(at_cap, dtype=np.bool_)
    valid = np.asarray(instrument_valid, dtype=np.bool_)
    if (
        cap.ndim == 0
        and valid.ndim == 0
        and isinstance(h_lo, np.ndarray)
        and isinstance(h_hi, np.ndarray)
        and h_lo.dtype == np.float64
        and h_hi.dtype == np.float64
        and h_lo.shape == h_hi.shape
    ):
        # the trackers' hot path: same precedence, written in place
        code = np.full(h_lo.shape, 4 if cap else 0, dtype=np.int8)
        np.putmask(code, h_hi < thr, np.int8(3))
        np.putmask(code, h_hi <= 0.0, np.int8(2))
        np.putmask(code, h_lo >= thr, np.int8(1))
        if not valid:
            code.fill(5)
        return code
    lo, hi = _as_arrays(h_lo, h_hi)
    code = np.where(cap, np.int8(4), np.int8(0))
    code = np.where(hi < thr, np.int8(3), code)
    code = np.where(hi <= 0.0, np.int8(2), code)
    code = np.where(lo >= thr, np.int8(1), code)
    code = np.where(valid, code, np.int8(5))
    return np.asarray(code, dtype=np.int8)
