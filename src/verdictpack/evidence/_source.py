"""Where evidence comes from: one interface for simulated panels, live judges and imported data.

The engine asks an :class:`EvidenceSource` for the judgments on one admitted stimulus at a time
and feeds what comes back into the sequential core; it never knows whether the judgments were
simulated, fetched from a judge endpoint or read from annotation files. The engine's default
implementation is :class:`verdictpack.simulate._evidence.SimulatedPanelSource` (the
character-sheet model of :mod:`verdictpack.simulate._judges`); a live judge client or an
annotation importer implements the same two members and plugs into the same path.
Requirements on any source (they are what keeps the anytime-valid guarantee honest): the order in
which stimuli are judged and whether a root receives human judgments must not depend on the
judgments' values (missing at random), and every judgment is returned, never filtered.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol, runtime_checkable

from verdictpack.stimuli._stimulus import Stimulus

__all__ = ["EvidenceSource", "RootEvidence"]


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
