"""The human layer: two different functions, kept apart.

(a) Instrument validation -- the reader-reconstruction audit
------------------------------------------------------------
N roots are each read by two readers. A reader sees a root's stimulus pair and reconstructs which
item carries the manipulated property (a categorical label: binary or k categories). The two
readers' agreement is Cohen's κ (:func:`verdictpack.core._agreement.cohens_kappa`); the audit
passes when the one-sided lower confidence bound of κ (level default 0.95) reaches ``kappa_min``
(:class:`~verdictpack.core._agreement.AuditGate`, default 0.60), never on the point estimate
alone (why: :mod:`verdictpack.core._agreement`). The point estimate and the asymptotic two-sided
interval are reported beside the decision. Cost: 2N readings (touches).
:func:`size_reader_audit` sizes N so that an instrument at the planning κ passes the gate with a
stated probability.

Simulated audit (:func:`simulate_reader_audit`). True labels are uniform on the k categories
(the position of the manipulated item is randomised). Each reader, independently of the other and
of everything else, answers the true label with probability r (``reconstruction_rate``) and
otherwise one of the k − 1 other labels uniformly. Each reader's marginal is then uniform, so the
chance agreement is 1/k, and the observed agreement is

    P_o = r² + (1 − r)² / (k − 1)        (both right, or both wrong on the same wrong label)

so the population κ = (P_o − 1/k) / (1 − 1/k) simplifies to
(:func:`verdictpack.core._agreement.expected_kappa`)

    κ(r, k) = ((k·r − 1) / (k − 1))²

(the numerator k·P_o − 1 = k²r² − 2kr + 1 = (kr − 1)²). Readers at chance (r = 1/k) give κ = 0;
binary readers give κ = (2r − 1)²; r = 0.92 gives 0.7056. Note κ rises again for r < 1/k
(readers consistently wrong still agree). This is the value κ̂ converges to; κ̂ itself carries an
O(1/N) finite-sample bias.

(b) Preference baseline -- the human side of the primary conclusion, powered, never spot-checked
------------------------------------------------------------------------------------------------
:func:`size_human_baseline`: a pilot (pilot_roots × n_per_root judgments, reported as cost, used
to check the assumed baseline and never pooled into the confirmatory test, so the confirmatory
size does not depend on data) plus a confirmatory sample sized by simulation. Model: the
confirmatory judgments are exchangeable Bernoulli(human_rate) draws, so the count over
n roots × n_per_root judgments is Binomial(n·n_per_root, human_rate) and is simulated as one
binomial draw per replicate. Test: one-sided exact binomial test of H0: p = p_s against the side
of the human rate, where p_s = p_from_h(human_rate, threshold_h) is the rate one threshold away on
the arcsine scale (threshold_h > 0: reject when X ≤ c, c the largest count with P_{p_s}(X ≤ c) ≤ α;
threshold_h < 0 mirrors it). Power = P(reject | p = human_rate): the probability that the human
stream can tell the human rate from a rate one threshold away.

With ICC_H (``icc`` > 0, n_per_root = m ≥ 2; docs/statistics.md §11) the votes on a root,
1[W < Φ⁻¹(p)], share a root latent of correlation r = latent_for_icc(human_rate, icc) (floor 0),
held fixed under the null (the humans' heterogeneity does not depend on the rate). One root's
count has pmf q_j(p) = ∫ Binom(j; m, Φ((Φ⁻¹(p) − √r·z)/√(1 − r))) φ(z) dz (:func:`_clustered_pmf`),
n roots' count its n-fold convolution (exact); the test is as above under that null (exact size
with r known), its power simulated as one multinomial(n, q(p_h)) draw of the roots' counts per
replicate; the closed-form size takes Kish's design effect, ceil(N·(1 + (m − 1)·ICC_H)/m).

Bad arguments raise :class:`~verdictpack._errors.InputError`.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Literal

import numpy as np
from numpy.typing import NDArray
from scipy import integrate, signal, special

from verdictpack._errors import InputError
from verdictpack._results import OPTIONAL, Quantity, closed_form, exact
from verdictpack._rng import block_streams
from verdictpack._validate import closed_unit, generator, int_at_least, is_finite_real, open_unit
from verdictpack.core import _libm
from verdictpack.core._agreement import (
    AuditGate,
    KappaResult,
    cohens_kappa,
    expected_kappa,
)
from verdictpack.core._exact import binomial_normal_n, binomial_power, binomial_region
from verdictpack.core._icc import latent_for_icc
from verdictpack.core._scales import p_from_h
from verdictpack.simulate._operating import share_quantity

__all__ = [
    "HumanBaselineSize",
    "ReaderAudit",
    "ReaderAuditSize",
    "simulate_audit_pass_probability",
    "simulate_gate_pass_rate",
    "simulate_reader_audit",
    "size_human_baseline",
    "size_reader_audit",
]


# --------------------------------------------------------------------------------------------
# (a) The reader-reconstruction audit (κ itself: verdictpack.core._agreement)
# --------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class ReaderAudit:
    """One simulated reader-reconstruction audit: the two readers' labels and their κ (the
    model's population κ: :func:`~verdictpack.core._agreement.expected_kappa`)."""

    n_roots: int
    reader_a: tuple[int, ...]
    reader_b: tuple[int, ...]
    kappa: KappaResult


