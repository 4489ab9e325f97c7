"""The YAML reader of configs (``.yaml`` / ``.yml``): the JSON data model, written with comments.

A YAML config must read the same to every reader, and the same as the JSON config with the same
content (one canonical value, one hash in provenance). So the document is read from PyYAML's
event stream (``yaml.parse`` with the SafeLoader: every node with its line and column) and the
plain dicts, lists and scalars are built here, by these rules:

* refused outright: a tag (``!!str``, ``!custom``: a tag changes what a node means), an anchor or
  an alias (``&a`` / ``*a``: one node in two places, and the way to a "billion laughs"), the
  merge key ``<<`` (YAML 1.1 only: a 1.2 reader sees a key named ``<<``), a key that is not a
  string (``1:``, ``true:``, ``null:``, a list or mapping as a key), a repeated key at any depth
  (naming both lines), a second document, nesting deeper than MAX_DEPTH;
* a quoted or block scalar (``'...'``, ``"..."``, ``|``, ``>``) is a string;
* a plain (unquoted) scalar is read only where YAML 1.1 (PyYAML, many tools) and YAML 1.2 (the
  core schema) agree and JSON would write it the same: ``true`` / ``false`` (also ``True``,
  ``TRUE`` ...), ``null`` / ``~`` / nothing, integers as JSON writes them (``-12``), floats with a
  dot and a signed exponent if any (``0.25``, ``1.0e-4``), and text that both versions read as
  text. Everything else is refused by name, with how to write it: ``yes`` / ``no`` / ``on`` /
  ``off`` / ``y`` / ``n`` (booleans in 1.1, strings in 1.2), ``010`` (octal 8 in 1.1, 10 in 1.2),
  ``1_000``, ``0x1F``, ``0o17``, ``1:20`` (sexagesimal in 1.1), ``1e-4`` and ``1.5e5`` (strings in
  1.1, floats in 1.2), ``.5``, ``+1``, unquoted dates and times (timestamps in 1.1), and the
  non-finite ``.inf`` / ``.nan`` (refused as NaN and Infinity are in JSON);
* an integer beyond 2^53 - 1, a float overflowing its range, a string no UTF-8 can encode (a lone
  surrogate escape) are refused as in JSON; ``-0.0`` reads as ``0.0``.

Every defect names the file, the JSON path, the value as written, what was expected and its
line and column; the positions of the keys and items asked for are returned too (read again
only when a schema defect must name its line: a table of every node would cost many times the
file's size).
"""

from __future__ import annotations

import math
import re
from collections.abc import Set as AbstractSet
from typing import Any

import yaml

from verdictpack._errors import ConfigError, Defect
from verdictpack.config._strict import (
    MAX_DEPTH,
    Raw,
    depth_defect,
    duplicate_key_expected,
    integer_defect,
    json_path,
)

__all__ = ["YAML_SUFFIXES", "decode_yaml", "is_yaml"]

Loc = tuple[str | int, ...]
Positions = dict[Loc, tuple[int, int]]

YAML_SUFFIXES = (".yaml", ".yml")

_INT = re.compile(r"-?(?:0|[1-9][0-9]*)")
_FLOAT = re.compile(r"-?(?:0|[1-9][0-9]*)\.[0-9]+(?:[eE][-+][0-9]+)?")
_TRUE = ("true", "True", "TRUE")
_FALSE = ("false", "False", "FALSE")
_NULL = ("null", "Null", "NULL", "~", "")
# YAML 1.1's booleans that 1.2 reads as strings (PyYAML reads y and n as strings, the 1.1 spec
# as booleans)
_BOOL_WORDS = re.compile(r"(?i:y|n|yes|no|on|off)")
# YAML 1.2 core schema: what a 1.2 reader takes for a number
_CORE_NUMBER = re.compile(
    r"[-+]?[0-9]+|0o[0-7]+|0x[0-9a-fA-F]+|[-+]?(?:\.[0-9]+|[0-9]+(?:\.[0-9]*)?)(?:[eE][-+]?[0-9]+)?"
)
_NON_FINITE = re.compile(r"[-+]?\.(?:inf|Inf|INF)|\.(?:nan|NaN|NAN)")
_TAG = "tag:yaml.org,2002:"
_RESOLVER = yaml.resolver.Resolver()


def is_yaml(name: str) -> bool:
    """Whether a config file name is read as YAML (by its suffix; anything else is JSON)."""
    return name.lower().endswith(YAML_SUFFIXES)


def _where(mark: Any) -> str:
    return f"line {mark.line + 1}, column {mark.column + 1}"


