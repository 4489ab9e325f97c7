"""A judge's answer read as a choice: the positions, the free-text parser, and the study's terms.

Shared by every path a model judgment takes (a live response, :mod:`verdictpack.evidence.live.
_extract`; a judgment file's free-text column or an imported log): :class:`Extraction` (what was
read, and by which path), :class:`TextParser` (the exact label, then only the strict patterns a
study declares, and its tie words; nothing guessed), :func:`canonical_choice` (a position in a
presentation order -> ``treatment`` / ``null_partner`` / ``tie`` / ``invalid``) and the
presentation orders and label rules (:data:`ORDERS`, :func:`check_labels`).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from verdictpack._errors import InputError
from verdictpack._validate import is_real

__all__ = [
    "ORDERS",
    "PATHS",
    "PATTERNS",
    "POSITIONS",
    "Extraction",
    "TextParser",
    "canonical_choice",
    "check_labels",
]

ORDERS = ("treatment_first", "null_first")
POSITIONS = ("first", "second", "tie", "invalid")
PATHS = ("logprobs", "structured", "parser", "none")


@dataclass(frozen=True)
class Extraction:
    """What was read: ``position`` (first, second, tie, invalid), the ``path`` that read it,
    ``p_first`` (the logprobs path only, else None) and a short human-readable ``detail``."""

    position: str
    path: str
    p_first: float | None
    detail: str

    def __post_init__(self) -> None:
        if self.position not in POSITIONS:
            raise InputError("extraction.position", "one of " + ", ".join(POSITIONS), self.position)
        if self.path not in PATHS:
            raise InputError("extraction.path", "one of " + ", ".join(PATHS), self.path)
        if self.p_first is not None and not (is_real(self.p_first) and 0.0 <= self.p_first <= 1.0):
            raise InputError("extraction.p_first", "a probability in [0, 1] or None", self.p_first)
        if (self.position == "invalid") != (self.path == "none"):
            raise InputError(
                "extraction", "position 'invalid' exactly when path is 'none'", self.position
            )


def _fold(text: str) -> str:
    return text.strip().casefold()


def _label_of(text: str, labels: tuple[str, str]) -> int | None:
    """0 or 1 when ``text`` (stripped, case-folded) is that label, else None."""
    t = _fold(text)
    for k, label in enumerate(labels):
        if t == label.casefold():
            return k
    return None


def check_labels(labels: Any) -> tuple[str, str]:
    """The two labels as a tuple, when they are usable answer labels; else InputError.

    Two strings, each non-empty without surrounding white space and without a trailing period
    (the strict parser allows one after the label), distinct even ignoring case (the answer is
    matched case-insensitively).
    """
    if isinstance(labels, (str, bytes)) or not isinstance(labels, (tuple, list)):
        raise InputError("labels", "a pair of two label strings", labels)
    if len(labels) != 2 or not all(isinstance(x, str) for x in labels):
        raise InputError("labels", "a pair of two label strings", labels)
    for x in labels:
        if not x or x != x.strip() or x.endswith("."):
            raise InputError(
                "labels",
                "labels that are non-empty, without surrounding white space or a final period",
                labels,
            )
    a, b = labels
    if a.casefold() == b.casefold():
        raise InputError("labels", "two labels that differ (ignoring case)", labels)
    return a, b


#: the built-in strict patterns, by name: (regular expression, may it occur anywhere)
PATTERNS: dict[str, tuple[str, bool]] = {
    "bold": (r"\*\*\s*(?P<label>[^*\n]+?)\s*\*\*\.?", False),
    "brackets": (r"\[\[\s*(?P<label>[^\]\n]+?)\s*\]\]\.?", False),
    "named": (
        r"(?:the\s+)?(?:response|assistant|answer|output|option|summary|text)\s+"
        r"(?P<label>[^\s.*]+)(?:\s+is\s+(?:better|the\s+better\s+one))?\.?",
        False,
    ),
    "brackets_anywhere": (r"\[\[\s*(?P<label>[^\]\n]+?)\s*\]\]", True),
}


@dataclass(frozen=True)
class TextParser:
    """Reads a free-text answer (module docstring, path 3): ``labels`` (first, second), the
    declared ``patterns`` (names in :data:`PATTERNS` or regular expressions with a group named
    ``label``, tried in order after the exact label) and the ``ties`` words that mean a tie."""

    labels: tuple[str, str]
    patterns: tuple[str, ...] = ()
    ties: tuple[str, ...] = ()
    _compiled: tuple[tuple[str, re.Pattern[str], bool], ...] = field(
        default=(), init=False, repr=False, compare=False
    )

    def __post_init__(self) -> None:
        labels = check_labels(self.labels)
        object.__setattr__(self, "labels", labels)
        if isinstance(self.patterns, str) or not isinstance(self.patterns, Sequence):
            raise InputError(
                "patterns", "a list of pattern names or regular expressions", self.patterns
            )
        if isinstance(self.ties, str) or not isinstance(self.ties, Sequence):
            raise InputError("ties", "a list of words that mean a tie", self.ties)
        folded = {x.casefold() for x in labels}
        for t in self.ties:
            if not isinstance(t, str) or not t.strip() or t.strip().casefold() in folded:
                raise InputError("ties", "non-empty words that are not a label", t)
        compiled = []
        for i, p in enumerate(self.patterns):
            if not isinstance(p, str) or not p:
                raise InputError(f"patterns[{i}]", "a pattern name or a regular expression", p)
            text, anywhere = PATTERNS.get(p, (p, False))
            try:
                rx = re.compile(text, re.IGNORECASE)
            except re.error as exc:
                raise InputError(
                    f"patterns[{i}]",
                    "one of " + ", ".join(PATTERNS) + f", or a valid regular expression ({exc})",
                    p,
                ) from None
            if "label" not in rx.groupindex:
                raise InputError(f"patterns[{i}]", "a regular expression with (?P<label>...)", p)
            compiled.append((p if p in PATTERNS else f"patterns[{i}]", rx, anywhere))
        object.__setattr__(self, "patterns", tuple(self.patterns))
        object.__setattr__(self, "ties", tuple(t.strip() for t in self.ties))
        object.__setattr__(self, "_compiled", tuple(compiled))

    def _answer(self, token: str) -> str | None:
        k = _label_of(token, self.labels)
        if k is not None:
            return POSITIONS[k]
        return "tie" if any(_fold(token) == w.casefold() for w in self.ties) else None

    def read(self, text: str | None) -> Extraction:
        """The answer ``text`` gives: a position with path ``parser`` and the rule that read
        it in ``detail``, or ``invalid`` (path ``none``) when no rule reads it."""
        if not isinstance(text, str) or not text.strip():
            return Extraction("invalid", "none", None, "empty answer")
        bare = text.strip()
        exact = bare[:-1] if bare.endswith(".") else bare
        answer = self._answer(exact) if exact == exact.strip() else None
        if answer is not None:
            return Extraction(answer, "parser", None, f"exact label: {bare[:80]!r}")
        for name, rx, anywhere in self._compiled:
            if anywhere:
                found = {self._answer(m.group("label")) for m in rx.finditer(bare)}
                answer = found.pop() if len(found) == 1 else None
                if answer is not None:
                    return Extraction(answer, "parser", None, f"pattern {name}: {bare[:80]!r}")
                continue
            m = rx.fullmatch(bare)
            answer = None if m is None else self._answer(m.group("label"))
            if answer is not None:
                return Extraction(answer, "parser", None, f"pattern {name}: {bare[:80]!r}")
        return Extraction("invalid", "none", None, f"not a label: {bare[:80]!r}")


def canonical_choice(extraction: Extraction, order: str) -> tuple[str, float | None]:
    """``(choice, p_treatment)`` in the study's terms for presentation ``order``.

    ``choice`` is ``treatment``, ``null_partner``, ``tie`` or ``invalid``. In ``treatment_first``
    the first position is the treatment and ``p_treatment = p_first``; in ``null_first`` the
    first position is the null partner and ``p_treatment = 1 - p_first``. ``p_treatment`` is None
    when the path gave no probability (and always for ``invalid``).
    """
    if not isinstance(extraction, Extraction):
        raise InputError("extraction", "an Extraction", type(extraction).__name__)
    if order not in ORDERS:
        raise InputError("order", "'treatment_first' or 'null_first'", order)
    if extraction.position == "invalid":
        return "invalid", None
    p = extraction.p_first
    if order == "treatment_first":
        p_t = p
        names = {"first": "treatment", "second": "null_partner"}
    else:
        p_t = None if p is None else 1.0 - p
        names = {"first": "null_partner", "second": "treatment"}
    return names.get(extraction.position, "tie"), p_t
