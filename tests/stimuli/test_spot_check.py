"""Tests of the gate spot-check sizing (exact zero-failure binomial bound)."""

# The refusal tests pass ill-typed arguments on purpose.
# mypy: disable-error-code="arg-type,list-item"

from __future__ import annotations

import math

import pytest

from conftest import assert_refused_by_name
from verdictpack._errors import InputError
from verdictpack.stimuli import size_gate_spot_check


def brute_pairs(e: float, conf: float) -> int:
    n = 1
    while (1 - e) ** n > 1 - conf:
        n += 1
    return n


@pytest.mark.parametrize(
    ("e", "conf"), [(0.10, 0.95), (0.05, 0.95), (0.05, 0.99), (0.5, 0.75), (0.2, 0.8), (0.01, 0.9)]
)
def test_spot_check_size_is_the_exact_zero_failure_bound(e: float, conf: float) -> None:
    res = size_gate_spot_check(e, conf, passes_per_pair=4)
    assert res.pairs == brute_pairs(e, conf)
    assert res.touches == 4 * res.pairs and res.cost == res.touches
    assert res.bound_at_pairs.value <= e + 1e-12
    if res.bound_at_pairs_minus_1 is not None:
        assert res.bound_at_pairs_minus_1.value > e


def test_spot_check_defaults_and_admitted_limit() -> None:
    res = size_gate_spot_check()
    assert res.pairs == math.ceil(math.log(0.05) / math.log(0.9))
    assert res.touches == 4 * res.pairs
    assert size_gate_spot_check(cost_per_touch=2.5).cost == 2.5 * res.touches
    assert size_gate_spot_check(n_admitted=res.pairs).pairs == res.pairs
    with pytest.raises(InputError) as err:
        size_gate_spot_check(n_admitted=res.pairs - 1)
    assert err.value.parameter == "n_admitted"


REFUSALS = [
    ("error_rate", lambda: size_gate_spot_check(error_rate=0.0)),
    ("error_rate", lambda: size_gate_spot_check(error_rate=1.0)),
    ("confidence", lambda: size_gate_spot_check(confidence=1.0)),
    ("passes_per_pair", lambda: size_gate_spot_check(passes_per_pair=0)),
    ("cost_per_touch", lambda: size_gate_spot_check(cost_per_touch=-1.0)),
    ("n_admitted", lambda: size_gate_spot_check(n_admitted=-3)),
]


@pytest.mark.parametrize(
    ("parameter", "call"), REFUSALS, ids=[f"{i}-{p}" for i, (p, _) in enumerate(REFUSALS)]
)
def test_invalid_arguments_are_refused_by_name(parameter: str, call) -> None:  # type: ignore[no-untyped-def]
    assert_refused_by_name(parameter, call)
