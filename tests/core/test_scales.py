"""Tests of verdictpack.core._scales: φ is written once in Python, and the two independent copies
(the self-audit's, and the compiled kernel's ``phi01`` seen through its h-intervals) agree with it.
"""

# The refusal tests pass ill-typed arguments on purpose.
# mypy: disable-error-code="arg-type"

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

from verdictpack._errors import InputError
from verdictpack.core._mixture import MixtureSpec
from verdictpack.core._scales import (
    _phi_clipped,
    _phi_clipped_array,
    _phi_clipped_inplace,
    _phi_inv_clipped_array,
    cohens_h,
    h_from_odds_ratio,
    p_from_h,
    p_from_odds_ratio,
    phi,
    phi_inv,
)
from verdictpack.core._tracker import BatchHTracker
from verdictpack.verify import _rederive as audit

# 100 001 evenly spaced rates plus the awkward ones (subnormal, next to 0 and 1, exact halves).
P_GRID = np.unique(
    np.concatenate(
        [
            np.linspace(0.0, 1.0, 100_001),
            [5e-324, 1e-300, 1e-17, 2.0**-53, 0.5, 1.0 - 2.0**-53, np.nextafter(1.0, 0.0)],
        ]
    )
)
# Angles beyond [0, π] on both sides: φ⁻¹ clips them.
X_GRID = np.concatenate([np.linspace(-1.0, 4.0, 50_001), [0.0, math.pi, 1e-300, -1e-300]])


def _scalar_phi(values: np.ndarray) -> np.ndarray:
    return np.array([phi(float(v)) for v in values])


# --------------------------------------------------------------------------------------------
# The independent copies agree with the one definition
# --------------------------------------------------------------------------------------------


def test_the_audit_copy_of_phi_equals_phi_bit_for_bit() -> None:
    """The self-audit keeps its own φ (independence); on the grid it is the same function."""
    ours = _scalar_phi(P_GRID)
    theirs = np.array([audit._phi(float(p)) for p in P_GRID])
    assert np.array_equal(ours, theirs)


def test_the_audit_copy_of_phi_inv_equals_phi_inv_bit_for_bit() -> None:
    ours = np.array([phi_inv(float(x)) for x in X_GRID])
    theirs = np.array([audit._phi_inv(float(x)) for x in X_GRID])
    assert np.array_equal(ours, theirs)


@pytest.mark.parametrize("path", ["update", "run"])
def test_the_kernel_h_interval_is_phi_of_its_bounds(path: str) -> None:
    """The compiled kernel evaluates φ itself (``phi01`` in ``_kernel.c``); its corner
    h-interval must be φ(l_M) − φ(u_H), φ(u_M) − φ(l_H) with this module's φ, exactly."""
    rng = np.random.default_rng(20261201)
    reps, steps = 48, 250
    ms = np.arange(7) / 6
    hs = np.array([0.0, 0.5, 1.0])
    tracker = BatchHTracker(reps, "corners", 0.0025, MixtureSpec(), 2.5, ms, hs)

    def check() -> None:
        lo_m, up_m = tracker.model.lower, tracker.model.upper
        lo_h, up_h = tracker.human.lower, tracker.human.upper
        clip = np.clip
        want_lo = _scalar_phi(clip(lo_m, 0.0, 1.0)) - _scalar_phi(clip(up_h, 0.0, 1.0))
        want_hi = _scalar_phi(clip(up_m, 0.0, 1.0)) - _scalar_phi(clip(lo_h, 0.0, 1.0))
        assert not tracker.region_empty.any()
        assert np.array_equal(tracker.h_lo, want_lo)
        assert np.array_equal(tracker.h_hi, want_hi)

    if path == "update":
        for t in range(steps):
            tracker.update(rng.integers(0, ms.size, reps), rng.integers(0, hs.size, reps))
            if t % 25 == 0:
                check()
    else:
        m_index = rng.integers(0, ms.size, (reps, steps))
        h_index = rng.integers(0, hs.size, (reps, steps))
        tracker.run(m_index, h_index, steps, 1)
    check()
    assert np.all(tracker.h_hi - tracker.h_lo < 2 * math.pi)  # the bounds moved


# --------------------------------------------------------------------------------------------
# The forms of φ inside this module
# --------------------------------------------------------------------------------------------


