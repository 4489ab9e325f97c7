"""Makes the bundled study examples from one simulated engine run (synthetic data, never real).

Run by hand by maintainers, from the repository root::

    python scripts/make_study_examples.py

It runs the engine (:data:`ENGINE`: the summarization family, four judges, a fixed seed, a small
cap) through the API -- ``plan_engine``, ``run_sequential`` on ``simulated_source`` -- reads the
same evidence source on past the engine's stop to :data:`DATA_ROOTS` roots, and turns the
evidence into the data files of four study examples, each a config ``examples/study_<name>.json``
(data paths relative to examples/, the config's folder):

* ``study_summarization`` -- the pairs (``pairs.jsonl``), the model and the human judgments in the
  canonical table (``model_judgments.csv``, ``human_judgments.csv``) and the reader audit's
  double readings (``readings.csv``), all in ``study_summarization/``;
* ``study_labelstudio`` -- the human judgments as a Label Studio 1.x JSON export (pairwise
  control) in ``study_labelstudio/``;
* ``study_argilla`` -- the human judgments as an Argilla 2.x records export;
* ``study_mturk`` -- the human judgments as an Amazon Mechanical Turk batch results CSV.

The three tool examples read the pairs, the model judgments and the readings of
``study_summarization/`` (one copy keeps the examples small).
The four hold the same evidence, so they reach the same verdict. So that the declared policy has
something to do, the exported evidence is edited by fixed rules (no random draw, see
:func:`edited_judgments`): every 37th model judgment becomes a tie, every 53rd an invalid one,
one judge lacks its second presentation order on every 23rd root, every 19th human judgment is
invalid (a cancelled, discarded or rejected annotation in the tool formats) and the roots at
every 4th place of the engine's order carry no human judgment at all (partial coverage by a
rule fixed before the data, so the study declares no human count per root: the report states
the human stream's missing-at-random assumption, which this rule makes true). The gates
(:data:`GATES`) admit most pairs and refuse a few.

Deterministic: a second run rewrites byte-identical files (``--check`` verifies that the files on
disk are what this script writes, without writing).
"""

from __future__ import annotations

import argparse
import csv
import io
import json
import sys
import uuid
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from verdictpack._errors import InputError
from verdictpack._rng import stream
from verdictpack.config._compiler import ConfigSource, parse_config
from verdictpack.evidence._table import Judgment, JudgmentTable
from verdictpack.kinds import _engine
from verdictpack.simulate._export import (
    SYNTHETIC_NOTE,
    judgments_from_evidence,
    pairs_jsonl,
    readings_from_audit,
)
from verdictpack.simulate._human import simulate_reader_audit

HERE = Path(__file__).resolve().parents[1] / "examples"
SCRIPT = "scripts/make_study_examples.py"

_CONSTRUCT: dict[str, Any] = {
    "name": "llm-judges-prefer-llm-summaries",
    "version": "1.0.0",
    "transformation": "the same source summarized in an LLM register (treatment) versus a human "
    "register (null partner), content and length matched",
    "metric": "probability that a judge prefers the treatment summary, averaged over both "
    "presentation orders",
    "direction": "greater",
    "human_baseline_rate": 0.5,
    "thresholds": {"h": 0.3, "odds_ratio": 2.0},
    "extension_minimum_h": 0.2,
    "alpha": 0.01,
    "per_tail_alpha": 0.0025,
    "e_boundary": 400,
    "stream_roles": {"model": "LLM judge panel preferences", "human": "human reader preferences"},
    "registered_claim": "LLM judges prefer LLM-register summaries more than humans do, by at "
    "least h = 0.3",
    "extension_claim": "LLM judges prefer LLM-register summaries more than humans do, by at "
    "least h = 0.2",
    "known_confounds": [
        {
            "name": "position",
            "description": "judges favour the first-shown item",
            "crossed_with": ["register"],
        },
        {"name": "length", "description": "LLM summaries run longer", "crossed_with": []},
        {
            "name": "density",
            "description": "LLM summaries pack more content units per sentence",
            "crossed_with": ["register"],
        },
        {
            "name": "register",
            "description": "the manipulated property itself, isolated from content",
            "crossed_with": [],
        },
        {
            "name": "known_null",
            "description": "pairs that differ in nothing a reader can see",
            "crossed_with": [],
        },
    ],
}

_SEQUENTIAL: dict[str, Any] = {
    "construction": "hybrid",
    "lambdas": [0.05, 0.1, 0.2, 0.4, 0.8],
    "cap_roots": 240,
}

