"""The battery's designs side by side: bets and humans per root against human judgments and cost.

A config asks for it with ``designs`` (1 to ``DESIGNS_MAX`` of {name, bets, humans_per_root},
names unique) and ``designs_replicates`` (a multiple of ``block_size``). Each design is the
battery's registered e-process route -- its construct, panel, human sheet (rate and ICC), cap and
construction -- with that design's bets and human judgments per root, simulated under every
scenario of the battery by the battery's own block tasks (one task per design and block, after
the scenarios' and the grid's). Design d under scenario s draws block b from
``block_streams(seed, "battery-designs/<d>/<s>", designs_replicates, block_size)[b]``: adding or
removing a design changes no other number, and no number depends on the worker count.

Per design and scenario: P(each verdict); human judgments to a verdict (k × roots, a run that
reaches the cap counting the cap's), mean and q10/q50/q90; the expected cost per run and the cost
per valid verdict (expected cost / P(right verdict), right as the battery scores its scenarios);
beside them the fixed-n test's human judgments at the same error, fixed-n roots × k (closed form).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import Annotated, Any, Literal

import numpy as np
from pydantic import Field

from verdictpack._results import Quantity, closed_form
from verdictpack.config._compiler import StrictModel
from verdictpack.simulate._operating import (
    BlockOutcome,
    Job,
    RouteDesign,
    eprocess_scored_wrong,
    mean_quantity,
    quantile_quantity,
    ratio_quantity,
    summarize,
)

__all__ = [
    "DESIGNS_MAX",
    "BatteryDesign",
    "BatteryDesigns",
    "DesignRow",
    "DesignSpec",
    "design_jobs",
    "design_name_issues",
    "designs_provenance",
    "designs_result",
]

DESIGNS_MAX = 6
HUMAN_QUANTILES = (0.1, 0.5, 0.9)


class DesignSpec(StrictModel):
    """One design: the bets of the registered e-process and the human judgments per root."""

    name: Annotated[str, Field(min_length=1, max_length=60, pattern=r"^[^/]+$")] = Field(
        description="how the design is named in the report (unique, no '/': it names the "
        "design's random stream)"
    )
    bets: Literal["grid", "plugin", "blend", "horizon"] = Field(
        description='the bets of every stream\'s confidence sequence: "grid", "plugin", "blend" '
        'or "horizon" (tuned to the cap)'
    )
    humans_per_root: int = Field(ge=1, le=100, description="human judgments per root, 1 to 100")


def design_name_issues(designs: Sequence[DesignSpec]) -> Iterator[tuple[Any, ...]]:
    """Each name once."""
    seen: dict[str, int] = {}
    for i, d in enumerate(designs):
        if d.name in seen:
            yield ((i, "name"), d.name, f"a name not used by design {seen[d.name]}")
        seen.setdefault(d.name, i)


@dataclass(frozen=True)
class DesignRow:
    """One design under one scenario (every figure simulated, but the fixed-n closed form)."""

    scenario: str
    effect_exists: bool
    purpose: str
    p_verdict: dict[str, Quantity]
    p_right: Quantity
    human_judgments: Quantity
    human_judgments_quantiles: dict[str, Quantity]
    expected_cost: Quantity
    cost_per_valid_verdict: Quantity | None  # None: no right verdict in any run
    fixed_n_human_judgments: Quantity


@dataclass(frozen=True)
class BatteryDesign:
    name: str
    bets: str
    humans_per_root: int
    cost_per_root: float
    rows: tuple[DesignRow, ...]


@dataclass(frozen=True)
class BatteryDesigns:
    replicates: int
    block_size: int
    n_blocks: int
    construction: str
    cap_roots: int
    fixed_n_roots: int
    designs: tuple[BatteryDesign, ...]


def design_purpose(name: str, scenario: str) -> str:
    return f"battery-designs/{name}/{scenario}"


def route_for(design: RouteDesign, spec: DesignSpec) -> RouteDesign:
    """The battery's route with the design's bets and humans per root."""
    sequential = dataclasses.replace(design.sequential, bets=spec.bets)
    return dataclasses.replace(
        design, human_judgments_per_root=spec.humans_per_root, sequential=sequential
    )


def design_jobs(
    specs: Sequence[DesignSpec], design: RouteDesign, scenario_jobs: Sequence[Job]
) -> list[list[Job]]:
    """Per design, one job per battery scenario (its own purpose)."""
    return [
        [
            Job(route_for(design, spec), job.scenario, design_purpose(spec.name, job.scenario.name))
            for job in scenario_jobs
        ]
        for spec in specs
    ]


def _row(job: Job, outcome: BlockOutcome) -> DesignRow:
    d = job.design
    construction = d.sequential.construction
    oc = summarize(d, job.scenario, outcome, (construction,))
    route = oc.route("eprocess", construction)
    codes = outcome.eprocess_codes[0]
    roots = outcome.eprocess_roots[0].astype(np.float64)
    issued = (codes >= 1) & (codes <= 3)
    right = issued & ~eprocess_scored_wrong(d, oc.effect_exists, oc.true_h, codes)
    cost = roots * (d.model_cost_per_root + d.human_cost_per_root)
    humans = roots * d.human_judgments_per_root
    return DesignRow(
        scenario=job.scenario.name,
        effect_exists=oc.effect_exists,
        purpose=job.purpose,
        p_verdict=route.p_verdict,
        p_right=route.p_correct,
        human_judgments=mean_quantity(humans),
        human_judgments_quantiles={
            f"q{round(q * 100)}": quantile_quantity(humans, q) for q in HUMAN_QUANTILES
        },
        expected_cost=mean_quantity(cost),
        cost_per_valid_verdict=ratio_quantity(cost, right),
        fixed_n_human_judgments=closed_form(d.fixed_n * d.human_judgments_per_root),
    )


def designs_result(
    specs: Sequence[DesignSpec],
    replicates: int,
    block_size: int,
    jobs: Sequence[Sequence[Job]],
    outcomes: Sequence[Sequence[BlockOutcome]],
) -> BatteryDesigns:
    first = jobs[0][0].design
    return BatteryDesigns(
        replicates=replicates,
        block_size=block_size,
        n_blocks=replicates // block_size,
        construction=first.sequential.construction,
        cap_roots=first.sequential.cap_roots,
        fixed_n_roots=first.fixed_n,
        designs=tuple(
            BatteryDesign(
                name=spec.name,
                bets=spec.bets,
                humans_per_root=spec.humans_per_root,
                cost_per_root=js[0].design.model_cost_per_root + js[0].design.human_cost_per_root,
                rows=tuple(_row(job, oc) for job, oc in zip(js, ocs, strict=True)),
            )
            for spec, js, ocs in zip(specs, jobs, outcomes, strict=True)
        ),
    )


def designs_provenance(result: BatteryDesigns) -> dict[str, Any]:
    """The designs' entries of the battery's provenance (only when the config asks for them)."""
    return {
        "designs": {
            "names": [d.name for d in result.designs],
            "replicates": result.replicates,
            "n_blocks": result.n_blocks,
            "task_unit": "one block of one design across all scenarios, after the grid's tasks; "
            "the registered construction only",
            "rng": "design d, scenario s, block b: block_streams(seed, "
            "'battery-designs/<d>/<s>', replicates, block_size)[b]",
        }
    }
