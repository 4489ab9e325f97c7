"""The seal test: byte-identical outputs with decoys present, and failures when a run is careless.

Runs the installed console script in subprocesses on a small subset: the sizing example (1,000
replicates) and a reduced verdict config (100 replicates, cap 200).
"""

from __future__ import annotations

import json
import subprocess
import sys
from dataclasses import replace
from pathlib import Path

import pytest

from conftest import load_example, write_tiny_study
from verdictpack._cli import main
from verdictpack.verify._seal import (
    DECOY_MARKER,
    RunRequest,
    console_runner,
    example_configs,
    reduced_battery,
    seal_test,
)


@pytest.fixture
def sizing_config(tmp_path: Path) -> Path:
    cfg = load_example("sizing_summarization.json")
    cfg["simulation"]["replicates"] = 1000  # the smallest allowed: identity, not precision
    path = tmp_path / "sizing" / "sizing_summarization.json"
    path.parent.mkdir()
    path.write_text(json.dumps(cfg, indent=2))
    return path


@pytest.fixture
def verdict_config(tmp_path: Path) -> Path:
    cfg = load_example("verdict_summarization.json")
    cfg["replicates"], cfg["sequential"]["cap_roots"] = 100, 200
    path = tmp_path / "configs" / "verdict_reduced.json"
    path.parent.mkdir()
    path.write_text(json.dumps(cfg, indent=2))
    return path


def test_seal_passes_on_the_console_script_and_python_dash_p(
    sizing_config: Path, verdict_config: Path, tmp_path: Path
) -> None:
    keep = tmp_path / "rooms"
    result = seal_test([sizing_config, verdict_config], keep=keep)
    assert result.passed, result.lines
    assert result.lines[-1] == "SEAL TEST PASS"
    assert "sizing_summarization: outputs byte-identical in clean, decoy, decoy-m" in result.lines
    # the rooms were kept, with the decoys in place and the outputs beside them
    decoy = keep / "decoy" / "work"
    assert (decoy / "out" / "verdict.json").read_text().startswith(DECOY_MARKER)
    real_seed = load_example("sizing_summarization.json")["seed"]
    assert json.loads((decoy / "sizing_summarization.json").read_text())["seed"] == real_seed + 1
    for module in ("verdictpack", "numpy", "scipy", "pydantic"):
        assert (decoy / f"{module}.py").exists()
        assert not list(decoy.glob(f"{DECOY_MARKER}-imported-*"))
    assert (decoy / "out" / "verdict_reduced" / "report.md").exists()
    # provenance differs between rooms only in wall_clock (its last field)
    a = json.loads((keep / "clean/work/out/sizing_summarization/provenance.json").read_text())
    b = json.loads((decoy / "out/sizing_summarization/provenance.json").read_text())
    a.pop("wall_clock")
    b.pop("wall_clock")
    assert a == b


def test_seal_passes_on_a_yaml_config_and_its_decoy_is_yaml(tmp_path: Path) -> None:
    """A YAML config is sealed like a JSON one; its same-named decoy is YAML too (another
    seed), so a tool that read the working directory's copy would be caught."""
    import yaml

    cfg = load_example("sizing_summarization.json")
    cfg["simulation"]["replicates"] = 1000
    path = tmp_path / "yaml" / "sizing_small.yaml"
    path.parent.mkdir()
    path.write_text("# the sizing example, in YAML\n" + yaml.safe_dump(cfg, sort_keys=False))
    keep = tmp_path / "rooms"
    result = seal_test([path], keep=keep, python_m=False)
    assert result.passed, result.lines
    decoy = keep / "decoy" / "work" / "sizing_small.yaml"
    assert yaml.safe_load(decoy.read_text())["seed"] == cfg["seed"] + 1


def careless_runner(req: RunRequest) -> subprocess.CompletedProcess[str]:
    """A tool that prefers ./config.json in the working directory when one exists."""
    local = req.cwd / "config.json"
    return console_runner(replace(req, config=local if local.exists() else req.config))


