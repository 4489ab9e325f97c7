"""Benchmark (width, not time): one stream's confidence-sequence width after n roots, for the
fixed bet grid, the predictable plug-in bets and their blend, beside the fixed-n t interval at
the same per-tail level (the limit no sequential interval beats).

    python benchmarks/bench_cs_width.py [--replicates 20]

Streams: values near 0.5 with s.d. 0.05, 0.15, 0.3 (normal, clipped to [0, 1]) and Bernoulli(0.5)
(s.d. 0.5); n = 60 and 500; per-tail level 0.0025 (the study examples' alpha 0.01 over two
tails and two streams). Medians over seeded replicates.
"""

from __future__ import annotations

import argparse
import math

import numpy as np
from common import machine
from scipy import stats

from verdictpack._rng import stream
from verdictpack.core._adaptive import BlendCS, PlugInCS
from verdictpack.core._mixture import MixtureCS

parser = argparse.ArgumentParser()
parser.add_argument("--replicates", type=int, default=20)
args = parser.parse_args()
ALPHA = 0.0025
print(machine())
print("| s.d. | n | grid / t | plug-in / t | blend / t | fixed-n t width |")
print("|---|---|---|---|---|---|")
for sd in (0.05, 0.15, 0.3, 0.5):
    for n in (60, 500):
        widths: dict[str, list[float]] = {"grid": [], "plug": [], "blend": [], "t": []}
        for r in range(args.replicates):
            rng = stream(9, f"bench/cs-width/{sd}/{n}/{r}")
            if sd < 0.5:
                xs = np.clip(rng.normal(0.5, sd, n), 0.0, 1.0)
            else:
                xs = (rng.random(n) < 0.5).astype(np.float64)
            for name, cs in (
                ("grid", MixtureCS(ALPHA)),
                ("plug", PlugInCS(ALPHA)),
                ("blend", BlendCS(ALPHA)),
            ):
                cs.extend(xs.tolist())
                widths[name].append(cs.upper - cs.lower)
            widths["t"].append(2 * stats.t.ppf(1 - ALPHA, n - 1) * xs.std(ddof=1) / math.sqrt(n))
        t = float(np.median(widths["t"]))
        ratio = {k: float(np.median(v)) / t for k, v in widths.items() if k != "t"}
        print(
            f"| {sd} | {n} | {ratio['grid']:.2f} | {ratio['plug']:.2f} | {ratio['blend']:.2f} "
            f"| {t:.4f} |"
        )
