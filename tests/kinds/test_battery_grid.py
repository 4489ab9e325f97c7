"""The battery's grid of true h (kinds/_battery_grid.py): operating-characteristic curves that are
valid at h = 0, monotone in h, independent of the worker count and of the other grid points, and
refused with the grid's JSON path when malformed."""

from __future__ import annotations

import copy
import itertools
import json
import math
from pathlib import Path
from typing import Any

import pytest
from scipy.special import nctdtr

from conftest import load_example
from verdictpack._cli import main, run_config
from verdictpack.kinds._battery_grid import TrueHGridSpec, grid_purpose
from verdictpack.verify._kinds_grid import grid_power_by_integration

BATTERY = "battery_summarization.json"


def config(grid: dict[str, Any] | None, replicates: int = 200, cap: int = 150) -> dict[str, Any]:
    data = copy.deepcopy(load_example(BATTERY))
    data["replicates"], data["block_size"] = 100, 100
    data["sequential"]["cap_roots"] = cap
    data["scenarios"] = [{"name": "null"}]
    if grid is None:
        data.pop("true_h_grid", None)
    else:
        data["true_h_grid"] = {**grid, "replicates": replicates}
    return data


def run(tmp_path: Path, data: dict[str, Any], name: str, workers: int = 1) -> dict[str, str]:
    path = tmp_path / f"{name}.json"
    path.write_text(json.dumps(data))
    return run_config(str(path), workers=workers)


def rows(files: dict[str, str]) -> list[dict[str, Any]]:
    return list(json.loads(files["results.json"])["true_h_grid"]["rows"])


def route(row: dict[str, Any], name: str, construction: str | None = None) -> dict[str, Any]:
    return next(
        r
        for r in row["outcome"]["routes"]
        if r["route"] == name and (construction is None or r["construction"] == construction)
    )


# ----------------------------------------------------------------------------------------------
# The curves: validity at h = 0, monotone in h, the fixed-n closed form beside the simulation
# ----------------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def curves(tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    tmp = tmp_path_factory.mktemp("grid")
    return run(tmp, config({"start": 0.0, "stop": 0.9, "points": 4}, replicates=500), "curves")


def test_anytime_route_valid_at_true_h_zero(curves: dict[str, str]) -> None:
    result = json.loads(curves["results.json"])
    alpha = 2 * result["construct"]["per_tail_alpha"]  # the per-side error bound
    zero = rows(curves)[0]
    assert zero["true_h"] == 0.0 and zero["outcome"]["effect_exists"] is False
    for r in zero["outcome"]["routes"]:
        if r["route"] != "eprocess":
            continue
        p = r["p_verdict"]["EFFECT_SUPPORTED"]
        reps = p["replicates"]
        assert reps == 500
        assert p["value"] <= alpha + 3 * math.sqrt(alpha * (1 - alpha) / reps), r["construction"]


def test_power_monotone_in_true_h_within_mc_error(curves: dict[str, str]) -> None:
    points = rows(curves)
    assert [p["true_h"] for p in points] == [0.0, 0.3, 0.6, 0.9]
    for name, label in (
        ("eprocess", "EFFECT_SUPPORTED"),
        ("sprt", "EFFECT"),
        ("fixed_n", "EFFECT"),
    ):
        for construction in {r["construction"] for r in points[0]["outcome"]["routes"]}:
            if (name == "eprocess") != (construction is not None):
                continue
            ps = [route(p, name, construction)["p_verdict"][label] for p in points]
            for a, b in itertools.pairwise(ps):
                slack = 3 * math.hypot(a["mcse"], b["mcse"])
                assert b["value"] >= a["value"] - slack, (name, construction, ps)
            assert ps[-1]["value"] > ps[0]["value"], (name, construction)  # the curve rises


