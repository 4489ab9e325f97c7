"""Reading the canonical long table of judgments (:mod:`verdictpack.evidence._judgments`) from a
CSV, JSONL or Parquet file: :func:`read_table`, the ``table`` importer. The table's types are
named here too (``from verdictpack.evidence._table import JudgmentTable``, as every importer does).

Defects of data files use ``path = "line N"`` (1-based physical line; for CSV the header is line 1
and a row that spans lines because of a quoted newline is reported at the line where it starts);
of a Parquet file ``path = "row N"`` (1-based). Parquet needs pyarrow (the ``parquet`` extra),
imported only when a ``.parquet`` file is read.
"""

from __future__ import annotations

import csv
import io
import itertools
import json
import math
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any, NamedTuple

import numpy as np
from numpy.typing import NDArray

from verdictpack._cells import csv_values
from verdictpack._errors import Defect, InputError, not_utf8
from verdictpack._memory import gc_paused
from verdictpack.config._blocks import MAX_COST
from verdictpack.config._data_json import DataJSONError, load_data_json
from verdictpack.evidence._choice import TextParser
from verdictpack.evidence._judgments import (
    _CHOICE_CODE,
    _KIND_CODE,
    _ORDER_CODE,
    CANONICAL_COLUMNS,
    CHOICES,
    MAX_DEFECTS,
    ORDERS,
    RATER_KINDS,
    ImportResult,
    Judgment,
    JudgmentTable,
    Origin,
    _factorize,
    _object_array,
    _pooled,
    cap_defects,
)

__all__ = [
    "CANONICAL_COLUMNS",
    "CHOICES",
    "CSV_QUOTING",
    "MAX_DEFECTS",
    "ORDERS",
    "RATER_KINDS",
    "ImportResult",
    "Judgment",
    "JudgmentTable",
    "Origin",
    "cap_defects",
    "cell_text",
    "read_table",
]

_REQUIRED = ("root_id", "rater_id", "rater_kind", "choice")
# presentation positions for a treatment-side column (and position-valued choices)
_POSITION = {"A": 0, "first": 0, "B": 1, "second": 1}
_SIDE_KEY = "treatment_side"


def _check_arguments(
    mapping: Mapping[str, str] | None,
    value_maps: Mapping[str, Mapping[str, str]] | None,
    treatment_side_column: str | None,
) -> tuple[dict[str, str], dict[str, dict[str, str]]]:
    m = dict(mapping or {})
    for k, v in m.items():
        if k not in CANONICAL_COLUMNS:
            raise InputError("mapping", "keys among " + ", ".join(CANONICAL_COLUMNS), k)
        if not isinstance(v, str) or not v:
            raise InputError(f"mapping[{k!r}]", "a non-empty source column name", v)
    if treatment_side_column is not None:
        if not isinstance(treatment_side_column, str) or not treatment_side_column:
            raise InputError(
                "treatment_side_column", "a non-empty column name", treatment_side_column
            )
        if "order" in m:
            raise InputError(
                "mapping['order']",
                "no order column when treatment_side_column derives it",
                m["order"],
            )
    vm: dict[str, dict[str, str]] = {}
    allowed_targets: dict[str, tuple[str, ...]] = {
        "rater_kind": RATER_KINDS,
        "order": ORDERS,
        "choice": CHOICES + (tuple(_POSITION) if treatment_side_column else ()),
        _SIDE_KEY: tuple(_POSITION),
    }
    for col, table in (value_maps or {}).items():
        if col not in CANONICAL_COLUMNS and col != _SIDE_KEY:
            raise InputError("value_maps", "keys among canonical columns or 'treatment_side'", col)
        if col == _SIDE_KEY and treatment_side_column is None:
            raise InputError("value_maps['treatment_side']", "a treatment_side_column", col)
        if not isinstance(table, Mapping):
            raise InputError(
                f"value_maps[{col!r}]", "a mapping of source to canonical values", table
            )
        for src, dst in table.items():
            ok = isinstance(src, str) and isinstance(dst, str)
            if ok and col in allowed_targets:
                ok = dst in allowed_targets[col]
            if not ok:
                text = "one of " + ", ".join(allowed_targets.get(col, ("a string",)))
                raise InputError(f"value_maps[{col!r}][{src!r}]", text, dst)
        vm[col] = dict(table)
    return m, vm