def test_array_and_scalar_phi_agree_to_rounding() -> None:
    """The array form goes through numpy's arcsin, the scalar form through math.asin."""
    arr = phi(P_GRID)
    assert arr.dtype == np.float64 and arr.shape == P_GRID.shape
    assert np.max(np.abs(arr - _scalar_phi(P_GRID))) <= 4 * np.finfo(float).eps
    assert phi(0.0) == 0.0 and phi(1.0) == math.pi and phi(0.5) == pytest.approx(math.pi / 2)
    assert phi(np.array([[0.0, 1.0], [0.5, 0.25]])).shape == (2, 2)


def test_the_hot_path_forms_are_phi_of_the_clipped_input() -> None:
    wide = np.concatenate([P_GRID[::97], [-0.5, -1e-300, 1.0 + 1e-12, 7.0]])
    clipped = np.clip(wide, 0.0, 1.0)
    scalar = np.array([_phi_clipped(float(v)) for v in wide])
    assert np.array_equal(scalar, _scalar_phi(clipped))
    assert np.array_equal(_phi_clipped_array(wide), phi(clipped))
    buf = wide.copy()
    out = _phi_clipped_inplace(buf)
    assert out is buf
    assert np.array_equal(buf, phi(clipped))
    # a 0-d input takes the scalar path and returns a float
    zero_d = _phi_clipped_array(np.float64(1.2))
    assert isinstance(zero_d, float) and zero_d == math.pi
    assert np.array_equal(_phi_inv_clipped_array(X_GRID), phi_inv(X_GRID))


def test_phi_inv_inverts_phi_and_clips() -> None:
    assert np.max(np.abs(phi_inv(phi(P_GRID)) - P_GRID)) <= 1e-15
    assert phi_inv(-1.0) == 0.0 and phi_inv(4.0) == 1.0
    assert phi_inv(np.array([-1.0, 4.0])).tolist() == [0.0, 1.0]


def test_cohens_h_and_the_conversions() -> None:
    assert cohens_h(0.7, 0.4) == phi(0.7) - phi(0.4)
    assert np.array_equal(cohens_h(np.array([0.7, 0.4]), 0.4), phi(np.array([0.7, 0.4])) - phi(0.4))
    for p0 in (0.05, 0.3, 0.5, 0.93):
        for h in (-0.2, 0.1, 0.4):
            lo, hi = -phi(p0), math.pi - phi(p0)
            if lo <= h <= hi:
                assert cohens_h(p_from_h(p0, h), p0) == pytest.approx(h, abs=1e-12)
        # odds ratio: OR = 1 is no effect; OR > 1 raises the rate; h matches the rate
        assert p_from_odds_ratio(p0, 1.0) == pytest.approx(p0, abs=1e-15)
        p1 = p_from_odds_ratio(p0, 2.5)
        assert p1 > p0
        assert (p1 / (1 - p1)) / (p0 / (1 - p0)) == pytest.approx(2.5, rel=1e-12)
        assert h_from_odds_ratio(p0, 2.5) == cohens_h(p1, p0)


REFUSALS: list[tuple[str, Callable[[], Any]]] = [
    ("p", lambda: phi(float("nan"))),
    ("p", lambda: phi(1.5)),
    ("p", lambda: phi(-1e-300)),
    ("p", lambda: phi(True)),
    ("p", lambda: phi("0.5")),
    ("p", lambda: phi(np.array([0.5, np.nan]))),
    ("p", lambda: phi(np.array([0.5, 2.0]))),
    ("p", lambda: phi(np.array(["a"]))),
    ("x", lambda: phi_inv(float("inf"))),
    ("x", lambda: phi_inv(np.array([1.0, np.inf]))),
    ("x", lambda: phi_inv(np.array([True]))),
    ("p1", lambda: cohens_h(1.1, 0.5)),
    ("p0", lambda: cohens_h(0.5, np.array([0.5, -0.1]))),
    ("p0", lambda: p_from_h(0.0, 0.1)),
    ("h", lambda: p_from_h(0.5, 2.0)),
    ("h", lambda: p_from_h(0.5, float("nan"))),
    ("odds_ratio", lambda: p_from_odds_ratio(0.5, 0.0)),
    ("odds_ratio", lambda: p_from_odds_ratio(0.5, float("inf"))),
    ("p0", lambda: h_from_odds_ratio(1.0, 2.0)),
]


@pytest.mark.parametrize(
    ("parameter", "call"), REFUSALS, ids=[f"{i}-{p}" for i, (p, _) in enumerate(REFUSALS)]
)
def test_invalid_arguments_are_refused_by_name(parameter: str, call: Callable[[], Any]) -> None:
    with pytest.raises(InputError) as err:
        call()
    assert err.value.parameter == parameter
