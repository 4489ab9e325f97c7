"""The canonical long table of judgments: one row per judgment, the import target and export format.

Every importer lands its rows here, in the canonical columns

``root_id, rater_id, rater_kind, order, choice, trial, cost, raw, timestamp, p_treatment``

with ``rater_kind`` one of :data:`RATER_KINDS`, ``order`` one of :data:`ORDERS`, ``choice`` one of
:data:`CHOICES`, ``trial`` an integer >= 0 (default 0), ``cost`` a finite number >= 0 or missing,
``raw`` and ``timestamp`` free text or missing, ``p_treatment`` the judge's probability of
preferring the treatment (from a live judge's token logprobs) in [0, 1] or missing: where given,
it is the judgment's observation instead of its choice's score.

Two shapes of the same data:

* :class:`Judgment` -- one record (what the format importers produce, one at a time);
* :class:`JudgmentTable` -- the columnar form (numpy codes, string pools), the one that scales: the
  ``table`` importer :func:`read_table` builds it directly without a record per row, and
  :meth:`JudgmentTable.judgments` gives the records back on demand.

Defects of data files use ``path = "line N"`` (1-based physical line; for CSV the header is line 1
and a row that spans lines because of a quoted newline is reported at the line where it starts).
"""

from __future__ import annotations

import csv
import io
import itertools
import json
import math
import operator
import re
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, NamedTuple

import numpy as np
from numpy.typing import NDArray

from verdictpack._cells import csv_cell, csv_values
from verdictpack._errors import Defect, InputError
from verdictpack._memory import gc_paused
from verdictpack.config._blocks import MAX_COST
from verdictpack.config._data_json import DataJSONError, load_data_json, text_lines

__all__ = [
    "CANONICAL_COLUMNS",
    "CHOICES",
    "MAX_DEFECTS",
    "ORDERS",
    "RATER_KINDS",
    "ImportResult",
    "Judgment",
    "JudgmentTable",
    "Origin",
    "cap_defects",
    "read_table",
]

CHOICES = ("treatment", "null_partner", "tie", "invalid")
ORDERS = ("treatment_first", "null_first", "unknown")
RATER_KINDS = ("model", "human")
CANONICAL_COLUMNS = (
    "root_id",
    "rater_id",
    "rater_kind",
    "order",
    "choice",
    "trial",
    "cost",
    "raw",
    "timestamp",
    "p_treatment",
)
_REQUIRED = ("root_id", "rater_id", "rater_kind", "choice")
MAX_DEFECTS = 50

_CHOICE_CODE = {c: i for i, c in enumerate(CHOICES)}
_ORDER_CODE = {c: i for i, c in enumerate(ORDERS)}
_KIND_CODE = {c: i for i, c in enumerate(RATER_KINDS)}
# presentation positions for a treatment-side column (and position-valued choices)
_POSITION = {"A": 0, "first": 0, "B": 1, "second": 1}
_SIDE_KEY = "treatment_side"


@dataclass(frozen=True)
class Origin:
    """Where a row came from."""

    file: str
    where: str


@dataclass(frozen=True)
class Judgment:
    """One judgment in the canonical long table."""

    root_id: str
    rater_id: str
    rater_kind: str
    order: str
    choice: str
    trial: int = 0
    cost: float | None = None
    raw: str | None = None
    timestamp: str | None = None
    origin: Origin | None = None
    p_treatment: float | None = None


def cap_defects(
    defects: Sequence[Defect], file: str, limit: int = MAX_DEFECTS
) -> tuple[Defect, ...]:
    """The first ``limit`` defects, plus one summary defect counting the rest (if any)."""
    if len(defects) <= limit:
        return tuple(defects)
    rest = len(defects) - limit
    summary = Defect(file, "(more)", f"{rest} more defects not listed", "a file without defects")
    return (*defects[:limit], summary)


def _encode(values: Sequence[str]) -> tuple[tuple[str, ...], NDArray[np.int64]]:
    """The sorted pool of distinct values and each value's index into it."""
    keys, inverse = _factorize([values], len(values))
    return _pooled(keys, inverse)


def _factorize(columns: Sequence[Sequence[Any]], n: int) -> tuple[list[Any], NDArray[np.int64]]:
    """The distinct rows of ``columns`` in order of first occurrence (tuples; for one column its
    values) and each row's index into them: one dictionary pass over the rows, the rest numpy."""
    seen: dict[Any, int] = {}
    rows: Iterable[Any] = zip(*columns, strict=True) if len(columns) > 1 else columns[0]
    # each row's value is the index of the row where its combination first occurs
    first = np.fromiter(map(seen.setdefault, rows, itertools.count()), np.int64, n)
    dense = np.zeros(n, np.int64)
    dense[np.fromiter(seen.values(), np.int64, len(seen))] = np.arange(len(seen))
    return list(seen), dense[first]


