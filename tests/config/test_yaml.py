"""YAML configs beside JSON: the same value, the same defect messages (file, JSON path, line),
and a refusal for everything YAML readers disagree on (tags, anchors, aliases, merge keys,
non-string keys, repeated keys at any depth, non-finite numbers, YAML 1.1 booleans, octals,
dates, sexagesimals, exponents without a dot).
"""

from __future__ import annotations

import copy
import hashlib
import json
import re
from pathlib import Path

import pytest
import rfc8785
import yaml

from conftest import EXAMPLES, load_example
from verdictpack._cli import load_layer, main
from verdictpack._errors import ConfigError
from verdictpack.config._compiler import load_source, parse_config
from verdictpack.config._loader import decode_config_at

SHAPE = re.compile(r"^(?P<file>.+?): (?P<path>\$\S*): received (?P<received>.+?); expected .+$")
KINDS_OF_EXAMPLES = sorted(p.name for p in EXAMPLES.glob("*.json"))


def _yaml_text(data: object) -> str:
    return yaml.safe_dump(data, sort_keys=False, allow_unicode=True, width=1000)


def _refused(text: str, name: str = "c.yaml") -> list[tuple[str, str, str]]:
    """(path, received, expected) of every defect the decoder finds in ``text``."""
    with pytest.raises(ConfigError) as err:
        decode_config_at(text.encode("utf-8"), name)
    out = []
    for d in err.value.defects:
        m = SHAPE.match(d.message())
        assert m is not None and m["file"] == name, d.message()
        out.append((d.path, m["received"], d.expected))
    return out


def _small_sizing() -> dict:
    data = copy.deepcopy(load_example("sizing_summarization.json"))
    data["simulation"]["replicates"] = 1000
    return data


# ----------------------------------------------------------------------------------------------
# The same value as JSON
# ----------------------------------------------------------------------------------------------


@pytest.mark.parametrize("name", KINDS_OF_EXAMPLES)
def test_every_example_reads_the_same_as_yaml_as_json(tmp_path: Path, name: str) -> None:
    """Each example written as YAML: the same decoded value (so the same RFC 8785 hash in
    provenance), the same validated model; and PyYAML's safe loader (the reader verify uses)
    reads the same value as the strict loader."""
    data = load_example(name)
    jpath = tmp_path / name
    jpath.write_text(json.dumps(data, indent=2))
    ypath = tmp_path / (Path(name).stem + ".yaml")
    text = _yaml_text(data)
    ypath.write_text(text)
    js, ys = load_source(jpath), load_source(ypath)
    assert ys.json() == js.json() == data
    assert rfc8785.dumps(ys.json()) == rfc8785.dumps(js.json())
    assert yaml.safe_load(text) == ys.json()
    layer = load_layer(data["kind"])
    assert parse_config(ys, layer.model, layer.rules) == parse_config(js, layer.model, layer.rules)


def test_a_commented_yaml_config_compiles_to_the_json_one(tmp_path: Path) -> None:
    yml = tmp_path / "c.yml"
    yml.write_text(
        "# a construct, with comments\n"
        "kind: sizing   # the kind\n"
        "seed: 20261130\n"
        "construct:\n"
        + "".join(f"  {k}: {json.dumps(v)}\n" for k, v in _small_sizing()["construct"].items())
        + "".join(
            f"{k}: {json.dumps(v)}\n"
            for k, v in _small_sizing().items()
            if k not in ("kind", "seed", "construct")
        )
    )
    jsn = tmp_path / "c.json"
    jsn.write_text(json.dumps(_small_sizing()))
    layer = load_layer("sizing")
    a = parse_config(load_source(yml), layer.model, layer.rules)
    b = parse_config(load_source(jsn), layer.model, layer.rules)
    assert a == b


