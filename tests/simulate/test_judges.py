"""Tests of the judge character-sheet model (verdictpack.simulate._judges).

Statistical checks are seeded and compare a simulated quantity with its exact value within four
Monte Carlo standard errors (MCSE computed from the simulated data or the exact Bernoulli
variance). Exact references are computed independently here (scipy's multivariate normal CDF,
the formulas of the module docstring written out again).
"""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy.stats import multivariate_normal

from verdictpack._errors import InputError
from verdictpack._rng import stream
from verdictpack.simulate import _draw as draw
from verdictpack.simulate import _judges as jm
from verdictpack.simulate._draw import (
    simulate_choices,
    simulate_panel,
)
from verdictpack.simulate._evidence import SimulatedPanelSource
from verdictpack.simulate._judges import (
    SCENARIO_NAMES,
    JudgeSheet,
    Panel,
    TruthScenario,
    effective_panel_size,
    judge_rates,
    make_scenario,
    panel_cost_per_root,
    reachable_h_range,
    solve_effect_scale,
    stream_moments,
    touches_per_root,
    true_rates,
)
from verdictpack.stimuli import Stimulus

Z4 = 4.0  # tolerance in Monte Carlo standard errors


def phi(p: float) -> float:
    return 2.0 * math.asin(math.sqrt(p))


def sheet(
    name: str, b: float = 0.5, lean: float = 0.3, noise: float = 0.1, **kw: float
) -> JudgeSheet:
    return JudgeSheet(name, "test judge", b, lean, noise, **kw)


def three_panel(rho: float = 0.3, rho_o: float | None = 0.6) -> Panel:
    return Panel(
        (
            sheet("alpha", 0.50, 0.30, 0.10, position_bias=0.05, cost_per_judgment=0.002),
            sheet("beta", 0.58, 0.20, 0.30, position_bias=0.00, cost_per_judgment=0.010),
            sheet("gamma", 0.42, 0.25, 0.20, position_bias=0.12, cost_per_judgment=0.0),
        ),
        latent_correlation=rho,
        order_correlation=rho_o,
    )


def mvn_joint(a: float, b: float, r: float) -> float:
    """P(X < a, Y < b), standard bivariate normal with correlation r (scipy reference)."""
    cov = [[1.0, r], [r, 1.0]]
    return float(multivariate_normal.cdf([a, b], cov=cov, rng=np.random.default_rng(0)))


def expected_latent_corr(panel: Panel, x: int, y: int) -> float:
    """The documented latent correlation between judgments k = 2j + o."""
    if x == y:
        return 1.0
    if x // 2 == y // 2:
        return panel.within_judge_correlation
    return panel.latent_correlation


def check_within(sim: float, exact_value: float, mcse: float, what: str) -> None:
    assert mcse > 0.0, what
    assert abs(sim - exact_value) <= Z4 * mcse, (
        f"{what}: simulated {sim:.6f} vs exact {exact_value:.6f}, "
        f"{abs(sim - exact_value) / mcse:.2f} MCSE"
    )


# ------------------------------------------------------------------------------------------
# the rate formula
# ------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("b", "lean", "noise", "s", "shift"),
    [
        (0.5, 0.3, 0.1, 0.0, 0.0),
        (0.3, 0.5, 0.0, 1.2, 0.0),
        (0.7, -0.4, 0.25, 2.0, 0.15),
        (0.9, 1.0, 0.2, 5.0, 0.0),  # clamps at π
        (0.1, -1.0, 0.4, 5.0, 0.0),  # clamps at 0
    ],
)
def test_rate_formula_and_clamp(
    b: float, lean: float, noise: float, s: float, shift: float
) -> None:
    judge = sheet("j", b, lean, noise)
    angle = min(max(phi(b) + s * lean + shift, 0.0), math.pi)
    expected = 0.5 + (1.0 - noise) * (math.sin(angle / 2.0) ** 2 - 0.5)
    assert judge.rate(s, shift) == pytest.approx(expected, abs=1e-15)
    if phi(b) + s * lean + shift >= math.pi:
        assert judge.rate(s, shift) == pytest.approx(1.0 - noise / 2.0, abs=1e-15)
    if phi(b) + s * lean + shift <= 0.0:
        assert judge.rate(s, shift) == pytest.approx(noise / 2.0, abs=1e-15)


