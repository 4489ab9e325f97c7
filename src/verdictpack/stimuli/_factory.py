"""The stimulus factory: root events generated as real text, admitted through mechanical gates.

Root events
-----------
A root is a source item (a short passage of *content units* -- entity-attribute-value facts such
as "Orin Bridge opened in 1932", drawn from the small built-in :data:`DEFAULT_LEXICON`, plus
optional background sentences that carry no content unit), its *treatment* text (the source
rewritten with the manipulated property) and its *null partner* (the same content, differing from
the treatment only in the manipulated property).

Templates are data (:class:`Template`): format strings with the slots ``{entity}``, ``{phrase}``
(the attribute's surface phrase), ``{value}`` and, in the treatment and null frames, ``{marker}``.
Each content unit becomes one sentence. The manipulated property lives only in the markers: the
treatment frame takes ``treatment_markers[j]`` and the null frame ``null_markers[j]`` (the same j,
so marker pairs can be length-matched; a single null marker serves every sentence). Two families
ship: "summarization" (manipulated property: an "LLM-style" summary register; the null partner
uses plain-register markers with the same word count) and "length" (manipulated property: a
longer rendering; the null partner's marker is empty). At least two templates are required.

Generation is deterministic given a ``numpy.random.Generator`` (all draws are taken up front as
arrays). Imperfections are injected at configurable rates (:class:`DefectRates`), so that gates
fail for realistic reasons:

* ``drop_unit``: one content sentence is lost from the rewrite (treatment and null partner alike);
* ``duplicate_fragment``: one rewritten sentence is repeated verbatim (treatment and null alike);
* ``padding``: a filler sentence is added to the treatment only;
* ``extra_difference``: the null partner states a different value for one unit.

Gates
-----
A gate is anything with a ``name`` and ``check(root) -> GateOutcome(passed, measured, threshold)``
(:class:`Gate`). Gates read only the three texts; :attr:`Root.injected_defects` is generator
bookkeeping kept for tests and reports, never read by a gate. Text conventions: sentences are
split after ``.``, ``!`` or ``?`` followed by white space (or the end); tokens are the runs of
a-z and 0-9 after lower-casing (anything else separates tokens); a *word* is a white-space
separated chunk.

* :class:`LengthMatchGate`: r = (L_t − L_n) / L_n with L the length of the treatment / null
  partner in words (or characters: the number of characters of the white-space-normalised text);
  measured = |r − target|; passes when measured ≤ tolerance. target = 0 for a register construct;
  for a length construct it is the intended relative lengthening.
* :class:`ContentPreservationGate`: content units are detected in the text (:func:`content_units`:
  a sentence holds unit (e, a, v) when it contains entity e, attribute a's phrase and a value of a,
  all matched as whole token sequences); measured = |U(source) ∩ U(treatment)| / |U(source)|;
  passes when U(source) is not empty and measured ≥ threshold.
* :class:`FragmentDistinctnessGate`: for each of the three texts, the Jaccard similarity of the
  word n-gram sets (default n = 3; a sentence shorter than n counts as one gram) of every pair of
  its sentences; measured = the maximum; passes when measured ≤ threshold.
* :class:`NullSeparationGate`: the manipulated property is normalised away by deleting, in every
  sentence of both texts, an allowed span (one of the templates' markers, as a whole token
  sequence) that opens the sentence and one that closes it -- the only places a template may put
  its {marker} slot; measured = the token-level difference of what remains (the number of
  tokens in non-equal ``difflib`` opcodes, max of the two sides per opcode). Passes when
  measured ≤ max_diff_tokens AND the detected content-unit sets of treatment and null partner are
  identical AND the raw token sequences differ (a null partner identical to the treatment carries
  no manipulation).

:func:`run_factory` generates candidates, checks every gate on every candidate, and admits the
candidates passing all gates. :func:`size_gate_spot_check` sizes the small human check of the
mechanical gate's decisions.
"""

from __future__ import annotations

import difflib
import functools
import math
import re
import string
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Literal, Protocol, runtime_checkable

import numpy as np

from verdictpack._errors import InputError
from verdictpack._results import Figure, exact

__all__ = [
    "DEFAULT_DEFECT_RATES",
    "DEFAULT_LEXICON",
    "LENGTH_TEMPLATES",
    "NO_DEFECTS",
    "SUMMARIZATION_TEMPLATES",
    "Attribute",
    "ContentPreservationGate",
    "DefectRates",
    "FactoryResult",
    "FragmentDistinctnessGate",
    "Gate",
    "GateOutcome",
    "GateSpotCheck",
    "LengthMatchGate",
    "Lexicon",
    "NullSeparationGate",
    "Root",
    "Template",
    "content_units",
    "max_fragment_similarity",
    "run_factory",
    "size_gate_spot_check",
    "standard_gates",
    "templates_for",
]

Family = Literal["summarization", "length"]
FAMILIES: tuple[str, ...] = ("summarization", "length")

_TOKEN = re.compile(r"[a-z0-9]+")
_TOKEN_OR_STOP = re.compile(r"[a-z0-9]+|[.!?](?=\s|$)")


