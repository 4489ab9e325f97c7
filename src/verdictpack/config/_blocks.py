"""Config blocks shared by the verdict, judges, engine and battery kinds, and their compilation.

* ``sequential``: the e-process construction (``corners`` or ``hybrid``), the bet grid and the
  cap on roots — fixed in the config before any data and recorded in provenance;
* ``panel``: judges as character sheets plus the panel's latent correlation;
* ``human``: human judgments per root, their cost and the optional human sheet (``icc``);
* ``routes``: the SPRT's beta and the fixed-n design's power (the cheaper routes beside the
  e-process).

Every block is validated like the construct: strict types, unknown keys refused, every defect
named with its JSON path. Building a panel block into the generative model (and the cross rule
that does so to report a panel the model refuses at its JSON path) lives a floor above, in
:mod:`verdictpack.simulate._panels`: this module imports nothing above ``core``.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Annotated, Any, Literal

from pydantic import Field, model_validator

from verdictpack._errors import MISSING, InputError
from verdictpack.config._compiler import (
    Construct,
    CrossRule,
    Found,
    NonEmptyText,
    StrictModel,
    compile_construct,
    model_at,
    raw_at,
    refuse,
    unique,
)
from verdictpack.config._refusals import Loc, expected_text, governing_loc
from verdictpack.core._exact import two_proportion_n
from verdictpack.core._icc import latent_for_icc
from verdictpack.core._mixture import MAX_BETS, MixtureSpec
from verdictpack.core._tracks import TrackSettings

__all__ = [
    "DEFAULT_LAMBDAS",
    "MAX_COST",
    "MAX_ROOTS",
    "HumanPrices",
    "HumanSpec",
    "JudgeSheetSpec",
    "PanelSpec",
    "RoutesSpec",
    "SequentialSettings",
    "SequentialSpec",
    "build_sequential",
    "fixed_n_defect",
    "human_icc_field",
    "human_icc_rule",
    "kappa_bound_level_field",
    "kappa_min_field",
    "price",
    "route_rules",
]

DEFAULT_LAMBDAS = (0.05, 0.10, 0.20, 0.40, 0.80)

# The largest number of roots a design may plan: the cap of the sequential run and the fixed-n
# route's closed-form size (a threshold so small that the fixed-n route needs more is refused).
MAX_ROOTS = 1_000_000
# The largest price of one judgment, reading or touch: with at most MAX_ROOTS roots, every cost
# total, mean and Monte Carlo error stays a finite number far below the float range.
MAX_COST = 1e9
_COST_TEXT = f"at most {MAX_COST:.0e} (a bound that keeps every total finite)"


class SequentialSpec(StrictModel):
    """The anytime-valid route, fixed before data."""

    construction: Literal["corners", "hybrid"] = Field(
        description="how the two streams' confidence sequences become an interval for h"
    )
    lambdas: list[Annotated[float, Field(gt=0.0, lt=1.0)]] = Field(
        default_factory=lambda: list(DEFAULT_LAMBDAS),
        min_length=1,
        max_length=MAX_BETS,
        description=f"bet grid of the mixture e-process, each in (0, 1), at most {MAX_BETS} bets",
    )
    weights: list[Annotated[float, Field(gt=0.0)]] | None = Field(
        default=None, description="mixture weights summing to 1 (default: equal)"
    )
    bets: Literal["grid", "plugin", "blend", "horizon"] = Field(
        default="grid",
        description='the bets of every stream\'s confidence sequence: "grid" (default) the '
        'fixed-grid mixture of lambdas and weights; "plugin" predictable plug-in bets fitted to '
        'the stream\'s variance (narrower on streams that vary little); "blend" half the '
        'capital on each, within log 2 of the better; "horizon" the plug-in bets tuned to '
        "cap_roots (the narrowest interval near the cap, later verdicts before it; "
        "docs/statistics.md §5b)",
    )
    cap_roots: int = Field(
        ge=1, le=MAX_ROOTS, description=f"roots before INCONCLUSIVE, at most {MAX_ROOTS:,}"
    )

    @model_validator(mode="after")
    def _weights(self) -> SequentialSpec:
        if self.weights is not None:
            refuse(_weights_check(self.lambdas, self.weights))
        return self


def _weights_check(lambdas: list[float], weights: list[float]) -> Iterable[Found]:
    if len(weights) != len(lambdas):
        yield (("weights",), weights, f"{len(lambdas)} weights, one per lambda")
    if abs(sum(weights) - 1.0) > 1e-12:
        yield (("weights",), weights, "weights summing to 1")


class JudgeSheetSpec(StrictModel):
    name: NonEmptyText = Field(description="the judge's name, unique within its panel")
    role: NonEmptyText = Field(description="free text: what kind of judge this is (reported)")
    baseline_rate: float = Field(gt=0.0, lt=1.0, description="P(prefers treatment), no effect")
    lean_h: float = Field(
        ge=-3.2, le=3.2, description="shift in h units when the effect is present"
    )
    noise: float = Field(ge=0.0, le=1.0, description="attenuation toward chance")
    position_bias: float = Field(default=0.0, ge=0.0, lt=0.5, description="shift toward first")
    cost_per_judgment: float = Field(
        ge=0.0, le=MAX_COST, description=f"price of one judgment, {_COST_TEXT}"
    )


_JUDGE_ONCE = "a judge name not used by another judge"


class PanelSpec(StrictModel):
    name: NonEmptyText = Field(description="the panel's name (reported)")
    latent_correlation: float = Field(
        ge=-1.0,
        le=1.0,
        description="rho, the correlation between two judges' latents on one root, in [-1, 1] "
        "(refused when the judges' correlation matrix is not positive semi-definite)",
    )
    order_correlation: float | None = Field(
        default=None, ge=-1.0, le=1.0, description="a judge's two orders (default: as judges)"
    )
    judges: Annotated[list[JudgeSheetSpec], unique(_JUDGE_ONCE)] = Field(
        min_length=1,
        description="the judges' character sheets, at least one; each judges every root in both "
        "orders",
    )


def human_icc_field() -> Any:
    """``icc``, the human sheet's between-item heterogeneity, as every human block declares it."""
    return Field(
        default=None,
        ge=0.0,
        le=1.0,
        description="the human sheet: the intraclass correlation of two humans' votes on the "
        "same root (the share of a vote's variance between roots; typical 0.3 to 0.6), "
        "simulated through a root latent the humans share; absent: the humans share only the "
        "stream correlation's root latent. At least what the stream correlation already gives",
    )


