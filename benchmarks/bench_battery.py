"""The battery benchmark: wall time, peak memory and runs per second.

Workload: ``examples/battery_summarization.json`` -- five scenarios × 10,000 replicates = 50,000
sequential runs, cap 600 roots, both e-process constructions, the SPRT and the fixed-n test on the
same roots -- run through the CLI exactly as a user would (``python -m verdictpack CONFIG --out DIR
--workers N --quiet``), interpreter start and output writing included.

Reported:

* wall time, median of ``--repeats`` runs (budget 30 s with ``--workers 2``);
* peak memory: the largest resident set summed over the process tree (parent + workers), sampled
  every 50 ms with psutil when it is installed, and the largest single process (``wait4``'s
  ``ru_maxrss``) in any case (budget 2 GiB);
* runs per second = sequential runs / median wall time;
* CPU seconds (user + sys of the whole process tree, from ``wait4``): the work itself, much less
  sensitive than wall time to other processes sharing the machine (the load average is printed);
* how time grows with the replicates (2,500 / 5,000 / 10,000 per scenario, block size 500 so that
  each is a whole number of blocks) and with the cap (300 / 600 / 1,200 roots);
* ``--profile``: one task (block 0 of every scenario) in-process under cProfile, top functions.

Usage: python benchmarks/bench_battery.py [--repeats 3] [--workers 2] [--no-scaling] [--profile]
"""

from __future__ import annotations

import argparse
import contextlib
import copy
import json
import os
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from common import ROOT, machine, verdictpack_argv

EXAMPLE = ROOT / "examples" / "battery_summarization.json"
BUDGET_SECONDS = 30.0
BUDGET_BYTES = 2 * 1024**3


def _tree_rss(proc: Any) -> int:
    total = 0
    for p in [proc, *proc.children(recursive=True)]:
        with contextlib.suppress(Exception):  # a worker that just exited
            total += p.memory_info().rss
    return total


def run_once(config: Path, workers: int) -> dict[str, Any]:
    """One CLI run: wall seconds, peak tree RSS (psutil) and max single-process RSS (wait4)."""
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "out"
        argv = verdictpack_argv(
            str(config), "--out", str(out), "--workers", str(workers), "--quiet"
        )
        t0 = time.perf_counter()
        proc = subprocess.Popen(argv, cwd=ROOT, stdout=subprocess.DEVNULL)
        peak = [0]
        stop = threading.Event()
        sampler: threading.Thread | None = None
        try:
            import psutil

            ps = psutil.Process(proc.pid)

            def sample() -> None:
                while not stop.is_set():
                    with contextlib.suppress(Exception):
                        peak[0] = max(peak[0], _tree_rss(ps))
                    stop.wait(0.05)

            thread = threading.Thread(target=sample, daemon=True)
            thread.start()
            sampler = thread
        except ImportError:
            pass
        _, status, usage = os.wait4(proc.pid, 0)
        wall = time.perf_counter() - t0
        proc.returncode = os.waitstatus_to_exitcode(status)
        stop.set()
        if sampler is not None:
            sampler.join()
        if proc.returncode != 0:
            raise SystemExit(f"run failed with exit code {proc.returncode}: {' '.join(argv)}")
        prov = json.loads((out / "provenance.json").read_text())
        results = json.loads((out / "results.json").read_text())
    return {
        "wall": wall,
        "elapsed_in_process": prov["wall_clock"]["elapsed_seconds"],
        "peak_tree_bytes": peak[0] or None,
        "max_process_bytes": usage.ru_maxrss * 1024,
        "cpu": usage.ru_utime + usage.ru_stime,
        "load": os.getloadavg()[0],
        "runs": results["sequential_runs"],
    }


def _variant(tmp: Path, name: str, **changes: Any) -> Path:
    data = copy.deepcopy(json.loads(EXAMPLE.read_text()))
    cap = changes.pop("cap_roots", None)
    if cap is not None:
        data["sequential"]["cap_roots"] = cap
    data.update(changes)
    path = tmp / f"{name}.json"
    path.write_text(json.dumps(data))
    return path


def _mib(x: int | None) -> str:
    return "n/a" if x is None else f"{x / 1024**2:,.0f} MiB"