def _tokens(text: str) -> list[str]:
    return _TOKEN.findall(text.lower())


def _norm(text: str) -> str:
    """Token string with a leading and trailing space, for whole-token substring matching."""
    return " " + " ".join(_tokens(text)) + " "


def _is_real(value: Any) -> bool:
    return (
        isinstance(value, (int, float, np.integer, np.floating))
        and not isinstance(value, (bool, np.bool_))
        and math.isfinite(float(value))
    )


def _is_int(value: Any) -> bool:
    return isinstance(value, (int, np.integer)) and not isinstance(value, (bool, np.bool_))


def _int_at_least(name: str, value: Any, minimum: int) -> int:
    if not _is_int(value) or int(value) < minimum:
        raise InputError(name, f"an integer >= {minimum}", value)
    return int(value)


def _nonempty_str(name: str, value: Any) -> str:
    if not isinstance(value, str) or not value.strip():
        raise InputError(name, "a non-empty string", value)
    return value


def _str_tuple(name: str, value: Any, *, allow_empty_items: bool = False) -> tuple[str, ...]:
    if isinstance(value, str) or not isinstance(value, (tuple, list)) or not value:
        raise InputError(name, "a non-empty sequence of strings", value)
    items = tuple(value)
    for item in items:
        if not isinstance(item, str) or (not allow_empty_items and not item.strip()):
            raise InputError(name, "strings" + ("" if allow_empty_items else " (non-empty)"), item)
    return items


# --------------------------------------------------------------------------------------------
# Vocabulary
# --------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Attribute:
    """An attribute of a content unit: its surface phrase and its value vocabulary."""

    name: str
    phrase: str
    values: tuple[str, ...]

    def __post_init__(self) -> None:
        _nonempty_str("attribute.name", self.name)
        _nonempty_str("attribute.phrase", self.phrase)
        values = _str_tuple("attribute.values", self.values)
        if len({_norm(v) for v in values}) != len(values) or len(values) < 2:
            raise InputError("attribute.values", "at least 2 distinct values", list(values))


@dataclass(frozen=True, eq=False)
class Lexicon:
    """The small built-in world: entities, attributes, background and padding sentences.

    ``background`` sentences (source only, ``{entity}`` slot) and ``padding`` sentences must not
    contain a content unit; entity names, phrases and values must be distinct as token strings.
    Compared and hashed by identity (it keys the detection caches).
    """

    entities: tuple[str, ...]
    attributes: tuple[Attribute, ...]
    background: tuple[str, ...]
    padding: tuple[str, ...]

    def __post_init__(self) -> None:
        ents = _str_tuple("lexicon.entities", self.entities)
        if len({_norm(e) for e in ents}) != len(ents):
            raise InputError("lexicon.entities", "distinct entity names", list(ents))
        if not isinstance(self.attributes, tuple) or len(self.attributes) < 2:
            raise InputError(
                "lexicon.attributes", "a tuple of at least 2 Attribute", self.attributes
            )
        for a in self.attributes:
            if not isinstance(a, Attribute):
                raise InputError("lexicon.attributes", "Attribute objects", type(a).__name__)
        names = [a.name for a in self.attributes]
        phrases = [_norm(a.phrase) for a in self.attributes]
        if len(set(names)) != len(names) or len(set(phrases)) != len(phrases):
            raise InputError("lexicon.attributes", "distinct names and phrases", names)
        _str_tuple("lexicon.background", self.background)
        _str_tuple("lexicon.padding", self.padding)


def _years(start: int, stop: int) -> tuple[str, ...]:
    return tuple(str(y) for y in range(start, stop))


DEFAULT_LEXICON = Lexicon(
    entities=(
        "Orin Bridge",
        "Vesta Library",
        "Calder Station",
        "Fenwick Museum",
        "Harlow Dam",
        "Selby Tower",
        "Brisa Canal",
        "Quarry Park",
        "Norvale Hospital",
        "Kestrel Airport",
        "Ombra Theatre",
        "Tilden Market",
        "Ravel Observatory",
        "Ashgrove School",
        "Mirren Pier",
        "Castell Gardens",
    ),
    attributes=(
        Attribute("opened", "opened in", _years(1850, 1980)),
        Attribute("renovated", "was renovated in", _years(1980, 2020)),
        Attribute(
            "located",
            "is located in",
            (
                "Marlow",
                "Dunmore",
                "Eastby",
                "Grantham",
                "Velden",
                "Porthaven",
                "Ilford",
                "Corriby",
                "Westmere",
                "Aldbury",
            ),
        ),
        Attribute(
            "managed",
            "is managed by",
            (
                "the Regional Trust",
                "the City Council",
                "the Heritage Board",
                "the Transit Authority",
                "the Parks Department",
                "a private foundation",
            ),
        ),
        Attribute(
            "designed",
            "was designed by",
            ("Mara Quist", "Ivo Renner", "Lena Hart", "Tomas Weir", "Ada Brandt", "Piet Olsen"),
        ),
        Attribute("area", "covers", tuple(f"{n} hectares" for n in range(2, 61))),
        Attribute(
            "visitors",
            "receives about",
            tuple(f"{n} thousand visitors a year" for n in range(5, 100, 5)),
        ),
        Attribute("staff", "employs", tuple(f"{n} people" for n in range(10, 310, 10))),
    ),
    background=(
        "{entity} is often mentioned in local guides.",
        "Many residents have their own stories about {entity}.",
        "{entity} appears in several old photographs of the district.",
        "School groups sometimes visit {entity} in the spring.",
    ),
    padding=(
        "This is an important point that readers may wish to keep in mind.",
        "There are many aspects worth considering when thinking about this topic.",
        "Taken together, these details help paint a fuller picture of the place.",
        "It is always useful to consider the wider context of such information.",
    ),
)


