"""The ledger's records and identities: the canonical JSON and hashes that key a request to its
manifest, one frozen record type per row the ledger reads back (answer, commit, event), the
spend, and the ledger's error. Part of :mod:`verdictpack.evidence._ledger`, which
stores them."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, NamedTuple

from verdictpack._errors import InputError, OutputError


class LedgerError(OutputError):
    """The ledger refused an operation (wrong manifest, broken prefix, duplicate, closed)."""


def canonical_json(value: Any, parameter: str = "value") -> str:
    """The canonical JSON text of a plain-JSON value: sorted keys, no whitespace, UTF-8 as is."""
    try:
        text = json.dumps(
            value, sort_keys=True, separators=(",", ":"), ensure_ascii=False, allow_nan=False
        )
        text.encode("utf-8")
    except (TypeError, ValueError) as exc:
        raise InputError(
            parameter,
            "plain JSON (dicts with str keys, lists, str, finite numbers, bool, null)",
            f"({exc})",
        ) from None
    return text


def _mapping(name: str, value: Any) -> dict[str, Any]:
    if not isinstance(value, Mapping):
        raise InputError(name, "a mapping (plain JSON object)", type(value).__name__)
    return dict(value)


def manifest_hash(manifest: Mapping[str, Any]) -> str:
    """SHA-256 (hex) of the canonical JSON of a study manifest."""
    text = canonical_json(_mapping("manifest", manifest), "manifest")
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def request_key(body: Mapping[str, Any], manifest_digest: str) -> str:
    """The cache key of a request: SHA-256 of ``manifest_digest + "\\n" + canonical(body)``."""
    text = canonical_json(_mapping("body", body), "body")
    return hashlib.sha256(f"{manifest_digest}\n{text}".encode()).hexdigest()


class _Record:
    """Field access by name as well as by attribute (``record["cost"]`` is ``record.cost``)."""

    __slots__ = ()

    def __getitem__(self, name: str) -> Any:
        if name not in _field_names(type(self)):
            raise KeyError(name)
        return getattr(self, name)

    def keys(self) -> tuple[str, ...]:
        """The field names, in order."""
        return _field_names(type(self))


_FIELD_NAMES: dict[type, tuple[str, ...]] = {}


def _field_names(cls: type) -> tuple[str, ...]:
    """A record class's field names, in order (looked up once per class)."""
    names = _FIELD_NAMES.get(cls)
    if names is None:
        fields: dict[str, Any] = getattr(cls, "__dataclass_fields__", {})
        names = _FIELD_NAMES[cls] = tuple(fields)
    return names


@dataclass(frozen=True, slots=True)
class Answer(_Record):
    """The stored answer to one request, with the request's root, judge, order and trial."""

    key: str
    root_id: str
    judge: str
    order: str
    trial: int
    raw: str
    prompt_tokens: int
    completion_tokens: int
    cost: float
    model_id: str | None
    latency: float
    choice: str
    path: str
    p_treatment: float | None


@dataclass(frozen=True, slots=True)
class Commit(_Record):
    """One root committed to the e-process: its place in the registered order, the bounds on
    M_i and H_i (equal where every answer is known; H None: no H_i), the state after it."""

    seq: int
    root_id: str
    m_lo: float
    m_hi: float
    h_lo: float | None
    h_hi: float | None
    state: str


@dataclass(frozen=True, slots=True)
class Event(_Record):
    """A study-level event (the verdict, a budget stop, a run's start and end) and its data."""

    seq: int
    kind: str
    data: Any


class Spend(NamedTuple):
    """Money so far: answers of committed roots, answers of roots not yet committed, and every
    call sent without an answer (``cancelled``: cancellations, failed attempts at their cost,
    calls still unsettled at their worst case)."""

    committed: float
    pending: float
    cancelled: float

    @property
    def total(self) -> float:
        """Everything: the most the provider can have billed at the configured prices."""
        return self.committed + self.pending + self.cancelled
