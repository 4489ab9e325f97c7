"""Call costs per million tokens and per call (verdictpack.evidence.live._prices)."""

from __future__ import annotations

import pytest

from verdictpack._errors import InputError
from verdictpack.evidence.live._prices import Price, call_cost, max_call_cost


def test_default_price_is_free() -> None:
    assert call_cost(Price(), 10_000, 500) == 0.0
    assert max_call_cost(Price(), 10_000, 8) == 0.0


def test_per_million_tokens() -> None:
    price = Price(per_million_input=0.15, per_million_output=0.60)
    assert call_cost(price, 1_000_000, 0) == pytest.approx(0.15, rel=1e-12)
    assert call_cost(price, 0, 1_000_000) == pytest.approx(0.60, rel=1e-12)
    # 1200 prompt tokens and 3 completion tokens
    assert call_cost(price, 1200, 3) == pytest.approx(1200 * 0.15e-6 + 3 * 0.60e-6, rel=1e-12)


def test_per_call_fee_is_added_once() -> None:
    price = Price(per_million_input=2.0, per_million_output=8.0, per_call=0.001)
    assert call_cost(price, 0, 0) == pytest.approx(0.001, rel=1e-12)
    assert call_cost(price, 500, 2) == pytest.approx(0.001 + 500 * 2e-6 + 2 * 8e-6, rel=1e-12)
    assert call_cost(Price(per_call=0.25), 123_456, 789) == 0.25


def test_max_call_cost_is_the_worst_case_at_max_tokens() -> None:
    price = Price(per_million_input=1.0, per_million_output=4.0, per_call=0.01)
    worst = max_call_cost(price, 900, 8)
    assert worst == pytest.approx(call_cost(price, 900, 8), rel=1e-15)
    assert all(call_cost(price, 900, c) <= worst for c in range(9))


def test_integer_rates_become_floats() -> None:
    price = Price(per_million_input=3, per_million_output=15, per_call=0)
    assert isinstance(price.per_million_input, float) and price.per_million_output == 15.0


@pytest.mark.parametrize(
    "kwargs",
    [
        {"per_million_input": -0.01},
        {"per_million_output": float("inf")},
        {"per_call": float("nan")},
        {"per_call": "0.1"},
        {"per_million_input": True},
    ],
)
def test_price_refuses(kwargs: dict) -> None:
    with pytest.raises(InputError) as err:
        Price(**kwargs)
    assert err.value.parameter.startswith("price.")


@pytest.mark.parametrize(
    ("prompt", "completion", "parameter"),
    [(-1, 0, "prompt_tokens"), (0, -1, "completion_tokens"), (1.5, 0, "prompt_tokens")],
)
def test_call_cost_refuses_bad_counts(prompt: object, completion: object, parameter: str) -> None:
    with pytest.raises(InputError) as err:
        call_cost(Price(), prompt, completion)  # type: ignore[arg-type]
    assert err.value.parameter == parameter
    with pytest.raises(InputError, match="price"):
        call_cost({"per_call": 1.0}, 1, 1)  # type: ignore[arg-type]
