"""The self-audit's independent mathematics, written here from docs/statistics.md and never
imported from the package's computations: normal and t quantiles and powers, exact binomial
enumeration, the SPRT recursion, the e-process and confidence sequence (grid, plug-in or blend
bets), the three tracks' series and first verdicts from per-root values, the hybrid h-interval,
the judge-sheet and panel rates, Cohen's kappa and its standard error, and ``_phi`` /
``_phi_inv``."""

from __future__ import annotations

import itertools
import math
from collections import defaultdict
from collections.abc import Callable
from dataclasses import dataclass
from statistics import NormalDist
from typing import Any

import numpy as np
from scipy import integrate, optimize, special

from verdictpack.verify._findings import FloatArray

# ==============================================================================================
# Independent mathematics (written here; nothing imported from the package's computations)
# ==============================================================================================

_ND = NormalDist()


# φ and φ⁻¹ are deliberately NOT imported from verdictpack.core._scales (the package's one
# definition): the self-audit re-derives what the package computed, so it must not share the
# code it checks. tests/core/test_scales.py holds these copies equal to core._scales on a grid.
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


def _t_tail_power(df: int, delta: float, c: float, sides: int) -> float:
    """P(Z + δ > c·S) (+ P(Z − δ > c·S) when two-sided) by quadrature over S = √(V/df),
    V ~ χ²_df: the power of a t test with noncentrality δ and critical value c."""
    k = df / 2.0
    log_norm = k * math.log(2.0) + math.lgamma(k)

    def density_times_rejection(s: float) -> float:
        if s <= 0.0:
            return 0.0
        v = df * s * s
        log_d = math.log(2.0 * df * s) + (k - 1.0) * math.log(v) - v / 2.0 - log_norm
        rej = _ncdf(delta - c * s) + (_ncdf(-delta - c * s) if sides == 2 else 0.0)
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


def _t_power(n: int, dz: float, test_alpha: float, sides: int) -> float:
    """Exact t power of effect size ``dz`` at n (:func:`_t_tail_power`, one-sided: toward the
    effect)."""
    return _t_tail_power(
        n - 1, abs(dz * math.sqrt(n)), _t_critical(test_alpha / sides, n - 1), sides
    )


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


def _bisect(pred: Callable[[float], bool], yes: float, no: float) -> float:
    """Bisection between ``yes`` (``pred`` holds) and ``no`` (it does not): the last ``yes``
    after at most 80 halvings, stopping at a gap of 1e-14 or at floating-point resolution."""
    for _ in range(80):
        mid = 0.5 * (yes + no)
        if mid in (yes, no) or abs(no - yes) < 1e-14:
            break
        yes, no = (mid, no) if pred(mid) else (yes, mid)
    return yes


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

            def rejected(m: float, hist: FloatArray = hist, sign: float = sign) -> bool:
                return _log_e_history(hist, m, lambdas, logw, sign) >= logc

            if sign > 0:  # E⁺ decreases in m: the lower end is the first m with E⁺ < c
                g = int(np.argmax(below))
                if g > 0 and grid[g] > prev:
                    a, b = max(grid[g - 1], prev), float(grid[g])
                    if rejected(a):
                        prev = max(prev, _bisect(rejected, a, b))
            else:  # E⁻ increases in m: the upper end is the last m with E⁻ < c
                g = grid.size - 1 - int(np.argmax(below[::-1]))
                if g < grid.size - 1 and grid[g] < prev:
                    a, b = float(grid[g]), min(float(grid[g + 1]), prev)
                    if rejected(b):
                        prev = min(prev, _bisect(rejected, b, a))
            out[t] = prev
    return lower, upper


# The variance-adaptive bets (docs/statistics.md §5b), written here from the formulas: bet i
# λ̇_i = sqrt(2·log(1/a) / (σ̂²_{i−1}·i·log(1 + i))) from the values before it, truncated at
# c/m (upper process) or c/(1 − m) (lower process); "blend" averages that capital with the grid's;
# "horizon" puts the recorded design N in place of i·log(1 + i).
_BET_CAP = 0.75


def _plugin_bets(xs: FloatArray, alpha: float, horizon: int | None = None) -> FloatArray:
    """The plug-in bets of a stream, one loop: each from the running mean and variance before it
    (``horizon`` N: the horizon bets, N in place of i·log(1 + i))."""
    out = np.empty(xs.size)
    total = dev = 0.0
    for i, x in enumerate(xs.tolist(), start=1):
        var = 0.25 if i == 1 else (0.25 + dev) / i
        scale = i * math.log1p(i) if horizon is None else float(horizon)
        out[i - 1] = math.sqrt(2.0 * math.log(1.0 / alpha) / (var * scale))
        total += x
        dev += (x - (0.5 + total) / (i + 1)) ** 2
    return out


