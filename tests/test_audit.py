"""The self-audit: untouched outputs pass; a wrong value planted in a COPY is named.

The runs are produced once per module from reduced copies of the example configs (fewer
replicates, a smaller cap) written to a temporary folder; the sizing example runs in full.
"""

from __future__ import annotations

import ast
import json
import math
import re
import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from conftest import ROOT, load_example
from verdictpack._cli import main, run_config
from verdictpack.verify import _audit
from verdictpack.verify._audit import AuditReport, audit_run


def _reduced() -> dict[str, dict[str, Any]]:
    configs: dict[str, dict[str, Any]] = {"sizing": load_example("sizing_summarization.json")}
    v = load_example("verdict_summarization.json")
    v["replicates"], v["sequential"]["cap_roots"] = 100, 200
    configs["verdict"] = v
    j = load_example("judges_summarization.json")
    j["replicates"], j["sequential"]["cap_roots"] = 100, 300
    configs["judges"] = j
    e = load_example("engine_summarization.json")
    e["power"]["replicates"], e["sequential"]["cap_roots"] = 50, 300
    configs["engine"] = e
    if (ROOT / "examples" / "battery_summarization.json").exists():
        b = load_example("battery_summarization.json")
        b["replicates"], b["block_size"], b["sequential"]["cap_roots"] = 100, 100, 150
        configs["battery"] = b
    return configs


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    base = tmp_path_factory.mktemp("audit-runs")
    out: dict[str, Path] = {}
    for kind, cfg in _reduced().items():
        path = base / f"{kind}.json"
        path.write_text(json.dumps(cfg))
        out[kind] = base / kind
        run_config(str(path), str(out[kind]))
    return out


@pytest.fixture
def copy_run(runs: dict[str, Path], tmp_path: Path) -> Callable[[str], Path]:
    def _copy(kind: str) -> Path:
        dest = tmp_path / kind
        shutil.copytree(runs[kind], dest)
        return dest

    return _copy


def _edit_json(path: Path, edit: Callable[[Any], None]) -> None:
    data = json.loads(path.read_text())
    edit(data)
    path.write_text(json.dumps(data, indent=2) + "\n")


def _failed(report: AuditReport, where: str) -> list[_audit.Finding]:
    return [f for f in report.failures() if where in f.where]


# ----------------------------------------------------------------------------------------------
# untouched outputs
# ----------------------------------------------------------------------------------------------


@pytest.mark.parametrize("kind", ["sizing", "verdict", "judges", "engine", "battery"])
def test_untouched_outputs_pass_with_zero_failures(runs: dict[str, Path], kind: str) -> None:
    if kind not in runs:
        pytest.skip("no battery example in this checkout")
    report = audit_run(runs[kind])
    assert report.kind == kind
    assert report.failed == 0, "\n".join(f.line() for f in report.failures())
    assert report.checks > 150  # the audit really ran its checks on this kind
    # every simulated probability is named UNVERIFIED, never passed silently
    if kind != "sizing":
        assert any(
            "simulated figures" in f.what for f in report.findings if f.status == "unverified"
        )


def test_report_tables_are_mapped_and_swept(runs: dict[str, Path]) -> None:
    report = audit_run(runs["judges"])
    cells = [f for f in report.findings if f.where.startswith("report.md ›")]
    assert len(cells) > 100
    assert any("price next to accuracy" in f.where for f in cells)
    assert any("sweep of" in f.where and f.status == "pass" for f in report.findings)


# ----------------------------------------------------------------------------------------------
# planted values, each named
# ----------------------------------------------------------------------------------------------


def test_planted_stage2_size_is_named(copy_run: Callable[[str], Path]) -> None:
    run = copy_run("sizing")

    def plant(d: Any) -> None:
        cell = d["arms"][0]["sizes"][0]["n"]
        assert cell["value"] == 34  # the anchor, before planting
        cell["value"] = 32

    _edit_json(run / "results.json", plant)
    report = audit_run(run)
    hits = _failed(report, "results.json $.arms[0].sizes[0].n")
    assert hits and hits[0].expected == "34" and hits[0].found == "32"
    # and the report still prints 34: the printed cell is named too
    assert _failed(
        report,
        "report.md › t arms › row 'Stage 2: judge-human preference gap "
        "/ standard' › column 'n (exact)'",
    )


