"""One-command reproduction: ``verdictpack reproduce --out DIR`` (wrapped by scripts/reproduce.sh).

1. Runs every example config (``examples/*.json``, ``*.yaml``, ``*.yml``, sorted) with the
   installed console script into ``DIR/<example stem>/`` (a battery with ``--workers 2``);
2. runs the seal test on the same configs (battery reduced, see :mod:`verdictpack.verify._seal`);
3. runs the self-audit over every run folder (:mod:`verdictpack.verify._command`);
4. compares every regenerated file with ``examples/outputs/<example stem>/`` byte for byte, except
   ``provenance.json``'s ``wall_clock`` field (and provenance.json's hash in the marker
   ``.verdictpack-output.json``, which the committed folders carry too).

It prints a summary and exits 1 on any difference, seal failure, audit failure or failed run
(2 for a refused command line).

``--out DIR`` follows the output folder contract (:mod:`verdictpack._output`): refused when it is
the working directory, holds the examples, holds ``.git``, ...; with ``--force`` each run folder
in it is replaced by its run only when an earlier run wrote it. ``DIR/<stem>`` are ordinary
output folders (marker included).

``--update`` is for maintainers: after steps 1-3 pass it writes the regenerated folders to
``examples/outputs/`` instead of comparing, through the same writer (marker, lock, atomic
replacement; a committed folder holding anything verdictpack did not write is refused). A
committed file that agrees with the regenerated one (provenance.json up to ``wall_clock``) keeps
its bytes, so only real changes show in the diff. Run it only when a change of numbers is intended,
and review the diff of examples/outputs/ before committing it.
"""

from __future__ import annotations

import os
import shutil
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from verdictpack._errors import UsageError
from verdictpack._output import MARKER, check_output_path, write_outputs
from verdictpack.verify._findings import _ArgumentParser
from verdictpack.verify._seal import (
    Runner,
    RunRequest,
    compare_folders,
    console_runner,
    example_configs,
    find_examples,
    read_config,
    same_output,
    seal_test,
)

if TYPE_CHECKING:
    from verdictpack.verify._command import Rerender

__all__ = ["ReproduceResult", "cli", "compare_outputs", "reproduce"]


class ReproduceResult:
    """Counts and lines of a reproduction; ``ok`` when nothing failed or differed."""

    def __init__(self) -> None:
        self.lines: list[str] = []
        self.failed_runs: list[str] = []
        self.differences: list[str] = []
        self.seal_passed: bool | None = None
        self.audit_passed: bool | None = None

    @property
    def ok(self) -> bool:
        return (
            not self.failed_runs
            and not self.differences
            and self.seal_passed is not False
            and self.audit_passed is not False
        )


def compare_outputs(regenerated: Path, committed: Path, stems: Sequence[str]) -> list[str]:
    """Every difference between ``regenerated/<stem>`` and ``committed/<stem>``, naming the file
    (provenance.json is compared without its ``wall_clock`` field)."""
    out: list[str] = []
    for stem in stems:
        if not (committed / stem).is_dir():
            out.append(f"{stem}: no committed outputs in {committed / stem}")
            continue
        out += [f"{stem}/{d}" for d in compare_folders(committed / stem, regenerated / stem)]
    return out


def _is_within(inner: Path, outer: Path) -> bool:
    return inner == outer or outer in inner.parents


def _update_files(regenerated: Path, committed: Path) -> dict[str, bytes]:
    """The regenerated files for ``--update``, keeping a committed file's bytes where it agrees
    with the regenerated one (a provenance.json differing only in ``wall_clock``)."""
    files: dict[str, bytes] = {}
    for path in sorted(regenerated.rglob("*")):
        name = path.relative_to(regenerated).as_posix()
        if not path.is_file() or name == MARKER:
            continue
        data = path.read_bytes()
        kept = committed / name
        if kept.is_file() and same_output(name, kept.read_bytes(), data) is None:
            data = kept.read_bytes()
        files[name] = data
    return files


def _kind(path: Path) -> Any:
    try:
        data = read_config(path)
    except (OSError, ValueError, UnicodeError):
        return None
    return data.get("kind") if isinstance(data, dict) else None