# rows taken from the csv module at a time: columns grow a chunk at a time, never a list per row
_CHUNK = 256


def _line_breaks(field: str) -> int:
    """The physical line ends inside a (quoted) field: CR LF, a lone CR and LF each end a line."""
    return field.count("\n") + field.count("\r") - field.count("\r\n")


def _missing_columns(missing: Sequence[str], header: Sequence[str]) -> str:
    """What a header lacking ``missing`` was expected to have, with the likely cause named: a
    file separated by another character, or a column named in another case or with spaces."""
    said = ", ".join(map(repr, missing))
    expected = f"a header with the column{'s' if len(missing) > 1 else ''} {said}"
    seps = [sep for sep in (";", "\t", "|") if len(header) == 1 and sep in header[0]]
    if seps:
        return expected + (
            f" (the header is one column holding {seps[0]!r}: verdictpack reads comma-separated "
            "CSV, such as a spreadsheet's 'CSV UTF-8 (comma delimited)')"
        )
    near = {col.strip().casefold(): col for col in header}
    alike = [f"{near[m.casefold()]!r} for {m!r}" for m in missing if m.casefold() in near]
    if alike:
        expected += (
            f" (names match exactly, case and spaces included; the header has {', '.join(alike)})"
        )
    return expected


def _read_csv(
    handle: Iterable[str], name: str, needed: Sequence[str], required: set[str]
) -> tuple[dict[str, Sequence[str]], NDArray[np.int64], list[tuple[int, Defect]]]:
    """Columns (source name -> values), each row's starting line, and file/row defects.

    One pass of the csv module (strict quoting) over ``handle`` (a text file opened with
    ``newline=""``), ``_CHUNK`` rows at a time, each chunk's needed fields appended to their
    columns (a repeated value kept once). A header naming any column twice is refused (which of
    the two would be read?); a row of another width than the header's, or quoting the csv module
    refuses (a quote left open, text after a closing quote), is a defect at the line where the
    row starts; a blank line is skipped.
    """
    defects: list[tuple[int, Defect]] = []
    reader = csv.reader(handle, strict=True)
    try:
        header = next(reader, None)
    except csv.Error as exc:
        return {}, np.zeros(0, np.int64), [(1, Defect(name, "line 1", str(exc), CSV_QUOTING))]
    if header is None:
        return {}, np.zeros(0, np.int64), [(0, Defect(name, "line 1", "", "a header row"))]
    position: dict[str, int] = {}
    for j, col in enumerate(header):
        if col in position:
            defects.append((1, Defect(name, "line 1", col, "each column named once in the header")))
        position.setdefault(col, j)
    missing = [col for col in needed if col in required and col not in position]
    if missing:
        defects.append((1, Defect(name, "line 1", header, _missing_columns(missing, header))))
    if defects:
        return {}, np.zeros(0, np.int64), defects
    width = len(header)
    taken = [(col, position[col]) for col in needed if col in position]
    values: dict[str, list[str]] = {col: [] for col, _ in taken}
    # one copy of each repeated value (a root id is on every line of its root)
    memos: dict[str, dict[str, str] | None] = {col: {} for col, _ in taken}
    lines: list[NDArray[np.int64]] = []
    done = reader.line_num  # the last line read
    while True:  # bounded: every pass reads at least one line, or ends
        rows: list[list[str]] = []
        error = None
        try:
            rows.extend(itertools.islice(reader, _CHUNK))  # rows before an error are kept
        except csv.Error as exc:
            error = exc
        if not rows and error is None:
            break
        if error is None and reader.line_num - done == len(rows):  # one line a row
            starts = np.arange(done + 1, done + 1 + len(rows), dtype=np.int64)
        else:  # rows spanning lines (quoted line ends): count them
            spans = np.fromiter((1 + sum(map(_line_breaks, r)) for r in rows), np.int64, len(rows))
            starts = done + 1 + np.cumsum(spans) - spans
            if error is not None:
                at = done + 1 + int(spans.sum())
                defects.append((at, Defect(name, f"line {at}", str(error), CSV_QUOTING)))
        done = reader.line_num
        if any(map(width.__ne__, map(len, rows))):
            for i, r in enumerate(rows):
                if r and len(r) != width:  # a blank line ([]) has nothing to read
                    ln = int(starts[i])
                    defects.append(
                        (ln, Defect(name, f"line {ln}", len(r), f"{width} fields (as the header)"))
                    )
            keep = [i for i, r in enumerate(rows) if len(r) == width]
            rows = [rows[i] for i in keep]
            starts = starts[keep]
        if not rows:
            continue
        lines.append(starts)
        fields = list(zip(*rows, strict=True))
        for col, j in taken:
            memo = memos[col]
            if memo is None:
                values[col].extend(fields[j])
                continue
            values[col].extend(map(memo.setdefault, fields[j], fields[j]))
            if len(memo) > _SHARED_VALUES:
                memos[col] = None
    at_lines = np.concatenate(lines) if lines else np.zeros(0, np.int64)
    return dict(values), at_lines, defects


