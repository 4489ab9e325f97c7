"""A variance-adaptive confidence sequence: predictable plug-in bets on the capital process.

One bounded stream X_i ∈ [0, 1] with conditional mean μ. The capital processes of a candidate
mean m (Waudby-Smith and Ramdas 2023, "Estimating means of bounded random variables by
betting", JRSS-B; §4, "predictable plug-in" bets on the hedged capital process):

* upper  K⁺_t(m) = Π_{i≤t} (1 + λ⁺_i(m) (X_i − m)),   λ⁺_i(m) = min(λ̇_i, c / m),
* lower  K⁻_t(m) = Π_{i≤t} (1 − λ⁻_i(m) (X_i − m)),   λ⁻_i(m) = min(λ̇_i, c / (1 − m)),

with the plug-in λ̇_i chosen before X_i from X_1..X_{i−1} only (predictable):

    λ̇_i = sqrt( 2·log(1/a) / (σ̂²_{i−1} · i · log(1 + i)) ),
    μ̂_i = (1/2 + Σ_{j≤i} X_j) / (i + 1),   σ̂²_i = (1/4 + Σ_{j≤i} (X_j − μ̂_j)²) / (i + 1),

a the per-tail level and c = :data:`BET_CAP` < 1. The "horizon" bets are the same plug-in bets tuned
to a design horizon N fixed before any data (the registered cap): i·log(1 + i) replaced by N, λ̇_i =
sqrt(2·log(1/a) / (σ̂²_{i−1}·N)) (the fixed-n betting interval of the same paper, §4; used here as a
confidence sequence, valid at every time, narrowest near N). The truncation keeps every factor at
least 1 − c > 0 (X_i − m ≥ −m, and ≤ 1 − m), and under μ = m each capital process is a nonnegative
martingale starting at 1 (E[1 + λ(X_i − μ) | past] = 1 because λ is fixed by the past). Ville's
inequality gives P(∃t: K⁺_t(μ) ≥ 1/a) ≤ a whatever the stopping rule, and the same for K⁻: the
guarantee of :mod:`verdictpack.core._mixture`, with bets that grow as the stream proves to vary
little (λ̇ ≈ sqrt(2 log(1/a) / (σ² t log t)), up to c/m), where the fixed grid's largest bet (0.8)
bounds how fast a low-variance stream's interval can close.

Each factor is positive and decreasing in m (1 + λ̇(X − m) below m = c/λ̇, 1 − c + cX/m
above), so K⁺_t(m) decreases in m and K⁻_t increases: the bounds are the roots
lower_t = inf{m : K⁺_t(m) < 1/a}, upper_t = sup{m : K⁻_t(m) < 1/a}, found by bisection (rounded
outward by 1e-12), intersected with the previous bounds (the running intersection; each root's
set covers at every time at once). The bets and values are kept (O(t) memory); an evaluation is
one pass over them, and a bound moves only when the capital at the previous bound reaches 1/a.

:class:`PlugInCS` implements :class:`~verdictpack.core._mixture.ConfidenceSequence`.

Neither kind of bet wins everywhere (measured, docs/statistics.md): the horizon bets give the
narrowest interval near N and stop later before it; the plug-in bets close a
low-variance stream's interval 2-3 times faster than the fixed grid, and the grid is narrower on
high-variance streams over many roots (the plug-in's log(1 + t) shrinks its bets). Their average
is an e-process too (a mean of nonnegative martingales under μ, each starting at 1), so
:class:`BlendCS` bets half the capital each way: K = (K_grid + K_plug) / 2, monotone in m as both
are, within log 2 of the better of the two.

:func:`make_cs` builds a stream's confidence sequence by the name of its bets (:data:`BETS`:
"grid" the fixed grid's :class:`~verdictpack.core._mixture.MixtureCS`, "plugin", "blend",
"horizon"); the batch twin over many replicates is :mod:`verdictpack.core._adaptive_batch`.
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from typing import Any, Literal

import numpy as np

from verdictpack._errors import InputError
from verdictpack._validate import closed_unit, open_interval
from verdictpack.core import _libm
from verdictpack.core._mixture import MixtureCS, MixtureSpec

__all__ = [
    "BETS",
    "BET_CAP",
    "Bets",
    "BlendCS",
    "PlugInCS",
    "bets_horizon",
    "check_bets",
    "check_horizon",
    "make_cs",
]

Bets = Literal["grid", "plugin", "blend", "horizon"]
#: the bets a stream's confidence sequence may use, by name ("grid" the default)
BETS: tuple[Bets, ...] = ("grid", "plugin", "blend", "horizon")

#: c: a bet is at most c/m (c/(1 − m)), so each factor stays at least 1 − c > 0
BET_CAP = 0.75
_BISECT = 200
_OUTWARD = 1e-12


def check_horizon(horizon: Any) -> int | None:
    """A design horizon N (an int ≥ 1) or None, else InputError naming ``horizon``."""
    if horizon is None:
        return None
    if isinstance(horizon, bool) or not isinstance(horizon, int | np.integer) or horizon < 1:
        raise InputError("horizon", "a design horizon of at least 1 root, or None", horizon)
    return int(horizon)


def check_bets(value: Any) -> Bets:
    """The bets' name, or InputError naming the parameter, the allowed names and the value."""
    for name in BETS:
        if value == name:
            return name
    raise InputError("bets", " or ".join(f'"{b}"' for b in BETS), value)


