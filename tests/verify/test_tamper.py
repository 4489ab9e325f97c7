"""The self-audit cannot be fooled by an edited copy of an output folder.

The audit runs as the command line runs it (report.md rendered again from results.json and
compared byte for byte). On one fresh run of each kind (the reduced example runs of
``audit_runs``, and a study over a copy of the summarization study's data with a shorter
planning horizon) the audit passes untouched, with the config, and fails on each edit of the
matrix below. Where a forger could also rewrite the folder's marker (its hashes are not keyed),
the edit is made with the marker re-sealed, so the finding named is the content check's, not
the marker's:

=============================  ==========  ==========================================
edit                           marker      the failing finding
=============================  ==========  ==========================================
a report.md table cell         re-sealed   report.md line N (rendered again from
                                           results.json, byte for byte)
a results.json number          re-sealed   results.json (the number re-derived)
the construct renamed          re-sealed   results.json $.construct.name (with the
throughout the folder                      config: the echoed input)
provenance.json's wall clock   kept        provenance.json (its SHA-256 in the marker)
a file added                   kept        the marker (an unlisted file)
report.md removed              kept        the marker (a listed file missing)
=============================  ==========  ==========================================
"""

from __future__ import annotations

import json
import re
import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from audit_runs import KINDS, config_of, edit_json, runs

from conftest import EXAMPLES
from verdictpack._cli import rerender
from verdictpack._output import MARKER, marker_bytes
from verdictpack.verify import AuditReport
from verdictpack.verify import audit_run as audit_alone

__all__ = ["runs"]  # the fixture, imported by name

ALL_KINDS = (*KINDS, "study")

# kind -> a headline number of results.json that the audit re-derives
HEADLINE: dict[str, tuple[str | int, ...]] = {
    "sizing": ("arms", 0, "sizes", 0, "power_at_n", "value"),
    "verdict": ("fixed_n_roots",),
    "judges": ("construct", "p1_at_threshold"),
    "engine": ("registered", "h_interval", 0),
    "battery": ("fixed_n_roots",),
    "study": ("registered", "h_interval", 0),
}


@pytest.fixture(scope="module")
def made(
    runs: dict[str, Path], tmp_path_factory: pytest.TempPathFactory
) -> dict[str, tuple[Path, Path]]:
    """kind -> (its run, its config); the study runs here over a copy of the example's data."""
    from verdictpack._cli import run_config

    base = tmp_path_factory.mktemp("tamper-study")
    shutil.copytree(EXAMPLES / "study_summarization", base / "study_summarization")
    cfg = json.loads((EXAMPLES / "study_summarization.json").read_text())
    cfg["planning"]["max_extra_roots"] = 200
    config = base / "study.json"
    config.write_text(json.dumps(cfg))
    run_config(str(config), str(base / "study"))
    out = {kind: (runs[kind], config_of(runs, kind)) for kind in KINDS}
    out["study"] = (base / "study", config)
    return out


@pytest.fixture
def copy(made: dict[str, tuple[Path, Path]], tmp_path: Path) -> Callable[[str], Path]:
    def _copy(kind: str) -> Path:
        dest = tmp_path / kind
        shutil.copytree(made[kind][0], dest)
        return dest

    return _copy


def reseal(folder: Path) -> None:
    """Rewrite the folder's marker over its files as they are now (what a forger would do)."""
    files = {
        p.relative_to(folder).as_posix(): p.read_bytes()
        for p in sorted(folder.rglob("*"))
        if p.is_file() and p.name != MARKER
    }
    (folder / MARKER).write_bytes(marker_bytes(files))


def audit_run(run: Path, config: Path) -> AuditReport:
    """The audit as ``verdictpack audit RUN --config CFG`` runs it: report.md rendered again."""
    return audit_alone(run, config, rerender)


def failing(report: AuditReport) -> list[str]:
    return [f.where for f in report.failures()]


def _get(doc: Any, path: tuple[str | int, ...]) -> Any:
    for k in path[:-1]:
        doc = doc[k]
    return doc


