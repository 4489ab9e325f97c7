"""Shared pieces of the annotation-tool importers: positions, sides, defect collection.

Every importer reads a *position* (which side the rater preferred: ``left`` is the side shown
first, ``right`` the side shown second, or ``tie`` / ``invalid``) and the side that held the
treatment, and turns the pair into the canonical ``order`` and ``choice`` of a
:class:`~verdictpack.evidence._table.Judgment`.
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

from verdictpack._errors import Defect, InputError, not_utf8
from verdictpack.config._data_json import DataJSONError, load_data_json, text_lines
from verdictpack.evidence._choice import ORDERS
from verdictpack.evidence._judgments import MAX_DEFECTS, more_defects
from verdictpack.stimuli._pairs import root_id_problem

__all__ = [
    "MAX_DEFECTS",
    "POSITIONS",
    "SIDES",
    "Defects",
    "at",
    "check_order_map",
    "check_sides",
    "check_value_map",
    "display_name",
    "load_json_records",
    "lookup",
    "map_value",
    "resolve",
]

SIDES = ("left", "right")
POSITIONS = ("left", "right", "tie", "invalid")
_DEFAULT_SIDE_MAP = {"left": "left", "right": "right"}


def display_name(path: Path, display: str | None) -> str:
    return display if display is not None else path.name


def check_value_map(
    name: str, value_map: Mapping[Any, str] | None, required: bool
) -> dict[Any, str]:
    """Validate a value map: keys as exported, values positions (left/right/tie/invalid)."""
    if value_map is None:
        if required:
            raise InputError(name, "a mapping of exported values to left/right/tie/invalid", None)
        return {}
    if not isinstance(value_map, Mapping) or not value_map:
        raise InputError(name, "a non-empty mapping of exported values", value_map)
    for key, position in value_map.items():
        if position not in POSITIONS:
            raise InputError(f"{name}[{key!r}]", "one of left, right, tie, invalid", position)
    return dict(value_map)


def check_order_map(order_map: Mapping[str, str] | None) -> dict[str, str]:
    """A judge log's spellings of the presentation order -> the canonical orders (default: the
    canonical names themselves); InputError naming the entry that is not one."""
    orders = {o: o for o in ORDERS} if order_map is None else dict(order_map)
    for key, value in orders.items():
        if value not in ORDERS:
            raise InputError(f"order_map[{key!r}]", "'treatment_first' or 'null_first'", value)
    return orders


def check_sides(
    field: str | None, fixed: str | None, side_map: Mapping[str, str] | None, what: str
) -> dict[str, str]:
    """Exactly one of a side field/column and a fixed side; the side map goes to left/right."""
    if (field is None) == (fixed is None):
        raise InputError(
            f"treatment_side_{what} / treatment_side",
            f"exactly one of a {what} naming the treatment's side and a fixed side",
            {"treatment_side_" + what: field, "treatment_side": fixed},
        )
    if fixed is not None and fixed not in SIDES:
        raise InputError("treatment_side", "'left' or 'right'", fixed)
    if side_map is None:
        return dict(_DEFAULT_SIDE_MAP)
    if not isinstance(side_map, Mapping) or not side_map:
        raise InputError(
            "side_map", "a non-empty mapping of exported values to left/right", side_map
        )
    for key, side in side_map.items():
        if side not in SIDES:
            raise InputError(f"side_map[{key!r}]", "'left' or 'right'", side)
    return dict(side_map)


def map_value(value_map: Mapping[Any, str], value: Any) -> str | None:
    """The position for an exported value (tried as is, then as its string), or None."""
    try:
        if value in value_map:
            return value_map[value]
    except TypeError:  # unhashable (a list or an object): not a key
        return None
    if not isinstance(value, str) and str(value) in value_map:
        return value_map[str(value)]
    return None


def resolve(position: str, treatment_side: str) -> tuple[str, str]:
    """(order, choice) from the preferred position and the side holding the treatment."""
    order = "treatment_first" if treatment_side == "left" else "null_first"
    if position in SIDES:
        return order, "treatment" if position == treatment_side else "null_partner"
    return order, position


class Defects:
    """Collects the defects of one file; keeps the first MAX_DEFECTS and counts the rest."""

    def __init__(self, file: str) -> None:
        self.file = file
        self._kept: list[Defect] = []
        self._more = 0

    def add(self, where: str, received: Any, expected: str) -> None:
        if len(self._kept) < MAX_DEFECTS:
            self._kept.append(Defect(self.file, where, received, expected))
        else:
            self._more += 1

    def add_defect(self, defect: Defect) -> None:
        """Add a defect made elsewhere (its file is this one's), at its own place."""
        self.add(defect.path, defect.received, defect.expected)

    def __len__(self) -> int:
        return len(self._kept) + self._more

    def result(self) -> tuple[Defect, ...]:
        """The kept defects, then (as :func:`cap_defects` words it) one counting the rest."""
        if not self._more:
            return tuple(self._kept)
        return (*self._kept, more_defects(self.file, self._more))


def load_json_records(
    path: Path, defects: Defects, data: bytes | None = None
) -> Iterator[tuple[str, Any]]:
    """Records of a JSON list (places ``$[i]``) or of JSONL (places ``line N``), in file order.

    A file that cannot be read or parsed, or a JSONL line that is not JSON, adds its defect when
    reached, so the defects of a file stay in file order; so does a value nested too deeply or
    an overlong integer (:mod:`verdictpack.config._data_json`). ``data``, when given, is the
    file's bytes as already read, parsed instead of reading ``path``.
    """
    try:
        raw = path.read_bytes() if data is None else data
        text = raw.decode("utf-8-sig")
    except OSError as exc:
        defects.add("(file)", str(exc), "a readable UTF-8 JSON or JSONL file")
        return
    except UnicodeDecodeError:
        defects.add_defect(not_utf8(defects.file, raw))
        return
    if text.lstrip().startswith("["):
        try:
            whole = load_data_json(text)
        except json.JSONDecodeError as exc:
            defects.add(f"line {exc.lineno}", exc.msg, "valid JSON")
            return
        except DataJSONError as exc:
            defects.add("$", exc.received, exc.expected)
            return
        if not isinstance(whole, list):
            defects.add("$", type(whole).__name__, "a JSON list of records")
            return
        for i, item in enumerate(whole):
            yield f"$[{i}]", item
        return
    # lines end at LF, CR LF or CR only (str.splitlines also cuts at U+2028, NEL ... which a
    # JSON string may hold as they are)
    for number, line in enumerate(text_lines(text), start=1):
        if not line.strip():
            continue
        try:
            record = load_data_json(line)
        except json.JSONDecodeError as exc:
            received = line.rstrip("\n")[:60]
            defects.add(f"line {number}", received, f"one JSON record per line ({exc.msg})")
            continue
        except DataJSONError as exc:
            defects.add(f"line {number}", exc.received, exc.expected)
            continue
        yield f"line {number}", record


def at(base: str, suffix: str) -> str:
    """A place inside a record: JSON path under ``$[i]``; a JSONL record stays ``line N``."""
    return base + suffix if base.startswith("$") else base


def lookup(record: Mapping[str, Any], spec: str) -> tuple[bool, Any]:
    """Value at a dotted key (``"data.pair_id"``, ``"metadata.side"``); (found, value)."""
    node: Any = record
    for part in spec.split("."):
        if not isinstance(node, Mapping) or part not in node:
            return False, None
        node = node[part]
    return True, node


def root_and_side(
    record: Mapping[str, Any],
    base: str,
    prefix: str,
    root_key: str,
    side_key: str | None,
    treatment_side: str | None,
    sides: Mapping[str, str],
    defects: Defects,
) -> tuple[str, str] | None:
    """The root id and the side holding the treatment of one record (``treatment_side`` fixed, or
    read at ``side_key`` through ``sides``); None, with a defect at ``base + prefix + key``, when
    either cannot be read."""
    found, root = lookup(record, root_key)
    if not found or not isinstance(root, (str, int)) or isinstance(root, bool) or root == "":
        defects.add(
            at(base, f"{prefix}.{root_key}"),
            root if found else "(missing)",
            "a root id (string or integer)",
        )
        return None
    problem = root_id_problem(str(root))
    if problem is not None:
        defects.add(at(base, f"{prefix}.{root_key}"), root, problem)
        return None
    side = treatment_side
    if side is None:
        key = side_key or ""
        found, raw_side = lookup(record, key)
        side = sides.get(raw_side) if isinstance(raw_side, str) else None
        if side is None:
            defects.add(
                at(base, f"{prefix}.{key}"),
                raw_side if found else "(missing)",
                f"one of {sorted(sides)} (the side holding the treatment)",
            )
            return None
    return str(root), side
