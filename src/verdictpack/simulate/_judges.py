"""Judges as character sheets: the generative model of the model and human streams.

This module is a *generative* model (a design input to the sequential verdict), not a rater
model to be fitted. Everything below is exact except where the word "simulate" appears.

The model, precisely
--------------------
Notation: φ(p) = 2·asin(√p) (Cohen's arcsine scale), its inverse p = sin²(φ/2), Φ the standard
normal CDF, Φ⁻¹ its inverse.

**Judge j** (a :class:`JudgeSheet`) has baseline_rate b_j ∈ (0, 1), lean_h ℓ_j (real, in h units),
noise ν_j ∈ [0, 1], position_bias δ_j ≥ 0 and cost_per_judgment ≥ 0. A scenario supplies the
effect scale s ≥ 0 (0 under the null) and a confound shift c_shift (h units, model stream only).

* angle        θ_j = clamp(φ(b_j) + s·ℓ_j + c_shift, 0, π)   (clamped into [0, π] so that
  sin²(θ/2) stays monotone in the shift; beyond the clamp the judge is saturated at 0 or 1)
* rate         p_j = ½ + (1 − ν_j)·(sin²(θ_j/2) − ½)          (ν = 1 gives exactly ½)
* per order    p_j,first = p_j + δ_j  (treatment shown first),  p_j,second = p_j − δ_j
  A sheet or scenario for which p_j ± δ_j leaves [0, 1] is refused (only a rounding excess of
  at most 1e-12 is clipped), so the counterbalanced mean over the two orders is exactly p_j.

**Panel** (a :class:`Panel`): J ≥ 1 judges with unique names, between-judge latent correlation ρ
and within-judge (cross-order) latent correlation ρ_o (``order_correlation``; ``None`` means
ρ_o = ρ, i.e. one equicorrelation ρ over all 2J latents). Every root i is shown to every judge in
both orders: 2J judgments, indexed k = 2j + o (o = 0 treatment first, o = 1 treatment second).

* Latents: Z_i = A·E_i with E_i ~ N(0, I_2J) and A = Σ^{1/2} the symmetric square root of

      Σ = (1 − ρ_o)·I + (ρ_o − ρ)·(I_J ⊗ 1₂1₂ᵀ) + ρ·11ᵀ     (unit diagonal; ρ_o within a judge,
                                                           ρ between judges, any orders).

  Σ has three eigenvalues: λ₁ = 1 + ρ_o + 2(J − 1)ρ (eigenvector 1), λ₂ = 1 + ρ_o − 2ρ
  (multiplicity J − 1, between-judge contrasts) and λ₃ = 1 − ρ_o (multiplicity J, within-judge
  order contrasts). A = Σ_m √λ_m·P_m with P_m the orthogonal projectors onto these eigenspaces
  (closed form, no LAPACK, unique, hence platform-independent). Σ must be positive semi-definite:
  λ_m ≥ 0; with ρ_o = ρ this is ρ ∈ [−1/(2J − 1), 1]. Negative ρ works (no √ρ anywhere). We also
  require 1 + (J − 1)ρ > 0 so that the Kish effective panel size below is finite.
* Choice: Y_ijo = 1 (prefers the treatment item) iff Z_ijo < Φ⁻¹(p_jo). Hence P(Y_ijo = 1) = p_jo
  exactly and P(Y_a = Y_b = 1) = Φ₂(Φ⁻¹(p_a), Φ⁻¹(p_b); Σ_ab) (bivariate normal orthant).
* Model stream: k_i = Σ_jo Y_ijo ∈ {0, …, 2J}; M_i = k_i / (2J). E[M_i] = mean_j p_j =: μ_M.

**Human stream**: n_h ≥ 1 human judgments per root at the human baseline rate p_H (a construct
field, passed as ``human_rate``). The root-level latent shared with the panel is the
standardised panel sum S_i = 1ᵀE_i/√(2J) = 1ᵀZ_i/√(1ᵀΣ1) (as A·1 = √λ₁·1; if λ₁ = 0 the
panel sum is constant and S_i, still defined from E_i, is independent of the panel). Human latent
W_ir = ρ_s·S_i + √(1 − ρ_s²)·U_ir, U_ir ~ N(0, 1) independent, ρ_s = the scenario's
``stream_correlation`` ∈ [−1, 1]. Human r prefers the treatment iff W_ir < Φ⁻¹(p_H). Thus

* Corr(W_ir, 1ᵀZ_i) = ρ_s (the definition of ρ_s),
* Corr(W_ir, Z_ijo) = ρ_s·√(λ₁/(2J)) (= ρ_s·√((1 + (2J − 1)ρ)/(2J)) under equicorrelation),
* Corr(W_ir, W_ir') = ρ_s² (humans agree only through the shared root latent), unless a human
  sheet gives their votes an intraclass correlation ICC_H: then W_ir = ρ_s·S_i + a·V_i + b·U_ir,
  V_i ~ N(0, 1) per root, a² = r − ρ_s², b = √(1 − r), r the latent correlation whose votes
  have that ICC (:mod:`verdictpack.core._icc`; ``_draw`` draws V between E and U),
* H_i = h_i / n_h with h_i = Σ_r 1[W_ir < Φ⁻¹(p_H)] ∈ {0, …, n_h}; E[H_i] = p_H =: μ_H.

With ρ_s = 0 the human judgments are i.i.d. Bernoulli(p_H) and independent of the panel. Roots
are independent of each other. The *true* h of a scenario is h = φ(μ_M) − φ(μ_H): it is what the
streams carry, so under a confound (c_shift ≠ 0, s = 0) it is nonzero although no effect exists.
:func:`stream_moments` gives the exact first and second moments of (M_i, H_i).

**Scenarios**: ``null`` (s = 0), ``registered_alternative`` (s solved so that the true h equals the
registered threshold exactly), ``above_threshold`` (s solved for a given true h), ``confounded``
(s = 0, c_shift given: no effect, the model stream moves), ``correlated_stress`` (the registered
alternative or the null, with ρ and ρ_s raised). The effect scale is solved on the domain
s ∈ [0, s_max]: s_max is the smaller of (a) the s at which every judge that moves (ℓ ≠ 0, ν < 1)
is saturated and (b) the first s at which some judge's p ± δ reaches the edge of [0, 1]. The
solver returns the smallest root its bracketing resolves; the root is unique whenever all leans
share one sign, since μ_M is then strictly monotone on [0, s_max].

**Effective panel size**: Kish's J / (1 + (J − 1)ρ) on the latent scale (a closed-form design
heuristic reported beside the nominal J; the exact variance of M_i is in :func:`stream_moments`).

Simulation and the RNG
----------------------
:func:`~verdictpack.simulate._draw.simulate_panel` draws, for consecutive chunks of whole
replicate rows (at most ``_draw._CHUNK_ROOTS`` roots per chunk, roots in replicate-major order),
first the (2J, N) matrix E and then the (n_h, N) matrix U from the given generator. The output
is a deterministic function of (panel, scenario, human_rate, n_h, n_roots, n_replicates,
generator state). Splitting a run into several calls on one generator (for example 50 roots at
a time) gives an equally valid sample from the same model but *different numbers* than one big
call. Because the normals do not depend on the rates, runs of different scenarios from the same
seed use common random numbers. Memory stays bounded whatever the panel size: a chunk holding
more than ``_draw._DRAW_NORMALS`` latents is drawn in blocks of judges (and of human rows), which
reproduces the same normals and the same numbers (see ``_draw._draw_counts``).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, Final

import numpy as np
from numpy.typing import NDArray
from scipy import special

from verdictpack._errors import InputError
from verdictpack._validate import finite_real, int_at_least, nonempty_str, open_unit
from verdictpack.core._icc import latent_for_icc
from verdictpack.core._scales import _phi_clipped_array, _phi_inv_clipped_array, phi

__all__ = [
    "ORDER_LABELS",
    "SCENARIO_NAMES",
    "JudgeSheet",
    "Panel",
    "StreamMoments",
    "TruthScenario",
    "effective_panel_size",
    "judge_rates",
    "make_scenario",
    "null_scenario",
    "panel_cost_per_root",
    "reachable_h_range",
    "scenario_panel",
    "solve_effect_scale",
    "stream_moments",
    "touches_per_root",
    "true_rates",
]

SCENARIO_NAMES: Final[tuple[str, ...]] = (
    "null",
    "registered_alternative",
    "above_threshold",
    "confounded",
    "correlated_stress",
)
ORDER_LABELS: Final[tuple[str, str]] = ("treatment_first", "treatment_second")

_EDGE_TOL: Final[float] = 1e-12  # rounding allowance when checking p ± δ against [0, 1] and λ ≥ 0
_GRID_POINTS: Final[int] = 2049  # bracketing grid of the effect-scale solver
_ZOOM_POINTS: Final[int] = 65  # scales per zoom round of the extreme search (32-fold shrink)
_ZOOM_ROUNDS: Final[int] = 10  # zoom rounds: the bracket shrinks by 32^10 ~ 1e15
_BISECT_MAX: Final[int] = 2100  # bisection steps at most (a double bracket closes in ~1100)


# --------------------------------------------------------------------------------------------
# argument checks
# --------------------------------------------------------------------------------------------


# The validators themselves are verdictpack._validate's; these are this module's words.
_RATE = "a rate strictly between 0 and 1"


def _generator(rng: Any) -> np.random.Generator:
    if not isinstance(rng, np.random.Generator):
        raise InputError("rng", "a numpy.random.Generator (see verdictpack._rng.stream)", repr(rng))
    return rng


# --------------------------------------------------------------------------------------------
# judges
# --------------------------------------------------------------------------------------------


def _rate_from_angle(angle: Any, noise: Any) -> Any:
    """p = ½ + (1 − ν)(sin²(θ/2) − ½) after clamping θ into [0, π] (scalar or array)."""
    return 0.5 + (1.0 - noise) * (_phi_inv_clipped_array(angle) - 0.5)


@dataclass(frozen=True)
class JudgeSheet:
    """One judge as a character sheet (see the module docstring for the model).

    ``baseline_rate``: P(prefers the treatment item) when the effect is absent; ``lean_h``: signed
    shift in Cohen's-h units per unit of effect scale; ``noise``: attenuation toward chance;
    ``position_bias``: probability shift toward the item shown first; ``cost_per_judgment``: price
    of one judgment (one order of one root).
    """

    name: str
    role: str
    baseline_rate: float
    lean_h: float
    noise: float
    position_bias: float = 0.0
    cost_per_judgment: float = 0.0

    def __post_init__(self) -> None:
        nonempty_str("name", self.name)
        if not isinstance(self.role, str):
            raise InputError("role", "a string (free text)", self.role)
        b = open_unit("baseline_rate", self.baseline_rate, _RATE)
        lean = finite_real("lean_h", self.lean_h, "a finite real number (h units)")
        nu = finite_real("noise", self.noise, "a number in [0, 1]")
        if not 0.0 <= nu <= 1.0:
            raise InputError("noise", "a number in [0, 1]", self.noise)
        delta = finite_real("position_bias", self.position_bias, "a number >= 0")
        if delta < 0.0:
            raise InputError("position_bias", "a number >= 0", self.position_bias)
        cost = finite_real("cost_per_judgment", self.cost_per_judgment, "a number >= 0")
        if cost < 0.0:
            raise InputError("cost_per_judgment", "a number >= 0", self.cost_per_judgment)
        for attribute, value in (
            ("baseline_rate", b),
            ("lean_h", lean),
            ("noise", nu),
            ("position_bias", delta),
            ("cost_per_judgment", cost),
        ):
            object.__setattr__(self, attribute, value)
        p0 = self.rate()
        if p0 - delta < -_EDGE_TOL or p0 + delta > 1.0 + _EDGE_TOL:
            raise InputError(
                "position_bias",
                f"a shift in [0, {min(p0, 1.0 - p0):.6g}] so that judge {self.name!r}'s per-order "
                f"rates p ± δ stay in [0, 1] (its null rate p is {p0:.6g})",
                self.position_bias,
            )

    def rate(self, effect_scale: float = 0.0, model_shift_h: float = 0.0) -> float:
        """p_j: counterbalanced P(prefers the treatment) at effect scale s and confound shift."""
        angle = phi(self.baseline_rate) + effect_scale * self.lean_h + model_shift_h
        return float(_rate_from_angle(angle, self.noise))


def _sheet_arrays(judges: tuple[JudgeSheet, ...]) -> tuple[NDArray[np.float64], ...]:
    base = np.array([phi(j.baseline_rate) for j in judges])
    lean = np.array([j.lean_h for j in judges])
    noise = np.array([j.noise for j in judges])
    delta = np.array([j.position_bias for j in judges])
    return base, lean, noise, delta


# --------------------------------------------------------------------------------------------
# panel
# --------------------------------------------------------------------------------------------


def _latent_eigenvalues(n_judges: int, rho: float, rho_o: float) -> tuple[float, float, float]:
    """(λ₁, λ₂, λ₃) of Σ; λ₂ only exists when J >= 2 (returned as 1.0 otherwise)."""
    lam1 = 1.0 + rho_o + 2.0 * (n_judges - 1) * rho
    lam2 = 1.0 + rho_o - 2.0 * rho if n_judges >= 2 else 1.0
    lam3 = 1.0 - rho_o
    return lam1, lam2, lam3


def _rho_range(n_judges: int, rho_o: float | None) -> tuple[float, float]:
    """Allowed latent_correlation ρ for J judges given ρ_o (None: ρ_o = ρ)."""
    if n_judges == 1:
        return -1.0, 1.0
    if rho_o is None:
        return -1.0 / (2 * n_judges - 1), 1.0
    return -(1.0 + rho_o) / (2.0 * (n_judges - 1)), min(1.0, (1.0 + rho_o) / 2.0)


@dataclass(frozen=True)
class Panel:
    """A panel of judges with a Gaussian-copula latent correlation structure.

    ``latent_correlation`` ρ: between the latents of two different judges (any orders);
    ``order_correlation`` ρ_o: between the two orders of the same judge (``None``: equal to ρ).
    """

    judges: tuple[JudgeSheet, ...]
    latent_correlation: float = 0.0
    order_correlation: float | None = None

    def __post_init__(self) -> None:
        judges = self.judges
        if not isinstance(judges, (tuple, list)) or not all(
            isinstance(j, JudgeSheet) for j in judges
        ):
            raise InputError("judges", "a sequence of JudgeSheet", repr(judges))
        judges = tuple(judges)
        if len(judges) == 0:
            raise InputError("judges", "at least one judge", [])
        names = [j.name for j in judges]
        seen: set[str] = set()
        repeated: set[str] = set()
        for name in names:
            (repeated if name in seen else seen).add(name)
        duplicates = sorted(repeated)
        if duplicates:
            raise InputError("judges", "judges with unique names", duplicates)
        object.__setattr__(self, "judges", judges)
        n = len(judges)
        rho_o: float | None = None
        if self.order_correlation is not None:
            rho_o = finite_real("order_correlation", self.order_correlation, "a number in [-1, 1]")
            if not -1.0 <= rho_o <= 1.0:
                raise InputError("order_correlation", "a number in [-1, 1]", self.order_correlation)
        rho = finite_real("latent_correlation", self.latent_correlation, "a number in [-1, 1]")
        lo, hi = _rho_range(n, rho_o)
        within = rho if rho_o is None else rho_o
        lam = _latent_eigenvalues(n, rho, within)
        kish_ok = n == 1 or 1.0 + (n - 1) * rho > 0.0
        if min(lam) < -_EDGE_TOL or not -1.0 <= rho <= 1.0 or not kish_ok:
            shape = f"{2 * n} latent judgments ({n} judges × 2 orders)"
            if rho_o is None:
                why = (
                    f"equicorrelation over the {shape} is positive semi-definite only for "
                    f"ρ >= -1/(n - 1) with n = {2 * n}"
                )
            else:
                why = (
                    f"with order_correlation {rho_o:g} the correlation matrix of the {shape} "
                    "must be positive semi-definite and 1 + (J - 1)ρ > 0"
                )
            allowed = f"a value in [{lo:.6g}, {hi:.6g}]" + (
                " (exclusive at the lower end)" if rho_o == 1.0 and n >= 2 else ""
            )
            raise InputError("latent_correlation", f"{allowed}: {why}", self.latent_correlation)
        object.__setattr__(self, "latent_correlation", rho)
        object.__setattr__(self, "order_correlation", rho_o)

    @property
    def n_judges(self) -> int:
        return len(self.judges)

    @property
    def within_judge_correlation(self) -> float:
        """ρ_o as used (ρ when ``order_correlation`` is None)."""
        return self.latent_correlation if self.order_correlation is None else self.order_correlation

    @property
    def names(self) -> tuple[str, ...]:
        return tuple(j.name for j in self.judges)

    def eigenvalues(self) -> tuple[float, float, float]:
        """(λ₁, λ₂, λ₃) of the latent correlation matrix, rounding negatives of 1e-12 to 0."""
        lam = _latent_eigenvalues(
            self.n_judges, self.latent_correlation, self.within_judge_correlation
        )
        return (max(lam[0], 0.0), max(lam[1], 0.0), max(lam[2], 0.0))

    def latent_correlation_matrix(self) -> NDArray[np.float64]:
        """Σ (2J × 2J), latent k = 2j + o, built from its definition."""
        n = self.n_judges
        rho, rho_o = self.latent_correlation, self.within_judge_correlation
        sigma = np.full((2 * n, 2 * n), rho)
        for j in range(n):
            sigma[2 * j : 2 * j + 2, 2 * j : 2 * j + 2] = rho_o
        np.fill_diagonal(sigma, 1.0)
        return sigma

    def with_latent_correlation(self, rho: float) -> Panel:
        """The same judges with ρ replaced (ρ_o follows ρ when it was None)."""
        return Panel(self.judges, rho, self.order_correlation)


def effective_panel_size(n_judges: int, rho: float) -> float:
    """Kish's effective panel size J / (1 + (J − 1)ρ) on the latent scale."""
    n = int_at_least("n_judges", n_judges, 1)
    lo = -1.0 / (n - 1) if n >= 2 else -1.0
    r = finite_real("rho", rho, f"a number in ({lo:.6g}, 1]")
    if not (lo < r <= 1.0 or (n == 1 and r == -1.0)):
        raise InputError("rho", f"a number in ({lo:.6g}, 1]", rho)
    return n / (1.0 + (n - 1) * r)


