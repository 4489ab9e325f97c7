"""The Python API: ``verdictpack.run(config) -> Result``, rendering separate and identical to
the command line's files."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

import verdictpack
from verdictpack import ConfigError, Result, UsageError, run_config

EXAMPLES = Path(__file__).resolve().parents[1] / "examples"


def _without_wall(files: dict[str, str]) -> dict[str, str]:
    out = dict(files)
    prov = json.loads(out.pop("provenance.json"))
    prov.pop("wall_clock", None)
    out["provenance.json"] = json.dumps(prov, sort_keys=True)
    return out


def test_run_returns_the_result_object_and_renders_what_the_command_line_writes() -> None:
    config = EXAMPLES / "sizing_summarization.json"
    result = verdictpack.run(config)
    assert isinstance(result, Result)
    assert result.kind == "sizing"
    assert result.verdict is None and result.h_interval is None
    assert type(result.result).__name__ == "SizingResult"
    assert _without_wall(result.files()) == _without_wall(run_config(str(config)))
    assert result.to_dict()["kind"] == "sizing"


def _small_study() -> dict[str, object]:
    config = json.loads((EXAMPLES / "study_summarization.json").read_text())
    config["planning"] = {"replicates": 100, "max_extra_roots": 50}
    return config


def test_a_study_given_as_a_mapping_reads_its_data_relative_to_base(tmp_path: Path) -> None:
    result = verdictpack.run(_small_study(), base=str(EXAMPLES))
    written = result.to_dict()
    assert result.kind == "study"
    assert result.verdict == written["registered"]["verdict"]
    assert result.h_interval is not None
    assert list(result.h_interval) == written["registered"]["h_interval"]
    assert result.estimate.h_point == written["estimate"]["h_point"]
    out = result.write(tmp_path / "out")
    assert sorted(p.name for p in out.iterdir() if not p.name.startswith(".")) == sorted(
        result.files()
    )
    # without base the data paths are relative to the working directory: not found, by name
    with pytest.raises(ConfigError):
        verdictpack.run(_small_study(), base=str(tmp_path))


def test_write_refuses_a_folder_verdictpack_did_not_write(tmp_path: Path) -> None:
    (tmp_path / "notes.txt").write_text("mine")
    result = verdictpack.run(EXAMPLES / "sizing_summarization.json")
    with pytest.raises(verdictpack.OutputError):
        result.write(tmp_path, force=True)
    assert (tmp_path / "notes.txt").read_text() == "mine"


@pytest.mark.parametrize(
    ("kwargs", "config"),
    [
        ({"workers": 0}, "sizing_summarization.json"),
        ({"workers": True}, "sizing_summarization.json"),
        ({"base": "."}, "sizing_summarization.json"),
    ],
)
def test_bad_arguments_are_refused_by_name(kwargs: dict[str, object], config: str) -> None:
    with pytest.raises(UsageError) as err:
        verdictpack.run(EXAMPLES / config, **kwargs)  # type: ignore[arg-type]
    assert next(iter(kwargs)) in str(err.value)


def test_a_mapping_that_is_not_json_or_not_a_config_is_refused() -> None:
    with pytest.raises(UsageError, match="config"):
        verdictpack.run({"kind": "sizing", "x": float("nan")})
    with pytest.raises(ConfigError, match=r"\$\.kind"):
        verdictpack.run({"kind": "nope"})


def test_a_live_study_is_refused_with_the_command_to_run_it() -> None:
    config = _small_study()
    for judge in config["panel"]["judges"]:  # type: ignore[index]
        judge["endpoint"] = {
            "base_url": "http://127.0.0.1:9/v1",
            "model": judge["name"],
            "profile": "openai",
            "price": {"per_call": 0.001},
        }
    try:
        verdictpack.run(config, base=str(EXAMPLES))
    except UsageError as err:
        assert "--out" in str(err)
    except ConfigError as err:  # the live panel's own schema refused the sketch: name it
        pytest.fail(f"the test's live panel is not a valid one: {err}")
    else:
        pytest.fail("a live study ran through the Python API")
