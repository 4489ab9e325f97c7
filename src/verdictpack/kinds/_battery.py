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
(:func:`simulate_with_grid`), each point on its own purpose's block streams.
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from typing import Annotated, Any, Literal

import numpy as np
from pydantic import Field, ValidationInfo, field_validator, model_validator

from verdictpack._errors import InputError, UsageError, format_value
from verdictpack._parallel import set_parent_death_signal, usable_cpus
from verdictpack._rng import block_streams
from verdictpack.config._blocks import (
    HumanSpec,
    PanelSpec,
    RoutesSpec,
    SequentialSpec,
    build_sequential,
    currency_field,
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
from verdictpack.kinds._base import Layer, ProgressHook, RunOptions
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
    Cell,
    Job,
    RouteDesign,
    ScenarioOC,
    merge_blocks,
    run_cells,
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
    "Progress",
    "battery_tasks",
    "execute_tasks",
    "run_battery",
    "run_block_task",
    "simulate_battery",
    "simulate_with_grid",
]

DASK_HINT = "pip install 'verdictpack[dask]'"

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


# ----------------------------------------------------------------------------------------------
# Tasks and executors
# ----------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class BlockTask:
    """Block ``index`` of every scenario: picklable (frozen dataclasses and generators)."""

    index: int
    design: RouteDesign
    scenarios: tuple[TruthScenario, ...]
    sizes: tuple[int, ...]
    generators: tuple[np.random.Generator, ...]


def run_block_task(task: BlockTask, threads: int = 1) -> tuple[int, tuple[BlockOutcome, ...]]:
    """Run one task (the worker entry point); returns its block index with the outcomes.
    ``threads`` spreads the task's replicates over threads (never changes a number)."""
    cells = [
        Cell(task.design, sc, n, rng)
        for sc, n, rng in zip(task.scenarios, task.sizes, task.generators, strict=True)
    ]
    return task.index, tuple(run_cells(cells, threads=threads))


def battery_tasks(
    jobs: Sequence[Job], seed: int, replicates: int, block_size: int, first_index: int = 0
) -> list[BlockTask]:
    """One task per block index; job j's block b draws from its purpose's block stream b.
    Task indices start at ``first_index`` (the grid's tasks follow the scenarios' in one run)."""
    if not jobs:
        raise InputError("jobs", "at least one scenario", [])
    design = jobs[0].design
    if any(job.design != design for job in jobs):
        raise InputError("jobs", "scenarios sharing one design", "jobs with different designs")
    streams = [block_streams(seed, job.purpose, replicates, block_size) for job in jobs]
    return [
        BlockTask(
            index=first_index + b,
            design=design,
            scenarios=tuple(job.scenario for job in jobs),
            sizes=tuple(s[b][0] for s in streams),
            generators=tuple(s[b][1] for s in streams),
        )
        for b in range(len(streams[0]))
    ]


class Progress:
    """Counts finished blocks and tells the run's progress hook (``options.progress``: the
    CLI's terminal line, or nothing); the one progress mechanism of every kind."""

    def __init__(
        self, total: int, hook: ProgressHook | None, label: str = "battery", unit: str = "blocks"
    ) -> None:
        self.total = total
        self.hook = hook if total > 0 else None
        self.what = f"{label}, {unit}"
        self.done = 0
        if self.hook is not None:
            self.hook(self.what, 0, total)

    def advance(self, n: int = 1) -> None:
        self.done = min(self.done + n, self.total)
        if self.hook is not None:
            self.hook(self.what, self.done, self.total)


Outcomes = list[tuple[BlockOutcome, ...]]


def _collect(results: Outcomes, item: tuple[int, tuple[BlockOutcome, ...]]) -> None:
    index, outcome = item
    results[index] = outcome


def _run_in_process(tasks: Sequence[BlockTask], tick: Callable[[], None]) -> Outcomes:
    """One process: the tasks in turn, each spread over the CPUs this process may use."""
    threads = usable_cpus()
    out: Outcomes = [() for _ in tasks]
    for task in tasks:
        _collect(out, run_block_task(task, threads))
        tick()
    return out


# Worker processes never outlive the run that started them. A worker's start-up (the pool's
# initializer, in the fresh interpreter of the spawn context) asks Linux to SIGKILL it when its
# parent dies (prctl PR_SET_PDEATHSIG), checks right after that the parent is still the process
# that started it (it may have died before the request), and starts a watchdog thread that polls
# the parent (every platform; the only guard where prctl is missing). The death signal fires when
# the *thread* that forked the worker ends: ProcessPoolExecutor spawns workers from submit() (the
# thread running _run_process_pool, which outlives the pool) or, when it replaces workers, from
# its manager thread (which lives until shutdown), so it never fires early. A worker's stdin and
# stdout are /dev/null: it prints nothing, so the caller's stdout never waits on it; its stderr
# stays (diagnostics) and closes with it. SIGTERM in the parent terminates the pool (workers
# ended, futures cancelled) and exits 143 with one line on stderr.
_ORPHAN_EXIT = 70  # a worker whose parent died exits with this code
_PARENT_POLL_SECONDS = 0.5
_TERMINATED_EXIT = 128 + 15  # the shell's code for "ended by SIGTERM"