def panel_cost_per_root(panel: Panel) -> float:
    """Σ_j 2·cost_per_judgment_j: every judge judges every root in both orders."""
    return float(sum(2.0 * j.cost_per_judgment for j in panel.judges))


def touches_per_root(panel: Panel) -> int:
    """2J counted model judgments per root."""
    return 2 * panel.n_judges


# --------------------------------------------------------------------------------------------
# scenarios
# --------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class TruthScenario:
    """A simulated truth: effect scale s, confound shift, stream correlation, optional ρ override.

    ``name`` is a label; :func:`make_scenario` is the by-name constructor (it refuses unknown
    names). ``latent_correlation`` (optional) overrides the panel's ρ in this scenario.
    """

    name: str
    effect_scale: float = 0.0
    model_shift_h: float = 0.0
    stream_correlation: float = 0.0
    latent_correlation: float | None = None

    def __post_init__(self) -> None:
        nonempty_str("name", self.name)
        s = finite_real("effect_scale", self.effect_scale, "a number >= 0")
        if s < 0.0:
            raise InputError("effect_scale", "a number >= 0", self.effect_scale)
        shift = finite_real("model_shift_h", self.model_shift_h, "a finite real number (h units)")
        rs = finite_real("stream_correlation", self.stream_correlation, "a number in [-1, 1]")
        if not -1.0 <= rs <= 1.0:
            raise InputError("stream_correlation", "a number in [-1, 1]", self.stream_correlation)
        object.__setattr__(self, "effect_scale", s)
        object.__setattr__(self, "model_shift_h", shift)
        object.__setattr__(self, "stream_correlation", rs)
        if self.latent_correlation is not None:
            rho = finite_real("latent_correlation", self.latent_correlation, "a number in [-1, 1]")
            if not -1.0 <= rho <= 1.0:
                raise InputError(
                    "latent_correlation", "a number in [-1, 1]", self.latent_correlation
                )
            object.__setattr__(self, "latent_correlation", rho)


