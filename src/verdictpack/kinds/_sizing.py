"""The sizing layer (kind ``sizing``): exact sample sizes, standard and decisive side by side.

Each arm of the protocol is sized at every design point:

* ``paired_t`` / ``one_sample_t``: exact power from the noncentral t (both rejection tails), the
  smallest n reaching the target, the normal-approximation n beside it, the power at the protocol's
  current n, and a seeded simulation of the t test with *estimated* variance at each size, compared
  with the exact power (never with the target);
* ``binomial``: one-sample exact binomial; the critical region from the null (equal tails when
  two-sided), the achieved alpha, the first n reaching the target and the stable n from which every
  larger n does (the saw-tooth), with the closed-form normal n beside it;
* ``two_proportions``: the construct's own contrast (human baseline against the governing threshold,
  both thresholds converted to Cohen's h), closed form on the arcsine scale.

A design point's ``alpha`` is two-sided; a one-sided arm is tested at ``alpha / 2`` (the same tail).
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Annotated, Any, Literal

from pydantic import Field, model_validator

from verdictpack._errors import InputError
from verdictpack._results import Quantity, closed_form, exact, simulated
from verdictpack._rng import stream
from verdictpack.config._compiler import (
    ConfigSource,
    Construct,
    ConstructSpec,
    CrossRule,
    Found,
    StrictModel,
    compile_construct,
    model_at,
    refuse,
    unique,
)
from verdictpack.config._provenance import Provenance, provenance
from verdictpack.config._refusals import (
    MAX_SEED,
    SEED_TEXT,
    Loc,
    Refusals,
    expected_text,
    governing_loc,
)
from verdictpack.core import _exact as _stats
from verdictpack.core._scales import cohens_h, p_from_h, phi
from verdictpack.kinds._base import Layer, RunOptions, report_progress

__all__ = [
    "BinomialArmResult",
    "DesignPoint",
    "SizingConfig",
    "SizingResult",
    "TArmResult",
    "TwoProportionArmResult",
    "run_sizing",
    "size_binomial_arm",
    "size_t_arm",
]

# ----------------------------------------------------------------------------------------------
# Config schema
# ----------------------------------------------------------------------------------------------

NonEmptyText = Annotated[str, Field(min_length=1)]


class DesignPointSpec(StrictModel):
    alpha: float = Field(gt=0.0, lt=0.5, description="two-sided significance level")
    power: float = Field(gt=0.0, lt=1.0, description="target power")


class DesignPoints(StrictModel):
    standard: DesignPointSpec = Field(
        description="the standard design point (alpha, power); every arm is sized at it"
    )
    decisive: DesignPointSpec = Field(
        description="the decisive design point (alpha, power), sized beside the standard one"
    )


class SimulationSpec(StrictModel):
    replicates: int = Field(ge=1000, le=5_000_000, description="replicates of each simulated check")


# The largest sample size a sizing arm may come to (the largest current_n / check_n): an arm
# whose size at a design point exceeds it is refused at the field that sets its effect, with the
# closed-form n in the message, before anything is computed.
MAX_N = 1_000_000


class TArmSpec(StrictModel):
    test: Literal["paired_t", "one_sample_t"] = Field(
        description="the t test sized: exact power from the noncentral t, both rejection tails"
    )
    name: NonEmptyText = Field(description="the arm's name, unique among the arms (reported)")
    unit: NonEmptyText = Field(
        description="what one unit of n counts, e.g. 'pairs' or 'items' (printed after each n)"
    )
    dz: float = Field(
        gt=0.0,
        le=10.0,
        description="standardized effect (mean / sd of differences); an effect so small that "
        f"the exact n exceeds {MAX_N:,} at a design point is refused",
    )
    sides: Literal[1, 2] = Field(
        description="1 or 2 rejection tails; a one-sided arm is tested at the design point's "
        "alpha / 2"
    )
    current_n: int | None = Field(
        default=None,
        ge=2,
        le=1_000_000,
        description="the n the protocol has now, 2 to 1,000,000: its exact power is reported at "
        "each design point (default: none)",
    )
    check_n: list[Annotated[int, Field(ge=2, le=1_000_000)]] = Field(
        default_factory=list,
        description="further sizes, each 2 to 1,000,000, where a seeded simulation of the t test "
        "with estimated variance is compared with the exact power (default: none)",
    )


class BinomialArmSpec(StrictModel):
    test: Literal["binomial"] = Field(
        description="a one-sample exact binomial test of p0 against p1 (or effect_h)"
    )
    name: NonEmptyText = Field(description="the arm's name, unique among the arms (reported)")
    unit: NonEmptyText = Field(
        description="what one unit of n counts, e.g. 'pairs' or 'items' (printed after each n)"
    )
    p0: float = Field(gt=0.0, lt=1.0, description="null rate")
    p1: float | None = Field(
        default=None,
        gt=0.0,
        lt=1.0,
        description=f"alternative rate (so close to p0 that n exceeds {MAX_N:,}: refused)",
    )
    effect_h: float | None = Field(
        default=None,
        description="alternative as Cohen's h from p0 (so small that n exceeds "
        f"{MAX_N:,}: refused)",
    )
    sides: Literal[1, 2] = Field(
        description="1 or 2 rejection tails; a one-sided arm is tested at the design point's "
        "alpha / 2"
    )

    @model_validator(mode="after")
    def _alternative(self) -> BinomialArmSpec:
        refuse(_binomial_cross(self))
        return self


def _binomial_cross(arm: BinomialArmSpec) -> Iterable[Found]:
    if (arm.p1 is None) == (arm.effect_h is None):
        yield (
            (),
            {"p1": arm.p1, "effect_h": arm.effect_h},
            "exactly one of p1 or effect_h (the alternative)",
        )
    elif arm.p1 == arm.p0:
        yield (("p1",), arm.p1, "an alternative rate different from p0")
    elif arm.effect_h is not None:
        h = arm.effect_h
        if h == 0 or not 0 < phi(arm.p0) + h < math.pi:
            yield (
                ("effect_h",),
                h,
                "a non-zero h whose alternative rate stays inside (0, 1) from p0",
            )


class TwoProportionArmSpec(StrictModel):
    test: Literal["two_proportions"] = Field(
        description="the construct's own contrast: human baseline against the governing "
        "threshold, closed form on the arcsine scale (n per group)"
    )
    name: NonEmptyText = Field(description="the arm's name, unique among the arms (reported)")
    unit: NonEmptyText = Field(
        description="what one unit of n counts, e.g. 'pairs' or 'items' (printed after each n)"
    )
    sides: Literal[1, 2] = Field(
        description="1 or 2 rejection tails; a one-sided arm is tested at the design point's "
        "alpha / 2"
    )


ArmSpec = Annotated[TArmSpec | BinomialArmSpec | TwoProportionArmSpec, Field(discriminator="test")]


class SizingConfig(StrictModel):
    kind: Literal["sizing"] = Field(description="the config kind: 'sizing'")
    seed: int = Field(ge=0, le=MAX_SEED, description=SEED_TEXT)
    construct_spec: ConstructSpec = Field(
        alias="construct", description="the construct, shared by every kind"
    )
    design_points: DesignPoints = Field(
        description="the two design points (standard, decisive) every arm is sized at"
    )
    simulation: SimulationSpec = Field(description="the seeded simulated checks of the t arms")
    arms: Annotated[list[ArmSpec], unique("a name not used by another arm")] = Field(
        min_length=1,
        description="the arms to size, at least one, each chosen by its 'test' (names unique)",
    )


def _arm_effect(arm: Any, index: int, construct: Construct) -> tuple[Loc, str]:
    """The field that sets an arm's effect, and the arm described for a message."""
    if isinstance(arm, TArmSpec):
        return ("arms", index, "dz"), f"arm {arm.name!r} (dz {arm.dz:g})"
    if isinstance(arm, BinomialArmSpec):
        field = "p1" if arm.p1 is not None else "effect_h"
        return ("arms", index, field), f"arm {arm.name!r}"
    return governing_loc(construct), (
        f"arm {arm.name!r} (the construct's governing threshold h "
        f"{construct.governing_threshold_h:.6g})"
    )


