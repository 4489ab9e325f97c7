"""The output folder contract: marker, refusals, lock, atomic replacement, leftovers, crashes.

Every hazard is tried with ``--force`` through the CLI (in-process) on copies of the sizing
example; each must exit 2 and leave every file byte-identical. Runs that really compute use the
sizing example reduced to 1,000 replicates (the smallest allowed). The crash tests run the CLI
under ``tests/kill_driver.py``, which watches the filesystem calls from outside and SIGKILLs the
run after each one that changes the disk, and check that the old or the new folder is there whole.
"""

from __future__ import annotations

import ctypes
import errno
import fcntl
import hashlib
import json
import os
import re
import shutil
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import EXAMPLES, load_example
from verdictpack import _output
from verdictpack._cli import main, run_config
from verdictpack._errors import OutputError
from verdictpack._output import (
    MARKER,
    marker_bytes,
    read_marker,
)
from verdictpack.render import html_available
from verdictpack.verify._reproduce import reproduce
from verdictpack.verify._seal import compare_folders

SIZING = EXAMPLES / "sizing_summarization.json"
# a sizing run's files: report.md, results.json, provenance.json, and report.html with the
# report extra (matplotlib)
SIZING_FILES = sorted(
    ["provenance.json", "report.md", "results.json", *(["report.html"] if html_available() else [])]
)
OUTPUT_FILES = len(SIZING_FILES)


# ----------------------------------------------------------------------------------------------
# Helpers
# ----------------------------------------------------------------------------------------------


def _snapshot(root: Path) -> dict[str, bytes]:
    """Every entry under ``root`` (dotfiles included): file bytes, symlink targets, folders."""
    out: dict[str, bytes] = {}
    for dirpath, dirnames, filenames in os.walk(root):
        for name in dirnames + filenames:
            path = Path(dirpath) / name
            rel = str(path.relative_to(root))
            if path.is_symlink():
                out[rel] = b"link:" + os.readlink(path).encode()
            elif path.is_dir():
                out[rel] = b"dir"
            else:
                out[rel] = path.read_bytes()
    return out


def _small_config(path: Path, seed: int | None = None) -> Path:
    data = load_example("sizing_summarization.json")
    data["simulation"]["replicates"] = 1000
    if seed is not None:
        data["seed"] = seed
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(data, indent=2))
    return path


def _whole(folder: Path) -> dict[str, str]:
    """The marker's listing of ``folder``, after checking that the folder is exactly what the
    marker says: every listed file there with its hash, nothing else."""
    listing = read_marker((folder / MARKER).read_bytes())
    assert listing is not None, f"{folder}: no valid marker"
    on_disk = {p.relative_to(folder).as_posix() for p in folder.rglob("*") if p.name != MARKER}
    assert on_disk == set(listing), (folder, on_disk, listing)
    for name, digest in listing.items():
        assert hashlib.sha256((folder / name).read_bytes()).hexdigest() == digest, name
    return listing


def _refused(capsys, argv: list[str], roots: list[Path], *words: str) -> str:
    before = [_snapshot(r) for r in roots]
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert "Traceback" not in err
    for word in words:
        assert word in err, err
    assert [_snapshot(r) for r in roots] == before
    return err


@pytest.fixture
def project(tmp_path: Path) -> Path:
    """A user's folder: the config, their notes, a data sub-folder."""
    root = tmp_path / "project"
    root.mkdir()
    shutil.copy(SIZING, root / "cfg.json")
    (root / "notes.txt").write_text("my notes\n")
    (root / "data").mkdir()
    (root / "data" / "raw.csv").write_text("a,b\n1,2\n")
    return root


# ----------------------------------------------------------------------------------------------
# Always refused, --force or not
# ----------------------------------------------------------------------------------------------


@pytest.mark.parametrize("form", ["absolute", "dotdot", "symlinked-parent"])
def test_the_configs_own_folder_is_refused(project: Path, tmp_path: Path, capsys, form) -> None:
    out = {
        "absolute": str(project),
        "dotdot": str(project / "data" / ".."),
        "symlinked-parent": str(tmp_path / "via" / "project"),
    }[form]
    (tmp_path / "via").symlink_to(tmp_path)
    _refused(
        capsys,
        [str(project / "cfg.json"), "--out", out, "--force"],
        [project],
        "holds the config file",
        "even with --force",
    )