@settings(derandomize=True, max_examples=200, deadline=None)
@given(
    b=st.floats(0.001, 0.999),
    lean=st.floats(-5.0, 5.0),
    s=st.floats(0.0, 10.0),
    shift=st.floats(-2.0, 2.0),
)
def test_noise_one_is_exactly_chance(b: float, lean: float, s: float, shift: float) -> None:
    judge = sheet("j", b, lean, 1.0, position_bias=0.2)
    assert judge.rate(s, shift) == 0.5
    scenario = TruthScenario("t", effect_scale=s, model_shift_h=shift)
    assert judge_rates(Panel((judge,)), scenario).tolist() == [[0.7, 0.3]]


def test_noise_one_is_chance_empirically() -> None:
    panel = Panel(
        (sheet("a", 0.1, 2.0, 1.0), sheet("b", 0.9, -1.5, 1.0), sheet("c", 0.6, 0.0, 1.0)),
        latent_correlation=0.4,
    )
    scenario = TruthScenario("strong", effect_scale=3.0)
    np.testing.assert_array_equal(judge_rates(panel, scenario), 0.5)
    n = 100_000
    model, _ = simulate_choices(panel, scenario, 0.5, 1, n, stream(11, "judges/noise-one"))
    rates = model.mean(axis=0)
    mcse = math.sqrt(0.25 / n)
    for j, o in itertools.product(range(3), range(2)):
        check_within(float(rates[j, o]), 0.5, mcse, f"judge {j} order {o}")


# ------------------------------------------------------------------------------------------
# the copula
# ------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("n_judges", "rho", "rho_o"),
    [(1, 0.0, 0.7), (2, -0.2, None), (3, 0.3, 0.6), (3, -0.15, None), (4, 0.45, 0.9), (3, 0, 0)],
)
def test_latent_factor_is_the_square_root(n_judges: int, rho: float, rho_o: float | None) -> None:
    panel = Panel(tuple(sheet(f"j{i}") for i in range(n_judges)), rho, rho_o)
    sigma = panel.latent_correlation_matrix()
    d = 2 * n_judges
    for x, y in itertools.product(range(d), range(d)):
        assert sigma[x, y] == expected_latent_corr(panel, x, y)
    lam = panel.eigenvalues()
    expected = [lam[0]] + [lam[1]] * (n_judges - 1) + [lam[2]] * n_judges
    np.testing.assert_allclose(np.linalg.eigvalsh(sigma), sorted(expected), atol=1e-12)
    # the simulation applies A = Σ^{1/2} without forming it: A·I is the symmetric root of Σ
    raw = np.eye(d).reshape(n_judges, 2, d)
    applied, _ = draw._apply_factor((math.sqrt(lam[0]), math.sqrt(lam[1]), math.sqrt(lam[2])), raw)
    factor = applied.reshape(d, d)
    np.testing.assert_allclose(factor, factor.T, atol=1e-15)
    np.testing.assert_allclose(factor @ factor, sigma, atol=1e-13)


def _simulated_choice_matrix(
    panel: Panel, scenario: TruthScenario, human_rate: float, n_h: int, n: int, seed: int
) -> tuple[np.ndarray, np.ndarray]:
    model, human = simulate_choices(panel, scenario, human_rate, n_h, n, stream(seed, "judges/cop"))
    return model.reshape(n, -1).astype(np.float64), human.astype(np.float64)


@pytest.mark.parametrize(
    ("rho", "rho_o", "rho_s", "seed"),
    [(0.3, 0.6, 0.5, 1), (-0.15, None, 0.0, 2), (-0.3, 0.2, -0.4, 3)],
)
def test_copula_marginals_and_pairwise_orthants(
    rho: float, rho_o: float | None, rho_s: float, seed: int
) -> None:
    panel = three_panel(rho, rho_o)
    scenario = TruthScenario("t", effect_scale=0.8, stream_correlation=rho_s)
    human_rate, n_h, n = 0.45, 2, 200_000
    rates = judge_rates(panel, scenario).reshape(-1)
    model, human = _simulated_choice_matrix(panel, scenario, human_rate, n_h, n, seed)
    # marginals: every judge and order, every human slot
    for k in range(6):
        p = float(rates[k])
        check_within(float(model[:, k].mean()), p, math.sqrt(p * (1 - p) / n), f"latent {k}")
    for r in range(n_h):
        check_within(
            float(human[:, r].mean()), human_rate, math.sqrt(0.45 * 0.55 / n), f"human {r}"
        )
    # pairwise P(both prefer the treatment) against the exact orthant probability
    cuts = [_ppf(p) for p in rates]
    lam1 = 1.0 + panel.within_judge_correlation + 2.0 * 2 * panel.latent_correlation
    r_x = rho_s * math.sqrt(lam1 / 6.0)
    for x, y in itertools.combinations(range(6), 2):
        q = mvn_joint(cuts[x], cuts[y], expected_latent_corr(panel, x, y))
        sim = float((model[:, x] * model[:, y]).mean())
        check_within(sim, q, math.sqrt(q * (1 - q) / n), f"pair {x},{y}")
    c_h = _ppf(human_rate)
    for x in range(6):
        q = mvn_joint(cuts[x], c_h, r_x)
        check_within(float((model[:, x] * human[:, 0]).mean()), q, math.sqrt(q * (1 - q) / n), "mh")
    q = mvn_joint(c_h, c_h, rho_s**2)
    check_within(float((human[:, 0] * human[:, 1]).mean()), q, math.sqrt(q * (1 - q) / n), "hh")


