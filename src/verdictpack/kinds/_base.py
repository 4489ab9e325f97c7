"""The contract every layer (config kind) follows, so the CLI stays thin.

A layer is its config model, its cross-field rules and a ``run`` that turns a validated config into
a frozen result object. Turning the result into files is not the kind's business: the renderer is
registered by the result's type in :data:`verdictpack.render.RENDERERS`, and the CLI joins the two.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from verdictpack._results import Quantity, exact
from verdictpack.config._blocks import SequentialSettings
from verdictpack.config._compiler import ConfigSource, CrossRule, StrictModel

__all__ = [
    "CostLine",
    "Layer",
    "ProgressHook",
    "RunOptions",
    "report_progress",
    "sequential_record",
    "with_total",
]

# How a run says how far it is: ``hook(what, done, total)`` as work advances (``what`` names the
# step, e.g. "power scenarios"; ``done`` of ``total`` units, blocks of replicates or items). It
# is passed into the run function in RunOptions, never kept in a global, and never changes a
# number: the same config and seed give the same bytes with or without one. Drawing it is the
# CLI's business (verdictpack._cli.ProgressLine).
ProgressHook = Callable[[str, int, int], None]


@dataclass(frozen=True)
class RunOptions:
    """Execution options that never change a number: how, not what."""

    workers: int = 1
    executor: str = "local"
    scheduler: str | None = None
    progress: ProgressHook | None = None


def report_progress(options: RunOptions | None, what: str) -> Callable[[int, int], None] | None:
    """The ``tick(done, total)`` of one step, for code below the kinds (the simulators), or None
    when the run reports no progress."""
    hook = None if options is None else options.progress
    if hook is None:
        return None

    def tick(done: int, total: int) -> None:
        hook(what, done, total)

    return tick


@dataclass(frozen=True)
class CostLine:
    """One line of a cost table: the touches and the cost of one item of one route."""

    route: str
    line: str
    touches: Quantity
    cost: Quantity


def with_total(route: str, rows: list[CostLine]) -> list[CostLine]:
    """The route's cost lines followed by their total."""
    touches = sum(float(c.touches.value) for c in rows)
    cost = sum(float(c.cost.value) for c in rows)
    return [*rows, CostLine(route, "total", exact(touches), exact(cost))]


def sequential_record(sequential: SequentialSettings) -> dict[str, Any]:
    """The sequential settings as the engine's, the battery's and a study's provenance open
    (in this order)."""
    return {
        "construction": sequential.construction,
        "comparison_construction": sequential.other_construction(),
        "lambdas": list(sequential.spec.lambdas),
        "weights": list(sequential.spec.weights or ()),
        **sequential.bets_record(),
    }


@dataclass(frozen=True)
class Layer:
    kind: str
    summary: str
    model: type[StrictModel]
    rules: tuple[CrossRule, ...]
    run: Callable[[Any, ConfigSource, RunOptions], Any]
