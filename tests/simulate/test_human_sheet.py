"""The human sheet: simulated humans whose votes carry a requested between-root ICC.

Seeded Monte Carlo: with two humans per root and the rate known, the vote ICC estimate
(mean(v₁v₂) − p²)/(p(1 − p)) is unbiased with standard error sd(v₁v₂)/√N/(p(1 − p)); it must land
within 3 of them of the requested ICC (the code as it was, with no sheet, gives ρ_s²'s ICC:
0 or 0.06 here, 30 to 100 standard errors away)."""

from __future__ import annotations

import math

import numpy as np
import pytest

from verdictpack._errors import InputError
from verdictpack._rng import stream
from verdictpack.core._icc import vote_icc
from verdictpack.simulate._draw import simulate_choices, simulate_panel
from verdictpack.simulate._judges import JudgeSheet, Panel, TruthScenario, stream_moments

PANEL = Panel((JudgeSheet("a", "r", 0.4, 0.2, 0.1, 0.02), JudgeSheet("b", "r", 0.6, 0.1, 0.0)), 0.3)
ROOTS = 200_000


@pytest.mark.parametrize("rho_s", [0.0, 0.3])
@pytest.mark.parametrize("rate", [0.3, 0.5])
@pytest.mark.parametrize("icc", [0.3, 0.6])
def test_simulated_vote_icc_matches_the_sheet(icc: float, rate: float, rho_s: float) -> None:
    scenario = TruthScenario("t", effect_scale=0.5, stream_correlation=rho_s)
    rng = stream(20261203, f"tests/human-sheet/{icc}/{rate}/{rho_s}")
    _, human = simulate_choices(PANEL, scenario, rate, 2, ROOTS, rng, human_icc=icc)
    both = (human[:, 0] * human[:, 1]).astype(float)
    scale = rate * (1 - rate)
    estimate = (both.mean() - rate**2) / scale
    se = both.std() / math.sqrt(ROOTS) / scale
    assert abs(estimate - icc) <= 3 * se, (estimate, icc, se)
    rate_se = math.sqrt(scale / (2 * ROOTS))
    assert abs(human.mean() - rate) <= 3 * rate_se * math.sqrt(1 + icc)


def test_the_sheet_leaves_the_panel_and_the_draws_without_it_unchanged() -> None:
    """With an ICC the model choices are the same numbers (V is drawn after E); without one the
    draw is the code's as it was (no V): same generator state after the call as a fixed count."""
    scenario = TruthScenario("t", effect_scale=0.5, stream_correlation=0.3)
    m0, h0 = simulate_panel(PANEL, scenario, 0.4, 3, 50, 7, stream(1, "x"))
    m1, h1 = simulate_panel(PANEL, scenario, 0.4, 3, 50, 7, stream(1, "x"), 0.5)
    m2, h2 = simulate_panel(PANEL, scenario, 0.4, 3, 50, 7, stream(1, "x"), None)
    assert np.array_equal(m0, m1) and np.array_equal(m0, m2) and np.array_equal(h0, h2)
    assert not np.array_equal(h0, h1)


def test_stream_moments_carry_the_sheet() -> None:
    """Var(H_i) = p(1 − p)(1 + (n_h − 1)·ICC)/n_h exactly, ICC the sheet's."""
    scenario = TruthScenario("t", stream_correlation=0.3)
    m = stream_moments(PANEL, scenario, 0.3, 4, human_icc=0.45)
    assert float(m.human_variance) == pytest.approx(0.21 * (1 + 3 * 0.45) / 4, abs=1e-10)
    plain = stream_moments(PANEL, scenario, 0.3, 4)
    floor = vote_icc(0.3, 0.09)
    assert float(plain.human_variance) == pytest.approx(0.21 * (1 + 3 * floor) / 4, abs=1e-10)


def test_an_icc_below_what_the_stream_correlation_gives_is_refused() -> None:
    scenario = TruthScenario("t", stream_correlation=0.5)
    with pytest.raises(InputError, match=r"at least 0\.1\d+"):
        simulate_panel(PANEL, scenario, 0.5, 2, 10, 1, stream(1, "x"), 0.05)