_JUDGES: list[dict[str, Any]] = [
    {
        "name": "frontier-a",
        "role": "frontier judge",
        "baseline_rate": 0.52,
        "lean_h": 0.5,
        "noise": 0.1,
        "position_bias": 0.08,
        "cost_per_judgment": 0.01,
    },
    {
        "name": "small-open",
        "role": "small open-weights judge",
        "baseline_rate": 0.55,
        "lean_h": 0.3,
        "noise": 0.4,
        "position_bias": 0.15,
        "cost_per_judgment": 0.001,
    },
    {
        "name": "mid-tier",
        "role": "mid-tier API judge",
        "baseline_rate": 0.5,
        "lean_h": 0.45,
        "noise": 0.25,
        "position_bias": 0.1,
        "cost_per_judgment": 0.003,
    },
    {
        "name": "small-open-2",
        "role": "small open-weights judge",
        "baseline_rate": 0.48,
        "lean_h": 0.25,
        "noise": 0.5,
        "position_bias": 0.12,
        "cost_per_judgment": 0.001,
    },
]

#: The engine config the evidence comes from (kind ``engine``; small: the run is the data).
ENGINE: dict[str, Any] = {
    "kind": "engine",
    "seed": 20261201,
    "construct": _CONSTRUCT,
    "sequential": _SEQUENTIAL,
    "panel": {"name": "mixed realistic", "latent_correlation": 0.35, "judges": _JUDGES},
    "human": {
        "judgments_per_root": 2,
        "cost_per_judgment": 0.4,
        "audit": {
            "roots": 160,
            "kappa_min": 0.6,
            "reconstruction_rate": 0.95,
            "categories": 2,
            "cost_per_reading": 0.4,
        },
        "baseline": {"pilot_roots": 100, "power": 0.8, "replicates": 20000},
    },
    "stimuli": {
        "family": "summarization",
        "candidates": 320,
        "gates": {
            "length_tolerance": 0.1,
            "length_target": 0.0,
            "content_threshold": 1.0,
            "fragment_threshold": 0.5,
            "max_diff_tokens": 0,
        },
        "defect_rates": {
            "drop_unit": 0.08,
            "padding": 0.06,
            "duplicate_fragment": 0.05,
            "extra_difference": 0.04,
        },
        "spot_check": {
            "error_rate": 0.1,
            "confidence": 0.95,
            "passes_per_pair": 4,
            "cost_per_touch": 0.4,
        },
    },
    "routes": {"sprt_beta": 0.05, "fixed_n_power": 0.95},
    "truth": {
        "scenario": "above_threshold",
        "true_h": 0.1,
        "model_shift_h": 0.15,
        "stress_latent_correlation": 0.5,
        "stress_stream_correlation": 0.5,
        "stress_base": "registered_alternative",
    },
    "power": {"replicates": 100, "above_threshold_h": [0.45]},
    "confound_stress": {"model_shift_h": 0.15, "position_bias": 0.2},
}

#: The study's gates on the real-text pairs: loose enough to admit most, tight enough that a few
#: pairs are refused (and listed in the report).
GATES: dict[str, Any] = {
    "length_unit": "words",
    "length_target": 0.0,
    "length_tolerance": 0.5,
    "fragment_threshold": 0.5,
    "content_threshold": 0.65,
    "require_numbers": True,
    "max_diff_tokens": 32,
}

#: Roots of evidence the examples hold: the engine's run, read on from the same evidence source
#: past the engine's stop (the engine stops at its verdict; a study's data need not).
DATA_ROOTS = 180

#: The editing rules of :func:`edited_judgments` (places counted from 1).
TIE_EVERY = 37  # every 37th model judgment (table order) becomes a tie
INVALID_EVERY = 53  # every 53rd model judgment becomes invalid
ONE_ORDER_JUDGE = "small-open-2"
ONE_ORDER_EVERY = 23  # that judge lacks its null-first judgment on every 23rd root
HUMAN_INVALID_EVERY = 19  # every 19th human judgment becomes invalid
NO_HUMANS_EVERY = 4  # the roots at every 4th place of the engine's order have no humans
ANNOTATORS = 5  # human judgments rotate over this many annotators


# ----------------------------------------------------------------------------------------------
# The evidence
# ----------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Evidence:
    """What every example is made of: pairs, edited judgments, readings, the engine's verdict."""

    pairs: str
    judgments: tuple[Judgment, ...]
    readings: bytes
    sides: Mapping[str, str]
    engine_verdict: str
    engine_roots: int


