"""Gates: mechanical admission checks of one :class:`~verdictpack.stimuli.Stimulus`.

A gate is anything with a ``name`` and ``check(stimulus) -> GateOutcome(passed, measured,
threshold)`` (:class:`Gate`). Every gate reads texts through the one tokenizer of :mod:`._text`
(NFKC, Unicode words and numbers, CJK characters as tokens, case folded, one sentence rule).

Text-only gates (``template_bound = False``) read the texts of any stimulus, hand-written or
generated:

* :class:`LengthMatchGate`: r = (L_t − L_n) / L_n with L the length of the treatment / null
  partner in words (its number of tokens) or characters (the number of characters of the
  white-space-normalised text);
  measured = |r − target|; passes when measured ≤ tolerance. target = 0 for a register construct;
  for a length construct it is the intended relative lengthening.
* :class:`FragmentDistinctnessGate`: for each of the texts (source when present, treatment, null
  partner), the Jaccard similarity of the word n-gram sets (default n = 3; a sentence shorter
  than n counts as one gram) of every pair of its sentences; measured = the maximum; passes when
  measured ≤ threshold. A sentence of CJK characters has character n-grams (each character is a
  token).

Template-bound gates (``template_bound = True``) need template knowledge -- the content units of
the built-in lexicon (:func:`~verdictpack.stimuli._lexicon.content_units`) and the templates'
marker spans -- so they take only stimuli made by the template generator (metadata
``"generator"`` = :data:`~verdictpack.stimuli._stimulus.TEMPLATE_GENERATOR`) and raise InputError
naming ``stimulus`` on any other:

* :class:`ContentPreservationGate`: measured = |U(source) ∩ U(treatment)| / |U(source)| with U
  the detected content units; passes when U(source) is not empty and measured ≥ threshold.
* :class:`NullSeparationGate`: the manipulated property is normalised away by deleting, in every
  sentence of both texts, an allowed span (one of the templates' markers, as a whole token
  sequence) that opens the sentence and one that closes it -- the only places a template may put
  its {marker} slot; measured = the token-level difference of what remains
  (:func:`token_difference`: the Levenshtein distance over case-folded tokens). Passes when
  measured ≤ max_diff_tokens AND the detected content-unit sets of treatment and null partner are
  identical AND the raw token sequences differ (a null partner identical to the treatment carries
  no manipulation).

Gates never read the generator's ``injected_defects`` bookkeeping.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from itertools import compress, repeat
from typing import Any, ClassVar, Literal, Protocol, runtime_checkable

from rapidfuzz.distance import Levenshtein

from verdictpack._errors import InputError
from verdictpack._validate import closed_interval, int_at_least, nonempty_str, str_tuple
from verdictpack.stimuli._lexicon import DEFAULT_LEXICON, Lexicon, Template, content_units
from verdictpack.stimuli._stimulus import Stimulus, require_template_stimulus
from verdictpack.stimuli._text import folded_lines, norm, sentence_tokens, text_length, tokens

__all__ = [
    "ContentPreservationGate",
    "FragmentDistinctnessGate",
    "Gate",
    "GateOutcome",
    "LengthMatchGate",
    "NullSeparationGate",
    "check_gates",
    "standard_gates",
    "token_difference",
]


@dataclass(frozen=True)
class GateOutcome:
    """A gate's decision on one stimulus: passed, the measured quantity and the threshold."""

    passed: bool
    measured: float
    threshold: float


@runtime_checkable
class Gate(Protocol):
    """A mechanical admission gate: a name and a check of one stimulus's texts."""

    @property
    def name(self) -> str: ...

    def check(self, stimulus: Stimulus) -> GateOutcome: ...


def check_gates(gates: Iterable[Any]) -> tuple[Gate, ...]:
    """``gates`` as a tuple: each a :class:`Gate`, their names distinct (InputError naming
    ``gates`` otherwise)."""
    out = tuple(gates)
    for g in out:
        if not isinstance(g, Gate):
            raise InputError("gates", "gates (a name and a check method)", type(g).__name__)
    names = [g.name for g in out]
    if len(set(names)) != len(names):
        raise InputError("gates", "gates with distinct names", names)
    return out


@dataclass(frozen=True)
class LengthMatchGate:
    """|(L_t − L_n)/L_n − target| ≤ tolerance, L in words (default) or characters. Text-only."""

    template_bound: ClassVar[bool] = False
    tolerance: float
    unit: Literal["words", "characters"] = "words"
    target: float = 0.0
    name: str = "length_match"

    def __post_init__(self) -> None:
        closed_interval("tolerance", self.tolerance, 0.0, math.inf, "a number in [0.0, inf]")
        if self.unit not in ("words", "characters"):
            raise InputError("unit", "'words' or 'characters'", self.unit)
        closed_interval("target", self.target, -1.0, math.inf, "a number in [-1.0, inf]")
        nonempty_str("name", self.name)

    def check(self, stimulus: Stimulus) -> GateOutcome:
        lt = text_length(stimulus.treatment, self.unit)
        ln = max(text_length(stimulus.null_partner, self.unit), 1)
        measured = abs((lt - ln) / ln - self.target)
        return GateOutcome(measured <= self.tolerance, measured, float(self.tolerance))


