"""The prompt a live judge is sent: the built-in one names no tested property, a study can give
its own criterion, and the ledger's manifest records the prompt actually sent."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from live_helpers import live_study

from verdictpack.config._compiler import load_source, parse_config
from verdictpack.evidence.live._prompts import DEFAULT_CRITERION, DEFAULT_PROMPT
from verdictpack.kinds import _study_live
from verdictpack.kinds._study import LAYER


def _judges(study: Path) -> list[_study_live.LiveJudge]:
    config = parse_config(load_source(study), LAYER.model, LAYER.rules)
    return _study_live.live_judges(config)


def test_the_built_in_prompt_and_a_study_s_own_criterion(tmp_path: Path) -> None:
    study, config = live_study(tmp_path, "http://127.0.0.1:9/v1")
    judges = _judges(study)
    assert [j.prompt for j in judges] == [DEFAULT_PROMPT, DEFAULT_PROMPT]
    assert judges[0].prompt.criterion == DEFAULT_CRITERION
    config["panel"]["judges"][0]["endpoint"]["prompt"] = {"criterion": "Which is more concise?"}
    study.write_text(json.dumps(config))
    mine, other = _judges(study)
    assert mine.prompt.criterion == "Which is more concise?"
    assert mine.prompt.user == DEFAULT_PROMPT.user and other.prompt == DEFAULT_PROMPT


def test_the_manifest_records_the_prompt_sent_not_the_config_s_blanks(tmp_path: Path) -> None:
    study, _ = live_study(tmp_path, "http://127.0.0.1:9/v1")
    config = parse_config(load_source(study), LAYER.model, LAYER.rules)
    prep = _study_live.prepare_study(config, load_source(study))  # type: ignore[attr-defined]
    entry = _study_live.manifest(config, prep)["judges"][0]
    assert entry["prompt"] == {
        "system": DEFAULT_PROMPT.system,
        "user": DEFAULT_PROMPT.user,
        "labels": ["A", "B"],
        "criterion": DEFAULT_CRITERION,
    }


def test_the_report_and_provenance_show_the_prompt_sent(tmp_path: Path) -> None:
    pytest.importorskip("httpx")
    from live_helpers import serve, server_config

    from verdictpack._cli import main

    probe, _ = live_study(tmp_path / "probe", "http://127.0.0.1:9/v1")
    with serve(server_config(probe)) as url:
        study, config = live_study(tmp_path / "run", url, cap=20, roots=20)
        config["panel"]["judges"][1]["endpoint"]["prompt"] = {
            "criterion": "Which is better?",
            "user": "```\n{first}\n```\nor\n```\n{second}\n```\n{criterion} "
            "Answer {label_first} or {label_second}.",
        }
        study.write_text(json.dumps(config))
        out = tmp_path / "out"
        main([str(study), "--out", str(out), "--quiet"])
    report = (out / "report" / "report.md").read_text()
    section = report.split("## The prompt the judges saw", 1)[1]
    assert "Sent to `judge-a`" in section and "Sent to `judge-b`" in section
    assert DEFAULT_CRITERION in section and "the question: Which is better?" in section
    assert "````text" in section  # the fence is longer than any run of backticks inside
    prov = json.loads((out / "report" / "provenance.json").read_text())
    assert prov["settings"]["prompts"]["judge-a"]["user"] == DEFAULT_PROMPT.user
    results = json.loads((out / "report" / "results.json").read_text())
    assert results["prompts"]["judge-b"]["criterion"].startswith("Which is better?")