def engine_config() -> _engine.EngineConfig:
    """:data:`ENGINE`, validated as the engine kind validates a config file."""
    source = ConfigSource(
        display=f"{SCRIPT}:ENGINE", name="engine.json", data=json.dumps(ENGINE).encode()
    )
    return parse_config(source, _engine.EngineConfig, _engine.RULES)


def _annotator(t: int, j: int) -> int:
    """Annotator number (1-based) of human judgment ``j`` on the root at engine place ``t``:
    the two judgments of a root go to two different annotators."""
    return (2 * t + j) % ANNOTATORS + 1


def edited_judgments(rows: Sequence[Mapping[str, Any]]) -> tuple[Judgment, ...]:
    """The engine's evidence trail as canonical judgments, edited by the module's fixed rules.

    Human ``j`` of the root at engine place ``t`` is rater ``annotator-k`` with
    k = :func:`_annotator` (t, j).
    """
    table = judgments_from_evidence(rows)
    place = {str(row["stimulus_id"]): t for t, row in enumerate(rows)}
    out: list[Judgment] = []
    n_model = n_human = 0
    for j in table.judgments():
        t = place[j.root_id]
        if j.rater_kind == "model":
            if (
                j.rater_id == ONE_ORDER_JUDGE
                and j.order == "null_first"
                and (t + 1) % ONE_ORDER_EVERY == 0
            ):
                continue
            n_model += 1
            if n_model % TIE_EVERY == 0:
                j = replace(j, choice="tie")
            elif n_model % INVALID_EVERY == 0:
                j = replace(j, choice="invalid")
        else:
            if (t + 1) % NO_HUMANS_EVERY == 0:
                continue
            index = int(j.rater_id.rsplit("-", 1)[1])
            j = replace(j, rater_id=f"annotator-{_annotator(t, index)}")
            n_human += 1
            if n_human % HUMAN_INVALID_EVERY == 0:
                j = replace(j, choice="invalid")
        out.append(replace(j, origin=None))
    return tuple(out)


def make_evidence() -> Evidence:
    """Run the engine on :data:`ENGINE` and export its evidence (module docstring)."""
    cfg = engine_config()
    plan = _engine.plan_engine(cfg)
    source = _engine.simulated_source(cfg, plan)
    tracks = _engine.run_sequential(plan, source)
    rows = list(tracks.rows)
    admitted = plan.factory.admitted
    if len(admitted) < DATA_ROOTS:
        raise InputError(
            "DATA_ROOTS", f"at most the {len(admitted)} pairs ENGINE admits", DATA_ROOTS
        )
    # the same source, read on past the engine's stop (its stream continues where it was)
    for generated in admitted[len(rows) : DATA_ROOTS]:
        ev = source.judge(generated.stimulus)
        rows.append(
            {
                "stimulus_id": ev.stimulus_id,
                "model_choices": {
                    j: list(c) for j, c in zip(ev.judges, ev.model_choices, strict=True)
                },
                "human_choices": list(ev.human_choices),
            }
        )
    rows = rows[:DATA_ROOTS]
    stimuli = [g.stimulus for g in admitted[:DATA_ROOTS]]
    a = cfg.human.audit
    audit = simulate_reader_audit(
        a.roots, a.reconstruction_rate, stream(cfg.seed, "engine/audit"), a.categories
    )
    # the side each tool showed the treatment on: alternating along the engine's order
    sides = {s.id: ("left" if t % 2 == 0 else "right") for t, s in enumerate(stimuli)}
    return Evidence(
        pairs=pairs_jsonl(stimuli),
        judgments=edited_judgments(rows),
        readings=readings_from_audit(audit).to_csv_bytes(),
        sides=sides,
        engine_verdict=tracks.registered.verdict,
        engine_roots=tracks.roots_run,
    )


# ----------------------------------------------------------------------------------------------
# The tool formats
# ----------------------------------------------------------------------------------------------


def _json_list(items: Sequence[Any]) -> bytes:
    """A JSON list, one item a line (compact: the examples stay small)."""
    return ("[\n" + ",\n".join(json.dumps(x) for x in items) + "\n]\n").encode()


def _position(j: Judgment, side: str) -> str:
    """The side the human preferred (left = shown first), or tie / invalid."""
    if j.choice in ("tie", "invalid"):
        return j.choice
    other = "right" if side == "left" else "left"
    return side if j.choice == "treatment" else other


