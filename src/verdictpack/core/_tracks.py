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

One implementation, two views: :class:`TrackStream` feeds the kernel a block of roots at a time
(one root for the engine, which judges a stimulus only when it needs one, and for a live study
as its ledger commits them; a study's whole files at once) and hands over the
:class:`TrackTrace` of what it was fed, every root's bounds, interval and verdict code. The block
size never moves a number (the kernel fed a block in one call gives the numbers it gives root by
root, bit for bit). The scalar :class:`~verdictpack.core._tracker.HTracker` gives the same
numbers to about 1e-15 (the tests hold them together); it is the public, one-root-at-a-time
interface.

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
) -> tuple[NDArray[np.float64], NDArray[np.float64], NDArray[np.float64], NDArray[np.bool_]]:
    """Bounds and h-interval trajectories from the lower-end trace (fed M_lo, H_hi) and the
    upper-end trace (fed M_hi, H_lo): each end taken from the trace that bounds it (module
    docstring), the interval composed as :class:`HTracker` composes it, with where the region is
    empty (possible only on a miscovering path: the interval freezes there, :func:`_freeze`)."""
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
    return b, lo, hi, np.asarray(empty, np.bool_)


def _freeze(
    lo: NDArray[np.float64],
    hi: NDArray[np.float64],
    empty: NDArray[np.bool_],
    before: tuple[float, float] = (-math.pi, math.pi),
) -> None:
    """From the first empty region on, the interval stays the one before it (``before``: the
    interval before the first root), in place."""
    hits = np.flatnonzero(empty)
    if hits.size:
        k = int(hits[0])
        lo[k:], hi[k:] = (lo[k - 1], hi[k - 1]) if k > 0 else before