CSV_QUOTING = "a CSV row with every quote closed (a closing quote, then a comma or the line's end)"


_ABSENT = object()


def _json_text(v: Any) -> str:
    if v is None:
        return ""
    if isinstance(v, str):
        return v
    return json.dumps(v, sort_keys=True, ensure_ascii=False)


# distinct values a column keeps one copy of (past it, a column of mostly distinct values such
# as costs or timestamps is kept as read: sharing would only add the memo's cost)
_SHARED_VALUES = 1 << 16


def _read_jsonl(
    handle: Iterable[str], name: str, needed: Sequence[str]
) -> tuple[dict[str, Sequence[str]], NDArray[np.int64], list[tuple[int, Defect]]]:
    """The ``needed`` columns of a JSONL file (``handle``: opened with universal newlines; one
    pass, one line decoded at a time, kept as columns, never as a record per line: 1M records
    cost 2 GB), the physical line of each row and the defects by line."""
    defects: list[tuple[int, Defect]] = []
    values: dict[str, list[str]] = {col: [] for col in needed}
    # one copy of each repeated value (a root id is on every line of its root)
    memos: dict[str, dict[str, str] | None] = {col: {} for col in needed}
    present: set[str] = set()
    lines: list[int] = []
    for ln, text in enumerate(handle, start=1):
        if not text.strip():
            continue
        try:
            rec = load_data_json(text)
        except json.JSONDecodeError as exc:
            defects.append(
                (ln, Defect(name, f"line {ln}", text.strip(), f"a JSON object ({exc.msg})"))
            )
            continue
        except DataJSONError as exc:
            defects.append((ln, Defect(name, f"line {ln}", exc.received, exc.expected)))
            continue
        if not isinstance(rec, dict):
            defects.append((ln, Defect(name, f"line {ln}", rec, "a JSON object")))
            continue
        for col in needed:
            raw = rec.get(col, _ABSENT)
            if raw is not _ABSENT:
                present.add(col)
            v = _json_text(None if raw is _ABSENT else raw)
            memo = memos[col]
            if memo is not None:
                v = memo.setdefault(v, v)
                if len(memo) > _SHARED_VALUES:
                    memos[col] = None
            values[col].append(v)
        lines.append(ln)
    columns: dict[str, Sequence[str]] = {col: values[col] for col in needed if col in present}
    return columns, np.asarray(lines, np.int64), defects


PARQUET_EXTRA = "pyarrow installed to read a .parquet file: pip install 'verdictpack[parquet]'"