def test_a_parent_of_the_config_is_refused(tmp_path: Path, capsys) -> None:
    deep = tmp_path / "a" / "b"
    deep.mkdir(parents=True)
    shutil.copy(SIZING, deep / "cfg.json")
    (tmp_path / "a" / "keep.txt").write_text("x")
    _refused(
        capsys,
        [str(deep / "cfg.json"), "--out", str(tmp_path / "a"), "--force"],
        [tmp_path / "a"],
        "contains the config file",
    )


def test_the_working_directory_and_its_ancestors_are_refused(
    tmp_path: Path, monkeypatch, capsys
) -> None:
    shutil.copy(SIZING, tmp_path / "cfg.json")
    work = tmp_path / "work" / "deep"
    work.mkdir(parents=True)
    (work / "mine.txt").write_text("x")
    monkeypatch.chdir(work)
    for out in (".", str(work)):
        _refused(
            capsys,
            [str(tmp_path / "cfg.json"), "--out", out, "--force"],
            [tmp_path],
            "is the working directory",
        )
    _refused(
        capsys,
        [str(tmp_path / "cfg.json"), "--out", "..", "--force"],
        [tmp_path],
        "ancestor of the working directory",
    )


def test_a_folder_holding_git_is_refused(tmp_path: Path, capsys) -> None:
    shutil.copy(SIZING, tmp_path / "cfg.json")
    repo = tmp_path / "repo"
    (repo / ".git").mkdir(parents=True)
    (repo / ".git" / "HEAD").write_text("ref: refs/heads/main\n")
    (repo / "code.py").write_text("print(1)\n")
    _refused(
        capsys,
        [str(tmp_path / "cfg.json"), "--out", str(repo), "--force"],
        [tmp_path],
        "holds .git",
    )


def test_a_symlink_is_refused_even_to_a_verdictpack_folder(tmp_path: Path, capsys) -> None:
    cfg = _small_config(tmp_path / "cfg.json")
    real = tmp_path / "real"
    assert main([str(cfg), "--out", str(real), "--quiet"]) == 0
    (tmp_path / "link").symlink_to(real)
    for out in (tmp_path / "link", f"{tmp_path / 'link'}/"):
        _refused(capsys, [str(cfg), "--out", str(out), "--force"], [tmp_path], "symbolic link")


def test_a_file_is_refused_and_the_hint_names_a_folder_that_can_be_made(
    project: Path, capsys
) -> None:
    notes = project / "notes.txt"
    err = _refused(
        capsys,
        [str(project / "cfg.json"), "--out", str(notes), "--force"],
        [project],
        "exists and is not a folder",
    )
    # a folder inside a file cannot be made: the hint names one beside it
    assert f"a new folder beside it such as {notes.with_name('notes.txt-out')}" in err
    assert str(notes / "out") not in err


def test_the_home_folder_and_root_are_refused(tmp_path: Path, monkeypatch, capsys) -> None:
    shutil.copy(SIZING, tmp_path / "cfg.json")
    home = tmp_path / "home"
    home.mkdir()
    (home / ".bashrc").write_text("x")
    monkeypatch.setenv("HOME", str(home))
    cfg = str(tmp_path / "cfg.json")
    _refused(capsys, [cfg, "--out", str(home), "--force"], [tmp_path], "is the home folder")
    _refused(capsys, [cfg, "--out", "/", "--force"], [tmp_path], "root folder")


# ----------------------------------------------------------------------------------------------
# --force replaces only what verdictpack wrote
# ----------------------------------------------------------------------------------------------


def test_a_foreign_non_empty_folder_is_refused(project: Path, capsys) -> None:
    err = _refused(
        capsys,
        [str(project / "cfg.json"), "--out", str(project / "data"), "--force"],
        [project],
        "did not write it",
        "move its files away",
    )
    assert MARKER in err


def test_a_verdictpack_folder_with_an_added_or_edited_file_is_refused(
    tmp_path: Path, capsys
) -> None:
    cfg = _small_config(tmp_path / "cfg.json")
    out = tmp_path / "out"
    assert main([str(cfg), "--out", str(out), "--quiet"]) == 0
    (out / "notes.txt").write_text("my reading of the results\n")
    _refused(capsys, [str(cfg), "--out", str(out), "--force"], [tmp_path], "notes.txt")
    (out / "notes.txt").unlink()
    (out / "report.md").write_text("edited by hand\n")
    _refused(capsys, [str(cfg), "--out", str(out), "--force"], [tmp_path], "changed since")


