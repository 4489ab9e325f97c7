"""The three tracks of a sequential run (verdictpack.core._tracks.TrackRun)."""

from __future__ import annotations

import numpy as np
import pytest

from verdictpack._rng import stream
from verdictpack.core._hinterval import classify
from verdictpack.core._mixture import MixtureSpec
from verdictpack.core._tracker import HTracker
from verdictpack.core._tracks import TRACKS, TrackRun, TrackSettings, track_state

SPEC = MixtureSpec()
CLAIMS = {"registered": "claim at 0.3", "extension": "claim at 0.2", "comparison": "claim 0.3"}


def _run(construction: str = "hybrid", other: str = "corners", alpha: float = 0.05) -> TrackRun:
    return TrackRun(TrackSettings(construction, other, alpha, SPEC, 0.3, 0.2, CLAIMS))


def _stream(
    n: int, m_rate: float, h_rate: float, seed: int = 1
) -> list[tuple[float, float | None]]:
    """n roots: M the mean of 8 Bernoulli cells, H of 2 (on 60 % of the roots, else None)."""
    rng = stream(seed, "tests/tracks")
    m = rng.binomial(8, m_rate, n) / 8
    h = rng.binomial(2, h_rate, n) / 2
    has = rng.random(n) < 0.6
    return [(float(a), float(b) if c else None) for a, b, c in zip(m, h, has, strict=True)]


@pytest.mark.parametrize(("construction", "other"), [("hybrid", "corners"), ("corners", "hybrid")])
def test_trackers_equal_direct_updates_and_freeze_at_first_verdict(
    construction: str, other: str
) -> None:
    values = _stream(400, 0.85, 0.3)
    run = _run(construction, other)
    direct = {
        "registered": HTracker(construction, 0.05, SPEC, 0.3),
        "extension": HTracker(construction, 0.05, SPEC, 0.2),
        "comparison": HTracker(other, 0.05, SPEC, 0.3),
    }
    first: dict[str, tuple[int, str, tuple[float, float]]] = {}
    for k, (m, h) in enumerate(values, start=1):
        run.step(m, h)
        for name, t in direct.items():
            t.update(m, h)
            assert run.trackers[name].h_interval == t.h_interval
            assert run.trackers[name].model_bounds == t.model_bounds
            v = classify(*t.h_interval, t.threshold)
            if name not in first and v is not None:
                first[name] = (k, v.value, t.h_interval)
    assert run.roots == 400
    assert set(first) == set(TRACKS)  # a strong effect: every track decides
    for name, (k, verdict, iv) in first.items():
        frozen = run.verdicts[name]
        assert (frozen.roots_at_verdict, frozen.verdict, frozen.h_interval) == (k, verdict, iv)
        assert frozen.claim == CLAIMS[name]
        assert frozen.construction == run.trackers[name].construction
        assert frozen.error_per_side == run.trackers[name].error_per_side
    reg = run.verdicts["registered"]
    assert reg.verdict == "EFFECT_SUPPORTED"
    # the trackers read on after the freeze; the frozen state does not move
    assert reg.roots_at_verdict < 400  # type: ignore[operator]
    assert run.registered.h_interval != reg.h_interval
    assert run.results("X")["registered"] == reg
    # the weaker extension threshold decides no later than the registered one
    assert run.verdicts["extension"].roots_at_verdict <= reg.roots_at_verdict  # type: ignore[operator]


def test_stopped_and_state_labels() -> None:
    run = _run()
    assert not run.stopped
    assert run.state_labels() == dict.fromkeys(TRACKS, "CONTINUE")
    for m, h in _stream(400, 0.85, 0.3):
        run.step(m, h)
        labels = run.state_labels()
        assert (labels["registered"] != "CONTINUE") == run.stopped
        if run.stopped:
            break
    assert run.state_labels()["registered"] == "EFFECT_SUPPORTED"
    assert run.roots == run.verdicts["registered"].roots_at_verdict


def test_at_cap_decides_the_registered_track_only() -> None:
    run = _run()
    values = _stream(5, 0.6, 0.5)
    for k, (m, h) in enumerate(values):
        run.step(m, h, at_cap=k == len(values) - 1)
    assert set(run.verdicts) == {"registered"}
    reg = run.verdicts["registered"]
    assert (reg.verdict, reg.roots_at_verdict) == ("INCONCLUSIVE", 5)
    res = run.results("NO_VERDICT")
    assert list(res) == list(TRACKS)
    assert res["extension"].verdict == res["comparison"].verdict == "NO_VERDICT"
    assert res["extension"].roots_at_verdict is None
    assert res["extension"].h_interval == run.trackers["extension"].h_interval


def test_now_reports_every_track_as_it_stands() -> None:
    run = _run()
    for m, h in _stream(300, 0.85, 0.3):
        run.step(m, h)
    now = run.now("over all data")
    assert {t.verdict for t in now.values()} == {"over all data"}
    for name, t in now.items():
        assert t.h_interval == run.trackers[name].h_interval
        assert t.roots_at_verdict is None


def test_track_state_before_any_root() -> None:
    t = HTracker("hybrid", 0.05, SPEC, 0.3)
    s = track_state(t, "CONTINUE", None, "registered", "c")
    assert s.h_interval is s.model_bounds is s.human_bounds is s.diff_bounds is None
    assert s.error_per_side == t.error_per_side == pytest.approx(0.1)


def test_model_only_roots_feed_no_human_stream() -> None:
    run = _run()
    for m in np.linspace(0.2, 0.9, 30).tolist():
        run.step(m, None)
    low = run.registered.lower_tracker
    assert (low.model.t, low.human.t) == (30, 0) and not run.registered.split
    assert run.registered.human_bounds == (0.0, 1.0)
    assert run.registered.model_bounds != (0.0, 1.0)
    assert run.state_labels()["registered"] == "CONTINUE"


def test_claims_must_name_every_track() -> None:
    with pytest.raises(KeyError):
        TrackRun(TrackSettings("hybrid", "corners", 0.05, SPEC, 0.3, 0.2, {"registered": "c"}))
