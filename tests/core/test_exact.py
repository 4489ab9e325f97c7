"""Tests of verdictpack.core._exact: the anchors of docs/statistics.md §2-§4, statsmodels and
brute-force checks."""

from __future__ import annotations

import itertools
import math
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import stats

from verdictpack._errors import InputError
from verdictpack._rng import stream
from verdictpack.core import _exact as _stats
from verdictpack.core._exact import (
    binomial_normal_n,
    binomial_power,
    binomial_region,
    binomial_sample_size,
    normal_n_t,
    simulate_t_power,
    t_power,
    t_sample_size,
    two_proportion_n,
    two_proportion_power,
)
from verdictpack.core._scales import (
    cohens_h,
    h_from_odds_ratio,
    p_from_h,
    p_from_odds_ratio,
    phi,
    phi_inv,
)

# --------------------------------------------------------------------------------------------
# Effect scales
# --------------------------------------------------------------------------------------------


def test_phi_fixed_points() -> None:
    assert phi(0.0) == 0.0
    assert phi(1.0) == pytest.approx(math.pi, abs=1e-15)
    assert phi(0.5) == pytest.approx(math.pi / 2, abs=1e-15)
    assert phi_inv(math.pi / 2) == pytest.approx(0.5, abs=1e-15)


@settings(max_examples=200, derandomize=True, deadline=None)
@given(st.floats(min_value=0.0, max_value=1.0))
def test_phi_round_trip(p: float) -> None:
    assert phi_inv(phi(p)) == pytest.approx(p, abs=1e-12)


def test_phi_vectorized_matches_scalar() -> None:
    ps = np.linspace(0.0, 1.0, 41)
    vec = phi(ps)
    assert isinstance(vec, np.ndarray)
    assert vec.shape == ps.shape
    np.testing.assert_allclose(vec, [phi(float(p)) for p in ps], rtol=0, atol=1e-15)
    xs = np.linspace(-1.0, 4.0, 51)
    back = phi_inv(xs)
    expected = [phi_inv(float(x)) for x in xs]
    np.testing.assert_allclose(back, expected, rtol=0, atol=1e-15)
    h = cohens_h(ps, 0.5)
    np.testing.assert_allclose(h, [cohens_h(float(p), 0.5) for p in ps], rtol=0, atol=1e-15)


def test_phi_inv_clips_into_zero_pi() -> None:
    assert phi_inv(-0.3) == 0.0
    assert phi_inv(math.pi + 0.7) == pytest.approx(1.0, abs=1e-15)
    np.testing.assert_array_equal(phi_inv(np.array([-5.0, 10.0])), [0.0, 1.0])


def test_p_from_h_anchor_and_inverse() -> None:
    p1 = p_from_h(0.5, 0.3)
    assert p1 == pytest.approx(0.64776, abs=5e-6)
    assert cohens_h(p1, 0.5) == pytest.approx(0.3, abs=1e-12)
    assert p_from_h(0.3, -0.2) < 0.3
    assert cohens_h(p_from_h(0.3, -0.2), 0.3) == pytest.approx(-0.2, abs=1e-12)


@pytest.mark.parametrize(("p0", "h"), [(0.5, 1.6), (0.5, -1.6), (0.9, 1.0), (0.1, -0.7)])
def test_p_from_h_refuses_rates_outside_unit_interval(p0: float, h: float) -> None:
    with pytest.raises(InputError) as info:
        p_from_h(p0, h)
    assert info.value.parameter == "h"


@pytest.mark.parametrize("p0", [0.05, 0.3, 0.5, 0.8])
@pytest.mark.parametrize("odds_ratio", [0.25, 1.0, 1.5, 4.0])
def test_odds_ratio_conversions(p0: float, odds_ratio: float) -> None:
    p1 = p_from_odds_ratio(p0, odds_ratio)
    odds0 = p0 / (1 - p0)
    odds1 = p1 / (1 - p1)
    assert odds1 / odds0 == pytest.approx(odds_ratio, rel=1e-12)
    assert h_from_odds_ratio(p0, odds_ratio) == pytest.approx(phi(p1) - phi(p0), abs=1e-15)


