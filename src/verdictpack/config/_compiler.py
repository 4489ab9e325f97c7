"""The construct compiler and the config validation shared by every layer.

A config is one JSON file, or one YAML file (``.yaml`` / ``.yml``). Validating it goes through
three steps, and every defect of a step is collected before anything is refused, so the user sees
the complete list at once:

1. the file itself, read and decoded strictly (:mod:`verdictpack.config._loader`);
2. the schema of its ``kind`` (pydantic, strict types, unknown keys refused) with the models' own
   validators: a field's bounds are its ``Field``; a rule between fields is a validator of the
   model that holds them (``e_boundary`` equal to ``1/per_tail_alpha``, an extension minimum not
   above the registered threshold, names used once ...), reporting each defect at its own path
   through :func:`refuse`, so it is found wherever that model is valid;
3. the cross rules (:class:`CrossRule`) that need a floor above ``config`` or several blocks at
   once (a panel built through the generative model, the fixed-n route's size), run on the model
   step 2 built, once it passes: nothing is validated twice.

Each defect names the file, the JSON path, the value received, what was expected and, for a
config read from a file, the line and column where it is.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import Annotated, Any, Literal, Self, TypeVar, get_args, get_origin

from pydantic import (
    AfterValidator,
    BaseModel,
    ConfigDict,
    Field,
    ValidationError,
    ValidationInfo,
    field_validator,
    model_validator,
)
from pydantic_core import PydanticCustomError

from verdictpack._errors import MISSING, ConfigError, Defect
from verdictpack.config._loader import ConfigSource, Loc, load_source
from verdictpack.config._strict import MAX_CONFIG_BYTES, MAX_DEPTH, MAX_INTEGER, json_path
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
    "Found",
    "SequentialConstruct",
    "StrictModel",
    "compile_construct",
    "json_path",
    "load_source",
    "model_at",
    "parse_config",
    "raw_at",
    "refuse",
    "unique",
]

# ----------------------------------------------------------------------------------------------
# Schema building blocks
# ----------------------------------------------------------------------------------------------


class StrictModel(BaseModel):
    """Base of every config model: strict types, unknown keys refused, immutable, and no NaN or
    infinity in any float (the loader refuses them in a file; this refuses them from the API)."""

    model_config = ConfigDict(extra="forbid", strict=True, frozen=True, allow_inf_nan=False)

    @model_validator(mode="after")
    def _shared_fields_set(self) -> Self:
        """One set of the given field names per distinct set, shared by the (frozen, so never
        changed) models that have it: pydantic's own set per object was two thirds of a large
        config's model (a panel of many judges)."""
        names = frozenset(self.__pydantic_fields_set__)
        shared = _FIELDS_SETS.get(names)
        if shared is None:
            shared = _FIELDS_SETS.setdefault(names, set(names))
        object.__setattr__(self, "__pydantic_fields_set__", shared)
        return self


