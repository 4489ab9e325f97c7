"""Gates on real text: content overlap and a diff budget for any pair, and per-gate counts.

The template-bound gates of :mod:`._gates` read the built-in lexicon and the templates' markers,
so they cannot judge a pair a user wrote. The two gates here read only the texts of a plain
:class:`~verdictpack.stimuli.Stimulus` and follow the same :class:`~verdictpack.stimuli.Gate`
protocol (``name``, ``check(stimulus) -> GateOutcome(passed, measured, threshold)``).

Tokens, sentences and case folding are those of the one tokenizer of :mod:`._text`
(:func:`word_tokens`: case kept; ``3.5``, ``1,200``, ``O'Neill``, ``long-term`` are one token
each; a CJK character is a token); a token *opens a sentence* when it is the first of one.

:class:`ContentOverlapGate` -- content preservation on real text. The *content units* of a text
(``ContentOverlapGate._units``) are of three kinds, each token counted once, in this order:

* numbers: every number token, compared exactly as written (``1,200`` and ``1200`` differ);
* names: a token starting with an upper-case letter that does not open a sentence (``Oslo``,
  ``Reuters``) and is not a short function word (``The`` after a colon or a quote), compared
  with its case;
* content words: any other alphabetic token of at least ``min_word_length`` (default 4) letters,
  case-folded, that is not in the stop list (default :data:`STOP_WORDS`, a small English list of
  function words and reporting verbs such as ``said``).

The reference is the source when the stimulus has one, else the treatment. A unit of the
reference is *kept* when it occurs in BOTH the treatment and the null partner (a name may open a
sentence there; a content word matches case-folded; a number matches exactly). measured =
kept units / reference units; the gate passes when the reference has at least one unit,
measured >= threshold, and the number rule holds: every number of the reference occurs in both
texts, and treatment and null partner carry the same multiset of numbers (a changed, dropped or
added number is a content change however high the overlap). Why these units: on news-like text
the facts a judge could be swayed by are the figures, the people, places and organisations
named, and the topical words; function words and phrasing are exactly what a register or length
manipulation is allowed to change. The rule is deliberately lexical (no stemming, no synonyms):
it can refuse a good paraphrase, never silently admit a lost figure.

:class:`DiffBudgetGate` -- null separation on real text. measured = the token-level difference of
treatment and null partner (:func:`~verdictpack.stimuli._gates.token_difference`: the Levenshtein
distance of their token sequences, case kept -- a change of case is a change a reader sees --
the fewest token insertions, deletions and substitutions). Passes when
1 <= measured <= ``max_diff_tokens``: a pair whose tokens are identical carries no manipulation
(texts differing only in punctuation or white space count as identical), and a pair that differs
by more than the budget is not a minimal pair.

:func:`real_text_gates` returns the standard set for user files; :func:`gate_counts` runs gates
on stimuli and reports, per gate, how many it refused and how many it refused first, plus the
refused ids -- a refused pair is listed, never dropped silently.

"""

from __future__ import annotations

import functools
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from types import MappingProxyType
from typing import Any, ClassVar, Literal

from verdictpack._errors import InputError
from verdictpack._memory import gc_paused
from verdictpack._validate import closed_interval, int_at_least, nonempty_str
from verdictpack.stimuli import _text
from verdictpack.stimuli._gates import (
    FragmentDistinctnessGate,
    Gate,
    GateOutcome,
    LengthMatchGate,
    _max_fragment_similarity,
    check_gates,
    token_difference,
)
from verdictpack.stimuli._stimulus import Stimulus
from verdictpack.stimuli._text import lines, word_tokens

__all__ = [
    "STOP_WORDS",
    "ContentOverlapGate",
    "ContentUnits",
    "DiffBudgetGate",
    "GateCounts",
    "clear_caches",
    "gate_counts",
    "real_text_gates",
    "token_difference",
    "word_tokens",
]