class HumanSpec(StrictModel):
    judgments_per_root: int = Field(
        ge=1, le=100, description="human judgments per root at the baseline rate, 1 to 100"
    )
    cost_per_judgment: float = Field(
        ge=0.0, le=MAX_COST, description=f"price of one human judgment, {_COST_TEXT}"
    )
    icc: float | None = human_icc_field()


@dataclass(frozen=True)
class HumanPrices:
    """One place for the human price per kind of touch, inherited where not overridden.

    ``default`` is the path of an optional price (e.g. ``human.cost_per_touch``); each of
    ``touches`` (the path of a touch kind's own price field: a judgment, an audit reading, a
    spot-check pass) that is omitted inherits it, before the schema sees the config, so the
    validated config and the results hold the resolved prices. Where ``required``, a touch kind
    with neither its own price nor the default is refused by :meth:`rule`, naming both fields;
    otherwise an omitted price keeps the field's own default (a kind whose prices default to 0).
    """

    default: Loc
    touches: tuple[Loc, ...]
    required: bool

    def inherit(self, data: Any) -> Any:
        """``data`` (a raw config) with the default filled into every omitted touch price (a
        ``null`` counts as omitted)."""
        price = raw_at(data, self.default, MISSING)
        if price is MISSING or price is None or not isinstance(data, dict):
            return data
        out = dict(data)  # copies of the objects on the touches' paths only, never the rest
        for loc in self.touches:
            parent = out
            for part in loc[:-1]:
                if not isinstance(parent.get(part), dict):
                    break
                parent[part] = parent = dict(parent[part])
            else:
                if parent.get(loc[-1]) is None:
                    parent[loc[-1]] = price
        return out

    def rule(self) -> CrossRule:
        """Refuse (when ``required``) a touch kind that has no price at all."""

        def check(cfg: Any) -> Iterable[Found]:
            if not self.required or model_at(cfg, self.default) is not None:
                return
            where = ".".join(str(p) for p in self.default)
            for loc in self.touches:
                parent = model_at(cfg, loc[:-1])
                if parent is not None and model_at(parent, loc[-1:]) is None:
                    yield (
                        loc,
                        MISSING,
                        f"a price: this field, or {where}, the price every human touch "
                        "inherits where its own is omitted",
                    )

        return CrossRule(at=(), check=check)


def price(value: float | None, field: str) -> float:
    """A resolved human price (a config validated with its :class:`HumanPrices` rule has every
    price; an API caller who built one without is refused here, by the field's name)."""
    if value is None:
        raise InputError(field, "a price (or the default human price it inherits)", value)
    return value


class RoutesSpec(StrictModel):
    sprt_beta: float = Field(gt=0.0, lt=0.5, description="the SPRT's type-II error")
    fixed_n_power: float = Field(
        gt=0.0,
        lt=1.0,
        description="power the fixed-n design targets; its closed-form size at the governing "
        f"threshold may not exceed {MAX_ROOTS:,} roots (a smaller threshold is refused)",
    )


@dataclass(frozen=True)
class SequentialSettings:
    construction: str
    spec: MixtureSpec
    cap_roots: int
    bets: str = "grid"

    def bets_record(self) -> dict[str, str | int]:
        """The bets for provenance settings: recorded only when not the default grid (so the
        outputs of grid runs stay as they were); absent means "grid". The "horizon" bets add
        their design N (``horizon``: the cap they are tuned to)."""
        if self.bets == "grid":
            return {}
        if self.bets == "horizon":
            return {"bets": self.bets, "horizon": self.cap_roots}
        return {"bets": self.bets}

    def other_construction(self) -> str:
        return "hybrid" if self.construction == "corners" else "corners"

    def constructions(self) -> tuple[str, str]:
        """The registered construction first, the comparison second."""
        return (self.construction, self.other_construction())

    def tracks(self, construct: Construct) -> TrackSettings:
        """The three tracks' settings under ``construct``: the engine's run, a study's trace
        and a live study's stream all take theirs from here."""
        return TrackSettings(
            construction=self.construction,
            other=self.other_construction(),
            alpha=construct.per_tail_alpha,
            spec=self.spec,
            threshold_h=construct.governing_threshold_h,
            extension_h=construct.extension_minimum_h,
            claims=track_claims(construct),
            bets=self.bets,
            horizon=self.cap_roots,
        )


