"""Throughput of the sequential core: time per tracker update and root events per second.

One root event = one root consumed by a tracker: the model stream's bounds, the human stream's
bounds (and the paired-difference stream's for the hybrid) updated, the h-interval recomputed
and the verdict checked — the per-root work of the engine (scalar tracker) and of the battery
(batch tracker, where a root event is one replicate-step).

Workload (fixed, seeded): model panel of 3 judges × 2 orders (M_i ∈ {0, 1/6, …, 1}), two human
judgments per root (H_i ∈ {0, ½, 1}) on every root, human rate 0.30, model rate at h = 0.45 above
it, per-tail α 0.0025 (the decisive design), threshold h 0.3. Data are generated before timing.
By default batch replicates all stay active for the whole run, so the figure is the worst case
per replicate-step; ``--stopping`` drives the tracker as the product does
(:func:`verdictpack.simulate._operating.run_cells`: a replicate stops at its first verdict) and
counts
only active replicate-steps. Single process; BLAS pinned to one thread.

Each row reports the median over the repeats of the time per update (one ``update`` plus one
verdict check, all replicates together), as wall-clock time and as the process's CPU time (less
sensitive to other processes on a shared machine), and root events per second from the wall
median. The load average is printed before and after: compare figures taken at similar loads.

The ``run`` rows time :meth:`BatchHTracker.run` (what the simulations use since the compiled
kernel): each replicate runs to its verdict or the cap inside one call, no Python per root; its
"us/update" column is the wall time divided by the longest run's roots, and its root events are
the roots actually consumed (``--threads`` spreads the replicates over threads).

Usage: python benchmarks/bench_core.py [--repeats 5] [--steps 600] [--replicates 1000 10000]
       [--scalar-steps 2000] [--stopping] [--threads 1]
"""

from __future__ import annotations

import os

for _var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_var, "1")

import argparse  # noqa: E402
import math  # noqa: E402
import platform  # noqa: E402
import statistics  # noqa: E402
import sys  # noqa: E402
import time  # noqa: E402

import numpy as np  # noqa: E402

from verdictpack._rng import stream  # noqa: E402
from verdictpack.core._scales import phi  # noqa: E402
from verdictpack.core._tracker import BatchHTracker, HTracker  # noqa: E402

ALPHA = 0.0025
THRESHOLD = 0.3
P_HUMAN = 0.30
H_TRUE = 0.45
JUDGE_READINGS = 6  # 3 judges x 2 orders
HUMAN_READINGS = 2
M_SUPPORT = np.arange(JUDGE_READINGS + 1) / JUDGE_READINGS
H_SUPPORT = np.arange(HUMAN_READINGS + 1) / HUMAN_READINGS

# (wall seconds, cpu seconds, updates, root events) of one timed run
Timing = tuple[float, float, int, int]


def _data(replicates: int, steps: int, seed: int) -> tuple[np.ndarray, np.ndarray]:
    p_model = math.sin((phi(P_HUMAN) + H_TRUE) / 2) ** 2
    rng = stream(seed, "bench/core")
    m_idx = rng.binomial(JUDGE_READINGS, p_model, (steps, replicates)).astype(np.intp)
    h_idx = rng.binomial(HUMAN_READINGS, P_HUMAN, (steps, replicates)).astype(np.intp)
    return m_idx, h_idx


def bench_batch(
    construction: str, replicates: int, steps: int, seed: int, stopping: bool = False
) -> Timing:
    m_idx, h_idx = _data(replicates, steps, seed)
    tracker = BatchHTracker(replicates, construction, ALPHA, None, THRESHOLD, M_SUPPORT, H_SUPPORT)
    codes = np.zeros(replicates, dtype=np.int8)
    updates = events = 0
    wall, cpu = time.perf_counter(), time.process_time()
    for t in range(steps):
        if stopping:
            active = codes == 0
            n_active = int(np.count_nonzero(active))
            if n_active == 0:
                break
            tracker.update(m_idx[t], h_idx[t], active=active)
            now = tracker.verdict_codes(t == steps - 1)
            codes[active] = now[active]
            events += n_active
        else:
            tracker.update(m_idx[t], h_idx[t])
            tracker.verdict_codes(t == steps - 1)
            events += replicates
        updates += 1
    return time.perf_counter() - wall, time.process_time() - cpu, updates, events


