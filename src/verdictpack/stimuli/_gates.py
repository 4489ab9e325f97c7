"""Gates: mechanical admission checks of one :class:`~verdictpack.stimuli.Stimulus`.

A gate is anything with a ``name`` and ``check(stimulus) -> GateOutcome(passed, measured,
threshold)`` (:class:`Gate`). Text conventions are those of :mod:`._text`.

Text-only gates (``template_bound = False``) read the texts of any stimulus, hand-written or
generated:

* :class:`LengthMatchGate`: r = (L_t − L_n) / L_n with L the length of the treatment / null
  partner in words (or characters: the number of characters of the white-space-normalised text);
  measured = |r − target|; passes when measured ≤ tolerance. target = 0 for a register construct;
  for a length construct it is the intended relative lengthening.
* :class:`FragmentDistinctnessGate`: for each of the texts (source when present, treatment, null
  partner), the Jaccard similarity of the word n-gram sets (default n = 3; a sentence shorter
  than n counts as one gram) of every pair of its sentences; measured = the maximum; passes when
  measured ≤ threshold.

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
  its {marker} slot; measured = the token-level difference of what remains (the number of
  tokens in non-equal ``difflib`` opcodes, max of the two sides per opcode). Passes when
  measured ≤ max_diff_tokens AND the detected content-unit sets of treatment and null partner are
  identical AND the raw token sequences differ (a null partner identical to the treatment carries
  no manipulation).

Gates never read the generator's ``injected_defects`` bookkeeping.
"""

from __future__ import annotations

import difflib
import functools
import math
import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import ClassVar, Literal, Protocol, runtime_checkable

from verdictpack._errors import InputError
from verdictpack._validate import closed_interval, int_at_least, nonempty_str, str_tuple
from verdictpack.stimuli import _textkernel
from verdictpack.stimuli._lexicon import DEFAULT_LEXICON, Lexicon, Template, content_units
from verdictpack.stimuli._stimulus import Stimulus, require_template_stimulus
from verdictpack.stimuli._text import norm, sentence_tokens, tokens

__all__ = [
    "ContentPreservationGate",
    "FragmentDistinctnessGate",
    "Gate",
    "GateOutcome",
    "LengthMatchGate",
    "NullSeparationGate",
    "max_fragment_similarity",
    "standard_gates",
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

    def _length(self, text: str) -> int:
        # the compiled kernel's (len(text.split()), len(" ".join(text.split()))), held equal to
        # those by a test, without building the list of words
        words, characters = _textkernel.word_count(text)
        return words if self.unit == "words" else characters

    def check(self, stimulus: Stimulus) -> GateOutcome:
        lt = self._length(stimulus.treatment)
        ln = max(self._length(stimulus.null_partner), 1)
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


def _grams(toks: Sequence[str], n: int) -> frozenset[str]:
    """The word n-grams of a sentence's tokens (the whole sentence when shorter than n), each as
    its tokens joined by a space: tokens hold no spaces, so equal strings are equal grams (and
    strings, unlike tuples, add nothing for the garbage collector to scan)."""
    if len(toks) < n:
        return frozenset({" ".join(toks)})
    if n == 3:  # the default, without the generator of slices
        return frozenset(map(" ".join, zip(toks, toks[1:], toks[2:], strict=False)))
    return frozenset(map(" ".join, zip(*(toks[k:] for k in range(n)), strict=False)))


def max_fragment_similarity(text: str, n: int = 3) -> float:
    """Max Jaccard similarity of word n-gram sets over all pairs of sentences of ``text``."""
    return _max_fragment_similarity(text, n)


# sentence_tokens' rule, one sentence at a time: the text (lower-cased) splits at its sentence
# stops, and a sentence's tokens are the a-z/0-9 runs of its piece (no token spans a stop)
_STOP = re.compile(r"[.!?](?=\s|$)")
_PIECE_TOKEN = re.compile(r"[a-z0-9]+")


@functools.lru_cache(maxsize=65536)
def _piece_grams(piece: str, n: int) -> frozenset[str] | None:
    """The n-gram set of one sentence piece (None: the piece has no tokens).

    Cached per piece: a treatment and its null partner share most of their sentences.
    """
    toks = _PIECE_TOKEN.findall(piece)
    return _grams(toks, n) if toks else None


def _sentence_grams(text: str, n: int) -> list[frozenset[str]]:
    """``[_grams(toks, n) for toks in sentence_tokens(text)]``, sentence by sentence."""
    found = [_piece_grams(piece, n) for piece in _STOP.split(text.lower())]
    return [g for g in found if g is not None]


@functools.lru_cache(maxsize=16384)
def _max_fragment_similarity(text: str, n: int) -> float:
    """The compiled kernel's value (cached: a source may be shared by many pairs), held equal to
    :func:`_reference_fragment_similarity` by a test."""
    if n < 1:  # no grams at all: only the Python rules define it
        return _reference_fragment_similarity(text, n)
    return _textkernel.fragment_similarity(text, min(n, 1 << 62))


def _reference_fragment_similarity(text: str, n: int) -> float:
    """Max Jaccard similarity of sentence n-gram sets by the Python rules (the specification)."""
    grams = _sentence_grams(text, n)
    if len(grams) < 2 or len(frozenset().union(*grams)) == sum(map(len, grams)):
        return 0.0  # no gram is shared by two sentences: every similarity is 0
    best = 0.0
    for i in range(len(grams)):
        gi = grams[i]
        for j in range(i + 1, len(grams)):
            gj = grams[j]
            inter = len(gi & gj)
            if inter:
                best = max(best, inter / (len(gi) + len(gj) - inter))
    return best


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
        diff = 0
        if a != b:
            ops = difflib.SequenceMatcher(None, a, b, autojunk=False).get_opcodes()
            diff = sum(max(i2 - i1, j2 - j1) for tag, i1, i2, j1, j2 in ops if tag != "equal")
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
