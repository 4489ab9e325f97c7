"""Memory of reading a config and a judgment table, each in a fresh process (issue 22, row 14).

Workloads (fixed, generated into a temporary folder before measuring):

* a valid judges config of about ``--config-mb`` MB (the judges example, one composition of as
  many distinct judges as it takes: many small objects, the worst case per byte), written
  indented as the examples are and compact; measured: ``load_source`` (read and decode
  strictly), ``load_source`` + ``parse_config`` (the schema and the cross rules too) and
  ``validate``: the command ``verdictpack validate`` itself, in process;
* the canonical judgment table of ``bench_table.py`` with ``--roots`` roots (91,000: 1,001,000
  rows), as CSV and as JSONL (one object a line, every value a string); measured: ``read_table``
  (and, with ``--pyarrow``, ``read_table`` of the CSV with pyarrow reading its columns, as
  ``bench_table.py --pyarrow`` times it). ``--config-mb 0`` measures the tables only.

Each measurement runs in its own interpreter (``--child``, importing only what it measures)
and reports its peak RSS (VmHWM: the number to hold under a budget), the RSS once the
modules are imported (the base), their difference (what the read cost) and that difference per
byte of the file. Medians over ``--repeats`` runs.

Usage: python benchmarks/bench_memory.py [--repeats 3] [--config-mb 10] [--roots 91000] [--pyarrow]
"""

from __future__ import annotations

import argparse
import copy
import csv
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from common import ROOT, machine


def write_config(path: Path, megabytes: float, indent: int | None) -> None:
    base = json.loads((ROOT / "examples" / "judges_summarization.json").read_text("utf-8"))
    comp = copy.deepcopy(base["compositions"][0])
    template = comp["judges"][0]
    one = len(json.dumps({**template, "name": "judge-0000000"}, indent=indent))
    count = max(1, int(megabytes * 1e6 / (one + (10 if indent else 1))))
    comp["judges"] = [{**template, "name": f"judge-{i:07d}"} for i in range(count)]
    base["compositions"] = [comp]
    path.write_text(json.dumps(base, indent=indent), encoding="utf-8")


def write_jsonl(csv_path: Path, jsonl_path: Path) -> None:
    with csv_path.open(encoding="utf-8", newline="") as fh, jsonl_path.open("w") as out:
        for row in csv.DictReader(fh):
            out.write(json.dumps(row) + "\n")


def _status_kb(field: str) -> int:
    """A field of /proc/self/status in KiB (Linux): VmRSS (resident now), VmHWM (its peak).
    Not ``ru_maxrss``: across fork and exec it keeps the parent's peak."""
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith(field + ":"):
            return int(line.split()[1])
    raise SystemExit(f"no {field} in /proc/self/status")


def child(what: str, path: Path) -> None:
    """Measure one read in this (fresh) process, only its own modules imported; print JSON."""
    if what.startswith("table"):
        from verdictpack.evidence import _table
        from verdictpack.evidence._table import read_table

        if what == "table-pyarrow":
            from bench_table import pyarrow_columns

            _table._read_csv = pyarrow_columns  # type: ignore[assignment]
    elif what == "validate":
        from verdictpack._cli import main as cli
    else:
        from verdictpack.config._compiler import load_source, parse_config

        if what == "parse":
            from verdictpack._cli import load_layer

            layer = load_layer("judges")
    base = _status_kb("VmRSS")
    before = _status_kb("VmHWM")
    t0 = time.perf_counter()
    if what == "load":
        load_source(path)
    elif what == "parse":
        parse_config(load_source(path), layer.model, layer.rules)
    elif what == "validate":
        with open(os.devnull, "w") as sink:
            saved, sys.stdout = sys.stdout, sink
            try:
                code = cli(["validate", str(path)])
            finally:
                sys.stdout = saved
        if code != 0:
            raise SystemExit(f"validate exited {code}")
    else:
        result = read_table(path)
        if result.defects:
            raise SystemExit(f"unexpected defects: {result.defects[:3]}")
    seconds = time.perf_counter() - t0
    peak = _status_kb("VmHWM")
    # a small read may stay under the imports' own peak: its cost is then at most this
    print(json.dumps({"base_kb": base, "peak_kb": max(peak, before), "seconds": seconds}))


def measure(what: str, path: Path, repeats: int) -> None:
    runs = []
    for _ in range(repeats):
        out = subprocess.run(
            [sys.executable, __file__, "--child", what, str(path)],
            check=True,
            capture_output=True,
            text=True,
        ).stdout
        runs.append(json.loads(out.splitlines()[-1]))
    size = path.stat().st_size
    peak = statistics.median(r["peak_kb"] for r in runs) * 1024
    cost = statistics.median((r["peak_kb"] - r["base_kb"]) * 1024 for r in runs)
    seconds = statistics.median(r["seconds"] for r in runs)
    print(
        f"{what:>8} {path.name:<22} {size / 1e6:7.1f} MB: peak RSS {peak / 1e6:7.0f} MB, "
        f"read cost {cost / 1e6:6.0f} MB = {cost / size:5.1f} x the file, "
        f"{seconds:5.1f} s (medians of {repeats})"
    )


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--config-mb", type=float, default=10.0)
    ap.add_argument("--roots", type=int, default=91_000)
    ap.add_argument("--pyarrow", action="store_true", help="pyarrow reading the CSV as well")
    ap.add_argument("--child", nargs=2, metavar=("WHAT", "PATH"), help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.child:
        child(args.child[0], Path(args.child[1]))
        return
    from bench_table import write_csv

    print(machine())
    print(f"load average {os.getloadavg()[0]:.1f}")
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        configs = (("judges-indented.json", 2), ("judges-compact.json", None))
        for name, indent in configs if args.config_mb > 0 else ():
            path = folder / name
            write_config(path, args.config_mb, indent)
            measure("load", path, args.repeats)
            measure("parse", path, args.repeats)
            measure("validate", path, args.repeats)
        table = folder / "judgments.csv"
        rows = write_csv(table, args.roots)
        write_jsonl(table, folder / "judgments.jsonl")
        print(f"judgment table: {rows:,} rows")
        measure("table", table, args.repeats)
        if args.pyarrow:
            measure("table-pyarrow", table, args.repeats)
        measure("table", folder / "judgments.jsonl", args.repeats)


if __name__ == "__main__":
    main()
