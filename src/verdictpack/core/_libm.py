"""Elementwise functions and sums with the same bits on every machine.

numpy's float64 ``exp`` and ``log`` have their own loops on a CPU with AVX-512 (and ``log1p``,
``expm1``, ``arcsin``, ``sin`` go through Intel's SVML there), and ``dot``/``@`` call the BLAS
kernel chosen for the CPU: the last bit of a result can differ from one machine to another, and
with it the bytes of an output file. Every number verdictpack writes is computed through these
instead: the C library's function on each element (the compiled kernel, built without fused
multiply-adds), and sums of products in numpy's pairwise order, which no CPU changes. Python's
:mod:`math` is the same C library, so a scalar may use it directly.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from numpy.typing import NDArray

from verdictpack.core import _kernel

__all__ = ["arcsin", "dot", "exp", "expm1", "log", "log1p", "sin"]


def _apply(which: int, x: Any, out: NDArray[np.float64] | None) -> NDArray[np.float64]:
    arr = np.asarray(x, dtype=np.float64, order="C")
    if out is None:
        out = np.empty_like(arr)
    elif out.shape != arr.shape or out.dtype != np.float64 or not out.flags.c_contiguous:
        raise ValueError("out: a C-contiguous float64 array of the input's shape")
    _kernel.libm(which, arr, out)
    return out


def log(x: Any, out: NDArray[np.float64] | None = None) -> NDArray[np.float64]:
    """The natural log of every element (float64)."""
    return _apply(0, x, out)


def exp(x: Any, out: NDArray[np.float64] | None = None) -> NDArray[np.float64]:
    """e to every element (float64)."""
    return _apply(1, x, out)


def log1p(x: Any, out: NDArray[np.float64] | None = None) -> NDArray[np.float64]:
    """log(1 + x) of every element (float64)."""
    return _apply(2, x, out)


def expm1(x: Any, out: NDArray[np.float64] | None = None) -> NDArray[np.float64]:
    """exp(x) - 1 of every element (float64)."""
    return _apply(3, x, out)


def arcsin(x: Any, out: NDArray[np.float64] | None = None) -> NDArray[np.float64]:
    """The arcsine of every element (float64)."""
    return _apply(4, x, out)


def sin(x: Any, out: NDArray[np.float64] | None = None) -> NDArray[np.float64]:
    """The sine of every element (float64)."""
    return _apply(5, x, out)


def dot(a: Any, b: Any) -> float:
    """Σ a_i b_i of two vectors, in numpy's pairwise order (never the BLAS)."""
    return float(np.sum(np.multiply(a, b, dtype=np.float64)))
