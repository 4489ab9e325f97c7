"""Import speed of the canonical long table: ``read_table`` vs Python's ``csv`` module alone.

Workload (fixed, seeded): a synthetic canonical CSV of 100,000 roots x (4 judges x 2 orders +
3 humans) = 1.1 million judgment rows (model rows carry a cost, human rows a timestamp), written
to a temporary folder before timing. Timed, each the median of ``--repeats`` runs:

* ``csv.reader`` iterating over the file (the floor: reading only, nothing kept);
* :func:`verdictpack.evidence._table.read_table` (read, map, check every row, build the columnar
  table), and the ratio of the two medians (the acceptance asks for at most 4x);
* for information: ``sorted_by`` a shuffled registered order and ``to_csv_bytes``.

Files without quote characters are split by ``str.split`` (exactly what ``csv.reader`` would
give); ``--quoted`` puts a quoted field in 1% of the roots so the ``csv`` module path is timed.

Usage: python benchmarks/bench_table.py [--repeats 3] [--roots 100000] [--quoted]
"""

from __future__ import annotations

import argparse
import csv
import statistics
import sys
import tempfile
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from common import machine, report, time_call

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


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--roots", type=int, default=100_000)
    ap.add_argument(
        "--quoted",
        action="store_true",
        help="give 1%% of the roots' model rows a raw text with a comma (quoted: csv-module path)",
    )
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
        order = list(result.table.roots)
        np.random.default_rng(1).shuffle(order)
        report("sorted_by", time_call(lambda: result.table.sorted_by(order), args.repeats))
        report("to_csv_bytes", time_call(result.table.to_csv_bytes, args.repeats))


if __name__ == "__main__":
    main()
