"""The free-text answer parser shared by live judges and files (TextParser): the exact label by
default, declared strict patterns only where a study names them, ties only where declared."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from verdictpack._errors import InputError
from verdictpack.evidence.live._extract import PATTERNS, TextParser, extract_choice

AB = ("A", "B")
ALL = TextParser(AB, patterns=("bold", "brackets", "named", "brackets_anywhere"), ties=("C",))


def _read(parser: TextParser, text: str) -> tuple[str, str]:
    got = parser.read(text)
    return got.position, got.path


@pytest.mark.parametrize(
    ("text", "position"),
    [
        ("A", "first"),
        (" b. ", "second"),
        ("**A**", "first"),
        ("** B **", "second"),
        ("[[B]]", "second"),
        ("[[C]]", "tie"),
        ("Response A", "first"),
        ("Assistant B is better.", "second"),
        ("the output a is the better one", "first"),
        ("Both are fine, but overall... Final verdict: [[A]]", "first"),
        ("I compared them.\n\n[[C]]", "tie"),
    ],
)
def test_declared_patterns_read_the_verdicts_people_write(text: str, position: str) -> None:
    assert _read(ALL, text) == (position, "parser")
    rule = "exact label" if text.strip(" .") in ("A", "b") else "pattern "
    assert ALL.read(text).detail.startswith(rule), ALL.read(text).detail


@pytest.mark.parametrize(
    "text",
    [
        "A or B",
        "[[A]] at first, then [[B]]",  # two answers anywhere: no answer
        "**A** and **B**",
        "Response D",
        "Assistant A is worse",
        "I cannot judge this.",
        "",
        "   ",
        "AB",
    ],
)
def test_anything_else_is_invalid_never_guessed(text: str) -> None:
    assert _read(ALL, text) == ("invalid", "none")


def test_without_declared_patterns_only_the_exact_label_reads() -> None:
    exact = TextParser(AB)
    assert _read(exact, "A.") == ("first", "parser")
    for text in ("**A**", "[[A]]", "Response A", "C"):
        assert _read(exact, text) == ("invalid", "none"), text


def test_a_custom_pattern_with_a_label_group() -> None:
    parser = TextParser(("1", "2"), patterns=(r"Output \((?P<label>[12])\)",))
    assert _read(parser, "Output (2)") == ("second", "parser")
    assert _read(parser, "Output (3)") == ("invalid", "none")


@pytest.mark.parametrize(
    ("kwargs", "name"),
    [
        ({"patterns": "bold"}, "patterns"),
        ({"patterns": ("(unclosed",)}, "patterns[0]"),
        ({"patterns": ("no label group",)}, "patterns[0]"),
        ({"patterns": ("",)}, "patterns[0]"),
        ({"ties": ("A",)}, "ties"),
        ({"ties": ("",)}, "ties"),
        ({"ties": "C"}, "ties"),
    ],
)
def test_bad_parser_settings_are_refused_by_name(kwargs: dict[str, object], name: str) -> None:
    with pytest.raises(InputError) as err:
        TextParser(AB, **kwargs)  # type: ignore[arg-type]
    assert err.value.parameter == name


def test_live_responses_use_the_same_parser() -> None:
    response = {"choices": [{"message": {"role": "assistant", "content": "**B**"}}]}
    assert extract_choice(response, AB).path == "none"
    got = extract_choice(response, AB, ALL)
    assert (got.position, got.path) == ("second", "parser")


@given(st.text(max_size=40))
def test_the_parser_never_raises_and_names_a_known_position(text: str) -> None:
    got = ALL.read(text)
    assert got.position in ("first", "second", "tie", "invalid")
    assert set(PATTERNS) >= {"bold", "brackets", "named", "brackets_anywhere"}