def scenario_panel(panel: Panel, scenario: TruthScenario) -> Panel:
    """The panel as the scenario runs it (its latent_correlation override applied, revalidated)."""
    if scenario.latent_correlation is None:
        return panel
    return panel.with_latent_correlation(scenario.latent_correlation)


def judge_rates(panel: Panel, scenario: TruthScenario) -> NDArray[np.float64]:
    """Exact p_jo, shape (J, 2): column 0 treatment first (p + δ), column 1 second (p − δ).

    Refuses (InputError naming ``position_bias``) a scenario that pushes p ± δ out of [0, 1].
    """
    rows = []
    for judge in panel.judges:
        p = judge.rate(scenario.effect_scale, scenario.model_shift_h)
        first, second = p + judge.position_bias, p - judge.position_bias
        if second < -_EDGE_TOL or first > 1.0 + _EDGE_TOL:
            raise InputError(
                "position_bias",
                f"a shift <= {min(p, 1.0 - p):.6g} for judge {judge.name!r} in scenario "
                f"{scenario.name!r} (its rate there is p = {p:.6g}; p ± δ must stay in [0, 1])",
                judge.position_bias,
            )
        rows.append((min(max(first, 0.0), 1.0), min(max(second, 0.0), 1.0)))
    return np.array(rows, dtype=np.float64)


