"""The bounds and helpers the two config readers (JSON in ``_compiler``, YAML in ``_yaml``) share,
so a refusal reads the same whichever syntax the config is written in.

No config nests deeper than 6 levels, and no integer beyond 2^53 - 1 can be hashed: RFC 8785,
the canonical form in provenance, represents none exactly (the kinds' seeds are documented below
2^63, and such a seed crashed the provenance step). Anything past these bounds is refused by name
before any work is done.
"""

from __future__ import annotations

from collections.abc import Iterable

__all__ = [
    "MAX_CONFIG_BYTES",
    "MAX_DEPTH",
    "MAX_INTEGER",
    "Raw",
    "depth_defect",
    "duplicate_key_expected",
    "integer_defect",
    "json_path",
]

MAX_CONFIG_BYTES = 16 * 1024 * 1024
MAX_DEPTH = 64
MAX_INTEGER = 2**53 - 1
_MAX_INTEGER_DIGITS = len(str(MAX_INTEGER))


class Raw:
    """A received token shown as written in the file (``NaN``, not ``"NaN"`` or ``nan``)."""

    def __init__(self, text: str) -> None:
        self.text = text if len(text) <= 80 else text[:77] + "..."

    def __repr__(self) -> str:
        return self.text


def json_path(loc: Iterable[str | int]) -> str:
    """The JSON path of ``loc`` as the defects name it: ``$.a.b[0]`` (the root ``$``)."""
    return "$" + "".join(f"[{p}]" if isinstance(p, int) else f".{p}" for p in loc)


def integer_defect(token: str) -> str | None:
    """What is wrong with an integer token, or None; never converts an overlong token."""
    digits = len(token) - token.startswith("-")
    if digits > _MAX_INTEGER_DIGITS or abs(int(token)) > MAX_INTEGER:
        return (
            f"an integer of magnitude at most {MAX_INTEGER} (2^53 - 1: the canonical JSON "
            "hashed into provenance, RFC 8785, represents no larger integer exactly)"
        )
    return None


def depth_defect(where: str) -> tuple[Raw, str]:
    """(received, expected) of a nesting deeper than MAX_DEPTH, found at ``where``."""
    return (
        Raw(f"a nesting deeper than {MAX_DEPTH} levels"),
        f"at most {MAX_DEPTH} levels of nested arrays and objects (no config needs more than "
        f"6; {where})",
    )


def duplicate_key_expected(repeated: str, first: str) -> str:
    """The expected text of a repeated key, ``repeated`` and ``first`` as ``line N, column M``."""
    return (
        f"each key once per object (this key is repeated at {repeated}; first at {first}; a "
        "parser would silently keep only one of them)"
    )