def _closed_form_n(arm: Any, construct: Construct | None, alpha: float, power: float) -> int:
    if isinstance(arm, TArmSpec):
        return _stats.normal_n_t(arm.dz, alpha, power, arm.sides)
    if isinstance(arm, BinomialArmSpec):
        p1 = arm.p1 if arm.p1 is not None else p_from_h(arm.p0, float(arm.effect_h or 0))
        return _stats.binomial_normal_n(arm.p0, p1, alpha, power, arm.sides)
    if construct is None:  # pragma: no cover - callers skip two-proportion arms then
        raise InputError("construct", "a compiled construct", None)
    return _stats.two_proportion_n(construct.governing_threshold_h, alpha, power, arm.sides)


def _size_bounds(cfg: SizingConfig) -> Iterable[Found]:
    """Every arm's closed-form n at every design point, before anything is computed: a size
    beyond MAX_N (or one the statistics cannot form) is refused at the field setting the
    arm's effect (the design point's alpha when its quantile is not finite)."""
    points = cfg.design_points
    construct = compile_construct(cfg.construct_spec)
    for i, arm in enumerate(cfg.arms):
        loc, described = _arm_effect(arm, i, construct)
        worst: tuple[int, str] | None = None
        for name, point in (("standard", points.standard), ("decisive", points.decisive)):
            alpha = point.alpha if arm.sides == 2 else point.alpha / 2.0
            try:
                n = _closed_form_n(arm, construct, alpha, point.power)
            except InputError as exc:
                if exc.parameter == "alpha":
                    what = f"the {name} design point's normal quantile"
                    yield ("design_points", name, "alpha"), point.alpha, expected_text(exc, what)
                    worst = None
                    break
                n = _stats.MAX_EXACT_SIZE + 1
            if worst is None or n > worst[0]:
                worst = (n, name)
        if worst is not None and worst[0] > MAX_N:
            needs = (
                f"{worst[0]:,}"
                if worst[0] <= _stats.MAX_EXACT_SIZE
                else f"more than 2^53 = {_stats.MAX_EXACT_SIZE:,}"
            )
            yield (
                loc,
                model_at(cfg, loc),
                f"an effect whose sample size stays within the maximum n of {MAX_N:,} "
                f"({described} needs n = {needs} by the closed form at the {worst[1]} "
                "design point)",
            )


