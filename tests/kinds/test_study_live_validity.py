"""The live runner's verdicts are the simulated engine's: the same distribution, the same error.

The live arm runs :func:`~verdictpack.evidence.live._runner.run_live` over HTTP
(:class:`~verdictpack.evidence.live._transport.HttpxTransport`) against the OpenAI-compatible test
server, a fresh :class:`~verdictpack.evidence._ledger.Ledger` per replicate, feeding a
:class:`~verdictpack.core._tracks.TrackStream`. The server draws every judgment independently from
the judge's sheet: P(prefers the treatment) is ``rate + b`` with the treatment shown first and
``rate - b`` with it shown second. Each replicate asks its own judges (``judge-a@r`` ...): the
model name is part of the request body, and the deterministic server draws from SHA-256(seed,
body), so replicate r gets its own independent draws, reproducibly, whatever order the answers
arrive in. The judges are asked without logprobs (``top_logprobs = 0``), so a judgment is the
label read from the text and M_i is the share of root i's cells that chose the treatment.

The simulated arm is the same world without HTTP: the same per-judgment Bernoullis drawn with
numpy and fed to the same TrackStream. Two humans judge each root at ``human_rate`` (H_i their
mean), drawn with numpy in both arms.

1. Distribution: P(EFFECT_SUPPORTED), P(NO_POSITIVE_EFFECT or BELOW_PRACTICAL_THRESHOLD) and the
   mean number of roots at the stop agree within 3 combined Monte Carlo standard errors (pooled
   for the proportions, so a share observed as 0 in one arm is still compared).
2. Validity: with random server delays (answers complete out of order) and 16 requests in flight
   per judge, under a null world (judges at the humans' rate) at construct alpha 0.2, the rate of
   a false EFFECT_SUPPORTED is at most the tracker's per-side error bound plus 3 MCSE; and in
   every replicate the ledger's commits are the registered order, 1..n.

The construct is the summarization example's with alpha 0.2 (per-tail 0.05), which reaches
verdicts in tens of roots. The ledgers live in a RAM-backed folder when the machine has one
(/dev/shm): every answer is an fsync otherwise, which would dominate the test's time.
"""

from __future__ import annotations

import asyncio
import dataclasses
import functools
import math
import os
import shutil
import tempfile
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import numpy as np
import pytest

pytest.importorskip("httpx")

from live_helpers import Faults, ServerConfig, Sheet, serve

from conftest import load_example
from verdictpack.config._blocks import SequentialSpec, build_sequential
from verdictpack.config._compiler import Construct, ConstructSpec, compile_construct
from verdictpack.core._tracks import TrackSettings, TrackStream
from verdictpack.evidence._ledger import Ledger
from verdictpack.evidence.live._prices import Price
from verdictpack.evidence.live._profiles import Sampling
from verdictpack.evidence.live._prompts import DEFAULT_PROMPT
from verdictpack.evidence.live._retry import RetryPolicy
from verdictpack.evidence.live._runner import ORDERS, LiveJudge, run_live
from verdictpack.evidence.live._transport import HttpxTransport
from verdictpack.stimuli import Stimulus

SEED = 41
ALPHA = 0.2
NULLS = ("NO_POSITIVE_EFFECT", "BELOW_PRACTICAL_THRESHOLD")


@dataclasses.dataclass(frozen=True)
class World:
    """The judges' sheets (one trial per cell), the humans' rate and the cap."""

    sheets: Mapping[str, Sheet]
    human_rate: float
    cap: int

    def draws(self) -> list[tuple[float, float]]:
        """Per judge, P(treatment) with the treatment shown first and second (clipped)."""
        return [
            (min(1.0, s.rate + s.position_bias), max(0.0, s.rate - s.position_bias))
            for s in self.sheets.values()
        ]


@dataclasses.dataclass(frozen=True)
class Replicate:
    verdict: str
    roots: int  # roots consumed at the stop (the verdict's root, or the cap)
    error_per_side: float
    committed: tuple[str, ...]
    recorded_in_order: bool  # the answers were recorded in dispatch order


@functools.cache
def _construct() -> Construct:
    """The summarization example's construct at alpha ALPHA."""
    spec = load_example("engine_summarization.json")["construct"]
    spec.update(alpha=ALPHA, per_tail_alpha=ALPHA / 4, e_boundary=4 / ALPHA)
    return compile_construct(ConstructSpec(**spec))


def _tracks(cap: int) -> TrackStream:
    """The tracks over supports that start empty (every value widens them)."""
    construct = _construct()
    sequential = build_sequential(SequentialSpec(construction="hybrid", cap_roots=cap))
    return TrackStream(
        TrackSettings(
            sequential.construction,
            sequential.other_construction(),
            construct.per_tail_alpha,
            sequential.spec,
            construct.governing_threshold_h,
            construct.extension_minimum_h,
            {t: construct.registered_claim for t in ("registered", "extension", "comparison")},
        ),
        cap,
        np.array([]),
        np.array([]),
    )


