"""The construct compiler and the config loader shared by every layer.

A config is one JSON file, or one YAML file (``.yaml`` / ``.yml``, read into the same value by
:mod:`verdictpack.config._yaml`, which refuses what YAML readers disagree on). Loading it goes
through three steps, and every defect of every step is collected before anything is refused, so
the user sees the complete list at once:

1. the file itself (missing, a folder, a FIFO or device, unreadable, too large, not UTF-8, not
   JSON, not an object), decoded strictly: a duplicated key, NaN / Infinity, an integer beyond
   2^53 - 1, a number beyond a float's range, a lone surrogate or nesting deeper than MAX_DEPTH
   is refused at its JSON path and line (``json.loads`` would silently keep the last key, accept
   NaN, or crash); ``-0.0`` reads as ``0.0``;
2. the schema of its ``kind`` (pydantic, strict types, unknown keys refused);
3. cross-field rules that a schema cannot express (``e_boundary`` equal to
   ``1/per_tail_alpha``, an extension minimum not above the registered threshold, ...). These
   run on the raw JSON, so they are reported even when step 2 found other defects.

Each defect names the file, the JSON path, the value received, what was expected and, for a
config read from a file, the line and column where it is.
"""

from __future__ import annotations

import bisect
import hashlib
import json
import math
import os
import re
import stat
from collections.abc import Callable, Iterable, Mapping
from collections.abc import Set as AbstractSet
from dataclasses import dataclass
from dataclasses import field as _field
from pathlib import Path
from typing import Annotated, Any, Literal, TypeVar, get_args, get_origin

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from verdictpack._errors import MISSING, ConfigError, Defect, InputError
from verdictpack.config._strict import (
    MAX_CONFIG_BYTES,
    MAX_DEPTH,
    MAX_INTEGER,
    depth_defect,
    duplicate_key_expected,
)
from verdictpack.config._strict import Raw as _Raw
from verdictpack.config._strict import integer_defect as _integer_defect
from verdictpack.config._yaml import decode_yaml, is_yaml
from verdictpack.core._scales import h_from_odds_ratio, p_from_h, phi

__all__ = [
    "CONFOUND_NAMES",
    "MAX_CONFIG_BYTES",
    "MAX_DEPTH",
    "MAX_INTEGER",
    "ConfigSource",
    "Construct",
    "ConstructSpec",
    "CrossRule",
    "StrictModel",
    "compile_construct",
    "construct_rules",
    "decode_config",
    "json_path",
    "load_source",
    "parse_config",
    "sequential_construct_rules",
    "unique_names",
]

# ----------------------------------------------------------------------------------------------
# Schema building blocks
# ----------------------------------------------------------------------------------------------


class StrictModel(BaseModel):
    """Base of every config model: strict types, unknown keys refused, immutable, and no NaN or
    infinity in any float (the loader refuses them in a file; this refuses them from the API)."""

    model_config = ConfigDict(extra="forbid", strict=True, frozen=True, allow_inf_nan=False)


Probability = Annotated[float, Field(gt=0.0, lt=1.0, description="a probability in (0, 1)")]
NonEmptyText = Annotated[str, Field(min_length=1)]

CONFOUND_NAMES = ("position", "density", "register", "length", "framing", "reader", "known_null")
ConfoundName = Literal[
    "position", "density", "register", "length", "framing", "reader", "known_null"
]


class Thresholds(StrictModel):
    """The registered practical threshold, stated two ways; the smaller effect governs."""

    h: float = Field(gt=0.0, description="Cohen's h threshold (> 0)")
    odds_ratio: float = Field(gt=1.0, description="odds-ratio threshold (> 1)")


class StreamRoles(StrictModel):
    """What the two evidence streams are."""

    model: NonEmptyText = Field(description="the stream of LLM-judge preferences")
    human: NonEmptyText = Field(description="the stream of human preferences")


class Confound(StrictModel):
    """A known confound of the construct; each becomes a precommitted arm in the engine."""

    name: ConfoundName = Field(
        description="the confound: one of position, density, register, length, framing, reader, "
        "known_null; the engine stresses it in its own precommitted arm"
    )
    description: NonEmptyText = Field(
        description="free text: how this confound could move the judges without the effect"
    )
    crossed_with: list[ConfoundName] = Field(
        default_factory=list,
        description="other confounds to stress together with this one, one extra engine arm "
        "per name (default: none)",
    )


