"""The layout tells the architecture: every folder says what it owns, no module grows past 1,200
lines, and the layer rules of pyproject.toml hold (import-linter)."""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

from conftest import ROOT

PACKAGE = ROOT / "src" / "verdictpack"
MAX_LINES = 1200


def _modules() -> list:
    return sorted(p for p in PACKAGE.rglob("*.py") if "__pycache__" not in p.parts)


def test_no_module_above_the_line_limit() -> None:
    long = {
        str(p.relative_to(PACKAGE)): n
        for p in _modules()
        if (n := len(p.read_text(encoding="utf-8").splitlines())) > MAX_LINES
    }
    assert long == {}, f"modules above {MAX_LINES} lines: {long}"


def test_every_subpackage_says_what_it_owns() -> None:
    folders = [p for p in PACKAGE.iterdir() if p.is_dir() and not p.name.startswith("__")]
    assert folders, "no subpackages found"
    for folder in folders:
        init = folder / "__init__.py"
        assert init.is_file(), f"{folder.name}/ has no __init__.py"
        doc = ast.get_docstring(ast.parse(init.read_text(encoding="utf-8")))
        assert doc and "import" in doc, f"{folder.name}/__init__.py: the docstring must say what "
        "the folder owns and what it may import"


def test_no_module_cites_what_a_reader_cannot_open() -> None:
    bad = ("DESIGN-NOTES", "the brief", "issue 8")
    hits = [
        f"{p.relative_to(PACKAGE)}: {word}"
        for p in _modules()
        for word in bad
        if word in p.read_text(encoding="utf-8")
    ]
    assert hits == []


def test_layer_contracts_hold() -> None:
    # import-linter comes with the test extras; its console script sits beside this interpreter
    exe = Path(sys.executable).with_name("lint-imports")
    assert exe.is_file(), "lint-imports not installed: pip install -e '.[test]'"
    done = subprocess.run(
        [str(exe), "--config", str(ROOT / "pyproject.toml")],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-1000:]


def test_every_subpackage_ships() -> None:
    # pyproject.toml lists the packages by hand (the examples are mapped in as a package): a new
    # folder missing from that list would be absent from a plain `pip install .`
    import tomllib

    listed = set(
        tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]["packages"]
    )
    found = {
        ".".join(p.parent.relative_to(PACKAGE.parent).parts)
        for p in PACKAGE.rglob("__init__.py")
        if "__pycache__" not in p.parts
    }
    assert found - listed == set(), (
        f"packages missing from pyproject.toml: {sorted(found - listed)}"
    )
