"""The live acceptance tests of the estimand: a model judgment's observation is the answer it gave.

Against the OpenAI-compatible test server (tests/evidence/live/oai_server.py) on 127.0.0.1, with
judges whose reported label probabilities disagree with their answers (the sheet's
``logprob_treatment``):

* temperature 0: a judge that always answers the null partner while giving the treatment's label
  0.45, against humans at 0.2, gets the verdict its answers support (h = φ(0) − φ(0.2) ≈ −0.93),
  never the EFFECT_SUPPORTED its probabilities would give; the probability figure is shown beside
  with a warning. The mirror: always the treatment at P(treatment) 0.6, against a threshold the
  probabilities miss (h ≈ 0.85 < 1.2) and the answers clear (h ≈ 2.21), is EFFECT_SUPPORTED. In
  both, the same study declaring ``policy.model_observation = probability`` gets the other
  verdict, so the test tells the two estimands apart.
* temperature 1: judges sampled from their label probabilities; every row of
  ``report/judgments.csv`` holds the answer the server logged for that request, and some rows'
  answers are the less probable label (the old behaviour, the more probable label, fails here).

The judges use the ``vllm`` profile: its guided choice gets a plain label from the test server,
whose first token carries the logprobs (the ``openai`` profile's JSON answer would not).
"""

from __future__ import annotations

import csv
import json
from pathlib import Path
from typing import Any

import pytest

from verdictpack._cli import main

pytest.importorskip("httpx")

from live_helpers import ServerConfig, Sheet, items, live_study, serve

from verdictpack.core._scales import phi

NULLS = ("NO_POSITIVE_EFFECT", "BELOW_PRACTICAL_THRESHOLD")
HUMAN_RATE = 0.2


def _study(
    tmp_path: Path,
    url: str,
    *,
    temperature: float,
    observation: str | None = None,
    construct: dict[str, Any] | None = None,
    roots: int = 40,
    seed: int | None = None,
    trials: int = 1,
) -> Path:
    """The tiny live study (vllm profile, logprobs asked) with humans at HUMAN_RATE."""
    sampling: dict[str, Any] = {"temperature": temperature, "top_logprobs": 5}
    if seed is not None:
        sampling["seed"] = seed  # trial t sends seed + t
    study, config = live_study(
        tmp_path, url, roots=roots, cap=roots, profile="vllm", sampling=sampling
    )
    config["panel"]["trials"] = trials
    # the humans: h1 prefers the treatment on roots i % 5 == 0, h2 on i % 5 == 1 (rate 0.2)
    table = study.parent / "data" / "judgments.csv"
    rows = [table.read_text().splitlines()[0]]
    for i in range(roots):
        for k, h in enumerate(("h1", "h2")):
            choice = "treatment" if i % 5 == k else "null_partner"
            rows.append(f"r{i:03d},{h},human,unknown,{choice}")
    table.write_text("\n".join(rows) + "\n")
    # the reader audit agrees throughout: the instrument gate is not what these tests are about
    readings = ["root_id,reader_id,category"]
    for i in range(30):
        cat = "abc"[i % 3]
        readings += [f"a{i},x,{cat}", f"a{i},y,{cat}"]
    (study.parent / "data" / "readings.csv").write_text("\n".join(readings) + "\n")
    if observation is not None:
        config["policy"] = {"model_observation": observation}
    if construct is not None:
        config["construct"].update(construct)
    study.write_text(json.dumps(config, indent=2))
    return study


def _run(study: Path, out: Path) -> tuple[str, dict[str, Any]]:
    assert main([str(study), "--out", str(out), "--quiet"]) == 0
    verdict = json.loads((out / "report" / "verdict.json").read_text())
    results = json.loads((out / "report" / "results.json").read_text())
    return verdict["registered"]["verdict"], results


def _config(study: Path, sheet: Sheet) -> ServerConfig:
    judges = {"judge-a": sheet, "judge-b": sheet}
    return ServerConfig(judges=judges, items=items(study), seed=11, log_answers=True)


# alpha 0.2 (per tail 0.05) reaches verdicts in tens of roots; HIGH puts the threshold (h = 1.2)
# between the probabilities' h (about 0.85) and the answers' (about 2.21)
LOOSE = {"alpha": 0.2, "per_tail_alpha": 0.05, "e_boundary": 20}
HIGH = {**LOOSE, "thresholds": {"h": 1.2, "odds_ratio": 100.0}}
ROOTS = 200


