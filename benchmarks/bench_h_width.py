"""Benchmark (width, not time): the h-interval at the final root, for the fixed bet grid, the
plug-in bets, their blend and the horizon bets (the plug-in bets tuned to a design N: the
example's registered cap_roots, a simulated cell's roots), under the corners and the hybrid
construction, as a multiple of the fixed-n t interval for h at the same per-tail level from the
same roots.

    python benchmarks/bench_h_width.py [--seeds 200] [--roots 60 500] [--alphas 0.0025 0.025]
        [--true-h 0.3 0] [--study-out DIR] [--coverage 4000]

**The fixed-n interval.** h = φ(μ_M) − φ(μ_H), φ(p) = 2·asin(√p). From n roots, k of them
with a human value (the set S), ĥ = φ(M̄) − φ(H̄) with M̄ the mean of M_i over all n roots and
H̄ the mean of H_i over S (a root without H_i counts for M only, as it feeds only the model
stream of the trackers; the covariance uses the k complete pairs). The delta method, with
A = φ'(M̄) and B = φ'(H̄), φ'(p) = 1/√(p(1 − p)), and Cov(M̄, H̄) = σ_MH / n:

    se² = A²·s²_M / n + B²·s²_H / k − 2·A·B·s_MH / n,
    width = 2 · t_{1−a}(k − 1) · se,

s²_M, s²_H the sample variances (over all n, over S) and s_MH the sample covariance over S.
With every root complete (k = n) this is the paired t interval of the root values
A·M_i − B·H_i. ``a`` is the per-tail level of the construct (0.0025 for the example: alpha 0.01
over two tails and two streams); the h-interval's provable error per side is 2a.

**Data.** (a) The example study: ``verdictpack examples/study_summarization.json`` is run into
a temporary folder (or ``--study-out`` names a folder such a run wrote) and its evidence trail
(evidence.jsonl: M_i, H_i and their bounds per root, in the registered order) is fed to the
trackers as the study feeds them (an unknown answer bounded both ways:
:class:`~verdictpack.core._tracks.TrackTrace`); the fixed-n interval takes the point values
M_i, H_i. (b) Simulated studies shaped like real judge data: per root a latent z_i ~ N(0, 1),
a rate p_i = logistic(μ_M + 1.2·z_i) shared by 5 judges × 2 orders × 5 trials (M_i = their mean:
between-root s.d. of p_i about 0.24, as in the example's data), one human answering
Bernoulli(q_i), q_i = logistic(1.2·(0.3·z_i + √0.91·z'_i)) (mean 0.5, correlated with the
judges through z_i); μ_M is set so that the true h = φ(E p_i) − φ(E q_i) is 0.3 (the example's
threshold) or 0. The same seeded roots feed every bet and construction (paired), the width at
60 roots is read on the way to 500, and each replicate's ratio is taken before the median and
quartiles over the seeds.

**Columns.** C = (A·s_M/√n + B·s_H/√k) / se: the half-widths of M and H added, as the corners add
them, over their sum in quadrature with the covariance. f = √(2(log(1/a) + log log n)) / z_a: the
price of peeking for one stream (a law-of-the-iterated-logarithm boundary over the fixed-n normal
interval). ``--coverage N`` also counts how often the fixed-n interval misses the true h on each
side over N further simulated studies (its level).
"""

from __future__ import annotations

import argparse
import json
import math
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
from common import ROOT, machine
from scipy import stats

from verdictpack._rng import stream
from verdictpack.core._mixture import MixtureSpec
from verdictpack.core._tracker import BatchHTracker
from verdictpack.core._tracks import TrackSettings, TrackTrace, Value

BETS = ("grid", "plugin", "blend", "horizon")
CONSTRUCTIONS = ("corners", "hybrid")
JUDGMENTS = 50  # 5 judges x 2 orders x 5 trials per root
SIGMA, RHO = 1.2, 0.3  # logit-scale root heterogeneity; human-judge latent correlation
SECONDS = dict.fromkeys(BETS, 0.0)  # tracker time per bets over the simulated cells
# the example study's registered cap_roots: the horizon bets' N, as the study would run them
EXAMPLE_CAP = json.loads((ROOT / "examples" / "study_summarization.json").read_text())[
    "sequential"
]["cap_roots"]