class _Terminated(SystemExit):
    """Raised by the pool's SIGTERM handler: unwinds the run (a SystemExit, so no traceback)."""


def _parent_gone(parent_pid: int) -> bool:
    """Whether the process that started this one has died (POSIX: we were re-parented)."""
    import os

    if os.name == "posix":
        return os.getppid() != parent_pid
    import multiprocessing

    parent = multiprocessing.parent_process()
    return parent is not None and not parent.is_alive()


def _watch_parent(parent_pid: int, interval: float = _PARENT_POLL_SECONDS) -> None:
    """Start a daemon thread that ends this process (``os._exit``) once the parent is gone; it
    polls every ``interval`` seconds for as long as the process lives."""
    import os
    import threading
    import time

    def watch() -> None:
        while not _parent_gone(parent_pid):
            time.sleep(interval)
        os._exit(_ORPHAN_EXIT)

    threading.Thread(target=watch, name="verdictpack-parent-watch", daemon=True).start()


def _worker_start(parent_pid: int) -> None:
    """The pool's initializer, run first in every worker: die with the parent, hold no pipe of the
    caller's on stdin or stdout."""
    import os

    set_parent_death_signal()
    if _parent_gone(parent_pid):  # the parent died before the death signal was armed
        os._exit(_ORPHAN_EXIT)
    _watch_parent(parent_pid)
    devnull = os.open(os.devnull, os.O_RDWR)
    try:
        for fd in (0, 1):
            os.dup2(devnull, fd)
    finally:
        os.close(devnull)


def _end_workers(pool: Any, timeout: float = 5.0) -> None:
    """Terminate the pool's worker processes and wait (bounded) until they are gone."""
    from multiprocessing.connection import wait

    procs = list((getattr(pool, "_processes", None) or {}).values())
    for p in procs:
        if p.is_alive():
            p.terminate()
    alive = [p for p in procs if p.is_alive()]
    if alive:
        wait([p.sentinel for p in alive], timeout)
    for p in procs:
        if p.is_alive():
            p.kill()


def _run_process_pool(
    tasks: Sequence[BlockTask], workers: int, tick: Callable[[], None]
) -> Outcomes:
    import multiprocessing
    import os
    import signal
    import threading
    from concurrent.futures import ProcessPoolExecutor, as_completed

    def on_sigterm(signum: int, frame: Any) -> None:
        raise _Terminated(_TERMINATED_EXIT)

    # Only the main thread may set handlers; a handler someone else installed is left alone.
    previous: Any = None
    main = threading.current_thread() is threading.main_thread()
    if main and signal.getsignal(signal.SIGTERM) == signal.SIG_DFL:
        previous = signal.signal(signal.SIGTERM, on_sigterm)

    out: Outcomes = [() for _ in tasks]
    # spawn: a fresh interpreter per worker, safe whatever threads the parent holds
    ctx = multiprocessing.get_context("spawn")
    pool: ProcessPoolExecutor | None = None
    try:
        pool = ProcessPoolExecutor(
            max_workers=min(workers, len(tasks)),
            mp_context=ctx,
            initializer=_worker_start,
            initargs=(os.getpid(),),
        )
        futures = [pool.submit(run_block_task, task) for task in tasks]
        for fut in as_completed(futures):
            _collect(out, fut.result())
            tick()
        pool.shutdown(wait=True)
    except BaseException as exc:
        # Ending the workers breaks the pool: its manager fails every pending future and exits.
        # (No future is cancelled here: Python 3.11's manager then fails on the cancelled ones.)
        if pool is not None:
            _end_workers(pool)
            pool.shutdown(wait=True)
        if isinstance(exc, _Terminated):
            print(
                "verdictpack: terminated (SIGTERM); workers ended, nothing written", file=sys.stderr
            )
        raise
    finally:
        if previous is not None:
            signal.signal(signal.SIGTERM, previous)
    return out


def _run_dask(tasks: Sequence[BlockTask], scheduler: str, tick: Callable[[], None]) -> Outcomes:
    try:
        from distributed import Client, as_completed
    except ImportError:
        raise UsageError(
            "--executor dask: the Dask executor needs the optional dependency "
            f"dask[distributed], which is not installed; install it with: {DASK_HINT}"
        ) from None
    try:
        client = Client(scheduler, timeout="20s")
    except (OSError, TimeoutError, ValueError) as exc:
        raise UsageError(
            f"--scheduler: expected the address of a running Dask scheduler; could not connect "
            f"to {scheduler!r} ({type(exc).__name__}: {exc})"
        ) from None
    out: Outcomes = [() for _ in tasks]
    try:
        futures = client.map(run_block_task, list(tasks), pure=False)
        try:
            for fut in as_completed(futures):
                _collect(out, fut.result())
                tick()
        except BaseException:
            client.cancel(futures)
            raise
    finally:
        client.close()
    return out