def simulate_reader_audit(
    n_roots: int,
    reconstruction_rate: float,
    rng: np.random.Generator,
    n_categories: int = 2,
    level: float = 0.95,
) -> ReaderAudit:
    """Simulate N roots × 2 readers under the reader model of the module docstring.

    True labels uniform on {0, …, k − 1}; each reader independently gives the true label with
    probability ``reconstruction_rate`` and otherwise one of the other k − 1 labels uniformly.
    Categories are fixed to {0, …, k − 1}. In the (vanishingly rare for N ≳ 10) event that both
    readers use a single identical label throughout, κ is undefined and InputError is raised.
    """
    n = int_at_least("n_roots", n_roots, 2)
    r = closed_unit("reconstruction_rate", reconstruction_rate)
    k = int_at_least("n_categories", n_categories, 2)
    lev = open_unit("level", level)
    gen = generator("rng", rng)
    truth = gen.integers(0, k, size=n)
    answers = []
    for _ in range(2):
        right = gen.random(n) < r
        wrong = (truth + gen.integers(1, k, size=n)) % k
        answers.append(np.where(right, truth, wrong))
    kappa = cohens_kappa(answers[0], answers[1], categories=list(range(k)), level=lev)
    return ReaderAudit(n, tuple(answers[0].tolist()), tuple(answers[1].tolist()), kappa)