def test_every_row_sums_to_one_and_carries_cost(curves: dict[str, str]) -> None:
    for point in rows(curves):
        for r in point["outcome"]["routes"]:
            total = math.fsum(p["value"] for p in r["p_verdict"].values())
            assert abs(total - 1.0) < 1e-12
            for p in r["p_verdict"].values():
                reps = p["replicates"]
                assert p["mcse"] == pytest.approx(math.sqrt(p["value"] * (1 - p["value"]) / reps))
            assert r["mean_cost"]["value"] > 0 and r["mean_roots"]["value"] >= 1


def test_fixed_n_closed_form_beside_the_simulated_power(curves: dict[str, str]) -> None:
    result = json.loads(curves["results.json"])
    for point in rows(curves):
        cf = point["fixed_n_closed_form"]
        assert cf["n"] == result["fixed_n_roots"] and cf["power"]["basis"] == "closed_form"
        sim = route(point, "fixed_n")["p_verdict"]["EFFECT"]
        se = math.sqrt(cf["power"]["value"] * (1 - cf["power"]["value"]) / sim["replicates"])
        assert abs(sim["value"] - cf["power"]["value"]) <= 4 * se + 0.01, point["true_h"]
    zero = rows(curves)[0]["fixed_n_closed_form"]
    assert abs(zero["mean_d"]) < 1e-12 and zero["power"]["value"] == pytest.approx(
        cf["alpha"], abs=1e-12
    )


def test_grid_points_agree_with_the_named_scenarios_of_the_same_h(tmp_path: Path) -> None:
    # the same worlds on independent streams: equal parameters, rates equal within MC error
    data = config({"values": [0.0, 0.3, 0.45]}, replicates=400)
    data["replicates"] = 400
    data["scenarios"] = [
        {"name": "null"},
        {"name": "registered_alternative"},
        {"name": "above_threshold", "true_h": 0.45},
    ]
    result = json.loads(run(tmp_path, data, "same")["results.json"])
    for sc, point in zip(result["scenarios"], result["true_h_grid"]["rows"], strict=True):
        a, b = sc["outcome"], point["outcome"]
        assert (a["effect_scale"], a["mu_model"]) == (b["effect_scale"], b["mu_model"])
        for ra, rb in zip(a["routes"], b["routes"], strict=True):
            for label, pa in ra["p_verdict"].items():
                pb = rb["p_verdict"][label]
                pooled = (pa["value"] + pb["value"]) / 2
                se = math.sqrt(pooled * (1 - pooled) * 2 / 400)
                assert abs(pa["value"] - pb["value"]) <= 4.5 * se + 1e-12, (sc["label"], label)


def test_power_by_integration_matches_the_noncentral_t() -> None:
    for n, crit, nc in ((396, 2.59, 0.0), (396, 2.59, 3.1), (30, 1.7, 1.2), (2, 6.3, 0.5)):
        assert grid_power_by_integration(n, crit, nc) == pytest.approx(
            1 - float(nctdtr(n - 1, nc, crit)), abs=1e-8
        )


def test_report_has_one_table_per_route(curves: dict[str, str]) -> None:
    report = curves["report.md"]
    section = report.split("## Operating characteristics against the true h (grid)")[1]
    section = section.split("## Operating characteristics per scenario")[0]
    assert "500 replicates per point" in section
    assert section.count("| true h |") == 4  # e-process × 2 constructions, SPRT, fixed-n
    assert "P(EFFECT), closed form" in section
    table_rows = [line for line in section.splitlines() if line.startswith("| 0.")]
    assert len(table_rows) == 4 * 4


# ----------------------------------------------------------------------------------------------
# RNG policy: worker counts, adding a point, no grid at all
# ----------------------------------------------------------------------------------------------


def test_identical_on_one_and_two_workers(tmp_path: Path) -> None:
    data = config({"values": [0.0, 0.45]})
    one = run(tmp_path, data, "one", workers=1)
    two = run(tmp_path, data, "two", workers=2)
    assert one["results.json"] == two["results.json"]
    assert one["report.md"] == two["report.md"]