def _ppf(p: float) -> float:
    from scipy.stats import norm

    return float(norm.ppf(p))


def test_zero_correlation_gives_independent_judges() -> None:
    panel = three_panel(0.0, None)
    scenario = TruthScenario("t", effect_scale=1.0)
    n = 200_000
    model, human = _simulated_choice_matrix(panel, scenario, 0.5, 2, n, 21)
    columns = np.concatenate([model, human], axis=1)
    means = columns.mean(axis=0)
    for x, y in itertools.combinations(range(columns.shape[1]), 2):
        product = float(means[x] * means[y])
        joint = float((columns[:, x] * columns[:, y]).mean())
        # the exact joint under independence is the product of the exact marginals
        exact_product = float(
            np.concatenate([judge_rates(panel, scenario).reshape(-1), [0.5, 0.5]])[[x, y]].prod()
        )
        mcse = math.sqrt(exact_product * (1 - exact_product) / n)
        check_within(joint, exact_product, mcse, f"joint {x},{y}")
        assert abs(joint - product) <= Z4 * mcse


def test_bivariate_orthant_matches_scipy() -> None:
    """Φ₂(a, b; r) = Φ(a)Φ(b) + the excess the exact moments add up."""
    for a, b, r in itertools.product(
        [-1.7, -0.3, 0.0, 0.4, 2.1], [-0.9, 0.0, 1.3], [-0.95, -0.4, 0.0, 0.3, 0.85, 0.999]
    ):
        joint = _norm_cdf(a) * _norm_cdf(b) + jm._bvn_excess(a, b, r)
        assert joint == pytest.approx(mvn_joint(a, b, r), abs=2e-6)
    prod = _norm_cdf(0.3) * _norm_cdf(0.8)
    assert jm._bvn_excess(0.3, 0.8, 1.0) == pytest.approx(_norm_cdf(0.3) - prod, abs=1e-15)
    assert jm._bvn_excess(0.3, 0.8, -1.0) == pytest.approx(
        _norm_cdf(0.3) + _norm_cdf(0.8) - 1 - prod, abs=1e-15
    )
    assert jm._bvn_excess(math.inf, 0.8, 0.5) == 0.0  # Φ₂(∞, b) = Φ(b): no excess
    assert jm._bvn_excess(-math.inf, 0.8, 0.5) == 0.0  # Φ₂(−∞, b) = 0
    # Sheppard's closed form at the origin: 1/4 + asin(r)/(2π)
    for r in (-0.9, -0.2, 0.5, 0.97):
        assert jm._bvn_excess(0.0, 0.0, r) == pytest.approx(math.asin(r) / (2 * math.pi), abs=1e-12)


def _norm_cdf(x: float) -> float:
    return 0.5 * math.erfc(-x / math.sqrt(2.0))


# ------------------------------------------------------------------------------------------
# counterbalancing and position bias
# ------------------------------------------------------------------------------------------


