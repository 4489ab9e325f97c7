"""A study's files as an evidence source (verdictpack.evidence._source.FileEvidence) and the two
ways every kind feeds a source to the tracks (stream_evidence, feed_evidence).

The cells of each root are worked by hand from the rows (tests/evidence/test_assemble.py's
table); the per-root path is held to the columns the study's block hands over, and a source
without a block of its own gives, judged root by root, the block its roots make.
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest
from test_assemble import JUDGES, ORDER, ROWS, _table

from verdictpack._errors import InputError
from verdictpack.core._mixture import MixtureSpec
from verdictpack.core._tracks import TrackSettings, TrackStream, TrackTrace
from verdictpack.evidence._assemble import Policy, root_values
from verdictpack.evidence._source import (
    EvidenceSource,
    FileEvidence,
    RootEvidence,
    evidence_block,
    feed_evidence,
    stream_evidence,
)
from verdictpack.stimuli import Stimulus

CLAIMS = {"registered": "a", "extension": "b", "comparison": "c"}
SETTINGS = TrackSettings("hybrid", "corners", 0.05, MixtureSpec(), 0.3, 0.2, CLAIMS)


def _stimulus(root: str) -> Stimulus:
    return Stimulus(id=root, source=None, treatment="t " + root, null_partner="n " + root)


def _source(tmp_path: Path, humans_per_root: int | None = 4) -> FileEvidence:
    table = _table(tmp_path, ROWS)
    values = root_values(table, ORDER, 3, JUDGES, 1, Policy(), humans_per_root, ("bad",))
    return FileEvidence(values, table, JUDGES, 1, Policy(), humans_per_root, "test files")


def test_a_study_s_files_are_an_evidence_source(tmp_path: Path) -> None:
    assert isinstance(_source(tmp_path), EvidenceSource)


def test_each_root_s_cells_and_bounds_by_hand(tmp_path: Path) -> None:
    src = _source(tmp_path)
    r1 = src.judge(_stimulus("r1"))
    # ja: treatment first -> treatment (1), null first -> tie (½); jb: invalid, missing
    assert r1.model_choices == ((1.0, 0.5), (None, None))
    # humans: treatment, tie, invalid (unknown), and one shortfall under 4 declared
    assert sorted(r1.human_choices, key=lambda v: -1 if v is None else v) == [None, None, 0.5, 1]
    assert r1.bounds == (3 / 8, 7 / 8, 3 / 8, 7 / 8)
    assert (r1.model_value, r1.human_value) == (5 / 8, 5 / 8)
    assert (r1.model_touches, r1.human_touches) == (4, 4)
    r2 = src.judge(_stimulus("r2"))
    assert r2.model_choices == ((0.0, None), (None, None))
    assert r2.human_choices == (None, None, None, None)  # no human: all of H unknown
    assert r2.bounds == (0.0, 6 / 8, 0.0, 1.0)


@pytest.mark.parametrize("humans_per_root", [None, 4])
def test_the_cells_give_the_bounds_the_columns_hold(
    tmp_path: Path, humans_per_root: int | None
) -> None:
    """Each root's cells, without the bounds the file source states, give (every unknown
    scored 0 and 1) the bounds the study's columns hold."""
    src = _source(tmp_path, humans_per_root)
    block = src.block([_stimulus(r) for r in ("r2", "r1")])
    for i, root in enumerate(block.root_ids):
        ev = src.judge(_stimulus(root))
        derived = replace(ev, bounds=None).value_bounds
        want = tuple(float(c[i]) for c in block.columns)
        np.testing.assert_array_equal(derived, want)
        assert ev.value_bounds == ev.bounds


def test_a_root_the_data_did_not_enter_is_refused_by_name(tmp_path: Path) -> None:
    src = _source(tmp_path)
    for root in ("r3", "bad", "nowhere"):
        with pytest.raises(InputError, match=root):
            src.judge(_stimulus(root))
        with pytest.raises(InputError, match=root):
            src.block([_stimulus("r1"), _stimulus(root)])


