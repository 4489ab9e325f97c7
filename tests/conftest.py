from __future__ import annotations

import json
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
EXAMPLES = ROOT / "examples"


def load_example(name: str) -> dict:
    return json.loads((EXAMPLES / name).read_text())


@pytest.fixture
def write_config(tmp_path: Path):
    """Write a config dict to a file in a fresh folder and return its path."""

    def _write(data: object, name: str = "config.json") -> Path:
        path = tmp_path / name
        path.write_text(json.dumps(data))
        return path

    return _write


def assert_refused_by_name(parameter: str, call) -> None:  # type: ignore[no-untyped-def]
    """``call()`` raises InputError naming ``parameter`` (attribute and message)."""
    from verdictpack._errors import InputError

    with pytest.raises(InputError) as err:
        call()
    assert err.value.parameter == parameter
    assert parameter in str(err.value)
