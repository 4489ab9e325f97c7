"""Tests of the gates: real functions of the text, template-bound ones refuse plain stimuli."""

# The refusal tests pass ill-typed arguments on purpose.
# mypy: disable-error-code="arg-type,list-item"

from __future__ import annotations

import random
from dataclasses import replace

import pytest

from conftest import assert_refused_by_name
from verdictpack._errors import InputError
from verdictpack.stimuli import (
    LENGTH_TEMPLATES,
    SUMMARIZATION_TEMPLATES,
    TEMPLATE_GENERATOR,
    ContentPreservationGate,
    FragmentDistinctnessGate,
    LengthMatchGate,
    NullSeparationGate,
    Stimulus,
    standard_gates,
)
from verdictpack.stimuli._gates import _grams, _max_fragment_similarity
from verdictpack.stimuli._text import sentence_tokens

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


def make_root(source: str = SOURCE, treatment: str = TREATMENT, null: str = NULL) -> Stimulus:
    """A hand-written stimulus in the template generator's world (lexicon and markers)."""
    return Stimulus(
        id="hand-1",
        source=source,
        treatment=treatment,
        null_partner=null,
        metadata={"generator": TEMPLATE_GENERATOR},
    )


SEPARATION = NullSeparationGate.for_templates(SUMMARIZATION_TEMPLATES)
GATES = standard_gates(SUMMARIZATION_TEMPLATES, length_tolerance=0.10)


# ------------------------------------------------------------------------------------------
# Each gate passes and fails for the right reason on hand-written roots
# ------------------------------------------------------------------------------------------


def test_hand_written_root_passes_every_gate() -> None:
    root = make_root()
    for gate in GATES:
        outcome = gate.check(root)
        assert outcome.passed, gate.name
    assert GATES[0].check(root).measured == 0.0  # 22 words each
    assert GATES[1].check(root).measured == 1.0


def test_content_preservation_fails_when_a_unit_is_deleted() -> None:
    gate = ContentPreservationGate(1.0)
    dropped = make_root(treatment=TREATMENT.rsplit(" Crucially", 1)[0])
    outcome = gate.check(dropped)
    assert not outcome.passed and outcome.measured == pytest.approx(2 / 3)
    assert ContentPreservationGate(0.6).check(dropped).passed
    # a changed value is a lost unit too
    changed = make_root(treatment=TREATMENT.replace("1932", "1933"))
    assert gate.check(changed).measured == pytest.approx(2 / 3)
    # rewording and reordering keep the content
    reworded = make_root(
        treatment="Orin Bridge is managed by the City Council, highlighting its pivotal role. "
        "It is worth noting that Orin Bridge is located in Marlow. Orin Bridge opened in 1932."
    )
    assert gate.check(reworded).passed
    # a source without detectable content cannot pass
    assert not gate.check(
        make_root(source="Orin Bridge is often mentioned in local guides.")
    ).passed


def test_length_match_fails_on_padding() -> None:
    pad = " This is an important point that readers may wish to keep in mind."
    root = make_root(treatment=TREATMENT + pad)
    outcome = LengthMatchGate(0.10).check(root)
    assert not outcome.passed
    assert outcome.measured == pytest.approx(13 / 22)  # 13 padding words over 22 null words
    assert LengthMatchGate(0.60).check(root).passed
    chars = LengthMatchGate(0.10, unit="characters").check(make_root())
    assert chars.measured == pytest.approx(abs(len(TREATMENT) - len(NULL)) / len(NULL))
    # a length construct: the treatment is meant to be longer by the target
    longer = make_root(treatment=NULL + " " + NULL)  # twice as long: r = 1
    assert LengthMatchGate(0.05, target=1.0).check(longer).passed
    assert not LengthMatchGate(0.05, target=0.0).check(longer).passed


def test_fragment_distinctness_fails_on_a_near_duplicate() -> None:
    gate = FragmentDistinctnessGate(0.5)
    dup = make_root(treatment=TREATMENT + " Remarkably, Orin Bridge opened in 1932.")
    outcome = gate.check(dup)
    # "notably orin bridge opened in 1932" vs "remarkably orin bridge opened in 1932":
    # 4 trigrams each, 3 shared -> Jaccard 3/5
    assert not outcome.passed and outcome.measured == pytest.approx(3 / 5)
    assert _max_fragment_similarity(TREATMENT, 3) < 0.5
    assert gate.check(make_root()).passed
    # an exact repeat anywhere in the root (here in the source) is caught
    assert (
        gate.check(
            make_root(source=SOURCE + " Records note that Orin Bridge opened in 1932.")
        ).measured
        == 1.0
    )