def _pooled(
    values: Sequence[str], inverse: NDArray[np.int64], value_map: Mapping[str, str] | None = None
) -> tuple[tuple[str, ...], NDArray[np.int64]]:
    """The sorted pool of ``values`` (distinct, possibly merged by ``value_map``) and the codes
    of the rows, ``inverse`` indexing ``values``."""
    if value_map:
        values = list(map(value_map.get, values, values))
    pool = tuple(sorted(set(values)))
    rank = {v: i for i, v in enumerate(pool)}
    lut = np.fromiter(map(rank.__getitem__, values), np.int64, len(values))
    return pool, lut[inverse]


def _readonly(a: NDArray[Any]) -> NDArray[Any]:
    a.flags.writeable = False
    return a


def _object_array(values: Iterable[Any], n: int) -> NDArray[np.object_]:
    out = np.empty(n, dtype=object)
    out[:] = list(values)
    return out


# the table's array fields, root codes first (every other array has the root codes' length)
_ARRAY_FIELDS = (
    "root_code",
    "rater_code",
    "rater_kind",
    "order",
    "choice",
    "trial",
    "cost",
    "raw",
    "timestamp",
    "p_treatment",
    "origin_file",
    "origin_line",
    "origin_where",
)


@dataclass(frozen=True, eq=False)
class JudgmentTable:
    """A frozen columnar table of judgments.

    ``roots``/``raters`` are sorted pools of distinct ids and ``root_code``/``rater_code`` index
    them; ``rater_kind``/``order``/``choice`` are indices into :data:`RATER_KINDS`/:data:`ORDERS`/
    :data:`CHOICES`; ``cost`` is NaN where missing; ``raw``/``timestamp`` are object arrays of
    ``str | None``. Origins: ``files`` is a pool of file names, ``origin_file`` indexes it (-1: no
    origin), ``origin_line`` is the line number (0: see ``origin_where``, a JSON path or None).
    """

    roots: tuple[str, ...]
    raters: tuple[str, ...]
    root_code: NDArray[np.int64]
    rater_code: NDArray[np.int64]
    rater_kind: NDArray[np.int8]
    order: NDArray[np.int8]
    choice: NDArray[np.int8]
    trial: NDArray[np.int64]
    cost: NDArray[np.float64]
    raw: NDArray[np.object_]
    timestamp: NDArray[np.object_]
    p_treatment: NDArray[np.float64]
    files: tuple[str, ...]
    origin_file: NDArray[np.int64]
    origin_line: NDArray[np.int64]
    origin_where: NDArray[np.object_]

    def __post_init__(self) -> None:
        n = len(self.root_code)
        for name in _ARRAY_FIELDS[1:]:
            a = getattr(self, name)
            if not isinstance(a, np.ndarray) or a.ndim != 1 or len(a) != n:
                raise InputError(name, f"a 1-d numpy array of length {n}", type(a).__name__)
        for name, pool in (("roots", self.roots), ("raters", self.raters), ("files", self.files)):
            strings = all(map(isinstance, pool, itertools.repeat(str)))
            if not strings or not all(map(operator.lt, pool, itertools.islice(pool, 1, None))):
                raise InputError(name, "a sorted tuple of distinct strings", pool[:5])
        for name, a, low, high in (
            ("root_code", self.root_code, 0, len(self.roots)),
            ("rater_code", self.rater_code, 0, len(self.raters)),
            ("rater_kind", self.rater_kind, 0, len(RATER_KINDS)),
            ("order", self.order, 0, len(ORDERS)),
            ("choice", self.choice, 0, len(CHOICES)),
            ("origin_file", self.origin_file, -1, len(self.files)),
        ):
            if n and (int(a.min()) < low or int(a.max()) >= high):
                raise InputError(name, f"codes in [{low}, {high})", [int(a.min()), int(a.max())])
        if n and int(self.trial.min()) < 0:
            raise InputError("trial", "integers >= 0", int(self.trial.min()))
        p = self.p_treatment
        bad_p = ~np.isnan(p) & ~((p >= 0) & (p <= 1))
        if bad_p.any():
            raise InputError(
                "p_treatment", "numbers in [0, 1] or NaN (missing)", float(p[bad_p][0])
            )
        bad_cost = ~np.isnan(self.cost) & (~np.isfinite(self.cost) | (self.cost < 0))
        if bad_cost.any():
            raise InputError(
                "cost", "finite numbers >= 0 or NaN (missing)", float(self.cost[bad_cost][0])
            )
        for name in _ARRAY_FIELDS:
            _readonly(getattr(self, name))

    # ----------------------------------------------------------------- construction
    @classmethod
    def empty(cls) -> JudgmentTable:
        """A table with no rows."""
        return cls.from_judgments(())

    @classmethod
    def from_columns(
        cls,
        root_id: Sequence[str],
        rater_id: Sequence[str],
        rater_kind: NDArray[Any],
        order: NDArray[Any],
        choice: NDArray[Any],
        trial: NDArray[Any] | None = None,
        cost: NDArray[Any] | None = None,
        raw: Sequence[str | None] | None = None,
        timestamp: Sequence[str | None] | None = None,
        file: str | None = None,
        lines: NDArray[Any] | None = None,
        p_treatment: NDArray[Any] | None = None,
    ) -> JudgmentTable:
        """A table from column arrays: ids as strings, the enums already as integer codes."""
        n = len(root_id)
        roots, root_code = _encode(root_id)
        raters, rater_code = _encode(rater_id)
        return cls(
            roots=roots,
            raters=raters,
            root_code=root_code,
            rater_code=rater_code,
            rater_kind=np.asarray(rater_kind, np.int8),
            order=np.asarray(order, np.int8),
            choice=np.asarray(choice, np.int8),
            trial=np.zeros(n, np.int64) if trial is None else np.asarray(trial, np.int64),
            cost=np.full(n, np.nan) if cost is None else np.asarray(cost, np.float64),
            raw=np.full(n, None, object) if raw is None else _object_array(raw, n),
            timestamp=(
                np.full(n, None, object) if timestamp is None else _object_array(timestamp, n)
            ),
            p_treatment=(
                np.full(n, np.nan) if p_treatment is None else np.asarray(p_treatment, np.float64)
            ),
            files=() if file is None else (file,),
            origin_file=np.full(n, -1 if file is None else 0, np.int64),
            origin_line=np.zeros(n, np.int64) if lines is None else np.asarray(lines, np.int64),
            origin_where=np.full(n, None, object),
        )

    @classmethod
    def from_judgments(cls, js: Iterable[Judgment]) -> JudgmentTable:
        """A table from records (their origins kept)."""
        js = tuple(js)
        n = len(js)
        for i, j in enumerate(js):
            if not isinstance(j, Judgment):
                raise InputError(f"js[{i}]", "a Judgment", type(j).__name__)
        kinds = _enum_codes([j.rater_kind for j in js], _KIND_CODE, "rater_kind")
        orders = _enum_codes([j.order for j in js], _ORDER_CODE, "order")
        choices = _enum_codes([j.choice for j in js], _CHOICE_CODE, "choice")
        for i, j in enumerate(js):
            if not isinstance(j.trial, int) or isinstance(j.trial, bool):
                raise InputError(f"js[{i}].trial", "an integer >= 0", j.trial)
        has_origin = np.fromiter((j.origin is not None for j in js), bool, n)
        files, codes = _encode([j.origin.file for j in js if j.origin is not None])
        file_code = np.full(n, -1, np.int64)
        file_code[has_origin] = codes
        lines = np.zeros(n, np.int64)
        where = np.full(n, None, object)
        for i, j in enumerate(js):
            if j.origin is None:
                continue
            w = j.origin.where
            if w.startswith("line ") and w[5:].isdigit() and int(w[5:]) > 0:
                lines[i] = int(w[5:])
            else:
                where[i] = w
        roots, root_code = _encode([j.root_id for j in js])
        raters, rater_code = _encode([j.rater_id for j in js])
        return cls(
            roots=roots,
            raters=raters,
            root_code=root_code,
            rater_code=rater_code,
            rater_kind=kinds,
            order=orders,
            choice=choices,
            trial=np.fromiter((j.trial for j in js), np.int64, n),
            cost=np.fromiter(
                (math.nan if j.cost is None else float(j.cost) for j in js), np.float64, n
            ),
            raw=_object_array((j.raw for j in js), n),
            timestamp=_object_array((j.timestamp for j in js), n),
            p_treatment=np.fromiter(
                (math.nan if j.p_treatment is None else float(j.p_treatment) for j in js),
                np.float64,
                n,
            ),
            files=files,
            origin_file=file_code,
            origin_line=lines,
            origin_where=where,
        )

    @classmethod
    def concat(cls, tables: Sequence[JudgmentTable]) -> JudgmentTable:
        """The rows of ``tables`` one after another, pools merged."""
        tables = tuple(tables)
        if not tables:
            return cls.empty()
        roots = tuple(sorted(set().union(*(t.roots for t in tables))))
        raters = tuple(sorted(set().union(*(t.raters for t in tables))))
        files = tuple(sorted(set().union(*(t.files for t in tables))))
        ri = {s: i for i, s in enumerate(roots)}
        ai = {s: i for i, s in enumerate(raters)}
        fi = {s: i for i, s in enumerate(files)}

        def remap(codes: NDArray[np.int64], pool: tuple[str, ...], to: dict[str, int]) -> Any:
            lut = np.array([to[s] for s in pool] + [-1], np.int64)  # -1 keeps "no origin"
            return lut[codes]

        def cat(name: str) -> Any:
            return np.concatenate([getattr(t, name) for t in tables])

        return cls(
            roots=roots,
            raters=raters,
            root_code=np.concatenate([remap(t.root_code, t.roots, ri) for t in tables]),
            rater_code=np.concatenate([remap(t.rater_code, t.raters, ai) for t in tables]),
            rater_kind=cat("rater_kind"),
            order=cat("order"),
            choice=cat("choice"),
            trial=cat("trial"),
            cost=cat("cost"),
            raw=cat("raw"),
            timestamp=cat("timestamp"),
            p_treatment=cat("p_treatment"),
            files=files,
            origin_file=np.concatenate([remap(t.origin_file, t.files, fi) for t in tables]),
            origin_line=cat("origin_line"),
            origin_where=cat("origin_where"),
        )

    # ----------------------------------------------------------------- access
    def __len__(self) -> int:
        return len(self.root_code)

    def __iter__(self) -> Iterator[Judgment]:
        return iter(self.judgments())

    def origin(self, i: int) -> Origin | None:
        """Where row ``i`` came from (None when unknown)."""
        f = int(self.origin_file[i])
        if f < 0:
            return None
        line = int(self.origin_line[i])
        where = f"line {line}" if line > 0 else (self.origin_where[i] or "")
        return Origin(self.files[f], where)

    def judgments(self) -> tuple[Judgment, ...]:
        """The rows as records (origins included)."""
        roots = np.array((*self.roots, ""), dtype=object)[self.root_code].tolist()
        raters = np.array((*self.raters, ""), dtype=object)[self.rater_code].tolist()
        cost = [None if math.isnan(c) else c for c in self.cost.tolist()]
        p_t = [None if math.isnan(v) else v for v in self.p_treatment.tolist()]
        return tuple(
            Judgment(
                root_id=roots[i],
                rater_id=raters[i],
                rater_kind=RATER_KINDS[k],
                order=ORDERS[o],
                choice=CHOICES[c],
                trial=t,
                cost=cost[i],
                raw=r,
                timestamp=ts,
                origin=self.origin(i),
                p_treatment=p_t[i],
            )
            for i, (k, o, c, t, r, ts) in enumerate(
                zip(
                    self.rater_kind.tolist(),
                    self.order.tolist(),
                    self.choice.tolist(),
                    self.trial.tolist(),
                    self.raw.tolist(),
                    self.timestamp.tolist(),
                    strict=True,
                )
            )
        )

    def take(self, index: NDArray[Any]) -> JudgmentTable:
        """The rows at ``index`` (an integer array), pools unchanged."""
        idx = np.asarray(index, np.int64)
        return JudgmentTable(
            roots=self.roots,
            raters=self.raters,
            root_code=self.root_code[idx],
            rater_code=self.rater_code[idx],
            rater_kind=self.rater_kind[idx],
            order=self.order[idx],
            choice=self.choice[idx],
            trial=self.trial[idx],
            cost=self.cost[idx],
            raw=self.raw[idx],
            timestamp=self.timestamp[idx],
            p_treatment=self.p_treatment[idx],
            files=self.files,
            origin_file=self.origin_file[idx],
            origin_line=self.origin_line[idx],
            origin_where=self.origin_where[idx],
        )

    def _origin_text(self, i: int) -> str:
        o = self.origin(i)
        return "(no origin)" if o is None else f"{o.file}: {o.where}"

    def duplicates(self, limit: int = MAX_DEFECTS) -> list[Defect]:
        """One Defect per row repeating an earlier row's (root, rater, order, trial).

        The defect is placed at the later row and names the earlier one; capped at ``limit`` with a
        summary defect counting the rest.
        """
        n = len(self)
        if n < 2:
            return []
        keys = (self.trial, self.order, self.rater_code, self.root_code)
        perm = np.lexsort(keys)  # stable: equal keys keep table order
        same = np.ones(n - 1, bool)
        for k in keys:
            ks = k[perm]
            same &= ks[1:] == ks[:-1]
        hits = np.nonzero(same)[0]
        if not len(hits):
            return []
        # the first row of each run of equal keys
        run_start = np.maximum.accumulate(np.where(np.r_[True, ~same], np.arange(n), 0))
        out: list[Defect] = []
        for h in hits.tolist():
            later, first = int(perm[h + 1]), int(perm[run_start[h + 1]])
            o = self.origin(later)
            out.append(
                Defect(
                    o.file if o else "(table)",
                    o.where if o else f"row {later}",
                    {
                        "root_id": self.roots[self.root_code[later]],
                        "rater_id": self.raters[self.rater_code[later]],
                        "order": ORDERS[self.order[later]],
                        "trial": int(self.trial[later]),
                    },
                    "one judgment per (root_id, rater_id, order, trial); "
                    f"already at {self._origin_text(first)}",
                )
            )
        out.sort(key=lambda d: (d.file, _line_key(d.path)))
        return list(cap_defects(out, out[0].file, limit))

    def sorted_by(self, root_order: Sequence[str]) -> JudgmentTable:
        """Rows ordered by ``root_order`` (the registered order), then rater id, order, trial.

        The order depends only on the registered order and the row keys, never on file order or
        the judgments' values (ties of duplicate keys keep table order). Every root of the table
        must appear in ``root_order`` exactly once.
        """
        rank_of = {}
        for pos, r in enumerate(root_order):
            if r in rank_of:
                raise InputError("root_order", "distinct root ids", r)
            rank_of[r] = pos
        used = np.unique(self.root_code)
        missing = [self.roots[c] for c in used.tolist() if self.roots[c] not in rank_of]
        if missing:
            raise InputError("root_order", "every root id of the table", missing[:5])
        lut = np.array([rank_of.get(r, -1) for r in self.roots] + [-1], np.int64)
        perm = np.lexsort((self.trial, self.order, self.rater_code, lut[self.root_code]))
        return self.take(perm)

    def to_csv_bytes(self) -> bytes:
        """The canonical CSV: header, one row per judgment, ``\\n`` line ends, empty for None."""
        buf = io.StringIO()
        w = csv.writer(buf, lineterminator="\n")
        w.writerow(CANONICAL_COLUMNS)
        # text cells a spreadsheet would run as a formula get a leading ' (verdictpack._cells)
        roots = np.array((*map(csv_cell, self.roots), ""), dtype=object)[self.root_code].tolist()
        raters = np.array((*map(csv_cell, self.raters), ""), dtype=object)[self.rater_code].tolist()
        kinds = np.array(RATER_KINDS, dtype=object)[self.rater_kind].tolist()
        orders = np.array(ORDERS, dtype=object)[self.order].tolist()
        choices = np.array(CHOICES, dtype=object)[self.choice].tolist()
        cost = ["" if c != c else repr(c) for c in self.cost.tolist()]
        raw = ["" if r is None else csv_cell(r) for r in self.raw.tolist()]
        ts = ["" if t is None else csv_cell(t) for t in self.timestamp.tolist()]
        p_t = ["" if v != v else repr(v) for v in self.p_treatment.tolist()]
        rows = zip(
            roots,
            raters,
            kinds,
            orders,
            choices,
            map(str, self.trial.tolist()),
            cost,
            raw,
            ts,
            p_t,
            strict=True,
        )
        # csv.writer quotes a field only when it holds a delimiter, a quote or a line end; the
        # fixed vocabularies and the numbers never do, so when no id, raw answer or timestamp
        # does either the rows are the fields joined by commas (the same bytes, 3x faster)
        texts: tuple[Iterable[str], ...] = (
            *(RATER_KINDS, ORDERS, CHOICES, self.roots, self.raters),
            *(filter(None, raw), filter(None, ts)),
        )
        if any(_NEEDS_QUOTES.search("".join(t)) for t in texts):
            w.writerows(rows)
        elif len(self):
            buf.write("\n".join(map(",".join, rows)))
            buf.write("\n")
        return buf.getvalue().encode("utf-8")


