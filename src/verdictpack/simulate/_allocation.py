"""How many humans per root, and which bets: the allocation that reaches a verdict cheapest.

Human judgments are most of what a study costs, so the planner compares allocations -- k human
judgments on every root (k in ``humans``, 1-3 by default) under each named bets of the
trackers -- by what they cost to reach a target P(verdict). For each allocation one seeded batch
simulation runs R replicates of the sequential track on roots drawn from the judges' sheets and
the humans' sheet (rate, vote ICC_H; :func:`~verdictpack.simulate._draw.simulate_panel`), every
replicate to its verdict or the allocation's cap.

**One pass gives the whole curve.** The verdict time T (the root at which the track first
issues a verdict) is a stopping time: whether T <= n is decided by the first n roots, whatever a
longer cap would have done after them. So one run of R replicates to the cap gives the empirical
P(T <= n) for every n up to it, and N_k, the fewest roots whose P(T <= N_k) reaches the target,
is read off that curve; the study run with cap N_k stops at min(T, N_k) roots. Expected human
judgments k·E[min(T, N_k)] and expected cost E[min(T, N_k)]·(k·price per human judgment + price
of a root's model judgments + price of its reader-audit readings), plus a sized reader audit's
one price, are means over the same replicates, with Monte Carlo standard errors (sample s.d. /
√R; N_k is taken as given, the error of its choice left out). The chosen allocation is the
cheapest one that reaches the target (ties: fewer human judgments, then the listed order).
The "horizon" bets are tuned to the allocation's cap, so their allocation keeps it (N = cap when
P(T <= cap) reaches the target): a study run with fewer roots would bet otherwise.

**Target.** An explicit P(verdict), or by default today's: the P(verdict within its cap) of the
current allocation (the config's humans per root and bets), so the saving printed is the one at
the same chance of a verdict (none is chosen when today's is 0). A budget of human judgments
caps each allocation at floor(budget / k) roots (and every allocation at ``cap``).

Humans are on every root (no missing human judgments; a planned design, not a study's observed
coverage); the world is the sheets' (missing at random, the sheets right). RNG: allocation
(k, bets) draws from ``stream(seed, "plan/allocation/<k>/<bets>")``'s children, one per block
of ``BLOCK`` replicates in block order, so the numbers are the same on any worker count; a
block is drawn in slices of whole chunks (:func:`~verdictpack.simulate._draw.chunk_rows`), so
memory stays bounded at any cap and the numbers are those of one draw.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray

from verdictpack._errors import InputError
from verdictpack._parallel import map_in_threads
from verdictpack._results import Quantity, simulated
from verdictpack._rng import block_streams
from verdictpack._validate import int_at_least, open_unit
from verdictpack.core._mixture import MixtureSpec
from verdictpack.core._tracker import BatchHTracker
from verdictpack.simulate._draw import chunk_rows, simulate_panel
from verdictpack.simulate._judges import Panel, TruthScenario
from verdictpack.simulate._operating import mean_quantity, share_quantity

__all__ = ["BLOCK", "Allocation", "AllocationPlan", "Prices", "plan_allocations", "verdict_times"]

BLOCK = 250  # replicates per RNG block: part of the stream definition
_INCONCLUSIVE = 4  # VERDICT_CODES index of INCONCLUSIVE (no verdict by the cap)


@dataclass(frozen=True)
class Prices:
    """What one root costs besides its humans: ``model_root`` (every model judgment of a root),
    ``reading_root`` (the reader audit's expected readings per root, priced); one human
    judgment, ``human``; and ``audit``, a reader audit of a fixed size priced once per study."""

    human: float = 1.0
    model_root: float = 0.0
    reading_root: float = 0.0
    audit: float = 0.0


@dataclass(frozen=True)
class Allocation:
    """One allocation simulated: ``roots`` = N_k (None: the target is not reached within
    ``cap`` roots; the figures are then those at the cap)."""

    humans_per_root: int
    bets: str
    cap: int
    roots: int | None
    p_verdict: Quantity  # P(T <= N_k), or P(T <= cap)
    expected_roots: Quantity  # E[min(T, N_k)]
    human_judgments: Quantity  # k · E[min(T, N_k)]
    cost: Quantity
    current: bool = False
    # MCSE of N_k: half the spread of the verdict times at ranks R·q ± √(R·q(1 − q)), q the
    # target (a binomial band of about one s.d. around the quantile N_k is)
    roots_mcse: float | None = None

    @property
    def reached(self) -> bool:
        return self.roots is not None


@dataclass(frozen=True)
class AllocationPlan:
    """Every allocation, the current one, the chosen one (None: none reaches the target) and
    the predicted saving of the chosen over the current (None when either misses it)."""

    target: float
    target_source: str
    target_mcse: float | None  # None for a target given, not simulated
    replicates: int
    human_icc: float | None
    allocations: tuple[Allocation, ...]
    current: int
    chosen: int | None
    saving_humans: Quantity | None  # expected human judgments saved (current − chosen)
    saving_humans_share: Quantity | None  # the same as a share of the current's
    saving_cost: Quantity | None
    prices: Prices = Prices()
    # the reader audit planned: roots double-read (None: none sized) and a sentence saying so
    audit_roots: int | None = None
    audit_note: str = ""


def verdict_times(
    panel: Panel,
    scenario: TruthScenario,
    human_rate: float,
    human_icc: float | None,
    humans_per_root: int,
    bets: str,
    *,
    construction: str,
    alpha: float,
    spec: MixtureSpec,
    threshold: float,
    cap: int,
    replicates: int,
    seed: int,
    threads: int = 1,
) -> NDArray[np.int64]:
    """The verdict time T of ``replicates`` seeded runs to ``cap`` roots (0: no verdict by the
    cap), k = ``humans_per_root`` humans on every root, the trackers' ``bets`` (the "horizon"
    bets tuned to ``cap``)."""
    k = int_at_least("humans_per_root", humans_per_root, 1)
    n = int_at_least("cap", cap, 1)
    j = panel.n_judges
    ms = np.arange(2 * j + 1) / (2 * j)
    hs = np.arange(k + 1) / k
    blocks = block_streams(seed, f"plan/allocation/{k}/{bets}", replicates, BLOCK)

    rows = chunk_rows(n)  # replicates drawn at once (bounded memory; the same numbers)

    def run(item: tuple[int, np.random.Generator]) -> NDArray[np.int64]:
        size, rng = item
        out = np.empty(size, np.int64)
        for lo in range(0, size, rows):  # bounded: ceil(size / rows) slices
            m = min(rows, size - lo)
            mc, hc = simulate_panel(panel, scenario, human_rate, k, n, m, rng, human_icc)
            bt = BatchHTracker(
                m, construction, alpha, spec, threshold, ms, hs, bets=bets, horizon=n
            )
            codes = bt.run(mc, hc, n)
            decided = (codes != 0) & (codes != _INCONCLUSIVE)
            out[lo : lo + m] = np.where(decided, bt.n_roots, 0)
        return out

    parts = map_in_threads(run, blocks, threads)
    return np.concatenate(parts) if parts else np.zeros(0, np.int64)


def _evaluate(
    times: NDArray[np.int64],
    k: int,
    bets: str,
    cap: int,
    target: float,
    prices: Prices,
    current: bool,
) -> Allocation:
    r = int(times.size)
    decided = times > 0
    counts = np.bincount(times[decided], minlength=cap + 1)[1:]  # verdicts at roots 1..cap
    curve = np.cumsum(counts) / r  # P(T <= n), n = 1..cap
    hit = np.flatnonzero(curve >= target - 1e-12) if target > 0 else np.zeros(0, np.intp)
    roots = int(hit[0]) + 1 if hit.size else None
    roots_mcse = None
    if roots is not None and bets == "horizon":
        # bets tuned to the cap: a study run with fewer roots would bet otherwise, so the
        # horizon bets' allocation keeps its cap (N = cap, taken as given)
        roots, roots_mcse = cap, 0.0
    elif roots is not None:
        ordered = np.sort(np.where(decided, times, cap))  # no verdict: at least the cap
        half = math.sqrt(r * target * (1.0 - target))
        lo = ordered[max(0, math.floor(r * target - half) - 1)]
        hi = ordered[min(r - 1, math.ceil(r * target + half) - 1)]
        roots_mcse = float(hi - lo) / 2.0
    stop = roots if roots is not None else cap
    used = np.where(decided, np.minimum(times, stop), stop).astype(np.float64)
    p = float(curve[stop - 1])
    per_root = k * prices.human + prices.model_root + prices.reading_root
    return Allocation(
        humans_per_root=k,
        bets=bets,
        cap=cap,
        roots=roots,
        p_verdict=share_quantity(p, r, floor=True),
        expected_roots=mean_quantity(used),
        human_judgments=mean_quantity(k * used),
        cost=mean_quantity(per_root * used + prices.audit),
        current=current,
        roots_mcse=roots_mcse,
    )


def _difference(a: Quantity, b: Quantity) -> Quantity:
    """a − b of two independent simulated means (their MCSEs added in quadrature)."""
    se = math.hypot(a.mcse or 0.0, b.mcse or 0.0)
    return simulated(float(a.value) - float(b.value), se, int(a.replicates or 0))


def _share_saved(current: Quantity, chosen: Quantity) -> Quantity:
    """1 − chosen/current, its MCSE by the delta method (independent means)."""
    a, b = float(chosen.value), float(current.value)
    if b <= 0.0:
        return simulated(0.0, 0.0, int(current.replicates or 0))
    ratio = a / b
    rel = math.hypot((chosen.mcse or 0.0) / a if a > 0 else 0.0, (current.mcse or 0.0) / b)
    return simulated(1.0 - ratio, ratio * rel, int(current.replicates or 0))


def plan_allocations(
    panel: Panel,
    scenario: TruthScenario,
    human_rate: float,
    human_icc: float | None,
    *,
    construction: str,
    alpha: float,
    spec: MixtureSpec,
    threshold: float,
    cap: int,
    prices: Prices,
    current: tuple[int, str],
    seed: int,
    replicates: int = 2000,
    target: float | None = None,
    human_budget: float | None = None,
    humans: Sequence[int] = (1, 2, 3),
    bets: Sequence[str] = ("grid",),
    threads: int = 1,
) -> AllocationPlan:
    """Every allocation (k in ``humans`` × ``bets``, and ``current`` = (k, bets) today) simulated
    (module docstring); ``target`` None: today's P(verdict within its cap). ``human_budget``:
    human judgments available (each allocation's cap floor(budget / k), at most ``cap``)."""
    r = int_at_least("replicates", replicates, 2)
    n = int_at_least("cap", cap, 1)
    pairs = [(int_at_least("humans", k, 1), b) for b in bets for k in humans]
    current = (int_at_least("current", current[0], 1), current[1])

    def cap_of(k: int) -> int:
        return n if human_budget is None else min(n, int(human_budget // k))

    if cap_of(current[0]) < 1:
        raise InputError(
            "human_budget", f"at least {current[0]} human judgments (one root today)", human_budget
        )
    # an allocation the budget gives no root is left out; today's is always in
    pairs = [p for p in pairs if cap_of(p[0]) >= 1 and p != current] + [current]
    pairs.sort(key=lambda p: (bets.index(p[1]) if p[1] in bets else len(bets), p[0]))

    times = {
        (k, b): verdict_times(
            panel,
            scenario,
            human_rate,
            human_icc,
            k,
            b,
            construction=construction,
            alpha=alpha,
            spec=spec,
            threshold=threshold,
            cap=cap_of(k),
            replicates=r,
            seed=seed,
            threads=threads,
        )
        for k, b in pairs
    }
    if target is None:
        now = times[current]
        goal = float(np.count_nonzero(now) / r)
        source = f"today's allocation's P(a verdict within {cap_of(current[0]):,} roots)"
        if goal == 0.0:
            source += ": no replicate reached a verdict, so there is nothing to match"
    else:
        goal = open_unit("target", target)
        source = "the target given"
    rows = tuple(
        _evaluate(times[p], p[0], p[1], cap_of(p[0]), goal, prices, p == current) for p in pairs
    )
    reached = [i for i, a in enumerate(rows) if a.reached]
    chosen = (
        min(reached, key=lambda i: (rows[i].cost.value, rows[i].human_judgments.value, i))
        if reached
        else None
    )
    at = pairs.index(current)
    saving = share = cost = None
    if chosen is not None and chosen == at:  # today's is the cheapest: nothing saved
        zero = simulated(0.0, 0.0, r)
        saving, share, cost = zero, zero, zero
    elif chosen is not None and rows[at].reached:
        a, b = rows[at], rows[chosen]
        saving = _difference(a.human_judgments, b.human_judgments)
        share = _share_saved(a.human_judgments, b.human_judgments)
        cost = _difference(a.cost, b.cost)
    return AllocationPlan(
        target=goal,
        target_source=source,
        target_mcse=None if target is not None else share_quantity(goal, r, floor=True).mcse,
        replicates=r,
        human_icc=human_icc,
        allocations=rows,
        current=at,
        chosen=chosen,
        saving_humans=saving,
        saving_humans_share=share,
        saving_cost=cost,
        prices=prices,
    )
