"""The seal test: ``verdictpack seal-test`` proves the tool reads only the config it is given.

Every example config is run, as the installed console script (the ``verdictpack`` next to
``sys.executable``) in a subprocess, in three rooms:

* ``clean`` — an empty working directory, a minimal environment (PATH, HOME, LANG);
* ``decoy`` — a working directory full of traps, and unrelated environment variables;
* ``decoy-m`` — the same traps, the tool started as ``python -P -m verdictpack``.

The decoys: a same-named, valid but different config (another seed) in the working directory (and
in ``./examples/``),
``./config.json``, decoy outputs where a careless tool might read or write (``./out/verdict.json``,
``./out/results.json``, ``./results.json``, ``./report.md``, ``./provenance.json``,
``./verdict.json``, ``./evidence.jsonl``), decoy Python modules named like the package and its
dependencies (``verdictpack.py``, ``numpy.py``, ``scipy.py``, ``pydantic.py``, ``rfc8785.py``,
``sitecustomize.py``, ``usercustomize.py``) that print a marker, leave a marker file and raise if
imported, and the environment variables ``VERDICTPACK_SEED``, ``VERDICTPACK_CONFIG``,
``VERDICTPACK_OUT``, ``VERDICTPACK_WORKERS``, ``PYTHONHASHSEED`` and ``TZ``.

The real configs are copied into ``inputs/`` beside the working directory and passed by absolute
path; each run writes ``--out out/<stem>`` relative to the working directory. A study's data files
(every ``path`` under its ``data`` block) are copied beside it in ``inputs/`` at the same relative
paths, and the decoy rooms put a *different* valid copy of each (its last record left out) at that
relative path in the working directory: a tool that resolved data paths against the working
directory instead of the config's folder would read the decoy and its outputs would differ.
The seal passes when every run succeeds, no run prints a decoy marker, every output file is
byte-identical to the clean room's (``provenance.json`` compared without its ``wall_clock``
field, which must be its last field), and every decoy is untouched (SHA-256 of every file before
and after; nothing created outside the output folders).

Coverage: the console script and ``python -P -m verdictpack``. Plain ``python -m verdictpack``
puts the working directory first on ``sys.path`` and would import the decoy modules; that is
Python's behaviour, not the tool's, and is outside the seal.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from verdictpack._errors import UsageError
from verdictpack._output import MARKER, check_output_path, marker_difference
from verdictpack.verify._findings import YAML_SUFFIXES, _ArgumentParser, load_config_bytes

__all__ = [
    "DECOY_ENV",
    "DECOY_MARKER",
    "RunRequest",
    "Runner",
    "SealResult",
    "cli",
    "compare_folders",
    "console_runner",
    "console_script",
    "find_examples",
    "python_m_runner",
    "reduced_battery",
    "same_output",
    "seal_test",
    "study_data_paths",
]

WALL_CLOCK = "wall_clock"
DECOY_MARKER = "VERDICTPACK-DECOY"
DECOY_MODULES = (
    "verdictpack",
    "numpy",
    "scipy",
    "pydantic",
    "rfc8785",
    "sitecustomize",
    "usercustomize",
)
DECOY_ENV = {
    "VERDICTPACK_SEED": "1",
    "VERDICTPACK_WORKERS": "2",
    "PYTHONHASHSEED": "123",
    "TZ": "Pacific/Kiritimati",
}
DECOY_OUTPUTS = (
    "results.json",
    "report.md",
    "provenance.json",
    "verdict.json",
    "evidence.jsonl",
    "out/verdict.json",
    "out/results.json",
    "out/report.md",
)


# ----------------------------------------------------------------------------------------------
# Running the tool
# ----------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class RunRequest:
    """One run: the room, its working directory, the config (absolute) and the output folder
    (relative to ``cwd``), the environment and the extra command-line arguments."""

    room: str
    cwd: Path
    config: Path
    out: Path
    env: dict[str, str]
    args: tuple[str, ...] = ()


Runner = Callable[[RunRequest], "subprocess.CompletedProcess[str]"]


def console_script() -> Path:
    """The installed ``verdictpack`` console script next to the running interpreter."""
    script = Path(sys.executable).parent / ("verdictpack.exe" if os.name == "nt" else "verdictpack")
    if not script.exists():
        raise UsageError(
            f"verdictpack seal-test: expected the console script at {script}; not found "
            "(install the package into this environment)"
        )
    return script


def console_runner(req: RunRequest) -> subprocess.CompletedProcess[str]:
    """Run the console script in the room (cwd and environment as given)."""
    cmd = [str(console_script()), str(req.config), "--out", str(req.out), *req.args]
    return subprocess.run(cmd, cwd=req.cwd, env=req.env, capture_output=True, text=True)


def python_m_runner(req: RunRequest) -> subprocess.CompletedProcess[str]:
    """Run ``python -P -m verdictpack`` in the room (-P: no working directory on sys.path)."""
    cmd = [sys.executable, "-P", "-m", "verdictpack", str(req.config), "--out", str(req.out)]
    cmd += list(req.args)
    return subprocess.run(cmd, cwd=req.cwd, env=req.env, capture_output=True, text=True)


# ----------------------------------------------------------------------------------------------
# Comparing outputs
# ----------------------------------------------------------------------------------------------


def _without_wall_clock(data: bytes) -> tuple[bytes, bytes] | None:
    """(bytes before the wall_clock field, canonical JSON with it nulled), or None."""
    key = f'"{WALL_CLOCK}"'.encode()
    try:
        obj = json.loads(data.decode("utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError):
        return None
    if not isinstance(obj, dict) or WALL_CLOCK not in obj or list(obj)[-1] != WALL_CLOCK:
        return None
    obj[WALL_CLOCK] = None
    prefix = data[: data.rfind(key)]
    return prefix, json.dumps(obj, indent=2, ensure_ascii=False).encode("utf-8")


def _short(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 80 else text[:77] + "..."


def _first_difference(a: Any, b: Any, path: str) -> tuple[str, Any, Any]:
    if isinstance(a, dict) and isinstance(b, dict):
        for k in list(a) + [k for k in b if k not in a]:
            if a.get(k, _MISSING) != b.get(k, _MISSING):
                return _first_difference(a.get(k, _MISSING), b.get(k, _MISSING), f"{path}.{k}")
    return path, a, b


class _Missing:
    def __repr__(self) -> str:
        return "(missing)"


_MISSING = _Missing()


def same_output(name: str, a: bytes, b: bytes) -> str | None:
    """None when two output files agree, else the reason (provenance.json: without wall_clock;
    the output folder's marker: without the hash of provenance.json)."""
    if name == MARKER:
        return marker_difference(a, b)
    if Path(name).name == "provenance.json":
        pa, pb = _without_wall_clock(a), _without_wall_clock(b)
        if pa is None or pb is None:
            return None if a == b else "differs (and has no wall_clock as its last field)"
        if pa == pb:
            return None
        ja, jb = json.loads(a), json.loads(b)
        for k in list(ja) + [k for k in jb if k not in ja]:
            if k != WALL_CLOCK and ja.get(k) != jb.get(k):
                path, va, vb = _first_difference(ja.get(k), jb.get(k), repr(k))
                return f"field {path} differs: {_short(va)} vs {_short(vb)}"
        return "bytes outside the wall_clock field differ"
    if a == b:
        return None
    n = min(len(a), len(b))
    at = next((i for i in range(n) if a[i] != b[i]), n)
    line = a[:at].count(b"\n") + 1
    return f"bytes differ from offset {at} (line {line}; sizes {len(a)} vs {len(b)})"


def _files(root: Path) -> list[str]:
    return sorted(str(p.relative_to(root)) for p in root.rglob("*") if p.is_file())


def compare_folders(reference: Path, other: Path) -> list[str]:
    """Every difference between two output folders, one line each, naming the file."""
    if not other.is_dir():
        return [f"{other}: folder missing"]
    if not reference.is_dir():
        return [f"{reference}: folder missing"]
    ra, rb = _files(reference), _files(other)
    out = [f"{name}: only in {reference}" for name in ra if name not in rb]
    out += [f"{name}: only in {other}" for name in rb if name not in ra]
    for name in ra:
        if name in rb:
            why = same_output(name, (reference / name).read_bytes(), (other / name).read_bytes())
            if why is not None:
                out.append(f"{name}: {why}")
    return out


# ----------------------------------------------------------------------------------------------
# Rooms
# ----------------------------------------------------------------------------------------------


EXAMPLES_PACKAGE = "verdictpack._examples"


def _shipped_examples() -> Path | None:
    """The folder of the example configs shipped with the package (``verdictpack._examples``,
    mapped from the repository's examples/ when the package is built), None when not installed."""
    from importlib import resources

    try:
        folder = resources.files(EXAMPLES_PACKAGE)
    except ModuleNotFoundError:
        return None
    if isinstance(folder, Path):
        return folder if example_configs(folder) else None
    # a namespace package (no __init__.py) answers with a view over its folders: take the one on
    # disk that holds the configs
    for child in folder.iterdir():
        if isinstance(child, Path) and child.suffix in CONFIG_SUFFIXES and child.is_file():
            return child.parent
    return None


# the suffixes of a config file: JSON, or YAML (read by the same loader into the same value)
CONFIG_SUFFIXES = (".json", *YAML_SUFFIXES)


def example_configs(folder: Path) -> list[Path]:
    """The config files directly in ``folder`` (``*.json``, ``*.yaml``, ``*.yml``), by name
    (none when ``folder`` is not a folder)."""
    if not folder.is_dir():
        return []
    return sorted(
        (p for p in folder.iterdir() if p.suffix in CONFIG_SUFFIXES and p.is_file()),
        key=lambda p: p.name,
    )


def read_config(path: Path) -> Any:
    """A config file's value (JSON or YAML, by its suffix)."""
    return load_config_bytes(path.read_bytes(), path.name)


def dump_config(data: Any, name: str) -> bytes:
    """A config value written in the syntax its file name says (YAML for ``.yaml`` / ``.yml``)."""
    if name.lower().endswith(YAML_SUFFIXES):
        import yaml

        text = yaml.safe_dump(data, sort_keys=False, allow_unicode=True, width=1000)
        return str(text).encode("utf-8")
    return (json.dumps(data, indent=4) + "\n").encode("utf-8")


def find_examples() -> Path:
    """The example configs: those shipped inside the installed package (any install), else the
    repository's examples/ beside the package source (an editable install that predates the
    shipped copy)."""
    shipped = _shipped_examples()
    if shipped is not None:
        return shipped
    # src/verdictpack/verify/_seal.py -> the repository (not `import verdictpack`: verify
    # imports only the foundations, and the top package imports every layer)
    examples = Path(__file__).resolve().parents[3] / "examples"
    if not examples.is_dir():
        raise UsageError(
            f"expected the example configs shipped in the package ({EXAMPLES_PACKAGE}) or the "
            f"examples folder beside the package source ({examples}); found neither: "
            "pass --examples DIR"
        )
    return examples


def reduced_battery(data: dict[str, Any]) -> dict[str, Any]:
    """A battery config with at most two blocks of replicates (the seal needs identity, not
    precision); other kinds unchanged."""
    if data.get("kind") != "battery" or not isinstance(data.get("replicates"), int):
        return data
    block = data.get("block_size")
    cap = 2 * block if isinstance(block, int) and block > 0 else 1000
    out = {**data, "replicates": min(data["replicates"], cap)}
    grid = data.get("true_h_grid")
    if isinstance(grid, dict) and isinstance(grid.get("replicates"), int):  # one block per point
        out["true_h_grid"] = {**grid, "replicates": min(grid["replicates"], cap // 2)}
    return out


def study_data_paths(data: Any) -> list[str]:
    """The data file paths a study config names (relative to its folder), in config order."""
    if not isinstance(data, dict) or data.get("kind") != "study":
        return []
    block = data.get("data")
    if not isinstance(block, dict):
        return []
    found: list[Any] = []
    for key in ("stimuli", "reader_audit"):
        if isinstance(block.get(key), dict):
            found.append(block[key].get("path"))
    for spec in block.get("judgments") or []:
        if isinstance(spec, dict):
            found.append(spec.get("path"))
    found.append(block.get("root_order"))
    return [p for p in found if isinstance(p, str) and p]


def _decoy_data(raw: bytes) -> bytes:
    """A data file's decoy: the same file without its last non-empty line (still well formed,
    different content)."""
    lines = raw.decode("utf-8", errors="replace").splitlines(keepends=True)
    while lines and not lines[-1].strip():
        lines.pop()
    keep = lines[:-1] if len(lines) > 2 else lines + lines[-1:]
    return "".join(keep).encode("utf-8")


def _decoy_config(data: Any, name: str = "config.json") -> bytes:
    """A same-named, valid config with another seed: a careless tool would run it silently and
    its outputs would differ. Written in the syntax ``name`` says."""
    decoy = dict(data) if isinstance(data, dict) else data
    if isinstance(decoy, dict) and isinstance(decoy.get("seed"), int):
        decoy["seed"] = decoy["seed"] + 1
    return dump_config(decoy, name)


def _decoy_module(name: str) -> str:
    return (
        "import pathlib\n"
        f"pathlib.Path(__file__).with_name('{DECOY_MARKER}-imported-{name}').write_text('x')\n"
        f"print('{DECOY_MARKER}: decoy module {name} imported from the working directory')\n"
        f"raise ImportError('{DECOY_MARKER}: decoy module {name} imported')\n"
    )


def _clean_env(home: Path) -> dict[str, str]:
    path = os.pathsep.join([str(Path(sys.executable).parent), "/usr/local/bin", "/usr/bin", "/bin"])
    return {"PATH": path, "HOME": str(home), "LANG": "C.UTF-8"}


@dataclass
class _Room:
    name: str
    base: Path
    decoys: bool
    runner: Runner

    @property
    def work(self) -> Path:
        return self.base / "work"

    @property
    def inputs(self) -> Path:
        return self.base / "inputs"

    def env(self) -> dict[str, str]:
        env = _clean_env(self.base / "home")
        # matplotlib (report.html's pictures) keeps its font cache in MPLCONFIGDIR, else under
        # HOME: a cache, not an output, so it lives beside the rooms, shared, never inside one
        env["MPLCONFIGDIR"] = str(self.base.parent / "matplotlib-cache")
        if self.decoys:
            env.update(DECOY_ENV)
            env["VERDICTPACK_CONFIG"] = str(self.work / "config.json")
            env["VERDICTPACK_OUT"] = str(self.work / "out")
        return env


def _build_room(
    room: _Room, configs: dict[str, bytes], data_files: dict[str, bytes] | None = None
) -> None:
    room.work.mkdir(parents=True)
    room.inputs.mkdir()
    (room.base / "home").mkdir()
    for name, data in configs.items():
        (room.inputs / name).write_bytes(data)
    for rel, raw in (data_files or {}).items():
        (room.inputs / rel).parent.mkdir(parents=True, exist_ok=True)
        (room.inputs / rel).write_bytes(raw)
    if not room.decoys:
        return
    for rel, raw in (data_files or {}).items():
        (room.work / rel).parent.mkdir(parents=True, exist_ok=True)
        (room.work / rel).write_bytes(_decoy_data(raw))
    (room.work / "examples").mkdir()
    (room.work / "out").mkdir()
    for i, (name, data) in enumerate(configs.items()):
        value = load_config_bytes(data, name)
        decoy = _decoy_config(value, name)
        (room.work / name).write_bytes(decoy)
        (room.work / "examples" / name).write_bytes(decoy)
        if i == 0:
            (room.work / "config.json").write_bytes(_decoy_config(value))
    for rel in DECOY_OUTPUTS:
        (room.work / rel).write_text(f"{DECOY_MARKER}: decoy {rel}; never read or written\n")
    for mod in DECOY_MODULES:
        (room.work / f"{mod}.py").write_text(_decoy_module(mod))


def _hashes(root: Path) -> dict[str, str]:
    return {
        str(p.relative_to(root)): hashlib.sha256(p.read_bytes()).hexdigest()
        for p in sorted(root.rglob("*"))
        if p.is_file()
    }


def _outside_outputs(hashes: dict[str, str], stems: Sequence[str]) -> dict[str, str]:
    prefixes = tuple(str(Path("work") / "out" / s) + os.sep for s in stems)
    return {k: v for k, v in hashes.items() if not k.startswith(prefixes)}


# ----------------------------------------------------------------------------------------------
# The test
# ----------------------------------------------------------------------------------------------


@dataclass
class SealResult:
    """The outcome: ``passed``, the log lines and the first failure (None when passed)."""

    passed: bool
    lines: list[str] = field(default_factory=list)
    first_failure: str | None = None


def seal_test(
    configs: Sequence[str | Path],
    *,
    keep: str | Path | None = None,
    runner: Runner | None = None,
    python_m: bool = True,
    battery: str = "reduced",
    echo: Callable[[str], None] | None = None,
) -> SealResult:
    """Run ``configs`` in the clean and decoy rooms; see the module docstring.

    ``runner`` runs the console script (default :func:`console_runner`); the ``decoy-m`` room
    always uses :func:`python_m_runner` and is skipped with ``python_m=False``. ``battery``:
    ``reduced`` (at most two blocks), ``full`` or ``skip``. ``keep`` keeps the rooms in that
    (new or empty) folder.
    """
    if battery not in ("reduced", "full", "skip"):
        raise UsageError(f"--battery: expected reduced, full or skip; received {battery}")
    result = SealResult(passed=True)

    def say(line: str) -> None:
        result.lines.append(line)
        if echo is not None:
            echo(line)

    def fail(reason: str) -> SealResult:
        if result.first_failure is None:
            result.first_failure = reason
        result.passed = False
        say(f"SEAL TEST FAIL: {reason}")
        return result

    inputs: dict[str, bytes] = {}
    data_files: dict[str, bytes] = {}
    args: dict[str, tuple[str, ...]] = {}
    for cfg in configs:
        path = Path(cfg)
        if not path.is_file():
            raise UsageError(f"verdictpack seal-test: {path}: expected a config file; not found")
        data = read_config(path)
        extra: tuple[str, ...] = ("--quiet",)
        if isinstance(data, dict) and data.get("kind") == "battery":
            if battery == "skip":
                say(f"skip {path.name} (--battery skip)")
                continue
            if battery == "reduced":
                data = reduced_battery(data)
            extra = ("--quiet", "--workers", "2")
            raw = dump_config(data, path.name)
        else:
            raw = path.read_bytes()
        if path.name in inputs:
            raise UsageError(f"verdictpack seal-test: two configs named {path.name}")
        inputs[path.name] = raw
        for rel in study_data_paths(data):
            source = path.parent / rel
            if not source.is_file():
                raise UsageError(
                    f"verdictpack seal-test: {path.name}: expected its data file {rel}; not found"
                )
            if Path(rel).is_absolute() or ".." in Path(rel).parts:
                raise UsageError(
                    f"verdictpack seal-test: {path.name}: expected data paths inside the "
                    f"config's folder; received {rel}"
                )
            data_files[str(Path(rel))] = source.read_bytes()
        args[path.name] = extra
    if not inputs:
        raise UsageError("verdictpack seal-test: expected at least one config")

    if keep is not None:
        base = check_output_path(keep, protect=list(configs), label="--keep")
        if base.exists() and any(base.iterdir()):
            raise UsageError(f"--keep {keep}: expected a new or empty folder")
        base.mkdir(parents=True, exist_ok=True)
        cleanup = False
    else:
        base = Path(tempfile.mkdtemp(prefix="verdictpack-seal-"))
        cleanup = True
    try:
        main_runner = runner or console_runner
        rooms = [
            _Room("clean", base / "clean", False, main_runner),
            _Room("decoy", base / "decoy", True, main_runner),
        ]
        if python_m:
            rooms.append(_Room("decoy-m", base / "decoy-m", True, python_m_runner))
        for room in rooms:
            _build_room(room, inputs, data_files)
        before = {room.name: _hashes(room.base) for room in rooms}
        stems = [Path(name).stem for name in inputs]
        say(
            f"rooms in {base}: "
            + ", ".join(r.name for r in rooms)
            + f"; decoy environment {sorted(DECOY_ENV)} + VERDICTPACK_CONFIG, VERDICTPACK_OUT"
        )
        for name in inputs:
            stem = Path(name).stem
            for room in rooms:
                req = RunRequest(
                    room.name,
                    room.work,
                    room.inputs / name,
                    Path("out") / stem,
                    room.env(),
                    args[name],
                )
                t0 = time.perf_counter()
                proc = room.runner(req)
                took = time.perf_counter() - t0
                if proc.returncode != 0:
                    tail = (proc.stderr or proc.stdout or "").strip().splitlines()[-3:]
                    return fail(f"{room.name}: {name}: exit {proc.returncode}: " + " | ".join(tail))
                if DECOY_MARKER in (proc.stdout or "") + (proc.stderr or ""):
                    return fail(
                        f"{room.name}: {name}: a decoy was imported or read (marker printed)"
                    )
                say(f"ran {name} in {room.name} ({took:.1f} s)")
            for room in rooms[1:]:
                diffs = compare_folders(rooms[0].work / "out" / stem, room.work / "out" / stem)
                if diffs:
                    return fail(f"{room.name} differs from clean: {stem}/{diffs[0]}")
            say(f"{stem}: outputs byte-identical in {', '.join(r.name for r in rooms)}")
        for room in rooms:
            after = _hashes(room.base)
            old = _outside_outputs(before[room.name], stems)
            new = _outside_outputs(after, stems)
            changed = sorted(k for k in old if new.get(k) != old[k])
            created = sorted(k for k in new if k not in old)
            if changed:
                return fail(f"{room.name}: decoy or input touched: {changed[0]}")
            if created:
                return fail(f"{room.name}: file created outside the output folders: {created[0]}")
        say("decoys untouched (SHA-256 before and after); nothing written outside --out")
        say("SEAL TEST PASS")
        return result
    finally:
        if cleanup:
            shutil.rmtree(base, ignore_errors=True)


def cli(argv: Sequence[str]) -> int:
    """``verdictpack seal-test [--keep DIR] [--examples DIR] [--config FILE]... [--battery M]``."""
    p = _ArgumentParser(
        prog="verdictpack seal-test",
        description="Run the example configs in a clean room and in decoy rooms and prove "
        "byte-identical outputs and untouched decoys. Covers the console script and "
        "'python -P -m verdictpack' (plain 'python -m' puts the working directory first on "
        "sys.path and would import the decoy modules).",
    )
    p.add_argument("--keep", metavar="DIR", help="keep the rooms in this new or empty folder")
    p.add_argument(
        "--examples",
        metavar="DIR",
        help="run every *.json, *.yaml and *.yml here (default: the repository's examples/)",
    )
    p.add_argument("--config", action="append", metavar="FILE", help="run only these configs")
    p.add_argument(
        "--battery",
        choices=("reduced", "full", "skip"),
        default="reduced",
        help="battery configs: at most two blocks (default), full, or skipped",
    )
    p.add_argument("--no-python-m", action="store_true", help="skip the python -P -m room")
    args = p.parse_args(list(argv))
    if args.config:
        configs = [Path(c) for c in args.config]
    else:
        folder = Path(args.examples) if args.examples else find_examples()
        configs = example_configs(folder)
    result = seal_test(
        configs, keep=args.keep, python_m=not args.no_python_m, battery=args.battery, echo=print
    )
    return 0 if result.passed else 1
