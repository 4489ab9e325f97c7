"""Tests of simulate._fitted: estimates -> a panel config block the kinds accept."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

from verdictpack._errors import InputError
from verdictpack.config._blocks import PanelSpec
from verdictpack.core._estimates import PanelEstimates, estimate_panel
from verdictpack.simulate._draw import (
    simulate_choices,
)
from verdictpack.simulate._fitted import RATE_FLOOR, fitted_panel_record
from verdictpack.simulate._judges import JudgeSheet, Panel, make_scenario


def fitted_block(estimates: PanelEstimates, name: str, **kwargs: Any) -> dict[str, Any]:
    """The panel config block of the record."""
    block: dict[str, Any] = fitted_panel_record(estimates, name, **kwargs)["panel"]
    return block


def _long(model: np.ndarray) -> tuple[np.ndarray, ...]:
    n, j, _ = model.shape
    root = np.repeat(np.arange(n), 2 * j)
    rater = np.tile(np.repeat(np.arange(j), 2), n)
    order = np.tile([0, 1], n * j)
    return root, rater, order, model.reshape(-1).astype(float)


def _truth() -> Panel:
    return Panel(
        (
            JudgeSheet("alpha", "judge", 0.65, 0.0, 0.0, 0.08),
            JudgeSheet("beta", "judge", 0.45, 0.0, 0.0, 0.0),
            JudgeSheet("gamma", "judge", 0.5, 0.0, 0.0, 0.03),
        ),
        0.35,
    )


def _estimates(n: int = 3000, seed: int = 4):  # type: ignore[no-untyped-def]
    truth = _truth()
    null = make_scenario("null", truth, 0.5)
    model, _ = simulate_choices(truth, null, 0.5, 1, n, np.random.default_rng(seed))
    return truth, estimate_panel(*_long(model), names=list(truth.names))


def test_fitted_block_recovers_the_sheets_and_loads_as_a_panel_block() -> None:
    truth, est = _estimates()
    block = fitted_block(est, "fitted", costs={"alpha": 0.002}, roles={"beta": "small"})
    spec = PanelSpec.model_validate(block)  # the block the kinds take
    assert spec.name == "fitted" and [j.name for j in spec.judges] == ["alpha", "beta", "gamma"]
    assert block["latent_correlation"] == pytest.approx(0.35, abs=0.05)
    for sheet, row in zip(truth.judges, block["judges"], strict=True):
        assert row["baseline_rate"] == pytest.approx(sheet.baseline_rate, abs=0.03)
        assert row["position_bias"] == pytest.approx(sheet.position_bias, abs=0.03)
        assert row["lean_h"] == 0.0 and row["noise"] == 0.0  # planning assumptions
    assert block["judges"][0]["cost_per_judgment"] == 0.002
    assert block["judges"][1]["role"] == "small" and block["judges"][2]["role"] == "fitted judge"
    # and the simulation takes it
    sheets = tuple(JudgeSheet(**row) for row in block["judges"])
    Panel(sheets, block["latent_correlation"])


def test_negative_bias_and_extreme_rates_are_clamped() -> None:
    # rater 0 always prefers in order 1 only (bias toward second: δ̂ = -0.5 -> 0);
    # rater 1 always prefers (rate 1 -> 1 - RATE_FLOOR)
    n = 6
    root = np.repeat(np.arange(n), 4)
    rater = np.tile([0, 0, 1, 1], n)
    order = np.tile([0, 1, 0, 1], n)
    value = np.tile([0.0, 1.0, 1.0, 1.0], n)
    est = estimate_panel(root, rater, order, value, names=["a", "b"])
    block = fitted_block(est, "edge", lean_h={"a": 0.2}, noise={"b": 0.1})
    a, b = block["judges"]
    assert a["position_bias"] == 0.0 and a["baseline_rate"] == pytest.approx(0.5)
    assert a["lean_h"] == 0.2 and b["noise"] == 0.1
    assert b["baseline_rate"] == pytest.approx(1 - RATE_FLOOR) and b["position_bias"] == 0.0
    assert block["latent_correlation"] == 0.0  # no informative pair: the fallback
    PanelSpec.model_validate(block)


def test_judges_in_the_estimates_order_and_refusals() -> None:
    _, est = _estimates(400, 6)
    block = fitted_block(est, "three")
    assert [j["name"] for j in block["judges"]] == ["alpha", "beta", "gamma"]
    with pytest.raises(InputError, match="cost_per_judgment"):
        fitted_block(est, "x", costs={"alpha": -1.0})


def test_a_rater_without_judgments_is_refused() -> None:
    est = estimate_panel(
        [0, 1, 0, 1], [0, 0, 1, 1], [0, 0, 0, 0], [1, 0, 0, 1], names=["a", "b", "c"]
    )
    with pytest.raises(InputError, match="at least one judgment") as err:
        fitted_block(est, "p")
    assert err.value.received == "c"


def test_single_judge_uses_the_fallback_correlation() -> None:
    est = estimate_panel([0, 1, 2, 3], [0, 0, 0, 0], [0, 1, 0, 1], [1, 0, 1, 1], names=["solo"])
    block = fitted_block(est, "one", fallback_latent_correlation=0.2)
    assert block["latent_correlation"] == 0.2
    (row,) = block["judges"]
    assert row["baseline_rate"] == pytest.approx(0.75)  # (1 + 0.5) / 2, counterbalanced
    assert row["position_bias"] == pytest.approx(0.25)


def test_negative_position_bias_is_kept_as_estimated_and_its_clip_named() -> None:
    # 20 roots: order 0 prefers 1 time in 4, order 1 prefers 3 times in 4 -> δ̂ = -0.25
    n = 20
    root = np.repeat(np.arange(n), 8)
    order = np.tile([0, 0, 0, 0, 1, 1, 1, 1], n)
    trial = np.tile([0, 1, 2, 3, 0, 1, 2, 3], n)
    value = np.tile([1.0, 0.0, 0.0, 0.0, 1.0, 1.0, 1.0, 0.0], n)
    est = estimate_panel(root, np.zeros(root.size, int), order, value, names=["a"], trial=trial)
    record = fitted_panel_record(est, "neg")
    (row,) = record["estimated"]["judges"]
    assert row["position_bias"] == pytest.approx(-0.25)  # unclipped
    low, high = row["position_bias_ci"]
    assert low <= -0.25 <= high < 0.0
    assert record["panel"]["judges"][0]["position_bias"] == 0.0  # what the simulator takes
    (clip,) = [c for c in record["clips"] if c["field"] == "position_bias"]
    assert clip["judge"] == "a" and clip["estimated"] == pytest.approx(-0.25)
    assert clip["written"] == 0.0 and "shown first" in clip["reason"]
    PanelSpec.model_validate(record["panel"])


def test_record_clips_exactly_the_fields_the_simulator_needed_changed() -> None:
    _, est = _estimates()
    record = fitted_panel_record(est, "fitted")
    negative = [n for n, b in zip(est.names, est.position_biases, strict=True) if b.bias < 0]
    assert [(c["judge"], c["field"]) for c in record["clips"]] == [
        (n, "position_bias") for n in negative
    ]
    assert record["estimated"]["latent_correlation"] == est.latent.rho
    assert [j["position_bias"] for j in record["estimated"]["judges"]] == [
        b.bias for b in est.position_biases
    ]
