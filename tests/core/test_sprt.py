"""Tests of verdictpack.core._sprt: docs/statistics.md §9 anchors, brute-force enumeration of the
exact
recursion, Monte Carlo against the exact OC, Wald's approximations, input errors."""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest

from verdictpack._errors import InputError
from verdictpack._rng import stream
from verdictpack.core._exact import binomial_sample_size
from verdictpack.core._scales import p_from_h
from verdictpack.core._sprt import BernoulliSPRT

P1 = p_from_h(0.5, 0.3)  # 0.64776...: h = 0.3 above 0.5
ANCHOR = BernoulliSPRT(0.5, P1, 0.005, 0.05)


def test_anchor_boundaries_and_increments() -> None:
    assert abs(P1 - 0.64776) <= 5e-6
    assert ANCHOR.log_a == pytest.approx(5.247024, abs=1e-6)
    assert ANCHOR.log_b == pytest.approx(-2.990720, abs=1e-6)
    assert ANCHOR.step_success == pytest.approx(0.258912, abs=1e-6)
    assert ANCHOR.step_failure == pytest.approx(-0.350296, abs=1e-6)


def test_anchor_exact_operating_characteristics() -> None:
    h0 = ANCHOR.exact_operating_characteristics(0.5, n_max=3000)
    h1 = ANCHOR.exact_operating_characteristics(P1, n_max=3000)
    assert h0.asn.value == pytest.approx(67.93, abs=0.01)
    assert h1.asn.value == pytest.approx(112.77, abs=0.01)
    assert h0.p_accept_h1.value == pytest.approx(0.00448, abs=5e-5)  # actual alpha
    assert h1.p_accept_h0.value == pytest.approx(0.0432, abs=5e-5)  # actual beta
    assert h0.wald_asn.value == pytest.approx(64.5, abs=0.1)
    assert h1.wald_asn.value == pytest.approx(109.1, abs=0.1)
    assert h0.wald_p_accept_h1.value == pytest.approx(0.005, abs=1e-12)  # Wald: L(p0) = 1 − α
    assert h1.wald_p_accept_h1.value == pytest.approx(0.95, abs=1e-12)
    for oc in (h0, h1):
        total = oc.p_accept_h1.value + oc.p_accept_h0.value + oc.p_beyond_horizon.value
        assert total == pytest.approx(1.0, abs=1e-12)
        assert oc.p_beyond_horizon.value < 1e-15
        assert oc.asn.basis == "exact" and oc.wald_asn.basis == "closed_form"


def test_no_drift_point_tail() -> None:
    p_star = ANCHOR.no_drift_p
    assert p_star * ANCHOR.step_success + (1 - p_star) * ANCHOR.step_failure == pytest.approx(
        0.0, abs=1e-15
    )
    oc = ANCHOR.exact_operating_characteristics(p_star, n_max=5000)
    q99 = oc.n_quantiles["0.99"]
    assert q99 is not None and abs(q99.value - 769) <= 3  # the open-ended tail
    assert oc.asn.value > ANCHOR.exact_operating_characteristics(P1, 3000).asn.value
    short = ANCHOR.exact_operating_characteristics(p_star, n_max=500)
    assert short.n_quantiles["0.99"] is None  # beyond the horizon: reported as None
    assert short.p_beyond_horizon.value > 0.01  # and the mass left open is reported
    # Wald at h → 0: L = ln A / (ln A − ln B)
    la, lb = ANCHOR.log_a, ANCHOR.log_b
    assert oc.wald_p_accept_h1.value == pytest.approx(1 - la / (la - lb), abs=1e-9)


def test_recursion_equals_enumeration() -> None:
    """Every 2^14 path enumerated: P(N = n, decision) for n ≤ 14 and P(N > 14) exactly."""
    sprt = BernoulliSPRT(0.5, 0.8, 0.05, 0.1)  # wide steps: stopping happens within 14
    n = 14
    paths = np.array(list(itertools.product((0, 1), repeat=n)))
    for p in (0.3, 0.5, 0.8):
        weights = np.prod(np.where(paths == 1, p, 1 - p), axis=1)
        runs = sprt.run(paths)
        to_h1, to_h0, beyond = sprt._stopping_distribution(p, n)
        for k in range(1, n + 1):
            hit = runs.n_stop == k
            assert weights[hit & (runs.decision == 1)].sum() == pytest.approx(
                to_h1[k - 1], abs=1e-14
            )
            assert weights[hit & (runs.decision == -1)].sum() == pytest.approx(
                to_h0[k - 1], abs=1e-14
            )
        assert weights[runs.decision == 0].sum() == pytest.approx(beyond, abs=1e-14)
        assert beyond > 1e-4  # some paths are still undecided at 14: the check covers it