RULES: tuple[CrossRule, ...] = (CrossRule(at=(), check=_size_bounds),)

# ----------------------------------------------------------------------------------------------
# Result objects
# ----------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class DesignPoint:
    name: str
    alpha: float
    power: float


@dataclass(frozen=True)
class TDesignSize:
    design: str
    test_alpha: float
    target_power: float
    n: Quantity
    power_at_n: Quantity
    power_at_n_minus_1: Quantity | None
    normal_n: Quantity
    simulated_power_at_n: Quantity
    simulated_minus_exact_in_mcse: float


@dataclass(frozen=True)
class PowerAtN:
    design: str
    n: int
    exact_power: Quantity
    known_variance_power: Quantity
    simulated_power: Quantity | None
    simulated_minus_exact_in_mcse: float | None


@dataclass(frozen=True)
class TArmResult:
    name: str
    test: str
    unit: str
    dz: float
    sides: int
    sizes: tuple[TDesignSize, ...]
    current_n: int | None
    at_current_n: tuple[PowerAtN, ...]
    checks: tuple[PowerAtN, ...]


@dataclass(frozen=True)
class BinomialDesignSize:
    design: str
    test_alpha: float
    target_power: float
    first_n: Quantity
    power_at_first: Quantity
    power_at_first_minus_1: Quantity | None
    region_lower: int | None
    region_upper: int | None
    achieved_alpha: Quantity
    stable_n: Quantity
    power_at_stable: Quantity
    stable_region_lower: int | None
    stable_region_upper: int | None
    failing_between: tuple[int, ...]
    search_horizon: int
    normal_n: Quantity
    design_uses: str


@dataclass(frozen=True)
class BinomialArmResult:
    name: str
    test: str
    unit: str
    p0: float
    p1: float
    h: float
    sides: int
    direction: str
    sizes: tuple[BinomialDesignSize, ...]


@dataclass(frozen=True)
class TwoProportionDesignSize:
    design: str
    test_alpha: float
    target_power: float
    n_per_group: Quantity
    total: Quantity
    power_at_n: Quantity


@dataclass(frozen=True)
class TwoProportionArmResult:
    name: str
    test: str
    unit: str
    p0: float
    threshold_h: float
    threshold_odds_ratio: float
    threshold_h_from_odds_ratio: float
    governs: str
    governing_h: float
    p1: float
    sides: int
    sizes: tuple[TwoProportionDesignSize, ...]


ArmResult = TArmResult | BinomialArmResult | TwoProportionArmResult


@dataclass(frozen=True)
class SizingResult:
    kind: str
    construct: Construct
    seed: int
    replicates: int
    design_points: tuple[DesignPoint, ...]
    arms: tuple[ArmResult, ...]
    provenance: Provenance


# ----------------------------------------------------------------------------------------------
# Computation
# ----------------------------------------------------------------------------------------------


def _opt_exact(value: float | None) -> Quantity | None:
    return None if value is None else exact(value)


def _test_alpha(point: DesignPoint, sides: int) -> float:
    """A design point's alpha is two-sided; a one-sided test keeps one tail of it."""
    return point.alpha if sides == 2 else point.alpha / 2.0


