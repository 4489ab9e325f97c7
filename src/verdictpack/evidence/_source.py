"""Where the kinds' evidence comes from: the :class:`EvidenceSource` interface.

A source hands over the judgments on one stimulus at a time (:meth:`EvidenceSource.judge`, a
:class:`RootEvidence`), and a source whose evidence is in hand may also hand over a run of roots
at once (``block``, an :class:`~verdictpack.evidence._assemble.EvidenceBlock`: the columns the
tracks read). Every kind feeds what a source gives to the same tracks
(:class:`~verdictpack.core._tracks.TrackStream`) by one of two functions: the engine, which pays
for each root, by :func:`stream_evidence` (one root at a time until the registered verdict, from
a simulated panel, :class:`verdictpack.simulate._evidence.SimulatedPanelSource`, or any source
a user writes), and a study by :func:`feed_evidence` (its files, :class:`FileEvidence`, as one
block). A live study's ledger hands over its committed prefix (:class:`CommittedEvidence`, added
to the study's files) and feeds each root to the same tracks as it commits it.

Requirements on any source (they are what keeps the anytime-valid guarantee honest): the order in
which stimuli are judged and whether a root receives human judgments must not depend on the
judgments' values (missing at random), and every judgment is returned, never filtered; an
unknown answer is stated (a None cell, and the bounds it leaves), never dropped.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from typing import Protocol, runtime_checkable

import numpy as np
from numpy.typing import NDArray

from verdictpack._errors import InputError
from verdictpack.core._tracks import TrackStream
from verdictpack.evidence._assemble import EvidenceBlock, Policy, RootValues
from verdictpack.evidence._files import DataFile, data_file
from verdictpack.evidence._ledger import LEDGER_FILENAME, Answer, Commit
from verdictpack.evidence._table import CHOICES, ORDERS, RATER_KINDS, JudgmentTable
from verdictpack.stimuli._stimulus import Stimulus

__all__ = [
    "Cell",
    "CommittedEvidence",
    "EvidenceSource",
    "FileEvidence",
    "RootEvidence",
    "committed_evidence",
    "evidence_block",
    "feed_evidence",
    "stream_evidence",
]

_MODEL, _HUMAN = RATER_KINDS.index("model"), RATER_KINDS.index("human")


Cell = float | None
"""One judgment's observation: 1 (prefers the treatment), 0 (the null partner), ½ (a tie), a
probability (a declared probability observation), or None (unknown: an invalid answer, or a
registered cell or a declared human judgment that was not given)."""


@dataclass(frozen=True)
class RootEvidence:
    """Every judgment on one root event.

    ``model_choices`` holds each judge's cells (the first half in ``orders[0]``, the second in
    ``orders[1]``: one each with one trial), ``human_choices`` the human judgments. The tracks
    read :attr:`value_bounds`: (M_lo, M_hi, H_lo, H_hi), each unknown cell scored 0 for the
    lower value and 1 for the upper one (H NaN: no human stream value), derived from the cells
    unless the source states them in ``bounds`` (a study's files state the values as its
    columns computed them, to the last bit).
    """

    stimulus_id: str
    judges: tuple[str, ...]
    orders: tuple[str, str]
    model_choices: tuple[tuple[Cell, ...], ...]
    human_choices: tuple[Cell, ...]
    bounds: tuple[float, float, float, float] | None = None

    @functools.cached_property
    def value_bounds(self) -> tuple[float, float, float, float]:
        """(M_lo, M_hi, H_lo, H_hi): ``bounds`` when the source states them, else from the cells,
        each unknown scored 0 for the lower value and 1 for the upper one (H NaN: no human)."""
        if self.bounds is not None:
            return self.bounds
        m_lo, m_hi = _ends([v for c in self.model_choices for v in c])
        h_lo, h_hi = _ends(self.human_choices)
        return m_lo, m_hi, h_lo, h_hi

    @property
    def model_value(self) -> float:
        """M_i: the panel's mean preference over judges, orders and trials (unknowns at ½)."""
        m_lo, m_hi, _, _ = self.value_bounds
        return (m_lo + m_hi) / 2.0

    @property
    def human_value(self) -> float | None:
        """H_i, or None when the root has no human stream value (unknowns at ½)."""
        _, _, h_lo, h_hi = self.value_bounds
        return None if math.isnan(h_lo) else (h_lo + h_hi) / 2.0

    @property
    def model_touches(self) -> int:
        """The registered model cells of the root."""
        return sum(len(c) for c in self.model_choices)

    @property
    def human_touches(self) -> int:
        return len(self.human_choices)