def test_monte_carlo_agrees_with_exact() -> None:
    p, reps, n = 0.56, 20_000, 1500
    rng = stream(3, "test/sprt/mc")
    runs = ANCHOR.run((rng.random((reps, n)) < p).astype(np.int8))
    oc = ANCHOR.exact_operating_characteristics(p, n_max=n)
    h1 = np.mean(runs.decision == 1)
    mcse = math.sqrt(oc.p_accept_h1.value * (1 - oc.p_accept_h1.value) / reps)
    assert abs(h1 - oc.p_accept_h1.value) <= 4 * mcse
    n_cap = runs.n_stop  # min(N, n) for undecided replicates
    assert abs(n_cap.mean() - oc.asn.value) <= 4 * n_cap.std() / math.sqrt(reps)
    assert np.mean(runs.decision == 0) <= oc.p_beyond_horizon.value + 4 / math.sqrt(reps)


def test_run_small_cases() -> None:
    sprt = BernoulliSPRT(0.5, 0.8, 0.05, 0.1)
    runs = sprt.run(np.array([[1] * 10, [0] * 10, [1, 0] * 5]))
    first_up = math.ceil(sprt.log_a / sprt.step_success)  # 7 successes in a row
    first_down = math.ceil(sprt.log_b / sprt.step_failure)  # 3 failures in a row
    assert (first_up, first_down) == (7, 3)
    assert runs.n_stop.tolist() == [first_up, first_down, 10]
    assert runs.decision.tolist() == [1, -1, 0]


def test_sprt_cheaper_than_fixed_n_on_average() -> None:
    """Same claim, fixed-n exact binomial (one-sided α 0.005, power 0.95): 202 (the anchor of
    docs/statistics.md §4)."""
    fixed = binomial_sample_size(0.5, P1, 0.005, 0.95, 1)
    assert fixed.first_n == 202
    assert ANCHOR.exact_operating_characteristics(P1, 3000).asn.value < fixed.first_n
    # ...but the open-ended SPRT exceeds it at the no-drift point in a real fraction of runs
    q90 = ANCHOR.exact_operating_characteristics(ANCHOR.no_drift_p, 3000).n_quantiles["0.9"]
    assert q90 is not None and q90.value > fixed.first_n


def test_wald_general_p_matches_direct_formula() -> None:
    p = 0.6
    a, b = ANCHOR.step_success, ANCHOR.step_failure
    h = ANCHOR._wald_h(p, p * a + (1 - p) * b)
    assert p * math.exp(h * a) + (1 - p) * math.exp(h * b) == pytest.approx(1.0, abs=1e-12)
    big_a, big_b = math.exp(ANCHOR.log_a), math.exp(ANCHOR.log_b)
    oc = (big_a**h - 1) / (big_a**h - big_b**h)
    p_h1, _ = ANCHOR.wald_approximations(p)
    assert p_h1 == pytest.approx(1 - oc, abs=1e-12)
    # decreasing OC in p: more evidence for H1 as p grows
    probs = [ANCHOR.wald_approximations(q)[0] for q in (0.3, 0.45, 0.55, 0.6, 0.7)]
    assert probs == sorted(probs)


@pytest.mark.parametrize(
    ("args", "param"),
    [
        ((0.0, 0.6, 0.05, 0.1), "p0"),
        ((0.5, 1.0, 0.05, 0.1), "p1"),
        ((0.5, 0.5, 0.05, 0.1), "p1"),
        ((0.5, 0.6, 0.5, 0.1), "alpha"),
        ((0.5, 0.6, 0.05, 0.0), "beta"),
        ((0.5, 0.6, float("nan"), 0.1), "alpha"),
        ((0.5, True, 0.05, 0.1), "p1"),
    ],
)
def test_bad_design(args: tuple, param: str) -> None:
    with pytest.raises(InputError, match=param):
        BernoulliSPRT(*args)


def test_bad_call_arguments() -> None:
    with pytest.raises(InputError, match="n_max"):
        ANCHOR.exact_operating_characteristics(0.5, n_max=0)
    with pytest.raises(InputError, match="'p'"):
        ANCHOR.exact_operating_characteristics(1.2)
    with pytest.raises(InputError, match="outcomes"):
        ANCHOR.run(np.array([0, 1, 1]))
    with pytest.raises(InputError, match="outcomes"):
        ANCHOR.run(np.array([[0, 2]]))
