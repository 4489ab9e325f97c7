"""Validity of the study path under missing, invalid and lost answers: every verdict's error.

Each replicate is one study's canonical table, simulated with the shapes real files have and
with the losses that break imputation: three judges with their own rates and position biases,
ties (15 %, a declared outcome scored ½), invalid answers (8 % or 30 %), one-order cells (a
judge sees ~15 % of its roots in one order only), model rows lost *by value* (a "treatment"
answer 5x as likely to be lost as another; 2 % of roots lose every model row when their panel
leans to the treatment, leaving gaps in the registered order), zero to three humans per root,
and either a declared human count (3 per root, human "treatment" votes lost by value on top) or
no declared count (humans missing at random, the assumption the report states). A per-root
difficulty is shared by judges and humans. The values go through
:func:`~verdictpack.evidence._assemble.root_values` and the roots through
:class:`~verdictpack.core._tracks.TrackTrace` -- the study's own two functions
(:func:`test_the_study_run_is_these_two_functions` holds a study run from generated files to
them).

The truth. Let m* be the mean of a valid model answer (ties ½) over judges, orders and roots
and h* the same for a human; the true effect is h = φ(m*) − φ(h*), set exactly by the generator
(no rate is clipped). A verdict is wrong when EFFECT_SUPPORTED meets h < threshold,
BELOW_PRACTICAL_THRESHOLD meets h ≥ threshold, or NO_POSITIVE_EFFECT meets h > 0. Each is
bounded by the track's error per side (2a for the corners and for the hybrid's split), at a
construct alpha of 0.25 (a = 0.0625, bound 0.125) so that errors are visible. Each track's first
verdict anywhere in the data counts (the anytime claim).

Why it holds: an unknown value is bounded both ways, so the full data's M_i and H_i lie inside
the bounds (:func:`test_the_full_data_lie_inside_the_bounds`), and each end of each stream is
computed from the side that can only move it outward. The imputations this replaces fail the
same check (:func:`test_imputation_fails_the_check_the_bounds_pass`), so the check can fail.
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pytest
from numpy.typing import NDArray

from conftest import write_tiny_study
from verdictpack._rng import stream
from verdictpack.config._blocks import build_sequential
from verdictpack.config._compiler import load_source, parse_config
from verdictpack.core._mixture import MixtureSpec
from verdictpack.core._scales import p_from_h
from verdictpack.core._tracks import TrackSettings, TrackTrace
from verdictpack.evidence._assemble import Policy, RootValues, root_values
from verdictpack.evidence._order import registered_order
from verdictpack.evidence._table import CHOICES, ORDERS, JudgmentTable
from verdictpack.kinds._study import RULES, StudyConfig, prepare_study, run_study

SEED = 20261203
THRESHOLD = 0.3
EXTENSION = 0.2
PER_TAIL_ALPHA = 0.25 / 4
BOUND = 2 * PER_TAIL_ALPHA
SPEC = MixtureSpec()
CLAIMS = {"registered": "at 0.3", "extension": "at 0.2", "comparison": "at 0.3"}

JUDGES = ("frontier", "small-open", "mid-tier")
OFFSETS = np.array([0.04, -0.04, 0.0])  # judges' rates around the panel mean (sum 0)
BIASES = np.array([0.04, 0.08, 0.06])  # + when the treatment is shown first, - second
DIFFICULTY = 0.06  # per-root shift shared by judges and humans, uniform in ±this
HUMAN_BASE = 0.45
TIES = 0.15
TREAT, NULL, TIE, INVALID = (
    CHOICES.index(c) for c in ("treatment", "null_partner", "tie", "invalid")
)
UNKNOWN = ORDERS.index("unknown")


@dataclass(frozen=True)
class Shape:
    invalid: float
    declared: bool  # humans_per_root = 3 declared (shortfalls bounded) or not (missing at random)
    one_order: float = 0.15
    loss_treatment: float = 0.15  # model rows lost by value: a "treatment" answer
    loss_other: float = 0.03  # ... and any other
    gap: float = 0.02  # roots losing every model row when their panel leans to the treatment
    human_loss_treatment: float = 0.3  # declared only: human "treatment" votes lost by value
    human_invalid: float | None = None  # the humans' invalid share (default: ``invalid``)
    base: float = HUMAN_BASE  # the humans' rate h*
    spread: float = 1.0  # scales the judges' offsets, biases and the per-root difficulty


@dataclass(frozen=True)
class Simulated:
    values: RootValues
    complete_m: NDArray[np.float64]  # M_i of the full valid answers, in the values' order
    complete_h: NDArray[np.float64]  # H_i of the same (NaN: no human on the root)
    replicate: NDArray[np.int64]  # the replicate of each root entered


def simulate(true_h: float, shape: Shape, replicates: int, roots: int, purpose: str) -> Simulated:
    """``replicates`` studies of ``roots`` roots each, as one table (root ids ``r{rep}-{i}``);
    the values come back in each replicate's registered order, replicate after replicate."""
    rng = stream(SEED, f"tests/study-validity/{purpose}")
    r, n, j = replicates, roots, len(JUDGES)
    m_star = p_from_h(shape.base, true_h)
    p_bar = (m_star - TIES / 2) / (1 - TIES)
    q_bar = (shape.base - TIES / 2) / (1 - TIES)
    k = shape.spread
    u = rng.uniform(-k * DIFFICULTY, k * DIFFICULTY, (r, n))
    sign = np.array([1.0, -1.0])
    p = p_bar + k * (OFFSETS[None, None, :, None] + sign * BIASES[None, None, :, None])
    p = p + u[:, :, None, None]
    if p.min() < 0 or p.max() > 1:  # the truth is exact only without clipping
        raise AssertionError(f"rates outside [0, 1] at true h {true_h}")
    shape4 = (r, n, j, 2)
    latent = np.where(rng.random(shape4) < TIES, TIE, np.where(rng.random(shape4) < p, TREAT, NULL))
    seen = np.where(rng.random(shape4) < shape.invalid, INVALID, latent)
    keep = np.ones(shape4, bool)
    ri, ni, ji = np.nonzero(rng.random((r, n, j)) < shape.one_order)
    keep[ri, ni, ji, rng.integers(0, 2, ri.size)] = False
    lose = np.where(latent == TREAT, shape.loss_treatment, shape.loss_other)
    keep &= rng.random(shape4) >= lose
    score = np.array([1.0, 0.0, 0.5, np.nan])
    complete_m = score[latent].reshape(r * n, -1).mean(axis=1)
    leaning = complete_m > np.median(complete_m)
    gaps = leaning & (rng.random(r * n) < 2 * shape.gap)
    keep &= ~gaps.reshape(r, n)[:, :, None, None]
    ids = np.array([f"r{a:04d}-{i:04d}" for a in range(r) for i in range(n)], dtype=object)
    rr, nn, jj, oo = np.nonzero(keep)
    flat = rr * n + nn
    count = rng.integers(0, 4, r * n)  # zero to three humans per root
    hroot = np.repeat(np.arange(r * n), count)
    hk = np.arange(hroot.size) - np.repeat(np.cumsum(count) - count, count)
    q = q_bar + u.reshape(-1)[hroot]
    h_latent = np.where(
        rng.random(hroot.size) < TIES, TIE, np.where(rng.random(hroot.size) < q, TREAT, NULL)
    )
    h_inv = shape.invalid if shape.human_invalid is None else shape.human_invalid
    h_seen = np.where(rng.random(hroot.size) < h_inv, INVALID, h_latent)
    h_keep = np.ones(hroot.size, bool)
    if shape.declared:
        h_keep = ~((h_latent == TREAT) & (rng.random(hroot.size) < shape.human_loss_treatment))
    table = JudgmentTable.from_columns(
        ids[flat].tolist() + ids[hroot[h_keep]].tolist(),
        [JUDGES[k] for k in jj.tolist()] + [f"human-{k}" for k in hk[h_keep].tolist()],
        np.r_[np.zeros(flat.size, np.int8), np.ones(int(h_keep.sum()), np.int8)],
        np.r_[oo.astype(np.int8), np.full(int(h_keep.sum()), UNKNOWN, np.int8)],
        np.r_[seen[rr, nn, jj, oo], h_seen[h_keep]].astype(np.int8),
    )
    order = [
        rid for a in range(r) for rid in registered_order(SEED, ids[a * n : (a + 1) * n].tolist())
    ]
    values = root_values(
        table, order, len(order), JUDGES, 1, Policy(), 3 if shape.declared else None
    )
    hs = np.bincount(hroot, weights=score[h_latent], minlength=r * n)
    with np.errstate(invalid="ignore", divide="ignore"):
        complete_h = np.where(count > 0, hs / np.maximum(count, 1), np.nan)
    pos = {rid: k for k, rid in enumerate(ids.tolist())}
    at = np.array([pos[rid] for rid in values.root_ids])
    return Simulated(values, complete_m[at], complete_h[at], at // n)


def _trace(
    sim: Simulated, a: int, lower: tuple[NDArray, NDArray], upper: tuple[NDArray, NDArray] | None
) -> TrackTrace:
    sel = sim.replicate == a
    m_lo, h_lo = lower[0][sel], lower[1][sel]
    kw = {} if upper is None else {"m_upper": upper[0][sel], "h_upper": upper[1][sel]}
    settings = TrackSettings(
        "hybrid", "corners", PER_TAIL_ALPHA, SPEC, THRESHOLD, EXTENSION, CLAIMS
    )
    return TrackTrace(settings, m_lo, h_lo, int(sel.sum()), **kw)


def verdicts(sim: Simulated, replicates: int, how: str = "bounds") -> dict[str, list[str]]:
    """Each replicate's first verdict anywhere in its data, per track (registered: hybrid;
    comparison: corners). ``how``: the bounds, or an imputation for the guard test."""
    v = sim.values
    out: dict[str, list[str]] = {"registered": [], "comparison": []}
    for a in range(replicates):
        if how == "bounds":
            trace = _trace(sim, a, (v.m_lo, v.h_lo), (v.m_hi, v.h_hi))
        elif how == "against_claim":  # unknowns scored model 0, human 1
            trace = _trace(sim, a, (v.m_lo, v.h_hi), None)
        else:  # "half": unknowns at ½
            trace = _trace(sim, a, (v.m, v.h), None)
        res = trace.over_all("INCONCLUSIVE")
        for name in out:
            out[name].append(res[name].verdict)
    return out


def errors(true_h: float, found: dict[str, list[str]]) -> dict[str, dict[str, float]]:
    """Per track, the share of each wrong verdict (module docstring)."""
    wrong = {
        "EFFECT_SUPPORTED": true_h < THRESHOLD,
        "BELOW_PRACTICAL_THRESHOLD": true_h >= THRESHOLD,
        "NO_POSITIVE_EFFECT": true_h > 0,
    }
    return {
        name: {v: float(np.mean([x == v for x in vs])) for v, bad in wrong.items() if bad}
        for name, vs in found.items()
    }


def _limit(replicates: int) -> float:
    return BOUND + 3 * math.sqrt(BOUND * (1 - BOUND) / replicates)


CELLS = [
    (true_h, Shape(invalid=inv, declared=dec))
    for true_h in (THRESHOLD, 0.0, 0.6)
    for inv in (0.08, 0.30)
    for dec in (True, False)
]


def _cell_id(cell: tuple[float, Shape]) -> str:
    h, s = cell
    return f"h{h}-inv{s.invalid}-{'declared' if s.declared else 'undeclared'}"


@pytest.mark.parametrize("cell", CELLS, ids=[_cell_id(c) for c in CELLS])
def test_every_verdict_within_its_bound(cell: tuple[float, Shape]) -> None:
    true_h, shape = cell
    replicates, roots = 120, 150
    sim = simulate(true_h, shape, replicates, roots, _cell_id(cell))
    c = sim.values.coverage
    # the shapes are there: ties, invalid, missing cells, gaps, partial and lost humans
    assert c.model_ties > 0 and c.model_invalid > 0 and c.model_missing_cells > 0
    assert c.gap_roots > 0 and c.roots_one_order_only > 0
    if shape.declared:
        assert c.human_missing > 0 and c.roots_without_humans_unbounded == 0
    else:
        assert c.human_missing == 0 and c.roots_without_humans_unbounded > 0
    found = errors(true_h, verdicts(sim, replicates))
    limit = _limit(replicates)
    print(f"{_cell_id(cell)}: wrong verdicts {found}, bound {BOUND}, limit {limit:.4f}")
    for track, rates in found.items():
        for verdict, rate in rates.items():
            assert rate <= limit, (track, verdict, rate)


@pytest.mark.parametrize("declared", [True, False])
def test_the_full_data_lie_inside_the_bounds(declared: bool) -> None:
    """Pointwise: whatever the unknown answers were, the full valid data's M_i and H_i lie in
    the bounds (for undeclared humans: on the roots that have one, the values the humans who
    answered give, their count missing at random)."""
    sim = simulate(THRESHOLD, Shape(invalid=0.3, declared=declared), 30, 100, "pointwise")
    v = sim.values
    assert np.all(v.m_lo <= sim.complete_m + 1e-12) and np.all(sim.complete_m <= v.m_hi + 1e-12)
    has = ~np.isnan(sim.complete_h)
    if declared:
        assert np.all(v.h_lo[has] <= sim.complete_h[has] + 1e-12)
        assert np.all(sim.complete_h[has] <= v.h_hi[has] + 1e-12)
        assert not np.isnan(v.h_lo).any()  # every root has H_i bounds under a declared count
    assert v.bounded


def test_imputation_fails_the_check_the_bounds_pass() -> None:
    """The guard: scoring unknowns against the claim (the old default) or at ½ (the old
    ``half``) gives false verdicts above the bound in the cells the issue found; the bounds do
    not. So the validity check above can fail."""
    true_h, shape = THRESHOLD, Shape(invalid=0.3, declared=True)
    replicates, roots = 80, 150
    sim = simulate(true_h, shape, replicates, roots, "guard")
    limit = _limit(replicates)
    against = errors(true_h, verdicts(sim, replicates, "against_claim"))
    print(f"against the claim at the threshold: {against}")
    assert against["registered"]["BELOW_PRACTICAL_THRESHOLD"] > limit
    bounded = errors(true_h, verdicts(sim, replicates))
    assert bounded["registered"]["BELOW_PRACTICAL_THRESHOLD"] <= limit
    # at a low human baseline, many unknown model answers and few unknown human ones
    low_shape = Shape(invalid=0.3, declared=False, human_invalid=0.0, base=0.12, spread=0.25)
    low = simulate(0.0, low_shape, replicates, 800, "guard-half")
    half = errors(0.0, verdicts(low, replicates, "half"))
    print(f"unknowns at ½ at h = 0: {half}")
    assert half["registered"]["EFFECT_SUPPORTED"] > limit
    assert errors(0.0, verdicts(low, replicates))["registered"]["EFFECT_SUPPORTED"] <= limit


@pytest.mark.slow
@pytest.mark.parametrize("cell", CELLS, ids=[_cell_id(c) for c in CELLS])
def test_every_verdict_within_its_bound_long(cell: tuple[float, Shape]) -> None:
    """The CI check above with 1,000 replicates of 300 roots per cell."""
    true_h, shape = cell
    replicates = 1000
    sim = simulate(true_h, shape, replicates, 300, "long-" + _cell_id(cell))
    found = errors(true_h, verdicts(sim, replicates))
    limit = _limit(replicates)
    print(f"long {_cell_id(cell)}: wrong verdicts {found}, limit {limit:.4f}")
    for track, rates in found.items():
        for verdict, rate in rates.items():
            assert rate <= limit, (track, verdict, rate)


def test_the_study_run_is_these_two_functions(tmp_path: Path) -> None:
    """A study run from generated files -- with invalid answers, a missing cell, a gap in the
    registered order and declared human shortfalls -- holds the values of root_values and the
    intervals of TrackTrace on the table it read (so the Monte Carlo above is the study path)."""
    cfg_path = write_tiny_study(tmp_path / "study", roots=40)
    cfg = json.loads(cfg_path.read_text())
    cfg["humans"] = {"judgments_per_root": 3}
    cfg["planning"] = {"replicates": 100}
    cfg["data"]["reader_audit"]["kappa_min"] = 0.1  # the instrument passes: values are the point
    cfg_path.write_text(json.dumps(cfg))
    data = cfg_path.parent / "data" / "judgments.csv"
    lines = data.read_text().splitlines()
    out = [lines[0]]
    for k, line in enumerate(lines[1:]):
        root = line.split(",")[0]
        if root == "r007" and ",model," in line:
            continue  # every model row of one root lost
        if k % 11 == 0:
            line = line.rsplit(",", 1)[0] + ",invalid"
        if k % 13 == 0 and ",model," in line:
            continue  # a missing cell
        out.append(line)
    data.write_text("\n".join(out) + "\n")
    source = load_source(cfg_path)
    config = parse_config(source, StudyConfig, RULES)
    result = run_study(config, source)
    prep = prepare_study(config, source)
    v = prep.values
    assert v.coverage.gap_roots == int("r007" in v.root_ids) and v.bounded
    assert v.coverage.human_missing == len(v.root_ids)  # two humans of three declared
    trail = result.evidence
    np.testing.assert_array_equal(trail.m_lo, v.m_lo)
    np.testing.assert_array_equal(trail.m_hi, v.m_hi)
    np.testing.assert_array_equal(trail.h_lo, v.h_lo)
    np.testing.assert_array_equal(trail.h_hi, v.h_hi)
    c = result.construct
    seq = build_sequential(config.sequential)
    settings = TrackSettings(
        "hybrid", "corners", c.per_tail_alpha, seq.spec, c.governing_threshold_h,
        c.extension_minimum_h, CLAIMS,
    )  # fmt: skip
    trace = TrackTrace(settings, v.m_lo, v.h_lo, seq.cap_roots, m_upper=v.m_hi, h_upper=v.h_hi)
    np.testing.assert_array_equal(trail.h_interval[:, 0], trace.h_lo["registered"])
    np.testing.assert_array_equal(trail.h_interval[:, 1], trace.h_hi["registered"])
    assert result.estimate.width_bounded is not None
    assert result.estimate.width_bounded > (result.estimate.width_midpoint or 0.0)