@functools.lru_cache(maxsize=16384)
def _sentence_tokens(text: str) -> tuple[tuple[str, ...], ...]:
    """The token tuples of the sentences of ``text`` (cached: gates read the same texts)."""
    joined = " ".join(_TOKEN_OR_STOP.findall(text.lower()))
    pieces = (piece.split() for piece in _STOP_SPLIT.split(joined))
    return tuple(tuple(p) for p in pieces if p)


_STOP_SPLIT = re.compile(r"[.!?]")


@dataclass(frozen=True)
class _Detector:
    """A lexicon compiled for detection (token strings padded with spaces: whole-token search)."""

    entities: tuple[tuple[str, str], ...]  # (padded token string, entity key)
    entity_first: frozenset[str]  # first token of every entity
    phrases: tuple[tuple[str, int], ...]  # (padded token string, attribute index)
    single: tuple[frozenset[str], ...]  # per attribute: its one-token values
    multi: tuple[dict[str, tuple[tuple[str, str], ...]], ...]  # per attribute: first token ->
    #   ((padded value, value key), ...) for its multi-token values
    names: tuple[str, ...]


@functools.lru_cache(maxsize=32)
def _compiled(lexicon: Lexicon) -> _Detector:
    single: list[frozenset[str]] = []
    multi: list[dict[str, tuple[tuple[str, str], ...]]] = []
    for a in lexicon.attributes:
        keys = [_tokens(v) for v in a.values]
        single.append(frozenset(k[0] for k in keys if len(k) == 1))
        by_first: dict[str, list[tuple[str, str]]] = {}
        for k in keys:
            if len(k) > 1:
                joined = " ".join(k)
                by_first.setdefault(k[0], []).append((f" {joined} ", joined))
        multi.append({f: tuple(v) for f, v in by_first.items()})
    return _Detector(
        entities=tuple((_norm(e), " ".join(_tokens(e))) for e in lexicon.entities),
        entity_first=frozenset(_tokens(e)[0] for e in lexicon.entities),
        phrases=tuple((_norm(a.phrase), i) for i, a in enumerate(lexicon.attributes)),
        single=tuple(single),
        multi=tuple(multi),
        names=tuple(a.name for a in lexicon.attributes),
    )


def content_units(text: str, lexicon: Lexicon = DEFAULT_LEXICON) -> frozenset[tuple[str, str, str]]:
    """The content units (entity, attribute, value) detected in ``text``, sentence by sentence.

    A sentence holds unit (e, a, v) when its tokens contain the entity e, the phrase of attribute
    a and a value v from a's vocabulary, each as a contiguous whole-token sequence. Entities and
    values are returned in token form (lower case, punctuation dropped).
    """
    return _content_units(text, lexicon)


@functools.lru_cache(maxsize=16384)
def _content_units(text: str, lexicon: Lexicon) -> frozenset[tuple[str, str, str]]:
    det = _compiled(lexicon)
    found: set[tuple[str, str, str]] = set()
    for toks in _sentence_tokens(text):
        if det.entity_first.isdisjoint(toks):
            continue
        norm = " " + " ".join(toks) + " "
        ents = [key for padded, key in det.entities if padded in norm]
        if not ents:
            continue
        tokset = set(toks)
        for padded_phrase, a in det.phrases:
            if padded_phrase not in norm:
                continue
            values = list(det.single[a] & tokset)
            multi = det.multi[a]
            for first in tokset.intersection(multi):
                values.extend(key for padded, key in multi[first] if padded in norm)
            for v in values:
                for e in ents:
                    found.add((e, det.names[a], v))
    return frozenset(found)


# --------------------------------------------------------------------------------------------
# Templates
# --------------------------------------------------------------------------------------------

_UNIT_SLOTS = frozenset({"entity", "phrase", "value"})


def _slots(frame: str, name: str) -> frozenset[str]:
    try:
        parsed = list(string.Formatter().parse(frame))
    except ValueError as err:
        raise InputError(name, "a valid format string", f"{frame!r} ({err})") from None
    fields = set()
    for _, field_name, spec, conv in parsed:
        if field_name is None:
            continue
        if spec or conv or not field_name.isidentifier():
            raise InputError(name, "plain named slots like {entity}", frame)
        fields.add(field_name)
    return frozenset(fields)