def _line(label: str, runs: list[dict[str, Any]]) -> dict[str, Any]:
    walls = [r["wall"] for r in runs]
    med = statistics.median(walls)
    peak = max((r["peak_tree_bytes"] or 0) for r in runs) or None
    single = max(r["max_process_bytes"] for r in runs)
    rate = runs[0]["runs"] / med
    inproc = statistics.median(r["elapsed_in_process"] for r in runs)
    cpu = statistics.median(r["cpu"] for r in runs)
    load = max(r["load"] for r in runs)
    print(
        f"{label}: wall median {med:.2f} s over {len(walls)} run(s) (min {min(walls):.2f}, "
        f"max {max(walls):.2f}; in-process {inproc:.2f} s); "
        f"{runs[0]['runs']:,} runs -> {rate:,.0f} runs/s; peak tree RSS {_mib(peak)}, "
        f"largest process {_mib(single)}; CPU {cpu:.1f} s (user+sys, whole tree); "
        f"1-min load average up to {load:.2f}",
        flush=True,
    )
    return {"median": med, "peak": peak, "single": single, "rate": rate, "cpu": cpu}


def profile_one_task() -> None:
    import cProfile
    import pstats

    from verdictpack.config._blocks import build_sequential
    from verdictpack.config._compiler import compile_construct, load_source, parse_config
    from verdictpack.kinds._battery import (
        RULES,
        BatteryConfig,
        battery_tasks,
        build_scenario,
        run_block_task,
    )
    from verdictpack.simulate._operating import Job
    from verdictpack.simulate._panels import build_panel
    from verdictpack.simulate._routes import route_design

    cfg = parse_config(load_source(EXAMPLE), BatteryConfig, RULES)
    construct = compile_construct(cfg.construct_spec)
    panel = build_panel(cfg.panel)
    design = route_design(construct, panel, cfg.human, build_sequential(cfg.sequential), cfg.routes)
    jobs = [
        Job(design, build_scenario(s, panel, construct), f"battery/{s.display}")
        for s in cfg.scenarios
    ]
    task = battery_tasks(jobs, cfg.seed, cfg.replicates, cfg.block_size)[0]
    prof = cProfile.Profile()
    prof.enable()
    run_block_task(task)
    prof.disable()
    print(f"\nProfile of one task ({len(jobs)} scenarios × {cfg.block_size} replicates):")
    pstats.Stats(prof).sort_stats("tottime").print_stats(15)
    pstats.Stats(prof).sort_stats("cumulative").print_stats(
        "_operating|_mixture.py:.*update|simulate_panel|_sprt|_fixed_n", 12
    )


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--no-scaling", action="store_true", help="skip the replicate and cap series")
    ap.add_argument("--profile", action="store_true", help="profile one task in-process")
    args = ap.parse_args()
    print(f"machine: {machine()}; load average {os.getloadavg()[0]:.2f} at start", flush=True)
    main_runs = [run_once(EXAMPLE, args.workers) for _ in range(args.repeats)]
    full = _line(f"full battery, --workers {args.workers}", main_runs)
    ok_t = full["median"] <= BUDGET_SECONDS
    ok_m = (full["peak"] or full["single"]) <= BUDGET_BYTES
    print(
        f"budget: wall ≤ {BUDGET_SECONDS:.0f} s -> {'OK' if ok_t else 'OVER'}; peak ≤ 2 GiB -> "
        f"{'OK' if ok_m else 'OVER'}",
        flush=True,
    )
    if not args.no_scaling:
        with tempfile.TemporaryDirectory() as tmp_name:
            tmp = Path(tmp_name)
            _line("full battery, --workers 1", [run_once(EXAMPLE, 1)])
            print(
                f"\nreplicates per scenario (block 500, cap 600, --workers {args.workers}):",
                flush=True,
            )
            for reps in (2_500, 5_000, 10_000):
                cfg = _variant(tmp, f"reps{reps}", replicates=reps, block_size=500)
                _line(f"  {reps:>6,} × 5", [run_once(cfg, args.workers)])
            print(f"\ncap (10,000 replicates, block 1000, --workers {args.workers}):", flush=True)
            for cap in (300, 600, 1_200):
                cfg = _variant(tmp, f"cap{cap}", cap_roots=cap)
                _line(f"  cap {cap:>5,}", [run_once(cfg, args.workers)])
    if args.profile:
        profile_one_task()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