def true_rates(
    panel: Panel, scenario: TruthScenario, human_rate: float
) -> tuple[float, float, float]:
    """(μ_M, μ_H, true h): μ_M = mean_j p_j (counterbalanced), μ_H = human_rate,
    h = φ(μ_M) − φ(μ_H). Under a confound this h is the stream-level h (nonzero, no effect)."""
    p_h = open_unit("human_rate", human_rate, _RATE)
    judge_rates(panel, scenario)  # refuses a scenario that breaks p ± δ
    rates = [j.rate(scenario.effect_scale, scenario.model_shift_h) for j in panel.judges]
    mu_m = min(max(math.fsum(rates) / len(rates), 0.0), 1.0)
    return mu_m, p_h, phi(mu_m) - phi(p_h)


# ---- the effect-scale solver --------------------------------------------------------------


def _effect_domain(panel: Panel) -> tuple[float, NDArray[np.float64]]:
    """s_max and the breakpoints in [0, s_max] (saturations and position-bias limits)."""
    base, lean, noise, delta = _sheet_arrays(panel.judges)
    saturation: list[float] = []
    limits: list[float] = [math.inf]
    for phi_b, ell, nu, dl in zip(base, lean, noise, delta, strict=True):
        if ell == 0.0 or nu >= 1.0:  # this judge never moves with s
            continue
        saturation.append(((math.pi - phi_b) if ell > 0 else phi_b) / abs(ell))
        half = (0.5 - dl) / (1.0 - nu)
        if ell > 0 and 0.5 + half < 1.0:
            limits.append((phi(0.5 + half) - phi_b) / ell)
        if ell < 0 and 0.5 - half > 0.0:
            limits.append((phi_b - phi(0.5 - half)) / (-ell))
    if not saturation:
        return 0.0, np.zeros(1)
    s_max = max(0.0, min(max(saturation), min(limits)))
    points = np.array([0.0, s_max, *saturation, *limits])
    return s_max, np.unique(points[np.isfinite(points) & (points >= 0.0) & (points <= s_max)])


