"""The battery's grid of true h: operating-characteristic curves, P(each verdict) of every route
against the true h (issue #16).

A config asks for it with ``true_h_grid``: ``start``, ``stop`` and ``points`` (evenly spaced, both
ends included, inner values rounded to 12 decimals) or an explicit strictly increasing list
``values``, and ``replicates`` per point (a multiple of the battery's ``block_size``). Every grid
point is one more world of the battery's design: the effect scale solved for its true h (as the
``above_threshold`` scenario does), simulated by the battery's own tasks
(:func:`verdictpack.kinds._battery.simulate_with_grid`: the same block tasks, executors and
per-cell computation as the scenarios). Point h draws from the block streams of its own purpose
``battery-grid/h=<repr(h)>``, so adding, removing or moving a point never changes another point
or a scenario, and every number is the same whatever the worker count.

Beside the simulated fixed-n P(EFFECT), each point carries the fixed-n power in closed form
(:class:`FixedNPower`): the noncentral t with the exact per-root mean and s.d. of D = M − H.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import Any, Literal

from pydantic import Field, model_validator

from verdictpack._errors import InputError, format_value
from verdictpack._results import Quantity, closed_form
from verdictpack.config._compiler import Construct, StrictModel, compile_construct, refuse
from verdictpack.config._refusals import Refusals
from verdictpack.simulate._judges import (
    Panel,
    TruthScenario,
    make_scenario,
    reachable_h_range,
    stream_moments,
)
from verdictpack.simulate._operating import Job, RouteDesign, ScenarioOC
from verdictpack.simulate._panels import build_panel

__all__ = [
    "GRID_MAX_POINTS",
    "GRID_MIN_POINTS",
    "BatteryGrid",
    "BatteryGridPoint",
    "FixedNPower",
    "TrueHGridSpec",
    "fixed_n_power",
    "grid_checks",
    "grid_jobs",
    "grid_provenance",
    "grid_purpose",
    "grid_result",
    "grid_scenario",
]

Issue = tuple[tuple[str | int, ...], Any, str]

# ----------------------------------------------------------------------------------------------
# Config
# ----------------------------------------------------------------------------------------------

GRID_MIN_POINTS, GRID_MAX_POINTS = 2, 41
GRID_DECIMALS = 12  # a start/stop/points grid's values are rounded to 12 decimals (stable purposes)


class TrueHGridSpec(StrictModel):
    """The grid of true h for the operating-characteristic curves: ``start``, ``stop`` and
    ``points`` (evenly spaced, both ends included) or an explicit sorted list ``values``."""

    start: float | None = Field(
        default=None,
        description="the grid's first true h (with stop and points; not with values)",
    )
    stop: float | None = Field(
        default=None,
        description="the grid's last true h, above start (with start and points)",
    )
    points: int | None = Field(
        default=None,
        ge=GRID_MIN_POINTS,
        le=GRID_MAX_POINTS,
        description=f"how many evenly spaced true h from start to stop, both included, "
        f"{GRID_MIN_POINTS} to {GRID_MAX_POINTS}",
    )
    values: list[float] | None = Field(
        default=None,
        min_length=GRID_MIN_POINTS,
        max_length=GRID_MAX_POINTS,
        description=f"the true h of the grid, strictly increasing, {GRID_MIN_POINTS} to "
        f"{GRID_MAX_POINTS} (instead of start, stop and points)",
    )
    replicates: int = Field(
        ge=100,
        le=1_000_000,
        description="sequential runs per grid point (the Monte Carlo standard error of a "
        "probability there is at most 0.5/sqrt(replicates)); a multiple of block_size",
    )

    @model_validator(mode="after")
    def _form(self) -> TrueHGridSpec:
        refuse(_grid_form(self))
        return self

    def grid(self) -> tuple[float, ...]:
        """The grid's true h, ascending (evenly spaced ones rounded to 12 decimals)."""
        if self.values is not None:
            return tuple(float(v) + 0.0 for v in self.values)  # + 0.0: -0.0 is 0.0
        if self.start is None or self.stop is None or self.points is None:
            raise InputError("true_h_grid", "start, stop and points, or values", None)
        step = (self.stop - self.start) / (self.points - 1)
        inner = [round(self.start + i * step, GRID_DECIMALS) for i in range(1, self.points - 1)]
        return (float(self.start) + 0.0, *inner, float(self.stop) + 0.0)


