"""The engine on any evidence source: a scripted source gets the verdict its values imply.

The expected verdict is computed here from the core's :class:`HTracker` fed the same values,
root by root, independently of the engine's sequential loop.
"""

from __future__ import annotations

import copy
import json
from pathlib import Path

import numpy as np
import pytest

from conftest import load_example
from verdictpack.config._compiler import load_source, parse_config
from verdictpack.core._hinterval import classify
from verdictpack.core._mixture import MixtureSpec
from verdictpack.core._tracker import HTracker
from verdictpack.core._tracks import TrackTrace
from verdictpack.evidence import EvidenceSource, RootEvidence
from verdictpack.kinds._engine import (
    LAYER,
    _stream_checks,
    plan_engine,
    run_engine,
    run_sequential,
)
from verdictpack.stimuli import Stimulus


class ScriptedSource:
    """Fixed choices on every root: each judge (both orders) and each human the same."""

    def __init__(self, judges: tuple[str, ...], model: int, human: tuple[int, ...]) -> None:
        self.judges, self.model, self.human = judges, model, human
        self.seen: list[str] = []

    @property
    def description(self) -> str:
        return "scripted test source"

    def judge(self, stimulus: Stimulus) -> RootEvidence:
        self.seen.append(stimulus.id)
        return RootEvidence(
            stimulus_id=stimulus.id,
            judges=self.judges,
            orders=("treatment-first", "null-first"),
            model_choices=tuple((self.model, self.model) for _ in self.judges),
            human_choices=self.human,
        )


def _config(tmp_path: Path, threshold_h: float | None = None):
    cfg = copy.deepcopy(load_example("engine_summarization.json"))
    cfg["stimuli"]["candidates"] = 300
    cfg["power"]["replicates"] = 50
    cfg["human"]["baseline"]["replicates"] = 2000
    if threshold_h is not None:
        cfg["construct"]["thresholds"]["h"] = threshold_h
        cfg["construct"]["extension_minimum_h"] = threshold_h / 2
    path = tmp_path / "engine.json"
    path.write_text(json.dumps(cfg))
    source = load_source(str(path))
    return cfg, source, parse_config(source, LAYER.model, LAYER.rules)


def _expected(cfg: dict, m: float, h: float, cap: int, threshold: float) -> tuple[str, int]:
    """The registered track's verdict and root, straight from the core tracker."""
    seq = cfg["sequential"]
    spec = MixtureSpec(lambdas=tuple(seq["lambdas"]), weights=None)
    tracker = HTracker(seq["construction"], cfg["construct"]["per_tail_alpha"], spec, threshold)
    for t in range(cap):
        tracker.update(m, h)
        lo, hi = tracker.h_interval
        verdict = classify(lo, hi, threshold, at_cap=t + 1 == cap)
        if verdict is not None:
            return verdict.value, t + 1
    raise AssertionError("no verdict at the cap")


def _judges(cfg: dict) -> tuple[str, ...]:
    return tuple(j["name"] for j in cfg["panel"]["judges"])


def test_the_simulated_source_is_a_source() -> None:
    assert isinstance(ScriptedSource(("a",), 1, (0,)), EvidenceSource)


def test_judges_prefer_the_treatment_humans_at_baseline(tmp_path: Path) -> None:
    cfg, source, parsed = _config(tmp_path)
    assert cfg["construct"]["human_baseline_rate"] == 0.5
    assert cfg["human"]["judgments_per_root"] == 2
    scripted = ScriptedSource(_judges(cfg), 1, (1, 0))  # M = 1, H = 0.5 on every root
    result = run_engine(parsed, source, evidence=scripted)
    threshold = result.construct.governing_threshold_h
    verdict, root = _expected(cfg, 1.0, 0.5, result.effective_cap, threshold)
    assert verdict == "EFFECT_SUPPORTED"
    assert (result.registered.verdict, result.registered.roots_at_verdict) == (verdict, root)
    assert result.roots_run == root == len(scripted.seen)
    assert result.evidence_source == "scripted test source"
    # the source was asked for the admitted stimuli, in order, once each
    admitted = [s.root_id for s in result.factory.admitted]
    assert scripted.seen == admitted[:root]
    assert [row["stimulus_id"] for row in result.evidence] == scripted.seen
    assert all(row["M"] == 1.0 and row["H"] == 0.5 for row in result.evidence)