def test_planted_decisive_power_is_named(copy_run: Callable[[str], Path]) -> None:
    run = copy_run("sizing")
    original: list[float] = []

    def plant(d: Any) -> None:
        size = d["arms"][0]["sizes"][1]
        assert size["design"] == "decisive"
        original.append(size["power_at_n"]["value"])
        size["power_at_n"]["value"] += 0.002

    _edit_json(run / "results.json", plant)
    report = audit_run(run)
    hits = _failed(report, "results.json $.arms[0].sizes[1].power_at_n")
    assert hits
    assert math.isclose(float(hits[0].expected), original[0], abs_tol=1e-10)


def test_planted_monte_carlo_cell_is_named(copy_run: Callable[[str], Path]) -> None:
    run = copy_run("sizing")

    def plant(d: Any) -> None:
        fig = d["arms"][0]["checks"][0]["simulated_power"]
        fig["value"] = round(fig["value"] + 8 * fig["mcse"], 5)  # a 'Monte Carlo' cell moved

    _edit_json(run / "results.json", plant)
    report = audit_run(run)
    where = "results.json $.arms[0].checks[0]"
    assert _failed(report, where + ".simulated_minus_exact_in_mcse")
    assert _failed(report, where + ".simulated_power")


def _plant_in_table_row(text: str, row_start: str, row_has: str, col: int) -> tuple[str, str]:
    """Change the first number of one cell of the first matching table row."""
    lines = text.splitlines(keepends=True)
    for i, line in enumerate(lines):
        if line.startswith(row_start) and row_has in line:
            cells = line.split(" | ")
            m = re.search(r"\d+\.\d+", cells[col])
            assert m is not None
            old = m.group(0)
            value = float(old)
            new = f"{(value + 0.25) % 1.0:.{len(old.split('.')[1])}f}"
            cells[col] = cells[col].replace(old, new, 1)
            lines[i] = " | ".join(cells)
            return "".join(lines), new
    raise AssertionError(f"row {row_start!r} not found")


def test_planted_printed_rate_in_report_only_is_named(copy_run: Callable[[str], Path]) -> None:
    run = copy_run("judges")
    results_before = (run / "results.json").read_bytes()
    text = (run / "report.md").read_text()
    # the summary row of composition 'registered', world 'effect present': P(correct verdict)
    planted, _ = _plant_in_table_row(text, "| registered |", "effect present", 4)
    (run / "report.md").write_text(planted)
    report = audit_run(run)
    assert (run / "results.json").read_bytes() == results_before
    assert _failed(
        report,
        "report.md › price next to accuracy › row 'registered / effect "
        "present' › column 'P(correct verdict)'",
    )
    assert not [f for f in report.failures() if f.where.startswith("results.json")]


def test_planted_cost_cell_is_named(copy_run: Callable[[str], Path]) -> None:
    run = copy_run("verdict")

    def plant(d: Any) -> None:
        d["scenarios"][0]["routes"][0]["mean_human_cost"]["value"] += 1.5

    _edit_json(run / "results.json", plant)
    report = audit_run(run)
    route = "results.json $.scenarios[0].routes[0]"
    assert _failed(report, route + ".mean_cost") or _failed(report, route + ".mean_human_cost")
    assert _failed(report, route + ".mean_human_cost")