def make_cs(
    bets: str, alpha: float, spec: MixtureSpec | None = None, horizon: int | None = None
) -> MixtureCS | PlugInCS:
    """One stream's confidence sequence at per-tail ``alpha`` with the bets named ``bets``
    (``horizon``: the design horizon the "horizon" bets need, and only they take)."""
    name = check_bets(bets)
    n_design = bets_horizon(name, horizon)
    if name == "grid":
        return MixtureCS(alpha, spec)
    if name == "blend":
        return BlendCS(alpha, spec)
    return PlugInCS(alpha, horizon=n_design)


def bets_horizon(bets: Bets, horizon: Any) -> int | None:
    """The design horizon the named bets run with: an int ≥ 1 for "horizon" (InputError naming
    ``horizon`` when absent), None for every other bets (a horizon given to them is ignored: the
    callers pass the cap whatever the bets)."""
    if bets != "horizon":
        return None
    n_design = check_horizon(horizon)
    if n_design is None:
        raise InputError("horizon", 'a design horizon of at least 1 root for bets "horizon"', None)
    return n_design


class PlugInCS:
    """Scalar confidence sequence for one stream in [0, 1] with predictable plug-in bets."""

    _moved = False  # whether the last update moved a bound (the trackers' refresh test)

    def __init__(self, alpha: float, cap: float = BET_CAP, horizon: int | None = None) -> None:
        self._alpha = open_interval("alpha", alpha, 0.0, 0.5, "a per-tail level in (0, 0.5)")
        self._cap = open_interval("cap", cap, 0.0, 1.0, "a bet cap in (0, 1)")
        self._horizon = check_horizon(horizon)
        self._logc = -math.log(self._alpha)
        self._x: list[float] = []
        self._lam: list[float] = []
        self._sum = 0.0
        self._dev = 0.0
        self._b = [0.0, 1.0]

    @property
    def alpha(self) -> float:
        return self._alpha

    @property
    def t(self) -> int:
        return len(self._x)

    @property
    def lower(self) -> float:
        return self._b[0]

    @property
    def upper(self) -> float:
        return self._b[1]

    def _log_capital(self, m: float, sign: float) -> float:
        room = m if sign > 0 else 1.0 - m  # how far X may fall against the bet
        lam = np.asarray(self._lam)
        if room > 0:
            lam = np.minimum(lam, self._cap / room)
        return float(np.sum(_libm.log1p(sign * lam * (np.asarray(self._x) - m))))

    def log_e_upper(self, m: float) -> float:
        """log K⁺_t(m): large when the mean is above ``m`` (gives the lower bound)."""
        return self._log_capital(closed_unit("m", m), 1.0)

    def log_e_lower(self, m: float) -> float:
        """log K⁻_t(m): large when the mean is below ``m`` (gives the upper bound)."""
        return self._log_capital(closed_unit("m", m), -1.0)

    def update(self, x: float) -> None:
        x = closed_unit("x", x)
        n = len(self._x) + 1
        var_before = 0.25 if n == 1 else (0.25 + self._dev) / n
        scale = n * math.log1p(n) if self._horizon is None else float(self._horizon)
        lam = math.sqrt(2.0 * self._logc / (var_before * scale))
        self._lam.append(lam)
        self._x.append(x)
        self._sum += x
        self._dev += (x - (0.5 + self._sum) / (n + 1.0)) ** 2
        moved = self._move(0)
        self._moved = self._move(1) or moved

    def _add(self, x: float) -> None:
        self.update(x)

    def extend(self, xs: Iterable[float]) -> None:
        for x in xs:
            self.update(x)

    def _move(self, side: int) -> bool:
        """Side 0: raise the lower bound while K⁺ at it reaches 1/a; side 1: lower the upper.
        Whether the bound was searched."""
        sign = 1.0 if side == 0 else -1.0
        start = self._b[side]
        if self._log_capital(start, sign) < self._logc:
            return False  # the bound does not move
        # rejected at ``start``; the root lies between it and the other end (or the far end
        # itself is rejected: the bound passes it, an empty interval)
        lo, hi = (start, 1.0) if side == 0 else (0.0, start)
        far = hi if side == 0 else lo
        if self._log_capital(far, sign) >= self._logc:
            self._b[side] = far + (_OUTWARD if side == 0 else -_OUTWARD)
            return True
        for _ in range(_BISECT):  # keep: rejected end and accepted end
            mid = 0.5 * (lo + hi)
            if mid in (lo, hi):
                break
            rejected = self._log_capital(mid, sign) >= self._logc
            if side == 0:
                lo, hi = (mid, hi) if rejected else (lo, mid)
            else:
                lo, hi = (lo, mid) if rejected else (mid, hi)
        # the root lies between the two ends: report the rejected end, moved outward by the
        # margin (conservative: never inside the root)
        self._b[side] = lo - _OUTWARD if side == 0 else hi + _OUTWARD
        if side == 0:
            self._b[0] = max(self._b[0], start)
        else:
            self._b[1] = min(self._b[1], start)
        return True


class BlendCS(PlugInCS):
    """Half the capital on the fixed bet grid (:class:`~verdictpack.core._mixture.MixtureCS`),
    half on the plug-in bets: K = (K_grid + K_plug) / 2 (module docstring)."""

    def __init__(self, alpha: float, spec: MixtureSpec | None = None, cap: float = BET_CAP) -> None:
        self._grid = MixtureCS(alpha, spec)
        super().__init__(alpha, cap)

    def update(self, x: float) -> None:
        self._grid.update(closed_unit("x", x))
        super().update(x)

    def _log_capital(self, m: float, sign: float) -> float:
        grid = self._grid.log_e_upper(m) if sign > 0 else self._grid.log_e_lower(m)
        plug = super()._log_capital(m, sign)
        hi, lo = max(grid, plug), min(grid, plug)
        both = hi if lo == -math.inf else hi + math.log1p(math.exp(lo - hi))
        return both - math.log(2.0)
