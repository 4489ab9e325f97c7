"""Amazon Mechanical Turk batch results CSV ("Download CSV" of a batch in the requester site,
or the Batch_NNN_batch_results.csv file).

Columns read: ``HITId``, ``AssignmentId``, ``WorkerId``, ``AssignmentStatus`` (``Submitted``,
``Approved``, ``Rejected``), ``SubmitTime``, the ``Input.<field>`` columns holding the root id and
(optionally) the treatment's side, and one ``Answer.<field>`` column. Other columns are ignored.
Every row is one human judgment: rater id the ``WorkerId``, timestamp the ``SubmitTime`` text,
raw the Answer value. A ``Rejected`` assignment becomes ``invalid`` (counted, never dropped).
Defects are placed at the row's first physical line (``line N``; the header is line 1), quoting
the csv module refuses (a quote left open, text after a closing quote) too. A header naming a
column twice is refused (which of the two would be read?).
"""

from __future__ import annotations

import csv
import io
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from verdictpack._errors import not_utf8
from verdictpack.evidence._table import CSV_QUOTING, ImportResult, Judgment, Origin
from verdictpack.evidence.importers._common import (
    Defects,
    check_sides,
    check_value_map,
    display_name,
    map_value,
    resolve,
)

__all__ = ["read_mturk"]

_REQUIRED = ("HITId", "AssignmentId", "WorkerId", "AssignmentStatus", "SubmitTime")
_STATUSES = ("Submitted", "Approved", "Rejected")


def _column(name: str, prefix: str) -> str:
    return name if name.startswith(prefix) else prefix + name


def read_mturk(
    path: Path,
    *,
    root_column: str,
    answer_column: str,
    value_map: Mapping[str, str],
    treatment_side_column: str | None = None,
    treatment_side: str | None = None,
    side_map: Mapping[str, str] | None = None,
    display: str | None = None,
    data: bytes | None = None,
) -> ImportResult:
    """Read an MTurk batch results CSV into canonical human judgments (``data``, when given:
    the file's bytes as already read, parsed instead of reading ``path``).

    Column names may be given with or without their ``Input.`` / ``Answer.`` prefix.
    ``value_map`` maps Answer values to left/right/tie/invalid (``left`` = shown first);
    ``side_map`` maps the side column's values to left/right (default: the values themselves).
    """
    path = Path(path)
    sides = check_sides(treatment_side_column, treatment_side, side_map, "column")
    values = check_value_map("value_map", value_map, required=True)
    root_col = _column(root_column, "Input.")
    answer_col = _column(answer_column, "Answer.")
    side_col = None if treatment_side_column is None else _column(treatment_side_column, "Input.")
    defects = Defects(display_name(path, display))
    judgments: list[Judgment] = []
    try:
        raw = path.read_bytes() if data is None else data
        with io.TextIOWrapper(io.BytesIO(raw), "utf-8-sig", newline="") as handle:
            reader = csv.reader(handle, strict=True)
            header = next(reader, None)
            if header is None:
                defects.add("line 1", "(empty file)", "a header row")
                return ImportResult.from_judgments((), defects.result())
            repeated = sorted({name for name in header if header.count(name) > 1})
            if repeated:
                defects.add("line 1", repeated, "a header naming each column once")
                return ImportResult.from_judgments((), defects.result())
            wanted = [*_REQUIRED, root_col, answer_col, *([side_col] if side_col else [])]
            missing = [name for name in wanted if name not in header]
            if missing:
                defects.add("line 1", missing, f"a header with the columns {wanted}")
                return ImportResult.from_judgments((), defects.result())
            index = {name: header.index(name) for name in wanted}
            start = reader.line_num + 1
            while True:  # bounded: every pass reads at least one line, or ends
                where = f"line {start}"
                try:
                    row = next(reader, None)
                except csv.Error as exc:
                    defects.add(where, str(exc), CSV_QUOTING)
                    continue
                finally:
                    start = reader.line_num + 1
                if row is None:
                    break
                if not row or all(not cell.strip() for cell in row):
                    continue
                made = _row(
                    row,
                    len(header),
                    index,
                    where,
                    root_col,
                    answer_col,
                    side_col,
                    sides,
                    treatment_side,
                    values,
                    defects,
                )
                if made is not None:
                    judgments.append(made)
    except UnicodeDecodeError:
        defects.add_defect(not_utf8(defects.file, raw))
    except (OSError, csv.Error) as exc:
        defects.add("(file)", str(exc), "a readable UTF-8 CSV file")
    return ImportResult.from_judgments(judgments, defects.result())


def _row(
    row: list[str],
    width: int,
    index: Mapping[str, int],
    where: str,
    root_col: str,
    answer_col: str,
    side_col: str | None,
    sides: Mapping[str, str],
    fixed_side: str | None,
    values: Mapping[Any, str],
    defects: Defects,
) -> Judgment | None:
    if len(row) != width:
        defects.add(where, f"{len(row)} cells", f"{width} cells, as in the header")
        return None
    cell = {name: row[i].strip() for name, i in index.items()}
    bad = False
    for name in ("WorkerId", "AssignmentId", root_col):
        if not cell[name]:
            defects.add(where, "", f"{name}: a non-empty value")
            bad = True
    status = cell["AssignmentStatus"]
    if status not in _STATUSES:
        defects.add(where, status, f"AssignmentStatus: one of {list(_STATUSES)}")
        bad = True
    side = fixed_side
    if side_col is not None:
        side = sides.get(cell[side_col])
        if side is None:
            defects.add(
                where,
                cell[side_col],
                f"{side_col}: one of {sorted(sides)} (the side holding the treatment)",
            )
            bad = True
    raw = cell[answer_col]
    position = "invalid" if status == "Rejected" else map_value(values, raw)
    if position is None:
        defects.add(where, raw, f"{answer_col}: one of {sorted(values)} (value_map)")
        bad = True
    if bad or side is None or position is None:
        return None
    order, choice = resolve(position, side)
    return Judgment(
        root_id=cell[root_col],
        rater_id=cell["WorkerId"],
        rater_kind="human",
        order=order,
        choice=choice,
        raw=raw,
        timestamp=cell["SubmitTime"] or None,
        origin=Origin(defects.file, where),
    )