@dataclass(frozen=True)
class ContentPreservationGate:
    """Fraction of the source's detected content units present in the treatment ≥ threshold.

    Template-bound: reads the content units of ``lexicon`` (the built-in lexicon by default), so
    it takes only stimuli from the template generator (InputError naming ``stimulus`` otherwise).
    """

    template_bound: ClassVar[bool] = True
    threshold: float
    lexicon: Lexicon = DEFAULT_LEXICON
    name: str = "content_preservation"

    def __post_init__(self) -> None:
        closed_interval("threshold", self.threshold, 0.0, 1.0, "a number in [0.0, 1.0]")
        if not isinstance(self.lexicon, Lexicon):
            raise InputError("lexicon", "a Lexicon", type(self.lexicon).__name__)
        nonempty_str("name", self.name)

    def check(self, stimulus: Stimulus) -> GateOutcome:
        source = require_template_stimulus(self.name, stimulus)
        src = content_units(source, self.lexicon)
        if not src:
            return GateOutcome(False, 0.0, float(self.threshold))
        kept = len(src & content_units(stimulus.treatment, self.lexicon)) / len(src)
        return GateOutcome(kept >= self.threshold, kept, float(self.threshold))


def _grams(toks: Sequence[str], n: int) -> frozenset[tuple[str, ...]]:
    """The word n-grams of a sentence's tokens (the whole sentence when shorter than n)."""
    if len(toks) < n:
        return frozenset({tuple(toks)})
    return frozenset(zip(*(toks[k:] for k in range(n)), strict=False))


@functools.lru_cache(maxsize=16384)
def _max_fragment_similarity(text: str, n: int) -> float:
    """Max Jaccard similarity of word n-gram sets over all pairs of sentences of ``text``."""
    # cached: a source may be shared by many pairs
    folded = folded_lines(text)
    if "\n" not in folded:
        return 0.0
    lines = folded.split("\n")
    if n <= 16 and min(map(str.count, lines, repeat(" "))) + 1 >= n:
        # every sentence has n tokens or more, so its grams are windows of the text's tokens:
        # when no window of the whole text repeats, no two sentences share a gram
        flat = folded.split()
        if len(set(zip(*(flat[k:] for k in range(n)), strict=False))) == len(flat) - n + 1:
            return 0.0
    grams = [_grams(line.split(" "), n) for line in lines]
    best = 0.0
    for i, gi in enumerate(grams):
        rest = grams[i + 1 :]
        # only the sentences sharing a gram with this one (the test runs in C)
        for gj in compress(rest, [not d for d in map(gi.isdisjoint, rest)]):
            inter = len(gi & gj)
            best = max(best, inter / (len(gi) + len(gj) - inter))
    return best


def token_difference(a: Sequence[str], b: Sequence[str]) -> int:
    """The Levenshtein distance of two token sequences: the fewest token insertions, deletions
    and substitutions turning one into the other (rapidfuzz, on exact integer ids)."""
    if tuple(a) == tuple(b):
        return 0
    seen = dict.fromkeys(a)
    seen.update(dict.fromkeys(b))
    ids = dict(zip(seen, range(len(seen)), strict=True))
    return int(Levenshtein.distance(list(map(ids.__getitem__, a)), list(map(ids.__getitem__, b))))


@dataclass(frozen=True)
class FragmentDistinctnessGate:
    """Max Jaccard of sentence n-gram sets within each text ≤ threshold (no near-duplicates).

    Text-only; the source is checked when the stimulus has one.
    """

    template_bound: ClassVar[bool] = False
    threshold: float
    n: int = 3
    name: str = "fragment_distinctness"

    def __post_init__(self) -> None:
        closed_interval("threshold", self.threshold, 0.0, 1.0, "a number in [0.0, 1.0]")
        int_at_least("n", self.n, 1)
        nonempty_str("name", self.name)

    def check(self, stimulus: Stimulus) -> GateOutcome:
        # the max over the texts (source when present, treatment, null partner)
        n = self.n
        measured = _max_fragment_similarity(stimulus.treatment, n)
        other = _max_fragment_similarity(stimulus.null_partner, n)
        if other > measured:
            measured = other
        if stimulus.source is not None:
            other = _max_fragment_similarity(stimulus.source, n)
            if other > measured:
                measured = other
        return GateOutcome(measured <= self.threshold, measured, float(self.threshold))


_SpanIndex = dict[str, tuple[tuple[str, ...], ...]]


