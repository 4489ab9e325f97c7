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
from typing import Annotated, Literal

from pydantic import Field, model_validator

from verdictpack._errors import InputError
from verdictpack._results import Quantity, closed_form
from verdictpack.config._blocks import (
    HumanSpec,
    PanelSpec,
    RoutesSpec,
    SequentialSpec,
    build_sequential,
    currency_field,
    human_icc_rule,
    route_rules,
)
from verdictpack.config._compiler import (
    ConfigSource,
    Construct,
    CrossRule,
    Found,
    SequentialConstruct,
    StrictModel,
    compile_construct,
    refuse,
    unique,
)
from verdictpack.config._provenance import Provenance, provenance
from verdictpack.config._refusals import MAX_SEED, SEED_TEXT, Refusals, expected_text
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

    @model_validator(mode="after")
    def _scales(self) -> WorldsSpec:
        found: list[Found] = []
        if self.effect_present.effect_scale == 0:
            found.append(
                (
                    ("effect_present", "effect_scale"),
                    0,
                    "a positive effect scale (the effect-present world needs an effect)",
                )
            )
        if self.effect_absent.effect_scale != 0:
            scale = self.effect_absent.effect_scale
            found.append(
                (
                    ("effect_absent", "effect_scale"),
                    scale,
                    "0 (no effect in the effect-absent world)",
                )
            )
        refuse(found)
        return self


class JudgesConfig(StrictModel):
    kind: Literal["judges"] = Field(description="the config kind: 'judges'")
    seed: int = Field(ge=0, le=MAX_SEED, description=SEED_TEXT)
    currency: str = currency_field()
    construct_spec: SequentialConstruct = Field(
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
    compositions: Annotated[list[PanelSpec], unique("a composition name used once")] = Field(
        min_length=1,
        description="the panels compared, at least one, each priced next to its accuracy",
    )
    replicates: int = Field(
        ge=100,
        le=1_000_000,
        description="simulated runs per composition and world, 100 to 1,000,000 (sets the "
        "Monte Carlo error)",
    )


def _world(key: str, world: WorldSpec) -> TruthScenario:
    return TruthScenario(
        name=f"effect {key}",
        effect_scale=world.effect_scale,
        stream_correlation=world.stream_correlation,
    )


def _world_rates(cfg: JudgesConfig) -> Iterator[Found]:
    """Every composition in both worlds: a world that pushes some judge's p ± δ out of [0, 1]
    is refused at its field, naming the first composition that cannot carry it."""
    refused: set[str] = set()
    for comp in cfg.compositions:
        try:
            panel = build_panel(comp)
        except InputError:  # the panel rule reports it
            continue
        for key in ("present", "absent"):
            field = f"effect_{key}"
            world = getattr(cfg.worlds, field)
            try:
                judge_rates(panel, _world(key, world))
            except InputError as exc:
                if field in refused:
                    continue
                refused.add(field)
                leaf = exc.parameter if exc.parameter == "stream_correlation" else "effect_scale"
                what = f"composition {comp.name!r} in the {field} world"
                yield (
                    ("worlds", field, leaf),
                    getattr(world, leaf),
                    expected_text(exc, what, "", leaf),
                )


RULES = (
    *route_rules(),
    *panel_rules(("compositions",)),
    CrossRule(at=(), check=_world_rates),
    human_icc_rule(
        ("human",),
        lambda c: [
            c.worlds.effect_present.stream_correlation,
            c.worlds.effect_absent.stream_correlation,
        ],
    ),
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
        panel = build_panel(comp)  # a config's panels are proven by their rule (panel_rules)
        # the design a config's route rule proved (route_rules)
        design = route_design(construct, panel, config.human, sequential, config.routes)
        worlds = {}
        for key, world in (
            ("present", config.worlds.effect_present),
            ("absent", config.worlds.effect_absent),
        ):
            scenario = _world(key, world)  # one every panel carries: proven by _world_rates
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
                **sequential.bets_record(),
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
