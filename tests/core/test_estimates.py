"""Tests of core._estimates: rates, position bias, pairwise κ, latent correlation, reader audit."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import stats

from verdictpack._errors import InputError
from verdictpack.core._agreement import cohens_kappa
from verdictpack.core._estimates import (
    PanelEstimates,
    bivariate_normal_cdf,
    clustered_rate,
    estimate_panel,
    reader_audit_from_readings,
)
from verdictpack.simulate._draw import (
    simulate_choices,
)
from verdictpack.simulate._judges import (
    JudgeSheet,
    Panel,
    null_scenario,
)


def _long(model: np.ndarray) -> tuple[np.ndarray, ...]:
    """(n_roots, J, 2) choices -> long arrays root, rater, order, value."""
    n, j, _ = model.shape
    root = np.repeat(np.arange(n), 2 * j)
    rater = np.tile(np.repeat(np.arange(j), 2), n)
    order = np.tile([0, 1], n * j)
    return root, rater, order, model.reshape(-1).astype(float)


def _est(
    root: object,
    rater: object,
    order: object,
    value: object,
    *,
    trial: object = None,
    n_raters: int | None = None,
) -> PanelEstimates:
    """estimate_panel on raters 0 .. n_raters − 1 (default: the largest rater index + 1)."""
    count = int(np.max(np.asarray(rater))) + 1 if n_raters is None else n_raters
    names = [f"r{i}" for i in range(count)]
    return estimate_panel(root, rater, order, value, names=names, trial=trial)


def _panel(rho: float, biases: tuple[float, ...] = (0.0, 0.0, 0.0)) -> Panel:
    rates = (0.6, 0.4, 0.5)
    sheets = tuple(
        JudgeSheet(f"j{i}", "judge", rates[i], 0.0, 0.0, biases[i]) for i in range(len(biases))
    )
    return Panel(sheets, rho)


# --- rates -------------------------------------------------------------------------------------


def _wilson_t(m: float, n_eff: float, roots: int) -> tuple[float, float]:
    """Wilson's score interval on n_eff with the t quantile at roots − 1 (written out here)."""
    q = stats.t.ppf(0.975, roots - 1)
    centre = (m + q * q / (2 * n_eff)) / (1 + q * q / n_eff)
    half = q / (1 + q * q / n_eff) * math.sqrt(m * (1 - m) / n_eff + q * q / (4 * n_eff**2))
    return centre - half, centre + half


def test_rate_interval_is_wilson_on_the_root_clustered_effective_count() -> None:
    # 4 roots with unequal cells; per-root sums S_i, cells n_i
    root = np.array([0, 0, 0, 1, 1, 2, 2, 2, 2, 3])
    value = np.array([1, 1, 0, 0, 0, 1, 1, 1, 0.5, 1], dtype=float)
    (r,) = _est(root, np.zeros(10, int), np.zeros(10, int), value, trial=np.arange(10)).rates
    m = value.mean()
    s = np.array([2.0, 0.0, 3.5, 1.0])
    n_i = np.array([3, 2, 4, 1])
    var = 4 / 3 * np.sum((s - m * n_i) ** 2) / 100
    n_eff = m * (1 - m) / var
    low, high = _wilson_t(m, n_eff, 4)
    assert r.n == 10 and r.n_roots == 4 and r.n_ties == 1 and r.rate == pytest.approx(m)
    assert r.ci_basis == "wilson_effective_n" and r.effective_n == pytest.approx(n_eff)
    assert r.design_effect == pytest.approx(10 * var / (m * (1 - m)))
    assert r.ci_low == pytest.approx(low, abs=1e-12) and r.ci_high == pytest.approx(high, abs=1e-12)