def reproduce(
    out: str | Path,
    *,
    examples: str | Path | None = None,
    update: bool = False,
    force: bool = False,
    run_seal: bool = True,
    runner: Runner | None = None,
    echo: Callable[[str], None] | None = None,
    rerender: Rerender | None = None,
) -> ReproduceResult:
    """Steps 1-4 of the module docstring; ``run_seal=False`` skips step 2 (tests only)."""
    from verdictpack.verify._command import audit_run, format_reports

    res = ReproduceResult()

    def say(line: str) -> None:
        res.lines.append(line)
        if echo is not None:
            echo(line)

    ex = Path(examples) if examples is not None else find_examples()
    configs = example_configs(ex)
    if not configs:
        raise UsageError(
            f"verdictpack reproduce: {ex}: expected example configs (*.json, *.yaml, *.yml)"
        )
    by_stem = {cfg.stem: cfg for cfg in configs}
    committed = ex / "outputs"
    target = check_output_path(out, protect=configs)  # the output folder contract's refusals
    if _is_within(target, committed.resolve()):
        raise UsageError(
            f"--out {out}: expected a folder outside {committed}, the committed outputs"
        )
    if target.exists() and any(target.iterdir()) and not force:
        raise UsageError(
            f"--out {out}: expected a new or empty folder (use --force to replace the run "
            "folders in it that an earlier run wrote)"
        )
    target.mkdir(parents=True, exist_ok=True)
    run = runner or console_runner
    env = dict(os.environ)
    stems: list[str] = []
    say(f"reproduce: {len(configs)} example(s) from {ex} into {target}")
    for cfg in configs:
        stem = cfg.stem
        dest = target / stem
        # an earlier run folder is replaced by the run itself, under the output folder contract
        args: tuple[str, ...] = ("--quiet", "--force") if force else ("--quiet",)
        if _kind(cfg) == "battery":
            args += ("--workers", "2")
        t0 = time.perf_counter()
        proc = run(RunRequest("reproduce", Path.cwd(), cfg.absolute(), dest.absolute(), env, args))
        took = time.perf_counter() - t0
        if proc.returncode != 0:
            tail = " | ".join((proc.stderr or proc.stdout or "").strip().splitlines()[-3:])
            res.failed_runs.append(stem)
            say(f"run {stem}: FAILED (exit {proc.returncode}): {tail}")
            continue
        stems.append(stem)
        say(f"run {stem}: ok ({took:.1f} s)")
    if run_seal:
        say("seal test (clean room and decoy rooms; battery reduced):")
        seal = seal_test(configs, battery="reduced", echo=lambda line: say("  " + line))
        res.seal_passed = seal.passed
        say("seal test: " + ("SEAL TEST PASS" if seal.passed else f"FAIL: {seal.first_failure}"))
    reports = [audit_run(target / s, by_stem[s], rerender) for s in stems]  # configs: hashes too
    res.audit_passed = all(r.passed for r in reports)
    for line in format_reports(reports).rstrip("\n").splitlines():
        say(line)
    if update:
        if res.ok:
            committed.mkdir(exist_ok=True)
            for stem in stems:
                write_outputs(
                    committed / stem,
                    _update_files(target / stem, committed / stem),
                    force=True,
                    label="--update: examples/outputs/",
                )
            say(f"updated {committed} ({len(stems)} folder(s)); review its diff before committing")
        else:
            say(f"not updating {committed}: a run, the seal test or the audit failed")
    else:
        res.differences = compare_outputs(target, committed, stems)
        for d in res.differences:
            say(f"DIFFERS {d}")
        say(
            f"compared {len(stems)} folder(s) with {committed}: {len(res.differences)} "
            "difference(s)"
        )
    say(
        "REPRODUCE "
        + ("PASS" if res.ok else "FAIL")
        + f": runs {len(stems)}/{len(configs)} ok, seal "
        + {None: "skipped", True: "pass", False: "FAIL"}[res.seal_passed]
        + ", audit "
        + {None: "skipped", True: "pass", False: "FAIL"}[res.audit_passed]
        + ("" if update else f", {len(res.differences)} difference(s)")
    )
    return res


def cli(argv: Sequence[str], rerender: Rerender | None = None) -> int:
    """``verdictpack reproduce --out DIR [--update] [--force] [--examples DIR]``; ``rerender``:
    the renderer the command line passes to the audit."""
    p = _ArgumentParser(
        prog="verdictpack reproduce",
        description="Re-run every example, seal-test, audit, compare with examples/outputs/.",
    )
    p.add_argument(
        "--out",
        metavar="DIR",
        help="where the regenerated run folders go (required unless --update)",
    )
    p.add_argument(
        "--update",
        action="store_true",
        help="maintainers: write examples/outputs/ "
        "instead of comparing (only when the seal test and the audit pass)",
    )
    p.add_argument(
        "--force",
        action="store_true",
        help="replace the run folders an earlier run wrote in a non-empty --out",
    )
    p.add_argument(
        "--examples",
        metavar="DIR",
        help="the examples folder (default: the repository's examples/)",
    )
    args = p.parse_args(list(argv))
    if args.out is None and not args.update:
        raise UsageError("verdictpack reproduce: expected --out DIR")
    tmp: str | None = None
    out = args.out
    if out is None:
        tmp = tempfile.mkdtemp(prefix="verdictpack-reproduce-")
        out = tmp
    try:
        result = reproduce(
            out,
            examples=args.examples,
            update=args.update,
            force=args.force,
            echo=lambda line: print(line, flush=True),
            rerender=rerender,
        )
    finally:
        if tmp is not None:
            shutil.rmtree(tmp, ignore_errors=True)
    sys.stdout.flush()
    return 0 if result.ok else 1