def test_plain_scalars_read_where_yaml_1_1_and_1_2_agree() -> None:
    text = (
        "a: 12\nb: -3\nc: 0.25\nd: 1.0e-4\ne: -0.0\nf: true\ng: False\nh: null\ni: ~\nj:\n"
        "k: plain text\nl: '010'\nm: \"yes\"\no: |\n  block\n"
    )
    value, _ = decode_config_at(text.encode(), "c.yaml")
    assert value == {
        "a": 12,
        "b": -3,
        "c": 0.25,
        "d": 0.0001,
        "e": 0.0,
        "f": True,
        "g": False,
        "h": None,
        "i": None,
        "j": None,
        "k": "plain text",
        "l": "010",
        "m": "yes",
        "o": "block\n",
    }
    assert yaml.safe_load(text) == value  # -0.0 == 0.0 too


# ----------------------------------------------------------------------------------------------
# Every defect class, with its message
# ----------------------------------------------------------------------------------------------


def test_repeated_keys_are_refused_at_any_depth_naming_both_lines() -> None:
    text = "a: 1\nb:\n  c:\n    - d: 1\n      e: 2\n      d: 3\n  f: 4\na: 5\n"
    found = _refused(text)
    assert [(p, r) for p, r, _ in found] == [("$.b.c[0].d", '"d"'), ("$.a", '"a"')]
    assert "repeated at line 6, column 7; first at line 4, column 7" in found[0][2]
    assert "repeated at line 8, column 1; first at line 1, column 1" in found[1][2]


def test_the_duplicate_key_message_is_the_json_one() -> None:
    with pytest.raises(ConfigError) as j:
        decode_config_at(b'{\n"a": 1,\n"a": 2}', "c.json")
    with pytest.raises(ConfigError) as y:
        decode_config_at(b"# a comment\na: 1\na: 2\n", "c.yaml")
    (dj,), (dy,) = j.value.defects, y.value.defects
    assert (dj.path, dj.received) == (dy.path, dy.received) == ("$.a", "a")
    assert dj.expected == dy.expected
    assert "repeated at line 3, column 1; first at line 2, column 1" in dy.expected


@pytest.mark.parametrize(
    ("text", "path", "received", "words"),
    [
        ("a: .nan\n", "$.a", ".nan", "a finite number"),
        ("a: -.inf\n", "$.a", "-.inf", "a finite number"),
        ("a: .Inf\n", "$.a", ".Inf", "a finite number"),
        ("a: 1.0e+999\n", "$.a", "1.0e+999", "within the range of a 64-bit float"),
        ("a: 9007199254740993\n", "$.a", "9007199254740993", "at most 9007199254740991"),
        ("a: yes\n", "$.a", "yes", "boolean to a YAML 1.1 reader"),
        ("a: Off\n", "$.a", "Off", "boolean to a YAML 1.1 reader"),
        ("a: n\n", "$.a", "n", "boolean to a YAML 1.1 reader"),
        ("a: 010\n", "$.a", "010", "a number written as JSON writes it"),
        ("a: 1_000\n", "$.a", "1_000", "a number written as JSON writes it"),
        ("a: 0x1F\n", "$.a", "0x1F", "a number written as JSON writes it"),
        ("a: 0o17\n", "$.a", "0o17", "a number written as JSON writes it"),
        ("a: 1:20\n", "$.a", "1:20", "a number written as JSON writes it"),
        ("a: 1e-4\n", "$.a", "1e-4", "a number written as JSON writes it"),
        ("a: 1.5e5\n", "$.a", "1.5e5", "a number written as JSON writes it"),
        ("a: .5\n", "$.a", ".5", "a number written as JSON writes it"),
        ("a: +1\n", "$.a", "+1", "a number written as JSON writes it"),
        ("a: 2026-12-01\n", "$.a", "2026-12-01", "timestamp to a YAML 1.1 reader"),
        ("a: 2026-12-01 10:00:00\n", "$.a", "2026-12-01 10:00:00", "timestamp"),
        ("a: =\n", "$.a", "=", "special meaning in YAML 1.1"),
        ("a: !!str 1\n", "$.a", "!!str", "no tag"),
        ("a: !custom x\n", "$.a", "!custom", "no tag"),
        ("a: !!map {b: 1}\n", "$.a", "!!map", "no tag"),
        ("a: &x 1\n", "$.a", "&x", "no anchor"),
        ("a: [1]\nb: *x\n", "$.b", "*x", "no alias"),
        ("a:\n  <<: {b: 1}\n", "$.a", "<<", "no merge key"),
        ("1: a\n", "$", "1", "a string key"),
        ("true: a\n", "$", "true", "a string key"),
        ("null: a\n", "$", "null", "a string key"),
        ("? [1]\n: a\n", "$", "a list or mapping used as a key", "a string key"),
        ('a: "\\ud800"\n', "$.a", "\\ud800", "a string of Unicode characters"),
    ],
)
def test_each_ambiguity_is_refused_by_name_and_line(text, path, received, words) -> None:
    found = _refused(text)
    assert (found[0][0], found[0][1]) == (path, received), found
    assert words in found[0][2]
    assert re.search(r"at line \d+, column \d+$", found[0][2]), found[0][2]