def _grid_form(grid: TrueHGridSpec) -> Iterator[Issue]:
    """One form (start, stop and points, or values), ends ordered, values strictly increasing."""
    ranged = [k for k in ("start", "stop", "points") if getattr(grid, k) is not None]
    if grid.values is not None and ranged:
        for k in ranged:
            yield (
                (k,),
                getattr(grid, k),
                "no start, stop or points beside values (give one form of the grid)",
            )
    elif grid.values is None and len(ranged) < 3:
        for k in ("start", "stop", "points"):
            if getattr(grid, k) is None:
                yield (
                    (k,),
                    None,
                    "a value (a grid is start, stop and points, or a list of values)",
                )
    elif (
        grid.values is None
        and (start := grid.start) is not None
        and (stop := grid.stop) is not None
        and stop <= start
    ):
        yield (("stop",), stop, f"a true h above start = {start}")
    for i, (a, b) in enumerate(itertools.pairwise(grid.values or ()), start=1):
        if not b > a:
            yield (
                ("values", i),
                b,
                f"a true h above values[{i - 1}] = {a} (the grid is strictly increasing, "
                "each value once)",
            )


def grid_checks(cfg: Any) -> Iterator[Issue]:
    """The grid of true h: every point a true h the panel reaches from the baseline (each world
    built through the generative model, as the scenarios are). Its form is the grid model's own
    rule, its replicates a multiple of block_size the battery model's."""
    spec = cfg.true_h_grid
    if spec is None:
        return
    values = spec.grid()
    construct = compile_construct(cfg.construct_spec)
    try:
        panel = build_panel(cfg.panel)
    except InputError:  # the panel rule reports it
        return
    if spec.values is None and any(not b > a for a, b in itertools.pairwise(values)):
        yield (
            ("true_h_grid", "points"),
            spec.points,
            "fewer points (evenly spaced values closer than 1e-12 coincide)",
        )
        return
    lo, hi = reachable_h_range(panel, construct.human_baseline_rate)
    for i, h in enumerate(values):
        loc = _grid_loc(spec, i)
        if loc is None:
            continue
        if not lo - 1e-12 <= h <= hi + 1e-12:
            yield (
                loc,
                h,
                f"a true h in the panel's reachable range [{lo:.10g}, {hi:.10g}] at the "
                f"baseline rate {construct.human_baseline_rate:g}",
            )
            continue
        try:
            grid_scenario(h, panel, construct)
        except InputError as exc:
            yield (
                loc,
                h,
                f"a true h the panel can carry (the generative model refused "
                f"{exc.parameter} = {format_value(exc.received)}; expected {exc.allowed})",
            )


def _grid_loc(spec: TrueHGridSpec, i: int) -> tuple[str | int, ...] | None:
    """Where grid point i is configured: values[i], or start / stop (an inner point of an
    evenly spaced grid lies between them, so only the ends are named)."""
    if spec.values is not None:
        return ("true_h_grid", "values", i)
    if i == 0:
        return ("true_h_grid", "start")
    if spec.points is not None and i == spec.points - 1:
        return ("true_h_grid", "stop")
    return None


# ----------------------------------------------------------------------------------------------
# Result objects
# ----------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class FixedNPower:
    """The fixed-n route's power at one true h in closed form: the one-sided paired t test of
    D_i = M_i − H_i at n roots, with D's exact per-root mean and s.d. (from the generative model,
    :func:`verdictpack.simulate._judges.stream_moments`) in the noncentral t. Exact for normal D;
    for these discrete roots it is the normal-theory value beside the simulated one."""

    n: int
    alpha: float
    mean_d: float
    sd_d: float
    critical_t: float
    noncentrality: float
    power: Quantity


@dataclass(frozen=True)
class BatteryGridPoint:
    """One true h of the grid: its RNG purpose, every route's outcomes, the fixed-n closed form."""

    true_h: float
    purpose: str
    outcome: ScenarioOC
    fixed_n_closed_form: FixedNPower


@dataclass(frozen=True)
class BatteryGrid:
    """The operating-characteristic grid: ``rows`` ascending in true h, ``replicates`` each."""

    spacing: Literal["even", "values"]
    start: float
    stop: float
    points: int
    replicates: int
    block_size: int
    n_blocks: int
    rows: tuple[BatteryGridPoint, ...]


