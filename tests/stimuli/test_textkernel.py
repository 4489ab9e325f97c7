"""The compiled text kernel equals the Python rules it implements (the written specification).

The real-text gates run on :mod:`verdictpack.stimuli._textkernel`; their Python rules
(:mod:`verdictpack.stimuli._realtext`, :mod:`verdictpack.stimuli._gates`) stay as the
specification. Here both run on seeded random texts built from Unicode letters, apostrophes,
hyphens, numbers with ``,`` and ``.``, sentence punctuation, quotes, brackets and odd white
space, and on every code point in every position the character classes matter, and must give
the same tokens, sentence openings, content units, measured values and decisions.
"""

from __future__ import annotations

import difflib
import random
from collections import Counter

import pytest

from verdictpack.stimuli import Stimulus
from verdictpack.stimuli import _textkernel as kernel
from verdictpack.stimuli._gates import (
    _PIECE_TOKEN,
    _STOP,
    FragmentDistinctnessGate,
    LengthMatchGate,
    _reference_fragment_similarity,
    max_fragment_similarity,
)
from verdictpack.stimuli._realtext import (
    _NOT_NAMES,
    STOP_WORDS,
    ContentOverlapGate,
    DiffBudgetGate,
    GateCounts,
    _Text,
    gate_counts,
    real_text_gates,
    token_difference,
    word_tokens,
)

# pieces a text is built from: names, function words, stop words, numbers in every shape,
# apostrophes and hyphens inside and outside words, Unicode letters and digits, letters whose
# lower case is longer or context-dependent (İ, final sigma), characters that are digits but
# not decimal (², Ⅻ), compatibility letters (ﬁ, K Kelvin sign), quotes and brackets
PIECES = [
    "O'Neill", "O’Brien", "long-term", "well-being", "it's", "dogs'", "'s", "-", "--", "’", "'",
    "3.5", "1,200", "1,200.50", "4.2", "2024", "9,", "7.", ".5", "x2", "_7", "a_b", "e.g.", "U.S.",
    "Zürich’s", "café", "l’été", "İstanbul", "ΣΟΦΟΣ", "σοφός", "Straße", "STRASSE", "ﬁne",
    "\u212aelvin", "ǅemal", "²", "x²", "½", "Ⅻ", "٣٤", "٣.٤", "१२", "The", "the", "A", "a", "I",
    "It", "Said", "said", "according", "Oslo", "Bergen", "Reuters", "Mayor", "budget", "Budget",
    "BUDGET", "council", "approved", "teachers", "Ingrid", "Dahl", "(Reuters)", '"The', "“Yes”",
    "[1]", "—", "…", "\u00a0", "\u2028", "\t", "\n",
]  # fmt: skip
SEPARATORS = [
    " ", " ", " ", " ", ". ", "! ", "? ", ".” ", ".’ ", ".) ", '." ', ".] ", ", ", "; ", ": ",
    "", "...", "?! ", ".\n", ".\t", ".\u00a0", ".\u3000", "-", "’", "'", "/", " (", ") ", ".",
]  # fmt: skip


def random_text(rng: random.Random, words: int) -> str:
    return "".join(
        rng.choice(PIECES) + rng.choice(SEPARATORS) for _ in range(rng.randrange(words + 1))
    )


def edited(rng: random.Random, text: str) -> str:
    """``text`` with a few pieces replaced, added or dropped (a near-minimal partner)."""
    parts = text.split(" ")
    for _ in range(rng.randrange(4)):
        at = rng.randrange(len(parts) + 1)
        u = rng.random()
        if u < 0.4 and at < len(parts):
            parts[at] = rng.choice(PIECES)
        elif u < 0.7:
            parts.insert(at, rng.choice(PIECES))
        elif parts and at < len(parts):
            del parts[at]
    return " ".join(parts)


def texts(seed: int, count: int, words: int = 40) -> list[str]:
    rng = random.Random(seed)
    out = ["", " ", ".", "A. B", "One. Two! Three? Four", "Wait... what?! Yes.\nNo."]
    while len(out) < count:
        out.append(random_text(rng, words))
    return out


def triples(seed: int, count: int) -> list[tuple[str, str, str]]:
    """(reference, treatment, null partner) with partners close to each other, as gated pairs
    are, and sometimes to the reference."""
    rng = random.Random(seed)
    out = []
    for _ in range(count):
        ref = random_text(rng, 50)
        t = edited(rng, ref) if rng.random() < 0.5 else random_text(rng, 30)
        n = edited(rng, t) if rng.random() < 0.8 else random_text(rng, 30)
        out.append((ref, t, n))
    return out


def reference_sentences(text: str) -> tuple[tuple[str, ...], ...]:
    pieces = (_PIECE_TOKEN.findall(p) for p in _STOP.split(text.lower()))
    return tuple(tuple(t) for t in pieces if t)


