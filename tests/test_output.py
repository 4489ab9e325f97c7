"""The output folder contract: marker, refusals, lock, atomic replacement, leftovers, crashes.

Every hazard is tried with ``--force`` through the CLI (in-process) on copies of the sizing
example; each must exit 2 and leave every file byte-identical. Runs that really compute use the
sizing example reduced to 1,000 replicates (the smallest allowed). The crash test runs
``python -m verdictpack`` in subprocesses that SIGKILL themselves at every named step
(``VERDICTPACK_TEST_CRASH_AT``) and checks that the old or the new folder is there whole.
"""

from __future__ import annotations

import ctypes
import errno
import fcntl
import hashlib
import json
import os
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
    CRASH_ENV,
    MARKER,
    NO_EXCHANGE_ENV,
    crash_steps,
    lock_path,
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
    lock = lock_path(out)
    assert lock == tmp_path / ".out.verdictpack.lock" and not lock.exists()  # removed after use
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
# SIGKILL at every step
# ----------------------------------------------------------------------------------------------


def _case(root: Path, *, old: bool) -> tuple[Path, Path, dict[str, bytes]]:
    """A case folder: the config (seed 2), and ``out`` written earlier with seed 1."""
    cfg = _small_config(root / "cfg.json", seed=1)
    out = root / "out"
    if old:
        assert main([str(cfg), "--out", str(out), "--quiet"]) == 0
    before = _snapshot(out) if old else {}
    _small_config(cfg, seed=2)
    return cfg, out, before


# One driver process imports verdictpack once and forks a child per case, which runs the CLI's
# main() with the crash hook set and SIGKILLs itself at its step (a fresh `python -m verdictpack`
# per step would cost a second of imports each; a few of those run in the test after this one).
_DRIVER = f"""
import json, os, sys
from verdictpack._cli import main, run_config
cases = json.loads(sys.stdin.read())
run_config(os.path.join(cases[0][0], "cfg.json"))  # imports every module before the forks
codes = []
for cwd, step, exchange in cases:
    pid = os.fork()
    if pid == 0:
        os.chdir(cwd)
        os.environ[{CRASH_ENV!r}] = step
        os.environ.pop({NO_EXCHANGE_ENV!r}, None)
        if not exchange:
            os.environ[{NO_EXCHANGE_ENV!r}] = "1"
        os._exit(main(["cfg.json", "--out", "out", "--force", "--quiet"]))
    _, status = os.waitpid(pid, 0)
    codes.append(-os.WTERMSIG(status) if os.WIFSIGNALED(status) else os.WEXITSTATUS(status))
print(json.dumps(codes))
"""


def _killed_console_run(cfg: Path, step: str, exchange: bool) -> int:
    env = {**os.environ, CRASH_ENV: step}
    env.pop(NO_EXCHANGE_ENV, None)
    if not exchange:
        env[NO_EXCHANGE_ENV] = "1"
    cmd = [sys.executable, "-m", "verdictpack", "cfg.json", "--out", "out", "--force", "--quiet"]
    proc = subprocess.run(
        cmd, cwd=cfg.parent, env=env, capture_output=True, text=True, timeout=120, check=False
    )
    return proc.returncode


def _after_the_kill(step: str, exch: bool, cfg: Path, out: Path, before: dict, capsys) -> None:
    """The old or the new folder is there whole; the next run cleans up and succeeds."""
    where = f"step {step} (exchange={exch}, earlier folder={bool(before)})"
    order = crash_steps(OUTPUT_FILES, OUTPUT_FILES if before else 0, exchange=exch)
    if step == "between-renames":
        assert not out.exists(), where
        (old_copy,) = cfg.parent.glob(".out.old-*")
        assert _snapshot(old_copy) == before, where  # the old one, whole, beside DIR
        # the next run puts it back first (and then refuses: no --force)
        assert main([str(cfg), "--out", str(out), "--quiet"]) == 2
        assert _snapshot(out) == before, where
        capsys.readouterr()
    elif order.index(step) >= order.index("after-swap"):
        assert sorted(_whole(out)) == SIZING_FILES, where
        assert json.loads((out / "results.json").read_text())["seed"] == 2, where  # the new one
    elif before:
        assert _snapshot(out) == before, where  # the old one, untouched
    else:
        assert not out.exists(), where
    assert main([str(cfg), "--out", str(out), "--force", "--quiet"]) == 0, where
    _whole(out)
    assert json.loads((out / "results.json").read_text())["seed"] == 2, where
    assert sorted(p.name for p in cfg.parent.iterdir()) == ["cfg.json", "out"], where


def test_sigkill_at_every_step_leaves_the_old_or_the_new_folder_whole(
    tmp_path: Path, capsys
) -> None:
    exchange = crash_steps(OUTPUT_FILES, OUTPUT_FILES, exchange=True)
    fallback = crash_steps(OUTPUT_FILES, OUTPUT_FILES, exchange=False)
    fallback = fallback[fallback.index("before-swap") :]  # the steps before it are the same code
    fresh = crash_steps(OUTPUT_FILES, 0)[: crash_steps(OUTPUT_FILES, 0).index("after-swap") + 1]
    cases = [(s, True, True) for s in exchange] + [(s, False, True) for s in fallback]
    cases += [(s, True, False) for s in fresh]  # no earlier folder
    prepared = []
    for i, (step, exch, old) in enumerate(cases):
        cfg, out, before = _case(tmp_path / f"{i:02d}-{step}-{exch}", old=old)
        prepared.append((step, exch, cfg, out, before))
    proc = subprocess.run(
        [sys.executable, "-c", _DRIVER],
        input=json.dumps([[str(c[2].parent), c[0], c[1]] for c in prepared]),
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert proc.returncode == 0, proc.stderr
    codes = json.loads(proc.stdout)
    assert codes == [-signal.SIGKILL] * len(prepared), list(zip(cases, codes, strict=True))
    for step, exch, cfg, out, before in prepared:
        _after_the_kill(step, exch, cfg, out, before, capsys)


@pytest.mark.parametrize(
    ("step", "exchange"),
    [("between-renames", False), ("after-swap", True), ("cleanup-removed-2", True)],
)
def test_sigkill_of_python_dash_m_verdictpack(tmp_path: Path, capsys, step, exchange) -> None:
    cfg, out, before = _case(tmp_path, old=True)
    assert _killed_console_run(cfg, step, exchange) == -signal.SIGKILL
    _after_the_kill(step, exchange, cfg, out, before, capsys)


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
