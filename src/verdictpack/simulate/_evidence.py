"""Where evidence comes from: one interface for simulated panels, live judges and imported data.

The engine asks an :class:`EvidenceSource` for the judgments on one admitted stimulus at a time
and feeds what comes back into the sequential core; it never knows whether the judgments were
simulated, fetched from a judge endpoint or read from annotation files. Today's implementation is
:class:`SimulatedPanelSource` (the character-sheet model of :mod:`verdictpack.simulate._judges`); a
live
judge client or an annotation importer implements the same two members and plugs into the same
path. Requirements on any source (they are what keeps the anytime-valid guarantee honest): the
order in which stimuli are judged and whether a root receives human judgments must not depend on
the judgments' values (missing at random), and every judgment is returned, never filtered.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol, runtime_checkable

import numpy as np

from verdictpack._errors import InputError
from verdictpack.simulate._judges import ORDER_LABELS, Panel, TruthScenario, simulate_choices
from verdictpack.stimuli._factory import Root

__all__ = ["EvidenceSource", "RootEvidence", "SimulatedPanelSource"]


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

    def judge(self, stimulus: Root) -> RootEvidence:
        """All model-panel judgments (both orders) and the human judgments for one stimulus."""
        ...


class SimulatedPanelSource:
    """Judgments drawn from the character-sheet model under one truth scenario.

    The judgments are drawn ``block`` roots at a time (``simulate_choices`` on the source's own
    generator) and served one root per :meth:`judge` call, so root i's judgments are a fixed
    function of the generator, whatever asks for them and however fast.
    """

    def __init__(
        self,
        panel: Panel,
        scenario: TruthScenario,
        human_rate: float,
        human_judgments_per_root: int,
        rng: np.random.Generator,
        block: int = 64,
    ) -> None:
        self._panel = panel
        self._scenario = scenario
        self._rate = human_rate
        self._n_h = human_judgments_per_root
        self._rng = rng
        if not isinstance(block, int) or isinstance(block, bool) or block < 1:
            raise InputError("block", "a positive integer number of roots", block)
        self._block = block
        self._model = np.zeros((0, panel.n_judges, 2), dtype=np.int8)
        self._human = np.zeros((0, human_judgments_per_root), dtype=np.int8)
        self._next = 0

    @property
    def description(self) -> str:
        return f"simulated panel (truth scenario '{self._scenario.name}')"

    def judge(self, stimulus: Root) -> RootEvidence:
        if self._next == len(self._model):
            self._model, self._human = simulate_choices(
                self._panel, self._scenario, self._rate, self._n_h, self._block, self._rng
            )
            self._next = 0
        i = self._next
        self._next += 1
        return RootEvidence(
            stimulus_id=stimulus.root_id,
            judges=self._panel.names,
            orders=ORDER_LABELS,
            model_choices=tuple((int(a), int(b)) for a, b in self._model[i].tolist()),
            human_choices=tuple(int(v) for v in self._human[i].tolist()),
        )