def _h_of_scale(panel: Panel, human_phi: float, scales: NDArray[np.float64]) -> NDArray[np.float64]:
    base, lean, noise, _ = _sheet_arrays(panel.judges)
    p = _rate_from_angle(base[None, :] + np.asarray(scales)[:, None] * lean[None, :], noise)
    return np.asarray(_phi_clipped_array(np.mean(p, axis=1)) - human_phi, dtype=np.float64)


def _reachable(
    panel: Panel, human_phi: float
) -> tuple[float, float, float, float, float, NDArray[np.float64], NDArray[np.float64]]:
    """(h_min, s_at_min, h_max, s_at_max, s_max, grid, h on grid)."""
    s_max, breaks = _effect_domain(panel)
    grid = np.unique(np.concatenate([np.linspace(0.0, s_max, _GRID_POINTS), breaks]))
    values = _h_of_scale(panel, human_phi, grid)

    def refine(index: int, sign: float) -> tuple[float, float]:
        # zoom on the grid neighbours of the extreme: each round evaluates _ZOOM_POINTS scales
        # at once and keeps the two cells around the best, shrinking the bracket 32-fold
        lo = float(grid[max(index - 1, 0)])
        hi = float(grid[min(index + 1, grid.size - 1)])
        best_s, best_v = float(grid[index]), float(values[index])
        for _ in range(_ZOOM_ROUNDS):
            if not hi > lo:
                break
            xs = np.linspace(lo, hi, _ZOOM_POINTS)
            vs = sign * _h_of_scale(panel, human_phi, xs)
            i = int(np.argmin(vs))
            if vs[i] < sign * best_v:
                best_s, best_v = float(xs[i]), sign * float(vs[i])
            lo, hi = float(xs[max(i - 1, 0)]), float(xs[min(i + 1, _ZOOM_POINTS - 1)])
        return best_s, best_v

    s_lo, h_lo = refine(int(np.argmin(values)), 1.0)
    s_hi, h_hi = refine(int(np.argmax(values)), -1.0)
    return h_lo, s_lo, h_hi, s_hi, s_max, grid, values