def _roots(n: int) -> list[Stimulus]:
    out = []
    for i in range(n):
        text = f"The council approved {100 + i} new homes near the river after a long debate"
        out.append(
            Stimulus(id=f"r{i:03d}", treatment=text + " today.", null_partner=text + " now.")
        )
    return out


def _humans(world: World, rng: np.random.Generator) -> np.ndarray[Any, Any]:
    """H_i: the mean of two human judgments per root."""
    return np.asarray((rng.random((world.cap, 2)) < world.human_rate).mean(axis=1), np.float64)


def _stop(tracks: TrackStream) -> tuple[str, int, float]:
    verdict = tracks.verdicts.get("registered")
    if verdict is None:
        raise AssertionError(f"no registered verdict after {tracks.roots} roots")
    return verdict, tracks.roots, tracks.trace().error_per_side["registered"]


def simulated(world: World, replicates: int, seed: int) -> list[Replicate]:
    """The world without HTTP: numpy Bernoullis per cell, fed to the trackers."""
    rng = np.random.default_rng(seed)
    p = np.array(world.draws(), np.float64)  # judges x (treatment first, second)
    out = []
    for _ in range(replicates):
        tracks = _tracks(world.cap)
        humans = _humans(world, rng)
        for i in range(world.cap):
            m = float((rng.random(p.shape) < p).mean())
            tracks.step(m, float(humans[i]), at_cap=i + 1 == world.cap)
            if tracks.stopped:
                break
        verdict, roots, bound = _stop(tracks)
        out.append(Replicate(verdict, roots, bound, (), True))
    return out


def _judge(name: str, url: str, concurrency: int) -> LiveJudge:
    return LiveJudge(
        name=name,
        base_url=url,
        model=name,
        profile="openai",
        sampling=Sampling(top_logprobs=0),
        prompt=DEFAULT_PROMPT,
        price=Price(per_call=0.001),
        concurrency=concurrency,
        retry=RetryPolicy(base_delay=0.005, max_delay=0.05),
    )


def _model(judge: str, r: int) -> str:
    return f"{judge}@{r}"


async def _live_one(world: World, url: str, r: int, folder: Path, concurrency: int) -> Replicate:
    roots = _roots(world.cap)
    judges = [_judge(_model(j, r), url, concurrency) for j in world.sheets]
    humans = _humans(world, np.random.default_rng([SEED, r]))
    ledger = Ledger.open(folder, {"replicate": r, "world": repr(world)})
    tracks = _tracks(world.cap)
    transport = HttpxTransport(trust_env=False)

    def root_value(i: int, cells: Mapping[tuple[str, str, int], tuple[str, Any]]) -> float:
        return sum(choice == "treatment" for choice, _ in cells.values()) / len(cells)

    try:
        outcome = await run_live(
            roots,
            judges,
            1,
            ledger,
            transport,
            tracks,
            root_value,
            lambda i: float(humans[i]),
            cap=world.cap,
            seed=r,
        )
        if outcome.stop not in ("verdict", "cap"):
            raise AssertionError(f"replicate {r} stopped on {outcome.stop}: {outcome.message}")
        committed = tuple(c.root_id for c in ledger.committed())
        seqs = [c.seq for c in ledger.committed()]
        if seqs != list(range(1, len(seqs) + 1)):
            raise AssertionError(f"replicate {r}: commits {seqs} are not 1..n")
        # the dispatch order: root by root, judge by judge, order by order (run_live's rule)
        root_rank = {s.id: k for k, s in enumerate(roots)}
        judge_rank = {j.name: k for k, j in enumerate(judges)}
        recorded = [
            (root_rank[a.root_id], judge_rank[a.judge], ORDERS.index(a.order), a.trial)
            for a in ledger.answers_by_key().values()
        ]
    finally:
        await transport.aclose()
        ledger.close()
    verdict, n, bound = _stop(tracks)
    return Replicate(verdict, n, bound, committed, recorded == sorted(recorded))


@contextmanager
def _scratch(tmp_path: Path) -> Iterator[Path]:
    """A folder for the replicates' ledgers: RAM-backed where the machine has one."""
    shm = Path("/dev/shm")
    if shm.is_dir() and os.access(shm, os.W_OK):
        folder = Path(tempfile.mkdtemp(prefix="vp-live-validity-", dir=shm))
        try:
            yield folder
        finally:
            shutil.rmtree(folder, ignore_errors=True)
    else:
        yield tmp_path


