"""The contract every layer (config kind) follows, so the CLI stays thin.

A layer is its config model, its cross-field rules, a ``run`` that turns a validated config into a
frozen result object, and a ``render`` that turns the result object into files (``report.md``,
``results.json`` and any layer-specific outputs). Rendering never recomputes.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from verdictpack.config._compiler import ConfigSource, CrossRule, StrictModel

__all__ = ["Layer", "RunOptions", "report_and_results"]


@dataclass(frozen=True)
class RunOptions:
    """Execution options that never change a number: how, not what."""

    workers: int = 1
    executor: str = "local"
    scheduler: str | None = None
    progress: bool = False


@dataclass(frozen=True)
class Layer:
    kind: str
    summary: str
    model: type[StrictModel]
    rules: tuple[CrossRule, ...]
    run: Callable[[Any, ConfigSource, RunOptions], Any]
    render: Callable[[Any], Mapping[str, str]]


def report_and_results(renderer: str) -> Callable[[Any], Mapping[str, str]]:
    """The usual pair of files: ``report.md`` by the named renderer of
    :mod:`verdictpack.render._markdown`, and ``results.json``."""

    def render(result: Any) -> Mapping[str, str]:
        from verdictpack.render import _markdown as _report

        return {
            "report.md": getattr(_report, renderer)(result),
            "results.json": _report.render_results_json(result),
        }

    return render