class ConstructSpec(StrictModel):
    """The full construct: every registered field is required, nothing is guessed; only
    ``per_tail_alpha`` and ``e_boundary`` may be left out, being functions of ``alpha``
    (alpha / 4 and its inverse: derived, recorded in the compiled construct, and refused when
    given and inconsistent)."""

    name: NonEmptyText = Field(description="the construct's name (identity, reported)")
    version: NonEmptyText = Field(description="the construct's version (identity, reported)")
    transformation: NonEmptyText = Field(description="what distinguishes treatment from null item")
    metric: NonEmptyText = Field(description="the preference measured per root event")
    direction: Literal["greater", "less"] = Field(
        description="'greater': the claim is that judges prefer the treatment MORE than humans do"
    )
    human_baseline_rate: Probability
    thresholds: Thresholds = Field(
        description="the registered practical threshold as Cohen's h and as an odds ratio; both "
        "are converted to h at the baseline and the smaller effect governs"
    )
    extension_minimum_h: float = Field(gt=0.0, description="weaker minimum of the extension track")
    alpha: float = Field(gt=0.0, lt=0.5, description="joint error level of the h-interval")
    per_tail_alpha: float | None = Field(
        default=None,
        gt=0.0,
        lt=0.5,
        description="alpha / 4: one tail of one stream (derived from alpha when omitted; "
        "refused when given and not alpha / 4)",
    )
    e_boundary: float | None = Field(
        default=None,
        gt=1.0,
        description="1 / per_tail_alpha (derived when omitted; refused when given and not)",
    )
    stream_roles: StreamRoles = Field(
        description="what the two evidence streams are (the LLM-judge and the human stream)"
    )
    registered_claim: NonEmptyText = Field(
        description="the registered claim, tested at the governing threshold (free text, reported)"
    )
    extension_claim: NonEmptyText = Field(
        description="the extension claim, tested at extension_minimum_h and kept apart from the "
        "registered one (free text, reported)"
    )
    known_confounds: list[Confound] = Field(
        description="the construct's known confounds, each a precommitted arm of the engine "
        "(may be empty)"
    )


# ----------------------------------------------------------------------------------------------
# The compiled construct
# ----------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Construct:
    """A compiled construct: the registered fields plus the derived thresholds."""

    name: str
    version: str
    transformation: str
    metric: str
    direction: str
    human_baseline_rate: float
    threshold_h: float
    threshold_odds_ratio: float
    threshold_h_from_odds_ratio: float
    governing_threshold_h: float
    governs: str
    p1_at_threshold: float
    extension_minimum_h: float
    alpha: float
    per_tail_alpha: float
    e_boundary: float
    model_stream: str
    human_stream: str
    registered_claim: str
    extension_claim: str
    known_confounds: tuple[tuple[str, str, tuple[str, ...]], ...]

    def confound_names(self) -> tuple[str, ...]:
        return tuple(c[0] for c in self.known_confounds)


def compile_construct(spec: ConstructSpec) -> Construct:
    """Derive the governing threshold: both thresholds in h at the baseline, the smaller governs."""
    p0 = spec.human_baseline_rate
    per_tail = spec.alpha / 4.0 if spec.per_tail_alpha is None else spec.per_tail_alpha
    h_or = h_from_odds_ratio(p0, spec.thresholds.odds_ratio)
    if spec.thresholds.h <= h_or:
        governing, governs = spec.thresholds.h, "h"
    else:
        governing, governs = h_or, "odds_ratio"
    return Construct(
        name=spec.name,
        version=spec.version,
        transformation=spec.transformation,
        metric=spec.metric,
        direction=spec.direction,
        human_baseline_rate=p0,
        threshold_h=spec.thresholds.h,
        threshold_odds_ratio=spec.thresholds.odds_ratio,
        threshold_h_from_odds_ratio=h_or,
        governing_threshold_h=governing,
        governs=governs,
        p1_at_threshold=p_from_h(p0, governing),
        extension_minimum_h=spec.extension_minimum_h,
        alpha=spec.alpha,
        per_tail_alpha=per_tail,
        e_boundary=1.0 / per_tail if spec.e_boundary is None else spec.e_boundary,
        model_stream=spec.stream_roles.model,
        human_stream=spec.stream_roles.human,
        registered_claim=spec.registered_claim,
        extension_claim=spec.extension_claim,
        known_confounds=tuple(
            (c.name, c.description, tuple(c.crossed_with)) for c in spec.known_confounds
        ),
    )