# --------------------------------------------------------------------------------------------
# t tests: anchors
# --------------------------------------------------------------------------------------------


def test_t_anchor_standard() -> None:
    size = t_sample_size(0.5, 0.05, 0.80, 2)
    assert size.n == 34
    assert size.normal_n == 32
    assert normal_n_t(0.5, 0.05, 0.80, 2) == 32
    assert size.power_at_n >= 0.80
    assert size.power_at_n_minus_1 is not None and size.power_at_n_minus_1 < 0.80


def test_t_anchor_decisive() -> None:
    size = t_sample_size(0.5, 0.01, 0.95, 2)
    assert size.n == 75
    assert size.normal_n == 72
    assert size.power_at_n_minus_1 is not None and size.power_at_n_minus_1 < 0.95 <= size.power_at_n


def test_t_anchor_power_at_current_20_pairs() -> None:
    assert t_power(20, 0.5, 0.05, 2) == pytest.approx(0.5645, abs=5e-5)


def test_t_anchor_power_at_32() -> None:
    assert t_power(32, 0.5, 0.05, 2) == pytest.approx(0.7823, abs=5e-4)


def test_t_simulated_power_at_32_within_4_mcse() -> None:
    exact_power = t_power(32, 0.5, 0.05, 2)
    sim = simulate_t_power(32, 0.5, 0.05, 2, 20_000, stream(20240601, "tests/stats/t-sim-32"))
    assert sim.replicates == 20_000
    assert sim.mcse == pytest.approx(math.sqrt(sim.power * (1 - sim.power) / 20_000))
    assert abs(sim.power - exact_power) <= 4 * sim.mcse
    # The estimated-variance power sits well below the known-variance 0.808 (docs/statistics.md §4).
    known_variance = float(stats.norm.cdf(0.5 * math.sqrt(32) - stats.norm.ppf(0.975)))
    assert known_variance - sim.power > 4 * sim.mcse
    fig = sim.figure()
    assert fig.basis == "simulated" and fig.replicates == 20_000


def test_t_simulation_one_sided_negative_direction() -> None:
    exact_power = t_power(15, -0.6, 0.05, 1)
    sim = simulate_t_power(15, -0.6, 0.05, 1, 20_000, stream(7, "tests/stats/t-sim-neg"))
    assert abs(sim.power - exact_power) <= 4 * sim.mcse


def test_t_simulation_independent_of_chunk_size(monkeypatch: pytest.MonkeyPatch) -> None:
    base = simulate_t_power(10, 0.4, 0.05, 2, 3_000, stream(3, "tests/stats/chunks"))
    again = simulate_t_power(10, 0.4, 0.05, 2, 3_000, stream(3, "tests/stats/chunks"))
    monkeypatch.setattr(_stats, "_SIM_CHUNK_DRAWS", 70)  # 7 replicates per chunk
    chunked = simulate_t_power(10, 0.4, 0.05, 2, 3_000, stream(3, "tests/stats/chunks"))
    assert base == again == chunked


# --------------------------------------------------------------------------------------------
# t tests: properties and statsmodels cross-check
# --------------------------------------------------------------------------------------------


def test_t_power_symmetry_and_null_level() -> None:
    assert t_power(25, -0.4, 0.05, 2) == pytest.approx(t_power(25, 0.4, 0.05, 2), abs=1e-14)
    assert t_power(25, -0.4, 0.05, 1) == pytest.approx(t_power(25, 0.4, 0.05, 1), abs=1e-14)
    assert t_power(25, 0.0, 0.05, 2) == pytest.approx(0.05, abs=1e-12)
    assert t_power(25, 0.0, 0.01, 1) == pytest.approx(0.01, abs=1e-12)


