"""The exception tree of verdictpack, drawn once.

::

    VerdictpackError                 base of everything verdictpack raises on purpose
    ├── ConfigError                  a config was refused; carries every Defect (CLI exit 2)
    ├── UsageError                   the command line was refused (CLI exit 2)
    ├── OutputError                  the output folder cannot be written as asked (CLI exit 2)
    └── InputError (also ValueError) an API argument or observation was refused; names the
                                     parameter, what is allowed and what was received

Anything else escaping the CLI is a bug: exit code 1, one line on stderr.
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass
from typing import Any

__all__ = [
    "ConfigError",
    "Defect",
    "InputError",
    "OutputError",
    "UsageError",
    "VerdictpackError",
    "format_value",
    "not_utf8",
]


def format_value(value: Any) -> str:
    """Render a received value compactly and unambiguously for a message."""
    if value is MISSING:
        return "(missing)"
    if isinstance(value, float) and not math.isfinite(value):
        return repr(value)
    try:
        text = json.dumps(value, ensure_ascii=False, sort_keys=True, allow_nan=True)
    except (TypeError, ValueError):
        text = repr(value)
    if len(text) > 80:
        text = text[:77] + "..."
    return text


class _Missing:
    def __repr__(self) -> str:
        return "(missing)"


# the received value of a config field that is absent (printed "(missing)")
MISSING: Any = _Missing()


class VerdictpackError(Exception):
    """Base class of every error verdictpack raises on purpose."""


@dataclass(frozen=True)
class Defect:
    """One thing wrong with a config: where, what was received, what was expected."""

    file: str
    path: str
    received: Any
    expected: str

    def message(self) -> str:
        return (
            f"{self.file}: {self.path}: received {format_value(self.received)}; "
            f"expected {self.expected}"
        )


def not_utf8(file: str, data: bytes) -> Defect:
    """The defect of a data file whose bytes are not UTF-8: the line and column of the first byte
    that is not, that byte, and what the file most likely is (UTF-16 or a Windows code page, the
    two a spreadsheet writes), so the fix can be named."""
    body = data[3:] if data.startswith(b"\xef\xbb\xbf") else data
    try:
        body.decode("utf-8")
    except UnicodeDecodeError as exc:
        start = exc.start
    else:  # the caller's decoder failed on bytes that decode whole: name the file only
        return Defect(file, "(file)", "bytes that are not UTF-8", "UTF-8 text")
    line_start = body.rfind(b"\n", 0, start) + 1
    column = len(body[line_start:start].decode("utf-8")) + 1
    where = "line " + str(body.count(b"\n", 0, start) + 1)
    expected = "UTF-8 text"
    if data.startswith((b"\xff\xfe", b"\xfe\xff")):
        expected += " (this file is UTF-16, as 'Unicode Text' is saved: save it as UTF-8"
    else:
        try:
            body.decode("cp1252")
        except UnicodeDecodeError:
            return Defect(file, where, f"byte 0x{body[start]:02X} at column {column}", expected)
        expected += " (the bytes read as Windows-1252 or Latin-1 text: save the file as UTF-8"
    expected += ", as a spreadsheet's 'CSV UTF-8' does)" if file.endswith(".csv") else ")"
    return Defect(file, where, f"byte 0x{body[start]:02X} at column {column}", expected)


class ConfigError(VerdictpackError):
    """A config was refused. ``defects`` lists every defect found, not only the first."""

    def __init__(self, defects: list[Defect] | tuple[Defect, ...]) -> None:
        self.defects: tuple[Defect, ...] = tuple(defects)
        super().__init__("\n".join(d.message() for d in self.defects))


class UsageError(VerdictpackError):
    """The command line was refused."""


class OutputError(VerdictpackError):
    """The output folder cannot be written as asked."""


class InputError(VerdictpackError, ValueError):
    """An argument or observation was refused: parameter, allowed, received."""

    def __init__(self, parameter: str, allowed: str, received: Any) -> None:
        self.parameter = parameter
        self.allowed = allowed
        self.received = received
        super().__init__(
            f"parameter {parameter!r}: expected {allowed}; received {format_value(received)}"
        )
