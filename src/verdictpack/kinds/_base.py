"""The contract every layer (config kind) follows, so the CLI stays thin.

A layer is its config model, its cross-field rules and a ``run`` that turns a validated config into
a frozen result object. Turning the result into files is not the kind's business: the renderer is
registered by the result's type in :data:`verdictpack.render.RENDERERS`, and the CLI joins the two.
"""

from __future__ import annotations

import sys
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, TextIO

from verdictpack.config._compiler import ConfigSource, CrossRule, StrictModel

__all__ = ["Layer", "ProgressHook", "ProgressLine", "RunOptions", "report_progress"]

# How a run says how far it is: ``hook(what, done, total)`` as work advances (``what`` names the
# step, e.g. "power scenarios"; ``done`` of ``total`` units, blocks of replicates or items). It
# is passed into the run function in RunOptions, never kept in a global, and never changes a
# number: the same config and seed give the same bytes with or without one.
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


@dataclass
class ProgressLine:
    """The terminal's progress line: a :data:`ProgressHook` writing one line on ``out``.

    Nothing is shown for a run shorter than ``delay`` seconds; after that the line is redrawn
    in place (``\\r``) at most once per ``interval`` seconds, and :meth:`close` erases it, so
    what the terminal keeps is only the run's own closing line. The CLI makes one only when
    stderr is a terminal and ``--quiet`` is not given.
    """

    out: TextIO = field(default_factory=lambda: sys.stderr)
    delay: float = 2.0
    interval: float = 0.25
    clock: Callable[[], float] = time.monotonic
    started: float = field(default=-1.0)
    _drawn_at: float | None = field(default=None, repr=False)
    _width: int = field(default=0, repr=False)

    def __post_init__(self) -> None:
        if self.started < 0:
            self.started = self.clock()

    def __call__(self, what: str, done: int, total: int) -> None:
        now = self.clock()
        if now - self.started < self.delay:
            return
        if self._drawn_at is not None and now - self._drawn_at < self.interval:
            return
        self._drawn_at = now
        total = max(total, 1)
        done = min(max(done, 0), total)
        bar_width = 24
        filled = bar_width * done // total
        bar = "#" * filled + "." * (bar_width - filled)
        text = (
            f"verdictpack: {what} [{bar}] {done}/{total} ({100 * done // total}%), "
            f"{now - self.started:.0f} s"
        )
        pad = " " * max(self._width - len(text), 0)
        self.out.write("\r" + text + pad)
        self.out.flush()
        self._width = len(text)

    def close(self) -> None:
        """Erase the line (nothing to do when none was drawn)."""
        if self._width:
            self.out.write("\r" + " " * self._width + "\r")
            self.out.flush()
            self._width = 0


@dataclass(frozen=True)
class Layer:
    kind: str
    summary: str
    model: type[StrictModel]
    rules: tuple[CrossRule, ...]
    run: Callable[[Any, ConfigSource, RunOptions], Any]
