"""The contract every layer (config kind) follows, so the CLI stays thin.

A layer is its config model, its cross-field rules and a ``run`` that turns a validated config into
a frozen result object. Turning the result into files is not the kind's business: the renderer is
registered by the result's type in :data:`verdictpack.render.RENDERERS`, and the CLI joins the two.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from verdictpack.config._compiler import ConfigSource, CrossRule, StrictModel

__all__ = ["Layer", "RunOptions"]


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