def test_an_invalid_marker_is_refused(tmp_path: Path, capsys) -> None:
    cfg = _small_config(tmp_path / "cfg.json")
    out = tmp_path / "out"
    out.mkdir()
    (out / MARKER).write_text('{"written_by": "verdictpack", "format": 2, "files": {}}')
    _refused(capsys, [str(cfg), "--out", str(out), "--force"], [tmp_path], "not a valid")


def test_a_verdictpack_folder_is_replaced_with_force(tmp_path: Path, capsys) -> None:
    cfg = _small_config(tmp_path / "cfg.json", seed=1)
    out = tmp_path / "out"
    assert main([str(cfg), "--out", str(out), "--quiet"]) == 0
    first = _whole(out)
    assert sorted(first) == SIZING_FILES
    old_results = (out / "results.json").read_bytes()
    _refused(capsys, [str(cfg), "--out", str(out)], [tmp_path], "use --force")
    _small_config(cfg, seed=2)
    assert main([str(cfg), "--out", str(out), "--force", "--quiet"]) == 0
    second = _whole(out)
    assert second["results.json"] != first["results.json"]
    assert (out / "results.json").read_bytes() != old_results
    assert sorted(p.name for p in tmp_path.iterdir()) == ["cfg.json", "out"]  # nothing left


def test_the_marker_is_deterministic_and_sorted() -> None:
    data = marker_bytes({"b.txt": b"2", "a/c.txt": b"1"})
    doc = json.loads(data)
    assert list(doc) == ["files", "format", "written_by"]
    assert list(doc["files"]) == ["a/c.txt", "b.txt"]
    assert doc["files"]["b.txt"] == hashlib.sha256(b"2").hexdigest()
    assert data == marker_bytes({"a/c.txt": b"1", "b.txt": b"2"})
    assert read_marker(data) == doc["files"]
    assert read_marker(data.replace(b"verdictpack", b"someone")) is None


def test_the_committed_example_outputs_carry_their_marker(tmp_path: Path) -> None:
    for folder in sorted((EXAMPLES / "outputs").iterdir()):
        _whole(folder)
    # and a fresh run writes the same folder, marker included
    out = tmp_path / "sizing"
    run_config(str(SIZING), str(out))
    assert compare_folders(EXAMPLES / "outputs" / "sizing_summarization", out) == []


# ----------------------------------------------------------------------------------------------
# When the checks run
# ----------------------------------------------------------------------------------------------


class _Spy:
    """A layer whose run records calls, and optionally does something meanwhile."""

    def __init__(self, real, during=None) -> None:
        self.real, self.during, self.calls = real, during, 0
        self.model, self.rules = real.model, real.rules

    def run(self, *args):
        self.calls += 1
        if self.during is not None:
            self.during()
        return self.real.run(*args)


def test_a_refused_folder_costs_no_computation(project: Path, monkeypatch, capsys) -> None:
    from verdictpack import _cli

    spy = _Spy(_cli.load_layer("sizing"))
    monkeypatch.setattr(_cli, "load_layer", lambda kind: spy)
    _refused(capsys, [str(project / "cfg.json"), "--out", str(project), "--force"], [project])
    _refused(capsys, [str(project / "cfg.json"), "--out", str(project / "data")], [project])
    assert spy.calls == 0


def test_a_file_added_during_the_run_is_found_before_the_move(
    tmp_path: Path, monkeypatch, capsys
) -> None:
    from verdictpack import _cli

    cfg = _small_config(tmp_path / "cfg.json")
    out = tmp_path / "out"
    assert main([str(cfg), "--out", str(out), "--quiet"]) == 0
    before = _snapshot(out)
    spy = _Spy(_cli.load_layer("sizing"), lambda: (out / "late.txt").write_text("mine"))
    monkeypatch.setattr(_cli, "load_layer", lambda kind: spy)
    assert main([str(cfg), "--out", str(out), "--force", "--quiet"]) == 2
    assert "late.txt" in capsys.readouterr().err
    assert _snapshot(out) == {**before, "late.txt": b"mine"}
    assert sorted(p.name for p in tmp_path.iterdir()) == ["cfg.json", "out"]