def _humans_by_root(ev: Evidence) -> dict[str, list[Judgment]]:
    by_root: dict[str, list[Judgment]] = {rid: [] for rid in ev.sides}
    for j in ev.judgments:
        if j.rater_kind == "human":
            by_root[j.root_id].append(j)
    return by_root


def _number(rater_id: str) -> int:
    return int(rater_id.rsplit("-", 1)[1])


def labelstudio_export(ev: Evidence) -> bytes:
    """A Label Studio 1.x JSON export: one task per pair, a ``pairwise`` control ``pref``;
    an invalid judgment is a cancelled (skipped) annotation. The task data carry the pair id and
    the treatment's side only (the texts are in pairs.jsonl)."""
    tasks = []
    annotation_id = 0
    for k, (rid, judgments) in enumerate(_humans_by_root(ev).items(), start=1):
        side = ev.sides[rid]
        annotations = []
        for j in judgments:
            annotation_id += 1
            cancelled = j.choice == "invalid"
            selected = None if cancelled else _position(j, side)
            annotations.append(
                {
                    "id": annotation_id,
                    "completed_by": _number(j.rater_id),
                    "was_cancelled": cancelled,
                    "result": []
                    if cancelled
                    else [
                        {
                            "from_name": "pref",
                            "to_name": "pair",
                            "type": "pairwise",
                            "value": {"selected": selected},
                        }
                    ],
                }
            )
        tasks.append(
            {"id": k, "data": {"pair_id": rid, "treatment_side": side}, "annotations": annotations}
        )
    return _json_list(tasks)


def _user_uuid(rater_id: str) -> str:
    return str(uuid.uuid5(uuid.NAMESPACE_URL, f"https://example.org/verdictpack/{rater_id}"))


_ARGILLA_VALUE = {"left": "A", "right": "B"}


def argilla_export(ev: Evidence) -> bytes:
    """An Argilla 2.x records export (``dataset.records.to_list(flatten=False)``, one JSON list):
    question ``preference`` with labels A (shown first) and B; an invalid judgment is a
    ``discarded`` response; a record without responses is ``pending``."""
    records = []
    for rid, judgments in _humans_by_root(ev).items():
        side = ev.sides[rid]
        responses = []
        for j in judgments:
            position = _position(j, side)
            if position == "invalid":
                responses.append({"user_id": _user_uuid(j.rater_id), "status": "discarded"})
            else:
                responses.append(
                    {
                        "value": _ARGILLA_VALUE[position],
                        "user_id": _user_uuid(j.rater_id),
                        "status": "submitted",
                    }
                )
        records.append(
            {
                "id": rid,
                "status": "completed" if responses else "pending",
                "metadata": {"pair_id": rid, "treatment_side": "a" if side == "left" else "b"},
                "responses": {"preference": responses} if responses else {},
                "suggestions": {},
            }
        )
    return _json_list(records)


_MTURK_COLUMNS = (
    "HITId",
    "HITTypeId",
    "Title",
    "Reward",
    "AssignmentId",
    "WorkerId",
    "AssignmentStatus",
    "SubmitTime",
    "WorkTimeInSeconds",
    "Input.pair_id",
    "Input.treatment_side",
    "Answer.preference",
    "Approve",
    "Reject",
)


def mturk_export(ev: Evidence) -> bytes:
    """An MTurk batch results CSV: one HIT per pair (roots without human judgments have no HIT),
    one row per assignment; answers ``summary_a`` (shown first) / ``summary_b``; an invalid
    judgment is a ``Rejected`` assignment."""
    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\n")
    w.writerow(_MTURK_COLUMNS)
    n = 0
    for k, (rid, judgments) in enumerate(_humans_by_root(ev).items(), start=1):
        side = ev.sides[rid]
        hit = f"3HIT{k:06d}EXAMPLE"
        for j in judgments:
            n += 1
            position = _position(j, side)
            rejected = position == "invalid"
            answer = {"left": "summary_a", "right": "summary_b"}.get(position, "summary_a")
            minute = n % 60
            w.writerow(
                (
                    hit,
                    "3TYPEEXAMPLE",
                    "Which summary is better?",
                    "$0.40",
                    f"3ASSIGN{n:06d}EXAMPLE",
                    f"AWORKER{_number(j.rater_id):02d}EXAMPLE",
                    "Rejected" if rejected else "Approved",
                    f"Tue Dec 01 10:{minute:02d}:00 UTC 2026",
                    str(30 + n % 50),
                    rid,
                    side,
                    answer,
                    "" if rejected else "x",
                    "x" if rejected else "",
                )
            )
    return buf.getvalue().encode()