_NEEDS_QUOTES = re.compile('[,"\r\n]')


def _lookup(values: Sequence[Any], table: Mapping[str, int]) -> NDArray[np.int8]:
    """``table[v]`` for each value, -1 where absent."""
    return np.fromiter(map(table.get, values, itertools.repeat(-1)), np.int8, len(values))


def _line_key(path: str) -> tuple[int, str]:
    if path.startswith("line ") and path[5:].isdigit():
        return (int(path[5:]), "")
    return (0, path)


def _enum_codes(values: Sequence[Any], table: Mapping[str, int], name: str) -> NDArray[np.int8]:
    codes = _lookup(values, table)
    bad = np.nonzero(codes < 0)[0]
    if len(bad):
        raise InputError(name, "one of " + ", ".join(table), values[int(bad[0])])
    return codes


class ImportResult(NamedTuple):
    """What every importer returns: the columnar table of the rows it could map, every defect.

    :func:`read_table` builds the table directly; the record importers (Label Studio, Argilla,
    MTurk) build it from their records with :meth:`from_judgments`. ``.judgments`` gives the
    records on demand (origins included). ``notes``: what was read but gave no judgment and is
    no defect (e.g. Argilla records nobody answered), counted, for the reader to see.
    """

    table: JudgmentTable
    defects: tuple[Defect, ...]
    notes: tuple[str, ...] = ()

    @property
    def judgments(self) -> tuple[Judgment, ...]:
        """The rows as records, in table order."""
        return self.table.judgments()

    @classmethod
    def from_judgments(
        cls, js: Iterable[Judgment], defects: Iterable[Defect], notes: Iterable[str] = ()
    ) -> ImportResult:
        """The result of a record importer: its records as a table, its defects and notes."""
        return cls(JudgmentTable.from_judgments(js), tuple(defects), tuple(notes))


