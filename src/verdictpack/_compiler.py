"""The construct compiler and the config loader shared by every layer.

A config is one JSON file. Loading it goes through three steps, and every defect of every step is
collected before anything is refused, so the user sees the complete list at once:

1. the file itself (missing, a folder, unreadable, not UTF-8, not JSON, not an object);
2. the schema of its ``kind`` (pydantic, strict types, unknown keys refused);
3. cross-field rules that a schema cannot express (``e_boundary`` equal to
   ``1/per_tail_alpha``, an extension minimum not above the registered threshold, ...). These
   run on the raw JSON, so they are reported even when step 2 found other defects.

Each defect names the file, the JSON path, the value received and what was expected.
"""

from __future__ import annotations

import hashlib
import json
import math
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Annotated, Any, Literal, TypeVar, get_args, get_origin

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from verdictpack._errors import MISSING, ConfigError, Defect
from verdictpack._stats import h_from_odds_ratio, p_from_h

__all__ = [
    "CONFOUND_NAMES",
    "ConfigSource",
    "Construct",
    "ConstructSpec",
    "CrossRule",
    "StrictModel",
    "compile_construct",
    "construct_rules",
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
    """Base of every config model: strict types, unknown keys refused, immutable."""

    model_config = ConfigDict(extra="forbid", strict=True, frozen=True)


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

    name: ConfoundName
    description: NonEmptyText
    crossed_with: list[ConfoundName] = Field(default_factory=list)


class ConstructSpec(StrictModel):
    """The full construct: every registered field is required; nothing is guessed."""

    name: NonEmptyText
    version: NonEmptyText
    transformation: NonEmptyText = Field(description="what distinguishes treatment from null item")
    metric: NonEmptyText = Field(description="the preference measured per root event")
    direction: Literal["greater", "less"] = Field(
        description="'greater': the claim is that judges prefer the treatment MORE than humans do"
    )
    human_baseline_rate: Probability
    thresholds: Thresholds
    extension_minimum_h: float = Field(gt=0.0, description="weaker minimum of the extension track")
    alpha: float = Field(gt=0.0, lt=0.5, description="joint error level of the h-interval")
    per_tail_alpha: float = Field(gt=0.0, lt=0.5, description="alpha / 4: one tail of one stream")
    e_boundary: float = Field(gt=1.0, description="1 / per_tail_alpha")
    stream_roles: StreamRoles
    registered_claim: NonEmptyText
    extension_claim: NonEmptyText
    known_confounds: list[Confound]


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
        per_tail_alpha=spec.per_tail_alpha,
        e_boundary=spec.e_boundary,
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
        reach = math.pi - 2.0 * math.asin(math.sqrt(p0))
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


@dataclass(frozen=True)
class ConfigSource:
    """The bytes of the one config verdictpack reads, and how to name it in messages."""

    display: str
    name: str
    data: bytes

    @property
    def sha256(self) -> str:
        return hashlib.sha256(self.data).hexdigest()

    def json(self) -> Any:
        return json.loads(self.data.decode("utf-8"))


def load_source(path: str | Path) -> ConfigSource:
    """Read exactly the path given (never a same-named file elsewhere)."""
    p = Path(path)
    display = str(path)

    def refuse(expected: str, received: Any = MISSING) -> ConfigError:
        return ConfigError([Defect(display, "$", received, expected)])

    if not p.exists():
        raise refuse("an existing JSON config file (no such file)")
    if p.is_dir():
        raise refuse("a JSON config file, not a directory", "(a directory)")
    try:
        data = p.read_bytes()
    except OSError as exc:
        raise refuse(f"a readable file ({exc.strerror})", "(unreadable)") from None
    source = ConfigSource(display=display, name=p.name, data=data)
    try:
        source.json()
    except UnicodeDecodeError:
        raise refuse("UTF-8 encoded JSON", "(undecodable bytes)") from None
    except json.JSONDecodeError as exc:
        raise refuse(
            f"valid JSON (line {exc.lineno}, column {exc.colno}: {exc.msg})", "(invalid JSON)"
        ) from None
    return source


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


def parse_config(source: ConfigSource, model: type[M], rules: Iterable[CrossRule] = ()) -> M:
    """Validate the config against ``model`` and the cross rules; refuse with every defect."""
    raw = source.json()
    defects: list[Defect] = []
    parsed: M | None = None
    if not isinstance(raw, dict):
        raise ConfigError([Defect(source.display, "$", raw, "a JSON object")])
    try:
        parsed = model.model_validate(raw)
    except ValidationError as exc:
        for err in exc.errors(include_url=False):
            loc = tuple(p for p in err["loc"] if not _is_union_tag(p, raw, err["loc"]))
            received = MISSING if err["type"] == "missing" else err.get("input")
            defects.append(
                Defect(source.display, json_path(loc), received, _expected_from_error(err, model))
            )
    for rule in rules:
        target = _at(raw, rule.at)
        if not isinstance(target, dict):
            continue
        for rel, received, expected in rule.check(target):
            defects.append(Defect(source.display, json_path(rule.at + rel), received, expected))
    if defects:
        raise ConfigError(_dedupe(defects))
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
