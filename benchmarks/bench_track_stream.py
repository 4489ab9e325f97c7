"""The engine's and a live study's tracks root by root (TrackStream) against a study's compiled
trace of the same roots (TrackTrace), with the values on the supports given up front (an
observation that is a choice) and with a new value almost every root (a probability: the
supports widened as values come).

    python benchmarks/bench_track_stream.py [--roots 1000] [--repeats 3]
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from common import machine, report, time_call

from verdictpack.core._mixture import MixtureSpec
from verdictpack.core._tracks import TrackSettings, TrackStream, TrackTrace

CLAIMS = {"registered": "a", "extension": "b", "comparison": "c"}
CELLS = 20  # 5 judges x 2 orders x 2 trials


def _values(n: int, probability: bool) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(1)
    if probability:
        m = np.round(rng.beta(6, 4, n), 9)
    else:
        m = 2 * rng.binomial(CELLS, 0.6, n) / (2 * CELLS)
    h = np.where(rng.random(n) < 0.7, rng.binomial(2, 0.45, n) / 2, np.nan)
    return m, h


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--roots", type=int, default=1000)
    ap.add_argument("--repeats", type=int, default=3)
    a = ap.parse_args()
    print(machine())
    grid_m = np.arange(2 * CELLS + 1) / (2 * CELLS)
    for bets in ("grid", "plugin"):
        settings = TrackSettings("hybrid", "corners", 0.0025, MixtureSpec(), 0.3, 0.2, CLAIMS, bets)
        for probability in (False, True):
            m, h = _values(a.roots, probability)
            what = f"{bets} bets, {'probability' if probability else 'choice'}, {a.roots} roots"

            def stream(
                m: np.ndarray = m, h: np.ndarray = h, p: bool = probability, st: Any = settings
            ) -> None:
                s = TrackStream(st, a.roots, np.array([]) if p else grid_m, np.array([]))
                for i in range(m.size):
                    s.step(float(m[i]), None if np.isnan(h[i]) else float(h[i]))
                s.trace()

            def trace(m: np.ndarray = m, h: np.ndarray = h, st: Any = settings) -> None:
                TrackTrace(st, m, h, a.roots)

            report(f"TrackStream (engine, live), {what}", time_call(stream, a.repeats))
            report(f"TrackTrace (files), {what}", time_call(trace, a.repeats))


if __name__ == "__main__":
    main()
