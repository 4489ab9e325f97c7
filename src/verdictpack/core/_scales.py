"""The effect scales, written once: φ, its inverse, Cohen's h and the odds-ratio conversions.

φ(p) = 2·asin(√p) (the arcsine, variance-stabilising scale); Cohen's h = φ(p1) − φ(p0); the
inverse is p = sin²(x/2) (docs/statistics.md §2). Every Python user of φ imports it from here —
sizing, the h-intervals of the sequential core, the compiler, the judge simulator. The one
exception is the self-audit (:mod:`verdictpack.verify`), which keeps its own copy on purpose (its
independence from the code it checks is the point); ``tests/core/test_scales.py`` holds that copy
and the compiled kernel's equal to :func:`phi` on a grid.

The public functions validate their arguments (InputError). The underscored variants are the
unvalidated hot-path forms of the same formula for inputs that are bounds or rates already in
range up to rounding: they clip into [0, 1] first and then evaluate exactly the expression of
:func:`phi` (``2·asin(√p)``), so their floating-point results are those of :func:`phi` on the
clipped input.
"""

from __future__ import annotations

import math
from typing import Any, overload

import numpy as np
from numpy.typing import NDArray

from verdictpack._errors import InputError
from verdictpack._validate import finite_real, open_unit, probabilities
from verdictpack.core import _libm

__all__ = [
    "cohens_h",
    "h_from_odds_ratio",
    "p_from_h",
    "p_from_odds_ratio",
    "phi",
    "phi_inv",
]


@overload
def phi(p: float) -> float: ...
@overload
def phi(p: NDArray[Any]) -> NDArray[np.float64]: ...
def phi(p: float | NDArray[Any]) -> float | NDArray[np.float64]:
    """φ(p) = 2·asin(√p), the arcsine (variance-stabilising) scale; p in [0, 1], arrays allowed."""
    x = probabilities("p", p, "a probability in [0, 1] (or an array of them)")
    if isinstance(x, np.ndarray):
        return 2.0 * _libm.arcsin(np.sqrt(x))
    return 2.0 * math.asin(math.sqrt(x))


@overload
def phi_inv(x: float) -> float: ...
@overload
def phi_inv(x: NDArray[Any]) -> NDArray[np.float64]: ...
def phi_inv(x: float | NDArray[Any]) -> float | NDArray[np.float64]:
    """p = sin²(x/2), the inverse of φ; x is clipped into [0, π] first (finite x only)."""
    allowed = "a finite real number (or an array of them)"
    if isinstance(x, np.ndarray):
        if x.dtype.kind not in "iuf":
            raise InputError("x", allowed, x.tolist())
        arr = x.astype(np.float64)
        if not np.all(np.isfinite(arr)):
            raise InputError("x", allowed, arr.tolist())
        return np.asarray(_phi_inv_clipped_array(arr), dtype=np.float64)
    v = min(max(finite_real("x", x, allowed), 0.0), math.pi)
    return math.sin(v / 2.0) ** 2


@overload
def cohens_h(p1: float, p0: float) -> float: ...
@overload
def cohens_h(p1: NDArray[Any], p0: float | NDArray[Any]) -> NDArray[np.float64]: ...
@overload
def cohens_h(p1: float, p0: NDArray[Any]) -> NDArray[np.float64]: ...
def cohens_h(p1: float | NDArray[Any], p0: float | NDArray[Any]) -> float | NDArray[np.float64]:
    """Cohen's h = φ(p1) − φ(p0); rates in [0, 1], arrays broadcast."""
    allowed = "a probability in [0, 1] (or an array of them)"
    a = probabilities("p1", p1, allowed)
    b = probabilities("p0", p0, allowed)
    if isinstance(a, np.ndarray) or isinstance(b, np.ndarray):
        return 2.0 * _libm.arcsin(np.sqrt(a)) - 2.0 * _libm.arcsin(np.sqrt(b))
    return 2.0 * math.asin(math.sqrt(a)) - 2.0 * math.asin(math.sqrt(b))


def p_from_h(p0: float, h: float) -> float:
    """The rate p1 with φ(p1) − φ(p0) = h; InputError when φ(p0) + h leaves [0, π]."""
    base = open_unit("p0", p0)
    shift = finite_real("h", h)
    target = 2.0 * math.asin(math.sqrt(base)) + shift
    if not 0.0 <= target <= math.pi:
        lo = -2.0 * math.asin(math.sqrt(base))
        hi = math.pi + lo
        raise InputError("h", f"a value in [{lo:.6g}, {hi:.6g}] so the rate stays in [0, 1]", h)
    return math.sin(target / 2.0) ** 2


def p_from_odds_ratio(p0: float, odds_ratio: float) -> float:
    """p1 = OR·p0 / (1 − p0 + OR·p0): the rate at odds ratio OR against baseline p0."""
    base = open_unit("p0", p0)
    ratio = finite_real("odds_ratio", odds_ratio, "a finite number > 0")
    if ratio <= 0.0:
        raise InputError("odds_ratio", "a finite number > 0", odds_ratio)
    return ratio * base / (1.0 - base + ratio * base)


def h_from_odds_ratio(p0: float, odds_ratio: float) -> float:
    """Cohen's h of an odds-ratio threshold at baseline p0: φ(p1) − φ(p0)."""
    p1 = p_from_odds_ratio(p0, odds_ratio)
    return cohens_h(p1, float(p0))


# --------------------------------------------------------------------------------------------
# Unvalidated hot-path forms (clip into [0, 1], then φ's own expression)
# --------------------------------------------------------------------------------------------


def _clip01(x: float) -> float:
    return 0.0 if x < 0.0 else (1.0 if x > 1.0 else x)


def _phi_clipped(p: float) -> float:
    """φ of a float after clipping into [0, 1] (no validation)."""
    return 2.0 * math.asin(math.sqrt(_clip01(p)))


def _phi_clipped_array(p: Any) -> Any:
    """φ after clipping into [0, 1]: a float for a 0-d input (through the validated
    :func:`phi`), else a float64 array."""
    arr = np.asarray(p, dtype=np.float64)
    if arr.ndim == 0:
        return phi(min(max(float(arr), 0.0), 1.0))
    return 2.0 * _libm.arcsin(np.sqrt(np.clip(arr, 0.0, 1.0)))


def _phi_inv_clipped_array(x: Any) -> Any:
    """sin²(x/2) after clipping x into [0, π], through numpy (scalar or array; no validation)."""
    clipped = np.clip(x, 0.0, math.pi)
    return _libm.sin(clipped / 2.0) ** 2


def _phi_clipped_inplace(buf: NDArray[np.float64]) -> NDArray[np.float64]:
    """φ of every entry of ``buf`` after clipping into [0, 1], in place (the same operations
    as :func:`phi`'s array form, each written into ``buf``)."""
    np.maximum(buf, 0.0, out=buf)
    np.minimum(buf, 1.0, out=buf)
    np.sqrt(buf, out=buf)
    _libm.arcsin(buf, out=buf)
    buf *= 2.0
    return buf