def test_planted_cost_cell_in_cost_comparison_csv_is_named(
    copy_run: Callable[[str], Path],
) -> None:
    run = copy_run("engine")
    lines = (run / "cost_comparison.csv").read_text().splitlines()
    i = next(k for k, line in enumerate(lines) if ",null,human layer," in line)
    cells = lines[i].split(",")
    cells[5] = f"{float(cells[5]) + 10:.4f}"  # the cost column
    lines[i] = ",".join(cells)
    (run / "cost_comparison.csv").write_text("\n".join(lines) + "\n")
    report = audit_run(run)
    hits = _failed(report, "cost_comparison.csv")
    assert hits and any(f"line {i + 1}" in f.found for f in hits)


def test_planted_judge_stream_rate_is_named(copy_run: Callable[[str], Path]) -> None:
    run = copy_run("judges")

    def plant(d: Any) -> None:
        d["compositions"][1]["effect_present"]["mu_model"] += 0.02

    _edit_json(run / "results.json", plant)
    report = audit_run(run)
    hits = _failed(report, "results.json $.compositions[1].effect_present.mu_model")
    assert hits and "judge sheets" in hits[0].what


@pytest.mark.parametrize("plant", ["verdict", "bound"])
def test_planted_engine_verdict_is_named(copy_run: Callable[[str], Path], plant: str) -> None:
    run = copy_run("engine")
    before = json.loads((run / "verdict.json").read_text())["registered"]

    def edit(d: Any) -> None:
        if plant == "verdict":
            d["registered"]["verdict"] = (
                "EFFECT_SUPPORTED" if before["verdict"] != "EFFECT_SUPPORTED" else "INCONCLUSIVE"
            )
        else:  # a narrower (anti-conservative) lower end of the model CS by 1e-4
            d["registered"]["model_bounds"][0] += 1e-4

    _edit_json(run / "verdict.json", edit)
    report = audit_run(run)
    field = "verdict" if plant == "verdict" else "model_bounds"
    hits = _failed(report, f"verdict.json $.registered.{field}")
    assert any("rebuilt" in f.what for f in hits), [f.line() for f in report.failures()]


