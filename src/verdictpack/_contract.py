"""The results contract: one typed, versioned schema per kind of ``results.json``.

The one declaration is the kind's frozen result class (a dataclass of ``kinds/``): the schema is
derived from it, never written per field. :func:`results_model` mirrors the class as
``results.json`` holds it (:func:`verdictpack._results.to_jsonable`): its fields in order, minus
bulk fields (:data:`verdictpack._results.BULK`, written to files of their own) and
``provenance`` (``provenance.json``); nested dataclasses as nested objects, tuples as arrays,
enums by value; a field that may be null may be absent; unknown keys refused.
:func:`results_schema` is the JSON Schema (draft 2020-12) of a whole ``results.json``, titled and
identified by kind and version (``verdictpack schema results KIND`` prints it);
:func:`results_document` is what ``results.json`` holds, its ``schema_version`` right after
``kind``; :func:`from_document` rebuilds the result object from it (bulk fields and provenance
left None), so a report is rendered again from results.json alone (the self-audit's comparison).

:data:`RESULTS_SCHEMA_VERSION` changes when a field is renamed, removed or changes meaning; the
self-audit keeps its own copy of the version it reads.
"""

from __future__ import annotations

import dataclasses
import enum
import functools
import types
import typing
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, create_model

from verdictpack._results import to_jsonable

__all__ = [
    "RESULTS_SCHEMA_VERSION",
    "document_model",
    "from_document",
    "results_document",
    "results_model",
    "results_schema",
]

RESULTS_SCHEMA_VERSION = 1
_SKIPPED = ("provenance",)  # fields results.json leaves out (besides bulk ones)


def _fields(cls: type) -> list[tuple[str, Any]]:
    hints = typing.get_type_hints(cls)
    return [
        (f.name, hints[f.name])
        for f in dataclasses.fields(cls)
        if not f.metadata.get("bulk") and f.name not in _SKIPPED
    ]


def _json_type(tp: Any) -> Any:
    """The type of a field as results.json holds it."""
    if isinstance(tp, type) and dataclasses.is_dataclass(tp):
        return results_model(tp)
    if isinstance(tp, type) and issubclass(tp, enum.Enum):
        return Literal[tuple(m.value for m in tp)]
    origin, args = typing.get_origin(tp), typing.get_args(tp)
    if origin is None or not args or origin is Literal:
        return tp
    if origin is tuple and len(args) == 2 and args[1] is Ellipsis:
        return list[_json_type(args[0])]  # type: ignore[misc]
    if origin is tuple:
        return tuple[tuple(_json_type(a) for a in args)]  # type: ignore[misc]
    inner = tuple(_json_type(a) for a in args)
    if origin in (typing.Union, types.UnionType):
        return typing.Union[inner]  # noqa: UP007 - rebuilt from a tuple of types
    if origin is typing.Annotated:
        return tp
    return origin[inner if len(inner) > 1 else inner[0]]


@functools.cache
def results_model(cls: type) -> type[BaseModel]:
    """A pydantic model of the result class ``cls`` as results.json holds it."""
    fields: dict[str, Any] = {}
    for name, tp in _fields(cls):
        # a field that may be null may also be absent (a battery without a grid has no key)
        nullable = type(None) in typing.get_args(tp)
        fields[f"f_{name}"] = (_json_type(tp), Field(None if nullable else ..., alias=name))
    config = ConfigDict(extra="forbid", populate_by_name=False, title=cls.__name__)
    return create_model(cls.__name__, __config__=config, **fields)


@functools.cache
def document_model(kind: str, cls: type) -> type[BaseModel]:
    """The model of a whole results.json of ``kind``: the result's fields with schema_version."""
    own = results_model(cls)
    fields: dict[str, Any] = {}
    for name, info in own.model_fields.items():
        fields[name] = (info.annotation, info)
        if info.alias == "kind":
            fields["f_schema_version"] = (
                Literal[RESULTS_SCHEMA_VERSION],
                Field(alias="schema_version", description="the version of this schema"),
            )
    config = ConfigDict(extra="forbid", title=f"verdictpack {kind} results")
    return create_model(f"{cls.__name__}Document", __config__=config, **fields)


def results_schema(kind: str, cls: type) -> dict[str, Any]:
    """The JSON Schema of a results.json of ``kind`` (result class ``cls``)."""
    schema = document_model(kind, cls).model_json_schema(by_alias=True)
    return {
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "$id": f"verdictpack/results/{kind}/v{RESULTS_SCHEMA_VERSION}",
        **schema,
    }


def results_document(result: Any) -> dict[str, Any]:
    """What results.json holds: the result object minus its provenance (a file of its own),
    ``schema_version`` right after ``kind``."""
    data = to_jsonable(result)
    data.pop("provenance", None)
    out: dict[str, Any] = {}
    for key, value in data.items():
        out[key] = value
        if key == "kind":
            out["schema_version"] = RESULTS_SCHEMA_VERSION
    return out


def _own_fields(cls: type) -> set[str]:
    return {name for name, _ in _fields(cls)}


def _build(tp: Any, value: Any) -> Any:
    """``value`` (JSON data) as an object of type ``tp``."""
    if value is None:
        return None
    if isinstance(tp, type) and dataclasses.is_dataclass(tp):
        return from_document(tp, value)
    if isinstance(tp, type) and issubclass(tp, enum.Enum):
        return tp(value)
    origin, args = typing.get_origin(tp), typing.get_args(tp)
    if origin in (typing.Union, types.UnionType):
        kinds = [a for a in args if a is not type(None)]
        classes = [a for a in kinds if isinstance(a, type) and dataclasses.is_dataclass(a)]
        if classes and isinstance(value, dict):
            fit = [c for c in classes if _own_fields(c) == set(value)]
            if len(fit) != 1:
                raise ValueError(f"no one of {[c.__name__ for c in classes]} has the keys given")
            return from_document(fit[0], value)
        return _build(kinds[0], value) if len(kinds) == 1 else value
    if origin is tuple and len(args) == 2 and args[1] is Ellipsis:
        return tuple(_build(args[0], v) for v in value)
    if origin is tuple:
        return tuple(_build(a, v) for a, v in zip(args, value, strict=True))
    if origin is list:
        return [_build(args[0], v) for v in value]
    if origin is dict:
        return {_build(args[0], k): _build(args[1], v) for k, v in value.items()}
    if tp in (int, float) and isinstance(value, str):
        return tp(value)  # a dict key, made a string by to_jsonable
    return value


def from_document(cls: type, data: dict[str, Any]) -> Any:
    """The result object of class ``cls`` that results.json ``data`` was written from; its bulk
    fields and provenance (not in results.json) are None. ValueError (KeyError, TypeError) when
    ``data`` does not fit ``cls``."""
    hints = typing.get_type_hints(cls)
    own = _own_fields(cls)
    values = {
        f.name: _build(hints[f.name], data.get(f.name)) if f.name in own else None
        for f in dataclasses.fields(cls)
    }
    return cls(**values)