def reachable_h_range(panel: Panel, human_rate: float) -> tuple[float, float]:
    """(min, max) of the true h the panel reaches over effect scales s ∈ [0, s_max]."""
    p_h = open_unit("human_rate", human_rate, _RATE)
    h_lo, _, h_hi, _, _, _, _ = _reachable(panel, phi(p_h))
    return h_lo, h_hi


def solve_effect_scale(panel: Panel, human_rate: float, target_h: float) -> float:
    """The smallest effect scale s >= 0 with φ(mean_j p_j(s)) − φ(human_rate) = target_h.

    Bracketing on a grid over [0, s_max] (breakpoints included) then bisection down to adjacent
    doubles in s (no scipy.optimize: its import alone costs a third of a second). Refuses
    (InputError naming ``target_h``) targets outside the reachable range.
    """
    p_h = open_unit("human_rate", human_rate, _RATE)
    target = finite_real("target_h", target_h, "a finite true h")
    human_phi = phi(p_h)
    h_lo, s_at_lo, h_hi, s_at_hi, s_max, grid, values = _reachable(panel, human_phi)

    def f(s: float) -> float:
        return float(_h_of_scale(panel, human_phi, np.array([s]))[0]) - target

    if not h_lo - 1e-12 <= target <= h_hi + 1e-12:
        raise InputError(
            "target_h",
            f"a true h in the panel's reachable range [{h_lo:.10g}, {h_hi:.10g}] "
            f"(effect scale s in [0, {s_max:.6g}], human rate {p_h:g}; a wider range needs larger "
            "|lean_h|, less noise or smaller position biases)",
            target_h,
        )
    diff = values - target
    hits = np.flatnonzero(diff == 0.0)
    crossings = np.flatnonzero(np.sign(diff[:-1]) * np.sign(diff[1:]) < 0)
    first_hit = int(hits[0]) if hits.size else grid.size
    if crossings.size and int(crossings[0]) < first_hit:
        lo, hi = float(grid[crossings[0]]), float(grid[crossings[0] + 1])
    elif hits.size:
        return float(grid[first_hit])
    else:  # tangent or sub-grid excursion: bracket between the extremes (IVT)
        lo, hi = sorted((s_at_lo, s_at_hi))
        if abs(f(lo)) <= 1e-12:
            return lo
        if abs(f(hi)) <= 1e-12:
            return hi
    return _bisect_root(f, lo, hi)


