"""End to end: a study of 100,000 roots x (4 judges x 2 orders + 3 humans) = 1.1 million judgment
rows from CSV, against Python's ``csv`` module reading the same file.

Workload (fixed, seeded), written to a temporary folder before timing: ``pairs.jsonl`` (100,000
pairs: a source of ~120 words, a treatment of ~50 words drawn from it, a null partner differing
from the treatment in a few words; a few pairs built to fail a gate), ``judgments.csv`` (canonical
columns; 7% ties, 3% invalid; model rows carry a cost), ``readings.csv`` (200 roots read twice)
and ``study.json``. The judges prefer the treatment a little more than the humans do (h ~ 0.05,
below the threshold 0.3), so the registered track reaches its verdict within the data and then
reads on to the end of it.

Timed in the same run, each the median of ``--repeats``:

* ``csv.reader`` iterating over judgments.csv (reading only, nothing kept);
* the whole study in one process, as the CLI runs it (``run_config``: read and check every file,
  gates on every pair, registered order, values, the three tracks over all roots, the judges'
  estimates, and every output file written to ``--out``), and the ratio of the two.

With ``--stages``, one more run after the timed ones reports where its time goes: wall and CPU
seconds of each stage (reading each file, the gates, the registered order, the values, the
tracks, the evidence rows, the judges' estimates, rendering; the rest is configuration, hashing
the data files for the provenance, writing the outputs and imports).

Usage: python benchmarks/bench_study.py [--repeats 3] [--roots 100000] [--profile] [--stages]
"""

from __future__ import annotations

import argparse
import csv
import functools
import importlib
import json
import shutil
import statistics
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from common import ROOT, machine, report, time_call, time_command, verdictpack_argv

WORDS = [
    "the",
    "a",
    "report",
    "council",
    "budget",
    "city",
    "river",
    "school",
    "study",
    "season",
    "market",
    "plan",
    "water",
    "energy",
    "policy",
    "health",
    "patients",
    "doctors",
    "survey",
    "results",
    "growth",
    "rates",
    "prices",
    "workers",
    "union",
    "court",
    "ruling",
    "judge",
    "appeal",
    "museum",
    "collection",
    "visitors",
    "festival",
    "music",
    "film",
    "team",
    "coach",
    "league",
    "players",
    "match",
    "record",
    "storm",
    "flooding",
    "roads",
    "bridge",
    "repairs",
    "transport",
    "service",
    "trains",
    "buses",
]


def write_study(folder: Path, roots: int, seed: int = 14) -> dict[str, int]:
    rng = np.random.default_rng(seed)
    folder.mkdir(parents=True, exist_ok=True)
    with (folder / "pairs.jsonl").open("w", encoding="utf-8") as fh:
        for r in range(roots):
            words = rng.choice(len(WORDS), size=120).tolist()
            num = int(rng.integers(10, 999))
            source = " ".join(WORDS[w] for w in words) + f" with {num} people."
            treat_words = [WORDS[w] for w in words[:48]] + [str(num)]
            null_words = list(treat_words)
            for k in rng.choice(47, size=3, replace=False).tolist():
                null_words[k] = WORDS[(words[k] + 1) % len(WORDS)]
            if r % 500 == 7:  # an over-long null partner: refused by the length gate
                null_words += treat_words
            rec = {
                "id": f"root-{r:06d}",
                "source": source,
                "treatment": " ".join(treat_words) + ".",
                "null_partner": " ".join(null_words) + ".",
            }
            fh.write(json.dumps(rec) + "\n")
    judges = [f"judge-{k}" for k in range(4)]
    humans = [f"human-{k}" for k in range(3)]
    choices = ("treatment", "null_partner", "tie", "invalid")
    p_model = [0.53, 0.37, 0.07, 0.03]
    p_human = [0.51, 0.39, 0.07, 0.03]
    model = rng.choice(4, size=(roots, 8), p=p_model).tolist()
    human = rng.choice(4, size=(roots, 3), p=p_human).tolist()
    costs = rng.uniform(0.0001, 0.01, size=(roots, 8)).round(6).tolist()
    with (folder / "judgments.csv").open("w", newline="", encoding="utf-8") as fh:
        w = csv.writer(fh, lineterminator="\n")
        w.writerow(("root_id", "rater_id", "rater_kind", "order", "choice", "trial", "cost"))
        for r in range(roots):
            rid = f"root-{r:06d}"
            k = 0
            for j in judges:
                for order in ("treatment_first", "null_first"):
                    w.writerow((rid, j, "model", order, choices[model[r][k]], 0, costs[r][k]))
                    k += 1
            for i, h in enumerate(humans):
                w.writerow((rid, h, "human", "unknown", choices[human[r][i]], 0, ""))
    with (folder / "readings.csv").open("w", newline="", encoding="utf-8") as fh:
        w = csv.writer(fh, lineterminator="\n")
        w.writerow(("root_id", "reader_id", "category"))
        truth = rng.integers(0, 2, size=200).tolist()
        for i, t in enumerate(truth):
            for reader in ("reader-a", "reader-b"):
                cat = t if rng.random() < 0.9 else 1 - t
                w.writerow((f"audit-{i:04d}", reader, f"c{cat}"))
    engine = json.loads((ROOT / "examples" / "engine_summarization.json").read_text())
    construct = engine["construct"]
    study = {
        "kind": "study",
        "seed": 14,
        "construct": construct,
        "sequential": {"construction": "hybrid", "cap_roots": 1_000_000},
        "panel": {
            "name": "benchmark panel",
            "judges": [{"name": j, "cost_per_judgment": 0.002} for j in judges],
        },
        "humans": {"judgments_per_root": 3, "cost_per_judgment": 0.4},
        "data": {
            "stimuli": {
                "path": "pairs.jsonl",
                "mapping": {
                    "id": "id",
                    "source": "source",
                    "treatment": "treatment",
                    "null_partner": "null_partner",
                },
            },
            "judgments": [{"format": "table", "path": "judgments.csv"}],
            "reader_audit": {"path": "readings.csv", "kappa_min": 0.6},
        },
        "gates": {
            "length_tolerance": 0.2,
            "max_diff_tokens": 8,
            "content_threshold": 0.5,
            "require_numbers": True,
        },
    }
    (folder / "study.json").write_text(json.dumps(study, indent=2))
    return {"roots": roots, "rows": roots * 11}


