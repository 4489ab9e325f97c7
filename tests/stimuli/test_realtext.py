"""Tests of the real-text gates on hand-written news-like pairs, and of the gate counts."""

# The refusal tests pass ill-typed arguments on purpose.
# mypy: disable-error-code="arg-type,list-item"

from __future__ import annotations

import gc
import random

import pytest

from conftest import assert_refused_by_name
from verdictpack.stimuli import FragmentDistinctnessGate, LengthMatchGate, Stimulus
from verdictpack.stimuli._realtext import (
    ContentOverlapGate,
    DiffBudgetGate,
    gate_counts,
    real_text_gates,
    token_difference,
    word_tokens,
)

SOURCE = (
    "The city council of Bergen approved a budget of 4.2 billion kroner on Tuesday. "
    "Mayor Ingrid Dahl said the plan funds 350 new teachers."
)
NULL = (
    "On Tuesday, the Bergen city council approved a budget of 4.2 billion kroner. "
    "Mayor Ingrid Dahl said that the plan funds 350 new teachers."
)
TREATMENT = (
    "On Tuesday, the Bergen city council formally approved a budget of 4.2 billion kroner. "
    "Mayor Ingrid Dahl stated that the plan funds 350 new teachers."
)


def pair(pid: str, treatment: str, null: str, source: str | None = SOURCE) -> Stimulus:
    return Stimulus(id=pid, source=source, treatment=treatment, null_partner=null)


GOOD = pair("good", TREATMENT, NULL)
# the null partner changes a figure: high overlap, but a content change
CHANGED_NUMBER = pair("changed_number", TREATMENT, NULL.replace("350", "360"))
# both texts drop the second sentence of the source: content lost in both
DROPPED = pair(
    "dropped",
    "The Bergen city council approved a budget on Tuesday evening.",
    "The Bergen city council approved a budget on Tuesday night.",
)
IDENTICAL = pair("identical", NULL, NULL)
# same content and length, but rewritten from scratch: not a minimal pair (no source)
REWRITTEN = pair(
    "rewritten",
    "Officials in Lyon confirmed on Monday that 12 people were injured when a tram derailed "
    "near the station.",
    "A tram derailed near the station in Lyon on Monday, and officials confirmed that 12 "
    "people were injured.",
    source=None,
)
LONGER = pair("longer", NULL.replace("approved", "approved after a lengthy debate"), NULL)
REPEATED = pair(
    "repeated",
    "The council approved the budget on Tuesday. The council approved the budget on Tuesday night.",
    "The council approved the budget on Tuesday. The council approved the budget on Tuesday "
    "evening.",
    source=None,
)
# length and diff budget both refuse; length runs first
PADDED = pair(
    "padded",
    NULL.replace("approved", "approved, after many hours of a long and heated debate,"),
    NULL,
)

GATES = real_text_gates(length_tolerance=0.10, max_diff_tokens=6)


def test_word_tokens_keep_case_numbers_and_inner_marks() -> None:
    toks = word_tokens("O'Neill's long-term plan costs $1,200.50 (3.5%) in 2024.")
    assert toks == ("O'Neill's", "long-term", "plan", "costs", "1,200.50", "3.5", "in", "2024")


def test_content_units_of_news_text() -> None:
    units = ContentOverlapGate(0.8)._units(SOURCE)
    assert dict(units.numbers) == {"4.2": 1, "350": 1}
    # Mayor opens a sentence, so it is a content word, not a name
    assert units.names == {"Bergen", "Tuesday", "Ingrid", "Dahl"}
    assert units.words == {
        "city",
        "council",
        "approved",
        "budget",
        "billion",
        "kroner",
        "mayor",
        "plan",
        "funds",
        "teachers",
    }
    assert "said" not in units.words  # a reporting verb is on the stop list
    assert units.size == 16
    # knobs: a longer minimum drops short content words
    assert "plan" not in ContentOverlapGate(0.8, min_word_length=5)._units(SOURCE).words


def test_content_overlap_admits_a_register_pair() -> None:
    out = ContentOverlapGate(1.0).check(GOOD)
    assert out.passed and out.measured == 1.0 and out.threshold == 1.0


def test_changed_number_is_refused_however_high_the_overlap() -> None:
    gate = ContentOverlapGate(0.8)
    out = gate.check(CHANGED_NUMBER)
    assert out.measured == pytest.approx(15 / 16)  # only "350" is not in both
    assert not out.passed  # above the threshold: the number rule refused it
    # with "350" kept in both texts again every unit is kept
    assert gate.check(pair("fixed", TREATMENT, NULL)).measured == 1.0
    # without the number rule the same pair clears an 0.8 threshold
    assert ContentOverlapGate(0.8, require_numbers=False).check(CHANGED_NUMBER).passed