def _adaptive_log_capital(
    xs: FloatArray,
    bets: FloatArray,
    m: float,
    sign: float,
    grid: tuple[FloatArray, FloatArray] | None,
) -> float:
    """log K(m) over the whole history: the plug-in product, or its mean with the grid mixture
    (``grid`` = (lambdas, log weights) for "blend")."""
    room = m if sign > 0 else 1.0 - m
    lam = np.minimum(bets, _BET_CAP / room) if room > 0 else bets
    plug = float(np.log1p(sign * lam * (xs - m)).sum())
    if grid is None:
        return plug
    return float(np.logaddexp(plug, _log_e_history(xs, m, grid[0], grid[1], sign)) - math.log(2))


def _adaptive_sequence(
    xs: FloatArray,
    alpha: float,
    lambdas: FloatArray,
    weights: FloatArray,
    blend: bool,
    horizon: int | None = None,
) -> tuple[FloatArray, FloatArray]:
    """Running lower / upper bounds after each observation with the plug-in (or blend) bets:
    where the capital at the last bound reaches 1/a, bisection on [bound, far end]."""
    logc = -math.log(alpha)
    bets = _plugin_bets(xs, alpha, horizon)
    grid = (lambdas, np.log(weights)) if blend else None
    n = xs.size
    lower, upper = np.zeros(n), np.ones(n)
    bound = [0.0, 1.0]
    for t in range(n):
        hist, bt = xs[: t + 1], bets[: t + 1]
        for side, sign, far in ((0, 1.0, 1.0), (1, -1.0, 0.0)):

            def rejected(
                m: float, sign: float = sign, hist: FloatArray = hist, bt: FloatArray = bt
            ) -> bool:
                return _adaptive_log_capital(hist, bt, m, sign, grid) >= logc

            if not rejected(bound[side]):
                continue
            if rejected(far):
                bound[side] = far
                continue
            bound[side] = _bisect(rejected, bound[side], far)
        lower[t], upper[t] = bound
    return lower, upper


def _stream_sequence(
    xs: FloatArray,
    alpha: float,
    lambdas: FloatArray,
    weights: FloatArray,
    bets: str,
    horizon: int | None = None,
) -> tuple[FloatArray, FloatArray]:
    """The confidence sequence of one stream with the recorded bets (``horizon``: the horizon
    bets' design N)."""
    if bets == "grid":
        return _confidence_sequence(xs, alpha, lambdas, weights)
    n_design = horizon if bets == "horizon" else None
    return _adaptive_sequence(xs, alpha, lambdas, weights, bets == "blend", n_design)


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


def _panel_rate(sheets: list[dict[str, Any]], scale: float, shift: float) -> float:
    """The model stream's rate of a panel of judge sheets: the mean of their rates, in [0, 1]."""
    rates = [_sheet_rate(j["baseline_rate"], j["lean_h"], j["noise"], scale, shift) for j in sheets]
    return min(max(math.fsum(rates) / len(rates), 0.0), 1.0)


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


# ---- the three tracks, rebuilt from (M_i, H_i) ----------------------------------------------


@dataclass(frozen=True)
class _TrackSeries:
    """One construction's bounds and h-interval after each root (index t).

    ``human`` and ``diff`` are carried over roots without H (model stream only); ``diff`` is on
    the M − H scale (None for the corners); ``h`` is the h-interval (the hybrid's last non-empty
    polygon, (−π, π) before the first)."""

    model: tuple[FloatArray, FloatArray]
    human: tuple[FloatArray, FloatArray]
    diff: tuple[FloatArray, FloatArray] | None
    h: list[tuple[float, float]]
    error_per_side: float


