"""Tests of the built-in lexicon, content-unit detection and the templates."""

# The refusal tests pass ill-typed arguments on purpose.
# mypy: disable-error-code="arg-type,list-item"

from __future__ import annotations

from dataclasses import replace

import pytest

from conftest import assert_refused_by_name
from verdictpack.stimuli import (
    DEFAULT_LEXICON,
    LENGTH_TEMPLATES,
    SUMMARIZATION_TEMPLATES,
    Attribute,
    Template,
    content_units,
    templates_for,
)

SOURCE = (
    "Records note that Orin Bridge opened in 1932. "
    "Orin Bridge is often mentioned in local guides. "
    "Records note that Orin Bridge is located in Marlow. "
    "Records note that Orin Bridge is managed by the City Council."
)
TREATMENT = (
    "Notably, Orin Bridge opened in 1932. "
    "Importantly, Orin Bridge is located in Marlow. "
    "Crucially, Orin Bridge is managed by the City Council."
)
NULL = (
    "Also, Orin Bridge opened in 1932. "
    "Next, Orin Bridge is located in Marlow. "
    "Then, Orin Bridge is managed by the City Council."
)


def test_content_units_are_read_from_the_text() -> None:
    units = content_units(SOURCE)
    assert units == {
        ("orin bridge", "opened", "1932"),
        ("orin bridge", "located", "marlow"),
        ("orin bridge", "managed", "the city council"),
    }
    # same facts, other wording and order: same units
    assert content_units(NULL) == units
    # entity, phrase and value must share a sentence
    assert content_units("Orin Bridge opened long ago. It was in 1932.") == frozenset()
    # a value of another attribute does not make a unit
    assert content_units("Orin Bridge opened in Marlow.") == frozenset()
    # whole tokens only: 19320 is not 1932, "Orin Bridges" is not "Orin Bridge"
    assert content_units("Orin Bridge opened in 19320. Orin Bridges opened in 1932.") == frozenset()
    # multi-token values
    assert content_units("Selby Tower receives about 45 thousand visitors a year, they say.") == {
        ("selby tower", "visitors", "45 thousand visitors a year")
    }


def test_background_and_padding_sentences_carry_no_content() -> None:
    for line in DEFAULT_LEXICON.background:
        for e in DEFAULT_LEXICON.entities:
            assert content_units(line.format(entity=e)) == frozenset()
    for line in DEFAULT_LEXICON.padding:
        assert content_units(line) == frozenset()


def test_templates_for_each_family() -> None:
    assert templates_for("summarization") is SUMMARIZATION_TEMPLATES
    assert templates_for("length") is LENGTH_TEMPLATES
    assert len(SUMMARIZATION_TEMPLATES) >= 2 and len(LENGTH_TEMPLATES) >= 2
    # summarization marker pairs are length-matched in words
    for t in SUMMARIZATION_TEMPLATES:
        for tm, nm in zip(t.treatment_markers, t.null_markers, strict=True):
            assert len(tm.split()) == len(nm.split()), (tm, nm)


# ------------------------------------------------------------------------------------------
# Refusals
# ------------------------------------------------------------------------------------------

T0 = SUMMARIZATION_TEMPLATES[0]


def tpl(**changes: object) -> Template:
    return replace(T0, **changes)


REFUSALS = [
    ("template.name", lambda: tpl(name="")),
    ("template.family", lambda: tpl(family="poetry")),
    ("template.source_frame", lambda: tpl(source_frame="{entity} {value}.")),
    ("template.source_frame", lambda: tpl(source_frame="{entity} {phrase} {value} {extra}.")),
    ("template.source_frame", lambda: tpl(source_frame="{entity {phrase} {value}.")),
    ("template.treatment_frame", lambda: tpl(treatment_frame="{entity} {phrase} {value}.")),
    ("template.null_frame", lambda: tpl(null_frame="{marker} {entity} {phrase} {value!r}.")),
    ("template.null_frame", lambda: tpl(null_frame="{entity} {marker} {phrase} {value}.")),
    ("template.treatment_markers", lambda: tpl(treatment_markers=())),
    ("template.treatment_markers", lambda: tpl(treatment_markers=("",))),
    ("template.null_markers", lambda: tpl(null_markers=("Also,", "Next,"))),
    ("template.null_markers", lambda: tpl(null_markers=("Notably,",))),
    ("family", lambda: templates_for("poetry")),
    ("attribute.values", lambda: Attribute("x", "has", ("1",))),
    ("attribute.phrase", lambda: Attribute("x", " ", ("1", "2"))),
    ("lexicon.entities", lambda: replace(DEFAULT_LEXICON, entities=("A b", "a B"))),
    (
        "lexicon.attributes",
        lambda: replace(DEFAULT_LEXICON, attributes=DEFAULT_LEXICON.attributes[:1]),
    ),
    ("lexicon.padding", lambda: replace(DEFAULT_LEXICON, padding=())),
]


@pytest.mark.parametrize(
    ("parameter", "call"), REFUSALS, ids=[f"{i}-{p}" for i, (p, _) in enumerate(REFUSALS)]
)
def test_invalid_arguments_are_refused_by_name(parameter: str, call) -> None:  # type: ignore[no-untyped-def]
    assert_refused_by_name(parameter, call)
