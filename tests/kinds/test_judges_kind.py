"""The judges kind: composition priced next to accuracy; a bad panel fails fast and wrong."""

from __future__ import annotations

import copy
import json

import pytest

from conftest import load_example
from verdictpack._cli import main


def reduced() -> dict:
    cfg = copy.deepcopy(load_example("judges_summarization.json"))
    cfg["replicates"] = 200
    return cfg


@pytest.fixture(scope="module")
def results(tmp_path_factory) -> dict:
    root = tmp_path_factory.mktemp("judges")
    cfg = root / "c.json"
    cfg.write_text(json.dumps(reduced()))
    assert main([str(cfg), "--out", str(root / "out")]) == 0
    data = json.loads((root / "out" / "results.json").read_text())
    data["_report"] = (root / "out" / "report.md").read_text()
    return data


def comp(results: dict, name: str) -> dict:
    return next(c for c in results["compositions"] if c["name"] == name)


def test_adversarial_panel_is_confidently_wrong_and_fast(results) -> None:
    adv = comp(results, "adversarial")["effect_present"]["routes"][0]
    reg = comp(results, "registered")["effect_present"]["routes"][0]
    assert adv["p_wrong"]["value"] > 0.9
    assert adv["mean_roots"]["value"] < 0.5 * reg["mean_roots"]["value"]
    assert reg["p_wrong"]["value"] < 0.05


def test_effective_panel_size_beside_nominal(results) -> None:
    for c in results["compositions"]:
        j, rho = c["nominal_size"], c["latent_correlation"]
        assert c["effective_size"]["value"] == pytest.approx(j / (1 + (j - 1) * rho), rel=1e-12)
        assert c["effective_size"]["basis"] == "closed_form"


def test_report_prints_price_next_to_accuracy(results) -> None:
    report = results["_report"]
    assert "Price next to accuracy" in report
    for c in results["compositions"]:
        assert f"| {c['name']} |" in report
    assert "| human layer (cost) |" in report


@pytest.mark.parametrize(
    ("mutate", "path"),
    [
        (
            lambda c: c["compositions"][0]["judges"][0].__setitem__("baseline_rate", 1.2),
            "$.compositions[0].judges[0].baseline_rate",
        ),
        (
            lambda c: c["compositions"][0]["judges"][0].__setitem__("noise", 1.5),
            "$.compositions[0].judges[0].noise",
        ),
        (
            lambda c: c["compositions"][0]["judges"][1].__setitem__("name", "frontier-a"),
            "$.compositions[0].judges[1].name",
        ),
        (
            lambda c: c["compositions"][0].__setitem__("latent_correlation", -0.5),
            "$.compositions[0].latent_correlation",
        ),
        (lambda c: c["compositions"][0].__setitem__("judges", []), "$.compositions[0].judges"),
        (
            lambda c: c["compositions"][1].__setitem__("name", "registered"),
            "$.compositions[1].name",
        ),
        (
            lambda c: c["worlds"]["effect_present"].__setitem__("effect_scale", 0),
            "$.worlds.effect_present.effect_scale",
        ),
    ],
)
def test_refusals_by_name(tmp_path, capsys, mutate, path) -> None:
    cfg = reduced()
    mutate(cfg)
    p = tmp_path / "j.json"
    p.write_text(json.dumps(cfg))
    assert main([str(p)]) == 2
    assert f": {path}:" in capsys.readouterr().err


def test_a_world_no_panel_can_carry_is_refused_by_validate(tmp_path, capsys) -> None:
    """The world's rates are a rule of the config (validate refuses what the run would), named
    at the world's field with the composition that cannot carry it."""
    cfg = reduced()
    cfg["worlds"]["effect_present"]["effect_scale"] = 10.0
    p = tmp_path / "j.json"
    p.write_text(json.dumps(cfg))
    assert main(["validate", str(p)]) == 2
    err = capsys.readouterr().err
    assert ": $.worlds.effect_present.effect_scale: received 10.0; " in err
    assert "composition 'registered' in the effect_present world" in err
    assert "p ± δ must stay in [0, 1]" in err
