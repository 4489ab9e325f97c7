"""Benchmark: the sizing example end to end (interpreter start and simulated checks included).

    python benchmarks/bench_sizing.py [--repeats 7]

Budget: at most 2 s wall on the 2-core reference machine.
"""

from __future__ import annotations

import argparse

from common import machine, report, time_command, verdictpack_argv

parser = argparse.ArgumentParser()
parser.add_argument("--repeats", type=int, default=7)
args = parser.parse_args()
print(machine())
times = time_command(verdictpack_argv("examples/sizing_summarization.json"), args.repeats)
report("verdictpack examples/sizing_summarization.json", times, budget=2.0)