def _ends(cells: Sequence[Cell]) -> tuple[float, float]:
    """The mean of ``cells`` with every unknown at 0 and at 1 (NaN, NaN: no cell)."""
    if not cells:
        return math.nan, math.nan
    known = sum(float(v) for v in cells if v is not None)
    unknown = sum(1 for v in cells if v is None)
    return known / len(cells), (known + unknown) / len(cells)


@runtime_checkable
class EvidenceSource(Protocol):
    """A supplier of judgments for one stimulus at a time."""

    @property
    def description(self) -> str:
        """What the evidence is (printed in reports and provenance)."""
        ...

    def judge(self, stimulus: Stimulus) -> RootEvidence:
        """All model-panel judgments (both orders) and the human judgments for one stimulus."""
        ...


def evidence_block(source: EvidenceSource, stimuli: Sequence[Stimulus]) -> EvidenceBlock:
    """The source's evidence on ``stimuli`` in order, as one block: by the source's own
    ``block`` when it has one (evidence in hand: :class:`FileEvidence`), else one
    :meth:`~EvidenceSource.judge` per stimulus."""
    bulk = getattr(source, "block", None)
    if callable(bulk):
        out = bulk(stimuli)
        if not isinstance(out, EvidenceBlock):
            raise InputError("source.block", "an EvidenceBlock", type(out).__name__)
        return out
    rows = np.array([source.judge(s).value_bounds for s in stimuli], np.float64).reshape(-1, 4)
    return EvidenceBlock(tuple(s.id for s in stimuli), *(np.ascontiguousarray(c) for c in rows.T))


def stream_evidence(
    source: EvidenceSource, stimuli: Sequence[Stimulus], tracks: TrackStream, cap: int
) -> Iterator[RootEvidence]:
    """Judge ``stimuli`` in order, one root at a time, each fed to ``tracks`` before it is
    yielded, until the registered verdict or the cap (a run that pays for each root: the
    engine). The roots fed are the ones yielded."""
    last = min(cap, len(stimuli))
    for t, stimulus in enumerate(stimuli[:last]):
        ev = source.judge(stimulus)
        m_lo, m_hi, h_lo, h_hi = ev.value_bounds
        tracks.extend([m_lo], [m_hi], [h_lo], [h_hi], at_cap=t + 1 == last)
        yield ev
        if tracks.stopped:
            return


def feed_evidence(
    source: EvidenceSource, stimuli: Sequence[Stimulus], tracks: TrackStream
) -> EvidenceBlock:
    """Every root of ``stimuli`` into ``tracks`` as one block (evidence in hand: a study's
    files; the tracks read on past the registered verdict, to the end of the data)."""
    block = evidence_block(source, stimuli)
    tracks.extend(*block.columns, at_cap=True)
    return block


