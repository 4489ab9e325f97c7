"""Tests of the stimulus factory: real texts, gates that are real functions of the text."""

# The refusal tests pass ill-typed arguments on purpose.
# mypy: disable-error-code="arg-type,list-item"

from __future__ import annotations

import math
from dataclasses import dataclass, replace

import numpy as np
import pytest

from verdictpack._errors import InputError
from verdictpack._results import dump_json
from verdictpack.stimuli._factory import (
    DEFAULT_DEFECT_RATES,
    DEFAULT_LEXICON,
    LENGTH_TEMPLATES,
    NO_DEFECTS,
    SUMMARIZATION_TEMPLATES,
    Attribute,
    ContentPreservationGate,
    DefectRates,
    FragmentDistinctnessGate,
    Gate,
    GateOutcome,
    LengthMatchGate,
    NullSeparationGate,
    Root,
    Template,
    content_units,
    max_fragment_similarity,
    run_factory,
    size_gate_spot_check,
    standard_gates,
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


def make_root(source: str = SOURCE, treatment: str = TREATMENT, null: str = NULL) -> Root:
    return Root("hand-1", 0, "hand", "summarization", source, treatment, null)


SEPARATION = NullSeparationGate.for_templates(SUMMARIZATION_TEMPLATES)
GATES = standard_gates(SUMMARIZATION_TEMPLATES, length_tolerance=0.10)
LENGTH_GATES = standard_gates(LENGTH_TEMPLATES, length_tolerance=0.5, length_target=1.5)


# ------------------------------------------------------------------------------------------
# Content units are detected in the text
# ------------------------------------------------------------------------------------------


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
    assert max_fragment_similarity(TREATMENT) < 0.5
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
    liar = replace(make_root(), injected_defects=("drop_unit", "padding"))
    assert all(g.check(liar).passed for g in GATES)


# ------------------------------------------------------------------------------------------
# The factory
# ------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class PassAll:
    name: str = "pass_all"

    def check(self, root: Root) -> GateOutcome:
        return GateOutcome(True, 0.0, 0.0)


def test_a_custom_gate_plugs_in() -> None:
    assert isinstance(PassAll(), Gate)
    res = run_factory(50, SUMMARIZATION_TEMPLATES, [PassAll()], np.random.default_rng(0))
    assert res.n_admitted == 50 and res.admission_yield.value == 1.0


@pytest.mark.parametrize(
    ("templates", "gates"),
    [(SUMMARIZATION_TEMPLATES, GATES), (LENGTH_TEMPLATES, LENGTH_GATES)],
)
def test_counts_add_up_and_match_an_independent_recount(templates, gates) -> None:  # type: ignore[no-untyped-def]
    n = 400
    res = run_factory(n, templates, gates, np.random.default_rng(21))
    assert res.n_admitted + res.n_rejected == n
    assert sum(res.first_failures.values()) == res.n_rejected
    assert res.admission_yield.basis == "exact"
    assert res.admission_yield.value == res.n_admitted / n
    assert 0 < res.n_admitted < n
    assert all(res.gate_failures[g] >= res.first_failures[g] > 0 for g in res.gate_names)
    # recount: generate the same candidates with a pass-all gate and check every gate by hand
    every = run_factory(n, templates, [PassAll()], np.random.default_rng(21)).admitted
    fails = {g.name: 0 for g in gates}
    admitted = []
    for root in every:
        outcomes = [g.check(root) for g in gates]
        for g, o in zip(gates, outcomes, strict=True):
            fails[g.name] += not o.passed
        if all(o.passed for o in outcomes):
            admitted.append(root)
    assert fails == res.gate_failures
    assert tuple(admitted) == res.admitted
    assert len({r.root_id for r in res.admitted}) == res.n_admitted
    dump_json(res)


def test_each_injected_defect_fails_its_gate() -> None:
    expected = {
        "drop_unit": {"content_preservation"},
        "padding": {"length_match", "null_separation"},
        "duplicate_fragment": {"fragment_distinctness"},
        "extra_difference": {"null_separation"},
    }
    names = list(expected)
    for i, name in enumerate(names):
        rates = [0.0] * 4
        rates[i] = 1.0
        res = run_factory(
            200, SUMMARIZATION_TEMPLATES, GATES, np.random.default_rng(i), DefectRates(*rates)
        )
        assert res.n_admitted == 0
        failing = {g for g, c in res.gate_failures.items() if c == 200}
        assert failing == expected[name], name
        assert all(res.gate_failures[g] == 0 for g in res.gate_names if g not in expected[name])


@pytest.mark.parametrize(
    ("templates", "gates"),
    [(SUMMARIZATION_TEMPLATES, GATES), (LENGTH_TEMPLATES, LENGTH_GATES)],
)
def test_clean_candidates_are_all_admitted(templates, gates) -> None:  # type: ignore[no-untyped-def]
    res = run_factory(600, templates, gates, np.random.default_rng(2), NO_DEFECTS)
    assert res.n_admitted == 600
    assert all(r.injected_defects == () for r in res.admitted)
    assert {r.template for r in res.admitted} == {t.name for t in templates}


def test_yield_matches_the_defect_model() -> None:
    # every defect is caught and every clean candidate passes (tests above), so a candidate is
    # admitted iff it drew no defect: P = Π(1 − rate), compared within 4 binomial SE.
    n = 2000
    res = run_factory(n, SUMMARIZATION_TEMPLATES, GATES, np.random.default_rng(33))
    r = DEFAULT_DEFECT_RATES
    p = (1 - r.drop_unit) * (1 - r.padding) * (1 - r.duplicate_fragment) * (1 - r.extra_difference)
    assert abs(res.admission_yield.value - p) <= 4 * math.sqrt(p * (1 - p) / n)


def test_generation_is_deterministic_and_texts_are_real() -> None:
    a = run_factory(100, LENGTH_TEMPLATES, LENGTH_GATES, np.random.default_rng(5))
    b = run_factory(100, LENGTH_TEMPLATES, LENGTH_GATES, np.random.default_rng(5))
    c = run_factory(100, LENGTH_TEMPLATES, LENGTH_GATES, np.random.default_rng(6))
    assert a == b
    assert [r.treatment for r in a.admitted] != [r.treatment for r in c.admitted]
    for root in a.admitted:
        # the treatment is a longer rendering of the same content as the null partner
        assert len(root.treatment.split()) > len(root.null_partner.split())
        assert content_units(root.treatment) == content_units(root.null_partner)
        assert content_units(root.source) == content_units(root.treatment) != frozenset()


def test_fewer_than_two_templates_are_refused_by_name() -> None:
    with pytest.raises(InputError) as err:
        run_factory(10, SUMMARIZATION_TEMPLATES[:1], GATES, np.random.default_rng(0))
    assert err.value.parameter == "templates" and err.value.received == 1
    assert "templates" in str(err.value) and "received 1" in str(err.value)
    with pytest.raises(InputError) as err:
        run_factory(10, [], GATES, np.random.default_rng(0))
    assert err.value.received == 0


def test_templates_for_each_family() -> None:
    assert templates_for("summarization") is SUMMARIZATION_TEMPLATES
    assert templates_for("length") is LENGTH_TEMPLATES
    assert len(SUMMARIZATION_TEMPLATES) >= 2 and len(LENGTH_TEMPLATES) >= 2
    # summarization marker pairs are length-matched in words
    for t in SUMMARIZATION_TEMPLATES:
        for tm, nm in zip(t.treatment_markers, t.null_markers, strict=True):
            assert len(tm.split()) == len(nm.split()), (tm, nm)


# ------------------------------------------------------------------------------------------
# Spot-check sizing
# ------------------------------------------------------------------------------------------


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


# ------------------------------------------------------------------------------------------
# Refusals
# ------------------------------------------------------------------------------------------

GEN = np.random.default_rng(0)
T0 = SUMMARIZATION_TEMPLATES[0]


def tpl(**changes: object) -> Template:
    return replace(T0, **changes)


REFUSALS = [
    ("n_candidates", lambda: run_factory(0, SUMMARIZATION_TEMPLATES, GATES, GEN)),
    ("n_candidates", lambda: run_factory(2.0, SUMMARIZATION_TEMPLATES, GATES, GEN)),
    ("templates", lambda: run_factory(5, T0, GATES, GEN)),
    ("templates", lambda: run_factory(5, [T0, T0], GATES, GEN)),
    ("templates", lambda: run_factory(5, [T0, LENGTH_TEMPLATES[0]], GATES, GEN)),
    ("templates", lambda: run_factory(5, [T0, "x"], GATES, GEN)),
    ("gates", lambda: run_factory(5, SUMMARIZATION_TEMPLATES, [], GEN)),
    ("gates", lambda: run_factory(5, SUMMARIZATION_TEMPLATES, [object()], GEN)),
    ("gates", lambda: run_factory(5, SUMMARIZATION_TEMPLATES, [GATES[0], GATES[0]], GEN)),
    ("rng", lambda: run_factory(5, SUMMARIZATION_TEMPLATES, GATES, 3)),
    ("defect_rates", lambda: run_factory(5, SUMMARIZATION_TEMPLATES, GATES, GEN, 0.1)),
    (
        "units_per_root",
        lambda: run_factory(5, SUMMARIZATION_TEMPLATES, GATES, GEN, units_per_root=(1, 3)),
    ),
    (
        "units_per_root",
        lambda: run_factory(5, SUMMARIZATION_TEMPLATES, GATES, GEN, units_per_root=(3, 9)),
    ),
    (
        "background_rate",
        lambda: run_factory(5, SUMMARIZATION_TEMPLATES, GATES, GEN, background_rate=2),
    ),
    ("lexicon", lambda: run_factory(5, SUMMARIZATION_TEMPLATES, GATES, GEN, lexicon=None)),
    ("id_prefix", lambda: run_factory(5, SUMMARIZATION_TEMPLATES, GATES, GEN, id_prefix="")),
    ("defect_rates.padding", lambda: DefectRates(padding=1.5)),
    ("defect_rates.drop_unit", lambda: DefectRates(drop_unit=float("nan"))),
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
    with pytest.raises(InputError) as err:
        call()
    assert err.value.parameter == parameter
    assert parameter in str(err.value)