# A small built-in English stop list: function words and reporting verbs of four letters or
# more (shorter words are never content words at the default minimum length).
_STOP_TEXT = """
    about above across after again against almost along already also although always among
    another anyone anything around because been before behind being below beside besides
    between beyond both cannot could does doing done down during each either else enough
    even ever every from further have having hence here herself himself however into
    itself just last least less like many maybe might more most much must near neither never
    next none nothing often once only onto other others otherwise ought ours ourselves over
    perhaps quite rather really said same says seem seemed seems several shall should since
    some something still such than that their theirs them themselves then there therefore
    these they this those though through thus together toward towards under unless until
    upon very want well were what whatever when whenever where whereas whether which while
    whom whose will with within without would your yours yourself yourselves according
    told tells added adding stated noted reported
"""
STOP_WORDS: frozenset[str] = frozenset(_STOP_TEXT.split())

# Short capitalised function words that are never names (a sentence may continue after a
# quote, a colon or an abbreviation: ``said: "The``).
_NOT_NAMES_TEXT = (
    "a an the and but for nor yet or so of in on at to by as is it its his her our was are has "
    "had not no we he she they you i if"
)
_NOT_NAMES: frozenset[str] = frozenset(_NOT_NAMES_TEXT.split())

_NO_NUMBERS: Mapping[str, int] = MappingProxyType({})


class _Text:
    """What the gates read of one text, each part computed once (on first use).

    ``tokens`` (case kept), ``openers`` (token -> how many sentences it opens), ``numbers``
    (number token -> count); on demand ``as_written`` / ``lowered`` (the token sets) and the
    content units for given knobs.
    """

    __slots__ = ("_as_written", "_folded", "_lowered", "_units", "numbers", "openers", "tokens")

    def __init__(self, text: str) -> None:
        kept, self._folded = lines(text)
        toks = self.tokens = kept.split()
        if text.isascii():  # an ASCII token is a number iff it sorts before ":" (digits < ":" < A)
            nums = list(filter(":".__gt__, toks))
        else:
            nums = [t for t in toks if t[0].isdigit()]
        self.openers = Counter(line.partition(" ")[0] for line in kept.split("\n")) if kept else {}
        self.numbers: Mapping[str, int] = (
            MappingProxyType(dict(Counter(nums))) if nums else _NO_NUMBERS
        )
        self._as_written: frozenset[str] | None = None
        self._lowered: frozenset[str] | None = None
        self._units: dict[tuple[int, frozenset[str]], ContentUnits] = {}

    @property
    def as_written(self) -> frozenset[str]:
        """The distinct tokens, case kept."""
        if self._as_written is None:
            self._as_written = frozenset(self.tokens)
        return self._as_written

    @property
    def lowered(self) -> frozenset[str]:
        """The distinct tokens, case-folded."""
        if self._lowered is None:
            self._lowered = frozenset(self._folded.split())
        return self._lowered

    def units(self, min_word_length: int, stop_words: frozenset[str]) -> ContentUnits:
        """The content units for these knobs (module docstring), computed once per knob set."""
        key = (min_word_length, stop_words)
        found = self._units.get(key)
        if found is None:
            found = self._units[key] = self._content_units(min_word_length, stop_words)
        return found

    def _content_units(self, min_word_length: int, stop_words: frozenset[str]) -> ContentUnits:
        # Per occurrence: a name when it starts upper-case, is not a short function word and
        # does not open a sentence; every other letter token is a content-word candidate. Over
        # distinct strings: a name-like string is a name when it occurs off a sentence start,
        # and a candidate when it occurs at one.
        letters = {t for t in self.as_written if not t[0].isdigit()}
        name_like = {t for t in letters if t[0].isupper() and t.casefold() not in _NOT_NAMES}
        opening = name_like.intersection(self.openers)
        names = name_like - opening
        # those opening a sentence that also occur off one
        names.update(t for t in opening if self.tokens.count(t) > self.openers[t])
        letters -= name_like
        letters |= opening
        words = frozenset(
            low
            for low in map(str.casefold, letters)
            if len(low) >= min_word_length and low not in stop_words
        )
        return ContentUnits(self.numbers, frozenset(names), words)


@functools.lru_cache(maxsize=_text.RECENT)
def _analyse(text: str) -> _Text:
    """The analysis of ``text`` (cached, the recent texts: several gates read the same texts)."""
    return _Text(text)


def clear_caches() -> None:
    """Forget every cached text analysis (for timing cold runs; results never depend on it)."""
    _analyse.cache_clear()
    _max_fragment_similarity.cache_clear()
    _text.clear_caches()


