"""How many more roots would settle an INCONCLUSIVE study: simulated continuations.

The observed prefix (the study's M_i and H_i in the registered order) is fed to one replicate
of the registered track's compiled tracker, whose state is then copied to R replicates; each
replicate continues with roots drawn from the panel the data show (the fitted character sheets
at their estimated rates, humans at their observed rate and coverage) until it reaches a verdict
or ``max_extra_roots`` more roots. The answer is simulated, labelled so, with its Monte Carlo
standard error: it is a planning figure under the fitted sheets, not a guarantee.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray

from verdictpack._results import Quantity, simulated
from verdictpack._validate import int_at_least
from verdictpack.core._hinterval import VERDICT_CODES
from verdictpack.core._mixture import MixtureSpec
from verdictpack.core._tracker import BatchHTracker
from verdictpack.simulate._judges import Panel, TruthScenario, simulate_panel

__all__ = ["RootsToGo", "roots_to_go"]

_BLOCK = 256


@dataclass(frozen=True)
class RootsToGo:
    """The simulated continuation of an INCONCLUSIVE registered track."""

    roots_observed: int
    replicates: int
    max_extra_roots: int
    human_rate: float
    human_coverage: float
    humans_per_root: int
    p_verdict: Quantity
    median_extra_roots: Quantity | None
    quantiles_extra_roots: dict[str, int | None]
    verdicts: dict[str, Quantity]


def _support(observed: NDArray[np.float64], grid: NDArray[np.float64]) -> NDArray[np.float64]:
    return np.unique(np.concatenate([observed, grid]))


def roots_to_go(
    prefix_m: NDArray[np.float64],
    prefix_h: NDArray[np.float64],
    construction: str,
    alpha: float,
    spec: MixtureSpec,
    threshold: float,
    panel: Panel,
    human_rate: float,
    humans_per_root: int,
    human_coverage: float,
    replicates: int,
    max_extra_roots: int,
    rng: np.random.Generator,
    effect_scale: float = 0.0,
) -> RootsToGo:
    """Continue the observed prefix (NaN in ``prefix_h``: no human judgment) ``replicates``
    times under ``panel`` at ``effect_scale`` (1 for a panel fitted relative to the humans'
    rate, whose observed world is scale 1; module docstring)."""
    r = int_at_least("replicates", replicates, 2)
    cap = int_at_least("max_extra_roots", max_extra_roots, 1)
    n_h = int_at_least("humans_per_root", humans_per_root, 1)
    j = panel.n_judges
    m_grid = np.arange(2 * j + 1) / (2 * j)
    h_grid = np.arange(n_h + 1) / n_h
    has_h = ~np.isnan(prefix_h)
    ms = _support(prefix_m, m_grid)
    hs = _support(prefix_h[has_h], h_grid)
    bt = BatchHTracker(r, construction, alpha, spec, threshold, ms, hs)
    m_idx = np.searchsorted(ms, prefix_m)
    h_idx = np.where(has_h, np.searchsorted(hs, np.where(has_h, prefix_h, 0.0)), 0)
    first = np.zeros(r, bool)
    first[0] = True
    zeros = np.zeros(r, np.int64)
    for mi, hi, present in zip(m_idx.tolist(), h_idx.tolist(), has_h.tolist(), strict=True):
        mv = zeros.copy()
        mv[0] = mi
        hv = zeros.copy()
        hv[0] = hi
        bt.update(mv, hv, first & present, first)
    bt.spread_first()
    m_sim_idx = np.searchsorted(ms, m_grid)
    h_sim_idx = np.searchsorted(hs, h_grid)
    scenario = TruthScenario(name="fitted sheets", effect_scale=effect_scale)
    rate = min(max(human_rate, 1e-6), 1.0 - 1e-6)
    decided_at = np.full(r, -1, np.int64)
    codes = np.zeros(r, np.int8)
    open_ = np.ones(r, bool)
    done = 0
    while done < cap and open_.any():
        block = min(_BLOCK, cap - done)
        mc, hc = simulate_panel(panel, scenario, rate, n_h, block, r, rng)
        present = rng.random((r, block)) < human_coverage
        for t in range(block):
            bt.update(m_sim_idx[mc[:, t]], h_sim_idx[hc[:, t]], present[:, t], open_)
            now = bt.verdict_codes()
            new = open_ & (now != 0)
            if new.any():
                decided_at[new] = done + t + 1
                codes[new] = now[new]
                open_ &= ~new
                if not open_.any():
                    break
        done += block
    reached = decided_at > 0
    p = float(reached.mean())
    mcse = math.sqrt(max(p * (1 - p), 1.0 / r) / r)
    ordered = np.sort(np.where(reached, decided_at, np.iinfo(np.int64).max))

    def quantile(q: float) -> int | None:
        k = min(r - 1, max(0, math.ceil(q * r) - 1))
        v = int(ordered[k])
        return None if v == np.iinfo(np.int64).max else v

    median = quantile(0.5)
    median_q = None
    if median is not None:
        # MCSE of the median from the order statistics of a binomial band (about +-1 sd)
        half = math.sqrt(r * 0.25)
        lo = ordered[max(0, math.floor(r / 2 - half))]
        hi = ordered[min(r - 1, math.ceil(r / 2 + half))]
        spread = float(hi - lo) / 2.0 if hi != np.iinfo(np.int64).max else float(cap - median) / 2.0
        median_q = simulated(median, spread, r)
    verdicts = {}
    for code, v in enumerate(VERDICT_CODES):
        if v is None or code == 5:
            continue
        share = float((codes == code).mean())
        verdicts[v.value] = simulated(share, math.sqrt(max(share * (1 - share), 1.0 / r) / r), r)
    return RootsToGo(
        roots_observed=int(prefix_m.size),
        replicates=r,
        max_extra_roots=cap,
        human_rate=float(rate),
        human_coverage=float(human_coverage),
        humans_per_root=n_h,
        p_verdict=simulated(p, mcse, r),
        median_extra_roots=median_q,
        quantiles_extra_roots={
            f"q{int(q * 100)}": quantile(q) for q in (0.1, 0.25, 0.5, 0.75, 0.9)
        },
        verdicts=verdicts,
    )
