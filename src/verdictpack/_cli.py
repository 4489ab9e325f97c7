"""The command line: a thin shell over the layers.

    verdictpack CONFIG.json|CONFIG.yaml [--out DIR] [--force] [--workers N] [--executor local|dask]
                            [--scheduler ADDRESS] [--progress auto|bar|plain|off]
                            [--progress-interval SECONDS] [--quiet]
    verdictpack schema [results] KIND
    verdictpack validate CONFIG.json|CONFIG.yaml
    verdictpack status DIR
    verdictpack audit RUN_DIR [RUN_DIR ...]
    verdictpack seal-test [--keep DIR]
    verdictpack reproduce --out DIR

Exit codes: 0 success; 2 config, usage or output refused (every defect printed, one per line,
nothing written); 1 unexpected failure (a bug: one line on stderr, no traceback unless --debug).
"""

from __future__ import annotations

import argparse
import contextlib
import errno
import importlib
import json
import math
import os
import shutil
import sys
import threading
import time
from collections import deque
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any, NoReturn, TextIO, TypeVar

from verdictpack._errors import ConfigError, Defect, OutputError, UsageError, VerdictpackError
from verdictpack._memory import gc_paused

__all__ = ["KINDS", "load_layer", "main", "rerender", "result_class", "run_config"]

# kind -> module holding LAYER; imported lazily so start-up stays cheap
KINDS: dict[str, str] = {
    "sizing": "verdictpack.kinds._sizing",
    "verdict": "verdictpack.kinds._verdict",
    "judges": "verdictpack.kinds._judges",
    "engine": "verdictpack.kinds._engine",
    "battery": "verdictpack.kinds._battery",
    "study": "verdictpack.kinds._study",
}
SUBCOMMANDS = ("schema", "validate", "status", "audit", "seal-test", "reproduce")


def load_layer(kind: str):  # type: ignore[no-untyped-def]
    """The Layer object of a config kind."""
    module = importlib.import_module(KINDS[kind])
    return module.LAYER


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> NoReturn:
        raise UsageError(f"{message}\n{self.format_usage().strip()}")


def _run_parser() -> _Parser:
    p = _Parser(
        prog="verdictpack",
        description="Run one verdictpack config (kinds: " + ", ".join(KINDS) + "). "
        "Other commands: " + ", ".join(SUBCOMMANDS) + ".",
    )
    p.add_argument(
        "config", help="the config file, JSON or YAML (.yaml, .yml): the only input read"
    )
    p.add_argument("--out", help="write report.md, results.json and the layer's files here")
    p.add_argument(
        "--force",
        action="store_true",
        help="replace an --out folder an earlier verdictpack run wrote (never any other)",
    )
    p.add_argument("--workers", type=int, default=1, help="local worker processes (default 1)")
    p.add_argument("--executor", choices=("local", "dask"), default="local")
    p.add_argument("--scheduler", help="Dask scheduler address (with --executor dask)")
    p.add_argument(
        "--quiet",
        action="store_true",
        help="no progress (as --progress off) and no closing line on stderr",
    )
    p.add_argument(
        "--progress",
        choices=PROGRESS_MODES,
        default="auto",
        help="a run over two seconds tells its progress on stderr: a line drawn in place on a "
        "terminal (bar), one plain line every few seconds otherwise (plain, for a log file); "
        "auto (the default) picks bar on a terminal and plain elsewhere",
    )
    p.add_argument(
        "--progress-interval",
        type=float,
        metavar="SECONDS",
        help="seconds between plain progress lines (default 5)",
    )
    p.add_argument(
        "--plan",
        action="store_true",
        help="a study: print every route's projected cost and P(a verdict within the budget), "
        "simulated from the judges' sheets; nothing is sent, nothing written",
    )
    p.add_argument(
        "--sheets",
        metavar="FILE",
        help="with --plan: a fitted_panel.json of a previous study (default: the judges' priors)",
    )
    p.add_argument("--debug", action="store_true", help="show tracebacks of internal errors")
    return p


