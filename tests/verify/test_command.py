"""The self-audit's command (verify/_command.py): exit codes, --config arguments, and the
independence of the audit: it imports only the foundations, never the code it checks."""

from __future__ import annotations

import ast
from collections.abc import Callable
from pathlib import Path

import pytest
from audit_runs import config_of, copy_run, edit_json, runs

import verdictpack.verify
from verdictpack._cli import main

__all__ = ["copy_run", "runs"]  # the fixtures, imported by name

# the foundations: the only package modules verify/ may import (besides its own)
_FOUNDATIONS = {
    "verdictpack._errors",
    "verdictpack._rng",
    "verdictpack._results",
    "verdictpack._parallel",
    "verdictpack._output",
    "verdictpack._cells",
}
_AUDIT_MODULES = (
    "_command",
    "_engine_costs",
    "_engine_human",
    "_findings",
    "_inputs",
    "_kappa_bound",
    "_kinds",
    "_kinds_designs",
    "_kinds_engine",
    "_kinds_grid",
    "_kinds_oc",
    "_kinds_study",
    "_ledger_audit",
    "_provenance_checks",
    "_rederive",
    "_sprt_exact",
    "_study_blocks",
    "_study_judges",
    "_study_tables",
    "_worlds",
)


def _imports(path: Path) -> set[str]:
    imported = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.ImportFrom) and node.module:
            imported.add(node.module)
        elif isinstance(node, ast.Import):
            imported.update(alias.name for alias in node.names)
    return imported


def test_the_audit_does_not_import_the_modules_it_checks() -> None:
    folder = Path(verdictpack.verify.__file__).parent
    others = ("__init__", "_seal", "_reproduce")  # not audit modules
    audit = sorted(p.stem for p in folder.glob("*.py") if p.stem not in others)
    assert audit == sorted(_AUDIT_MODULES)  # a new audit module is listed, so it is read below
    own = {f"verdictpack.verify.{m}" for m in _AUDIT_MODULES} | {"verdictpack.verify"}
    for stem in _AUDIT_MODULES:
        imported = _imports(folder / f"{stem}.py")
        package = {m for m in imported if m.startswith("verdictpack")}
        # the exception tree, and the CSV cell rule (a file format's quoting, not a computation:
        # the audit must read the cells as they were written)
        assert package - own <= {"verdictpack._errors", "verdictpack._cells"}, stem
        assert "scipy.stats" not in imported, stem
    for path in sorted(folder.glob("*.py")):  # all of verify/: foundations and itself only
        package = {m for m in _imports(path) if m.startswith("verdictpack")}
        others = {m for m in package if not m.startswith("verdictpack.verify")}
        assert others <= _FOUNDATIONS, path


def test_audit_config_arguments_are_checked(
    runs: dict[str, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    both = [str(runs["sizing"]), str(runs["verdict"])]
    configs = [str(config_of(runs, "sizing")), str(config_of(runs, "verdict"))]
    # two folders, each matched to its config by the config_name in its provenance
    argv = ["audit", *both, "--config", configs[1], "--config", configs[0]]
    assert main(argv) == 0
    assert "UNVERIFIED provenance.json $.config_sha256," not in capsys.readouterr().out
    assert main(["audit", *both, "--config", str(tmp_path / "missing.json")]) == 2
    assert "expected a config file; not found" in capsys.readouterr().err
    stray = tmp_path / "judges.json"
    stray.write_text("{}")
    assert main(["audit", *both, "--config", str(stray)]) == 2
    assert "no folder's provenance.json names config_name 'judges.json'" in capsys.readouterr().err


def test_cli_exit_codes(
    runs: dict[str, Path],
    copy_run: Callable[[str], Path],
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    assert main(["audit", str(runs["sizing"])]) == 0
    assert "AUDIT PASS" in capsys.readouterr().out
    run = copy_run("sizing")
    edit_json(
        run / "results.json", lambda d: d["arms"][0]["sizes"][0]["n"].__setitem__("value", 32)
    )
    assert main(["audit", str(runs["sizing"]), str(run)]) == 1
    out = capsys.readouterr().out
    assert "AUDIT FAIL" in out and "$.arms[0].sizes[0].n" in out
    assert main(["audit", str(tmp_path / "missing")]) == 2
    assert main(["audit"]) == 2
    # a folder verdictpack never wrote is refused as such; one missing only results.json fails
    (tmp_path / "mine").mkdir()
    (tmp_path / "mine" / "notes.txt").write_text("x")
    capsys.readouterr()
    assert main(["audit", str(tmp_path / "mine")]) == 2
    assert "no results.json, .verdictpack-output.json or .verdictpack-live.json" in (
        capsys.readouterr().err
    )
    (run / "results.json").unlink()
    assert main(["audit", str(run)]) == 1