def test_a_file_added_just_before_the_exchange_undoes_it(
    tmp_path: Path, monkeypatch, capsys
) -> None:
    cfg = _small_config(tmp_path / "cfg.json")
    out = tmp_path / "out"
    assert main([str(cfg), "--out", str(out), "--quiet"]) == 0
    before = _snapshot(out)
    real = _output._exchange
    calls: list[int] = []

    def racing(a: Path, b: Path) -> bool:
        if not calls:
            (out / "late.txt").write_text("mine")
        calls.append(1)
        return real(a, b)

    monkeypatch.setattr(_output, "_exchange", racing)
    assert main([str(cfg), "--out", str(out), "--force", "--quiet"]) == 2
    assert "swap, which was undone" in capsys.readouterr().err
    assert len(calls) == 2  # the exchange, and the exchange back
    assert _snapshot(out) == {**before, "late.txt": b"mine"}
    assert sorted(p.name for p in tmp_path.iterdir()) == ["cfg.json", "out"]


# ----------------------------------------------------------------------------------------------
# The lock, renameat2's fallbacks, leftovers
# ----------------------------------------------------------------------------------------------


def test_a_held_lock_refuses_the_second_run(tmp_path: Path, capsys) -> None:
    cfg = _small_config(tmp_path / "cfg.json")
    out = tmp_path / "out"
    assert main([str(cfg), "--out", str(out), "--quiet"]) == 0
    lock = tmp_path / ".out.verdictpack.lock"  # beside the folder: held below, it refuses runs
    assert not lock.exists()  # removed after use
    fd = os.open(lock, os.O_RDWR | os.O_CREAT)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        _refused(
            capsys,
            [str(cfg), "--out", str(out), "--force", "--quiet"],
            [tmp_path],
            "another verdictpack run is writing",
        )
        _refused(capsys, [str(cfg), "--out", str(out) + "/", "--force"], [tmp_path], "lock")
    finally:
        os.close(fd)
    assert main([str(cfg), "--out", str(out), "--force", "--quiet"]) == 0
    assert sorted(p.name for p in tmp_path.iterdir()) == ["cfg.json", "out"]


def _fake_renameat2(code: int):
    def fn(*args) -> int:
        ctypes.set_errno(code)
        return -1

    return fn


@pytest.mark.parametrize("code", [errno.ENOSYS, errno.EINVAL])
def test_no_exchange_falls_back_to_two_renames(tmp_path: Path, monkeypatch, code) -> None:
    cfg = _small_config(tmp_path / "cfg.json", seed=1)
    out = tmp_path / "out"
    assert main([str(cfg), "--out", str(out), "--quiet"]) == 0
    monkeypatch.setattr(_output, "_libc_renameat2", lambda: _fake_renameat2(code))
    _small_config(cfg, seed=2)
    assert main([str(cfg), "--out", str(out), "--force", "--quiet"]) == 0
    assert json.loads((out / "results.json").read_text())["seed"] == 2
    _whole(out)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["cfg.json", "out"]


def test_another_exchange_error_is_refused_and_changes_nothing(
    tmp_path: Path, monkeypatch, capsys
) -> None:
    cfg = _small_config(tmp_path / "cfg.json")
    out = tmp_path / "out"
    assert main([str(cfg), "--out", str(out), "--quiet"]) == 0
    monkeypatch.setattr(_output, "_libc_renameat2", lambda: _fake_renameat2(errno.EACCES))
    _refused(capsys, [str(cfg), "--out", str(out), "--force", "--quiet"], [tmp_path], "denied")


def test_leftovers_of_ours_are_cleaned_and_others_never_touched(tmp_path: Path) -> None:
    cfg = _small_config(tmp_path / "cfg.json")
    out = tmp_path / "out"
    assert main([str(cfg), "--out", str(out), "--quiet"]) == 0
    ours_tmp = tmp_path / ".out.tmp-0123abcd"  # a killed write: marker and a partial file
    ours_tmp.mkdir()
    (ours_tmp / MARKER).write_bytes(marker_bytes({"report.md": b"full text", "sub/x.json": b"1"}))
    (ours_tmp / "report.md").write_bytes(b"full")
    (ours_tmp / "sub").mkdir()
    cut_short = tmp_path / ".out.old-4567cdef"  # only a marker cut short
    cut_short.mkdir()
    (cut_short / MARKER).write_bytes(b'{"files": {"rep')
    theirs = tmp_path / ".out.tmp-89abcdef"  # no marker: not ours
    theirs.mkdir()
    (theirs / "data.csv").write_text("1\n")
    mixed = tmp_path / ".out.old-fedcba98"  # a marker, but a file it does not list
    mixed.mkdir()
    (mixed / MARKER).write_bytes(marker_bytes({"report.md": b"x"}))
    (mixed / "notes.txt").write_text("mine")
    other_name = tmp_path / ".output.tmp-0123abcd"  # another DIR's leftover
    shutil.copytree(ours_tmp, other_name)
    keep = {p: _snapshot(p) for p in (theirs, mixed, other_name)}
    assert main([str(cfg), "--out", str(out), "--force", "--quiet"]) == 0
    assert not ours_tmp.exists() and not cut_short.exists()
    assert {p: _snapshot(p) for p in keep} == keep
    _whole(out)