@pytest.mark.parametrize("kind", ALL_KINDS)
def test_an_untouched_run_passes_with_its_config(
    made: dict[str, tuple[Path, Path]], kind: str
) -> None:
    run, config = made[kind]
    report = audit_run(run, config)
    assert report.kind == kind
    assert report.passed, [f.line() for f in report.failures()]
    listed = json.loads((run / MARKER).read_text())["files"]
    digests = {f.where for f in report.findings if f.what.startswith("the SHA-256 the marker")}
    assert digests == set(listed)  # every listed file's digest checked
    rendered = [f for f in report.findings if f.what.startswith("rendered again")]
    texts = {"report.md", "registered_vs_extension.md"} & set(listed)  # the engine's two
    assert sorted((f.where, f.status) for f in rendered) == [(n, "pass") for n in sorted(texts)]


def test_without_the_renderer_a_study_report_is_unverified_never_passed(
    made: dict[str, tuple[Path, Path]],
) -> None:
    run, config = made["study"]
    report = audit_alone(run, config)
    assert report.passed
    named = [f for f in report.findings if f.where == "report.md"]
    assert sorted(f.status for f in named) == ["pass", "unverified"]  # the digest; the text


# a number in a table row of report.md (not the header, not the rule)
_ROW_NUMBER = re.compile(r"^(\|[^\n]*?\| )(\d+\.\d+)", re.MULTILINE)


@pytest.mark.parametrize("kind", ALL_KINDS)
def test_an_edited_report_cell_fails(
    made: dict[str, tuple[Path, Path]], copy: Callable[[str], Path], kind: str
) -> None:
    run = copy(kind)
    text = (run / "report.md").read_text(encoding="utf-8")
    rows = [m for m in _ROW_NUMBER.finditer(text) if not m.group(1).startswith("|--")]
    assert rows, "report.md has a table with a decimal number"
    m = rows[0]
    forged = m.group(2)[:-1] + str((int(m.group(2)[-1]) + 5) % 10)
    text = text[: m.start(2)] + forged + text[m.end(2) :]
    (run / "report.md").write_text(text, encoding="utf-8")
    reseal(run)
    failed = failing(audit_run(run, made[kind][1]))
    assert failed and all(w.startswith("report.md") for w in failed), failed


@pytest.mark.parametrize("kind", ALL_KINDS)
def test_an_edited_results_number_fails(
    made: dict[str, tuple[Path, Path]], copy: Callable[[str], Path], kind: str
) -> None:
    run = copy(kind)
    path = HEADLINE[kind]

    def plant(doc: Any) -> None:
        holder = _get(doc, path)
        value = holder[path[-1]]
        holder[path[-1]] = value + 1 if isinstance(value, int) else value + 0.01

    edit_json(run / "results.json", plant)
    reseal(run)
    failed = failing(audit_run(run, made[kind][1]))
    # named where the audit re-derives it, or where another file of the run disagrees with it
    key = next(k for k in reversed(path) if isinstance(k, str) and k != "value")
    assert any(key in w or w.startswith("results.json") for w in failed), failed


@pytest.mark.parametrize("kind", ALL_KINDS)
def test_a_construct_renamed_throughout_fails_against_the_config(
    made: dict[str, tuple[Path, Path]], copy: Callable[[str], Path], kind: str
) -> None:
    run, config = copy(kind), made[kind][1]
    name = json.loads((run / "results.json").read_text())["construct"]["name"]
    for p in run.iterdir():
        if p.name != MARKER and p.is_file():
            p.write_bytes(p.read_bytes().replace(name.encode(), b"a-construct-never-registered"))
    reseal(run)
    assert "results.json $.construct.name" in failing(audit_run(run, config))


@pytest.mark.parametrize("kind", ALL_KINDS)
def test_an_edited_added_or_removed_file_fails_on_the_marker(
    made: dict[str, tuple[Path, Path]], copy: Callable[[str], Path], kind: str
) -> None:
    run = copy(kind)
    edit_json(run / "provenance.json", lambda d: d["wall_clock"].update(elapsed_seconds=0.5))
    (run / "notes.txt").write_text("an added file\n")
    (run / "report.md").unlink()
    report = audit_run(run, made[kind][1])
    fails = {(f.where, f.what) for f in report.failures()}
    assert ("provenance.json", "the SHA-256 the marker lists (unchanged since written)") in fails
    added = [f for f in report.failures() if "does not list" in f.what]
    assert [f.found for f in added] == ["notes.txt"]
    removed = [f for f in report.failures() if f.what == "every listed file is there"]
    assert [f.found for f in removed] == ["report.md"]
