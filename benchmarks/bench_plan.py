"""``--plan`` end to end: the example study's routes and human allocations priced from its fitted
sheets, on one CPU and on every CPU this process may use, with the printed plans compared.

Command timed (a fresh interpreter each run, as a user runs it)::

    verdictpack examples/study_summarization.json --plan \
        --sheets examples/outputs/study_summarization/fitted_panel.json

On one CPU the command runs under ``os.sched_setaffinity`` to CPU 0 (the kernel's replicate
blocks then run in one thread: ``verdictpack._parallel.usable_cpus`` reads the affinity); the
other run has the machine's usable CPUs. The allocation planner's replicates are seeded by block
(numpy ``SeedSequence``, one child per block), so both print the same plan: the script checks
that and fails if they differ. Each figure is the median of ``--repeats`` runs.

Usage: python benchmarks/bench_plan.py [--repeats 3]
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from common import ROOT, machine, report, verdictpack_argv

ARGS = [
    "examples/study_summarization.json",
    "--plan",
    "--sheets",
    "examples/outputs/study_summarization/fitted_panel.json",
]


def _run(cpus: set[int] | None) -> tuple[float, bytes]:
    """Wall seconds and the printed plan of one run (restricted to ``cpus`` when given)."""

    def restrict() -> None:
        if cpus is not None:
            os.sched_setaffinity(0, cpus)

    t0 = time.perf_counter()
    done = subprocess.run(
        [*verdictpack_argv(), *ARGS], cwd=ROOT, check=True, capture_output=True, preexec_fn=restrict
    )
    return time.perf_counter() - t0, done.stdout


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()
    usable = os.sched_getaffinity(0)
    print(machine(), f"(usable CPUs: {len(usable)})")
    results: dict[str, list[float]] = {}
    plans: dict[str, bytes] = {}
    for label, cpus in (("one CPU", {min(usable)}), (f"{len(usable)} CPUs", None)):
        runs = [_run(cpus) for _ in range(args.repeats)]
        results[label] = [t for t, _ in runs]
        outs = {out for _, out in runs}
        if len(outs) != 1:
            raise SystemExit(f"{label}: the printed plan differs between runs")
        plans[label] = outs.pop()
        report(f"--plan --sheets, {label}", results[label])
    if len(set(plans.values())) != 1:
        raise SystemExit("the printed plan differs between one CPU and all usable CPUs")
    one, many = (statistics.median(v) for v in results.values())
    print(f"same printed plan on both; ratio one CPU / all usable CPUs: {one / many:.2f}")


if __name__ == "__main__":
    main()