def _parsed(config: Any) -> tuple[Any, str, Any]:
    """The config's source, its kind (refused at $.kind when unknown) and its validated model;
    ``config`` a path, or a ConfigSource already read (the Python API's)."""
    from verdictpack.config._compiler import ConfigSource, load_source, parse_config

    source = config if isinstance(config, ConfigSource) else load_source(config)
    raw = source.value()  # read-only: only its kind is looked at
    kind = raw.get("kind") if isinstance(raw, dict) else None
    if not isinstance(kind, str) or kind not in KINDS:
        received = raw.get("kind", "(missing)") if isinstance(raw, dict) else raw
        raise ConfigError(
            [Defect(source.display, "$.kind", received, "one of " + ", ".join(KINDS))]
        )
    del raw  # validated from the source, which may release it
    layer = load_layer(kind)
    return source, kind, parse_config(source, layer.model, layer.rules)


PROGRESS_MODES = ("auto", "bar", "plain", "off")


@dataclass
class ProgressLine:
    """A run's progress: a ``ProgressHook`` (verdictpack.kinds._base) writing on ``out``.

    Nothing is shown for a run shorter than ``delay`` seconds. Then, as a bar (a terminal): one
    line redrawn in place (``\\r``) at most once per ``interval`` seconds (default 0.25), cut to
    the terminal's width and erased by :meth:`close`, so the terminal keeps only the run's
    closing line. As ``plain`` lines (a log file, a pipe): one line of plain text every
    ``interval`` seconds (default 5), starting ``verdictpack: progress``, never erased. Each
    tells what, done/total, the rate (over the last minute), the time left at that rate and the
    time so far.
    """

    out: TextIO = field(default_factory=lambda: sys.stderr)
    delay: float = 2.0
    interval: float | None = None
    plain: bool = False
    clock: Callable[[], float] = time.monotonic
    started: float = field(default=-1.0)
    _drawn_at: float | None = field(default=None, repr=False)
    _width: int = field(default=0, repr=False)
    # (time, done) seen since the step began: the rate's window; the step's total
    _seen: deque[tuple[float, int]] = field(default_factory=lambda: deque(maxlen=512), repr=False)
    _total: int = field(default=-1, repr=False)

    def __post_init__(self) -> None:
        if self.started < 0:
            self.started = self.clock()
        if self.interval is None:
            self.interval = 5.0 if self.plain else 0.25

    def __call__(self, what: str, done: int, total: int) -> None:
        now = self.clock()
        total = max(total, 1)
        done = min(max(done, 0), total)
        if total != self._total or (self._seen and done < self._seen[-1][1]):  # a new step
            self._seen.clear()
            self._total = total
        if not self._seen:
            self._seen.append((now, done))
        if now - self.started < self.delay:
            return
        if self._drawn_at is not None and now - self._drawn_at < (self.interval or 0.0):
            return
        self._drawn_at = now
        self._seen.append((now, done))
        while len(self._seen) > 2 and now - self._seen[1][0] >= 60.0:
            self._seen.popleft()
        t0, d0 = self._seen[0]
        rate = (done - d0) / (now - t0) if now > t0 else 0.0
        told = f"{done:,}/{total:,} ({100 * done // total}%)"
        if rate > 0:
            told += f", {rate:.3g}/s" + (
                f", ETA {_span((total - done) / rate)}" if done < total else ""
            )
        told += f", {_span(now - self.started)} elapsed"
        if self.plain:
            self.out.write(f"verdictpack: progress {what} {told}\n")
            self.out.flush()
            return
        filled = 24 * done // total
        bar = f" [{'#' * filled}{'.' * (24 - filled)}]"
        cols = max(shutil.get_terminal_size().columns - 1, 40)  # a wrapped line is not redrawn
        room = cols - len("verdictpack: ") - len(told) - 1
        if len(what) + len(bar) > room:  # the numbers stay; the bar, then the words give way
            bar = ""
        if len(what) > room:
            what = what[: max(room - 3, 0)] + "..."
        text = f"verdictpack: {what}{bar} {told}"[:cols]
        pad = " " * max(self._width - len(text), 0)
        self.out.write("\r" + text + pad)
        self.out.flush()
        self._width = len(text) + len(pad)  # what the terminal shows now

    def close(self) -> None:
        """Erase the bar (nothing to do when none was drawn, or for plain lines)."""
        if self._width:
            self.out.write("\r" + " " * self._width + "\r")
            self.out.flush()
            self._width = 0