# ----------------------------------------------------------------------------------------------
# tokens, openings, units
# ----------------------------------------------------------------------------------------------


def test_word_tokens_and_sentence_openings_equal_the_python_rules() -> None:
    for text in texts(1, 3000):
        info = _Text(text)
        toks, starts = kernel.word_tokens(text)
        assert toks == info.tokens, text
        assert frozenset(starts) == info.starts, text
        assert list(starts) == sorted(set(starts))


@pytest.mark.parametrize("min_word_length", [1, 4, 7])
def test_content_units_equal_the_python_rules(min_word_length: int) -> None:
    stops = (STOP_WORDS, frozenset(), frozenset({"budget", "council", "straße", "the"}))
    for k, text in enumerate(texts(2, 2000)):
        stop = stops[k % len(stops)]
        units = _Text(text).units(min_word_length, stop)
        got = kernel.content_units(text, min_word_length, stop, _NOT_NAMES)
        assert got == (dict(units.numbers), units.names, units.words), text


def test_every_code_point_is_classed_alike_in_the_bmp_start_and_a_stride_beyond() -> None:
    """Letters, digits, separators, closing quotes and white space as the re module reads them:
    each code point inside a word, inside a number, after a sentence stop and alone."""
    cps = [c for c in range(0x110000) if c < 0x3400 or c % 7 == 0]
    _check_code_points(cps)


@pytest.mark.slow
def test_every_code_point_is_classed_alike() -> None:
    _check_code_points(list(range(0x110000)))


def _check_code_points(cps: list[int]) -> None:
    # lone surrogates included: a str may hold them, and the rules treat them as separators
    for lo in range(0, len(cps), 8192):
        chunk = [chr(c) for c in cps[lo : lo + 8192]]
        text = "".join(f"a{ch}b 1{ch}2 x.{ch}Y {ch}. " for ch in chunk)
        info = _Text(text)
        toks, starts = kernel.word_tokens(text)
        assert toks == info.tokens and frozenset(starts) == info.starts, hex(ord(chunk[0]))
        text = "".join(f"{ch}. a{ch}b " for ch in chunk)
        assert kernel.fragment_sentences(text) == reference_sentences(text), hex(ord(chunk[0]))
        assert kernel.word_count(text) == (len(text.split()), len(" ".join(text.split())))


# ----------------------------------------------------------------------------------------------
# measured values and decisions
# ----------------------------------------------------------------------------------------------


def _overlap_by_python(ref: str, t: str, n: str, mwl: int, stop: frozenset[str]) -> tuple:
    units = _Text(ref).units(mwl, stop)
    tt, nn = _Text(t), _Text(n)
    kept = sum(1 for u in units.numbers if u in tt.as_written and u in nn.as_written)
    kept += len(units.names & tt.as_written & nn.as_written)
    kept += len(units.words & tt.lowered & nn.lowered)
    intact = tt.numbers == nn.numbers and all(u in tt.numbers for u in _Text(ref).numbers)
    return kept, units.size, intact


def test_overlap_counts_equal_the_python_rules() -> None:
    for k, (ref, t, n) in enumerate(triples(3, 3000)):
        mwl = (1, 4, 6)[k % 3]
        expected = _overlap_by_python(ref, t, n, mwl, STOP_WORDS)
        assert kernel.overlap(ref, t, n, mwl, STOP_WORDS, _NOT_NAMES) == expected, (ref, t, n)


def test_token_difference_equals_the_python_matcher_and_difflib() -> None:
    for ref, t, n in triples(4, 3000):
        a, b = word_tokens(t), word_tokens(n)
        expected = token_difference(a, b)
        assert kernel.token_diff(t, n) == expected, (t, n)
        # the same texts right after an overlap count: the kernel reuses that call's tokens
        kernel.overlap(ref, t, n, 4, STOP_WORDS, _NOT_NAMES)
        assert kernel.token_diff(t, n) == expected, (t, n)
        assert kernel.token_diff(n, t) == token_difference(b, a), (n, t)
    # repetitive token sequences, where the longest-match ties decide the blocks
    rng = random.Random(5)
    for _ in range(2000):
        a = [rng.choice("ab") * rng.randrange(1, 3) for _ in range(rng.randrange(25))]
        b = list(a)
        for _ in range(rng.randrange(5)):
            b.insert(rng.randrange(len(b) + 1), rng.choice(["a", "b", "aa", "c"]))
        ops = difflib.SequenceMatcher(None, a, b, autojunk=False).get_opcodes()
        expected = sum(max(i2 - i1, j2 - j1) for tag, i1, i2, j1, j2 in ops if tag != "equal")
        assert kernel.token_diff(" ".join(a), " ".join(b)) == expected, (a, b)


