"""Every field `verdictpack schema KIND` prints carries a non-empty description."""

from __future__ import annotations

from typing import Any

import pytest

from verdictpack._cli import KINDS, load_layer


def _missing(schema: dict[str, Any]) -> list[str]:
    """JSON paths of the properties (root and every $defs model) without a description."""
    models: list[tuple[str, dict[str, Any]]] = [("#", schema)]
    models += [(f"#/$defs/{name}", model) for name, model in schema.get("$defs", {}).items()]
    missing = []
    for path, model in models:
        for name, prop in model.get("properties", {}).items():
            text = prop.get("description")
            if not isinstance(text, str) or not text.strip():
                missing.append(f"{path}/properties/{name}")
    return missing


def _property_count(schema: dict[str, Any]) -> int:
    models = [schema, *schema.get("$defs", {}).values()]
    return sum(len(model.get("properties", {})) for model in models)


@pytest.mark.parametrize("kind", sorted(KINDS))
def test_every_schema_field_has_a_description(kind: str) -> None:
    schema = load_layer(kind).model.model_json_schema()
    assert _property_count(schema) > 0, f"{kind}: the schema lists no fields"
    assert _missing(schema) == [], f"{kind}: fields without a description"


def test_the_walk_reports_a_nested_field_without_a_description() -> None:
    schema = {
        "properties": {"a": {"type": "integer", "description": "the a"}},
        "$defs": {"Inner": {"properties": {"b": {"type": "string"}, "c": {"description": " "}}}},
    }
    assert _missing(schema) == ["#/$defs/Inner/properties/b", "#/$defs/Inner/properties/c"]
