"""Reading and validating a config cost a small constant times its size (issue 22, row 14).

The positions that let a schema defect name its line used to be a table of every key and item
by JSON path, built for every config read: 10-15 times the file's size on top of the value (a
valid 10 MB config took over 300 MB). They are now found by reading the bytes again, only for the
paths a defect names, so a valid config costs its value alone, and a defect still names its
line and column exactly.

Validating (``verdictpack validate``: the schema, then the cross rules) used to copy the value,
validate each panel a second time for its cross rule and keep a set of given field names per
model object: 250-275 MB for a 10 MB config. The cross rules now read the model already built,
the value is read in place and the models share their sets of field names.
"""

from __future__ import annotations

import copy
import json
import tracemalloc
from pathlib import Path

import pytest

from conftest import load_example
from verdictpack._cli import load_layer
from verdictpack._errors import ConfigError
from verdictpack.config._compiler import load_source, parse_config

# peak bytes allocated while reading a valid JSON config (the bytes, their text and the decoded
# value together), per byte of the file: measured 5.2-5.3x on 1.3 and 5 MB configs of many small
# objects, 21x with the old table of positions
MAX_PEAK_PER_BYTE = 8.0
# peak bytes allocated while validating a config already read (schema and cross rules), per byte
# of the file: measured 3.6x on a 1.3 MB judges config, 16.7x before
MAX_VALIDATE_PEAK_PER_BYTE = 6.0


def _judges_config(judges: int) -> dict:
    """The judges example with one composition of ``judges`` distinct judges (the schema has
    no bound on their number): many small objects, the worst case per byte for a table of
    positions."""
    cfg = copy.deepcopy(load_example("judges_summarization.json"))
    comp = cfg["compositions"][0]
    template = comp["judges"][0]
    comp["judges"] = [{**template, "name": f"judge-{i:06d}"} for i in range(judges)]
    cfg["compositions"] = [comp]
    return cfg


def test_a_config_of_megabytes_is_read_within_a_small_constant_of_its_size(tmp_path: Path) -> None:
    path = tmp_path / "judges.json"
    path.write_text(json.dumps(_judges_config(8_000)), encoding="utf-8")
    size = path.stat().st_size
    assert size > 1_000_000
    tracemalloc.start()
    try:
        source = load_source(path)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert source.json()["compositions"][0]["judges"][-1]["name"] == "judge-007999"
    assert peak < MAX_PEAK_PER_BYTE * size, f"peak {peak / size:.1f} x the file's size"


def test_validating_a_config_of_megabytes_costs_a_small_constant_of_its_size(
    tmp_path: Path,
) -> None:
    path = tmp_path / "judges.json"
    path.write_text(json.dumps(_judges_config(8_000)), encoding="utf-8")
    size = path.stat().st_size
    source = load_source(path)
    layer = load_layer("judges")
    tracemalloc.start()
    try:
        parsed = parse_config(source, layer.model, layer.rules)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert parsed.compositions[0].judges[-1].name == "judge-007999"
    assert peak < MAX_VALIDATE_PEAK_PER_BYTE * size, f"peak {peak / size:.1f} x the file's size"


@pytest.mark.parametrize("indent", [None, 2])
def test_a_defect_deep_in_a_large_config_still_names_its_line_and_column(
    tmp_path: Path, indent: int | None
) -> None:
    cfg = _judges_config(3_000)
    cfg["compositions"][0]["judges"][2_500]["noise"] = "loud"
    del cfg["compositions"][0]["judges"][2_999]["lean_h"]
    text = json.dumps(cfg, indent=indent)
    path = tmp_path / "judges.json"
    path.write_text(text, encoding="utf-8")
    source = load_source(path)
    layer = load_layer("judges")
    with pytest.raises(ConfigError) as err:
        parse_config(source, layer.model, layer.rules)
    message = str(err.value)

    def line_column(offset: int) -> str:
        line = text.count("\n", 0, offset) + 1
        return f"line {line}, column {offset - (text.rfind(chr(10), 0, offset) + 1) + 1}"

    noise = text.index('"noise": "loud"')
    last = text.rindex('"name": "judge-002999"')
    judge = text.rindex("{", 0, last)  # a missing field: placed at its object
    lines = {line.split(": ")[1]: line for line in message.splitlines() if ": $" in line}
    assert f"at {line_column(noise)}" in lines["$.compositions[0].judges[2500].noise"]
    assert f"at {line_column(judge)}" in lines["$.compositions[0].judges[2999].lean_h"]