def test_null_separation_fails_on_extra_differences() -> None:
    assert SEPARATION.check(make_root()).passed
    # one extra word outside the allowed spans
    extra = make_root(null=NULL.replace("City Council.", "City Council today."))
    outcome = SEPARATION.check(extra)
    assert not outcome.passed and outcome.measured == 1.0
    assert replace(SEPARATION, max_diff_tokens=1).check(extra).passed
    # a marker word is allowed only where a marker goes (opening or closing a sentence)
    inside = make_root(null=NULL.replace("is managed", "is still managed"))
    assert SEPARATION.check(inside).measured == 1.0  # "Still," is a marker, but not here
    # a changed fact fails even when token differences are tolerated
    fact = make_root(null=NULL.replace("the City Council", "the Heritage Board"))
    assert not replace(SEPARATION, max_diff_tokens=5).check(fact).passed
    # a padded treatment differs outside the spans
    padded = make_root(treatment=TREATMENT + " It is always useful to consider the wider context.")
    assert not SEPARATION.check(padded).passed
    # a null partner identical to the treatment carries no manipulation
    same = make_root(null=TREATMENT)
    outcome = SEPARATION.check(same)
    assert not outcome.passed and outcome.measured == 0.0
    # markers of another family are not allowed spans
    assert not NullSeparationGate.for_templates(LENGTH_TEMPLATES).check(make_root()).passed


def test_gates_read_text_not_bookkeeping() -> None:
    meta = {"generator": TEMPLATE_GENERATOR, "injected_defects": ("drop_unit", "padding")}
    liar = replace(make_root(), metadata=meta)
    assert all(g.check(liar).passed for g in GATES)


# ------------------------------------------------------------------------------------------
# Text-only gates on any texts; template-bound gates refuse a plain stimulus
# ------------------------------------------------------------------------------------------

# Real-text pairs outside the template world: no lexicon entity, no template marker.
PLAIN_SOURCE = (
    "The committee met on Tuesday to review the budget. "
    "Members approved funding for two new bus routes. "
    "A vote on the library extension was postponed until March."
)
PLAIN_TREATMENT = (
    "In summary, the committee reviewed the budget on Tuesday. "
    "Overall, members approved funding for two new bus routes. "
    "Notably, the library extension vote was delayed until March."
)
PLAIN_NULL = (
    "On Tuesday, the committee went over the budget. "
    "Members agreed to fund two new bus routes in town. "
    "The vote on the library extension was moved to March."
)


def plain(treatment: str = PLAIN_TREATMENT, null: str = PLAIN_NULL, **kw: object) -> Stimulus:
    return Stimulus(id="real-1", treatment=treatment, null_partner=null, **kw)


def test_text_only_gates_admit_and_refuse_real_text_pairs() -> None:
    length = LengthMatchGate(0.10)
    fragments = FragmentDistinctnessGate(0.5)
    assert not length.template_bound and not fragments.template_bound
    # matched lengths (27 vs 28 words), distinct sentences: admitted, with or without a source
    for stim in (plain(), plain(source=PLAIN_SOURCE)):
        outcome = length.check(stim)
        assert outcome.passed and outcome.measured == pytest.approx(1 / 28)
        assert fragments.check(stim).passed
    # a padded treatment is refused by length
    padded = plain(PLAIN_TREATMENT + " This is a key point that every reader should keep in mind.")
    outcome = length.check(padded)
    assert not outcome.passed and outcome.measured == pytest.approx(11 / 28)  # 39 vs 28
    # a sentence repeated almost verbatim is refused by fragment distinctness, in any of the texts
    repeat = " Overall, members approved funding for two new bus routes."
    assert fragments.check(plain(PLAIN_TREATMENT + repeat)).measured == 1.0
    assert not fragments.check(
        plain(null=PLAIN_NULL + " Members agreed to fund two new bus routes.")
    ).passed
    assert not fragments.check(plain(source=PLAIN_SOURCE + " " + PLAIN_SOURCE)).passed


@pytest.mark.parametrize(
    "gate",
    [ContentPreservationGate(1.0), SEPARATION],
    ids=["content_preservation", "null_separation"],
)
def test_template_bound_gates_refuse_a_plain_stimulus(gate) -> None:  # type: ignore[no-untyped-def]
    assert gate.template_bound
    for stim in (plain(source=PLAIN_SOURCE), make_root(), replace(make_root(), metadata={})):
        if stim.metadata.get("generator") == TEMPLATE_GENERATOR:
            gate.check(stim)  # the generator's stimuli are read
            continue
        with pytest.raises(InputError) as err:
            gate.check(stim)
        assert err.value.parameter == "stimulus" and gate.name in str(err.value)
        assert "template generator" in str(err.value)
    with pytest.raises(InputError):
        gate.check(replace(make_root(), metadata={"generator": "someone else"}))
    if isinstance(gate, ContentPreservationGate):  # it needs the source text too
        with pytest.raises(InputError):
            gate.check(replace(make_root(), source=None))


# ------------------------------------------------------------------------------------------
# Refusals
# ------------------------------------------------------------------------------------------

