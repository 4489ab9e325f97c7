"""The three tracks of a sequential run fed one root at a time (verdictpack.core._tracks.
TrackStream, the engine's and the live study's path): each track is the scalar HTracker to the
last bits, frozen at its first verdict, the registered one INCONCLUSIVE at the cap."""

from __future__ import annotations

import numpy as np
import pytest

from verdictpack._rng import stream
from verdictpack.core._hinterval import classify
from verdictpack.core._mixture import MixtureSpec
from verdictpack.core._tracker import HTracker
from verdictpack.core._tracks import TRACKS, TrackSettings, TrackStream

SPEC = MixtureSpec()
CLAIMS = {"registered": "claim at 0.3", "extension": "claim at 0.2", "comparison": "claim 0.3"}
TOL = 1e-12  # the compiled kernel against the scalar trackers (they agree to about 1e-15)


def _run(construction: str = "hybrid", other: str = "corners", alpha: float = 0.05) -> TrackStream:
    settings = TrackSettings(construction, other, alpha, SPEC, 0.3, 0.2, CLAIMS)
    return TrackStream(settings, 10_000, np.arange(9) / 8, np.arange(3) / 2)


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
def test_tracks_equal_the_scalar_trackers_and_freeze_at_first_verdict(
    construction: str, other: str
) -> None:
    values = _stream(400, 0.85, 0.3)
    run = _run(construction, other)
    direct = {
        "registered": HTracker(construction, 0.05, SPEC, 0.3),
        "extension": HTracker(construction, 0.05, SPEC, 0.2),
        "comparison": HTracker(other, 0.05, SPEC, 0.3),
    }
    first: dict[str, tuple[int, str]] = {}
    for k, (m, h) in enumerate(values, start=1):
        run.step(m, h)
        for name, t in direct.items():
            t.update(m, h)
            assert run.interval(name) == pytest.approx(t.h_interval, abs=TOL)
            assert run.bounds(name)["model"] == pytest.approx(t.model_bounds, abs=TOL)
            assert run.bounds(name)["human"] == pytest.approx(t.human_bounds, abs=TOL)
            v = classify(*t.h_interval, t.threshold)
            if name not in first and v is not None:
                first[name] = (k, v.value)
    assert run.roots == 400
    assert set(first) == set(TRACKS)  # a strong effect: every track decides
    trace = run.trace()
    frozen = trace.over_all("X")
    at_stop = trace.at_stop("X")
    for name, (k, verdict) in first.items():
        assert run.verdicts[name] == verdict
        assert (frozen[name].roots_at_verdict, frozen[name].verdict) == (k, verdict)
        assert frozen[name].claim == CLAIMS[name]
        assert frozen[name].error_per_side == direct[name].error_per_side
        if name == "registered":  # frozen at its verdict: the interval there
            assert at_stop[name].h_interval == (trace.h_lo[name][k - 1], trace.h_hi[name][k - 1])
    reg = at_stop["registered"]
    assert reg.verdict == "EFFECT_SUPPORTED" and reg.roots_at_verdict < 400  # type: ignore[operator]
    # the tracks read on after the freeze; the frozen state does not move
    assert run.interval("registered") != reg.h_interval
    # the weaker extension threshold decides no later than the registered one
    assert frozen["extension"].roots_at_verdict <= reg.roots_at_verdict  # type: ignore[operator]


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
    assert run.roots == run.trace().at_stop("X")["registered"].roots_at_verdict


def test_at_cap_decides_the_registered_track_only() -> None:
    settings = TrackSettings("hybrid", "corners", 0.05, SPEC, 0.3, 0.2, CLAIMS)
    run = TrackStream(settings, 5, np.arange(9) / 8, np.arange(3) / 2)
    values = _stream(5, 0.6, 0.5)
    for k, (m, h) in enumerate(values):
        run.step(m, h, at_cap=k == len(values) - 1)
    assert dict(run.verdicts) == {"registered": "INCONCLUSIVE"}
    res = run.trace().at_stop("NO_VERDICT")
    assert list(res) == list(TRACKS)
    assert (res["registered"].verdict, res["registered"].roots_at_verdict) == ("INCONCLUSIVE", 5)
    assert res["extension"].verdict == res["comparison"].verdict == "NO_VERDICT"
    assert res["extension"].roots_at_verdict is None
    assert res["extension"].h_interval == run.interval("extension")


def test_over_all_reports_every_track_as_it_stands() -> None:
    run = _run()
    for m, h in _stream(300, 0.55, 0.5):
        run.step(m, h)
    now = run.trace().over_all("over all data")
    for name, t in now.items():
        assert t.h_interval == run.interval(name)
        assert t.verdict == run.state_labels()[name].replace("CONTINUE", "over all data")


def test_no_root_no_interval() -> None:
    out = _run().trace().over_all("INSTRUMENT_INVALID")
    for t in out.values():
        assert t.h_interval is t.model_bounds is t.human_bounds is t.diff_bounds is None
        assert t.verdict == "INSTRUMENT_INVALID"
    assert out["registered"].error_per_side == HTracker("hybrid", 0.05, SPEC, 0.3).error_per_side


def test_model_only_roots_feed_no_human_stream() -> None:
    run = _run()
    for m in (np.arange(30) % 9 / 8).tolist():
        run.step(m, None)
    assert run.bounds("registered")["human"] == (0.0, 1.0)
    assert run.bounds("registered")["model"] != (0.0, 1.0)
    assert run.state_labels()["registered"] == "CONTINUE"


def test_claims_must_name_every_track() -> None:
    settings = TrackSettings("hybrid", "corners", 0.05, SPEC, 0.3, 0.2, {"registered": "c"})
    with pytest.raises(KeyError):
        TrackStream(settings, 10, np.arange(9) / 8, np.arange(3) / 2)