def _sim_check(
    n: int, dz: float, alpha: float, sides: int, replicates: int, seed: int, purpose: str
) -> tuple[Quantity, float]:
    sim = _stats.simulate_t_power(n, dz, alpha, sides, replicates, stream(seed, purpose))
    fig = simulated(sim.power, sim.mcse, sim.replicates)
    exact_power = _stats.t_power(n, dz, alpha, sides)
    z = (sim.power - exact_power) / sim.mcse if sim.mcse > 0 else 0.0
    return fig, round(z, 6)


def _known_variance_power(n: int, dz: float, alpha: float, sides: int) -> float:
    from scipy.stats import norm

    z = float(norm.isf(alpha / sides))
    shift = dz * math.sqrt(n)
    power = float(norm.sf(z - shift))
    if sides == 2:
        power += float(norm.cdf(-z - shift))
    return power


def _power_at(
    point: DesignPoint, n: int, dz: float, sides: int, replicates: int | None, seed: int, tag: str
) -> PowerAtN:
    alpha = _test_alpha(point, sides)
    sim: Quantity | None = None
    z: float | None = None
    if replicates is not None:
        sim, z = _sim_check(n, dz, alpha, sides, replicates, seed, f"{tag}/{point.name}/n={n}")
    return PowerAtN(
        design=point.name,
        n=n,
        exact_power=exact(_stats.t_power(n, dz, alpha, sides)),
        known_variance_power=closed_form(_known_variance_power(n, dz, alpha, sides)),
        simulated_power=sim,
        simulated_minus_exact_in_mcse=z,
    )


def size_t_arm(
    spec: TArmSpec, points: tuple[DesignPoint, ...], replicates: int, seed: int, tag: str
) -> TArmResult:
    sizes = []
    for point in points:
        alpha = _test_alpha(point, spec.sides)
        ts = _stats.t_sample_size(spec.dz, alpha, point.power, spec.sides, n_max=MAX_N)
        sim, z = _sim_check(
            ts.n, spec.dz, alpha, spec.sides, replicates, seed, f"{tag}/{point.name}/size"
        )
        sizes.append(
            TDesignSize(
                design=point.name,
                test_alpha=alpha,
                target_power=point.power,
                n=exact(ts.n),
                power_at_n=exact(ts.power_at_n),
                power_at_n_minus_1=_opt_exact(ts.power_at_n_minus_1),
                normal_n=closed_form(ts.normal_n),
                simulated_power_at_n=sim,
                simulated_minus_exact_in_mcse=z,
            )
        )
    current: tuple[PowerAtN, ...] = ()
    if spec.current_n is not None:
        current = tuple(
            _power_at(p, spec.current_n, spec.dz, spec.sides, None, seed, tag) for p in points
        )
    checks = tuple(
        _power_at(p, n, spec.dz, spec.sides, replicates, seed, f"{tag}/check")
        for n in spec.check_n
        for p in points
    )
    return TArmResult(
        name=spec.name,
        test=spec.test,
        unit=spec.unit,
        dz=spec.dz,
        sides=spec.sides,
        sizes=tuple(sizes),
        current_n=spec.current_n,
        at_current_n=current,
        checks=checks,
    )


def _binomial_size(
    p0: float, p1: float, alpha: float, power: float, sides: int
) -> _stats.BinomialSize:
    """The exact binomial size on the default horizon (twice the closed-form n, at least + 200)
    or, where the target or a stable n lies beyond it (a rate near 0 or 1 makes the normal
    approximation short), on horizons four times longer each, up to twice MAX_N."""
    try:
        return _stats.binomial_sample_size(p0, p1, alpha, power, sides)
    except InputError as exc:
        if exc.parameter != "n_max" or not isinstance(exc.received, int):
            raise
        horizon = exc.received
    while True:
        horizon = min(4 * horizon, 2 * MAX_N)
        try:
            return _stats.binomial_sample_size(p0, p1, alpha, power, sides, n_max=horizon)
        except InputError as exc:
            if exc.parameter != "n_max" or horizon >= 2 * MAX_N:
                raise


