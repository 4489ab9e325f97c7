"""Operating characteristics of every route, by vectorised simulation along a replicate axis.

One function, :func:`run_cells`, runs fixed-size blocks of independent replicates of the whole
design under truth scenarios, and every route sees the *same* simulated roots (common random
numbers), so the routes and the two e-process constructions are compared on the same seeds:

* ``eprocess`` (one entry per construction, the registered one first): roots stream into the
  :class:`~verdictpack.core._tracker.BatchHTracker`; a replicate stops at its first verdict or
  at the
  cap. Anytime-valid: the error bound holds whatever the stopping rule.
* ``sprt``: Wald's SPRT on the model judgments (p0 = the human baseline, taken as known; p1 = the
  rate at the governing threshold; alpha = the per-side error 2 x per-tail alpha, beta from the
  config), checked after each root (a grouped SPRT), truncated at the cap (truncation =
  INCONCLUSIVE). Valid only at its designed stopping discipline and under independent judgments.
* ``fixed_n``: one look at the planned n roots (the two-proportion size at the governing
  threshold), a one-sided paired t test of D_i = M_i - H_i at the per-side alpha. Valid at that n
  only; it tests h > 0, not h >= threshold.

Blocks are the unit of parallel work and of the RNG policy (one ``SeedSequence`` child per block),
so the assembled arrays -- and every statistic computed from them -- do not depend on how many
workers ran the blocks or where.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray

from verdictpack._parallel import map_in_threads
from verdictpack._results import Quantity, simulated
from verdictpack.config._blocks import SequentialSettings
from verdictpack.config._compiler import Construct
from verdictpack.core._hinterval import VERDICT_CODES
from verdictpack.core._sprt import BernoulliSPRT
from verdictpack.core._tracker import BatchHTracker
from verdictpack.simulate._draw import (
    chunk_rows,
    simulate_panel,
)
from verdictpack.simulate._judges import (
    Panel,
    TruthScenario,
    panel_cost_per_root,
    scenario_panel,
    touches_per_root,
    true_rates,
)

__all__ = [
    "BATCH_BYTES",
    "EPROCESS_VERDICTS",
    "BlockOutcome",
    "Cell",
    "RouteDesign",
    "RouteOC",
    "ScenarioOC",
    "eprocess_scored_wrong",
    "eprocess_wrong",
    "mean_quantity",
    "merge_blocks",
    "quantile_quantity",
    "ratio_quantity",
    "replicate_bytes",
    "run_cells",
    "share_quantity",
    "summarize",
    "two_way_wrong",
]

EPROCESS_VERDICTS = tuple(v.value for v in VERDICT_CODES[1:5] if v is not None)
SPRT_VERDICTS = ("EFFECT", "NO_EFFECT", "INCONCLUSIVE")
FIXED_VERDICTS = ("EFFECT", "NO_EFFECT")
QUANTILES = (0.5, 0.9, 0.99)


@dataclass(frozen=True)
class RouteDesign:
    """Everything a replicate needs: construct, panel, human stream, routes and costs."""

    construct: Construct
    panel: Panel
    human_judgments_per_root: int
    human_cost_per_judgment: float
    sequential: SequentialSettings
    sprt_beta: float
    fixed_n: int
    fixed_human_touches: int = 0
    fixed_human_cost: float = 0.0
    # the humans' rate in the simulated world (None: the construct's human baseline rate)
    human_rate: float | None = None
    # score each verdict right or wrong from the world's true h (a plan from sheets: see
    # summarize) instead of from whether the scenario's effect scale is positive
    score_by_true_h: bool = False
    # the human sheet's vote ICC (None: humans share only the stream correlation's latent)
    human_icc: float | None = None

    @property
    def world_human_rate(self) -> float:
        return self.construct.human_baseline_rate if self.human_rate is None else self.human_rate

    @property
    def per_side_alpha(self) -> float:
        return 2.0 * self.construct.per_tail_alpha

    @property
    def model_touches_per_root(self) -> int:
        return touches_per_root(self.panel)

    @property
    def model_cost_per_root(self) -> float:
        return panel_cost_per_root(self.panel)

    @property
    def human_cost_per_root(self) -> float:
        return self.human_judgments_per_root * self.human_cost_per_judgment

    @property
    def horizon(self) -> int:
        return max(self.sequential.cap_roots, self.fixed_n)

    def sprt_steps(self) -> tuple[float, float, float, float]:
        """(ln A, ln B, per-success, per-failure) of the SPRT on model judgments."""
        c = self.construct
        w = BernoulliSPRT(
            c.human_baseline_rate, c.p1_at_threshold, self.per_side_alpha, self.sprt_beta
        )
        return w.log_a, w.log_b, w.step_success, w.step_failure


@dataclass(frozen=True)
class BlockOutcome:
    """Per-replicate outcomes of one block (plain arrays: cheap to pickle and merge)."""

    eprocess_codes: tuple[NDArray[np.int8], ...]
    eprocess_roots: tuple[NDArray[np.int32], ...]
    sprt_codes: NDArray[np.int8]
    sprt_roots: NDArray[np.int32]
    fixed_effect: NDArray[np.bool_]


@dataclass(frozen=True)
class Cell:
    """One block of replicates of one (design, scenario) pair, with its own generator."""

    design: RouteDesign
    scenario: TruthScenario
    n_replicates: int
    rng: np.random.Generator


# Memory bound of one batch of replicates in run_cells: the drawn counts, their copies, the
# SPRT's and the fixed-n test's arrays and the trackers' state rows of the replicates run at once.
BATCH_BYTES = 256 * 1024 * 1024


def replicate_bytes(design: RouteDesign) -> int:
    """Bytes one replicate of ``design`` holds while :func:`run_cells` runs it (an upper
    estimate: the drawn model and human counts and their batched copies, 32 per root of the
    horizon; the SPRT's log-likelihood and its temporaries, 48 per root of the cap; the fixed-n
    test's arrays, 48 per planned root; the trackers' state row, about 8 per support value; with
    bets other than the grid, each stream's values and bets, 48 per root of the cap)."""
    two_j = touches_per_root(design.panel)
    n_h = design.human_judgments_per_root
    supports = (two_j + 1) + (n_h + 1) + (two_j + 1) * (n_h + 1)
    return (
        32 * design.horizon
        + 48 * design.sequential.cap_roots
        + 48 * design.fixed_n
        + 8 * (supports + 512)
        + (0 if design.sequential.bets == "grid" else 48 * design.sequential.cap_roots)
    )


def run_cells(
    cells: Sequence[Cell], constructions: Sequence[str] | None = None, threads: int = 1
) -> list[BlockOutcome]:
    """Run several cells through ONE batch tracker per construction, each replicate to its
    verdict in the compiled kernel (``threads`` threads; the numbers do not depend on it).

    Every cell draws its roots from its own generator exactly as it would alone, so a cell's
    outcome does not depend on which cells it was batched with. The cells must share the
    construct, the sequential settings and the panel size (hence the observation supports).

    Memory is bounded by ``BATCH_BYTES``: when the cells' replicates need more at once (long
    horizons, large panels), each cell runs alone in slices of its replicates, every slice a
    whole number of the draw's chunks of replicate rows (:func:`simulate_panel`), so the
    generator yields the same roots in the same order and every number is the same.
    """
    per_replicate = max(replicate_bytes(c.design) for c in cells)
    if sum(c.n_replicates for c in cells) * per_replicate <= BATCH_BYTES:
        return _run_cells(cells, constructions, threads)
    outcomes = []
    for cell in cells:
        chunk = chunk_rows(cell.design.horizon)
        size = max(chunk, BATCH_BYTES // per_replicate // chunk * chunk)
        parts = []
        for start in range(0, cell.n_replicates, size):
            n = min(size, cell.n_replicates - start)
            part = Cell(cell.design, cell.scenario, n, cell.rng)
            parts.append(_run_cells([part], constructions, threads)[0])
        outcomes.append(merge_blocks(parts))
    return outcomes


def _run_cells(
    cells: Sequence[Cell], constructions: Sequence[str] | None, threads: int
) -> list[BlockOutcome]:
    """:func:`run_cells` on one batch held in memory at once."""
    first = cells[0].design
    two_j = touches_per_root(first.panel)
    n_h = first.human_judgments_per_root
    for cell in cells:
        d = cell.design
        if (
            d.construct != first.construct
            or d.sequential != first.sequential
            or touches_per_root(d.panel) != two_j
            or d.human_judgments_per_root != n_h
            or d.world_human_rate != first.world_human_rate
            or d.human_icc != first.human_icc
        ):
            raise ValueError(
                "cells batched together must share construct, sequential, sizes and human sheet"
            )
    rate = first.world_human_rate

    def draw(c: Cell) -> tuple[NDArray[np.int64], NDArray[np.int64]]:
        return simulate_panel(
            scenario_panel(c.design.panel, c.scenario),
            c.scenario,
            rate,
            n_h,
            c.design.horizon,
            c.n_replicates,
            c.rng,
            first.human_icc,
        )

    data = map_in_threads(draw, cells, threads)  # each cell draws from its own generator
    model_k = np.concatenate([m for m, _ in data])
    human_k = np.concatenate([h for _, h in data])
    n_total = model_k.shape[0]
    model_support = np.arange(two_j + 1) / two_j
    human_support = np.arange(n_h + 1) / n_h
    cap = first.sequential.cap_roots
    codes_all, roots_all = [], []
    for construction in constructions or first.sequential.constructions():
        tracker = BatchHTracker(
            n_total,
            construction,
            first.construct.per_tail_alpha,
            first.sequential.spec,
            first.construct.governing_threshold_h,
            model_support,
            human_support,
            bets=first.sequential.bets,
            horizon=cap,
        )
        codes = tracker.run(model_k, human_k, cap, threads)
        roots = tracker.n_roots.astype(np.int32)
        codes_all.append(codes)
        roots_all.append(roots)
    sprt_codes, sprt_roots = _sprt(first, model_k[:, :cap], two_j)
    fixed = _fixed_n(first, model_k[:, : first.fixed_n] / two_j, human_k[:, : first.fixed_n] / n_h)
    outcomes = []
    start = 0
    for c in cells:
        sl = slice(start, start + c.n_replicates)
        start += c.n_replicates
        outcomes.append(
            BlockOutcome(
                eprocess_codes=tuple(x[sl] for x in codes_all),
                eprocess_roots=tuple(x[sl] for x in roots_all),
                sprt_codes=sprt_codes[sl],
                sprt_roots=sprt_roots[sl],
                fixed_effect=fixed[sl],
            )
        )
    return outcomes


def _sprt(
    design: RouteDesign, model_k: NDArray[np.int64], two_j: int
) -> tuple[NDArray[np.int8], NDArray[np.int32]]:
    """Grouped SPRT: 1 = EFFECT (accept H1), 2 = NO_EFFECT (accept H0), 3 = truncated."""
    log_a, log_b, up, down = design.sprt_steps()
    llr = np.cumsum(model_k * up + (two_j - model_k) * down, axis=1)
    crossed = (llr >= log_a) | (llr <= log_b)
    any_cross = crossed.any(axis=1)
    first = np.where(any_cross, crossed.argmax(axis=1), model_k.shape[1] - 1)
    final = llr[np.arange(llr.shape[0]), first]
    codes = np.where(~any_cross, 3, np.where(final >= log_a, 1, 2)).astype(np.int8)
    return codes, (first + 1).astype(np.int32)


def _fixed_n(
    design: RouteDesign, m: NDArray[np.float64], h: NDArray[np.float64]
) -> NDArray[np.bool_]:
    """One-sided paired t test of mean(M - H) > 0 at the per-side alpha, at the planned n."""
    from scipy.special import stdtrit

    d = m - h
    n = d.shape[1]
    mean = d.mean(axis=1)
    sd = d.std(axis=1, ddof=1)
    crit = float(stdtrit(n - 1, 1.0 - design.per_side_alpha))
    with np.errstate(divide="ignore", invalid="ignore"):
        t = np.where(sd > 0, mean / (sd / math.sqrt(n)), np.where(mean > 0, np.inf, -np.inf))
    return np.asarray(t > crit)


def merge_blocks(blocks: Sequence[BlockOutcome]) -> BlockOutcome:
    """Concatenate blocks in block order."""
    k = len(blocks[0].eprocess_codes)
    return BlockOutcome(
        eprocess_codes=tuple(
            np.concatenate([b.eprocess_codes[i] for b in blocks]) for i in range(k)
        ),
        eprocess_roots=tuple(
            np.concatenate([b.eprocess_roots[i] for b in blocks]) for i in range(k)
        ),
        sprt_codes=np.concatenate([b.sprt_codes for b in blocks]),
        sprt_roots=np.concatenate([b.sprt_roots for b in blocks]),
        fixed_effect=np.concatenate([b.fixed_effect for b in blocks]),
    )


# ----------------------------------------------------------------------------------------------
# Summaries
# ----------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class RouteOC:
    """Operating characteristics of one route under one scenario (all simulated)."""

    route: str
    construction: str | None
    guarantee: str
    p_verdict: dict[str, Quantity]
    p_wrong: Quantity
    p_correct: Quantity
    p_verdict_issued: Quantity
    mean_roots: Quantity
    roots_quantiles: dict[str, Quantity]
    max_roots: int
    cap: int
    mean_model_touches: Quantity
    mean_human_touches: Quantity
    mean_touches: Quantity
    mean_model_cost: Quantity
    mean_human_cost: Quantity
    mean_cost: Quantity
    cost_per_valid_verdict: Quantity | None
    touches_per_valid_verdict: Quantity | None


@dataclass(frozen=True)
class ScenarioOC:
    scenario: str
    effect_exists: bool
    effect_scale: float
    model_shift_h: float
    stream_correlation: float
    latent_correlation: float
    mu_model: float
    mu_human: float
    true_h: float
    replicates: int
    routes: tuple[RouteOC, ...]

    def route(self, name: str, construction: str | None = None) -> RouteOC:
        for r in self.routes:
            if r.route == name and (construction is None or r.construction == construction):
                return r
        raise KeyError((name, construction))


def share_quantity(p: float, n: int, floor: bool = False) -> Quantity:
    """A share p of n replicates with its binomial MCSE √(p(1 − p)/n); ``floor``: the variance
    held at least 1/n, so a share of 0 or 1 does not claim an MCSE of 0."""
    return simulated(p, math.sqrt(max(p * (1 - p), 1 / n if floor else 0.0) / n), n)


def _p(indicator: NDArray[np.bool_]) -> Quantity:
    return share_quantity(float(indicator.mean()), indicator.size)


def mean_quantity(x: NDArray[np.float64]) -> Quantity:
    n = x.size
    sd = float(x.std(ddof=1)) if n > 1 else 0.0
    return simulated(float(x.mean()), sd / math.sqrt(n), n)


def quantile_quantity(x: NDArray[np.float64], q: float) -> Quantity:
    """Empirical quantile; MCSE from the binomial (order-statistic) interval of its rank."""
    n = x.size
    srt = np.sort(x)
    value = float(np.quantile(srt, q, method="inverted_cdf"))
    half = 1.96 * math.sqrt(n * q * (1 - q))
    lo = srt[max(math.floor(n * q - half), 0)]
    hi = srt[min(math.ceil(n * q + half), n - 1)]
    return simulated(value, float(hi - lo) / (2 * 1.96), n)


def ratio_quantity(num: NDArray[np.float64], den: NDArray[np.bool_]) -> Quantity | None:
    """mean(num) / mean(den) with a delta-method MCSE; None when no verdict was issued."""
    n = num.size
    p = float(den.mean())
    if p == 0.0:
        return None
    r = float(num.mean()) / p
    dev = num - r * den.astype(np.float64)
    sd = float(dev.std(ddof=1)) if n > 1 else 0.0
    return simulated(r, sd / (math.sqrt(n) * p), n)


def _route_oc(
    route: str,
    construction: str | None,
    guarantee: str,
    labels: Sequence[str],
    codes: NDArray[np.int8],
    roots: NDArray[np.int32],
    wrong: NDArray[np.bool_],
    issued: NDArray[np.bool_],
    uses_humans: bool,
    design: RouteDesign,
) -> RouteOC:
    r = roots.astype(np.float64)
    model_touches = r * design.model_touches_per_root
    model_cost = r * design.model_cost_per_root
    human_touches = design.fixed_human_touches + (
        r * design.human_judgments_per_root if uses_humans else 0.0 * r
    )
    human_cost = design.fixed_human_cost + (
        r * design.human_cost_per_root if uses_humans else 0.0 * r
    )
    touches = model_touches + human_touches
    cost = model_cost + human_cost
    return RouteOC(
        route=route,
        construction=construction,
        guarantee=guarantee,
        p_verdict={lab: _p(codes == i + 1) for i, lab in enumerate(labels)},
        p_wrong=_p(wrong),
        p_correct=_p(issued & ~wrong),
        p_verdict_issued=_p(issued),
        mean_roots=mean_quantity(r),
        roots_quantiles={f"q{int(q * 100)}": quantile_quantity(r, q) for q in QUANTILES},
        max_roots=int(roots.max()),
        cap=design.sequential.cap_roots if route != "fixed_n" else design.fixed_n,
        mean_model_touches=mean_quantity(model_touches),
        mean_human_touches=mean_quantity(human_touches),
        mean_touches=mean_quantity(touches),
        mean_model_cost=mean_quantity(model_cost),
        mean_human_cost=mean_quantity(human_cost),
        mean_cost=mean_quantity(cost),
        cost_per_valid_verdict=ratio_quantity(cost, issued),
        touches_per_valid_verdict=ratio_quantity(touches, issued),
    )


def guarantees(design: RouteDesign) -> dict[str, str]:
    a = design.construct.per_tail_alpha
    return {
        "eprocess": (
            f"anytime-valid: P(false EFFECT_SUPPORTED) ≤ {2 * a:g} per side under any stopping "
            "rule, peeking after every root and optional continuation"
        ),
        "sprt": (
            f"Wald SPRT, alpha {design.per_side_alpha:g} / beta {design.sprt_beta:g} only at its "
            "designed stopping discipline, with independent judgments and the human baseline "
            "taken as known; truncated at the cap"
        ),
        "fixed_n": (
            f"alpha {design.per_side_alpha:g} at exactly n = {design.fixed_n} roots, one look, no "
            "peeking; tests h > 0, not h ≥ threshold"
        ),
    }


def eprocess_wrong(codes: NDArray[np.int8], true_h: float, threshold: float) -> NDArray[np.bool_]:
    """Each e-process verdict scored from the world's true h: EFFECT_SUPPORTED is wrong iff
    true h < the threshold, NO_POSITIVE_EFFECT iff true h > 0, BELOW_PRACTICAL_THRESHOLD iff
    true h >= the threshold; no verdict (INCONCLUSIVE, still open) is neither right nor wrong."""
    wrong: NDArray[np.bool_] = (
        ((codes == 1) & (true_h < threshold))
        | ((codes == 2) & (true_h > 0.0))
        | ((codes == 3) & (true_h >= threshold))
    )
    return wrong


def eprocess_scored_wrong(
    design: RouteDesign, effect: bool, true_h: float, codes: NDArray[np.int8]
) -> NDArray[np.bool_]:
    """The e-process verdicts a design scores wrong: from the world's true h for a plan built
    from sheets (:func:`eprocess_wrong`), else an effect claimed where none exists (``effect``
    False) or "no / too small an effect" where one does."""
    if design.score_by_true_h:
        return eprocess_wrong(codes, true_h, design.construct.governing_threshold_h)
    out: NDArray[np.bool_] = (codes == 1) if not effect else ((codes == 2) | (codes == 3))
    return out


def two_way_wrong(
    effect: NDArray[np.bool_], no_effect: NDArray[np.bool_], true_h: float, threshold: float
) -> NDArray[np.bool_]:
    """The SPRT's and the fixed-n test's verdicts scored from the world's true h (both test
    h <= 0 against h = the threshold): "effect" is wrong iff true h <= 0, "no effect" iff true
    h >= the threshold; between the two (the indifference zone) neither is wrong."""
    return (effect & (true_h <= 0.0)) | (no_effect & (true_h >= threshold))


def summarize(
    design: RouteDesign,
    scenario: TruthScenario,
    outcome: BlockOutcome,
    constructions: Sequence[str] | None = None,
) -> ScenarioOC:
    """Operating characteristics of every route from merged block outcomes."""
    panel = scenario_panel(design.panel, scenario)
    mu_m, mu_h, true_h = true_rates(panel, scenario, design.world_human_rate)
    # the world's truth: an effect exists iff the scenario's effect scale is positive (a confound
    # moves the streams without any effect; an adversarial panel may hide a real one) -- or, for
    # a world built from sheets (score_by_true_h), iff its true h is positive
    effect = true_h > 0 if design.score_by_true_h else scenario.effect_scale > 0
    threshold = design.construct.governing_threshold_h
    g = guarantees(design)
    routes: list[RouteOC] = []
    for construction, codes, roots in zip(
        constructions or design.sequential.constructions(),
        outcome.eprocess_codes,
        outcome.eprocess_roots,
        strict=True,
    ):
        wrong = eprocess_scored_wrong(design, effect, true_h, codes)
        routes.append(
            _route_oc(
                "eprocess",
                construction,
                g["eprocess"],
                EPROCESS_VERDICTS,
                codes,
                roots,
                wrong,
                (codes >= 1) & (codes <= 3),
                True,
                design,
            )
        )
    sc, sr = outcome.sprt_codes, outcome.sprt_roots
    if design.score_by_true_h:
        sprt_wrong = two_way_wrong(sc == 1, sc == 2, true_h, threshold)
    else:
        sprt_wrong = (sc == 1) if not effect else (sc == 2)
    routes.append(
        _route_oc(
            "sprt",
            None,
            g["sprt"],
            SPRT_VERDICTS,
            sc,
            sr,
            sprt_wrong,
            (sc == 1) | (sc == 2),
            False,
            design,
        )
    )
    fe = outcome.fixed_effect
    if design.score_by_true_h:
        fixed_wrong = two_way_wrong(fe, ~fe, true_h, threshold)
    else:
        fixed_wrong = fe if not effect else ~fe
    fixed_codes = np.where(fe, 1, 2).astype(np.int8)
    fixed_roots = np.full(fe.size, design.fixed_n, dtype=np.int32)
    routes.append(
        _route_oc(
            "fixed_n",
            None,
            g["fixed_n"],
            FIXED_VERDICTS,
            fixed_codes,
            fixed_roots,
            fixed_wrong,
            np.ones(fe.size, dtype=np.bool_),
            True,
            design,
        )
    )
    return ScenarioOC(
        scenario=scenario.name,
        effect_exists=bool(effect),
        effect_scale=scenario.effect_scale,
        model_shift_h=scenario.model_shift_h,
        stream_correlation=scenario.stream_correlation,
        latent_correlation=panel.latent_correlation,
        mu_model=mu_m,
        mu_human=mu_h,
        true_h=true_h,
        replicates=int(fe.size),
        routes=tuple(routes),
    )


@dataclass(frozen=True)
class Job:
    """One scenario to characterise: a design, a truth scenario and its RNG purpose."""

    design: RouteDesign
    scenario: TruthScenario
    purpose: str


def simulate_scenarios(
    jobs: Sequence[Job],
    seed: int,
    replicates: int,
    block_size: int,
    constructions: Sequence[str] | None = None,
    threads: int = 1,
    tick: Callable[[int, int], None] | None = None,
) -> list[ScenarioOC]:
    """Operating characteristics of several scenarios, batched block by block (the kernel
    runs on ``threads`` threads; the numbers do not depend on it). ``tick(done, total)`` is
    called after each block (progress only: it never changes a number).

    Job j's block b always draws from ``block_streams(seed, job.purpose, ...)[b]``; compatible
    jobs (same panel size, construct, sequential settings) share one batch tracker per block.
    The numbers are therefore the same as running each job alone.
    """
    from verdictpack._rng import block_streams

    if not jobs:  # e.g. an engine whose construct lists no confound to stress
        return []
    streams = [block_streams(seed, job.purpose, replicates, block_size) for job in jobs]
    outcomes: list[list[BlockOutcome]] = [[] for _ in jobs]
    for b in range(len(streams[0])):
        groups: dict[tuple[object, ...], list[int]] = {}
        for j, job in enumerate(jobs):
            key = (
                id(job.design.construct),
                job.design.sequential,
                touches_per_root(job.design.panel),
                job.design.human_judgments_per_root,
                job.design.world_human_rate,
            )
            groups.setdefault(key, []).append(j)
        for idxs in groups.values():
            cells = [
                Cell(jobs[j].design, jobs[j].scenario, streams[j][b][0], streams[j][b][1])
                for j in idxs
            ]
            for j, out in zip(idxs, run_cells(cells, constructions, threads), strict=True):
                outcomes[j].append(out)
        if tick is not None:
            tick(b + 1, len(streams[0]))
    return [
        summarize(job.design, job.scenario, merge_blocks(outcomes[j]), constructions)
        for j, job in enumerate(jobs)
    ]
