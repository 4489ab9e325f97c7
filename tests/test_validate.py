"""Tests of verdictpack._validate: every validator refuses generated invalid values (NaN, ±inf,
bools, strings, None, containers, out of range, huge ints, ...) with one message shape, and
accepts and converts the valid ones."""

# The refusal tests pass ill-typed arguments on purpose.
# mypy: disable-error-code="arg-type,assignment"

from __future__ import annotations

import math
import re
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from verdictpack import _validate as v
from verdictpack._errors import InputError, format_value

# --------------------------------------------------------------------------------------------
# Generated invalid values
# --------------------------------------------------------------------------------------------

NOT_NUMBERS: list[Any] = [
    True,
    False,
    np.bool_(True),
    "0.5",
    "",
    None,
    [0.5],
    (1,),
    {"x": 1},
    b"1",
    complex(0.5, 0.0),
    np.array(0.5),
    np.array([0.5]),
    object(),
]
NON_FINITE: list[Any] = [
    math.nan,
    math.inf,
    -math.inf,
    np.float64("nan"),
    np.float32("inf"),
    np.float64("-inf"),
    10**400,  # an int too large for a float is not a finite real
]
NOT_INTEGERS: list[Any] = [*NOT_NUMBERS, 1.0, 2.5, np.float64(3.0), math.nan, math.inf]
NOT_STRINGS: list[Any] = [None, 1, 1.5, True, b"abc", ["a"], ("a",), np.str_("")]


# (validator name, call with the value, the values it must refuse)
CASES: list[tuple[str, Callable[[Any], Any], list[Any]]] = [
    ("finite_real", lambda x: v.finite_real("x", x), NOT_NUMBERS + NON_FINITE),
    (
        "open_unit",
        lambda x: v.open_unit("x", x),
        NOT_NUMBERS + NON_FINITE + [0, 1, 0.0, 1.0, -0.0, -0.1, 1.1, 7],
    ),
    (
        "closed_unit",
        lambda x: v.closed_unit("x", x),
        NOT_NUMBERS + NON_FINITE + [-1e-300, np.nextafter(1.0, 2.0), 2, -1],
    ),
    (
        "open_interval",
        lambda x: v.open_interval("x", x, 0.0, 0.5, "a level in (0, 0.5)"),
        NOT_NUMBERS + NON_FINITE + [0.0, 0.5, -0.25, 0.75, 1],
    ),
    (
        "closed_interval",
        lambda x: v.closed_interval("x", x, -1.0, 1.0, "a number in [-1, 1]"),
        NOT_NUMBERS + NON_FINITE + [-1.0000001, 1.0000001, 2, -2],
    ),
    (
        "int_at_least",
        lambda x: v.int_at_least("x", x, 2),
        [*NOT_INTEGERS, 1, 0, -5, np.int64(1), np.uint8(0)],
    ),
    ("positive_int", lambda x: v.positive_int("x", x), [*NOT_INTEGERS, 0, -1, np.int32(0)]),
    ("nonempty_str", lambda x: v.nonempty_str("x", x), [*NOT_STRINGS, "", " ", "\t\n"]),
    (
        "str_tuple",
        lambda x: v.str_tuple("x", x),
        [None, "abc", "", [], (), ["a", ""], ["a", 1], ("a", None), {"a"}, 3, ["  "]],
    ),
    (
        "generator",
        lambda x: v.generator("x", x),
        [
            None,
            0,
            np.random.RandomState(0),
            np.random.default_rng,
            "rng",
            [np.random.default_rng()],
        ],
    ),
    (
        "probabilities",
        lambda x: v.probabilities("x", x, "a probability in [0, 1] (or an array of them)"),
        [x for x in NOT_NUMBERS if not isinstance(x, np.ndarray)]
        + NON_FINITE
        + [
            -0.5,
            1.5,
            np.array([0.5, 1.5]),
            np.array([[0.2], [np.nan]]),
            np.array([-0.1]),
            np.array(["a"]),
            np.array([True, False]),
            np.array([0.5, np.inf]),
        ],
    ),
]

REFUSALS = [(name, call, x) for name, call, values in CASES for x in values]
IDS = [f"{name}-{i}-{type(x).__name__}" for i, (name, _, x) in enumerate(REFUSALS)]

MESSAGE = re.compile(r"^parameter 'x': expected .+; received .+$", re.DOTALL)


@pytest.mark.parametrize(("name", "call", "value"), REFUSALS, ids=IDS)
def test_every_validator_refuses_invalid_values_in_one_shape(
    name: str, call: Callable[[Any], Any], value: Any
) -> None:
    with pytest.raises(InputError) as err:
        call(value)
    assert err.value.parameter == "x"
    assert err.value.allowed
    assert isinstance(err.value, ValueError)  # InputError is also a ValueError
    assert MESSAGE.match(str(err.value)), str(err.value)


