"""The canonical long table of judgments: one row per judgment, the import target and export format.

Every importer lands its rows here, in the canonical columns

``root_id, rater_id, rater_kind, order, choice, trial, cost, raw, timestamp, p_treatment``

with ``rater_kind`` one of :data:`RATER_KINDS`, ``order`` one of :data:`ORDERS`, ``choice`` one of
:data:`CHOICES`, ``trial`` an integer >= 0 (default 0), ``cost`` a finite number >= 0 or missing,
``raw`` and ``timestamp`` free text or missing, ``p_treatment`` the judge's probability of
preferring the treatment (from a live judge's token logprobs) in [0, 1] or missing: where given,
it is the judgment's observation instead of its choice's score. Rows read from free text (a
table's ``verdict_text_column``) also carry ``parse_path``, the parser's rule that read each one
(``exact label``, ``pattern bold`` ... or ``none``), written as a last column of the CSV.

Two shapes of the same data:

* :class:`Judgment` -- one record (what the format importers produce, one at a time);
* :class:`JudgmentTable` -- the columnar form (numpy codes, string pools), the one that scales: the
  ``table`` importer :func:`~verdictpack.evidence._table.read_table` builds it directly without
  a record per row, and :meth:`JudgmentTable.judgments` gives the records back on demand.

:mod:`verdictpack.evidence._table` reads a table from a CSV or JSONL file (and names these types
again: import them from there).
"""

from __future__ import annotations

import csv
import io
import itertools
import math
import operator
import re
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, NamedTuple

import numpy as np
from numpy.typing import NDArray

from verdictpack._cells import csv_cell
from verdictpack._errors import Defect, InputError

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
    "more_defects",
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
MAX_DEFECTS = 50

_CHOICE_CODE = {c: i for i, c in enumerate(CHOICES)}
_ORDER_CODE = {c: i for i, c in enumerate(ORDERS)}
_KIND_CODE = {c: i for i, c in enumerate(RATER_KINDS)}


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
    return (*defects[:limit], more_defects(file, len(defects) - limit))


def more_defects(file: str, rest: int) -> Defect:
    """The summary defect counting the ``rest`` defects of ``file`` not listed."""
    return Defect(file, "(more)", f"{rest} more defects not listed", "a file without defects")


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
    # the rule that read each row's free-text verdict (a table's verdict_text_column), else None
    parse_path: NDArray[np.object_] | None = None

    def __post_init__(self) -> None:
        n = len(self.root_code)
        if self.parse_path is not None:
            if not isinstance(self.parse_path, np.ndarray) or self.parse_path.shape != (n,):
                raise InputError("parse_path", f"a 1-d numpy array of length {n}", self.parse_path)
            _readonly(self.parse_path)
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

        parsed = any(t.parse_path is not None for t in tables)  # else no column at all
        paths = [
            np.full(len(t), None, object) if t.parse_path is None else t.parse_path for t in tables
        ]
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
            parse_path=np.concatenate(paths) if parsed else None,
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
            parse_path=None if self.parse_path is None else self.parse_path[idx],
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
        """The canonical CSV: header, one row per judgment, ``\\n`` line ends, empty for None;
        with a ``parse_path`` column last when rows were read from free text."""
        buf = io.StringIO()
        w = csv.writer(buf, lineterminator="\n")
        paths = (
            None if self.parse_path is None else ["" if p is None else p for p in self.parse_path]
        )
        w.writerow(CANONICAL_COLUMNS + (() if paths is None else ("parse_path",)))
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
            *(() if paths is None else (paths,)),
            strict=True,
        )
        # csv.writer quotes a field only when it holds a delimiter, a quote or a line end; the
        # fixed vocabularies and the numbers never do, so when no id, raw answer or timestamp
        # does either the rows are the fields joined by commas (the same bytes, 3x faster)
        texts: tuple[Iterable[str], ...] = (
            *(RATER_KINDS, ORDERS, CHOICES, self.roots, self.raters),
            *(filter(None, raw), filter(None, ts), paths or ()),
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

    :func:`~verdictpack.evidence._table.read_table` builds the table directly; the record
    importers (Label Studio, Argilla, MTurk) build it from their records with
    :meth:`from_judgments`. ``.judgments`` gives the records on demand (origins included).
    ``notes``: what was read but gave no judgment and is no defect (e.g. Argilla records nobody
    answered), counted, for the reader to see.
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