def test_fragment_sentences_and_similarity_equal_the_python_rules() -> None:
    rng = random.Random(6)
    for text in texts(7, 2000, words=60):
        assert kernel.fragment_sentences(text) == reference_sentences(text), text
        # a repeated sentence somewhere, so that similarities above 0 occur often
        doubled = text + " " + rng.choice(text.split(".") or [""]) + "."
        for n in (1, 2, 3, 4, 9):
            for x in (text, doubled):
                assert kernel.fragment_similarity(x, n) == _reference_fragment_similarity(x, n)


def test_lengths_equal_str_split() -> None:
    for text in texts(8, 2000):
        assert kernel.word_count(text) == (len(text.split()), len(" ".join(text.split())))


def _stimuli(seed: int, count: int) -> list[Stimulus]:
    rng = random.Random(seed)
    out = []
    for k, (ref, t, n) in enumerate(triples(seed, count)):
        source = ref if rng.random() < 0.7 else None
        out.append(Stimulus(id=f"s{k}", source=source, treatment=t, null_partner=n))
    return out


def test_every_gate_decides_as_its_python_rules() -> None:
    """Each gate's check (the kernel) and its reference (the Python rules): same outcome."""
    gates = [
        ContentOverlapGate(0.5),
        ContentOverlapGate(0.9, require_numbers=False, min_word_length=3),
        ContentOverlapGate(0.0, stop_words=frozenset({"budget"})),
        DiffBudgetGate(3),
        DiffBudgetGate(12),
    ]
    for s in _stimuli(9, 800):
        for g in gates:
            assert g.check(s) == g.reference_check(s), (g, s)
        for n in (1, 3, 5):
            texts_ = [x for x in (s.source, s.treatment, s.null_partner) if x is not None]
            measured = max(_reference_fragment_similarity(x, n) for x in texts_)
            got = FragmentDistinctnessGate(0.5, n).check(s)
            assert got.measured == measured and got.passed == (measured <= 0.5)
        for unit in ("words", "characters"):
            got = LengthMatchGate(0.2, unit).check(s)
            if unit == "words":
                lt, ln = len(s.treatment.split()), len(s.null_partner.split())
            else:
                lt = len(" ".join(s.treatment.split()))
                ln = len(" ".join(s.null_partner.split()))
            measured = abs((lt - max(ln, 1)) / max(ln, 1))
            assert got.measured == measured and got.passed == (measured <= 0.2)


def test_gate_counts_equal_the_python_rules() -> None:
    stimuli = _stimuli(10, 1200)
    gates = real_text_gates(length_tolerance=0.5, max_diff_tokens=4, content_threshold=0.6)
    counts = gate_counts(stimuli, gates)
    failed = {}
    for s in stimuli:
        fails = []
        for g in gates:
            ref = getattr(g, "reference_check", None)
            passed = ref(s).passed if ref is not None else g.check(s).passed
            if g.name == "fragment_distinctness":
                xs = [x for x in (s.source, s.treatment, s.null_partner) if x is not None]
                passed = max(_reference_fragment_similarity(x, 3) for x in xs) <= 0.5
            if not passed:
                fails.append(g.name)
        if fails:
            failed[s.id] = tuple(fails)
    assert isinstance(counts, GateCounts)
    assert dict(counts.failed) == failed
    assert counts.refused == tuple(s.id for s in stimuli if s.id in failed)
    refusals = Counter(name for fails in failed.values() for name in fails)
    assert dict(counts.refusals) == {g.name: refusals[g.name] for g in gates}
    assert 0 < len(counts.refused) < len(stimuli)


def test_sets_the_kernel_does_not_take_fall_back_to_the_python_rules() -> None:
    class Words(frozenset):  # type: ignore[type-arg]
        pass

    odd = Words({"budget"})
    assert kernel.overlap("a", "a", "a", 4, odd, _NOT_NAMES) is None
    assert kernel.content_units("a", 4, frozenset({1}), _NOT_NAMES) is None
    gate = ContentOverlapGate(0.5, stop_words=odd)
    for s in _stimuli(11, 200):
        assert gate.check(s) == gate.reference_check(s)


def test_odd_arguments() -> None:
    with pytest.raises(TypeError):
        kernel.token_diff("a", None)  # type: ignore[arg-type]
    with pytest.raises(ValueError):
        kernel.fragment_similarity("a. a.", 0)
    # n below 1 has no grams: the gate's function keeps the Python rules' answer
    assert max_fragment_similarity("a b. a b.", 0) == _reference_fragment_similarity("a b. a b.", 0)
    # knobs beyond any text's length
    big = 1 << 80
    s = Stimulus(id="x", source="Oslo budget. Oslo budget.", treatment="a b", null_partner="a c")
    assert FragmentDistinctnessGate(0.5, big).check(s).measured == 1.0
    assert ContentOverlapGate(0.5, min_word_length=big).check(s) == ContentOverlapGate(
        0.5, min_word_length=big
    ).reference_check(s)