def _span(seconds: float) -> str:
    s = round(seconds)
    if s < 60:
        return f"{s} s"
    return f"{s // 60} min {s % 60:02d} s" if s < 3600 else f"{s // 3600} h {s // 60 % 60:02d} min"


def progress_line(
    progress: bool | str | TextIO, interval: float | None = None
) -> ProgressLine | None:
    """The progress of a run: a mode of ``--progress`` on stderr (``auto``: a bar on a terminal,
    plain lines elsewhere; ``bar``; ``plain``; ``off``), True for ``auto``, False for ``off``,
    or a stream (``auto`` on it); ``interval`` the seconds between plain lines (default 5)."""
    out, mode = sys.stderr, "auto" if progress is True else progress or "off"
    if not isinstance(progress, bool | str):
        out, mode = progress, "auto"
    if mode not in PROGRESS_MODES:
        raise UsageError(
            f"--progress: expected one of {', '.join(PROGRESS_MODES)}; received {mode}"
        )
    if interval is not None and not (math.isfinite(interval) and interval > 0):
        raise UsageError(f"--progress-interval: expected seconds > 0; received {interval}")
    if mode == "off":
        return None
    plain = mode == "plain" or (mode == "auto" and not out.isatty())
    return ProgressLine(out, plain=plain, interval=interval if plain else None)


def run_config(
    config: str,
    out: str | None = None,
    *,
    force: bool = False,
    workers: int = 1,
    executor: str = "local",
    scheduler: str | None = None,
    progress: bool | str | TextIO = False,
    progress_interval: float | None = None,
) -> dict[str, str]:
    """Run one config; return the rendered files (and write them to ``out`` if given).

    ``progress`` and ``progress_interval``: how a run longer than two seconds tells its progress
    (:func:`progress_line`); it never changes a file."""
    line = progress_line(progress, progress_interval)
    try:
        return _run(config, out, force, workers, executor, scheduler, line)
    finally:
        if line is not None:
            line.close()


_T = TypeVar("_T")


def timed(run: Callable[[], _T], *, pause_gc: bool = True) -> tuple[_T, dict[str, Any]]:
    """``run()`` and the start of provenance.json's wall clock of it (``started_utc``,
    ``elapsed_seconds``); garbage collection is paused over it (a batch run: no collections over
    its heap, verdictpack._memory) unless ``pause_gc`` is False."""
    started = datetime.now(UTC)
    t0 = time.perf_counter()
    with gc_paused() if pause_gc else contextlib.nullcontext():
        value = run()
    elapsed = round(time.perf_counter() - t0, 3)
    return value, {"started_utc": started.isoformat(timespec="seconds"), "elapsed_seconds": elapsed}


def with_provenance(result: Any, files: Mapping[str, str], wall: dict[str, Any]) -> dict[str, str]:
    """A result's rendered ``files`` and its provenance.json, with the run's ``wall`` clock."""
    from verdictpack.config._provenance import render_provenance

    return {**files, "provenance.json": render_provenance(result.provenance, wall)}


def _run(
    config: str,
    out: str | None,
    force: bool,
    workers: int,
    executor: str,
    scheduler: str | None,
    progress: Any,
) -> dict[str, str]:
    from verdictpack._output import claim_output
    from verdictpack.kinds._base import RunOptions
    from verdictpack.render import render

    if workers < 1:
        raise UsageError(f"--workers: expected an integer >= 1; received {workers}")
    if executor == "dask" and not scheduler:
        raise UsageError("--executor dask: expected --scheduler ADDRESS; received none")
    if scheduler and executor != "dask":  # an option that would be ignored is refused
        raise UsageError(f"--scheduler {scheduler}: expected with --executor dask; received none")
    source, kind, parsed = _parsed(config)
    options = RunOptions(workers=workers, executor=executor, scheduler=scheduler, progress=progress)
    if kind == "study":
        from verdictpack.kinds._study_live import is_live

        if is_live(parsed):
            return _run_live(parsed, source, out, options, force)
    # the output folder is checked and locked before any computation (a refused one costs
    # nothing) and checked again just before the new folder moves into place
    with claim_output(out, config=config, force=force) as claim:

        def run_and_render() -> tuple[Any, Mapping[str, str]]:
            result = load_layer(kind).run(parsed, source, options)
            return result, render(result)

        (result, rendered), wall = timed(run_and_render)
        wall.update(workers=workers, executor=executor)
        runs, elapsed = getattr(result, "sequential_runs", None), wall["elapsed_seconds"]
        if runs and elapsed > 0:
            wall["runs_per_second"] = round(runs / elapsed, 1)
        files = with_provenance(result, rendered, wall)
        claim.write(files)
    return files