# --------------------------------------------------------------------- the table importer
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


def _read_csv(
    text: str, name: str, needed: Sequence[str], required: set[str]
) -> tuple[dict[str, Sequence[str]], NDArray[np.int64], list[tuple[int, Defect]]]:
    """Columns (source name -> values), each row's starting line, and file/row defects; a
    header naming any column twice is refused (which of the two would be read?)."""
    defects: list[tuple[int, Defect]] = []
    fast = _split_plain(text)
    mixed = _split_mixed(text) if fast is None else None
    if fast is not None or mixed is not None:
        odd: list[tuple[int, list[str]]] = []
        if fast is not None:
            header, flat = fast
            width = len(header)
            fields = [flat[j::width] for j in range(width)]
            lines = np.arange(2, len(flat) // width + 2, dtype=np.int64)
        elif mixed is not None:
            header, fields, lines, odd = mixed
        width = len(header)
        columns: dict[str, Sequence[str]] = {}
        for j, col in enumerate(header):
            if col in header[:j]:
                defects.append(
                    (1, Defect(name, "line 1", col, "each column named once in the header"))
                )
            if col in needed and col not in columns:
                columns[col] = fields[j]
        for col in needed:
            if col in required and col not in columns:
                defects.append(
                    (1, Defect(name, "line 1", header, f"a header with a column named {col!r}"))
                )
        if defects:
            return {}, np.zeros(0, np.int64), defects
        extra: list[int] = []
        for ln, row in odd:  # rows read by the csv module (quotes, or not the header's width)
            if not row:  # a blank line: nothing to read
                continue
            if len(row) != width:
                defects.append(
                    (ln, Defect(name, f"line {ln}", len(row), f"{width} fields (as the header)"))
                )
                continue
            extra.append(ln)
            for j, col in enumerate(header):
                if columns.get(col) is fields[j]:
                    fields[j].append(row[j])
        if extra:
            lines = np.concatenate([lines, np.asarray(extra, np.int64)])
        return columns, lines, defects
    reader = csv.reader(io.StringIO(text, newline=""))
    head = next(reader, None)
    header_end = reader.line_num
    rows = list(reader)
    end = reader.line_num
    if head is None:
        return {}, np.zeros(0, np.int64), [(0, Defect(name, "line 1", "", "a header row"))]
    header = head
    if end - header_end == len(rows):
        lines = np.arange(header_end + 1, header_end + 1 + len(rows), dtype=np.int64)
    else:  # quoted newlines: read again, keeping each row's starting line
        starts: list[int] = []
        reader = csv.reader(io.StringIO(text, newline=""))
        next(reader)
        prev = reader.line_num
        for _ in reader:
            starts.append(prev + 1)
            prev = reader.line_num
        lines = np.asarray(starts, np.int64)
    position: dict[str, int] = {}
    for j, col in enumerate(header):
        if col in position:
            defects.append((1, Defect(name, "line 1", col, "each column named once in the header")))
        position.setdefault(col, j)
    for col in needed:
        if col in required and col not in position:
            defects.append(
                (1, Defect(name, "line 1", header, f"a header with a column named {col!r}"))
            )
    if defects:
        return {}, np.zeros(0, np.int64), defects
    width = len(header)
    lengths = np.fromiter(map(len, rows), np.int64, len(rows))
    if (lengths != width).any():
        for i in np.nonzero(lengths != width)[0].tolist():
            if lengths[i] == 0:  # a blank line: nothing to read
                continue
            ln = int(lines[i])
            defects.append(
                (ln, Defect(name, f"line {ln}", len(rows[i]), f"{width} fields (as the header)"))
            )
        keep = np.nonzero(lengths == width)[0]
        rows = [rows[i] for i in keep.tolist()]
        lines = lines[keep]
    transposed: list[Sequence[str]] = list(zip(*rows, strict=True)) if rows else [()] * width
    found = {col: transposed[position[col]] for col in needed if col in position}
    return found, lines, defects


def _split_plain(text: str) -> tuple[list[str], list[str]] | None:
    """The header and the flat list of fields, when ``csv.reader`` would give exactly these.

    A file without quote characters and carriage returns, whose every line has the header's number
    of fields, splits at commas and line ends exactly as ``csv.reader`` (default dialect) splits
    it; that case (every canonical file verdictpack writes without quoting) is read with two
    ``str.split`` calls instead of a list per row. Anything else returns None: the csv module reads.
    """
    if not text or '"' in text or "\r" in text:
        return None
    body = text[:-1] if text.endswith("\n") else text
    first = body.find("\n")
    if first < 0:
        return body.split(","), []
    header = body[:first].split(",")
    rest = body[first + 1 :]
    # every line has the header's width iff every width-th separator (comma or line end) of the
    # body is a line end and no other one is (ASCII bytes never occur inside UTF-8 sequences)
    width = len(header)
    raw = np.frombuffer(rest.encode("utf-8"), np.uint8)
    separators = raw[(raw == 44) | (raw == 10)]
    is_end = separators == 10
    if (len(separators) + 1) % width or not is_end[width - 1 :: width].all():
        return None
    if int(is_end.sum()) != (len(separators) + 1) // width - 1:
        return None
    return header, rest.replace("\n", ",").split(",")


def _split_mixed(
    text: str,
) -> tuple[list[str], list[list[str]], NDArray[np.int64], list[tuple[int, list[str]]]] | None:
    """Plain lines split at commas, the other records read by the csv module.

    A line is plain when it has no quote character, does not start inside a quoted field and has
    the header's number of commas: ``csv.reader`` would split it exactly at its commas. Every
    other record (from a line to the line where its quotes balance) is read by ``csv.reader``.
    Returns the header, the plain rows' columns, their lines, and the other rows with their
    starting lines -- rows are NOT in file order (the caller orders by line). None when the file
    has carriage returns or a quoted header (the csv module then reads all of it).
    """
    if not text or "\r" in text:
        return None
    body = text[:-1] if text.endswith("\n") else text
    first = body.find("\n")
    if first < 0 or '"' in body[:first]:
        return None
    header = body[:first].split(",")
    width = len(header)
    rest_text = body[first + 1 :]
    lines: list[str] = []
    if rest_text.isascii():  # count on the bytes; a line is a slice of the text between line ends
        quotes, commas, begin, end_at = _ascii_line_counts(rest_text)
        count = len(quotes)
    else:
        lines = rest_text.split("\n")
        count = len(lines)
        begin = end_at = np.zeros(0, np.int64)  # not used: the lines are at hand
        quotes = np.fromiter(map(str.count, lines, itertools.repeat('"')), np.int64, count)
        commas = np.fromiter(map(str.count, lines, itertools.repeat(",")), np.int64, count)

    def block(a: int, b: int) -> str:
        """Lines ``a`` to ``b`` (inclusive) as they stand in the text."""
        return rest_text[begin[a] : end_at[b]] if not lines else "\n".join(lines[a : b + 1])

    inside = (np.cumsum(quotes) - quotes) % 2 == 1  # the line starts inside a quoted field
    plain = (quotes == 0) & ~inside & (commas == width - 1)
    at = np.flatnonzero(plain)
    if len(at) == count:
        joined = rest_text.replace("\n", ",")
    elif lines:
        joined = ",".join(itertools.compress(lines, plain.tolist()))
    else:  # the runs of consecutive plain lines, sliced from the text
        edges = np.flatnonzero(np.diff(np.r_[0, plain.astype(np.int8), 0])).tolist()
        runs = (block(a, b - 1) for a, b in zip(edges[::2], edges[1::2], strict=True))
        joined = "\n".join(runs).replace("\n", ",")
    flat = joined.split(",") if len(at) else []
    fields = [flat[j::width] for j in range(width)]
    odd: list[tuple[int, list[str]]] = []
    rest = np.flatnonzero(~plain).tolist()
    k = 0
    while k < len(rest):
        start = end = rest[k]
        parity = int(quotes[start]) % 2
        while parity and end + 1 < count:
            end += 1
            parity = (parity + int(quotes[end])) % 2
        reader = csv.reader(io.StringIO(block(start, end), newline=""))
        rows = list(reader)
        if len(rows) > 1 or (rows and reader.line_num != end - start + 1):
            return None  # a quote inside an unquoted field: our parity is not csv's state
        odd.extend((start + 2, row) for row in rows)
        while k < len(rest) and rest[k] <= end:
            k += 1
    return header, fields, at.astype(np.int64) + 2, odd


def _ascii_line_counts(
    text: str,
) -> tuple[NDArray[np.int64], NDArray[np.int64], NDArray[np.int64], NDArray[np.int64]]:
    """Per line of an ASCII ``text``: quote characters, commas, first and end offset.

    Offsets are character offsets (one byte per character); the counts come from the positions
    of the separators, without a string per line.
    """
    raw = np.frombuffer(text.encode("ascii"), np.uint8)
    ends = np.flatnonzero(raw == 10)
    quote_lines = np.searchsorted(ends, np.flatnonzero(raw == 34))
    quotes = np.bincount(quote_lines, minlength=len(ends) + 1).astype(np.int64)
    separator = raw == 44
    separator |= raw == 10
    breaks = np.flatnonzero(raw[separator] == 10)  # the line ends among the separators
    commas = np.diff(breaks, prepend=-1, append=int(separator.sum())) - 1
    begin = np.r_[0, ends + 1].astype(np.int64)
    end_at = np.r_[ends, len(raw)].astype(np.int64)
    return quotes, commas.astype(np.int64), begin, end_at


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
    whole: str, name: str, needed: Sequence[str]
) -> tuple[dict[str, Sequence[str]], NDArray[np.int64], list[tuple[int, Defect]]]:
    """The ``needed`` columns of a JSONL file (one pass, one line decoded at a time, kept as
    columns, never as a record per line: 1M records cost 2 GB), the physical line of each row
    and the defects by line."""
    defects: list[tuple[int, Defect]] = []
    values: dict[str, list[str]] = {col: [] for col in needed}
    # one copy of each repeated value (a root id is on every line of its root)
    memos: dict[str, dict[str, str] | None] = {col: {} for col in needed}
    present: set[str] = set()
    lines: list[int] = []
    for ln, text in enumerate(text_lines(whole), start=1):
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


