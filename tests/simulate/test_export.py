"""Simulated evidence written as study files (verdictpack.simulate._export)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from verdictpack._errors import InputError
from verdictpack._rng import stream
from verdictpack.evidence._assemble import Policy, root_values
from verdictpack.evidence._readings import read_readings
from verdictpack.evidence._table import read_table
from verdictpack.simulate._export import (
    SYNTHETIC_NOTE,
    judgments_from_evidence,
    pairs_jsonl,
    readings_from_audit,
)
from verdictpack.simulate._human import simulate_reader_audit
from verdictpack.stimuli._pairs import read_pairs
from verdictpack.stimuli._stimulus import Stimulus

ROWS: list[dict[str, Any]] = [
    {
        "stimulus_id": "s1",
        "model_choices": {"ja": [1, 0], "jb": [1, 1]},
        "human_choices": [0, 1, 0],
    },
    {"stimulus_id": "s2", "model_choices": {"ja": [0, 0], "jb": [0, 1]}, "human_choices": []},
]


def test_table_rows_of_an_evidence_trail() -> None:
    t = judgments_from_evidence(ROWS, model_cost={"ja": 0.5, "jb": 0.25})
    got = [(j.root_id, j.rater_id, j.rater_kind, j.order, j.choice, j.cost) for j in t]
    assert got == [
        ("s1", "ja", "model", "treatment_first", "treatment", 0.5),
        ("s1", "ja", "model", "null_first", "null_partner", 0.5),
        ("s1", "jb", "model", "treatment_first", "treatment", 0.25),
        ("s1", "jb", "model", "null_first", "treatment", 0.25),
        ("s1", "human-0", "human", "unknown", "null_partner", None),
        ("s1", "human-1", "human", "unknown", "treatment", None),
        ("s1", "human-2", "human", "unknown", "null_partner", None),
        ("s2", "ja", "model", "treatment_first", "null_partner", 0.5),
        ("s2", "ja", "model", "null_first", "null_partner", 0.5),
        ("s2", "jb", "model", "treatment_first", "null_partner", 0.25),
        ("s2", "jb", "model", "null_first", "treatment", 0.25),
    ]
    assert t.duplicates() == []


def test_swapped_order_labels_and_prefix() -> None:
    t = judgments_from_evidence(
        ROWS[:1], orders=("treatment_second", "treatment_first"), human_prefix="p"
    )
    first = [(j.rater_id, j.order, j.choice) for j in t][:2]
    assert first == [("ja", "null_first", "treatment"), ("ja", "treatment_first", "null_partner")]
    assert {j.rater_id for j in t if j.rater_kind == "human"} == {"p0", "p1", "p2"}
    assert all(j.cost is None for j in t)


@pytest.mark.parametrize(
    "orders", [("treatment_first",), ("treatment_first", "null_first"), ("a", "b", "c")]
)
def test_order_labels_refused(orders: tuple[str, ...]) -> None:
    with pytest.raises(InputError) as err:
        judgments_from_evidence(ROWS, orders=orders)
    assert err.value.parameter == "orders"


def test_values_equal_the_engine_means() -> None:
    """M_i is the mean of the 2J model choices and H_i of the human choices, as in the engine."""
    t = judgments_from_evidence(ROWS)
    v = root_values(t, ("s2", "s1"), 2, ("ja", "jb"), 1, Policy(), None)
    assert v.root_ids == ("s2", "s1")
    assert v.m.tolist() == [1 / 4, 3 / 4]
    assert np.isnan(v.h[0]) and v.h[1] == 1 / 3


def test_table_round_trips_through_its_csv(tmp_path: Path) -> None:
    t = judgments_from_evidence(ROWS, model_cost={"ja": 0.5, "jb": 0.25})
    p = tmp_path / "judgments.csv"
    p.write_bytes(t.to_csv_bytes())
    back = read_table(p)
    assert back.defects == ()
    assert back.table.to_csv_bytes() == t.to_csv_bytes()


@pytest.mark.parametrize("source", ["the source passage", None])
def test_pairs_jsonl_reads_back(tmp_path: Path, source: str | None) -> None:
    stimuli = (
        Stimulus(id="a", source=source, treatment="Tëxt one.", null_partner="Text one"),
        Stimulus(id="b", source=source, treatment='say "x"', null_partner="say x"),
    )
    text = pairs_jsonl(stimuli)
    recs = [json.loads(line) for line in text.splitlines()]
    assert [r["note"] for r in recs] == [SYNTHETIC_NOTE] * 2
    assert [r["source"] for r in recs] == [source] * 2
    assert "synthetic" in SYNTHETIC_NOTE
    p = tmp_path / "pairs.jsonl"
    p.write_text(text, encoding="utf-8")
    mapping = {"id": "id", "treatment": "treatment", "null_partner": "null_partner"}
    if source is not None:
        mapping["source"] = "source"
    got = read_pairs(p, mapping)
    assert got.defects == ()
    assert got.stimuli == stimuli


def test_readings_from_audit(tmp_path: Path) -> None:
    audit = simulate_reader_audit(12, 0.8, stream(4, "tests/export/audit"), n_categories=3)
    r = readings_from_audit(audit)
    assert len(r) == 24
    assert r.root[:4] == ("audit-0001", "audit-0001", "audit-0002", "audit-0002")
    assert r.reader[:2] == ("reader-a", "reader-b")
    assert r.category[0::2] == tuple(f"c{a}" for a in audit.reader_a)
    assert r.category[1::2] == tuple(f"c{b}" for b in audit.reader_b)
    assert r.lines == tuple(range(2, 26))
    p = tmp_path / "readings.csv"
    p.write_bytes(r.to_csv_bytes())
    back, defects = read_readings(p)
    assert defects == () and back == r