def _run_live(
    parsed: object, source: object, out: str | None, options: object, force: bool
) -> dict[str, str]:
    """A study with live judges: its folder is kept (the ledger), the report/ inside replaced."""
    from verdictpack.kinds._study_live import run_live_study

    if out is None:
        raise UsageError(
            "a study with live judges needs --out DIR: the folder keeps its ledger of paid "
            "judgments, so an interrupted study resumes where it stopped"
        )
    from verdictpack._output import REPORT_FOLDER, claim_output
    from verdictpack.render import render

    def run_and_render() -> tuple[Any, Any, Mapping[str, str]]:
        try:
            result, outcome = run_live_study(parsed, source, out, options, force=force)  # type: ignore[arg-type]
        except OSError as exc:
            raise _unwritable(out, exc) from None
        return result, outcome, render(result)

    (result, outcome, rendered), wall = timed(run_and_render, pause_gc=False)
    wall.update(calls_sent=outcome.sent, answers_from_ledger=outcome.cached)
    files = with_provenance(result, rendered, wall)
    report = os.path.join(out, REPORT_FOLDER)
    try:
        with claim_output(report, config=str(source.display), force=True) as claim:  # type: ignore[attr-defined]
            claim.write(files)
    except OSError as exc:
        raise _unwritable(out, exc) from None
    reg = result.registered
    where = f" at root {reg.roots_at_verdict}" if reg.roots_at_verdict else ""
    line = getattr(options, "progress", None)
    if isinstance(line, ProgressLine):  # erased before the closing line
        line.close()
    sys.stderr.write(
        f"verdictpack: {reg.verdict}{where}; {outcome.committed:,} roots committed "
        f"({outcome.sent:,} calls sent, {outcome.cached:,} answers from the ledger); "
        f"{result.stop_reason}; files in {out}/report\n"
    )
    _html_hint(files)
    if outcome.stop == "failed":
        raise UsageError(outcome.message)
    if outcome.stop == "interrupted":
        raise KeyboardInterrupt(
            "interrupted; the committed roots are in the ledger and the report; rerun the same "
            "command to resume"
        )
    return {}


# a folder that cannot be written: a read-only mount, an immutable folder, no permission
_UNWRITABLE = frozenset({errno.EROFS, errno.EACCES, errno.EPERM})


def _unwritable(out: str, exc: OSError) -> Exception:
    """A live study's folder that cannot be written, as the usage error naming it; any other
    OSError as it was (a bug, reported as one)."""
    if exc.errno not in _UNWRITABLE:
        return exc
    where = f" ({exc.filename})" if exc.filename else ""
    return OutputError(
        f"--out {out}: the live study's folder cannot be written{where}: {exc.strerror}; a live "
        "study keeps its ledger there: choose a writable folder (not a read-only mount or an "
        "immutable folder), or make this one writable, and rerun"
    )


def _plan(config: str, sheets: str | None) -> int:
    from verdictpack.kinds._plan_sheets import read_sheets
    from verdictpack.kinds._study_live import plan_study
    from verdictpack.render._study import render_plan

    source, kind, parsed = _parsed(config)
    if kind != "study":
        raise UsageError("--plan: expected a study config (kind study)")
    data = None if sheets is None else read_sheets(sheets)
    sys.stdout.write(render_plan(plan_study(parsed, source, data)))
    return 0


def _one_argument(argv: Sequence[str], command: str, what: str) -> str:
    """The one argument of ``command`` (not an option), else UsageError saying ``what`` it is."""
    if len(argv) != 1 or argv[0].startswith("-"):
        got = " ".join(argv) if argv else "(nothing)"
        raise UsageError(f"verdictpack {command}: expected {what}; received {got}")
    return argv[0]


