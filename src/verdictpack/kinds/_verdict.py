"""The verdict layer (kind ``verdict``): every route to a verdict, its distribution and its cost.

A construct plus a stream model. The model stream is a panel of ``judges_per_root`` exchangeable
judges, each shown every root in both orders, whose rate sits exactly ``true_h`` (Cohen's h) above
the human baseline; the human stream is ``judgments_per_root`` human judgments at the baseline.
For each scenario (a true h) and each route -- the anytime-valid e-process (both constructions,
the registered one first), the SPRT and the fixed-n test -- it reports the distribution of
verdicts, the mean and quantiles of roots and touches, the cost, and the guarantee the route
carries. Beside the simulation: the SPRT's exact operating characteristics by recursion (Wald's
approximations beside them) and the fixed-n exact binomial size of the same claim.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Annotated, Any, Literal

from pydantic import Field

from verdictpack._parallel import usable_cpus
from verdictpack._results import Quantity, exact
from verdictpack.config._blocks import (
    MAX_COST,
    HumanSpec,
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
    SequentialConstruct,
    StrictModel,
    compile_construct,
    unique,
)
from verdictpack.config._provenance import Provenance, provenance
from verdictpack.config._refusals import MAX_SEED, SEED_TEXT, Refusals, governing_loc
from verdictpack.core._exact import binomial_sample_size
from verdictpack.kinds._base import Layer, RunOptions, report_progress
from verdictpack.kinds._worlds import NamedWorld, oc_world
from verdictpack.simulate._judges import JudgeSheet, Panel, TruthScenario
from verdictpack.simulate._operating import Job, RouteDesign, ScenarioOC, simulate_scenarios
from verdictpack.simulate._routes import BLOCK_SIZE, route_design

__all__ = ["SPRTExact", "VerdictConfig", "VerdictResult", "run_verdict", "sprt_exact"]


class StreamModelSpec(StrictModel):
    judges_per_root: int = Field(
        ge=1,
        le=50,
        description="exchangeable judges in the model stream, 1 to 50, each shown every root in "
        "both orders",
    )
    latent_correlation: float = Field(
        ge=-1.0,
        le=1.0,
        description="correlation between two judges' latents on one root, in [-1, 1] (refused "
        "when the correlation matrix is not positive semi-definite)",
    )
    cost_per_judgment: float = Field(
        ge=0.0, le=MAX_COST, description=f"price of one judgment, at most {MAX_COST:.0e}"
    )
    stream_correlation: float = Field(
        ge=-1.0,
        le=1.0,
        description="correlation of each human judgment's latent with the panel's root latent, "
        "in [-1, 1] (0: humans independent of the judges)",
    )
    human: HumanSpec = Field(description="the human stream: judgments per root and their price")


class ScenarioSpec(StrictModel):
    name: Annotated[str, Field(min_length=1)] = Field(
        description="the scenario's name, unique among the scenarios (reported)"
    )
    true_h: float = Field(ge=0.0, le=3.0, description="true h of the model stream over humans")


class VerdictConfig(StrictModel):
    kind: Literal["verdict"] = Field(description="the config kind: 'verdict'")
    seed: int = Field(ge=0, le=MAX_SEED, description=SEED_TEXT)
    currency: str = currency_field()
    construct_spec: SequentialConstruct = Field(
        alias="construct", description="the construct, shared by every kind"
    )
    sequential: SequentialSpec = Field(
        description="the anytime-valid route: construction, bet grid and cap, fixed before data"
    )
    streams: StreamModelSpec = Field(
        description="the stream model: an exchangeable judge panel and the human stream"
    )
    routes: RoutesSpec = Field(description="the SPRT's beta and the fixed-n route's power")
    scenarios: Annotated[list[ScenarioSpec], unique("a scenario name used once")] = Field(
        min_length=1, description="the true effects simulated, at least one, names unique"
    )
    replicates: int = Field(
        ge=100,
        le=1_000_000,
        description="simulated runs of every route per scenario, 100 to 1,000,000 (sets the "
        "Monte Carlo error)",
    )


RULES = (
    *route_rules(),
    human_icc_rule(("streams", "human"), lambda c: [c.streams.stream_correlation]),
)


@dataclass(frozen=True)
class SPRTExact:
    """The SPRT's exact operating characteristics (recursion) with Wald's approximations."""

    p0: float
    p1: float
    alpha: float
    beta: float
    log_a: float
    log_b: float
    step_success: float
    step_failure: float
    actual_alpha: Quantity
    actual_beta: Quantity
    asn_h0: Quantity
    asn_h1: Quantity
    wald_asn_h0: Quantity
    wald_asn_h1: Quantity
    n_quantiles_h0: dict[str, int]
    n_quantiles_h1: dict[str, int]
    horizon: int
    mass_beyond_horizon: float
    fixed_n_exact: Quantity
    note: str


@dataclass(frozen=True)
class VerdictResult:
    kind: str
    construct: Construct
    seed: int
    replicates: int
    construction: str
    cap_roots: int
    judges_per_root: int
    human_judgments_per_root: int
    fixed_n_roots: int
    fixed_n_power: float
    touches_per_root: int
    cost_per_root: float
    sprt_exact: SPRTExact
    scenarios: tuple[ScenarioOC, ...]
    worlds: tuple[NamedWorld, ...]
    currency: str
    provenance: Provenance


def _stream_panel(streams: StreamModelSpec, human_rate: float) -> Panel:
    judges = tuple(
        JudgeSheet(
            name=f"judge-{j + 1}",
            role="exchangeable model judge",
            baseline_rate=human_rate,
            lean_h=1.0,
            noise=0.0,
            position_bias=0.0,
            cost_per_judgment=streams.cost_per_judgment,
        )
        for j in range(streams.judges_per_root)
    )
    return Panel(judges=judges, latent_correlation=streams.latent_correlation)


def sprt_exact(design: RouteDesign, fixed_power: float) -> SPRTExact:
    from verdictpack.core._sprt import BernoulliSPRT

    c = design.construct
    p0, p1 = c.human_baseline_rate, c.p1_at_threshold
    sprt = BernoulliSPRT(p0, p1, design.per_side_alpha, design.sprt_beta)
    h0 = sprt.exact_operating_characteristics(p0)
    h1 = sprt.exact_operating_characteristics(p1)
    fixed = binomial_sample_size(p0, p1, design.per_side_alpha, fixed_power, 1)

    def quantiles(oc: Any) -> dict[str, int]:
        return {k: int(v.value) for k, v in oc.n_quantiles.items() if v is not None}

    return SPRTExact(
        p0=p0,
        p1=p1,
        alpha=design.per_side_alpha,
        beta=design.sprt_beta,
        log_a=sprt.log_a,
        log_b=sprt.log_b,
        step_success=sprt.step_success,
        step_failure=sprt.step_failure,
        actual_alpha=h0.p_accept_h1,
        actual_beta=h1.p_accept_h0,
        asn_h0=h0.asn,
        asn_h1=h1.asn,
        wald_asn_h0=h0.wald_asn,
        wald_asn_h1=h1.wald_asn,
        n_quantiles_h0=quantiles(h0),
        n_quantiles_h1=quantiles(h1),
        horizon=int(h0.n_max),
        mass_beyond_horizon=float(max(h0.p_beyond_horizon.value, h1.p_beyond_horizon.value)),
        fixed_n_exact=exact(fixed.first_n),
        note=(
            "per-judgment Bernoulli SPRT of the model stream against the human baseline taken as "
            "known; exact by recursion over the continuation region, judgments independent"
        ),
    )


def run_verdict(
    config: VerdictConfig, source: ConfigSource, options: RunOptions | None = None
) -> VerdictResult:
    construct = compile_construct(config.construct_spec)
    sequential = build_sequential(config.sequential)
    refusals = Refusals(source)
    with refusals.at(("streams", "latent_correlation"), "the exchangeable stream panel"):
        panel = _stream_panel(config.streams, construct.human_baseline_rate)
    # the design a config's route rule proved (route_rules)
    design = route_design(construct, panel, config.streams.human, sequential, config.routes)
    jobs = []
    for i, sc in enumerate(config.scenarios):
        with refusals.at(("scenarios", i, "true_h"), f"scenario {sc.name!r}"):
            scenario = TruthScenario(
                name=sc.name,
                effect_scale=sc.true_h,
                stream_correlation=config.streams.stream_correlation,
            )
        jobs.append(Job(design, scenario, f"verdict/{i}"))
    with refusals.at(("streams",), "the simulation of the stream model"):
        scenarios = simulate_scenarios(
            jobs,
            config.seed,
            config.replicates,
            BLOCK_SIZE,
            threads=usable_cpus(),
            tick=report_progress(options, f"verdict: {len(jobs)} scenarios, blocks"),
        )
    with refusals.at(
        ("routes", "sprt_beta"),
        "the SPRT's exact operating characteristics",
        params={
            "alpha": ("construct", "alpha"),
            "p1": governing_loc(construct),
            "n_max": ("routes", "fixed_n_power"),
        },
    ):
        exact_sprt = sprt_exact(design, config.routes.fixed_n_power)
    return VerdictResult(
        kind="verdict",
        construct=construct,
        seed=config.seed,
        replicates=config.replicates,
        construction=sequential.construction,
        cap_roots=sequential.cap_roots,
        judges_per_root=config.streams.judges_per_root,
        human_judgments_per_root=config.streams.human.judgments_per_root,
        fixed_n_roots=design.fixed_n,
        fixed_n_power=config.routes.fixed_n_power,
        touches_per_root=design.model_touches_per_root + design.human_judgments_per_root,
        cost_per_root=design.model_cost_per_root + design.human_cost_per_root,
        sprt_exact=exact_sprt,
        scenarios=tuple(scenarios),
        worlds=tuple(
            w
            for spec, oc in zip(config.scenarios, scenarios, strict=True)
            for w in oc_world(f"scenario `{spec.name}`", oc, spec.true_h)
        ),
        currency=config.currency,
        provenance=provenance(
            source,
            "verdict",
            config.seed,
            {
                "construction": sequential.construction,
                "lambdas": list(sequential.spec.lambdas),
                **sequential.bets_record(),
                "cap_roots": sequential.cap_roots,
                "replicates": config.replicates,
                "block_size": BLOCK_SIZE,
            },
        ),
    )


LAYER = Layer(
    kind="verdict",
    summary="every route to a verdict under a stream model: verdicts, roots, cost, guarantee",
    model=VerdictConfig,
    rules=RULES,
    run=run_verdict,
)
