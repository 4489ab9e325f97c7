"""Validity of the study path on data shaped like real files: a Monte Carlo of false claims.

Each replicate is one study's canonical table, simulated with the shapes real files have: three
judges with their own rates and position biases, ties (~7 %), invalid judgments (~3 %),
unbalanced presentation orders (a judge sees ~15 % of its roots in one order only), humans on
~60 % of the roots, one to three humans per root, and a per-root difficulty shared by judges and
humans. The values go through :func:`~verdictpack.evidence._assemble.root_values` (the study's
default policy) and the roots, in the registered order, through
:class:`~verdictpack.core._tracks.TrackRun` (not the CLI: speed).

The truth. Let m* be the mean score of a *valid* model judgment (ties half) over judges, orders
and roots, and h* the same for a human judgment; the true effect is h = φ(m*) − φ(h*). The
tracker's guarantee is about the streams it reads: P(h_lo ever exceeds φ(E M_i) − φ(E H_i)) <=
error_per_side, so P(EFFECT_SUPPORTED) <= error_per_side whenever φ(E M_i) − φ(E H_i) <= the
threshold.

Why the policy keeps validity. Scoring an invalid or missing model cell 0 replaces a value in
[0, 1] by the smallest one, so M_i can only fall below the M_i of the complete valid data; scoring
an invalid or missing human judgment 1 can only raise H_i. So E M_i <= m*, E H_i >= h* and, φ
being increasing, φ(E M_i) − φ(E H_i) <= h: whenever the true h is at or below the threshold the
streams are too, and the bound holds. (Humans on a random subset of roots, in any number, leave
E H_i = h*: which roots carry humans does not depend on their values.) The pointwise inequality
is checked directly below, against the complete data the simulation knows; the Monte Carlo
checks the rate. The clean scenario (ties, partial and variable humans, nothing invalid or
missing) puts the streams exactly at the threshold: the least favourable truth the bound covers.

The level: a construct alpha of 0.2, so the per-tail level is 0.05 and the hybrid's bound
(error_per_side, read from the tracker) is 0.1. An anytime-valid bound is conservative at these
horizons (the rate observed at the threshold is far below it), so the rate check guards against
gross failures only; the paired check -- the policy claims the effect on no replicate where the
complete data would not -- carries the pointwise argument through the trackers themselves.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import pytest
from numpy.typing import NDArray

from verdictpack._rng import stream
from verdictpack.core._mixture import MixtureSpec
from verdictpack.core._scales import p_from_h, phi
from verdictpack.core._tracks import TrackRun
from verdictpack.evidence._assemble import Policy, RootValues, root_values
from verdictpack.evidence._order import registered_order
from verdictpack.evidence._table import CHOICES, ORDERS, JudgmentTable

SEED = 20261201
THRESHOLD = 0.3
EXTENSION = 0.2
CONSTRUCT_ALPHA = 0.2
PER_TAIL_ALPHA = CONSTRUCT_ALPHA / 4  # the construct's per-tail level (alpha / 4)
SPEC = MixtureSpec()
CLAIMS = {"registered": "at 0.3", "extension": "at 0.2", "comparison": "at 0.3"}

JUDGES = ("frontier", "small-open", "mid-tier")
OFFSETS = np.array([0.05, -0.06, 0.01])  # judges' rates around the panel mean (sum 0)
BIASES = np.array([0.06, 0.12, 0.09])  # + when the treatment is shown first, - second
HUMAN_BASE = 0.45
TREAT, NULL, TIE, INVALID = (
    CHOICES.index(c) for c in ("treatment", "null_partner", "tie", "invalid")
)
UNKNOWN = ORDERS.index("unknown")


@dataclass(frozen=True)
class Shape:
    ties: float = 0.07
    invalid: float = 0.03
    one_order: float = 0.15
    coverage: float = 0.6
    max_humans: int = 3


REAL = Shape()
CLEAN = Shape(invalid=0.0, one_order=0.0)


@dataclass(frozen=True)
class Simulated:
    values: RootValues
    complete_m: NDArray[np.float64]  # M_i of the complete valid data (no invalid, no missing)
    complete_h: NDArray[np.float64]  # H_i of the same humans' valid answers (NaN: no humans)
    m_star: float
    h_star: float


def simulate(
    true_h: float,
    shape: Shape,
    replicates: int,
    roots: int,
    purpose: str,
    humans_per_root: int | None = None,
) -> Simulated:
    """``replicates`` studies of ``roots`` roots each, as one table (root ids ``r{rep}-{i}``);
    the values come back in each replicate's registered order, replicate after replicate."""
    rng = stream(SEED, f"tests/study-validity/{purpose}")
    r, n, j, t = replicates, roots, len(JUDGES), shape.ties
    m_star = p_from_h(HUMAN_BASE, true_h)
    p_bar = (m_star - t / 2) / (1 - t)
    q_bar = (HUMAN_BASE - t / 2) / (1 - t)
    u = rng.uniform(-0.08, 0.08, (r, n))  # per-root difficulty, shared
    sign = np.array([1.0, -1.0])
    p = p_bar + OFFSETS[None, None, :, None] + u[:, :, None, None]
    p = np.clip(p + sign * BIASES[None, None, :, None], 0.0, 1.0)
    shape4 = (r, n, j, 2)
    latent = np.where(rng.random(shape4) < t, TIE, np.where(rng.random(shape4) < p, TREAT, NULL))
    seen = np.where(rng.random(shape4) < shape.invalid, INVALID, latent)
    keep = np.ones(shape4, bool)
    ri, ni, ji = np.nonzero(rng.random((r, n, j)) < shape.one_order)
    keep[ri, ni, ji, rng.integers(0, 2, ri.size)] = False
    ids = np.array([f"r{a:04d}-{i:04d}" for a in range(r) for i in range(n)], dtype=object)
    rr, nn, jj, oo = np.nonzero(keep)
    flat = rr * n + nn
    # humans: on a random ~coverage of the roots, 1..max_humans each
    count = rng.integers(1, shape.max_humans + 1, r * n) * (rng.random(r * n) < shape.coverage)
    hroot = np.repeat(np.arange(r * n), count)
    hk = np.arange(hroot.size) - np.repeat(np.cumsum(count) - count, count)
    q = np.clip(q_bar + u.reshape(-1)[hroot], 0.0, 1.0)
    h_latent = np.where(
        rng.random(hroot.size) < t, TIE, np.where(rng.random(hroot.size) < q, TREAT, NULL)
    )
    h_seen = np.where(rng.random(hroot.size) < shape.invalid, INVALID, h_latent)
    table = JudgmentTable.from_columns(
        ids[flat].tolist() + ids[hroot].tolist(),
        [JUDGES[k] for k in jj.tolist()] + [f"human-{k}" for k in hk.tolist()],
        np.r_[np.zeros(flat.size, np.int8), np.ones(hroot.size, np.int8)],
        np.r_[oo.astype(np.int8), np.full(hroot.size, UNKNOWN, np.int8)],
        np.r_[seen[rr, nn, jj, oo], h_seen].astype(np.int8),
    )
    order = [
        rid for a in range(r) for rid in registered_order(SEED, ids[a * n : (a + 1) * n].tolist())
    ]
    values = root_values(table, order, len(order), JUDGES, 1, Policy(), humans_per_root)
    # the complete valid data, in the same order
    score = np.array([1.0, 0.0, 0.5, np.nan])  # treatment, null, tie (half); never invalid
    cm = score[latent].reshape(r * n, -1).mean(axis=1)
    hs = np.bincount(hroot, weights=score[h_latent], minlength=r * n)
    with np.errstate(invalid="ignore", divide="ignore"):
        ch = np.where(count > 0, hs / np.maximum(count, 1), np.nan)
    pos = {rid: k for k, rid in enumerate(ids.tolist())}
    at = np.array([pos[rid] for rid in values.root_ids])
    return Simulated(values, cm[at], ch[at], m_star, HUMAN_BASE)