def test_a_number_added_to_one_side_only_is_a_content_change() -> None:
    added = pair("added", TREATMENT.replace("350 new", "350 new and 20 retired"), NULL)
    gate = ContentOverlapGate(0.5)
    out = gate.check(added)
    assert out.measured == 1.0 and not out.passed  # every unit kept, the number rule broken
    both = pair("both", added.treatment, NULL.replace("350 new", "350 new and 20 retired"))
    assert gate.check(both).passed  # same figures on both sides, every source figure kept


def test_dropped_content_is_refused_with_the_share_kept() -> None:
    gate = ContentOverlapGate(0.8)
    out = gate.check(DROPPED)
    # kept: Bergen, Tuesday, city, council, approved, budget -> 6 of 16
    assert out.measured == pytest.approx(6 / 16)
    assert not out.passed
    # both source figures are lost: refused by the number rule even at the share kept
    assert not ContentOverlapGate(6 / 16).check(DROPPED).passed
    assert ContentOverlapGate(6 / 16, require_numbers=False).check(DROPPED).passed


def test_without_a_source_the_treatment_is_the_reference() -> None:
    gate = ContentOverlapGate(1.0)
    assert gate.check(REWRITTEN).passed
    lost = pair("lost", REWRITTEN.treatment, "A tram derailed in Lyon on Monday.", source=None)
    out = gate.check(lost)
    assert not out.passed and 0 < out.measured < 1


def test_a_reference_without_content_units_is_refused() -> None:
    empty = pair("empty", "It was so.", "It is so.", source="And so it was.")
    out = ContentOverlapGate(0.0).check(empty)
    assert not out.passed and out.measured == 0.0


def test_a_name_may_open_a_sentence_in_the_texts() -> None:
    moved = pair(
        "moved",
        "Bergen approved it on Tuesday.",
        "Bergen approved it on Tuesday!",
        source="On Tuesday the council in Bergen approved it.",
    )
    # units Tuesday, Bergen (names: "Bergen" opens the texts' sentences), council, approved
    assert ContentOverlapGate(1.0).check(moved).measured == pytest.approx(3 / 4)
    more = " The council."
    kept = pair("kept", moved.treatment + more, moved.null_partner + more, moved.source)
    assert ContentOverlapGate(1.0).check(kept).passed  # "council" was the missing unit


def test_token_difference_counts_edits() -> None:
    assert token_difference(["a", "b", "c"], ["a", "b", "c"]) == 0
    assert token_difference(["a", "b", "c"], ["a", "x", "c"]) == 1
    assert token_difference(["a", "b"], ["a", "b", "c", "d"]) == 2
    assert token_difference(["a", "b", "c"], ["a", "x", "y", "z", "c"]) == 3


def test_diff_budget_admits_a_minimal_pair() -> None:
    out = DiffBudgetGate(6).check(GOOD)
    assert out.passed and out.measured == 2.0 and out.threshold == 6.0


def test_diff_budget_refuses_identical_and_rewritten_pairs() -> None:
    gate = DiffBudgetGate(6)
    assert gate.check(IDENTICAL) == gate.check(IDENTICAL)
    assert not gate.check(IDENTICAL).passed and gate.check(IDENTICAL).measured == 0.0
    # punctuation only: identical tokens, no manipulation
    punct = pair("punct", NULL.replace(",", ""), NULL)
    assert not gate.check(punct).passed
    # case is kept: a capitalisation change is a one-token difference
    case = pair("case", NULL.replace("city council", "City Council"), NULL)
    assert gate.check(case).measured == 2.0 and gate.check(case).passed
    out = gate.check(REWRITTEN)
    assert not out.passed and out.measured > 6
    assert DiffBudgetGate(int(out.measured)).check(REWRITTEN).passed


def test_gate_knobs_are_validated() -> None:
    assert_refused_by_name("threshold", lambda: ContentOverlapGate(1.5))
    assert_refused_by_name("require_numbers", lambda: ContentOverlapGate(0.5, "yes"))
    assert_refused_by_name("min_word_length", lambda: ContentOverlapGate(0.5, min_word_length=0))
    assert_refused_by_name("stop_words", lambda: ContentOverlapGate(0.5, stop_words={"the"}))
    assert_refused_by_name("max_diff_tokens", lambda: DiffBudgetGate(0))
    assert_refused_by_name("stimulus", lambda: DiffBudgetGate(3).check("text"))
    assert_refused_by_name("stimulus", lambda: ContentOverlapGate(0.5).check(None))


def test_real_text_gates_is_the_standard_set_in_order() -> None:
    assert [g.name for g in GATES] == [
        "length_match",
        "fragment_distinctness",
        "content_overlap",
        "diff_budget",
    ]
    assert isinstance(GATES[0], LengthMatchGate) and GATES[0].tolerance == 0.10
    assert isinstance(GATES[1], FragmentDistinctnessGate)
    assert isinstance(GATES[2], ContentOverlapGate) and GATES[2].threshold == 0.8
    assert isinstance(GATES[3], DiffBudgetGate) and GATES[3].max_diff_tokens == 6
    # they take plain stimuli (no template metadata)
    assert all(g.check(GOOD).passed for g in GATES)


