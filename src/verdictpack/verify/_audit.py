"""Self-audit: ``verdictpack audit RUN_DIR...`` re-derives every headline number by a second method.

The audit reads only an output folder (results.json, report.md and the layer's other files). It
never imports the modules that computed the numbers (``_stats``, ``_sequential``, ``_sprt``,
``_judges``, ``_operating``, ``_report``, the layers): every re-derivation below is written here,
differently, from the definitions in docs/statistics.md.

Per kind (results.json ``kind``):

* every kind: the construct block (odds ratio as h, the smaller effect governs, the threshold rate,
  per-tail alpha = alpha / 4, e-boundary = 1 / per-tail alpha); every Figure well formed; no NaN.
* every kind, provenance.json (``_provenance`` is not imported: its formulas are written here
  again): the seed equals results.json's; the seed commitment is recomputed, SHA-256 of the lines
  ``verdictpack/seed-commitment/v1``, ``config_jcs_sha256``, the decimal seed (each ending in
  ``\\n``); ``config_sha256`` and ``config_jcs_sha256`` are 64 lowercase hex digits. With the config
  file (``--config FILE``; the reproduction passes each example's), ``config_sha256`` is the SHA-256
  of its bytes, ``config_jcs_sha256`` that of its RFC 8785 form (a canonicaliser written here from
  the RFC), and its kind and seed are the recorded ones; without it those two are UNVERIFIED.
* sizing: exact t sizes by quadrature of P(Z + δ > c·√(V/df)) over the density of √(V/df)
  (scipy.integrate.quad; central-t critical value from the incomplete beta function; never
  scipy.stats.nct), both tails: n reaches the target and n − 1 does not, power at n and n − 1, at
  the current n and the checks; normal-approximation and known-variance formulas; exact binomial
  regions, achieved alpha, powers, first n, stable n and the failing list by enumeration over every
  n up to the horizon (lgamma sums); two-proportion n and power (arcsine formula); the simulated
  checks: MCSE = √(p(1 − p)/R), ``simulated_minus_exact_in_mcse`` recomputed from the cell's value,
  its MCSE and the exact power above, and |z| ≤ 5.
* verdict / judges / battery / engine power report (every ScenarioOC found): the simulated
  probabilities are UNVERIFIED (a second simulation only agrees within Monte Carlo error), but
  every probability is a count over R (p·R integral), MCSE = √(p(1 − p)/R), verdict probabilities
  sum to 1 per route, P(wrong) / P(correct) / P(issued) follow from them and the scenario's
  effect_exists; roots: q50 ≤ q90 ≤ q99 ≤ max ≤ cap, mean ≤ max; cost lines re-summed (touches and
  cost, model + human), touches = roots × touches per root, cost = roots × price where the price is
  known (and one constant price per design where it is not), cost per valid verdict = mean cost /
  P(issued); the true rates from the judge sheets (p_j = ½ + (1 − ν)(sin²(clamp(φ(b) + s·ℓ +
  shift)/2) − ½), μ_M = mean_j p_j, h = φ(μ_M) − φ(μ_H)); the SPRT's exact cells (ln A, ln B,
  increments, actual alpha / beta, ASN and N quantiles by a dictionary recursion over successes,
  Wald's ASN from its closed form at h = ±1) and the fixed-n exact binomial by enumeration.
* engine: the three tracks rebuilt from evidence.jsonl by a separately written e-process (product
  over the history per λ, mixture, inversion by a grid of 2,049 points then bisection, running
  intersection), every evidence row's bounds, h-interval, states and log e-values; verdict.json and
  results.json tracks (bounds to 1e-6, never narrower than ours by more than 1e-9); the corners
  and the hybrid h-interval (polygon clipped, min / max brute-forced on fine grids of its edges
  and a 2-D grid, refined by bounded scalar search); cost tables re-summed (results.json costs and
  cost_comparison.csv); gate counts add up; yield; the spot-check size; the kappa interval's
  symmetry; the human baseline's exact power, region and alpha by enumeration; roots_run ≤ the
  effective cap; the JSON files rendered from the same object agree.
* report.md (and registered_vs_extension.md): the headline tables mapped back to their results
  fields (rows by arm / scenario / route / composition / track names), compared at the printed
  precision; then a sweep: every decimal number printed must equal some number of the folder's
  JSON files at the printed precision.

Anything that cannot be re-derived is reported UNVERIFIED with its reason, never passed silently.
"""

from __future__ import annotations

import argparse
import hashlib
import itertools
import json
import math
import re
from bisect import bisect_left
from collections import defaultdict
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from decimal import Decimal
from pathlib import Path
from statistics import NormalDist
from typing import Any

import numpy as np
from numpy.typing import NDArray
from scipy import integrate, optimize, special

from verdictpack._errors import UsageError

__all__ = ["AuditReport", "Finding", "audit_run", "audit_runs", "cli", "format_reports"]

FloatArray = NDArray[np.float64]

# Tolerances of the comparisons (documented in the report lines they produce).
_TOL_EXACT = 1e-8  # exact powers / probabilities: ours against theirs
_TOL_REL = 1e-9  # relations that hold up to floating point (sums, ratios)
_TOL_BOUND = 1e-6  # engine bounds: agreement
_TOL_NARROW = 1e-9  # engine bounds: how much narrower than ours a published bound may be
_MAX_Z = 5.0  # a simulated check more than 5 MCSE from the exact value fails (P ≈ 6e-7)


# ==============================================================================================
# Findings
# ==============================================================================================


@dataclass(frozen=True)
class Finding:
    """One check: ``status`` is ``pass``, ``fail`` or ``unverified``."""

    status: str
    where: str
    what: str
    expected: str = ""
    found: str = ""

    def line(self) -> str:
        label = {"pass": "ok", "fail": "FAIL", "unverified": "UNVERIFIED"}[self.status]
        text = f"{label} {self.where} — {self.what}"
        if self.status == "fail":
            text += f": expected {self.expected}, found {self.found}"
        elif self.status == "unverified":
            text += f" (reason: {self.expected})"
        return text


@dataclass(frozen=True)
class AuditReport:
    """All findings for one output folder."""

    run_dir: str
    kind: str
    findings: tuple[Finding, ...]

    @property
    def checks(self) -> int:
        return sum(1 for f in self.findings if f.status != "unverified")

    @property
    def failed(self) -> int:
        return sum(1 for f in self.findings if f.status == "fail")

    @property
    def unverified(self) -> int:
        return sum(1 for f in self.findings if f.status == "unverified")

    @property
    def passed(self) -> bool:
        return self.failed == 0

    def failures(self) -> list[Finding]:
        return [f for f in self.findings if f.status == "fail"]


def _show(v: Any) -> str:
    if isinstance(v, float):
        if v == 0 or 1e-4 <= abs(v) < 1e7:
            return f"{v:.12g}"
        return f"{v:.6e}"
    if isinstance(v, (list, tuple)):
        return "[" + ", ".join(_show(x) for x in v) + "]"
    if v is None:
        return "null"
    return str(v)


class _Auditor:
    """Collects findings; every helper returns whether its check passed."""

    def __init__(self) -> None:
        self.findings: list[Finding] = []

    def record(self, ok: bool, where: str, what: str, expected: Any = "", found: Any = "") -> bool:
        self.findings.append(
            Finding("pass" if ok else "fail", where, what, _show(expected), _show(found))
        )
        return ok

    def num(
        self,
        where: str,
        what: str,
        expected: float | None,
        found: Any,
        *,
        abs_tol: float = _TOL_EXACT,
        rel_tol: float = _TOL_REL,
    ) -> bool:
        ok = (
            _is_number(found) and expected is not None and _close(expected, found, abs_tol, rel_tol)
        )
        return self.record(ok, where, what, expected, found)

    def eq(self, where: str, what: str, expected: Any, found: Any) -> bool:
        if expected == found:
            return self.record(True, where, what)
        if isinstance(expected, (dict, list)) and isinstance(found, (dict, list)):
            path, e, f = _first_diff(expected, found, "")
            return self.record(False, where + path, what, e, f)
        return self.record(False, where, what, expected, found)

    def true(self, where: str, what: str, cond: bool, expected: Any = "", found: Any = "") -> bool:
        return self.record(bool(cond), where, what, expected, found)

    def unverified(self, where: str, what: str, reason: str) -> None:
        self.findings.append(Finding("unverified", where, what, reason, ""))


def _first_diff(a: Any, b: Any, path: str) -> tuple[str, Any, Any]:
    """The first place where two JSON values differ: (relative path, a there, b there)."""
    if isinstance(a, dict) and isinstance(b, dict):
        for k in list(a) + [k for k in b if k not in a]:
            if k not in a or k not in b:
                return f"{path}.{k}", a.get(k, "(missing)"), b.get(k, "(missing)")
            if a[k] != b[k]:
                return _first_diff(a[k], b[k], f"{path}.{k}")
    elif isinstance(a, list) and isinstance(b, list) and len(a) == len(b):
        for i, (x, y) in enumerate(zip(a, b, strict=True)):
            if x != y:
                return _first_diff(x, y, f"{path}[{i}]")
    return path, a, b


def _is_number(x: Any) -> bool:
    return isinstance(x, (int, float)) and not isinstance(x, bool) and math.isfinite(float(x))


def _close(a: float, b: float, abs_tol: float, rel_tol: float) -> bool:
    return abs(float(a) - float(b)) <= max(abs_tol, rel_tol * max(abs(float(a)), abs(float(b))))


def _fv(x: Any) -> Any:
    """The value of a Figure ({"value", ...}) or the number itself."""
    if isinstance(x, dict) and "value" in x:
        return x["value"]
    return x


def _jp(base: str, *keys: str | int) -> str:
    out = base
    for k in keys:
        out += f"[{k}]" if isinstance(k, int) else f".{k}"
    return out


# ==============================================================================================
# Independent mathematics (written here; nothing imported from the package's computations)
# ==============================================================================================

_ND = NormalDist()


def _phi(p: float) -> float:
    return 2.0 * math.asin(math.sqrt(min(max(p, 0.0), 1.0)))


def _phi_inv(x: float) -> float:
    return math.sin(min(max(x, 0.0), math.pi) / 2.0) ** 2


def _ncdf(x: float) -> float:
    return 0.5 * math.erfc(-x / math.sqrt(2.0))


def _z(q: float) -> float:
    return _ND.inv_cdf(q)


def _t_upper(c: float, df: int) -> float:
    """P(T > c) for a central t with df degrees of freedom, c >= 0 (incomplete beta)."""
    return 0.5 * float(special.betainc(df / 2.0, 0.5, df / (df + c * c)))


def _t_critical(tail: float, df: int) -> float:
    hi = 1.0
    while _t_upper(hi, df) > tail:
        hi *= 2.0
    return float(optimize.brentq(lambda c: _t_upper(c, df) - tail, 0.0, hi, xtol=1e-15, rtol=1e-15))


def _t_power(n: int, dz: float, test_alpha: float, sides: int) -> float:
    """Exact t power by quadrature over S = √(V/df), V ~ χ²_df: P(Z + δ > c·S) (+ lower tail)."""
    df = n - 1
    delta = dz * math.sqrt(n)
    c = _t_critical(test_alpha / sides, df)
    k = df / 2.0
    log_norm = k * math.log(2.0) + math.lgamma(k)

    def density_times_rejection(s: float) -> float:
        if s <= 0.0:
            return 0.0
        v = df * s * s
        log_d = math.log(2.0 * df * s) + (k - 1.0) * math.log(v) - v / 2.0 - log_norm
        if sides == 1:
            rej = _ncdf(abs(delta) - c * s)
        else:
            rej = _ncdf(delta - c * s) + _ncdf(-delta - c * s)
        return math.exp(log_d) * rej

    sd = 1.0 / math.sqrt(2.0 * df)
    cuts = [0.0, max(0.0, 1.0 - 12.0 * sd), 1.0, 1.0 + 12.0 * sd, 6.0 + 40.0 * sd]
    total = 0.0
    for a, b in itertools.pairwise(cuts):
        if b > a:
            total += integrate.quad(
                density_times_rejection, a, b, epsabs=1e-15, epsrel=1e-13, limit=200
            )[0]
    total += integrate.quad(
        density_times_rejection, cuts[-1], math.inf, epsabs=1e-15, epsrel=1e-13, limit=200
    )[0]
    return float(total)


def _t_size(dz: float, test_alpha: float, power: float, sides: int) -> int:
    """Smallest n >= 2 with exact power >= target, by walking from n = 2 in doubling steps."""
    lo, hi = 1, 2
    while _t_power(hi, dz, test_alpha, sides) < power:
        lo, hi = hi, hi * 2
        if hi > 10_000_000:
            raise ValueError("no t size below 10,000,000")
    while hi - lo > 1:  # power is monotone in n for fixed dz: bisection on n
        mid = (lo + hi) // 2
        if _t_power(mid, dz, test_alpha, sides) >= power:
            hi = mid
        else:
            lo = mid
    return hi


def _known_variance_power(n: int, dz: float, test_alpha: float, sides: int) -> float:
    z = _z(1.0 - test_alpha / sides)
    d = abs(dz) * math.sqrt(n)
    if sides == 1:
        return _ncdf(d - z)
    return _ncdf(d - z) + _ncdf(-d - z)


@dataclass(frozen=True)
class _BinomialN:
    lower: int | None
    upper: int | None
    achieved: float
    power: float


def _binomial_enumeration(
    p0: float, p1: float, tail_alpha: float, sides: int, horizon: int
) -> list[_BinomialN]:
    """Regions and powers for n = 1..horizon by summing lgamma-based pmfs (index n − 1)."""
    greater = p1 > p0
    lg = np.array([math.lgamma(k + 1.0) for k in range(horizon + 2)])
    out: list[_BinomialN] = []
    for n in range(1, horizon + 1):
        k = np.arange(n + 1)
        log_comb = lg[n] - lg[k] - lg[n - k]
        pmf0 = np.exp(log_comb + k * math.log(p0) + (n - k) * math.log1p(-p0))
        pmf1 = np.exp(log_comb + k * math.log(p1) + (n - k) * math.log1p(-p1))
        up0 = np.cumsum(pmf0[::-1])[::-1]  # P0(X >= k)
        lo0 = np.cumsum(pmf0)  # P0(X <= k)
        up1 = np.cumsum(pmf1[::-1])[::-1]
        lo1 = np.cumsum(pmf1)
        upper: int | None = None
        lower: int | None = None
        if sides == 2 or greater:
            hits = np.flatnonzero(up0[1:] <= tail_alpha)
            upper = int(hits[0]) + 1 if hits.size else None
        if sides == 2 or not greater:
            hits = np.flatnonzero(lo0[:n] <= tail_alpha)
            lower = int(hits[-1]) if hits.size else None
        achieved = (float(lo0[lower]) if lower is not None else 0.0) + (
            float(up0[upper]) if upper is not None else 0.0
        )
        power = (float(lo1[lower]) if lower is not None else 0.0) + (
            float(up1[upper]) if upper is not None else 0.0
        )
        out.append(_BinomialN(lower, upper, achieved, power))
    return out


def _binomial_normal_n(p0: float, p1: float, test_alpha: float, power: float, sides: int) -> int:
    za, zb = _z(1.0 - test_alpha / sides), _z(power)
    num = za * math.sqrt(p0 * (1 - p0)) + zb * math.sqrt(p1 * (1 - p1))
    return math.ceil((num / abs(p1 - p0)) ** 2)


def _two_prop_n(h: float, test_alpha: float, power: float, sides: int) -> int:
    return math.ceil(2.0 * ((_z(1.0 - test_alpha / sides) + _z(power)) / abs(h)) ** 2)


def _two_prop_power(n: int, h: float, test_alpha: float, sides: int) -> float:
    z = _z(1.0 - test_alpha / sides)
    d = abs(h) * math.sqrt(n / 2.0)
    return _ncdf(d - z) + (_ncdf(-d - z) if sides == 2 else 0.0)


@dataclass(frozen=True)
class _SPRTExact:
    p_upper: float
    p_lower: float
    asn: float
    beyond: float
    quantiles: dict[str, int | None]


def _sprt_recursion(
    log_a: float, log_b: float, up: float, down: float, p: float, horizon: int
) -> _SPRTExact:
    """Carry the continuing mass over success counts, one judgment at a time (a dictionary)."""
    cont: dict[int, float] = {0: 1.0}
    to_upper = to_lower = asn = 0.0
    stops: list[float] = []
    remaining = 1.0
    for n in range(1, horizon + 1):
        nxt: dict[int, float] = defaultdict(float)
        for s, pr in cont.items():
            nxt[s + 1] += pr * p
            nxt[s] += pr * (1.0 - p)
        cont = {}
        stop_here = 0.0
        for s, pr in nxt.items():
            llr = s * up + (n - s) * down
            if llr >= log_a:
                to_upper += pr
                stop_here += pr
            elif llr <= log_b:
                to_lower += pr
                stop_here += pr
            else:
                cont[s] = pr
        stops.append(stop_here)
        asn += n * stop_here
        remaining = math.fsum(cont.values())
        if not cont or remaining < 1e-300:
            break
    asn += horizon * remaining
    cdf = np.cumsum(stops)
    quantiles: dict[str, int | None] = {}
    for q in (0.5, 0.9, 0.99):
        hit = np.flatnonzero(cdf >= q)
        quantiles[f"{q:g}"] = int(hit[0]) + 1 if hit.size else None
    return _SPRTExact(to_upper, to_lower, asn, max(remaining, 0.0), quantiles)


# ---- the e-process, written out -----------------------------------------------------------

_GRID = np.linspace(0.0, 1.0, 2049)


def _lse(a: FloatArray, axis: int = 0) -> FloatArray:
    mx = a.max(axis=axis, keepdims=True)
    out = mx + np.log(np.exp(a - mx).sum(axis=axis, keepdims=True))
    return np.asarray(np.squeeze(out, axis=axis))