def test_counterbalancing_cancels_position_bias() -> None:
    panel = Panel(
        (
            sheet("first-lover", 0.5, 0.2, 0.0, position_bias=0.4),
            sheet("second-lover", 0.55, 0.1, 0.2, position_bias=0.35),
        ),
        latent_correlation=0.2,
        order_correlation=0.5,
    )
    scenario = TruthScenario("t", effect_scale=0.5)
    rates = judge_rates(panel, scenario)
    for j, judge in enumerate(panel.judges):
        assert rates[j, 0] - rates[j, 1] == pytest.approx(2 * judge.position_bias, abs=1e-15)
        assert (rates[j, 0] + rates[j, 1]) / 2 == pytest.approx(judge.rate(0.5), abs=1e-15)
    mu_m, _, _ = true_rates(panel, scenario, 0.5)
    n = 200_000
    model, _ = simulate_choices(panel, scenario, 0.5, 1, n, stream(5, "judges/position"))
    m = model.reshape(n, -1).mean(axis=1)
    check_within(float(m.mean()), mu_m, float(m.std(ddof=1)) / math.sqrt(n), "mean M")
    for j, judge in enumerate(panel.judges):
        diff = model[:, j, 0].astype(float) - model[:, j, 1]
        check_within(
            float(diff.mean()),
            2 * judge.position_bias,
            float(diff.std(ddof=1)) / math.sqrt(n),
            f"order difference {judge.name}",
        )


def test_position_bias_refused_when_rates_leave_unit_interval() -> None:
    with pytest.raises(InputError) as err:
        sheet("j", 0.8, 0.0, 0.0, position_bias=0.25)
    assert err.value.parameter == "position_bias"
    judge = sheet("j", 0.5, 1.0, 0.0, position_bias=0.3)  # fine at the null (0.2, 0.8)
    panel = Panel((judge,))
    with pytest.raises(InputError) as err:
        judge_rates(panel, TruthScenario("big", effect_scale=1.0))
    assert err.value.parameter == "position_bias"
    with pytest.raises(InputError) as err:
        simulate_panel(
            panel, TruthScenario("confounded", model_shift_h=1.0), 0.5, 1, 3, 2, stream(0, "x")
        )
    assert err.value.parameter == "position_bias"


# ------------------------------------------------------------------------------------------
# solving the effect scale, true rates, scenarios
# ------------------------------------------------------------------------------------------


PANELS = {
    "registered": three_panel(),
    "mixed-leans": Panel(
        (sheet("up", 0.5, 0.6, 0.1), sheet("down", 0.55, -0.3, 0.2), sheet("flat", 0.5, 0.0, 0.5))
    ),
    "noisy-biased": Panel(
        (sheet("n", 0.4, 0.2, 0.7, position_bias=0.1), sheet("m", 0.6, 0.5, 0.0))
    ),
    "negative": Panel((sheet("neg", 0.6, -0.5, 0.1), sheet("neg2", 0.5, -0.2, 0.0))),
}


@pytest.mark.parametrize("name", sorted(PANELS))
@pytest.mark.parametrize("human_rate", [0.5, 0.35])
def test_solve_effect_scale_hits_target(name: str, human_rate: float) -> None:
    panel = PANELS[name]
    h_lo, h_hi = reachable_h_range(panel, human_rate)
    # the solver's range agrees with a brute-force scan of s
    s_max, _ = jm._effect_domain(panel)
    scan = jm._h_of_scale(panel, phi(human_rate), np.linspace(0.0, s_max, 200_001))
    assert h_lo <= scan.min() + 1e-12 and h_hi >= scan.max() - 1e-12
    assert h_lo >= scan.min() - 1e-8 and h_hi <= scan.max() + 1e-8
    for w in (0.0, 0.13, 0.5, 0.87, 1.0):
        target = h_lo + w * (h_hi - h_lo)
        s = solve_effect_scale(panel, human_rate, target)
        assert 0.0 <= s <= s_max + 1e-12
        scenario = TruthScenario("t", effect_scale=s)
        mu_m, mu_h, h = true_rates(panel, scenario, human_rate)
        assert abs(h - target) <= 1e-10
        assert mu_h == human_rate
        assert mu_m == pytest.approx(float(judge_rates(panel, scenario).mean()), abs=1e-14)
        assert h == pytest.approx(phi(mu_m) - phi(human_rate), abs=1e-15)
        # smallest root: no smaller scale on the scan reaches the target by more than rounding
        below = scan[np.linspace(0.0, s_max, 200_001) < s - 1e-6]
        if below.size:
            h0 = float(scan[0])
            assert (
                np.all(np.sign(below - target) == np.sign(h0 - target)) or abs(h0 - target) < 1e-9
            )
    for bad in (h_lo - 0.01, h_hi + 0.01):
        with pytest.raises(InputError) as err:
            solve_effect_scale(panel, human_rate, bad)
        assert err.value.parameter == "target_h"
        assert f"{h_hi:.10g}" in str(err.value)


