"""The three tracks of a sequential run, fed one root at a time, frozen at their verdicts.

Every sequential kind reads the same evidence through three tracks, each an h-tracker of the
compiled kernel (:class:`~verdictpack.core._tracker.BatchHTracker`, one replicate): the
*registered* track (the registered construction at the governing threshold: its verdict stops
the run), the *extension* track (the same construction at the weaker extension minimum) and the
*comparison* track (the other construction at the governing threshold). Each track's verdict is
the first one its interval reaches (frozen there, with its root, interval and bounds); the
tracks never decide when to stop, which stays with the caller (the engine and a live study stop
at the registered verdict; a study on real data also reads on to the end of the data it already
holds, for the interval over all of it).

Two forms, one set of numbers: :class:`TrackTrace` (the trajectories over data in hand, one
compiled pass per track: a study's files) and :class:`TrackStream` (the same kernel root by
root, handing over the :class:`TrackTrace` of what it was fed: the engine, which judges a
stimulus only when it needs one, and a live study; each decides when to stop on the numbers its
result reports). The scalar :class:`~verdictpack.core._tracker.HTracker` gives the same numbers
to about 1e-15 (the tests hold them together); it is the public, one-root-at-a-time interface.

**Bounded values.** A root's M_i and H_i may be intervals [lo, hi] (an unknown answer bounded
both ways, :mod:`verdictpack.evidence._assemble`). Each tracker then runs as two: one fed
(M_lo, H_hi), whose model lower end, human upper end and D lower end (D from M_lo − H_hi) it
keeps, and one fed (M_hi, H_lo), for the model upper, human lower and D upper ends. The
e-processes are monotone in the observations (each factor 1 ± λ(x − m) moves one way in x), so
each end so computed lies beyond the end that the full, valid answers would have given: every
end keeps its level whatever the unknowns were, and the h-interval composed from the ends (the
corners or the hybrid polygon) keeps the error per side. With no interval value the two
trackers coincide and the first one's interval is the track's.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from types import MappingProxyType

import numpy as np
from numpy.typing import ArrayLike, NDArray

from verdictpack._errors import InputError
from verdictpack.core._hinterval import (
    VERDICT_CODES,
    classify,
    classify_codes,
    corners_h_interval,
    hybrid_h_interval,
)
from verdictpack.core._mixture import MixtureSpec
from verdictpack.core._tracker import BatchHTracker

__all__ = [
    "TRACKS",
    "TrackResult",
    "TrackSettings",
    "TrackStream",
    "TrackTrace",
    "Value",
]

Value = float | tuple[float, float]
"""A root's stream value: a number, or bounds (lower, upper) on an unknown one."""

TRACKS = ("registered", "extension", "comparison")


@dataclass(frozen=True)
class TrackResult:
    """One track's verdict: registered, extension, or the comparison construction."""

    track: str
    construction: str
    threshold_h: float
    claim: str
    verdict: str
    roots_at_verdict: int | None
    h_interval: tuple[float, float] | None
    model_bounds: tuple[float, float] | None
    human_bounds: tuple[float, float] | None
    diff_bounds: tuple[float, float] | None
    error_per_side: float


@dataclass(frozen=True)
class TrackSettings:
    """What the three tracks run on: the registered ``construction`` and the comparison one
    (``other``), the per-tail level ``alpha``, the bet grid ``spec``, the governing threshold
    ``threshold_h`` and the extension minimum ``extension_h``, each track's claim
    (``claims``, keys :data:`TRACKS`) and the streams' ``bets``
    (:data:`~verdictpack.core._adaptive.BETS`), with the design ``horizon`` the "horizon" bets are
    tuned to (the registered cap; ignored by the other bets)."""

    construction: str
    other: str
    alpha: float
    spec: MixtureSpec
    threshold_h: float
    extension_h: float
    claims: Mapping[str, str]
    bets: str = "grid"
    horizon: int | None = None


def _pair(v: Value) -> tuple[float, float]:
    if isinstance(v, tuple):
        return float(v[0]), float(v[1])
    return float(v), float(v)


_Trajectory = tuple[NDArray[np.float64], NDArray[np.float64], NDArray[np.float64]]
"""One compiled trajectory: bounds (T, 2·streams), h_lo (T,), h_hi (T,)."""