class FileEvidence:
    """A study's data as an :class:`EvidenceSource`: the judgments on the roots the data entered
    (``values``, :func:`~verdictpack.evidence._assemble.root_values`, in the registered order),
    read from the files once, and their rows (``table``).

    :meth:`block` hands over a run of roots at once, the columns as valued (what a study feeds
    its tracks); :meth:`judge` one root with its cells (``judges`` x both orders x ``trials``,
    unknown cells None, human shortfalls under ``humans_per_root`` None) and its bounds.
    """

    def __init__(
        self,
        values: RootValues,
        table: JudgmentTable,
        judges: Sequence[str],
        trials: int,
        policy: Policy,
        humans_per_root: int | None,
        description: str,
    ) -> None:
        self._values, self._table = values, table
        self._judges, self._trials = tuple(judges), int(trials)
        self._policy, self._humans = policy, humans_per_root or 0
        self._description = description
        self._rank = {r: k for k, r in enumerate(values.root_ids)}
        self._rows: dict[str, NDArray[np.intp]] | None = None

    @property
    def description(self) -> str:
        return self._description

    def _index(self, ids: Sequence[str]) -> NDArray[np.intp]:
        at = [self._rank.get(r, -1) for r in ids]
        if -1 in at:
            missing = ids[at.index(-1)]
            raise InputError("stimulus", "a root the study's data entered", missing)
        return np.asarray(at, np.intp)

    def block(self, stimuli: Sequence[Stimulus]) -> EvidenceBlock:
        """The roots of ``stimuli`` in order (all of them entered: the study's own values)."""
        ids = tuple(s.id for s in stimuli)
        v = self._values
        if ids == v.root_ids:
            return v
        at = self._index(ids)
        return EvidenceBlock(ids, v.m_lo[at], v.m_hi[at], v.h_lo[at], v.h_hi[at])

    def judge(self, stimulus: Stimulus) -> RootEvidence:
        i = int(self._index([stimulus.id])[0])
        t = self._table
        if self._rows is None:  # the rows of each root, found once
            by_root = np.argsort(t.root_code, kind="stable")
            cuts = np.searchsorted(t.root_code[by_root], np.arange(len(t.roots) + 1))
            self._rows = {r: by_root[cuts[k] : cuts[k + 1]] for k, r in enumerate(t.roots)}
        rows = self._rows.get(stimulus.id, np.zeros(0, np.intp))
        cells: dict[tuple[str, int, int], Cell] = {}
        human: list[Cell] = []
        for kind in (_MODEL, _HUMAN):
            sel = rows[t.rater_kind[rows] == kind]
            lo, hi = self._policy.row_bounds(kind, t.choice[sel], t.p_treatment[sel])
            for r, a, b in zip(sel.tolist(), lo.tolist(), hi.tolist(), strict=True):
                value = a / 2.0 if a == b else None
                if kind == _MODEL:
                    key = (t.raters[t.rater_code[r]], int(t.order[r]), int(t.trial[r]))
                    cells[key] = value
                else:
                    human.append(value)
        human.extend([None] * max(0, self._humans - len(human)))
        model = tuple(
            tuple(cells.get((j, o, k)) for o in (0, 1) for k in range(self._trials))
            for j in self._judges
        )
        v = self._values
        bounds = (float(v.m_lo[i]), float(v.m_hi[i]), float(v.h_lo[i]), float(v.h_hi[i]))
        return RootEvidence(
            stimulus.id, self._judges, (ORDERS[0], ORDERS[1]), model, tuple(human), bounds
        )


@dataclass(frozen=True)
class CommittedEvidence:
    """A live study's evidence as its ledger holds it after a run: the committed prefix of the
    registered order (``roots``) and the live judges' answers on those roots, as canonical rows
    (``table``), with their provenance entry (``file``: role ``live``, the SHA-256 of their
    canonical CSV); why the run stopped (``stop``: ``verdict``, ``budget``, ``failed``...) and
    the ledger's hash chain as the run left it (``chain``: its length and last link)."""

    roots: tuple[str, ...]
    table: JudgmentTable
    file: DataFile
    stop: str | None
    chain: tuple[int, str | None]


def committed_evidence(
    commits: Iterable[Commit],
    answers: Iterable[Answer],
    stop: str | None,
    chain: tuple[int, str | None],
) -> CommittedEvidence:
    """The committed prefix (the ledger's ``commits`` in order) and the ``answers`` on those
    roots (answers on roots not committed are left out), sorted by root, judge, order, trial."""
    roots = tuple(c.root_id for c in commits)
    ids = set(roots)
    rows = sorted(
        (a for a in answers if a.root_id in ids),
        key=lambda a: (a.root_id, a.judge, a.order, a.trial),
    )
    table = JudgmentTable.from_columns(
        [a.root_id for a in rows],
        [a.judge for a in rows],
        np.full(len(rows), RATER_KINDS.index("model"), np.int8),
        np.array([ORDERS.index(a.order) for a in rows], np.int8),
        np.array([CHOICES.index(a.choice) for a in rows], np.int8),
        trial=np.array([a.trial for a in rows], np.int64),
        cost=np.array([a.cost for a in rows], np.float64),
        raw=[a.path for a in rows],
        p_treatment=np.array(
            [np.nan if a.p_treatment is None else a.p_treatment for a in rows], np.float64
        ),
    )
    digest = data_file("live", LEDGER_FILENAME, "live judges", table.to_csv_bytes(), len(table))
    return CommittedEvidence(roots, table, digest, stop, chain)
