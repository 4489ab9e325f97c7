"""Text conventions shared by the lexicon, the gates and the generator: tokens, sentences, words.

Sentences are split after ``.``, ``!`` or ``?`` followed by white space (or the end); tokens are
the runs of a-z and 0-9 after lower-casing (anything else separates tokens); a *word* is a
white-space separated chunk. Nothing here knows about templates or the lexicon.
"""

from __future__ import annotations

import functools
import re

__all__ = ["norm", "sentence_tokens", "tokens"]

_TOKEN = re.compile(r"[a-z0-9]+")
_TOKEN_OR_STOP = re.compile(r"[a-z0-9]+|[.!?](?=\s|$)")
_STOP_SPLIT = re.compile(r"[.!?]")


def tokens(text: str) -> list[str]:
    """The tokens of ``text``: runs of a-z and 0-9 after lower-casing."""
    return _TOKEN.findall(text.lower())


def norm(text: str) -> str:
    """Token string with a leading and trailing space, for whole-token substring matching."""
    return " " + " ".join(tokens(text)) + " "


@functools.lru_cache(maxsize=16384)
def sentence_tokens(text: str) -> tuple[tuple[str, ...], ...]:
    """The token tuples of the sentences of ``text`` (cached: gates read the same texts)."""
    joined = " ".join(_TOKEN_OR_STOP.findall(text.lower()))
    pieces = (piece.split() for piece in _STOP_SPLIT.split(joined))
    return tuple(tuple(p) for p in pieces if p)
