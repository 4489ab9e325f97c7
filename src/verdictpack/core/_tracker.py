"""The trackers: one construct's model and human streams (and D for the hybrid) run to a verdict.

:class:`HTracker` is the scalar tracker of one construct; :class:`BatchHTracker` runs R replicates
of it over fixed supports in the compiled engine (same numbers). The streams are the confidence
sequences of :mod:`verdictpack.core._mixture`; the h-interval and the verdict are those of
:mod:`verdictpack.core._hinterval` (the statistics are described in those modules' docstrings).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any, Generic, Protocol, TypeVar

import numpy as np
from numpy.typing import ArrayLike, NDArray

from verdictpack._errors import InputError
from verdictpack._validate import int_at_least
from verdictpack.core._adaptive import Bets, bets_horizon, check_bets, make_cs
from verdictpack.core._adaptive_batch import _PlugBank
from verdictpack.core._hinterval import (
    Verdict,
    _corners_py,
    _hybrid_py,
    classify,
    classify_codes,
)
from verdictpack.core._mixture import (
    BoolArray,
    ConfidenceSequence,
    Construction,
    FloatArray,
    IntArray,
    MixtureSpec,
    _check_alpha,
    _check_construction,
    _check_observation,
    _check_replicates,
    _check_support,
    _check_threshold,
    _resolve_spec,
)
from verdictpack.core._mixture_batch import BatchMixtureCS, _Bank, _check_indices

__all__ = [
    "BatchHTracker",
    "HTracker",
]


# --------------------------------------------------------------------------------------------
# Trackers
# --------------------------------------------------------------------------------------------


def _stream_alphas(
    construction: Construction, alpha: float, hybrid_alphas: Sequence[float] | None
) -> tuple[float, float | None]:
    """(per-tail alpha of M and H, per-tail alpha of D or None)."""
    if construction == "corners":
        if hybrid_alphas is not None:
            raise InputError("hybrid_alphas", "None for the corners construction", hybrid_alphas)
        return alpha, None
    if hybrid_alphas is None:
        return alpha / 4.0, alpha
    try:
        pair = tuple(hybrid_alphas)
    except TypeError:
        raise InputError("hybrid_alphas", "(alpha_MH, alpha_D) per tail", hybrid_alphas) from None
    if len(pair) != 2:
        raise InputError("hybrid_alphas", "(alpha_MH, alpha_D) per tail", list(pair))
    return _check_alpha(pair[0], "hybrid_alphas[0]"), _check_alpha(pair[1], "hybrid_alphas[1]")


class ScalarCS(ConfidenceSequence, Protocol):
    """What :class:`HTracker` reads of a scalar stream (:func:`~verdictpack.core._adaptive.
    make_cs`): its running bounds, whether its last observation moved them, and ``_add``."""

    _b: list[float]
    _moved: bool

    def _add(self, x: float) -> None: ...


_CS = TypeVar("_CS", "ScalarCS", "BatchMixtureCS")


class _TrackerSettings(Generic[_CS]):
    """What both trackers share: the construction, its alphas, the threshold, the provable
    error per side of the h-interval (2·a_MH for the corners, 4·a_MH + a_D for the hybrid), the
    bets of the streams (:data:`~verdictpack.core._adaptive.BETS`) and the stream confidence
    sequences (scalar or batch)."""

    _model: _CS
    _human: _CS
    _diff: _CS | None
    _construction: Construction
    _alpha: float
    _threshold: float
    _spec: MixtureSpec
    _hybrid_alphas: Sequence[float] | None
    _bets: Bets
    _horizon: int | None
    _error_per_side: float

    def _configure(
        self,
        construction: str,
        alpha: float,
        spec: MixtureSpec | None,
        threshold: float,
        hybrid_alphas: Sequence[float] | None,
        bets: str,
        horizon: int | None = None,
    ) -> tuple[float, float | None]:
        """Validate and store the settings; return (per-tail alpha of M and H, of D or None)."""
        self._bets = check_bets(bets)
        self._horizon = bets_horizon(self._bets, horizon)
        self._construction = _check_construction(construction)
        self._alpha = _check_alpha(alpha)
        self._threshold = _check_threshold(threshold)
        self._spec = _resolve_spec(spec)
        self._hybrid_alphas = hybrid_alphas
        a_mh, a_d = _stream_alphas(self._construction, self._alpha, hybrid_alphas)
        self._error_per_side = 2 * a_mh if a_d is None else 4 * a_mh + a_d
        return a_mh, a_d

    @property
    def construction(self) -> Construction:
        return self._construction

    @property
    def alpha(self) -> float:
        return self._alpha

    @property
    def bets(self) -> Bets:
        return self._bets

    @property
    def horizon(self) -> int | None:
        """The design horizon N of the "horizon" bets (None for every other bets)."""
        return self._horizon

    @property
    def threshold(self) -> float:
        return self._threshold

    @property
    def error_per_side(self) -> float:
        """Provable probability that h_lo > h (or h_hi < h) ever happens (union of tails)."""
        return self._error_per_side

    @property
    def model(self) -> _CS:
        return self._model

    @property
    def human(self) -> _CS:
        return self._human

    @property
    def diff(self) -> _CS | None:
        """The [0, 1]-scale CS on (D + 1)/2 (hybrid only)."""
        return self._diff


class HTracker(_TrackerSettings[ScalarCS]):
    """Scalar tracker of one construct: model and human streams (and D for the hybrid).

    ``update(m, h)`` consumes one root: ``m`` always feeds the model stream; when ``h`` is given
    it feeds the human stream and, for the hybrid, the pair feeds D = m − h (as (D + 1)/2).
    ``alpha`` is the per-tail level a of the corners; the hybrid uses ``hybrid_alphas``
    (default (a/4, a): M and H at a/4 per tail, D at a), which keeps the provable error per side
    of the h-interval at 2a (see the module doc). ``error_per_side`` states the bound in force.
    ``bets`` names every stream's bets (:func:`~verdictpack.core._adaptive.make_cs`).
    """

    def __init__(
        self,
        construction: str,
        alpha: float,
        spec: MixtureSpec | None,
        threshold: float,
        *,
        hybrid_alphas: Sequence[float] | None = None,
        bets: str = "grid",
        horizon: int | None = None,
    ) -> None:
        a_mh, a_d = self._configure(
            construction, alpha, spec, threshold, hybrid_alphas, bets, horizon
        )
        n_design = self._horizon
        self._model: ScalarCS = make_cs(self._bets, a_mh, self._spec, n_design)
        self._human: ScalarCS = make_cs(self._bets, a_mh, self._spec, n_design)
        self._diff = make_cs(self._bets, a_d, self._spec, n_design) if a_d is not None else None
        self._h_lo = -math.pi
        self._h_hi = math.pi
        self._empty = False
        self._n = 0

    @property
    def stream_alphas(self) -> dict[str, float]:
        out = {"model": self._model.alpha, "human": self._human.alpha}
        if self._diff is not None:
            out["diff"] = self._diff.alpha
        return out

    @property
    def n_roots(self) -> int:
        return self._n

    @property
    def model_bounds(self) -> tuple[float, float]:
        return self._model.lower, self._model.upper

    @property
    def human_bounds(self) -> tuple[float, float]:
        return self._human.lower, self._human.upper

    @property
    def diff_bounds(self) -> tuple[float, float] | None:
        """Bounds on the mean of D = M − H (on [−1, 1]), hybrid only."""
        if self._diff is None:
            return None
        return 2.0 * self._diff.lower - 1.0, 2.0 * self._diff.upper - 1.0

    @property
    def h_interval(self) -> tuple[float, float]:
        return self._h_lo, self._h_hi

    @property
    def region_empty(self) -> bool:
        """True once the region became empty; the h-interval is then frozen."""
        return self._empty

    def update(self, m_value: float, h_value: float | None = None) -> None:
        """Consume one root (model evidence, and human evidence when available)."""
        m = _check_observation(m_value, f"m_value (root {self._n})")
        h = None if h_value is None else _check_observation(h_value, f"h_value (root {self._n})")
        self._model._add(m)
        moved = self._model._moved
        if h is not None:
            self._human._add(h)
            moved = moved or self._human._moved
            if self._diff is not None:
                self._diff._add((m - h + 1.0) / 2.0)
                moved = moved or self._diff._moved
        self._n += 1
        if moved and not self._empty:
            self._refresh()

    def _refresh(self) -> None:
        lm, um = self._model._b
        lh, uh = self._human._b
        if self._diff is None:
            lo, hi, empty = _corners_py(lm, um, lh, uh)
        else:
            ld = 2.0 * self._diff._b[0] - 1.0
            ud = 2.0 * self._diff._b[1] - 1.0
            lo, hi, empty = _hybrid_py(lm, um, lh, uh, ld, ud)
        if empty:
            self._empty = True
        else:
            self._h_lo = lo
            self._h_hi = hi

    def verdict(self, at_cap: bool = False, instrument_valid: bool = True) -> Verdict | None:
        """The verdict state now (None = CONTINUE)."""
        return classify(self._h_lo, self._h_hi, self._threshold, at_cap, instrument_valid)


class BatchHTracker(_TrackerSettings["BatchMixtureCS"]):
    """R replicates of :class:`HTracker` over fixed supports (same numbers, vectorised).

    ``model_support`` and ``human_support`` are the sorted values M_i and H_i can take; the D
    support is every (m − h + 1)/2. ``update(m_index, h_index, h_present, active)``: active
    replicates consume a root; ``h_present`` marks those with human evidence on it (complete
    pairs). ``verdict_codes(at_cap)`` classifies all replicates (codes index ``VERDICT_CODES``).
    The streams run in one compiled engine; ``model``, ``human`` and ``diff`` are
    :class:`BatchMixtureCS` views of it. :meth:`run` takes whole replicates to their verdicts
    in one call. ``bets`` other than "grid" run the plug-in bank of
    :mod:`verdictpack.core._adaptive_batch` instead (same interface, the scalar bounds).
    """

    def __init__(
        self,
        n_replicates: int,
        construction: str,
        alpha: float,
        spec: MixtureSpec | None,
        threshold: float,
        model_support: ArrayLike,
        human_support: ArrayLike,
        *,
        hybrid_alphas: Sequence[float] | None = None,
        bets: str = "grid",
        horizon: int | None = None,
    ) -> None:
        self._r = _check_replicates(n_replicates)
        a_mh, a_d = self._configure(
            construction, alpha, spec, threshold, hybrid_alphas, bets, horizon
        )
        ms = _check_support(model_support, "model_support")
        hs = _check_support(human_support, "human_support")
        supports = [ms, hs]
        alphas = [a_mh, a_mh]
        self._d_flat: IntArray = np.zeros(ms.size * hs.size, dtype=np.intp)
        if a_d is not None:
            dv = (ms[:, None] - hs[None, :] + 1.0) / 2.0
            d_support, inverse = np.unique(dv, return_inverse=True)
            self._d_flat = inverse.reshape(-1).astype(np.intp)
            supports.append(d_support)
            alphas.append(a_d)
        self._nh = hs.size
        mode = 1 if a_d is None else 2
        d_flat = None if a_d is None else self._d_flat
        args = (self._r, self._spec, supports, alphas)
        if self._bets == "grid":
            self._bank = _Bank(*args, mode=mode, threshold=self._threshold, d_flat=d_flat)
        else:
            self._bank = _PlugBank(
                *args,
                mode=mode,
                threshold=self._threshold,
                d_flat=d_flat,
                blend=self._bets == "blend",
                horizon=self._horizon,
            )
        self._model = BatchMixtureCS._view(self._bank, 0, a_mh, self._spec)
        self._human = BatchMixtureCS._view(self._bank, 1, a_mh, self._spec)
        self._diff = None
        if a_d is not None:
            self._diff = BatchMixtureCS._view(self._bank, 2, a_d, self._spec)

    @property
    def n_replicates(self) -> int:
        return self._r

    @property
    def n_roots(self) -> NDArray[np.int64]:
        return np.asarray(self._bank.h[3], dtype=np.int64)

    @property
    def diff_lower(self) -> FloatArray | None:
        return None if self._diff is None else np.asarray(2.0 * self._bank.b[4] - 1.0)

    @property
    def diff_upper(self) -> FloatArray | None:
        return None if self._diff is None else np.asarray(2.0 * self._bank.b[5] - 1.0)

    @property
    def h_lo(self) -> FloatArray:
        return np.array(self._bank.h[0], dtype=np.float64)

    @property
    def h_hi(self) -> FloatArray:
        return np.array(self._bank.h[1], dtype=np.float64)

    @property
    def region_empty(self) -> BoolArray:
        return np.asarray(self._bank.h[2] != 0.0)

    def update(
        self,
        m_index: ArrayLike,
        h_index: ArrayLike | None = None,
        h_present: ArrayLike | None = None,
        active: ArrayLike | None = None,
    ) -> None:
        """One root for every active replicate; human evidence where ``h_present`` (default:
        everywhere when ``h_index`` is given, nowhere when it is None)."""
        r = self._r
        m_idx, act = _check_indices(r, self._model._support.size, m_index, active)
        h_idx: NDArray[Any] | None = None
        h_act: BoolArray | None = None
        if h_index is not None:
            if h_present is None:
                h_act = act
            else:
                hp = np.asarray(h_present)
                if hp.shape != (r,) or hp.dtype != np.bool_:
                    raise InputError(
                        "h_present",
                        f"a boolean array of shape ({r},) or None",
                        f"shape {hp.shape}, dtype {hp.dtype}",
                    )
                h_act = hp if act is None else act & hp
            h_idx, h_act = _check_indices(r, self._nh, h_index, h_act)
        elif h_present is not None and np.any(h_present):
            raise InputError("h_index", "an index array when h_present has True entries", None)
        idxs: list[NDArray[Any] | None] = [m_idx, h_idx]
        acts: list[BoolArray | None] = [act, h_act]
        if self._diff is not None:
            d_idx = None
            if h_idx is not None:
                flat = m_idx.astype(np.intp) * self._nh
                flat += h_idx
                if h_act is not None:
                    flat[~h_act] = 0
                d_idx = np.take(self._d_flat, flat)
            idxs.append(d_idx)
            acts.append(h_act)
        self._bank.step(idxs, acts)

    def run(
        self, m_index: ArrayLike, h_index: ArrayLike, cap: int, threads: int = 1
    ) -> NDArray[np.int8]:
        """Run every replicate to its verdict: replicate r consumes roots
        (``m_index[r, i]``, ``h_index[r, i]``) for i = 0, 1, … (human evidence on every root)
        until its verdict, or until it holds ``cap`` roots (then the verdict ``at_cap``). One
        call instead of one :meth:`update` per root, with the same numbers; a replicate that
        already has a verdict consumes nothing. Returns the verdict codes; ``n_roots`` then
        holds the roots each replicate consumed in all. ``threads`` spreads the replicates
        over that many threads (same numbers: replicates never interact)."""
        r = self._r
        int_at_least("cap", cap, 1, "a positive integer number of roots")
        h = self._bank.h
        open_ = classify_codes(h[0].copy(), h[1].copy(), self._threshold, h[3] >= cap) == 0
        need = int(cap - h[3][open_].min()) if open_.any() else 0
        arrays = []
        for name, arr, size in (
            ("m_index", m_index, self._model._support.size),
            ("h_index", h_index, self._nh),
        ):
            a = np.asarray(arr)
            if a.ndim != 2 or a.shape[0] != r or a.shape[1] < need or a.dtype.kind not in "iu":
                raise InputError(
                    name,
                    f"an integer array of shape ({r}, T) with T >= {need}",
                    f"shape {a.shape}, dtype {a.dtype}",
                )
            if a.size and (a.min() < 0 or a.max() >= size):
                raise InputError(name, f"indices into the support (0..{size - 1})", int(a.max()))
            arrays.append(a)
        int_at_least("threads", threads, 1, "a positive integer number of threads")
        return self._bank.run(arrays[0], arrays[1], int(cap), int(threads))

    def trace(
        self, m_index: ArrayLike, h_index: ArrayLike, h_present: ArrayLike
    ) -> tuple[FloatArray, FloatArray, FloatArray]:
        """Feed replicate 0 every root in order -- (``m_index[i]``, ``h_index[i]`` where
        ``h_present[i]``) -- and return its trajectory: ``bounds`` (T, 2·streams) after each root
        (model lower, upper, human lower, upper, then D's on its (D + 1)/2 scale for the hybrid),
        ``h_lo`` (T,) and ``h_hi`` (T,). The same numbers as :meth:`update` one root at a time,
        in one compiled call; nothing stops at a verdict (classify the trajectory)."""
        if self._r != 1:
            raise InputError("n_replicates", "1 for a trace", self._r)
        m = np.ascontiguousarray(m_index, dtype=np.int64)
        h = np.ascontiguousarray(h_index, dtype=np.int64)
        p = np.ascontiguousarray(h_present, dtype=np.uint8)
        if m.ndim != 1 or h.shape != m.shape or p.shape != m.shape:
            raise InputError(
                "m_index, h_index, h_present", "three 1-d arrays of one length", (m.shape, h.shape)
            )
        s = self._bank.s
        out = self._bank.trace(m, h, p)
        return out[:, :s], out[:, s], out[:, s + 1]

    def widened(self, model_support: ArrayLike, human_support: ArrayLike) -> BatchHTracker:
        """The same trackers over wider supports (each holding every value of this one's), in
        the state this one is in: the numbers to come are the ones this one would give (the
        state is indexed by value only through counts and history, re-indexed)."""
        new = BatchHTracker(
            self._r,
            self._construction,
            self._alpha,
            self._spec,
            self._threshold,
            model_support,
            human_support,
            hybrid_alphas=self._hybrid_alphas,
            bets=self._bets,
            horizon=self._horizon,
        )
        maps = []
        for j, (narrow, wide) in enumerate(
            zip(self._bank.supports, new._bank.supports, strict=True)
        ):
            at = np.searchsorted(wide, narrow)  # non-decreasing: both supports are sorted
            if at.size and (at[-1] >= wide.size or not np.array_equal(wide[at], narrow)):
                raise InputError(
                    f"support {j}", "a support holding every value of the old one", None
                )
            maps.append(at.astype(np.intp))
        new._bank.adopt(self._bank, maps)
        return new

    def spread_first(self) -> None:
        """Every replicate takes replicate 0's state: R continuations of one observed prefix
        (feed the prefix to replicate 0 alone with ``active``, then spread it)."""
        self._bank.spread_first()

    def verdict_codes(
        self, at_cap: ArrayLike = False, instrument_valid: ArrayLike = True
    ) -> NDArray[np.int8]:
        """Verdict code per replicate now (0 = CONTINUE; see ``VERDICT_CODES``)."""
        h = self._bank.h
        return classify_codes(h[0].copy(), h[1].copy(), self._threshold, at_cap, instrument_valid)