@pytest.mark.parametrize(
    "judges",
    [
        (sheet("flat", 0.6, 0.0, 0.0),),
        (sheet("flat", 0.6, 0.0, 0.0), sheet("chance", 0.6, 2.0, 1.0)),
    ],
)
def test_flat_panel_reaches_only_its_null(judges: tuple[JudgeSheet, ...]) -> None:
    panel = Panel(judges)
    h0 = phi(float(np.mean([j.rate() for j in judges]))) - phi(0.5)
    assert reachable_h_range(panel, 0.5) == pytest.approx((h0, h0), abs=1e-15)
    assert jm._effect_domain(panel)[0] == 0.0
    assert solve_effect_scale(panel, 0.5, h0) == 0.0
    with pytest.raises(InputError) as err:
        solve_effect_scale(panel, 0.5, h0 + 0.1)
    assert err.value.parameter == "target_h"


def test_named_scenarios() -> None:
    panel = three_panel()
    human = 0.5
    null = make_scenario("null", panel, human)
    assert (null.effect_scale, null.model_shift_h) == (0.0, 0.0)
    reg = make_scenario("registered_alternative", panel, human, threshold_h=0.3)
    assert abs(true_rates(panel, reg, human)[2] - 0.3) <= 1e-12
    above = make_scenario("above_threshold", panel, human, true_h=0.45)
    assert abs(true_rates(panel, above, human)[2] - 0.45) <= 1e-12
    conf = make_scenario("confounded", panel, human, model_shift_h=0.15)
    assert conf.effect_scale == 0.0
    mu_shift = float(np.mean([j.rate(0.0, 0.15) for j in panel.judges]))
    assert true_rates(panel, conf, human)[2] == pytest.approx(phi(mu_shift) - phi(human), abs=1e-15)
    assert true_rates(panel, conf, human)[2] > true_rates(panel, null, human)[2]
    stress = make_scenario("correlated_stress", panel, human, threshold_h=0.3)
    assert stress.effect_scale == reg.effect_scale
    assert jm.scenario_panel(panel, stress).latent_correlation == 0.5
    assert stress.stream_correlation == 0.5
    stress_null = make_scenario("correlated_stress", panel, human, stress_base="null")
    assert stress_null.effect_scale == 0.0
    assert {
        make_scenario(n, panel, human, threshold_h=0.3, true_h=0.4).name for n in SCENARIO_NAMES
    } == set(SCENARIO_NAMES)
    with pytest.raises(InputError) as err:
        make_scenario("registered-alternative", panel, human, threshold_h=0.3)
    assert err.value.parameter == "scenario"
    assert all(n in str(err.value) for n in SCENARIO_NAMES)
    with pytest.raises(InputError) as err:
        make_scenario("registered_alternative", panel, human)
    assert err.value.parameter == "threshold_h"
    with pytest.raises(InputError) as err:
        make_scenario("above_threshold", panel, human)
    assert err.value.parameter == "true_h"
    with pytest.raises(InputError) as err:  # refused whatever the threshold
        make_scenario("correlated_stress", panel, human, stress_base="alternative")
    assert err.value.parameter == "stress_base"
    with pytest.raises(InputError) as err:  # ρ = -0.3 is not PSD for 6 equicorrelated latents
        make_scenario(
            "correlated_stress",
            three_panel(0.0, None),
            human,
            stress_base="null",
            stress_latent_correlation=-0.3,
        )
    assert err.value.parameter == "latent_correlation"


def test_scenario_override_moves_simulated_correlation() -> None:
    panel = three_panel(0.0, None)
    scenario = TruthScenario("stress", effect_scale=0.5, latent_correlation=0.5)
    n = 100_000
    model, _ = _simulated_choice_matrix(panel, scenario, 0.5, 1, n, 8)
    rates = judge_rates(panel, scenario).reshape(-1)
    q = mvn_joint(_ppf(rates[0]), _ppf(rates[2]), 0.5)
    check_within(float((model[:, 0] * model[:, 2]).mean()), q, math.sqrt(q * (1 - q) / n), "0,2")


# ------------------------------------------------------------------------------------------
# PSD and argument refusals
# ------------------------------------------------------------------------------------------


@pytest.mark.parametrize("n_judges", [2, 3, 5])
def test_psd_boundary_for_equicorrelation(n_judges: int) -> None:
    judges = tuple(sheet(f"j{i}") for i in range(n_judges))
    bound = -1.0 / (2 * n_judges - 1)
    panel = Panel(judges, bound)  # exactly PSD: accepted, and simulates without NaN
    m, h = simulate_panel(panel, TruthScenario("t"), 0.5, 2, 10, 3, stream(0, "psd"))
    assert m.min() >= 0 and m.max() <= 2 * n_judges and h.max() <= 2
    with pytest.raises(InputError) as err:
        Panel(judges, bound - 1e-6)
    assert err.value.parameter == "latent_correlation"
    assert f"{bound:.6g}" in str(err.value)


