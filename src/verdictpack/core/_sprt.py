"""Wald's sequential probability ratio test for a Bernoulli rate (docs/statistics.md §9).

H0: p = p0 against H1: p = p1. After n observations with s successes the log-likelihood ratio is
Λ_n = s·ln(p1/p0) + (n − s)·ln((1 − p1)/(1 − p0)); sampling continues while ln B < Λ_n < ln A,
with Wald's boundaries ln A = ln((1 − β)/α) and ln B = ln(β/(1 − α)). H1 is accepted when
Λ_n ≥ ln A, H0 when Λ_n ≤ ln B.

Operating characteristics are computed exactly by dynamic programming over the continuation
region of the (n, s) lattice: the probability mass of every continuing state is carried forward
one observation at a time and the mass crossing each boundary is recorded. The SPRT is open-ended
(N has no upper bound), so the recursion runs to a truncation horizon ``n_max`` and reports the
mass beyond it, P(N > n_max); the average sample number reported is E[min(N, n_max)], which is
E[N] when that mass is negligible. Wald's approximations of the OC and the ASN are given beside
(``closed_form``).

The guarantee of the SPRT holds only at its designed stopping discipline (every observation
checked, stopping at the first crossing); unlike the e-process, it does not survive optional
continuation. The fixed-n exact binomial of the same claim is computed by
:func:`verdictpack.core._exact.binomial_sample_size`.

Anchor (p0 0.5, p1 0.64776, α 0.005, β 0.05): ln A 5.247024, ln B −2.990720, +0.258912 per
success, −0.350296 per failure; exact ASN 67.93 under H0 and 112.77 under H1; actual α 0.00448,
actual β 0.0432; Wald's ASN 64.5 / 109.1.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np
from numpy.typing import ArrayLike, NDArray

from verdictpack._errors import InputError
from verdictpack._results import Quantity, closed_form, exact
from verdictpack._validate import int_at_least, open_interval
from verdictpack.core import _libm

__all__ = [
    "BernoulliSPRT",
    "SPRTOperatingCharacteristics",
    "SPRTPaths",
]

_QUANTILES = (0.5, 0.9, 0.99)
_NEGLIGIBLE_MASS = 1e-300  # the recursion stops early once the continuing mass is below this


def _open_unit(name: str, value: Any, upper: float = 1.0) -> float:
    return open_interval(name, value, 0.0, upper, f"a number strictly between 0 and {upper:g}")


@dataclass(frozen=True)
class SPRTOperatingCharacteristics:
    """Exact operating characteristics of the SPRT at a true rate ``p``, truncated at ``n_max``.

    ``p_accept_h1`` / ``p_accept_h0``: probability of crossing the upper / lower boundary at or
    before ``n_max``; ``p_beyond_horizon`` = P(N > n_max), the mass the truncation leaves open.
    ``asn`` = E[min(N, n_max)]. ``n_quantiles`` maps 0.5, 0.9, 0.99 to the smallest n with
    P(N ≤ n) ≥ q, or None when that n lies beyond the horizon. ``wald_*`` are Wald's classical
    approximations (no overshoot, no truncation).
    """

    p: float
    n_max: int
    p_accept_h1: Quantity
    p_accept_h0: Quantity
    p_beyond_horizon: Quantity
    asn: Quantity
    n_quantiles: dict[str, Quantity | None]
    wald_p_accept_h1: Quantity
    wald_asn: Quantity


@dataclass(frozen=True)
class SPRTPaths:
    """Per-replicate outcome of :meth:`BernoulliSPRT.run`: stopping time and decision.

    ``decision``: +1 accept H1, −1 accept H0, 0 undecided within the observations given (then
    ``n_stop`` is the number of observations, i.e. the horizon).
    """

    n_stop: NDArray[np.int64]
    decision: NDArray[np.int8]


@dataclass(frozen=True)
class BernoulliSPRT:
    """Wald's SPRT of p0 against p1 with nominal error rates α (type I) and β (type II)."""

    p0: float
    p1: float
    alpha: float
    beta: float

    def __post_init__(self) -> None:
        p0 = _open_unit("p0", self.p0)
        p1 = _open_unit("p1", self.p1)
        if p1 == p0:
            raise InputError("p1", "a rate different from p0", self.p1)
        alpha = _open_unit("alpha", self.alpha, 0.5)
        beta = _open_unit("beta", self.beta, 0.5)
        for name, value in (("p0", p0), ("p1", p1), ("alpha", alpha), ("beta", beta)):
            object.__setattr__(self, name, value)

    # -- boundaries and increments -----------------------------------------------------------
    @property
    def log_a(self) -> float:
        """ln A = ln((1 − β)/α): accept H1 at or above."""
        return math.log((1.0 - self.beta) / self.alpha)

    @property
    def log_b(self) -> float:
        """ln B = ln(β/(1 − α)): accept H0 at or below."""
        return math.log(self.beta / (1.0 - self.alpha))

    @property
    def step_success(self) -> float:
        return math.log(self.p1 / self.p0)

    @property
    def step_failure(self) -> float:
        return math.log((1.0 - self.p1) / (1.0 - self.p0))

    @property
    def no_drift_p(self) -> float:
        """p* where the expected increment is 0 (the slowest point; Wald's h = 0)."""
        a, b = self.step_success, self.step_failure
        return -b / (a - b)

    def _llr(self, n: Any, s: Any) -> Any:
        return s * self.step_success + (n - s) * self.step_failure

    # -- exact recursion ----------------------------------------------------------------------
    def _stopping_distribution(
        self, p: float, n_max: int
    ) -> tuple[NDArray[np.float64], NDArray[np.float64], float]:
        """P(stop at n with H1), P(stop at n with H0) for n = 1..n_max, and P(N > n_max)."""
        log_a, log_b = self.log_a, self.log_b
        to_h1 = np.zeros(n_max)
        to_h0 = np.zeros(n_max)
        s_lo = 0  # successes of the first continuing state
        mass = np.ones(1)  # probabilities of the continuing states s_lo, s_lo + 1, ...
        q = 1.0 - p
        for n in range(1, n_max + 1):
            nxt = np.empty(mass.size + 1)
            nxt[:-1] = mass * q
            nxt[-1] = 0.0
            nxt[1:] += mass * p
            s = np.arange(s_lo, s_lo + nxt.size)
            llr = self._llr(n, s)
            up = llr >= log_a
            down = llr <= log_b
            to_h1[n - 1] = nxt[up].sum()
            to_h0[n - 1] = nxt[down].sum()
            keep = np.flatnonzero(~(up | down))  # an interval: Λ is monotone in s
            if keep.size == 0:
                return to_h1, to_h0, 0.0
            mass = nxt[keep[0] : keep[-1] + 1]
            s_lo += int(keep[0])
            if mass.sum() < _NEGLIGIBLE_MASS:
                return to_h1, to_h0, float(mass.sum())
        return to_h1, to_h0, float(mass.sum())

    def exact_operating_characteristics(
        self, p: float, n_max: int = 10_000
    ) -> SPRTOperatingCharacteristics:
        """Exact OC, ASN, truncated mass and quantiles of N at rate p (recursion to n_max)."""
        p_ = _open_unit("p", p)
        horizon = int_at_least("n_max", n_max, 1)
        to_h1, to_h0, beyond = self._stopping_distribution(p_, horizon)
        stop = to_h1 + to_h0
        cdf = np.cumsum(stop)
        ns = np.arange(1, horizon + 1)
        asn = _libm.dot(ns, stop) + horizon * beyond
        quantiles: dict[str, Quantity | None] = {}
        for qv in _QUANTILES:
            hit = np.flatnonzero(cdf >= qv)
            quantiles[f"{qv:g}"] = exact(int(ns[hit[0]])) if hit.size else None
        wald_h1, wald_asn = self.wald_approximations(p_)
        return SPRTOperatingCharacteristics(
            p=p_,
            n_max=horizon,
            p_accept_h1=exact(float(to_h1.sum())),
            p_accept_h0=exact(float(to_h0.sum())),
            p_beyond_horizon=exact(max(beyond, 0.0)),
            asn=exact(asn),
            n_quantiles=quantiles,
            wald_p_accept_h1=closed_form(wald_h1),
            wald_asn=closed_form(wald_asn),
        )

    # -- Wald's approximations ---------------------------------------------------------------
    def wald_approximations(self, p: float) -> tuple[float, float]:
        """Wald's (P(accept H1), ASN) at rate p, ignoring overshoot.

        With h ≠ 0 solving p·e^{h·a} + (1 − p)·e^{h·b} = 1 (a, b the increments), the OC is
        L(p) = P(accept H0) = (A^h − 1)/(A^h − B^h) and ASN = (L·ln B + (1 − L)·ln A)/E[Z];
        at the no-drift point h → 0: L = ln A/(ln A − ln B), ASN = −ln A·ln B/E[Z²].
        """
        p_ = _open_unit("p", p)
        a, b = self.step_success, self.step_failure
        log_a, log_b = self.log_a, self.log_b
        drift = p_ * a + (1.0 - p_) * b
        second = p_ * a * a + (1.0 - p_) * b * b
        if abs(drift) <= 1e-12 * math.sqrt(second):
            oc = log_a / (log_a - log_b)
            return 1.0 - oc, -log_a * log_b / second
        h = self._wald_h(p_, drift)
        if h > 0:  # L = (1 − A^{−h}) / (1 − (B/A)^h)
            oc = -math.expm1(-h * log_a) / -math.expm1(h * (log_b - log_a))
        else:  # L = (e^{h(lnA − lnB)} − e^{−h lnB}) / (e^{h(lnA − lnB)} − 1)
            r = math.exp(h * (log_a - log_b))
            oc = (r - math.exp(-h * log_b)) / (r - 1.0)
        return 1.0 - oc, (oc * log_b + (1.0 - oc) * log_a) / drift

    def _wald_h(self, p: float, drift: float) -> float:
        a, b = self.step_success, self.step_failure

        def psi(h: float) -> float:
            return p * math.exp(h * a) + (1.0 - p) * math.exp(h * b) - 1.0

        sign = 1.0 if drift < 0 else -1.0  # the nonzero root has the sign opposite to E[Z]
        hi = 1.0
        while psi(sign * hi) < 0:
            hi *= 2.0
        lo = hi / 2.0
        while psi(sign * lo) > 0 and lo > 1e-12:
            lo /= 2.0
        from scipy import optimize

        root = optimize.brentq(lambda x: psi(sign * x), lo, hi, xtol=1e-14, rtol=1e-14)
        return sign * float(root)

    # -- vectorised simulation ---------------------------------------------------------------
    def run(self, outcomes: ArrayLike) -> SPRTPaths:
        """Stopping time and decision of every replicate in an (R, n) array of 0/1 outcomes.

        Λ is computed as s·a + (n − s)·b from the running success count (the same arithmetic
        as the exact recursion). Replicates that do not cross within n are undecided.
        """
        x = np.asarray(outcomes)
        if x.ndim != 2 or x.shape[1] == 0 or not np.all((x == 0) | (x == 1)):
            raise InputError(
                "outcomes", "an (R, n) array of 0/1 outcomes with n >= 1", f"shape {x.shape}"
            )
        n = x.shape[1]
        s = np.cumsum(x.astype(np.int64), axis=1)
        llr = self._llr(np.arange(1, n + 1)[None, :], s)
        up = llr >= self.log_a
        stop = up | (llr <= self.log_b)
        first = np.argmax(stop, axis=1)
        stopped = stop[np.arange(x.shape[0]), first]
        n_stop = np.where(stopped, first + 1, n).astype(np.int64)
        went_up = up[np.arange(x.shape[0]), first]
        decision = np.where(stopped, np.where(went_up, 1, -1), 0).astype(np.int8)
        return SPRTPaths(n_stop=n_stop, decision=decision)
