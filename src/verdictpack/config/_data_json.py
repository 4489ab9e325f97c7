"""JSON as every study data file reads it (pairs, tables, readings, Label Studio, Argilla).

``json.loads`` fails two ways no data file should be able to trigger: a nesting past about
1,000 levels raises RecursionError, and an integer past 4,300 digits raises ValueError (Python's
own limit on integer conversion). :func:`load_data_json` refuses both well below those limits,
by name, as a :class:`DataJSONError` whose ``received`` and ``expected`` a reader puts into its
Defect at the file's line or JSON path:

* nesting deeper than :data:`MAX_DATA_DEPTH` (200) levels of arrays and objects;
* an integer written with more than :data:`MAX_DATA_DIGITS` (100) digits.

Syntax errors stay ``json.JSONDecodeError``, as the readers already report them. A JSONL file
is decoded a line at a time: :func:`text_lines` cuts them from its text, without a copy.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from typing import Any

import numpy as np

__all__ = ["MAX_DATA_DEPTH", "MAX_DATA_DIGITS", "DataJSONError", "load_data_json", "text_lines"]

MAX_DATA_DEPTH = 200
MAX_DATA_DIGITS = 100

# a JSON string, escapes included (the unrolled loop: linear, no backtracking)
_STRING = re.compile(r'"[^"\\]*(?:\\.[^"\\]*)*"', re.DOTALL)


class DataJSONError(ValueError):
    """A JSON value past the data files' bounds: what was found and what is expected."""

    def __init__(self, received: str, expected: str) -> None:
        super().__init__(f"{received}: expected {expected}")
        self.received = received
        self.expected = expected


def _too_deep(text: str) -> bool:
    """Whether arrays and objects nest deeper than MAX_DATA_DEPTH (brackets in strings aside)."""
    if text.count("[") + text.count("{") <= MAX_DATA_DEPTH:
        return False
    bare = _STRING.sub('""', text).encode("utf-8", "surrogatepass")
    a = np.frombuffer(bare, np.uint8)
    step = ((a == 0x5B) | (a == 0x7B)).astype(np.int32) - ((a == 0x5D) | (a == 0x7D))
    return bool(step.size) and int(np.cumsum(step).max()) > MAX_DATA_DEPTH


def _parse_int(token: str) -> int:
    digits = len(token) - token.startswith("-")
    if digits > MAX_DATA_DIGITS:
        raise DataJSONError(
            f"an integer of {digits} digits ({token[:20]}...)",
            f"an integer of at most {MAX_DATA_DIGITS} digits",
        )
    return int(token)


def load_data_json(text: str) -> Any:
    """``json.loads(text)`` within the data files' bounds; DataJSONError past them."""
    if _too_deep(text):
        raise DataJSONError(
            f"arrays and objects nested deeper than {MAX_DATA_DEPTH} levels",
            f"at most {MAX_DATA_DEPTH} levels of nested arrays and objects",
        )
    try:
        return json.loads(text, parse_int=_parse_int)
    except RecursionError:  # a backstop: the count above is the bound
        raise DataJSONError(
            "arrays and objects nested too deeply",
            f"at most {MAX_DATA_DEPTH} levels of nested arrays and objects",
        ) from None


def text_lines(whole: str) -> Iterator[str]:
    """The lines of a JSONL text one at a time, as a text file reads them (universal newlines:
    CR LF and a lone CR end a line as LF does; each line ends in LF but perhaps the last).
    ``io.StringIO(whole, newline=None)`` gives the same lines from a copy of 4 bytes a character."""
    if "\r" in whole:
        whole = whole.replace("\r\n", "\n").replace("\r", "\n")
    start, end = 0, len(whole)
    for _ in range(whole.count("\n") + 1):  # one line a pass
        if start >= end:
            return
        stop = whole.find("\n", start)
        stop = end if stop < 0 else stop + 1
        yield whole[start:stop]
        start = stop
