"""Measurement: hybrid vs corners on the engine example's design, same seeds.

    python benchmarks/bench_hybrid.py [--replicates 1000]

Prints, at true h 0.45: the median and mean roots to EFFECT_SUPPORTED with the cap raised until
>= 95 % of runs reach a verdict, their ratio, and P(EFFECT_SUPPORTED) at the registered cap of 600.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests"))
sys.path.insert(0, str(ROOT / "tests" / "core"))

from test_hybrid import example_design  # noqa: E402

from verdictpack.simulate._judges import make_scenario  # noqa: E402
from verdictpack.simulate._operating import Job, simulate_scenarios  # noqa: E402

parser = argparse.ArgumentParser()
parser.add_argument("--replicates", type=int, default=1000)
args = parser.parse_args()
out = {}
for cap in (4000, 600):
    construct, panel, design = example_design(cap=cap)
    sc = make_scenario("above_threshold", panel, construct.human_baseline_rate, true_h=0.45)
    (oc,) = simulate_scenarios(
        [Job(design, sc, f"bench/hybrid/{cap}")], 20261130, args.replicates, 500
    )
    for c in ("hybrid", "corners"):
        r = oc.route("eprocess", c)
        out[f"cap {cap} {c}"] = {
            "P(EFFECT_SUPPORTED)": round(r.p_verdict["EFFECT_SUPPORTED"].value, 4),
            "mcse": round(r.p_verdict["EFFECT_SUPPORTED"].mcse, 4),
            "P(verdict issued)": round(r.p_verdict_issued.value, 4),
            "median roots": r.roots_quantiles["q50"].value,
            "mean roots": round(r.mean_roots.value, 1),
            "cost per valid verdict": round(r.cost_per_valid_verdict.value, 2)
            if r.cost_per_valid_verdict
            else None,
        }
ratio = out["cap 4000 hybrid"]["median roots"] / out["cap 4000 corners"]["median roots"]
print(json.dumps(out, indent=2))
print(f"median-roots ratio hybrid/corners at cap 4000: {ratio:.3f} (acceptance: <= 0.6)")