class _Options(NamedTuple):
    """The free-text column and its parser settings, the row filter, the raters left out."""

    verdict_text_column: str | None
    labels: Sequence[str]
    patterns: Sequence[str]
    ties: Sequence[str]
    where: Sequence[Mapping[str, Any]] | Mapping[str, Any] | None
    ignore_raters: Sequence[str] | None

    def checked(
        self, m: Mapping[str, str], vm: Mapping[str, Any]
    ) -> tuple[TextParser | None, list[tuple[str, frozenset[str]]], frozenset[str]]:
        """The parser (None without a free-text column), the ``where`` clauses, the raters
        ignored; InputError naming the option for a setting that cannot be used."""
        parser = None
        col = self.verdict_text_column
        if col is not None:
            if not isinstance(col, str) or not col:
                raise InputError("verdict_text_column", "a non-empty column name", col)
            for given, key in (
                ("choice" in m, "mapping['choice']"),
                ("choice" in vm, "value_maps"),
            ):
                if given:
                    raise InputError(key, "no choice column when verdict_text_column is read", col)
            labels: Any = tuple(self.labels)  # checked by the parser
            parser = TextParser(labels, tuple(self.patterns), tuple(self.ties))
        elif tuple(self.patterns) or tuple(self.ties) or tuple(self.labels) != ("A", "B"):
            raise InputError(
                "verdict_text_column", "a column to read with labels/patterns/ties", None
            )
        clauses: list[tuple[str, frozenset[str]]] = []
        where = [self.where] if isinstance(self.where, Mapping) else list(self.where or ())
        for k, w in enumerate(where):
            column: Any = w.get("column") if isinstance(w, Mapping) else None
            values: Any = w.get("in") if isinstance(w, Mapping) else None
            if (
                not isinstance(column, str)
                or not column
                or not isinstance(values, list | tuple)
                or not all(isinstance(v, str) for v in values)
            ):
                raise InputError(f"where[{k}]", '{"column": name, "in": [values as text]}', w)
            clauses.append((column, frozenset(values)))
        ignored = self.ignore_raters or ()
        if isinstance(ignored, str) or not all(isinstance(r, str) and r for r in ignored):
            raise InputError("ignore_raters", "a list of rater ids", ignored)
        return parser, clauses, frozenset(ignored)


def _left_out(
    columns: dict[str, Sequence[str]],
    clauses: Sequence[tuple[str, frozenset[str]]],
    rater: tuple[str, Mapping[str, str] | None],
    ignored: frozenset[str],
    n: int,
) -> tuple[NDArray[np.int64] | None, list[str]]:
    """The rows kept (None: every row) by the ``where`` clauses, then without the ignored
    raters, and a note counting each reason a row was left out."""
    keep = np.ones(n, bool)
    notes = []
    for column, allowed in clauses:
        hit = np.fromiter(map(allowed.__contains__, columns[column]), bool, n)
        dropped = int((keep & ~hit).sum())
        keep &= hit
        shown = ", ".join(sorted(allowed))
        notes.append(f"{dropped} rows left out by where ({column} in [{shown}])")
    if ignored:
        col, table = rater
        ids = columns.get(col, [""] * n)
        ids = list(map(table.get, ids, ids)) if table else ids
        out = np.fromiter(map(ignored.__contains__, ids), bool, n) & keep
        counts = Counter(ids[i] for i in np.nonzero(out)[0].tolist())
        notes += [f"{counts[r]} rows of ignored rater {r!r} left out" for r in sorted(ignored)]
        keep &= ~out
    return (None if keep.all() else np.nonzero(keep)[0]), notes


def cell_text(v: Any) -> str:
    """A Parquet (or DataFrame) value as text: as a JSONL value (null and NaN: missing; bytes as
    UTF-8)."""
    if isinstance(v, float) and v != v:
        return ""
    if isinstance(v, bytes):
        return v.decode("utf-8", "replace")
    try:
        return _json_text(v)
    except (TypeError, ValueError):
        return str(v)