# ----------------------------------------------------------------------------------------------
# SIGKILL at every filesystem call (tests/kill_driver.py: the calls watched from outside)
# ----------------------------------------------------------------------------------------------

DRIVER = Path(__file__).parent / "kill_driver.py"
# scenario: (an earlier folder to replace, the exchange refused as a kernel without it would)
SCENARIOS = {"exchange": (True, False), "fallback": (True, True), "fresh": (False, False)}


def _prepared(case: Path, template: Path, scenario: str, kill: int) -> dict:
    """A case folder: the config (seed 2) and, but for a fresh start, ``out`` written earlier
    with seed 1 (a copy of the template's); the driver's case for it."""
    earlier, no_exchange = SCENARIOS[scenario]
    if earlier:
        shutil.copytree(template, case, symlinks=True)
    else:
        case.mkdir()
        shutil.copy(template / "cfg.json", case / "cfg.json")
    trace = case.parent / f"{case.name}.trace"
    return {
        "cwd": str(case),
        "args": ["cfg.json", "--out", "out", "--force", "--quiet"],
        "watch": [f"{case}/*"],
        "kill": kill,
        "trace": str(trace) if kill == 0 else None,
        "no_exchange": no_exchange,
    }


def _drive(cases: list[dict], *flags: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, str(DRIVER), *flags],
        input=json.dumps(cases),
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )


@pytest.fixture(scope="module")
def clean_runs(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path, dict[str, list]]:
    """The template (an earlier folder, seed 1, and the config, seed 2) and each scenario's
    clean run traced: the filesystem calls that change the disk, in order."""
    root = tmp_path_factory.mktemp("kills")
    template = root / "template"
    cfg = _small_config(template / "cfg.json", seed=1)
    assert main([str(cfg), "--out", str(template / "out"), "--quiet"]) == 0
    _small_config(cfg, seed=2)
    cases = [_prepared(root / f"clean-{name}", template, name, kill=0) for name in SCENARIOS]
    done = _drive(cases)
    assert done.returncode == 0 and json.loads(done.stdout) == [0, 0, 0], done.stderr
    traces = {  # temporary names (random hex digits) made alike
        name: [
            tuple(re.sub(r"-[0-9a-f]{8}", "-*", part) for part in json.loads(line))
            for line in Path(c["trace"]).read_text().splitlines()
        ]
        for name, c in zip(SCENARIOS, cases, strict=True)
    }
    return root, template, traces


def _after_the_kill(case: Path, before: dict[str, bytes], where: str, capsys) -> str:
    """The old or the new folder is there whole ("old", "new"; "apart": the old one whole
    beside a missing DIR, put back by the next run); the next run cleans up and succeeds."""
    cfg, out = case / "cfg.json", case / "out"
    if not out.exists() and before:
        (old_copy,) = case.glob(".out.old-*")
        assert _snapshot(old_copy) == before, where
        # the next run puts it back first (and then refuses: no --force)
        assert main([str(cfg), "--out", str(out), "--quiet"]) == 2, where
        assert _snapshot(out) == before, where
        capsys.readouterr()
        state = "apart"
    elif not out.exists() or (before and _snapshot(out) == before):
        state = "old"
    else:
        assert sorted(_whole(out)) == SIZING_FILES, where
        assert json.loads((out / "results.json").read_text())["seed"] == 2, where  # the new one
        state = "new"
    assert main([str(cfg), "--out", str(out), "--force", "--quiet"]) == 0, where
    _whole(out)
    assert json.loads((out / "results.json").read_text())["seed"] == 2, where
    assert sorted(p.name for p in case.iterdir()) == ["cfg.json", "out"], where
    return state