REFUSALS = [
    ("tolerance", lambda: LengthMatchGate(-0.1)),
    ("unit", lambda: LengthMatchGate(0.1, unit="tokens")),
    ("target", lambda: LengthMatchGate(0.1, target=float("inf"))),
    ("threshold", lambda: ContentPreservationGate(1.1)),
    ("lexicon", lambda: ContentPreservationGate(1.0, lexicon="x")),
    ("threshold", lambda: FragmentDistinctnessGate(-0.5)),
    ("n", lambda: FragmentDistinctnessGate(0.5, n=0)),
    ("allowed_spans", lambda: NullSeparationGate(())),
    ("allowed_spans", lambda: NullSeparationGate((", ",))),
    ("max_diff_tokens", lambda: NullSeparationGate(("Notably,",), max_diff_tokens=-1)),
    ("stimulus.id", lambda: Stimulus(id="", treatment="a", null_partner="b")),
    ("stimulus.treatment", lambda: Stimulus(id="s", treatment=None, null_partner="b")),
    ("stimulus.source", lambda: Stimulus(id="s", source=3, treatment="a", null_partner="b")),
    ("stimulus.metadata", lambda: Stimulus(id="s", treatment="a", null_partner="b", metadata=[])),
    (
        "stimulus.metadata",
        lambda: Stimulus(id="s", treatment="a", null_partner="b", metadata={1: 2}),
    ),
]


@pytest.mark.parametrize(
    ("parameter", "call"), REFUSALS, ids=[f"{i}-{p}" for i, (p, _) in enumerate(REFUSALS)]
)
def test_invalid_arguments_are_refused_by_name(parameter: str, call) -> None:  # type: ignore[no-untyped-def]
    assert_refused_by_name(parameter, call)


def _brute_force_similarity(text: str, n: int) -> float:
    grams = [_grams(toks, n) for toks in sentence_tokens(text)]
    return max(
        (len(a & b) / len(a | b) for i, a in enumerate(grams) for b in grams[i + 1 :]),
        default=0.0,
    )


def test_fragment_similarity_is_the_max_jaccard_of_sentence_grams() -> None:
    """Every pair of sentences compared (the shortcut for texts without a repeated window
    included), on texts with short sentences, repeats and mixed scripts."""
    pieces = ["Orin", "bridge", "3.5", "e.g.", "U.S.", "it's", "Café", "x2", "мост", "橋", "!", "."]
    rng = random.Random(7)
    texts = [SOURCE, "", "One. Two! Three? Four", "Wait... what?! Yes.\nNo.", "a b c. a b c."]
    for _ in range(300):
        words = (rng.choice(pieces) + rng.choice([" ", ". ", "", "? ", "。"]) for _ in range(30))
        texts.append("".join(words))
    for text in texts:
        for n in (1, 2, 3, 4):
            expected = _brute_force_similarity(text, n)
            assert _max_fragment_similarity(text, n) == pytest.approx(expected), (text, n)


DUPLICATED = {
    "cyrillic": (
        "Городской совет утвердил бюджет на следующий год. Мэр объявил о новых школах. "
        "Городской совет утвердил бюджет на следующий год."
    ),
    "greek": (
        "Το δημοτικό συμβούλιο ενέκρινε τον προϋπολογισμό της πόλης. Ο δήμαρχος μίλησε για "
        "νέα σχολεία. Το δημοτικό συμβούλιο ενέκρινε τον προϋπολογισμό της πόλης!"
    ),
    "cjk": "市议会批准了明年的预算。市长宣布建设新学校。市议会批准了明年的预算。",
    "japanese": (
        "市議会は来年の予算を承認した。市長は新しい学校を発表した！市議会は来年の予算を承認した。"
    ),
}
DISTINCT = {
    "cyrillic": "Городской совет утвердил бюджет на следующий год. Мэр объявил о новых школах.",
    "greek": "Το δημοτικό συμβούλιο ενέκρινε τον προϋπολογισμό. Ο δήμαρχος μίλησε για σχολεία.",
    "cjk": "市议会批准了明年的预算。市长宣布建设新学校。",
    "japanese": "市議会は来年の予算を承認した。市長は新しい学校を発表した！",
}


@pytest.mark.parametrize("script", sorted(DUPLICATED))
def test_fragment_gate_catches_duplicated_sentences_in_any_script(script: str) -> None:
    gate = FragmentDistinctnessGate(0.5)
    dup = Stimulus(id="d", source=None, treatment=DUPLICATED[script], null_partner=DISTINCT[script])
    outcome = gate.check(dup)
    assert outcome.measured == 1.0 and not outcome.passed
    ok = Stimulus(id="k", source=None, treatment=DISTINCT[script], null_partner=DISTINCT[script])
    assert gate.check(ok).passed and gate.check(ok).measured < 0.2
