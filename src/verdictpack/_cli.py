"""The command line: a thin shell over the layers.

    verdictpack CONFIG.json|CONFIG.yaml [--out DIR] [--force] [--workers N] [--executor local|dask]
                            [--scheduler ADDRESS] [--quiet]
    verdictpack schema KIND
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
import errno
import importlib
import json
import os
import sys
import threading
import time
from collections.abc import Sequence
from datetime import UTC, datetime
from typing import Any, NoReturn, TextIO

from verdictpack._errors import ConfigError, Defect, OutputError, UsageError, VerdictpackError
from verdictpack._memory import gc_paused

__all__ = ["KINDS", "load_layer", "main", "run_config"]

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
        help="no progress line (shown on a terminal for a run over two seconds) and no closing "
        "line on stderr",
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


def _parsed(config: str) -> tuple[Any, str, Any]:
    """The config's source, its kind (refused at $.kind when unknown) and its validated model."""
    from verdictpack.config._compiler import load_source, parse_config

    source = load_source(config)
    raw = source.json()
    kind = raw.get("kind") if isinstance(raw, dict) else None
    if not isinstance(kind, str) or kind not in KINDS:
        received = raw.get("kind", "(missing)") if isinstance(raw, dict) else raw
        raise ConfigError(
            [Defect(source.display, "$.kind", received, "one of " + ", ".join(KINDS))]
        )
    layer = load_layer(kind)
    return source, kind, parse_config(source, layer.model, layer.rules)