class TrackTrace:
    """The three tracks over a whole stream: every root's bounds, interval and verdict code.

    Built from data in hand (a study's files) by feeding them to a :class:`TrackStream` as one
    block (one compiled pass per track and feed, :meth:`BatchHTracker.trace`), or handed over
    by a stream that was fed root by root (:meth:`TrackStream.trace`): the same numbers. They
    are the compiled e-process's, which agree with :class:`HTracker`'s to the last bits of the
    floating-point search (about 1e-15). :meth:`at_stop` reads the verdicts off the trajectory
    with the rules :class:`TrackStream` applies as it goes: each track's first verdict up to the
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
        stream = TrackStream(settings, cap, (), ())
        mu = m if m_upper is None else m_upper
        stream.extend(m, mu, h, h if h_upper is None else h_upper)
        stream._into(self, stream.roots)

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
                b, lo, hi_, empty = _compose(traces[name][0][0], traces[name][1][0])
                _freeze(lo, hi_, empty)
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
    """The three tracks fed a block of roots at a time through the compiled kernel: every
    sequential kind's one way into the tracks.

    Each track runs as one replicate of :class:`~verdictpack.core._tracker.BatchHTracker` fed
    (M_lo, H_hi) and, from the first bounded value on, a second one fed (M_hi, H_lo) (until then
    the two would be fed the same values: the second starts as a copy of the first). A block is
    one root for the engine, which judges a stimulus only when it needs one, and for a live study
    as its ledger commits roots; a study's files are one block (:class:`TrackTrace`). The kernel
    fed a block in one compiled call gives the numbers it gives root by root, bit for bit, so
    the block size never moves a number. :meth:`trace` hands over the :class:`TrackTrace` of
    the roots fed: the roots go through the tracks once, and the verdict a run stopped on is the
    one its result reports. ``m_support`` and ``h_support`` are the values expected (0 and 1 are
    added); a value outside them widens them (:meth:`_grow`; the numbers do not depend on the
    supports). The interval a root is classified on is the kernel's while every value so far is
    a number and the composed one (:func:`_compose`) from the first bounded value on;
    :meth:`trace` composes every root once any is bounded, as :class:`TrackTrace` always did,
    so a root before the first bounded one may differ there in the last bits.
    """

    def __init__(
        self,
        settings: TrackSettings,
        cap: int,
        m_support: ArrayLike,
        h_support: ArrayLike,
    ) -> None:
        self._settings = settings
        self._claims = {t: settings.claims[t] for t in TRACKS}  # every track named, now
        self._cap = int(cap)
        self._ms = np.unique(np.concatenate([np.asarray(m_support, np.float64), [0.0, 1.0]]))
        self._hs = np.unique(np.concatenate([np.asarray(h_support, np.float64), [0.0, 1.0]]))
        self._by_track = _by_track(settings)
        s, ms, hs = settings, self._ms, self._hs
        self._low = {name: _kernel(s, name, ms, hs) for name in TRACKS}
        self._high: dict[str, BatchHTracker] = {}  # from the first bounded value on
        # per track and feed, each root's bounds and interval; the values fed (M_lo, M_hi, H_lo,
        # H_hi), in growing tables (about 0.4 kB a root in all)
        self._width = {name: 6 if self._low[name].diff is not None else 4 for name in TRACKS}
        self._rows = {
            name: (_Rows(self._width[name] + 2), _Rows(self._width[name] + 2)) for name in TRACKS
        }
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
        low = self._rows[name][0].last
        high = self._rows[name][1].last if self._bounded else low
        diff = None
        if self._width[name] > 4:
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
        cs = self._low[name].model
        return float(cs.log_e_upper(m)[0]), float(cs.log_e_lower(m)[0])

    def _grow(self, m: NDArray[np.float64], h: NDArray[np.float64]) -> None:
        """Take values outside the supports into them: every kernel goes on over the wider
        supports from the state it is in (:meth:`BatchHTracker.widened`; a construct whose
        observation is a probability brings a new value almost every root)."""
        if _holds(self._ms, m) and _holds(self._hs, h):
            return  # the usual block: nothing to widen
        ms = np.unique(np.concatenate([self._ms, m]))
        hs = np.unique(np.concatenate([self._hs, h]))
        self._ms, self._hs = ms, hs
        self._low = {name: k.widened(ms, hs) for name, k in self._low.items()}
        self._high = {name: k.widened(ms, hs) for name, k in self._high.items()}

    def step(self, m: Value, h: Value | None, at_cap: bool = False) -> None:
        """Feed one root (M_i; H_i or None; each a number or bounds): :meth:`extend` by one."""
        m_lo, m_hi = _pair(m)
        h_lo, h_hi = (math.nan, math.nan) if h is None else _pair(h)
        self.extend([m_lo], [m_hi], [h_lo], [h_hi], at_cap=at_cap)

    def extend(
        self,
        m_lo: ArrayLike,
        m_hi: ArrayLike,
        h_lo: ArrayLike,
        h_hi: ArrayLike,
        *,
        at_cap: bool = False,
    ) -> None:
        """Feed a block of roots in order (bounds on M_i and H_i, H NaN where a root has no
        human stream value) to every track; freeze each track at the first root of the block
        that reaches its verdict (the registered one only among the first ``cap`` roots fed,
        INCONCLUSIVE at the cap or, with ``at_cap``, at the block's last root)."""
        cols = [np.atleast_1d(np.asarray(v, np.float64)) for v in (m_lo, m_hi, h_lo, h_hi)]
        ml, mh, hl, hh = cols
        n = ml.size
        if any(c.ndim != 1 or c.size != n for c in cols):
            raise InputError("m, h", "1-d arrays of one length (h NaN: no human)", None)
        present = ~np.isnan(hl)
        m_bad = ~(np.isfinite(ml) & (ml >= 0) & (ml <= mh) & (mh <= 1))
        h_bad = (present & ~((hl >= 0) & (hl <= hh) & (hh <= 1))) | (present != ~np.isnan(hh))
        for what, bad, lower, upper in (("M", m_bad, ml, mh), ("H", h_bad, hl, hh)):
            if bad.any():
                k = int(np.flatnonzero(bad)[0])
                raise InputError(
                    f"{what} (root {self.roots + k + 1})",
                    "bounds 0 <= lower <= upper <= 1" + (" (NaN: no human)" if what == "H" else ""),
                    (float(lower[k]), float(upper[k])),
                )
        if n == 0:
            return
        self._grow(np.concatenate([ml, mh]), np.concatenate([hl[present], hh[present]]))
        ms, hs = self._ms, self._hs

        def h_index(v: NDArray[np.float64]) -> NDArray[np.int64]:
            return np.where(present, np.searchsorted(hs, np.where(present, v, 0.0)), 0)

        feed_lo = (np.searchsorted(ms, ml), h_index(hh))  # the lower-end feed
        wide = np.flatnonzero((ml != mh) | (present & (hl != hh)))
        start = 0 if self._bounded else (int(wide[0]) if wide.size else n)
        if start < n and not self._bounded:  # the upper-end kernels start as copies
            for name in TRACKS:
                self._high[name] = self._low[name].widened(ms, hs)
                self._rows[name][1].extend(self._rows[name][0].head(self._rows[name][0].n))
            self._bounded = True
        feed_hi = (np.searchsorted(ms, mh), h_index(hl)) if self._high else None  # upper-end
        self._values.extend(np.column_stack(cols))
        first = self.roots
        self.roots += n
        for name in TRACKS:
            w = self._width[name]
            low = _rows_of(self._low[name].trace(*feed_lo, present))
            self._rows[name][0].extend(low)
            high = None
            if feed_hi is not None:
                high = _rows_of(self._high[name].trace(*feed_hi, present))
                self._rows[name][1].extend(high)
            lo, hi = low[:, w].copy(), low[:, w + 1].copy()
            if high is not None and start < n:
                self._compose_into(name, low[start:, :w], high[start:, :w], lo, hi, start)
            self._interval[name] = (float(lo[-1]), float(hi[-1]))
            if name not in self._verdicts:
                self._decide(name, lo, hi, first, at_cap)

    def _compose_into(
        self,
        name: str,
        low: NDArray[np.float64],
        high: NDArray[np.float64],
        lo: NDArray[np.float64],
        hi: NDArray[np.float64],
        start: int,
    ) -> None:
        """The composed interval (:func:`_compose`) of the block's roots from ``start`` on, into
        ``lo`` and ``hi``; from the first empty region on, the interval before it."""
        _, clo, chi, empty = _compose(low, high)
        if self._empty[name]:
            empty[:] = True
        before = (
            self._interval[name] if start == 0 else (float(lo[start - 1]), float(hi[start - 1]))
        )
        _freeze(clo, chi, empty, before)
        lo[start:], hi[start:] = clo, chi
        self._empty[name] = bool(empty.any())

    def _decide(
        self, name: str, lo: NDArray[np.float64], hi: NDArray[np.float64], first: int, at_cap: bool
    ) -> None:
        """Freeze track ``name`` at its first verdict in the block (``first`` roots before it)."""
        n = lo.size
        last = n
        if name == "registered":
            last = max(0, min(n, self._cap - first))
            at_cap = at_cap or first + n >= self._cap
        codes = classify_codes(lo[:last], hi[:last], self._by_track[name][1])
        hits = np.flatnonzero(codes)
        if hits.size:
            self._verdicts[name] = VERDICT_CODES[int(codes[hits[0]])].value  # type: ignore[union-attr]
        elif name == "registered" and at_cap and last > 0:
            self._verdicts[name] = "INCONCLUSIVE"

    def trace(self, n: int | None = None) -> TrackTrace:
        """The :class:`TrackTrace` of the first ``n`` roots fed (all: None)."""
        k = self.roots if n is None else n
        if not 0 <= k <= self.roots:
            raise InputError("n", f"a number of roots fed (0..{self.roots})", n)
        trace = TrackTrace.__new__(TrackTrace)  # of the trajectories streamed, not traced anew
        self._into(trace, k)
        return trace

    def _into(self, trace: TrackTrace, k: int) -> None:
        """Fill ``trace`` with the first ``k`` roots' values and trajectories (views of the
        tables: a row once written never changes)."""
        m_lo, m_hi, h_lo, h_hi = self._values.head(k).T
        has = ~np.isnan(h_lo)
        bounded = bool(np.any(m_lo != m_hi) or np.any(h_lo[has] != h_hi[has]))
        traces: dict[str, list[_Trajectory]] = {}
        for name in TRACKS:
            w = self._width[name]
            traces[name] = []
            for rows in self._rows[name][: 2 if bounded else 1]:
                a = rows.head(k)
                traces[name].append((a[:, :w], a[:, w], a[:, w + 1]))
        values = (m_lo, m_hi, h_lo, h_hi)
        trace._fill(self._settings, self._cap, values, bounded, traces, self._low)


def _holds(support: NDArray[np.float64], values: NDArray[np.float64]) -> bool:
    """Whether the sorted ``support`` holds every one of ``values``."""
    k = np.searchsorted(support, values)
    return bool((k < support.size).all() and np.array_equal(support[k], values))


def _rows_of(trajectory: _Trajectory) -> NDArray[np.float64]:
    """A trajectory as table rows: the bounds, then h_lo and h_hi."""
    b, lo, hi = trajectory
    return np.column_stack([b, lo, hi])


class _Rows:
    """A table of float rows appended a block at a time (its storage doubles when full)."""

    def __init__(self, width: int) -> None:
        self._a: NDArray[np.float64] = np.empty((64, width))
        self.n = 0

    def extend(self, rows: NDArray[np.float64]) -> None:
        k = self.n + rows.shape[0]
        if k > self._a.shape[0]:
            grown = np.empty((max(k, 2 * self._a.shape[0]), self._a.shape[1]))
            grown[: self.n] = self._a[: self.n]
            self._a = grown
        self._a[self.n : k] = rows
        self.n = k

    @property
    def last(self) -> NDArray[np.float64]:
        return np.asarray(self._a[self.n - 1], np.float64)

    def head(self, k: int) -> NDArray[np.float64]:
        """The first ``k`` rows (a view)."""
        return self._a[:k]