@pytest.mark.parametrize(
    ("rho", "rho_o", "ok"),
    [
        (-0.47, 0.9, True),
        (-0.48, 0.9, False),
        (0.5, 0.0, True),
        (0.6, 0.0, False),
        (0.9, 1.0, True),
        (-0.5, 1.0, False),
        (0.2, -1.0, False),
        (-0.25, -0.0, True),
    ],
)
def test_psd_with_order_correlation(rho: float, rho_o: float, ok: bool) -> None:
    judges = tuple(sheet(f"j{i}") for i in range(3))
    sigma_ok = np.linalg.eigvalsh(_definition_sigma(3, rho, rho_o)).min() >= -1e-12
    if ok:
        Panel(judges, rho, rho_o)
        assert sigma_ok
    else:
        with pytest.raises(InputError) as err:
            Panel(judges, rho, rho_o)
        assert err.value.parameter == "latent_correlation"


def _definition_sigma(n: int, rho: float, rho_o: float) -> np.ndarray:
    sigma = np.full((2 * n, 2 * n), rho)
    for j in range(n):
        sigma[2 * j : 2 * j + 2, 2 * j : 2 * j + 2] = rho_o
    np.fill_diagonal(sigma, 1.0)
    return sigma


GOOD_SHEET = {
    "name": "j",
    "role": "r",
    "baseline_rate": 0.5,
    "lean_h": 0.2,
    "noise": 0.1,
    "position_bias": 0.0,
    "cost_per_judgment": 0.0,
}


@pytest.mark.parametrize(
    ("field", "value"),
    [
        ("name", ""),
        ("name", 3),
        ("role", None),
        ("baseline_rate", 0.0),
        ("baseline_rate", 1.0),
        ("baseline_rate", -0.2),
        ("baseline_rate", float("nan")),
        ("baseline_rate", True),
        ("baseline_rate", "0.5"),
        ("lean_h", float("inf")),
        ("lean_h", None),
        ("noise", -0.01),
        ("noise", 1.01),
        ("noise", float("nan")),
        ("position_bias", -0.01),
        ("position_bias", 0.51),
        ("cost_per_judgment", -1.0),
        ("cost_per_judgment", float("nan")),
    ],
)
def test_sheet_refusals(field: str, value: object) -> None:
    kwargs = dict(GOOD_SHEET, **{field: value})
    with pytest.raises(InputError) as err:
        JudgeSheet(**kwargs)  # type: ignore[arg-type]
    assert err.value.parameter == field


def test_sheet_accepts_edges() -> None:
    """Edges of the allowed region are accepted and kept exactly: the per-order rates p ± δ may
    touch 0 and 1 (a fully noisy judge sits at chance; a noiseless one at its baseline)."""
    noisy = JudgeSheet(**dict(GOOD_SHEET, noise=1.0, position_bias=0.5))  # type: ignore[arg-type]
    assert (noisy.noise, noisy.position_bias) == (1.0, 0.5)
    null = TruthScenario("null")
    assert noisy.rate() == pytest.approx(0.5)
    assert judge_rates(Panel((noisy,)), null)[0].tolist() == pytest.approx([1.0, 0.0])
    sharp = JudgeSheet(**dict(GOOD_SHEET, noise=0.0, position_bias=0.5, baseline_rate=0.5))  # type: ignore[arg-type]
    assert sharp.rate() == pytest.approx(0.5)
    assert judge_rates(Panel((sharp,)), null)[0].tolist() == pytest.approx([1.0, 0.0])
    with pytest.raises(InputError):  # one step past the edge is refused
        JudgeSheet(**dict(GOOD_SHEET, noise=0.0, position_bias=0.5, baseline_rate=0.6))  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("kwargs", "parameter"),
    [
        ({"judges": ()}, "judges"),
        ({"judges": (sheet("a"), sheet("a"))}, "judges"),
        ({"judges": ("a",)}, "judges"),
        ({"latent_correlation": 1.5}, "latent_correlation"),
        ({"latent_correlation": float("nan")}, "latent_correlation"),
        ({"latent_correlation": -0.5}, "latent_correlation"),
        ({"order_correlation": 1.5}, "order_correlation"),
        ({"order_correlation": "high"}, "order_correlation"),
    ],
)
def test_panel_refusals(kwargs: dict[str, object], parameter: str) -> None:
    full = {"judges": (sheet("a"), sheet("b")), **kwargs}
    with pytest.raises(InputError) as err:
        Panel(**full)  # type: ignore[arg-type]
    assert err.value.parameter == parameter