def test_duplicating_every_judgment_within_its_root_adds_no_information() -> None:
    rng = np.random.default_rng(3)
    base = rng.integers(0, 2, 25).astype(float)
    out = []
    for k in (1, 5):
        root = np.repeat(np.arange(25), k)
        (r,) = _est(
            root,
            np.zeros(root.size, int),
            np.zeros(root.size, int),
            np.repeat(base, k),
            trial=np.tile(np.arange(k), 25),
        ).rates
        out.append(r)
    one, five = out
    assert five.ci_low == pytest.approx(one.ci_low) and five.ci_high == pytest.approx(one.ci_high)
    assert five.effective_n == pytest.approx(one.effective_n)
    assert five.design_effect == pytest.approx(5 * one.design_effect)  # type: ignore[operator]


@pytest.mark.parametrize(
    ("value", "basis"),
    [
        ([1.0, 1.0, 1.0, 1.0], "wilson_on_roots_no_variation"),
        ([1.0, 0.0, 1.0, 0.0], "wilson_on_judgments_equal_root_means"),
    ],
)
def test_degenerate_root_means_fall_back_without_a_zero_width_interval(
    value: list[float], basis: str
) -> None:
    n_roots = 3
    root = np.repeat(np.arange(n_roots), 4)
    order = np.tile([0, 0, 1, 1], n_roots)
    trial = np.tile([0, 1, 0, 1], n_roots)
    (r,) = _est(root, np.zeros(root.size, int), order, np.tile(value, n_roots), trial=trial).rates
    assert r.ci_basis == basis
    assert r.ci_low is not None and r.ci_high is not None and r.rate is not None
    assert r.ci_low <= r.rate <= r.ci_high and r.ci_high - r.ci_low > 0.1
    if basis == "wilson_on_roots_no_variation":  # full within-root correlation assumed
        assert r.effective_n == n_roots and r.ci_high == 1.0
        assert r.ci_low == pytest.approx(_wilson_t(1.0, 3, 3)[0])
    (one,) = _est([0, 0], [0, 0], [0, 1], [1.0, 0.0]).rates
    assert one.ci_basis == "wilson_single_root" and one.effective_n == 1.0
    assert one.ci_low is not None and one.ci_high is not None and one.ci_high - one.ci_low > 0.5


def test_rate_interval_coverage_with_ties_is_nominal() -> None:
    rng = np.random.default_rng(7)
    n, reps, hits = 40, 400, 0
    probs = np.array([0.3, 0.3, 0.4])  # values 0, 0.5, 1 -> mean 0.55
    for _ in range(reps):
        value = rng.choice([0.0, 0.5, 1.0], size=n, p=probs)
        (r,) = _est(np.arange(n), np.zeros(n, int), np.zeros(n, int), value).rates
        assert r.ci_low is not None and r.ci_high is not None
        hits += r.ci_low <= 0.55 <= r.ci_high
    assert hits / reps >= 0.93


def test_clustered_rate_pools_judgments_by_root() -> None:
    root = [0, 0, 1, 1, 2, 2, 3]
    value = [1.0, 1.0, 0.0, 0.0, 1.0, 0.5, 1.0]
    r = clustered_rate(root, value)
    ref = _est(root, [0] * 7, [2] * 7, value, trial=[0, 1, 0, 1, 0, 1, 0]).rates[0]
    assert r == ref and r.n_roots == 4
    with pytest.raises(InputError, match="value"):
        clustered_rate([0, 1], [0.5, 2.0])


def test_rater_without_rows_is_reported_empty() -> None:
    out = _est([0, 1], [0, 0], [0, 1], [1.0, 0.0], n_raters=2).rates
    assert out[1].n == 0 and out[1].rate is None


# --- position bias ------------------------------------------------------------------------------


def test_position_bias_exact_case() -> None:
    # order 0: 3 of 4 prefer; order 1: 1 of 4 -> δ = (0.75 - 0.25)/2 = 0.25
    order = np.array([0, 0, 0, 0, 1, 1, 1, 1, 2])
    value = np.array([1, 1, 1, 0, 1, 0, 0, 0, 1], dtype=float)
    root = np.arange(9)
    (b,) = _est(root, np.zeros(9, int), order, value).position_biases
    assert b.bias == pytest.approx(0.25)
    assert b.n_first == 4 and b.n_second == 4
    assert b.ci_low is not None and b.ci_high is not None
    assert b.ci_low < 0.25 < b.ci_high


