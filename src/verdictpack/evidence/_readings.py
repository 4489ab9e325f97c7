"""The reader-reconstruction audit's double readings, read from a CSV or JSONL file.

One record a reading: the root read, the reader, and the category the reader reconstructed
(the property the construct manipulates, e.g. "treatment" / "null_partner", or more
categories). A mapping names the columns (default: ``root_id``, ``reader_id``, ``category``).
Each root must be read exactly twice, by two different readers; every record that breaks this,
or that cannot be read, is a :class:`~verdictpack._errors.Defect` at ``line N``: so is a CSV
header naming a column twice, a root id with white space at either end or a control character
(:func:`~verdictpack.stimuli._pairs.root_id_problem`), and a JSONL value nested deeper than 200
levels or an integer of more than 100 digits (:mod:`verdictpack.config._data_json`).
"""

from __future__ import annotations

import csv
import io
import json
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from verdictpack._cells import csv_cell, csv_values
from verdictpack._errors import Defect, not_utf8
from verdictpack.config._data_json import DataJSONError, load_data_json
from verdictpack.evidence._table import cap_defects
from verdictpack.stimuli._pairs import root_id_problem

__all__ = ["READING_COLUMNS", "Readings", "read_readings"]

READING_COLUMNS = ("root_id", "reader_id", "category")


@dataclass(frozen=True)
class Readings:
    """Double readings: ``root[i]`` read by ``reader[i]`` as ``category[i]`` (file order)."""

    root: tuple[str, ...]
    reader: tuple[str, ...]
    category: tuple[str, ...]
    lines: tuple[int, ...]

    def __len__(self) -> int:
        return len(self.root)

    def to_csv_bytes(self) -> bytes:
        """The canonical readings: header ``root_id,reader_id,category``, one reading a row."""
        buf = io.StringIO()
        w = csv.writer(buf, lineterminator="\n")
        w.writerow(READING_COLUMNS)
        # cells a spreadsheet would run as a formula get a leading ' (verdictpack._cells)
        w.writerows(
            map(csv_cell, row) for row in zip(self.root, self.reader, self.category, strict=True)
        )
        return buf.getvalue().encode("utf-8")


def _text(v: Any) -> str | None:
    if isinstance(v, str):
        return v
    if isinstance(v, bool) or v is None:
        return None
    if isinstance(v, int):
        return str(v)
    return None


def _records(
    path: Path, name: str, defects: list[Defect], data: bytes | None
) -> list[tuple[int, dict[str, Any]]]:
    try:
        raw = path.read_bytes() if data is None else data
        text = raw.decode("utf-8-sig")
    except OSError as exc:
        defects.append(Defect(name, "(file)", str(path), f"a readable file ({exc.strerror})"))
        return []
    except UnicodeDecodeError:
        defects.append(not_utf8(name, raw))
        return []
    out: list[tuple[int, dict[str, Any]]] = []
    if path.suffix.lower() == ".jsonl":
        for n, text_line in enumerate(text.split("\n"), start=1):
            if not text_line.strip():
                continue
            try:
                value = load_data_json(text_line)
            except json.JSONDecodeError as exc:
                defects.append(Defect(name, f"line {n}", text_line.strip(), f"JSON ({exc.msg})"))
                continue
            except DataJSONError as exc:
                defects.append(Defect(name, f"line {n}", exc.received, exc.expected))
                continue
            if not isinstance(value, dict):
                defects.append(Defect(name, f"line {n}", value, "a JSON object"))
                continue
            out.append((n, value))
        return out
    reader = csv.reader(io.StringIO(text, newline=""))
    header: list[str] | None = None
    start = 1
    try:
        for row in reader:
            line, start = start, reader.line_num + 1
            if not row:
                continue
            if header is None:
                header = row
                repeated = sorted({c for c in row if row.count(c) > 1})
                if repeated:
                    defects.append(Defect(name, f"line {line}", repeated, "each column named once"))
                    return []
                continue
            if len(row) != len(header):
                defects.append(Defect(name, f"line {line}", len(row), f"{len(header)} fields"))
                continue
            # the spreadsheet rule of the CSVs verdictpack writes, undone exactly
            out.append((line, dict(zip(header, csv_values(row), strict=True))))
    except csv.Error as exc:
        defects.append(Defect(name, f"line {reader.line_num}", str(exc), "well-formed CSV"))
    if header is None:
        defects.append(Defect(name, "line 1", "(empty file)", "a header line"))
    return out


def read_readings(
    path: Path,
    mapping: Mapping[str, str] | None = None,
    display: str | None = None,
    data: bytes | None = None,
) -> tuple[Readings, tuple[Defect, ...]]:
    """Read a file of double readings (module docstring); ``(readings, defects)``. ``data``,
    when given, is the file's bytes as already read, parsed instead of reading ``path``."""
    name = display if display is not None else path.name
    cols = {c: (mapping or {}).get(c, c) for c in READING_COLUMNS}
    defects: list[Defect] = []
    if path.suffix.lower() not in (".csv", ".jsonl"):
        return Readings((), (), (), ()), (Defect(name, "(file)", path.suffix, "a .csv or .jsonl"),)
    records = _records(path, name, defects, data)
    kept: list[tuple[int, str, str, str]] = []
    for line, rec in records:
        values = []
        for role, col in cols.items():
            v = _text(rec.get(col))
            if v is None or not v.strip():
                defects.append(
                    Defect(name, f"line {line}", rec.get(col), f"a non-empty '{col}' ({role})")
                )
                break
            values.append(v)
        else:
            problem = root_id_problem(values[0])
            if problem is not None:
                defects.append(
                    Defect(name, f"line {line}", values[0], f"{problem} ({cols['root_id']})")
                )
                continue
            kept.append((line, values[0], values[1], values[2]))
    by_root: dict[str, list[tuple[int, str, str, str]]] = {}
    for item in kept:
        by_root.setdefault(item[1], []).append(item)
    good: list[tuple[int, str, str, str]] = []
    for rid, group in by_root.items():
        if len(group) != 2:
            for line, *_ in group:
                defects.append(
                    Defect(
                        name, f"line {line}", rid, f"two readings of root {rid!r} ({len(group)})"
                    )
                )
            continue
        if group[0][2] == group[1][2]:
            defects.append(
                Defect(
                    name,
                    f"line {group[1][0]}",
                    group[1][2],
                    f"a second reader for root {rid!r} (line {group[0][0]} has the same reader)",
                )
            )
            continue
        good.extend(group)
    good.sort()
    defects.sort(key=lambda d: (d.path != "(file)", int(d.path[5:]) if d.path[5:].isdigit() else 0))
    readings = Readings(
        tuple(g[1] for g in good),
        tuple(g[2] for g in good),
        tuple(g[3] for g in good),
        tuple(g[0] for g in good),
    )
    return readings, cap_defects(defects, name)