@dataclass(frozen=True)
class ContentUnits:
    """The content units of one text: numbers (a multiset), names and content words."""

    numbers: Mapping[str, int]
    names: frozenset[str]
    words: frozenset[str]

    @property
    def size(self) -> int:
        """The number of distinct units."""
        return len(self.numbers) + len(self.names) + len(self.words)


@dataclass(frozen=True)
class ContentOverlapGate:
    """Share of the reference's content units kept in both texts ≥ threshold, numbers intact.

    Text-only (module docstring): the reference is the source, or the treatment when there is
    none. Knobs: ``threshold`` in [0, 1] (a suggestion: 0.8 for a register or length
    manipulation, 1.0 when nothing of substance may be rephrased), ``require_numbers`` (default
    True: the number rule; False drops it and numbers count as ordinary units),
    ``min_word_length`` and ``stop_words`` (what a content word is).
    """

    template_bound: ClassVar[bool] = False
    threshold: float
    require_numbers: bool = True
    min_word_length: int = 4
    stop_words: frozenset[str] = STOP_WORDS
    name: str = "content_overlap"

    def __post_init__(self) -> None:
        closed_interval("threshold", self.threshold, 0.0, 1.0, "a number in [0.0, 1.0]")
        if not isinstance(self.require_numbers, bool):
            raise InputError("require_numbers", "True or False", self.require_numbers)
        int_at_least("min_word_length", self.min_word_length, 1)
        if not isinstance(self.stop_words, frozenset) or not all(
            isinstance(w, str) for w in self.stop_words
        ):
            raise InputError("stop_words", "a frozenset of strings", type(self.stop_words).__name__)
        nonempty_str("name", self.name)

    def _units(self, text: str) -> ContentUnits:
        """The content units of ``text`` for this gate's knobs (module docstring)."""
        return _analyse(text).units(self.min_word_length, self.stop_words)

    def _numbers_intact(self, stimulus: Stimulus) -> bool:
        """The number rule: reference numbers in both texts, same number multiset in both."""
        ref = stimulus.source if stimulus.source is not None else stimulus.treatment
        t_nums = _analyse(stimulus.treatment).numbers
        if t_nums != _analyse(stimulus.null_partner).numbers:
            return False
        return all(u in t_nums for u in _analyse(ref).numbers)

    def check(self, stimulus: Stimulus) -> GateOutcome:
        _check_stimulus(stimulus)
        ref = stimulus.source if stimulus.source is not None else stimulus.treatment
        units = self._units(ref)
        threshold = float(self.threshold)
        if units.size == 0:
            return GateOutcome(False, 0.0, threshold)
        # the units kept in both texts (counted, not listed)
        t = _analyse(stimulus.treatment)
        n = _analyse(stimulus.null_partner)
        t_case, n_case = t.as_written, n.as_written
        kept = sum(1 for u in units.numbers if u in t_case and u in n_case)
        kept += len(units.names & t_case & n_case)
        kept += len(units.words & t.lowered & n.lowered)
        measured = kept / units.size
        passed = measured >= self.threshold and (
            not self.require_numbers or self._numbers_intact(stimulus)
        )
        return GateOutcome(passed, measured, threshold)


@dataclass(frozen=True)
class DiffBudgetGate:
    """1 ≤ token difference of treatment and null partner ≤ max_diff_tokens. Text-only.

    The difference is :func:`token_difference` of the case-kept tokens (module docstring).
    Knob: ``max_diff_tokens`` ≥ 1, the largest edit a minimal pair may have (e.g. 6 for a
    register swap of a phrase or two; a length manipulation needs the added words' count).
    """

    template_bound: ClassVar[bool] = False
    max_diff_tokens: int
    name: str = "diff_budget"

    def __post_init__(self) -> None:
        int_at_least("max_diff_tokens", self.max_diff_tokens, 1)
        nonempty_str("name", self.name)

    def check(self, stimulus: Stimulus) -> GateOutcome:
        _check_stimulus(stimulus)
        a = _analyse(stimulus.treatment).tokens
        diff = token_difference(a, _analyse(stimulus.null_partner).tokens)
        return GateOutcome(
            1 <= diff <= self.max_diff_tokens, float(diff), float(self.max_diff_tokens)
        )