parser = argparse.ArgumentParser()
parser.add_argument("--seeds", type=int, default=200, help="simulated studies per cell")
parser.add_argument("--roots", type=int, nargs="+", default=[60, 500])
parser.add_argument("--alphas", type=float, nargs="+", default=[0.0025, 0.025])
parser.add_argument("--true-h", type=float, nargs="+", default=[0.3, 0.0])
parser.add_argument("--study-out", type=Path, help="a folder a run of the example study wrote")
parser.add_argument("--coverage", type=int, default=0, help="also check the fixed-n level")
args = parser.parse_args()


def phi(p: np.ndarray) -> np.ndarray:
    return np.asarray(2.0 * np.arcsin(np.sqrt(p)))


def fixed_n_width(
    m: np.ndarray, h: np.ndarray, has_h: np.ndarray, a: float
) -> tuple[np.ndarray, np.ndarray]:
    """The delta-method t interval's width (module docstring), one per row of (rows, n), and
    C = (A·s_M/√n + B·s_H/√k) / se: the half-widths added as the corners add them (each stream
    alone, no covariance) over their sum in quadrature with the covariance."""
    n = m.shape[1]
    k = has_h.sum(axis=1)
    mb = m.mean(axis=1)
    hb = np.where(has_h, h, 0.0).sum(axis=1) / k
    dm = m - mb[:, None]
    dh = np.where(has_h, h - hb[:, None], 0.0)
    s2m = (dm**2).sum(axis=1) / (n - 1)
    s2h = (dh**2).sum(axis=1) / (k - 1)
    smh = (dm * dh).sum(axis=1) / (k - 1)  # dh sums to 0 over S: any centring of M will do
    ga = 1.0 / np.sqrt(mb * (1.0 - mb))
    gb = 1.0 / np.sqrt(hb * (1.0 - hb))
    se2 = ga**2 * s2m / n + gb**2 * s2h / k - 2.0 * ga * gb * smh / n
    se = np.sqrt(se2)
    c = (ga * np.sqrt(s2m / n) + gb * np.sqrt(s2h / k)) / se
    return np.asarray(2.0 * stats.t.ppf(1.0 - a, k - 1) * se), np.asarray(c)


def peeking_factor(a: float, n: int) -> float:
    """sqrt(2(log(1/a) + log log n)) / z_{1-a}: a law-of-the-iterated-logarithm boundary's
    half-width over the fixed-n normal one at the same per-tail level (one stream)."""
    z = float(stats.norm.ppf(1.0 - a))
    return math.sqrt(2.0 * (math.log(1.0 / a) + math.log(math.log(n)))) / z


def read_trail(out: Path) -> list[dict[str, float | None]]:
    lines = (out / "evidence.jsonl").read_text(encoding="utf-8").splitlines()
    keys = ("M", "H", "M_lo", "M_hi", "H_lo", "H_hi")
    return [{k: json.loads(line)[k] for k in keys} for line in lines]


def study_trail() -> tuple[list[dict[str, float | None]], list[float]]:
    """The example's evidence trail, and the registered track's h-interval at its last root."""
    if args.study_out is not None:
        out = args.study_out
        return read_trail(out), json.loads(
            (out / "evidence.jsonl").read_text(encoding="utf-8").splitlines()[-1]
        )["h_interval"]
    with tempfile.TemporaryDirectory(prefix="bench-h-width-") as tmp:
        out = Path(tmp) / "study"
        config = ROOT / "examples" / "study_summarization.json"
        argv = [sys.executable, "-m", "verdictpack", str(config), "--out", str(out), "--quiet"]
        subprocess.run(argv, cwd=ROOT, check=True, stdout=subprocess.DEVNULL)
        last = (out / "evidence.jsonl").read_text(encoding="utf-8").splitlines()[-1]
        return read_trail(out), json.loads(last)["h_interval"]


def value(r: dict[str, float | None], s: str, point: bool) -> Value | None:
    lo, hi = r[f"{s}_lo"], r[f"{s}_hi"]
    if lo is None or hi is None:
        return None
    if point:
        return r[s]
    return lo if lo == hi else (lo, hi)