@pytest.mark.parametrize(
    ("kwargs", "parameter"),
    [
        ({"name": ""}, "name"),
        ({"effect_scale": -0.1}, "effect_scale"),
        ({"effect_scale": float("inf")}, "effect_scale"),
        ({"model_shift_h": float("nan")}, "model_shift_h"),
        ({"stream_correlation": 1.2}, "stream_correlation"),
        ({"latent_correlation": -1.5}, "latent_correlation"),
    ],
)
def test_scenario_refusals(kwargs: dict[str, object], parameter: str) -> None:
    with pytest.raises(InputError) as err:
        TruthScenario(**{"name": "s", **kwargs})  # type: ignore[arg-type]
    assert err.value.parameter == parameter


@pytest.mark.parametrize(
    ("kwargs", "parameter"),
    [
        ({"human_rate": 0.0}, "human_rate"),
        ({"human_rate": 1.0}, "human_rate"),
        ({"n_h": 0}, "n_h"),
        ({"n_h": 1.5}, "n_h"),
        ({"n_roots": -1}, "n_roots"),
        ({"n_replicates": -1}, "n_replicates"),
        ({"rng": 42}, "rng"),
        ({"scenario": TruthScenario("s", latent_correlation=-0.45)}, "latent_correlation"),
    ],
)
def test_simulation_refusals(kwargs: dict[str, object], parameter: str) -> None:
    args: dict[str, object] = {
        "panel": three_panel(),
        "scenario": TruthScenario("s"),
        "human_rate": 0.5,
        "n_h": 2,
        "n_roots": 5,
        "n_replicates": 2,
        "rng": stream(0, "refusal"),
        **kwargs,
    }
    with pytest.raises(InputError) as err:
        simulate_panel(**args)  # type: ignore[arg-type]
    assert err.value.parameter == parameter


def test_effective_panel_size() -> None:
    assert effective_panel_size(3, 0.0) == 3.0
    assert effective_panel_size(3, 0.5) == 1.5
    assert effective_panel_size(3, 1.0) == 1.0
    assert effective_panel_size(3, -0.2) == pytest.approx(5.0, abs=1e-12)
    assert effective_panel_size(1, 0.7) == 1.0
    for n, rho in ((3, -0.5), (2, -1.0), (3, 1.1)):
        with pytest.raises(InputError) as err:
            effective_panel_size(n, rho)
        assert err.value.parameter == "rho"
    with pytest.raises(InputError):
        effective_panel_size(0, 0.1)


def test_costs_and_touches() -> None:
    panel = three_panel()
    assert panel_cost_per_root(panel) == pytest.approx(2 * (0.002 + 0.010 + 0.0), abs=1e-15)
    assert touches_per_root(panel) == 6


# ------------------------------------------------------------------------------------------
# streams: shapes, determinism, chunking, exact moments, stream correlation
# ------------------------------------------------------------------------------------------


def test_simulate_panel_shapes_and_determinism() -> None:
    panel, scenario = three_panel(), TruthScenario("t", effect_scale=1.0, stream_correlation=0.3)
    m1, h1 = simulate_panel(panel, scenario, 0.5, 3, 40, 7, stream(9, "judges/det"))
    m2, h2 = simulate_panel(panel, scenario, 0.5, 3, 40, 7, stream(9, "judges/det"))
    assert m1.shape == h1.shape == (7, 40)
    assert m1.dtype == h1.dtype == np.int64
    np.testing.assert_array_equal(m1, m2)
    np.testing.assert_array_equal(h1, h2)
    assert m1.min() >= 0 and m1.max() <= 6 and h1.min() >= 0 and h1.max() <= 3
    m3, _ = simulate_panel(panel, scenario, 0.5, 3, 40, 7, stream(10, "judges/det"))
    assert not np.array_equal(m1, m3)
    empty_m, empty_h = simulate_panel(panel, scenario, 0.5, 3, 0, 4, stream(9, "x"))
    assert empty_m.shape == empty_h.shape == (4, 0)


