"""Benchmark: the bundled examples end to end (interpreter start included).

    python benchmarks/bench_layers.py [--repeats 5]

Budgets (wall time on the 2-core reference machine): sizing ≤ 2 s, judges ≤ 3 s, engine ≤ 1.5 s.
"""

from __future__ import annotations

import argparse

from common import machine, report, time_command, verdictpack_argv

BUDGETS = {
    "examples/sizing_summarization.json": 2.0,
    "examples/judges_summarization.json": 3.0,
    "examples/engine_summarization.json": 1.5,
    "examples/verdict_summarization.json": None,
    "examples/verdict_length.json": None,
}

parser = argparse.ArgumentParser()
parser.add_argument("--repeats", type=int, default=5)
parser.add_argument("--only", help="one example path")
args = parser.parse_args()
print(machine())
for example, budget in BUDGETS.items():
    if args.only and example != args.only:
        continue
    times = time_command(verdictpack_argv(example), args.repeats)
    report(f"verdictpack {example}", times, budget)
