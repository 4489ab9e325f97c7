"""The vote ICC: the exact latent solve (against an independent orthant probability) and the
one-way ANOVA estimate with its cluster-bootstrap interval (seeded coverage and bias)."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import stats

from verdictpack._errors import InputError
from verdictpack._rng import stream
from verdictpack.core._icc import fit_icc, latent_for_icc, vote_icc


@pytest.mark.parametrize("rate", [0.1, 0.3, 0.5, 0.8])
@pytest.mark.parametrize("r", [0.0, 0.2, 0.55, 0.9])
def test_vote_icc_is_the_bivariate_orthant(rate: float, r: float) -> None:
    c = stats.norm.ppf(rate)
    both = stats.multivariate_normal(mean=[0, 0], cov=[[1, r], [r, 1]]).cdf([c, c])
    assert vote_icc(rate, r) == pytest.approx((both - rate**2) / (rate * (1 - rate)), abs=2e-5)


def test_vote_icc_at_one_half_is_the_arcsine_law() -> None:
    for r in (0.1, 0.3, 0.7):
        assert vote_icc(0.5, r) == pytest.approx(2 * math.asin(r) / math.pi, abs=1e-14)


@pytest.mark.parametrize(
    ("rate", "icc", "floor"), [(0.3, 0.3, 0.0), (0.5, 0.6, 0.09), (0.2, 0.45, 0.0)]
)
def test_latent_for_icc_inverts_vote_icc(rate: float, icc: float, floor: float) -> None:
    r = latent_for_icc(rate, icc, floor)
    assert floor <= r <= 1
    assert vote_icc(rate, r) == pytest.approx(icc, abs=1e-12)


def test_an_icc_below_the_stream_correlation_floor_is_refused_naming_the_lowest() -> None:
    lowest = vote_icc(0.5, 0.3**2)
    with pytest.raises(InputError) as info:
        latent_for_icc(0.5, 0.01, 0.3**2)
    assert info.value.parameter == "icc"
    assert f"at least {lowest:.6g}" in str(info.value)
    assert latent_for_icc(0.5, lowest, 0.09) == 0.09  # the floor itself is allowed


def _study(rng: np.random.Generator, icc: float, rate: float, roots: int, n_h: int) -> tuple:
    """Votes of ``n_h`` humans on each root, drawn here (W = √r·V + √(1 − r)·U)."""
    r = latent_for_icc(rate, icc)
    v = rng.standard_normal((roots, 1))
    w = math.sqrt(r) * v + math.sqrt(1 - r) * rng.standard_normal((roots, n_h))
    votes = (w < stats.norm.ppf(rate)).astype(float)
    return np.repeat(np.arange(roots), n_h), votes.reshape(-1)


def test_fit_recovers_a_known_icc_within_its_interval() -> None:
    """200 seeded studies (150 roots, 3 humans, ICC 0.4 at rate 0.3): the 95 % cluster-bootstrap
    interval covers the truth in at least 90 % of them, and the estimator's bias is small."""
    data = stream(20261203, "tests/icc/coverage")
    boot = stream(20261203, "tests/icc/coverage/boot")
    hits, points = 0, []
    for _ in range(200):
        root, value = _study(data, 0.4, 0.3, 150, 3)
        fit = fit_icc(root, value, boot, n_boot=400)
        assert fit.ci is not None and fit.icc is not None and fit.roots == 150
        hits += fit.ci[0] <= 0.4 <= fit.ci[1]
        points.append(fit.icc)
    assert hits / 200 >= 0.90
    mean = float(np.mean(points))
    assert abs(mean - 0.4) <= 3 * float(np.std(points)) / math.sqrt(200) + 0.01


def test_fit_is_deterministic_and_needs_roots_with_two_votes() -> None:
    root, value = _study(stream(1, "tests/icc/det"), 0.5, 0.5, 60, 2)
    a = fit_icc(root, value, stream(5, "b"))
    b = fit_icc(root, value, stream(5, "b"))
    assert a == b
    few = fit_icc(np.arange(30), np.ones(30), stream(5, "b"))  # one vote per root
    assert few.icc is None and few.roots == 0 and "at least 10" in few.reason


def test_anova_matches_a_naive_per_root_computation() -> None:
    rng = np.random.default_rng(3)
    sizes = rng.integers(2, 6, size=40)
    root = np.repeat(np.arange(40), sizes)
    value = rng.integers(0, 3, size=root.size) / 2.0
    groups = [value[root == i] for i in range(40)]
    n, k = value.size, 40
    grand = value.mean()
    msb = sum(len(g) * (g.mean() - grand) ** 2 for g in groups) / (k - 1)
    msw = sum(((g - g.mean()) ** 2).sum() for g in groups) / (n - k)
    n0 = (n - sum(len(g) ** 2 for g in groups) / n) / (k - 1)
    naive = (msb - msw) / (msb + (n0 - 1) * msw)
    assert fit_icc(root, value, rng, n_boot=10).icc == pytest.approx(naive, abs=1e-12)