# ----------------------------------------------------------------------------------------------
# Cross-field rules on raw JSON
# ----------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class CrossRule:
    """A rule a schema cannot express. ``check`` gets the raw object at ``at`` and returns
    ``(relative path, received, expected)`` triples; it must tolerate malformed input (the schema
    step reports those) by skipping what it cannot read."""

    at: tuple[str | int, ...]
    check: Callable[[dict[str, Any]], Iterable[tuple[tuple[str | int, ...], Any, str]]]


def _num(obj: dict[str, Any], *keys: str) -> float | None:
    """A finite number at obj[k1][k2]..., or None if absent or malformed."""
    cur: Any = obj
    for key in keys:
        if not isinstance(cur, dict) or key not in cur:
            return None
        cur = cur[key]
    if isinstance(cur, bool) or not isinstance(cur, (int, float)) or not math.isfinite(cur):
        return None
    return float(cur)


def _construct_cross(c: dict[str, Any]) -> Iterable[tuple[tuple[str | int, ...], Any, str]]:
    per_tail = _num(c, "per_tail_alpha")
    e_boundary = _num(c, "e_boundary")
    alpha = _num(c, "alpha")
    if per_tail is None and "per_tail_alpha" not in c and alpha is not None and 0 < alpha < 0.5:
        per_tail = alpha / 4.0  # derived: an e_boundary given alone must match it
    if (
        per_tail is not None
        and 0 < per_tail < 0.5
        and e_boundary is not None
        and not math.isclose(e_boundary, 1.0 / per_tail, rel_tol=1e-9)
    ):
        yield (
            ("e_boundary",),
            c["e_boundary"],
            f"1/per_tail_alpha = {1.0 / per_tail:g} (the e-process boundary is derived from "
            "the per-tail alpha)",
        )
    if (
        per_tail is not None
        and alpha is not None
        and 0 < alpha < 0.5
        and not math.isclose(per_tail, alpha / 4.0, rel_tol=1e-9)
    ):
        yield (
            ("per_tail_alpha",),
            c["per_tail_alpha"],
            f"alpha/4 = {alpha / 4.0:g} (alpha is the joint level of the four one-sided "
            "stream tails of the h-interval)",
        )
    p0 = _num(c, "human_baseline_rate")
    h = _num(c, "thresholds", "h")
    odds = _num(c, "thresholds", "odds_ratio")
    ext = _num(c, "extension_minimum_h")
    if p0 is not None and 0 < p0 < 1 and h is not None and h > 0:
        reach = math.pi - phi(p0)
        if h >= reach:
            yield (
                ("thresholds", "h"),
                c["thresholds"]["h"],
                f"an h below {reach:.6g}, the largest effect reachable from the baseline "
                f"rate {p0:g}",
            )
        elif odds is not None and odds > 1 and ext is not None:
            governing = min(h, h_from_odds_ratio(p0, odds))
            if ext > governing:
                yield (
                    ("extension_minimum_h",),
                    c["extension_minimum_h"],
                    f"at most the governing registered threshold h = {governing:.6g} (the "
                    "extension track may only be weaker than the registered one)",
                )
    confounds = c.get("known_confounds")
    if isinstance(confounds, list):
        names = [x.get("name") for x in confounds if isinstance(x, dict)]
        seen: set[str] = set()
        for i, item in enumerate(confounds):
            if not isinstance(item, dict):
                continue
            name = item.get("name")
            if isinstance(name, str) and name in seen:
                yield (("known_confounds", i, "name"), name, "each confound listed once")
            if isinstance(name, str):
                seen.add(name)
            crossed = item.get("crossed_with")
            if isinstance(crossed, list):
                for j, other in enumerate(crossed):
                    if other == name or (isinstance(other, str) and other not in names):
                        yield (
                            ("known_confounds", i, "crossed_with", j),
                            other,
                            "another confound listed in known_confounds",
                        )


def construct_rules(at: tuple[str | int, ...] = ("construct",)) -> list[CrossRule]:
    """The construct's cross-field rules, for a construct block found at ``at``."""
    return [CrossRule(at=at, check=_construct_cross)]


def _greater_only(c: dict[str, Any]) -> Iterable[tuple[tuple[str | int, ...], Any, str]]:
    if c.get("direction") == "less":
        yield (
            ("direction",),
            "less",
            "'greater' for the sequential kinds (state a 'less' claim as 'greater' by swapping "
            "the treatment and its null partner)",
        )


