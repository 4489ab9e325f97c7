"""The batch construction of the mixture confidence sequences: every stream of a tracker, all
replicates, advanced by the compiled kernel (:mod:`verdictpack.core._kernel`).

The algorithm and its numbers are those of the scalar :class:`~verdictpack.core._mixture.
MixtureCS` (module docstring of :mod:`verdictpack.core._mixture`, "Cost"); this module holds the
state bank (:class:`_Bank`) and its per-stream view :class:`BatchMixtureCS`. The numerical
policy is read from :mod:`verdictpack.core._mixture` at call time, so one setting governs both.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import numpy as np
from numpy.typing import ArrayLike, NDArray

from verdictpack._errors import InputError
from verdictpack.core import _mixture as _m
from verdictpack.core._mixture import (
    BoolArray,
    FloatArray,
    IntArray,
    MixtureSpec,
    _check_alpha,
    _check_mean,
    _check_replicates,
    _check_support,
    _resolve_spec,
)

__all__ = ["BatchMixtureCS"]


# --------------------------------------------------------------------------------------------
# The batch construction
# --------------------------------------------------------------------------------------------


def _check_indices(
    n_rows: int, size: int, value_index: ArrayLike, active: ArrayLike | None
) -> tuple[NDArray[Any], BoolArray | None]:
    """Validated (value indices (R,), active mask or None when every replicate is active)."""
    idx = np.asarray(value_index)
    if idx.shape != (n_rows,) or idx.dtype.kind not in "iu":
        raise InputError(
            "value_index",
            f"an integer array of shape ({n_rows},)",
            f"shape {idx.shape}, dtype {idx.dtype}",
        )
    act: BoolArray | None = None
    if active is not None:
        a = np.asarray(active)
        if a.shape != (n_rows,) or a.dtype != np.bool_:
            raise InputError(
                "active",
                f"a boolean array of shape ({n_rows},) or None",
                f"shape {a.shape}, dtype {a.dtype}",
            )
        if not a.all():
            act = a
    sel = idx if act is None else idx[act]
    if sel.size and (sel.min() < 0 or sel.max() >= size):
        bad = int(np.flatnonzero((idx < 0) | (idx >= size))[0])
        raise InputError(
            f"value_index[{bad}]", f"an index into the support (0..{size - 1})", int(idx[bad])
        )
    return idx, act


class _Bank:
    """n mixture confidence sequences × R replicates, advanced by the compiled kernel.

    Stream j has its own support and level; its lower / upper bounds are planes 2j / 2j + 1.
    The whole state of one replicate is one row of ``state`` (R, stride): its layout belongs to
    :mod:`verdictpack.core._kernel` (read here through ``_kernel.layout``), and the attributes below
    are views into it. Per plane and bet the row holds the log-wealth W_k at the bound as of the
    last search or fold, the pending product Q_k of the factors since then and
    P0_k = exp(max(W_k + log(w_k/c), −600)), so the move test "E_t(b) ≥ c" is Σ_k P0_k·Q_k ≥ 1
    (one multiply per bet and observation, no log, no exp); every few observations W += log Q.
    The floor −600 only over-states terms below 1e-260 of the threshold (a spurious search at
    worst, which the exact evaluation then rejects). G_k = −dW_k/dm and C_k = −d²W_k/dm² are
    kept exactly for the Taylor start of the search. Tracker banks (``mode`` 1 = corners,
    2 = hybrid) also hold each replicate's h-interval, empty flag and roots, refreshed by the
    kernel whenever a bound moved.

    Every replicate is advanced on its own (scalar arithmetic, the scalar classes' algorithm),
    so its numbers never depend on which replicates share the array.
    """

    def __init__(
        self,
        n_rows: int,
        spec: MixtureSpec,
        supports: list[FloatArray],
        alphas: list[float],
        *,
        mode: int = 0,
        threshold: float = 0.0,
        d_flat: IntArray | None = None,
    ) -> None:
        from verdictpack.core import _kernel

        self._kernel = _kernel
        lam = spec.lambda_array
        k, n, r = lam.size, len(supports), n_rows
        self.k, self.n, self.s, self.r = k, n, 2 * n, r
        self.logw = spec.log_weights
        self.supports = supports
        voff = np.concatenate([[0], np.cumsum([v.size for v in supports])])
        self.logc = np.array([-math.log(a) for a in alphas])
        # between folds a term decays at most by (1 − λ_max)^every from ≥ exp(−600): keep that
        # above exp(−700) (normal numbers, so the product P0·Q stays exact)
        lmax = float(lam.max())
        every = max(1, min(_m._REBASE_EVERY, int(100.0 / -math.log1p(-lmax))))
        policy = [
            threshold,
            _m._FAST_ERR,
            _m._OUTWARD,
            _m._NEWTON_TOL,
            _m._REGION_TOL,
            _m._LOG_FLOOR,
        ]
        self.fspec = np.concatenate([policy, lam, self.logw, self.logc, *supports])
        nh = supports[1].size if n > 1 else 0
        head = [
            n,
            k,
            int(voff[-1]),
            nh,
            mode,
            every,
            _m._FAST_ITER,
            _m._NEWTON_MAX_ITER,
            _m._BISECT_ITER,
        ]
        table = np.zeros(0, dtype=np.int64) if d_flat is None else d_flat
        self.ispec = np.concatenate([head, voff, table]).astype(np.int64)
        lay = _kernel.layout(self.ispec)
        self.lay = lay
        self.state = np.empty((r, lay["stride"]))
        _kernel.init(self.fspec, self.ispec, self.state)
        st = self.state
        self.b: FloatArray = st[:, lay["b"] : lay["b"] + self.s].T  # (S, R) bounds
        self.t: FloatArray = st[:, lay["t"] : lay["t"] + n].T  # (n, R) observations per stream
        c0 = lay["counts"]
        self.counts = [st[:, c0 + voff[j] : c0 + voff[j + 1]].T for j in range(n)]  # (V, R)
        self.h: FloatArray = st[:, lay["h"] : lay["h"] + 4].T  # h_lo, h_hi, empty, roots
        self.searches = np.zeros(n, dtype=np.int64)
        self.last = np.zeros((r, n), dtype=np.uint8)  # searched in the last step
        self._idx = np.zeros((r, n), dtype=np.int64)
        self._act = np.zeros((r, n), dtype=np.uint8)

    def adopt(self, old: _Bank, maps: Sequence[IntArray]) -> None:
        """Take the state of ``old``, a bank over narrower supports (stream j's value i is
        this bank's value ``maps[j][i]``): only the counts are indexed by value, so the
        numbers to come are the ones ``old`` would give."""
        lay, olay = self.lay, old.lay
        self.state[:, : lay["counts"]] = old.state[:, : olay["counts"]]
        self._adopt_counts(old, maps)
        self.h[:] = old.h
        self.last[:] = old.last
        self.searches[:] = old.searches

    def _adopt_counts(self, old: _Bank, maps: Sequence[IntArray]) -> None:
        """The counts per support value of ``old``, each value at its place in this bank's."""
        for j, at in enumerate(maps):
            self.counts[j][:] = 0.0
            self.counts[j][at] = old.counts[j]

    def step(self, idxs: Sequence[NDArray[Any] | None], acts: Sequence[BoolArray | None]) -> None:
        """Stream j observes ``support_j[idxs[j][r]]`` on its active replicates (``acts[j]``
        None: all; ``idxs[j]`` None: none); an inactive replicate's index is never read."""
        ix, ac = self._idx, self._act
        for j in range(self.n):
            idx = idxs[j]
            if idx is None:
                ac[:, j] = 0
                continue
            ix[:, j] = idx
            act = acts[j]
            ac[:, j] = 1 if act is None else act
        self._kernel.step(self.fspec, self.ispec, self.state, ix, ac, self.last, self.searches)

    def run(
        self, model: NDArray[Any], human: NDArray[Any], cap: int, threads: int = 1
    ) -> NDArray[np.int8]:
        """Tracker banks: every replicate consumes roots (model[r, i], human[r, i]) in order
        until its verdict or until it holds ``cap`` roots; the verdict codes.

        ``threads`` > 1 hands out blocks of replicates to that many threads (the kernel runs
        without the GIL). Replicates never interact, so the numbers are the same."""
        codes = np.zeros(self.r, dtype=np.int8)
        model = np.ascontiguousarray(model, dtype=np.int64)
        human = np.ascontiguousarray(human, dtype=np.int64)
        kernel, fspec, ispec, state = self._kernel, self.fspec, self.ispec, self.state
        n_blocks = min(self.r // _m._THREAD_ROWS, 8 * threads) if threads > 1 else 1
        if n_blocks <= 1:
            kernel.run(fspec, ispec, state, model, human, cap, codes, self.searches)
            return codes
        from verdictpack._parallel import map_in_threads

        edges = np.linspace(0, self.r, n_blocks + 1).astype(np.intp)
        counters = np.zeros((n_blocks, self.n), dtype=np.int64)

        def block(i: int) -> None:
            a, b = edges[i], edges[i + 1]
            kernel.run(
                fspec, ispec, state[a:b], model[a:b], human[a:b], cap, codes[a:b], counters[i]
            )

        map_in_threads(block, range(n_blocks), threads)
        self.searches += counters.sum(axis=0)
        return codes

    def trace(self, m: NDArray[Any], h: NDArray[Any], present: NDArray[Any]) -> FloatArray:
        """Tracker banks: replicate 0 consumes every root; (T, S + 2) bounds and h-interval
        after each root (:meth:`~verdictpack.core._tracker.BatchHTracker.trace`)."""
        out = np.empty((m.size, self.s + 2), dtype=np.float64)
        try:
            self._kernel.trace(
                self.fspec, self.ispec, self.state, m, h, present, out, self.searches
            )
        except ValueError as exc:
            raise InputError("m_index, h_index", "indices into the supports", str(exc)) from None
        return out

    def spread_first(self) -> None:
        """Every replicate takes replicate 0's state."""
        self.state[1:] = self.state[0]
        self.last[1:] = self.last[0]

    # -- e-values --------------------------------------------------------------------------
    def log_e(self, j: int, m: ArrayLike, side: int) -> FloatArray:
        """log E at ``m`` (a scalar or one mean per replicate) of stream j, side 0 E⁺ or 1
        E⁻, per replicate: the kernel's exact evaluation (the same bits on every machine)."""
        arr = np.asarray(m, dtype=np.float64)
        if arr.ndim == 0:
            arr = np.full(self.r, _check_mean(float(arr), "m"))
        out = np.empty(self.r, dtype=np.float64)
        self._kernel.log_e(self.fspec, self.ispec, self.state, j, side, self._check_means(arr), out)
        return out

    def _check_means(self, arr: FloatArray) -> FloatArray:
        """``arr``, one candidate mean in [0, 1] per replicate, or InputError naming ``m``."""
        if (
            arr.shape != (self.r,)
            or not np.all(np.isfinite(arr))
            or np.any(arr < 0)
            or np.any(arr > 1)
        ):
            raise InputError(
                "m", f"a candidate mean in [0, 1] or an array of shape ({self.r},)", arr.tolist()
            )
        return arr


class BatchMixtureCS:
    """R independent mixture confidence sequences whose observations lie on a fixed support.

    ``update(value_index, active)`` feeds, for each active replicate r, the observation
    ``support[value_index[r]]``. Same bounds as :class:`MixtureCS` on the same data. Per step:
    O(K) per replicate in the compiled kernel, plus Newton on the bounds that may move.
    The streams of a :class:`BatchHTracker` are views of its engine (same interface).
    """

    def __init__(
        self,
        n_replicates: int,
        alpha: float,
        spec: MixtureSpec | None = None,
        support: ArrayLike = (0.0, 1.0),
    ) -> None:
        self._r = _check_replicates(n_replicates)
        self._alpha = _check_alpha(alpha)
        self._spec = _resolve_spec(spec)
        self._support = _check_support(support, "support")
        self._bank = _Bank(self._r, self._spec, [self._support], [self._alpha])
        self._j = 0

    @classmethod
    def _view(cls, bank: _Bank, j: int, alpha: float, spec: MixtureSpec) -> BatchMixtureCS:
        """Stream j of a fused engine, seen as a :class:`BatchMixtureCS`."""
        obj = cls.__new__(cls)
        obj._r = bank.r
        obj._alpha = alpha
        obj._spec = spec
        obj._support = bank.supports[j]
        obj._bank = bank
        obj._j = j
        return obj

    @property
    def n_replicates(self) -> int:
        return self._r

    @property
    def alpha(self) -> float:
        return self._alpha

    @property
    def spec(self) -> MixtureSpec:
        return self._spec

    @property
    def t(self) -> NDArray[np.int64]:
        return np.asarray(self._bank.t[self._j], dtype=np.int64)

    @property
    def lower(self) -> FloatArray:
        return np.array(self._bank.b[2 * self._j], dtype=np.float64)

    @property
    def upper(self) -> FloatArray:
        return np.array(self._bank.b[2 * self._j + 1], dtype=np.float64)

    @property
    def empty(self) -> BoolArray:
        j = self._j
        return np.asarray(self._bank.b[2 * j] > self._bank.b[2 * j + 1])

    @property
    def searches(self) -> int:
        """Bound searches run so far (diagnostic: the warm start's hit rate)."""
        return int(self._bank.searches[self._j])

    @property
    def counts(self) -> FloatArray:
        """(R, V) observation counts per support value."""
        return self._bank.counts[self._j].T.copy()

    def update(self, value_index: ArrayLike, active: ArrayLike | None = None) -> None:
        """Feed ``support[value_index[r]]`` to every active replicate r (all when None)."""
        idx, act = _check_indices(self._r, self._support.size, value_index, active)
        bank = self._bank
        idxs: list[NDArray[Any] | None] = [None] * bank.n
        acts: list[BoolArray | None] = [None] * bank.n
        idxs[self._j] = idx
        acts[self._j] = act
        bank.step(idxs, acts)

    def log_e_upper(self, m: ArrayLike) -> FloatArray:
        """log E⁺_t(m) per replicate; m a scalar (fast: one matrix product) or an (R,) array."""
        return self._bank.log_e(self._j, m, 0)

    def log_e_lower(self, m: ArrayLike) -> FloatArray:
        """log E⁻_t(m) per replicate."""
        return self._bank.log_e(self._j, m, 1)
