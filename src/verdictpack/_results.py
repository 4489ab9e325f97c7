"""Result-object conventions shared by every layer.

Each layer returns a frozen dataclass. ``to_jsonable`` turns any such object into plain JSON
data, and ``dump_json`` renders it byte-for-byte deterministically; ``results.json`` and every
report are rendered from the object, never recomputed and never parsed back from text.

Every headline number is a :class:`Quantity`: its value plus its *basis* --
``exact`` (computed exactly, up to floating point), ``closed_form`` (a formula or an
approximation such as the normal-approximation sample size), or ``simulated`` (Monte Carlo,
with its standard error and replicate count).
"""

from __future__ import annotations

import dataclasses
import enum
import json
import math
from dataclasses import dataclass
from typing import Any, Literal

import numpy as np

__all__ = [
    "BULK",
    "OPTIONAL",
    "Basis",
    "Quantity",
    "closed_form",
    "dump_json",
    "exact",
    "simulated",
    "to_jsonable",
]

Basis = Literal["exact", "closed_form", "simulated"]

# field metadata of bulk data a result carries for files of its own (a judgment table, say):
# ``to_jsonable`` leaves such fields out, so results.json never holds them
BULK: dict[str, bool] = {"bulk": True}
# field metadata of an optional field added later: ``to_jsonable`` leaves it out while it is None,
# so results.json of a run that does not use it keeps its earlier bytes
OPTIONAL: dict[str, bool] = {"optional": True}


@dataclass(frozen=True)
class Quantity:
    """A number with the way it was obtained."""

    value: float | int
    basis: Basis
    mcse: float | None = None
    replicates: int | None = None

    def __post_init__(self) -> None:
        if self.basis == "simulated" and (self.mcse is None or self.replicates is None):
            raise ValueError(
                "a simulated Quantity needs its Monte Carlo standard error and replicates"
            )

    def __float__(self) -> float:
        return float(self.value)

    def label(self) -> str:
        """The basis as printed in reports."""
        if self.basis == "simulated":
            return f"simulated, MCSE {self.mcse:.4f}, {self.replicates:,} reps"
        return self.basis.replace("_", " ")


def exact(value: float | int) -> Quantity:
    return Quantity(value=_plain(value), basis="exact")


def closed_form(value: float | int) -> Quantity:
    return Quantity(value=_plain(value), basis="closed_form")


def simulated(value: float, mcse: float, replicates: int) -> Quantity:
    return Quantity(
        value=_plain(value), basis="simulated", mcse=float(mcse), replicates=int(replicates)
    )


def _plain(value: Any) -> float | int:
    if isinstance(value, (bool, np.bool_)):
        return int(value)
    if isinstance(value, (int, np.integer)):
        return int(value)
    return float(value)


def to_jsonable(obj: Any) -> Any:
    """Convert result objects to JSON data (dataclasses become objects in field order)."""
    if dataclasses.is_dataclass(obj) and not isinstance(obj, type):
        return {
            f.name: to_jsonable(getattr(obj, f.name))
            for f in dataclasses.fields(obj)
            if not f.metadata.get("bulk")
            and not (f.metadata.get("optional") and getattr(obj, f.name) is None)
        }
    if isinstance(obj, enum.Enum):
        return to_jsonable(obj.value)
    if isinstance(obj, dict):
        return {str(k): to_jsonable(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [to_jsonable(v) for v in obj]
    if isinstance(obj, np.ndarray):
        return [to_jsonable(v) for v in obj.tolist()]
    if isinstance(obj, (bool, np.bool_)):
        return bool(obj)
    if isinstance(obj, (int, np.integer)):
        return int(obj)
    if isinstance(obj, (float, np.floating)):
        value = float(obj)
        if not math.isfinite(value):
            raise ValueError(f"non-finite number {value!r} in a result object")
        return value
    if obj is None or isinstance(obj, str):
        return obj
    raise TypeError(f"cannot serialise {type(obj).__name__} into results.json")


def dump_json(obj: Any) -> str:
    """Deterministic JSON text (2-space indent, trailing newline, no NaN)."""
    return json.dumps(to_jsonable(obj), indent=2, ensure_ascii=False, allow_nan=False) + "\n"