def test_seal_fails_when_a_run_reads_the_decoy_config(sizing_config: Path) -> None:
    result = seal_test([sizing_config], runner=careless_runner, python_m=False)
    assert not result.passed
    assert result.first_failure is not None
    assert result.first_failure.startswith("decoy differs from clean: sizing_summarization/")
    # the first differing file is named (the decoy config carries another seed)
    assert any(
        name in result.first_failure for name in ("report.md", "results.json", "provenance.json")
    )
    assert result.lines[-1].startswith("SEAL TEST FAIL")


def plain_python_m_runner(req: RunRequest) -> subprocess.CompletedProcess[str]:
    """``python -m verdictpack`` without -P: the working directory comes first on sys.path."""
    cmd = [sys.executable, "-m", "verdictpack", str(req.config), "--out", str(req.out)]
    return subprocess.run(
        [*cmd, *req.args], cwd=req.cwd, env=req.env, capture_output=True, text=True
    )


def test_seal_fails_when_decoy_modules_are_importable(sizing_config: Path) -> None:
    result = seal_test([sizing_config], runner=plain_python_m_runner, python_m=False)
    assert not result.passed
    assert result.first_failure is not None
    assert result.first_failure.startswith("decoy: sizing_summarization.json: exit")
    assert "decoy module verdictpack imported" in result.first_failure


def writing_runner(req: RunRequest) -> subprocess.CompletedProcess[str]:
    """A tool that also drops a results.json in the working directory."""
    proc = console_runner(req)
    (req.cwd / "results.json").write_text("{}\n")
    return proc


def test_seal_fails_when_a_run_writes_outside_its_output_folder(sizing_config: Path) -> None:
    result = seal_test([sizing_config], runner=writing_runner, python_m=False)
    assert not result.passed
    assert result.first_failure is not None
    assert "results.json" in result.first_failure
    assert result.first_failure.startswith(("clean: file created", "decoy: decoy or input"))


def test_reduced_battery_keeps_at_most_two_blocks() -> None:
    cfg = {"kind": "battery", "replicates": 10_000, "block_size": 1000}
    assert reduced_battery(cfg)["replicates"] == 2000
    assert reduced_battery({"kind": "battery", "replicates": 500})["replicates"] == 500
    other = {"kind": "verdict", "replicates": 2000}
    assert reduced_battery(other) is other
    grid = {"start": 0.0, "stop": 0.6, "points": 13, "replicates": 2000}
    reduced = reduced_battery({**cfg, "true_h_grid": grid})
    assert reduced["true_h_grid"] == {**grid, "replicates": 1000}  # one block per grid point
    assert grid["replicates"] == 2000  # the caller's config is not modified


def test_cli_refuses_bad_arguments(tmp_path: Path, sizing_config: Path) -> None:
    keep = tmp_path / "not-empty"
    keep.mkdir()
    (keep / "x").write_text("x")
    assert main(["seal-test", "--config", str(sizing_config), "--keep", str(keep)]) == 2
    assert main(["seal-test", "--config", str(tmp_path / "missing.json")]) == 2
    assert main(["seal-test", "--battery", "half"]) == 2


# ----------------------------------------------------------------------------------------------
# a plain (non-editable) install ships the example configs, and find_examples uses them
# ----------------------------------------------------------------------------------------------


def _build_wheel(tree: Path, dest: Path) -> Path:
    """Build the project's wheel from a copy of its source tree (the checkout stays clean)."""
    import shutil
    from importlib import metadata

    from conftest import ROOT

    for name in ("pyproject.toml", "README.md", "LICENSE"):
        shutil.copy2(ROOT / name, tree / name)
    shutil.copytree(ROOT / "examples", tree / "examples")  # outputs/ included: they must stay out
    shutil.copytree(
        ROOT / "src",
        tree / "src",
        ignore=shutil.ignore_patterns("__pycache__", "*.so", "*.egg-info"),
    )
    cmd = [sys.executable, "-m", "pip", "wheel", str(tree), "--no-deps", "-q", "-w", str(dest)]
    try:  # the build backend in this environment when it is recent enough, else pip's isolation
        setuptools = tuple(int(p) for p in metadata.version("setuptools").split(".")[:2])
    except (metadata.PackageNotFoundError, ValueError):
        setuptools = (0, 0)
    if setuptools >= (74, 1):
        cmd.append("--no-build-isolation")
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stdout[-2000:] + proc.stderr[-2000:]
    wheels = sorted(dest.glob("verdictpack-*.whl"))
    assert len(wheels) == 1, wheels
    return wheels[0]