@functools.lru_cache(maxsize=64)
def _span_index(spans: tuple[str, ...]) -> tuple[_SpanIndex, _SpanIndex]:
    """Allowed spans as token tuples keyed by first token and by last token (longest first)."""
    toks = sorted({tuple(tokens(s)) for s in spans} - {()}, key=lambda t: (-len(t), t))
    by_first: dict[str, list[tuple[str, ...]]] = {}
    by_last: dict[str, list[tuple[str, ...]]] = {}
    for t in toks:
        by_first.setdefault(t[0], []).append(t)
        by_last.setdefault(t[-1], []).append(t)
    return (
        {k: tuple(v) for k, v in by_first.items()},
        {k: tuple(v) for k, v in by_last.items()},
    )


def _strip_spans(
    toks: tuple[str, ...], by_first: _SpanIndex, by_last: _SpanIndex
) -> tuple[str, ...]:
    """Delete one allowed span opening the sentence, then one closing what remains."""
    if toks:
        for span in by_first.get(toks[0], ()):
            if toks[: len(span)] == span:
                toks = toks[len(span) :]
                break
    if toks:
        for span in by_last.get(toks[-1], ()):
            if len(span) <= len(toks) and toks[len(toks) - len(span) :] == span:
                toks = toks[: len(toks) - len(span)]
                break
    return toks


@dataclass(frozen=True)
class NullSeparationGate:
    """Treatment and null partner differ only inside allowed spans (module docstring).

    Template-bound: the allowed spans are the templates' markers (:meth:`for_templates`) and the
    content units those of ``lexicon``, so it takes only stimuli from the template generator
    (InputError naming ``stimulus`` otherwise).
    """

    template_bound: ClassVar[bool] = True
    allowed_spans: tuple[str, ...]
    max_diff_tokens: int = 0
    lexicon: Lexicon = DEFAULT_LEXICON
    name: str = "null_separation"

    def __post_init__(self) -> None:
        spans = str_tuple("allowed_spans", self.allowed_spans)
        int_at_least("max_diff_tokens", self.max_diff_tokens, 0)
        if not isinstance(self.lexicon, Lexicon):
            raise InputError("lexicon", "a Lexicon", type(self.lexicon).__name__)
        nonempty_str("name", self.name)
        if not {norm(s).strip() for s in spans} - {""}:
            raise InputError("allowed_spans", "spans containing letters or digits", list(spans))

    @classmethod
    def for_templates(
        cls,
        templates: Sequence[Template],
        max_diff_tokens: int = 0,
        lexicon: Lexicon = DEFAULT_LEXICON,
    ) -> NullSeparationGate:
        """The gate whose allowed spans are the markers of ``templates``."""
        spans: list[str] = []
        for t in templates:
            if not isinstance(t, Template):
                raise InputError("templates", "Template objects", type(t).__name__)
            spans.extend(t.allowed_spans)
        return cls(tuple(dict.fromkeys(spans)), max_diff_tokens, lexicon)

    def _residual(self, text: str) -> list[str]:
        by_first, by_last = _span_index(self.allowed_spans)
        out: list[str] = []
        for toks in sentence_tokens(text):
            out.extend(_strip_spans(toks, by_first, by_last))
        return out

    def check(self, stimulus: Stimulus) -> GateOutcome:
        require_template_stimulus(self.name, stimulus)
        a = self._residual(stimulus.treatment)
        b = self._residual(stimulus.null_partner)
        diff = token_difference(a, b)
        same_units = content_units(stimulus.treatment, self.lexicon) == content_units(
            stimulus.null_partner, self.lexicon
        )
        manipulated = tokens(stimulus.treatment) != tokens(stimulus.null_partner)
        passed = diff <= self.max_diff_tokens and same_units and manipulated
        return GateOutcome(passed, float(diff), float(self.max_diff_tokens))


def standard_gates(
    templates: Sequence[Template],
    *,
    length_tolerance: float,
    length_target: float = 0.0,
    length_unit: Literal["words", "characters"] = "words",
    content_threshold: float = 1.0,
    fragment_threshold: float = 0.5,
    max_diff_tokens: int = 0,
    lexicon: Lexicon = DEFAULT_LEXICON,
) -> tuple[Gate, ...]:
    """The four built-in gates, in order: length, content, fragments, null separation.

    Thresholds come from the caller (a config); the defaults here are suggestions: content 1.0
    (every source unit kept), fragment Jaccard 0.5, no token difference outside allowed spans.
    For a register construct use ``length_target`` 0 and a small tolerance (e.g. 0.10); for a
    length construct the intended lengthening (the default length templates lengthen by r between
    about 1.1 and 2.0 in words, mean 1.5, so e.g. target 1.5, tolerance 0.5).
    """
    return (
        LengthMatchGate(length_tolerance, length_unit, length_target),
        ContentPreservationGate(content_threshold, lexicon),
        FragmentDistinctnessGate(fragment_threshold),
        NullSeparationGate.for_templates(templates, max_diff_tokens, lexicon),
    )
