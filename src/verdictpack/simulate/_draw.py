"""Simulating a panel: correlated judgments of every judge in both orders, and the humans'.

The model is that of :mod:`verdictpack.simulate._judges` (module docstring: the latent
probit model, the root factor and its eigenvalues, the stream correlation); this module draws
from it. Draws are in fixed-size chunks of roots (:func:`chunk_rows`), so a replicate's numbers
do not depend on how many replicates share a call.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np
from numpy.typing import NDArray
from scipy import special

from verdictpack._errors import InputError
from verdictpack._validate import int_at_least, open_unit
from verdictpack.core._icc import latent_for_icc
from verdictpack.simulate._judges import (
    _RATE,
    Panel,
    TruthScenario,
    _generator,
    _ndtri,
    judge_rates,
    scenario_panel,
)

__all__ = ["chunk_rows", "human_root_weights", "simulate_choices", "simulate_panel"]

_CHUNK_ROOTS: int = 1 << 16  # roots drawn per chunk (memory bound); part of the stream definition
_DRAW_NORMALS: int = 1 << 22  # latents held at once while drawing a chunk (memory only)

# --------------------------------------------------------------------------------------------
# simulation
# --------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class _Plan:
    n_judges: int
    root_eigen: tuple[float, float, float]  # (√λ₁, √λ₂, √λ₃)
    cut_model: NDArray[np.float64]  # Φ⁻¹(p_jo), shape (J, 2, 1)
    cut_human: float
    stream_correlation: float
    n_h: int
    # the human sheet (None: no item heterogeneity beyond the panel's, no V drawn): a and b of
    # W = ρ_s·S + a·V + b·U, a² = r − ρ_s², b = √(1 − r), r solving the vote ICC (core._icc)
    human_root: tuple[float, float] | None = None


def human_root_weights(
    human_rate: float, stream_correlation: float, human_icc: float | None
) -> tuple[float, float] | None:
    """(a, b) of the humans' latent W = ρ_s·S + a·V + b·U for a vote intraclass correlation
    ``human_icc`` at ``human_rate`` (None for None); InputError ``icc`` below what ρ_s gives."""
    if human_icc is None:
        return None
    floor = stream_correlation * stream_correlation
    r = latent_for_icc(human_rate, human_icc, floor)
    return math.sqrt(max(r - floor, 0.0)), math.sqrt(max(1.0 - r, 0.0))


def _plan(
    panel: Panel,
    scenario: TruthScenario,
    human_rate: float,
    n_h: int,
    human_icc: float | None = None,
) -> _Plan:
    p_h = open_unit("human_rate", human_rate, _RATE)
    nh = int_at_least("n_h", n_h, 1)
    run = scenario_panel(panel, scenario)
    rates = judge_rates(run, scenario)
    lam = run.eigenvalues()
    return _Plan(
        n_judges=run.n_judges,
        root_eigen=(math.sqrt(lam[0]), math.sqrt(lam[1]), math.sqrt(lam[2])),
        cut_model=special.ndtri(rates)[:, :, None],
        cut_human=_ndtri(p_h),
        stream_correlation=scenario.stream_correlation,
        n_h=nh,
        human_root=human_root_weights(p_h, scenario.stream_correlation, human_icc),
    )


def _apply_factor(root_eigen: tuple[float, float, float], raw: NDArray[np.float64]) -> Any:
    """Z = A·E for raw of shape (J, 2, n), without forming A (the projector form of A):
    A·E = √λ₃·E + (√λ₂ − √λ₃)·Ē_j + (√λ₁ − √λ₂)·Ē (judge means Ē_j, overall mean Ē)."""
    s1, s2, s3 = root_eigen
    judge_mean = raw.mean(axis=1)  # (J, n)
    overall = judge_mean.mean(axis=0)  # (n,)
    latent = s3 * raw
    latent += ((s2 - s3) * judge_mean + (s1 - s2) * overall)[:, None, :]
    return latent, overall


def _draw(
    plan: _Plan, n: int, rng: np.random.Generator
) -> tuple[NDArray[np.bool_], NDArray[np.bool_]]:
    """One chunk of n roots: model choices (J, 2, n) and human choices (n_h, n).

    Draw order: E (2J × n standard normals, row k = 2j + o), then -- only with a human sheet
    (an ICC) -- V (n, one per root, shared by its humans), then U (n_h × n)."""
    j = plan.n_judges
    raw = rng.standard_normal((2 * j, n)).reshape(j, 2, n)
    latent, overall = _apply_factor(plan.root_eigen, raw)
    model = latent < plan.cut_model
    root = None if plan.human_root is None else rng.standard_normal(n)
    human_noise = rng.standard_normal((plan.n_h, n))
    return model, _human_latent(plan, overall, human_noise, root) < plan.cut_human


def _human_latent(
    plan: _Plan,
    overall: NDArray[np.float64],
    noise: NDArray[np.float64],
    root: NDArray[np.float64] | None = None,
) -> Any:
    """W = ρ_s·S + √(1 − ρ_s²)·U for rows of U, with S = 1ᵀE/√(2J) = √(2J)·Ē; with a human
    sheet W = ρ_s·S + a·V + b·U (V = ``root``, one per root)."""
    rs = plan.stream_correlation
    if plan.human_root is not None and root is not None:
        a, b = plan.human_root
        shared = math.sqrt(2.0 * plan.n_judges) * overall
        return (rs * shared + a * root) + b * noise
    if rs == 0.0:
        return noise
    shared = math.sqrt(2.0 * plan.n_judges) * overall
    return rs * shared + math.sqrt(max(1.0 - rs * rs, 0.0)) * noise


def _draw_counts(
    plan: _Plan, n: int, rng: np.random.Generator
) -> tuple[NDArray[np.int64], NDArray[np.int64]]:
    """One chunk of n roots as counts: k_i (model) and h_i (human), each of shape (n,).

    The same draws and the same numbers as :func:`_draw`, in bounded memory: when the chunk
    holds more than ``_DRAW_NORMALS`` latents, E is drawn ``per_block`` judges at a time
    (consecutive rows of the same C-ordered matrix, so the same normals). The overall mean Ē
    that every latent needs is summed in a first pass over the blocks in judge order (the order
    of numpy's reduction, so bit for bit the same), then the generator is rewound and the
    blocks are drawn again to count the choices; V (with a human sheet) and U follow, U in
    blocks of rows.
    """
    j = plan.n_judges
    per_block = max(1, _DRAW_NORMALS // (2 * n))
    if per_block >= j and plan.n_h * n <= _DRAW_NORMALS:
        model, human = _draw(plan, n, rng)
        return model.sum(axis=(0, 1)), human.sum(axis=0)
    blocks = [(lo, min(lo + per_block, j)) for lo in range(0, j, per_block)]
    start = rng.bit_generator.state
    total: NDArray[np.float64] | None = None
    for lo, hi in blocks:  # pass 1: Ē
        raw = rng.standard_normal((2 * (hi - lo), n)).reshape(hi - lo, 2, n)
        for row in raw.mean(axis=1):
            if total is None:
                total = row.copy()
            else:
                total += row
    if total is None:  # pragma: no cover - a panel has at least one judge
        raise InputError("judges", "at least one judge", [])
    overall = total / j
    rng.bit_generator.state = start
    s1, s2, s3 = plan.root_eigen
    model_counts = np.zeros(n, dtype=np.int64)
    for lo, hi in blocks:  # pass 2: the same normals again, now the choices
        raw = rng.standard_normal((2 * (hi - lo), n)).reshape(hi - lo, 2, n)
        judge_mean = raw.mean(axis=1)
        latent = s3 * raw
        latent += ((s2 - s3) * judge_mean + (s1 - s2) * overall)[:, None, :]
        model_counts += (latent < plan.cut_model[lo:hi]).sum(axis=(0, 1))
    human_counts = np.zeros(n, dtype=np.int64)
    root = None if plan.human_root is None else rng.standard_normal(n)
    rows = max(1, _DRAW_NORMALS // n)
    for lo in range(0, plan.n_h, rows):
        noise = rng.standard_normal((min(rows, plan.n_h - lo), n))
        human_counts += (_human_latent(plan, overall, noise, root) < plan.cut_human).sum(axis=0)
    return model_counts, human_counts


def chunk_rows(n_roots: int) -> int:
    """Replicate rows per chunk of :func:`simulate_panel` at ``n_roots`` roots per replicate:
    a call for a multiple of this many replicates leaves the generator exactly where the same
    rows of one larger call would, so replicates may be drawn in such slices."""
    return max(1, _CHUNK_ROOTS // max(1, n_roots))


def simulate_panel(
    panel: Panel,
    scenario: TruthScenario,
    human_rate: float,
    n_h: int,
    n_roots: int,
    n_replicates: int,
    rng: np.random.Generator,
    human_icc: float | None = None,
) -> tuple[NDArray[np.int64], NDArray[np.int64]]:
    """(model_counts, human_counts), each int64 of shape (n_replicates, n_roots).

    model_counts[r, i] = k_i ∈ {0..2J}; human_counts[r, i] = h_i ∈ {0..n_h}. Vectorised in
    chunks of whole replicate rows (at most ``_CHUNK_ROOTS`` roots per chunk when n_roots allows).
    ``human_icc``: the human sheet's vote ICC (None: the humans share only ρ_s's root latent).
    """
    gen = _generator(rng)
    n = int_at_least("n_roots", n_roots, 0)
    reps = int_at_least("n_replicates", n_replicates, 0)
    plan = _plan(panel, scenario, human_rate, n_h, human_icc)
    model_counts = np.empty((reps, n), dtype=np.int64)
    human_counts = np.empty((reps, n), dtype=np.int64)
    if n == 0 or reps == 0:
        return model_counts, human_counts
    rows = chunk_rows(n)
    for start in range(0, reps, rows):
        stop = min(start + rows, reps)
        model, human = _draw_counts(plan, (stop - start) * n, gen)
        model_counts[start:stop] = model.reshape(stop - start, n)
        human_counts[start:stop] = human.reshape(stop - start, n)
    return model_counts, human_counts


def simulate_choices(
    panel: Panel,
    scenario: TruthScenario,
    human_rate: float,
    n_h: int,
    n_roots: int,
    rng: np.random.Generator,
    human_icc: float | None = None,
) -> tuple[NDArray[np.int8], NDArray[np.int8]]:
    """Per-judgment choices for n_roots roots: model (n_roots, J, 2) and human (n_roots, n_h),
    1 = prefers the treatment item. Same draws as ``simulate_panel(..., n_roots, 1, rng)`` for
    n_roots <= ``_CHUNK_ROOTS`` (and the same chunking otherwise)."""
    gen = _generator(rng)
    n = int_at_least("n_roots", n_roots, 0)
    plan = _plan(panel, scenario, human_rate, n_h, human_icc)
    j = panel.n_judges
    model_out = np.empty((n, j, 2), dtype=np.int8)
    human_out = np.empty((n, plan.n_h), dtype=np.int8)
    for start in range(0, n, max(1, _CHUNK_ROOTS)):
        stop = min(start + _CHUNK_ROOTS, n)
        model, human = _draw(plan, stop - start, gen)
        model_out[start:stop] = model.transpose(2, 0, 1)
        human_out[start:stop] = human.T
    return model_out, human_out
