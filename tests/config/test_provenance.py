"""provenance.json: a pure function of the config bytes and seed, wall clock in one field."""

from __future__ import annotations

import json
from pathlib import Path

from verdictpack.config._compiler import load_source
from verdictpack.config._provenance import (
    WALL_CLOCK_FIELD,
    provenance,
    render_provenance,
    seed_commitment,
)


def _source(tmp_path: Path, text: str, name: str = "cfg.json"):
    path = tmp_path / name
    path.write_text(text)
    return load_source(str(path))


def test_seed_commitment_is_fixed_and_binds_both_inputs() -> None:
    c = seed_commitment(7, "ab" * 32)
    assert c == seed_commitment(7, "ab" * 32) and len(c) == 64
    assert c != seed_commitment(8, "ab" * 32)
    assert c != seed_commitment(7, "cd" * 32)


def test_canonical_hash_ignores_formatting_the_byte_hash_does_not(tmp_path: Path) -> None:
    a = provenance(_source(tmp_path, '{"kind": "x", "seed": 1}', "a.json"), "x", 1)
    b = provenance(_source(tmp_path, '{ "seed":1,\n "kind":"x" }', "b.json"), "x", 1)
    assert a.config_jcs_sha256 == b.config_jcs_sha256
    assert a.config_sha256 != b.config_sha256
    assert a.seed_commitment == b.seed_commitment == seed_commitment(1, a.config_jcs_sha256)


def test_no_machine_path_and_no_seed_no_commitment(tmp_path: Path) -> None:
    prov = provenance(_source(tmp_path, '{"kind": "x"}'), "x", None, {"k": 1})
    assert prov.config_name == "cfg.json" and str(tmp_path) not in json.dumps(prov.__dict__)
    assert prov.seed is None and prov.seed_commitment is None
    assert prov.settings == {"k": 1} and "verdictpack" in prov.tool


def test_only_the_wall_clock_differs(tmp_path: Path) -> None:
    prov = provenance(_source(tmp_path, '{"kind": "x", "seed": 3}'), "x", 3)
    one = json.loads(render_provenance(prov, {"elapsed_seconds": 1.0}))
    two = json.loads(render_provenance(prov, {"elapsed_seconds": 2.0}))
    assert one.pop(WALL_CLOCK_FIELD) != two.pop(WALL_CLOCK_FIELD)
    assert one == two
