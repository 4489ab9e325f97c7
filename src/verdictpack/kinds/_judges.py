"""The judge layer (kind ``judges``): panel composition priced before a judgment is spent.

Each composition is a panel of character sheets (see :mod:`verdictpack.simulate._judges` for the
generative model). For every composition and both worlds -- the effect present (each judge's
``lean_h`` applies, scaled by ``effect_scale``) and absent -- the registered sequential verdict is
re-run by simulation, with the SPRT and the fixed-n test beside it on the same roots. The report
puts each composition's price next to its accuracy: P(each verdict), P(wrong verdict), roots,
touches and cost (the human layer always its own line), and the effective panel size
J / (1 + (J - 1) rho) beside the nominal size.

A verdict is *wrong* when it contradicts the world, not the panel: EFFECT_SUPPORTED where no
effect exists, or NO_POSITIVE_EFFECT / BELOW_PRACTICAL_THRESHOLD where it does. A panel whose
sheets lean against the truth therefore shows the documented failure: a confident wrong verdict
that arrives fast.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any, Literal

from pydantic import Field

from verdictpack._results import Quantity, closed_form
from verdictpack.config._blocks import (
    HumanSpec,
    PanelSpec,
    RoutesSpec,
    SequentialSpec,
    build_sequential,
    currency_field,
    route_rules,
    sequential_rules,
)
from verdictpack.config._compiler import (
    ConfigSource,
    Construct,
    ConstructSpec,
    CrossRule,
    StrictModel,
    compile_construct,
    sequential_construct_rules,
    unique_names,
)
from verdictpack.config._provenance import Provenance, provenance
from verdictpack.config._refusals import MAX_SEED, SEED_TEXT, Refusals, governing_loc
from verdictpack.kinds._base import Layer, RunOptions, report_progress
from verdictpack.kinds._worlds import NamedWorld, oc_world
from verdictpack.simulate._judges import TruthScenario, effective_panel_size, judge_rates
from verdictpack.simulate._operating import ScenarioOC
from verdictpack.simulate._panels import JudgeRow, build_panel, panel_rules, summarize_panel
from verdictpack.simulate._routes import route_design, simulate_scenario

__all__ = ["CompositionResult", "JudgesConfig", "JudgesResult", "run_judges"]


class WorldSpec(StrictModel):
    effect_scale: float = Field(ge=0.0, le=10.0, description="multiplies every judge's lean_h")
    stream_correlation: float = Field(
        ge=-1.0,
        le=1.0,
        description="correlation of each human judgment's latent with the panel's root latent, "
        "in [-1, 1] (0: humans independent of the judges)",
    )


class WorldsSpec(StrictModel):
    effect_present: WorldSpec = Field(
        description="the world with the effect: effect_scale > 0 applies the judges' lean_h"
    )
    effect_absent: WorldSpec = Field(
        description="the world without the effect: effect_scale must be 0"
    )


class JudgesConfig(StrictModel):
    kind: Literal["judges"] = Field(description="the config kind: 'judges'")
    seed: int = Field(ge=0, le=MAX_SEED, description=SEED_TEXT)
    currency: str = currency_field()
    construct_spec: ConstructSpec = Field(
        alias="construct", description="the construct, shared by every kind"
    )
    sequential: SequentialSpec = Field(
        description="the anytime-valid route: construction, bet grid and cap, fixed before data"
    )
    human: HumanSpec = Field(description="the human stream: judgments per root and their price")
    routes: RoutesSpec = Field(description="the SPRT's beta and the fixed-n route's power")
    worlds: WorldsSpec = Field(
        description="the two worlds every composition is run in: effect present and absent"
    )
    compositions: list[PanelSpec] = Field(
        min_length=1,
        description="the panels compared, at least one, each priced next to its accuracy",
    )
    replicates: int = Field(
        ge=100,
        le=1_000_000,
        description="simulated runs per composition and world, 100 to 1,000,000 (sets the "
        "Monte Carlo error)",
    )


def _world_check(cfg: dict[str, Any]) -> Iterator[tuple[tuple[str | int, ...], Any, str]]:
    worlds = cfg.get("worlds")
    if isinstance(worlds, dict):
        present = worlds.get("effect_present")
        if isinstance(present, dict) and present.get("effect_scale") == 0:
            yield (
                ("worlds", "effect_present", "effect_scale"),
                0,
                "a positive effect scale (the effect-present world needs an effect)",
            )
        absent = worlds.get("effect_absent")
        if isinstance(absent, dict) and absent.get("effect_scale") not in (0, 0.0, None):
            yield (
                ("worlds", "effect_absent", "effect_scale"),
                absent.get("effect_scale"),
                "0 (no effect in the effect-absent world)",
            )


def _composition_panels(cfg: dict[str, Any]) -> Iterator[tuple[tuple[str | int, ...], Any, str]]:
    """The panel rule applied to every composition, whatever their number."""
    comps = cfg.get("compositions")
    if not isinstance(comps, list):
        return
    for i, comp in enumerate(comps):
        if isinstance(comp, dict):
            for rule in panel_rules(("compositions", i)):
                for rel, received, expected in rule.check(comp):
                    yield (("compositions", i, *rel), received, expected)


RULES = (
    *sequential_construct_rules(("construct",)),
    *sequential_rules(("sequential",)),
    *route_rules(),
    unique_names("compositions", "a composition name"),
    CrossRule(at=(), check=_world_check),
    CrossRule(at=(), check=_composition_panels),
)


@dataclass(frozen=True)
class CompositionResult:
    name: str
    judges: tuple[JudgeRow, ...]
    nominal_size: int
    latent_correlation: float
    effective_size: Quantity
    touches_per_root: int
    cost_per_root: float
    effect_present: ScenarioOC
    effect_absent: ScenarioOC


@dataclass(frozen=True)
class JudgesResult:
    kind: str
    construct: Construct
    seed: int
    replicates: int
    construction: str
    cap_roots: int
    human_judgments_per_root: int
    human_cost_per_judgment: float
    compositions: tuple[CompositionResult, ...]
    worlds: tuple[NamedWorld, ...]
    currency: str
    provenance: Provenance


def run_judges(
    config: JudgesConfig, source: ConfigSource, options: RunOptions | None = None
) -> JudgesResult:
    construct = compile_construct(config.construct_spec)
    sequential = build_sequential(config.sequential)
    refusals = Refusals(source)
    results = []
    for i, comp in enumerate(config.compositions):
        with refusals.at(("compositions", i), f"composition {comp.name!r}"):
            panel = build_panel(comp)
        with refusals.at(
            governing_loc(construct),
            "the route design",
            params={
                "alpha": ("construct", "alpha"),
                "fixed_n_power": ("routes", "fixed_n_power"),
            },
        ):
            design = route_design(construct, panel, config.human, sequential, config.routes)
        worlds = {}
        for key, world in (
            ("present", config.worlds.effect_present),
            ("absent", config.worlds.effect_absent),
        ):
            field = f"effect_{key}"
            with refusals.at(
                ("worlds", field, "effect_scale"),
                f"composition {comp.name!r} in the {field} world",
                params={"stream_correlation": ("worlds", field, "stream_correlation")},
            ):
                scenario = TruthScenario(
                    name=f"effect {key}",
                    effect_scale=world.effect_scale,
                    stream_correlation=world.stream_correlation,
                )
                judge_rates(panel, scenario)  # a world pushing some p ± δ out of [0, 1]
            with refusals.at(("compositions", i), f"the simulation of composition {comp.name!r}"):
                worlds[key] = simulate_scenario(
                    design,
                    scenario,
                    config.seed,
                    f"judges/{i}/{key}",
                    config.replicates,
                    constructions=(sequential.construction,),
                    tick=report_progress(
                        options,
                        f"judges: composition {i + 1} of {len(config.compositions)}, "
                        f"effect {key}, blocks",
                    ),
                )
        results.append(
            CompositionResult(
                name=comp.name,
                judges=summarize_panel(comp).judges,
                nominal_size=len(comp.judges),
                latent_correlation=comp.latent_correlation,
                effective_size=closed_form(
                    effective_panel_size(len(comp.judges), comp.latent_correlation)
                ),
                touches_per_root=design.model_touches_per_root + design.human_judgments_per_root,
                cost_per_root=design.model_cost_per_root + design.human_cost_per_root,
                effect_present=worlds["present"],
                effect_absent=worlds["absent"],
            )
        )
    return JudgesResult(
        kind="judges",
        construct=construct,
        seed=config.seed,
        replicates=config.replicates,
        construction=sequential.construction,
        cap_roots=sequential.cap_roots,
        human_judgments_per_root=config.human.judgments_per_root,
        human_cost_per_judgment=config.human.cost_per_judgment,
        compositions=tuple(results),
        worlds=tuple(
            w
            for c in results
            for w in (
                *oc_world(
                    f"composition `{c.name}`, effect present",
                    c.effect_present,
                    construct.governing_threshold_h,
                    at_least=True,
                ),
                *oc_world(f"composition `{c.name}`, effect absent", c.effect_absent, 0.0),
            )
        ),
        currency=config.currency,
        provenance=provenance(
            source,
            "judges",
            config.seed,
            {
                "construction": sequential.construction,
                "lambdas": list(sequential.spec.lambdas),
                "cap_roots": sequential.cap_roots,
                "replicates": config.replicates,
            },
        ),
    )


LAYER = Layer(
    kind="judges",
    summary="panel compositions as character sheets, each priced next to its accuracy",
    model=JudgesConfig,
    rules=RULES,
    run=run_judges,
)
