"""Calibration of "how many more roots": in repeated studies the realised extra roots fall below
the printed q10 about 10 % of the time and above the printed q90 about 10 % of the time.

Each trial draws a study from a known world (4 judges in both orders, 2 humans on 75 % of the
roots, latent and stream correlation), keeps it only while its first 150 roots leave the
registered track INCONCLUSIVE (the only case the plan is printed for), prints the plan from those
150 roots (:func:`roots_to_go`, bootstrap worlds), then reads the same world on and records the
realised extra roots (beyond the horizon counts as beyond every finite quantile). Seeded.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from verdictpack._rng import stream
from verdictpack.config._blocks import PanelSpec
from verdictpack.core._hinterval import classify_codes
from verdictpack.core._mixture import MixtureSpec
from verdictpack.core._tracker import BatchHTracker
from verdictpack.simulate._continuation import roots_to_go
from verdictpack.simulate._draw import (
    simulate_panel,
)
from verdictpack.simulate._judges import (
    Panel,
    TruthScenario,
    solve_effect_scale,
)
from verdictpack.simulate._panels import build_panel

SPEC = MixtureSpec()
JUDGES, HUMANS, COVERAGE, HUMAN_RATE = 4, 2, 0.75, 0.5
THRESHOLD, PER_TAIL_ALPHA, CONSTRUCTION = 0.3, 0.0025, "hybrid"
OBSERVED = 150


def _world(true_h: float) -> tuple[Panel, TruthScenario]:
    panel = build_panel(
        PanelSpec.model_validate(
            {
                "name": "world",
                "latent_correlation": 0.2,
                "judges": [
                    {
                        "name": f"j{k}",
                        "role": "judge",
                        "baseline_rate": HUMAN_RATE,
                        "lean_h": 1.5,
                        "noise": 0.1,
                        "position_bias": 0.05,
                        "cost_per_judgment": 0.0,
                    }
                    for k in range(JUDGES)
                ],
            }
        )
    )
    scale = solve_effect_scale(panel, HUMAN_RATE, true_h)
    return panel, TruthScenario(name="world", effect_scale=scale, stream_correlation=0.3)


def _tails(true_h: float, trials: int, replicates: int, cap: int, seed: int) -> tuple[float, float]:
    """(share of trials whose realised extra roots fall below the printed q10, above q90)."""
    panel, scenario = _world(true_h)
    ms = np.arange(2 * JUDGES + 1) / (2 * JUDGES)
    hs = np.arange(HUMANS + 1) / HUMANS
    below = above = kept = 0
    k = 0
    while kept < trials:
        rng = stream(seed, f"tests/calibration/{true_h}/{k}")
        k += 1
        mc, hc = simulate_panel(panel, scenario, HUMAN_RATE, HUMANS, OBSERVED + cap, 1, rng)
        present = rng.random(OBSERVED + cap) < COVERAGE
        bt = BatchHTracker(1, CONSTRUCTION, PER_TAIL_ALPHA, SPEC, THRESHOLD, ms, hs)
        _, lo, hi = bt.trace(mc[0], hc[0], present)
        decided = np.flatnonzero(classify_codes(lo, hi, THRESHOLD, False) != 0)
        at = int(decided[0]) + 1 if decided.size else None
        if at is not None and at <= OBSERVED:
            continue  # a verdict within the observed roots: no plan is printed
        kept += 1
        realised = math.inf if at is None else at - OBSERVED
        m = mc[0, :OBSERVED] / (2 * JUDGES)
        h = np.where(present[:OBSERVED], hc[0, :OBSERVED] / HUMANS, np.nan)
        plan = roots_to_go(
            m,
            h,
            CONSTRUCTION,
            PER_TAIL_ALPHA,
            SPEC,
            THRESHOLD,
            panel,
            HUMAN_RATE,
            HUMANS,
            COVERAGE,
            replicates,
            cap,
            stream(seed, f"tests/calibration/plan/{true_h}/{k}"),
        )
        assert plan.method == "bootstrap"
        q10, q90 = plan.quantiles_extra_roots["q10"], plan.quantiles_extra_roots["q90"]
        below += realised < (math.inf if q10 is None else q10)
        above += realised > (math.inf if q90 is None else q90)
    return below / trials, above / trials


@pytest.mark.parametrize("true_h", [0.1, 0.45, 0.6])
def test_realised_extra_roots_fall_outside_the_printed_q10_q90_about_ten_percent(
    true_h: float,
) -> None:
    lo, hi = _tails(true_h, trials=200, replicates=100, cap=1000, seed=11)
    assert 0.05 <= lo <= 0.15, (true_h, lo, hi)
    assert 0.05 <= hi <= 0.15, (true_h, lo, hi)


@pytest.mark.parametrize("true_h", [0.1, 0.2, 0.45, 0.6])
def test_calibration_with_more_trials_and_replicates(true_h: float) -> None:
    """The fuller run (slow: see SLOW_CHECKS): 400 trials, 200 continuations each, in the
    three calibrated worlds -- true h 0.1 (a BELOW_PRACTICAL_THRESHOLD world, 0.2 under the
    threshold) and 0.45 and 0.6 (EFFECT_SUPPORTED worlds) -- and the near-threshold one, true h
    0.2 (0.1 under the threshold, about 1.5 standard errors of the estimate from the observed
    roots; about half its studies reach no verdict within 1,000 more roots). There the
    bootstrap's predictive spread is too wide on the short side: the realised extra roots fell
    below q10 in 1-6.5 % of trials across seeds (docs/statistics.md §16), so that world's lower
    tail is held only to at most 15 %."""
    lo, hi = _tails(true_h, trials=400, replicates=200, cap=1500, seed=12)
    assert (0.0 if true_h == 0.2 else 0.05) <= lo <= 0.15, (true_h, lo, hi)
    assert 0.05 <= hi <= 0.15, (true_h, lo, hi)
