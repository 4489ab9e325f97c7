"""Shared helpers of the benchmark scripts: machine description and repeated timing."""

from __future__ import annotations

import os
import platform
import statistics
import subprocess
import sys
import time
from collections.abc import Callable, Sequence
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def machine() -> str:
    cpu = platform.processor() or platform.machine()
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    return f"{os.cpu_count()} cores, {cpu}, Python {platform.python_version()}"


def time_command(argv: Sequence[str], repeats: int, cwd: Path = ROOT) -> list[float]:
    """Wall seconds of a whole command (interpreter start included), one per repeat."""
    times = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        subprocess.run(argv, cwd=cwd, check=True, stdout=subprocess.DEVNULL)
        times.append(time.perf_counter() - t0)
    return times


def time_call(fn: Callable[[], object], repeats: int) -> list[float]:
    times = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return times


def report(label: str, times: list[float], budget: float | None = None) -> None:
    med = statistics.median(times)
    line = (
        f"{label}: median {med:.3f} s over {len(times)} runs "
        f"(min {min(times):.3f}, max {max(times):.3f})"
    )
    if budget is not None:
        line += f"; budget {budget:.1f} s -> {'OK' if med <= budget else 'OVER'}"
    print(line)


def verdictpack_argv(*args: str) -> list[str]:
    return [sys.executable, "-m", "verdictpack", *args]
