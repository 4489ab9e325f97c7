"""The shared config blocks (config/_blocks.py): sequential, routes and their cross rules."""

from __future__ import annotations

import copy
import json

import pytest
from pydantic import ValidationError

from conftest import load_example
from verdictpack.config._blocks import (
    DEFAULT_LAMBDAS,
    MAX_ROOTS,
    RoutesSpec,
    SequentialSpec,
    build_sequential,
    fixed_n_defect,
    route_rules,
)
from verdictpack.config._compiler import ConstructSpec, compile_construct
from verdictpack.simulate._panels import build_panel, panel_rules, summarize_panel


def _construct(**thresholds: float):
    spec = copy.deepcopy(load_example("verdict_summarization.json")["construct"])
    spec["thresholds"].update(thresholds)
    spec["extension_minimum_h"] = min(spec["extension_minimum_h"], thresholds.get("h", 1) / 3)
    return compile_construct(ConstructSpec.model_validate(spec))


def _check(rules, target) -> list[tuple]:
    return [issue for rule in rules for issue in rule.check(target)]


def _found(model, data: dict) -> list[tuple]:
    """The (path, received, expected) defects a model's own validators raise on ``data``."""
    try:
        model.model_validate(data)
    except ValidationError as exc:
        return [
            (tuple(e["loc"]) + rel, got, expected)
            for e in exc.errors()
            if e["type"] == "cross"
            for rel, got, expected in e["ctx"]["found"]
        ]
    return []


def test_sequential_defaults_and_constructions() -> None:
    spec = SequentialSpec.model_validate({"construction": "corners", "cap_roots": 10})
    settings = build_sequential(spec)
    assert settings.spec.lambdas == DEFAULT_LAMBDAS
    assert settings.spec.weights == pytest.approx([1 / len(DEFAULT_LAMBDAS)] * len(DEFAULT_LAMBDAS))
    assert settings.constructions() == ("corners", "hybrid")
    assert build_sequential(
        SequentialSpec.model_validate({"construction": "hybrid", "cap_roots": 10})
    ).constructions() == ("hybrid", "corners")


@pytest.mark.parametrize(
    "block",
    [
        {"construction": "other", "cap_roots": 10},
        {"construction": "hybrid", "cap_roots": 0},
        {"construction": "hybrid", "cap_roots": MAX_ROOTS + 1},
        {"construction": "hybrid", "cap_roots": 10, "lambdas": [1.0]},
        {"construction": "hybrid", "cap_roots": 10, "lambdas": []},
        {"construction": "hybrid", "cap_roots": 10, "unknown": 1},
    ],
)
def test_sequential_schema_refuses(block: dict) -> None:
    with pytest.raises(ValidationError):
        SequentialSpec.model_validate(block)


@pytest.mark.parametrize("bets", ["grid", "plugin", "blend", "horizon"])
def test_sequential_bets_round_trip_and_reach_the_settings(bets: str) -> None:
    block = {"construction": "hybrid", "cap_roots": 10, "bets": bets}
    spec = SequentialSpec.model_validate(block)
    again = SequentialSpec.model_validate(spec.model_dump(mode="json"))
    assert again == spec and again.bets == bets
    settings = build_sequential(again)
    assert settings.bets == bets
    want = {} if bets == "grid" else {"bets": bets}
    if bets == "horizon":  # the horizon bets record their design N: the cap they are tuned to
        want["horizon"] = 10
    assert settings.bets_record() == want
    default = SequentialSpec.model_validate({"construction": "hybrid", "cap_roots": 10})
    assert default.bets == "grid" and build_sequential(default).bets_record() == {}


def test_an_unknown_bets_name_is_refused_by_the_cli_naming_field_allowed_and_value(
    tmp_path, capsys
) -> None:
    from verdictpack._cli import main

    config = load_example("verdict_summarization.json")
    config["sequential"]["bets"] = "kelly"
    path = tmp_path / "bets.json"
    path.write_text(json.dumps(config, indent=2))
    out = tmp_path / "out"
    assert main([str(path), "--out", str(out)]) == 2
    err = capsys.readouterr().err
    assert "$.sequential.bets" in err and '"kelly"' in err
    assert "'grid', 'plugin', 'blend' or 'horizon'" in err and "Traceback" not in err
    assert not out.exists()


def test_sequential_rule_weights() -> None:
    base = {"construction": "hybrid", "cap_roots": 10}
    assert _found(SequentialSpec, {**base, "lambdas": [0.1, 0.2], "weights": [0.5, 0.5]}) == []
    (issue,) = _found(SequentialSpec, {**base, "lambdas": [0.1, 0.2], "weights": [1.0]})
    assert issue[0] == ("weights",) and "2 weights" in issue[2]
    (issue,) = _found(SequentialSpec, {**base, "weights": [0.5, 0.5]})  # default grid
    assert f"{len(DEFAULT_LAMBDAS)} weights" in issue[2]
    (issue,) = _found(SequentialSpec, {**base, "lambdas": [0.1, 0.2], "weights": [0.5, 0.6]})
    assert issue[2] == "weights summing to 1"


def test_fixed_n_defect_within_and_beyond_the_bound() -> None:
    n, defect = fixed_n_defect(_construct(), 0.8)
    assert defect is None and 1 <= n <= MAX_ROOTS
    n, defect = fixed_n_defect(_construct(h=0.001, odds_ratio=1.001), 0.8)
    assert n is None
    loc, expected = defect
    assert loc[0] == "construct" and f"{MAX_ROOTS:,} roots" in expected


def test_route_rule_reports_at_the_config_field() -> None:
    from verdictpack.kinds._verdict import VerdictConfig

    cfg = copy.deepcopy(load_example("verdict_summarization.json"))
    assert _check(route_rules(), VerdictConfig.model_validate(cfg)) == []
    cfg["construct"]["thresholds"] = {"h": 0.001, "odds_ratio": 1.001}
    cfg["construct"]["extension_minimum_h"] = 0.0004
    (issue,) = _check(route_rules(), VerdictConfig.model_validate(cfg))
    assert issue[0][0] == "construct" and issue[1] in (0.001, 1.001)


def test_routes_schema() -> None:
    RoutesSpec.model_validate({"sprt_beta": 0.2, "fixed_n_power": 0.8})
    with pytest.raises(ValidationError):
        RoutesSpec.model_validate({"sprt_beta": 0.5, "fixed_n_power": 0.8})


def test_panel_block_built_and_refused_at_its_path() -> None:
    from verdictpack.config._blocks import PanelSpec

    raw = copy.deepcopy(load_example("engine_summarization.json")["panel"])
    panel = build_panel(PanelSpec.model_validate(raw))
    assert panel.names == tuple(j["name"] for j in raw["judges"])
    summary = summarize_panel(PanelSpec.model_validate(raw))
    assert [j.name for j in summary.judges] == list(panel.names)
    assert _check(panel_rules(("panel",)), PanelSpec.model_validate(raw)) == []
    raw["judges"][1]["name"] = raw["judges"][0]["name"]
    (issue,) = _found(PanelSpec, raw)
    assert issue[0] == ("judges", 1, "name")