def test_the_wheel_ships_the_example_configs_and_find_examples_uses_them(tmp_path: Path) -> None:
    import os
    import zipfile

    from conftest import EXAMPLES

    (tmp_path / "tree").mkdir()
    wheel = _build_wheel(tmp_path / "tree", tmp_path / "wheel")
    with zipfile.ZipFile(wheel) as z:
        names = z.namelist()
        shipped = {n: z.read(n) for n in names if n.startswith("verdictpack/_examples/")}
        z.extractall(tmp_path / "site")
    configs = example_configs(EXAMPLES)  # *.json and the YAML ones
    assert configs and any(p.suffix == ".yaml" for p in configs)
    data = sorted(p for p in EXAMPLES.glob("study_*/*") if p.is_file())
    assert data, "the study examples' data folders"
    # every example config and study data file, byte for byte, and nothing else from examples/
    # (no outputs, no scripts)
    expected = {f"verdictpack/_examples/{p.name}": p.read_bytes() for p in configs}
    expected.update(
        {f"verdictpack/_examples/{p.relative_to(EXAMPLES)}": p.read_bytes() for p in data}
    )
    assert shipped == expected
    assert not [n for n in names if "outputs" in n]
    # the installed package (first on the path, as in a plain install) finds its own copy
    code = (
        "import verdictpack, verdictpack.verify._seal as s\n"
        "print(verdictpack.__file__)\n"
        "print(s.find_examples())\n"
    )
    site = (tmp_path / "site").resolve()
    env = {**os.environ, "PYTHONPATH": str(site)}
    res = subprocess.run(
        [sys.executable, "-P", "-c", code],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert res.returncode == 0, res.stderr
    package, examples = res.stdout.split()
    assert Path(package) == site / "verdictpack" / "__init__.py"
    assert Path(examples) == site / "verdictpack" / "_examples"
    assert [p.name for p in example_configs(Path(examples))] == [p.name for p in configs]


def test_seal_covers_study_data_paths(tmp_path: Path) -> None:
    study = write_tiny_study(tmp_path / "study")
    keep = tmp_path / "rooms"
    result = seal_test([study], keep=keep, python_m=False)
    assert result.passed, result.lines
    # the data went beside the config in inputs/, and a different decoy copy into the cwd
    real = (keep / "decoy" / "inputs" / "data" / "judgments.csv").read_bytes()
    decoy = (keep / "decoy" / "work" / "data" / "judgments.csv").read_bytes()
    assert real == (study.parent / "data" / "judgments.csv").read_bytes()
    assert decoy != real and decoy and real.startswith(decoy)


def cwd_data_runner(req: RunRequest) -> subprocess.CompletedProcess[str]:
    """A tool that resolves a study's data paths against the working directory when a file is
    there (a careless tool): the config runs from a copy whose data are the cwd's files."""
    import shutil
    import tempfile

    from verdictpack.verify._seal import study_data_paths

    cfg = json.loads(req.config.read_text())
    scratch = Path(tempfile.mkdtemp(prefix="vp-careless-"))
    try:
        for rel in study_data_paths(cfg):
            local = req.cwd / rel
            (scratch / rel).parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(local if local.exists() else req.config.parent / rel, scratch / rel)
        copy = scratch / req.config.name
        copy.write_bytes(req.config.read_bytes())
        return console_runner(replace(req, config=copy))
    finally:
        shutil.rmtree(scratch, ignore_errors=True)


def test_seal_fails_when_study_data_are_read_from_the_working_directory(tmp_path: Path) -> None:
    study = write_tiny_study(tmp_path / "study")
    result = seal_test([study], runner=cwd_data_runner, python_m=False)
    assert not result.passed
    assert result.first_failure is not None
    assert "decoy differs from clean" in result.first_failure or "decoy:" in result.first_failure