def size_binomial_arm(spec: BinomialArmSpec, points: tuple[DesignPoint, ...]) -> BinomialArmResult:
    p1 = spec.p1 if spec.p1 is not None else p_from_h(spec.p0, float(spec.effect_h or 0.0))
    direction = "greater" if p1 > spec.p0 else "less"
    sizes = []
    for point in points:
        alpha = _test_alpha(point, spec.sides)
        bs = _binomial_size(spec.p0, p1, alpha, point.power, spec.sides)
        if bs.stable_n > MAX_N:
            raise InputError(
                "n",
                f"an alternative whose exact stable n is at most {MAX_N:,} (here {bs.stable_n:,} "
                f"at the {point.name} design point; closed form {bs.normal_n:,})",
                bs.stable_n,
            )
        uses = (
            "first n (the stable n is printed beside it)"
            if bs.first_n == bs.stable_n
            else "stable n (power dips below target between the first and the stable n)"
        )
        sizes.append(
            BinomialDesignSize(
                design=point.name,
                test_alpha=alpha,
                target_power=point.power,
                first_n=exact(bs.first_n),
                power_at_first=exact(bs.power_at_first),
                power_at_first_minus_1=_opt_exact(bs.power_at_first_minus_1),
                region_lower=bs.region_at_first.lower,
                region_upper=bs.region_at_first.upper,
                achieved_alpha=exact(bs.region_at_first.achieved_alpha),
                stable_n=exact(bs.stable_n),
                power_at_stable=exact(bs.power_at_stable),
                stable_region_lower=bs.region_at_stable.lower,
                stable_region_upper=bs.region_at_stable.upper,
                failing_between=tuple(int(n) for n in bs.failing_between),
                search_horizon=int(bs.n_max),
                normal_n=closed_form(bs.normal_n),
                design_uses=uses,
            )
        )
    return BinomialArmResult(
        name=spec.name,
        test=spec.test,
        unit=spec.unit,
        p0=spec.p0,
        p1=p1,
        h=cohens_h(p1, spec.p0),
        sides=spec.sides,
        direction=direction,
        sizes=tuple(sizes),
    )


def size_two_proportions(
    spec: TwoProportionArmSpec, construct: Construct, points: tuple[DesignPoint, ...]
) -> TwoProportionArmResult:
    h = construct.governing_threshold_h
    sizes = []
    for point in points:
        alpha = _test_alpha(point, spec.sides)
        n = _stats.two_proportion_n(h, alpha, point.power, spec.sides)
        sizes.append(
            TwoProportionDesignSize(
                design=point.name,
                test_alpha=alpha,
                target_power=point.power,
                n_per_group=closed_form(n),
                total=closed_form(2 * n),
                power_at_n=closed_form(_stats.two_proportion_power(n, h, alpha, spec.sides)),
            )
        )
    return TwoProportionArmResult(
        name=spec.name,
        test=spec.test,
        unit=spec.unit,
        p0=construct.human_baseline_rate,
        threshold_h=construct.threshold_h,
        threshold_odds_ratio=construct.threshold_odds_ratio,
        threshold_h_from_odds_ratio=construct.threshold_h_from_odds_ratio,
        governs=construct.governs,
        governing_h=h,
        p1=construct.p1_at_threshold,
        sides=spec.sides,
        sizes=tuple(sizes),
    )


def run_sizing(
    config: SizingConfig, source: ConfigSource, options: RunOptions | None = None
) -> SizingResult:
    """Size every arm of a validated sizing config."""
    construct = compile_construct(config.construct_spec)
    points = (
        DesignPoint(
            "standard", config.design_points.standard.alpha, config.design_points.standard.power
        ),
        DesignPoint(
            "decisive", config.design_points.decisive.alpha, config.design_points.decisive.power
        ),
    )
    reps = config.simulation.replicates
    refusals = Refusals(source)
    arms: list[ArmResult] = []
    tick = report_progress(options, "sizing: arms")
    for i, arm in enumerate(config.arms):
        if tick is not None:
            tick(i, len(config.arms))
        tag = f"sizing/arm{i}"
        loc, described = _arm_effect(arm, i, construct)
        with refusals.at(
            loc,
            f"the exact sizing of {described}",
            params={
                "current_n": ("arms", i, "current_n"),
                "p0": ("arms", i, "p0"),
                "alpha": ("design_points",),
                "power": ("design_points",),
            },
            hint=f"a size within the maximum n of {MAX_N:,} needs a larger effect",
        ):
            if isinstance(arm, TArmSpec):
                arms.append(size_t_arm(arm, points, reps, config.seed, tag))
            elif isinstance(arm, BinomialArmSpec):
                arms.append(size_binomial_arm(arm, points))
            else:
                arms.append(size_two_proportions(arm, construct, points))
    if tick is not None:
        tick(len(config.arms), len(config.arms))
    return SizingResult(
        kind="sizing",
        construct=construct,
        seed=config.seed,
        replicates=reps,
        design_points=points,
        arms=tuple(arms),
        provenance=provenance(source, "sizing", config.seed, {"replicates": reps}),
    )


LAYER = Layer(
    kind="sizing",
    summary="exact sample sizes for every arm, standard and decisive side by side",
    model=SizingConfig,
    rules=RULES,
    run=run_sizing,
)