# (module, function, inside load_study) timed by --stages, in the order the study runs them
STAGES = (
    ("verdictpack.evidence._files", "read_pairs", True),
    ("verdictpack.evidence._files", "read_judgment_file", True),
    ("verdictpack.evidence._files", "read_readings", True),
    ("verdictpack.evidence._files", "check_study_table", True),
    ("verdictpack.kinds._study", "load_study", False),
    # the gates run in a forked child while the judgments are read (0 here, unless
    # VERDICTPACK_NO_FORK is set or no child could be forked)
    ("verdictpack.kinds._study", "gate_counts", False),
    ("verdictpack.kinds._study", "registered_order", False),
    ("verdictpack.kinds._study", "root_values", False),
    ("verdictpack.kinds._study", "TrackTrace", False),
    ("verdictpack.kinds._study", "_evidence_trail", False),
    ("verdictpack.kinds._study", "judges_report", False),
    ("verdictpack.kinds._study", "_costs", False),
    ("verdictpack.render", "render", False),
)


@contextmanager
def stage_timers() -> Iterator[dict[str, list[float]]]:
    """Each function of STAGES replaced, while inside, by one adding its wall and CPU seconds."""
    spent: dict[str, list[float]] = {}
    saved: list[tuple[object, str, Callable[..., object]]] = []

    def timed(name: str, fn: Callable[..., object]) -> Callable[..., object]:
        @functools.wraps(fn)
        def run(*args: object, **kwargs: object) -> object:
            w, c = time.perf_counter(), time.process_time()
            try:
                return fn(*args, **kwargs)
            finally:
                tally = spent.setdefault(name, [0.0, 0.0])
                tally[0] += time.perf_counter() - w
                tally[1] += time.process_time() - c

        return run

    for module, name, _ in STAGES:
        mod = importlib.import_module(module)
        fn = getattr(mod, name)
        saved.append((mod, name, fn))
        setattr(mod, name, timed(name, fn))
    try:
        yield spent
    finally:
        for mod, name, fn in saved:
            setattr(mod, name, fn)


def read_only(path: Path) -> int:
    with path.open(newline="", encoding="utf-8") as fh:
        return sum(1 for _ in csv.reader(fh))


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--roots", type=int, default=100_000)
    ap.add_argument("--profile", action="store_true")
    ap.add_argument("--stages", action="store_true", help="time each stage of one more run")
    args = ap.parse_args()
    from verdictpack._cli import run_config

    tmp = Path(tempfile.mkdtemp(prefix="vp-bench-study-"))
    try:
        size = write_study(tmp / "study", args.roots)
        print(f"machine: {machine()}")
        print(f"workload: {size['roots']:,} roots, {size['rows']:,} judgment rows")
        out = tmp / "out"

        def run() -> None:
            run_config(str(tmp / "study" / "study.json"), str(out), force=True)

        if args.profile:
            import cProfile
            import pstats

            cProfile.runctx("run()", globals(), {"run": run}, str(tmp / "prof"))
            pstats.Stats(str(tmp / "prof")).sort_stats("cumulative").print_stats(30)
            return
        cli = verdictpack_argv(str(tmp / "study" / "study.json"), "--out", str(out))
        cli += ["--force", "--quiet"]
        t_csv: list[float] = []
        t_study: list[float] = []
        for _ in range(args.repeats):  # interleaved, so both see the same machine state
            t_csv += time_call(lambda: read_only(tmp / "study" / "judgments.csv"), 1)
            # the CLI in a fresh process each time: interpreter start and imports included, and
            # no run inherits the heap of the one before
            t_study += time_command(cli, 1)
        report("csv.reader only", t_csv)
        report("study end to end (the CLI, a fresh process)", t_study, budget=15.0)
        ratio = statistics.median(t_study) / statistics.median(t_csv)
        print(f"ratio study / csv.reader: {ratio:.2f}x (the whole study, for scale)")
        verdict = json.loads((out / "verdict.json").read_text())
        reg = verdict["registered"]
        print(f"registered verdict {reg['verdict']} at root {reg['roots_at_verdict']}")
        if args.stages:
            with stage_timers() as spent:
                w, c = time.perf_counter(), time.process_time()
                run()
                w, c = time.perf_counter() - w, time.process_time() - c
            print(f"{'stage (one more run)':28s} {'wall s':>7s} {'cpu s':>7s}")
            for _, name, nested in STAGES:
                sw, sc = spent.get(name, (0.0, 0.0))
                print(f"{('  ' if nested else '') + name:28s} {sw:7.2f} {sc:7.2f}")
            inner = sum(spent.get(name, (0.0, 0.0))[0] for _, name, nested in STAGES if not nested)
            print(f"{'the rest (config, hashes, writing)':28s} {w - inner:7.2f}")
            print(f"{'run_config':28s} {w:7.2f} {c:7.2f}")
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