def _by_track(settings: TrackSettings) -> dict[str, tuple[str, float]]:
    """Each track's construction and threshold."""
    s = settings
    return {
        "registered": (s.construction, s.threshold_h),
        "extension": (s.construction, s.extension_h),
        "comparison": (s.other, s.threshold_h),
    }


def _kernel(
    settings: TrackSettings, name: str, ms: NDArray[np.float64], hs: NDArray[np.float64]
) -> BatchHTracker:
    """One replicate of track ``name`` in the compiled kernel, over the value supports."""
    con, thr = _by_track(settings)[name]
    return BatchHTracker(
        1,
        con,
        settings.alpha,
        settings.spec,
        thr,
        ms,
        hs,
        bets=settings.bets,
        horizon=settings.horizon,
    )


def _compose(
    lower: NDArray[np.float64], upper: NDArray[np.float64]
) -> tuple[NDArray[np.float64], NDArray[np.float64], NDArray[np.float64]]:
    """Bounds and h-interval trajectories from the lower-end trace (fed M_lo, H_hi) and the
    upper-end trace (fed M_hi, H_lo): each end taken from the trace that bounds it (module
    docstring), the interval composed as :class:`HTracker` composes it, frozen from the first
    empty region on (possible only on a miscovering path)."""
    b = lower.copy()
    b[:, 1] = upper[:, 1]  # model upper
    b[:, 2] = upper[:, 2]  # human lower
    if b.shape[1] > 4:
        b[:, 5] = upper[:, 5]  # D upper ((D + 1) / 2 scale)
        lo, hi, empty = hybrid_h_interval(
            b[:, 0], b[:, 1], b[:, 2], b[:, 3], 2.0 * b[:, 4] - 1.0, 2.0 * b[:, 5] - 1.0
        )
    else:
        lo, hi, empty = corners_h_interval(b[:, 0], b[:, 1], b[:, 2], b[:, 3])
    hits = np.flatnonzero(empty)
    if hits.size:
        k = int(hits[0])
        lo[k:] = lo[k - 1] if k > 0 else -math.pi
        hi[k:] = hi[k - 1] if k > 0 else math.pi
    return b, lo, hi


