"""User stimulus files: a JSONL or CSV of pairs read into :class:`Stimulus` objects.

:func:`read_pairs` reads one file of pairs through a field *mapping* from the roles of a stimulus
to the file's columns (CSV header names or JSONL keys)::

    {"id": "pair_id", "source": "article", "treatment": "text_a", "null_partner": "text_b",
     "metadata": ["topic", "annotator"]}

``id``, ``treatment`` and ``null_partner`` are required; ``source`` is optional (absent or None:
the stimuli have no source passage); ``metadata`` lists columns copied into each stimulus's
metadata under their own names (default none).

**Natural pairs** map ``a`` and ``b`` (the pair's two texts) instead of ``treatment`` and
``null_partner``, and name the treatment per pair by one of: ``treatment_column``, a column whose
value (translated by ``treatment_values``, default the values ``a`` and ``b`` themselves) says
which side holds it; or ``treatment_rule`` (:data:`TREATMENT_RULES`), the longer or shorter text
in words or characters (the length gate's lengths, :func:`~verdictpack.stimuli._text.text_length`),
a rule fixed before the data. A tie under the rule leaves side a as the treatment and the
:class:`TreatmentRuleGate` refuses the pair (counted with the gates' refusals, listed by id).
:attr:`PairsResult.b_treated` holds the ids whose treatment is side b: a judgment file that names
the sides is read as if side a were the treatment, and these pairs' judgments are mirrored.

The format follows the file name: ``.jsonl`` (one JSON object per line; blank lines are
skipped) or ``.csv`` (a header line, then records; UTF-8, a leading byte-order mark is ignored;
quoted fields may span lines).

Nothing is dropped silently. Every defect of the file is collected (up to :data:`MAX_DEFECTS`,
then one defect counting the rest) as a :class:`~verdictpack._errors.Defect` whose path is
``line N`` -- the 1-based physical line where the record starts:

* a mapped column absent from the file is named once, against the header (``line 1`` of a CSV;
  for JSONL, at the first record, when no record has that key) -- not once per row;
* a record that cannot be read (JSONL: not valid JSON or not an object; CSV: a field count that
  differs from the header's) or that lacks a mapped key (JSONL);
* an id that is missing, empty, or not a string or integer (integers are read as their decimal
  text), or with white space at either end or a control character (:func:`root_id_problem`:
  root_order.txt and the outputs hold one id a line); a duplicate id (every later record with
  it is refused, naming the first one's line, even when the first record was refused for
  another defect);
* a treatment, null-partner or mapped source text that is missing, not a string, or empty (white
  space only).

A JSON value nested deeper than 200 levels or an integer of more than 100 digits is refused at
its line (:mod:`verdictpack.config._data_json`). A file that cannot be read at all gives one
defect with path ``(file)``. A record with any defect gives no stimulus; every other record
gives one, in file order. The mapping itself is an API argument: a malformed mapping raises
:class:`~verdictpack._errors.InputError` naming ``mapping``.
"""

from __future__ import annotations

import csv
import io
import json
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any, NamedTuple

from verdictpack._errors import MISSING, Defect, InputError, not_utf8
from verdictpack._validate import nonempty_str
from verdictpack.config._data_json import DataJSONError, load_data_json
from verdictpack.stimuli._gates import GateOutcome
from verdictpack.stimuli._stimulus import Stimulus
from verdictpack.stimuli._text import text_length

__all__ = [
    "MAX_DEFECTS",
    "PAIR_FIELDS",
    "TREATMENT_RULES",
    "PairsResult",
    "TreatmentRuleGate",
    "read_pairs",
    "root_id_problem",
]

# the most defects reported one by one; the rest are counted in one closing defect
MAX_DEFECTS = 50

# the roles of a mapping: the three required text/id fields, then the optional ones
PAIR_FIELDS = ("id", "source", "treatment", "null_partner", "a", "b", "metadata")
TREATMENT_RULES = ("longer_words", "longer_characters", "shorter_words", "shorter_characters")
_REQUIRED = ("id", "treatment", "null_partner")
_TEXT_ROLES = ("source", "treatment", "null_partner")


class _PairsFields(NamedTuple):
    stimuli: tuple[Stimulus, ...]
    defects: tuple[Defect, ...]


class PairsResult(_PairsFields):
    """What :func:`read_pairs` returns: the stimuli read and the defects found (both in order),
    a named 2-tuple; natural pairs also set ``b_treated``, the ids whose treatment is side b."""

    b_treated: frozenset[str] = frozenset()


