"""README's two commands are the ones CI runs; its examples exist."""

from __future__ import annotations

import re

from conftest import ROOT


def _bash_blocks() -> list[str]:
    text = (ROOT / "README.md").read_text()
    return re.findall(r"```bash\n(.*?)```", text, flags=re.S)


def test_readme_test_command_is_what_ci_runs() -> None:
    blocks = _bash_blocks()
    assert len(blocks) >= 2
    test_command = blocks[1].strip()
    ci = (ROOT / ".ci" / "run").read_text().splitlines()
    assert test_command in ci


def test_readme_run_command_names_a_bundled_example() -> None:
    run_command = _bash_blocks()[0]
    match = re.search(r"verdictpack (examples/\S+\.json)", run_command)
    assert match and (ROOT / match.group(1)).is_file()