# ----------------------------------------------------------------------------------------------
# The grid's worlds and results
# ----------------------------------------------------------------------------------------------


def grid_purpose(true_h: float) -> str:
    """The RNG purpose of one grid point: its own, named by its true h (never a scenario's:
    those are ``battery/<label>``)."""
    return f"battery-grid/h={float(true_h)!r}"


def grid_scenario(true_h: float, panel: Panel, construct: Construct) -> TruthScenario:
    """The world at one grid point: the effect scale solved for the true h (through
    :func:`make_scenario`, which refuses a world the panel cannot carry)."""
    scenario = make_scenario(
        "above_threshold",
        panel,
        construct.human_baseline_rate,
        threshold_h=construct.governing_threshold_h,
        true_h=true_h,
    )
    return TruthScenario(name=f"true h = {float(true_h)!r}", effect_scale=scenario.effect_scale)


def fixed_n_power(design: RouteDesign, scenario: TruthScenario) -> FixedNPower:
    """The fixed-n route's power under ``scenario`` in closed form (see :class:`FixedNPower`):
    1 − F(t_crit; n − 1, √n · E[D]/sd(D)), F the noncentral t distribution function."""
    from scipy.special import nctdtr, stdtrit

    m = stream_moments(
        design.panel,
        scenario,
        design.construct.human_baseline_rate,
        design.human_judgments_per_root,
        design.human_icc,
    )
    mean_d = m.model_mean - m.human_mean
    var_d = m.model_variance + m.human_variance - 2.0 * m.covariance
    sd_d = math.sqrt(max(var_d, 0.0))
    n, alpha = design.fixed_n, design.per_side_alpha
    crit = float(stdtrit(n - 1, 1.0 - alpha))
    if sd_d > 0.0:
        nc = math.sqrt(n) * mean_d / sd_d
        power = 1.0 - float(nctdtr(n - 1, nc, crit))
    else:  # D is constant: the test rejects iff its mean is positive
        nc, power = 0.0, float(mean_d > 0.0)
    return FixedNPower(
        n=n,
        alpha=alpha,
        mean_d=mean_d,
        sd_d=sd_d,
        critical_t=crit,
        noncentrality=nc,
        power=closed_form(min(max(power, 0.0), 1.0)),
    )


def grid_jobs(
    spec: TrueHGridSpec, design: RouteDesign, panel: Panel, construct: Construct, refusals: Refusals
) -> list[Job]:
    jobs = []
    for i, h in enumerate(spec.grid()):
        loc = _grid_loc(spec, i) or ("true_h_grid",)
        with refusals.at(loc, f"grid point true h = {h!r}"):
            jobs.append(Job(design, grid_scenario(h, panel, construct), grid_purpose(h)))
    return jobs


def grid_result(
    spec: TrueHGridSpec, block_size: int, jobs: Sequence[Job], outcomes: Sequence[ScenarioOC]
) -> BatteryGrid:
    values = spec.grid()
    return BatteryGrid(
        spacing="values" if spec.values is not None else "even",
        start=values[0],
        stop=values[-1],
        points=len(values),
        replicates=spec.replicates,
        block_size=block_size,
        n_blocks=spec.replicates // block_size,
        rows=tuple(
            BatteryGridPoint(
                true_h=h,
                purpose=job.purpose,
                outcome=oc,
                fixed_n_closed_form=fixed_n_power(job.design, job.scenario),
            )
            for h, job, oc in zip(values, jobs, outcomes, strict=True)
        ),
    )


def grid_provenance(grid: BatteryGrid) -> dict[str, Any]:
    """The grid's entries of the battery's provenance (only when the config asks for a grid)."""
    return {
        "true_h_grid": {
            "spacing": grid.spacing,
            "values": [row.true_h for row in grid.rows],
            "replicates": grid.replicates,
            "n_blocks": grid.n_blocks,
            "task_unit": "one block of one grid point, after the scenarios' tasks",
            "rng": "grid point h, block b: block_streams(seed, 'battery-grid/h=<repr(h)>', "
            "replicates, block_size)[b]",
            "fixed_n_closed_form": "1 − F(t_crit; n − 1, √n·E[D]/sd(D)), the noncentral t with "
            "the exact moments of D = M − H",
        }
    }