class TreatmentRuleGate:
    """Natural pairs under a treatment rule: the treatment and null partner differ in length
    (measured = |L_t - L_n| in the rule's unit; a tie names no treatment and is refused)."""

    name = "treatment_rule"

    def __init__(self, rule: str) -> None:
        if rule not in TREATMENT_RULES:
            raise InputError("treatment_rule", "one of " + ", ".join(TREATMENT_RULES), rule)
        self.unit = rule.split("_")[1]

    def check(self, stimulus: Stimulus) -> GateOutcome:
        diff = abs(
            text_length(stimulus.treatment, self.unit)
            - text_length(stimulus.null_partner, self.unit)
        )
        return GateOutcome(diff >= 1, float(diff), 1.0)


class _Mapping(NamedTuple):
    id: str
    source: str | None
    treatment: str
    null_partner: str
    metadata: tuple[str, ...]
    natural: bool = False
    side_column: str | None = None

    def role(self, role: str) -> str:
        """A text role as the mapping names it (natural pairs: a and b)."""
        return {"treatment": "a", "null_partner": "b"}.get(role, role) if self.natural else role

    def columns(self) -> tuple[tuple[str, str], ...]:
        """(role, column) for every mapped column, roles in :data:`PAIR_FIELDS` order."""
        out = [("id", self.id)]
        if self.source is not None:
            out.append(("source", self.source))
        out += [
            (self.role("treatment"), self.treatment),
            (self.role("null_partner"), self.null_partner),
        ]
        out += [("metadata", m) for m in self.metadata]
        if self.side_column is not None:
            out.append(("treatment_column", self.side_column))
        return tuple(out)


def _check_mapping(mapping: Any, side_column: str | None = None) -> _Mapping:
    if not isinstance(mapping, Mapping):
        raise InputError("mapping", "a mapping of roles to column names", type(mapping).__name__)
    mapping = {k: v for k, v in mapping.items() if v is not None}
    unknown = sorted(str(k) for k in mapping if k not in PAIR_FIELDS)
    if unknown:
        raise InputError("mapping", f"keys among {list(PAIR_FIELDS)}", unknown)
    natural = "a" in mapping or "b" in mapping
    if natural:
        if "treatment" in mapping or "null_partner" in mapping:
            raise InputError("mapping", "'a' and 'b' or 'treatment' and 'null_partner'", mapping)
        mapping = {**mapping, "treatment": mapping.get("a"), "null_partner": mapping.get("b")}
        mapping = {k: v for k, v in mapping.items() if v is not None and k not in ("a", "b")}
    for role in _REQUIRED:
        if role not in mapping:
            raise InputError("mapping", f"a column name for '{role}'", dict(mapping))
        nonempty_str(f"mapping.{role}", mapping[role])
    source = mapping.get("source")
    if source is not None:
        nonempty_str("mapping.source", source)
    meta = mapping.get("metadata", ())
    if meta is None:
        meta = ()
    if isinstance(meta, str) or not isinstance(meta, Sequence):
        raise InputError("mapping.metadata", "a list of column names", meta)
    for m in meta:
        nonempty_str("mapping.metadata", m, "a list of non-empty column names")
    result = _Mapping(
        mapping["id"],
        source,
        mapping["treatment"],
        mapping["null_partner"],
        tuple(meta),
        natural,
        side_column,
    )
    cols = [c for _, c in result.columns()]
    repeated = sorted({c for c in cols if cols.count(c) > 1})
    if repeated:
        raise InputError("mapping", "each column mapped to one role only", repeated)
    return result


class _Collector:
    """Defects of one file, in line order, capped at MAX_DEFECTS with a count of the rest."""

    def __init__(self, file: str) -> None:
        self.file = file
        self.items: list[tuple[int, Defect]] = []

    def add(self, line: int, received: Any, expected: str) -> None:
        self.items.append((line, Defect(self.file, f"line {line}", received, expected)))

    def result(self) -> tuple[Defect, ...]:
        ordered = [d for _, d in sorted(self.items, key=lambda item: item[0])]
        more = len(ordered) - MAX_DEFECTS
        if more <= 0:
            return tuple(ordered)
        tail = Defect(
            self.file,
            "(more)",
            more,
            f"no further defects (the first {MAX_DEFECTS} are listed; {more} more not shown)",
        )
        return (*ordered[:MAX_DEFECTS], tail)


