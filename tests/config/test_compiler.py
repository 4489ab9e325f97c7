"""The construct compiler: every registered field required, every defect named at once."""

from __future__ import annotations

import copy
import math

import pytest

from conftest import load_example
from verdictpack._errors import ConfigError
from verdictpack.config._compiler import compile_construct, load_source, parse_config
from verdictpack.core._scales import cohens_h, p_from_odds_ratio
from verdictpack.kinds._sizing import RULES, SizingConfig

BASE = load_example("sizing_summarization.json")


def refuse(data, write_config) -> ConfigError:
    path = write_config(data)
    with pytest.raises(ConfigError) as info:
        parse_config(load_source(path), SizingConfig, RULES)
    return info.value


def paths(err: ConfigError) -> list[str]:
    return [d.path for d in err.defects]


def test_example_compiles_and_smaller_threshold_governs() -> None:
    cfg = SizingConfig.model_validate(BASE)
    c = compile_construct(cfg.construct_spec)
    p1 = p_from_odds_ratio(0.5, 2.0)
    assert math.isclose(c.threshold_h_from_odds_ratio, cohens_h(p1, 0.5), rel_tol=1e-12)
    assert c.governs == "h" and c.governing_threshold_h == 0.3
    assert math.isclose(c.p1_at_threshold, 0.647760, abs_tol=5e-6)


def test_odds_ratio_governs_when_smaller(write_config) -> None:
    data = copy.deepcopy(BASE)
    data["construct"]["thresholds"] = {"h": 0.5, "odds_ratio": 1.5}
    cfg = parse_config(load_source(write_config(data)), SizingConfig, RULES)
    c = compile_construct(cfg.construct_spec)
    assert c.governs == "odds_ratio"
    assert c.governing_threshold_h < 0.5


def test_the_four_defects_of_the_acceptance_are_all_named(write_config) -> None:
    data = copy.deepcopy(BASE)
    del data["construct"]["thresholds"]["h"]
    data["construct"]["e_boundary"] = 500
    data["construct"]["human_baseline_rate"] = 1.2
    data["construct"]["treshold"] = 0.3
    err = refuse(data, write_config)
    assert sorted(paths(err)) == sorted(
        [
            "$.construct.thresholds.h",
            "$.construct.e_boundary",
            "$.construct.human_baseline_rate",
            "$.construct.treshold",
        ]
    )
    text = str(err)
    assert "500" in text and "400" in text and "1.2" in text and "treshold" in text
    assert all(d.file.endswith("config.json") for d in err.defects)


REQUIRED = [
    "name",
    "version",
    "transformation",
    "metric",
    "direction",
    "human_baseline_rate",
    "thresholds",
    "extension_minimum_h",
    "alpha",
    "stream_roles",
    "registered_claim",
    "extension_claim",
    "known_confounds",
]


@pytest.mark.parametrize("field", REQUIRED)
def test_every_registered_field_is_required(field, write_config) -> None:
    data = copy.deepcopy(BASE)
    del data["construct"][field]
    err = refuse(data, write_config)
    assert f"$.construct.{field}" in paths(err)
    assert "required" in str(err)


INVALID = [
    ("human_baseline_rate", 0.0),
    ("human_baseline_rate", 1.0),
    ("human_baseline_rate", -0.2),
    ("human_baseline_rate", "0.5"),
    ("human_baseline_rate", None),
    ("human_baseline_rate", True),
    ("alpha", 0.0),
    ("alpha", 0.5),
    ("alpha", 2),
    ("per_tail_alpha", 0.0),
    ("per_tail_alpha", 0.7),
    ("e_boundary", 1.0),
    ("e_boundary", -400),
    ("extension_minimum_h", 0.0),
    ("extension_minimum_h", -0.1),
    ("direction", "up"),
    ("name", ""),
    ("version", 3),
    ("known_confounds", {}),
    ("stream_roles", {"model": "x"}),
    ("thresholds", {"h": 0.3}),
    ("thresholds", {"h": -0.3, "odds_ratio": 2.0}),
    ("thresholds", {"h": 0.3, "odds_ratio": 0.9}),
    ("thresholds", {"h": 0, "odds_ratio": 2.0}),
]


@pytest.mark.parametrize(("field", "value"), INVALID)
def test_invalid_values_are_refused_with_path_and_value(field, value, write_config) -> None:
    data = copy.deepcopy(BASE)
    data["construct"][field] = value
    err = refuse(data, write_config)
    assert any(p.startswith(f"$.construct.{field}") for p in paths(err)), paths(err)
    for d in err.defects:
        assert d.expected and d.path.startswith("$")