def _read_parquet(
    raw: bytes, name: str, needed: Sequence[str], required: set[str]
) -> tuple[dict[str, Sequence[str]], NDArray[np.int64], list[tuple[int, Defect]]]:
    """The ``needed`` columns of a Parquet file, read column by column (pyarrow to Python
    lists, no pandas), each row's 1-based number, and the file's defects."""
    empty = np.zeros(0, np.int64)
    try:
        import pyarrow as pa
        import pyarrow.parquet as pq
    except ImportError:
        return {}, empty, [(0, Defect(name, "(file)", ".parquet", PARQUET_EXTRA))]
    try:
        pf = pq.ParquetFile(pa.BufferReader(raw))
        names = list(pf.schema_arrow.names)
        twice = sorted({c for c in names if names.count(c) > 1} & set(needed))
        missing = [c for c in needed if c in required and c not in names]
        found = [(0, Defect(name, "(file)", c, "each column named once")) for c in twice]
        found += [(0, Defect(name, "(file)", names, f"a column named {c!r}")) for c in missing]
        if found:
            return {}, empty, found
        taken = [c for c in needed if c in names]
        t = pf.read(columns=taken)
        cols = {c: [cell_text(v) for v in t.column(c).to_pylist()] for c in taken}
    except (pa.ArrowException, OSError, ValueError) as exc:
        return {}, empty, [(0, Defect(name, "(file)", str(exc)[:200], "a Parquet file"))]
    return dict(cols), np.arange(1, t.num_rows + 1, dtype=np.int64), []


def read_table(
    path: Path,
    mapping: Mapping[str, str] | None = None,
    value_maps: Mapping[str, Mapping[str, str]] | None = None,
    treatment_side_column: str | None = None,
    display: str | None = None,
    data: bytes | None = None,
    *,
    verdict_text_column: str | None = None,
    labels: Sequence[str] = ("A", "B"),
    patterns: Sequence[str] = (),
    ties: Sequence[str] = (),
    where: Sequence[Mapping[str, Any]] | Mapping[str, Any] | None = None,
    ignore_raters: Sequence[str] | None = None,
) -> ImportResult:
    """Read a CSV (``.csv``) or JSONL (``.jsonl``) file of judgments into a :class:`JudgmentTable`
    (``data``, when given: the file's bytes as already read, parsed instead of reading ``path``).

    Columns: canonical column ``c`` is read from source column ``mapping.get(c, c)``. Required:
    ``root_id, rater_id, rater_kind, choice`` and ``order`` (unless derived, below); optional
    (absent is fine): ``trial`` (empty: 0), ``cost``, ``raw``, ``timestamp``, ``p_treatment``
    (empty: missing).
    Extra columns are ignored. ``value_maps[c]`` replaces source values of column ``c`` before they
    are checked (values not in the map pass through unchanged and must then be canonical).

    The treatment-side rule: with ``treatment_side_column`` naming a source column whose values
    are ``A``/``B`` or ``first``/``second`` (``value_maps["treatment_side"]`` may translate them),
    the order is derived -- the treatment shown A/first gives ``treatment_first``, B/second gives
    ``null_first`` -- and a choice naming a position (``A``/``first`` or ``B``/``second``, after its
    value map) becomes ``treatment`` when it names the side holding the treatment and
    ``null_partner`` otherwise; ``A`` and ``first`` are the same position. ``tie``, ``invalid``
    (and already canonical choices) pass through.

    Free text: with ``verdict_text_column`` (and no choice column) each distinct text is read
    once by :class:`~verdictpack.evidence.live._extract.TextParser` (``labels``, ``patterns``,
    ``ties``); its position becomes the choice through the row's order (or treatment side; under
    an ``unknown`` order: ``invalid``), what no rule reads is ``invalid``; the text is the row's
    ``raw`` (unless mapped) and the rule that read it its ``parse_path``.

    Rows left out before any check, each reason counted in the result's ``notes``: ``where``
    (``{"column": c, "in": [values]}`` or a list of them, all must hold; source columns, values
    compared as text) and ``ignore_raters`` (rater ids, after their value map).

    Every row that cannot be mapped is left out and becomes a Defect at ``line N`` (Parquet:
    ``row N``) naming the column, the value received and what was expected (capped at
    :data:`MAX_DEFECTS` plus a count). In JSONL, line N is the Nth physical line; values that are
    not strings (JSONL, Parquet) are read as their JSON text (``3`` -> ``"3"``), null as missing.
    """
    options = _Options(verdict_text_column, labels, patterns, ties, where, ignore_raters)
    with gc_paused():
        return _read_table(path, mapping, value_maps, treatment_side_column, display, data, options)