def sequential_construct_rules(at: tuple[str | int, ...] = ("construct",)) -> list[CrossRule]:
    """The construct rules plus the sequential kinds' own: the claim must read 'greater'."""
    return [*construct_rules(at), CrossRule(at=at, check=_greater_only)]


def unique_names(list_key: str, what: str, field: str = "name") -> CrossRule:
    """A rule refusing a repeated ``field`` among the objects of the list ``list_key``."""

    def check(cfg: dict[str, Any]) -> Iterable[tuple[tuple[str | int, ...], Any, str]]:
        items = cfg.get(list_key)
        if not isinstance(items, list):
            return
        seen: set[str] = set()
        for i, item in enumerate(items):
            name = item.get(field) if isinstance(item, dict) else None
            if isinstance(name, str):
                if name in seen:
                    yield ((list_key, i, field), name, f"{what} used once")
                seen.add(name)

    return CrossRule(at=(), check=check)


# ----------------------------------------------------------------------------------------------
# Loading and parsing
# ----------------------------------------------------------------------------------------------


# The loader's bounds (MAX_CONFIG_BYTES, MAX_DEPTH, MAX_INTEGER) live in _strict, shared with
# the YAML reader.
Loc = tuple[str | int, ...]


@dataclass(frozen=True)
class ConfigSource:
    """The bytes of the one config verdictpack reads, and how to name it in messages.

    ``json()`` is the strictly decoded value (see :func:`decode_config`), decoded once and
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

    def data_path(self, relative: str) -> Path:
        """A data file named in the config: ``relative`` to the config's own folder (never the
        working directory). A config given as bytes has no folder: its data paths cannot be read.
        """
        if self.folder is None:
            raise InputError("folder", "the folder of a config read from a file", None)
        return self.folder / relative

    @property
    def sha256(self) -> str:
        return hashlib.sha256(self.data).hexdigest()

    def _decode(self) -> None:
        value, _ = decode_config_at(self.data, self.display)
        object.__setattr__(self, "_value", value)

    def json(self) -> Any:
        if self._value is MISSING:
            self._decode()
        return _copy_json(self._value)

    def position(self, loc: Iterable[str | int]) -> tuple[int, int] | None:
        """(line, column) of the key or item at ``loc``, else of its nearest ancestor that is in
        the file (a missing field: the object it is missing from); None for bytes not read."""
        key = tuple(loc)
        return self.positions([key])[key]

    def positions(self, locs: Iterable[Loc]) -> dict[Loc, tuple[int, int] | None]:
        """:meth:`position` of each of ``locs``, the bytes read again once for all of them."""
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


def decode_config(data: bytes, display: str) -> Any:
    """Decode config bytes strictly; refuse, naming the JSON path (and line), anything that
    ``json.loads`` would silently accept or choke on: duplicate keys (the last would win), NaN
    and Infinity, integers past 2^53 - 1, numbers overflowing a float, lone surrogates, nesting
    deeper than MAX_DEPTH (which would crash the parser). ``-0.0`` is read as ``0.0``, so one
    canonical config gives one set of output bytes. A ``display`` ending in ``.yaml`` / ``.yml``
    is read as YAML, by the rules of :mod:`verdictpack.config._yaml` (the same value as JSON
    with the same content, the same refusals and more).
    """
    return decode_config_at(data, display)[0]


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
    """:func:`decode_config`'s value and the (line, column) of each key and array item whose
    JSON path (the root at ``()``) is in ``want``, so a schema defect can name its line.

    Without ``want`` no position is kept (a valid config needs none: the value alone costs a
    few times the file's size). With it, a JSON text is only scanned again (the value is not
    built: ``None`` is returned in its place); ConfigError as :func:`decode_config`.
    """
    syntax = "YAML" if is_yaml(display) else "JSON"

    def refuse(expected: str, received: str) -> ConfigError:
        return ConfigError([Defect(display, "$", _Raw(received), expected)])

    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        raise refuse(f"UTF-8 encoded {syntax}", "(undecodable bytes)") from None
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


def json_path(loc: Iterable[str | int]) -> str:
    out = "$"
    for part in loc:
        out += f"[{part}]" if isinstance(part, int) else f".{part}"
    return out


def _expected_from_error(err: Mapping[str, Any], model: type[BaseModel]) -> str:
    kind = err["type"]
    if kind == "missing":
        return "this required field (nothing is guessed)"
    if kind == "extra_forbidden":
        allowed = _allowed_keys(model, tuple(err["loc"][:-1]))
        return "no such key (unknown keys are refused; allowed here: " + ", ".join(allowed) + ")"
    msg = str(err["msg"])
    for prefix in ("Input should be ", "Value error, "):
        if msg.startswith(prefix):
            msg = msg[len(prefix) :]
    if msg.startswith(("greater", "less")):
        msg = "a value " + msg
    return msg


def _allowed_keys(model: type[BaseModel], loc: tuple[str | int, ...]) -> list[str]:
    current: Any = model
    for part in loc:
        if isinstance(part, int):
            continue
        if isinstance(current, type) and issubclass(current, BaseModel):
            field = next(
                (f for n, f in current.model_fields.items() if (f.alias or n) == part), None
            )
            if field is None:
                # a tagged-union member name appears in pydantic's loc; skip it
                continue
            current = _unwrap(field.annotation)
        else:
            break
    if isinstance(current, type) and issubclass(current, BaseModel):
        return sorted((f.alias or n) for n, f in current.model_fields.items())
    return []


def _unwrap(annotation: Any) -> Any:
    """The model class inside list[...] / Optional[...] / Annotated[...] where there is one."""
    origin = get_origin(annotation)
    if origin is None:
        return annotation
    for arg in get_args(annotation):
        inner = _unwrap(arg)
        if isinstance(inner, type) and issubclass(inner, BaseModel):
            return inner
    return annotation


def _at(obj: Any, loc: tuple[str | int, ...]) -> Any:
    cur = obj
    for part in loc:
        in_list = isinstance(part, int) and isinstance(cur, list) and 0 <= part < len(cur)
        in_dict = isinstance(part, str) and isinstance(cur, dict) and part in cur
        if in_list or in_dict:
            cur = cur[part]
        else:
            return None
    return cur


M = TypeVar("M", bound=BaseModel)


def _at_line(where: tuple[int, int] | None, expected: str) -> str:
    """``expected`` with the line and column ``where`` of its path in the file (as the decoder's
    own defects have them): a missing field is placed at the object it is missing from."""
    if where is None:
        return expected
    return f"{expected}; at line {where[0]}, column {where[1]}"


def parse_config(source: ConfigSource, model: type[M], rules: Iterable[CrossRule] = ()) -> M:
    """Validate the config against ``model`` and the cross rules; refuse with every defect,
    each with its JSON path and the line and column where it is (JSON and YAML alike)."""
    raw = source.json()
    # (path, received, expected): placed in the file once all are known (one more read)
    found: list[tuple[Loc, Any, str]] = []
    parsed: M | None = None
    if not isinstance(raw, dict):
        raise ConfigError(
            [Defect(source.display, "$", raw, "a JSON object (in YAML: a mapping of keys)")]
        )
    try:
        parsed = model.model_validate(raw)
    except ValidationError as exc:
        for err in exc.errors(include_url=False):
            loc = tuple(p for p in err["loc"] if not _is_union_tag(p, raw, err["loc"]))
            received = MISSING if err["type"] == "missing" else err.get("input")
            if "shown" in (err.get("ctx") or {}):
                # a validator's own display of the value (a credential masked, never echoed)
                received = err["ctx"]["shown"]
            found.append((loc, received, _expected_from_error(err, model)))
    for rule in rules:
        target = _at(raw, rule.at)
        if not isinstance(target, dict):
            continue
        for rel, received, expected in rule.check(target):
            found.append((rule.at + rel, received, expected))
    if found:
        where = source.positions(loc for loc, _, _ in found)
        raise ConfigError(
            _dedupe(
                [
                    Defect(source.display, json_path(loc), received, _at_line(where[loc], exp))
                    for loc, received, exp in found
                ]
            )
        )
    if parsed is None:  # pragma: no cover - validate either returns or raises
        raise RuntimeError("pydantic returned nothing")
    return parsed


def _is_union_tag(part: str | int, raw: Any, loc: tuple[str | int, ...]) -> bool:
    """pydantic inserts the discriminator value of a tagged union into ``loc``; drop it."""
    if not isinstance(part, str):
        return False
    idx = loc.index(part)
    parent = _at(raw, tuple(loc[:idx]))
    if not isinstance(parent, dict) or part in parent:
        return False
    return part in {v for v in parent.values() if isinstance(v, str)}


def _dedupe(defects: list[Defect]) -> list[Defect]:
    seen: set[tuple[str, str]] = set()
    out: list[Defect] = []
    for d in defects:
        key = (d.path, d.expected)
        if key not in seen:
            seen.add(key)
            out.append(d)
    return out