def _final_interval(
    trail: list[dict[str, float | None]], point: bool, con: str, a: float, bets: str
) -> tuple[float, float]:
    """The registered track's h-interval after the trail's last root, fed as the study feeds
    it (TrackTrace: bounded values as two kernels)."""
    ends = {}
    for s in ("M", "H"):
        pairs = [value(r, s, point) for r in trail]
        lo = [np.nan if v is None else (v[0] if isinstance(v, tuple) else v) for v in pairs]
        hi = [np.nan if v is None else (v[1] if isinstance(v, tuple) else v) for v in pairs]
        ends[s] = (np.array(lo, np.float64), np.array(hi, np.float64))
    other = "corners" if con == "hybrid" else "hybrid"
    claims = dict.fromkeys(("registered", "extension", "comparison"), "")
    settings = TrackSettings(con, other, a, MixtureSpec(), 0.3, 0.3, claims, bets, EXAMPLE_CAP)
    trace = TrackTrace(
        settings,
        ends["M"][0],
        ends["H"][0],
        EXAMPLE_CAP,
        m_upper=ends["M"][1],
        h_upper=ends["H"][1],
    )
    return float(trace.h_lo["registered"][-1]), float(trace.h_hi["registered"][-1])


def example_rows() -> tuple[int, list[dict[str, object]]]:
    """Per a, construction and values (bounded as the study runs, or the point values): the
    example's final h-interval width over the fixed-n width from its point values."""
    trail, registered = study_trail()
    has = np.array([[r["H"] is not None for r in trail]])
    ms = np.array([[r["M"] for r in trail]], dtype=np.float64)
    hs = np.array([[r["H"] or 0.0 for r in trail]], dtype=np.float64)
    rows: list[dict[str, object]] = []
    for a in args.alphas:
        t_arr, c_arr = fixed_n_width(ms, hs, has, a)
        t_width = float(t_arr[0])
        for point in (False, True):
            for con in CONSTRUCTIONS:
                row: dict[str, object] = {"construction": con, "a": a, "t": t_width}
                row["C"] = float(c_arr[0])
                row["values"] = "point values" if point else "bounded, as run"
                for bets in BETS:
                    lo, hi = _final_interval(trail, point, con, a, bets)
                    row[bets] = (hi - lo) / t_width
                    if (bets, con, a, point) == ("grid", "hybrid", 0.0025, False):
                        gap = max(abs(lo - registered[0]), abs(hi - registered[1]))
                        print(f"example: grid hybrid at 0.0025 vs the run's h-interval: {gap:.1e}")
                rows.append(row)
    print(f"example study: {len(trail)} roots, {int(has.sum())} with a human value")
    return len(trail), rows


def judge_mean_for(h: float) -> float:
    """μ_M with E[logistic(μ_M + σz)] = the judges' mean giving true h against humans' 0.5."""
    target = math.sin((h + math.pi / 2.0) / 2.0) ** 2
    x, w = np.polynomial.hermite_e.hermegauss(80)
    w = w / w.sum()
    lo, hi = -10.0, 10.0
    for _ in range(200):
        mid = (lo + hi) / 2.0
        mean = float(np.sum(w / (1.0 + np.exp(-(mid + SIGMA * x)))))
        lo, hi = (mid, hi) if mean < target else (lo, mid)
    return (lo + hi) / 2.0


def simulate(true_h: float, r: int, n: int, purpose: str) -> tuple[np.ndarray, np.ndarray]:
    """(judges' count of 50, human's answer) per replicate and root: indices into the supports."""
    rng = stream(25, f"{purpose}/{true_h}")
    z = rng.standard_normal((r, n))
    zh = RHO * z + math.sqrt(1.0 - RHO**2) * rng.standard_normal((r, n))
    p = 1.0 / (1.0 + np.exp(-(judge_mean_for(true_h) + SIGMA * z)))
    q = 1.0 / (1.0 + np.exp(-SIGMA * zh))
    return rng.binomial(JUDGMENTS, p).astype(np.int64), (rng.random((r, n)) < q).astype(np.int64)


