"""Shared by the self-audit's tests: the runs they audit, copies to plant values in, helpers.

The runs are produced once per session from reduced copies of the example configs (fewer
replicates, a smaller cap) written to a temporary folder; the sizing example runs in full. Every
committed example is required: a missing one makes the ``runs`` fixture, and so every test that
audits a run, fail (it is never skipped).

The fixtures are imported by name into the test modules that use them (``from audit_runs import
copy_run, runs``); this module is not collected (its name does not start with ``test_``).
"""

from __future__ import annotations

import json
import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from conftest import EXAMPLES, load_example
from verdictpack.verify import AuditReport, Finding

# kind -> the committed example config it is reduced from (examples/outputs/<stem> holds its run)
EXAMPLE_CONFIGS = {
    "sizing": "sizing_summarization.json",
    "verdict": "verdict_summarization.json",
    "judges": "judges_summarization.json",
    "engine": "engine_summarization.json",
    "battery": "battery_summarization.json",
}
KINDS = tuple(EXAMPLE_CONFIGS)


def missing_examples(examples: Path = EXAMPLES) -> list[str]:
    """The committed example configs and output folders that are absent under ``examples``."""
    missing = []
    for name in EXAMPLE_CONFIGS.values():
        if not (examples / name).is_file():
            missing.append(name)
        if not (examples / "outputs" / Path(name).stem / "results.json").is_file():
            missing.append(f"outputs/{Path(name).stem}/results.json")
    return missing


def reduced_configs() -> dict[str, dict[str, Any]]:
    """The example configs, reduced; a missing example raises (FileNotFoundError)."""
    configs: dict[str, dict[str, Any]] = {"sizing": load_example(EXAMPLE_CONFIGS["sizing"])}
    v = load_example(EXAMPLE_CONFIGS["verdict"])
    v["replicates"], v["sequential"]["cap_roots"] = 100, 200
    configs["verdict"] = v
    j = load_example(EXAMPLE_CONFIGS["judges"])
    j["replicates"], j["sequential"]["cap_roots"] = 100, 300
    configs["judges"] = j
    e = load_example(EXAMPLE_CONFIGS["engine"])
    e["power"]["replicates"], e["sequential"]["cap_roots"] = 50, 300
    configs["engine"] = e
    b = load_example(EXAMPLE_CONFIGS["battery"])
    b["replicates"], b["block_size"], b["sequential"]["cap_roots"] = 100, 100, 150
    b["true_h_grid"] = {"values": [0.0, 0.45], "replicates": 100}
    b["designs_replicates"] = 100
    configs["battery"] = b
    return configs


_RUNS: dict[str, Path] = {}  # made once per session, shared by every module that imports `runs`


@pytest.fixture(scope="session")
def runs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    if not _RUNS:
        from verdictpack._cli import run_config

        base = tmp_path_factory.mktemp("audit-runs")
        made: dict[str, Path] = {}
        for kind, cfg in reduced_configs().items():
            path = base / f"{kind}.json"
            path.write_text(json.dumps(cfg))
            made[kind] = base / kind
            run_config(str(path), str(made[kind]))
        _RUNS.update(made)
    return dict(_RUNS)


@pytest.fixture
def copy_run(runs: dict[str, Path], tmp_path: Path) -> Callable[[str], Path]:
    def _copy(kind: str) -> Path:
        dest = tmp_path / kind
        shutil.copytree(runs[kind], dest)
        return dest

    return _copy


def edit_json(path: Path, edit: Callable[[Any], None]) -> None:
    data = json.loads(path.read_text())
    edit(data)
    path.write_text(json.dumps(data, indent=2) + "\n")


def failed(report: AuditReport, where: str) -> list[Finding]:
    return [f for f in report.failures() if where in f.where]


def config_of(runs: dict[str, Path], kind: str) -> Path:
    return runs[kind].parent / f"{kind}.json"  # the file the `runs` fixture ran
