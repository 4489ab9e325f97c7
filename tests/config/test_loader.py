"""The loader refuses every malformed input by name, before any work, and writes nothing.

One test per refusal: duplicate keys, NaN / Infinity / -Infinity, nesting past the bound, integers
past every field's bound, numbers overflowing a float, lone surrogates, a path that is not a
regular file (a FIFO, a device), an unreadable or oversized file. Each exits 2 with the file and
the JSON path in the one message shape, no traceback, and no ``--out`` folder. ``-0.0`` reads as
``0.0``: one canonical config, one set of output bytes.
"""

from __future__ import annotations

import copy
import json
import math
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
from pydantic import ValidationError

from conftest import load_example
from verdictpack._cli import main
from verdictpack._errors import ConfigError, format_value
from verdictpack.config._compiler import (
    MAX_CONFIG_BYTES,
    MAX_DEPTH,
    MAX_INTEGER,
    ConstructSpec,
    load_source,
)
from verdictpack.config._loader import decode_config_at

# every defect line: FILE: PATH: received VALUE; expected WHAT
SHAPE = re.compile(r"^(?P<file>.+?): (?P<path>\$\S*): received (?P<received>.+?); expected .+$")


def _sizing_text(seed: str = "20261130", replicates: int = 1000) -> str:
    """The sizing example as JSON text (shrunk to run quickly), seed left as raw text."""
    data = copy.deepcopy(load_example("sizing_summarization.json"))
    data["simulation"]["replicates"] = replicates
    data["seed"] = 0
    return json.dumps(data, indent=2).replace('"seed": 0', f'"seed": {seed}', 1)


def _alpha_text(raw: str) -> str:
    """The sizing example with ``raw`` written as the construct's alpha."""
    anchor = '"alpha": 0.01,\n    "per_tail_alpha"'
    text = _sizing_text()
    assert text.count(anchor) == 1
    return text.replace(anchor, f'"alpha": {raw},\n    "per_tail_alpha"')


def refused(tmp_path: Path, capsys, content: str | bytes | None, *, cfg: Path | None = None):
    """Run the CLI with --out on ``content`` (or on ``cfg`` as is); it must be refused by name.
    Returns the defect lines as (path, received) pairs and the whole stderr."""
    if cfg is None:
        cfg = tmp_path / "config.json"
        data = content.encode("utf-8") if isinstance(content, str) else content
        cfg.write_bytes(data or b"")
    out = tmp_path / "out"
    before = sorted(p.name for p in tmp_path.iterdir())
    code = main([str(cfg), "--out", str(out), "--quiet"])
    captured = capsys.readouterr()
    err = captured.err
    assert code == 2, err
    assert "Traceback" not in err + captured.out
    assert not out.exists()
    assert sorted(p.name for p in tmp_path.iterdir()) == before, "something was written"
    defects = []
    for line in err.splitlines():
        if line.startswith("verdictpack: config refused"):
            continue
        m = SHAPE.match(line)
        assert m is not None, f"not in the shape FILE: PATH: received VALUE; expected WHAT: {line}"
        assert m["file"] == str(cfg)
        defects.append((m["path"], m["received"]))
    assert defects, err
    return defects, err


def test_the_shrunk_base_is_accepted(tmp_path: Path) -> None:
    cfg = tmp_path / "config.json"
    cfg.write_text(_alpha_text("0.01"))
    assert main([str(cfg), "--out", str(tmp_path / "out"), "--quiet"]) == 0


def test_duplicate_key_is_refused_with_path_and_lines(tmp_path, capsys) -> None:
    text = _alpha_text('0.01, "alpha": 0.01')  # the same value twice: still refused
    defects, err = refused(tmp_path, capsys, text)
    assert defects == [("$.construct.alpha", '"alpha"')]
    line = 1 + text[: text.index('"alpha"')].count("\n")
    assert f"first at line {line}," in err and f"repeated at line {line}," in err


def test_duplicate_top_level_key_is_refused(tmp_path, capsys) -> None:
    text = _sizing_text().replace('"kind": "sizing",', '"kind": "sizing", "kind": "verdict",')
    defects, _ = refused(tmp_path, capsys, text)
    assert defects == [("$.kind", '"kind"')]


def test_duplicate_keys_are_all_listed(tmp_path, capsys) -> None:
    text = _alpha_text('0.01, "alpha": 0.01').replace('"h": 0.3,', '"h": 0.3, "h": 0.2,')
    defects, _ = refused(tmp_path, capsys, text)
    assert [p for p, _ in defects] == ["$.construct.thresholds.h", "$.construct.alpha"]


@pytest.mark.parametrize("token", ["NaN", "Infinity", "-Infinity"])
def test_non_json_constants_are_refused(tmp_path, capsys, token) -> None:
    defects, err = refused(tmp_path, capsys, _alpha_text(token))
    assert defects == [("$.construct.alpha", token)]
    assert "are not JSON" in err and "line 16" in err


