"""What a stimulus is: the three texts a gate admits and an evidence source judges.

:class:`Stimulus` is the one type gates (:mod:`._gates`) and evidence sources
(``EvidenceSource.judge``) take: an ``id``, the optional ``source`` passage, the ``treatment`` text
(carrying the manipulated property) and the ``null_partner`` (the same content without it), plus a
read-only ``metadata`` mapping for whatever produced it. It knows nothing about templates, so a
pair written by hand, imported from a file or produced by the template generator is the same
kind of object.

The template generator (:mod:`._factory`) keeps its bookkeeping apart, in a
:class:`GeneratedStimulus` record: candidate index, template, family and injected defects next to
the texts. Its fields are exactly the ``stimuli.jsonl`` record of an engine run, in that order
(``root_id`` first: the output contract fixes the names), and its :attr:`GeneratedStimulus.stimulus`
is the :class:`Stimulus` that gates and evidence sources receive. That stimulus carries the
bookkeeping in its metadata under keys the generator owns (:data:`TEMPLATE_GENERATOR` under
``"generator"``, then ``"template"``, ``"family"``, ``"candidate_index"``, ``"injected_defects"``),
which is how a gate that needs template knowledge (the built-in lexicon's content units, the
templates' marker spans) recognises a stimulus it can read (:func:`require_template_stimulus`).
Gates never read ``injected_defects``: it is kept for tests and reports.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any

from verdictpack._errors import InputError
from verdictpack._validate import nonempty_str

__all__ = [
    "TEMPLATE_GENERATOR",
    "GeneratedStimulus",
    "Stimulus",
    "require_template_stimulus",
]

# The metadata value under "generator" of every stimulus the built-in template generator makes.
TEMPLATE_GENERATOR = "verdictpack.stimuli.templates"

_EMPTY: Mapping[str, Any] = MappingProxyType({})


@dataclass(frozen=True, kw_only=True)
class Stimulus:
    """One stimulus: ``id``, optional ``source``, ``treatment``, ``null_partner``, ``metadata``.

    Frozen; ``metadata`` is copied into a read-only mapping (default empty) with string keys and
    does not take part in hashing. ``id`` must be a non-empty string; the texts must be strings
    (``source`` may be None when there is no source passage).
    """

    id: str
    source: str | None = None
    treatment: str
    null_partner: str
    metadata: Mapping[str, Any] = field(default_factory=lambda: _EMPTY, hash=False)

    def __post_init__(self) -> None:
        nonempty_str("stimulus.id", self.id)
        if self.source is not None and not isinstance(self.source, str):
            raise InputError("stimulus.source", "a string or None", type(self.source).__name__)
        for name in ("treatment", "null_partner"):
            value = getattr(self, name)
            if not isinstance(value, str):
                raise InputError(f"stimulus.{name}", "a string", type(value).__name__)
        if not isinstance(self.metadata, Mapping):
            raise InputError("stimulus.metadata", "a mapping", type(self.metadata).__name__)
        meta = dict(self.metadata)
        for key in meta:
            if not isinstance(key, str):
                raise InputError("stimulus.metadata", "string keys", key)
        object.__setattr__(self, "metadata", MappingProxyType(meta) if meta else _EMPTY)


@dataclass(frozen=True)
class GeneratedStimulus:
    """The template generator's record of one candidate: its texts plus the bookkeeping.

    Field names and order are the ``stimuli.jsonl`` record (module docstring); ``root_id`` is the
    stimulus id. :attr:`stimulus` is what gates and evidence sources take.
    """

    root_id: str
    candidate_index: int
    template: str
    family: str
    source: str
    treatment: str
    null_partner: str
    injected_defects: tuple[str, ...] = ()

    @property
    def stimulus(self) -> Stimulus:
        """The :class:`Stimulus` (id = ``root_id``) with the bookkeeping in its metadata."""
        return Stimulus(
            id=self.root_id,
            source=self.source,
            treatment=self.treatment,
            null_partner=self.null_partner,
            metadata={
                "generator": TEMPLATE_GENERATOR,
                "template": self.template,
                "family": self.family,
                "candidate_index": self.candidate_index,
                "injected_defects": self.injected_defects,
            },
        )


def require_template_stimulus(gate: str, stimulus: Stimulus) -> str:
    """The stimulus's source text, when it comes from the template generator; else InputError.

    For gates that need template knowledge: they read the built-in lexicon's content units or the
    templates' marker spans, which only texts made by the template generator are known to carry.
    """
    if not isinstance(stimulus, Stimulus):
        raise InputError("stimulus", "a Stimulus", type(stimulus).__name__)
    if stimulus.metadata.get("generator") != TEMPLATE_GENERATOR or stimulus.source is None:
        raise InputError(
            "stimulus",
            f"a stimulus from the template generator for gate '{gate}' (metadata 'generator' = "
            f"'{TEMPLATE_GENERATOR}', with a source text): it reads the built-in lexicon's content "
            "units and the templates' marker spans; for other texts use the text-only gates",
            stimulus.id,
        )
    return stimulus.source