def test_detail_and_choices_are_the_same_draws() -> None:
    panel, scenario = three_panel(), TruthScenario("t", effect_scale=1.0, stream_correlation=0.4)
    for seed in range(5):
        source = SimulatedPanelSource(panel, scenario, 0.5, 2, stream(seed, "judges/detail"), 1)
        detail = source.judge(
            Stimulus(id="r0", source="source", treatment="treatment", null_partner="null")
        )
        m, h = simulate_panel(panel, scenario, 0.5, 2, 1, 1, stream(seed, "judges/detail"))
        model_count = round(detail.model_value * detail.model_touches)
        human_count = sum(detail.human_choices)
        assert model_count == int(m[0, 0]) and human_count == int(h[0, 0])
        assert detail.judges == ("alpha", "beta", "gamma")
        assert detail.orders == ("treatment_first", "treatment_second")
        assert len(detail.model_choices) == 3 and len(detail.human_choices) == 2
        assert model_count == sum(sum(pair) for pair in detail.model_choices)
    model, human = simulate_choices(panel, scenario, 0.5, 2, 500, stream(3, "judges/ch"))
    m, h = simulate_panel(panel, scenario, 0.5, 2, 500, 1, stream(3, "judges/ch"))
    np.testing.assert_array_equal(model.sum(axis=(1, 2)), m[0])
    np.testing.assert_array_equal(human.sum(axis=1), h[0])


def test_chunking_is_successive_calls(monkeypatch: pytest.MonkeyPatch) -> None:
    panel, scenario = three_panel(), TruthScenario("t", effect_scale=0.7, stream_correlation=0.2)
    monkeypatch.setattr(draw, "_CHUNK_ROOTS", 2 * 30)  # two replicate rows per chunk
    big_m, big_h = simulate_panel(panel, scenario, 0.4, 2, 30, 5, stream(4, "judges/chunk"))
    rng = stream(4, "judges/chunk")
    parts = [simulate_panel(panel, scenario, 0.4, 2, 30, rows, rng) for rows in (2, 2, 1)]
    np.testing.assert_array_equal(big_m, np.vstack([p[0] for p in parts]))
    np.testing.assert_array_equal(big_h, np.vstack([p[1] for p in parts]))


@pytest.mark.parametrize(
    ("rho", "rho_o", "rho_s"), [(0.3, 0.6, 0.5), (-0.15, None, 0.7), (0.5, None, 0.0)]
)
def test_exact_moments_match_simulation(rho: float, rho_o: float | None, rho_s: float) -> None:
    panel = three_panel(rho, rho_o)
    scenario = TruthScenario("t", effect_scale=1.0, stream_correlation=rho_s)
    mom = stream_moments(panel, scenario, 0.4, 2)
    mu_m, mu_h, _ = true_rates(panel, scenario, 0.4)
    assert mom.model_mean == pytest.approx(mu_m, abs=1e-14)
    assert mom.human_mean == mu_h
    reps, n = 50, 4000
    k, hc = simulate_panel(panel, scenario, 0.4, 2, n, reps, stream(17, "judges/moments"))
    m, h = k.reshape(-1) / 6.0, hc.reshape(-1) / 2.0
    total = m.size
    dm, dh = m - mu_m, h - mu_h
    for sim_values, exact_value, what in (
        (dm**2, mom.model_variance, "Var M"),
        (dh**2, mom.human_variance, "Var H"),
        (dm * dh, mom.covariance, "Cov M H"),
    ):
        mcse = float(sim_values.std(ddof=1)) / math.sqrt(total)
        check_within(float(sim_values.mean()), float(exact_value), mcse, what)
    check_within(float(m.mean()), mu_m, math.sqrt(mom.model_variance / total), "E M")


def test_stream_correlation_sign() -> None:
    panel = three_panel(0.2, None)
    n = 200_000
    base = TruthScenario("t", effect_scale=1.0)
    for rho_s in (0.0, 0.5):
        scenario = TruthScenario("t", effect_scale=1.0, stream_correlation=rho_s)
        k, hc = simulate_panel(panel, scenario, 0.5, 2, n, 1, stream(23, "judges/streams"))
        corr = float(np.corrcoef(k[0], hc[0])[0, 1])
        mom = stream_moments(panel, scenario, 0.5, 2)
        exact_corr = mom.covariance / math.sqrt(mom.model_variance * mom.human_variance)
        if rho_s == 0.0:
            assert exact_corr == 0.0
            assert abs(corr) <= Z4 / math.sqrt(n)
        else:
            assert exact_corr > 0.1
            assert corr > Z4 / math.sqrt(n)
    assert stream_moments(panel, base, 0.5, 2).covariance == 0.0