@pytest.mark.parametrize("dz", [0.15, 0.5, 1.3])
def test_t_power_monotone_in_n(dz: float) -> None:
    powers = [t_power(n, dz, 0.01, 2) for n in range(2, 300)]
    assert all(b >= a for a, b in itertools.pairwise(powers))


def test_t_power_large_noncentrality_is_finite() -> None:
    # nc = 1.5·√200 ≈ 21.2, far beyond where scipy's nct.cdf(-c, df, nc) returns NaN.
    power = t_power(200, 1.5, 0.05, 2)
    assert math.isfinite(power)
    assert power == pytest.approx(1.0, abs=1e-12)
    assert t_power(200, 1.5, 0.05, 1) == pytest.approx(1.0, abs=1e-12)
    # and a sizing walk that passes through large noncentralities stays finite
    size = t_sample_size(0.05, 0.05, 0.8, 2)
    assert math.isfinite(size.power_at_n)


def test_t_power_non_finite_scipy_value_is_an_internal_error(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(stats.nct, "sf", lambda *args, **kwargs: float("nan"))
    with pytest.raises(RuntimeError, match=r"n=20.*dz=0\.5"):
        t_power(20, 0.5, 0.05, 2)
    with pytest.raises(RuntimeError):
        t_sample_size(0.5, 0.05, 0.8, 2)


T_GRID = [
    (dz, alpha, power, sides)
    for dz in (0.2, 0.35, 0.5, 0.8, 1.2)
    for alpha in (0.01, 0.05)
    for power in (0.8, 0.9, 0.95)
    for sides in (2, 1)
]


def test_t_sizes_against_statsmodels() -> None:
    from statsmodels.stats.power import TTestPower

    engine = TTestPower()
    compared = 0
    skipped: list[tuple[float, float, float, int, int]] = []
    for dz, alpha, power, sides in T_GRID:
        alternative = "two-sided" if sides == 2 else "larger"
        size = t_sample_size(dz, alpha, power, sides)
        assert size.normal_n == math.ceil(
            ((stats.norm.ppf(1 - alpha / sides) + stats.norm.ppf(power)) / dz) ** 2
        )
        for n, ours in ((size.n, size.power_at_n), (size.n - 1, size.power_at_n_minus_1)):
            if n < 2:
                assert ours is None
                continue
            theirs = float(
                engine.power(effect_size=dz, nobs=n, alpha=alpha, alternative=alternative)
            )
            if not math.isfinite(theirs):
                skipped.append((dz, alpha, power, sides, n))
                assert ours is not None and math.isfinite(ours)
                continue
            compared += 1
            assert ours == pytest.approx(theirs, abs=1e-6)
            if n == size.n:
                assert theirs >= power
            else:
                assert theirs < power
    # Every cell has noncentrality below ~5.2, where statsmodels is finite: nothing may be skipped
    # silently. If a scipy change makes statsmodels return NaN here, this count shows it.
    assert skipped == []
    assert compared == 2 * len(T_GRID)


def test_statsmodels_nan_trap_is_real_or_fixed_but_ours_is_finite() -> None:
    from statsmodels.stats.power import TTestPower

    theirs = float(TTestPower().power(effect_size=1.5, nobs=200, alpha=0.05))
    ours = t_power(200, 1.5, 0.05, 2)
    assert math.isfinite(ours)
    if math.isfinite(theirs):  # scipy may have fixed nct.cdf; then both must agree
        assert ours == pytest.approx(theirs, abs=1e-9)


def test_t_sample_size_respects_n_max() -> None:
    with pytest.raises(InputError) as info:
        t_sample_size(0.1, 0.05, 0.8, 2, n_max=500)
    assert info.value.parameter == "n_max"
    assert t_sample_size(0.1, 0.05, 0.8, 2, n_max=10_000).n > 500


def test_t_sample_size_smallest_n_is_two() -> None:
    size = t_sample_size(6.0, 0.05, 0.8, 1)
    assert size.n == 2
    assert size.power_at_n_minus_1 is None


# --------------------------------------------------------------------------------------------
# Exact binomial: brute force in the test
# --------------------------------------------------------------------------------------------


def _pmf(n: int, p: float) -> list[float]:
    return [math.comb(n, x) * p**x * (1 - p) ** (n - x) for x in range(n + 1)]


def _brute_region(
    n: int, p0: float, alpha: float, sides: int, direction: str
) -> tuple[int | None, int | None, float]:
    pmf = _pmf(n, p0)
    # left[c + 1] = P0(X <= c) and right[c] = P0(X >= c), each summed from its far (small) end.
    left = [0.0, *itertools.accumulate(pmf)]
    right = [*reversed(list(itertools.accumulate(reversed(pmf)))), 0.0]
    a = alpha / sides
    lower: int | None = None
    upper: int | None = None
    if sides == 2 or direction == "less":
        # scan every c; keep the largest with P0(X <= c) <= a
        lower = max(c for c in range(-1, n + 1) if left[c + 1] <= a)
        lower = None if lower == -1 else lower
    if sides == 2 or direction == "greater":
        # scan every c; keep the smallest with P0(X >= c) <= a
        upper = min(c for c in range(n + 2) if right[c] <= a)
        upper = None if upper == n + 1 else upper
    return lower, upper, _brute_mass(pmf, lower, upper)


def _brute_mass(pmf: list[float], lower: int | None, upper: int | None) -> float:
    mass = math.fsum(pmf[: lower + 1]) if lower is not None else 0.0
    return mass + (math.fsum(pmf[upper:]) if upper is not None else 0.0)


def _brute_power(n: int, p0: float, p1: float, alpha: float, sides: int, direction: str) -> float:
    lower, upper, _ = _brute_region(n, p0, alpha, sides, direction)
    return _brute_mass(_pmf(n, p1), lower, upper)


BINOMIAL_CELLS = [
    (0.5, 0.05, 2, "greater"),
    (0.5, 0.005, 1, "greater"),
    (0.3, 0.05, 1, "less"),
    (0.3, 0.01, 2, "less"),
    (0.85, 0.1, 1, "greater"),
    (0.12, 0.02, 2, "greater"),
]


@pytest.mark.parametrize(("p0", "alpha", "sides", "direction"), BINOMIAL_CELLS)
def test_binomial_region_and_power_match_brute_force(
    p0: float, alpha: float, sides: int, direction: str
) -> None:
    p1 = 0.7 if direction == "greater" else 0.1
    for n in range(1, 151):
        region = binomial_region(n, p0, alpha, sides, direction)
        lower, upper, achieved = _brute_region(n, p0, alpha, sides, direction)
        assert (region.n, region.lower, region.upper) == (n, lower, upper), n
        assert region.achieved_alpha == pytest.approx(achieved, abs=1e-12)
        assert region.achieved_alpha <= alpha + 1e-15
        power = binomial_power(n, p0, p1, alpha, sides, direction)
        assert power == pytest.approx(_brute_power(n, p0, p1, alpha, sides, direction), abs=1e-12)


@settings(max_examples=150, derandomize=True, deadline=None)
@given(
    n=st.integers(min_value=1, max_value=60),
    p0=st.floats(min_value=0.01, max_value=0.99),
    alpha=st.floats(min_value=0.0005, max_value=0.4),
    sides=st.sampled_from([1, 2]),
    direction=st.sampled_from(["greater", "less"]),
)
def test_binomial_region_property(
    n: int, p0: float, alpha: float, sides: int, direction: str
) -> None:
    region = binomial_region(n, p0, alpha, sides, direction)
    lower, upper, achieved = _brute_region(n, p0, alpha, sides, direction)
    assert (region.lower, region.upper) == (lower, upper)
    assert region.achieved_alpha == pytest.approx(achieved, abs=1e-12)


def test_binomial_region_tie_at_alpha_is_included() -> None:
    # P0(X >= 4) at n = 4, p0 = 1/2 is exactly 1/16: "<= alpha" must include it.
    assert binomial_region(4, 0.5, 0.0625, 1).upper == 4
    assert binomial_region(4, 0.5, 0.0625, 1, "less").lower == 0
    assert binomial_region(4, 0.5, 0.0624, 1).upper is None


@pytest.mark.parametrize("start", ["nan", "zero", "top"])
def test_binomial_region_does_not_trust_scipy_quantiles(
    monkeypatch: pytest.MonkeyPatch, start: str
) -> None:
    """The critical values are fixed up against the tails, whatever scipy's quantile guess is."""

    def guess(q: Any, n: Any, p: Any) -> Any:
        n_arr = np.asarray(n, dtype=float)
        return {"nan": n_arr * np.nan, "zero": 0.0 * n_arr, "top": n_arr}[start]

    monkeypatch.setattr(stats.binom, "isf", guess)
    monkeypatch.setattr(stats.binom, "ppf", guess)
    for p0, alpha, sides, direction in [
        (0.5, 0.0625, 1, "greater"),  # exact ties P0(X >= c) == alpha at n = 4
        (0.5, 0.0625, 1, "less"),
        (0.5, 0.125, 2, "greater"),
        (0.3, 0.05, 2, "greater"),
    ]:
        for n in range(1, 41):
            region = binomial_region(n, p0, alpha, sides, direction)
            lower, upper, _ = _brute_region(n, p0, alpha, sides, direction)
            assert (region.lower, region.upper) == (lower, upper), (n, p0, alpha, sides)


def _brute_size(
    p0: float, p1: float, alpha: float, power: float, sides: int, n_max: int
) -> tuple[int, int, tuple[int, ...]]:
    direction = "greater" if p1 > p0 else "less"
    ok = [_brute_power(n, p0, p1, alpha, sides, direction) >= power for n in range(1, n_max + 1)]
    first = ok.index(True) + 1
    stable = max((n + 1 for n in range(1, n_max + 1) if not ok[n - 1]), default=1)
    stable = max(stable, first)
    between = tuple(n for n in range(first + 1, stable) if not ok[n - 1])
    return first, stable, between


SIZE_CELLS = [
    (0.5, 0.65, 0.01, 0.95, 2, None),
    (0.3, 0.5, 0.05, 0.8, 2, 150),
    (0.7, 0.5, 0.05, 0.9, 1, 150),
    (0.2, 0.4, 0.01, 0.8, 1, 180),
]


@pytest.mark.parametrize(("p0", "p1", "alpha", "power", "sides", "n_max"), SIZE_CELLS)
def test_binomial_sample_size_matches_brute_force(
    p0: float, p1: float, alpha: float, power: float, sides: int, n_max: int | None
) -> None:
    size = binomial_sample_size(p0, p1, alpha, power, sides, n_max=n_max)
    if n_max is None:
        normal = binomial_normal_n(p0, p1, alpha, power, sides)
        assert size.n_max == max(2 * normal, normal + 200)
    first, stable, between = _brute_size(p0, p1, alpha, power, sides, size.n_max)
    assert (size.first_n, size.stable_n, size.failing_between) == (first, stable, between)
    direction = "greater" if p1 > p0 else "less"
    assert size.power_at_first == pytest.approx(
        _brute_power(first, p0, p1, alpha, sides, direction), abs=1e-12
    )
    assert size.power_at_first >= power > (size.power_at_first_minus_1 or 0.0)
    assert size.power_at_stable >= power
    assert size.region_at_first == binomial_region(first, p0, alpha, sides, direction)
    assert size.region_at_stable == binomial_region(stable, p0, alpha, sides, direction)


def test_binomial_anchor_density_calibration() -> None:
    p1 = p_from_h(0.5, 0.3)
    size = binomial_sample_size(0.5, p1, 0.005, 0.95, 1)
    assert size.first_n == 202
    assert size.region_at_first.upper == 120
    assert size.region_at_first.lower is None
    assert size.region_at_first.achieved_alpha == pytest.approx(0.00453, abs=5e-6)
    assert size.normal_n == 197
    assert binomial_normal_n(0.5, p1, 0.005, 0.95, 1) == 197


def test_binomial_anchor_reader_validation() -> None:
    size = binomial_sample_size(0.5, 0.65, 0.01, 0.95, 2)
    assert size.first_n == 195
    assert (size.region_at_first.lower, size.region_at_first.upper) == (79, 116)
    assert size.region_at_first.describe() == "X ≤ 79 or X ≥ 116"
    assert size.failing_between == (196, 197, 199, 201)
    for n in (196, 197, 199, 201):
        assert binomial_power(n, 0.5, 0.65, 0.01, 2) < 0.95
    assert size.stable_n == 202
    assert size.normal_n == 191


def test_binomial_sample_size_horizon_errors() -> None:
    with pytest.raises(InputError) as info:
        binomial_sample_size(0.5, 0.65, 0.01, 0.95, 2, n_max=150)
    assert info.value.parameter == "n_max"
    with pytest.raises(InputError) as info:  # 195 reaches the target, 196 (the horizon) does not
        binomial_sample_size(0.5, 0.65, 0.01, 0.95, 2, n_max=196)
    assert info.value.parameter == "n_max"


# --------------------------------------------------------------------------------------------
# Two proportions by Cohen's h
# --------------------------------------------------------------------------------------------


def test_two_proportion_against_statsmodels() -> None:
    from statsmodels.stats.power import NormalIndPower

    engine = NormalIndPower()
    for h in (0.2, 0.3, 0.5, 0.8):
        for alpha in (0.01, 0.05):
            for power in (0.8, 0.95):
                for sides in (1, 2):
                    alternative = "two-sided" if sides == 2 else "larger"
                    n = two_proportion_n(h, alpha, power, sides)
                    for m in (n - 1, n):
                        theirs = engine.power(h, m, alpha, ratio=1.0, alternative=alternative)
                        assert two_proportion_power(m, h, alpha, sides) == pytest.approx(
                            theirs, abs=1e-9
                        )
                    assert two_proportion_power(n, h, alpha, sides) >= power
                    assert two_proportion_power(n - 1, h, alpha, sides) < power
    assert two_proportion_n(0.2, 0.05, 0.8, 2) == 393  # Cohen (1988) Table 6.4.1 lists 392


def test_two_proportion_closed_form_tracks_exact_arcsine_test() -> None:
    """Enumerate both binomials exactly: the closed-form per-group n has about the target power."""
    p0, h, alpha = 0.5, 0.3, 0.05
    p1 = p_from_h(p0, h)
    n = two_proportion_n(h, alpha, 0.8, 2)
    x = np.arange(n + 1)
    px = stats.binom.pmf(x, n, p1)
    py = stats.binom.pmf(x, n, p0)
    z = (phi(x / n)[:, None] - phi(x / n)[None, :]) * math.sqrt(n / 2)
    exact_power = float(np.sum(np.outer(px, py)[np.abs(z) >= stats.norm.ppf(1 - alpha / 2)]))
    assert abs(exact_power - two_proportion_power(n, h, alpha, 2)) < 0.01
    assert exact_power >= 0.79
    # The one-sample size ((z_a + z_b)/h)² per group would leave this test badly underpowered.
    half = math.ceil(((stats.norm.ppf(0.975) + stats.norm.ppf(0.8)) / h) ** 2)
    assert two_proportion_power(half, h, alpha, 2) < 0.6


# --------------------------------------------------------------------------------------------
# Validation: every parameter of every public function
# --------------------------------------------------------------------------------------------

BAD_OPEN_UNIT = [0, 0.0, 1, 1.0, -0.2, 1.5, math.nan, math.inf, "0.5", True, None]
BAD_SIDES = [0, 3, -1, 1.0, 2.0, "2", True, None]
BAD_DIRECTION = ["up", "", None, 1, "Greater"]
BAD_REAL = [math.nan, math.inf, -math.inf, "0.5", None, True]
BAD_NONZERO = [0, 0.0, -0.0, *BAD_REAL]
BAD_RATE_CLOSED = [-0.01, 1.01, math.nan, math.inf, "0.5", None, True]


def _bad_int(minimum: int) -> list[Any]:
    return [minimum - 1, -5, 2.5, float(minimum + 3), "40", True, None, math.nan]


RNG = np.random.default_rng(0)

CASES: list[tuple[Callable[..., Any], dict[str, Any], str, list[Any]]] = [
    (phi, {"p": 0.3}, "p", BAD_RATE_CLOSED),
    (phi_inv, {"x": 1.0}, "x", BAD_REAL),
    (cohens_h, {"p1": 0.6, "p0": 0.5}, "p1", BAD_RATE_CLOSED),
    (cohens_h, {"p1": 0.6, "p0": 0.5}, "p0", BAD_RATE_CLOSED),
    (p_from_h, {"p0": 0.5, "h": 0.3}, "p0", BAD_OPEN_UNIT),
    (p_from_h, {"p0": 0.5, "h": 0.3}, "h", BAD_REAL),
    (p_from_odds_ratio, {"p0": 0.5, "odds_ratio": 2.0}, "p0", BAD_OPEN_UNIT),
    (p_from_odds_ratio, {"p0": 0.5, "odds_ratio": 2.0}, "odds_ratio", [0, -1.0, *BAD_REAL]),
    (h_from_odds_ratio, {"p0": 0.5, "odds_ratio": 2.0}, "p0", BAD_OPEN_UNIT),
    (h_from_odds_ratio, {"p0": 0.5, "odds_ratio": 2.0}, "odds_ratio", [0, -1.0, *BAD_REAL]),
]

_T_POWER = {"n": 20, "dz": 0.5, "alpha": 0.05, "sides": 2}
CASES += [
    (t_power, _T_POWER, "n", _bad_int(2)),
    (t_power, _T_POWER, "dz", BAD_REAL),
    (t_power, _T_POWER, "alpha", BAD_OPEN_UNIT),
    (t_power, _T_POWER, "sides", BAD_SIDES),
]
_T_SIZE = {"dz": 0.5, "alpha": 0.05, "power": 0.8, "sides": 2}
for _name, _bad in (
    ("dz", BAD_NONZERO),
    ("alpha", BAD_OPEN_UNIT),
    ("power", BAD_OPEN_UNIT),
    ("sides", BAD_SIDES),
):
    CASES.append((normal_n_t, _T_SIZE, _name, _bad))
    CASES.append((t_sample_size, _T_SIZE, _name, _bad))
CASES.append((t_sample_size, _T_SIZE, "n_max", _bad_int(2)))
_T_SIM = {"n": 10, "dz": 0.5, "alpha": 0.05, "sides": 2, "replicates": 100, "rng": RNG}
CASES += [
    (simulate_t_power, _T_SIM, "n", _bad_int(2)),
    (simulate_t_power, _T_SIM, "dz", BAD_REAL),
    (simulate_t_power, _T_SIM, "alpha", BAD_OPEN_UNIT),
    (simulate_t_power, _T_SIM, "sides", BAD_SIDES),
    (simulate_t_power, _T_SIM, "replicates", _bad_int(1)),
    (simulate_t_power, _T_SIM, "rng", [None, 42, np.random.RandomState(0), "rng"]),
]
_B_REGION = {"n": 50, "p0": 0.5, "alpha": 0.05, "sides": 1, "direction": "greater"}
CASES += [
    (binomial_region, _B_REGION, "n", _bad_int(1)),
    (binomial_region, _B_REGION, "p0", BAD_OPEN_UNIT),
    (binomial_region, _B_REGION, "alpha", BAD_OPEN_UNIT),
    (binomial_region, _B_REGION, "sides", BAD_SIDES),
    (binomial_region, _B_REGION, "direction", BAD_DIRECTION),
]
_B_POWER = {**_B_REGION, "p1": 0.7}
CASES += [
    (binomial_power, _B_POWER, name, bad)
    for name, bad in (
        ("n", _bad_int(1)),
        ("p0", BAD_OPEN_UNIT),
        ("p1", BAD_OPEN_UNIT),
        ("alpha", BAD_OPEN_UNIT),
        ("sides", BAD_SIDES),
        ("direction", BAD_DIRECTION),
    )
]
_B_SIZE = {"p0": 0.5, "p1": 0.7, "alpha": 0.05, "power": 0.8, "sides": 2}
for _name, _bad in (
    ("p0", BAD_OPEN_UNIT),
    ("p1", [*BAD_OPEN_UNIT, 0.5]),  # 0.5 == p0: no effect to size for
    ("alpha", BAD_OPEN_UNIT),
    ("power", BAD_OPEN_UNIT),
    ("sides", BAD_SIDES),
):
    CASES.append((binomial_normal_n, _B_SIZE, _name, _bad))
    CASES.append((binomial_sample_size, _B_SIZE, _name, _bad))
CASES.append(  # None is allowed here: it selects the documented default horizon
    (binomial_sample_size, _B_SIZE, "n_max", [b for b in _bad_int(1) if b is not None])
)
_TP_N = {"h": 0.3, "alpha": 0.05, "power": 0.8, "sides": 2}
_TP_POWER = {"n": 100, "h": 0.3, "alpha": 0.05, "sides": 2}
CASES += [
    (two_proportion_n, _TP_N, "h", BAD_NONZERO),
    (two_proportion_n, _TP_N, "alpha", BAD_OPEN_UNIT),
    (two_proportion_n, _TP_N, "power", BAD_OPEN_UNIT),
    (two_proportion_n, _TP_N, "sides", BAD_SIDES),
    (two_proportion_power, _TP_POWER, "n", _bad_int(2)),
    (two_proportion_power, _TP_POWER, "h", BAD_REAL),
    (two_proportion_power, _TP_POWER, "alpha", BAD_OPEN_UNIT),
    (two_proportion_power, _TP_POWER, "sides", BAD_SIDES),
]


def _value_id(bad: Any) -> str:
    """A test id that is the same in every process (no object address in it)."""
    text = repr(bad)
    return type(bad).__name__ if " at 0x" in text else text


VALIDATION = [
    pytest.param(func, base, name, bad, id=f"{func.__name__}-{name}-{_value_id(bad)}")
    for func, base, name, bads in CASES
    for bad in bads
]


@pytest.mark.parametrize(("func", "base", "name", "bad"), VALIDATION)
def test_invalid_argument_raises_input_error_naming_it(
    func: Callable[..., Any], base: dict[str, Any], name: str, bad: Any
) -> None:
    func(**base)  # the base call is valid
    with pytest.raises(InputError) as info:
        func(**{**base, name: bad})
    assert info.value.parameter == name
    assert repr(name) in str(info.value)


@pytest.mark.parametrize(
    ("func", "args", "name"),
    [
        (phi, (np.array([0.2, 1.2]),), "p"),
        (phi, (np.array([0.2, np.nan]),), "p"),
        (phi_inv, (np.array([0.2, np.inf]),), "x"),
        (cohens_h, (np.array([0.2, -0.1]), 0.5), "p1"),
        (cohens_h, (0.5, np.array(["a"])), "p0"),
    ],
)
def test_invalid_arrays_raise_input_error(
    func: Callable[..., Any], args: tuple[Any, ...], name: str
) -> None:
    with pytest.raises(InputError) as info:
        func(*args)
    assert info.value.parameter == name