def _plain(value: str) -> tuple[Any, str | None]:
    """A plain scalar's value, or (None, what is expected instead) when readers disagree."""
    if value in _TRUE:
        return True, None
    if value in _FALSE:
        return False, None
    if value in _NULL:
        return None, None
    if _INT.fullmatch(value):
        problem = integer_defect(value)  # before int(): past 4,300 digits int() raises
        return (None if problem else int(value)), problem
    if _FLOAT.fullmatch(value):
        number = float(value)
        if not math.isfinite(number):
            return None, "a number within the range of a 64-bit float (about 1.8e308)"
        return (0.0 if number == 0.0 else number), None
    tag11 = _RESOLVER.resolve(yaml.ScalarNode, value, (True, False))
    if _NON_FINITE.fullmatch(value):
        return None, (
            "a finite number (.inf and .nan are refused, as NaN and Infinity are in JSON)"
        )
    if _BOOL_WORDS.fullmatch(value):
        return None, (
            f"true or false, or a quoted string ({value} is a boolean to a YAML 1.1 reader and a "
            "string to a YAML 1.2 one)"
        )
    if tag11 == _TAG + "timestamp":
        return None, (
            f"a quoted string such as '{value}' (an unquoted date or time is a timestamp to a "
            "YAML 1.1 reader and a string to a YAML 1.2 one)"
        )
    if tag11 in (_TAG + "int", _TAG + "float") or _CORE_NUMBER.fullmatch(value):
        return None, (
            "a number written as JSON writes it (10, 0.25, 1.0e-4: a dot and a signed exponent), "
            f"or a quoted string ('{value}' reads differently in YAML 1.1 and 1.2: octal, hex, "
            "underscores, sexagesimal, an unsigned exponent or a leading dot or sign)"
        )
    if tag11 != _TAG + "str":
        return None, f"a quoted string ('{value}' has a special meaning in YAML 1.1)"
    return value, None


class _Reader:
    """Builds the value from the event stream, collecting every defect with its position."""

    def __init__(self, display: str, want: AbstractSet[Loc] | None = None) -> None:
        self.display = display
        self.defects: list[Defect] = []
        # the (line, column) of the paths in ``want`` only (none without it): positions are
        # looked up for the paths a defect names, as a table of every node would cost many
        # times the file's size
        self.want = want
        self.positions: Positions = {}
        # each frame: [path, container, pending key (_KEY: the next node is a key; _SKIP: the
        #              next value belongs to a refused key), keys seen -> mark, (is the
        #              container itself a key, its start mark)]
        self.stack: list[list[Any]] = []
        self.root: Any = None

    def refuse(self, loc: Loc, received: Any, expected: str, mark: Any) -> None:
        self.defects.append(
            Defect(self.display, json_path(loc), received, f"{expected}; at {_where(mark)}")
        )

    def next_path(self) -> tuple[Loc, bool]:
        """The path of the node about to start, and whether it is a mapping key."""
        if not self.stack:
            return (), False
        path, container, pending = self.stack[-1][:3]
        if isinstance(container, list):
            return (*path, len(container)), False
        if pending is _KEY:
            return path, True
        return (*path, pending), False

    def node_checks(self, event: Any, loc: Loc) -> None:
        mark = event.start_mark
        if event.anchor is not None:
            self.refuse(
                loc,
                Raw(f"&{event.anchor}"),
                "no anchor (anchors and aliases put one node in two places; write the value "
                "out where it is used)",
                mark,
            )
        if getattr(event, "tag", None) is not None:
            self.refuse(
                loc,
                Raw(str(event.tag).replace(_TAG, "!!")),
                "no tag (a tag changes what a node means to each reader; quote a string, "
                "write a number as a number)",
                mark,
            )

    def place(self, loc: Loc, mark: Any) -> None:
        """Record where the node at ``loc`` starts, if ``loc`` is wanted."""
        if self.want is not None and loc in self.want:
            self.positions.setdefault(loc, (mark.line + 1, mark.column + 1))

    def add(self, value: Any, mark: Any, is_key: bool, loc: Loc) -> None:
        """Place a finished node (value, or key when ``is_key``) into its parent."""
        if not self.stack:
            self.root = value
            self.place((), mark)
            return
        frame = self.stack[-1]
        path, container, pending, seen = frame[:4]
        if isinstance(container, list):
            if self.want is not None:
                self.place((*path, len(container)), mark)
            container.append(value)
            return
        if is_key:
            if not isinstance(value, str):
                frame[2] = _SKIP
                return
            if value in seen:
                self.defects.append(
                    Defect(
                        self.display,
                        json_path((*path, value)),
                        value,
                        duplicate_key_expected(_where(mark), _where(seen[value])),
                    )
                )
                frame[2] = _SKIP
                return
            seen[value] = mark
            if self.want is not None:
                self.place((*path, value), mark)
            frame[2] = value
            return
        if pending is not _SKIP:
            container[pending] = value
        frame[2] = _KEY

    def scalar(self, event: Any) -> None:
        loc, is_key = self.next_path()
        self.node_checks(event, loc)
        mark = event.start_mark
        value: Any = event.value
        if event.style is None:  # plain: resolved by the rules above
            if is_key and value == "<<":
                self.refuse(
                    loc,
                    Raw("<<"),
                    "no merge key (<< merges a mapping for a YAML 1.1 reader and is a key "
                    "named '<<' for a YAML 1.2 one; write the keys out)",
                    mark,
                )
                value = _SKIP
            else:
                value, problem = _plain(value)
                if problem is not None:
                    self.refuse(loc, Raw(event.value), problem, mark)
                    value = _SKIP if is_key else None
        else:
            try:
                value.encode("utf-8")
            except UnicodeEncodeError:
                self.refuse(
                    loc,
                    Raw(event.value.encode("utf-8", "backslashreplace").decode("ascii")),
                    "a string of Unicode characters (a lone surrogate escape such as \\ud800 "
                    "encodes none)",
                    mark,
                )
        if is_key and value is not _SKIP and not isinstance(value, str):
            self.refuse(
                loc,
                value,
                "a string key (quote it: a key that reads as a number, boolean or null is "
                "not a JSON key)",
                mark,
            )
        self.add(value, mark, is_key, loc)

    def start(self, event: Any, container: Any) -> bool:
        """Open a mapping or sequence; False when past MAX_DEPTH (the read stops there)."""
        loc, is_key = self.next_path()
        self.node_checks(event, loc)
        if len(self.stack) >= MAX_DEPTH:
            received, expected = depth_defect(_where(event.start_mark))
            self.defects.append(Defect(self.display, json_path(loc), received, expected))
            return False
        if is_key:
            self.refuse(
                loc,
                Raw("a list or mapping used as a key"),
                "a string key (a complex key, '? ...', is not a JSON key)",
                event.start_mark,
            )
        self.stack.append([loc, container, _KEY, {}, (is_key, event.start_mark)])
        return True

    def end(self) -> None:
        frame = self.stack.pop()
        loc, container, _, _, (is_key, mark) = frame
        self.add(_SKIP if is_key else container, mark, is_key, loc)