def live(
    world: World,
    replicates: int,
    tmp_path: Path,
    *,
    concurrency: int = 8,
    faults: Faults | None = None,
) -> list[Replicate]:
    """``replicates`` live runs of the world against one deterministic server process."""
    judges = {_model(j, r): s for r in range(replicates) for j, s in world.sheets.items()}
    items = {}
    for s in _roots(world.cap):
        items[s.treatment], items[s.null_partner] = True, False
    config = ServerConfig(judges=judges, items=items, seed=SEED, faults=faults or Faults())

    out = []
    with serve(config, process=True) as url, _scratch(tmp_path) as scratch:
        for r in range(replicates):
            folder = scratch / f"rep{r}"
            folder.mkdir()
            out.append(asyncio.run(_live_one(world, url, r, folder, concurrency)))
        counts = url.counts()
    if counts.get("unmatched", 0):
        raise AssertionError(f"the server could not tell the order shown: {counts}")
    return out


def _proportion_gap(a: list[bool], b: list[bool]) -> tuple[float, float]:
    """|difference| of two shares and its pooled standard error."""
    pa, pb = float(np.mean(a)), float(np.mean(b))
    pool = (sum(a) + sum(b)) / (len(a) + len(b))
    return abs(pa - pb), math.sqrt(pool * (1 - pool) * (1 / len(a) + 1 / len(b)))


def _mean_gap(a: list[int], b: list[int]) -> tuple[float, float]:
    va, vb = np.asarray(a, float), np.asarray(b, float)
    se = math.sqrt(va.var(ddof=1) / va.size + vb.var(ddof=1) / vb.size)
    return abs(float(va.mean() - vb.mean())), se


def _compare(lv: list[Replicate], sim: list[Replicate]) -> dict[str, tuple[float, float]]:
    return {
        "P(EFFECT_SUPPORTED)": _proportion_gap(
            [x.verdict == "EFFECT_SUPPORTED" for x in lv],
            [x.verdict == "EFFECT_SUPPORTED" for x in sim],
        ),
        "P(NO_POSITIVE_EFFECT or BELOW)": _proportion_gap(
            [x.verdict in NULLS for x in lv], [x.verdict in NULLS for x in sim]
        ),
        "mean roots at the stop": _mean_gap([x.roots for x in lv], [x.roots for x in sim]),
    }


# an effect world (EFFECT_SUPPORTED in about 45% of the replicates) and a world below the
# threshold (BELOW_PRACTICAL_THRESHOLD in about 30%): each makes one verdict share informative
EFFECT = World(
    {"judge-a": Sheet(rate=0.82, position_bias=0.05), "judge-b": Sheet(rate=0.78)}, 0.3, 36
)
BELOW = World(
    {"judge-a": Sheet(rate=0.35, position_bias=0.05), "judge-b": Sheet(rate=0.3)}, 0.5, 36
)


def _check_distribution(world: World, r_live: int, r_sim: int, tmp_path: Path) -> None:
    lv = live(world, r_live, tmp_path)
    sim = simulated(world, r_sim, SEED)
    for name, (gap, se) in _compare(lv, sim).items():
        assert gap <= 3 * se, f"{name}: live and simulated differ by {gap:.4f} > 3 x {se:.4f}"
    for rep in lv:
        assert rep.committed == tuple(s.id for s in _roots(world.cap))[: rep.roots]


@pytest.mark.parametrize("world", [EFFECT, BELOW], ids=["effect", "below"])
def test_live_verdicts_follow_the_simulated_distribution(world: World, tmp_path: Path) -> None:
    _check_distribution(world, 40, 300, tmp_path)


@pytest.mark.slow
@pytest.mark.parametrize("world", [EFFECT, BELOW], ids=["effect", "below"])
def test_live_verdicts_follow_the_simulated_distribution_large(
    world: World, tmp_path: Path
) -> None:
    _check_distribution(world, 200, 2000, tmp_path)


NULL = World({"judge-a": Sheet(rate=0.5, position_bias=0.05), "judge-b": Sheet(rate=0.5)}, 0.5, 40)


def _check_validity(replicates: int, tmp_path: Path) -> None:
    faults = Faults(max_delay=0.02)
    reps = live(NULL, replicates, tmp_path, concurrency=16, faults=faults)
    registered = tuple(s.id for s in _roots(NULL.cap))
    for rep in reps:
        assert rep.committed == registered[: len(rep.committed)]
        assert len(rep.committed) == rep.roots
    # the delays really reorder the completions (else the prefix rule is not exercised)
    assert not all(rep.recorded_in_order for rep in reps)
    bound = reps[0].error_per_side
    assert all(rep.error_per_side == bound for rep in reps)
    assert 0 < bound < 0.5
    false = float(np.mean([rep.verdict == "EFFECT_SUPPORTED" for rep in reps]))
    mcse = math.sqrt(bound * (1 - bound) / replicates)
    assert false <= bound + 3 * mcse, (false, bound, mcse)


def test_no_more_false_effects_than_the_bound_with_answers_out_of_order(tmp_path: Path) -> None:
    _check_validity(40, tmp_path)


@pytest.mark.slow
def test_no_more_false_effects_than_the_bound_with_answers_out_of_order_large(
    tmp_path: Path,
) -> None:
    _check_validity(200, tmp_path)