def supported(
    m: NDArray[np.float64], h: NDArray[np.float64], replicates: int, roots: int
) -> tuple[dict[str, NDArray[np.bool_]], float]:
    """Per replicate, whether the registered (and the comparison) track says EFFECT_SUPPORTED,
    with the registered tracker's error_per_side. Each replicate runs to its registered verdict
    (at the cap: INCONCLUSIVE) and on until the comparison track has its own or the data end."""
    assert m.size == h.size == replicates * roots  # every root judged: all enter
    out = {"registered": np.zeros(replicates, bool), "comparison": np.zeros(replicates, bool)}
    bound = math.nan
    for a in range(replicates):
        run = TrackRun("hybrid", "corners", PER_TAIL_ALPHA, SPEC, THRESHOLD, EXTENSION, CLAIMS)
        bound = run.registered.error_per_side
        for i in range(roots):
            k = a * roots + i
            hk = float(h[k])
            run.step(float(m[k]), None if hk != hk else hk, at_cap=i == roots - 1)
            if run.stopped and "comparison" in run.verdicts:
                break
        res = run.results("INCONCLUSIVE")
        for name, flags in out.items():
            flags[a] = res[name].verdict == "EFFECT_SUPPORTED"
    return out, bound


def false_claims(sim: Simulated, replicates: int, roots: int) -> tuple[dict[str, float], float]:
    """The share of replicates claiming the effect, per track (see :func:`supported`)."""
    flags, bound = supported(sim.values.m, sim.values.h, replicates, roots)
    return {name: float(f.mean()) for name, f in flags.items()}, bound


def _mcse(p: float, replicates: int) -> float:
    return math.sqrt(p * (1 - p) / replicates)


