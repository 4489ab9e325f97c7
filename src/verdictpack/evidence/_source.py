"""Where the engine's evidence comes from: the :class:`EvidenceSource` interface.

The engine asks an :class:`EvidenceSource` for the judgments on one admitted stimulus at a time
and feeds what comes back into the sequential core; it never knows how the judgments were made.
Its default implementation is :class:`verdictpack.simulate._evidence.SimulatedPanelSource` (the
character-sheet model of :mod:`verdictpack.simulate._judges`). A study does not pull root by
root: it reads its data folder whole (:func:`~verdictpack.evidence._files.read_study`), and a
live study's ledger hands over its committed prefix as :class:`CommittedEvidence`.
Requirements on any source (they are what keeps the anytime-valid guarantee honest): the order in
which stimuli are judged and whether a root receives human judgments must not depend on the
judgments' values (missing at random), and every judgment is returned, never filtered.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Protocol, runtime_checkable

import numpy as np

from verdictpack.evidence._files import DataFile, data_file
from verdictpack.evidence._ledger import Answer, Commit
from verdictpack.evidence._table import CHOICES, ORDERS, RATER_KINDS, JudgmentTable
from verdictpack.stimuli._stimulus import Stimulus

__all__ = ["CommittedEvidence", "EvidenceSource", "RootEvidence", "committed_evidence"]


@dataclass(frozen=True)
class RootEvidence:
    """Every judgment on one root event (1 = prefers the treatment item)."""

    stimulus_id: str
    judges: tuple[str, ...]
    orders: tuple[str, str]
    model_choices: tuple[tuple[int, int], ...]
    human_choices: tuple[int, ...]

    @property
    def model_value(self) -> float:
        """M_i: the panel's mean preference over judges and both presentation orders."""
        n = 2 * len(self.model_choices)
        return sum(a + b for a, b in self.model_choices) / n

    @property
    def human_value(self) -> float | None:
        """H_i, or None when the root received no human judgment."""
        if not self.human_choices:
            return None
        return sum(self.human_choices) / len(self.human_choices)

    @property
    def model_touches(self) -> int:
        return 2 * len(self.model_choices)

    @property
    def human_touches(self) -> int:
        return len(self.human_choices)


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
    roots = tuple(c["root_id"] for c in commits)
    ids = set(roots)
    rows = sorted(
        (a for a in answers if a["root_id"] in ids),
        key=lambda a: (a["root_id"], a["judge"], a["order"], a["trial"]),
    )
    table = JudgmentTable.from_columns(
        [a["root_id"] for a in rows],
        [a["judge"] for a in rows],
        np.full(len(rows), RATER_KINDS.index("model"), np.int8),
        np.array([ORDERS.index(a["order"]) for a in rows], np.int8),
        np.array([CHOICES.index(a["choice"]) for a in rows], np.int8),
        trial=np.array([a["trial"] for a in rows], np.int64),
        cost=np.array([a["cost"] for a in rows], np.float64),
        raw=[a["path"] for a in rows],
        p_treatment=np.array(
            [np.nan if a["p_treatment"] is None else a["p_treatment"] for a in rows], np.float64
        ),
    )
    digest = data_file("live", "ledger.sqlite", "live judges", table.to_csv_bytes(), len(table))
    return CommittedEvidence(roots, table, digest, stop, chain)