class TrackTrace:
    """The three tracks over a whole stream at once: the compiled kernel's trajectory of each.

    For data already in hand (a study's files) every root's bounds and interval come from one
    compiled pass per track (:meth:`BatchHTracker.trace`); the numbers are the compiled
    e-process's, which agree with :class:`HTracker`'s to the last bits of the floating-point
    search (about 1e-15). :meth:`at_stop` reads the verdicts off the trajectory with the module's
    rules (those :class:`TrackStream` applies as it goes): each track's first verdict up to the
    registered stop, the registered track's at ``cap`` INCONCLUSIVE. ``m`` holds M_i; ``h``
    holds H_i, NaN where a root has no human judgment. :meth:`over_all` reads every track over
    all the data, the cap aside (what the data say once the registered verdict is frozen).
    """

    def __init__(
        self,
        settings: TrackSettings,
        m: NDArray[np.float64],
        h: NDArray[np.float64],
        cap: int,
        *,
        m_upper: NDArray[np.float64] | None = None,
        h_upper: NDArray[np.float64] | None = None,
    ) -> None:
        m = np.asarray(m, np.float64)
        h = np.asarray(h, np.float64)
        mu = m if m_upper is None else np.asarray(m_upper, np.float64)
        hu = h if h_upper is None else np.asarray(h_upper, np.float64)
        present = ~np.isnan(h)
        shapes_ok = m.ndim == 1 and m.shape == h.shape == mu.shape == hu.shape
        if not shapes_ok:
            raise InputError("m, h", "1-d arrays of one length (h NaN: no human)", None)
        bad = (
            ~(np.isfinite(m) & (m >= 0) & (m <= mu) & (mu <= 1))
            | (present & ~((h >= 0) & (h <= hu) & (hu <= 1)))
            | (present != ~np.isnan(hu))
        )
        if bad.any():
            raise InputError(
                "m, h",
                "values in [0, 1], each lower value at most its upper one (h NaN: no human)",
                int(np.flatnonzero(bad)[0]),
            )
        bounded = bool(np.any(m != mu) or np.any(h[present] != hu[present]))
        ms = np.unique(np.concatenate([m, mu, [0.0, 1.0]]))
        hs = np.unique(np.concatenate([h[present], hu[present], [0.0, 1.0]]))

        def m_index(values: NDArray[np.float64]) -> NDArray[np.int64]:
            return np.asarray(np.searchsorted(ms, values), np.int64)

        def h_index(values: NDArray[np.float64]) -> NDArray[np.int64]:
            idx = np.searchsorted(hs, np.where(present, values, 0.0))
            return np.asarray(np.where(present, idx, 0), np.int64)

        # one trace of the values; with bounds, the lower-end trace (M_lo, H_hi) and the
        # upper-end one (M_hi, H_lo)
        feeds = [(m_index(m), h_index(hu if bounded else h))]
        if bounded:
            feeds.append((m_index(mu), h_index(h)))
        traces: dict[str, list[_Trajectory]] = {}
        kernels: dict[str, BatchHTracker] = {}
        for name in TRACKS:
            traces[name] = []
            for mi, hi in feeds:
                kernels[name] = _kernel(settings, name, ms, hs)
                traces[name].append(kernels[name].trace(mi, hi, present))
        self._fill(settings, cap, (m, mu, h, hu), bounded, traces, kernels)

    def _fill(
        self,
        settings: TrackSettings,
        cap: int,
        values: tuple[NDArray[np.float64], ...],
        bounded: bool,
        traces: Mapping[str, list[_Trajectory]],
        kernels: Mapping[str, BatchHTracker],
    ) -> None:
        """Every track's bounds, interval and verdict codes per root from its trajectories (one,
        or the lower-end and upper-end ones when ``bounded``)."""
        self.claims = MappingProxyType({t: settings.claims[t] for t in TRACKS})
        self.values = values  # (M_lo, M_hi, H_lo, H_hi) per root, H NaN where no human
        self.n = int(values[0].size)
        self.cap = int(min(cap, self.n))
        self.bounded = bounded
        by_track = _by_track(settings)
        self.construction = {t: by_track[t][0] for t in TRACKS}
        self.threshold = {t: by_track[t][1] for t in TRACKS}
        self.error_per_side: dict[str, float] = {}
        self.stream_alphas: dict[str, float] = {}
        self.track_alphas: dict[str, dict[str, float]] = {}
        self.bounds: dict[str, NDArray[np.float64]] = {}
        self.h_lo: dict[str, NDArray[np.float64]] = {}
        self.h_hi: dict[str, NDArray[np.float64]] = {}
        self.codes: dict[str, NDArray[np.int8]] = {}
        for name in TRACKS:
            bt = kernels[name]
            self.error_per_side[name] = bt.error_per_side
            alphas = {"model": bt.model.alpha, "human": bt.human.alpha}
            if bt.diff is not None:
                alphas["diff"] = bt.diff.alpha
            self.track_alphas[name] = alphas
            if name == "registered":
                self.stream_alphas = dict(alphas)
            if not bounded:
                b, lo, hi_ = traces[name][0]
            else:
                b, lo, hi_ = _compose(traces[name][0][0], traces[name][1][0])
            self.bounds[name], self.h_lo[name], self.h_hi[name] = b, lo, hi_
            self.codes[name] = classify_codes(lo, hi_, self.threshold[name])

    def first(self, name: str, within: int | None = None) -> int | None:
        """Index of the track's first verdict among the first ``within`` roots (all: None)."""
        codes = self.codes[name][: self.n if within is None else within]
        hits = np.flatnonzero(codes)
        return None if hits.size == 0 else int(hits[0])

    @property
    def stop(self) -> int | None:
        """Index of the root at which the registered track stops: its verdict, else the cap
        (INCONCLUSIVE there); None without roots."""
        k = self.first("registered", self.cap)
        return k if k is not None else (self.cap - 1 if self.cap > 0 else None)

    def state(self, name: str, i: int, verdict: str, at_verdict: int | None) -> TrackResult:
        """Track ``name`` as it stood after root index ``i`` (None: before any root)."""
        b = self.bounds[name]
        diff = None
        if b.shape[1] > 4:
            diff = (2.0 * float(b[i, 4]) - 1.0, 2.0 * float(b[i, 5]) - 1.0)
        return TrackResult(
            track=name,
            construction=self.construction[name],
            threshold_h=self.threshold[name],
            claim=self.claims[name],
            verdict=verdict,
            roots_at_verdict=at_verdict,
            h_interval=(float(self.h_lo[name][i]), float(self.h_hi[name][i])),
            model_bounds=(float(b[i, 0]), float(b[i, 1])),
            human_bounds=(float(b[i, 2]), float(b[i, 3])),
            diff_bounds=diff,
            error_per_side=self.error_per_side[name],
        )

    def _frozen(
        self, name: str, within: int | None, missing: str, at_cap: bool = False
    ) -> TrackResult:
        k = self.first(name, within)
        if k is not None:
            code = int(self.codes[name][k])
            return self.state(name, k, VERDICT_CODES[code].value, k + 1)  # type: ignore[union-attr]
        last = (self.n if within is None else within) - 1
        if at_cap and last >= 0:
            return self.state(name, last, "INCONCLUSIVE", last + 1)
        if last < 0:
            return TrackResult(
                name,
                self.construction[name],
                self.threshold[name],
                self.claims[name],
                missing,
                None,
                None,
                None,
                None,
                None,
                self.error_per_side[name],
            )
        return self.state(name, last, missing, None)

    def at_stop(self, missing: str) -> dict[str, TrackResult]:
        """Every track as the registered stop left it (each frozen at its verdict, if reached by
        then; otherwise labelled ``missing`` with its state at the stop)."""
        stop = self.stop
        within = 0 if stop is None else stop + 1
        out = {}
        for name in TRACKS:
            if name == "registered":
                out[name] = self._frozen(name, within, "INCONCLUSIVE", at_cap=True)
            else:
                out[name] = self._frozen(name, within, missing)
        return out

    def over_all(self, missing: str) -> dict[str, TrackResult]:
        """Every track over all the data: its first verdict, whatever the cap (or ``missing``),
        with the interval and bounds after the last root (no root: ``missing``, no interval)."""
        out = {}
        for name in TRACKS:
            if self.n == 0:
                out[name] = self._frozen(name, None, missing)
                continue
            first = self._frozen(name, None, missing)
            end = self.state(name, self.n - 1, first.verdict, first.roots_at_verdict)
            out[name] = end
        return out

    def labels(self, name: str) -> NDArray[np.object_]:
        """Per root, the track's verdict so far (CONTINUE before its first verdict; the
        registered track's stays frozen from its stop, INCONCLUSIVE at the cap)."""
        out = np.full(self.n, "CONTINUE", dtype=object)
        k = self.first(name, self.cap if name == "registered" else None)
        if k is not None:
            out[k:] = VERDICT_CODES[int(self.codes[name][k])].value  # type: ignore[union-attr]
        elif name == "registered" and self.cap > 0:
            out[self.cap - 1 :] = "INCONCLUSIVE"
        return out


