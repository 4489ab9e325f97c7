"""The human baseline sized with the humans' ICC_H: the per-root pmf of the clustered model, the
exact test's validity on data simulated from the latent model directly (where the binomial test
is not valid), its power, and today's sizing kept bit for bit without ICC_H."""

from __future__ import annotations

import dataclasses
import math

import numpy as np
import pytest
from scipy import special, stats

from verdictpack._errors import InputError
from verdictpack._results import to_jsonable
from verdictpack.core._exact import binomial_normal_n, binomial_region
from verdictpack.core._icc import latent_for_icc
from verdictpack.simulate._human import (
    _baseline_test,
    _clustered,
    _clustered_pmf,
    _power_at,
    size_human_baseline,
)
from verdictpack.verify._engine_human import _latent_pmf


@pytest.mark.parametrize(
    ("m", "p", "icc"),
    [(2, 0.5, 0.4), (3, 0.65, 0.5), (5, 0.1, 0.9), (40, 0.3, 0.2), (4, 0.02, 0.9999)],
)
def test_the_per_root_pmf_sums_to_one_has_mean_mp_and_gives_back_the_icc(
    m: int, p: float, icc: float
) -> None:
    q = _clustered_pmf(m, p, latent_for_icc(p, icc))
    j = np.arange(m + 1)
    assert q.sum() == pytest.approx(1.0, abs=1e-12)
    assert float(j @ q) == pytest.approx(m * p, abs=1e-12)
    both = float((j * (j - 1)) @ q) / (m * (m - 1))  # P(two votes on one root both 1)
    assert (both - p * p) / (p * (1.0 - p)) == pytest.approx(icc, abs=1e-9)


def test_the_per_root_pmf_tends_to_the_binomial_as_the_icc_vanishes() -> None:
    binomial = stats.binom.pmf(np.arange(4), 3, 0.3)
    far = np.abs(_clustered_pmf(3, 0.3, latent_for_icc(0.3, 0.2)) - binomial).max()
    near = np.abs(_clustered_pmf(3, 0.3, latent_for_icc(0.3, 1e-6)) - binomial).max()
    assert far > 0.01 and near < 1e-5
    assert _clustered_pmf(3, 0.3, 0.0) == pytest.approx(binomial, abs=1e-13)


def _clustered_counts(
    rng: np.random.Generator, reps: int, roots: int, m: int, p: float, r: float
) -> np.ndarray:
    """``reps`` counts over ``roots`` roots of m votes each, drawn from the latent model itself:
    per root a latent z, per vote 1[√r·z + √(1 − r)·e < Φ⁻¹(p)]."""
    z = rng.standard_normal((reps, roots, 1))
    e = rng.standard_normal((reps, roots, m))
    votes = math.sqrt(r) * z + math.sqrt(1.0 - r) * e < special.ndtri(p)
    return votes.sum(axis=(1, 2))


def test_the_clustered_test_holds_its_alpha_where_the_binomial_test_does_not() -> None:
    """ICC_H 0.5 with 3 judgments per root doubles a count's variance (design effect 2): the
    binomial critical count then rejects a true null far more often than alpha; the clustered
    one does not."""
    alpha, m, icc = 0.05, 3, 0.5
    res = size_human_baseline(0.5, 0.3, alpha, 0.8, n_per_root=m, seed=3, replicates=2000, icc=icc)
    n, r = res.confirmatory_roots, res.latent_correlation
    assert res.direction == "less" and r == latent_for_icc(0.5, icc)
    binomial_c = binomial_region(n * m, res.shifted_rate, alpha, 1, "less").lower
    assert binomial_c is not None and binomial_c > res.critical_value
    reps = 40_000
    x = _clustered_counts(np.random.default_rng(20261203), reps, n, m, res.shifted_rate, r)
    size = float(np.mean(x <= res.critical_value))
    mcse = math.sqrt(alpha * (1 - alpha) / reps)
    assert size <= float(res.achieved_alpha) + 3 * mcse
    assert float(res.achieved_alpha) <= alpha
    binomial_size = float(np.mean(x <= binomial_c))
    assert binomial_size > alpha + 10 * mcse  # about 0.12 here