_Records = tuple[list[tuple[int, dict[str, Any]]], set[str]]


def _records_jsonl(text: str, mapping: _Mapping, out: _Collector) -> _Records:
    """(line, record) of every readable JSONL object, and the mapped keys in no record."""
    records: list[tuple[int, dict[str, Any]]] = []
    for n, line in enumerate(text.split("\n"), start=1):
        if not line.strip():
            continue
        try:
            value = load_data_json(line)
        except json.JSONDecodeError as exc:
            out.add(n, line.strip(), f"a JSON object ({exc.msg})")
            continue
        except DataJSONError as exc:
            out.add(n, exc.received, exc.expected)
            continue
        if not isinstance(value, dict):
            out.add(n, value, "a JSON object")
            continue
        records.append((n, value))
    absent: set[str] = set()
    if records:
        seen: set[str] = set()
        for _, rec in records:
            seen.update(rec)
        first = records[0][0]
        for role, col in mapping.columns():
            if col not in seen:
                absent.add(col)
                out.add(
                    first,
                    col,
                    f"a key present in the file for mapping '{role}' "
                    f"(keys in the file: {', '.join(sorted(seen))})",
                )
    return records, absent


def _records_csv(text: str, mapping: _Mapping, out: _Collector) -> _Records:
    """(line, record) of every CSV record whose field count matches the header, and the
    mapped columns not in the header."""
    reader = csv.reader(io.StringIO(text, newline=""))
    records: list[tuple[int, dict[str, Any]]] = []
    start = 1
    header: list[str] | None = None
    absent: set[str] = set()
    try:
        for row in reader:
            line, start = start, reader.line_num + 1
            if not row or (len(row) == 1 and not row[0].strip()):
                continue
            if header is None:
                header = row
                repeated = sorted({c for c in row if row.count(c) > 1})
                if repeated:
                    out.add(line, repeated, "column names that appear once")
                for role, col in mapping.columns():
                    if col not in row:
                        absent.add(col)
                        out.add(
                            line,
                            col,
                            f"a column of the header for mapping '{role}' "
                            f"(header: {', '.join(row)})",
                        )
                continue
            if len(row) != len(header):
                out.add(line, len(row), f"{len(header)} fields, as in the header")
                continue
            records.append((line, dict(zip(header, row, strict=True))))
    except csv.Error as exc:
        out.add(reader.line_num, str(exc), "a well-formed CSV record")
    if header is None:
        out.add(1, "(empty file)", "a header line naming the columns")
    return records, absent


_ID_CONTROL = frozenset(chr(c) for c in (*range(0x20), *range(0x7F, 0xA0), 0x2028, 0x2029))


def root_id_problem(root_id: str) -> str | None:
    """What is wrong with a root id as every file of a study must hold it, or None: white space
    at either end, or a control character (a line break included) anywhere -- root_order.txt and
    the outputs hold one id a line, and an id read back must be the id written."""
    if root_id != root_id.strip():
        return "an id without white space at its start or end"
    if not _ID_CONTROL.isdisjoint(root_id):
        return "an id without control characters (line breaks, tabs ...)"
    return None


def _read_text(path: Path, out: _Collector, given: bytes | None = None) -> str | None:
    try:
        data = path.read_bytes() if given is None else given
    except OSError as exc:
        # before any line: sorts first
        out.items.append(
            (0, Defect(out.file, "(file)", exc.strerror or str(exc), "a readable file"))
        )
        return None
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError:
        # the file's only defect (nothing is read past it): sorts first, its line in its path
        out.items.append((0, not_utf8(out.file, data)))
        return None


