"""Reading the one config file strictly: step 1 of a config's validation.

The file itself (missing, a folder, a FIFO or device, unreadable, too large, not UTF-8, not
JSON, not an object) is refused by name, and its text decoded strictly: a duplicated key, NaN /
Infinity, an integer beyond 2^53 - 1, a number beyond a float's range, a lone surrogate or
nesting deeper than MAX_DEPTH is refused at its JSON path and line (``json.loads`` would
silently keep the last key, accept NaN, or crash); ``-0.0`` reads as ``0.0``. A ``.yaml`` /
``.yml`` file is read into the same value by :mod:`verdictpack.config._yaml`.
"""

from __future__ import annotations

import bisect
import hashlib
import json
import math
import os
import re
import stat
from collections.abc import Iterable
from collections.abc import Set as AbstractSet
from dataclasses import dataclass
from dataclasses import field as _field
from pathlib import Path
from typing import Any

from verdictpack._errors import MISSING, ConfigError, Defect, not_utf8
from verdictpack.config._strict import (
    MAX_CONFIG_BYTES,
    MAX_DEPTH,
    depth_defect,
    duplicate_key_expected,
    json_path,
)
from verdictpack.config._strict import Raw as _Raw
from verdictpack.config._strict import integer_defect as _integer_defect
from verdictpack.config._yaml import decode_yaml, is_yaml

__all__ = ["ConfigSource", "Loc", "decode_config_at", "load_source"]


# The loader's bounds (MAX_CONFIG_BYTES, MAX_DEPTH, MAX_INTEGER) live in _strict, shared with
# the YAML reader.
Loc = tuple[str | int, ...]


@dataclass(frozen=True)
class ConfigSource:
    """The bytes of the one config verdictpack reads, and how to name it in messages.

    ``json()`` is the strictly decoded value (see :func:`decode_config_at`), decoded once and
    handed out as a fresh copy, so every consumer (the schema, the cross rules, the canonical
    hash of provenance) sees the same normalised value.
    """

    display: str
    name: str
    data: bytes
    _value: Any = _field(default=MISSING, repr=False, compare=False)
    folder: Path | None = _field(default=None, compare=False)
    # (line, column) of the paths looked up so far (None: not in the file); filled by reading
    # the bytes again for the paths a defect names, never a table of every node (that cost
    # 10-15 times the file's size)
    _positions: Any = _field(default=None, repr=False, compare=False)

    @property
    def sha256(self) -> str:
        return hashlib.sha256(self.data).hexdigest()

    def _decode(self) -> None:
        value, _ = decode_config_at(self.data, self.display)
        object.__setattr__(self, "_value", value)

    def json(self) -> Any:
        """A fresh copy of the decoded value, the caller's to change."""
        return _copy_json(self.value())

    def release(self) -> None:
        """Forget the decoded value (decoded again from the bytes if asked for): a validated
        config is read from its model, so the value need not be held beside it."""
        object.__setattr__(self, "_value", MISSING)

    def value(self) -> Any:
        """The decoded value itself, read-only (never changed: every reader shares it)."""
        if self._value is MISSING:
            self._decode()
        return self._value

    def positions(self, locs: Iterable[Loc]) -> dict[Loc, tuple[int, int] | None]:
        """(line, column) of the key or item at each of ``locs``, else of its nearest ancestor
        that is in the file (a missing field: the object it is missing from); None for bytes not
        read. The bytes are read again once for all of them."""
        if self._positions is None:
            object.__setattr__(self, "_positions", {})
        known: dict[Loc, tuple[int, int] | None] = self._positions
        wanted = [tuple(loc) for loc in locs]
        missing = {loc[:k] for loc in wanted for k in range(len(loc) + 1)} - known.keys()
        if missing:
            try:
                _, found = decode_config_at(self.data, self.display, missing)
            except ConfigError:
                found = {}
            known.update({loc: found.get(loc) for loc in missing})
        out: dict[Loc, tuple[int, int] | None] = {}
        for loc in wanted:
            key = loc
            while known.get(key) is None and key:
                key = key[:-1]
            out[loc] = known.get(key)
        return out