class _Sentinel:
    def __init__(self, name: str) -> None:
        self.name = name

    def __repr__(self) -> str:
        return self.name


_KEY = _Sentinel("(next node is a key)")
_SKIP = _Sentinel("(refused key: its value is dropped)")


def decode_yaml(
    text: str, display: str, want: AbstractSet[Loc] | None = None
) -> tuple[Any, Positions]:
    """The value of a YAML config and the (line, column) of each key and item whose JSON path
    is in ``want`` (none without it); ConfigError with every defect (see the module
    docstring)."""
    reader = _Reader(display, want)
    documents = 0
    try:
        for event in yaml.parse(text, Loader=yaml.SafeLoader):
            if isinstance(event, yaml.DocumentStartEvent):
                documents += 1
                if documents > 1:
                    reader.defects.append(
                        Defect(
                            display,
                            "$",
                            Raw("a second YAML document"),
                            f"one document per config (another starts at "
                            f"{_where(event.start_mark)})",
                        )
                    )
                    break
            elif isinstance(event, yaml.AliasEvent):
                loc, is_key = reader.next_path()
                reader.refuse(
                    loc,
                    Raw(f"*{event.anchor}"),
                    "no alias (anchors and aliases put one node in two places; write the value "
                    "out where it is used)",
                    event.start_mark,
                )
                reader.add(_SKIP if is_key else None, event.start_mark, is_key, loc)
            elif isinstance(event, yaml.ScalarEvent):
                reader.scalar(event)
            elif isinstance(event, yaml.MappingStartEvent):
                if not reader.start(event, {}):
                    break
            elif isinstance(event, yaml.SequenceStartEvent):
                if not reader.start(event, []):
                    break
            elif isinstance(event, (yaml.MappingEndEvent, yaml.SequenceEndEvent)):
                reader.end()
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None) or getattr(exc, "context_mark", None)
        problem = getattr(exc, "problem", None) or getattr(exc, "context", None) or str(exc)
        where = "" if mark is None else f"{_where(mark)}: "
        reader.defects.append(
            Defect(display, "$", Raw("(invalid YAML)"), f"valid YAML ({where}{problem})")
        )
    if reader.defects:
        raise ConfigError(reader.defects)
    return reader.root, reader.positions