def _bisect_root(f: Any, lo: float, hi: float) -> float:
    """A root of f in [lo, hi], where f(lo) and f(hi) differ in sign, by bisection until the
    bracket holds no double between its ends (about 60 evaluations); the end nearer zero."""
    f_lo = f(lo)
    if f_lo == 0.0:
        return lo
    for _ in range(_BISECT_MAX):
        mid = 0.5 * (lo + hi)
        if mid in (lo, hi):
            break
        f_mid = f(mid)
        if f_mid == 0.0:
            return mid
        if (f_mid < 0.0) == (f_lo < 0.0):
            lo, f_lo = mid, f_mid
        else:
            hi = mid
    return lo if abs(f_lo) <= abs(f(hi)) else hi


# ---- named scenarios ----------------------------------------------------------------------


def null_scenario() -> TruthScenario:
    """No effect, no confound: s = 0."""
    return TruthScenario("null")


def make_scenario(
    name: str,
    panel: Panel,
    human_rate: float,
    *,
    threshold_h: float | None = None,
    true_h: float | None = None,
    model_shift_h: float = 0.15,
    stress_latent_correlation: float = 0.5,
    stress_stream_correlation: float = 0.5,
    stress_base: str = "registered_alternative",
) -> TruthScenario:
    """Build a scenario by name (one of SCENARIO_NAMES, module docstring); unknown names are
    refused by name. The effect scale is solved for the registered threshold
    (``registered_alternative``, ``correlated_stress`` on that base) or for ``true_h``
    (``above_threshold``), else 0."""
    if name not in SCENARIO_NAMES:
        raise InputError("scenario", "one of " + ", ".join(SCENARIO_NAMES), name)
    stress = name == "correlated_stress"
    if stress and stress_base not in ("registered_alternative", "null"):
        raise InputError("stress_base", "one of registered_alternative, null", stress_base)
    at_threshold = name == "registered_alternative" or (
        stress and stress_base == "registered_alternative"
    )
    if at_threshold and threshold_h is None:
        raise InputError("threshold_h", f"the registered threshold (h) for scenario {name!r}", None)
    if name == "above_threshold" and true_h is None:
        raise InputError("true_h", "the true h of the above-threshold scenario", None)
    target = threshold_h if at_threshold else true_h if name == "above_threshold" else None
    scenario = TruthScenario(
        name,
        effect_scale=0.0 if target is None else solve_effect_scale(panel, human_rate, target),
        model_shift_h=model_shift_h if name == "confounded" else 0.0,
        stream_correlation=stress_stream_correlation if stress else 0.0,
        latent_correlation=stress_latent_correlation if stress else None,
    )
    scenario_panel(panel, scenario)  # refuse a ρ the panel cannot carry, now
    judge_rates(panel, scenario)  # refuse a scenario that breaks p ± δ, now
    return scenario