def test_the_simulated_and_the_latent_model_power_agree_with_the_exact_power() -> None:
    m, icc = 3, 0.5
    res = size_human_baseline(0.5, 0.3, 0.05, 0.8, n_per_root=m, seed=3, replicates=2000, icc=icc)
    n, exact = res.confirmatory_roots, float(res.exact_power)
    _, test = _baseline_test(0.5, 0.3)
    # the power the sizing simulates at a size, with the clustered model and without
    sim = _power_at(n, m, test, 0.05, _clustered(icc, 0.5, m, test)[2], 5, "test/icc", 20_000)
    assert sim.replicates == 20_000
    assert abs(float(sim) - exact) <= 4 * float(sim.mcse)
    reps = 20_000
    x = _clustered_counts(np.random.default_rng(7), reps, n, m, 0.5, res.latent_correlation)
    direct = float(np.mean(x <= res.critical_value))
    assert abs(direct - exact) <= 4 * math.sqrt(exact * (1 - exact) / reps)
    binomial = _power_at(n, m, test, 0.05, None, 5, "test/icc", 20_000)
    assert float(binomial) > exact + 4 * float(binomial.mcse)  # the binomial model overstates


def test_the_icc_costs_about_the_design_effect_in_roots() -> None:
    args = (0.5, 0.3, 0.005, 0.8)
    kw = {"n_per_root": 2, "pilot_roots": 100, "seed": 1, "replicates": 5000}
    today = size_human_baseline(*args, **kw)
    clustered = size_human_baseline(*args, **kw, icc=0.5)
    assert 1.3 < clustered.confirmatory_roots / today.confirmatory_roots < 1.7  # deff 1.5
    judgments = binomial_normal_n(today.shifted_rate, 0.5, 0.005, 0.8, 1)
    assert today.closed_form_roots.value == math.ceil(judgments / 2)
    assert clustered.closed_form_roots.value == math.ceil(judgments * 1.5 / 2)  # Kish
    assert clustered.icc == 0.5 and "clustered" in clustered.test and "clustered" not in today.test
    assert to_jsonable(clustered)["icc"] == 0.5 and "icc" not in to_jsonable(today)
    plain = dataclasses.replace(clustered, icc=None, latent_correlation=None)
    assert plain != today
    for same in (
        size_human_baseline(*args, **kw, icc=0.0),
        size_human_baseline(*args, **kw, icc=None),
    ):
        assert dataclasses.replace(same, icc=None, latent_correlation=None) == today
    one = {**kw, "n_per_root": 1}
    assert dataclasses.replace(
        size_human_baseline(*args, **one, icc=0.5), icc=None, latent_correlation=None
    ) == size_human_baseline(*args, **one)


def test_the_clustered_sizing_mirrors_and_repeats() -> None:
    kw = {"n_per_root": 2, "pilot_roots": 10, "seed": 8, "replicates": 2000, "icc": 0.4}
    up = size_human_baseline(0.3, 0.25, 0.01, 0.9, **kw)
    down = size_human_baseline(0.7, -0.25, 0.01, 0.9, **kw)
    assert (up.direction, down.direction) == ("less", "greater")
    assert up.confirmatory_roots == down.confirmatory_roots
    assert down.critical_value == 2 * down.confirmatory_roots - up.critical_value
    assert float(up.exact_power) == pytest.approx(float(down.exact_power), abs=1e-12)
    assert float(up.achieved_alpha) == pytest.approx(float(down.achieved_alpha), abs=1e-12)
    assert size_human_baseline(0.3, 0.25, 0.01, 0.9, **kw) == up


@pytest.mark.parametrize("bad", [-0.1, 1.5, float("nan"), "0.4"])
def test_a_bad_icc_is_refused_by_name(bad: object) -> None:
    with pytest.raises(InputError) as err:
        size_human_baseline(0.5, 0.3, 0.05, 0.8, icc=bad)  # type: ignore[arg-type]
    assert err.value.parameter == "icc"


@pytest.mark.parametrize(
    ("m", "p", "icc"),
    [(2, 0.5, 0.4), (7, 0.2, 0.3), (100, 0.7, 0.3), (4, 0.02, 0.95), (5, 0.3, 0.99999)],
)
def test_the_self_audits_pmf_by_another_method_agrees(m: int, p: float, icc: float) -> None:
    """The sizing's quadrature against the self-audit's trapezoid rule (its own variable and
    closure when r ≥ 1/2), down to a latent correlation within 1e-10 of 1."""
    r = latent_for_icc(p, icc)
    assert np.abs(_clustered_pmf(m, p, r) - _latent_pmf(m, p, r)).max() < 1e-13