def test_position_bias_missing_order_is_none() -> None:
    (b,) = _est([0, 1], [0, 0], [0, 2], [1.0, 0.0]).position_biases
    assert b.bias is None and b.ci_low is None and b.rate_first == 1.0


def test_position_bias_recovered_from_simulated_judges() -> None:
    panel = _panel(0.0, (0.1, 0.0, 0.05))
    model, _ = simulate_choices(panel, null_scenario(), 0.5, 1, 4000, np.random.default_rng(11))
    out = _est(*_long(model)).position_biases
    for sheet, est in zip(panel.judges, out, strict=True):
        assert est.ci_low is not None and est.ci_high is not None
        assert est.ci_low <= sheet.position_bias <= est.ci_high


def _correlated_trials(
    rng: np.random.Generator, reps: int, n_roots: int, rate: float, bias: float, trials: int
) -> np.ndarray:
    """(reps, roots, 2 orders, trials) binary judgments of one judge: trial t on root i in order
    o prefers the treatment iff 0.5·U_i + 0.6·V_io + √0.39·E_iot < Φ⁻¹(rate ± bias), with a
    root latent U shared by every judgment on the root and a root-and-order latent V shared by
    the trials of one order (marginal rates exactly rate ± bias)."""
    u = rng.standard_normal((reps, n_roots, 1, 1))
    v = rng.standard_normal((reps, n_roots, 2, 1))
    e = rng.standard_normal((reps, n_roots, 2, trials))
    z = 0.5 * u + 0.6 * v + math.sqrt(1 - 0.25 - 0.36) * e
    cut = stats.norm.ppf([rate + bias, rate - bias])[None, None, :, None]
    return (z < cut).astype(float)


@pytest.mark.parametrize("n_roots", [30, 80, 200])
def test_clustered_intervals_cover_with_five_correlated_trials_per_order(n_roots: int) -> None:
    """1,000 seeded replicates, 5 correlated trials per order (design effect about 3): the 95 %
    intervals of the rate and the position bias cover at least 0.93 (independent binomial
    intervals covered 0.74-0.77 and 0.86-0.88 here; docs/statistics.md §15)."""
    reps, trials, rate, bias = 1000, 5, 0.7, 0.08
    x = _correlated_trials(
        np.random.default_rng(20240 + n_roots), reps, n_roots, rate, bias, trials
    )
    root = np.repeat(np.arange(n_roots), 2 * trials)
    order = np.tile(np.repeat([0, 1], trials), n_roots)
    trial = np.tile(np.arange(trials), 2 * n_roots)
    rater = np.zeros(root.size, int)
    rate_hits = bias_hits = 0
    deffs = []
    for k in range(reps):
        value = x[k].reshape(-1)
        est = _est(root, rater, order, value, trial=trial)
        (r,), (b,) = est.rates, est.position_biases
        assert r.ci_low is not None and r.ci_high is not None and r.design_effect is not None
        assert b.ci_low is not None and b.ci_high is not None
        rate_hits += r.ci_low <= rate <= r.ci_high
        bias_hits += b.ci_low <= bias <= b.ci_high
        deffs.append(r.design_effect)
    assert 2.0 < float(np.mean(deffs)) < 4.5  # the clustering is real
    assert rate_hits / reps >= 0.93
    assert bias_hits / reps >= 0.93


# --- pairwise kappa -----------------------------------------------------------------------------