def test_each_refusal_reason_on_real_text() -> None:
    expect = {
        "good": (),
        "changed_number": ("content_overlap",),
        "dropped": ("content_overlap",),
        "identical": ("diff_budget",),
        "rewritten": ("diff_budget",),
        "longer": ("length_match",),
        "repeated": ("fragment_distinctness",),
        "padded": ("length_match", "diff_budget"),
    }
    for s in (GOOD, CHANGED_NUMBER, DROPPED, IDENTICAL, REWRITTEN, LONGER, REPEATED, PADDED):
        fails = tuple(g.name for g in GATES if not g.check(s).passed)
        assert fails == expect[s.id], s.id


def test_gate_counts_per_gate_first_failing_and_refused_ids() -> None:
    stimuli = [GOOD, CHANGED_NUMBER, DROPPED, IDENTICAL, REWRITTEN, LONGER, REPEATED, PADDED]
    counts = gate_counts(stimuli, GATES)
    assert counts.total == 8
    assert counts.gates == tuple(g.name for g in GATES)
    assert counts.admitted == ("good",)
    assert counts.refused == (
        "changed_number",
        "dropped",
        "identical",
        "rewritten",
        "longer",
        "repeated",
        "padded",
    )
    assert dict(counts.refusals) == {
        "length_match": 2,
        "fragment_distinctness": 1,
        "content_overlap": 2,
        "diff_budget": 3,
    }
    assert dict(counts.first_failing) == {
        "length_match": 2,
        "fragment_distinctness": 1,
        "content_overlap": 2,
        "diff_budget": 2,
    }
    assert sum(counts.first_failing.values()) == len(counts.refused)
    assert counts.failed["padded"] == ("length_match", "diff_budget")
    assert "good" not in counts.failed
    # every stimulus is either admitted or refused, none dropped
    assert len(counts.admitted) + len(counts.refused) == counts.total


def test_gate_counts_refuses_duplicate_ids_and_gate_names() -> None:
    assert_refused_by_name("stimuli", lambda: gate_counts([GOOD, GOOD], GATES))
    assert_refused_by_name("gates", lambda: gate_counts([GOOD], [DiffBudgetGate(2)] * 2))
    assert_refused_by_name("gates", lambda: gate_counts([GOOD], ["length"]))
    empty = gate_counts([], GATES)
    assert empty.total == 0 and empty.refused == () and set(empty.refusals.values()) == {0}


def _levenshtein(a: list[str], b: list[str]) -> int:
    """The textbook dynamic programme: fewest insertions, deletions and substitutions."""
    row = list(range(len(b) + 1))
    for i, x in enumerate(a, 1):
        prev, row[0] = row[0], i
        for j, y in enumerate(b, 1):
            prev, row[j] = row[j], min(row[j] + 1, row[j - 1] + 1, prev + (x != y))
    return row[-1]


def test_token_difference_is_the_levenshtein_distance() -> None:
    """On repetitive token sequences (few distinct tokens: many equally good alignments)."""
    rng = random.Random(11)
    for _ in range(2000):
        k = rng.randrange(1, 6)
        a = [str(rng.randrange(k)) for _ in range(rng.randrange(0, 25))]
        b = list(a)
        for _ in range(rng.randrange(0, 5)):
            at = rng.randrange(len(b) + 1)
            if rng.random() < 0.5 and b:
                b.pop(min(at, len(b) - 1))
            else:
                b.insert(at, str(rng.randrange(k)))
        if rng.random() < 0.2:
            b = [str(rng.randrange(k)) for _ in range(rng.randrange(0, 25))]
        assert token_difference(a, b) == _levenshtein(a, b), (a, b)


def test_diff_budget_reads_tokens_of_any_script() -> None:
    gate = DiffBudgetGate(2)
    same = pair("nfkc", "The ﬁnal vote: ２０２４.", "The final vote, 2024!")
    assert gate.check(same).measured == 0.0 and not gate.check(same).passed
    greek = pair(
        "el", "Η βουλή ενέκρινε τον προϋπολογισμό.", "Η βουλή δεν ενέκρινε τον προϋπολογισμό."
    )
    assert gate.check(greek).measured == 1.0 and gate.check(greek).passed
    cjk = pair("zh", "议会批准了预算。", "议会否决了预算。")
    assert gate.check(cjk).measured == 2.0  # two characters replaced


def test_gate_counts_leaves_garbage_collection_as_it_was() -> None:
    assert gc.isenabled()
    gate_counts([GOOD], GATES)
    assert gc.isenabled()
    gc.disable()
    try:
        gate_counts([GOOD], GATES)
        assert not gc.isenabled()
    finally:
        gc.enable()