def execute_tasks(
    tasks: Sequence[BlockTask], options: RunOptions, label: str = "battery"
) -> Outcomes:
    """Run the tasks on the executor ``options`` names; outcomes in task (block) order."""
    progress = Progress(len(tasks), options.progress, label)
    if options.executor == "dask":
        if not options.scheduler:
            raise UsageError("--executor dask: expected --scheduler ADDRESS; received none")
        return _run_dask(tasks, options.scheduler, progress.advance)
    if options.executor != "local":
        raise UsageError(f"--executor: expected local or dask; received {options.executor}")
    if options.workers <= 1 or len(tasks) <= 1:
        return _run_in_process(tasks, progress.advance)
    return _run_process_pool(tasks, options.workers, progress.advance)


def simulate_battery(
    jobs: Sequence[Job],
    seed: int,
    replicates: int,
    block_size: int,
    options: RunOptions | None = None,
) -> list[ScenarioOC]:
    """Operating characteristics of every job (scenario), computed block-parallel.

    Identical to ``simulate_scenarios(jobs, seed, replicates, block_size)`` whatever the executor
    and worker count: same block streams, same per-cell computation, blocks merged in order.
    """
    return simulate_with_grid(jobs, seed, replicates, block_size, options)[0]


def simulate_with_grid(
    jobs: Sequence[Job],
    seed: int,
    replicates: int,
    block_size: int,
    options: RunOptions | None = None,
    grid_jobs: Sequence[Job] = (),
    grid_replicates: int = 0,
) -> tuple[list[ScenarioOC], list[ScenarioOC]]:
    """The scenarios' and the grid points' operating characteristics in ONE run of the tasks.

    The grid's tasks follow the scenarios' on the same executor: one task per (grid point,
    block), each ``block_size`` replicates of one point, so these small tasks fill the workers'
    tails. Grid point g's block b draws from ``block_streams(seed, purpose_g, grid_replicates,
    block_size)[b]``: adding a point moves neither the other points nor a scenario, and (a
    cell's outcome not depending on its batch) no number depends on how the tasks are cut.
    """
    tasks = battery_tasks(jobs, seed, replicates, block_size)
    n_main = len(tasks)
    starts = []
    for job in grid_jobs:
        starts.append(len(tasks))
        tasks += battery_tasks([job], seed, grid_replicates, block_size, first_index=len(tasks))
    outcomes = execute_tasks(tasks, options or RunOptions())
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
    return scenarios, grid


# ----------------------------------------------------------------------------------------------
# The run
# ----------------------------------------------------------------------------------------------


def build_scenario(spec: BatteryScenarioSpec, panel: Panel, construct: Construct) -> TruthScenario:
    """The scenario through :func:`make_scenario` (which refuses unknown names by name)."""
    kwargs: dict[str, Any] = {"threshold_h": construct.governing_threshold_h}
    if spec.true_h is not None:
        kwargs["true_h"] = spec.true_h
    if spec.model_shift_h is not None:
        kwargs["model_shift_h"] = spec.model_shift_h
    if spec.stress_latent_correlation is not None:
        kwargs["stress_latent_correlation"] = spec.stress_latent_correlation
    if spec.stress_stream_correlation is not None:
        kwargs["stress_stream_correlation"] = spec.stress_stream_correlation
    if spec.stress_base is not None:
        kwargs["stress_base"] = spec.stress_base
    scenario = make_scenario(spec.name, panel, construct.human_baseline_rate, **kwargs)
    return TruthScenario(
        name=spec.display,
        effect_scale=scenario.effect_scale,
        model_shift_h=scenario.model_shift_h,
        stream_correlation=scenario.stream_correlation,
        latent_correlation=scenario.latent_correlation,
    )


def _parameters(spec: BatteryScenarioSpec) -> dict[str, float | str]:
    out: dict[str, float | str] = {}
    for param in _SCENARIO_PARAMS[spec.name]:
        value = getattr(spec, param)
        if value is not None:
            out[param] = value
    return out


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
    with refusals.at(("scenarios",), "the battery's simulation"):
        outcomes, grid_outcomes = simulate_with_grid(
            jobs,
            config.seed,
            config.replicates,
            config.block_size,
            options,
            grid_points,
            grid_spec.replicates if grid_spec else 0,
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
                "construction": sequential.construction,
                "comparison_construction": sequential.other_construction(),
                "lambdas": list(sequential.spec.lambdas),
                "weights": list(sequential.spec.weights or ()),
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
            },
        ),
    )


LAYER = Layer(
    kind="battery",
    summary="scenarios × replicates of the whole design: verdict rates, roots and cost of every "
    "route, block-parallel",
    model=BatteryConfig,
    rules=RULES,
    run=run_battery,
)