def read_table(
    path: Path,
    mapping: Mapping[str, str] | None = None,
    value_maps: Mapping[str, Mapping[str, str]] | None = None,
    treatment_side_column: str | None = None,
    display: str | None = None,
    data: bytes | None = None,
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

    Every row that cannot be mapped is left out and becomes a Defect at ``line N`` naming the
    column, the value received and what was expected (capped at :data:`MAX_DEFECTS` plus a count).
    In JSONL, line N is the Nth physical line; values that are not strings are read as their JSON
    text (``3`` -> ``"3"``), null as missing.
    """
    with gc_paused():
        return _read_table(path, mapping, value_maps, treatment_side_column, display, data)


def _read_table(
    path: Path,
    mapping: Mapping[str, str] | None,
    value_maps: Mapping[str, Mapping[str, str]] | None,
    treatment_side_column: str | None,
    display: str | None,
    data: bytes | None,
) -> ImportResult:
    path = Path(path)
    name = display if display is not None else path.name
    m, vm = _check_arguments(mapping, value_maps, treatment_side_column)
    src = {c: m.get(c, c) for c in CANONICAL_COLUMNS}
    derive = treatment_side_column is not None
    if derive:
        del src["order"]
        src[_SIDE_KEY] = treatment_side_column  # type: ignore[assignment]
    required = {src[c] for c in (*_REQUIRED, _SIDE_KEY if derive else "order")}
    needed = list(dict.fromkeys(src.values()))
    suffix = path.suffix.lower()
    if suffix not in (".csv", ".jsonl"):
        d = Defect(name, "(file)", path.suffix, "a .csv or .jsonl file")
        return ImportResult(JudgmentTable.empty(), (d,))
    try:
        text = (path.read_bytes() if data is None else data).decode("utf-8-sig")
        if suffix == ".csv":
            columns, lines, found = _read_csv(text, name, needed, required)
        else:
            columns, lines, found = _read_jsonl(text, name, needed)
    except OSError as exc:
        d = Defect(name, "(file)", str(path), f"a readable file ({exc.strerror or exc})")
        return ImportResult(JudgmentTable.empty(), (d,))
    except UnicodeDecodeError as exc:
        d = Defect(name, "(file)", exc.reason, "UTF-8 text")
        return ImportResult(JudgmentTable.empty(), (d,))
    except csv.Error as exc:
        d = Defect(name, "(file)", str(exc), "a well-formed CSV file")
        return ImportResult(JudgmentTable.empty(), (d,))
    n = len(lines)
    if not columns and found:
        return ImportResult(JudgmentTable.empty(), _finish(found, name))
    ok = np.ones(n, bool)
    if suffix == ".csv" and "'" in text:  # the spreadsheet rule of verdictpack's CSVs, undone
        columns = {k: csv_values(v) for k, v in columns.items()}

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
                (ln, Defect(name, f"line {ln}", original[i], f"column {label}: {expected}"))
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
    for c, lookup in (("rater_kind", _KIND_CODE), ("choice", _CHOICE_CODE)):
        codes[c] = looked_up(c, lookup)
        if not derive or c != "choice":
            refuse(codes[c] < 0, c, "one of " + ", ".join(lookup))
    if derive:
        side = looked_up(_SIDE_KEY, _POSITION)
        refuse(side < 0, _SIDE_KEY, "one of A, B, first, second (the side holding the treatment)")
        pos = looked_up("choice", _POSITION)
        refuse(
            (pos < 0) & (codes["choice"] < 0),
            "choice",
            "one of A, B, first, second, " + ", ".join(CHOICES),
        )
        treat, null = _CHOICE_CODE["treatment"], _CHOICE_CODE["null_partner"]
        codes["choice"] = np.where(
            pos >= 0, np.where(pos == side, treat, null), codes["choice"]
        ).astype(np.int8)
        codes["order"] = np.where(
            side == 0, _ORDER_CODE["treatment_first"], _ORDER_CODE["null_first"]
        ).astype(np.int8)
    else:
        codes["order"] = looked_up("order", _ORDER_CODE)
        refuse(codes["order"] < 0, "order", "one of " + ", ".join(ORDERS))
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
    if n > 1 and (np.diff(lines) < 0).any():  # rows read out of file order: restore it
        keep = keep[np.argsort(lines[keep], kind="stable")]
        every = False

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
        if len(keep) == n:  # every row kept, only reordered: the pool is unchanged
            return pool, code[keep]
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
        origin_line=lines[keep],
        origin_where=np.full(len(keep), None, object),
    )
    return ImportResult(table, _finish(found, name))


def _finish(found: list[tuple[int, Defect]], name: str) -> tuple[Defect, ...]:
    found.sort(key=lambda x: x[0])  # stable: within a line, columns in canonical order
    return cap_defects([d for _, d in found], name)