@dataclass(frozen=True)
class Template:
    """One way of rendering a root (data: format strings with slots).

    ``source_frame`` has the slots {entity}, {phrase}, {value}; ``treatment_frame`` and
    ``null_frame`` have those plus {marker}, which must open or close the sentence (no letter or
    digit before it, or none after it). ``null_markers`` has either as many entries as
    ``treatment_markers`` (paired by index) or exactly one (used for every sentence); null markers
    may be empty strings (the length family), treatment markers may not.
    """

    name: str
    family: Family
    source_frame: str
    treatment_frame: str
    null_frame: str
    treatment_markers: tuple[str, ...]
    null_markers: tuple[str, ...]

    def __post_init__(self) -> None:
        _nonempty_str("template.name", self.name)
        if self.family not in FAMILIES:
            raise InputError("template.family", f"one of {list(FAMILIES)}", self.family)
        if _slots(self.source_frame, "template.source_frame") != _UNIT_SLOTS:
            raise InputError(
                "template.source_frame",
                "exactly the slots {entity}, {phrase}, {value}",
                self.source_frame,
            )
        for name in ("treatment_frame", "null_frame"):
            frame = getattr(self, name)
            if _slots(frame, f"template.{name}") != _UNIT_SLOTS | {"marker"}:
                raise InputError(
                    f"template.{name}",
                    "exactly the slots {entity}, {phrase}, {value}, {marker}",
                    frame,
                )
            before, _, after = frame.partition("{marker}")
            if _tokens(before) and _tokens(after):
                raise InputError(
                    f"template.{name}", "{marker} opening or closing the sentence", frame
                )
        t = _str_tuple("template.treatment_markers", self.treatment_markers)
        n = _str_tuple("template.null_markers", self.null_markers, allow_empty_items=True)
        if len(n) not in (1, len(t)):
            raise InputError(
                "template.null_markers", f"1 or {len(t)} markers (one per treatment marker)", len(n)
            )
        if set(t) & set(n):
            raise InputError(
                "template.null_markers", "markers distinct from the treatment markers", list(n)
            )

    @property
    def allowed_spans(self) -> tuple[str, ...]:
        """The non-empty markers: the spans in which treatment and null partner may differ."""
        return tuple(m for m in (*self.treatment_markers, *self.null_markers) if m.strip())


SUMMARIZATION_TEMPLATES: tuple[Template, ...] = (
    Template(
        name="summary-discourse-markers",
        family="summarization",
        source_frame="Records note that {entity} {phrase} {value}.",
        treatment_frame="{marker} {entity} {phrase} {value}.",
        null_frame="{marker} {entity} {phrase} {value}.",
        treatment_markers=(
            "Notably,",
            "Importantly,",
            "Crucially,",
            "Remarkably,",
            "Significantly,",
            "Additionally,",
            "Furthermore,",
        ),
        null_markers=("Also,", "Next,", "Then,", "And", "Plus,", "Still,", "Further,"),
    ),
    Template(
        name="summary-framing-clauses",
        family="summarization",
        source_frame="The file says {entity} {phrase} {value}.",
        treatment_frame="{marker} {entity} {phrase} {value}.",
        null_frame="{marker} {entity} {phrase} {value}.",
        treatment_markers=(
            "It is worth noting that",
            "It is important to highlight that",
            "A key takeaway is that",
            "It should be emphasized that",
            "One notable point is that",
            "It bears mentioning that",
            "Of particular significance,",
        ),
        null_markers=(
            "The record also shows that",
            "The record goes on to say",
            "A further entry says that",
            "One more entry notes that",
            "One more line says that",
            "The list adds that",
            "In the list,",
        ),
    ),
    Template(
        name="summary-evaluative-tail",
        family="summarization",
        source_frame="{entity} {phrase} {value}, as the records note.",
        treatment_frame="{entity} {phrase} {value}{marker}.",
        null_frame="{entity} {phrase} {value}{marker}.",
        treatment_markers=(
            ", a testament to its enduring significance",
            ", highlighting its pivotal role",
            ", underscoring its remarkable legacy",
            ", which speaks to its lasting impact",
            ", reflecting a rich and storied history",
            ", a fact that truly stands out",
        ),
        null_markers=(
            ", as listed in the site register",
            ", per the site register",
            ", per the local register",
            ", as the town register records it",
            ", as noted in the town register",
            ", according to the old site register",
        ),
    ),
)

LENGTH_TEMPLATES: tuple[Template, ...] = (
    Template(
        name="length-trailing-elaboration",
        family="length",
        source_frame="The records show that {entity} {phrase} {value}.",
        treatment_frame="{entity} {phrase} {value}{marker}.",
        null_frame="{entity} {phrase} {value}{marker}.",
        treatment_markers=(
            ", a detail confirmed by several independent local sources",
            ", as recorded in the regional archive and in older guidebooks",
            ", according to the documents held in the county record office",
            ", as set out in the annual reports of that period",
            ", a point repeated in most published accounts of the area",
            ", as long-time residents can also confirm from memory",
        ),
        null_markers=("",),
    ),
    Template(
        name="length-leading-context",
        family="length",
        source_frame="{entity} {phrase} {value}, the records show.",
        treatment_frame="{marker}{entity} {phrase} {value}.",
        null_frame="{marker}{entity} {phrase} {value}.",
        treatment_markers=(
            "Looking at the history of the place in some detail, ",
            "As the longer local histories describe at some length, ",
            "According to the fuller accounts kept by the local society, ",
            "Going back through the complete set of available records, ",
            "Taking the full documentary record of the site into account, ",
            "When the longer descriptions of the site are consulted, ",
        ),
        null_markers=("",),
    ),
)


