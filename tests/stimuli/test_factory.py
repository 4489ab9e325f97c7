"""Tests of the template generator: real texts, counts that add up, defects its gates catch."""

# The refusal tests pass ill-typed arguments on purpose.
# mypy: disable-error-code="arg-type,list-item"

from __future__ import annotations

import json
import math
from dataclasses import dataclass, replace

import numpy as np
import pytest

from conftest import assert_refused_by_name
from verdictpack._errors import InputError
from verdictpack._results import dump_json, to_jsonable
from verdictpack.stimuli import (
    DEFAULT_DEFECT_RATES,
    LENGTH_TEMPLATES,
    NO_DEFECTS,
    SUMMARIZATION_TEMPLATES,
    TEMPLATE_GENERATOR,
    DefectRates,
    Gate,
    GateOutcome,
    GeneratedStimulus,
    LengthMatchGate,
    Stimulus,
    content_units,
    run_factory,
    standard_gates,
)

GATES = standard_gates(SUMMARIZATION_TEMPLATES, length_tolerance=0.10)
LENGTH_GATES = standard_gates(LENGTH_TEMPLATES, length_tolerance=0.5, length_target=1.5)


@dataclass(frozen=True)
class PassAll:
    name: str = "pass_all"

    def check(self, stimulus: Stimulus) -> GateOutcome:
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
        outcomes = [g.check(root.stimulus) for g in gates]
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


# ------------------------------------------------------------------------------------------
# The generator's record and the Stimulus it hands to gates and evidence sources
# ------------------------------------------------------------------------------------------


def test_generated_stimulus_record_and_its_stimulus() -> None:
    res = run_factory(40, SUMMARIZATION_TEMPLATES, GATES, np.random.default_rng(3))
    assert res.n_admitted > 0
    assert res.stimuli == tuple(g.stimulus for g in res.admitted)
    for g, s in zip(res.admitted, res.stimuli, strict=True):
        assert isinstance(g, GeneratedStimulus) and isinstance(s, Stimulus)
        assert (s.id, s.source, s.treatment, s.null_partner) == (
            g.root_id,
            g.source,
            g.treatment,
            g.null_partner,
        )
        assert dict(s.metadata) == {
            "generator": TEMPLATE_GENERATOR,
            "template": g.template,
            "family": "summarization",
            "candidate_index": g.candidate_index,
            "injected_defects": (),
        }
    # the stimuli.jsonl record: these names in this order (the output contract)
    record = to_jsonable(res.admitted[0])
    assert list(record) == [
        "root_id",
        "candidate_index",
        "template",
        "family",
        "source",
        "treatment",
        "null_partner",
        "injected_defects",
    ]
    json.dumps(record)


def test_a_stimulus_is_frozen_with_read_only_metadata() -> None:
    s = Stimulus(id="s1", treatment="A b.", null_partner="A c.")
    assert s.source is None and dict(s.metadata) == {}
    meta = {"k": 1}
    t = Stimulus(id="s2", treatment="A b.", null_partner="A c.", metadata=meta)
    meta["k"] = 2  # a copy was taken
    assert t.metadata["k"] == 1
    with pytest.raises(TypeError):
        t.metadata["k"] = 3
    with pytest.raises(AttributeError):
        t.id = "other"
    assert hash(t) == hash(replace(t, metadata={"k": 5}))  # metadata does not take part in hashing
    assert t == Stimulus(id="s2", treatment="A b.", null_partner="A c.", metadata={"k": 1})
    assert t != replace(t, metadata={"k": 5})
    assert LengthMatchGate(0.1).check(s).passed  # text-only gates take any stimulus


# ------------------------------------------------------------------------------------------
# Refusals
# ------------------------------------------------------------------------------------------

GEN = np.random.default_rng(0)
T0 = SUMMARIZATION_TEMPLATES[0]

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
]


@pytest.mark.parametrize(
    ("parameter", "call"), REFUSALS, ids=[f"{i}-{p}" for i, (p, _) in enumerate(REFUSALS)]
)
def test_invalid_arguments_are_refused_by_name(parameter: str, call) -> None:  # type: ignore[no-untyped-def]
    assert_refused_by_name(parameter, call)