class TrackStream:
    """The three tracks fed one root at a time through the compiled kernel: the streaming twin
    of :class:`TrackTrace`, for evidence that arrives while the run decides when to stop (a
    live study).

    Each track runs as :class:`TrackTrace` runs it -- one replicate of
    :class:`~verdictpack.core._tracker.BatchHTracker` fed (M_lo, H_hi) and one fed
    (M_hi, H_lo) -- and :meth:`step` keeps every root's bounds. :meth:`trace` hands over the
    :class:`TrackTrace` of the first roots fed, with the numbers :class:`TrackTrace` computes
    from the same values (the kernel updated root by root gives its trace's numbers bit for
    bit): the roots go through the tracks once, and the verdict the run stopped on is the one
    its result reports. ``m_support`` and ``h_support`` are the values expected (0 and 1 are
    added); a value outside them widens them (:meth:`_grow`). The interval a step classifies is
    the kernel's while every value so far is a number and the composed one (:func:`_compose`)
    from the first bounded value on; :meth:`trace` composes every root once any is bounded, as
    :class:`TrackTrace` does, so a root before the first bounded one may differ there in the
    last bits.
    """

    def __init__(
        self,
        settings: TrackSettings,
        cap: int,
        m_support: NDArray[np.float64],
        h_support: NDArray[np.float64],
    ) -> None:
        self._settings = settings
        self._claims = {t: settings.claims[t] for t in TRACKS}  # every track named, now
        self._cap = int(cap)
        self._ms = np.unique(np.concatenate([np.asarray(m_support, np.float64), [0.0, 1.0]]))
        self._hs = np.unique(np.concatenate([np.asarray(h_support, np.float64), [0.0, 1.0]]))
        self._by_track = _by_track(settings)
        self._kernels = self._new_kernels()
        # per track and feed, each root's bounds and interval; the values fed (M_lo, M_hi, H_lo,
        # H_hi), in growing tables (about 0.4 kB a root in all)
        width = {name: 8 if pair[0].diff is not None else 6 for name, pair in self._kernels.items()}
        self._rows = {name: (_Rows(width[name]), _Rows(width[name])) for name in TRACKS}
        self._values = _Rows(4)
        self._bounded = False
        self._interval = {name: (-math.pi, math.pi) for name in TRACKS}
        self._empty = dict.fromkeys(TRACKS, False)
        self._verdicts: dict[str, str] = {}
        self.roots = 0

    @property
    def verdicts(self) -> Mapping[str, str]:
        """Each track's verdict, from the root it first reached one (frozen there)."""
        return MappingProxyType(self._verdicts)

    @property
    def stopped(self) -> bool:
        """True once the registered track has its verdict."""
        return "registered" in self._verdicts

    def state_labels(self) -> dict[str, str]:
        """Each track's verdict so far (CONTINUE while it has none)."""
        return {name: self._verdicts.get(name, "CONTINUE") for name in TRACKS}

    def interval(self, name: str) -> tuple[float, float]:
        """Track ``name``'s h-interval after the last root fed."""
        return self._interval[name]

    def bounds(self, name: str) -> dict[str, tuple[float, float] | None]:
        """Track ``name``'s stream bounds after the last root fed (``model``, ``human``,
        ``diff``: None for the corners), each end from the kernel that bounds it."""
        low, high = (rows.last for rows in self._rows[name])
        diff = None
        if low.size > 6:
            diff = (2.0 * float(low[4]) - 1.0, 2.0 * float(high[5]) - 1.0)
        return {
            "model": (float(low[0]), float(high[1])),
            "human": (float(high[2]), float(low[3])),
            "diff": diff,
        }

    def model_log_e(self, name: str, m: float) -> tuple[float, float]:
        """Track ``name``'s model stream, as fed the lower values (all of it while nothing is
        bounded): (log E⁺, log E⁻) at a candidate mean ``m`` -- the evidence above ``m``, and
        below it, now."""
        cs = self._kernels[name][0].model
        return float(cs.log_e_upper(m)[0]), float(cs.log_e_lower(m)[0])

    def _new_kernels(self) -> dict[str, tuple[BatchHTracker, BatchHTracker]]:
        s, ms, hs = self._settings, self._ms, self._hs
        return {name: (_kernel(s, name, ms, hs), _kernel(s, name, ms, hs)) for name in TRACKS}

    def _grow(self, m: tuple[float, float], h: tuple[float, float] | None) -> None:
        """Take values outside the supports into them: every kernel goes on over the wider
        supports from the state it is in (:meth:`BatchHTracker.widened`; a construct whose
        observation is a probability brings a new value almost every root)."""
        known = all(_holds(self._ms, v) for v in m)
        if known and (h is None or all(_holds(self._hs, v) for v in h)):
            return  # the usual root: nothing to widen
        ms = np.unique(np.concatenate([self._ms, m]))
        hs = self._hs if h is None else np.unique(np.concatenate([self._hs, h]))
        self._ms, self._hs = ms, hs
        self._kernels = {
            name: (low.widened(ms, hs), high.widened(ms, hs))
            for name, (low, high) in self._kernels.items()
        }

    def step(self, m: Value, h: Value | None, at_cap: bool = False) -> None:
        """Feed one root (M_i; H_i or None; each a number or bounds) to every track; freeze the
        tracks reaching a verdict on it (the registered one INCONCLUSIVE at ``at_cap``)."""
        m_lo, m_hi = _pair(m)
        h_lo, h_hi = (math.nan, math.nan) if h is None else _pair(h)
        where = f"root {self.roots + 1}"
        if not 0.0 <= m_lo <= m_hi <= 1.0:
            raise InputError(f"M ({where})", "bounds 0 <= lower <= upper <= 1", (m_lo, m_hi))
        if h is not None and not 0.0 <= h_lo <= h_hi <= 1.0:
            raise InputError(f"H ({where})", "bounds 0 <= lower <= upper <= 1", (h_lo, h_hi))
        self._grow((m_lo, m_hi), None if h is None else (h_lo, h_hi))
        ms, hs = self._ms, self._hs
        mi = (int(np.searchsorted(ms, m_lo)), int(np.searchsorted(ms, m_hi)))
        hi = (
            (0, 0)
            if h is None
            else (int(np.searchsorted(hs, h_lo)), int(np.searchsorted(hs, h_hi)))
        )
        self._bounded |= m_lo != m_hi or (h is not None and h_lo != h_hi)
        self._values.append((m_lo, m_hi, h_lo, h_hi))
        present = np.array([h is not None])
        self.roots += 1
        for name in TRACKS:
            low, high = self._kernels[name]
            low.update(np.array([mi[0]]), np.array([hi[1]]), present)
            high.update(np.array([mi[1]]), np.array([hi[0]]), present)
            rows = (_kernel_row(low), _kernel_row(high))
            self._rows[name][0].append(rows[0])
            self._rows[name][1].append(rows[1])
            self._interval[name] = self._now(name, *rows)
            if name in self._verdicts:
                continue
            lo, up = self._interval[name]
            cap_here = at_cap and name == "registered"
            verdict = classify(lo, up, self._by_track[name][1], at_cap=cap_here)
            if verdict is not None:
                self._verdicts[name] = verdict.value

    def _now(
        self, name: str, low: NDArray[np.float64], high: NDArray[np.float64]
    ) -> tuple[float, float]:
        """The track's interval after this root: the kernel's, or composed once bounded."""
        if not self._bounded:
            return float(low[-2]), float(low[-1])
        if self._empty[name]:
            return self._interval[name]
        b = low[:-2].copy()
        b[1], b[2] = high[1], high[2]
        if b.size > 4:
            b[5] = high[5]
            lo, hi, empty = hybrid_h_interval(
                b[0:1], b[1:2], b[2:3], b[3:4], 2.0 * b[4:5] - 1.0, 2.0 * b[5:6] - 1.0
            )
        else:
            lo, hi, empty = corners_h_interval(b[0:1], b[1:2], b[2:3], b[3:4])
        if bool(empty[0]):
            self._empty[name] = True
            return self._interval[name]
        return float(lo[0]), float(hi[0])

    def trace(self, n: int | None = None) -> TrackTrace:
        """The :class:`TrackTrace` of the first ``n`` roots fed (all: None)."""
        k = self.roots if n is None else n
        if not 0 <= k <= self.roots:
            raise InputError("n", f"a number of roots fed (0..{self.roots})", n)
        m_lo, m_hi, h_lo, h_hi = np.array(self._values.head(k).T)
        has = ~np.isnan(h_lo)
        bounded = bool(np.any(m_lo != m_hi) or np.any(h_lo[has] != h_hi[has]))
        traces: dict[str, list[_Trajectory]] = {}
        kernels = {name: pair[0] for name, pair in self._kernels.items()}
        for name in TRACKS:
            width = 6 if kernels[name].diff is not None else 4
            traces[name] = []
            for rows in self._rows[name][: 2 if bounded else 1]:
                a = np.array(rows.head(k))
                traces[name].append((a[:, :width], a[:, width], a[:, width + 1]))
        values = (m_lo, m_hi, h_lo, h_hi)
        trace = TrackTrace.__new__(TrackTrace)  # of the trajectories streamed, not traced anew
        trace._fill(self._settings, self._cap, values, bounded, traces, kernels)
        return trace