def test_sigkill_at_every_filesystem_call_leaves_the_old_or_the_new_folder_whole(
    clean_runs: tuple[Path, Path, dict[str, list]], capsys
) -> None:
    """Killed after each call that changes the disk (a write: half-way), in each scenario: the
    old folder until the swap, the new one from then on, never neither."""
    root, template, traces = clean_runs
    before = _snapshot(template / "out")
    # the fallback makes the exchange's calls up to the swap: it is killed from there on
    swap = [call for call, _ in traces["exchange"]].index("renameat2")
    assert traces["fallback"][:swap] == traces["exchange"][:swap]
    assert "renameat2" not in {call for call, _ in traces["fallback"]}
    first = {"exchange": 1, "fallback": swap + 1, "fresh": 1}
    cases, where = [], []
    for name in SCENARIOS:
        for k in range(first[name], len(traces[name]) + 1):
            cases.append(_prepared(root / f"{name}-{k:02d}", template, name, kill=k))
            where.append(f"{name}: killed after call {k}, {traces[name][k - 1]}")
    done = _drive(cases)
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout) == [-signal.SIGKILL] * len(cases), where
    states: dict[str, str] = dict.fromkeys(SCENARIOS, "")
    for case, w in zip(cases, where, strict=True):
        scenario = w.split(":")[0]
        kept = _after_the_kill(
            Path(case["cwd"]), before if SCENARIOS[scenario][0] else {}, w, capsys
        )
        states[scenario] += kept[0]
    assert re.fullmatch("o+n+", states["exchange"]), states
    assert re.fullmatch("an+", states["fallback"]), states  # from the first rename on
    assert re.fullmatch("o+n+", states["fresh"]), states


@pytest.mark.parametrize(
    ("scenario", "call", "nth"),
    [("fallback", "rename", 1), ("exchange", "renameat2", 1), ("exchange", "unlink", 2)],
)
def test_sigkill_of_python_dash_m_verdictpack(
    clean_runs: tuple[Path, Path, dict[str, list]], capsys, scenario: str, call: str, nth: int
) -> None:
    """The console entry point (``python -m verdictpack``), killed between the fallback's two
    renames, right after the exchange, and while the old folder is deleted."""
    root, template, traces = clean_runs
    calls = [c for c, _ in traces[scenario]]
    k = [i for i, c in enumerate(calls, 1) if c == call][nth - 1]
    case = _prepared(root / f"module-{scenario}-{call}-{nth}", template, scenario, kill=k)
    done = _drive([case], "--module")
    assert done.returncode == -signal.SIGKILL, done.stderr
    before = _snapshot(template / "out")
    state = _after_the_kill(Path(case["cwd"]), before, f"{scenario} {call} {nth}", capsys)
    assert state == {"rename": "apart", "renameat2": "new", "unlink": "new"}[call]


# ----------------------------------------------------------------------------------------------
# reproduce --out / --update and seal-test --keep use the same checks
# ----------------------------------------------------------------------------------------------


def test_reproduce_and_seal_refuse_hazardous_folders(tmp_path: Path, monkeypatch, capsys) -> None:
    repo = tmp_path / "repo"
    (repo / ".git").mkdir(parents=True)
    monkeypatch.chdir(tmp_path)
    _refused(
        capsys,
        ["reproduce", "--out", str(repo), "--force", "--examples", str(EXAMPLES)],
        [tmp_path],
        "holds .git",
    )
    _refused(
        capsys,
        ["reproduce", "--out", ".", "--force", "--examples", str(EXAMPLES)],
        [tmp_path],
        "working directory",
    )
    (tmp_path / "link").symlink_to(repo)
    _refused(
        capsys,
        ["seal-test", "--keep", str(tmp_path / "link"), "--config", str(SIZING)],
        [tmp_path],
        "symbolic link",
    )


def test_update_writes_through_the_same_mechanism(tmp_path: Path) -> None:
    examples = tmp_path / "examples"
    cfg = _small_config(examples / "sizing_small.json")
    committed = examples / "outputs" / "sizing_small"
    assert main([str(cfg), "--out", str(committed), "--quiet"]) == 0
    before = _snapshot(committed)
    res = reproduce(tmp_path / "out", examples=examples, update=True, run_seal=False)
    assert res.ok, res.lines
    # same numbers: every committed byte kept (provenance.json differs only in wall_clock)
    assert _snapshot(committed) == before
    (committed / "notes.txt").write_text("mine")
    with pytest.raises(OutputError, match=r"notes\.txt"):
        reproduce(tmp_path / "out2", examples=examples, update=True, run_seal=False)
    assert _snapshot(committed) == {**before, "notes.txt": b"mine"}
