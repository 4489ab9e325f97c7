"""Import speed of the canonical long table: ``read_table`` vs Python's ``csv`` module alone.

Workload (fixed, seeded): a synthetic canonical CSV of 100,000 roots x (4 judges x 2 orders +
3 humans) = 1.1 million judgment rows (model rows carry a cost, human rows a timestamp), written
to a temporary folder before timing. Timed, each the median of ``--repeats`` runs:

* ``csv.reader`` iterating over the file (the floor: reading only, nothing kept);
* :func:`verdictpack.evidence._table.read_table` (read, map, check every row, build the columnar
  table), and the ratio of the two medians (the acceptance asks for at most 4x);
* for information: ``sorted_by`` a shuffled registered order and ``to_csv_bytes``.

``--quoted`` puts a quoted field (with a comma) in 1% of the roots. ``--pyarrow`` (pyarrow
importable, e.g. on ``PYTHONPATH``) also times pyarrow's CSV reader alone and ``read_table`` with
pyarrow reading the columns in place of the csv module, every check after it the same (the
measured alternative; its table must equal the csv module's).

Usage: python benchmarks/bench_table.py [--repeats 3] [--roots 100000] [--quoted] [--pyarrow]
"""

from __future__ import annotations

import argparse
import csv
import statistics
import sys
import tempfile
from collections.abc import Sequence
from pathlib import Path
from typing import Any
from unittest import mock

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from common import machine, report, time_call

from verdictpack.evidence import _table
from verdictpack.evidence._table import CANONICAL_COLUMNS, read_table


def write_csv(path: Path, roots: int, seed: int = 14, quoted: bool = False) -> int:
    rng = np.random.default_rng(seed)
    judges = [f"judge-{k}" for k in range(4)]
    humans = [f"human-{k}" for k in range(3)]
    choices = ("treatment", "null_partner", "tie", "invalid")
    picks = rng.choice(4, size=(roots, 11), p=[0.5, 0.4, 0.07, 0.03]).tolist()
    costs = rng.uniform(0.0001, 0.01, size=(roots, 8)).round(6).tolist()
    rows = 0
    with path.open("w", newline="", encoding="utf-8") as fh:
        w = csv.writer(fh, lineterminator="\n")
        w.writerow(CANONICAL_COLUMNS[:9])
        for r in range(roots):
            rid = f"root-{r:06d}"
            p, c = picks[r], costs[r]
            k = 0
            for j in judges:
                for order in ("treatment_first", "null_first"):
                    raw = f"Answer: {k}, so A" if quoted and r % 100 == 0 else ""
                    w.writerow((rid, j, "model", order, choices[p[k]], 0, c[k], raw, ""))
                    k += 1
            for h in humans:
                ts = f"2026-11-{1 + r % 28:02d}T12:00:00Z"
                w.writerow((rid, h, "human", "unknown", choices[p[k]], 0, "", "", ts))
                k += 1
            rows += 11
    return rows


def csv_only(path: Path) -> None:
    with path.open(encoding="utf-8", newline="") as fh:
        for _ in csv.reader(fh):
            pass


def pyarrow_columns(handle: Any, name: str, needed: Sequence[str], required: Any) -> Any:
    """``_table._read_csv``'s result, read by pyarrow: for this comparison only (pyarrow gives
    no row's line, so each row is taken as one line; no header or row checks)."""
    import pyarrow as pa
    from pyarrow import csv as pacsv

    convert = pacsv.ConvertOptions(
        column_types=dict.fromkeys(needed, pa.string()),
        include_columns=list(needed),
        include_missing_columns=True,
        strings_can_be_null=False,
    )
    parse = pacsv.ParseOptions(newlines_in_values=True)
    data = pa.py_buffer(handle.buffer.read())
    table = pacsv.read_csv(data, parse_options=parse, convert_options=convert)
    columns = {}
    for c in needed:
        if table.column(c).null_count == 0:  # a column the file has
            coded = table.column(c).combine_chunks().dictionary_encode()  # one string per value
            pool = coded.dictionary.to_pylist()
            columns[c] = list(map(pool.__getitem__, coded.indices.to_numpy().tolist()))
    return columns, np.arange(2, table.num_rows + 2, dtype=np.int64), []


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--roots", type=int, default=100_000)
    ap.add_argument(
        "--quoted",
        action="store_true",
        help="give 1%% of the roots' model rows a raw text with a comma (quoted: csv-module path)",
    )
    ap.add_argument("--pyarrow", action="store_true", help="time pyarrow's reader as well")
    args = ap.parse_args()
    print(machine())
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "judgments.csv"
        rows = write_csv(path, args.roots, quoted=args.quoted)
        print(f"{rows} rows, {path.stat().st_size / 1e6:.1f} MB")
        t_csv = time_call(lambda: csv_only(path), args.repeats)
        report("csv.reader only", t_csv)
        t_read = time_call(lambda: read_table(path), args.repeats)
        report("read_table", t_read)
        ratio = statistics.median(t_read) / statistics.median(t_csv)
        print(f"ratio read_table / csv.reader: {ratio:.2f}x (acceptance: at most 4x)")
        result = read_table(path)
        if result.defects or len(result.table) != rows:
            raise SystemExit(f"unexpected: {len(result.table)} rows, {result.defects[:3]}")
        if args.pyarrow:
            from pyarrow import csv as pacsv

            t_pa = time_call(lambda: pacsv.read_csv(path), args.repeats)
            report("pyarrow.csv.read_csv only", t_pa)
            with mock.patch.object(_table, "_read_csv", pyarrow_columns):
                t_both = time_call(lambda: read_table(path), args.repeats)
                same = read_table(path).table.to_csv_bytes() == result.table.to_csv_bytes()
            report("read_table, pyarrow reading", t_both)
            ratio = statistics.median(t_read) / statistics.median(t_both)
            print(f"csv module / pyarrow: {ratio:.2f}x; same table: {same}")
        order = list(result.table.roots)
        np.random.default_rng(1).shuffle(order)
        report("sorted_by", time_call(lambda: result.table.sorted_by(order), args.repeats))
        report("to_csv_bytes", time_call(result.table.to_csv_bytes, args.repeats))


if __name__ == "__main__":
    main()