def _copy_json(value: Any) -> Any:
    """A fresh copy of a decoded value (its dicts and lists; the scalars are immutable), without
    ``copy.deepcopy``'s memo of every object (as large again as the value). Its depth is bounded
    by MAX_DEPTH, as the decoders refuse deeper nesting."""
    if isinstance(value, dict):
        return {key: _copy_json(item) for key, item in value.items()}
    if isinstance(value, list):
        return [_copy_json(item) for item in value]
    return value


class _Refused(Exception):
    """Raised by the decoder hooks (a backstop: the scanner reports these with their path)."""

    def __init__(self, defect: Defect) -> None:
        super().__init__(defect.message())
        self.defect = defect


_WS = re.compile(r"[ \t\n\r]*")
_STRING = re.compile(r'"(?:[^"\\\x00-\x1f]|\\(?:["\\/bfnrt]|u[0-9a-fA-F]{4}))*"')
_NUMBER = re.compile(r"-?(?:0|[1-9][0-9]*)(\.[0-9]+)?([eE][-+]?[0-9]+)?")
_WORD = re.compile(r"true|false|null|NaN|-?Infinity")
_NOT_JSON = "a finite JSON number (NaN, Infinity and -Infinity are not JSON)"


def _where(text: str, pos: int) -> str:
    line = text.count("\n", 0, pos) + 1
    column = pos - (text.rfind("\n", 0, pos) + 1) + 1
    return f"line {line}, column {column}"


def _scan(
    text: str, positions: dict[Loc, int] | None = None, want: AbstractSet[Loc] | None = None
) -> list[tuple[tuple[str | int, ...], Any, str, int]] | None:
    """Walk the JSON text without recursion and report what a lenient parser would let through:
    duplicate keys, NaN / Infinity, integers past every bound, numbers overflowing a float, lone
    surrogates and nesting deeper than MAX_DEPTH, each as (path, received, expected, position).

    Returns None when the text is not JSON at all (``json.loads`` then names the syntax error).
    ``positions`` (when given) receives the offset of every key and array item by JSON path (of
    the first occurrence of a repeated key), so a schema defect can name its line; only of the
    paths in ``want`` when that is given (a table of every node costs 10-15x the text).
    A nesting past MAX_DEPTH stops the scan: it is reported once, at the container that crosses
    the bound.
    """
    found: list[tuple[tuple[str | int, ...], Any, str, int]] = []
    # each frame: [path, is_object, keys seen -> position of first occurrence, next index]
    stack: list[list[Any]] = []
    path: tuple[str | int, ...] = ()
    state = "value"
    end = len(text)
    pos = _WS.match(text, 0).end()  # type: ignore[union-attr]
    for _ in range(end + 2):  # every pass consumes at least one character or ends the scan
        if state == "value":
            if pos >= end:
                return None
            if positions is not None and (want is None or path in want):
                positions.setdefault(path, pos)
            char = text[pos]
            if char in "[{":
                if len(stack) >= MAX_DEPTH:
                    found.append((path, *depth_defect(_where(text, pos)), pos))
                    return found
                stack.append([path, char == "{", {}, 0])
                pos = _WS.match(text, pos + 1).end()  # type: ignore[union-attr]
                if pos < end and text[pos] == ("}" if char == "{" else "]"):
                    stack.pop()
                    pos += 1
                    state = "after"
                elif char == "{":
                    state = "key"
                else:
                    path = (*path, 0)
                continue
            if char == '"':
                m = _STRING.match(text, pos)
                if m is None:
                    return None
                token = m.group()
                if "\\u" in token:
                    try:
                        json.loads(token).encode("utf-8")
                    except UnicodeEncodeError:
                        found.append(
                            (
                                path,
                                _Raw(token),
                                "a string of Unicode characters (a lone surrogate escape such "
                                f"as \\ud800 encodes none; {_where(text, pos)})",
                                pos,
                            )
                        )
                pos = m.end()
                state = "after"
                continue
            w = _WORD.match(text, pos)
            if w is not None:
                if w.group() not in ("true", "false", "null"):
                    found.append(
                        (path, _Raw(w.group()), f"{_NOT_JSON}; at {_where(text, pos)}", pos)
                    )
                pos = w.end()
                state = "after"
                continue
            m = _NUMBER.match(text, pos)
            if m is None:
                return None
            token = m.group()
            if m.group(1) is None and m.group(2) is None:
                problem = _integer_defect(token)
            else:
                problem = (
                    None
                    if math.isfinite(float(token))
                    else "a number within the range of a 64-bit float (about 1.8e308)"
                )
            if problem is not None:
                found.append((path, _Raw(token), f"{problem}; at {_where(text, pos)}", pos))
            pos = m.end()
            state = "after"
        elif state == "key":
            frame = stack[-1]
            m = _STRING.match(text, pos)
            if m is None:
                return None
            token = m.group()
            key = json.loads(token) if "\\" in token else token[1:-1]
            path = (*frame[0], key)
            if key in frame[2]:
                found.append(
                    (
                        path,
                        key,
                        duplicate_key_expected(_where(text, pos), _where(text, frame[2][key])),
                        pos,
                    )
                )
            else:
                frame[2][key] = pos
                if positions is not None and (want is None or path in want):
                    positions.setdefault(path, pos)
            pos = _WS.match(text, m.end()).end()  # type: ignore[union-attr]
            if pos >= end or text[pos] != ":":
                return None
            pos = _WS.match(text, pos + 1).end()  # type: ignore[union-attr]
            state = "value"
        else:  # after a value
            pos = _WS.match(text, pos).end()  # type: ignore[union-attr]
            if not stack:
                return found if pos == end else None
            frame = stack[-1]
            char = text[pos] if pos < end else ""
            if char == ",":
                pos = _WS.match(text, pos + 1).end()  # type: ignore[union-attr]
                if frame[1]:
                    state = "key"
                else:
                    frame[3] += 1
                    path = (*frame[0], frame[3])
                    state = "value"
            elif char == ("}" if frame[1] else "]"):
                stack.pop()
                path = frame[0]
                pos += 1
            else:
                return None
    return None  # pragma: no cover - the loop consumes input on every pass


