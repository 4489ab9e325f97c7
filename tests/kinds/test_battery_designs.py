"""The battery's designs side by side (kinds/_battery_designs.py): refused by path when malformed,
the same on any worker count, absent without a trace, audited, and one human per root cheaper than
two when the humans of a root agree (ICC 0.6)."""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import pytest

from conftest import load_example
from verdictpack._cli import main, run_config
from verdictpack.verify import audit_run

BATTERY = "battery_summarization.json"
THREE = [
    {"name": "today", "bets": "grid", "humans_per_root": 2},
    {"name": "one", "bets": "grid", "humans_per_root": 1},
    {"name": "one-blend", "bets": "blend", "humans_per_root": 1},
]


def config(
    designs: list[dict[str, Any]] | None, replicates: int = 200, cap: int = 150
) -> dict[str, Any]:
    data = copy.deepcopy(load_example(BATTERY))
    data["replicates"], data["block_size"] = 100, 100
    data["sequential"]["cap_roots"] = cap
    data["scenarios"] = [{"name": "null"}, {"name": "above_threshold", "true_h": 0.45}]
    data.pop("true_h_grid", None)
    data.pop("designs", None)
    data.pop("designs_replicates", None)
    if designs is not None:
        data["designs"], data["designs_replicates"] = designs, replicates
    return data


def run(tmp_path: Path, data: dict[str, Any], name: str, workers: int = 1) -> dict[str, str]:
    path = tmp_path / f"{name}.json"
    path.write_text(json.dumps(data))
    return run_config(str(path), workers=workers)


def test_identical_on_one_and_two_workers_and_adding_a_design_moves_nothing(
    tmp_path: Path,
) -> None:
    one = run(tmp_path, config(THREE), "one", workers=1)
    two = run(tmp_path, config(THREE), "two", workers=2)
    assert one["results.json"] == two["results.json"]
    assert one["report.md"] == two["report.md"]
    fewer = json.loads(run(tmp_path, config(THREE[:2]), "fewer")["results.json"])
    full = json.loads(one["results.json"])
    assert fewer["designs"]["designs"] == full["designs"]["designs"][:2]
    assert fewer["scenarios"] == full["scenarios"]
    assert "## Designs side by side" in one["report.md"]


def test_absent_block_leaves_results_unchanged(tmp_path: Path) -> None:
    bare = run(tmp_path, config(None), "bare")
    with_designs = run(tmp_path, config(THREE[:1]), "with")
    a, b = json.loads(bare["results.json"]), json.loads(with_designs["results.json"])
    assert "designs" not in a and "designs" in b
    b.pop("designs")
    assert a == b
    assert "designs" not in json.loads(bare["provenance.json"])["settings"]
    assert "Designs side by side" not in bare["report.md"]
    assert with_designs["report.md"].startswith(bare["report.md"].split("## Operating char")[0])


def test_audit_passes_and_names_an_edited_designs_number(tmp_path: Path) -> None:
    out = tmp_path / "out"
    cfg = tmp_path / "c.json"
    cfg.write_text(json.dumps(config(THREE[:2])))
    assert main([str(cfg), "--out", str(out), "--quiet"]) == 0
    report = audit_run(out)
    assert report.failures() == []
    assert any(f.where.startswith("results.json $.designs") for f in report.findings)
    assert any(
        f.status == "unverified" and f.where.startswith("results.json $.designs")
        for f in report.findings
    )
    data = json.loads((out / "results.json").read_text())
    row = data["designs"]["designs"][1]["rows"][0]
    row["fixed_n_human_judgments"]["value"] += 1
    row["cost_per_valid_verdict"]["value"] *= 1.01
    (out / "results.json").write_text(json.dumps(data, indent=2))
    failures = {f.where for f in audit_run(out).failures()}
    base = "results.json $.designs.designs[1].rows[0]"
    assert base + ".fixed_n_human_judgments" in failures
    assert base + ".cost_per_valid_verdict" in failures


def test_one_human_per_root_uses_fewer_judgments_when_humans_agree(tmp_path: Path) -> None:
    """ICC 0.6: a root's second human adds little, so one per root reaches the verdict with
    fewer human judgments at the same P(verdict) (both ~1 with a long cap)."""
    data = config(THREE[:2], replicates=300, cap=1500)
    data["human"]["icc"] = 0.6
    data["scenarios"] = [{"name": "null"}]
    rows = [
        d["rows"][0]
        for d in json.loads(run(tmp_path, data, "icc")["results.json"])["designs"]["designs"]
    ]
    two, one = rows
    p = [1.0 - r["p_verdict"]["INCONCLUSIVE"]["value"] for r in rows]
    se = [r["p_verdict"]["INCONCLUSIVE"]["mcse"] for r in rows]
    assert abs(p[0] - p[1]) <= 3.0 * (se[0] + se[1]) + 1.0 / 300, p
    m2, m1 = two["human_judgments"], one["human_judgments"]
    assert m1["value"] + 3.0 * (m1["mcse"] + m2["mcse"]) < m2["value"], (m1, m2)


@pytest.mark.parametrize(
    ("designs", "path", "expected"),
    [
        ([THREE[0], {**THREE[1], "name": "today"}], "$.designs[1].name", "a name not used"),
        ([{**THREE[0], "bets": "kelly"}], "$.designs[0].bets", "grid"),
        ([{**THREE[0], "humans_per_root": 0}], "$.designs[0].humans_per_root", "1"),
        ([{"name": "x", "bets": "grid"}], "$.designs[0].humans_per_root", ""),
        ([{**THREE[0], "name": f"d{i}"} for i in range(7)], "$.designs", "6"),
        ([], "$.designs", "1"),
    ],
)
def test_bad_designs_refused_by_path(
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    designs: list[dict[str, Any]],
    path: str,
    expected: str,
) -> None:
    cfg = tmp_path / "bad.json"
    cfg.write_text(json.dumps(config(designs)))
    out = tmp_path / "out"
    assert main([str(cfg), "--out", str(out)]) == 2
    assert not out.exists()
    err = capsys.readouterr().err
    lines = [line for line in err.splitlines() if f": {path}: " in line]
    assert lines, err
    assert expected in lines[0], lines[0]
    assert "Traceback" not in err


def test_designs_replicates_must_fill_whole_blocks(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    cfg = tmp_path / "bad.json"
    cfg.write_text(json.dumps(config(THREE[:1], replicates=250)))
    assert main([str(cfg), "--out", str(tmp_path / "out")]) == 2
    err = capsys.readouterr().err
    assert "$.designs_replicates: " in err and "a multiple of block_size = 100" in err
