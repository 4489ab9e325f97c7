"""The results contract (verdictpack/_contract.py): one typed, versioned schema per kind of
results.json, derived from the kind's result class; every committed results.json follows it."""

from __future__ import annotations

import copy
import json
from typing import Any

import pytest
from pydantic import ValidationError

from conftest import EXAMPLES
from verdictpack._cli import KINDS, main, result_class
from verdictpack._contract import RESULTS_SCHEMA_VERSION, document_model

COMMITTED = sorted(p.parent.name for p in (EXAMPLES / "outputs").glob("*/results.json"))


def _results(name: str) -> dict[str, Any]:
    data: dict[str, Any] = json.loads((EXAMPLES / "outputs" / name / "results.json").read_text())
    return data


def test_every_kind_has_a_committed_example() -> None:
    assert {_results(n)["kind"] for n in COMMITTED} == set(KINDS)


@pytest.mark.parametrize("name", COMMITTED)
def test_every_committed_results_json_follows_its_kinds_schema(name: str) -> None:
    data = _results(name)
    assert list(data)[:2] == ["kind", "schema_version"]
    assert data["schema_version"] == RESULTS_SCHEMA_VERSION
    document_model(data["kind"], result_class(data["kind"])).model_validate(data)


def _refused(data: dict[str, Any]) -> str:
    with pytest.raises(ValidationError) as info:
        document_model("verdict", result_class("verdict")).model_validate(data)
    return str(info.value)


def test_the_schema_refuses_unknown_missing_mistyped_and_unversioned() -> None:
    good = _results("verdict_length")
    bad = copy.deepcopy(good)
    bad["construct"]["nickname"] = "x"
    assert "construct.nickname" in _refused(bad)
    bad = copy.deepcopy(good)
    del bad["scenarios"][0]["routes"]
    assert "scenarios.0.routes" in _refused(bad)
    bad = copy.deepcopy(good)
    bad["cap_roots"] = "many"
    assert "cap_roots" in _refused(bad)
    bad = copy.deepcopy(good)
    bad["schema_version"] = RESULTS_SCHEMA_VERSION + 1
    assert "schema_version" in _refused(bad)
    del bad["schema_version"]
    assert "schema_version" in _refused(bad)


@pytest.mark.parametrize("kind", list(KINDS))
def test_schema_results_prints_a_versioned_schema(
    kind: str, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["schema", "results", kind]) == 0
    schema = json.loads(capsys.readouterr().out)
    assert schema["$id"] == f"verdictpack/results/{kind}/v{RESULTS_SCHEMA_VERSION}"
    assert schema["additionalProperties"] is False
    assert schema["properties"]["schema_version"]["const"] == RESULTS_SCHEMA_VERSION
    assert {"kind", "construct", "schema_version"} <= set(schema["required"])


def test_schema_results_refuses_an_unknown_kind(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["schema", "results", "nope"]) == 2
    err = capsys.readouterr().err
    assert "expected [results] and one kind from" in err and "nope" in err