def templates_for(family: str) -> tuple[Template, ...]:
    """The default templates of a construct family ("summarization" or "length")."""
    if family == "summarization":
        return SUMMARIZATION_TEMPLATES
    if family == "length":
        return LENGTH_TEMPLATES
    raise InputError("family", f"one of {list(FAMILIES)}", family)


# --------------------------------------------------------------------------------------------
# Roots, outcomes, gates
# --------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Root:
    """One root event: source, treatment and null partner texts.

    ``injected_defects`` is generator bookkeeping (which imperfections were injected), kept for
    tests and reports; gates never read it.
    """

    root_id: str
    candidate_index: int
    template: str
    family: str
    source: str
    treatment: str
    null_partner: str
    injected_defects: tuple[str, ...] = ()


@dataclass(frozen=True)
class GateOutcome:
    """A gate's decision on one root: passed, the measured quantity and the threshold."""

    passed: bool
    measured: float
    threshold: float


@runtime_checkable
class Gate(Protocol):
    """A mechanical admission gate: a name and a check of one root's texts."""

    @property
    def name(self) -> str: ...

    def check(self, root: Root) -> GateOutcome: ...


def _threshold(name: str, value: Any, lo: float, hi: float) -> float:
    if not _is_real(value) or not lo <= float(value) <= hi:
        raise InputError(name, f"a number in [{lo}, {hi}]", value)
    return float(value)


@dataclass(frozen=True)
class LengthMatchGate:
    """|(L_t − L_n)/L_n − target| ≤ tolerance, L in words (default) or characters."""

    tolerance: float
    unit: Literal["words", "characters"] = "words"
    target: float = 0.0
    name: str = "length_match"

    def __post_init__(self) -> None:
        _threshold("tolerance", self.tolerance, 0.0, math.inf)
        if self.unit not in ("words", "characters"):
            raise InputError("unit", "'words' or 'characters'", self.unit)
        _threshold("target", self.target, -1.0, math.inf)
        _nonempty_str("name", self.name)

    def _length(self, text: str) -> int:
        if self.unit == "words":
            return len(text.split())
        return len(" ".join(text.split()))

    def check(self, root: Root) -> GateOutcome:
        lt = self._length(root.treatment)
        ln = max(self._length(root.null_partner), 1)
        measured = abs((lt - ln) / ln - self.target)
        return GateOutcome(measured <= self.tolerance, measured, float(self.tolerance))


@dataclass(frozen=True)
class ContentPreservationGate:
    """Fraction of the source's detected content units present in the treatment ≥ threshold."""

    threshold: float
    lexicon: Lexicon = DEFAULT_LEXICON
    name: str = "content_preservation"

    def __post_init__(self) -> None:
        _threshold("threshold", self.threshold, 0.0, 1.0)
        if not isinstance(self.lexicon, Lexicon):
            raise InputError("lexicon", "a Lexicon", type(self.lexicon).__name__)
        _nonempty_str("name", self.name)

    def check(self, root: Root) -> GateOutcome:
        src = content_units(root.source, self.lexicon)
        if not src:
            return GateOutcome(False, 0.0, float(self.threshold))
        kept = len(src & content_units(root.treatment, self.lexicon)) / len(src)
        return GateOutcome(kept >= self.threshold, kept, float(self.threshold))


def _grams(toks: tuple[str, ...], n: int) -> frozenset[tuple[str, ...]]:
    if len(toks) < n:
        return frozenset({toks})
    return frozenset(zip(*(toks[k:] for k in range(n)), strict=False))


def max_fragment_similarity(text: str, n: int = 3) -> float:
    """Max Jaccard similarity of word n-gram sets over all pairs of sentences of ``text``."""
    return _max_fragment_similarity(text, n)


@functools.lru_cache(maxsize=16384)
def _max_fragment_similarity(text: str, n: int) -> float:
    grams = [_grams(toks, n) for toks in _sentence_tokens(text)]
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
    """Max Jaccard of sentence n-gram sets within each text ≤ threshold (no near-duplicates)."""

    threshold: float
    n: int = 3
    name: str = "fragment_distinctness"

    def __post_init__(self) -> None:
        _threshold("threshold", self.threshold, 0.0, 1.0)
        _int_at_least("n", self.n, 1)
        _nonempty_str("name", self.name)

    def check(self, root: Root) -> GateOutcome:
        measured = max(
            max_fragment_similarity(t, self.n)
            for t in (root.source, root.treatment, root.null_partner)
        )
        return GateOutcome(measured <= self.threshold, measured, float(self.threshold))


_SpanIndex = dict[str, tuple[tuple[str, ...], ...]]


