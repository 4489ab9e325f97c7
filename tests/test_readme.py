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


def test_readme_links_resolve() -> None:
    """Every relative link of README (into the documentation site's pages) names a file."""
    text = (ROOT / "README.md").read_text()
    links = re.findall(r"\]\(([^)#\s]+)(?:#[^)]*)?\)", text)
    local = [link for link in links if "://" not in link]
    assert local, "README links into docs/"
    missing = [link for link in local if not (ROOT / link).is_file()]
    assert not missing, f"README links to missing files: {missing}"


def test_readme_is_short() -> None:
    """A newcomer reads README in five minutes (the rest is on the documentation site)."""
    text = (ROOT / "README.md").read_text()
    assert len(text.splitlines()) <= 200