def simulate_gate_pass_rate(
    n_roots: int,
    reconstruction_rate: float,
    kappa_min: float,
    rng: np.random.Generator,
    n_categories: int = 2,
    replicates: int = 2000,
    level: float = 0.95,
) -> Quantity:
    """P(the κ gate passes) under the reader model of :func:`simulate_reader_audit`, by
    simulating ``replicates`` whole audits at once (vectorised over audits). The gate is the one
    of :class:`AuditGate`: the lower confidence bound of κ at ``level`` reaches ``kappa_min``. An
    audit whose κ is undefined (both readers on one identical label throughout) fails the gate.

    Memory: when replicates × n_roots exceeds ``_GATE_CELLS`` the audits are simulated in blocks
    of ``_GATE_CELLS // n_roots`` whole audits, each block drawing its labels in the same order
    (true labels, then reader A, then reader B); the same model, other draws than one block."""
    n = int_at_least("n_roots", n_roots, 2)
    r = closed_unit("reconstruction_rate", reconstruction_rate)
    k = int_at_least("n_categories", n_categories, 2)
    reps = int_at_least("replicates", replicates, 100)
    gate = AuditGate(kappa_min, level)
    gen = generator("rng", rng)
    rows = reps if reps * n <= _GATE_CELLS else max(1, _GATE_CELLS // n)
    passed = 0
    for start in range(0, reps, rows):
        passed += _gate_passes(gen, min(rows, reps - start), n, r, k, gate)
    return share_quantity(passed / reps, reps)


# Label cells (audits × roots) held at once by simulate_gate_pass_rate.
_GATE_CELLS = 1 << 23


def _gate_passes(
    gen: np.random.Generator, reps: int, n: int, r: float, k: int, gate: AuditGate
) -> int:
    """How many of ``reps`` simulated audits of n roots pass the gate (lower bound ≥ kappa_min)."""
    truth = gen.integers(0, k, size=(reps, n))
    answers = []
    for _ in range(2):
        right = gen.random((reps, n)) < r
        wrong = (truth + gen.integers(1, k, size=(reps, n))) % k
        answers.append(np.where(right, truth, wrong))
    a, b = answers
    agreements = (a == b).sum(axis=1)
    p_e = sum((a == c).mean(axis=1) * (b == c).mean(axis=1) for c in range(k))
    return gate.passes(agreements, n, p_e)


@dataclass(frozen=True)
class ReaderAuditSize:
    """The reader audit sized so that an instrument at the planning κ passes the bound gate
    with probability ``target_pass_probability``.

    ``planning_kappa`` = κ(r, k) of the reader model at the planning reconstruction rate;
    ``roots``: the first root count (coarse-then-fine seeded search from ``min_roots``) whose
    simulated pass probability reaches the target, ``pass_probability`` there and
    ``pass_probability_below`` one root below (the pass probability is saw-toothed in n: the
    bound moves in steps of one agreement). Each size has its own stream, ``purpose`` +
    "/roots=<n>", so its estimate does not depend on which sizes the search visited.
    ``registered_roots`` / ``pass_probability_registered``: a size fixed by the user instead,
    with its simulated pass probability at the planning κ (None when the sized audit is used).
    ``roots``, ``readings`` and ``pass_probability`` are None when no size can reach the target
    (the planning κ does not exceed ``kappa_min``); only a registered size is then reported.
    """

    planning_rate: float
    planning_kappa: float
    n_categories: int
    kappa_min: float
    level: float
    target_pass_probability: float
    roots: int | None
    readings: int | None
    pass_probability: Quantity | None
    pass_probability_below: Quantity | None
    sizes_evaluated: int
    registered_roots: int | None = None
    pass_probability_registered: Quantity | None = None


def _cells(r: float, k: int) -> NDArray[np.float64]:
    """Cell probabilities of the reader model's k × k table (reader A by rows), flattened:
    P_o / k on the diagonal, (1 − P_o) / (k(k − 1)) off it (by the model's symmetry)."""
    p_o = r * r + (1.0 - r) ** 2 / (k - 1)
    cells = np.full((k, k), (1.0 - p_o) / (k * (k - 1)))
    np.fill_diagonal(cells, p_o / k)
    flat = cells.ravel()
    return np.asarray(flat / flat.sum(), dtype=np.float64)


def simulate_audit_pass_probability(
    n_roots: int,
    reconstruction_rate: float,
    gate: AuditGate,
    seed: int,
    n_categories: int = 2,
    purpose: str = "human/reader-audit-sizing",
    replicates: int = 4000,
) -> Quantity:
    """P(an audit of ``n_roots`` roots passes ``gate``) under the reader model, simulated on
    whole agreement tables (one multinomial draw of the k × k cells per audit, the same law as
    :func:`simulate_gate_pass_rate`'s label draws), seeded by ``seed`` and
    ``purpose + "/roots=<n>"`` in block streams."""
    n = int_at_least("n_roots", n_roots, 2)
    r = closed_unit("reconstruction_rate", reconstruction_rate)
    k = int_at_least("n_categories", n_categories, 2)
    reps = int_at_least("replicates", replicates, 100)
    s = int_at_least("seed", seed, 0)
    if not isinstance(gate, AuditGate):
        raise InputError("gate", "an AuditGate", type(gate).__name__)
    if not isinstance(purpose, str) or not purpose:
        raise InputError("purpose", "a non-empty string", purpose)
    cells = _cells(r, k)
    passed = 0
    for size, gen in block_streams(s, f"{purpose}/roots={n}", reps):
        counts = gen.multinomial(n, cells, size=size).reshape(size, k, k)
        agreements = np.trace(counts, axis1=1, axis2=2)
        p_e = np.einsum("ri,ri->r", counts.sum(axis=2), counts.sum(axis=1)) / float(n * n)
        passed += gate.passes(agreements, n, p_e)
    return share_quantity(passed / reps, reps)


def first_reaching(reached: Callable[[int], bool], start: int, horizon: int, target: str) -> int:
    """The first n ≥ ``start`` (up to ``horizon``) with ``reached(n)``, found as the sizes are:
    1. coarse doubling from ``start``; 2. steps of ceil(width/16) inside the last (fail, pass]
    bracket; 3. every n inside the bracket that leaves (a simulated target is saw-toothed in n,
    so the first crossing is the one searched for). InputError naming ``max_roots`` when the
    target is not reached within ``horizon``."""
    lo, hi = start - 1, start
    while not reached(hi):
        lo = hi
        if hi >= horizon:
            raise InputError("max_roots", f"a horizon within which {target} is reached", horizon)
        hi = min(2 * hi, horizon)
    step = max(1, math.ceil((hi - lo) / 16))
    while True:
        n = lo + step
        while n < hi and not reached(n):
            lo = n
            n += step
        hi = min(n, hi)
        if step == 1:
            return hi
        step = 1


def size_reader_audit(
    reconstruction_rate: float,
    gate: AuditGate,
    pass_probability: float,
    seed: int,
    n_categories: int = 2,
    purpose: str = "human/reader-audit-sizing",
    replicates: int = 4000,
    min_roots: int = 10,
    max_roots: int = 100_000,
) -> ReaderAuditSize:
    """The smallest audit (roots, from ``min_roots``) at which readers at the planning
    ``reconstruction_rate`` pass ``gate`` with simulated probability ≥ ``pass_probability``.

    Search as :func:`size_human_baseline`: doubling, then steps of ceil(width/16) inside the
    last (fail, pass] bracket, then every n; each n simulated by
    :func:`simulate_audit_pass_probability`. InputError naming ``reconstruction_rate`` when
    the planning κ does not exceed the gate's ``kappa_min`` (no audit size can then reach a
    pass probability above 1 − level), naming ``max_roots`` when the target is not reached
    within it.
    """
    r = closed_unit("reconstruction_rate", reconstruction_rate)
    k = int_at_least("n_categories", n_categories, 2)
    if not isinstance(gate, AuditGate):
        raise InputError("gate", "an AuditGate", type(gate).__name__)
    target = open_unit("pass_probability", pass_probability)
    lo_n = int_at_least("min_roots", min_roots, 2)
    horizon = int_at_least("max_roots", max_roots, lo_n)
    planning = expected_kappa(r, k)
    if planning <= gate.kappa_min:
        raise InputError(
            "reconstruction_rate",
            f"a planning rate whose kappa ((k·r − 1)/(k − 1))² exceeds kappa_min "
            f"({gate.kappa_min:g}); this one gives {planning:.4f}",
            reconstruction_rate,
        )
    cache: dict[int, Quantity] = {}

    def sim(n: int) -> Quantity:
        if n not in cache:
            cache[n] = simulate_audit_pass_probability(n, r, gate, seed, k, purpose, replicates)
        return cache[n]

    def reached(n: int) -> bool:
        return float(sim(n)) >= target

    hi = first_reaching(reached, lo_n, horizon, f"pass probability {target}")
    below = sim(hi - 1) if hi - 1 >= max(2, lo_n) else None
    return ReaderAuditSize(
        planning_rate=r,
        planning_kappa=planning,
        n_categories=k,
        kappa_min=float(gate.kappa_min),
        level=float(gate.level),
        target_pass_probability=target,
        roots=hi,
        readings=2 * hi,
        pass_probability=sim(hi),
        pass_probability_below=below,
        sizes_evaluated=len(cache),
    )


# --------------------------------------------------------------------------------------------
# (b) Preference baseline sizing
# --------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class _BaselineTest:
    """The one-sided exact test, oriented so that it rejects when X ≤ c."""

    p_true: float  # oriented human rate (mirrored when threshold_h < 0)
    p_null: float  # oriented shifted rate, > p_true
    direction: Literal["less", "greater"]  # direction of the rejection in the original counts


def _baseline_test(human_rate: float, threshold_h: float) -> tuple[float, _BaselineTest]:
    try:
        shifted = p_from_h(human_rate, threshold_h)
    except InputError as err:
        raise InputError("threshold_h", err.allowed, threshold_h) from None
    if not 0.0 < shifted < 1.0:
        raise InputError(
            "threshold_h",
            "a shift keeping p_from_h(human_rate, threshold_h) inside (0, 1)",
            threshold_h,
        )
    if shifted > human_rate:
        return shifted, _BaselineTest(human_rate, shifted, "less")
    return shifted, _BaselineTest(1.0 - human_rate, 1.0 - shifted, "greater")


def _critical(n_judgments: int, test: _BaselineTest, alpha: float) -> int:
    """Largest c with P_null(X ≤ c) ≤ α in oriented counts (−1 when nothing can be rejected)."""
    region = binomial_region(n_judgments, test.p_null, alpha, 1, "less")
    return -1 if region.lower is None else int(region.lower)


Draw = Callable[[np.random.Generator, int], NDArray[np.int64]]


def _sim_power(draw: Draw, crit: int, seed: int, purpose: str, replicates: int) -> Quantity:
    """P(X ≤ crit) by ``replicates`` oriented counts X = draw(generator, block size)."""
    hits = 0
    if crit >= 0:
        for size, gen in block_streams(seed, purpose, replicates):
            hits += int(np.count_nonzero(draw(gen, size) <= crit))
    return share_quantity(hits / replicates, replicates)


def _binomial_draw(n_judgments: int, p_true: float) -> Draw:
    return lambda gen, size: gen.binomial(n_judgments, p_true, size=size)


def _clustered_pmf(m: int, p: float, r: float) -> NDArray[np.float64]:
    """q_j(p), j = 0..m: one root's count of m votes 1[W < Φ⁻¹(p)] whose latents share a root
    latent of correlation r (module docstring (b)), by adaptive vector quadrature over the root
    latent z ∈ [−40, 40] (φ is below 1e-300 beyond); r = 1: the m votes agree (q_0 = 1 − p,
    q_m = p)."""
    q = np.zeros(m + 1)
    if r >= 1.0:
        q[0], q[m] = 1.0 - p, p
        return q
    c, s, t = float(special.ndtri(p)), math.sqrt(r), math.sqrt(1.0 - r)
    j = np.arange(m + 1)
    log_comb = special.gammaln(m + 1) - special.gammaln(j + 1) - special.gammaln(m - j + 1)
    log_phi0 = -0.5 * math.log(2.0 * math.pi)

    def integrand(z: float) -> NDArray[np.float64]:
        x = (c - s * z) / t
        log_q = j * special.log_ndtr(x) + (m - j) * special.log_ndtr(-x)
        return _libm.exp(log_comb + log_q + log_phi0 - 0.5 * z * z)

    # break points where x = (c − √r·z)/√(1 − r) is 0, ±2, ±8 (the votes' rates 1/2, 2% and
    # 98%, 1e-15 and 1 − 1e-15), however narrow that band of z when r is close to 1
    knots = [(c - k * t) / s for k in (-8.0, -2.0, 0.0, 2.0, 8.0)] if s > 0.0 else []
    points = sorted({0.0, *(z for z in knots if abs(z) < 39.0)})
    q = integrate.quad_vec(integrand, -40.0, 40.0, epsabs=1e-15, epsrel=1e-13, points=points)[0]
    q = np.clip(q, 0.0, None)
    return np.asarray(q / q.sum(), dtype=np.float64)


def _convolve(a: NDArray[np.float64], b: NDArray[np.float64]) -> NDArray[np.float64]:
    """The pmf of the sum of two independent counts (direct, or by FFT when both are long)."""
    both = np.convolve(a, b) if min(a.size, b.size) < 512 else signal.fftconvolve(a, b)
    return np.clip(both, 0.0, None)


def _n_fold(q: NDArray[np.float64], n: int) -> NDArray[np.float64]:
    """The pmf of the sum of n independent counts of pmf ``q`` (repeated squaring)."""
    out, power, k = np.ones(1), q, n
    while k:  # bounded: ⌊log2 n⌋ + 1 halvings
        if k & 1:
            out = _convolve(out, power)
        k >>= 1
        if k:
            power = _convolve(power, power)
    return out


@dataclass(frozen=True)
class _Clustered:
    """The clustered model of an oriented test: ICC_H, its latent correlation r, per-root pmfs
    under the null and at the human rate."""

    icc: float
    r: float
    null: NDArray[np.float64]
    alt: NDArray[np.float64]

    def region(self, n: int, alpha: float, power: bool = True) -> tuple[int, float, float]:
        """(c, P_null(X ≤ c), P_alt(X ≤ c)) over n roots in oriented counts, c the largest
        count with P_null(X ≤ c) ≤ α (−1, 0, 0 when nothing can be rejected; power 0 unless
        ``power``)."""
        null = np.cumsum(_n_fold(self.null, n))
        hits = np.flatnonzero(null <= alpha)
        if not hits.size:
            return -1, 0.0, 0.0
        c = int(hits[-1])
        return c, float(null[c]), float(np.cumsum(_n_fold(self.alt, n))[c]) if power else 0.0

    def draw(self, n: int) -> Draw:
        counts = np.arange(self.alt.size)
        return lambda gen, size: gen.multinomial(n, self.alt, size=size) @ counts


_BINOMIAL_TEST = "one-sided exact binomial test of H0: p = shifted_rate (pilot not pooled)"
_CLUSTERED_TEST = (
    "one-sided exact test of H0: p = shifted_rate on the count of the clustered model (ICC_H "
    "through a root latent, r fixed under H0; n-fold convolution of the per-root pmf; pilot "
    "not pooled)"
)


def _purpose_at(purpose: str, roots: int) -> str:
    return f"{purpose}/confirmatory_roots={roots}"


@dataclass(frozen=True)
class HumanBaselineSize:
    """Pilot plus simulation-sized confirmatory sample of the human preference baseline.

    ``confirmatory_roots``: the first root count (coarse-then-fine seeded search) whose simulated
    power reaches the target; ``simulated_power`` there and ``simulated_power_below`` one root
    below; ``exact_power`` / ``exact_power_below``: the same test's exact binomial power (a
    cross-check of the simulation); ``closed_form_roots``: the normal-approximation size
    ceil(N/n_per_root), N = ceil(((z_{1−α}·√(p_s q_s) + z_power·√(p_h q_h)) / |p_s − p_h|)²).
    ``critical_value`` / ``achieved_alpha`` describe the rejection region at the chosen size in the
    original counts (reject X ≤ c when ``direction`` is "less", X ≥ c when "greater").
    ``icc`` / ``latent_correlation``: the humans' ICC_H and its latent r when given (absent from
    results.json otherwise); with m ≥ 2 and ICC_H > 0 the powers, the critical count and its
    alpha are those of the clustered model (module docstring (b)) and the closed-form size
    carries the design effect 1 + (m − 1)·ICC_H.
    """

    human_rate: float
    threshold_h: float
    shifted_rate: float
    alpha: float
    target_power: float
    direction: Literal["less", "greater"]
    n_per_root: int
    pilot_roots: int
    pilot_touches: int
    confirmatory_roots: int
    confirmatory_touches: int
    total_touches: int
    simulated_power: Quantity
    simulated_power_below: Quantity | None
    exact_power: Quantity
    exact_power_below: Quantity | None
    closed_form_roots: Quantity
    critical_value: int
    achieved_alpha: Quantity
    sizes_evaluated: int
    test: str = _BINOMIAL_TEST
    icc: float | None = field(default=None, metadata=OPTIONAL)
    latent_correlation: float | None = field(default=None, metadata=OPTIONAL)


def _baseline_args(
    human_rate: Any, threshold_h: Any, alpha: Any, n_per_root: Any, replicates: Any, seed: Any
) -> tuple[float, float, float, int, int, int]:
    p_h = open_unit("human_rate", human_rate)
    if not is_finite_real(threshold_h) or float(threshold_h) == 0.0:
        raise InputError("threshold_h", "a finite non-zero effect in h units", threshold_h)
    a = open_unit("alpha", alpha)
    m = int_at_least("n_per_root", n_per_root, 1)
    reps = int_at_least("replicates", replicates, 100)
    s = int_at_least("seed", seed, 0)
    return p_h, float(threshold_h), a, m, reps, s


def _clustered(
    icc: Any, p_h: float, m: int, test: _BaselineTest
) -> tuple[float | None, float | None, _Clustered | None]:
    """(ICC_H, r, the clustered model) -- the model None when the binomial one is exact (ICC_H
    None or 0, or one judgment per root)."""
    if icc is None:
        return None, None, None
    value = closed_unit("icc", icc)
    r = latent_for_icc(p_h, value)
    if value == 0.0 or m == 1:
        return value, r, None
    null, alt = _clustered_pmf(m, test.p_null, r), _clustered_pmf(m, test.p_true, r)
    return value, r, _Clustered(value, r, null, alt)


def _power_at(
    n: int,
    m: int,
    test: _BaselineTest,
    a: float,
    cl: _Clustered | None,
    seed: int,
    purpose: str,
    reps: int,
) -> Quantity:
    """The test's simulated power at n roots, on stream ``purpose + "/confirmatory_roots=<n>"``
    (so a size's power does not depend on which other sizes a search visited)."""
    if cl is None:
        crit = _critical(n * m, test, a)
        draw = _binomial_draw(n * m, test.p_true)
    else:
        crit = cl.region(n, a, power=False)[0]
        draw = cl.draw(n)
    return _sim_power(draw, crit, seed, _purpose_at(purpose, n), reps)


def size_human_baseline(
    human_rate: float,
    threshold_h: float,
    alpha: float,
    power: float,
    n_per_root: int = 2,
    pilot_roots: int = 100,
    seed: int = 0,
    purpose: str = "human/baseline-sizing",
    replicates: int = 20_000,
    max_roots: int | None = None,
    *,
    icc: float | None = None,
) -> HumanBaselineSize:
    """Size the human preference baseline: pilot plus a confirmatory sample sized by simulation.

    Test and model: module docstring (b). Search (seeded; each size n has its own stream,
    ``purpose + "/confirmatory_roots=<n>"``, so a size's simulated power does not depend on which
    other sizes the search visited):

    1. coarse: n = 1, 2, 4, 8, … until the simulated power reaches ``power``;
    2. medium: inside the last (fail, pass] doubling bracket, steps of ceil(width/16);
    3. fine: inside the last (fail, pass] medium bracket, every n; the first n reaching ``power``
       is the confirmatory size.

    Because exact binomial power is saw-toothed and simulated power is noisy, this is the first
    crossing at unit resolution inside the bracket the coarse passes found; the exact power at that
    size (and one below) is reported beside the simulated one so a reader can see both. The
    closed-form normal size is reported too (see :class:`HumanBaselineSize`).
    ``max_roots`` (default 4 × closed-form roots + 100) bounds the search; InputError naming it
    when the target is not reached. ``alpha`` is the one-sided level of the test. ``icc``: the
    humans' ICC_H; with m ≥ 2 and ICC_H > 0 the clustered model of the module docstring (b)
    (exact critical count, alpha and power by convolution; closed form with the design effect).
    """
    p_h, h, a, m, reps, s = _baseline_args(
        human_rate, threshold_h, alpha, n_per_root, replicates, seed
    )
    target = open_unit("power", power)
    pilot = int_at_least("pilot_roots", pilot_roots, 0)
    if not isinstance(purpose, str) or not purpose:
        raise InputError("purpose", "a non-empty string", purpose)
    shifted, test = _baseline_test(p_h, h)
    if target <= a:
        raise InputError("power", f"a target above alpha ({a})", power)
    icc_h, r, cl = _clustered(icc, p_h, m, test)
    cf_judgments = binomial_normal_n(shifted, p_h, a, target, 1)
    if cl is None:
        cf_roots = math.ceil(cf_judgments / m)
    else:  # Kish's design effect
        cf_roots = math.ceil(cf_judgments * (1.0 + (m - 1) * cl.icc) / m)
    horizon = 4 * cf_roots + 100 if max_roots is None else int_at_least("max_roots", max_roots, 1)

    cache: dict[int, Quantity] = {}

    def sim(n: int) -> Quantity:
        if n not in cache:
            cache[n] = _power_at(n, m, test, a, cl, s, purpose, reps)
        return cache[n]

    def reached(n: int) -> bool:
        return float(sim(n)) >= target

    def exact_power(n: int) -> Quantity:
        if cl is not None:
            return exact(cl.region(n, a)[2])
        return exact(binomial_power(n * m, shifted, p_h, a, 1, test.direction))

    hi = first_reaching(reached, 1, horizon, f"power {target}")
    chosen = hi
    below: Quantity | None = None
    exact_below: Quantity | None = None
    if chosen > 1:
        below = sim(chosen - 1)
        exact_below = exact_power(chosen - 1)
    if cl is None:
        region = binomial_region(chosen * m, shifted, a, 1, test.direction)
        crit_original = region.lower if test.direction == "less" else region.upper
        achieved = region.achieved_alpha
    else:
        crit, achieved, _ = cl.region(chosen, a)
        crit_original = (
            None if crit < 0 else crit if test.direction == "less" else chosen * m - crit
        )
    return HumanBaselineSize(
        human_rate=p_h,
        threshold_h=h,
        shifted_rate=shifted,
        alpha=a,
        target_power=target,
        direction=test.direction,
        n_per_root=m,
        pilot_roots=pilot,
        pilot_touches=pilot * m,
        confirmatory_roots=chosen,
        confirmatory_touches=chosen * m,
        total_touches=(pilot + chosen) * m,
        simulated_power=sim(chosen),
        simulated_power_below=below,
        exact_power=exact_power(chosen),
        exact_power_below=exact_below,
        closed_form_roots=closed_form(cf_roots),
        critical_value=(
            int(crit_original)
            if crit_original is not None
            else (-1 if test.direction == "less" else chosen * m + 1)
        ),
        achieved_alpha=exact(achieved),
        sizes_evaluated=len(cache),
        test=_BINOMIAL_TEST if cl is None else _CLUSTERED_TEST,
        icc=icc_h,
        latent_correlation=r,
    )
