"""A study's evidence trail held as columns: one entry per root entered, in the registered order.

:class:`EvidenceTrail` keeps what evidence.jsonl records of each root (its values M_i and H_i
as their bounds -- ``M_lo`` .. ``M_hi``, ``H_lo`` .. ``H_hi``, equal where every answer is known
-- and midpoints ``M``, ``H``, the judgment counts, the registered track's stream bounds and
h-interval after it, the comparison construction's h-interval and every track's state) as
arrays, one per field, and is a read-only sequence of row dicts (``trail[k]`` builds root ``k``'s
row on demand). A study of
100,000 roots then holds a dozen arrays instead of 100,000 dicts of some thirty objects each.

:meth:`EvidenceTrail.to_jsonl` writes the file from the columns: the bytes of
``json.dumps(row, ensure_ascii=False, allow_nan=False)`` for every row, one a line (the shortest
round-trip repr of each float, as ``json`` writes it; tests hold the two equal on seeded
trails with awkward ids, signed zeros and missing values), at a fraction of the cost of
encoding the dicts.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from json.encoder import encode_basestring
from typing import Any, overload

import numpy as np

__all__ = ["EvidenceTrail"]

_PAIRS = ("model_bounds", "human_bounds", "diff_bounds", "h_interval", "comparison_h_interval")


@dataclass(frozen=True, eq=False)
class EvidenceTrail(Sequence[dict[str, Any]]):
    """The evidence rows of a study as columns (see the module docstring).

    ``h`` is NaN where a root has no human judgment (``None`` in its row); ``diff_bounds`` is
    None unless the registered track runs the hybrid construction; ``states`` maps each track,
    in the order rows list them, to its state label after every root; ``stop`` is the 0-based
    index of the root at which the registered track stopped (its verdict, else the cap; -1
    without roots), every later row being ``after_registered_stop``.
    """

    root_ids: tuple[str, ...]
    m_lo: np.ndarray
    m_hi: np.ndarray
    h_lo: np.ndarray
    h_hi: np.ndarray
    model_judgments: np.ndarray
    human_judgments: np.ndarray
    model_bounds: np.ndarray
    human_bounds: np.ndarray
    diff_bounds: np.ndarray | None
    h_interval: np.ndarray
    comparison_h_interval: np.ndarray
    states: Mapping[str, tuple[str, ...]]
    stop: int

    def __post_init__(self) -> None:
        n = len(self.root_ids)
        for name in ("m_lo", "m_hi", "h_lo", "h_hi", "model_judgments", "human_judgments"):
            if getattr(self, name).shape != (n,):
                raise ValueError(f"EvidenceTrail.{name}: expected shape ({n},)")
        for name in _PAIRS:
            a = getattr(self, name)
            if a is not None and a.shape != (n, 2):
                raise ValueError(f"EvidenceTrail.{name}: expected shape ({n}, 2)")
        for track, labels in self.states.items():
            if len(labels) != n:
                raise ValueError(f"EvidenceTrail.states[{track!r}]: expected {n} labels")

    @classmethod
    def empty(cls, tracks: Sequence[str]) -> EvidenceTrail:
        """The trail of a study that entered no root."""
        none, pair = np.zeros(0), np.zeros((0, 2))
        return cls(
            (), none, none, none, none, none.astype(np.int64), none.astype(np.int64), pair,
            pair, None, pair, pair, {t: () for t in tracks}, -1,
        )  # fmt: skip

    @property
    def m(self) -> np.ndarray:
        """M_i's midpoints (unknowns at ½; the value itself where every answer is known)."""
        return np.asarray((self.m_lo + self.m_hi) / 2.0)

    @property
    def h(self) -> np.ndarray:
        """H_i's midpoints (NaN where the root has no human stream value)."""
        return np.asarray((self.h_lo + self.h_hi) / 2.0)

    def __len__(self) -> int:
        return len(self.root_ids)

    @overload
    def __getitem__(self, k: int) -> dict[str, Any]: ...

    @overload
    def __getitem__(self, k: slice) -> list[dict[str, Any]]: ...

    def __getitem__(self, k: int | slice) -> dict[str, Any] | list[dict[str, Any]]:
        if isinstance(k, slice):
            return [self._row(i) for i in range(*k.indices(len(self)))]
        n = len(self)
        i = k + n if k < 0 else k
        if not 0 <= i < n:
            raise IndexError(f"evidence row {k} of {n}")
        return self._row(i)

    def __iter__(self) -> Iterator[dict[str, Any]]:
        return (self._row(i) for i in range(len(self)))

    def _row(self, t: int) -> dict[str, Any]:
        h, h_lo, h_hi = float(self.h[t]), float(self.h_lo[t]), float(self.h_hi[t])
        db = self.diff_bounds
        return {
            "root": t + 1,
            "root_id": self.root_ids[t],
            "M": float(self.m[t]),
            "H": None if h != h else h,
            "M_lo": float(self.m_lo[t]),
            "M_hi": float(self.m_hi[t]),
            "H_lo": None if h_lo != h_lo else h_lo,
            "H_hi": None if h_hi != h_hi else h_hi,
            "model_judgments": int(self.model_judgments[t]),
            "human_judgments": int(self.human_judgments[t]),
            "model_bounds": self.model_bounds[t].tolist(),
            "human_bounds": self.human_bounds[t].tolist(),
            "diff_bounds": None if db is None else db[t].tolist(),
            "h_interval": self.h_interval[t].tolist(),
            "comparison_h_interval": self.comparison_h_interval[t].tolist(),
            "state": {track: labels[t] for track, labels in self.states.items()},
            "after_registered_stop": t > self.stop,
        }

    def state_changes(self) -> list[int]:
        """The 0-based roots (from 1) whose state, of any track, differs from the root before."""
        n = len(self)
        changed = np.zeros(max(n - 1, 0), dtype=bool)
        for labels in self.states.values():
            a = np.asarray(labels, dtype=object)
            changed |= a[1:] != a[:-1]
        return (np.flatnonzero(changed) + 1).tolist()

    def to_jsonl(self) -> str:
        """evidence.jsonl: each row as ``json.dumps(row, ensure_ascii=False, allow_nan=False)``
        writes it, one a line, formatted from the columns."""
        n = len(self)
        if n == 0:
            return ""
        m = self.m
        floats = [m, self.m_lo, self.m_hi]
        floats += [getattr(self, p) for p in _PAIRS if getattr(self, p) is not None]
        for a in floats:
            if not np.isfinite(a).all():
                raise ValueError("Out of range float values are not JSON compliant")
        h = self.h
        if np.isinf(h).any() or np.isinf(self.h_lo).any() or np.isinf(self.h_hi).any():
            raise ValueError("Out of range float values are not JSON compliant")

        def optional(a: np.ndarray) -> list[str]:
            return ["null" if x != x else repr(x) for x in a.tolist()]

        def reprs(a: np.ndarray) -> list[str]:
            return list(map(repr, a.tolist()))

        def pairs(a: np.ndarray | None) -> list[str]:
            if a is None:
                return ["null"] * n
            lo, hi = reprs(a[:, 0]), reprs(a[:, 1])
            return [f"[{x}, {y}]" for x, y in zip(lo, hi, strict=True)]

        within = min(max(self.stop + 1, 0), n)  # rows at or before the stop
        after = ["false"] * within + ["true"] * (n - within)
        state_text: dict[tuple[str, ...], str] = {}
        tracks = list(self.states)

        def state(labels: tuple[str, ...]) -> str:
            text = state_text.get(labels)
            if text is None:
                body = ", ".join(
                    f"{encode_basestring(t)}: {encode_basestring(v)}"
                    for t, v in zip(tracks, labels, strict=True)
                )
                text = state_text[labels] = "{" + body + "}"
            return text

        columns = (
            range(1, n + 1),
            map(encode_basestring, self.root_ids),
            reprs(m),
            optional(h),
            reprs(self.m_lo),
            reprs(self.m_hi),
            optional(self.h_lo),
            optional(self.h_hi),
            self.model_judgments.tolist(),
            self.human_judgments.tolist(),
            *(pairs(getattr(self, p)) for p in _PAIRS),
            map(state, zip(*self.states.values(), strict=True)) if tracks else ["{}"] * n,
            after,
        )
        line = (
            '{"root": %d, "root_id": %s, "M": %s, "H": %s, "M_lo": %s, "M_hi": %s, "H_lo": %s, '
            '"H_hi": %s, "model_judgments": %d, '
            '"human_judgments": %d, "model_bounds": %s, "human_bounds": %s, "diff_bounds": %s, '
            '"h_interval": %s, "comparison_h_interval": %s, "state": %s, '
            '"after_registered_stop": %s}\n'
        )
        return "".join([line % row for row in zip(*columns, strict=True)])
