"""The one set of parameter validators (a foundation: imports only ``_errors``).

Every public function that refuses an argument goes through these, so a refusal always has one
shape: ``InputError(parameter, allowed, received)``, whose message reads
``parameter 'x': expected <allowed>; received <value>``.

Two predicates, two meanings, named apart:

* :func:`is_real` — *a real number*: a Python or numpy int/float, bools excluded. NaN and ±inf
  ARE real numbers here; callers that must refuse them check finiteness themselves (or use the
  next one).
* :func:`is_finite_real` — *a finite real number*: :func:`is_real` and finite.

The validators return the value converted (``float`` / ``int`` / ``str`` / array), so a caller
writes ``alpha = open_unit("alpha", alpha)``. Each takes an optional ``allowed`` text: the
default wording is the project's usual one; a caller whose message tests or outputs depend on
keeps its own words by passing them.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
from numpy.typing import NDArray

from ._errors import InputError

__all__ = [
    "closed_interval",
    "closed_unit",
    "finite_real",
    "generator",
    "int_at_least",
    "is_finite_real",
    "is_int",
    "is_real",
    "nonempty_str",
    "open_interval",
    "open_unit",
    "positive_int",
    "probabilities",
    "str_tuple",
]

_REAL_TYPES = (int, float, np.integer, np.floating)
_BOOL_TYPES = (bool, np.bool_)


def is_real(value: Any) -> bool:
    """A real number: Python/numpy int or float, bools excluded. NaN and ±inf count as real."""
    return isinstance(value, _REAL_TYPES) and not isinstance(value, _BOOL_TYPES)


def is_finite_real(value: Any) -> bool:
    """A finite real number: :func:`is_real` and finite (an int too large for a float is not)."""
    if not is_real(value):
        return False
    try:
        return math.isfinite(float(value))
    except OverflowError:
        return False


def is_int(value: Any) -> bool:
    """A Python or numpy integer, bools excluded."""
    return isinstance(value, (int, np.integer)) and not isinstance(value, _BOOL_TYPES)


def finite_real(name: str, value: Any, allowed: str = "a finite real number") -> float:
    """``float(value)`` when ``value`` is a finite real number, else InputError."""
    if not is_finite_real(value):
        raise InputError(name, allowed, value)
    return float(value)


def open_interval(name: str, value: Any, low: float, high: float, allowed: str) -> float:
    """``float(value)`` when ``value`` is a finite real with ``low < value < high``."""
    if not is_finite_real(value) or not low < float(value) < high:
        raise InputError(name, allowed, value)
    return float(value)


def open_unit(name: str, value: Any, allowed: str = "a number strictly between 0 and 1") -> float:
    """``float(value)`` when ``value`` is a finite real strictly between 0 and 1."""
    return open_interval(name, value, 0.0, 1.0, allowed)


def closed_interval(name: str, value: Any, low: float, high: float, allowed: str) -> float:
    """``float(value)`` when ``value`` is a finite real with ``low <= value <= high``."""
    if not is_finite_real(value) or not low <= float(value) <= high:
        raise InputError(name, allowed, value)
    return float(value)


def closed_unit(name: str, value: Any, allowed: str = "a number in [0, 1]") -> float:
    """``float(value)`` when ``value`` is a finite real in [0, 1]."""
    return closed_interval(name, value, 0.0, 1.0, allowed)


def int_at_least(name: str, value: Any, minimum: int, allowed: str | None = None) -> int:
    """``int(value)`` when ``value`` is an integer (bools excluded) with ``value >= minimum``."""
    if not is_int(value) or int(value) < minimum:
        text = allowed if allowed is not None else f"an integer >= {minimum}"
        raise InputError(name, text, value)
    return int(value)


def positive_int(name: str, value: Any) -> int:
    """``int(value)`` when ``value`` is an integer >= 1 (bools excluded)."""
    return int_at_least(name, value, 1)


def nonempty_str(name: str, value: Any, allowed: str = "a non-empty string") -> str:
    """``value`` when it is a str with at least one non-whitespace character."""
    if not isinstance(value, str) or not value.strip():
        raise InputError(name, allowed, value)
    return value


def str_tuple(name: str, value: Any, *, allow_empty_items: bool = False) -> tuple[str, ...]:
    """``tuple(value)`` when ``value`` is a non-empty tuple or list of strings (not a str).

    Items must be non-empty (not only white space) unless ``allow_empty_items``; a bad item is
    reported as the received value.
    """
    if isinstance(value, str) or not isinstance(value, (tuple, list)) or not value:
        raise InputError(name, "a non-empty sequence of strings", value)
    items = tuple(value)
    for item in items:
        if not isinstance(item, str) or (not allow_empty_items and not item.strip()):
            raise InputError(name, "strings" + ("" if allow_empty_items else " (non-empty)"), item)
    return items


def generator(name: str, value: Any) -> np.random.Generator:
    """``value`` when it is a ``numpy.random.Generator`` (received is reported by type name)."""
    if not isinstance(value, np.random.Generator):
        raise InputError(name, "a numpy.random.Generator", type(value).__name__)
    return value


def probabilities(name: str, value: Any, allowed: str) -> NDArray[np.float64] | float:
    """A probability (``float``) or a numeric ``numpy.ndarray`` (any shape, returned as float64)
    with every entry finite and in [0, 1]; a non-array goes through :func:`closed_unit`."""
    if isinstance(value, np.ndarray):
        if value.dtype.kind not in "iuf":
            raise InputError(name, allowed, value.tolist())
        arr = value.astype(np.float64)
        if not np.all(np.isfinite(arr)) or np.any(arr < 0.0) or np.any(arr > 1.0):
            raise InputError(name, allowed, arr.tolist())
        return arr
    return closed_unit(name, value, allowed)