def _line_columns(text: str, offsets: dict[Loc, int]) -> dict[Loc, tuple[int, int]]:
    """Character offsets as (line, column), both from 1."""
    starts = [0] + [m.end() for m in re.finditer("\n", text)]
    out: dict[Loc, tuple[int, int]] = {}
    for loc, pos in offsets.items():
        line = bisect.bisect_right(starts, pos)
        out[loc] = (line, pos - starts[line - 1] + 1)
    return out


def decode_config_at(
    data: bytes, display: str, want: AbstractSet[Loc] | None = None
) -> tuple[Any, dict[Loc, tuple[int, int]]]:
    """Decode config bytes strictly: the value, and the (line, column) of each key and array
    item whose JSON path (the root at ``()``) is in ``want``, so a schema defect can name its
    line.

    Refused (ConfigError naming the JSON path and line): anything that ``json.loads`` would
    silently accept or choke on: duplicate keys (the last would win), NaN and Infinity, integers
    past 2^53 - 1, numbers overflowing a float, lone surrogates, nesting deeper than MAX_DEPTH
    (which would crash the parser). ``-0.0`` is read as ``0.0``, so one canonical config gives
    one set of output bytes. A ``display`` ending in ``.yaml`` / ``.yml`` is read as YAML, by the
    rules of :mod:`verdictpack.config._yaml` (the same value as JSON with the same content, the
    same refusals and more).

    Without ``want`` no position is kept (a valid config needs none: the value alone costs a
    few times the file's size). With it, a JSON text is only scanned again (the value is not
    built: ``None`` is returned in its place).
    """
    syntax = "YAML" if is_yaml(display) else "JSON"

    def refuse(expected: str, received: str) -> ConfigError:
        return ConfigError([Defect(display, "$", _Raw(received), expected)])

    try:
        text = data.decode("utf-8-sig")  # a byte-order mark (as Notepad saves) is not content
    except UnicodeDecodeError:
        bad = not_utf8(display, data)
        expected = bad.expected.replace("UTF-8 text", f"UTF-8 encoded {syntax}", 1)
        raise refuse(expected, f"{bad.received} of {bad.path}") from None
    if syntax == "YAML":
        return decode_yaml(text, display, want)
    offsets: dict[Loc, int] = {}
    found = _scan(text, offsets, want if want is not None else frozenset())
    if want is not None and found == []:
        return None, _line_columns(text, offsets)
    if found:
        raise ConfigError(
            [
                Defect(display, json_path(loc), received, expected)
                for loc, received, expected, _ in found
            ]
        )

    # The hooks repeat the scanner's checks without a path: a backstop, should the two grammars
    # ever disagree.
    def parse_constant(token: str) -> Any:
        raise _Refused(Defect(display, "$", _Raw(token), _NOT_JSON))

    def parse_int(token: str) -> int:
        problem = _integer_defect(token)
        if problem is not None:
            raise _Refused(Defect(display, "$", _Raw(token), problem))
        return int(token)

    def parse_float(token: str) -> float:
        value = float(token)
        if not math.isfinite(value):
            raise _Refused(Defect(display, "$", _Raw(token), "a number within a float's range"))
        return 0.0 if value == 0.0 else value  # -0.0 reads as 0.0

    def pairs(items: list[tuple[str, Any]]) -> dict[str, Any]:
        out: dict[str, Any] = {}
        for key, value in items:
            if key in out:
                raise _Refused(Defect(display, "$", key, "each key once per object"))
            out[key] = value
        return out

    try:
        value = json.loads(
            text,
            parse_constant=parse_constant,
            parse_int=parse_int,
            parse_float=parse_float,
            object_pairs_hook=pairs,
        )
        return value, {}
    except _Refused as exc:
        raise ConfigError([exc.defect]) from None
    except RecursionError:
        raise refuse(f"at most {MAX_DEPTH} levels of nesting", "(nested too deeply)") from None
    except json.JSONDecodeError as exc:
        raise refuse(
            f"valid JSON (line {exc.lineno}, column {exc.colno}: {exc.msg})", "(invalid JSON)"
        ) from None