# --------------------------------------------------------------------------------------------
# exact moments
# --------------------------------------------------------------------------------------------


def _ndtri(p: float) -> float:
    return float(special.ndtri(p))


def _bvn_excess(a: float, b: float, r: float) -> float:
    """Φ₂(a, b; r) − Φ(a)Φ(b) = ∫_0^r φ₂(a, b; t) dt (Plackett's identity), to quadrature
    accuracy (~1e-13): the covariance of the indicators 1[X < a] and 1[Y < b]."""
    if not (math.isfinite(a) and math.isfinite(b)) or r == 0.0:
        return 0.0
    prod = float(special.ndtr(a) * special.ndtr(b))
    if r >= 1.0:
        return float(special.ndtr(min(a, b))) - prod
    if r <= -1.0:
        return max(0.0, float(special.ndtr(a) + special.ndtr(b) - 1.0)) - prod

    def density(t: float) -> float:
        one = 1.0 - t * t
        return math.exp(-(a * a - 2.0 * t * a * b + b * b) / (2.0 * one)) / (
            2.0 * math.pi * math.sqrt(one)
        )

    from scipy import integrate

    area, _ = integrate.quad(density, 0.0, r, epsabs=1e-15, epsrel=1e-13, limit=200)
    return float(area)


@dataclass(frozen=True)
class StreamMoments:
    """Exact moments of one root's stream values M_i = k_i/(2J) and H_i = h_i/n_h."""

    model_mean: float
    model_variance: float
    human_mean: float
    human_variance: float
    covariance: float


def stream_moments(
    panel: Panel,
    scenario: TruthScenario,
    human_rate: float,
    n_h: int,
    human_icc: float | None = None,
) -> StreamMoments:
    """Exact E, Var of M_i and H_i and Cov(M_i, H_i) under the copula (bivariate orthants);
    ``human_icc`` the human sheet's vote ICC (two humans' latents then correlate r, not ρ_s²)."""

    p_h = open_unit("human_rate", human_rate, _RATE)
    nh = int_at_least("n_h", n_h, 1)
    run = scenario_panel(panel, scenario)
    rates = judge_rates(run, scenario).reshape(-1)
    sigma = run.latent_correlation_matrix()
    d = rates.size
    cut = [_ndtri(float(p)) for p in rates]
    var_k = float(np.sum(rates * (1.0 - rates)))
    for x in range(d):
        for y in range(x + 1, d):
            var_k += 2.0 * _bvn_excess(cut[x], cut[y], float(sigma[x, y]))
    rs = scenario.stream_correlation
    cut_h = _ndtri(p_h)
    r_hh = rs * rs if human_icc is None else latent_for_icc(p_h, human_icc, rs * rs)
    var_h = nh * p_h * (1.0 - p_h) + nh * (nh - 1) * _bvn_excess(cut_h, cut_h, r_hh)
    r_x = rs * math.sqrt(run.eigenvalues()[0] / d)
    cov_kh = nh * math.fsum(_bvn_excess(c, cut_h, r_x) for c in cut)
    return StreamMoments(
        model_mean=float(np.mean(rates)),
        model_variance=max(var_k, 0.0) / d**2,
        human_mean=p_h,
        human_variance=max(var_h, 0.0) / nh**2,
        covariance=cov_kh / (d * nh),
    )