def _track_series(
    m_vals: list[float],
    h_vals: list[float | None],
    lambdas: FloatArray,
    weights: FloatArray,
    alphas: dict[str, tuple[float, float | None]],
    m_upper: list[float] | None = None,
    h_upper: list[float | None] | None = None,
    bets: str = "grid",
    horizon: int | None = None,
) -> dict[str, _TrackSeries]:
    """Each named track's series under its (per-tail alpha of M and H, of D or None): the
    confidence sequences of M, of H over the roots holding one and of D = (M − H + 1) / 2 over
    the same roots, combined by the corners (D None) or the hybrid polygon. With bounds
    (``m_upper``, ``h_upper``; ``m_vals``, ``h_vals`` then the lower values) each lower end
    comes from the lower values, each upper end from the upper ones, D's lower end from
    M_lo − H_hi and its upper end from M_hi − H_lo. ``bets`` names the streams' bets (``horizon``
    the horizon bets' N)."""
    n = len(m_vals)
    mu = m_vals if m_upper is None else m_upper
    hu = h_vals if h_upper is None else h_upper
    m_lo, m_hi = np.asarray(m_vals, dtype=float), np.asarray(mu, dtype=float)
    complete = [i for i, h in enumerate(h_vals) if h is not None]
    h_lo = np.array([float(h_vals[i] or 0.0) for i in complete])
    h_hi = np.array([float(hu[i] or 0.0) for i in complete])
    d_lo = (m_lo[complete] - h_hi + 1.0) / 2.0 if complete else np.zeros(0)
    d_hi = (m_hi[complete] - h_lo + 1.0) / 2.0 if complete else np.zeros(0)
    cache: dict[tuple[str, float], tuple[FloatArray, FloatArray]] = {}

    def ends(lo: FloatArray, hi: FloatArray, alpha: float) -> tuple[FloatArray, FloatArray]:
        """The lower end from the lower values, the upper end from the upper values."""
        if not lo.size:
            return np.zeros(0), np.ones(0)
        lower, upper = _stream_sequence(lo, alpha, lambdas, weights, bets, horizon)
        if hi is not lo and not np.array_equal(lo, hi):
            upper = _stream_sequence(hi, alpha, lambdas, weights, bets, horizon)[1]
        return lower, upper

    def stream_bounds(name: str, alpha: float) -> tuple[FloatArray, FloatArray]:
        key = (name, alpha)
        if key not in cache:
            if name == "model":
                cache[key] = ends(m_lo, m_hi, alpha)
            else:
                pair = (h_lo, h_hi) if name == "human" else (d_lo, d_hi)
                lo, hi = ends(pair[0], pair[1], alpha)
                full_lo, full_hi = np.zeros(n), np.ones(n)
                j = -1
                for t in range(n):
                    if j + 1 < len(complete) and complete[j + 1] == t:
                        j += 1
                    if j >= 0:
                        full_lo[t], full_hi[t] = lo[j], hi[j]
                if name == "diff":
                    full_lo, full_hi = 2 * full_lo - 1, 2 * full_hi - 1
                cache[key] = (full_lo, full_hi)
        return cache[key]

    def series(am: float, ad: float | None) -> _TrackSeries:
        ml, mh = stream_bounds("model", am)
        hl, hh = stream_bounds("human", am)
        if ad is None:
            ivs = [_corners(ml[t], mh[t], hl[t], hh[t]) for t in range(n)]
            return _TrackSeries((ml, mh), (hl, hh), None, ivs, 2 * am)
        dl, dh = stream_bounds("diff", ad)
        last: tuple[float, float] = (-math.pi, math.pi)
        ivs = []
        for t in range(n):
            iv = _hybrid_interval(ml[t], mh[t], hl[t], hh[t], dl[t], dh[t])
            if iv is not None:
                last = iv
            ivs.append(last)
        return _TrackSeries((ml, mh), (hl, hh), (dl, dh), ivs, 4 * am + ad)

    by_alphas: dict[tuple[float, float | None], _TrackSeries] = {}
    for al in alphas.values():
        if al not in by_alphas:
            by_alphas[al] = series(*al)
    return {name: by_alphas[al] for name, al in alphas.items()}


def _track_verdicts(
    series: dict[str, _TrackSeries], thresholds: dict[str, float], cap: int
) -> tuple[dict[str, list[str]], dict[str, tuple[str, int]]]:
    """Every track's state after each root (CONTINUE until its first verdict, which it keeps)
    and its first verdict with the root (1-based) it came at; the registered track decides
    INCONCLUSIVE at root ``cap`` when nothing else was reached."""
    n = len(next(iter(series.values())).h) if series else 0
    states: dict[str, list[str]] = {name: [] for name in series}
    reached: dict[str, tuple[str, int]] = {}
    for t in range(n):
        for name, ser in series.items():
            if name not in reached:
                lo, hi = ser.h[t]
                v = _classify(
                    lo, hi, thresholds[name], at_cap=(t + 1 == cap and name == "registered")
                )
                if v is not None:
                    reached[name] = (v, t + 1)
            states[name].append(reached[name][0] if name in reached else "CONTINUE")
    return states, reached