def _status(argv: Sequence[str]) -> int:
    from verdictpack.kinds._study_status import status_lines

    folder = _one_argument(argv, "status", "one live study folder")
    sys.stdout.write("\n".join(status_lines(folder)) + "\n")
    return 0


def result_class(kind: str) -> type:
    """The result class of a config kind (the one its renderer is registered for)."""
    import importlib

    from verdictpack.render import RENDERERS

    module = importlib.import_module(KINDS[kind])  # the kind's module, or one it imports from
    found: list[type] = [c for c in RENDERERS if getattr(module, c.__name__, None) is c]
    (cls,) = found  # exactly one result class per kind
    return cls


def rerender(data: dict[str, Any]) -> dict[str, str]:
    """The texts of an output folder that its results.json alone determines, rendered again
    from its data (the self-audit compares them with the folder's, byte for byte)."""
    from verdictpack._contract import from_document
    from verdictpack.render import texts

    kind = data.get("kind")
    if kind not in KINDS:
        raise ValueError(f"results.json $.kind: expected one of {', '.join(KINDS)}; got {kind!r}")
    cls = result_class(kind)
    return texts(from_document(cls, data))


def _schema(argv: Sequence[str]) -> int:
    """``schema KIND``: the config's JSON Schema; ``schema results KIND``: results.json's."""
    results = bool(argv) and argv[0] == "results"
    kind = argv[1:] if results else argv
    if len(kind) != 1 or kind[0] not in KINDS:
        got = " ".join(argv) if argv else "(nothing)"
        raise UsageError(
            f"verdictpack schema: expected [results] and one kind from {', '.join(KINDS)}; "
            f"received {got}"
        )
    if results:
        from verdictpack._contract import results_schema

        schema = results_schema(kind[0], result_class(kind[0]))
    else:
        schema = load_layer(kind[0]).model.model_json_schema()
        schema["title"] = f"verdictpack {kind[0]} config"
    sys.stdout.write(json.dumps(schema, indent=2) + "\n")
    return 0


def _validate(argv: Sequence[str]) -> int:
    """Check a config and (for a study) every data file it names; write nothing."""
    source, kind, parsed = _parsed(_one_argument(argv, "validate", "one config file"))
    if kind != "study":
        sys.stdout.write(f"{source.display}: a valid {kind} config (no data files to check).\n")
        return 0
    from verdictpack.kinds._study import prepare_study
    from verdictpack.render._study import render_validation

    # the run's own checks, by the same call (prepare_study: files, gates, order, values and
    # the reader audit), so validate passes exactly what the run accepts
    prep = prepare_study(parsed, source)
    sys.stdout.write(render_validation(prep, source.display))
    for note in prep.data.notes:
        sys.stdout.write(f"note: {note}\n")
    return 0


_HELP = {
    "schema": (
        "usage: verdictpack schema [results] KIND\n\nPrint the JSON Schema of a config kind ("
        + ", ".join(KINDS)
        + "): every field, its type, bounds and description; with 'results', the versioned "
        "JSON Schema of that kind's results.json.\n"
    ),
    "validate": (
        "usage: verdictpack validate CONFIG\n\nCheck a config (JSON, or YAML: .yaml, .yml) and, "
        "for a study, every data "
        "file it names (each defect with its file and line or JSON path); print a summary of "
        "the data. Exit 2 on any defect. Nothing is written.\n"
    ),
    "status": (
        "usage: verdictpack status DIR\n\nA live study's state in a few lines, read from its "
        "ledger (safe while a run is writing): committed roots, the registered track's "
        "interval and state, spend against the cap, whether a run is active now, and each "
        "run's start, duration, calls sent and answers received (a killed run's too).\n"
    ),
}