@functools.lru_cache(maxsize=64)
def _span_index(spans: tuple[str, ...]) -> tuple[_SpanIndex, _SpanIndex]:
    """Allowed spans as token tuples keyed by first token and by last token (longest first)."""
    toks = sorted({tuple(_tokens(s)) for s in spans} - {()}, key=lambda t: (-len(t), t))
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
    """Treatment and null partner differ only inside allowed spans (module docstring)."""

    allowed_spans: tuple[str, ...]
    max_diff_tokens: int = 0
    lexicon: Lexicon = DEFAULT_LEXICON
    name: str = "null_separation"

    def __post_init__(self) -> None:
        spans = _str_tuple("allowed_spans", self.allowed_spans)
        _int_at_least("max_diff_tokens", self.max_diff_tokens, 0)
        if not isinstance(self.lexicon, Lexicon):
            raise InputError("lexicon", "a Lexicon", type(self.lexicon).__name__)
        _nonempty_str("name", self.name)
        if not {_norm(s).strip() for s in spans} - {""}:
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
        for toks in _sentence_tokens(text):
            out.extend(_strip_spans(toks, by_first, by_last))
        return out

    def check(self, root: Root) -> GateOutcome:
        a = self._residual(root.treatment)
        b = self._residual(root.null_partner)
        diff = 0
        if a != b:
            ops = difflib.SequenceMatcher(None, a, b, autojunk=False).get_opcodes()
            diff = sum(max(i2 - i1, j2 - j1) for tag, i1, i2, j1, j2 in ops if tag != "equal")
        same_units = content_units(root.treatment, self.lexicon) == content_units(
            root.null_partner, self.lexicon
        )
        manipulated = _tokens(root.treatment) != _tokens(root.null_partner)
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


# --------------------------------------------------------------------------------------------
# Generation
# --------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class DefectRates:
    """Per-candidate probabilities of each injected imperfection (independent; module doc)."""

    drop_unit: float = 0.08
    padding: float = 0.06
    duplicate_fragment: float = 0.05
    extra_difference: float = 0.04

    def __post_init__(self) -> None:
        for name in ("drop_unit", "padding", "duplicate_fragment", "extra_difference"):
            _threshold(f"defect_rates.{name}", getattr(self, name), 0.0, 1.0)

    def as_array(self) -> np.ndarray:
        return np.array(
            [self.drop_unit, self.padding, self.duplicate_fragment, self.extra_difference]
        )


DEFAULT_DEFECT_RATES = DefectRates()
NO_DEFECTS = DefectRates(0.0, 0.0, 0.0, 0.0)


def _render(frame: str, entity: str, phrase: str, value: str, marker: str = "") -> str:
    return " ".join(frame.format(entity=entity, phrase=phrase, value=value, marker=marker).split())


@dataclass(frozen=True)
class FactoryResult:
    """What the factory admitted and why the rest was refused.

    ``gate_failures[g]``: candidates failing gate g (a candidate failing several gates counts in
    each); ``first_failures[g]``: candidates whose first failing gate (in gate order) is g, so
    their sum is ``n_candidates − n_admitted``. ``admission_yield`` = n_admitted / n_candidates.
    """

    family: str
    templates: tuple[str, ...]
    n_candidates: int
    n_admitted: int
    n_rejected: int
    admission_yield: Figure
    gate_names: tuple[str, ...]
    gate_failures: dict[str, int]
    first_failures: dict[str, int]
    admitted: tuple[Root, ...]


def _check_templates(templates: Any) -> tuple[Template, ...]:
    if isinstance(templates, (str, Template)) or not isinstance(templates, Sequence):
        raise InputError("templates", "a sequence of at least 2 Template", type(templates).__name__)
    tpls = tuple(templates)
    if len(tpls) < 2:
        raise InputError("templates", "at least 2 templates", len(tpls))
    for t in tpls:
        if not isinstance(t, Template):
            raise InputError("templates", "Template objects", type(t).__name__)
    if len({t.name for t in tpls}) != len(tpls):
        raise InputError("templates", "templates with distinct names", [t.name for t in tpls])
    if len({t.family for t in tpls}) != 1:
        raise InputError("templates", "templates of one family", [t.family for t in tpls])
    return tpls


def _check_gates(gates: Any) -> tuple[Gate, ...]:
    if not isinstance(gates, Sequence) or isinstance(gates, str) or not gates:
        raise InputError("gates", "a non-empty sequence of gates", gates)
    for g in gates:
        if not isinstance(g, Gate):
            raise InputError("gates", "objects with a name and check(root)", type(g).__name__)
    names = [g.name for g in gates]
    if len(set(names)) != len(names):
        raise InputError("gates", "gates with distinct names", names)
    return tuple(gates)