def test_pairwise_kappa_matches_cohens_kappa_on_shared_keys() -> None:
    # rater 0 on roots 0..5 order 0; rater 1 on roots 0..5 order 0 plus an unmatched row
    a = [1, 0, 1, 1, 0, 0.5]
    b = [1, 0, 0, 1, 0, 0.5]
    root = list(range(6)) + list(range(6)) + [0]
    rater = [0] * 6 + [1] * 6 + [1]
    order = [0] * 12 + [1]
    value = a + b + [1.0]
    (pk,) = _est(root, rater, order, value).kappas
    ref = cohens_kappa(a, b, categories=[0.0, 0.5, 1.0])
    assert pk.n_shared == 6 and pk.kappa is not None
    assert pk.kappa.kappa == pytest.approx(ref.kappa)
    assert pk.kappa.ci_low == pytest.approx(ref.ci_low)


def test_pairwise_kappa_matches_on_trial() -> None:
    root = [0, 0, 1, 1, 0, 0, 1, 1]
    rater = [0, 0, 0, 0, 1, 1, 1, 1]
    order = [0] * 8
    trial = [0, 1, 0, 1, 0, 1, 0, 1]
    value = [1, 0, 1, 0, 1, 0, 1, 0]
    (pk,) = _est(root, rater, order, value, trial=trial).kappas
    assert pk.n_shared == 4 and pk.kappa is not None and pk.kappa.kappa == pytest.approx(1.0)


def test_pairwise_kappa_undefined_is_none() -> None:
    (pk,) = _est([0, 1, 0, 1], [0, 0, 1, 1], [0, 0, 0, 0], [1, 1, 1, 1]).kappas
    assert pk.kappa is None and pk.n_shared == 2


# --- latent correlation -------------------------------------------------------------------------


def test_bivariate_normal_cdf_against_scipy() -> None:
    for a, b, r in ((0.3, -0.2, 0.5), (-1.0, 0.4, -0.7), (0.0, 0.0, 0.9)):
        ref = stats.multivariate_normal([0, 0], [[1, r], [r, 1]]).cdf([a, b])
        assert bivariate_normal_cdf(a, b, r) == pytest.approx(ref, abs=1e-6)
    assert bivariate_normal_cdf(0.0, 0.0, 0.0) == pytest.approx(0.25)
    assert bivariate_normal_cdf(0.2, 0.5, 1.0) == pytest.approx(stats.norm.cdf(0.2))


def test_perfect_agreement_gives_rho_near_one() -> None:
    rng = np.random.default_rng(3)
    y = (rng.random(500) < 0.4).astype(float)
    n = y.size
    root = np.concatenate([np.arange(n), np.arange(n)])
    rater = np.repeat([0, 1], n)
    order = np.zeros(2 * n, int)
    lc = _est(root, rater, order, np.concatenate([y, y])).latent
    assert lc.rho is not None and lc.rho > 0.999
    assert lc.effective_size == pytest.approx(2 / (1 + lc.rho))


def test_independent_judges_give_rho_near_zero() -> None:
    panel = _panel(0.0)
    n = 3000
    model, _ = simulate_choices(panel, null_scenario(), 0.5, 1, n, np.random.default_rng(5))
    lc = _est(*_long(model)).latent
    # SE of a tetrachoric ρ at ρ = 0 is about √(p(1-p)q(1-q)) / (n φ(z_p) φ(z_q)) per order;
    # ≈ 1.6/√(2n) here; the mean over 3 pairs has SE ≤ that
    se = 1.6 / math.sqrt(2 * n)
    assert lc.rho is not None and abs(lc.rho) < 3 * se
    assert len(lc.pairs) == 3 and lc.n_raters == 3


@pytest.mark.parametrize("rho", [0.3, 0.7])
def test_known_rho_recovered_within_three_mc_se(rho: float) -> None:
    panel = _panel(rho, (0.15, 0.0, 0.2))  # position bias must not leak into ρ
    rng = np.random.default_rng(20260 + int(rho * 10))
    estimates = []
    for _ in range(8):
        model, _ = simulate_choices(panel, null_scenario(), 0.5, 1, 1500, rng)
        lc = _est(*_long(model)).latent
        assert lc.rho is not None
        estimates.append(lc.rho)
    arr = np.array(estimates)
    mc_se = arr.std(ddof=1) / math.sqrt(arr.size)
    assert abs(arr.mean() - rho) < 3 * mc_se + 1e-3