def _read_table(
    path: Path,
    mapping: Mapping[str, str] | None,
    value_maps: Mapping[str, Mapping[str, str]] | None,
    treatment_side_column: str | None,
    display: str | None,
    data: bytes | None,
    options: _Options,
) -> ImportResult:
    path = Path(path)
    name = display if display is not None else path.name
    m, vm = _check_arguments(mapping, value_maps, treatment_side_column)
    parser, clauses, ignored = options.checked(m, vm)
    src = {c: m.get(c, c) for c in CANONICAL_COLUMNS}
    if parser is not None:  # the choice read from the free text, kept as the raw answer
        src["choice"] = options.verdict_text_column  # type: ignore[assignment]
        src["raw"] = m.get("raw", src["choice"])
    derive = treatment_side_column is not None
    if derive:
        del src["order"]
        src[_SIDE_KEY] = treatment_side_column  # type: ignore[assignment]
    required = {src[c] for c in (*_REQUIRED, _SIDE_KEY if derive else "order")}
    required |= {column for column, _ in clauses}
    needed = list(dict.fromkeys([*src.values(), *required]))
    suffix = path.suffix.lower()
    if suffix not in (".csv", ".jsonl", ".parquet"):
        d = Defect(name, "(file)", path.suffix, "a .csv, .jsonl or .parquet file")
        return ImportResult(JudgmentTable.empty(), (d,))
    unit = "row" if suffix == ".parquet" else "line"
    try:
        raw = path.read_bytes() if data is None else data
        # decoded as read (never the whole text at once); CSV: line ends left to the csv module,
        # and no field refused for its length (the bytes are in memory already)
        csv.field_size_limit(max(csv.field_size_limit(), len(raw)))
        newline = "" if suffix == ".csv" else None
        with io.TextIOWrapper(io.BytesIO(raw), "utf-8-sig", newline=newline) as handle:
            if suffix == ".csv":
                columns, lines, found = _read_csv(handle, name, needed, required)
            elif suffix == ".jsonl":
                columns, lines, found = _read_jsonl(handle, name, needed)
            else:
                columns, lines, found = _read_parquet(raw, name, needed, required)
    except OSError as exc:
        d = Defect(name, "(file)", str(path), f"a readable file ({exc.strerror or exc})")
        return ImportResult(JudgmentTable.empty(), (d,))
    except UnicodeDecodeError:
        return ImportResult(JudgmentTable.empty(), (not_utf8(name, raw),))
    if not columns and found:
        return ImportResult(JudgmentTable.empty(), _finish(found, name))
    if suffix == ".csv" and b"'" in raw:  # the spreadsheet rule of verdictpack's CSVs, undone
        columns = {k: csv_values(v) for k, v in columns.items()}
    rater = (src["rater_id"], vm.get("rater_id"))
    kept, notes = _left_out(columns, clauses, rater, ignored, len(lines))
    if kept is not None:
        getter = kept.tolist()
        columns = {k: [v[i] for i in getter] for k, v in columns.items()}
        lines = lines[kept]
    n = len(lines)
    ok = np.ones(n, bool)

    def column(c: str) -> Sequence[str] | None:
        values = columns.get(src[c])
        if values is None:
            return None
        table = vm.get(c)
        return list(map(table.get, values, values)) if table else values

    def refuse(bad: NDArray[np.bool_], c: str, expected: str) -> None:
        original = columns[src[c]]
        label = c if src[c] == c else f"{src[c]!r} (for {c})"
        for i in np.nonzero(bad)[0].tolist():
            ln = int(lines[i])
            found.append(
                (ln, Defect(name, f"{unit} {ln}", original[i], f"column {label}: {expected}"))
            )
        ok[bad] = False

    # The categorical columns are factorised together (their distinct combinations are few) and
    # every mapping, check and lookup runs over the distinct values, never per row.
    categorical = ["rater_id", "rater_kind", "choice", _SIDE_KEY if derive else "order"]
    if columns.get(src["trial"]) is not None:
        categorical.append("trial")
    for c in ("root_id", *categorical):
        if columns.get(src[c]) is None:  # JSONL: no record has it
            columns[src[c]] = [""] * n
    combos, combo_code = _factorize([columns[src[c]] for c in categorical], n)

    def distinct(c: str) -> list[str]:
        """The distinct combinations' values of column ``c``, after its value map."""
        k = categorical.index(c)
        values = [combo[k] for combo in combos]
        table = vm.get(c)
        return list(map(table.get, values, values)) if table else values

    def looked_up(c: str, lookup: Mapping[str, int]) -> NDArray[np.int8]:
        lut = np.fromiter(map(lookup.get, distinct(c), itertools.repeat(-1)), np.int8, len(combos))
        return lut[combo_code]

    ids: dict[str, tuple[tuple[str, ...], NDArray[np.int64]]] = {}
    for c in ("root_id", "rater_id"):
        if c == "root_id":
            keys, inverse = _factorize([columns[src[c]]], n)
            pool, code = _pooled(keys, inverse, vm.get(c))
        else:
            pool, code = _pooled(distinct(c), combo_code)
        blank = (
            [] if all(map(str.strip, pool)) else [i for i, v in enumerate(pool) if not v.strip()]
        )
        if blank:
            refuse(np.isin(code, blank), c, "a non-empty id")
        ids[c] = (pool, code)
    codes: dict[str, NDArray[np.int8]] = {}
    treat, null = _CHOICE_CODE["treatment"], _CHOICE_CODE["null_partner"]
    parse_path = None
    codes["rater_kind"] = looked_up("rater_kind", _KIND_CODE)
    refuse(codes["rater_kind"] < 0, "rater_kind", "one of " + ", ".join(_KIND_CODE))
    if parser is not None:  # each distinct text read once: a position, a tie or invalid
        reads = [parser.read(v) for v in distinct("choice")]
        pos = np.array([_POSITION.get(e.position, -1) for e in reads], np.int8)[combo_code]
        fixed = [_CHOICE_CODE.get(e.position, -1) for e in reads]
        codes["choice"] = np.array(fixed, np.int8)[combo_code]
        rules = [e.detail.split(":")[0] if e.path == "parser" else "none" for e in reads]
        parse_path = np.array(rules, dtype=object)[combo_code]
    else:
        codes["choice"] = looked_up("choice", _CHOICE_CODE)
        pos = looked_up("choice", _POSITION) if derive else np.full(n, -1, np.int8)
        expected = ("A", "B", "first", "second") if derive else ()
        refuse(
            (pos < 0) & (codes["choice"] < 0), "choice", "one of " + ", ".join(expected + CHOICES)
        )
    if derive:
        side = looked_up(_SIDE_KEY, _POSITION)
        refuse(side < 0, _SIDE_KEY, "one of A, B, first, second (the side holding the treatment)")
        codes["choice"] = np.where(
            pos >= 0, np.where(pos == side, treat, null), codes["choice"]
        ).astype(np.int8)
        codes["order"] = np.where(
            side == 0, _ORDER_CODE["treatment_first"], _ORDER_CODE["null_first"]
        ).astype(np.int8)
    else:
        codes["order"] = looked_up("order", _ORDER_CODE)
        refuse(codes["order"] < 0, "order", "one of " + ", ".join(ORDERS))
        if parser is not None:  # a position in the order shown (unknown order: invalid)
            first = np.where(codes["order"] == _ORDER_CODE["null_first"], null, treat)
            second = np.where(codes["order"] == _ORDER_CODE["null_first"], treat, null)
            placed = np.where(pos == 0, first, second)
            placed[codes["order"] == _ORDER_CODE["unknown"]] = _CHOICE_CODE["invalid"]
            codes["choice"] = np.where(pos >= 0, placed, codes["choice"]).astype(np.int8)
    trial = np.zeros(n, np.int64)
    if "trial" in categorical:
        parsed = []
        for v in distinct("trial"):  # parse each distinct value once
            try:
                k = int(v) if v.strip() else 0
                parsed.append(k if 0 <= k < 2**62 else -1)
            except ValueError:
                parsed.append(-1)
        trial = np.asarray(parsed, np.int64)[combo_code]
        refuse(trial < 0, "trial", "an integer >= 0 (empty: 0)")
    cost = np.full(n, np.nan)
    values_c = column("cost")
    if values_c is not None:
        unparsed = np.zeros(n, bool)
        given = np.fromiter(map(bool, values_c), bool, n)  # empty: missing
        empty = ~given
        try:  # the non-empty values in one pass
            nonempty = list(filter(None, values_c))
            cost[given] = np.fromiter(map(float, nonempty), np.float64, len(nonempty))
        except ValueError:
            cost = np.full(n, np.nan)
            for i, v in enumerate(values_c):
                try:
                    cost[i] = float(v) if v else math.nan
                except ValueError:
                    unparsed[i] = True
        with np.errstate(invalid="ignore"):
            bad = unparsed | (~empty & (~np.isfinite(cost) | (cost < 0) | (cost > MAX_COST)))
        refuse(bad, "cost", f"a number from 0 to {MAX_COST:.0e}, as config prices (empty: missing)")
    p_treat = np.full(n, np.nan)
    values_p = column("p_treatment")
    if values_p is not None:
        bad_p = np.zeros(n, bool)
        for i, v in enumerate(values_p):
            if v:
                try:
                    p_treat[i] = float(v)
                except ValueError:
                    bad_p[i] = True
        with np.errstate(invalid="ignore"):
            bad_p |= ~np.isnan(p_treat) & ~((p_treat >= 0) & (p_treat <= 1))
        refuse(bad_p, "p_treatment", "a probability in [0, 1] (empty: missing)")
    raw_t = column("raw")
    ts_t = column("timestamp")
    keep = np.nonzero(ok)[0]
    every = len(keep) == n

    def optional_text(values: Sequence[str] | None) -> NDArray[np.object_]:
        if values is None:
            return np.full(len(keep), None, object)
        text = np.array(values, dtype=object) if len(values) else np.empty(0, object)
        text[text == ""] = None
        return text if every else text[keep]

    def pooled(c: str) -> tuple[tuple[str, ...], NDArray[np.int64]]:
        pool, code = ids[c]
        if every:
            return pool, code
        used = np.unique(code[keep])
        lut = np.full(len(pool), -1, np.int64)
        lut[used] = np.arange(len(used))
        return tuple(pool[i] for i in used.tolist()), lut[code[keep]]

    roots, root_code = pooled("root_id")
    raters, rater_code = pooled("rater_id")
    table = JudgmentTable(
        roots=roots,
        raters=raters,
        root_code=root_code,
        rater_code=rater_code,
        rater_kind=codes["rater_kind"][keep],
        order=codes["order"][keep],
        choice=codes["choice"][keep],
        trial=trial[keep],
        cost=cost[keep],
        raw=optional_text(raw_t),
        timestamp=optional_text(ts_t),
        p_treatment=p_treat[keep],
        files=(name,),
        origin_file=np.zeros(len(keep), np.int64),
        origin_line=lines[keep] if unit == "line" else np.zeros(len(keep), np.int64),
        origin_where=(
            np.full(len(keep), None, object)
            if unit == "line"
            else _object_array((f"row {r}" for r in lines[keep].tolist()), len(keep))
        ),
        parse_path=None if parse_path is None else parse_path[keep],
    )
    return ImportResult(table, _finish(found, name), tuple(notes))


def _finish(found: list[tuple[int, Defect]], name: str) -> tuple[Defect, ...]:
    found.sort(key=lambda x: x[0])  # stable: within a line, columns in canonical order
    return cap_defects([d for _, d in found], name)
