"""The battery (kind ``battery``): scenarios × replicates of the whole design, every route.

A battery runs the registered design -- construct, panel, human stream, sequential settings,
routes -- under several named truth scenarios (built by
:func:`verdictpack.simulate._judges.make_scenario`:
``null``, ``registered_alternative``, ``above_threshold``, ``confounded``, ``correlated_stress``),
``replicates`` sequential runs each, and reports per scenario the distribution of the e-process
verdicts (both constructions on the same seeds, the registered one first), roots and cost, the
SPRT and the fixed-n test beside them.

Work is cut along the replicate axis into blocks of ``block_size`` replicates (a config field: part
of the design, recorded in provenance). **One task = one block index b across all scenarios**: the
task draws scenario s's block b from ``block_streams(seed, purpose_s, replicates, block_size)[b]``
(the same streams :func:`verdictpack.simulate._operating.simulate_scenarios` uses) and runs the
scenarios'
cells through one batch tracker per construction
(:func:`verdictpack.simulate._operating.run_cells`; a
cell's outcome does not depend on the cells it is batched with). Every task is the same size, so
tasks balance across workers. Tasks run in-process (``workers == 1``), on a local
``ProcessPoolExecutor`` or on a Dask cluster; outcomes are assembled in block order, so every
number is identical whatever the worker count or executor. Workers receive picklable inputs only:
the frozen design and scenarios and each block's generator, built by the RNG policy in the parent.

An optional grid of true h (``true_h_grid``, :mod:`verdictpack.kinds._battery_grid`) adds one
world per grid point; its tasks follow the scenarios' in the same run
(:func:`simulate_with_grid`), each point on its own purpose's block streams. Optional
``designs`` (:mod:`verdictpack.kinds._battery_designs`) add the registered e-process under other
bets and humans per root, each design and scenario on its own purpose's block streams.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import Annotated, Any, Literal

from pydantic import Field, ValidationInfo, field_validator, model_validator

from verdictpack._errors import InputError, format_value
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
)
from verdictpack.config._provenance import Provenance, provenance
from verdictpack.config._refusals import MAX_SEED, SEED_TEXT, Refusals
from verdictpack.kinds._base import Layer, RunOptions, sequential_record
from verdictpack.kinds._battery_designs import (
    DESIGNS_MAX,
    BatteryDesigns,
    DesignSpec,
    design_jobs,
    design_name_issues,
    designs_provenance,
    designs_result,
)
from verdictpack.kinds._battery_exec import (
    BlockTask,
    battery_tasks,
    execute_tasks,
    run_block_task,
)
from verdictpack.kinds._battery_grid import (
    BatteryGrid,
    TrueHGridSpec,
    grid_checks,
    grid_jobs,
    grid_provenance,
    grid_result,
)
from verdictpack.kinds._worlds import NamedWorld, oc_world, scenario_named_h
from verdictpack.simulate._judges import SCENARIO_NAMES, Panel, TruthScenario, make_scenario
from verdictpack.simulate._operating import (
    BlockOutcome,
    Job,
    ScenarioOC,
    merge_blocks,
    summarize,
)
from verdictpack.simulate._panels import PanelSummary, build_panel, panel_rules, summarize_panel
from verdictpack.simulate._routes import route_design

Issue = Found

__all__ = [
    "BatteryConfig",
    "BatteryResult",
    "BatteryScenario",
    "BatteryScenarioSpec",
    "BlockTask",
    "battery_tasks",
    "execute_tasks",
    "run_battery",
    "run_block_task",
    "simulate_with_grid",
]


# which config fields each scenario needs (and may carry); the rest are refused for it
_SCENARIO_PARAMS: dict[str, tuple[str, ...]] = {
    "null": (),
    "registered_alternative": (),
    "above_threshold": ("true_h",),
    "confounded": ("model_shift_h",),
    "correlated_stress": (
        "stress_latent_correlation",
        "stress_stream_correlation",
        "stress_base",
    ),
}
_ALL_PARAMS = (
    "true_h",
    "model_shift_h",
    "stress_latent_correlation",
    "stress_stream_correlation",
    "stress_base",
)

# ----------------------------------------------------------------------------------------------
# Config
# ----------------------------------------------------------------------------------------------


class BatteryScenarioSpec(StrictModel):
    """One named truth scenario; only the parameters its name uses may (and must) be given."""

    name: str = Field(description="one of " + ", ".join(SCENARIO_NAMES))
    label: Annotated[str, Field(min_length=1)] | None = Field(
        default=None, description="how the scenario is named in the report (default: its name)"
    )
    true_h: float | None = Field(
        default=None, gt=0.0, le=3.0, description="above_threshold: the true h of the streams"
    )
    model_shift_h: float | None = Field(
        default=None, ge=-3.0, le=3.0, description="confounded: model-stream shift (h units)"
    )
    stress_latent_correlation: float | None = Field(
        default=None, ge=-1.0, le=1.0, description="correlated_stress: the panel's latent rho"
    )
    stress_stream_correlation: float | None = Field(
        default=None, ge=-1.0, le=1.0, description="correlated_stress: root-level stream rho"
    )
    stress_base: Literal["registered_alternative", "null"] | None = Field(
        default=None, description="correlated_stress: the truth it stresses"
    )

    @property
    def display(self) -> str:
        return self.label if self.label is not None else self.name

    @model_validator(mode="after")
    def _parameters(self) -> BatteryScenarioSpec:
        refuse(_scenario_fields(self))
        return self


def _scenario_fields(sc: BatteryScenarioSpec) -> Iterator[Issue]:
    """Its name known, its parameters given exactly when used."""
    if sc.name not in SCENARIO_NAMES:
        yield (("name",), sc.name, "one of " + ", ".join(SCENARIO_NAMES))
        return
    used = _SCENARIO_PARAMS[sc.name]
    for param in _ALL_PARAMS:
        given = getattr(sc, param)
        if param in used and given is None:
            yield ((param,), None, f"a value (the {sc.name} scenario needs it)")
        elif given is not None and param not in used:
            yield (
                (param,),
                given,
                f"no {param} for the {sc.name} scenario (it does not use it; "
                + (f"it takes {', '.join(used)})" if used else "it takes no parameters)"),
            )


class BatteryConfig(StrictModel):
    kind: Literal["battery"] = Field(description="the config kind: 'battery'")
    seed: int = Field(ge=0, le=MAX_SEED, description=SEED_TEXT)
    currency: str = currency_field()
    construct_spec: SequentialConstruct = Field(
        alias="construct", description="the construct, shared by every kind"
    )
    sequential: SequentialSpec = Field(
        description="the anytime-valid route: construction, bet grid and cap, fixed before data"
    )
    panel: PanelSpec = Field(description="the simulated judge panel, as character sheets")
    human: HumanSpec = Field(description="the human stream: judgments per root and their price")
    routes: RoutesSpec = Field(description="the SPRT's beta and the fixed-n route's power")
    scenarios: list[BatteryScenarioSpec] = Field(
        min_length=1,
        max_length=50,
        description="the named truth scenarios the whole design is run under, 1 to 50",
    )

    replicates: int = Field(ge=100, le=1_000_000, description="sequential runs per scenario")
    block_size: int = Field(
        ge=50,
        le=100_000,
        description="replicates per block (the unit of parallel work and of the RNG policy); "
        "must divide replicates",
    )
    true_h_grid: TrueHGridSpec | None = Field(
        default=None,
        description="a grid of true h for operating-characteristic curves (P(each verdict) of "
        "every route against the true h); absent: no grid",
    )
    designs: list[DesignSpec] | None = Field(
        default=None,
        min_length=1,
        max_length=DESIGNS_MAX,
        description=f"1 to {DESIGNS_MAX} designs (name, bets, humans_per_root) of the registered "
        "e-process simulated side by side under every scenario; absent: none",
    )
    designs_replicates: int = Field(
        default=2000,
        ge=100,
        le=1_000_000,
        description="sequential runs per design and scenario; a multiple of block_size",
    )

    @field_validator("designs")
    @classmethod
    def _design_names(cls, designs: list[DesignSpec] | None) -> list[DesignSpec] | None:
        refuse(list(design_name_issues(designs or [])))
        return designs

    @field_validator("designs_replicates")
    @classmethod
    def _design_blocks(cls, reps: int, info: ValidationInfo) -> int:
        block = info.data.get("block_size")
        if info.data.get("designs") is not None and block is not None and reps % block:
            refuse([((), reps, f"a multiple of block_size = {block} (whole blocks per design)")])
        return reps

    @field_validator("block_size")
    @classmethod
    def _divides(cls, block: int, info: ValidationInfo) -> int:
        reps = info.data.get("replicates")
        if reps is not None and block > reps:
            refuse([((), block, f"at most replicates = {reps}")])
        if reps is not None and reps % block:
            text = f"a multiple of block_size = {block} (every task is one full block per scenario)"
            refuse([(("replicates",), reps, text)], up=1)
        return block

    @field_validator("true_h_grid")
    @classmethod
    def _grid_blocks(cls, grid: TrueHGridSpec | None, info: ValidationInfo) -> Any:
        block = info.data.get("block_size")
        if grid is not None and block is not None and grid.replicates % block:
            text = (
                f"a multiple of block_size = {block} (every grid task is one full block per point)"
            )
            refuse([(("replicates",), grid.replicates, text)])
        return grid

    @field_validator("scenarios")
    @classmethod
    def _labels(cls, scenarios: list[BatteryScenarioSpec]) -> list[BatteryScenarioSpec]:
        seen: dict[str, int] = {}
        found: list[Issue] = []
        for i, sc in enumerate(scenarios):
            if sc.display in seen:
                found.append(
                    (
                        (i, "label" if sc.label is not None else "name"),
                        sc.display,
                        f'a label not used by scenario {seen[sc.display]} (set "label" to tell '
                        f"two {sc.name} scenarios apart)",
                    )
                )
            seen.setdefault(sc.display, i)
        refuse(found)
        return scenarios


def _design_checks(cfg: BatteryConfig) -> Iterator[Issue]:
    """The scenarios built through the generative model with the compiled construct and panel:
    a scenario it refuses is a config defect at its path. (A task's memory is bounded by the
    simulation itself, which runs long horizons in slices of replicates:
    :func:`verdictpack.simulate._operating.run_cells`.)"""
    construct = compile_construct(cfg.construct_spec)
    try:
        panel = build_panel(cfg.panel)
    except InputError:  # the panel rule reports it
        return
    for i, spec in enumerate(cfg.scenarios):
        try:
            build_scenario(spec, panel, construct)
        except InputError as exc:
            field = _scenario_param_path(spec, exc.parameter)
            received = getattr(spec, field)
            if received == exc.received:
                yield (("scenarios", i, field), received, exc.allowed)
            else:  # the model refused a derived quantity: name it beside the config value
                yield (
                    ("scenarios", i, field),
                    received,
                    f"a scenario the panel can carry (the generative model refused "
                    f"{exc.parameter} = {format_value(exc.received)}; expected {exc.allowed})",
                )


def _scenario_param_path(spec: BatteryScenarioSpec, parameter: str) -> str:
    """The config field of a scenario that an InputError of the generative model points at."""
    if parameter == "latent_correlation" and spec.name == "correlated_stress":
        return "stress_latent_correlation"
    if parameter in _ALL_PARAMS:
        return parameter
    return {"above_threshold": "true_h", "confounded": "model_shift_h"}.get(spec.name, "name")


RULES = (
    *panel_rules(("panel",)),
    *route_rules(),
    CrossRule(at=(), check=_design_checks),
    CrossRule(at=(), check=grid_checks),
    human_icc_rule(
        ("human",),
        lambda c: [
            0.5 if s.stress_stream_correlation is None else s.stress_stream_correlation
            for s in c.scenarios  # 0.5: make_scenario's stress_stream_correlation default
            if s.name == "correlated_stress"
        ],
    ),
)

# ----------------------------------------------------------------------------------------------
# Result objects
# ----------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class BatteryScenario:
    """One battery row: the scenario as configured, its RNG purpose and its outcomes."""

    label: str
    scenario: str
    parameters: dict[str, float | str]
    purpose: str
    outcome: ScenarioOC


@dataclass(frozen=True)
class BatteryResult:
    kind: str
    construct: Construct
    seed: int
    panel_name: str
    panel: PanelSummary
    judges_per_root: int
    latent_correlation: float
    human_judgments_per_root: int
    construction: str
    comparison_construction: str
    cap_roots: int
    fixed_n_roots: int
    touches_per_root: int
    cost_per_root: float
    replicates: int
    block_size: int
    n_blocks: int
    sequential_runs: int
    scenarios: tuple[BatteryScenario, ...]
    worlds: tuple[NamedWorld, ...]
    true_h_grid: BatteryGrid | None
    currency: str
    provenance: Provenance
    designs: BatteryDesigns | None = None


# ----------------------------------------------------------------------------------------------
# Tasks and executors
# ----------------------------------------------------------------------------------------------


def simulate_with_grid(
    jobs: Sequence[Job],
    seed: int,
    replicates: int,
    block_size: int,
    options: RunOptions | None = None,
    grid_jobs: Sequence[Job] = (),
    grid_replicates: int = 0,
    design_jobs: Sequence[Sequence[Job]] = (),
    design_replicates: int = 0,
) -> tuple[list[ScenarioOC], list[ScenarioOC], list[list[BlockOutcome]]]:
    """The scenarios' and the grid points' operating characteristics in ONE run of the tasks,
    computed block-parallel: identical to ``simulate_scenarios(jobs, seed, replicates,
    block_size)`` whatever the executor and worker count (same block streams, same per-cell
    computation, blocks merged in order).

    The grid's tasks follow the scenarios' on the same executor: one task per (grid point,
    block), each ``block_size`` replicates of one point, so these small tasks fill the workers'
    tails. Grid point g's block b draws from ``block_streams(seed, purpose_g, grid_replicates,
    block_size)[b]``: adding a point moves neither the other points nor a scenario, and (a
    cell's outcome not depending on its batch) no number depends on how the tasks are cut.
    The designs' tasks (:mod:`verdictpack.kinds._battery_designs`) follow the grid's, the
    registered construction only; their merged outcomes come back unsummarized.
    """
    tasks = battery_tasks(jobs, seed, replicates, block_size)
    n_main = len(tasks)
    starts = []
    for job in grid_jobs:
        starts.append(len(tasks))
        tasks += battery_tasks([job], seed, grid_replicates, block_size, first_index=len(tasks))
    design_starts = []
    for group in design_jobs:
        design_starts.append(len(tasks))
        first = group[0].design.sequential.construction
        tasks += battery_tasks(
            group, seed, design_replicates, block_size, len(tasks), constructions=(first,)
        )
    # the designs' tasks (plug-in and blend bets are the slowest) go to the workers first, so
    # they do not make the run's tail; outcomes still land by task index (no number moves)
    lead = design_starts[0] if design_starts else len(tasks)
    outcomes = execute_tasks(tasks[lead:] + tasks[:lead], options or RunOptions())
    scenarios = [
        summarize(job.design, job.scenario, merge_blocks([blk[j] for blk in outcomes[:n_main]]))
        for j, job in enumerate(jobs)
    ]
    n_grid = -(-grid_replicates // block_size) if grid_jobs else 0  # blocks per point
    grid = [
        summarize(
            job.design,
            job.scenario,
            merge_blocks([outcomes[start + b][0] for b in range(n_grid)]),
        )
        for job, start in zip(grid_jobs, starts, strict=True)
    ]
    n_design = design_replicates // block_size
    designs = [
        [merge_blocks([outcomes[start + b][j] for b in range(n_design)]) for j in range(len(group))]
        for group, start in zip(design_jobs, design_starts, strict=True)
    ]
    return scenarios, grid, designs


# ----------------------------------------------------------------------------------------------
# The run
# ----------------------------------------------------------------------------------------------


def build_scenario(spec: BatteryScenarioSpec, panel: Panel, construct: Construct) -> TruthScenario:
    """The scenario through :func:`make_scenario` (which refuses unknown names by name)."""
    given = {p: getattr(spec, p) for p in _ALL_PARAMS if getattr(spec, p) is not None}
    scenario = make_scenario(
        spec.name,
        panel,
        construct.human_baseline_rate,
        threshold_h=construct.governing_threshold_h,
        **given,
    )
    return dataclasses.replace(scenario, name=spec.display)


def _parameters(spec: BatteryScenarioSpec) -> dict[str, float | str]:
    return {
        p: getattr(spec, p) for p in _SCENARIO_PARAMS[spec.name] if getattr(spec, p) is not None
    }


def run_battery(
    config: BatteryConfig, source: ConfigSource, options: RunOptions | None = None
) -> BatteryResult:
    construct = compile_construct(config.construct_spec)
    sequential = build_sequential(config.sequential)
    refusals = Refusals(source)
    panel = build_panel(config.panel)  # a config's panel is proven by its rule (panel_rules)
    # the design a config's route rule proved (route_rules)
    design = route_design(construct, panel, config.human, sequential, config.routes)
    # each scenario proven by _design_checks
    jobs = [
        Job(design, build_scenario(spec, panel, construct), f"battery/{spec.display}")
        for spec in config.scenarios
    ]
    grid_spec = config.true_h_grid
    grid_points = grid_jobs(grid_spec, design, panel, construct, refusals) if grid_spec else []
    per_design = design_jobs(config.designs, design, jobs) if config.designs else []
    with refusals.at(("scenarios",), "the battery's simulation"):
        outcomes, grid_outcomes, design_outcomes = simulate_with_grid(
            jobs,
            config.seed,
            config.replicates,
            config.block_size,
            options,
            grid_points,
            grid_spec.replicates if grid_spec else 0,
            per_design,
            config.designs_replicates,
        )
    designs = (
        designs_result(
            config.designs,
            config.designs_replicates,
            config.block_size,
            per_design,
            design_outcomes,
        )
        if config.designs
        else None
    )
    grid = (
        grid_result(grid_spec, config.block_size, grid_points, grid_outcomes) if grid_spec else None
    )
    n_blocks = config.replicates // config.block_size
    rows = tuple(
        BatteryScenario(
            label=spec.display,
            scenario=spec.name,
            parameters=_parameters(spec),
            purpose=job.purpose,
            outcome=oc,
        )
        for spec, job, oc in zip(config.scenarios, jobs, outcomes, strict=True)
    )
    return BatteryResult(
        kind="battery",
        construct=construct,
        seed=config.seed,
        panel_name=config.panel.name,
        panel=summarize_panel(config.panel),
        judges_per_root=len(panel.judges),
        latent_correlation=panel.latent_correlation,
        human_judgments_per_root=config.human.judgments_per_root,
        construction=sequential.construction,
        comparison_construction=sequential.other_construction(),
        cap_roots=sequential.cap_roots,
        fixed_n_roots=design.fixed_n,
        touches_per_root=design.model_touches_per_root + design.human_judgments_per_root,
        cost_per_root=design.model_cost_per_root + design.human_cost_per_root,
        replicates=config.replicates,
        block_size=config.block_size,
        n_blocks=n_blocks,
        sequential_runs=config.replicates * len(config.scenarios),
        scenarios=rows,
        true_h_grid=grid,
        worlds=tuple(
            w
            for spec, row in zip(config.scenarios, rows, strict=True)
            for w in oc_world(
                f"scenario `{row.label}`",
                row.outcome,
                scenario_named_h(spec.name, construct.governing_threshold_h, spec),
            )
        ),
        currency=config.currency,
        provenance=provenance(
            source,
            "battery",
            config.seed,
            {
                **sequential_record(sequential),
                "per_tail_alpha": construct.per_tail_alpha,
                "cap_roots": sequential.cap_roots,
                "fixed_n_roots": design.fixed_n,
                "replicates": config.replicates,
                "block_size": config.block_size,
                "n_blocks": n_blocks,
                "task_unit": "one block index across all scenarios, batched in one tracker "
                "per construction",
                "rng": "scenario s, block b: block_streams(seed, purpose_s, replicates, "
                "block_size)[b]",
                "purposes": {row.label: row.purpose for row in rows},
                **(grid_provenance(grid) if grid is not None else {}),
                **(designs_provenance(designs) if designs is not None else {}),
            },
        ),
        designs=designs,
    )


LAYER = Layer(
    kind="battery",
    summary="scenarios × replicates of the whole design: verdict rates, roots and cost of every "
    "route, block-parallel",
    model=BatteryConfig,
    rules=RULES,
    run=run_battery,
)
