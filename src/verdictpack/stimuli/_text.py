"""The one tokenizer of every gate, the lexicon and the generator: sentences, tokens, folding.

* Normalisation: each sentence that is not pure ASCII is put in Unicode NFKC form before its
  tokens are read (compatibility characters become their plain letters and digits: ``ﬁ`` ->
  ``fi``, full-width ``１２`` -> ``12``, ``²`` -> ``2``); ASCII text is already NFKC.
* Tokens, case kept (:func:`word_tokens`): numbers are runs of digits (``\\d``, any script) with
  inner ``.`` or ``,`` groups (``3.5``, ``1,200``); words are runs of letters of any script
  (``[^\\W\\d_]``: ``str.isalnum`` and not a digit) continued by combining marks (Devanagari and
  Thai vowel signs, decomposed accents) and joined by inner apostrophes or hyphens (``O'Neill``,
  ``long-term``); every Han ideograph, hiragana or katakana character is a token of its own
  (those scripts write no spaces between words, so their n-grams are character n-grams; Thai,
  Lao, Khmer and Myanmar, also written without spaces, are not split: a run is one token).
  Anything else -- white space, punctuation, ``_`` -- only separates tokens.
* Case: compared case-folded (``str.casefold``) -- :func:`tokens`, :func:`sentence_tokens`, the
  fragment n-grams, content words, the lexicon -- except where the case is the information: a
  name of :mod:`._realtext` starts upper-case, and the real-text diff budget counts a change of
  case as an edit (:func:`word_tokens`).
* Sentences: a sentence ends at a run of ``.``, ``!``, ``?``, ``…``, ``．``, ``؟``, ``।`` or ``॥``
  followed by optional closing quotes or brackets and white space (or the end of the text), and
  at a run of the CJK stops ``。``, ``！``, ``？`` (and half-width ``｡``) whatever follows (those
  scripts put no space after them). A sentence without a token is no sentence. A token *opens a
  sentence* when it is the first of one.
* Words of the length gate: the number of tokens; characters: the characters of the
  white-space-normalised text (``" ".join(text.split())``).
"""

from __future__ import annotations

import functools
import re
import unicodedata

__all__ = [
    "RECENT",
    "clear_caches",
    "folded_lines",
    "lines",
    "norm",
    "sentence_tokens",
    "text_length",
    "tokens",
    "word_count",
    "word_tokens",
]

_CJK = "\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\U00020000-\U0003134f"
_CLOSE = "\"'”’»)\\]」』）］"
_SENTENCE_END = re.compile(rf"[.!?…．؟।॥]+[{_CLOSE}]*(?:\s+|$)|[。｡！？]+[{_CLOSE}]*\s*")
_TOKEN_ASCII = re.compile(r"\d+(?:[.,]\d+)*|[A-Za-z]+(?:['-][A-Za-z]+)*", re.ASCII)
_ASCII_CLOSE = "\"')]"
_STOPS = frozenset(".!?")
_CACHE = 16384
# texts read recently: a pair's texts and a source its neighbours share (16,384 texts held about
# half a gigabyte at 100,000 pairs and made every pair slower)
RECENT = 512


@functools.cache
def _token_pattern() -> re.Pattern[str]:
    """The Unicode token pattern (built on the first non-ASCII text: the combining marks are
    listed from ``unicodedata``, about a tenth of a second)."""
    marks = "".join(
        chr(c)
        for c in (*range(0x300, 0x20000), *range(0xE0100, 0xE01F0))
        if unicodedata.category(chr(c))[0] == "M"
    )
    letter = rf"[^\W\d_{_CJK}][{re.escape(marks)}]*"
    return re.compile(rf"[{_CJK}]|\d+(?:[.,]\d+)*|(?:{letter})+(?:['’-](?:{letter})+)*")


@functools.lru_cache(maxsize=_CACHE)
def _piece_tokens(piece: str) -> tuple[str, ...]:
    """The tokens of one sentence of a non-ASCII text (cached: a treatment and its null partner
    share most of their sentences)."""
    return tuple(_token_pattern().findall(unicodedata.normalize("NFKC", piece)))


def _ascii_sentences(text: str) -> list[str]:
    """The sentences of an ASCII text by the same rules, read white-space chunk by chunk: a token
    never spans white space, and a sentence ends exactly where a chunk, stripped of closing
    quotes and brackets, ends with ``.``, ``!`` or ``?`` (a test holds this equal to the regular
    expressions). Most chunks are plain words or numbers, which need no regular expression."""
    out: list[str] = []
    cur: list[str] = []
    for chunk in text.split():
        if chunk.isalpha() or chunk.isdigit():  # ASCII: A-Za-z only, 0-9 only
            cur.append(chunk)
            continue
        cur += _TOKEN_ASCII.findall(chunk)
        if cur and chunk.rstrip(_ASCII_CLOSE)[-1:] in _STOPS:
            out.append(" ".join(cur))
            cur = []
    if cur:
        out.append(" ".join(cur))
    return out


@functools.lru_cache(maxsize=RECENT)
def lines(text: str) -> tuple[str, str]:
    """The sentences of ``text`` as one string each way, case kept and case-folded: a line per
    sentence, its tokens joined by one space (cached, the :data:`RECENT` texts: every gate reads
    the same texts; strings, unlike tuples, give the garbage collector nothing to scan)."""
    if text.isascii():
        kept = "\n".join(_ascii_sentences(text))
        return kept, kept.lower()  # ASCII: lower() is casefold()
    found = (" ".join(_piece_tokens(piece)) for piece in _SENTENCE_END.split(text))
    kept = "\n".join(line for line in found if line)
    # casefold never makes white space, so folding keeps every boundary
    return kept, kept.casefold()


def _split(joined: str) -> tuple[tuple[str, ...], ...]:
    return tuple(tuple(line.split(" ")) for line in joined.split("\n")) if joined else ()


def folded_lines(text: str) -> str:
    """The case-folded sentences of ``text`` as one string: a line per sentence, its tokens
    joined by one space."""
    return lines(text)[1]


def sentence_tokens(text: str) -> tuple[tuple[str, ...], ...]:
    """The case-folded tokens of each sentence of ``text``."""
    return _split(lines(text)[1])


def word_tokens(text: str) -> tuple[str, ...]:
    """The case-kept tokens of ``text``."""
    return tuple(lines(text)[0].split())


def tokens(text: str) -> tuple[str, ...]:
    """The case-folded tokens of ``text``."""
    return tuple(lines(text)[1].split())


def norm(text: str) -> str:
    """Token string with a leading and trailing space, for whole-token substring matching."""
    return " " + " ".join(tokens(text)) + " "


def word_count(text: str) -> tuple[int, int]:
    """The length gate's lengths of ``text``: (tokens, characters) (module docstring)."""
    kept = lines(text)[0]
    words = kept.count(" ") + kept.count("\n") + 1 if kept else 0
    return words, len(" ".join(text.split()))


def text_length(text: str, unit: str) -> int:
    """The length of ``text`` in ``unit``: "words" (tokens) or "characters" (:func:`word_count`)."""
    words, characters = word_count(text)
    return words if unit == "words" else characters


def clear_caches() -> None:
    """Forget every cached tokenization (for timing cold runs; results never depend on it)."""
    _piece_tokens.cache_clear()
    lines.cache_clear()