def test_an_alias_bomb_is_refused_before_it_expands() -> None:
    text = "a: &a [x, x, x, x, x, x, x, x, x]\n" + "".join(
        f"{chr(98 + k)}: &{chr(98 + k)} [{', '.join(['*' + chr(97 + k)] * 9)}]\n" for k in range(8)
    )
    found = _refused(text)
    assert found and all("anchor" in e or "alias" in e for _, _, e in found)


def test_a_second_document_syntax_errors_and_depth_are_refused() -> None:
    (d,) = _refused("a: 1\n---\nb: 2\n")
    assert d[:2] == ("$", "a second YAML document") and "line 2, column 1" in d[2]
    (d,) = _refused("a: [1, 2\n")
    assert d[1] == "(invalid YAML)" and "valid YAML (line 2, column 1" in d[2]
    (d,) = _refused("a: " + "[" * 70 + "]" * 70 + "\n")
    assert d[1] == "a nesting deeper than 64 levels" and "at most 64 levels" in d[2]
    with pytest.raises(ConfigError) as err:
        decode_config_at(b"a: \xff\n", "c.yaml")
    assert "UTF-8 encoded YAML" in err.value.defects[0].expected


def test_schema_defects_name_their_line_in_yaml_and_json(tmp_path: Path) -> None:
    """A pydantic defect names the line of its key (a missing field: of the object it is
    missing from); the same defect in JSON names its own line the same way."""
    data = _small_sizing()
    data["construct"]["alpha"] = 0.7
    del data["construct"]["metric"]
    data["bogus"] = 1
    lines = {}
    for name, text in (("c.yaml", _yaml_text(data)), ("c.json", json.dumps(data, indent=2))):
        path = tmp_path / name
        path.write_text(text)
        layer = load_layer("sizing")
        with pytest.raises(ConfigError) as err:
            parse_config(load_source(path), layer.model, layer.rules)
        got = {d.path: d.expected for d in err.value.defects}
        rows = text.splitlines()

        def line_of(needle: str, rows: list[str] = rows) -> int:
            return next(i for i, r in enumerate(rows, 1) if needle in r)

        assert f"at line {line_of('alpha')}," in got["$.construct.alpha"]
        assert f"at line {line_of('construct')}," in got["$.construct.metric"]
        assert f"at line {line_of('bogus')}," in got["$.bogus"]
        lines[name] = {p: e.split("; at line")[0] for p, e in got.items()}
    assert lines["c.yaml"] == lines["c.json"]  # the same messages but for the line


# ----------------------------------------------------------------------------------------------
# The CLI, end to end
# ----------------------------------------------------------------------------------------------