# --------------------------------------------------------------------------------------------
# Valid values pass and are converted
# --------------------------------------------------------------------------------------------


def test_valid_values_are_accepted_and_converted() -> None:
    for x in (0, 3, -2.5, np.float32(1.5), np.int64(7), 1e308):
        out = v.finite_real("x", x)
        assert type(out) is float and out == float(x)
    assert v.open_unit("x", np.float64(0.25)) == 0.25
    assert v.open_unit("x", 5e-324) == 5e-324
    assert v.closed_unit("x", 0) == 0.0 and type(v.closed_unit("x", 1)) is float
    assert v.open_interval("x", 0.49, 0.0, 0.5, "") == 0.49
    assert v.closed_interval("x", -1, -1.0, 1.0, "") == -1.0
    out_i = v.int_at_least("x", np.int64(5), 2)
    assert type(out_i) is int and out_i == 5
    assert v.int_at_least("x", 10**400, 0) == 10**400  # a huge int is an int
    assert v.positive_int("x", 1) == 1
    assert v.nonempty_str("x", " a ") == " a "
    assert v.str_tuple("x", ["a", "b"]) == ("a", "b")
    assert v.str_tuple("x", ("a", ""), allow_empty_items=True) == ("a", "")
    gen = np.random.default_rng(1)
    assert v.generator("x", gen) is gen
    arr = v.probabilities("x", np.array([[0, 1], [1, 0]]), "")
    assert isinstance(arr, np.ndarray) and arr.dtype == np.float64 and arr.shape == (2, 2)
    assert v.probabilities("x", 1, "") == 1.0


def test_the_two_meanings_of_real_are_named_apart() -> None:
    """is_real: a real number (bools excluded), NaN and ±inf included; is_finite_real: finite."""
    for x in (0, 1.5, np.float64(2), np.int8(3), math.nan, math.inf, -math.inf):
        assert v.is_real(x)
    for x in (True, np.bool_(False), "1", None, complex(1, 0), np.array(1.0)):
        assert not v.is_real(x) and not v.is_finite_real(x)
    for x in (math.nan, math.inf, -math.inf, np.float64("nan"), 10**400):
        assert not v.is_finite_real(x)
    for x in (0, -1e308, np.float32(0.1), 2**60):
        assert v.is_finite_real(x)
    assert v.is_int(np.uint64(3)) and v.is_int(-1)
    assert not v.is_int(True) and not v.is_int(1.0) and not v.is_int(np.bool_(True))


def test_messages_keep_the_callers_words() -> None:
    with pytest.raises(InputError) as err:
        v.open_unit("alpha", 1.5)
    assert str(err.value) == (
        "parameter 'alpha': expected a number strictly between 0 and 1; received 1.5"
    )
    with pytest.raises(InputError) as err:
        v.int_at_least("n", 1, 2)
    assert str(err.value) == "parameter 'n': expected an integer >= 2; received 1"
    with pytest.raises(InputError) as err:
        v.int_at_least("cap", 0, 1, "a positive integer number of roots")
    assert err.value.allowed == "a positive integer number of roots"
    with pytest.raises(InputError) as err:
        v.closed_unit("r", math.nan, "a rate in [0, 1]")
    assert str(err.value) == "parameter 'r': expected a rate in [0, 1]; received nan"
    with pytest.raises(InputError) as err:
        v.generator("rng", 42)
    assert err.value.received == "int"


# --------------------------------------------------------------------------------------------
# Generated floats: the range validators agree with their definition everywhere
# --------------------------------------------------------------------------------------------


@settings(max_examples=400, deadline=None)
@given(st.floats(allow_nan=True, allow_infinity=True) | st.integers(-(10**400), 10**400))
def test_range_validators_agree_with_their_definition(x: float | int) -> None:
    finite = v.is_finite_real(x)
    checks: list[tuple[Callable[[Any], Any], bool]] = [
        (lambda y: v.finite_real("x", y), finite),
        (lambda y: v.open_unit("x", y), finite and 0.0 < float(x) < 1.0),
        (lambda y: v.closed_unit("x", y), finite and 0.0 <= float(x) <= 1.0),
        (lambda y: v.open_interval("x", y, -2.0, 3.0, "."), finite and -2.0 < float(x) < 3.0),
        (lambda y: v.closed_interval("x", y, -2.0, 3.0, "."), finite and -2.0 <= float(x) <= 3.0),
        (lambda y: v.int_at_least("x", y, -3), isinstance(x, int) and x >= -3),
    ]
    for call, valid in checks:
        if valid:
            call(x)
        else:
            with pytest.raises(InputError) as err:
                call(x)
            assert err.value.received is x
            assert format_value(x) in str(err.value)