def test_non_json_constant_inside_a_list_names_the_index(tmp_path, capsys) -> None:
    text = _sizing_text().replace('"check_n": [\n        32\n      ]', '"check_n": [32, NaN]')
    defects, _ = refused(tmp_path, capsys, text)
    assert defects == [("$.arms[0].check_n[1]", "NaN")]


@pytest.mark.parametrize("levels", [MAX_DEPTH + 1, 10_000, 200_000])
def test_deep_nesting_is_refused_without_recursion_error(tmp_path, capsys, levels) -> None:
    defects, err = refused(tmp_path, capsys, _alpha_text("[" * levels + "]" * levels))
    assert len(defects) == 1
    path = defects[0][0]
    assert path.startswith("$.construct.alpha[0]")
    # the document and the construct are 2 levels: the 65th opens inside 62 arrays at alpha
    assert path == "$.construct.alpha" + "[0]" * (MAX_DEPTH - 2)
    assert "RecursionError" not in err and f"at most {MAX_DEPTH} levels" in err


def test_unclosed_deep_nesting_is_refused(tmp_path, capsys) -> None:
    defects, _ = refused(tmp_path, capsys, "[" * 10_000)
    assert defects[0][0].startswith("$[0][0]")


def test_nesting_at_the_bound_is_not_a_depth_refusal(tmp_path, capsys) -> None:
    inner = MAX_DEPTH - 2  # alpha sits at depth 2
    defects, err = refused(tmp_path, capsys, _alpha_text("[" * inner + "]" * inner))
    assert defects[0][0] == "$.construct.alpha"  # refused by the schema (not a number) instead
    assert "levels of nested" not in err


@pytest.mark.parametrize(
    "raw", [str(10**400), "1" + "0" * 5000, str(MAX_INTEGER + 1), str(-(MAX_INTEGER + 1))]
)
def test_overlong_integers_are_refused_before_conversion(tmp_path, capsys, raw) -> None:
    defects, err = refused(tmp_path, capsys, _sizing_text(seed=raw))
    assert len(defects) == 1 and defects[0][0] == "$.seed"
    assert defects[0][1] == (raw if len(raw) <= 80 else raw[:77] + "...")
    assert str(MAX_INTEGER) in err and "line 3" in err
    assert "Exceeds the limit" not in err


def test_the_largest_exact_integer_is_accepted(tmp_path: Path) -> None:
    cfg = tmp_path / "config.json"
    cfg.write_text(_sizing_text(seed=str(MAX_INTEGER)))
    out = tmp_path / "out"
    assert main([str(cfg), "--out", str(out), "--quiet"]) == 0
    assert json.loads((out / "provenance.json").read_text())["seed"] == MAX_INTEGER


@pytest.mark.parametrize("raw", ["1e400", "-1e400", "1.5e999"])
def test_numbers_overflowing_a_float_are_refused(tmp_path, capsys, raw) -> None:
    defects, err = refused(tmp_path, capsys, _alpha_text(raw))
    assert defects == [("$.construct.alpha", raw)]
    assert "64-bit float" in err


def test_lone_surrogate_is_refused(tmp_path, capsys) -> None:
    text = _sizing_text().replace('"version": "1.0.0"', '"version": "1.0.0\\ud800"')
    defects, _ = refused(tmp_path, capsys, text)
    assert defects == [("$.construct.version", '"1.0.0\\ud800"')]


def test_kind_of_the_wrong_type_is_refused(tmp_path, capsys) -> None:
    text = _sizing_text().replace('"kind": "sizing"', '"kind": []')
    defects, _ = refused(tmp_path, capsys, text)
    assert defects == [("$.kind", "[]")]


def test_negative_zero_reads_as_zero_and_gives_the_same_bytes(tmp_path: Path) -> None:
    data = copy.deepcopy(load_example("verdict_summarization.json"))
    data["replicates"] = 100
    data["sequential"]["cap_roots"] = 60
    assert data["scenarios"][0]["true_h"] == 0.0
    text = json.dumps(data, indent=2)
    assert text.count('"true_h": 0.0') == 1
    runs = {}
    for name, raw in (("plus", "0.0"), ("minus", "-0.0")):
        cfg = tmp_path / name / "config.json"
        cfg.parent.mkdir()
        cfg.write_text(text.replace('"true_h": 0.0', f'"true_h": {raw}'))
        value = load_source(cfg).json()["scenarios"][0]["true_h"]
        assert value == 0.0 and math.copysign(1.0, value) == 1.0
        out = tmp_path / name / "out"
        assert main([str(cfg), "--out", str(out), "--quiet"]) == 0
        runs[name] = out
    for name in ("report.md", "results.json"):
        assert (runs["plus"] / name).read_bytes() == (runs["minus"] / name).read_bytes()
    prov = [json.loads((runs[k] / "provenance.json").read_text()) for k in ("plus", "minus")]
    assert prov[0]["config_jcs_sha256"] == prov[1]["config_jcs_sha256"]
    assert prov[0]["seed_commitment"] == prov[1]["seed_commitment"]
    assert prov[0]["config_sha256"] != prov[1]["config_sha256"]  # the bytes do differ


