"""The simulated evidence source: judgments drawn from the character-sheet model.

:class:`SimulatedPanelSource` implements :class:`verdictpack.evidence.EvidenceSource` with the
panel model of :mod:`verdictpack.simulate._judges` under one truth scenario; the engine's default
source. It sits in ``simulate`` (above ``evidence``) because it needs the generative model.
"""

from __future__ import annotations

import numpy as np

from verdictpack._validate import int_at_least
from verdictpack.evidence._source import RootEvidence
from verdictpack.simulate._draw import (
    simulate_choices,
)
from verdictpack.simulate._judges import (
    ORDER_LABELS,
    Panel,
    TruthScenario,
)
from verdictpack.stimuli._stimulus import Stimulus

__all__ = ["SimulatedPanelSource"]


class SimulatedPanelSource:
    """An :class:`~verdictpack.evidence.EvidenceSource`: judgments drawn from the character-sheet
    model under one truth scenario.

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
        human_icc: float | None = None,
    ) -> None:
        self._panel = panel
        self._scenario = scenario
        self._rate = human_rate
        self._n_h = human_judgments_per_root
        self._icc = human_icc
        self._rng = rng
        self._block = int_at_least("block", block, 1, "a positive integer number of roots")
        self._model = np.zeros((0, panel.n_judges, 2), dtype=np.int8)
        self._human = np.zeros((0, human_judgments_per_root), dtype=np.int8)
        self._next = 0

    @property
    def description(self) -> str:
        return f"simulated panel (truth scenario '{self._scenario.name}')"

    def judge(self, stimulus: Stimulus) -> RootEvidence:
        if self._next == len(self._model):
            self._model, self._human = simulate_choices(
                self._panel,
                self._scenario,
                self._rate,
                self._n_h,
                self._block,
                self._rng,
                self._icc,
            )
            self._next = 0
        i = self._next
        self._next += 1
        return RootEvidence(
            stimulus_id=stimulus.id,
            judges=self._panel.names,
            orders=ORDER_LABELS,
            model_choices=tuple((int(a), int(b)) for a, b in self._model[i].tolist()),
            human_choices=tuple(int(v) for v in self._human[i].tolist()),
        )