# bounded by the models' fields: one entry per distinct set of given field names
_FIELDS_SETS: dict[frozenset[str], set[str]] = {}


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

    # The cross-field rules, each at its own field, from the fields declared before it that are
    # valid (pydantic's ``info.data``): reported beside any other field's defect.
    @field_validator("per_tail_alpha")
    @classmethod
    def _quarter(cls, value: float | None, info: ValidationInfo) -> float | None:
        alpha = info.data.get("alpha")
        if value is not None and alpha is not None and not math.isclose(value, alpha / 4.0):
            raise ValueError(
                f"alpha/4 = {alpha / 4.0:g} (alpha is the joint level of the four one-sided "
                "stream tails of the h-interval)"
            )
        return value

    @field_validator("e_boundary")
    @classmethod
    def _inverse(cls, value: float | None, info: ValidationInfo) -> float | None:
        if "per_tail_alpha" not in info.data:  # refused itself: nothing to compare with
            return value
        per_tail, alpha = info.data["per_tail_alpha"], info.data.get("alpha")
        if per_tail is None and alpha is not None:
            per_tail = alpha / 4.0  # derived: an e_boundary given alone must match it
        if value is not None and per_tail is not None and not math.isclose(value, 1 / per_tail):
            raise ValueError(
                f"1/per_tail_alpha = {1.0 / per_tail:g} (the e-process boundary is derived from "
                "the per-tail alpha)"
            )
        return value

    @field_validator("thresholds")
    @classmethod
    def _reachable(cls, value: Thresholds, info: ValidationInfo) -> Thresholds:
        p0 = info.data.get("human_baseline_rate")
        if p0 is not None and value.h >= math.pi - phi(p0):
            reach = math.pi - phi(p0)
            refuse(
                [
                    (
                        ("h",),
                        value.h,
                        f"an h below {reach:.6g}, the largest effect reachable from the baseline "
                        f"rate {p0:g}",
                    )
                ]
            )
        return value

    @field_validator("extension_minimum_h")
    @classmethod
    def _weaker(cls, value: float, info: ValidationInfo) -> float:
        p0, thresholds = info.data.get("human_baseline_rate"), info.data.get("thresholds")
        if p0 is not None and thresholds is not None:
            governing = min(thresholds.h, h_from_odds_ratio(p0, thresholds.odds_ratio))
            if value > governing:
                raise ValueError(
                    f"at most the governing registered threshold h = {governing:.6g} (the "
                    "extension track may only be weaker than the registered one)"
                )
        return value

    @field_validator("known_confounds")
    @classmethod
    def _confounds(cls, value: list[Confound]) -> list[Confound]:
        names, seen = {x.name for x in value}, set()
        found: list[Found] = []
        for i, item in enumerate(value):
            if item.name in seen:
                found.append(((i, "name"), item.name, "each confound listed once"))
            seen.add(item.name)
            found.extend(
                ((i, "crossed_with", j), other, "another confound listed in known_confounds")
                for j, other in enumerate(item.crossed_with)
                if other == item.name or other not in names
            )
        refuse(found)
        return value


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
# Rules between fields
# ----------------------------------------------------------------------------------------------


Found = tuple[tuple[str | int, ...], Any, str]


@dataclass(frozen=True)
class CrossRule:
    """A rule a model cannot state itself: one that needs a floor above ``config`` (a panel built
    through the generative model) or several blocks at once. ``check`` gets the *validated*
    object at ``at`` (each item, its index first in the path, where that is a list) and returns
    ``(relative path, received, expected)`` triples. Rules run once the schema passes, on the
    model already built: nothing is validated twice. A rule of one block is a model validator
    calling :func:`refuse` instead, so it runs wherever the block is valid."""

    at: tuple[str | int, ...]
    check: Callable[[Any], Iterable[Found]]


def refuse(found: Iterable[Found], up: int = 0) -> None:
    """Raise, from a validator, the defects it found, each at its own path below the object
    validated (pydantic gives that object's path), or below its ``up``-th parent (a field's rule
    that names a sibling field): one message shape with the schema's defects."""
    items = list(found)
    if items:
        text = "; ".join(f"{json_path(loc)[2:]}: {expected}" for loc, _, expected in items)
        raise PydanticCustomError("cross", "{text}", {"text": text, "found": items, "up": up})


def _greater_only(c: ConstructSpec) -> ConstructSpec:
    if c.direction == "less":
        text = (
            "'greater' for the sequential kinds (state a 'less' claim as 'greater' by swapping "
            "the treatment and its null partner)"
        )
        refuse([(("direction",), "less", text)])
    return c


# The construct of the sequential kinds: its claim must read 'greater'.
SequentialConstruct = Annotated[ConstructSpec, AfterValidator(_greater_only)]


def unique(expected: str, field: str = "name") -> AfterValidator:
    """The validator of a list whose objects' ``field`` is used once: a repeat is refused at its
    own path (``Annotated[list[X], unique("a scenario name used once")]``)."""

    def check(items: list[Any]) -> list[Any]:
        seen: set[Any] = set()
        found: list[Found] = []
        for i, item in enumerate(items):
            name = getattr(item, field)
            if name in seen:
                found.append(((i, field), name, expected))
            seen.add(name)
        refuse(found)
        return items

    return AfterValidator(check)


def _expected_from_error(err: Mapping[str, Any], model: type[BaseModel]) -> str:
    kind = err["type"]
    if kind == "missing":
        return "this required field (nothing is guessed)"
    if kind in ("model_type", "model_attributes_type", "dict_type"):
        return "a JSON object (in YAML: a mapping of keys)"  # never a class's name
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


