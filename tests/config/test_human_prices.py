"""One place for the human price per kind of touch: ``human.cost_per_touch`` (engine) and
``humans.cost_per_touch`` (study) are inherited by every human touch whose own price is omitted;
an own price overrides; an engine touch with no price at all is refused by name; configs that
give every price (all of today's) read exactly as before."""

from __future__ import annotations

import copy
import json
from pathlib import Path

import pytest

from conftest import load_example, write_tiny_study
from verdictpack._cli import load_layer, main
from verdictpack._errors import ConfigError, InputError
from verdictpack.config._blocks import HumanPrices, price
from verdictpack.config._compiler import load_source, parse_config

OWN = (
    ("human", "cost_per_judgment"),
    ("human", "audit", "cost_per_reading"),
    ("stimuli", "spot_check", "cost_per_touch"),
)


def _engine() -> dict:
    data = copy.deepcopy(load_example("engine_summarization.json"))
    data["power"]["replicates"] = 50
    data["human"]["baseline"]["replicates"] = 1000
    return data


def _drop(data: dict, loc: tuple[str, ...]) -> None:
    cur = data
    for part in loc[:-1]:
        cur = cur[part]
    del cur[loc[-1]]


def _parsed(tmp_path: Path, data: dict, name: str = "e.json"):  # type: ignore[no-untyped-def]
    path = tmp_path / name
    path.write_text(json.dumps(data))
    layer = load_layer(data["kind"])
    return parse_config(load_source(path), layer.model, layer.rules)


def test_the_default_price_is_inherited_and_the_results_are_unchanged(tmp_path: Path) -> None:
    """Every engine price equal (0.4 in the example): one human.cost_per_touch in their place
    gives the same validated prices and byte-identical results."""
    full = _engine()
    assert {
        full["human"]["cost_per_judgment"],
        full["stimuli"]["spot_check"]["cost_per_touch"],
    } == {0.4}
    one = copy.deepcopy(full)
    for loc in OWN:
        _drop(one, loc)
    one["human"]["cost_per_touch"] = 0.4
    a, b = _parsed(tmp_path, full, "a.json"), _parsed(tmp_path, one, "b.json")
    assert b.human.cost_per_judgment == b.human.audit.cost_per_reading == 0.4
    assert b.stimuli.spot_check.cost_per_touch == 0.4
    assert a.human.audit == b.human.audit and a.stimuli == b.stimuli
    for name, data in (("a.json", full), ("b.json", one)):
        (tmp_path / name).write_text(json.dumps(data))
        assert main([str(tmp_path / name), "--out", str(tmp_path / name[0]), "--quiet"]) == 0
    for f in ("results.json", "report.md", "cost_comparison.csv"):
        assert (tmp_path / "a" / f).read_bytes() == (tmp_path / "b" / f).read_bytes(), f


def test_an_own_price_overrides_the_default(tmp_path: Path) -> None:
    data = _engine()
    _drop(data, ("human", "cost_per_judgment"))
    _drop(data, ("human", "audit", "cost_per_reading"))
    data["human"]["cost_per_touch"] = 0.5
    data["stimuli"]["spot_check"]["cost_per_touch"] = 0.1
    cfg = _parsed(tmp_path, data)
    assert cfg.human.cost_per_judgment == cfg.human.audit.cost_per_reading == 0.5
    assert cfg.stimuli.spot_check.cost_per_touch == 0.1


def test_a_touch_without_any_price_is_refused_naming_both_fields(tmp_path: Path, capsys) -> None:
    data = _engine()
    for loc in OWN:
        _drop(data, loc)
    with pytest.raises(ConfigError) as err:
        _parsed(tmp_path, data)
    got = {d.path: d.expected for d in err.value.defects}
    assert sorted(got) == sorted("$." + ".".join(loc) for loc in OWN)
    assert all("human.cost_per_touch" in e and "at line" in e for e in got.values())
    # one price given, two missing: only the two are refused
    data["human"]["cost_per_judgment"] = 0.4
    with pytest.raises(ConfigError) as err:
        _parsed(tmp_path, data)
    assert {d.path for d in err.value.defects} == {
        "$.human.audit.cost_per_reading",
        "$.stimuli.spot_check.cost_per_touch",
    }
    # an explicit null is no price either (and inherits the default where there is one)
    data["human"]["audit"]["cost_per_reading"] = None
    with pytest.raises(ConfigError) as err:
        _parsed(tmp_path, data)
    assert "$.human.audit.cost_per_reading" in {d.path for d in err.value.defects}
    data["human"]["cost_per_touch"] = 0.3
    assert _parsed(tmp_path, data).human.audit.cost_per_reading == 0.3
    del data["human"]["cost_per_touch"]
    # the CLI: exit 2, nothing written
    path = tmp_path / "e.json"
    path.write_text(json.dumps(data))
    assert main([str(path), "--out", str(tmp_path / "out")]) == 2
    assert not (tmp_path / "out").exists()
    assert "expected a price: this field, or human.cost_per_touch" in capsys.readouterr().err


def test_a_malformed_default_is_refused_where_it_is(tmp_path: Path) -> None:
    data = _engine()
    _drop(data, ("human", "cost_per_judgment"))
    data["human"]["cost_per_touch"] = -1.0
    with pytest.raises(ConfigError) as err:
        _parsed(tmp_path, data)
    paths = {d.path for d in err.value.defects}
    assert "$.human.cost_per_touch" in paths


def test_the_study_inherits_too_and_keeps_its_free_default(tmp_path: Path) -> None:
    cfg = write_tiny_study(tmp_path / "s")
    data = json.loads(cfg.read_text())
    layer = load_layer("study")
    plain = parse_config(load_source(cfg), layer.model, layer.rules)
    assert plain.humans.cost_per_touch is None
    assert plain.humans.cost_per_judgment == data.get("humans", {}).get("cost_per_judgment", 0.0)
    data.setdefault("humans", {}).pop("cost_per_judgment", None)
    data["data"]["reader_audit"].pop("cost_per_reading", None)
    data["humans"]["cost_per_touch"] = 0.25
    data["data"]["reader_audit"]["cost_per_reading"] = 0.5  # overrides
    cfg.write_text(json.dumps(data))
    priced = parse_config(load_source(cfg), layer.model, layer.rules)
    assert priced.humans.cost_per_judgment == 0.25
    assert priced.data.reader_audit.cost_per_reading == 0.5


def test_the_helper_refuses_an_unresolved_price_by_name() -> None:
    assert price(0.0, "x") == 0.0
    with pytest.raises(InputError) as err:
        price(None, "human.cost_per_judgment")
    assert err.value.parameter == "human.cost_per_judgment"
    prices = HumanPrices(("a", "d"), (("a", "x"), ("b", "y")), required=True)
    assert prices.inherit({"a": {"d": 2}, "b": {}}) == {"a": {"d": 2, "x": 2}, "b": {"y": 2}}
    assert prices.inherit({"a": {}, "b": {}}) == {"a": {}, "b": {}}
    raw = {"a": {"d": 2, "x": 1}}
    assert prices.inherit(raw) == {"a": {"d": 2, "x": 1}} and raw == {"a": {"d": 2, "x": 1}}