def test_extension_minimum_above_registered_threshold_is_refused(write_config) -> None:
    data = copy.deepcopy(BASE)
    data["construct"]["extension_minimum_h"] = 0.31
    err = refuse(data, write_config)
    assert paths(err) == ["$.construct.extension_minimum_h"]
    assert "0.3" in err.defects[0].expected


def test_per_tail_alpha_must_be_a_quarter_of_alpha(write_config) -> None:
    data = copy.deepcopy(BASE)
    data["construct"]["per_tail_alpha"] = 0.005
    data["construct"]["e_boundary"] = 200
    err = refuse(data, write_config)
    assert paths(err) == ["$.construct.per_tail_alpha"]


def test_unreachable_threshold_is_refused(write_config) -> None:
    data = copy.deepcopy(BASE)
    data["construct"]["human_baseline_rate"] = 0.95
    data["construct"]["thresholds"]["h"] = 0.7
    err = refuse(data, write_config)
    assert "$.construct.thresholds.h" in paths(err)


def test_confound_crossing_must_name_listed_confounds(write_config) -> None:
    data = copy.deepcopy(BASE)
    data["construct"]["known_confounds"][0]["crossed_with"] = ["framing", "position"]
    err = refuse(data, write_config)
    assert paths(err) == [
        "$.construct.known_confounds[0].crossed_with[0]",
        "$.construct.known_confounds[0].crossed_with[1]",
    ]


def test_unknown_confound_name_refused(write_config) -> None:
    data = copy.deepcopy(BASE)
    data["construct"]["known_confounds"][0]["name"] = "colour"
    err = refuse(data, write_config)
    assert "$.construct.known_confounds[0].name" in paths(err)


def test_binomial_arm_needs_exactly_one_alternative(write_config) -> None:
    data = copy.deepcopy(BASE)
    data["arms"][1]["p1"] = 0.6
    data["arms"][2].pop("p1")
    err = refuse(data, write_config)
    assert sorted(paths(err)) == ["$.arms[1]", "$.arms[2]"]


def test_unknown_arm_test_and_arm_key(write_config) -> None:
    data = copy.deepcopy(BASE)
    data["arms"][0]["dzz"] = 1
    data["arms"][3]["test"] = "chi_square"
    err = refuse(data, write_config)
    assert "$.arms[0].dzz" in paths(err)
    assert "$.arms[3].test" in paths(err) or "$.arms[3]" in paths(err)


def test_top_level_must_be_object(write_config) -> None:
    err = refuse([1, 2], write_config)
    assert paths(err) == ["$"]


def test_per_tail_alpha_and_e_boundary_may_be_omitted_and_are_derived(tmp_path) -> None:
    import json

    from conftest import EXAMPLES
    from verdictpack._cli import main

    cfg = json.loads((EXAMPLES / "sizing_summarization.json").read_text())
    del cfg["construct"]["per_tail_alpha"], cfg["construct"]["e_boundary"]
    path = tmp_path / "c.json"
    path.write_text(json.dumps(cfg))
    assert main([str(path), "--out", str(tmp_path / "o"), "--quiet"]) == 0
    construct = json.loads((tmp_path / "o" / "results.json").read_text())["construct"]
    alpha = cfg["construct"]["alpha"]
    assert construct["per_tail_alpha"] == alpha / 4 and construct["e_boundary"] == 4 / alpha
    cfg["construct"]["e_boundary"] = 4 / alpha + 1  # given alone, still checked
    path.write_text(json.dumps(cfg))
    assert main([str(path)]) == 2


@pytest.mark.parametrize(
    ("edit", "loc"),
    [
        ({"e_boundary": 500}, ("e_boundary",)),
        ({"per_tail_alpha": 0.004}, ("per_tail_alpha",)),
        ({"extension_minimum_h": 0.5}, ("extension_minimum_h",)),
        ({"thresholds": {"h": 3.0, "odds_ratio": 2.0}}, ("thresholds", "h")),
    ],
)
def test_the_construct_model_itself_refuses_what_its_fields_contradict(edit, loc) -> None:
    """A construct built through the API is held to the same rules as a config file: the rules
    between its fields are the model's own, each reported at its field's path."""
    from pydantic import ValidationError

    from verdictpack.config._compiler import ConstructSpec

    spec = {**copy.deepcopy(BASE["construct"]), **edit}
    with pytest.raises(ValidationError) as info:
        ConstructSpec.model_validate(spec)
    (err,) = info.value.errors()
    found = err["ctx"]["found"] if err["type"] == "cross" else [((), None, None)]
    assert {tuple(err["loc"]) + rel for rel, _, _ in found} == {loc}