def bench_run(construction: str, replicates: int, steps: int, seed: int, threads: int) -> Timing:
    """``BatchHTracker.run``: every replicate to its verdict (or the cap) in one kernel call;
    root events = roots actually consumed. "updates" counts the roots of the longest run."""
    m_idx, h_idx = _data(replicates, steps, seed)
    tracker = BatchHTracker(replicates, construction, ALPHA, None, THRESHOLD, M_SUPPORT, H_SUPPORT)
    m_rows, h_rows = np.ascontiguousarray(m_idx.T), np.ascontiguousarray(h_idx.T)
    wall, cpu = time.perf_counter(), time.process_time()
    tracker.run(m_rows, h_rows, steps, threads=threads)
    wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
    roots = tracker.n_roots
    return wall, cpu, int(roots.max()), int(roots.sum())


def bench_scalar(construction: str, steps: int, seed: int) -> Timing:
    m_idx, h_idx = _data(1, steps, seed)
    m_vals = M_SUPPORT[m_idx[:, 0]].tolist()
    h_vals = H_SUPPORT[h_idx[:, 0]].tolist()
    tracker = HTracker(construction, ALPHA, None, THRESHOLD)
    wall, cpu = time.perf_counter(), time.process_time()
    for t in range(steps):
        tracker.update(m_vals[t], h_vals[t])
        tracker.verdict(t == steps - 1)
    return time.perf_counter() - wall, time.process_time() - cpu, steps, steps


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--steps", type=int, default=600, help="roots per batch replicate")
    parser.add_argument("--scalar-steps", type=int, default=2000, help="roots, scalar stream")
    parser.add_argument("--replicates", type=int, nargs="+", default=[1000, 10000])
    parser.add_argument(
        "--stopping", action="store_true", help="replicates stop at their verdict (per root)"
    )
    parser.add_argument(
        "--threads", type=int, default=1, help="threads of the whole-run path (default 1)"
    )
    args = parser.parse_args(argv)
    print("command:", " ".join([os.path.basename(sys.executable), *sys.argv]))
    print(
        f"python {platform.python_version()}, numpy {np.__version__}, {platform.machine()}, "
        f"{os.cpu_count()} cpus visible, single process, BLAS threads "
        f"{os.environ.get('OPENBLAS_NUM_THREADS')}"
    )
    print(f"load average at start (1, 5, 15 min): {os.getloadavg()}")
    print(
        f"workload: M on {M_SUPPORT.size} values, H on {H_SUPPORT.size} values, h = {H_TRUE} "
        f"above p_H = {P_HUMAN}, per-tail alpha {ALPHA}, threshold {THRESHOLD}; "
        f"{'replicates stop at their verdict' if args.stopping else 'all replicates active'}; "
        f"median of {args.repeats} repeats"
    )
    header = ("path", "construction", "replicates", "roots", "us/update", "cpu us/update")
    print("{:<8} {:<12} {:>10} {:>6} {:>12} {:>14} {:>14}".format(*header, "root events/s"))
    seeds = range(args.repeats)
    for construction in ("corners", "hybrid"):
        runs = [bench_scalar(construction, args.scalar_steps, seed) for seed in seeds]
        _row("scalar", construction, 1, args.scalar_steps, runs)
        for reps in args.replicates:
            runs = [
                bench_batch(construction, reps, args.steps, seed, args.stopping) for seed in seeds
            ]
            _row("batch", construction, reps, args.steps, runs)
            runs = [bench_run(construction, reps, args.steps, seed, args.threads) for seed in seeds]
            _row("run", construction, reps, args.steps, runs)
    print(f"load average at end (1, 5, 15 min): {os.getloadavg()}")


def _row(path: str, construction: str, reps: int, steps: int, runs: list[Timing]) -> None:
    wall = statistics.median(w / n for w, _, n, _ in runs)
    cpu = statistics.median(c / n for _, c, n, _ in runs)
    rate = statistics.median(e / w for w, _, _, e in runs)
    print(
        f"{path:<8} {construction:<12} {reps:>10,} {steps:>6} {wall * 1e6:>12,.1f} "
        f"{cpu * 1e6:>14,.1f} {rate:>14,.0f}",
        flush=True,
    )


if __name__ == "__main__":
    main()