@pytest.mark.parametrize("suffix", [".json", ".yaml"])
def test_a_byte_order_mark_is_not_content_and_utf16_is_named(tmp_path: Path, suffix) -> None:
    """Notepad saves UTF-8 with a byte-order mark: the config reads as without it (one value,
    one canonical hash); a UTF-16 config is refused naming the encoding, its line and byte."""
    text = json.dumps(load_example("sizing_summarization.json"), indent=2)
    plain, marked = tmp_path / f"plain{suffix}", tmp_path / f"marked{suffix}"
    plain.write_bytes(text.encode())
    marked.write_bytes(b"\xef\xbb\xbf" + text.encode())
    assert load_source(marked).json() == load_source(plain).json()
    if suffix == ".json":  # and the self-audit's own reader agrees
        out = tmp_path / "out"
        assert main([str(marked), "--out", str(out), "--quiet"]) == 0
        assert main(["audit", str(out), "--config", str(marked)]) == 0
    with pytest.raises(ConfigError) as err:
        decode_config_at(text.encode("utf-16"), f"c{suffix}")
    (d,) = err.value.defects
    syntax = "YAML" if suffix == ".yaml" else "JSON"
    assert d.expected == f"UTF-8 encoded {syntax} (this file is UTF-16, as 'Unicode Text' is " + (
        "saved: save it as UTF-8)"
    )
    assert format_value(d.received) == "byte 0xFF at column 1 of line 1"
    with pytest.raises(ConfigError) as err:
        decode_config_at(b'{\n  "kind":\n "\xe9t\xe9"}', f"c{suffix}")
    assert "byte 0xE9 at column 3 of line 3" in str(err.value)


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="no FIFOs on this platform")
def test_fifo_is_refused_without_hanging(tmp_path: Path) -> None:
    fifo = tmp_path / "config.json"
    os.mkfifo(fifo)
    out = tmp_path / "out"
    proc = subprocess.run(
        [sys.executable, "-m", "verdictpack", str(fifo), "--out", str(out)],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert proc.returncode == 2, proc.stderr
    assert f"{fifo}: $: received (a FIFO); expected a regular JSON config file" in proc.stderr
    assert "Traceback" not in proc.stderr
    assert not out.exists()


@pytest.mark.skipif(not Path("/dev/null").exists(), reason="no /dev/null")
def test_device_is_refused(tmp_path, capsys) -> None:
    defects, _ = refused(tmp_path, capsys, None, cfg=Path("/dev/null"))
    assert defects == [("$", "(a character device)")]


def test_unreadable_file_is_refused_up_front(tmp_path, capsys, monkeypatch) -> None:
    cfg = tmp_path / "config.json"
    cfg.write_text(_sizing_text())
    cfg.chmod(0)
    if os.geteuid() == 0 if hasattr(os, "geteuid") else False:
        # root reads through permission bits: let the open fail as it would for anyone else
        real_open = os.open

        def denied(path, flags, *args, **kwargs):  # type: ignore[no-untyped-def]
            if Path(path) == cfg:
                raise PermissionError(13, "Permission denied", str(path))
            return real_open(path, flags, *args, **kwargs)

        monkeypatch.setattr(os, "open", denied)
    try:
        defects, err = refused(tmp_path, capsys, None, cfg=cfg)
    finally:
        cfg.chmod(0o600)
    assert defects == [("$", "(unreadable)")]
    assert "a readable file (Permission denied)" in err


def test_oversized_file_is_refused(tmp_path, capsys) -> None:
    cfg = tmp_path / "config.json"
    with cfg.open("wb") as handle:  # sparse: costs no disk
        handle.truncate(MAX_CONFIG_BYTES + 1)
    defects, _ = refused(tmp_path, capsys, None, cfg=cfg)
    assert defects == [("$", "(a larger file)")]


def test_missing_file_in_a_missing_folder(tmp_path, capsys) -> None:
    defects, err = refused(tmp_path, capsys, None, cfg=tmp_path / "nope" / "config.json")
    assert defects == [("$", "(missing)")] and "no such file" in err


def test_api_models_refuse_non_finite_floats() -> None:
    spec = copy.deepcopy(load_example("sizing_summarization.json")["construct"])
    ConstructSpec.model_validate(spec)
    for value in (math.inf, math.nan):
        bad = copy.deepcopy(spec)
        bad["e_boundary"] = value
        with pytest.raises(ValidationError):
            ConstructSpec.model_validate(bad)