def _check_stimulus(stimulus: object) -> None:
    if not isinstance(stimulus, Stimulus):
        raise InputError("stimulus", "a Stimulus", type(stimulus).__name__)


def real_text_gates(
    *,
    length_tolerance: float,
    max_diff_tokens: int,
    length_target: float = 0.0,
    length_unit: Literal["words", "characters"] = "words",
    fragment_threshold: float = 0.5,
    content_threshold: float = 0.8,
    require_numbers: bool = True,
) -> tuple[Gate, ...]:
    """The standard gates for user files, in order: length, fragments, content, diff budget.

    Every gate is text-only, so it takes any :class:`Stimulus`. Thresholds come from the caller
    (a config); the defaults here are suggestions: fragment Jaccard 0.5, content overlap 0.8
    with the number rule. For a register construct use ``length_target`` 0 with a small
    tolerance (e.g. 0.10) and a small diff budget; for a length construct the intended
    lengthening and a budget covering the added words.
    """
    return (
        LengthMatchGate(length_tolerance, length_unit, length_target),
        FragmentDistinctnessGate(fragment_threshold),
        ContentOverlapGate(content_threshold, require_numbers),
        DiffBudgetGate(max_diff_tokens),
    )


@dataclass(frozen=True)
class GateCounts:
    """What :func:`gate_counts` found: per-gate refusals, first failures and the refused ids.

    ``gates`` are the gate names in the order run; ``refusals[g]`` counts the stimuli gate ``g``
    refused (every gate runs on every stimulus), ``first_failing[g]`` those whose first failing
    gate, in that order, is ``g`` (they sum to the number refused); ``failed[id]`` lists the
    gates that refused stimulus ``id``; ``admitted`` and ``refused`` are ids in input order.
    """

    gates: tuple[str, ...]
    total: int
    admitted: tuple[str, ...]
    refused: tuple[str, ...]
    refusals: Mapping[str, int]
    first_failing: Mapping[str, int]
    failed: Mapping[str, tuple[str, ...]]

    def __reduce__(self) -> tuple[Any, tuple[Any, ...]]:
        # picklable (a forked child computes the counts; its mappings are read-only views)
        plain = (dict(self.refusals), dict(self.first_failing), dict(self.failed))
        return (_gate_counts_of, (self.gates, self.total, self.admitted, self.refused, *plain))


def _gate_counts_of(
    gates: tuple[str, ...],
    total: int,
    admitted: tuple[str, ...],
    refused: tuple[str, ...],
    refusals: dict[str, int],
    first_failing: dict[str, int],
    failed: dict[str, tuple[str, ...]],
) -> GateCounts:
    return GateCounts(
        gates,
        total,
        admitted,
        refused,
        MappingProxyType(refusals),
        MappingProxyType(first_failing),
        MappingProxyType(failed),
    )


def gate_counts(stimuli: Iterable[Stimulus], gates: Sequence[Gate]) -> GateCounts:
    """Run every gate on every stimulus; count refusals and first failures, list refused ids.

    Gate names must be distinct and stimulus ids unique (InputError otherwise): the counts and
    the refused list are keyed by them.
    """
    gates = check_gates(gates)
    names = tuple(g.name for g in gates)
    with gc_paused():
        return _gate_counts(stimuli, gates, names)


def _gate_counts(
    stimuli: Iterable[Stimulus], gates: tuple[Gate, ...], names: tuple[str, ...]
) -> GateCounts:
    refusals = dict.fromkeys(names, 0)
    first = dict.fromkeys(names, 0)
    failed: dict[str, tuple[str, ...]] = {}
    admitted: list[str] = []
    refused: list[str] = []
    seen: set[str] = set()
    total = 0
    checks = [(g.name, g.check) for g in gates]
    for s in stimuli:
        _check_stimulus(s)
        if s.id in seen:
            raise InputError("stimuli", "stimuli with unique ids", s.id)
        seen.add(s.id)
        total += 1
        fails = tuple([name for name, check in checks if not check(s).passed])
        for name in fails:
            refusals[name] += 1
        if fails:
            first[fails[0]] += 1
            failed[s.id] = fails
            refused.append(s.id)
        else:
            admitted.append(s.id)
    return _gate_counts_of(names, total, tuple(admitted), tuple(refused), refusals, first, failed)