def read_pairs(
    path: Path | str,
    mapping: Mapping[str, Any],
    display: str | None = None,
    data: bytes | None = None,
    *,
    treatment_column: str | None = None,
    treatment_values: Mapping[str, str] | None = None,
    treatment_rule: str | None = None,
) -> PairsResult:
    """Read a JSONL or CSV file of pairs into stimuli, collecting every defect (module docstring).

    ``display`` is the file's name in defects (default: ``path`` as given); ``data``, when given,
    is the file's bytes as already read (the caller hashes the same bytes), parsed instead of
    reading ``path`` (which then only names the format). Returns
    ``PairsResult(stimuli, defects)``, a named 2-tuple; the stimuli are those of the records
    without defects, in file order. Natural pairs (a ``mapping`` of ``a`` and ``b``) take
    exactly one of ``treatment_column`` (with ``treatment_values``) and ``treatment_rule``
    (module docstring).
    """
    if not isinstance(path, (str, Path)):
        raise InputError("path", "a path", type(path).__name__)
    path = Path(path)
    if display is not None:
        nonempty_str("display", display)
    m = _check_mapping(mapping, treatment_column)
    if m.natural and (treatment_column is None) == (treatment_rule is None):
        raise InputError(
            "treatment_column", "exactly one of treatment_column and treatment_rule", mapping
        )
    if not m.natural and (treatment_column or treatment_rule or treatment_values):
        raise InputError("mapping", "'a' and 'b' (natural pairs) with a treatment", mapping)
    if treatment_rule is not None:
        TreatmentRuleGate(treatment_rule)  # the rule checked by name
    sides = dict(treatment_values or {})
    b_treated: set[str] = set()
    out = _Collector(display if display is not None else str(path))
    suffix = path.suffix.lower()
    if suffix not in (".jsonl", ".csv"):
        raise InputError("path", "a file named *.jsonl or *.csv", str(path))
    text = _read_text(path, out, data)
    if text is None:
        return PairsResult((), out.result())
    read = _records_jsonl if suffix == ".jsonl" else _records_csv
    records, absent = read(text, m, out)
    stimuli: list[Stimulus] = []
    first_line: dict[str, int] = {}
    if not records and not out.items:
        expected = "a record after the header" if suffix == ".csv" else "at least one JSON object"
        out.add(1, "(no records)", expected)
    columns = m.columns()
    text_columns = [(m.role(role), getattr(m, role)) for role in _TEXT_ROLES]
    for line, rec in records:
        where = line
        # a column absent from the whole file was named once; its records give no stimulus
        ok = not absent
        for role, col in columns:
            if col not in rec and col not in absent:
                out.add(where, MISSING, f"a value for '{col}' (mapping '{role}')")
                ok = False
        raw_id = rec.get(m.id, MISSING)
        if isinstance(raw_id, int) and not isinstance(raw_id, bool):
            raw_id = str(raw_id)
        if raw_id is MISSING:
            pass
        elif not isinstance(raw_id, str) or not raw_id.strip():
            out.add(where, raw_id, f"a non-empty id in '{m.id}' (a string or an integer)")
            ok = False
        elif root_id_problem(raw_id) is not None:
            out.add(where, raw_id, f"{root_id_problem(raw_id)} in '{m.id}'")
            ok = False
        elif raw_id in first_line:
            out.add(where, raw_id, f"a unique id (first used at line {first_line[raw_id]})")
            ok = False
        else:
            first_line[raw_id] = line
        texts: dict[str, str | None] = {"source": None}
        for role, col in text_columns:
            if col is None or col not in rec:
                continue
            value = rec[col]
            if not isinstance(value, str) or not value.strip():
                out.add(where, value, f"a non-empty text in '{col}' (mapping '{role}')")
                ok = False
            else:
                texts[role] = value
        swap = False
        if m.side_column is not None and m.side_column in rec:
            value = rec[m.side_column]
            if isinstance(value, int) and not isinstance(value, bool):
                value = str(value)  # as ids: an integer is read as its decimal text
            side = sides.get(value, value) if isinstance(value, str) else None
            if side not in ("a", "b"):
                known = sorted({"a", "b", *sides})
                out.add(where, value, f"a treatment side in '{m.side_column}': one of {known}")
                ok = False
            swap = side == "b"
        if not ok:
            continue
        if m.natural:
            if treatment_rule is not None:
                unit = treatment_rule.split("_")[1]
                la, lb = (text_length(str(texts[r]), unit) for r in ("a", "b"))
                swap = lb > la if treatment_rule.startswith("longer") else lb < la
            texts["treatment"], texts["null_partner"] = texts.pop("a"), texts.pop("b")
            if swap:
                texts["treatment"], texts["null_partner"] = (
                    texts["null_partner"],
                    texts["treatment"],
                )
                b_treated.add(raw_id)
        stimuli.append(
            Stimulus(
                id=raw_id,
                source=texts["source"],
                treatment=str(texts["treatment"]),
                null_partner=str(texts["null_partner"]),
                metadata={col: rec[col] for col in m.metadata},
            )
        )
    result = PairsResult(tuple(stimuli), out.result())
    result.b_treated = frozenset(b_treated)
    return result
