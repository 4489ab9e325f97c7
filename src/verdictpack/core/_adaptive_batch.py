"""The plug-in, blend and horizon bets over many replicates: the batch twin of
:class:`~verdictpack.core._adaptive.PlugInCS` and :class:`~verdictpack.core._adaptive.BlendCS`
behind the batch trackers (:class:`~verdictpack.core._tracker.BatchHTracker` with ``bets``
"plugin", "blend" or "horizon": the plug-in bets tuned to the tracker's ``horizon``, one
argument of the kernel's ``plug_observe``).

The capital processes and bets are those of :mod:`verdictpack.core._adaptive` (its docstring has the
formulas). Per stream and replicate the bank keeps every value and every plug-in bet (O(t) memory:
the truncation c/m of a bet depends on the candidate mean, so the history cannot be folded into
counts), the running sum and squared deviations that give the next bet, the counts per support value
(the grid half of the blend) and, per bound, the log capital at it and its slope in m (the grid's
per bet for the blend), all in numpy arrays that the compiled kernel (``plug_observe`` and
``plug_log_e`` in _kernel.c) updates one replicate at a time. A new observation adds one log factor
and its slope (O(1) per replicate); only the replicates whose capital at a bound reaches 1/a search:
Newton steps on the log capital from the bound, kept inside the bracket [rejected end, accepted end]
(bisection where a step would leave it or is not half the step before the last, as in Numerical
Recipes' rtsafe: where the truncation binds the capital is neither convex nor concave), and, once a
step falls below 1e-13, a nudge of 1e-13 across the root that closes the bracket to 2e-13. The bound
is the rejected end moved outward by 1e-12 and intersected with the previous one, as in the scalar
class, whose bisection finds the same root to the last bit: the bounds agree to 1e-12 (a test holds
them so, replicate by replicate). A search costs two to four passes over the history, O(t) each (a
pass multiplies the factors of 16 values into one log), so a run costs O(t²) per replicate where the
grid's costs O(t): the price of bets fitted to the stream (docs/statistics.md §5b;
docs/PERFORMANCE.md has the times).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import numpy as np
from numpy.typing import ArrayLike, NDArray

from verdictpack._errors import InputError
from verdictpack.core._adaptive import BET_CAP
from verdictpack.core._hinterval import _hybrid_rows, classify_codes, corners_h_interval
from verdictpack.core._mixture import BoolArray, FloatArray, IntArray, MixtureSpec, _check_mean
from verdictpack.core._mixture_batch import _Bank

__all__: list[str] = []


class _PlugBank(_Bank):
    """n plug-in (blend, or horizon: ``horizon`` N) confidence sequences × R replicates: the
    parts of :class:`_Bank` the batch trackers use (``b``, ``t``, ``h``, ``counts``, ``step``,
    ``run``, ``trace``, ``spread_first``, ``log_e``), computed by the compiled kernel (module
    docstring)."""

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
        blend: bool = False,
        horizon: int | None = None,
    ) -> None:
        from verdictpack.core import _kernel

        self._kernel = _kernel
        n, r = len(supports), n_rows
        self.k, self.n, self.s, self.r = len(spec.lambdas), n, 2 * n, r
        self.blend = blend
        # the horizon bets' design N (0.0: the plug-in bets)
        self.horizon = 0.0 if horizon is None else float(horizon)
        self.lam = np.ascontiguousarray(spec.lambda_array, dtype=np.float64)
        self.logw = np.ascontiguousarray(spec.log_weights, dtype=np.float64)
        self.supports = [np.ascontiguousarray(v, dtype=np.float64) for v in supports]
        self.logc = np.array([-math.log(a) for a in alphas])
        self.mode, self.threshold = mode, threshold
        self.d_flat = np.zeros(0, np.intp) if d_flat is None else d_flat
        self.nh = supports[1].size if n > 1 else 0
        self.b: FloatArray = np.tile(np.array([[0.0], [1.0]]), (n, r))  # (S, R)
        self.t: FloatArray = np.zeros((n, r))
        self.counts = [np.zeros((v.size, r)) for v in supports]  # (V, R)
        self.h: FloatArray = np.zeros((4, r))  # h_lo, h_hi, empty, roots
        self.h[0], self.h[1] = -math.pi, math.pi
        self.searches = np.zeros(n, dtype=np.int64)
        self.last = np.zeros((r, n), dtype=np.uint8)
        # values (as indices into the support), in order
        self._xi = [np.zeros((r, 16), dtype=np.int32) for _ in range(n)]
        self._bet = [np.zeros((r, 16)) for _ in range(n)]  # plug-in bets before truncation
        self._sum = np.zeros((n, r))
        self._dev = np.zeros((n, r))
        # at each bound, as observed: the plug-in log capital and its slope in m, and (blend)
        # the grid's log-wealth per bet and its slope
        self._kp = np.zeros((self.s, r))
        self._ks = np.zeros((self.s, r))
        self._wg = np.zeros((self.s, self.k, r))
        self._gg = np.zeros((self.s, self.k, r))

    # -- observing (the compiled kernel) ---------------------------------------------------
    def _state(self, j: int) -> tuple[Any, ...]:
        """Stream j's state arrays in the order of the kernel's ``plug_*`` functions."""
        return (
            self.supports[j],
            self._xi[j],
            self._bet[j],
            self.t,
            self._sum,
            self._dev,
            self.counts[j],
            self.b,
            self._kp,
            self._ks,
            self._wg,
            self._gg,
            self.lam,
            self.logw,
        )

    def _observe(self, j: int, rows: IntArray, vidx: IntArray) -> BoolArray:
        """Rows ``rows`` of stream j observe support_j[vidx]; which rows searched."""
        width = self._bet[j].shape[1]
        need = int(self.t[j, rows].max()) + 1
        if need > width:
            wider = max(need, width + max(64, width // 2))
            for arrs in (self._xi, self._bet):
                grown = np.zeros((self.r, wider), dtype=arrs[j].dtype)
                grown[:, :width] = arrs[j]
                arrs[j] = grown
        moved = np.zeros(rows.size, dtype=np.uint8)
        self._kernel.plug_observe(
            *self._state(j),
            self.n,
            j,
            float(self.logc[j]),
            BET_CAP,
            self.horizon,
            self.blend,
            rows.astype(np.int64),
            vidx.astype(np.int64),
            moved,
        )
        return moved.astype(np.bool_)

    def _refresh(self, rows: IntArray) -> None:
        """The h-interval of the rows from their bounds, frozen once the region is empty."""
        rows = rows[self.h[2, rows] == 0.0]
        if not rows.size:
            return
        b = self.b[:, rows]
        if self.mode == 1:
            lo, hi, empty = corners_h_interval(b[0], b[1], b[2], b[3])
        else:
            lo, hi, empty = _hybrid_rows(b[0], b[1], b[2], b[3], 2.0 * b[4] - 1.0, 2.0 * b[5] - 1.0)
        keep = rows[~empty]
        self.h[0, keep], self.h[1, keep] = lo[~empty], hi[~empty]
        self.h[2, rows[empty]] = 1.0

    def _root(self, rows: IntArray, mi: IntArray, hi: IntArray | None, hp: BoolArray) -> None:
        """Tracker rows consume one root: M (and H, D where ``hp``)."""
        moved = self._observe(0, rows, mi)
        self.searches[0] += int(moved.sum())
        if hi is not None and hp.any():
            pairs = rows[hp]
            mh = self._observe(1, pairs, hi[hp])
            self.searches[1] += int(mh.sum())
            hit = mh
            if self.mode == 2:
                md = self._observe(2, pairs, self.d_flat[mi[hp] * self.nh + hi[hp]])
                self.searches[2] += int(md.sum())
                hit = hit | md
            moved[hp] |= hit
        self.h[3, rows] += 1.0
        self._refresh(rows[moved])

    # -- the _Bank interface ---------------------------------------------------------------
    def step(self, idxs: Sequence[NDArray[Any] | None], acts: Sequence[BoolArray | None]) -> None:
        self.last[:] = 0
        moved = np.zeros(self.r, dtype=np.bool_)
        for j in range(self.n):
            idx, act = idxs[j], acts[j]
            if idx is None:
                continue
            rows = np.arange(self.r) if act is None else np.flatnonzero(act)
            if not rows.size:
                continue
            hit = self._observe(j, rows, np.asarray(idx)[rows].astype(np.intp))
            self.last[rows, j] = hit
            self.searches[j] += int(hit.sum())
            moved[rows[hit]] = True
            if j == 0 and self.mode:
                self.h[3, rows] += 1.0
        if self.mode:
            self._refresh(np.flatnonzero(moved))

    def run(
        self, model: NDArray[Any], human: NDArray[Any], cap: int, threads: int = 1
    ) -> NDArray[np.int8]:
        h = self.h
        codes = classify_codes(h[0].copy(), h[1].copy(), self.threshold, h[3] >= cap)
        open_ = codes == 0
        model = np.asarray(model, dtype=np.intp)
        human = np.asarray(human, dtype=np.intp)
        for i in range(model.shape[1]):
            rows = np.flatnonzero(open_)
            if not rows.size:
                break
            self._root(rows, model[rows, i], human[rows, i], np.ones(rows.size, np.bool_))
            now = classify_codes(h[0, rows], h[1, rows], self.threshold, h[3, rows] >= cap)
            codes[rows] = now
            open_[rows[now != 0]] = False
        return codes

    def trace(self, m: NDArray[Any], h: NDArray[Any], present: NDArray[Any]) -> FloatArray:
        nm = self.supports[0].size
        bad = (m < 0) | (m >= nm) | ((present != 0) & ((h < 0) | (h >= self.nh)))
        if bad.any():
            raise InputError(
                "m_index, h_index", "indices into the supports", f"root {np.flatnonzero(bad)[0]}"
            )
        out = np.empty((m.size, self.s + 2), dtype=np.float64)
        row = np.zeros(1, dtype=np.intp)
        for i in range(m.size):
            hp = np.array([present[i] != 0])
            self._root(row, m[i : i + 1].astype(np.intp), h[i : i + 1].astype(np.intp), hp)
            out[i, : self.s] = self.b[:, 0]
            out[i, self.s :] = self.h[:2, 0]
        return out

    def adopt(self, old: _Bank, maps: Sequence[IntArray]) -> None:
        """Take the state of ``old`` (a plug-in bank over narrower supports; :meth:`_Bank.adopt`):
        the counts and the history of values are re-indexed, the rest copied."""
        if not isinstance(old, _PlugBank):
            raise InputError("old", "a plug-in bank", type(old).__name__)
        for name in ("b", "t", "h", "searches", "last", "_sum", "_dev", "_kp", "_ks", "_wg", "_gg"):
            getattr(self, name)[...] = getattr(old, name)
        self._adopt_counts(old, maps)
        for j, at in enumerate(maps):
            self._xi[j] = at[old._xi[j]].astype(np.int32)
            self._bet[j] = old._bet[j].copy()

    def spread_first(self) -> None:
        by_column: list[NDArray[Any]] = [self.b, self.t, self.h, self._sum, self._dev]
        for arr in (*by_column, self._kp, self._ks, *self.counts):
            arr[:, 1:] = arr[:, :1]
        for arr in (self._wg, self._gg):
            arr[:, :, 1:] = arr[:, :, :1]
        by_row: list[NDArray[Any]] = [*self._xi, *self._bet, self.last]
        for arr in by_row:
            arr[1:] = arr[0]

    def log_e(self, j: int, m: ArrayLike, side: int) -> FloatArray:
        arr = np.asarray(m, dtype=np.float64)
        if arr.ndim == 0:
            arr = np.full(self.r, _check_mean(float(arr), "m"))
        else:
            arr = self._check_means(arr)
        out = np.empty(self.r)
        self._kernel.plug_log_e(
            *self._state(j), self.n, j, float(self.logc[j]), BET_CAP, self.blend, side, arr, out
        )
        return out