def _holds(support: NDArray[np.float64], value: float) -> bool:
    """Whether the sorted ``support`` holds ``value``."""
    k = int(np.searchsorted(support, value))
    return k < support.size and bool(support[k] == value)


class _Rows:
    """A table of float rows appended one at a time (its storage doubles when full)."""

    def __init__(self, width: int) -> None:
        self._a: NDArray[np.float64] = np.empty((64, width))
        self.n = 0

    def append(self, row: ArrayLike) -> None:
        if self.n == self._a.shape[0]:
            grown = np.empty((2 * self.n, self._a.shape[1]))
            grown[: self.n] = self._a
            self._a = grown
        self._a[self.n] = row
        self.n += 1

    @property
    def last(self) -> NDArray[np.float64]:
        return np.asarray(self._a[self.n - 1], np.float64)

    def head(self, k: int) -> NDArray[np.float64]:
        """The first ``k`` rows (a view)."""
        return self._a[:k]


def _kernel_row(bt: BatchHTracker) -> NDArray[np.float64]:
    """Replicate 0's bounds (the trace's columns) and h-interval after its last update."""
    cols = [bt.model.lower[0], bt.model.upper[0], bt.human.lower[0], bt.human.upper[0]]
    if bt.diff is not None:
        cols += [bt.diff.lower[0], bt.diff.upper[0]]
    cols += [bt.h_lo[0], bt.h_hi[0]]
    return np.array(cols, np.float64)