def test_a_block_in_another_order_takes_the_roots_asked_for(tmp_path: Path) -> None:
    src = _source(tmp_path)
    whole = src.block([_stimulus("r2"), _stimulus("r1")])
    swapped = src.block([_stimulus("r1"), _stimulus("r2")])
    assert swapped.root_ids == ("r1", "r2")
    for a, b in zip(swapped.columns, whole.columns, strict=True):
        np.testing.assert_array_equal(a, b[::-1])


class _RootByRoot:
    """A source without a block of its own: the file source's judge, one root at a time."""

    def __init__(self, inner: FileEvidence) -> None:
        self.inner, self.asked = inner, 0

    @property
    def description(self) -> str:
        return "root by root"

    def judge(self, stimulus: Stimulus) -> RootEvidence:
        self.asked += 1
        return self.inner.judge(stimulus)


def test_a_source_judged_root_by_root_gives_the_block_and_the_trace(tmp_path: Path) -> None:
    src = _source(tmp_path)
    stimuli = [_stimulus("r2"), _stimulus("r1")]
    by_root = _RootByRoot(src)
    got = evidence_block(by_root, stimuli)
    assert by_root.asked == 2 and got.root_ids == ("r2", "r1")
    want = src.block(stimuli)
    for a, b in zip(got.columns, want.columns, strict=True):
        np.testing.assert_array_equal(a, b)
    # fed as one block, or root by root until the verdict: the numbers of TrackTrace
    one = TrackStream(SETTINGS, 100, (), ())
    fed = feed_evidence(src, stimuli, one)
    assert fed is want
    streamed = TrackStream(SETTINGS, 100, (), ())
    seen = list(stream_evidence(by_root, stimuli, streamed, 100))
    assert [ev.stimulus_id for ev in seen] == ["r2", "r1"]
    trace = TrackTrace(SETTINGS, want.m_lo, want.h_lo, 100, m_upper=want.m_hi, h_upper=want.h_hi)
    for s in (one, streamed):
        np.testing.assert_array_equal(s.trace().h_lo["registered"], trace.h_lo["registered"])
        np.testing.assert_array_equal(s.trace().h_hi["registered"], trace.h_hi["registered"])


def test_stream_evidence_stops_at_the_registered_verdict() -> None:
    """A source that always prefers the treatment while the humans never do: the registered
    track decides, and no stimulus after that root is judged."""

    class Strong:
        description = "strong"

        def __init__(self) -> None:
            self.asked = 0

        def judge(self, stimulus: Stimulus) -> RootEvidence:
            self.asked += 1
            return RootEvidence(
                stimulus.id, ("a",), ("treatment_first", "null_first"), ((1, 1),), (0,)
            )

    source = Strong()
    stimuli = [_stimulus(f"s{k}") for k in range(500)]
    tracks = TrackStream(SETTINGS, 500, (), ())
    seen = list(stream_evidence(source, stimuli, tracks, 500))
    assert tracks.stopped and tracks.verdicts["registered"] == "EFFECT_SUPPORTED"
    assert len(seen) == source.asked == tracks.roots < 500


def test_a_block_that_is_not_a_block_is_refused() -> None:
    class Wrong:
        description = "wrong"

        def judge(self, stimulus: Stimulus) -> RootEvidence:
            raise AssertionError("not called")

        def block(self, stimuli: list[Stimulus]) -> object:
            return {"m_lo": []}

    with pytest.raises(InputError, match="EvidenceBlock"):
        evidence_block(Wrong(), [_stimulus("x")])


def test_no_stimulus_is_an_empty_block_and_feeds_no_root(tmp_path: Path) -> None:
    src = _source(tmp_path)
    for source in (src, _RootByRoot(src)):
        block = evidence_block(source, [])
        assert block.root_ids == () and all(c.size == 0 for c in block.columns)
        tracks = TrackStream(SETTINGS, 10, (), ())
        feed_evidence(_RootByRoot(src), [], tracks)
        assert tracks.roots == 0 and tracks.trace().n == 0
