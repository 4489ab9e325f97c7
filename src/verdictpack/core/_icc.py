"""Between-item heterogeneity of binary votes: the intraclass correlation ICC_H.

Pure mathematics (no config, no I/O). Two humans r, r' vote on the same root with rate p.

**Definition** (the vote scale): ICC = Cov(v_r, v_r') / (p(1 − p)), the share of a vote's variance
that lies between roots. For votes v = 1[W < c], c = Φ⁻¹(p), whose latents (W, W') are standard
bivariate normal with correlation r, Cov = Φ₂(c, c; r) − p² and Φ₂(c, c; r) = p − 2·T(c, a) with
a = √((1 − r)/(1 + r)) and T Owen's function, so

    ICC(p, r) = 1 − 2·T(c, √((1 − r)/(1 + r))) / (p(1 − p))        (:func:`vote_icc`, exact)

It is strictly increasing in r, 0 at r = 0 and 1 at r = 1. :func:`latent_for_icc` inverts it
(bracketed root find on [floor, 1] to double precision); a requested ICC below ICC(p, floor) --
the floor being the latent correlation the humans already share, e.g. ρ_s² through the panel --
is refused, naming that lowest ICC.

**Estimate** (:func:`fit_icc`): the one-way ANOVA estimator over the roots with at least two
votes (k roots, N votes, n_i per root):

    MSB = Σ n_i (ȳ_i − ȳ)² / (k − 1),  MSW = Σ_i Σ_r (y_ir − ȳ_i)² / (N − k),
    n₀ = (N − Σ n_i² / N) / (k − 1),   ICC = (MSB − MSW) / (MSB + (n₀ − 1)·MSW)

(ties count ½, as every study value). Its interval is the percentile interval of a cluster
bootstrap over those roots (roots resampled with replacement, their votes kept together),
``n_boot`` resamples from the generator given, in a fixed order so the same generator gives the
same interval. With fewer than ``min_roots`` such roots no estimate is made (a reason instead).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, Final

import numpy as np
from numpy.typing import NDArray
from scipy import optimize, special

from verdictpack._errors import InputError
from verdictpack._validate import closed_interval, open_unit

__all__ = ["IccFit", "fit_icc", "latent_for_icc", "vote_icc"]

MIN_ROOTS: Final[int] = 10  # roots with two or more votes below which no ICC is estimated
_BOOT: Final[int] = 2000
_BOOT_CELLS: Final[int] = 1 << 22  # resampled root indices held at once (memory only)
_TOL: Final[float] = 1e-12  # rounding allowance when comparing an ICC with its floor


def vote_icc(rate: float, latent_correlation: float) -> float:
    """ICC of two votes at ``rate`` whose latents correlate ``latent_correlation`` ∈ [0, 1]."""
    p = open_unit("rate", rate)
    r = closed_interval("latent_correlation", latent_correlation, 0.0, 1.0, "a number in [0, 1]")
    if r == 1.0:
        return 1.0
    c = float(special.ndtri(p))
    t = float(special.owens_t(c, math.sqrt((1.0 - r) / (1.0 + r))))
    return 1.0 - 2.0 * t / (p * (1.0 - p))


def latent_for_icc(rate: float, icc: float, floor: float = 0.0, parameter: str = "icc") -> float:
    """The latent correlation r ∈ [floor, 1] whose votes at ``rate`` have intraclass correlation
    ``icc``; InputError (naming ``parameter`` and the lowest ICC ``floor`` allows) below it."""
    lowest = vote_icc(rate, floor)
    value = closed_interval(parameter, icc, 0.0, 1.0, "an intraclass correlation in [0, 1]")
    if value < lowest - _TOL:
        raise InputError(
            parameter,
            f"an intraclass correlation of at least {lowest:.6g}: the humans' latent "
            f"correlation through the panel (stream correlation squared, {floor:.6g}) already "
            f"gives their votes at rate {float(rate):.6g} that much",
            icc,
        )
    if value <= lowest:
        return float(floor)
    if value >= 1.0:
        return 1.0
    root = optimize.brentq(
        lambda r: vote_icc(rate, r) - value, float(floor), 1.0, xtol=1e-15, maxiter=200
    )
    return float(root)


@dataclass(frozen=True)
class IccFit:
    """The ANOVA ICC of votes (None with ``reason`` when too few roots had two votes)."""

    icc: float | None
    ci: tuple[float, float] | None
    roots: int  # roots with two or more votes (the ones used)
    votes: int
    level: float
    basis: str
    reason: str = ""


def _anova(n: Any, s: Any, q: Any) -> Any:
    """ICC from per-root counts n, sums s and sums of squares q (last axis = roots)."""
    big_n = n.sum(axis=-1)
    k = n.shape[-1]
    between = (s * s / n).sum(axis=-1)
    total = s.sum(axis=-1)
    msb = (between - total * total / big_n) / (k - 1)
    msw = (q.sum(axis=-1) - between) / (big_n - k)
    n0 = (big_n - (n * n).sum(axis=-1) / big_n) / (k - 1)
    denom = msb + (n0 - 1.0) * msw
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(denom > 0.0, (msb - msw) / np.where(denom > 0.0, denom, 1.0), np.nan)


def fit_icc(
    root: Any,
    value: Any,
    rng: np.random.Generator,
    *,
    level: float = 0.95,
    n_boot: int = _BOOT,
    min_roots: int = MIN_ROOTS,
) -> IccFit:
    """The one-way ANOVA ICC of ``value`` grouped by ``root`` (equal-length arrays; roots with
    fewer than two values left out) and its cluster-bootstrap percentile interval."""
    roots: NDArray[np.int64] = np.asarray(root, dtype=np.int64)
    vals: NDArray[np.float64] = np.asarray(value, dtype=np.float64)
    if roots.shape != vals.shape or roots.ndim != 1:
        raise InputError("value", "one value per root index", vals.shape)
    if roots.size and (roots.min() < 0 or not np.isfinite(vals).all()):
        raise InputError("value", "root indices >= 0 and finite values", "a negative or NaN")
    size = int(roots.max()) + 1 if roots.size else 0
    n_all = np.bincount(roots, minlength=size)
    keep = n_all >= 2
    n = n_all[keep].astype(np.float64)
    s = np.bincount(roots, weights=vals, minlength=size)[keep]
    q = np.bincount(roots, weights=vals * vals, minlength=size)[keep]
    k, votes = int(n.size), int(n.sum())
    basis = f"one-way ANOVA over roots with two or more votes; cluster bootstrap ({n_boot:,})"
    if k < min_roots:
        return IccFit(
            None,
            None,
            k,
            votes,
            level,
            basis,
            f"{k} root(s) with two or more human judgments; at least {min_roots} needed",
        )
    point = float(_anova(n, s, q))
    if not math.isfinite(point):
        return IccFit(None, None, k, votes, level, basis, "every human vote is the same")
    per = max(1, _BOOT_CELLS // k)
    stats = np.empty(n_boot)
    for lo in range(0, n_boot, per):  # bounded: ceil(n_boot / per) resample batches
        hi = min(lo + per, n_boot)
        pick = rng.integers(0, k, size=(hi - lo, k))
        stats[lo:hi] = _anova(n[pick], s[pick], q[pick])
    stats = stats[np.isfinite(stats)]
    if stats.size == 0:  # pragma: no cover - a finite point leaves some finite resample
        return IccFit(point, None, k, votes, level, basis, "no resample had a defined ICC")
    tail = (1.0 - level) / 2.0
    ci = (float(np.quantile(stats, tail)), float(np.quantile(stats, 1.0 - tail)))
    return IccFit(point, ci, k, votes, level, basis)
