"""The verdict layer: every route beside the e-process, each with its cost and its guarantee."""

from __future__ import annotations

import copy
import json
from pathlib import Path

import pytest

from conftest import load_example
from verdictpack._cli import main


def reduced(name: str) -> dict:
    cfg = copy.deepcopy(load_example(name))
    cfg["replicates"] = 300
    return cfg


@pytest.fixture(scope="module", params=["verdict_summarization.json", "verdict_length.json"])
def results(request, tmp_path_factory) -> dict:
    root = tmp_path_factory.mktemp("verdict")
    cfg = root / "c.json"
    cfg.write_text(json.dumps(reduced(request.param)))
    assert main([str(cfg), "--out", str(root / "out")]) == 0
    data = json.loads((root / "out" / "results.json").read_text())
    data["_report"] = (root / "out" / "report.md").read_text()
    return data


def test_two_constructs_through_the_same_code(results) -> None:
    names = [sc["scenario"] for sc in results["scenarios"]]
    assert names == ["null", "registered alternative", "above threshold"]
    for sc in results["scenarios"]:
        routes = [(r["route"], r["construction"]) for r in sc["routes"]]
        reg = results["construction"]
        other = "hybrid" if reg == "corners" else "corners"
        assert routes == [("eprocess", reg), ("eprocess", other), ("sprt", None), ("fixed_n", None)]
        for r in sc["routes"]:
            total = sum(p["value"] for p in r["p_verdict"].values())
            assert total == pytest.approx(1.0, abs=1e-12)
            assert r["max_roots"] <= r["cap"]
            assert r["mean_roots"]["value"] <= r["cap"]
            assert r["guarantee"]
            assert r["mean_cost"]["value"] == pytest.approx(
                r["mean_model_cost"]["value"] + r["mean_human_cost"]["value"], rel=1e-12
            )


def test_effect_present_is_found_and_null_is_not_claimed(results) -> None:
    null, _, above = results["scenarios"]
    for r in null["routes"]:
        if r["route"] == "eprocess":
            assert r["p_verdict"]["EFFECT_SUPPORTED"]["value"] == 0.0
    hybrid = next(r for r in above["routes"] if r["construction"] == "hybrid")
    assert hybrid["p_verdict"]["EFFECT_SUPPORTED"]["value"] > 0.3


def test_sprt_exact_anchors(results) -> None:
    """ln A and ln B depend only on alpha and beta (the same in both examples); the ASNs are
    anchored for the summarization construct and differ for the length construct."""
    s = results["sprt_exact"]
    assert s["log_a"] == pytest.approx(5.247024, abs=1e-6)
    assert s["log_b"] == pytest.approx(-2.990720, abs=1e-6)
    asn = (s["asn_h0"]["value"], s["asn_h1"]["value"])
    if results["construct"]["name"] == "llm-judges-prefer-llm-summaries":
        assert asn == pytest.approx((67.93, 112.77), abs=0.01)
        assert s["actual_alpha"]["value"] == pytest.approx(0.00448, abs=5e-5)
        assert s["actual_beta"]["value"] == pytest.approx(0.0432, abs=5e-5)
        assert s["fixed_n_exact"]["value"] == 202
    else:
        assert results["construct"]["name"] == "llm-judges-prefer-longer-texts"
        assert asn != pytest.approx((67.93, 112.77), abs=0.01)
        assert s["fixed_n_exact"]["value"] != 202
    # the exact error rates stay within the SPRT's design (Wald's bounds, up to overshoot)
    assert 0 < s["actual_alpha"]["value"] <= s["alpha"]
    assert 0 < s["actual_beta"]["value"] <= s["beta"]


def test_report_prints_cost_next_to_route_and_human_line(results) -> None:
    report = results["_report"]
    assert "| human layer (touches) |" in report
    assert "guarantee it carries" in report
    assert "anytime-valid" in report


def test_duplicate_scenario_names_refused(tmp_path, capsys) -> None:
    cfg = reduced("verdict_summarization.json")
    cfg["scenarios"][1]["name"] = "null"
    cfg["sequential"]["weights"] = [0.5, 0.5]
    p = tmp_path / "v.json"
    p.write_text(json.dumps(cfg))
    assert main([str(p)]) == 2
    err = capsys.readouterr().err
    assert "$.scenarios[1].name" in err
    assert "$.sequential.weights" in err


def test_lambda_outside_unit_interval_refused(tmp_path: Path, capsys) -> None:
    cfg = reduced("verdict_summarization.json")
    cfg["sequential"]["lambdas"] = [0.5, 1.0]
    p = tmp_path / "v.json"
    p.write_text(json.dumps(cfg))
    assert main([str(p)]) == 2
    assert "$.sequential.lambdas[1]" in capsys.readouterr().err