@pytest.mark.parametrize(
    ("answer", "p_treatment", "construct", "by_choice", "by_probability"),
    [
        # always the null partner at P(treatment) 0.45: the judge
        ("null_partner", 0.45, LOOSE, NULLS, ("EFFECT_SUPPORTED",)),
        # always the treatment at P(treatment) 0.6, against a threshold only the answers clear
        ("treatment", 0.6, HIGH, ("EFFECT_SUPPORTED",), NULLS),
    ],
)
def test_temperature_0_verdict_is_the_one_the_answers_support(
    tmp_path: Path,
    answer: str,
    p_treatment: float,
    construct: dict[str, Any],
    by_choice: tuple[str, ...],
    by_probability: tuple[str, ...],
) -> None:
    sheet = Sheet(rate=1.0 if answer == "treatment" else 0.0, logprob_treatment=p_treatment)
    probe = _study(tmp_path / "probe", "http://127.0.0.1:9/v1", temperature=0.0, roots=ROOTS)
    with serve(_config(probe, sheet)) as url:
        runs = {}
        for obs in ("choice", "probability"):
            study = _study(
                tmp_path / obs,
                url,
                temperature=0.0,
                roots=ROOTS,
                construct=construct,
                observation=None if obs == "choice" else obs,  # choice: the default
            )
            runs[obs] = _run(study, tmp_path / f"out-{obs}")
    verdict, results = runs["choice"]
    e = results["estimate"]
    h_choice = phi(1.0 if answer == "treatment" else 0.0) - phi(HUMAN_RATE)
    h_prob = phi(p_treatment) - phi(HUMAN_RATE)
    threshold = results["construct"]["governing_threshold_h"]
    # the two estimands fall on opposite sides of the threshold: the verdict tells them apart
    assert (h_prob >= threshold) != (h_choice >= threshold)
    assert verdict in by_choice, (verdict, results["stop_reason"])
    assert e["observation"] == "choice"
    assert e["model_rate"] == (1.0 if answer == "treatment" else 0.0)
    # the humans' rate over the committed roots is about 0.2, not exactly
    assert e["h_point"] == pytest.approx(h_choice, abs=0.15)
    assert e["h_point_probability"] == pytest.approx(h_prob, abs=0.15)
    assert e["h_point_probability"] > 0
    assert e["warning"] and "model_observation = probability" in e["warning"]
    if answer == "null_partner":
        assert e["h_point"] < -0.7
    # every model row: the answer given, with the reported probability beside it
    rows = _model_rows(tmp_path / "out-choice")
    assert rows and {r["choice"] for r in rows} == {answer}
    assert {r["raw"] for r in rows} == {"logprobs"}
    assert all(float(r["p_treatment"]) == pytest.approx(p_treatment) for r in rows)
    # the same study declaring the probability estimand gets the other verdict
    verdict_p, results_p = runs["probability"]
    assert verdict_p in by_probability, (verdict_p, results_p["stop_reason"])
    assert results_p["estimate"]["observation"] == "probability"
    assert results_p["estimate"]["h_point"] == pytest.approx(h_prob, abs=0.15)


def test_temperature_1_choice_is_the_answer_the_server_sent(tmp_path: Path) -> None:
    # sampled from their label probabilities: an answer is the less probable label at times
    sheets = {
        "judge-a": Sheet(rate=0.6, logprob_treatment=0.6),
        "judge-b": Sheet(rate=0.35, position_bias=0.1, logprob_treatment=0.35),
    }
    probe = _study(tmp_path / "probe", "http://127.0.0.1:9/v1", temperature=1.0)
    config = ServerConfig(judges=sheets, items=items(probe), seed=13, log_answers=True)
    with serve(config) as url:
        study = _study(tmp_path / "run", url, temperature=1.0, seed=100, trials=2)
        _, results = _run(study, tmp_path / "out")
        log = url.answers()
    # a request: its judge, the item shown first (so the root and order) and its seed (trial)
    shown = {}
    for line in (study.parent / "data" / "pairs.jsonl").read_text().splitlines():
        rec = json.loads(line)
        shown[rec["treatment"]] = (rec["id"], "treatment_first")
        shown[rec["null_partner"]] = (rec["id"], "null_first")
    sent: dict[tuple[str, str, str, int], str] = {}
    for a in log:
        root, order = shown[a["first_item"]]
        assert a["treatment_first"] == (order == "treatment_first")
        assert a["position"] in ("first", "second")
        choice = (
            "treatment" if (a["position"] == "first") == a["treatment_first"] else "null_partner"
        )
        cell = (root, a["model"], order, a["seed"] - 100)
        assert sent.setdefault(cell, choice) == choice  # a resent request got the same answer
    rows = _model_rows(tmp_path / "out")
    assert len(rows) == results["roots_run"] * 2 * 2 * 2 > 0  # judges, orders, trials
    disagree = 0
    for r in rows:
        cell = (r["root_id"], r["rater_id"], r["order"], int(r["trial"]))
        assert r["choice"] == sent[cell], cell
        assert r["raw"] == "logprobs"
        more_probable = "treatment" if float(r["p_treatment"]) > 0.5 else "null_partner"
        disagree += r["choice"] != more_probable
    # the old behaviour (the more probable label written as the choice) fails here
    assert disagree > 0
    assert {r["choice"] for r in rows if r["rater_id"] == "judge-a"} == {
        "treatment",
        "null_partner",
    }


def _model_rows(out: Path) -> list[dict[str, str]]:
    with (out / "report" / "judgments.csv").open(newline="") as f:
        return [r for r in csv.DictReader(f) if r["rater_kind"] == "model"]