def _check_rate(true_h: float, shape: Shape, replicates: int, roots: int, purpose: str) -> None:
    sim = simulate(true_h, shape, replicates, roots, purpose)
    rates, bound = false_claims(sim, replicates, roots)
    assert bound == pytest.approx(2 * PER_TAIL_ALPHA)  # the hybrid's 4·(a/4) + a
    limit = bound + 3 * _mcse(bound, replicates)
    print(f"{purpose}: false EFFECT_SUPPORTED {rates}, bound {bound}, limit {limit:.4f}")
    assert rates["registered"] <= limit, (rates, bound)
    assert rates["comparison"] <= limit, (rates, bound)


@pytest.mark.parametrize("humans_per_root", [None, 3])
def test_policy_only_lowers_m_and_raises_h(humans_per_root: int | None) -> None:
    """Pointwise: M_i <= the complete valid data's M_i, H_i >= its H_i (docstring)."""
    sim = simulate(THRESHOLD, REAL, 40, 100, "pointwise", humans_per_root)
    v = sim.values
    assert np.all(v.m <= sim.complete_m + 1e-12)
    has = ~np.isnan(v.h)
    np.testing.assert_array_equal(has, ~np.isnan(sim.complete_h))
    assert np.all(v.h[has] >= sim.complete_h[has] - 1e-12)
    # and strictly so on average: the real shapes cost the claim something
    assert v.m.mean() < sim.complete_m.mean() - 0.02
    assert v.h[has].mean() > sim.complete_h[has].mean() + 0.005
    # the shapes are there: ties, invalid, one-order roots, partial and variable humans
    c = v.coverage
    assert c.model_ties > 0 and c.model_invalid > 0 and c.model_missing_cells > 0
    assert c.roots_one_order_only > 0.3 * c.roots_entered
    assert 0.5 < c.roots_with_humans / c.roots_entered < 0.7
    assert set(np.unique(v.human_judgments[has]).tolist()) == {1, 2, 3}
    if humans_per_root is not None:
        assert c.human_missing > 0


def test_clean_shape_puts_the_streams_at_the_truth() -> None:
    """Without invalid or missing cells the values equal the complete data's: the streams sit
    at the threshold when the truth does (the sharpest case for the bound)."""
    sim = simulate(THRESHOLD, CLEAN, 40, 100, "clean-pointwise")
    v = sim.values
    np.testing.assert_array_equal(v.m, sim.complete_m)
    np.testing.assert_array_equal(v.h, sim.complete_h)
    stream_h = phi(float(v.m.mean())) - phi(float(np.nanmean(v.h)))
    assert stream_h == pytest.approx(THRESHOLD, abs=0.05)
    assert sim.m_star == pytest.approx(p_from_h(HUMAN_BASE, THRESHOLD))


@pytest.mark.parametrize(("shape", "purpose"), [(REAL, "real-at"), (CLEAN, "clean-at")])
def test_false_supported_rate_at_the_threshold(shape: Shape, purpose: str) -> None:
    _check_rate(THRESHOLD, shape, 150, 120, purpose)


def test_policy_claims_only_where_the_complete_data_would() -> None:
    """Paired, replicate by replicate: the values under the policy never claim the effect on a
    replicate where the complete valid data would not -- the pointwise inequalities carried
    through the trackers, whose bounds are monotone in the observations. Run where the truth
    (h = 0.6) makes claims common, so the inclusion is tested on many replicates."""
    replicates, roots = 60, 200
    sim = simulate(0.6, REAL, replicates, roots, "paired")
    policy, _ = supported(sim.values.m, sim.values.h, replicates, roots)
    oracle, _ = supported(sim.complete_m, sim.complete_h, replicates, roots)
    rates = {k: (float(policy[k].mean()), float(oracle[k].mean())) for k in policy}
    print(f"paired at h = 0.6 (policy, complete data): {rates}")
    for name in policy:
        assert not np.any(policy[name] & ~oracle[name]), name
    assert oracle["registered"].sum() >= 20  # the inclusion is exercised
    assert policy["registered"].sum() < oracle["registered"].sum()  # the shapes cost power


def test_power_sanity_well_above_the_threshold() -> None:
    """The same pipeline is not trivially silent: at h = 0.9 it does claim the effect."""
    replicates, roots = 60, 300
    sim = simulate(0.9, REAL, replicates, roots, "power")
    rates, _ = false_claims(sim, replicates, roots)
    print(f"power at h = 0.9: EFFECT_SUPPORTED {rates}")
    assert rates["registered"] >= 0.5, rates


@pytest.mark.slow
@pytest.mark.parametrize(
    ("true_h", "shape", "purpose"),
    [
        (THRESHOLD, REAL, "slow-real-at"),
        (THRESHOLD, CLEAN, "slow-clean-at"),
        (THRESHOLD - 0.15, REAL, "slow-real-below"),
        (THRESHOLD - 0.15, CLEAN, "slow-clean-below"),
    ],
)
def test_false_supported_rate_long(true_h: float, shape: Shape, purpose: str) -> None:
    _check_rate(true_h, shape, 1000, 250, purpose)