def test_judges_prefer_the_null_humans_the_treatment(tmp_path: Path) -> None:
    cfg, source, parsed = _config(tmp_path, threshold_h=0.05)
    scripted = ScriptedSource(_judges(cfg), 0, (1, 1))  # M = 0, H = 1
    result = run_engine(parsed, source, evidence=scripted)
    threshold = result.construct.governing_threshold_h
    assert threshold == pytest.approx(0.05)
    verdict, root = _expected(cfg, 0.0, 1.0, result.effective_cap, threshold)
    assert verdict == "NO_POSITIVE_EFFECT"
    assert (result.registered.verdict, result.registered.roots_at_verdict) == (verdict, root)
    assert result.roots_run == root


def test_plan_and_run_without_the_proof(tmp_path: Path) -> None:
    """The stages apart: a plan (no source) and a run on it give the same tracks as the engine."""
    cfg, _, parsed = _config(tmp_path)
    plan = plan_engine(parsed)
    tracks = run_sequential(plan, ScriptedSource(_judges(cfg), 1, (1, 0)))
    verdict, root = _expected(
        cfg, 1.0, 0.5, plan.effective_cap, plan.construct.governing_threshold_h
    )
    assert (tracks.registered.verdict, tracks.registered.roots_at_verdict) == (verdict, root)
    assert tracks.roots_run == root


class UnknownCellSource:
    """Two trials per order: treatment first (1, 0), null first (1, unknown); one human of two
    gives no answer: each unknown is bounded both ways, never dropped."""

    def __init__(self, judges: tuple[str, ...]) -> None:
        self.judges = judges

    @property
    def description(self) -> str:
        return "a source with unknown cells"

    def judge(self, stimulus: Stimulus) -> RootEvidence:
        return RootEvidence(
            stimulus_id=stimulus.id,
            judges=self.judges,
            orders=("treatment-first", "null-first"),
            model_choices=tuple((1, 0, 1, None) for _ in self.judges),
            human_choices=(0, None),
        )


def test_unknown_cells_are_bounded_both_ways_in_the_engine(tmp_path: Path) -> None:
    """M_i in [1/2, 3/4] and H_i in [0, 1/2] on every root: the registered track is the
    TrackTrace of those bounds, and the rows and stream checks read the known cells by order."""
    cfg, _, parsed = _config(tmp_path)
    plan = plan_engine(parsed)
    tracks = run_sequential(plan, UnknownCellSource(_judges(cfg)))
    n = tracks.roots_run
    assert n > 0
    row = tracks.rows[0]
    assert (row["M"], row["H"]) == (0.625, 0.25)  # the midpoints
    settings = plan.sequential.tracks(plan.construct)
    want = TrackTrace(
        settings,
        np.full(n, 0.5),
        np.full(n, 0.0),
        plan.effective_cap,
        m_upper=np.full(n, 0.75),
        h_upper=np.full(n, 0.5),
    )
    assert want.bounded
    assert tracks.registered == want.at_stop("NO_VERDICT_WHEN_REGISTERED_STOPPED")["registered"]
    last = tracks.rows[-1]
    assert last["h_interval"] == [want.h_lo["registered"][-1], want.h_hi["registered"][-1]]
    checks = _stream_checks(tracks.seen, 0.0, 0.0)
    assert checks["treatment_first_rate"] == 0.5  # the first half of each judge's cells
    assert checks["treatment_second_rate"] == 1.0  # the known cell of the second half
    assert checks["model_mean_observed"] == 0.625
