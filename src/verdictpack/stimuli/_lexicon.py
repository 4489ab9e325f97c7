"""The built-in world of the template generator: lexicon, content units and templates.

Content units
-------------
A content unit is an entity-attribute-value fact such as "Orin Bridge opened in 1932", drawn from
the small built-in :data:`DEFAULT_LEXICON` (:class:`Lexicon` of entities, :class:`Attribute`
phrases and value vocabularies, plus background and padding sentences that carry no content
unit). :func:`content_units` detects them in any text: a sentence holds unit (e, a, v) when it
contains entity e, attribute a's phrase and a value of a, all matched as whole token sequences
(:mod:`._text` conventions).

Templates
---------
Templates are data (:class:`Template`): format strings with the slots ``{entity}``, ``{phrase}``
(the attribute's surface phrase), ``{value}`` and, in the treatment and null frames, ``{marker}``.
Each content unit becomes one sentence. The manipulated property lives only in the markers: the
treatment frame takes ``treatment_markers[j]`` and the null frame ``null_markers[j]`` (the same j,
so marker pairs can be length-matched; a single null marker serves every sentence). Two families
ship: "summarization" (manipulated property: an "LLM-style" summary register; the null partner
uses plain-register markers with the same word count) and "length" (manipulated property: a
longer rendering; the null partner's marker is empty). At least two templates are required.
"""

from __future__ import annotations

import functools
import string
from dataclasses import dataclass
from typing import Literal

from verdictpack._errors import InputError
from verdictpack._validate import nonempty_str, str_tuple
from verdictpack.stimuli._text import norm, sentence_tokens, tokens

__all__ = [
    "DEFAULT_LEXICON",
    "FAMILIES",
    "LENGTH_TEMPLATES",
    "SUMMARIZATION_TEMPLATES",
    "Attribute",
    "Family",
    "Lexicon",
    "Template",
    "content_units",
    "templates_for",
]

Family = Literal["summarization", "length"]
FAMILIES: tuple[str, ...] = ("summarization", "length")

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
        nonempty_str("attribute.name", self.name)
        nonempty_str("attribute.phrase", self.phrase)
        values = str_tuple("attribute.values", self.values)
        if len({norm(v) for v in values}) != len(values) or len(values) < 2:
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
        ents = str_tuple("lexicon.entities", self.entities)
        if len({norm(e) for e in ents}) != len(ents):
            raise InputError("lexicon.entities", "distinct entity names", list(ents))
        if not isinstance(self.attributes, tuple) or len(self.attributes) < 2:
            raise InputError(
                "lexicon.attributes", "a tuple of at least 2 Attribute", self.attributes
            )
        for a in self.attributes:
            if not isinstance(a, Attribute):
                raise InputError("lexicon.attributes", "Attribute objects", type(a).__name__)
        names = [a.name for a in self.attributes]
        phrases = [norm(a.phrase) for a in self.attributes]
        if len(set(names)) != len(names) or len(set(phrases)) != len(phrases):
            raise InputError("lexicon.attributes", "distinct names and phrases", names)
        str_tuple("lexicon.background", self.background)
        str_tuple("lexicon.padding", self.padding)


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
        keys = [tokens(v) for v in a.values]
        single.append(frozenset(k[0] for k in keys if len(k) == 1))
        by_first: dict[str, list[tuple[str, str]]] = {}
        for k in keys:
            if len(k) > 1:
                joined = " ".join(k)
                by_first.setdefault(k[0], []).append((f" {joined} ", joined))
        multi.append({f: tuple(v) for f, v in by_first.items()})
    return _Detector(
        entities=tuple((norm(e), " ".join(tokens(e))) for e in lexicon.entities),
        entity_first=frozenset(tokens(e)[0] for e in lexicon.entities),
        phrases=tuple((norm(a.phrase), i) for i, a in enumerate(lexicon.attributes)),
        single=tuple(single),
        multi=tuple(multi),
        names=tuple(a.name for a in lexicon.attributes),
    )


def content_units(text: str, lexicon: Lexicon = DEFAULT_LEXICON) -> frozenset[tuple[str, str, str]]:
    """The content units (entity, attribute, value) detected in ``text``, sentence by sentence.

    A sentence holds unit (e, a, v) when its tokens contain the entity e, the phrase of attribute
    a and a value v from a's vocabulary, each as a contiguous whole-token sequence. Entities and
    values are returned in token form (case-folded, punctuation dropped).
    """
    return _content_units(text, lexicon)


@functools.lru_cache(maxsize=16384)
def _content_units(text: str, lexicon: Lexicon) -> frozenset[tuple[str, str, str]]:
    det = _compiled(lexicon)
    found: set[tuple[str, str, str]] = set()
    for toks in sentence_tokens(text):
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
        nonempty_str("template.name", self.name)
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
            if tokens(before) and tokens(after):
                raise InputError(
                    f"template.{name}", "{marker} opening or closing the sentence", frame
                )
        t = str_tuple("template.treatment_markers", self.treatment_markers)
        n = str_tuple("template.null_markers", self.null_markers, allow_empty_items=True)
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