def test_constant_rater_makes_pair_uninformative() -> None:
    lc = _est([0, 1, 2, 0, 1, 2], [0, 0, 0, 1, 1, 1], [0] * 6, [1, 1, 1, 1, 0, 1]).latent
    assert lc.rho is None and lc.effective_size is None


def test_ties_leave_the_tetrachoric_pair() -> None:
    root = [0, 1, 2, 3, 0, 1, 2, 3]
    rater = [0, 0, 0, 0, 1, 1, 1, 1]
    value = [1, 0, 0.5, 1, 1, 0, 1, 0.5]
    lc = _est(root, rater, [0] * 8, value).latent
    assert lc.pairs[0].n_binary == 2


# --- validation ---------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("kwargs", "word"),
    [
        ({"order": [0, 3]}, "order[1]"),
        ({"value": [0.0, 1.5]}, "value[1]"),
        ({"value": [0.0, math.nan]}, "value[1]"),
        ({"rater": [0, -1]}, "rater[1]"),
        ({"root": [0]}, "rater"),
        ({"root": [0, 0], "order": [1, 1]}, "at most once"),
    ],
)
def test_bad_rows_are_refused(kwargs: dict[str, object], word: str) -> None:
    args: dict[str, object] = {"root": [0, 1], "rater": [0, 0], "order": [0, 1], "value": [1, 0]}
    args.update(kwargs)
    with pytest.raises(InputError, match=word.replace("[", r"\[").replace("]", r"\]")):
        _est(args["root"], args["rater"], args["order"], args["value"])


def test_estimate_panel_bundles_everything() -> None:
    panel = _panel(0.4, (0.05, 0.0, 0.1))
    model, _ = simulate_choices(panel, null_scenario(), 0.5, 1, 800, np.random.default_rng(9))
    est = estimate_panel(*_long(model), names=["j0", "j1", "j2"])
    assert est.names == ("j0", "j1", "j2")
    assert len(est.rates) == 3 and len(est.kappas) == 3 and est.latent.rho is not None
    with pytest.raises(InputError, match="distinct"):
        estimate_panel(*_long(model), names=["a", "a", "b"])
    with pytest.raises(InputError, match="n_raters"):
        estimate_panel(*_long(model), names=["a", "b"])


# --- reader audit -------------------------------------------------------------------------------


def test_reader_audit_kappa_from_double_readings() -> None:
    a = ["x", "y", "x", "z", "y", "x"]
    b = ["x", "y", "y", "z", "y", "z"]
    root, reader, cat = [], [], []
    for i, (ca, cb) in enumerate(zip(a, b, strict=True)):
        # reader ids rotate, and rows arrive out of order: reader A is the id that sorts first
        first, second = ("r1", "r2") if i % 2 else ("r0", "r3")
        root += [f"s{i}", f"s{i}"]
        reader += [second, first]
        cat += [cb, ca]
    k = reader_audit_from_readings(root, reader, cat)
    ref = cohens_kappa(a, b)
    assert k.kappa == pytest.approx(ref.kappa) and k.ci_high == pytest.approx(ref.ci_high)
    assert k.n == 6


def test_reader_audit_requires_exactly_two_readings() -> None:
    with pytest.raises(InputError, match="root 's1'"):
        reader_audit_from_readings(["s0", "s0", "s1"], ["a", "b", "a"], [1, 1, 0])
    with pytest.raises(InputError, match="root 's0'"):
        reader_audit_from_readings(
            ["s0", "s0", "s0", "s1", "s1"], ["a", "b", "c", "a", "b"], [1, 1, 0, 0, 0]
        )
    with pytest.raises(InputError, match="different readers"):
        reader_audit_from_readings(["s0", "s0", "s1", "s1"], ["a", "a", "a", "b"], [1, 1, 0, 0])