def run_config(
    config: str,
    out: str | None = None,
    *,
    force: bool = False,
    workers: int = 1,
    executor: str = "local",
    scheduler: str | None = None,
    progress: bool | TextIO = False,
) -> dict[str, str]:
    """Run one config; return the rendered files (and write them to ``out`` if given).

    ``progress``: True (stderr) or a stream for the progress line of a run longer than two
    seconds, drawn in place and erased at the end; it never changes a file."""
    from verdictpack.kinds._base import ProgressLine

    line = None
    if progress:
        line = ProgressLine(sys.stderr if progress is True else progress)
    try:
        return _run(config, out, force, workers, executor, scheduler, line)
    finally:
        if line is not None:
            line.close()


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
    from verdictpack.config._provenance import render_provenance
    from verdictpack.kinds._base import RunOptions
    from verdictpack.render import render

    if workers < 1:
        raise UsageError(f"--workers: expected an integer >= 1; received {workers}")
    if executor == "dask" and not scheduler:
        raise UsageError("--executor dask: expected --scheduler ADDRESS; received none")
    source, kind, parsed = _parsed(config)
    options = RunOptions(workers=workers, executor=executor, scheduler=scheduler, progress=progress)
    if kind == "study":
        from verdictpack.kinds._study_live import is_live

        if is_live(parsed):
            return _run_live(parsed, source, out, options, force)
    # the output folder is checked and locked before any computation (a refused one costs
    # nothing) and checked again just before the new folder moves into place
    with claim_output(out, config=config, force=force) as claim:
        started = datetime.now(UTC)
        t0 = time.perf_counter()
        with gc_paused():  # a batch run: no collections over its heap (verdictpack._memory)
            result = load_layer(kind).run(parsed, source, options)
            files = dict(render(result))
        elapsed = time.perf_counter() - t0
        wall = {
            "started_utc": started.isoformat(timespec="seconds"),
            "elapsed_seconds": round(elapsed, 3),
            "workers": workers,
            "executor": executor,
        }
        runs = getattr(result, "sequential_runs", None)
        if runs and elapsed > 0:
            wall["runs_per_second"] = round(runs / elapsed, 1)
        files["provenance.json"] = render_provenance(result.provenance, wall)
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
    from verdictpack.config._provenance import render_provenance
    from verdictpack.render import render

    started = datetime.now(UTC)
    t0 = time.perf_counter()
    try:
        result, outcome = run_live_study(parsed, source, out, options, force=force)  # type: ignore[arg-type]
    except OSError as exc:
        raise _unwritable(out, exc) from None
    files = dict(render(result))
    wall = {
        "started_utc": started.isoformat(timespec="seconds"),
        "elapsed_seconds": round(time.perf_counter() - t0, 3),
        "calls_sent": outcome.sent,
        "answers_from_ledger": outcome.cached,
    }
    files["provenance.json"] = render_provenance(result.provenance, wall)
    report = os.path.join(out, REPORT_FOLDER)
    try:
        with claim_output(report, config=str(source.display), force=True) as claim:  # type: ignore[attr-defined]
            claim.write(files)
    except OSError as exc:
        raise _unwritable(out, exc) from None
    reg = result.registered
    where = f" at root {reg.roots_at_verdict}" if reg.roots_at_verdict else ""
    sys.stderr.write(
        f"\nverdictpack: {reg.verdict}{where}; {outcome.committed:,} roots committed "
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
    from verdictpack.config._compiler import load_source
    from verdictpack.kinds._study_live import plan_study
    from verdictpack.render._study import render_plan

    source, kind, parsed = _parsed(config)
    if kind != "study":
        raise UsageError("--plan: expected a study config (kind study)")
    data = None
    if sheets is not None:
        block = load_source(sheets).json()
        if not isinstance(block, dict):
            raise UsageError(f"--sheets {sheets}: expected a fitted_panel.json object")
        data = block
    sys.stdout.write(render_plan(plan_study(parsed, source, data)))
    return 0


def _status(argv: Sequence[str]) -> int:
    from verdictpack.kinds._study_live import status_lines

    if len(argv) != 1 or argv[0].startswith("-"):
        got = " ".join(argv) if argv else "(nothing)"
        raise UsageError(f"verdictpack status: expected one live study folder; received {got}")
    sys.stdout.write("\n".join(status_lines(argv[0])) + "\n")
    return 0


def _schema(argv: Sequence[str]) -> int:
    if len(argv) != 1 or argv[0] not in KINDS:
        got = " ".join(argv) if argv else "(nothing)"
        raise UsageError(
            f"verdictpack schema: expected one kind from {', '.join(KINDS)}; received {got}"
        )
    layer = load_layer(argv[0])
    schema = layer.model.model_json_schema()
    schema["title"] = f"verdictpack {argv[0]} config"
    sys.stdout.write(json.dumps(schema, indent=2) + "\n")
    return 0


def _validate(argv: Sequence[str]) -> int:
    """Check a config and (for a study) every data file it names; write nothing."""

    if len(argv) != 1 or argv[0].startswith("-"):
        got = " ".join(argv) if argv else "(nothing)"
        raise UsageError(f"verdictpack validate: expected one config file; received {got}")
    source, kind, parsed = _parsed(argv[0])
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
        "usage: verdictpack schema KIND\n\nPrint the JSON Schema of a config kind ("
        + ", ".join(KINDS)
        + "): every field, its type, bounds and description.\n"
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
        "interval and state, spend against the cap, the last run's throughput.\n"
    ),
}


def _dispatch(argv: Sequence[str]) -> int:
    if len(argv) >= 2 and argv[0] in _HELP and argv[1] in ("-h", "--help"):
        sys.stdout.write(_HELP[argv[0]])
        return 0
    if argv and argv[0] in ("--version", "-V"):
        sys.stdout.write(f"verdictpack {_version()}\n")
        return 0
    if argv and argv[0] == "schema":
        return _schema(argv[1:])
    if argv and argv[0] == "validate":
        return _validate(argv[1:])
    if argv and argv[0] == "status":
        return _status(argv[1:])
    if argv and argv[0] in ("audit", "seal-test", "reproduce"):
        module = importlib.import_module(
            {
                "audit": "verdictpack.verify._command",
                "seal-test": "verdictpack.verify._seal",
                "reproduce": "verdictpack.verify._reproduce",
            }[argv[0]]
        )
        return int(module.cli(list(argv[1:])))
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
        progress=(not args.quiet) and sys.stderr.isatty(),
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
