"""A study whose judges' answers come as an OpenAI Batch output or an Inspect AI log, as free
text, reaches the verdict of the same answers given as the canonical CSV."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from conftest import write_tiny_study
from verdictpack._cli import run_config

STYLES = ("{}", "**{}**", "Response {}", "Assistant {} is better.")


def _free_text(choice: str, order: str, k: int) -> str:
    """The answer a judge writing free text gives for ``choice`` shown in ``order``."""
    first = (choice == "treatment") == (order == "treatment_first")
    label = "A" if first else "B"
    return STYLES[k % len(STYLES)].format(label)


def _split(study: Path) -> tuple[list[str], list[list[str]]]:
    lines = (study.parent / "data" / "judgments.csv").read_text().splitlines()
    return lines, [line.split(",") for line in lines[1:] if ",model," in line]


def _batch(study: Path) -> None:
    lines, model = _split(study)
    out = []
    for k, (root, judge, _, order, choice) in enumerate(model):
        body = {
            "object": "chat.completion",
            "model": "gpt-4o-mini-2024-07-18",
            "choices": [
                {
                    "index": 0,
                    "message": {"role": "assistant", "content": _free_text(choice, order, k)},
                    "finish_reason": "stop",
                }
            ],
        }
        out.append(
            {
                "id": f"batch_req_{k}",
                "custom_id": f"{judge}/{root}/{order}",
                "response": {"status_code": 200, "body": body},
                "error": None,
            }
        )
    (study.parent / "data" / "batch_output.jsonl").write_text(
        "".join(json.dumps(r) + "\n" for r in out)
    )
    (study.parent / "data" / "judgments.csv").write_text(
        "\n".join([lines[0], *[x for x in lines[1:] if ",human," in x]]) + "\n"
    )
    config = json.loads(study.read_text())
    config["data"]["judgments"].append(
        {
            "format": "openai_batch",
            "path": "data/batch_output.jsonl",
            "custom_id": r"(?P<judge>[^/]+)/(?P<root>[^/]+)/(?P<order>[a-z_]+)",
            "patterns": ["bold", "named"],
        }
    )
    study.write_text(json.dumps(config))


def _inspect(study: Path) -> None:
    lines, model = _split(study)
    config = json.loads(study.read_text())
    for judge in ("judge-a", "judge-b"):
        samples = [
            {
                "id": f"{root}-{order}",
                "epoch": 1,
                "metadata": {"pair": root, "shown": order},
                "output": {"model": "m", "completion": _free_text(choice, order, k)},
                "scores": {},
                "error": None,
            }
            for k, (root, j, _, order, choice) in enumerate(model)
            if j == judge
        ]
        log = {"version": 2, "status": "success", "eval": {"model": "x/m"}, "samples": samples}
        (study.parent / "data" / f"{judge}.json").write_text(json.dumps(log))
        config["data"]["judgments"].append(
            {
                "format": "inspect",
                "path": f"data/{judge}.json",
                "root_key": "metadata.pair",
                "order_key": "metadata.shown",
                "judge": judge,
                "patterns": ["bold", "named"],
            }
        )
    (study.parent / "data" / "judgments.csv").write_text(
        "\n".join([lines[0], *[x for x in lines[1:] if ",human," in x]]) + "\n"
    )
    study.write_text(json.dumps(config))


def _small(study: Path) -> Path:
    """The study with a short plan (the verdict does not depend on it)."""
    config = json.loads(study.read_text())
    config["planning"] = {"replicates": 100, "max_extra_roots": 50}
    study.write_text(json.dumps(config))
    return study


def _verdict(files: dict[str, str]) -> tuple[object, ...]:
    results = json.loads(files["results.json"])
    reg = results["registered"]
    return reg["verdict"], reg["roots_at_verdict"], reg["h_interval"], results["estimate"]


@pytest.mark.parametrize("convert", [_batch, _inspect], ids=["openai_batch", "inspect"])
def test_free_text_answers_in_a_judge_file_reach_the_csv_verdict(tmp_path: Path, convert) -> None:  # type: ignore[no-untyped-def]
    csv_study = _small(write_tiny_study(tmp_path / "csv"))
    other = _small(write_tiny_study(tmp_path / "other"))
    convert(other)
    assert _verdict(run_config(str(other))) == _verdict(run_config(str(csv_study)))


def test_answers_no_rule_reads_are_invalid_and_counted(tmp_path: Path) -> None:
    study = _small(write_tiny_study(tmp_path / "s"))
    _batch(study)
    config = json.loads(study.read_text())
    config["data"]["judgments"][-1]["patterns"] = []  # only the exact label reads now
    study.write_text(json.dumps(config))
    results = json.loads(run_config(str(study))["results.json"])
    assert results["estimate"]["model_unknown"] > 0