def test_a_yaml_config_runs_end_to_end_and_audits(tmp_path: Path, capsys) -> None:
    cfg = tmp_path / "sizing.yaml"
    cfg.write_text("# shrunk sizing example\n" + _yaml_text(_small_sizing()))
    out = tmp_path / "out"
    assert main([str(cfg), "--out", str(out), "--quiet"]) == 0
    prov = json.loads((out / "provenance.json").read_text())
    assert prov["config_sha256"] == hashlib.sha256(cfg.read_bytes()).hexdigest()
    assert prov["config_name"] == "sizing.yaml"
    # the same content as JSON: the same canonical hash, the same results
    jsn = tmp_path / "sizing.json"
    jsn.write_text(json.dumps(_small_sizing()))
    out2 = tmp_path / "out2"
    assert main([str(jsn), "--out", str(out2), "--quiet"]) == 0
    prov2 = json.loads((out2 / "provenance.json").read_text())
    assert prov["config_jcs_sha256"] == prov2["config_jcs_sha256"]
    assert (out / "results.json").read_bytes() == (out2 / "results.json").read_bytes()
    capsys.readouterr()
    # the self-audit recomputes both hashes from the YAML file
    assert main(["audit", str(out), "--config", str(cfg)]) == 0, capsys.readouterr().out
    assert main(["validate", str(cfg)]) == 0
    assert "a valid sizing config" in capsys.readouterr().out


def test_a_bad_yaml_config_exits_2_writes_nothing_and_shows_no_traceback(
    tmp_path: Path, capsys
) -> None:
    data = _small_sizing()
    text = _yaml_text(data).replace("seed: ", "seed: 0x", 1).replace("kind: sizing", "kind: on")
    cfg = tmp_path / "bad.yml"
    cfg.write_text(text + "seed: 3\n")
    out = tmp_path / "out"
    before = sorted(p.name for p in tmp_path.iterdir())
    assert main([str(cfg), "--out", str(out)]) == 2
    err = capsys.readouterr().err
    assert "Traceback" not in err and not out.exists()
    assert sorted(p.name for p in tmp_path.iterdir()) == before
    rows = [r for r in err.splitlines() if not r.startswith("verdictpack: config refused")]
    assert all(SHAPE.match(r) for r in rows), err
    paths = [SHAPE.match(r)["path"] for r in rows]  # type: ignore[index]
    assert paths == ["$.kind", "$.seed", "$.seed"], err
    assert "repeated at line" in err and "boolean to a YAML 1.1 reader" in err


def test_the_yaml_example_validates_and_every_reader_reads_it_alike() -> None:
    """examples/engine_verbosity.yaml: commented, valid, inheriting the human price, and read
    into the same value by the strict loader and by PyYAML's safe loader (verify's reader)."""
    path = EXAMPLES / "engine_verbosity.yaml"
    text = path.read_text()
    assert text.count("\n#") + text.count(" # ") >= 20  # commented block by block
    source = load_source(path)
    assert source.json() == yaml.safe_load(text)
    layer = load_layer("engine")
    cfg = parse_config(source, layer.model, layer.rules)
    assert cfg.stimuli.family == "length" and cfg.stimuli.gates.length_target == 1.5
    assert cfg.human.audit.cost_per_reading == cfg.human.cost_per_touch == 0.4


@pytest.mark.parametrize("digits", [17, 4301, 5000])
def test_a_giant_integer_is_refused_by_name_not_converted(digits: int) -> None:
    """Issue 22 row 8: past Python's 4,300 digits ``int()`` raised ValueError (exit 1)."""
    found = _refused(f"kind: sizing\nseed: {'9' * digits}\n")
    assert [(path, "2^53 - 1" in expected) for path, _, expected in found] == [("$.seed", True)]


def test_a_giant_yaml_integer_exits_2_through_validate(tmp_path: Path, capsys) -> None:
    p = tmp_path / "c.yaml"
    p.write_text(f"kind: sizing\nseed: {'9' * 5000}\n")
    assert main(["validate", str(p)]) == 2
    err = capsys.readouterr().err
    assert "$.seed" in err and "internal error" not in err