def coverage(true_h: float) -> None:
    """How often the fixed-n interval misses the true h on each side (the reference's level)."""
    r, n = args.coverage, max(args.roots)
    m_idx, h_idx = simulate(true_h, r, n, "bench/h-width/coverage")
    for k in args.roots:
        m, h = m_idx[:, :k] / JUDGMENTS, h_idx[:, :k].astype(np.float64)
        est = phi(m.mean(axis=1)) - phi(h.mean(axis=1))
        for a in args.alphas:
            w = fixed_n_width(m, h, np.ones((r, k), dtype=bool), a)[0] / 2.0
            lo, hi = np.mean(est - w > true_h), np.mean(est + w < true_h)
            print(f"fixed-n coverage, h = {true_h}, {k} roots, a = {a}: misses {lo:.4f} / {hi:.4f}")


def simulated_rows(true_h: float) -> list[dict[str, object]]:
    r, n = args.seeds, max(args.roots)
    m_idx, h_idx = simulate(true_h, r, n, "bench/h-width")
    m_val = m_idx / JUDGMENTS
    h_val = h_idx.astype(np.float64)
    m_sup = np.arange(JUDGMENTS + 1) / JUDGMENTS
    h_sup = np.array([0.0, 1.0])
    rows: list[dict[str, object]] = []
    for a in args.alphas:
        fixed = {
            k: fixed_n_width(m_val[:, :k], h_val[:, :k], np.ones((r, k), dtype=bool), a)
            for k in args.roots
        }
        t_width = {k: v[0] for k, v in fixed.items()}
        for con in CONSTRUCTIONS:
            widths: dict[str, dict[int, np.ndarray]] = {}
            for bets in BETS:
                t0 = time.perf_counter()
                widths[bets] = {}
                # the horizon bets: one run per read-out, tuned to it; the others read on the way
                for end in sorted(t_width) if bets == "horizon" else [n]:
                    tr = BatchHTracker(r, con, a, None, 0.3, m_sup, h_sup, bets=bets, horizon=end)
                    for i in range(end):
                        tr.update(m_idx[:, i], h_idx[:, i])
                        if i + 1 in t_width and (bets != "horizon" or i + 1 == end):
                            widths[bets][i + 1] = tr.h_hi - tr.h_lo
                SECONDS[bets] += time.perf_counter() - t0
            for k in sorted(args.roots):
                row: dict[str, object] = {"construction": con, "a": a, "roots": k}
                row["t"] = float(np.median(t_width[k]))
                row["C"] = float(np.median(fixed[k][1]))
                for bets in BETS:
                    row[bets] = np.quantile(widths[bets][k] / t_width[k], [0.25, 0.5, 0.75])
                rows.append(row)
    return rows


def cell(q: object) -> str:
    """One value (the example), or the quartiles of a simulated cell: median (q1–q3)."""
    v = np.atleast_1d(np.asarray(q, dtype=np.float64))
    return f"{v[0]:.3f}" if v.size == 1 else f"{v[1]:.3f} ({v[0]:.2f}–{v[2]:.2f})"


print(machine())
print(f"seeds per simulated cell: {args.seeds}; roots {args.roots}; per-tail a {args.alphas}")
n_ex, ex_rows = example_rows()
print()
print(
    "| data | roots | a | construction | grid / t | plug-in / t | blend / t | horizon / t "
    "| t width | C | f |"
)
print("|---|---|---|---|---|---|---|---|---|---|---|")
for row in ex_rows:
    print(
        f"| example study, {row['values']} | {n_ex} | {row['a']} | {row['construction']} "
        f"| {cell(row['grid'])} | {cell(row['plugin'])} | {cell(row['blend'])} "
        f"| {cell(row['horizon'])} | {row['t']:.3f} "
        f"| {row['C']:.2f} | {peeking_factor(float(row['a']), n_ex):.2f} |"  # type: ignore[arg-type]
    )
for true_h in args.true_h:
    for row in simulated_rows(true_h):
        k = int(row["roots"])  # type: ignore[call-overload]
        print(
            f"| simulated, h = {true_h} | {k} | {row['a']} | {row['construction']} "
            f"| {cell(row['grid'])} | {cell(row['plugin'])} | {cell(row['blend'])} "
            f"| {cell(row['horizon'])} "
            f"| {row['t']:.3f} | {row['C']:.2f} | {peeking_factor(float(row['a']), k):.2f} |"  # type: ignore[arg-type]
        )
print()
print(
    "tracker seconds over the simulated cells: "
    + ", ".join(f"{b} {t:.1f}" for b, t in SECONDS.items())
)
for true_h in args.true_h if args.coverage else ():
    coverage(true_h)