def run_factory(
    n_candidates: int,
    templates: Sequence[Template],
    gates: Sequence[Gate],
    rng: np.random.Generator,
    defect_rates: DefectRates = DEFAULT_DEFECT_RATES,
    *,
    lexicon: Lexicon = DEFAULT_LEXICON,
    units_per_root: tuple[int, int] = (3, 6),
    background_rate: float = 0.5,
    id_prefix: str = "root",
) -> FactoryResult:
    """Generate ``n_candidates`` roots and admit those passing every gate.

    Each candidate: a template (uniform), an entity (uniform), u content units (u uniform in
    ``units_per_root``, distinct attributes, uniform values), a background sentence in the source
    with probability ``background_rate``, markers drawn without replacement within the root (with
    replacement once a template's markers are used up), then the defects of ``defect_rates``
    (drop, extra difference, duplicate, padding -- applied in that order). Candidate i gets the id
    ``f"{id_prefix}-{i:05d}"``; admitted roots keep their candidate id. Every gate is checked on
    every candidate. Same Generator state -> same texts and same result.
    """
    n = _int_at_least("n_candidates", n_candidates, 1)
    tpls = _check_templates(templates)
    gate_list = _check_gates(gates)
    if not isinstance(rng, np.random.Generator):
        raise InputError("rng", "a numpy.random.Generator", type(rng).__name__)
    if not isinstance(defect_rates, DefectRates):
        raise InputError("defect_rates", "a DefectRates", type(defect_rates).__name__)
    if not isinstance(lexicon, Lexicon):
        raise InputError("lexicon", "a Lexicon", type(lexicon).__name__)
    n_attr = len(lexicon.attributes)
    if (
        not isinstance(units_per_root, (tuple, list))
        or len(units_per_root) != 2
        or not all(_is_int(u) for u in units_per_root)
        or not 2 <= units_per_root[0] <= units_per_root[1] <= n_attr
    ):
        raise InputError(
            "units_per_root", f"(lo, hi) integers with 2 <= lo <= hi <= {n_attr}", units_per_root
        )
    bg_rate = _threshold("background_rate", background_rate, 0.0, 1.0)
    prefix = _nonempty_str("id_prefix", id_prefix)
    u_lo, u_hi = int(units_per_root[0]), int(units_per_root[1])

    # all randomness up front, as arrays (one row per candidate)
    n_markers = max(len(t.treatment_markers) for t in tpls)
    tpl_idx = rng.integers(0, len(tpls), size=n)
    ent_idx = rng.integers(0, len(lexicon.entities), size=n)
    n_units = rng.integers(u_lo, u_hi + 1, size=n)
    attr_perm = np.argsort(rng.random((n, n_attr)), axis=1)
    val_draw = rng.integers(0, 1 << 30, size=(n, n_attr))
    marker_keys = rng.random((n, n_markers))
    bg_draw = rng.random(n) < bg_rate
    bg_pick = rng.integers(0, 1 << 30, size=(n, 2))
    defects = rng.random((n, 4)) < defect_rates.as_array()
    defect_pos = rng.integers(0, 1 << 30, size=(n, 5))

    names = [g.name for g in gate_list]
    failures = dict.fromkeys(names, 0)
    first = dict.fromkeys(names, 0)
    admitted: list[Root] = []
    for i in range(n):
        root = _make_root(
            i, tpls[int(tpl_idx[i])], lexicon, int(ent_idx[i]), int(n_units[i]),
            attr_perm[i], val_draw[i], marker_keys[i], bool(bg_draw[i]), bg_pick[i],
            defects[i], defect_pos[i], prefix,
        )  # fmt: skip
        ok = True
        for g in gate_list:
            if not g.check(root).passed:
                failures[g.name] += 1
                if ok:
                    first[g.name] += 1
                ok = False
        if ok:
            admitted.append(root)
    k = len(admitted)
    return FactoryResult(
        family=tpls[0].family,
        templates=tuple(t.name for t in tpls),
        n_candidates=n,
        n_admitted=k,
        n_rejected=n - k,
        admission_yield=exact(k / n),
        gate_names=tuple(names),
        gate_failures=failures,
        first_failures=first,
        admitted=tuple(admitted),
    )