# ----------------------------------------------------------------------------------------------
# The examples
# ----------------------------------------------------------------------------------------------


def _table_bytes(judgments: Sequence[Judgment]) -> bytes:
    return JudgmentTable.from_judgments(judgments).to_csv_bytes()


SHARED = "study_summarization"


def study_config(judgment_files: list[dict[str, Any]]) -> dict[str, Any]:
    """A study config reading ``judgment_files`` (paths relative to examples/, the config's
    folder) beside the shared pairs and readings of ``study_summarization/``."""
    return {
        "kind": "study",
        "seed": 20261202,
        "construct": _CONSTRUCT,
        "sequential": _SEQUENTIAL,
        "panel": {
            "name": "mixed realistic",
            "judges": [
                {"name": j["name"], "cost_per_judgment": j["cost_per_judgment"]} for j in _JUDGES
            ],
        },
        "humans": {"cost_per_judgment": 0.4},
        # how many more roots would settle it: within 5,000 more (the default 20,000 is far
        # beyond any study these examples stand for, and the tail replicates would run to it)
        "planning": {"max_extra_roots": 5000},
        "data": {
            "stimuli": {
                "path": f"{SHARED}/pairs.jsonl",
                "mapping": {
                    "id": "id",
                    "source": "source",
                    "treatment": "treatment",
                    "null_partner": "null_partner",
                },
            },
            "judgments": judgment_files,
            "reader_audit": {
                "path": f"{SHARED}/readings.csv",
                "kappa_min": 0.6,
                "cost_per_reading": 0.4,
            },
        },
        "gates": GATES,
    }


#: Each tool: its name and version, and what its export here is.
_TOOLS = {
    "labelstudio": (
        "Label Studio 1.x",
        "a JSON export (Export > JSON) of tasks with a `pairwise` control named `pref`; an "
        "invalid judgment is a cancelled (skipped) annotation",
    ),
    "argilla": (
        "Argilla 2.x",
        "a records export (`dataset.records.to_list(flatten=False)` written as JSON) with the "
        "label question `preference` (A = shown first, B); an invalid judgment is a `discarded` "
        "response",
    ),
    "mturk": (
        "Amazon Mechanical Turk",
        "a batch results CSV (`Batch_NNN_batch_results.csv`) with the answer `preference` "
        "(`summary_a` = shown first, `summary_b`); an invalid judgment is a `Rejected` assignment",
    ),
}


def _ordinal(n: int) -> str:
    suffix = "th" if 10 <= n % 100 <= 20 else {1: "st", 2: "nd", 3: "rd"}.get(n % 10, "th")
    return f"{n}{suffix}"


def readme(name: str, files: Mapping[str, str], ev: Evidence) -> str:
    """A data folder's README: synthetic, made by this script, what each file is."""
    lines = [
        f"# study_{name}: synthetic study data",
        "",
        f"**{SYNTHETIC_NOTE[0].upper()}{SYNTHETIC_NOTE[1:]}.** Every file here was written by "
        f"`{SCRIPT}` from one",
        f"simulated engine run: summarization family, four judges, seed {ENGINE['seed']}, true "
        f"h {ENGINE['truth']['true_h']}.",
        f"The engine itself reached {ev.engine_verdict} at root {ev.engine_roots}; its evidence "
        f"source was read on to {DATA_ROOTS} roots.",
        "Regenerate (byte-identical) from the repository root with",
        "",
        "    python scripts/make_study_examples.py",
        "",
        f"and run the study with `verdictpack examples/study_{name}.json --out OUT`.",
        "",
    ]
    if name == "summarization":
        lines += [
            "The tool examples (`study_labelstudio`, `study_argilla`, `study_mturk`) read the "
            "pairs, the model judgments and the readings here too, with the human judgments in "
            "their tool's format instead of `human_judgments.csv`.",
            "",
        ]
    if name in _TOOLS:
        tool, what = _TOOLS[name]
        lines += [
            f"The human judgments come from **{tool}**: {what}.",
            f"The pairs, the model judgments (canonical table) and the reader audit are those of "
            f"`{SHARED}/`, whose human judgments this export holds, so the verdict is the same.",
            "Text fields the tool would carry are left out to keep the file small (the importer "
            "reads the pair id, the treatment's side and the answers).",
            "",
        ]
    lines += ["| file | what |", "|---|---|"]
    lines += [f"| `{f}` | {what} |" for f, what in files.items()]
    lines += [
        "",
        "Edits made so that the policy has something to do (fixed rules, no random draw): every "
        f"{_ordinal(TIE_EVERY)} model judgment is a tie and every {_ordinal(INVALID_EVERY)} "
        f"invalid; judge `{ONE_ORDER_JUDGE}` lacks its null-first judgment on every "
        f"{_ordinal(ONE_ORDER_EVERY)} root; every {_ordinal(HUMAN_INVALID_EVERY)} human judgment "
        f"is invalid; the roots at every {_ordinal(NO_HUMANS_EVERY)} place of the engine's order "
        "have no human judgment (partial coverage by a rule fixed before the data: the study "
        "declares no human count per root, so those roots are missing at random by design and "
        "the report says so; invalid and missing answers are bounded both ways).",
        "",
    ]
    return "\n".join(lines)