def _log_e_history(
    xs: FloatArray, m: float, lambdas: FloatArray, logw: FloatArray, sign: float
) -> float:
    """log Σ_k w_k Π_i (1 + sign·λ_k (x_i − m)): the product over the whole history."""
    terms = np.log1p(np.multiply.outer(sign * lambdas, xs - m)).sum(axis=1) + logw
    return float(_lse(terms))


def _confidence_sequence(
    xs: FloatArray, alpha: float, lambdas: FloatArray, weights: FloatArray
) -> tuple[FloatArray, FloatArray]:
    """Running lower / upper bounds after each observation (grid bracket, then bisection)."""
    logc = -math.log(alpha)
    logw = np.log(weights)
    n = xs.size
    lower, upper = np.zeros(n), np.ones(n)
    grid = _GRID
    for sign, out in ((1.0, lower), (-1.0, upper)):
        acc = np.zeros((lambdas.size, grid.size))
        prev = 0.0 if sign > 0 else 1.0
        for t in range(n):
            acc += np.log1p(np.multiply.outer(sign * lambdas, xs[t] - grid))
            below = _lse(acc + logw[:, None]) < logc
            hist = xs[: t + 1]
            if sign > 0:  # E⁺ decreases in m: the lower end is the first m with E⁺ < c
                g = int(np.argmax(below))
                if g > 0 and grid[g] > prev:
                    a, b = max(grid[g - 1], prev), float(grid[g])
                    if _log_e_history(hist, a, lambdas, logw, sign) >= logc:
                        for _ in range(80):
                            mid = 0.5 * (a + b)
                            if mid in (a, b) or b - a < 1e-14:
                                break
                            if _log_e_history(hist, mid, lambdas, logw, sign) >= logc:
                                a = mid
                            else:
                                b = mid
                        prev = max(prev, a)
            else:  # E⁻ increases in m: the upper end is the last m with E⁻ < c
                g = grid.size - 1 - int(np.argmax(below[::-1]))
                if g < grid.size - 1 and grid[g] < prev:
                    a, b = float(grid[g]), min(float(grid[g + 1]), prev)
                    if _log_e_history(hist, b, lambdas, logw, sign) >= logc:
                        for _ in range(80):
                            mid = 0.5 * (a + b)
                            if mid in (a, b) or b - a < 1e-14:
                                break
                            if _log_e_history(hist, mid, lambdas, logw, sign) >= logc:
                                b = mid
                            else:
                                a = mid
                        prev = min(prev, b)
            out[t] = prev
    return lower, upper


def _corners(lm: float, um: float, lh: float, uh: float) -> tuple[float, float]:
    return _phi(lm) - _phi(uh), _phi(um) - _phi(lh)


def _clip(
    poly: list[tuple[float, float]], keep: Callable[[float, float], float]
) -> list[tuple[float, float]]:
    """Sutherland–Hodgman: the part of a convex polygon where keep(a, b) >= 0."""
    out: list[tuple[float, float]] = []
    for i, p in enumerate(poly):
        q = poly[(i + 1) % len(poly)]
        fp, fq = keep(*p), keep(*q)
        if fp >= 0:
            out.append(p)
        if (fp >= 0) != (fq >= 0):
            t = fp / (fp - fq)
            out.append((p[0] + t * (q[0] - p[0]), p[1] + t * (q[1] - p[1])))
    return out


def _f_ab(a: FloatArray, b: FloatArray) -> FloatArray:
    return np.asarray(
        2.0 * np.arcsin(np.sqrt(np.clip(a, 0, 1))) - 2.0 * np.arcsin(np.sqrt(np.clip(b, 0, 1)))
    )


def _hybrid_interval(
    lm: float, um: float, lh: float, uh: float, ld: float, ud: float
) -> tuple[float, float] | None:
    """min / max of φ(a) − φ(b) over the polygon, brute force (None when it is empty)."""
    if lm > um or lh > uh or ld > ud:
        return None
    poly = [(lm, lh), (um, lh), (um, uh), (lm, uh)]
    poly = _clip(poly, lambda a, b: (a - b) - ld)
    if poly:
        poly = _clip(poly, lambda a, b: ud - (a - b))
    if not poly:
        return None
    s = np.linspace(0.0, 1.0, 2001)
    best_lo, best_hi = math.inf, -math.inf
    edges = [(poly[i], poly[(i + 1) % len(poly)]) for i in range(len(poly))]
    per_edge = []
    for p, q in edges:
        f = _f_ab(p[0] + s * (q[0] - p[0]), p[1] + s * (q[1] - p[1]))
        per_edge.append((p, q, f))
        best_lo, best_hi = min(best_lo, float(f.min())), max(best_hi, float(f.max()))
    # a 2-D grid over the polygon (no interior point may beat the boundary)
    ga, gb = np.meshgrid(np.linspace(lm, um, 121), np.linspace(lh, uh, 121))
    inside = (ga - gb >= ld) & (ga - gb <= ud)
    if inside.any():
        f2 = _f_ab(ga[inside], gb[inside])
        best_lo, best_hi = min(best_lo, float(f2.min())), max(best_hi, float(f2.max()))
    for p, q, f in per_edge:  # refine near the best grid points by bounded scalar search
        for sign, best in ((1.0, best_lo), (-1.0, best_hi)):
            j = int(np.argmin(sign * f))
            if abs(float(f[j]) - best) > 1e-6:
                continue
            a0, b0 = s[max(j - 1, 0)], s[min(j + 1, s.size - 1)]

            def g(
                u: float, p: tuple[float, float] = p, q: tuple[float, float] = q, sign: float = sign
            ) -> float:
                a = p[0] + u * (q[0] - p[0])
                b = p[1] + u * (q[1] - p[1])
                return sign * (_phi(a) - _phi(b))

            r = optimize.minimize_scalar(
                g, bounds=(a0, b0), method="bounded", options={"xatol": 1e-13}
            )
            val = sign * float(r.fun)
            if sign > 0:
                best_lo = min(best_lo, val)
            else:
                best_hi = max(best_hi, val)
    return best_lo, best_hi


def _classify(lo: float, hi: float, threshold: float, at_cap: bool) -> str | None:
    if lo >= threshold:
        return "EFFECT_SUPPORTED"
    if hi <= 0.0:
        return "NO_POSITIVE_EFFECT"
    if hi < threshold:
        return "BELOW_PRACTICAL_THRESHOLD"
    if at_cap:
        return "INCONCLUSIVE"
    return None


def _sheet_rate(b: float, lean: float, noise: float, scale: float, shift: float) -> float:
    angle = min(max(_phi(b) + scale * lean + shift, 0.0), math.pi)
    return 0.5 + (1.0 - noise) * (math.sin(angle / 2.0) ** 2 - 0.5)


# ==============================================================================================
# Every kind: construct, figures, NaN
# ==============================================================================================


def _audit_construct(A: _Auditor, res: dict[str, Any]) -> None:
    c = res.get("construct")
    if not isinstance(c, dict):
        A.true("results.json $.construct", "construct block present", False, "an object", c)
        return
    w = "results.json $.construct"
    p0 = c["human_baseline_rate"]
    ratio = c["threshold_odds_ratio"]
    p_or = ratio * p0 / (1.0 - p0 + ratio * p0)
    h_or = _phi(p_or) - _phi(p0)
    A.num(
        w + ".threshold_h_from_odds_ratio",
        "odds ratio as h at the baseline",
        h_or,
        c["threshold_h_from_odds_ratio"],
        abs_tol=1e-12,
    )
    gov = min(c["threshold_h"], h_or)
    A.num(
        w + ".governing_threshold_h",
        "the smaller effect governs",
        gov,
        c["governing_threshold_h"],
        abs_tol=1e-12,
    )
    A.eq(
        w + ".governs",
        "which threshold governs",
        "h" if c["threshold_h"] <= h_or else "odds_ratio",
        c["governs"],
    )
    A.num(
        w + ".p1_at_threshold",
        "rate at the governing threshold sin²((φ(p0) + h)/2)",
        _phi_inv(_phi(p0) + c["governing_threshold_h"]),
        c["p1_at_threshold"],
        abs_tol=1e-12,
    )
    A.num(
        w + ".per_tail_alpha",
        "per-tail alpha = alpha / 4",
        c["alpha"] / 4.0,
        c["per_tail_alpha"],
        abs_tol=1e-15,
    )
    A.num(
        w + ".e_boundary",
        "e-boundary = 1 / per-tail alpha",
        1.0 / c["per_tail_alpha"],
        c["e_boundary"],
        abs_tol=1e-9,
    )
    A.true(
        w + ".extension_minimum_h",
        "extension minimum below the governing threshold",
        0 < c["extension_minimum_h"] <= c["governing_threshold_h"],
        f"in (0, {c['governing_threshold_h']}]",
        c["extension_minimum_h"],
    )


def _walk(obj: Any, path: str) -> Iterator[tuple[str, Any]]:
    yield path, obj
    if isinstance(obj, dict):
        for k, v in obj.items():
            yield from _walk(v, _jp(path, str(k)))
    elif isinstance(obj, list):
        for i, v in enumerate(obj):
            yield from _walk(v, _jp(path, i))


def _audit_figures(A: _Auditor, data: Any, file: str) -> None:
    """Every Figure carries a known basis; simulated ones their MCSE and replicates."""
    bad: list[str] = []
    count = 0
    for path, node in _walk(data, "$"):
        if isinstance(node, dict) and set(node) == {"value", "basis", "mcse", "replicates"}:
            count += 1
            basis = node["basis"]
            ok = _is_number(node["value"]) and basis in ("exact", "closed_form", "simulated")
            if basis == "simulated":
                ok = ok and _is_number(node["mcse"]) and isinstance(node["replicates"], int)
                ok = ok and node["mcse"] >= 0 and node["replicates"] > 0
            elif ok:
                ok = node["mcse"] is None and node["replicates"] is None
            if not ok:
                bad.append(path)
    A.true(
        f"{file} (all {count} figures)",
        "every figure has a basis (simulated: MCSE, R)",
        not bad,
        "well-formed figures",
        ", ".join(bad[:5]),
    )


# ==============================================================================================
# sizing
# ==============================================================================================


def _audit_sizing(A: _Auditor, res: dict[str, Any]) -> None:
    reps = res["replicates"]
    points = {d["name"]: d for d in res["design_points"]}
    for i, arm in enumerate(res["arms"]):
        base = f"results.json $.arms[{i}]"
        test = arm.get("test")
        if test in ("paired_t", "one_sample_t"):
            _sizing_t(A, arm, base, points, reps)
        elif test == "binomial":
            _sizing_binomial(A, arm, base, points)
        elif test == "two_proportions":
            _sizing_two_prop(A, arm, base, points, res["construct"])
        else:
            A.true(
                base + ".test", "a known arm test", False, "t / binomial / two_proportions", test
            )


def _test_alpha_check(
    A: _Auditor, w: str, size: dict[str, Any], points: dict[str, Any], sides: int
) -> tuple[float, float]:
    point = points[size["design"]]
    alpha = point["alpha"] if sides == 2 else point["alpha"] / 2.0
    A.num(
        w + ".test_alpha",
        "test alpha (one-sided: half the design alpha)",
        alpha,
        size["test_alpha"],
        abs_tol=1e-15,
    )
    A.num(
        w + ".target_power",
        "target power of the design point",
        point["power"],
        size["target_power"],
        abs_tol=1e-15,
    )
    return alpha, point["power"]


def _sim_check(A: _Auditor, w: str, fig: Any, z: Any, exact_power: float, reps: int) -> None:
    p = _fv(fig)
    A.eq(
        w + ".replicates",
        "simulated check uses the configured replicates",
        reps,
        fig.get("replicates"),
    )
    A.num(
        w + ".mcse",
        "MCSE = sqrt(p(1 − p)/R)",
        math.sqrt(p * (1 - p) / reps),
        fig.get("mcse"),
        abs_tol=1e-12,
    )
    mcse = fig.get("mcse") or 0.0
    mine = (p - exact_power) / mcse if mcse > 0 else 0.0
    A.num(
        w.rsplit(".", 1)[0] + ".simulated_minus_exact_in_mcse",
        "(simulated − exact) / MCSE recomputed from the cell and our exact power",
        mine,
        z,
        abs_tol=2e-6,
    )
    A.true(
        w + ".value",
        f"simulated power within {_MAX_Z:g} MCSE of our exact power",
        abs(mine) <= _MAX_Z,
        f"|z| <= {_MAX_Z:g} (exact {exact_power:.6f})",
        f"z = {mine:.2f}",
    )


def _sizing_t(
    A: _Auditor, arm: dict[str, Any], base: str, points: dict[str, Any], reps: int
) -> None:
    dz, sides = arm["dz"], arm["sides"]
    for j, s in enumerate(arm["sizes"]):
        w = f"{base}.sizes[{j}]"
        alpha, power = _test_alpha_check(A, w, s, points, sides)
        n_mine = _t_size(dz, alpha, power, sides)
        p_n = _t_power(n_mine, dz, alpha, sides)
        p_nm1 = _t_power(n_mine - 1, dz, alpha, sides) if n_mine > 2 else None
        n = _fv(s["n"])
        A.eq(
            w + ".n",
            f"exact t size (quadrature: power(n) {p_n:.6f} >= {power}, "
            f"power(n−1) {p_nm1 if p_nm1 is None else round(p_nm1, 6)} < {power})",
            n_mine,
            n,
        )
        A.num(w + ".power_at_n", "exact power at n", p_n, _fv(s["power_at_n"]))
        if p_nm1 is not None:
            A.num(
                w + ".power_at_n_minus_1",
                "exact power at n − 1",
                p_nm1,
                _fv(s["power_at_n_minus_1"]),
            )
        else:
            A.eq(w + ".power_at_n_minus_1", "no n − 1 below n = 2", None, s["power_at_n_minus_1"])
        normal = math.ceil(((_z(1 - alpha / sides) + _z(power)) / abs(dz)) ** 2)
        A.eq(
            w + ".normal_n",
            "normal-approximation n ceil(((z_a + z_b)/dz)²)",
            normal,
            _fv(s["normal_n"]),
        )
        _sim_check(
            A,
            w + ".simulated_power_at_n",
            s["simulated_power_at_n"],
            s["simulated_minus_exact_in_mcse"],
            p_n,
            reps,
        )
    for key in ("at_current_n", "checks"):
        for j, pa in enumerate(arm.get(key) or []):
            w = f"{base}.{key}[{j}]"
            point = points[pa["design"]]
            alpha = point["alpha"] if sides == 2 else point["alpha"] / 2.0
            n = pa["n"]
            ex = _t_power(n, dz, alpha, sides)
            A.num(w + ".exact_power", f"exact power at n = {n}", ex, _fv(pa["exact_power"]))
            A.num(
                w + ".known_variance_power",
                "known-variance (normal) power formula",
                _known_variance_power(n, dz, alpha, sides),
                _fv(pa["known_variance_power"]),
                abs_tol=1e-12,
            )
            if key == "at_current_n":
                A.eq(w + ".n", "the arm's current n", arm.get("current_n"), n)
            if pa.get("simulated_power") is not None:
                _sim_check(
                    A,
                    w + ".simulated_power",
                    pa["simulated_power"],
                    pa["simulated_minus_exact_in_mcse"],
                    ex,
                    reps,
                )


def _sizing_binomial(A: _Auditor, arm: dict[str, Any], base: str, points: dict[str, Any]) -> None:
    p0, p1, sides = arm["p0"], arm["p1"], arm["sides"]
    A.num(base + ".h", "Cohen's h = φ(p1) − φ(p0)", _phi(p1) - _phi(p0), arm["h"], abs_tol=1e-12)
    A.eq(
        base + ".direction",
        "direction from p1 vs p0",
        "greater" if p1 > p0 else "less",
        arm["direction"],
    )
    for j, s in enumerate(arm["sizes"]):
        w = f"{base}.sizes[{j}]"
        alpha, power = _test_alpha_check(A, w, s, points, sides)
        normal = _binomial_normal_n(p0, p1, alpha, power, sides)
        A.eq(w + ".normal_n", "closed-form normal n", normal, _fv(s["normal_n"]))
        horizon = max(2 * normal, normal + 200)
        A.eq(
            w + ".search_horizon",
            "search horizon max(2·normal n, normal n + 200)",
            horizon,
            s["search_horizon"],
        )
        table = _binomial_enumeration(p0, p1, alpha / sides, sides, horizon)
        ok = [row.power >= power for row in table]
        if not any(ok) or not ok[-1]:
            A.true(
                w,
                "exact binomial: target reached inside the horizon",
                False,
                "a powered horizon",
                "not reached",
            )
            continue
        first = ok.index(True) + 1
        failing = [i + 1 for i, good in enumerate(ok) if not good]
        stable = failing[-1] + 1 if failing and failing[-1] > first else first
        between = [n for n in failing if first < n < stable]
        r1, rs = table[first - 1], table[stable - 1]
        A.eq(w + ".first_n", "first n reaching the target (enumeration)", first, _fv(s["first_n"]))
        A.num(
            w + ".power_at_first", "exact power at the first n", r1.power, _fv(s["power_at_first"])
        )
        if first > 1:
            A.num(
                w + ".power_at_first_minus_1",
                "exact power at first n − 1",
                table[first - 2].power,
                _fv(s["power_at_first_minus_1"]),
            )
        A.eq(w + ".region_lower", "rejection region, lower end", r1.lower, s["region_lower"])
        A.eq(w + ".region_upper", "rejection region, upper end", r1.upper, s["region_upper"])
        A.num(
            w + ".achieved_alpha",
            "achieved alpha of the region",
            r1.achieved,
            _fv(s["achieved_alpha"]),
        )
        A.eq(
            w + ".stable_n",
            "stable n (every larger n up to the horizon powered)",
            stable,
            _fv(s["stable_n"]),
        )
        A.num(
            w + ".power_at_stable",
            "exact power at the stable n",
            rs.power,
            _fv(s["power_at_stable"]),
        )
        A.eq(
            w + ".stable_region_lower",
            "region at the stable n, lower",
            rs.lower,
            s["stable_region_lower"],
        )
        A.eq(
            w + ".stable_region_upper",
            "region at the stable n, upper",
            rs.upper,
            s["stable_region_upper"],
        )
        A.eq(
            w + ".failing_between",
            "n below target between first and stable",
            between,
            list(s["failing_between"]),
        )


