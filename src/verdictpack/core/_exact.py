"""Exact statistics for sizing: t power, exact binomial regions, arcsine power.

Everything here is a pure function of its arguments (the one simulator takes a
``numpy.random.Generator``). Results are small frozen dataclasses of plain numbers; the sizing
layer wraps them in :class:`~verdictpack._results.Quantity` objects (``exact`` for the t and
binomial figures, ``closed_form`` for the normal approximations, ``simulated`` for
:func:`simulate_t_power`, see :meth:`SimPower.figure`).

Definitions (docs/statistics.md §2 and §3):

* φ(p) = 2·asin(√p); Cohen's h = φ(p1) − φ(p0); inverse p = sin²(φ/2) — the effect scales are
  in :mod:`verdictpack.core._scales`.
* One-sample / paired t: df = n − 1, noncentrality dz·√n, both rejection tails counted when
  two-sided. The lower tail is computed as ``nct.sf(c, df, -nc)``: scipy's
  ``nct.cdf(-c, df, nc)`` returns NaN once the noncentrality exceeds about 8.
* Exact one-sample binomial: critical values from the null distribution only; two-sided tests use
  equal tails α/2, each found separately. Exact power is saw-toothed in n, so sizing reports both
  the first n reaching the target and the stable n from which every larger n (up to the horizon)
  is powered.

Bad arguments raise :class:`~verdictpack._errors.InputError`; a non-finite number coming back from
scipy raises ``RuntimeError`` naming the inputs (a bug, never silently clipped).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, Literal

import numpy as np
from numpy.typing import NDArray
from scipy import special

from verdictpack._errors import InputError
from verdictpack._results import Quantity, simulated
from verdictpack._validate import finite_real, int_at_least, is_int, open_unit


def _scipy_stats() -> Any:
    """scipy.stats, imported on first use: it costs ~0.4 s, and only sizing needs it."""
    import scipy.stats

    return scipy.stats


__all__ = [
    "MAX_BINOMIAL_HORIZON",
    "MAX_EXACT_SIZE",
    "BinomialRegion",
    "BinomialSize",
    "SimPower",
    "TSize",
    "binomial_normal_n",
    "binomial_power",
    "binomial_region",
    "binomial_sample_size",
    "normal_n_t",
    "simulate_t_power",
    "t_power",
    "t_sample_size",
    "two_proportion_n",
    "two_proportion_power",
]

Direction = Literal["greater", "less"]

# Upper bound on the number of normal draws held in memory at once by simulate_t_power.
_SIM_CHUNK_DRAWS = 1 << 20


# --------------------------------------------------------------------------------------------
# Argument validation
# --------------------------------------------------------------------------------------------


def _sides(value: Any) -> int:
    if not is_int(value) or int(value) not in (1, 2):
        raise InputError("sides", "1 or 2", value)
    return int(value)


def _direction(value: Any) -> Direction:
    if value == "greater":
        return "greater"
    if value == "less":
        return "less"
    raise InputError("direction", '"greater" or "less"', value)


def _nonzero(name: str, value: Any) -> float:
    allowed = "a finite nonzero number"
    x = finite_real(name, value, allowed)
    if x == 0.0:
        raise InputError(name, allowed, value)
    return x


def _finite(value: float, what: str, **inputs: Any) -> float:
    """Refuse a non-finite number from scipy: an internal error, never silently clipped."""
    if not math.isfinite(value):
        detail = ", ".join(f"{k}={v!r}" for k, v in inputs.items())
        raise RuntimeError(f"internal error: {what} is {value!r} for {detail}")
    return value


def _z(q: float) -> float:
    return float(special.ndtri(q))


def _z_upper(alpha: float, sides: int) -> float:
    """z_{1−α/sides}; InputError naming ``alpha`` when 1 − α/sides rounds to 1 (z infinite)."""
    z = _z(1.0 - alpha / sides)
    if not math.isfinite(z):
        raise InputError(
            "alpha",
            "an alpha whose normal quantile z(1 - alpha/sides) is finite (alpha/sides of at "
            "least about 1e-16: below that 1 - alpha/sides rounds to 1)",
            alpha,
        )
    return z


# Sizes are exact integers: a closed-form size beyond 2^53 is refused, not rounded.
MAX_EXACT_SIZE = 2**53


def _ceil_square(ratio: float, factor: float, parameter: str, received: Any) -> int:
    """ceil(factor·ratio²) as an exact integer size; InputError naming ``parameter`` when the
    size is not finite or beyond 2^53 (``ratio ** 2`` itself would overflow)."""
    size = factor * (ratio * ratio) if math.isfinite(ratio) else math.inf
    if not size <= MAX_EXACT_SIZE:
        raise InputError(
            parameter,
            f"a value giving a finite sample size (this one needs about {size:.3g}, beyond "
            f"2^53 = {MAX_EXACT_SIZE:.3g})",
            received,
        )
    return math.ceil(size)


# --------------------------------------------------------------------------------------------
# One-sample / paired t
# --------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class TSize:
    """Exact t sample size: the smallest n >= 2 whose exact power reaches the target.

    ``power_at_n_minus_1`` shows that n − 1 fails; it is None when n == 2 (df would be 0).
    ``normal_n`` is the normal-approximation size (a closed-form figure).
    """

    n: int
    power_at_n: float
    power_at_n_minus_1: float | None
    normal_n: int


@dataclass(frozen=True)
class SimPower:
    """Simulated power with its Monte Carlo standard error √(p(1−p)/R)."""

    power: float
    mcse: float
    replicates: int

    def figure(self) -> Quantity:
        """The power as a ``simulated`` Quantity."""
        return simulated(self.power, self.mcse, self.replicates)


def _t_power(n: int, dz: float, alpha: float, sides: int) -> float:
    """Exact t power for already-validated arguments."""
    df = n - 1
    nc = dz * math.sqrt(n)
    c = float(_scipy_stats().t.ppf(1.0 - alpha / sides, df))
    _finite(c, "the t critical value", n=n, dz=dz, alpha=alpha, sides=sides)
    if sides == 1:
        power = float(_scipy_stats().nct.sf(c, df, abs(nc)))
    else:
        upper = float(_scipy_stats().nct.sf(c, df, nc))
        # P(T < -c) under noncentrality nc equals P(T > c) under -nc; nct.cdf(-c, df, nc) is NaN
        # for nc beyond about 8 in scipy (docs/statistics.md §3), nct.sf is stable.
        lower = float(_scipy_stats().nct.sf(c, df, -nc))
        power = upper + lower
    return _finite(power, "the exact t power", n=n, dz=dz, alpha=alpha, sides=sides)


def t_power(n: int, dz: float, alpha: float, sides: int) -> float:
    """Exact power of the one-sample (or paired) t test from the noncentral t.

    df = n − 1, noncentrality dz·√n, critical value c = t.ppf(1 − alpha/sides, df). Two-sided
    power counts both rejection tails; one-sided means a test in the direction of dz at level
    alpha (dz == 0 gives power alpha).
    """
    n_ = int_at_least("n", n, 2)
    dz_ = finite_real("dz", dz)
    alpha_ = open_unit("alpha", alpha)
    sides_ = _sides(sides)
    _z_upper(alpha_, sides_)
    return _t_power(n_, dz_, alpha_, sides_)


def normal_n_t(dz: float, alpha: float, power: float, sides: int) -> int:
    """Normal-approximation size ceil(((z_{1−α/sides} + z_power)/dz)²) (closed form)."""
    dz_ = _nonzero("dz", dz)
    alpha_ = open_unit("alpha", alpha)
    power_ = open_unit("power", power)
    sides_ = _sides(sides)
    return _normal_n_t(dz_, alpha_, power_, sides_)


def _normal_n_t(dz: float, alpha: float, power: float, sides: int) -> int:
    z_sum = _z_upper(alpha, sides) + _z(power)
    return _ceil_square(z_sum / abs(dz), 1.0, "dz", dz)


def t_sample_size(dz: float, alpha: float, power: float, sides: int, n_max: int = 100_000) -> TSize:
    """Smallest n >= 2 whose exact t power reaches ``power``.

    The walk starts at the normal-approximation n and steps down while n − 1 still reaches the
    target, or up until n does (t power is monotone in n for fixed dz). InputError naming
    ``n_max`` when no n <= n_max reaches the target.
    """
    dz_ = _nonzero("dz", dz)
    alpha_ = open_unit("alpha", alpha)
    power_ = open_unit("power", power)
    sides_ = _sides(sides)
    n_max_ = int_at_least("n_max", n_max, 2)
    normal = _normal_n_t(dz_, alpha_, power_, sides_)

    def too_small(required_above: int) -> InputError:
        return InputError(
            "n_max",
            f"an integer large enough to reach power {power_} (more than {required_above} needed)",
            n_max,
        )

    n = min(max(2, normal), n_max_)
    p = _t_power(n, dz_, alpha_, sides_)
    if p >= power_:
        while n > 2:
            below = _t_power(n - 1, dz_, alpha_, sides_)
            if not below >= power_:
                break
            n, p = n - 1, below
    else:
        while not p >= power_:
            if n >= n_max_:
                raise too_small(n_max_)
            n += 1
            p = _t_power(n, dz_, alpha_, sides_)
    p_minus = _t_power(n - 1, dz_, alpha_, sides_) if n > 2 else None
    return TSize(n=n, power_at_n=p, power_at_n_minus_1=p_minus, normal_n=normal)


def simulate_t_power(
    n: int,
    dz: float,
    alpha: float,
    sides: int,
    replicates: int,
    rng: np.random.Generator,
) -> SimPower:
    """Monte Carlo power of the t test with the variance estimated from each sample.

    Each replicate draws n differences ~ Normal(dz, 1), forms the one-sample t statistic
    mean / (sd/√n) with the sample sd (ddof 1) and rejects against the t critical value (two-sided:
    |t| >= c; one-sided: in the direction of dz, the upper tail when dz == 0). Draws are made in
    whole-replicate chunks in replicate order, so the result does not depend on the chunk size.
    """
    n_ = int_at_least("n", n, 2)
    dz_ = finite_real("dz", dz)
    alpha_ = open_unit("alpha", alpha)
    sides_ = _sides(sides)
    reps = int_at_least("replicates", replicates, 1)
    if not isinstance(rng, np.random.Generator):
        raise InputError("rng", "a numpy.random.Generator", repr(rng))
    _z_upper(alpha_, sides_)
    c = float(_scipy_stats().t.ppf(1.0 - alpha_ / sides_, n_ - 1))
    sign = -1.0 if dz_ < 0 else 1.0
    chunk = max(1, _SIM_CHUNK_DRAWS // n_)
    rejected = 0
    done = 0
    root_n = math.sqrt(n_)
    while done < reps:
        m = min(chunk, reps - done)
        x = rng.standard_normal((m, n_))
        x += dz_
        t_stat = x.mean(axis=1) / (x.std(axis=1, ddof=1) / root_n)
        reject = np.abs(t_stat) >= c if sides_ == 2 else sign * t_stat >= c
        rejected += int(np.count_nonzero(reject))
        done += m
    p = rejected / reps
    return SimPower(power=p, mcse=math.sqrt(p * (1.0 - p) / reps), replicates=reps)


# --------------------------------------------------------------------------------------------
# One-sample exact binomial
# --------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class BinomialRegion:
    """Rejection region of the exact binomial test at size n.

    Reject when X <= ``lower`` or X >= ``upper``; a None end rejects nothing on that side (either
    because the test is one-sided or because no count is extreme enough at this n).
    ``achieved_alpha`` is the exact null probability of the region (<= the nominal alpha).
    """

    n: int
    lower: int | None
    upper: int | None
    achieved_alpha: float

    def describe(self) -> str:
        """The region as text, e.g. ``X ≤ 79 or X ≥ 116``."""
        parts = []
        if self.lower is not None:
            parts.append(f"X ≤ {self.lower}")
        if self.upper is not None:
            parts.append(f"X ≥ {self.upper}")
        return " or ".join(parts) if parts else "never reject"


@dataclass(frozen=True)
class BinomialSize:
    """Exact binomial sample size with its saw-tooth.

    ``first_n``: the first n whose exact power reaches the target. ``stable_n``: the smallest n
    from which every n up to ``n_max`` (the search horizon) is powered. ``failing_between``: the n
    strictly between them whose power falls below the target. ``normal_n``: closed-form size.
    """

    first_n: int
    stable_n: int
    n_max: int
    failing_between: tuple[int, ...]
    power_at_first: float
    power_at_first_minus_1: float | None
    power_at_stable: float
    region_at_first: BinomialRegion
    region_at_stable: BinomialRegion
    normal_n: int


def _binom_sf(k: Any, n: Any, p: float) -> NDArray[np.float64]:
    """P(X > k) for X ~ Binomial(n, p), elementwise (scipy.special: no scipy.stats import)."""
    k_arr, n_arr = np.broadcast_arrays(np.asarray(k, dtype=np.float64), np.asarray(n))
    inside = (k_arr >= 0) & (k_arr < n_arr)
    safe_k = np.where(inside, k_arr, 0.0)
    val = special.bdtrc(safe_k, n_arr, p)
    return np.asarray(np.where(k_arr < 0, 1.0, np.where(inside, val, 0.0)), dtype=np.float64)


def _binom_cdf(k: Any, n: Any, p: float) -> NDArray[np.float64]:
    """P(X <= k) for X ~ Binomial(n, p), elementwise."""
    k_arr, n_arr = np.broadcast_arrays(np.asarray(k, dtype=np.float64), np.asarray(n))
    inside = (k_arr >= 0) & (k_arr < n_arr)
    safe_k = np.where(inside, k_arr, 0.0)
    val = special.bdtr(safe_k, n_arr, p)
    return np.asarray(np.where(k_arr < 0, 0.0, np.where(inside, val, 1.0)), dtype=np.float64)


def _normal_guess(ns: NDArray[np.int64], p0: float, q: float) -> NDArray[np.float64]:
    """The q-quantile of Binomial(n, p0) by the normal approximation (a starting point only)."""
    guess = ns * p0 + float(special.ndtri(q)) * np.sqrt(ns * p0 * (1.0 - p0))
    return np.asarray(guess, dtype=np.float64)


def _upper_critical(ns: NDArray[np.int64], p0: float, a: float) -> NDArray[np.int64]:
    """Smallest c in [1, n + 1] with P0(X >= c) <= a, per n (n + 1 means never reject)."""

    def tail(c: NDArray[np.int64]) -> NDArray[np.float64]:  # P0(X >= c) = sf(c - 1)
        return _binom_sf(c - 1, ns, p0)

    guess = np.floor(_normal_guess(ns, p0, 1.0 - a)) + 1.0
    guess = np.where(np.isfinite(guess), guess, ns + 1.0)
    c = np.clip(guess, 1, ns + 1).astype(np.int64)
    # scipy's quantile is only a starting point: fix it up against the tail itself.
    while True:
        move = (c <= ns) & (tail(c) > a)
        if not move.any():
            break
        c = c + move
    while True:
        below = np.maximum(c - 1, 1)
        move = (c > 1) & (tail(below) <= a)
        if not move.any():
            break
        c = c - move
    return c


def _lower_critical(ns: NDArray[np.int64], p0: float, a: float) -> NDArray[np.int64]:
    """Largest c in [−1, n − 1] with P0(X <= c) <= a, per n (−1 means never reject)."""

    def tail(c: NDArray[np.int64]) -> NDArray[np.float64]:  # P0(X <= c)
        return _binom_cdf(c, ns, p0)

    guess = np.floor(_normal_guess(ns, p0, a)) - 1.0
    guess = np.where(np.isfinite(guess), guess, -1.0)
    c = np.clip(guess, -1, ns - 1).astype(np.int64)
    while True:
        move = (c >= 0) & (tail(c) > a)
        if not move.any():
            break
        c = c - move
    while True:
        above = np.minimum(c + 1, ns)
        move = (c < ns - 1) & (tail(above) <= a)
        if not move.any():
            break
        c = c + move
    return c


def _regions(
    ns: NDArray[np.int64], p0: float, alpha: float, sides: int, direction: Direction
) -> tuple[NDArray[np.int64], NDArray[np.int64]]:
    """(lower, upper) critical values per n with sentinels −1 / n + 1 for 'no rejection'."""
    a = alpha / sides
    if sides == 2 or direction == "less":
        lower = _lower_critical(ns, p0, a)
    else:
        lower = np.full_like(ns, -1)
    upper = _upper_critical(ns, p0, a) if sides == 2 or direction == "greater" else ns + 1
    return lower, upper


def _region_probability(
    ns: NDArray[np.int64], lower: NDArray[np.int64], upper: NDArray[np.int64], p: float
) -> NDArray[np.float64]:
    """P_p(X <= lower) + P_p(X >= upper) per n (the sentinels contribute 0)."""
    low = np.where(lower >= 0, _binom_cdf(lower, ns, p), 0.0)
    high = np.where(upper <= ns, _binom_sf(upper - 1, ns, p), 0.0)
    total = np.asarray(low + high, dtype=np.float64)
    if not np.all(np.isfinite(total)):
        raise RuntimeError(f"internal error: non-finite binomial tail for p={p!r}")
    return total


def _as_region(n: int, lower: int, upper: int, achieved: float) -> BinomialRegion:
    return BinomialRegion(
        n=n,
        lower=lower if lower >= 0 else None,
        upper=upper if upper <= n else None,
        achieved_alpha=achieved,
    )


def binomial_region(
    n: int, p0: float, alpha: float, sides: int, direction: str = "greater"
) -> BinomialRegion:
    """Exact rejection region of the one-sample binomial test of p0 at size n.

    sides 1, "greater": upper = smallest c with P0(X >= c) <= alpha; "less": lower = largest c with
    P0(X <= c) <= alpha. sides 2: both, each at alpha/2 (``direction`` is then irrelevant).
    """
    return _as_region(*_region_at(n, p0, (), alpha, sides, direction))


def binomial_power(
    n: int, p0: float, p1: float, alpha: float, sides: int, direction: str = "greater"
) -> float:
    """Exact power at true rate p1 of the region :func:`binomial_region` returns."""
    return _region_at(n, p0, (p1,), alpha, sides, direction)[3]


def _region_at(
    n: int, p0: float, p1: tuple[float, ...], alpha: float, sides: int, direction: str
) -> tuple[int, int, int, float]:
    """The arguments of :func:`binomial_region` / :func:`binomial_power` checked (n, p0, p1
    when given, alpha, sides, direction): (n, lower, upper, the region's probability at p1, or
    at p0 when no p1 is given)."""
    n_ = int_at_least("n", n, 1)
    rates = [open_unit("p0", p0), *(open_unit("p1", p) for p in p1)]
    alpha_ = open_unit("alpha", alpha)
    sides_ = _sides(sides)
    direction_ = _direction(direction)
    ns = np.array([n_], dtype=np.int64)
    lower, upper = _regions(ns, rates[0], alpha_, sides_, direction_)
    achieved = float(_region_probability(ns, lower, upper, rates[-1])[0])
    return n_, int(lower[0]), int(upper[0]), achieved


def binomial_normal_n(p0: float, p1: float, alpha: float, power: float, sides: int) -> int:
    """Normal-approximation size ceil(((z_a·√(p0q0) + z_b·√(p1q1)) / |p1 − p0|)²).

    z_a = z_{1−α/sides}, z_b = z_power (closed form).
    """
    return _binomial_normal_n(*_size_args(p0, p1, alpha, power, sides))


def _size_args(
    p0: float, p1: float, alpha: float, power: float, sides: int
) -> tuple[float, float, float, float, int]:
    """The arguments of the binomial sample sizes, checked in this order."""
    p0_ = open_unit("p0", p0)
    p1_ = open_unit("p1", p1)
    if p1_ == p0_:
        raise InputError("p1", "a rate different from p0", p1)
    return p0_, p1_, open_unit("alpha", alpha), open_unit("power", power), _sides(sides)


def _binomial_normal_n(p0: float, p1: float, alpha: float, power: float, sides: int) -> int:
    za = _z_upper(alpha, sides)
    zb = _z(power)
    num = za * math.sqrt(p0 * (1.0 - p0)) + zb * math.sqrt(p1 * (1.0 - p1))
    return _ceil_square(num / abs(p1 - p0), 1.0, "p1", p1)


# binomial_sample_size holds ~10 arrays over its horizon: at most ~320 MB at this bound.
MAX_BINOMIAL_HORIZON = 4_000_000


def binomial_sample_size(
    p0: float,
    p1: float,
    alpha: float,
    power: float,
    sides: int,
    n_max: int | None = None,
) -> BinomialSize:
    """Exact one-sample binomial sample size, first crossing and stable n.

    The direction is inferred: "greater" when p1 > p0, "less" when p1 < p0 (it matters only
    for sides == 1). Exact power is computed for every n in [1, n_max] at once.

    Horizon rule: ``n_max`` defaults to max(2·normal_n, normal_n + 200), where normal_n is
    :func:`binomial_normal_n`. ``stable_n`` is relative to that horizon: every n in
    [stable_n, n_max] reaches the target. InputError naming ``n_max`` when the target is not
    reached by n_max, or when n_max itself is underpowered (no stable n inside the horizon).
    """
    p0_, p1_, alpha_, power_, sides_ = _size_args(p0, p1, alpha, power, sides)
    normal = _binomial_normal_n(p0_, p1_, alpha_, power_, sides_)
    horizon = max(2 * normal, normal + 200) if n_max is None else int_at_least("n_max", n_max, 1)
    if horizon > MAX_BINOMIAL_HORIZON:
        raise InputError(
            "p1" if n_max is None else "n_max",
            f"a search horizon of at most {MAX_BINOMIAL_HORIZON:,} sizes (every size is held in "
            f"memory at once; this alternative needs {horizon:,}, closed-form n {normal:,})",
            p1 if n_max is None else n_max,
        )
    direction: Direction = "greater" if p1_ > p0_ else "less"

    ns = np.arange(1, horizon + 1, dtype=np.int64)
    lower, upper = _regions(ns, p0_, alpha_, sides_, direction)
    powers = _region_probability(ns, lower, upper, p1_)
    ok = powers >= power_
    if not ok.any():
        raise InputError("n_max", f"a horizon large enough to reach power {power_}", horizon)
    if not ok[-1]:
        raise InputError(
            "n_max",
            f"a horizon whose last n reaches power {power_} (so a stable n exists)",
            horizon,
        )
    first_i = int(np.argmax(ok))
    failing = np.flatnonzero(~ok)
    stable_i = int(failing[-1]) + 1 if failing.size and failing[-1] > first_i else first_i
    between = tuple(int(ns[i]) for i in failing if first_i < i < stable_i)

    def region_at(i: int) -> BinomialRegion:
        achieved = float(
            _region_probability(ns[i : i + 1], lower[i : i + 1], upper[i : i + 1], p0_)[0]
        )
        return _as_region(int(ns[i]), int(lower[i]), int(upper[i]), achieved)

    return BinomialSize(
        first_n=int(ns[first_i]),
        stable_n=int(ns[stable_i]),
        n_max=horizon,
        failing_between=between,
        power_at_first=float(powers[first_i]),
        power_at_first_minus_1=float(powers[first_i - 1]) if first_i > 0 else None,
        power_at_stable=float(powers[stable_i]),
        region_at_first=region_at(first_i),
        region_at_stable=region_at(stable_i),
        normal_n=normal,
    )


# --------------------------------------------------------------------------------------------
# Two independent proportions on the arcsine scale (Cohen's h)
# --------------------------------------------------------------------------------------------


def two_proportion_n(h: float, alpha: float, power: float, sides: int) -> int:
    """Per-group n for two independent proportions differing by Cohen's h (closed form).

    φ(p̂) has variance 1/n, so the difference of two groups of n has variance 2/n and
    n = ceil(2·((z_{1−α/sides} + z_power)/|h|)²) per group (Cohen 1988 ch. 6; R pwr.2p.test,
    statsmodels NormalIndPower with ratio 1).
    """
    h_ = _nonzero("h", h)
    alpha_ = open_unit("alpha", alpha)
    power_ = open_unit("power", power)
    sides_ = _sides(sides)
    z_sum = _z_upper(alpha_, sides_) + _z(power_)
    return _ceil_square(z_sum / abs(h_), 2.0, "h", h)


def two_proportion_power(n: int, h: float, alpha: float, sides: int) -> float:
    """Power of the arcsine z test with n per group (closed form, normal on the φ scale).

    With δ = |h|·√(n/2) and z = z_{1−α/sides}: one-sided (in the direction of h) Φ(δ − z);
    two-sided Φ(δ − z) + Φ(−δ − z), both tails counted.
    """
    n_ = int_at_least("n", n, 2)
    h_ = finite_real("h", h)
    alpha_ = open_unit("alpha", alpha)
    sides_ = _sides(sides)
    z = _z_upper(alpha_, sides_)
    delta = abs(h_) * math.sqrt(n_ / 2.0)
    result = float(special.ndtr(delta - z))
    if sides_ == 2:
        result += float(special.ndtr(-delta - z))
    return _finite(result, "the arcsine power", n=n_, h=h_, alpha=alpha_, sides=sides_)