def track_claims(construct: Construct) -> dict[str, str]:
    """Each track's claim: the registered claim, the extension claim, the registered again."""
    return {
        "registered": construct.registered_claim,
        "extension": construct.extension_claim,
        "comparison": construct.registered_claim,
    }


def build_sequential(spec: SequentialSpec) -> SequentialSettings:
    weights = None if spec.weights is None else tuple(spec.weights)
    return SequentialSettings(
        construction=spec.construction,
        spec=MixtureSpec(lambdas=tuple(spec.lambdas), weights=weights),
        cap_roots=spec.cap_roots,
        bets=spec.bets,
    )


# ----------------------------------------------------------------------------------------------
# Cross rules
# ----------------------------------------------------------------------------------------------


def human_icc_rule(human: Loc, stream_correlations: Callable[[Any], Iterable[float]]) -> CrossRule:
    """Refuse a human sheet's ICC (``human`` + ``icc``) below the lowest the config's stream
    correlations allow: two humans' latents already correlate ρ_s² through the panel."""

    def check(cfg: Any) -> Iterable[Found]:
        icc = model_at(cfg, (*human, "icc"))
        if icc is None:
            return
        rs = max((abs(float(x)) for x in stream_correlations(cfg)), default=0.0)
        rate = compile_construct(cfg.construct_spec).human_baseline_rate
        try:
            latent_for_icc(rate, icc, rs * rs)
        except InputError as exc:
            yield (*human, "icc"), icc, exc.allowed

    return CrossRule(at=(), check=check)


def fixed_n_defect(
    construct: Construct, fixed_n_power: float
) -> tuple[int | None, tuple[Loc, str] | None]:
    """The fixed-n route's planned roots, or the field to refuse and why: a closed-form size
    beyond MAX_ROOTS (or one the statistics cannot form) is refused at the governing threshold,
    at ``construct.alpha`` when its normal quantile is not finite, at ``routes.fixed_n_power``
    when the power is refused."""
    h = construct.governing_threshold_h
    alpha = 2 * construct.per_tail_alpha
    what = "the fixed-n route's closed-form size"
    try:
        n = two_proportion_n(h, alpha, fixed_n_power, 1)
    except InputError as exc:
        if exc.parameter == "alpha":
            return None, (("construct", "alpha"), expected_text(exc, what))
        if exc.parameter == "power":
            return None, (("routes", "fixed_n_power"), expected_text(exc, what))
        n = MAX_ROOTS + 1
        needs = "more than 2^53"
    else:
        needs = f"{n:,}"
    if n > MAX_ROOTS:
        return None, (
            governing_loc(construct),
            f"a threshold the fixed-n route can reach within {MAX_ROOTS:,} roots (the largest "
            f"cap_roots): the governing h = {h:.6g} at per-side alpha {alpha:g} and power "
            f"{fixed_n_power:g} needs n = {needs} roots by the closed form 2((z_a + z_b)/h)^2",
        )
    return n, None


def _route_bounds(cfg: Any) -> Iterable[Found]:
    construct = compile_construct(cfg.construct_spec)
    _, defect = fixed_n_defect(construct, cfg.routes.fixed_n_power)
    if defect is not None:
        loc, expected = defect
        yield loc, model_at(cfg, loc), expected


def route_rules() -> list[CrossRule]:
    """The design bounds of the sequential kinds, checked before anything is computed."""
    return [CrossRule(at=(), check=_route_bounds)]


def kappa_min_field() -> Any:
    """``kappa_min``, the reader-audit gate, as every kind with a reader audit declares it."""
    return Field(
        gt=0.0, lt=1.0, description="instrument gate on the lower confidence bound of kappa"
    )


def kappa_bound_level_field() -> Any:
    """``kappa_bound_level``: the level of the bound the gate is on (docs/statistics.md §11)."""
    return Field(
        default=0.95,
        gt=0.5,
        lt=1.0,
        description="level of the one-sided lower confidence bound of kappa the gate is on, in "
        "(0.5, 1): the instrument is valid when this bound reaches kappa_min (an instrument "
        "whose true kappa is below kappa_min then passes with probability at most about "
        "1 - level)",
    )


def currency_field() -> Any:
    """The ``currency`` field every priced kind carries: the unit of its prices and costs,
    printed after every cost (default ``USD``, as the study's)."""
    return Field(
        default="USD",
        min_length=1,
        max_length=12,
        description="the unit of every price and cost, printed after each cost (e.g. USD, EUR, "
        "credits)",
    )