_MODEL_TABLE = {"format": "table", "path": f"{SHARED}/model_judgments.csv"}


def example_files(ev: Evidence) -> dict[str, bytes]:
    """Every file this script writes, by path relative to examples/."""
    model = [j for j in ev.judgments if j.rater_kind == "model"]
    human = [j for j in ev.judgments if j.rater_kind == "human"]
    out: dict[str, bytes] = {}

    def example(name: str, specs: list[dict[str, Any]], data: dict[str, tuple[bytes, str]]) -> None:
        folder = f"study_{name}"
        out[f"{folder}.json"] = (json.dumps(study_config(specs), indent=2) + "\n").encode()
        described = {f: what for f, (_, what) in data.items()}
        out[f"{folder}/README.md"] = readme(name, described, ev).encode()
        for f, (content, _) in data.items():
            out[f"{folder}/{f}"] = content

    example(
        "summarization",
        [_MODEL_TABLE, {"format": "table", "path": f"{SHARED}/human_judgments.csv"}],
        {
            "pairs.jsonl": (
                ev.pairs.encode(),
                "the pairs (id, source, treatment, null partner), one JSON object a line",
            ),
            "model_judgments.csv": (_table_bytes(model), "the model judgments, canonical table"),
            "human_judgments.csv": (_table_bytes(human), "the human judgments, canonical table"),
            "readings.csv": (
                ev.readings,
                "the reader audit: double readings (root_id, reader_id, category)",
            ),
        },
    )
    tools: dict[str, tuple[dict[str, Any], bytes]] = {
        "labelstudio": (
            {
                "format": "labelstudio",
                "path": "labelstudio_export.json",
                "root_field": "pair_id",
                "control": "pref",
                "treatment_side_field": "treatment_side",
            },
            labelstudio_export(ev),
        ),
        "argilla": (
            {
                "format": "argilla",
                "path": "argilla_records.json",
                "question": "preference",
                "root_key": "metadata.pair_id",
                "value_map": {"A": "left", "B": "right"},
                "treatment_side_key": "metadata.treatment_side",
                "side_map": {"a": "left", "b": "right"},
            },
            argilla_export(ev),
        ),
        "mturk": (
            {
                "format": "mturk",
                "path": "batch_results.csv",
                "root_column": "pair_id",
                "answer_column": "preference",
                "value_map": {"summary_a": "left", "summary_b": "right"},
                "treatment_side_column": "treatment_side",
            },
            mturk_export(ev),
        ),
    }
    for name, (spec, content) in tools.items():
        rel = f"study_{name}/{spec['path']}"
        example(
            name,
            [_MODEL_TABLE, {**spec, "path": rel}],
            {spec["path"]: (content, f"the human judgments, {_TOOLS[name][0]} export")},
        )
    return out


def main(argv: Sequence[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    p.add_argument(
        "--out",
        type=Path,
        default=HERE,
        help="the examples folder (default: the repository's examples/)",
    )
    p.add_argument("--check", action="store_true", help="compare with the files, write nothing")
    args = p.parse_args(argv)
    files = example_files(make_evidence())
    differ = []
    for rel, data in sorted(files.items()):
        path = args.out / rel
        if args.check:
            if not path.is_file() or path.read_bytes() != data:
                differ.append(rel)
            continue
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(data)
        print(f"wrote {path} ({len(data):,} bytes)")
    if args.check:
        for rel in differ:
            print(f"differs: {rel}")
        print(f"{len(files) - len(differ)}/{len(files)} files as this script writes them")
        return 1 if differ else 0
    return 0


if __name__ == "__main__":
    sys.exit(main())