def _dispatch(argv: Sequence[str]) -> int:
    if len(argv) >= 2 and argv[0] in _HELP and argv[1] in ("-h", "--help"):
        sys.stdout.write(_HELP[argv[0]])
        return 0
    if argv and argv[0] in ("--version", "-V"):
        sys.stdout.write(f"verdictpack {_version()}\n")
        return 0
    command = {"schema": _schema, "validate": _validate, "status": _status}.get(
        argv[0] if argv else ""
    )
    if command is not None:
        return command(argv[1:])
    if argv and argv[0] in ("audit", "seal-test", "reproduce"):
        module = importlib.import_module(
            {
                "audit": "verdictpack.verify._command",
                "seal-test": "verdictpack.verify._seal",
                "reproduce": "verdictpack.verify._reproduce",
            }[argv[0]]
        )
        if argv[0] == "seal-test":
            return int(module.cli(list(argv[1:])))
        return int(module.cli(list(argv[1:]), rerender=rerender))
    word = argv[0] if argv else ""
    if len(argv) > 1 and word.isidentifier() and not os.path.lexists(word):
        # "verdictpack run cfg.json": a word that is neither a command nor a file is named as such
        raise UsageError(
            f"{word!r} is neither a command ({', '.join(SUBCOMMANDS)}) nor a config file; a config "
            "runs as: verdictpack CONFIG --out FOLDER"
        )
    args = _run_parser().parse_args(argv)
    if args.plan or args.sheets:
        return _plan(args.config, args.sheets)
    files = run_config(
        args.config,
        args.out,
        force=args.force,
        workers=args.workers,
        executor=args.executor,
        scheduler=args.scheduler,
        progress="off" if args.quiet else args.progress,
        progress_interval=args.progress_interval,
    )
    if args.out is None and "report.md" in files:
        sys.stdout.write(files["report.md"])
    elif args.out is not None and files and not args.quiet:
        sys.stderr.write(f"verdictpack: {_headline(files)}; files in {args.out}\n")
        _html_hint(files)
    return 0


def _html_hint(files: dict[str, str]) -> None:
    """Once after a run whose report.html could not be drawn: how to get it."""
    if "report.md" in files and "report.html" not in files:
        from verdictpack.render import HTML_HINT

        sys.stderr.write(f"verdictpack: {HTML_HINT}\n")


def _headline(files: dict[str, str]) -> str:
    """One line from a run's results.json: its kind and, where it has one, the verdict."""
    try:
        res = json.loads(files.get("results.json", "{}"))
    except ValueError:
        return "done"
    kind = res.get("kind", "run")
    reg = res.get("registered")
    if isinstance(reg, dict) and reg.get("verdict"):
        root = reg.get("roots_at_verdict")
        return f"{kind}: {reg['verdict']}" + (f" at root {root}" if root else "")
    return f"{kind}: done"


def _version() -> str:
    from importlib import metadata

    try:
        return metadata.version("verdictpack")
    except metadata.PackageNotFoundError:  # pragma: no cover - a source tree without install
        return "unknown"


def entry() -> NoReturn:
    """The console script and ``python -m verdictpack``: :func:`main`, then the exit.

    A large run leaves a large heap (a 100,000-root study: about a million objects in caches
    and module state), and an interpreter's normal exit frees every object one by one, which
    takes seconds after the last file is written. Every output is on disk (written, fsynced and
    renamed into place) when :func:`main` returns, so when nothing else is running (one thread,
    no child process) the process flushes its streams and ends at once (``os._exit``);
    otherwise it exits normally.
    """
    code = main()
    try:
        sys.stdout.flush()
        sys.stderr.flush()
    except (OSError, ValueError):
        sys.exit(code)
    mp = sys.modules.get("multiprocessing")
    if threading.active_count() == 1 and not (mp is not None and mp.active_children()):
        os._exit(code)
    sys.exit(code)


def main(argv: Sequence[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    debug = "--debug" in argv
    try:
        return _dispatch(argv)
    except ConfigError as exc:
        for defect in exc.defects:
            print(defect.message(), file=sys.stderr)
        print(
            f"verdictpack: config refused ({len(exc.defects)} defect(s)); nothing written",
            file=sys.stderr,
        )
        return 2
    except VerdictpackError as exc:
        print(f"verdictpack: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt as exc:
        print(f"verdictpack: {exc or 'interrupted; nothing written'}", file=sys.stderr)
        return 130
    except Exception as exc:  # the last line of defence: a bug, reported without a traceback
        if debug:
            raise
        print(
            f"verdictpack: internal error: {type(exc).__name__}: {exc} (rerun with --debug)",
            file=sys.stderr,
        )
        return 1