_FILE_TYPES = (
    (stat.S_ISFIFO, "(a FIFO)"),
    (stat.S_ISSOCK, "(a socket)"),
    (stat.S_ISCHR, "(a character device)"),
    (stat.S_ISBLK, "(a block device)"),
)


def _file_type(mode: int) -> str:
    return next((name for test, name in _FILE_TYPES if test(mode)), "(not a regular file)")


def load_source(path: str | Path) -> ConfigSource:
    """Read exactly the path given (never a same-named file elsewhere), strictly.

    Only a regular file is opened (a FIFO or a device would block or never end), non-blocking,
    and bounded in size; it is decoded here, so a malformed config is refused before any work.
    """
    p = Path(path)
    display = str(path)

    def refuse(expected: str, received: str | None = None) -> ConfigError:
        shown = MISSING if received is None else _Raw(received)
        return ConfigError([Defect(display, "$", shown, expected)])

    try:
        st = os.stat(p)
    except (FileNotFoundError, NotADirectoryError):
        raise refuse("an existing config file, JSON or YAML (no such file)") from None
    except OSError as exc:
        raise refuse(f"a readable file ({exc.strerror})", "(unreadable)") from None
    if stat.S_ISDIR(st.st_mode):
        raise refuse("a JSON config file, not a directory", "(a directory)")
    if not stat.S_ISREG(st.st_mode):
        raise refuse("a regular JSON config file", _file_type(st.st_mode))
    flags = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0)
    try:
        fd = os.open(p, flags)
        with os.fdopen(fd, "rb") as handle:
            now = os.fstat(handle.fileno())
            if not stat.S_ISREG(now.st_mode):  # replaced between the stat and the open
                raise refuse("a regular JSON config file", _file_type(now.st_mode))
            # a buffer of the file's size, not of the bound (16 MiB for every config)
            data = handle.read(min(now.st_size, MAX_CONFIG_BYTES) + 1)
            if len(data) > now.st_size:  # grown since: read on, up to the bound
                data += handle.read(MAX_CONFIG_BYTES + 1 - len(data))
    except OSError as exc:
        raise refuse(f"a readable file ({exc.strerror})", "(unreadable)") from None
    if len(data) > MAX_CONFIG_BYTES:
        raise refuse(
            f"a config of at most {MAX_CONFIG_BYTES // (1024 * 1024)} MiB", "(a larger file)"
        )
    value, _ = decode_config_at(data, display)
    return ConfigSource(
        display=display, name=p.name, data=data, _value=value, folder=p.resolve().parent
    )