def _make_root(
    index: int,
    tpl: Template,
    lexicon: Lexicon,
    ent: int,
    units: int,
    perm: np.ndarray,
    val_draw: np.ndarray,
    marker_keys: np.ndarray,
    background: bool,
    bg_pick: np.ndarray,
    defects: np.ndarray,
    pos: np.ndarray,
    prefix: str,
) -> Root:
    entity = lexicon.entities[ent]
    attrs = [int(a) for a in perm[:units]]
    vals = [int(val_draw[a]) % len(lexicon.attributes[a].values) for a in attrs]
    tm = tpl.treatment_markers
    nm = tpl.null_markers
    order = [int(m) for m in np.argsort(marker_keys[: len(tm)])]

    # source passage
    source = [
        _render(
            tpl.source_frame, entity, lexicon.attributes[a].phrase, lexicon.attributes[a].values[v]
        )
        for a, v in zip(attrs, vals, strict=True)
    ]
    if background:
        line = lexicon.background[int(bg_pick[0]) % len(lexicon.background)]
        source.insert(int(bg_pick[1]) % (len(source) + 1), line.format(entity=entity))

    # rewrite slots: (attribute, treatment value, null value, marker index)
    slots = [
        (a, v, v, order[j % len(order)]) for j, (a, v) in enumerate(zip(attrs, vals, strict=True))
    ]
    injected: list[str] = []
    if defects[0] and len(slots) >= 2:  # drop_unit
        del slots[int(pos[0]) % len(slots)]
        injected.append("drop_unit")
    if defects[3]:  # extra_difference: the null partner states another value
        j = int(pos[1]) % len(slots)
        a, v, _, m = slots[j]
        n_vals = len(lexicon.attributes[a].values)
        other = (v + 1 + int(pos[2]) % (n_vals - 1)) % n_vals
        slots[j] = (a, v, other, m)
        injected.append("extra_difference")
    if defects[2]:  # duplicate_fragment: a rewritten sentence repeated verbatim
        j = int(pos[3]) % len(slots)
        slots.insert(j + 1, slots[j])
        injected.append("duplicate_fragment")

    treatment: list[str] = []
    null: list[str] = []
    for a, v_t, v_n, m in slots:
        attr = lexicon.attributes[a]
        treatment.append(_render(tpl.treatment_frame, entity, attr.phrase, attr.values[v_t], tm[m]))
        null_marker = nm[m] if len(nm) == len(tm) else nm[0]
        null.append(_render(tpl.null_frame, entity, attr.phrase, attr.values[v_n], null_marker))
    if defects[1]:  # padding: a filler sentence in the treatment only
        pad = lexicon.padding[int(pos[4]) % len(lexicon.padding)]
        treatment.insert(int(pos[4] // 7) % (len(treatment) + 1), pad)
        injected.append("padding")
    return Root(
        root_id=f"{prefix}-{index:05d}",
        candidate_index=index,
        template=tpl.name,
        family=tpl.family,
        source=" ".join(source),
        treatment=" ".join(treatment),
        null_partner=" ".join(null),
        injected_defects=tuple(injected),
    )


# --------------------------------------------------------------------------------------------
# Human spot-check of the mechanical gate
# --------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class GateSpotCheck:
    """Size of the human spot-check of the gate's decisions (exact zero-failure binomial bound).

    ``pairs`` = n, the smallest n with (1 − e)^n ≤ 1 − confidence: if the gate's error rate were
    e or more, n checked pairs would all agree with the gate with probability ≤ 1 − confidence.
    Equivalently, with zero disagreements in n pairs, the exact one-sided (Clopper–Pearson) upper
    bound 1 − (1 − confidence)^(1/n) (``bound_at_pairs``) is ≤ e. touches = pairs × passes.
    """

    error_rate: float
    confidence: float
    pairs: int
    passes_per_pair: int
    touches: int
    cost: float
    bound_at_pairs: Figure
    bound_at_pairs_minus_1: Figure | None


# The most pairs a spot-check may need (the most candidates a factory run may make).
MAX_SPOT_CHECK_PAIRS = 1_000_000


def size_gate_spot_check(
    error_rate: float = 0.10,
    confidence: float = 0.95,
    passes_per_pair: int = 4,
    cost_per_touch: float = 1.0,
    n_admitted: int | None = None,
) -> GateSpotCheck:
    """n = ceil(ln(1 − confidence) / ln(1 − error_rate)), checked exactly (see GateSpotCheck).

    The ceiling is verified on both sides against (1 − e)^n ≤ 1 − confidence, so a float ratio that
    lands a hair above an integer does not add a pair. With ``n_admitted`` given, InputError naming
    it when the check needs more pairs than were admitted; InputError naming ``error_rate`` when
    the check would need more than ``MAX_SPOT_CHECK_PAIRS`` pairs.
    """
    e = _threshold("error_rate", error_rate, 0.0, 1.0)
    if not 0.0 < e < 1.0:
        raise InputError("error_rate", "a number strictly between 0 and 1", error_rate)
    conf = _threshold("confidence", confidence, 0.0, 1.0)
    if not 0.0 < conf < 1.0:
        raise InputError("confidence", "a number strictly between 0 and 1", confidence)
    passes = _int_at_least("passes_per_pair", passes_per_pair, 1)
    cost = _threshold("cost_per_touch", cost_per_touch, 0.0, math.inf)
    miss = 1.0 - conf
    estimate = math.log(miss) / math.log1p(-e)
    if not estimate <= MAX_SPOT_CHECK_PAIRS:  # (1 − e)^n rounds to 1 long before e reaches 0
        raise InputError(
            "error_rate",
            f"an error rate whose spot-check needs at most {MAX_SPOT_CHECK_PAIRS:,} pairs (this "
            f"one needs about {estimate:.3g} at confidence {conf:g})",
            error_rate,
        )
    n = max(1, math.ceil(estimate))
    while n > 1 and math.pow(1.0 - e, n - 1) <= miss:
        n -= 1
    while math.pow(1.0 - e, n) > miss:
        n += 1
    if n_admitted is not None:
        avail = _int_at_least("n_admitted", n_admitted, 0)
        if n > avail:
            raise InputError("n_admitted", f"at least {n} admitted pairs to spot-check", avail)

    def bound(k: int) -> float:
        return 1.0 - math.pow(miss, 1.0 / k)

    return GateSpotCheck(
        error_rate=e,
        confidence=conf,
        pairs=n,
        passes_per_pair=passes,
        touches=n * passes,
        cost=n * passes * cost,
        bound_at_pairs=exact(bound(n)),
        bound_at_pairs_minus_1=exact(bound(n - 1)) if n > 1 else None,
    )
