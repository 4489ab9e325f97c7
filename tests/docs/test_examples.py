"""The code examples of README.md and the documentation site run as written.

The convention (stated on the site's home page):

- every ```json block must parse as JSON; a whole config (an object with a ``kind``) is checked
  by ``verdictpack validate`` under ``examples/`` beside the bundled data, unless an HTML comment
  ``<!-- save as examples/NAME.json -->`` on the line before it names where to save it: then a
  later ``verdictpack`` command of the page must use it (and so validates or runs it);
- every ```bash block whose first line starts with ``verdictpack`` is run line by line, exit 0
  expected (blocks of install commands are CI's: tests/test_readme.py);
- every ```python block is executed.

Everything runs in a scratch folder holding a copy of ``examples/`` (outputs excluded), so
``--out`` folders land in tmp_path and nothing in the repository is written.
docs/PERFORMANCE.md records measurements: its commands are not re-run.
"""

from __future__ import annotations

import json
import re
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import ROOT

FENCE = re.compile(
    r"^(?:<!-- save as (?P<save>\S+) -->\n)?```(?P<lang>\w*)\n(?P<body>.*?)^```$", re.S | re.M
)
NOT_RUN = {"PERFORMANCE.md"}


def pages() -> list[Path]:
    docs = sorted(p for p in (ROOT / "docs").rglob("*.md") if p.name not in NOT_RUN)
    return [ROOT / "README.md", *docs]


def blocks(page: Path) -> list[tuple[str, str, str | None]]:
    return [
        (m["lang"], m["body"], m["save"]) for m in FENCE.finditer(page.read_text(encoding="utf-8"))
    ]


def _verdictpack(args: list[str], cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "verdictpack", *args],
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=300,
    )


@pytest.fixture
def scratch(tmp_path: Path) -> Path:
    shutil.copytree(
        ROOT / "examples", tmp_path / "examples", ignore=shutil.ignore_patterns("outputs")
    )
    return tmp_path


def _run_page(page: Path, scratch: Path) -> None:
    name = page.relative_to(ROOT).as_posix()
    saved: set[str] = set()
    for index, (lang, body, save) in enumerate(blocks(page)):
        where = f"{name}, block {index + 1} ({lang})"
        if lang == "json":
            try:
                data = json.loads(body)
            except json.JSONDecodeError as exc:
                pytest.fail(f"{where}: not JSON ({exc}); tag a fragment `text`")
            if isinstance(data, dict) and "kind" in data:
                path = scratch / (save or f"examples/doc_{page.stem}_{index}.json")
                path.write_text(body, encoding="utf-8")
                if save:
                    saved.add(save)
                    continue
                done = _verdictpack(["validate", str(path.relative_to(scratch))], scratch)
                assert done.returncode == 0, f"{where}: refused\n{done.stderr}"
        elif lang == "bash" and body.startswith("verdictpack "):
            for line in body.splitlines():
                args = shlex.split(line)
                assert args[0] == "verdictpack", f"{where}: {line!r} is not a verdictpack command"
                saved -= set(args)
                done = _verdictpack(args[1:], scratch)
                assert done.returncode == 0, (
                    f"{where}: {line!r} exit {done.returncode}\n{done.stderr}"
                )
        elif lang == "python":
            done = subprocess.run(
                [sys.executable, "-c", body],
                cwd=scratch,
                capture_output=True,
                text=True,
                timeout=300,
            )
            assert done.returncode == 0, f"{where}: failed\n{done.stderr}"
    assert not saved, f"{name}: configs saved but never used by a command: {sorted(saved)}"


@pytest.mark.parametrize("page", pages()[1:], ids=lambda p: p.relative_to(ROOT).as_posix())
def test_page_examples_run(page: Path, scratch: Path) -> None:
    _run_page(page, scratch)


def _summary(report_md: str) -> list[str]:
    return [line for line in report_md.splitlines()[1:8] if line.startswith("- ")]


def test_readme_examples_run_and_print_what_it_shows(scratch: Path) -> None:
    """README's smallest study validates and runs, and its report opens with the lines README shows,
    which are also the head of the bundled study's committed report."""
    _run_page(ROOT / "README.md", scratch)
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    shown = re.search(r"## What comes out.*?```text\n(.*?)```", readme, re.S)
    assert shown
    committed = ROOT / "examples" / "outputs" / "study_summarization" / "report.md"
    assert shown.group(1).splitlines() == _summary(committed.read_text(encoding="utf-8"))
    ran = (scratch / "out-study" / "report.md").read_text(encoding="utf-8")
    assert _summary(ran) == shown.group(1).splitlines()


def test_the_pages_hold_runnable_examples() -> None:
    """The convention is in use: a run, a whole config and a Python block are found."""
    found = {
        (lang, body.startswith("verdictpack ")) for p in pages() for lang, body, _ in blocks(p)
    }
    assert {("bash", True), ("json", False), ("python", False)} <= found


def test_no_tracker_numbers_in_user_facing_text() -> None:
    """README and the site cite no issue numbers (a reader has no tracker to look them up in)."""
    pattern = re.compile(r"\bissues?\s*#?\d|(?<![\w.])#\d", re.I)
    hits = [
        f"{page.relative_to(ROOT)}:{number}: {line.strip()}"
        for page in [ROOT / "README.md", *sorted((ROOT / "docs").rglob("*.md"))]
        for number, line in enumerate(page.read_text(encoding="utf-8").splitlines(), 1)
        if pattern.search(line)
    ]
    assert not hits, "\n".join(hits)