def _sizing_two_prop(
    A: _Auditor, arm: dict[str, Any], base: str, points: dict[str, Any], c: dict[str, Any]
) -> None:
    A.num(base + ".p0", "the construct's baseline", c["human_baseline_rate"], arm["p0"], abs_tol=0)
    A.num(
        base + ".governing_h",
        "the construct's governing h",
        c["governing_threshold_h"],
        arm["governing_h"],
        abs_tol=0,
    )
    A.num(
        base + ".p1",
        "sin²((φ(p0) + h)/2)",
        _phi_inv(_phi(arm["p0"]) + arm["governing_h"]),
        arm["p1"],
        abs_tol=1e-12,
    )
    h, sides = arm["governing_h"], arm["sides"]
    for j, s in enumerate(arm["sizes"]):
        w = f"{base}.sizes[{j}]"
        alpha, power = _test_alpha_check(A, w, s, points, sides)
        n = _two_prop_n(h, alpha, power, sides)
        A.eq(
            w + ".n_per_group",
            "two-proportion n = ceil(2((z_a + z_b)/h)²)",
            n,
            _fv(s["n_per_group"]),
        )
        A.eq(w + ".total", "total = 2 × n per group", 2 * n, _fv(s["total"]))
        A.num(
            w + ".power_at_n",
            "arcsine power at n",
            _two_prop_power(n, h, alpha, sides),
            _fv(s["power_at_n"]),
            abs_tol=1e-12,
        )


# ==============================================================================================
# Operating characteristics (verdict, judges, battery, engine power report)
# ==============================================================================================

_ROUTE_LABELS = {
    "eprocess": (
        "EFFECT_SUPPORTED",
        "NO_POSITIVE_EFFECT",
        "BELOW_PRACTICAL_THRESHOLD",
        "INCONCLUSIVE",
    ),
    "sprt": ("EFFECT", "NO_EFFECT", "INCONCLUSIVE"),
    "fixed_n": ("EFFECT", "NO_EFFECT"),
}


@dataclass
class _Design:
    """What is known about the design behind a group of ScenarioOC blocks.

    None means unknown: the first route that determines it is used and every later one must
    agree (a constant per design), and the report says the value was derived.
    """

    name: str
    human_rate: float
    two_j: int | None = None
    n_h: int | None = None
    fixed_touches: float | None = None
    fixed_cost: float | None = None
    model_price: float | None = None  # per root
    human_price: float | None = None  # per root
    total_price: float | None = None  # model + human per root
    sheets: list[dict[str, Any]] | None = None
    sheets_reason: str = ""
    latent_correlation: float | None = None
    cap: int | None = None
    fixed_n: int | None = None
    threshold: float | None = None  # the governing threshold (registered alternative)


@dataclass(frozen=True)
class _CostRow:
    design: _Design
    kind: str
    where: str
    roots: float
    model_touches: float
    human_touches: float
    model_cost: float
    human_cost: float
    cost: float


class _Learned:
    """The cost lines of every route, checked against the design's prices once all are seen.

    A known price is the reference; an unknown one is one constant per design, whose reference
    is the median over the design's routes (so a planted cell is the one named, not its peers).
    """

    def __init__(self) -> None:
        self.rows: list[_CostRow] = []
        self.values: dict[tuple[str, str], tuple[float, str]] = {}

    def add(self, row: _CostRow) -> None:
        self.rows.append(row)

    def _check(
        self,
        A: _Auditor,
        design: _Design,
        key: str,
        known: float | None,
        items: list[tuple[float, str]],
        what: str,
    ) -> float | None:
        if not items:
            return known
        if known is not None:
            ref, note = known, ""
        else:
            ref = float(np.median([v for v, _ in items]))
            note = f" (one constant per design: the median over its {len(items)} routes)"
        self.values[(design.name, key)] = (ref, "derived" if known is None else "known")
        for value, where in items:
            A.num(where, what + note, ref, value, abs_tol=1e-9, rel_tol=1e-9)
        return ref

    def finalize(self, A: _Auditor) -> None:
        designs: dict[str, list[_CostRow]] = defaultdict(list)
        for row in self.rows:
            designs[row.design.name].append(row)
        for rows in designs.values():
            d = rows[0].design
            sprt = [r for r in rows if r.kind == "sprt"]
            humans = [r for r in rows if r.kind != "sprt"]
            self._check(
                A,
                d,
                "two_j",
                d.two_j,
                [(r.model_touches / r.roots, r.where + ".mean_model_touches") for r in rows],
                "model touches = roots × touches per root",
            )
            self._check(
                A,
                d,
                "model_price",
                d.model_price,
                [(r.model_cost / r.roots, r.where + ".mean_model_cost") for r in rows],
                "model cost = roots × model price per root",
            )
            ft = self._check(
                A,
                d,
                "fixed_touches",
                d.fixed_touches,
                [(r.human_touches, r.where + ".mean_human_touches") for r in sprt],
                "the SPRT uses only the fixed human layer (touches)",
            )
            fc = self._check(
                A,
                d,
                "fixed_cost",
                d.fixed_cost,
                [(r.human_cost, r.where + ".mean_human_cost") for r in sprt],
                "the SPRT pays only the fixed human layer",
            )
            if ft is not None:
                self._check(
                    A,
                    d,
                    "n_h",
                    d.n_h,
                    [
                        ((r.human_touches - ft) / r.roots, r.where + ".mean_human_touches")
                        for r in humans
                    ],
                    "human touches = fixed + roots × human judgments per root",
                )
            if fc is not None:
                self._check(
                    A,
                    d,
                    "human_price",
                    d.human_price,
                    [((r.human_cost - fc) / r.roots, r.where + ".mean_human_cost") for r in humans],
                    "human cost = fixed + roots × human price per root",
                )
                if d.total_price is not None:
                    for r in humans:
                        A.num(
                            r.where + ".mean_cost",
                            "cost = fixed + roots × cost per root (both streams)",
                            fc + d.total_price * r.roots,
                            r.cost,
                            abs_tol=1e-9,
                            rel_tol=1e-9,
                        )


def _find_ocs(data: Any, path: str = "$") -> list[tuple[str, dict[str, Any]]]:
    keys = {"scenario", "routes", "effect_exists", "mu_model", "mu_human", "true_h", "replicates"}
    return [
        (p, node) for p, node in _walk(data, path) if isinstance(node, dict) and keys <= set(node)
    ]


def _route_label(route: dict[str, Any]) -> str:
    if route.get("route") == "eprocess":
        return f"e-process ({route.get('construction')})"
    return {"sprt": "SPRT", "fixed_n": "fixed-n"}.get(str(route.get("route")), str(route))


def _audit_oc(
    A: _Auditor,
    path: str,
    oc: dict[str, Any],
    design: _Design,
    learned: _Learned,
    stats: dict[str, int],
) -> None:
    w = "results.json " + path
    reps = oc["replicates"]
    eff = oc["effect_exists"]
    A.eq(
        w + ".effect_exists",
        "effect exists iff the effect scale is positive",
        oc["effect_scale"] > 0,
        eff,
    )
    A.num(
        w + ".mu_human",
        "human rate = the construct's baseline",
        design.human_rate,
        oc["mu_human"],
        abs_tol=0,
    )
    A.num(
        w + ".true_h",
        "true h = φ(μ_M) − φ(μ_H)",
        _phi(oc["mu_model"]) - _phi(oc["mu_human"]),
        oc["true_h"],
        abs_tol=1e-12,
    )
    if design.sheets is not None:
        rates = [
            _sheet_rate(
                j["baseline_rate"], j["lean_h"], j["noise"], oc["effect_scale"], oc["model_shift_h"]
            )
            for j in design.sheets
        ]
        mu = min(max(math.fsum(rates) / len(rates), 0.0), 1.0)
        A.num(
            w + ".mu_model",
            "model-stream rate re-derived from the judge sheets "
            "(mean_j ½ + (1 − ν)(sin²(θ/2) − ½))",
            mu,
            oc["mu_model"],
            abs_tol=1e-12,
        )
    else:
        A.unverified(
            w + ".mu_model",
            "model-stream rate from the judge sheets",
            design.sheets_reason or "the judge sheets are not in the output folder",
        )
    if design.latent_correlation is not None and oc["scenario"] != "correlated_stress":
        A.num(
            w + ".latent_correlation",
            "the panel's latent correlation",
            design.latent_correlation,
            oc["latent_correlation"],
            abs_tol=0,
        )
    name = str(oc["scenario"])
    if name == "null":
        A.true(
            w,
            "the null scenario carries no effect and no shift",
            oc["effect_scale"] == 0 and oc["model_shift_h"] == 0,
            "0 / 0",
            f"{oc['effect_scale']} / {oc['model_shift_h']}",
        )
    match = re.match(r"^above_threshold h=([0-9.]+)$", name)
    if name == "registered_alternative" or match:
        target = design.threshold if not match else float(match.group(1))
        if target is not None:
            A.num(
                w + ".true_h",
                f"scenario '{name}': true h as named",
                target,
                oc["true_h"],
                abs_tol=1e-8,
            )
    sims = 0
    for k, r in enumerate(oc["routes"]):
        rw = f"{w}.routes[{k}]"
        sims += _audit_route(A, rw, r, reps, eff, design, learned)
    stats["simulated"] += sims
    stats["blocks"] += 1


def _check_prob(A: _Auditor, w: str, what: str, fig: Any, reps: int) -> float:
    p = _fv(fig)
    A.true(
        w,
        f"{what}: a count over {reps} replicates, MCSE sqrt(p(1 − p)/R)",
        _is_number(p)
        and abs(p * reps - round(p * reps)) < 1e-6 * max(1, reps)
        and fig.get("replicates") == reps
        and _close(math.sqrt(max(p * (1 - p), 0.0) / reps), fig.get("mcse") or 0.0, 1e-12, 1e-9),
        f"k/{reps} with MCSE {math.sqrt(max(p * (1 - p), 0) / reps):.6g}",
        f"{p} with MCSE {fig.get('mcse')} (R {fig.get('replicates')})",
    )
    return float(p)


def _audit_route(
    A: _Auditor,
    rw: str,
    r: dict[str, Any],
    reps: int,
    eff: bool,
    design: _Design,
    learned: _Learned,
) -> int:
    kind = r.get("route")
    labels = _ROUTE_LABELS.get(str(kind))
    if labels is None:
        A.true(rw + ".route", "a known route", False, "eprocess / sprt / fixed_n", kind)
        return 0
    pv = r["p_verdict"]
    A.eq(rw + ".p_verdict", "verdict labels of the route", list(labels), list(pv))
    p = {
        lab: _check_prob(A, f"{rw}.p_verdict.{lab}", f"P({lab})", pv[lab], reps)
        for lab in labels
        if lab in pv
    }
    A.num(
        rw + ".p_verdict",
        "verdict probabilities sum to 1",
        1.0,
        math.fsum(p.values()),
        abs_tol=1e-9,
    )
    if kind == "eprocess":
        issued = p.get(labels[0], 0) + p.get(labels[1], 0) + p.get(labels[2], 0)
        wrong = p.get(labels[0], 0) if not eff else p.get(labels[1], 0) + p.get(labels[2], 0)
    elif kind == "sprt":
        issued = p.get("EFFECT", 0) + p.get("NO_EFFECT", 0)
        wrong = p.get("EFFECT", 0) if not eff else p.get("NO_EFFECT", 0)
    else:
        issued = 1.0
        wrong = p.get("EFFECT", 0) if not eff else p.get("NO_EFFECT", 0)
    for key, val in (
        ("p_wrong", wrong),
        ("p_verdict_issued", issued),
        ("p_correct", issued - wrong),
    ):
        got = _check_prob(A, f"{rw}.{key}", key, r[key], reps)
        A.num(
            f"{rw}.{key}",
            f"{key} from the verdict probabilities and effect_exists={eff}",
            val,
            got,
            abs_tol=1e-9,
        )
    # roots
    cap, mx = r["cap"], r["max_roots"]
    mean_roots = float(_fv(r["mean_roots"]))
    q = {k: _fv(v) for k, v in r["roots_quantiles"].items()}
    raw: list[Any] = [q.get("q50"), q.get("q90"), q.get("q99")]
    qs = [float(x) if _is_number(x) else math.nan for x in raw]
    integral = all(x.is_integer() for x in qs)
    A.true(
        rw + ".roots_quantiles",
        "q50 ≤ q90 ≤ q99 ≤ max ≤ cap, integral order statistics",
        integral and qs[0] <= qs[1] <= qs[2] <= mx <= cap,
        f"≤ max {mx} ≤ cap {cap}",
        raw,
    )
    A.true(
        rw + ".mean_roots",
        "1 ≤ mean roots ≤ max ≤ cap",
        1 <= mean_roots <= mx <= cap,
        f"[1, {mx}]",
        mean_roots,
    )
    if kind == "fixed_n":
        A.true(
            rw + ".mean_roots",
            "fixed-n runs exactly its n",
            mean_roots == cap == mx,
            cap,
            mean_roots,
        )
        if design.fixed_n is not None:
            A.eq(rw + ".cap", "fixed-n roots of the design", design.fixed_n, cap)
    elif design.cap is not None:
        A.eq(rw + ".cap", "the design's cap", design.cap, cap)
    # cost lines
    mt, ht, tt = (
        float(_fv(r[k])) for k in ("mean_model_touches", "mean_human_touches", "mean_touches")
    )
    mc, hc, tc = (float(_fv(r[k])) for k in ("mean_model_cost", "mean_human_cost", "mean_cost"))
    A.num(rw + ".mean_touches", "touches re-summed: model + human", mt + ht, tt, abs_tol=1e-9)
    A.num(rw + ".mean_cost", "cost re-summed: model + human", mc + hc, tc, abs_tol=1e-9)
    learned.add(_CostRow(design, str(kind), rw, mean_roots, mt, ht, mc, hc, tc))
    for key, num_v in (("cost_per_valid_verdict", tc), ("touches_per_valid_verdict", tt)):
        fig = r.get(key)
        if issued == 0:
            A.eq(rw + "." + key, f"{key}: none when no verdict is issued", None, fig)
        else:
            A.num(
                rw + "." + key,
                f"{key} = mean / P(issued)",
                num_v / issued,
                _fv(fig),
                abs_tol=1e-9,
                rel_tol=1e-9,
            )
    return (
        sum(1 for v in r.values() if isinstance(v, dict) and v.get("basis") == "simulated")
        + sum(1 for v in pv.values() if isinstance(v, dict))
        + len(r["roots_quantiles"])
    )


def _oc_unverified(A: _Auditor, where: str, stats: dict[str, int]) -> None:
    if stats["blocks"]:
        A.unverified(
            where,
            f"{stats['simulated']} simulated figures in {stats['blocks']} scenario blocks "
            "(verdict probabilities, roots, touches, costs)",
            "simulated probabilities cannot be re-derived independently (a second simulation "
            "agrees only within Monte Carlo error); their sums, MCSEs, caps and cost lines "
            "were checked",
        )


# ---- SPRT exact cells (verdict kind) --------------------------------------------------------