def test_adding_a_point_moves_no_other_number(tmp_path: Path) -> None:
    few = run(tmp_path, config({"values": [0.0, 0.45]}), "few")
    more = run(tmp_path, config({"values": [0.0, 0.2, 0.45]}), "more")
    bare = run(tmp_path, config(None), "bare")
    a, b = rows(few), rows(more)
    assert [a[0], a[1]] == [b[0], b[2]]
    assert b[1]["purpose"] == grid_purpose(0.2) == "battery-grid/h=0.2"
    scenarios = [json.loads(f["results.json"])["scenarios"] for f in (few, more, bare)]
    assert scenarios[0] == scenarios[1] == scenarios[2]


def test_no_grid_leaves_results_and_report_without_one(tmp_path: Path) -> None:
    files = run(tmp_path, config(None), "none")
    assert "true_h_grid" not in json.loads(files["results.json"])
    assert "true_h_grid" not in json.loads(files["provenance.json"])["settings"]
    assert "against the true h" not in files["report.md"]


def test_even_grid_values_rounded_and_ends_exact() -> None:
    spec = TrueHGridSpec.model_validate(
        {"start": 0.0, "stop": 0.6, "points": 13, "replicates": 100}
    )
    values = spec.grid()
    assert values[0] == 0.0 and values[-1] == 0.6 and len(values) == 13
    assert values[3] == 0.15 and values[7] == 0.35  # not 0.15000000000000002


# ----------------------------------------------------------------------------------------------
# Refusals: exit 2, the grid's JSON path, what was expected
# ----------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("grid", "path", "expected"),
    [
        ({"start": 0.0, "points": 5}, "$.true_h_grid.stop", "a value (a grid is start, stop"),
        (
            {"start": 0.0, "stop": 0.5, "points": 5, "values": [0.0, 0.1]},
            "$.true_h_grid.start",
            "no start, stop or points beside values",
        ),
        ({"start": 0.5, "stop": 0.2, "points": 5}, "$.true_h_grid.stop", "a true h above start"),
        ({"start": 0.0, "stop": 0.5, "points": 1}, "$.true_h_grid.points", "2"),
        ({"start": 0.0, "stop": 0.5, "points": 42}, "$.true_h_grid.points", "41"),
        ({"values": [0.0, 0.3, 0.3]}, "$.true_h_grid.values[2]", "strictly increasing"),
        ({"values": [0.2, 0.1]}, "$.true_h_grid.values[1]", "a true h above values[0]"),
        ({"values": [0.0, 1.5]}, "$.true_h_grid.values[1]", "reachable range [0, 1.1197"),
        ({"start": -0.2, "stop": 0.5, "points": 3}, "$.true_h_grid.start", "reachable range"),
        ({"start": 0.0, "stop": 2.0, "points": 3}, "$.true_h_grid.stop", "reachable range"),
        ({"values": [0.0, float("inf")]}, "$.true_h_grid.values[1]", "finite"),
        ({"values": [0.0]}, "$.true_h_grid.values", "at least 2"),
    ],
)
def test_bad_grid_refused_by_path(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], grid: dict, path: str, expected: str
) -> None:
    data = config(grid)
    cfg = tmp_path / "bad.json"
    cfg.write_text(json.dumps(data))
    out = tmp_path / "out"
    assert main([str(cfg), "--out", str(out)]) == 2
    assert not out.exists()
    err = capsys.readouterr().err
    lines = [line for line in err.splitlines() if f": {path}: " in line]
    assert lines, err
    assert expected in lines[0], lines[0]
    assert "Traceback" not in err


def test_grid_replicates_must_fill_whole_blocks(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    data = config({"values": [0.0, 0.3]}, replicates=250)
    cfg = tmp_path / "bad.json"
    cfg.write_text(json.dumps(data))
    assert main([str(cfg), "--out", str(tmp_path / "out")]) == 2
    err = capsys.readouterr().err
    assert "$.true_h_grid.replicates: " in err and "a multiple of block_size = 100" in err
