"""The evidence interface: the simulated source serves the character-sheet model's draws."""

from __future__ import annotations

import numpy as np
import pytest

from verdictpack import EvidenceSource, RootEvidence, SimulatedPanelSource
from verdictpack._errors import InputError
from verdictpack._rng import stream
from verdictpack.simulate._draw import (
    simulate_choices,
)
from verdictpack.simulate._judges import (
    JudgeSheet,
    Panel,
    TruthScenario,
)
from verdictpack.stimuli import Stimulus

PANEL = Panel(
    (
        JudgeSheet("a", "judge", baseline_rate=0.5, lean_h=0.5, noise=0.1),
        JudgeSheet("b", "judge", baseline_rate=0.4, lean_h=0.3, noise=0.2),
    ),
    latent_correlation=0.2,
)
SCENARIO = TruthScenario("above", effect_scale=0.8)


def _root(i: int) -> Stimulus:
    return Stimulus(
        id=f"r{i}", source="source text", treatment="treatment text", null_partner="null text"
    )


@pytest.mark.parametrize("block", [1, 7, 64])
def test_simulated_source_serves_block_draws_in_order(block: int) -> None:
    source = SimulatedPanelSource(PANEL, SCENARIO, 0.5, 3, stream(1, "test/evidence"), block)
    assert isinstance(source, EvidenceSource)
    got = [source.judge(_root(i)) for i in range(20)]
    rng = stream(1, "test/evidence")
    model, human = [], []
    while len(model) < 20:
        m, h = simulate_choices(PANEL, SCENARIO, 0.5, 3, block, rng)
        model.extend(m.tolist())
        human.extend(h.tolist())
    for i, ev in enumerate(got):
        assert isinstance(ev, RootEvidence) and ev.stimulus_id == f"r{i}"
        assert ev.judges == ("a", "b") and ev.model_touches == 4 and ev.human_touches == 3
        assert [list(p) for p in ev.model_choices] == model[i]
        assert list(ev.human_choices) == human[i]
    values = np.array([ev.model_value for ev in got])
    assert np.all((values >= 0) & (values <= 1)) and np.unique(values).size > 1


@pytest.mark.parametrize("block", [0, -3, 2.5, True, "8"])
def test_simulated_source_refuses_bad_block(block: object) -> None:
    with pytest.raises(InputError) as info:
        SimulatedPanelSource(PANEL, SCENARIO, 0.5, 3, stream(1, "x"), block)  # type: ignore[arg-type]
    assert info.value.parameter == "block"