def _audit_sprt_exact(A: _Auditor, res: dict[str, Any]) -> None:
    s = res["sprt_exact"]
    c = res["construct"]
    w = "results.json $.sprt_exact"
    A.num(w + ".p0", "p0 = the human baseline", c["human_baseline_rate"], s["p0"], abs_tol=0)
    A.num(
        w + ".p1",
        "p1 = the rate at the governing threshold",
        c["p1_at_threshold"],
        s["p1"],
        abs_tol=0,
    )
    A.num(
        w + ".alpha",
        "alpha = the per-side error 2 × per-tail alpha",
        2 * c["per_tail_alpha"],
        s["alpha"],
        abs_tol=1e-15,
    )
    p0, p1, al, be = s["p0"], s["p1"], s["alpha"], s["beta"]
    la, lb = math.log((1 - be) / al), math.log(be / (1 - al))
    up, dn = math.log(p1 / p0), math.log((1 - p1) / (1 - p0))
    A.num(w + ".log_a", "ln A = ln((1 − β)/α)", la, s["log_a"], abs_tol=1e-12)
    A.num(w + ".log_b", "ln B = ln(β/(1 − α))", lb, s["log_b"], abs_tol=1e-12)
    A.num(w + ".step_success", "ln(p1/p0)", up, s["step_success"], abs_tol=1e-12)
    A.num(w + ".step_failure", "ln((1 − p1)/(1 − p0))", dn, s["step_failure"], abs_tol=1e-12)
    horizon = int(s["horizon"])
    h0 = _sprt_recursion(la, lb, up, dn, p0, horizon)
    h1 = _sprt_recursion(la, lb, up, dn, p1, horizon)
    A.num(
        w + ".actual_alpha",
        "P(accept H1 | p0) by recursion",
        h0.p_upper,
        _fv(s["actual_alpha"]),
        abs_tol=1e-10,
    )
    A.num(
        w + ".actual_beta",
        "P(accept H0 | p1) by recursion",
        h1.p_lower,
        _fv(s["actual_beta"]),
        abs_tol=1e-10,
    )
    A.num(
        w + ".asn_h0",
        "E[min(N, horizon)] under H0 by recursion",
        h0.asn,
        _fv(s["asn_h0"]),
        abs_tol=1e-7,
    )
    A.num(
        w + ".asn_h1",
        "E[min(N, horizon)] under H1 by recursion",
        h1.asn,
        _fv(s["asn_h1"]),
        abs_tol=1e-7,
    )
    big_a, big_b = math.exp(la), math.exp(lb)
    oc0 = (big_a - 1) / (big_a - big_b)  # Wald's OC at h = 1 (p0) and h = −1 (p1)
    oc1 = (1 / big_a - 1) / (1 / big_a - 1 / big_b)
    wald0 = (oc0 * lb + (1 - oc0) * la) / (p0 * up + (1 - p0) * dn)
    wald1 = (oc1 * lb + (1 - oc1) * la) / (p1 * up + (1 - p1) * dn)
    A.num(
        w + ".wald_asn_h0",
        "Wald's ASN under H0 (closed form, h = 1)",
        wald0,
        _fv(s["wald_asn_h0"]),
        abs_tol=1e-9,
    )
    A.num(
        w + ".wald_asn_h1",
        "Wald's ASN under H1 (closed form, h = −1)",
        wald1,
        _fv(s["wald_asn_h1"]),
        abs_tol=1e-9,
    )
    for key, mine in (("n_quantiles_h0", h0), ("n_quantiles_h1", h1)):
        A.eq(
            w + "." + key,
            "quantiles of N by recursion",
            {k: v for k, v in mine.quantiles.items() if v is not None},
            s[key],
        )
    beyond = max(h0.beyond, h1.beyond)
    A.num(
        w + ".mass_beyond_horizon",
        "P(N > horizon) by recursion",
        beyond,
        s["mass_beyond_horizon"],
        abs_tol=1e-300,
        rel_tol=1e-6,
    )
    table = _binomial_enumeration(p0, p1, al, 1, 1000)
    fixed = _fv(s["fixed_n_exact"])
    power = s.get("fixed_n_power", res.get("fixed_n_power"))
    if _is_number(power):  # the target is recorded: both sizes re-derived exactly
        first = next((i + 1 for i, row in enumerate(table) if row.power >= power), None)
        A.eq(
            w + ".fixed_n_exact",
            f"first n whose exact binomial power reaches {power} (enumeration)",
            first,
            fixed,
        )
        if isinstance(res.get("fixed_n_roots"), int):
            A.eq(
                "results.json $.fixed_n_roots",
                f"two-proportion n at one-sided 2 × per-tail alpha and power {power}",
                _two_prop_n(c["governing_threshold_h"], al, power, 1),
                res["fixed_n_roots"],
            )
    elif isinstance(fixed, int) and 2 <= fixed <= 1000:
        # the target power is not in results.json: check that n is a first crossing of SOME
        # target that also gives the verdict's closed-form fixed n (the same fixed_n_power)
        below = max(row.power for row in table[: fixed - 1])
        at = table[fixed - 1].power
        lo, hi = below, at
        fixed_roots = res.get("fixed_n_roots")
        h = c["governing_threshold_h"]
        if isinstance(fixed_roots, int):
            # powers π with ceil(2((z_{1−α} + z_π)/h)²) == fixed_roots
            def z_needed(n: float) -> float:
                return float(math.sqrt(n / 2.0) * h - _z(1 - al))

            lo = max(lo, _ncdf(z_needed(fixed_roots - 1)))
            hi = min(hi, _ncdf(z_needed(fixed_roots)))
        A.true(
            w + ".fixed_n_exact",
            "fixed-n exact binomial is a first crossing for a target power that also gives "
            "the closed-form fixed_n_roots",
            lo < hi,
            f"a power in ({lo:.6f}, {hi:.6f}]",
            fixed,
        )
        A.unverified(
            w + ".fixed_n_exact",
            "the fixed-n route's target power",
            "fixed_n_power is not in results.json; only the bracket above is checked",
        )
    else:
        A.true(w + ".fixed_n_exact", "fixed-n exact n in [2, 1000]", False, "[2, 1000]", fixed)


# ==============================================================================================
# The OC kinds
# ==============================================================================================


def _audit_verdict(A: _Auditor, res: dict[str, Any]) -> None:
    c = res["construct"]
    name = "verdict"
    two_j = 2 * res["judges_per_root"]
    n_h = res["human_judgments_per_root"]
    A.eq(
        "results.json $.touches_per_root",
        "touches per root = 2J + human judgments",
        two_j + n_h,
        res["touches_per_root"],
    )
    design = _Design(
        name=name,
        human_rate=c["human_baseline_rate"],
        two_j=two_j,
        n_h=n_h,
        fixed_touches=0.0,
        fixed_cost=0.0,
        total_price=res["cost_per_root"],
        sheets=[{"baseline_rate": c["human_baseline_rate"], "lean_h": 1.0, "noise": 0.0}],
        cap=res["cap_roots"],
        fixed_n=res["fixed_n_roots"],
        threshold=c["governing_threshold_h"],
    )
    stats = {"simulated": 0, "blocks": 0}
    learned = _Learned()
    for path, oc in _find_ocs(res):
        _audit_oc(A, path, oc, design, learned, stats)
        A.num(
            "results.json " + path + ".effect_scale",
            "verdict streams: the model rate sits exactly true h above the baseline",
            oc["effect_scale"] + oc["model_shift_h"],
            oc["true_h"],
            abs_tol=1e-12,
        )
    learned.finalize(A)
    _oc_unverified(A, "results.json $.scenarios", stats)
    _audit_sprt_exact(A, res)


def _audit_judges(A: _Auditor, res: dict[str, Any]) -> None:
    c = res["construct"]
    stats = {"simulated": 0, "blocks": 0}
    learned = _Learned()
    n_h = res["human_judgments_per_root"]
    for i, comp in enumerate(res["compositions"]):
        w = f"results.json $.compositions[{i}]"
        judges = comp["judges"]
        j_n = len(judges)
        rho = comp["latent_correlation"]
        A.eq(w + ".nominal_size", "nominal size = number of sheets", j_n, comp["nominal_size"])
        A.num(
            w + ".effective_size",
            "Kish J / (1 + (J − 1)ρ)",
            j_n / (1 + (j_n - 1) * rho),
            _fv(comp["effective_size"]),
            abs_tol=1e-12,
        )
        A.eq(
            w + ".touches_per_root", "2J + human judgments", 2 * j_n + n_h, comp["touches_per_root"]
        )
        model_price = 2.0 * math.fsum(j["cost_per_judgment"] for j in judges)
        human_price = n_h * res["human_cost_per_judgment"]
        A.num(
            w + ".cost_per_root",
            "2 Σ judge prices + human judgments × price",
            model_price + human_price,
            comp["cost_per_root"],
            abs_tol=1e-12,
        )
        design = _Design(
            name=f"composition {i}",
            human_rate=c["human_baseline_rate"],
            two_j=2 * j_n,
            n_h=n_h,
            fixed_touches=0.0,
            fixed_cost=0.0,
            model_price=model_price,
            human_price=human_price,
            total_price=model_price + human_price,
            sheets=judges,
            latent_correlation=rho,
            cap=res["cap_roots"],
        )
        for key in ("effect_present", "effect_absent"):
            _audit_oc(A, f"$.compositions[{i}].{key}", comp[key], design, learned, stats)
        A.true(
            w + ".effect_absent.effect_scale",
            "the effect-absent world has scale 0",
            comp["effect_absent"]["effect_scale"] == 0,
            0,
            comp["effect_absent"]["effect_scale"],
        )
    learned.finalize(A)
    _oc_unverified(A, "results.json $.compositions", stats)


def _sheets_in(res: dict[str, Any]) -> list[dict[str, Any]] | None:
    for key in ("judges", "panel"):
        node = res.get(key)
        if isinstance(node, dict):
            node = node.get("judges")
        if (
            isinstance(node, list)
            and node
            and all(
                isinstance(j, dict) and {"baseline_rate", "lean_h", "noise"} <= set(j) for j in node
            )
        ):
            return node
    return None


def _battery_parameters(A: _Auditor, w: str, row: Any, threshold: float) -> None:
    """The scenario as configured (its parameters) against the scenario as simulated."""
    if not isinstance(row, dict) or not isinstance(row.get("outcome"), dict):
        return
    oc, params = row["outcome"], row.get("parameters") or {}
    fields = {
        "true_h": "true_h",
        "model_shift_h": "model_shift_h",
        "stress_latent_correlation": "latent_correlation",
        "stress_stream_correlation": "stream_correlation",
    }
    for key, target in fields.items():
        if _is_number(params.get(key)):
            A.num(
                f"{w}.outcome.{target}",
                f"the scenario's configured {key}",
                params[key],
                oc[target],
                abs_tol=1e-8,
            )
    base = params.get("stress_base")
    if row.get("scenario") == "registered_alternative" or base == "registered_alternative":
        A.num(
            f"{w}.outcome.true_h",
            "true h exactly at the registered threshold",
            threshold,
            oc["true_h"],
            abs_tol=1e-8,
        )
    if row.get("scenario") in ("null", "confounded") or base == "null":
        A.eq(
            f"{w}.outcome.effect_scale",
            "no effect in this scenario",
            0.0,
            float(oc["effect_scale"]),
        )


