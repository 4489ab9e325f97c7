"""Label Studio JSON export (Label Studio 1.x, "Export > JSON") of pairwise choices.

The export is a JSON list of tasks::

    [{"id": 7, "data": {"pair_id": "r1", "treatment_side": "left", ...},
      "annotations": [{"id": 11, "completed_by": 3, "was_cancelled": false,
                       "created_at": "2024-05-01T10:00:00.000000Z",
                       "result": [{"from_name": "pref", "to_name": "pair", "type": "pairwise",
                                   "value": {"selected": "left"}}]}]}]

Two controls are read: ``pairwise`` (``value.selected`` is ``left`` or ``right``) and ``choices``
(``value.choices`` is a one-label list mapped through ``value_map`` to left/right/tie/invalid).
``left`` is the side shown first. A skipped/cancelled annotation (``was_cancelled: true``)
becomes an ``invalid`` judgment: counted, never dropped. A task without annotations gives no
judgment and is counted in the result's notes; an export none of whose tasks carries an
annotation (exported before anyone annotated) is refused at ``$``. JSONL (one task a line) is
read too.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from verdictpack._errors import Defect, InputError
from verdictpack.evidence._table import RATER_KINDS, ImportResult, Judgment, Origin
from verdictpack.evidence.importers._common import (
    Defects,
    at,
    check_sides,
    check_value_map,
    display_name,
    load_json_records,
    map_value,
    resolve,
    root_and_side,
)

__all__ = ["read_labelstudio"]

_DEFAULT_PAIRWISE = {"left": "left", "right": "right"}


def _rater(value: Any) -> str | None:
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return str(value)
    if isinstance(value, str) and value:
        return value
    if isinstance(value, Mapping):
        for key in ("id", "email"):
            found = value.get(key)
            if isinstance(found, int) and not isinstance(found, bool):
                return str(found)
            if isinstance(found, str) and found:
                return found
    return None


def read_labelstudio(
    path: Path,
    *,
    root_field: str,
    control: str,
    treatment_side_field: str | None = None,
    treatment_side: str | None = None,
    side_map: Mapping[str, str] | None = None,
    value_map: Mapping[Any, str] | None = None,
    rater_kind: str = "human",
    display: str | None = None,
    data: bytes | None = None,
) -> ImportResult:
    """Read a Label Studio JSON export into canonical judgments.

    ``root_field`` and ``treatment_side_field`` name keys of the task's ``data``; give
    ``treatment_side`` ("left"/"right") instead when the treatment is always on one side.
    ``side_map`` maps the side field's values to left/right (default: the values themselves).
    ``control`` is the ``from_name`` of the pairwise or choices control; ``value_map`` maps its
    values (choices labels; for pairwise, optional) to left/right/tie/invalid. A ``control``
    that no annotation's results name is refused once, listing the controls the export holds
    (and each annotation without it, at its place). ``data``, when given, is the file's bytes as
    already read, parsed instead of reading ``path``.
    """
    path = Path(path)
    if rater_kind not in RATER_KINDS:
        raise InputError("rater_kind", "'model' or 'human'", rater_kind)
    sides = check_sides(treatment_side_field, treatment_side, side_map, "field")
    values = check_value_map("value_map", value_map, required=False)
    defects = Defects(display_name(path, display))
    judgments: list[Judgment] = []
    controls: set[str] = set()  # every from_name of every annotation's results
    tasks = unannotated = 0  # tasks whose annotations were read; those with none
    for base, task in load_json_records(path, defects, data):
        if not isinstance(task, Mapping):
            defects.add(base, type(task).__name__, "a task object")
            continue
        data = task.get("data")
        if not isinstance(data, Mapping):
            defects.add(at(base, ".data"), data, "an object of the task's data")
            continue
        placed = root_and_side(
            data, base, ".data", root_field, treatment_side_field, treatment_side, sides, defects
        )
        if placed is None:
            continue
        root, side = placed
        annotations = task.get("annotations")
        if not isinstance(annotations, list):
            defects.add(at(base, ".annotations"), annotations, "a list of annotations")
            continue
        tasks += 1
        unannotated += not annotations
        for j, annotation in enumerate(annotations):
            place = at(base, f".annotations[{j}]")
            result = annotation.get("result") if isinstance(annotation, Mapping) else None
            if isinstance(result, list):
                controls.update(
                    str(r["from_name"])
                    for r in result
                    if isinstance(r, Mapping) and "from_name" in r
                )
            judgment = _annotation(
                annotation, place, str(root), side, control, values, rater_kind, defects
            )
            if judgment is not None:
                judgments.append(Judgment(**{**judgment, "origin": Origin(defects.file, place)}))
    notes: list[str] = []
    if tasks and unannotated == tasks:  # an export taken before anyone annotated: refused
        defects.add(
            "$",
            f"{tasks} tasks, none with an annotation",
            "at least one annotated task (every human judgment would be lost)",
        )
    elif unannotated:
        notes.append(f"{unannotated} of {tasks} tasks have no annotation and give no judgment")
    found = defects.result()
    if controls and control not in controls:  # named first: each annotation's defect follows
        names = ", ".join(sorted(controls))
        expected = f"a control of the export (controls it holds: {names})"
        found = (Defect(defects.file, "$", control, expected), *found)
    return ImportResult.from_judgments(judgments, found, notes)


def _annotation(
    annotation: Any,
    place: str,
    root: str,
    side: str,
    control: str,
    values: Mapping[Any, str],
    rater_kind: str,
    defects: Defects,
) -> dict[str, Any] | None:
    if not isinstance(annotation, Mapping):
        defects.add(place, type(annotation).__name__, "an annotation object")
        return None
    rater = _rater(annotation.get("completed_by"))
    if rater is None:
        defects.add(
            at(place, ".completed_by"),
            annotation.get("completed_by", "(missing)"),
            "a user id (integer) or an object with id or email",
        )
        return None
    timestamp = annotation.get("created_at")
    common: dict[str, Any] = {
        "root_id": root,
        "rater_id": rater,
        "rater_kind": rater_kind,
        "timestamp": timestamp if isinstance(timestamp, str) else None,
    }
    if annotation.get("was_cancelled") is True:
        order, choice = resolve("invalid", side)
        return {**common, "order": order, "choice": choice, "raw": "was_cancelled"}
    result = annotation.get("result")
    if not isinstance(result, list):
        defects.add(at(place, ".result"), result, "a list of results")
        return None
    hits = [
        (k, item)
        for k, item in enumerate(result)
        if isinstance(item, Mapping) and item.get("from_name") == control
    ]
    if len(hits) != 1:
        defects.add(
            at(place, ".result"),
            f"{len(hits)} results from {control!r}",
            f"exactly one result of the control {control!r}",
        )
        return None
    k, item = hits[0]
    value = item.get("value")
    kind = item.get("type")
    where = at(place, f".result[{k}].value")
    if not isinstance(value, Mapping):
        defects.add(where, value, "an object with 'selected' or 'choices'")
        return None
    if kind == "pairwise":
        raw = value.get("selected")
        position = map_value(values or _DEFAULT_PAIRWISE, raw)
        where += ".selected"
    elif kind == "choices":
        labels = value.get("choices")
        where += ".choices"
        if not isinstance(labels, list) or len(labels) != 1:
            defects.add(where, labels, "a list of exactly one label")
            return None
        raw = labels[0]
        position = map_value(values, raw)
    else:
        defects.add(at(place, f".result[{k}].type"), kind, "'pairwise' or 'choices'")
        return None
    if position is None:
        expected = sorted(map(str, values)) if values else ["left", "right"]
        defects.add(where, raw, f"one of {expected} (value_map)")
        return None
    order, choice = resolve(position, side)
    return {**common, "order": order, "choice": choice, "raw": str(raw)}