def test_tampered_evidence_row_is_caught(copy_run: Callable[[str], Path]) -> None:
    run = copy_run("engine")
    rows = [json.loads(x) for x in (run / "evidence.jsonl").read_text().splitlines()]
    rows[10]["M"] = 1.0 - rows[10]["M"]  # inconsistent with the recorded choices
    (run / "evidence.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    report = audit_run(run)
    assert _failed(report, "evidence.jsonl $[*].M,H")


# ----------------------------------------------------------------------------------------------
# the independent mathematics against the published anchors (docs/statistics.md §4, §9)
# ----------------------------------------------------------------------------------------------


def test_independent_t_power_and_size_reproduce_the_anchors() -> None:
    assert _audit._t_size(0.5, 0.05, 0.80, 2) == 34
    assert _audit._t_size(0.5, 0.01, 0.95, 2) == 75
    assert round(_audit._t_power(20, 0.5, 0.05, 2), 4) == 0.5645
    assert round(_audit._t_power(32, 0.5, 0.05, 2), 4) == 0.7823


def test_independent_binomial_enumeration_reproduces_the_anchors() -> None:
    p1 = _audit._phi_inv(_audit._phi(0.5) + 0.3)
    table = _audit._binomial_enumeration(0.5, p1, 0.005, 1, 202)
    assert table[201].upper == 120 and round(table[201].achieved, 5) == 0.00453
    assert table[201].power >= 0.95 > max(row.power for row in table[:201])
    reader = _audit._binomial_enumeration(0.5, 0.65, 0.005, 2, 195)
    assert (reader[194].lower, reader[194].upper) == (79, 116)


def test_independent_sprt_recursion_reproduces_the_anchors() -> None:
    p0, p1, a, b = 0.5, 0.6477601033306699, 0.005, 0.05
    la, lb = math.log((1 - b) / a), math.log(b / (1 - a))
    up, dn = math.log(p1 / p0), math.log((1 - p1) / (1 - p0))
    h0 = _audit._sprt_recursion(la, lb, up, dn, p0, 10_000)
    h1 = _audit._sprt_recursion(la, lb, up, dn, p1, 10_000)
    assert round(h0.asn, 2) == 67.93 and round(h1.asn, 2) == 112.77
    assert round(h0.p_upper, 5) == 0.00448 and round(h1.p_lower, 4) == 0.0432


def test_hybrid_polygon_brute_force_matches_a_dense_grid() -> None:
    import numpy as np

    rng = np.random.default_rng(7)
    for _ in range(10):
        lm, um = np.sort(rng.uniform(0.05, 0.95, 2))
        lh, uh = np.sort(rng.uniform(0.05, 0.95, 2))
        ld, ud = np.sort(rng.uniform(-0.9, 0.9, 2))
        iv = _audit._hybrid_interval(lm, um, lh, uh, ld, ud)
        a, b = np.meshgrid(np.linspace(lm, um, 801), np.linspace(lh, uh, 801))
        inside = (a - b >= ld) & (a - b <= ud)
        if iv is None:
            assert not inside.any()
            continue
        f = _audit._f_ab(a[inside], b[inside])
        # the brute force is at least as extreme as any grid point, and close to the grid
        assert iv[0] <= f.min() + 1e-12 and iv[1] >= f.max() - 1e-12
        assert f.min() - iv[0] < 5e-3 and iv[1] - f.max() < 5e-3


def test_the_audit_does_not_import_the_modules_it_checks() -> None:
    tree = ast.parse(Path(_audit.__file__).read_text())
    imported = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module:
            imported.add(node.module)
        elif isinstance(node, ast.Import):
            imported.update(alias.name for alias in node.names)
    package = {m for m in imported if m.startswith("verdictpack")}
    assert package == {"verdictpack._errors"}
    assert "scipy.stats" not in imported


# ----------------------------------------------------------------------------------------------
# provenance: seeds agree, the commitment is recomputed, the hashes are digests (and, with the
# config file, its hashes)
# ----------------------------------------------------------------------------------------------

_PROV = "provenance.json"


def _config_of(runs: dict[str, Path], kind: str) -> Path:
    return runs[kind].parent / f"{kind}.json"  # the file the `runs` fixture ran


def test_untouched_provenance_passes_with_and_without_the_config(runs: dict[str, Path]) -> None:
    for kind in runs:
        report = audit_run(runs[kind], _config_of(runs, kind))
        assert report.failed == 0, "\n".join(f.line() for f in report.failures())
        checks = {f.where + " — " + f.what for f in report.findings if f.status == "pass"}
        for expected in (
            f"{_PROV} $.seed — the seed recorded in provenance is results.json $.seed",
            f"{_PROV} $.seed_commitment — recomputed from the seed and config_jcs_sha256",
            f"{_PROV} $.config_sha256 — a SHA-256 digest",
            f"{_PROV} $.config_jcs_sha256 — a SHA-256 digest",
            f"{_PROV} $.config_sha256 — SHA-256 of the bytes of {kind}.json",
            f"{_PROV} $.config_jcs_sha256 — SHA-256 of the RFC 8785 form of {kind}.json",
            f"{_PROV} $.seed — the seed of {kind}.json",
        ):
            assert expected in checks, (kind, expected)
    # without the config file its hashes are UNVERIFIED, with the reason, never passed
    report = audit_run(runs["sizing"])
    assert report.failed == 0
    assert [f.what for f in report.findings if f.where.startswith(f"{_PROV} $.config_sha256,")] == [
        "the config hashes recomputed from the config file"
    ]
    assert any("--config FILE" in f.expected for f in report.findings if f.status == "unverified")


def _flip(digest: str) -> str:
    """Another well-formed digest: the last hex digit changed."""
    return digest[:-1] + ("0" if digest[-1] != "0" else "1")


# name -> (file, edit, whether --config is given, the checks that must fail)
_TAMPER: dict[str, tuple[str, Callable[[Any], None], bool, tuple[str, ...]]] = {
    "results seed": (
        "results.json",
        lambda d: d.__setitem__("seed", d["seed"] + 1),
        False,
        (f"{_PROV} $.seed — the seed recorded in provenance",),
    ),
    "provenance seed": (
        _PROV,
        lambda d: d.__setitem__("seed", d["seed"] + 1),
        False,
        (f"{_PROV} $.seed — the seed recorded", f"{_PROV} $.seed_commitment — recomputed"),
    ),
    "provenance seed, config given": (
        _PROV,
        lambda d: d.__setitem__("seed", d["seed"] + 1),
        True,
        (f"{_PROV} $.seed — the seed of sizing.json",),
    ),
    "seed as a string": (
        _PROV,
        lambda d: d.__setitem__("seed", str(d["seed"])),
        False,
        (f"{_PROV} $.seed — the seed recorded", f"{_PROV} $.seed_commitment — recomputable"),
    ),
    "seed commitment": (
        _PROV,
        lambda d: d.__setitem__("seed_commitment", _flip(d["seed_commitment"])),
        False,
        (f"{_PROV} $.seed_commitment — recomputed",),
    ),
    "seed commitment removed": (
        _PROV,
        lambda d: d.__setitem__("seed_commitment", None),
        False,
        (f"{_PROV} $.seed_commitment — recomputed",),
    ),
    "config_sha256 upper case": (
        _PROV,
        lambda d: d.__setitem__("config_sha256", d["config_sha256"].upper()),
        False,
        (f"{_PROV} $.config_sha256 — a SHA-256 digest",),
    ),
    "config_sha256 truncated": (
        _PROV,
        lambda d: d.__setitem__("config_sha256", d["config_sha256"][:63]),
        False,
        (f"{_PROV} $.config_sha256 — a SHA-256 digest",),
    ),
    "config_sha256 another digest, config given": (
        _PROV,
        lambda d: d.__setitem__("config_sha256", _flip(d["config_sha256"])),
        True,
        (f"{_PROV} $.config_sha256 — SHA-256 of the bytes of sizing.json",),
    ),
    "config_jcs_sha256 not hex": (
        _PROV,
        lambda d: d.__setitem__("config_jcs_sha256", "g" * 64),
        False,
        (
            f"{_PROV} $.config_jcs_sha256 — a SHA-256 digest",
            f"{_PROV} $.seed_commitment — recomputable",
        ),
    ),
    "config_jcs_sha256 another digest": (
        _PROV,
        lambda d: d.__setitem__("config_jcs_sha256", _flip(d["config_jcs_sha256"])),
        False,
        (f"{_PROV} $.seed_commitment — recomputed",),
    ),
    "config_jcs_sha256 and commitment forged together, config given": (
        _PROV,
        lambda d: d.update(
            config_jcs_sha256=_flip(d["config_jcs_sha256"]),
            seed_commitment=_audit._expected_commitment(d["seed"], _flip(d["config_jcs_sha256"])),
        ),
        True,
        (f"{_PROV} $.config_jcs_sha256 — SHA-256 of the RFC 8785 form of sizing.json",),
    ),
}


@pytest.mark.parametrize("name", list(_TAMPER))
def test_tampered_provenance_fails_naming_the_check(
    runs: dict[str, Path],
    copy_run: Callable[[str], Path],
    capsys: pytest.CaptureFixture[str],
    name: str,
) -> None:
    file, edit, with_config, expected = _TAMPER[name]
    run = copy_run("sizing")
    _edit_json(run / file, edit)
    argv = ["audit", str(run)] + (
        ["--config", str(_config_of(runs, "sizing"))] if with_config else []
    )
    assert main(argv) == 1
    out = capsys.readouterr().out
    failed = [line.strip() for line in out.splitlines() if line.strip().startswith("FAIL ")]
    for check in expected:
        assert any(line.startswith("FAIL " + check) for line in failed), (check, failed)
    assert "AUDIT FAIL" in out


def test_missing_provenance_fails(copy_run: Callable[[str], Path]) -> None:
    run = copy_run("sizing")
    (run / _PROV).unlink()
    report = audit_run(run)
    assert [f.what for f in _failed(report, _PROV) if f.where == _PROV] == ["provenance present"]


def test_another_config_fails_its_hashes(
    runs: dict[str, Path], write_config: Callable[..., Path]
) -> None:
    data = json.loads(_config_of(runs, "sizing").read_text())
    data["seed"] += 1
    other = write_config(data, "sizing.json")
    report = audit_run(runs["sizing"], other)
    names = {f.where + " — " + f.what for f in report.failures()}
    assert f"{_PROV} $.config_sha256 — SHA-256 of the bytes of sizing.json" in names
    assert f"{_PROV} $.config_jcs_sha256 — SHA-256 of the RFC 8785 form of sizing.json" in names
    assert f"{_PROV} $.seed — the seed of sizing.json" in names
    # the same content, formatted differently: the bytes differ, the canonical form does not
    same = other.parent / "reformatted" / "sizing.json"
    same.parent.mkdir()
    same.write_text(json.dumps(json.loads(_config_of(runs, "sizing").read_text()), indent=3))
    report = audit_run(runs["sizing"], same)
    assert [f.where for f in report.failures()] == [f"{_PROV} $.config_sha256"]


def test_audit_config_arguments_are_checked(
    runs: dict[str, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    both = [str(runs["sizing"]), str(runs["verdict"])]
    configs = [str(_config_of(runs, "sizing")), str(_config_of(runs, "verdict"))]
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


def test_the_seed_commitment_and_rfc8785_are_rewritten_alike() -> None:
    """The audit's own formula and canonical form agree with the tool's (tests may import it)."""
    import rfc8785
    from hypothesis import given, settings
    from hypothesis import strategies as st

    from verdictpack.config._provenance import seed_commitment

    for seed, digest in [(0, "0" * 64), (20261130, "ab" * 32), (2**63 - 1, "f" * 64)]:
        assert _audit._expected_commitment(seed, digest) == seed_commitment(seed, digest)
    for path in sorted((ROOT / "examples").glob("*.json")):
        data = json.loads(path.read_text())
        assert _audit._canonical_json(data).encode() == rfc8785.dumps(data), path.name
    for x in (1e21, 1e20, 1e-7, 1e-6, 1.5e-7, 123456789012345680000.0, 5e-324, -0.0, 0.1, 100.0):
        assert _audit._canonical_json(x).encode() == rfc8785.dumps(x), x

    floats = st.floats(allow_nan=False, allow_infinity=False)
    ints = st.integers(-(2**53) + 1, 2**53 - 1)
    scalars = st.none() | st.booleans() | ints | floats | st.text(max_size=8)
    values = st.recursive(
        scalars,
        lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=4), inner),
        max_leaves=12,
    )

    @settings(max_examples=400, derandomize=True, deadline=None, database=None)
    @given(values)
    def agree(v: Any) -> None:
        assert _audit._canonical_json(v).encode() == rfc8785.dumps(v)

    agree()
    for bad in (float("nan"), float("inf"), 2**53, -(2**60)):
        with pytest.raises(ValueError):
            _audit._canonical_json(bad)


# ----------------------------------------------------------------------------------------------
# command line
# ----------------------------------------------------------------------------------------------


def test_cli_exit_codes(
    runs: dict[str, Path],
    copy_run: Callable[[str], Path],
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    assert main(["audit", str(runs["sizing"])]) == 0
    assert "AUDIT PASS" in capsys.readouterr().out
    run = copy_run("sizing")
    _edit_json(
        run / "results.json", lambda d: d["arms"][0]["sizes"][0]["n"].__setitem__("value", 32)
    )
    assert main(["audit", str(runs["sizing"]), str(run)]) == 1
    out = capsys.readouterr().out
    assert "AUDIT FAIL" in out and "$.arms[0].sizes[0].n" in out
    assert main(["audit", str(tmp_path / "missing")]) == 2
    assert main(["audit"]) == 2