def _audit_battery(A: _Auditor, res: dict[str, Any]) -> None:
    c = res["construct"]
    name = "battery"
    sheets = _sheets_in(res)
    two_j = 2 * res["judges_per_root"] if isinstance(res.get("judges_per_root"), int) else None
    n_h = res.get("human_judgments_per_root")
    if two_j is not None and isinstance(n_h, int) and "touches_per_root" in res:
        A.eq(
            "results.json $.touches_per_root",
            "touches per root = 2J + human judgments",
            two_j + n_h,
            res["touches_per_root"],
        )
    scenarios = res.get("scenarios") or []
    if isinstance(res.get("replicates"), int) and isinstance(res.get("block_size"), int):
        reps, block = res["replicates"], res["block_size"]
        if "n_blocks" in res:
            A.eq(
                "results.json $.n_blocks",
                "blocks = ceil(replicates / block size)",
                -(-reps // block),
                res["n_blocks"],
            )
        if "sequential_runs" in res:
            A.eq(
                "results.json $.sequential_runs",
                "sequential runs = scenarios × replicates",
                len(scenarios) * reps,
                res["sequential_runs"],
            )
    design = _Design(
        name=name,
        human_rate=c["human_baseline_rate"],
        two_j=two_j,
        n_h=n_h if isinstance(n_h, int) else None,
        fixed_touches=0.0,
        fixed_cost=0.0,
        total_price=res.get("cost_per_root"),
        sheets=sheets,
        sheets_reason="the battery's judge sheets are not in results.json (only the panel name)",
        latent_correlation=res.get("latent_correlation"),
        cap=res.get("cap_roots"),
        fixed_n=res.get("fixed_n_roots"),
        threshold=c["governing_threshold_h"],
    )
    stats = {"simulated": 0, "blocks": 0}
    learned = _Learned()
    ocs = _find_ocs(res)
    A.true("results.json $.scenarios", "scenario blocks present", bool(ocs), ">= 1", len(ocs))
    for i, row in enumerate(scenarios):
        _battery_parameters(A, f"results.json $.scenarios[{i}]", row, c["governing_threshold_h"])
    for path, oc in ocs:
        _audit_oc(A, path, oc, design, learned, stats)
        if isinstance(res.get("replicates"), int):
            A.eq(
                "results.json " + path + ".replicates",
                "replicates per scenario",
                res["replicates"],
                oc["replicates"],
            )
    learned.finalize(A)
    _oc_unverified(A, "results.json $.scenarios", stats)
    if sheets is None and ocs:
        # one line instead of one per scenario
        A.findings[:] = [
            f
            for f in A.findings
            if not (f.status == "unverified" and f.where.endswith(".mu_model"))
        ]
        A.unverified(
            "results.json $.scenarios[*].outcome.mu_model",
            "model-stream rates from the judge sheets",
            design.sheets_reason,
        )


# ==============================================================================================
# engine
# ==============================================================================================


def _read_jsonl(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line]


def _stream_alphas(
    construction: str, settings: dict[str, Any], a: float
) -> tuple[float, float | None] | None:
    """(per-tail alpha of M and H, of D or None) of a construction, from provenance settings.

    The corners use the per-tail alpha on both streams. The hybrid split is read from
    ``settings.stream_alphas`` when the registered construction is the hybrid, else from a
    ``hybrid_alphas`` pair or the ``hybrid_split`` text; None when it is not recorded.
    """
    if construction == "corners":
        return a, None
    sa = settings.get("stream_alphas")
    if (
        settings.get("construction") == "hybrid"
        and isinstance(sa, dict)
        and _is_number(sa.get("diff"))
        and _is_number(sa.get("model"))
        and sa.get("model") == sa.get("human")
    ):
        return float(sa["model"]), float(sa["diff"])
    pair = settings.get("hybrid_alphas")
    if isinstance(pair, list) and len(pair) == 2 and all(_is_number(x) for x in pair):
        return float(pair[0]), float(pair[1])
    m = re.match(
        r"^M and H at per_tail(?:/(\d+))?, D at per_tail(?:/(\d+))?\b",
        str(settings.get("hybrid_split", "")),
    )
    if m:
        return a / float(m.group(1) or 1), a / float(m.group(2) or 1)
    return None


def _audit_engine(A: _Auditor, res: dict[str, Any], run: Path, prov: dict[str, Any]) -> None:
    settings = prov.get("settings", {})
    rows = _read_jsonl(run / "evidence.jsonl")
    verdict_file = json.loads((run / "verdict.json").read_text(encoding="utf-8"))
    _engine_files_agree(A, res, run, verdict_file)
    _engine_factory(A, res, run, rows)
    _engine_human(A, res)
    _engine_sequential(A, res, rows, settings, verdict_file)
    two_j = 2 * len(rows[0]["model_choices"]) if rows else None
    _engine_costs(A, res, run, rows, two_j)


def _engine_files_agree(
    A: _Auditor, res: dict[str, Any], run: Path, verdict_file: dict[str, Any]
) -> None:
    for key in ("registered", "extension", "comparison"):
        A.eq(
            f"verdict.json $.{key}", "the track as in results.json", res[key], verdict_file.get(key)
        )
    for key in ("instrument_valid", "roots_run", "effective_cap", "evidence_source"):
        A.eq(f"verdict.json $.{key}", f"{key} as in results.json", res[key], verdict_file.get(key))
    validity = json.loads((run / "validity_report.json").read_text(encoding="utf-8"))
    factory = {k: v for k, v in validity.get("factory", {}).items()}
    res_factory = {k: v for k, v in res["factory"].items() if k != "admitted"}
    A.eq("validity_report.json $.factory", "factory block as in results.json", res_factory, factory)
    for key in ("spot_check", "audit", "stream_checks"):
        A.eq(
            f"validity_report.json $.{key}",
            f"{key} as in results.json",
            res[key],
            validity.get(key),
        )
    power = json.loads((run / "power_report.json").read_text(encoding="utf-8"))
    A.eq(
        "power_report.json $.scenarios",
        "power scenarios as in results.json",
        res["power"],
        power.get("scenarios"),
    )
    A.eq(
        "power_report.json $.confound_arms",
        "confound arms as in results.json",
        res["confound_arms"],
        power.get("confound_arms"),
    )


def _engine_factory(
    A: _Auditor, res: dict[str, Any], run: Path, rows: list[dict[str, Any]]
) -> None:
    f = res["factory"]
    w = "results.json $.factory"
    cand, adm = f["n_candidates"], f["n_admitted"]
    A.eq(w + ".n_rejected", "rejected = candidates − admitted", cand - adm, f["n_rejected"])
    A.eq(
        w + ".first_failures",
        "Σ first-failing-gate counts = candidates − admitted",
        cand - adm,
        sum(f["first_failures"].values()),
    )
    A.num(
        w + ".admission_yield",
        "yield = admitted / candidates",
        adm / cand,
        _fv(f["admission_yield"]),
        abs_tol=1e-15,
    )
    ok = all(f["gate_failures"][g] >= f["first_failures"][g] for g in f["gate_names"])
    first_gate = f["gate_names"][0]
    A.true(
        w + ".gate_failures",
        "each gate fails at least its first failures; the first gate's "
        "failures are all first failures",
        ok and f["gate_failures"][first_gate] == f["first_failures"][first_gate],
        "failing ≥ first",
        f["gate_failures"],
    )
    stimuli = _read_jsonl(run / "stimuli.jsonl")
    A.eq("stimuli.jsonl", "one line per admitted stimulus", adm, len(stimuli))
    ids = [s.get("root_id") for s in stimuli]
    A.eq(
        "evidence.jsonl $[*].stimulus_id",
        "roots run in the admitted order",
        ids[: len(rows)],
        [r["stimulus_id"] for r in rows],
    )
    A.unverified(
        w + ".gate_failures",
        "per-gate decisions on the candidates",
        "the rejected candidates are not in the outputs; only the counts' additivity was checked",
    )
    s = res["spot_check"]
    w = "results.json $.spot_check"
    e, conf = s["error_rate"], s["confidence"]
    n = 1
    while (1 - e) ** n > 1 - conf:
        n += 1
    A.eq(w + ".pairs", "smallest n with (1 − e)^n ≤ 1 − confidence", n, s["pairs"])
    A.eq(
        w + ".touches", "touches = pairs × passes", s["pairs"] * s["passes_per_pair"], s["touches"]
    )
    A.num(
        w + ".bound_at_pairs",
        "1 − (1 − confidence)^(1/n)",
        1 - (1 - conf) ** (1 / n),
        _fv(s["bound_at_pairs"]),
        abs_tol=1e-12,
    )
    if n > 1:
        A.num(
            w + ".bound_at_pairs_minus_1",
            "1 − (1 − confidence)^(1/(n − 1))",
            1 - (1 - conf) ** (1 / (n - 1)),
            _fv(s["bound_at_pairs_minus_1"]),
            abs_tol=1e-12,
        )


def _engine_human(A: _Auditor, res: dict[str, Any]) -> None:
    a = res["audit"]
    w = "results.json $.audit"
    k = _fv(a["kappa"])
    lo, hi = _fv(a["ci_low"]), _fv(a["ci_high"])
    A.eq(
        w + ".passed",
        "gate on the point estimate: kappa ≥ kappa_min",
        k >= a["kappa_min"],
        a["passed"],
    )
    A.eq(
        "results.json $.instrument_valid",
        "instrument valid iff the audit passed",
        a["passed"],
        res["instrument_valid"],
    )
    A.eq(w + ".readings", "readings = roots × 2 readers", 2 * a["n_roots"], a["readings"])
    half = (hi - lo) / 2
    if lo > -1 and hi < 1:
        A.num(
            w + ".ci_low",
            "kappa CI = kappa ± z·se (symmetric about kappa)",
            k - half,
            lo,
            abs_tol=1e-12,
        )
    table = a.get("agreement_table")
    if table is None:
        A.unverified(
            w + ".ci_low",
            f"the kappa standard error (implied se {half / _z(0.5 + a['level'] / 2):.6f})",
            "the reader table is not in the outputs; only the symmetry kappa ± z·se was checked",
        )
    else:
        k2, se2 = _kappa_and_se(table)
        A.num(w + ".kappa", "Cohen's kappa from the agreement table", k2, k, abs_tol=1e-12)
        A.num(
            w + ".se",
            "Fleiss–Cohen–Everitt standard error from the table",
            se2,
            a["se"],
            abs_tol=1e-12,
        )
        A.eq(
            w + ".agreement_table",
            "table total = audited roots",
            a["n_roots"],
            sum(sum(row) for row in table),
        )
        zq = _z(0.5 + a["level"] / 2)
        A.num(
            w + ".ci_low",
            "kappa − z·se (clipped at −1)",
            max(-1.0, k2 - zq * se2),
            lo,
            abs_tol=1e-9,
        )
        A.num(
            w + ".ci_high", "kappa + z·se (clipped at 1)", min(1.0, k2 + zq * se2), hi, abs_tol=1e-9
        )
    b = res["baseline"]
    w = "results.json $.baseline"
    p_h, m = b["human_rate"], b["n_per_root"]
    A.num(
        w + ".human_rate",
        "the construct's baseline",
        res["construct"]["human_baseline_rate"],
        p_h,
        abs_tol=0,
    )
    shifted = _phi_inv(_phi(p_h) + b["threshold_h"])
    A.num(w + ".shifted_rate", "sin²((φ(p_H) + h)/2)", shifted, b["shifted_rate"], abs_tol=1e-12)
    A.eq(
        w + ".pilot_touches",
        "pilot roots × judgments per root",
        b["pilot_roots"] * m,
        b["pilot_touches"],
    )
    A.eq(
        w + ".confirmatory_touches",
        "confirmatory roots × judgments per root",
        b["confirmatory_roots"] * m,
        b["confirmatory_touches"],
    )
    A.eq(
        w + ".total_touches",
        "pilot + confirmatory touches",
        b["pilot_touches"] + b["confirmatory_touches"],
        b["total_touches"],
    )
    alpha = b["alpha"]
    A.num(
        w + ".alpha",
        "one-sided level = 2 × per-tail alpha",
        2 * res["construct"]["per_tail_alpha"],
        alpha,
        abs_tol=1e-15,
    )
    roots = b["confirmatory_roots"]
    cf = math.ceil(_binomial_normal_n(shifted, p_h, alpha, b["target_power"], 1) / m)
    A.eq(
        w + ".closed_form_roots",
        "closed-form roots = ceil(normal n / judgments per root)",
        cf,
        _fv(b["closed_form_roots"]),
    )
    table = _binomial_enumeration(shifted, p_h, alpha, 1, roots * m)
    row = table[roots * m - 1]
    crit = row.lower if b["direction"] == "less" else row.upper
    A.eq(
        w + ".critical_value",
        "critical count of the exact one-sided test (enumeration)",
        crit,
        b["critical_value"],
    )
    A.num(
        w + ".achieved_alpha",
        "achieved alpha of that region",
        row.achieved,
        _fv(b["achieved_alpha"]),
    )
    A.num(w + ".exact_power", "exact power at the human rate", row.power, _fv(b["exact_power"]))
    if roots > 1 and b.get("exact_power_below") is not None:
        A.num(
            w + ".exact_power_below",
            "exact power one root below",
            table[(roots - 1) * m - 1].power,
            _fv(b["exact_power_below"]),
        )
    for key, ex in (
        ("simulated_power", row.power),
        ("simulated_power_below", table[(roots - 1) * m - 1].power if roots > 1 else None),
    ):
        fig = b.get(key)
        if fig is None or ex is None:
            continue
        p, mc, reps = _fv(fig), fig["mcse"], fig["replicates"]
        A.num(
            w + f".{key}.mcse",
            "MCSE = sqrt(p(1 − p)/R)",
            math.sqrt(p * (1 - p) / reps),
            mc,
            abs_tol=1e-12,
        )
        zv = (p - ex) / mc if mc else 0.0
        A.true(
            w + f".{key}",
            f"simulated within {_MAX_Z:g} MCSE of our exact power",
            abs(zv) <= _MAX_Z,
            f"|z| <= {_MAX_Z:g} (exact {ex:.6f})",
            f"z = {zv:.2f}",
        )
    A.true(
        w + ".simulated_power",
        "the confirmatory size is the first simulated crossing",
        _fv(b["simulated_power"]) >= b["target_power"]
        and (
            b.get("simulated_power_below") is None
            or _fv(b["simulated_power_below"]) < b["target_power"]
        ),
        f"power(n) ≥ {b['target_power']} > power(n − 1)",
        f"{_fv(b['simulated_power'])} / {_fv(b.get('simulated_power_below'))}",
    )


def _engine_sequential(
    A: _Auditor,
    res: dict[str, Any],
    rows: list[dict[str, Any]],
    settings: dict[str, Any],
    verdict_file: dict[str, Any],
) -> None:
    c = res["construct"]
    w = "evidence.jsonl"
    roots_run = res["roots_run"]
    A.true(
        "results.json $.roots_run",
        "roots run ≤ effective cap ≤ cap",
        roots_run <= res["effective_cap"] <= res["cap_roots"]
        and res["effective_cap"] == min(res["cap_roots"], res["factory"]["n_admitted"]),
        f"≤ {res['effective_cap']} = min(cap, admitted)",
        roots_run,
    )
    A.eq(w, "one evidence row per root run", roots_run, len(rows))
    A.eq(
        w + " $[*].root",
        "roots numbered 1..n",
        list(range(1, len(rows) + 1)),
        [r["root"] for r in rows],
    )
    if not res["instrument_valid"]:
        for key in ("registered", "extension", "comparison"):
            A.eq(
                f"verdict.json $.{key}.verdict",
                "no preference claim when the instrument is invalid",
                "INSTRUMENT_INVALID",
                verdict_file[key]["verdict"],
            )
        return
    if not rows:
        return
    # M and H from the recorded choices
    m_vals, h_vals, first, second = [], [], [], []
    bad_m: list[int] = []
    for r in rows:
        choices = [x for pair in r["model_choices"].values() for x in pair]
        mv = sum(choices) / len(choices)
        first += [pair[0] for pair in r["model_choices"].values()]
        second += [pair[1] for pair in r["model_choices"].values()]
        hv = (sum(r["human_choices"]) / len(r["human_choices"])) if r["human_choices"] else None
        if not (
            _close(mv, r["M"], 1e-12, 0)
            and (
                (hv is None and r["H"] is None) or (hv is not None and _close(hv, r["H"], 1e-12, 0))
            )
        ):
            bad_m.append(r["root"])
        m_vals.append(mv)
        h_vals.append(hv)
    A.true(
        w + " $[*].M,H",
        "M and H = means of the recorded choices",
        not bad_m,
        "all rows",
        f"rows {bad_m[:5]}",
    )
    A.unverified(
        w + " $[*].model_choices",
        "the judges' and humans' choices",
        "simulated evidence (the input of the verdict), not re-derivable",
    )
    sc = res["stream_checks"]
    hv_all = [h for h in h_vals if h is not None]
    A.num(
        "results.json $.stream_checks.model_mean_observed",
        "mean of M over the rows",
        float(np.mean(m_vals)),
        sc["model_mean_observed"],
        abs_tol=1e-12,
    )
    if hv_all:
        A.num(
            "results.json $.stream_checks.human_mean_observed",
            "mean of H over the rows",
            float(np.mean(hv_all)),
            sc["human_mean_observed"],
            abs_tol=1e-12,
        )
    A.num(
        "results.json $.stream_checks.treatment_first_rate",
        "mean first-order choice",
        float(np.mean(first)),
        sc["treatment_first_rate"],
        abs_tol=1e-12,
    )
    A.num(
        "results.json $.stream_checks.treatment_second_rate",
        "mean second-order choice",
        float(np.mean(second)),
        sc["treatment_second_rate"],
        abs_tol=1e-12,
    )
    A.eq(
        "results.json $.stream_checks.complete_pairs",
        "roots with a human judgment",
        len(hv_all),
        sc["complete_pairs"],
    )
    A.num(
        "results.json $.truth_true_h",
        "true h = φ(μ_M) − φ(μ_H)",
        _phi(res["truth_mu_model"]) - _phi(res["truth_mu_human"]),
        res["truth_true_h"],
        abs_tol=1e-12,
    )
    # the e-process, rebuilt
    a = float(settings.get("per_tail_alpha", c["per_tail_alpha"]))
    A.num(
        "provenance.json $.settings.per_tail_alpha",
        "the construct's per-tail alpha",
        c["per_tail_alpha"],
        a,
        abs_tol=0,
    )
    lambdas = np.array(settings.get("lambdas", []), dtype=float)
    weights = np.array(settings.get("weights") or [1.0 / max(lambdas.size, 1)] * lambdas.size)
    if lambdas.size == 0 or weights.size != lambdas.size:
        A.true(
            "provenance.json $.settings.lambdas",
            "the bet grid (lambdas, weights) is recorded",
            False,
            "lambdas and weights",
            settings.get("lambdas"),
        )
        return
    constructions = {
        "registered": settings.get("construction", res["construction"]),
        "extension": settings.get("construction", res["construction"]),
        "comparison": settings.get("comparison_construction", res["comparison_construction"]),
    }
    alphas = {name: _stream_alphas(cons, settings, a) for name, cons in constructions.items()}
    if alphas["registered"] is None:
        A.unverified(
            "verdict.json",
            "the verdict rebuilt from evidence.jsonl",
            "the hybrid's stream alphas are not recorded in provenance settings",
        )
        return
    for name in [n for n, al in alphas.items() if al is None]:
        A.unverified(
            f"verdict.json $.{name}",
            f"the {name} track rebuilt from evidence.jsonl",
            "the hybrid's stream alphas are not recorded in provenance settings",
        )
    mx = np.array(m_vals)
    complete = [i for i, h in enumerate(h_vals) if h is not None]
    hx = np.array([h_vals[i] for i in complete])
    dx = np.array([(m_vals[i] - float(h_vals[i] or 0.0) + 1.0) / 2.0 for i in complete])
    cache: dict[tuple[str, float], tuple[FloatArray, FloatArray]] = {}

    def stream_bounds(name: str, alpha: float) -> tuple[FloatArray, FloatArray]:
        """Bounds per root (index t) of a stream; human and diff carried over incomplete roots."""
        key = (name, alpha)
        if key not in cache:
            if name == "model":
                cache[key] = _confidence_sequence(mx, alpha, lambdas, weights)
            else:
                xs = hx if name == "human" else dx
                lo, hi = (
                    _confidence_sequence(xs, alpha, lambdas, weights)
                    if xs.size
                    else (np.zeros(0), np.ones(0))
                )
                full_lo, full_hi = np.zeros(len(rows)), np.ones(len(rows))
                j = -1
                for t in range(len(rows)):
                    if j + 1 < len(complete) and complete[j + 1] == t:
                        j += 1
                    if j >= 0:
                        full_lo[t], full_hi[t] = lo[j], hi[j]
                if name == "diff":
                    full_lo, full_hi = 2 * full_lo - 1, 2 * full_hi - 1
                cache[key] = (full_lo, full_hi)
        return cache[key]

    def track_series(am: float, ad: float | None) -> dict[str, Any]:
        ml, mh = stream_bounds("model", am)
        hl, hh = stream_bounds("human", am)
        out: dict[str, Any] = {
            "model": (ml, mh),
            "human": (hl, hh),
            "diff": None,
            "error_per_side": 2 * am if ad is None else 4 * am + ad,
        }
        intervals: list[tuple[float, float]] = []
        if ad is None:
            intervals = [_corners(ml[t], mh[t], hl[t], hh[t]) for t in range(len(rows))]
        else:
            dl, dh = stream_bounds("diff", ad)
            out["diff"] = (dl, dh)
            last: tuple[float, float] = (-math.pi, math.pi)
            for t in range(len(rows)):
                iv = _hybrid_interval(ml[t], mh[t], hl[t], hh[t], dl[t], dh[t])
                if iv is not None:
                    last = iv
                intervals.append(last)
        out["h"] = intervals
        return out

    thresholds = {
        "registered": c["governing_threshold_h"],
        "extension": c["extension_minimum_h"],
        "comparison": c["governing_threshold_h"],
    }
    by_alphas: dict[tuple[float, float | None], dict[str, Any]] = {}
    for al in alphas.values():
        if al is not None and al not in by_alphas:
            by_alphas[al] = track_series(*al)
    series = {name: by_alphas[al] for name, al in alphas.items() if al is not None}
    if _is_number(settings.get("error_per_side")):
        A.num(
            "provenance.json $.settings.error_per_side",
            "error per side of the registered construction (4·a_MH + a_D or 2·a)",
            series["registered"]["error_per_side"],
            settings["error_per_side"],
            abs_tol=1e-15,
        )
    cap = res["effective_cap"]
    states: dict[str, list[str]] = {name: [] for name in series}
    reached: dict[str, tuple[str, int]] = {}
    for t in range(len(rows)):
        for name, ser in series.items():
            if name not in reached:
                lo, hi = ser["h"][t]
                v = _classify(
                    lo, hi, thresholds[name], at_cap=(t + 1 == cap and name == "registered")
                )
                if v is not None:
                    reached[name] = (v, t + 1)
            states[name].append(reached[name][0] if name in reached else "CONTINUE")
    stop = reached["registered"][1] if "registered" in reached else cap
    A.eq(
        "results.json $.roots_run",
        "the registered track's verdict (or the cap) stops the run",
        stop,
        roots_run,
    )
    # evidence rows
    reg = series["registered"]
    checks = [
        ("model_bounds", reg["model"], "registered model CS"),
        ("human_bounds", reg["human"], "registered human CS"),
    ]
    if reg["diff"] is not None:
        checks.append(("diff_bounds", reg["diff"], "registered difference CS"))
    n_rows = len(rows)
    for field, (lo_arr, hi_arr), what in checks:
        bad = [
            r["root"]
            for t, r in enumerate(rows)
            if not _conservative(lo_arr[t], hi_arr[t], r[field])
        ]
        A.true(
            f"{w} $[*].{field}",
            f"{what} rebuilt (to {_TOL_BOUND:g}, never narrower)",
            not bad,
            "all rows",
            _bad_rows(bad, rows, field, lo_arr, hi_arr),
        )
    for field, name in (("h_interval", "registered"), ("comparison_h_interval", "comparison")):
        if name not in series:
            continue
        ivs = series[name]["h"]
        bad = [
            r["root"]
            for t, r in enumerate(rows)
            if field in r and not _conservative(ivs[t][0], ivs[t][1], r[field])
        ]
        A.true(
            f"{w} $[*].{field}",
            f"{name} h-interval rebuilt ({constructions[name]})",
            not bad,
            "all rows",
            _bad_rows(
                bad, rows, field, np.array([x[0] for x in ivs]), np.array([x[1] for x in ivs])
            ),
        )
    bad_state = [
        r["root"]
        for t, r in enumerate(rows)
        if any(r["state"].get(name) != states[name][t] for name in series)
    ]
    A.true(
        f"{w} $[*].state",
        "every track's state per root",
        not bad_state,
        "all rows",
        f"rows {bad_state[:5]}",
    )
    base = res["construct"]["human_baseline_rate"]
    logw = np.log(weights)
    bad_e = []
    for t, r in enumerate(rows):
        hist = mx[: t + 1]
        up = _log_e_history(hist, base, lambdas, logw, 1.0)
        dn = _log_e_history(hist, base, lambdas, logw, -1.0)
        if not (
            _close(up, r["log_e_model_above_baseline"], 1e-9, 1e-9)
            and _close(dn, r["log_e_model_below_baseline"], 1e-9, 1e-9)
        ):
            bad_e.append(r["root"])
    A.true(
        f"{w} $[*].log_e_model_*_baseline",
        "log e-values at the baseline (products over the history)",
        not bad_e,
        f"all {n_rows} rows",
        f"rows {bad_e[:5]}",
    )
    # tracks
    for name in series:
        tw = f"verdict.json $.{name}"
        track = verdict_file[name]
        ser = series[name]
        A.eq(
            tw + ".construction",
            "the track's construction",
            constructions[name],
            track["construction"],
        )
        A.num(
            tw + ".threshold_h",
            "the track's threshold",
            thresholds[name],
            track["threshold_h"],
            abs_tol=0,
        )
        verdict, at = reached.get(name, ("NO_VERDICT_WHEN_REGISTERED_STOPPED", None))
        A.eq(tw + ".verdict", "verdict rebuilt from evidence.jsonl", verdict, track["verdict"])
        A.eq(tw + ".roots_at_verdict", "root of the verdict", at, track["roots_at_verdict"])
        t = (at or roots_run) - 1
        A.num(
            tw + ".error_per_side",
            "error per side of the construction",
            ser["error_per_side"],
            track["error_per_side"],
            abs_tol=1e-15,
        )
        for field, key in (
            ("model_bounds", "model"),
            ("human_bounds", "human"),
            ("diff_bounds", "diff"),
        ):
            if ser[key] is None:
                A.eq(tw + "." + field, "no difference CS for the corners", None, track[field])
                continue
            lo_arr, hi_arr = ser[key]
            A.true(
                tw + "." + field,
                f"bounds rebuilt at root {t + 1} (to {_TOL_BOUND:g}, never narrower)",
                _conservative(lo_arr[t], hi_arr[t], track[field]),
                [lo_arr[t], hi_arr[t]],
                track[field],
            )
        iv = ser["h"][t]
        A.true(
            tw + ".h_interval",
            f"h-interval rebuilt at root {t + 1}",
            _conservative(iv[0], iv[1], track["h_interval"]),
            list(iv),
            track["h_interval"],
        )
        # the interval from the printed bounds themselves
        if track.get("model_bounds") and track.get("human_bounds"):
            mb, hb, db = track["model_bounds"], track["human_bounds"], track.get("diff_bounds")
            from_bounds = (
                _corners(mb[0], mb[1], hb[0], hb[1])
                if db is None
                else _hybrid_interval(mb[0], mb[1], hb[0], hb[1], db[0], db[1])
            )
            A.true(
                tw + ".h_interval",
                f"h-interval from the printed bounds ({track['construction']})",
                from_bounds is not None
                and _close(from_bounds[0], track["h_interval"][0], 1e-9, 0)
                and _close(from_bounds[1], track["h_interval"][1], 1e-9, 0),
                from_bounds,
                track["h_interval"],
            )


def _conservative(lo: float, hi: float, found: Any) -> bool:
    if not (isinstance(found, list) and len(found) == 2 and all(_is_number(x) for x in found)):
        return False
    f_lo, f_hi = float(found[0]), float(found[1])
    return (lo - _TOL_BOUND <= f_lo <= lo + _TOL_NARROW) and (
        hi - _TOL_NARROW <= f_hi <= hi + _TOL_BOUND
    )


def _bad_rows(
    bad: list[int], rows: list[dict[str, Any]], field: str, lo: FloatArray, hi: FloatArray
) -> str:
    if not bad:
        return ""
    parts = []
    for root in bad[:3]:
        t = root - 1
        parts.append(
            f"root {root}: {_show(rows[t].get(field))} vs ours [{lo[t]:.12g}, {hi[t]:.12g}]"
        )
    return f"{len(bad)} rows differ; " + "; ".join(parts)


def _engine_costs(
    A: _Auditor, res: dict[str, Any], run: Path, rows: list[dict[str, Any]], two_j: int | None
) -> None:
    c = res["construct"]
    aud, bl = res["audit"], res["baseline"]
    fixed_touches = aud["readings"] + bl["pilot_touches"]
    n_h = bl["n_per_root"]
    design = _Design(
        name="engine",
        human_rate=c["human_baseline_rate"],
        two_j=two_j,
        n_h=n_h,
        fixed_touches=float(fixed_touches),
        sheets=_sheets_in(res),
        sheets_reason="the engine's judge sheets are not in results.json (only mu_model)",
        cap=res["cap_roots"],
        threshold=c["governing_threshold_h"],
    )
    stats = {"simulated": 0, "blocks": 0}
    learned = _Learned()
    for path, oc in _find_ocs(res):
        _audit_oc(A, path, oc, design, learned, stats)
    if design.sheets is None:
        A.findings[:] = [
            f
            for f in A.findings
            if not (f.status == "unverified" and f.where.endswith(".mu_model"))
        ]
        A.unverified(
            "results.json $.power[*].mu_model",
            "model-stream rates from the sheets",
            design.sheets_reason,
        )
    learned.finalize(A)
    _oc_unverified(A, "results.json $.power, $.confound_arms", stats)
    # this run's cost lines
    lines = {x["line"]: x for x in res["costs"]}
    w = "results.json $.costs"
    human_stream = sum(len(r["human_choices"]) for r in rows)
    model_touches = sum(2 * len(r["model_choices"]) for r in rows)
    A.eq(
        "results.json $.human_stream_touches",
        "human judgments in evidence.jsonl",
        human_stream,
        res["human_stream_touches"],
    )
    A.eq(
        "results.json $.model_touches",
        "model judgments in evidence.jsonl",
        model_touches,
        res["model_touches"],
    )
    spot = lines.get("stimulus gate spot-check (human)")
    model = lines.get("model judgments")
    human = lines.get("human layer")
    total = lines.get("total")
    if not (spot and model and human and total):
        A.true(
            w,
            "the four cost lines of this run",
            False,
            "spot-check, model, human, total",
            list(lines),
        )
        return
    A.eq(
        w + "[spot].touches",
        "spot-check touches",
        res["spot_check"]["touches"],
        _fv(spot["touches"]),
    )
    A.num(
        w + "[spot].cost",
        "spot-check cost",
        res["spot_check"]["cost"],
        _fv(spot["cost"]),
        abs_tol=1e-9,
    )
    A.eq(w + "[model].touches", "model touches of the run", model_touches, _fv(model["touches"]))
    price = learned.values.get(("engine", "model_price"))
    if price is not None:
        A.num(
            w + "[model].cost",
            f"roots run × model price per root ({price[1]} from the power report)",
            res["roots_run"] * price[0],
            _fv(model["cost"]),
            abs_tol=1e-9,
        )
    A.eq(
        w + "[human].touches",
        "audit readings + pilot + human stream touches",
        fixed_touches + human_stream,
        _fv(human["touches"]),
    )
    fc = learned.values.get(("engine", "fixed_cost"))
    hp = learned.values.get(("engine", "human_price"))
    if fc is not None and hp is not None and n_h:
        A.num(
            w + "[human].cost",
            "fixed human cost + stream touches × price per judgment "
            "(prices as in the power report)",
            fc[0] + human_stream * hp[0] / n_h,
            _fv(human["cost"]),
            abs_tol=1e-9,
        )
    A.num(
        w + "[total].touches",
        "total touches re-summed",
        sum(float(_fv(x["touches"])) for x in (spot, model, human)),
        _fv(total["touches"]),
        abs_tol=1e-9,
    )
    A.num(
        w + "[total].cost",
        "total cost re-summed",
        math.fsum(float(_fv(x["cost"])) for x in (spot, model, human)),
        _fv(total["cost"]),
        abs_tol=1e-9,
    )
    _engine_csv(A, res, run)


def _engine_csv(A: _Auditor, res: dict[str, Any], run: Path) -> None:
    path = run / "cost_comparison.csv"
    text = path.read_text(encoding="utf-8").splitlines()
    header = text[0].split(",")
    rows = [dict(zip(header, line.split(","), strict=False)) for line in text[1:] if line]
    lines = {x["line"]: x for x in res["costs"]}
    ocs = {oc["scenario"]: oc for oc in res["power"]}
    bad: list[str] = []
    sums: dict[tuple[str, str, str], dict[str, float]] = defaultdict(dict)
    for i, r in enumerate(rows, start=2):
        where = f"line {i} ({r.get('route')}, {r.get('scenario')}, {r.get('line')})"
        if r.get("scenario") == "this run":
            ref = lines.get(r["line"])
            if ref is None or not (
                _printed_match(r["touches"], float(_fv(ref["touches"])))
                and _printed_match(r["cost"], float(_fv(ref["cost"])))
            ):
                bad.append(where)
        else:
            oc = ocs.get(r.get("scenario", ""))
            route = (
                None
                if oc is None
                else next((x for x in oc["routes"] if _route_label(x) == r.get("route")), None)
            )
            keys = {
                "model judgments": ("mean_model_touches", "mean_model_cost"),
                "human layer": ("mean_human_touches", "mean_human_cost"),
                "total": ("mean_touches", "mean_cost"),
            }.get(r.get("line", ""))
            if route is None or keys is None:
                bad.append(where + ": no such route / scenario / line in results.json")
                continue
            t_fig, c_fig = route[keys[0]], route[keys[1]]
            if not (
                _printed_match(r["touches"], _fv(t_fig))
                and _printed_match(r["touches_mcse"], t_fig["mcse"])
                and _printed_match(r["cost"], _fv(c_fig))
                and _printed_match(r["cost_mcse"], c_fig["mcse"])
            ):
                bad.append(where)
        try:
            sums[(r["route"], r["scenario"], "cost")][r["line"]] = float(r["cost"])
            sums[(r["route"], r["scenario"], "touches")][r["line"]] = float(r["touches"])
        except (KeyError, ValueError):
            bad.append(where + ": unreadable number")
    A.true(
        "cost_comparison.csv",
        "every row equals its results.json figure at the printed precision",
        not bad,
        "all rows",
        "; ".join(bad[:4]),
    )
    resum_bad = []
    for key, d in sums.items():
        parts = [v for k, v in d.items() if k != "total"]
        if "total" in d and abs(math.fsum(parts) - d["total"]) > 1.5e-4 * max(len(parts), 1):
            resum_bad.append(f"{key}: {parts} vs total {d['total']}")
    A.true(
        "cost_comparison.csv",
        "totals re-summed from their lines (printed precision)",
        not resum_bad,
        "sums",
        "; ".join(resum_bad[:3]),
    )


# ==============================================================================================
# report.md: tables mapped back, then the sweep
# ==============================================================================================

_NUM = re.compile(r"(?<![\w.])([-+]?)(\d{1,3}(?:,\d{3})+|\d+)(\.\d+)?(?:[eE]([-+]?\d+))?(?!\w)")


@dataclass(frozen=True)
class _Printed:
    value: float
    tol: float
    decimal: bool
    text: str


def _numbers(text: str) -> list[_Printed]:
    out = []
    for m in _NUM.finditer(text.replace("..", " .. ")):
        sign = -1.0 if m.group(1) == "-" else 1.0
        digits = m.group(2).replace(",", "")
        frac = m.group(3) or ""
        exp = int(m.group(4)) if m.group(4) else 0
        value = sign * float(digits + frac) * 10.0**exp
        decimals = len(frac) - 1 if frac else 0
        tol = 0.5 * 10.0 ** (exp - decimals)
        out.append(_Printed(value, tol, bool(frac) or m.group(4) is not None, m.group(0)))
    return out


def _printed_match(text: str, value: Any) -> bool:
    nums = _numbers(str(text))
    return len(nums) == 1 and _is_number(value) and _matches(nums[0], float(value))


def _matches(p: _Printed, v: float) -> bool:
    return abs(p.value - v) <= p.tol * (1 + 1e-9) + 1e-12 * max(1.0, abs(v))


@dataclass(frozen=True)
class _MdTable:
    headers: tuple[str, ...]
    rows: tuple[tuple[str, ...], ...]
    headings: tuple[str, ...]  # active headings, outermost first


def _md_tables(text: str) -> list[_MdTable]:
    lines = text.splitlines()
    heads: dict[int, str] = {}
    tables: list[_MdTable] = []
    rule = re.compile(r"^\|(\s*:?-{3,}:?\s*\|)+\s*$")

    def cells(line: str) -> tuple[str, ...]:
        return tuple(c.strip() for c in line.strip().strip("|").split("|"))

    i = 0
    while i < len(lines):
        line = lines[i]
        m = re.match(r"^(#{1,6})\s+(.*)$", line)
        if m:
            level = len(m.group(1))
            heads = {k: v for k, v in heads.items() if k < level}
            heads[level] = m.group(2).strip()
            i += 1
            continue
        if line.startswith("|") and i + 1 < len(lines) and rule.match(lines[i + 1]):
            header = cells(line)
            j = i + 2
            body = []
            while j < len(lines) and lines[j].startswith("|"):
                body.append(cells(lines[j]))
                j += 1
            tables.append(_MdTable(header, tuple(body), tuple(heads[k] for k in sorted(heads))))
            i = j
            continue
        i += 1
    return tables


class _ReportMapper:
    """Maps the cells of known report tables back to results fields."""

    def __init__(self, A: _Auditor, file: str, res: dict[str, Any]) -> None:
        self.A = A
        self.file = file
        self.res = res
        self.unmapped: list[str] = []
        self.ocs = _find_ocs(res)
        self.seen_headings: set[str] = set()

    def cell(self, title: str, row: str, col: str, text: str, expected: Sequence[Any]) -> None:
        where = f"{self.file} › {title} › row {row!r} › column {col!r}"
        nums = _numbers(text)
        exp = [float(_fv(e)) for e in expected if e is not None]
        if len(nums) != len(exp):
            self.A.record(
                False, where, "printed numbers equal their results fields", _show(exp), text
            )
            return
        bad = [(p.text, e) for p, e in zip(nums, exp, strict=True) if not _matches(p, e)]
        self.A.record(
            not bad,
            where,
            "printed value equals its results field at the printed precision",
            ", ".join(f"{e:.10g}" for _, e in bad) or _show(exp),
            ", ".join(t for t, _ in bad) or text,
        )

    def text(self, title: str, row: str, col: str, printed: str, expected: str) -> None:
        where = f"{self.file} › {title} › row {row!r} › column {col!r}"
        self.A.eq(where, "printed text equals its results field", expected, printed)

    # -- common -------------------------------------------------------------------------------
    def construct(self, t: _MdTable) -> None:
        c = self.res["construct"]
        rows = {
            "human baseline rate": [c["human_baseline_rate"]],
            "threshold h": [c["threshold_h"]],
            "threshold odds ratio (as h at the baseline)": [
                c["threshold_odds_ratio"],
                c["threshold_h_from_odds_ratio"],
            ],
            "governing threshold h (the smaller effect governs)": [c["governing_threshold_h"]],
            "extension minimum h": [c["extension_minimum_h"]],
            "alpha (joint) / per tail / e-boundary": [
                c["alpha"],
                c["per_tail_alpha"],
                c["e_boundary"],
            ],
        }
        for r in t.rows:
            if r[0] in rows:
                self.cell("construct", r[0], "value", r[1], rows[r[0]])
            elif r[0] == "transformation":
                self.text("construct", r[0], "value", r[1], c["transformation"])
            elif r[0] == "metric (direction)":
                self.text("construct", r[0], "value", r[1], f"{c['metric']} ({c['direction']})")
            else:
                self.unmapped.append(f"construct row {r[0]!r}")

    def find_oc(self, headings: tuple[str, ...]) -> tuple[str, dict[str, Any]] | None:
        scen = comp = arm = None
        for h in headings:
            if m := re.match(r"^Scenario `(.+?)`", h):
                scen = m.group(1)
            if m := re.match(r"^Composition `(.+?)`", h):
                comp = m.group(1)
            if m := re.match(r"^Arm `(.+?)`", h):
                arm = m.group(1)
        if arm is not None:
            for i, a in enumerate(self.res.get("confound_arms", [])):
                label = a["confound"] + (
                    f" × {', '.join(a['crossed_with'])}" if a["crossed_with"] else ""
                )
                if label == arm and a.get("outcome") is not None:
                    return f"$.confound_arms[{i}].outcome", a["outcome"]
            return None
        if scen is None:
            return None
        cands = [(p, oc) for p, oc in self.ocs if oc["scenario"] == scen]
        if comp is not None:
            idx = [i for i, cc in enumerate(self.res.get("compositions", [])) if cc["name"] == comp]
            cands = [
                (p, oc) for p, oc in cands if idx and p.startswith(f"$.compositions[{idx[0]}]")
            ]
        if len(cands) != 1:
            return None
        return cands[0]

    def heading(self, headings: tuple[str, ...], found: tuple[str, dict[str, Any]]) -> None:
        h = headings[-1]
        if h in self.seen_headings or not h.startswith("Scenario"):
            return
        self.seen_headings.add(h)
        m = re.search(
            r"— true h (.*?) \(model rate (.*?), human rate (.*?); effect (\w+); "
            r"(\d+) replicates\)",
            h,
        )
        where = f"{self.file} › heading of {self.context(headings)}"
        oc = found[1]
        if not m:
            self.unmapped.append(f"heading {h!r}")
            return
        nums = _numbers(" ".join(m.group(i) for i in (1, 2, 3, 5)))
        exp = [oc["true_h"], oc["mu_model"], oc["mu_human"], oc["replicates"]]
        ok = len(nums) == 4 and all(_matches(p, e) for p, e in zip(nums, exp, strict=True))
        self.A.record(
            ok,
            where,
            "scenario heading: true h, rates, replicates",
            _show(exp),
            ", ".join(p.text for p in nums),
        )
        self.A.eq(
            where,
            "scenario heading: effect exists/absent",
            "exists" if oc["effect_exists"] else "absent",
            m.group(4),
        )

    @staticmethod
    def context(headings: tuple[str, ...]) -> str:
        parts = []
        for h in headings:
            m = re.match(r"^(Scenario|Composition|Arm) `(.+?)`", h)
            if m:
                parts.append(f"{m.group(1).lower()} `{m.group(2)}`")
        return " › ".join(parts) or (headings[-1] if headings else "table")

    def oc_table(self, t: _MdTable) -> None:
        found = self.find_oc(t.headings)
        title = self.context(t.headings)
        if found is None:
            self.A.record(
                False,
                f"{self.file} › {title}",
                "operating-characteristics table belongs to a scenario of results.json",
                "a scenario",
                t.headings,
            )
            return
        self.heading(t.headings, found)
        oc = found[1]
        routes = {_route_label(r): r for r in oc["routes"]}
        for row in t.rows:
            r = routes.get(row[0])
            if r is None:
                self.A.record(
                    False,
                    f"{self.file} › {title} › row {row[0]!r}",
                    "route row exists in results.json",
                    list(routes),
                    row[0],
                )
                continue
            for col, text in zip(t.headers[1:], row[1:], strict=False):
                exp = self.oc_expected(col, r)
                if exp is None:
                    self.unmapped.append(f"column {col!r}")
                    continue
                self.cell(title, row[0], col, text, exp)
                if col == "P(verdict) ± MCSE":
                    labels = re.findall(r"[A-Z][A-Z_]{3,}", text)
                    if labels != list(r["p_verdict"]):
                        self.text(title, row[0], col, " ".join(labels), " ".join(r["p_verdict"]))

    @staticmethod
    def oc_expected(col: str, r: dict[str, Any]) -> list[Any] | None:
        def vm(fig: Any) -> list[Any]:
            return [] if fig is None else [_fv(fig), fig.get("mcse")]

        if col == "P(verdict) ± MCSE":
            return [x for fig in r["p_verdict"].values() for x in vm(fig)]
        q = r["roots_quantiles"]
        return {
            "P(wrong)": vm(r["p_wrong"]),
            "mean roots": vm(r["mean_roots"]),
            "roots q50 / q90 / q99": [q["q50"], q["q90"], q["q99"], r["max_roots"], r["cap"]],
            "mean touches": vm(r["mean_touches"]),
            "mean cost": [r["mean_cost"]],
            "cost per valid verdict": vm(r.get("cost_per_valid_verdict")),
        }.get(col)

    def cost_table(self, t: _MdTable) -> None:
        found = self.find_oc(t.headings)
        title = self.context(t.headings) + " (cost lines)"
        if found is None:
            self.A.record(
                False,
                f"{self.file} › {title}",
                "cost table belongs to a scenario",
                "a scenario",
                t.headings,
            )
            return
        routes = {_route_label(r): r for r in found[1]["routes"]}
        keys = {
            "model judgments (touches)": ("mean_model_touches", True),
            "human layer (touches)": ("mean_human_touches", True),
            "total (touches)": ("mean_touches", True),
            "model judgments (cost)": ("mean_model_cost", False),
            "human layer (cost)": ("mean_human_cost", False),
            "total (cost)": ("mean_cost", False),
        }
        for row in t.rows:
            if row[0] not in keys:
                self.unmapped.append(f"cost line {row[0]!r}")
                continue
            key, with_mcse = keys[row[0]]
            for col, text in zip(t.headers[1:], row[1:], strict=False):
                r = routes.get(col)
                if r is None:
                    self.A.record(
                        False,
                        f"{self.file} › {title} › column {col!r}",
                        "route column exists in results.json",
                        list(routes),
                        col,
                    )
                    continue
                fig = r[key]
                self.cell(
                    title, row[0], col, text, [_fv(fig), fig["mcse"]] if with_mcse else [_fv(fig)]
                )

    def guarantees(self, t: _MdTable) -> None:
        if not self.ocs:
            return
        first = self.ocs[0][1]
        routes = {_route_label(r): r for r in first["routes"]}
        for row in t.rows:
            r = routes.get(row[0])
            if r is None:
                self.A.record(
                    False,
                    f"{self.file} › guarantees › row {row[0]!r}",
                    "route exists in results.json",
                    list(routes),
                    row[0],
                )
            else:
                self.text("guarantees", row[0], "guarantee it carries", row[1], r["guarantee"])

    # -- sizing ---------------------------------------------------------------------------------
    def sizing(self, t: _MdTable) -> bool:
        res = self.res
        arms = {a["name"]: a for a in res["arms"]}
        h = t.headers
        if h[:3] == ("design point", "alpha (two-sided)", "power"):
            points = {d["name"]: d for d in res["design_points"]}
            for r in t.rows:
                d = points.get(r[0])
                if d is None:
                    self.unmapped.append(f"design point {r[0]!r}")
                    continue
                self.cell("design points", r[0], "alpha", r[1], [d["alpha"]])
                self.cell("design points", r[0], "power", r[2], [d["power"]])
            return True
        if h[:4] == ("arm", "design", "test alpha", "n (exact)"):
            for r in t.rows:
                arm = arms.get(r[0])
                s = next((x for x in (arm or {}).get("sizes", []) if x["design"] == r[1]), None)
                if s is None:
                    self.A.record(
                        False,
                        f"{self.file} › t arms › row {r[0]!r}",
                        "arm / design exists",
                        list(arms),
                        r[:2],
                    )
                    continue
                key = f"{r[0]} / {r[1]}"
                sim = s["simulated_power_at_n"]
                exp = [
                    [s["test_alpha"]],
                    [s["n"]],
                    [s["power_at_n"]],
                    [s["power_at_n_minus_1"]],
                    [s["normal_n"]],
                    [sim, sim["mcse"]],
                    [s["simulated_minus_exact_in_mcse"]],
                ]
                for col, text, e in zip(h[2:], r[2:], exp, strict=False):
                    self.cell("t arms", key, col, text, e)
            return True
        if h[:4] == ("arm", "design", "n", "power (exact)"):
            for r in t.rows:
                arm = arms.get(r[0])
                nums = _numbers(r[2])
                n = int(nums[0].value) if nums else -1
                group = "at_current_n" if "(current)" in r[2] else "checks"
                pa = next(
                    (x for x in (arm or {}).get(group, []) if x["design"] == r[1] and x["n"] == n),
                    None,
                )
                if pa is None:
                    self.A.record(
                        False,
                        f"{self.file} › named sizes › row {r[0]!r}",
                        "arm / design / n exists",
                        group,
                        r[:3],
                    )
                    continue
                key = f"{r[0]} / {r[1]} / n {n}"
                sim = pa["simulated_power"]
                z = pa["simulated_minus_exact_in_mcse"]
                exp = [
                    [pa["exact_power"]],
                    [pa["known_variance_power"]],
                    [] if sim is None else [sim, sim["mcse"]],
                    [] if z is None else [z],
                ]
                for col, text, e in zip(h[3:], r[3:], exp, strict=False):
                    self.cell("named sizes", key, col, text, e)
            return True
        if h[:4] == ("arm", "design", "test alpha", "first n (exact)"):
            for r in t.rows:
                m = re.match(r"^(.*) \((\S+) vs (\S+), h (\S+), (\d)-sided\)$", r[0])
                arm = arms.get(m.group(1)) if m else None
                s = next((x for x in (arm or {}).get("sizes", []) if x["design"] == r[1]), None)
                if arm is None or s is None or m is None:
                    self.A.record(
                        False,
                        f"{self.file} › binomial arms › row {r[0]!r}",
                        "arm / design exists",
                        list(arms),
                        r[:2],
                    )
                    continue
                key = f"{arm['name']} / {r[1]}"
                self.cell(
                    "binomial arms",
                    key,
                    "arm",
                    r[0][len(arm["name"]) :],
                    [arm["p0"], arm["p1"], arm["h"], arm["sides"]],
                )
                exp = [
                    [s["test_alpha"]],
                    [s["first_n"]],
                    [s["power_at_first"]],
                    [s["power_at_first_minus_1"]],
                    [s["region_lower"], s["region_upper"]],
                    [s["achieved_alpha"]],
                    [s["stable_n"]],
                    [s["power_at_stable"]],
                    list(s["failing_between"]),
                    [s["normal_n"]],
                ]
                for col, text, e in zip(h[2:], r[2:], exp, strict=False):
                    self.cell("binomial arms", key, col, text, e)
            return True
        if h[:4] == ("arm", "design", "test alpha", "baseline → threshold rate"):
            for r in t.rows:
                arm = arms.get(r[0])
                s = next((x for x in (arm or {}).get("sizes", []) if x["design"] == r[1]), None)
                if arm is None or s is None:
                    self.A.record(
                        False,
                        f"{self.file} › two proportions › row {r[0]!r}",
                        "arm / design exists",
                        list(arms),
                        r[:2],
                    )
                    continue
                key = f"{r[0]} / {r[1]}"
                exp = [
                    [s["test_alpha"]],
                    [arm["p0"], arm["p1"]],
                    [arm["governing_h"]],
                    [s["n_per_group"]],
                    [s["total"]],
                    [s["power_at_n"]],
                ]
                for col, text, e in zip(h[2:], r[2:], exp, strict=False):
                    self.cell("two proportions", key, col, text, e)
                self.text(
                    "two proportions",
                    key,
                    "governing h (from)",
                    r[4].split("(")[-1].rstrip(")"),
                    arm["governs"],
                )
            return True
        return False

    # -- verdict / battery design tables, SPRT ---------------------------------------------------
    def settings(self, t: _MdTable) -> None:
        res = self.res
        known: dict[str, list[Any]] = {
            "cap": [res.get("cap_roots")],
            "human stream": [res.get("human_judgments_per_root")],
            "touches / cost per root (both streams)": [
                res.get("touches_per_root"),
                res.get("cost_per_root"),
            ],
            "fixed-n design": [res.get("fixed_n_roots")],
            "replicates per scenario (seed)": [res.get("replicates"), res.get("seed")],
        }
        if res.get("kind") == "verdict":
            known["model stream"] = [res.get("judges_per_root"), 2]
        else:
            known["model stream"] = [res.get("judges_per_root"), 2, res.get("latent_correlation")]
            known["scenarios × replicates"] = [
                len(res.get("scenarios", [])),
                res.get("replicates"),
                res.get("sequential_runs"),
            ]
            known["blocks (seed)"] = [res.get("n_blocks"), res.get("block_size"), res.get("seed")]
        for r in t.rows:
            if r[0] in known and None not in known[r[0]]:
                self.cell("design", r[0], "value", r[1], known[r[0]])
            elif r[0] == "registered construction (comparison)":
                self.text(
                    "design", r[0], "value", r[1].split(" (")[0], str(res.get("construction"))
                )
            else:
                self.unmapped.append(f"setting {r[0]!r}")

    def sprt(self, t: _MdTable) -> None:
        s = self.res["sprt_exact"]
        rows = {
            "ln A / ln B": [s["log_a"], s["log_b"]],
            "per success / per failure": [s["step_success"], s["step_failure"]],
            "actual alpha": [s["actual_alpha"]],
            "actual beta": [s["actual_beta"]],
            "ASN under H0 (Wald)": [s["asn_h0"], s["wald_asn_h0"]],
            "ASN under H1 (Wald)": [s["asn_h1"], s["wald_asn_h1"]],
            "N quantiles under H0": [
                x for k, v in s["n_quantiles_h0"].items() for x in (float(k), v)
            ],
            "N quantiles under H1": [
                x for k, v in s["n_quantiles_h1"].items() for x in (float(k), v)
            ],
            "fixed-n exact binomial of the same claim": [s["fixed_n_exact"]],
        }
        for r in t.rows:
            if r[0] in rows:
                self.cell("SPRT exact", r[0], "value", r[1], rows[r[0]])
            else:
                self.unmapped.append(f"SPRT row {r[0]!r}")

    # -- judges ---------------------------------------------------------------------------------
    def judges_summary(self, t: _MdTable) -> None:
        comps = {c["name"]: c for c in self.res["compositions"]}
        for r in t.rows:
            comp = comps.get(r[0])
            world = {"effect present": "effect_present", "effect absent": "effect_absent"}.get(r[2])
            if comp is None or world is None:
                self.A.record(
                    False,
                    f"{self.file} › price next to accuracy › row {r[0]!r}",
                    "composition / world exists",
                    list(comps),
                    r[:3],
                )
                continue
            sc = comp[world]
            e = sc["routes"][0]
            key = f"{r[0]} / {r[2]}"

            def vm(fig: Any) -> list[Any]:
                return [] if fig is None else [_fv(fig), fig["mcse"]]

            exp = [
                [comp["nominal_size"], comp["effective_size"]],
                None,
                [sc["true_h"]],
                vm(e["p_correct"]),
                vm(e["p_wrong"]),
                vm(e["p_verdict"]["INCONCLUSIVE"]),
                vm(e["mean_roots"]),
                vm(e["mean_touches"]),
                [e["mean_cost"]],
                vm(e.get("cost_per_valid_verdict")),
            ]
            for col, text, ex in zip(t.headers[1:], r[1:], exp, strict=False):
                if ex is not None:
                    self.cell("price next to accuracy", key, col, text, ex)

    def judge_sheets(self, t: _MdTable) -> None:
        comp_name = next(
            (m.group(1) for h in t.headings if (m := re.match(r"^Composition `(.+?)`", h))), None
        )
        comp = next((c for c in self.res.get("compositions", []) if c["name"] == comp_name), None)
        if comp is None:
            self.A.record(
                False,
                f"{self.file} › judge sheets",
                "composition exists",
                "a composition",
                t.headings,
            )
            return
        sheets = {j["name"]: j for j in comp["judges"]}
        for r in t.rows:
            j = sheets.get(r[0])
            if j is None:
                self.A.record(
                    False,
                    f"{self.file} › {comp_name} sheets › row {r[0]!r}",
                    "judge exists",
                    list(sheets),
                    r[0],
                )
                continue
            exp = [
                [j["baseline_rate"]],
                [j["lean_h"]],
                [j["noise"]],
                [j["position_bias"]],
                [j["cost_per_judgment"]],
            ]
            for col, text, e in zip(t.headers[2:], r[2:], exp, strict=False):
                self.cell(f"{comp_name} sheets", r[0], col, text, e)

    # -- engine ---------------------------------------------------------------------------------
    def tracks(self, t: _MdTable) -> None:
        for r in t.rows:
            track = self.res.get(r[0])
            if not isinstance(track, dict):
                self.A.record(
                    False,
                    f"{self.file} › tracks › row {r[0]!r}",
                    "track exists",
                    "registered / extension / comparison",
                    r[0],
                )
                continue
            exp = [
                None,
                [track["threshold_h"]],
                None,
                [track["roots_at_verdict"]],
                track["h_interval"] or [],
                track["model_bounds"] or [],
                track["human_bounds"] or [],
                track["diff_bounds"] or [],
                [track["error_per_side"]],
            ]
            for col, text, e in zip(t.headers[1:], r[1:], exp, strict=False):
                if e is not None:
                    self.cell("tracks", r[0], col, text, e)
            self.text("tracks", r[0], "verdict", r[3].strip("*"), track["verdict"])
            self.text("tracks", r[0], "construction", r[1], track["construction"])

    def gates(self, t: _MdTable) -> None:
        f = self.res["factory"]
        for r in t.rows:
            if r[0] not in f["gate_failures"]:
                self.A.record(
                    False,
                    f"{self.file} › gates › row {r[0]!r}",
                    "gate exists",
                    f["gate_names"],
                    r[0],
                )
                continue
            self.cell("gates", r[0], "candidates failing", r[1], [f["gate_failures"][r[0]]])
            self.cell("gates", r[0], "first failing gate", r[2], [f["first_failures"][r[0]]])

    def human_layer(self, t: _MdTable) -> None:
        a, b = self.res["audit"], self.res["baseline"]
        rows = {
            "instrument validation (reader reconstruction)": [
                a["n_roots"],
                2,
                a["readings"],
                a["kappa"],
                100 * a["level"],
                a["ci_low"],
                a["ci_high"],
                a["kappa_min"],
            ],
            "preference baseline (powered)": [
                b["pilot_roots"],
                b["pilot_touches"],
                b["confirmatory_roots"],
                b["confirmatory_touches"],
                b["simulated_power"],
                b["simulated_power"]["mcse"],
                b["exact_power"],
                b["closed_form_roots"],
            ],
        }
        for r in t.rows:
            if r[0] in rows:
                self.cell("human layer", r[0], "result", r[1], rows[r[0]])
            else:
                self.unmapped.append(f"human layer row {r[0]!r}")

    def run_costs(self, t: _MdTable) -> None:
        lines = {x["line"]: x for x in self.res["costs"]}
        for r in t.rows:
            x = lines.get(r[0])
            if x is None:
                self.A.record(
                    False,
                    f"{self.file} › run costs › row {r[0]!r}",
                    "cost line exists",
                    list(lines),
                    r[0],
                )
                continue
            self.cell("run costs", r[0], "touches", r[1], [x["touches"]])
            self.cell("run costs", r[0], "cost", r[2], [x["cost"]])

    # -- both constructions side by side (verdict, battery) -------------------------------------
    def construction_comparison(self, t: _MdTable) -> None:
        def vm(fig: Any) -> list[Any]:
            return [] if fig is None else [_fv(fig), fig.get("mcse")]

        for r in t.rows:
            name = re.sub(r" \(boundary null\)$", "", r[0].strip("`"))
            cands = [oc for _, oc in self.ocs if oc["scenario"] == name]
            route = None
            if len(cands) == 1:
                route = next(
                    (
                        x
                        for x in cands[0]["routes"]
                        if x.get("route") == "eprocess" and x.get("construction") == r[2]
                    ),
                    None,
                )
            if route is None:
                self.A.record(
                    False,
                    f"{self.file} › constructions › row {r[0]!r}",
                    "scenario / construction exists in results.json",
                    "one route",
                    f"{len(cands)} scenario(s) named {name!r}",
                )
                continue
            key = f"{name} / {r[2]}"
            exp: dict[str, list[Any]] = {
                "true h": [cands[0]["true_h"]],
                "P(EFFECT_SUPPORTED within the cap)": vm(route["p_verdict"]["EFFECT_SUPPORTED"]),
                "P(wrong verdict)": vm(route["p_wrong"]),
                "median roots": vm(route["roots_quantiles"]["q50"]),
                "mean roots": vm(route["mean_roots"]),
                "cost per valid verdict": vm(route.get("cost_per_valid_verdict")),
            }
            for col, text in zip(t.headers[1:], r[1:], strict=False):
                if col == "construction":
                    continue
                if col not in exp:
                    self.unmapped.append(f"constructions column {col!r}")
                    continue
                self.cell("constructions", key, col, text, exp[col])

    # -- battery --------------------------------------------------------------------------------
    def battery_summary(self, t: _MdTable) -> None:
        rows = {s.get("label", s.get("scenario")): s for s in self.res.get("scenarios", [])}
        for r in t.rows:
            label = r[0].strip("`")
            s = rows.get(label)
            if s is None:
                self.A.record(
                    False,
                    f"{self.file} › summary › row {label!r}",
                    "scenario exists",
                    list(rows),
                    label,
                )
                continue
            oc = s["outcome"]
            routes = {_route_label(x): x for x in oc["routes"]}
            self.cell("summary", label, "true h", r[1], [oc["true_h"]])
            for col, text in zip(t.headers[2:], r[2:], strict=False):
                if ": " not in col:
                    self.unmapped.append(f"summary column {col!r}")
                    continue
                route_label, metric = col.split(": ", 1)
                route = routes.get(route_label)
                exp: list[Any] | None = None
                if route is not None:
                    pv = route["p_verdict"]
                    exp = {
                        "P(verdict)": [x for f in pv.values() for x in (_fv(f), f["mcse"])],
                        "mean roots": [_fv(route["mean_roots"]), route["mean_roots"]["mcse"]],
                        "cost per valid verdict": (
                            []
                            if route.get("cost_per_valid_verdict") is None
                            else [
                                _fv(route["cost_per_valid_verdict"]),
                                route["cost_per_valid_verdict"]["mcse"],
                            ]
                        ),
                        "P(calls the effect)": [
                            _fv(pv.get("EFFECT")),
                            (pv.get("EFFECT") or {}).get("mcse"),
                        ],
                        "P(correct)": [_fv(route["p_correct"]), route["p_correct"]["mcse"]],
                    }.get(metric)
                if exp is None:
                    self.unmapped.append(f"summary column {col!r}")
                    continue
                self.cell("summary", label, col, text, exp)

    # -- dispatch -------------------------------------------------------------------------------
    def table(self, t: _MdTable) -> None:
        h = t.headers
        kind = self.res.get("kind")
        if h == ("field", "value"):
            self.construct(t)
        elif h[:2] == ("route", "P(verdict) ± MCSE"):
            self.oc_table(t)
        elif h[0] == "cost line (mean per run)":
            self.cost_table(t)
        elif h == ("route", "guarantee it carries"):
            self.guarantees(t)
        elif kind == "sizing" and self.sizing(t):
            pass
        elif h == ("setting", "value") and kind in ("verdict", "battery"):
            self.settings(t)
        elif h == ("quantity", "value", "basis") and "sprt_exact" in self.res:
            self.sprt(t)
        elif h[:3] == ("composition", "judges (effective)", "world"):
            self.judges_summary(t)
        elif h[:2] == ("judge", "role"):
            self.judge_sheets(t)
        elif h[:3] == ("track", "construction", "threshold h"):
            self.tracks(t)
        elif h == ("gate", "candidates failing", "first failing gate"):
            self.gates(t)
        elif h == ("function", "result"):
            self.human_layer(t)
        elif h == ("line", "touches", "cost"):
            self.run_costs(t)
        elif h[:3] == ("scenario", "true h", "construction"):
            self.construction_comparison(t)
        elif h[:2] == ("scenario", "true h") and kind == "battery":
            self.battery_summary(t)
        else:
            self.unmapped.append("table [" + " | ".join(h[:3]) + " …]")


def _number_pool(datas: Sequence[Any]) -> list[float]:
    pool: list[float] = []
    for data in datas:
        for _, node in _walk(data, "$"):
            if _is_number(node):
                pool.append(float(node))
            elif isinstance(node, str):
                pool.extend(p.value for p in _numbers(node))
    return sorted(pool)


def _sweep(A: _Auditor, file: str, text: str, pool: list[float]) -> None:
    unmatched = []
    count = 0
    for line_no, line in enumerate(text.splitlines(), start=1):
        for p in _numbers(line):
            if not p.decimal:
                continue
            count += 1
            lo = bisect_left(pool, p.value - p.tol * (1 + 1e-9) - 1e-12 * max(1, abs(p.value)))
            if lo >= len(pool) or not _matches(p, pool[lo]):
                unmatched.append(f"line {line_no}: {p.text}")
    A.record(
        not unmatched,
        f"{file} (sweep of {count} decimal numbers)",
        "every printed decimal equals some number of the folder's JSON at its precision",
        "a match for each",
        "; ".join(unmatched[:6]) + (f" … ({len(unmatched)} in all)" if len(unmatched) > 6 else ""),
    )


def _audit_markdown(
    A: _Auditor, file: str, text: str, res: dict[str, Any], pool: list[float]
) -> None:
    mapper = _ReportMapper(A, file, res)
    for t in _md_tables(text):
        try:
            mapper.table(t)
        except (KeyError, TypeError, IndexError, ValueError, AttributeError) as exc:
            A.record(
                False,
                f"{file} › table [{' | '.join(t.headers[:3])} …]",
                "a known table maps back to results.json",
                "every printed cell has its results field",
                f"{type(exc).__name__}: {exc}",
            )
    if mapper.unmapped:
        seen = sorted(set(mapper.unmapped))
        A.unverified(
            file,
            f"{len(seen)} table part(s) not mapped to results fields: "
            + "; ".join(seen[:6])
            + (" …" if len(seen) > 6 else ""),
            "layout not mapped by the audit; its numbers are covered by the sweep only",
        )
    _sweep(A, file, text, pool)


# ==============================================================================================
# Provenance
# ==============================================================================================

_SHA256_HEX = re.compile(r"[0-9a-f]{64}")
_SAFE_INTEGER = 2**53 - 1  # RFC 8785 numbers are IEEE doubles: larger integers have no one form


def _is_sha256(v: Any) -> bool:
    return isinstance(v, str) and _SHA256_HEX.fullmatch(v) is not None


def _is_int(v: Any) -> bool:
    return isinstance(v, int) and not isinstance(v, bool)


def _expected_commitment(seed: int, config_jcs_sha256: str) -> str:
    """The seed commitment from its definition: SHA-256 of the UTF-8 lines
    ``verdictpack/seed-commitment/v1``, the canonical config's SHA-256 and the decimal seed, each
    ending in a newline (written here again; the audit imports nothing that computed it)."""
    lines = [b"verdictpack/seed-commitment/v1", config_jcs_sha256.encode("ascii"), b"%d" % seed]
    return hashlib.sha256(b"".join(line + b"\n" for line in lines)).hexdigest()


def _es_number(x: float) -> str:
    """ECMAScript's Number::toString of a finite double (RFC 8785 section 3.2.2.3): the shortest
    round-trip digits (Python's repr finds them), placed by the decimal exponent."""
    if x == 0:
        return "0"
    _, digit_tuple, exp = Decimal(repr(abs(x))).as_tuple()
    if not isinstance(exp, int):
        raise ValueError(f"number {x} has no RFC 8785 form")
    all_digits = "".join(map(str, digit_tuple))
    n = exp + len(all_digits)  # value = 0.d1d2... × 10^n
    digits = all_digits.rstrip("0")
    k = len(digits)
    out = "-" if x < 0 else ""
    if k <= n <= 21:
        return out + digits + "0" * (n - k)
    if 0 < n <= 21:
        return out + digits[:n] + "." + digits[n:]
    if -6 < n <= 0:
        return out + "0." + "0" * (-n) + digits
    e = n - 1
    mantissa = digits if k == 1 else digits[0] + "." + digits[1:]
    return out + mantissa + "e" + ("+" if e >= 0 else "-") + str(abs(e))


_JSON_ESCAPES = {'"': '\\"', "\\": "\\\\", "\b": "\\b", "\f": "\\f", "\n": "\\n", "\r": "\\r"}
_JSON_ESCAPES["\t"] = "\\t"


def _es_string(s: str) -> str:
    parts = ['"']
    for ch in s:
        if ch in _JSON_ESCAPES:
            parts.append(_JSON_ESCAPES[ch])
        elif ord(ch) < 0x20:
            parts.append(f"\\u{ord(ch):04x}")
        else:
            parts.append(ch)
    parts.append('"')
    return "".join(parts)


def _canonical_json(value: Any) -> str:
    """RFC 8785 (JSON Canonicalization Scheme) text of a parsed JSON value, written here from the
    RFC: no whitespace, object members sorted by the UTF-16 code units of their names, numbers in
    ECMAScript form, strings with only the mandatory escapes. ValueError where the RFC has no
    form (non-finite numbers, integers beyond 2^53 - 1)."""
    if value is None:
        return "null"
    if value is True:
        return "true"
    if value is False:
        return "false"
    if isinstance(value, int):
        if abs(value) > _SAFE_INTEGER:
            raise ValueError(f"integer {value} has no RFC 8785 form (beyond 2^53 - 1)")
        return str(value)
    if isinstance(value, float):
        if not math.isfinite(value):
            raise ValueError(f"number {value} has no RFC 8785 form")
        return _es_number(value)
    if isinstance(value, str):
        return _es_string(value)
    if isinstance(value, list):
        return "[" + ",".join(_canonical_json(v) for v in value) + "]"
    if isinstance(value, dict):
        keys = sorted(value, key=lambda k: str(k).encode("utf-16-be"))
        return "{" + ",".join(_es_string(k) + ":" + _canonical_json(value[k]) for k in keys) + "}"
    raise ValueError(f"{type(value).__name__} is not a JSON value")


def _audit_provenance(
    A: _Auditor, res: dict[str, Any], prov: dict[str, Any], config: Path | None
) -> None:
    """The seed in results.json and provenance.json agree; the seed commitment is recomputed; the
    config hashes are SHA-256 digests; with the config file, both hashes are recomputed from its
    bytes and its kind and seed are the recorded ones."""
    p = "provenance.json"
    if not A.true(p, "provenance present", bool(prov), "provenance.json", "missing or empty"):
        return
    seed, recorded = res.get("seed"), prov.get("seed")
    A.eq(f"{p} $.seed", "the seed recorded in provenance is results.json $.seed", seed, recorded)
    for key in ("config_sha256", "config_jcs_sha256"):
        v = prov.get(key)
        A.true(f"{p} $.{key}", "a SHA-256 digest", _is_sha256(v), "64 lowercase hex digits", v)
    jcs, commitment = prov.get("config_jcs_sha256"), prov.get("seed_commitment")
    where = f"{p} $.seed_commitment"
    if recorded is None:
        A.eq(where, "no seed, no seed commitment", None, commitment)
    elif _is_int(recorded) and isinstance(jcs, str) and _is_sha256(jcs):
        A.eq(
            where,
            "recomputed from the seed and config_jcs_sha256",
            _expected_commitment(recorded, jcs),
            commitment,
        )
    else:
        A.true(
            where,
            "recomputable",
            False,
            "an integer seed and a well-formed config_jcs_sha256",
            f"seed {_show(recorded)}, config_jcs_sha256 {_show(jcs)}",
        )
    if config is None:
        A.unverified(
            f"{p} $.config_sha256, $.config_jcs_sha256",
            "the config hashes recomputed from the config file",
            "the config file was not given (verdictpack audit RUN_DIR --config FILE)",
        )
        return
    try:
        raw = config.read_bytes()
        data = _load_json_bytes(raw, config.name)
        canonical = _canonical_json(data).encode("utf-8")
    except (OSError, ValueError, UnicodeError) as exc:
        A.true(
            str(config),
            "the config file is JSON with an RFC 8785 form",
            False,
            "a readable JSON config",
            f"{type(exc).__name__}: {exc}",
        )
        return
    A.eq(
        f"{p} $.config_sha256",
        f"SHA-256 of the bytes of {config.name}",
        hashlib.sha256(raw).hexdigest(),
        prov.get("config_sha256"),
    )
    A.eq(
        f"{p} $.config_jcs_sha256",
        f"SHA-256 of the RFC 8785 form of {config.name}",
        hashlib.sha256(canonical).hexdigest(),
        jcs,
    )
    fields = data if isinstance(data, dict) else {}
    A.eq(f"{p} $.seed", f"the seed of {config.name}", fields.get("seed"), recorded)
    A.eq(f"{p} $.kind", f"the kind of {config.name}", fields.get("kind"), prov.get("kind"))


# ==============================================================================================
# Driver
# ==============================================================================================


def _load_json_bytes(raw: bytes, name: str) -> Any:
    def refuse(constant: str) -> Any:
        raise ValueError(f"non-finite number {constant} in {name}")

    return json.loads(raw.decode("utf-8"), parse_constant=refuse)


def _load_json(path: Path) -> Any:
    return _load_json_bytes(path.read_bytes(), path.name)


def audit_run(run_dir: str | Path, config: str | Path | None = None) -> AuditReport:
    """Audit one output folder; never raises for a defect in the folder (it becomes a failure).
    With ``config`` (the config file the folder was made from) its hashes are recomputed too."""
    run = Path(run_dir)
    A = _Auditor()
    kind = "?"
    try:
        res = _load_json(run / "results.json")
        kind = str(res.get("kind", "?"))
        prov = _load_json(run / "provenance.json") if (run / "provenance.json").exists() else {}
        A.eq("provenance.json $.kind", "provenance names the same kind", kind, prov.get("kind"))
        _audit_provenance(A, res, prov, None if config is None else Path(config))
        _audit_figures(A, res, "results.json")
        _audit_construct(A, res)
        handlers: dict[str, Callable[[], None]] = {
            "sizing": lambda: _audit_sizing(A, res),
            "verdict": lambda: _audit_verdict(A, res),
            "judges": lambda: _audit_judges(A, res),
            "battery": lambda: _audit_battery(A, res),
            "engine": lambda: _audit_engine(A, res, run, prov),
        }
        if kind not in handlers:
            A.true("results.json $.kind", "a known kind", False, ", ".join(handlers), kind)
        else:
            handlers[kind]()
        datas: list[Any] = [res]
        for extra in ("verdict.json", "validity_report.json", "power_report.json"):
            if (run / extra).exists():
                datas.append(_load_json(run / extra))
        pool = _number_pool(datas)
        for md in ("report.md", "registered_vs_extension.md"):
            if (run / md).exists():
                _audit_markdown(A, md, (run / md).read_text(encoding="utf-8"), res, pool)
            elif md == "report.md":
                A.true(md, "report present", False, "report.md", "missing")
    except (OSError, ValueError, KeyError, TypeError, IndexError, AttributeError) as exc:
        A.true(
            str(run),
            "the folder could be read completely",
            False,
            "readable outputs",
            f"{type(exc).__name__}: {exc}",
        )
    return AuditReport(str(run), kind, tuple(A.findings))


def _config_name(run_dir: Path) -> Any:
    """The config file name a folder's provenance records (None when unreadable)."""
    try:
        prov = _load_json(run_dir / "provenance.json")
    except (OSError, ValueError):
        return None
    return prov.get("config_name") if isinstance(prov, dict) else None


def _pair_configs(run_dirs: Sequence[Path], configs: Sequence[Path]) -> dict[int, Path]:
    """Which config file each folder is checked against: one folder and one config are paired;
    otherwise a config goes to every folder whose provenance names its file name."""
    for c in configs:
        if not c.is_file():
            raise UsageError(f"verdictpack audit: --config {c}: expected a config file; not found")
    if len(run_dirs) == 1 and len(configs) == 1:
        return {0: configs[0]}
    by_name: dict[str, Path] = {}
    for c in configs:
        if c.name in by_name:
            raise UsageError(
                f"verdictpack audit: --config {c}: two configs named {c.name}; expected one "
                "config per name (a folder is matched by the config_name in its provenance)"
            )
        by_name[c.name] = c
    names = [_config_name(d) for d in run_dirs]
    for name, c in by_name.items():
        if name not in names:
            raise UsageError(
                f"verdictpack audit: --config {c}: no folder's provenance.json names "
                f"config_name {name!r}; expected a config of one of the folders "
                f"({', '.join(str(n) for n in names)})"
            )
    return {i: by_name[n] for i, n in enumerate(names) if isinstance(n, str) and n in by_name}


def audit_runs(
    run_dirs: Sequence[str | Path], configs: Sequence[str | Path] = ()
) -> list[AuditReport]:
    """Audit several folders (UsageError when one does not exist); ``configs``: the config files
    they were made from, matched by :func:`_pair_configs` (a folder without one has its config
    hashes UNVERIFIED)."""
    for d in run_dirs:
        if not Path(d).is_dir():
            raise UsageError(f"verdictpack audit: {d}: expected an output folder; not found")
    dirs = [Path(d) for d in run_dirs]
    paired = _pair_configs(dirs, [Path(c) for c in configs])
    return [audit_run(d, paired.get(i)) for i, d in enumerate(dirs)]


def format_reports(reports: Sequence[AuditReport], verbose: bool = False) -> str:
    out = []
    for r in reports:
        out.append(
            f"audit {r.run_dir} (kind {r.kind}): {r.checks} checks, {r.failed} failed, "
            f"{r.unverified} UNVERIFIED"
        )
        for f in r.findings:
            if verbose or f.status != "pass":
                out.append("  " + f.line())
    checks = sum(r.checks for r in reports)
    failed = sum(r.failed for r in reports)
    unver = sum(r.unverified for r in reports)
    verdict = "AUDIT PASS" if failed == 0 else "AUDIT FAIL"
    out.append(
        f"{verdict}: {len(reports)} folder(s), {checks} checks, {failed} failed, {unver} UNVERIFIED"
    )
    return "\n".join(out) + "\n"


def cli(argv: Sequence[str]) -> int:
    """``verdictpack audit RUN_DIR... [--config FILE]... [--verbose]``: 0 when nothing failed,
    1 otherwise."""

    class _P(argparse.ArgumentParser):
        def error(self, message: str) -> Any:
            raise UsageError(f"{message}\n{self.format_usage().strip()}")

    p = _P(
        prog="verdictpack audit",
        description="Re-derive every headline number of output folders by a second method.",
    )
    p.add_argument("run_dirs", nargs="+", metavar="RUN_DIR")
    p.add_argument(
        "--config",
        action="append",
        default=[],
        metavar="FILE",
        help="the config a folder was made from: its SHA-256 and RFC 8785 hashes are recomputed "
        "(repeatable; matched to folders by the config_name in their provenance)",
    )
    p.add_argument("--verbose", action="store_true", help="print every check, not only failures")
    args = p.parse_args(list(argv))
    reports = audit_runs(args.run_dirs, args.config)
    print(format_reports(reports, args.verbose), end="")
    return 0 if all(r.passed for r in reports) else 1


def _kappa_and_se(table: list[list[int]]) -> tuple[float, float]:
    """Cohen's kappa and its large-sample standard error (Fleiss, Cohen & Everitt 1969),
    written with plain loops over the cells."""
    n = sum(sum(row) for row in table)
    k = len(table)
    p = [[table[i][j] / n for j in range(k)] for i in range(k)]
    rows = [sum(p[i][j] for j in range(k)) for i in range(k)]
    cols = [sum(p[i][j] for i in range(k)) for j in range(k)]
    po = sum(p[i][i] for i in range(k))
    pe = sum(rows[i] * cols[i] for i in range(k))
    kappa = (po - pe) / (1 - pe)
    total = 0.0
    for i in range(k):
        for j in range(k):
            if i == j:
                total += p[i][i] * (1 - (rows[i] + cols[i]) * (1 - kappa)) ** 2
            else:
                total += (1 - kappa) ** 2 * p[i][j] * (cols[i] + rows[j]) ** 2
    total -= (kappa - pe * (1 - kappa)) ** 2
    return kappa, math.sqrt(max(total, 0.0) / (n * (1 - pe) ** 2))