def raw_at(data: Any, loc: Loc, default: Any = None) -> Any:
    """The raw (decoded, unvalidated) config value at the JSON path ``loc`` (keys of objects,
    indices of arrays), or ``default`` where the path is not in it."""
    cur = data
    for part in loc:
        in_list = isinstance(part, int) and isinstance(cur, list) and 0 <= part < len(cur)
        in_dict = isinstance(part, str) and isinstance(cur, dict) and part in cur
        if not (in_list or in_dict):
            return default
        cur = cur[part]
    return cur


M = TypeVar("M", bound=BaseModel)


def _at_line(where: tuple[int, int] | None, expected: str) -> str:
    """``expected`` with the line and column ``where`` of its path in the file (as the decoder's
    own defects have them): a missing field is placed at the object it is missing from."""
    if where is None:
        return expected
    return f"{expected}; at line {where[0]}, column {where[1]}"


def parse_config(source: ConfigSource, model: type[M], rules: Iterable[CrossRule] = ()) -> M:
    """Validate the config against ``model`` (its validators included) and, once it passes, the
    cross rules on the model built; refuse with every defect, each with its JSON path and the
    line and column where it is (JSON and YAML alike)."""
    raw = source.value()
    # (path, received, expected): placed in the file once all are known (one more read)
    found: list[tuple[Loc, Any, str]] = []
    if not isinstance(raw, dict):
        raise ConfigError(
            [Defect(source.display, "$", raw, "a JSON object (in YAML: a mapping of keys)")]
        )
    try:
        parsed = model.model_validate(raw)
    except ValidationError as exc:
        for err in exc.errors(include_url=False):
            loc = _unwrapped(
                tuple(p for p in err["loc"] if not _is_union_tag(p, raw, err["loc"])), raw
            )
            ctx = err.get("ctx") or {}
            if err["type"] == "cross":  # a validator's own defects, below its path
                base = loc[: len(loc) - ctx["up"]]
                found.extend((base + rel, got, exp) for rel, got, exp in ctx["found"])
                continue
            received = MISSING if err["type"] == "missing" else err.get("input")
            if "shown" in ctx:
                # a validator's own display of the value (a credential masked, never echoed)
                received = ctx["shown"]
            found.append((loc, received, _expected_from_error(err, model)))
    else:
        del raw  # the rules read the model: the value need not be held beside it
        source.release()
        for rule in rules:
            target = model_at(parsed, rule.at)
            items = enumerate(target) if isinstance(target, (list, tuple)) else [(None, target)]
            for index, item in items:
                at = rule.at if index is None else (*rule.at, index)
                found.extend((at + rel, got, exp) for rel, got, exp in rule.check(item))
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
    return parsed


def model_at(obj: Any, loc: Loc) -> Any:
    """The validated object at the JSON path ``loc`` (keys by their alias, items by index;
    None below an absent optional block)."""
    for part in loc:
        if obj is None:
            return None
        if isinstance(part, int):
            obj = obj[part]
        else:
            fields = type(obj).model_fields
            obj = getattr(obj, next(n for n, f in fields.items() if (f.alias or n) == part))
    return obj


def _is_union_tag(part: str | int, raw: Any, loc: tuple[str | int, ...]) -> bool:
    """pydantic inserts the discriminator value of a tagged union into ``loc``; drop it."""
    if not isinstance(part, str):
        return False
    idx = loc.index(part)
    parent = raw_at(raw, tuple(loc[:idx]))
    if not isinstance(parent, dict) or part in parent:
        return False
    return part in {v for v in parent.values() if isinstance(v, str)}


def _unwrapped(loc: Loc, raw: Any) -> Loc:
    """A validator that reads one item as a list of one (``where``) makes pydantic name it
    ``[0]`` below a value that is an object in the file; drop that index, so the path is the
    file's."""
    out: list[str | int] = []
    for part in loc:
        if not (isinstance(part, int) and isinstance(raw_at(raw, tuple(out)), dict)):
            out.append(part)
    return tuple(out)


def _dedupe(defects: list[Defect]) -> list[Defect]:
    seen: set[tuple[str, str]] = set()
    out: list[Defect] = []
    for d in defects:
        key = (d.path, d.expected)
        if key not in seen:
            seen.add(key)
            out.append(d)
    return out
