"""The three tracks fed one root at a time (verdictpack.core._tracks.TrackStream): the numbers
of TrackTrace over the same roots, bit for bit, and each step's verdict the trace's."""

from __future__ import annotations

import numpy as np
import pytest
from numpy.typing import NDArray

from verdictpack._errors import InputError
from verdictpack._rng import stream
from verdictpack.core._mixture import MixtureSpec
from verdictpack.core._tracks import TRACKS, TrackSettings, TrackStream, TrackTrace

SPEC = MixtureSpec()
CLAIMS = {"registered": "claim at 0.3", "extension": "claim at 0.2", "comparison": "claim 0.3"}
CELLS = 12  # 3 judges x 2 orders x 2 trials: M in half units over 2 x 12
M_SUPPORT = np.arange(2 * CELLS + 1) / (2 * CELLS)
H_SUPPORT = np.unique(np.concatenate([np.arange(3) / 2, np.arange(5) / 4]))


def _values(
    n: int, m_rate: float, bounded_from: int | None, seed: int
) -> tuple[NDArray[np.float64], ...]:
    """n roots: M_lo / M_hi in half units (unknown cells widen M from ``bounded_from`` on), H
    the mean of 2 humans on 70 % of the roots (NaN elsewhere), one unknown vote widening it."""
    rng = stream(seed, "tests/track_stream")
    halves = 2 * rng.binomial(CELLS, m_rate, n)
    unknown = np.zeros(n, np.int64)
    h_lo = rng.binomial(2, 0.45, n) / 2
    h_hi = h_lo.copy()
    if bounded_from is not None:
        later = np.arange(n) >= bounded_from
        unknown = np.where(later, rng.binomial(2, 0.3, n), 0)
        halves = np.minimum(halves, 2 * (CELLS - unknown))
        one = later & (rng.random(n) < 0.2)
        h_lo = np.where(one, rng.binomial(1, 0.45, n) / 4, h_lo)
        h_hi = np.where(one, h_lo + 0.5, h_hi)
    m_lo = halves / (2 * CELLS)
    m_hi = (halves + 2 * unknown) / (2 * CELLS)
    no_h = rng.random(n) >= 0.7
    return m_lo, m_hi, np.where(no_h, np.nan, h_lo), np.where(no_h, np.nan, h_hi)


def _settings(construction: str, bets: str) -> TrackSettings:
    other = "corners" if construction == "hybrid" else "hybrid"
    return TrackSettings(construction, other, 0.025, SPEC, 0.3, 0.2, CLAIMS, bets, 400)


def _fed(settings: TrackSettings, values: tuple[NDArray[np.float64], ...], cap: int) -> TrackStream:
    m_lo, m_hi, h_lo, h_hi = values
    s = TrackStream(settings, cap, M_SUPPORT, H_SUPPORT)
    n = m_lo.size
    for i in range(n):
        h = None if np.isnan(h_lo[i]) else (float(h_lo[i]), float(h_hi[i]))
        s.step((float(m_lo[i]), float(m_hi[i])), h, at_cap=i + 1 == min(cap, n))
    return s


@pytest.mark.parametrize("construction", ["hybrid", "corners"])
@pytest.mark.parametrize("bets", ["grid", "horizon"])
@pytest.mark.parametrize("bounded_from", [None, 0, 120])
def test_the_stream_hands_over_the_trace_of_the_same_roots_bit_for_bit(
    construction: str, bets: str, bounded_from: int | None
) -> None:
    values = _values(300, 0.62, bounded_from, seed=3)
    settings = _settings(construction, bets)
    fed = _fed(settings, values, cap=250)
    for n in (300, 137, 0):
        got = fed.trace(n)
        m_lo, m_hi, h_lo, h_hi = (v[:n] for v in values)
        want = TrackTrace(settings, m_lo, h_lo, 250, m_upper=m_hi, h_upper=h_hi)
        assert (got.n, got.cap, got.bounded) == (want.n, want.cap, want.bounded)
        assert got.bounded == (bounded_from is not None and n > bounded_from)
        for name in TRACKS:
            assert np.array_equal(got.bounds[name], want.bounds[name])
            assert np.array_equal(got.h_lo[name], want.h_lo[name])
            assert np.array_equal(got.h_hi[name], want.h_hi[name])
            assert np.array_equal(got.codes[name], want.codes[name])
            assert got.track_alphas[name] == want.track_alphas[name]
        assert got.at_stop("X") == want.at_stop("X")
        assert got.over_all("X") == want.over_all("X")


@pytest.mark.parametrize("bounded_from", [None, 0, 40])
def test_each_step_decides_what_the_trace_reads_at_that_root(bounded_from: int | None) -> None:
    """A strong effect, so every track decides: the stream's frozen verdicts and the registered
    interval after every root are the trace's (the registered one at its stop)."""
    values = _values(400, 0.85, bounded_from, seed=5)
    settings = _settings("hybrid", "grid")
    s = TrackStream(settings, 400, M_SUPPORT, H_SUPPORT)
    m_lo, m_hi, h_lo, h_hi = values
    want = TrackTrace(settings, m_lo, h_lo, 400, m_upper=m_hi, h_upper=h_hi)
    for i in range(400):
        h = None if np.isnan(h_lo[i]) else (float(h_lo[i]), float(h_hi[i]))
        s.step((float(m_lo[i]), float(m_hi[i])), h)
        for name in TRACKS:
            assert s.state_labels()[name] == want.labels(name)[i], (name, i)
        lo, hi = s.interval("registered")
        assert lo == pytest.approx(want.h_lo["registered"][i], abs=1e-12)
        assert hi == pytest.approx(want.h_hi["registered"][i], abs=1e-12)
    assert s.stopped
    assert set(s.verdicts) == set(TRACKS)
    assert s.verdicts["registered"] == want.at_stop("X")["registered"].verdict


def test_the_cap_makes_the_registered_track_inconclusive() -> None:
    values = _values(60, 0.5, None, seed=7)
    s = _fed(_settings("hybrid", "grid"), values, cap=20)
    assert s.verdicts["registered"] == "INCONCLUSIVE"
    assert s.trace().at_stop("X")["registered"].verdict == "INCONCLUSIVE"


@pytest.mark.parametrize(
    ("m", "h", "what"),
    [
        ((0.5, 0.4), None, "M (root 1)"),
        (1.5, None, "M (root 1)"),
        (-0.25, None, "M (root 1)"),
        (0.5, (0.6, 0.5), "H (root 1)"),
        (0.5, 1.25, "H (root 1)"),
    ],
)
def test_a_value_out_of_range_or_out_of_order_is_refused_by_name(
    m: float | tuple[float, float], h: float | tuple[float, float] | None, what: str
) -> None:
    s = TrackStream(_settings("hybrid", "grid"), 10, M_SUPPORT, H_SUPPORT)
    with pytest.raises(InputError) as err:
        s.step(m, h)
    assert what in str(err.value)
    assert s.roots == 0


@pytest.mark.parametrize("bets", ["grid", "plugin", "blend", "horizon"])
def test_values_outside_the_supports_widen_them_with_the_same_numbers(bets: str) -> None:
    """An observation that is a probability: almost every root brings a new M value (and some
    a new H value); the stream widens its supports and replays, and its trace is TrackTrace's."""
    rng = stream(9, "tests/track_stream/probability")
    n = 160
    m = np.round(rng.beta(6, 4, n), 6)
    h = np.where(rng.random(n) < 0.7, rng.binomial(3, 0.45, n) / 3, np.nan)
    settings = _settings("hybrid", bets)
    s = TrackStream(settings, 1000, M_SUPPORT, H_SUPPORT)
    for i in range(n):
        s.step(float(m[i]), None if np.isnan(h[i]) else float(h[i]), at_cap=i + 1 == n)
    got = s.trace()
    want = TrackTrace(settings, m, h, 1000)
    for name in TRACKS:
        assert np.array_equal(got.bounds[name], want.bounds[name])
        assert np.array_equal(got.h_lo[name], want.h_lo[name])
        assert np.array_equal(got.h_hi[name], want.h_hi[name])
    assert s.state_labels()["registered"] == want.labels("registered")[-1]


def test_a_trace_of_more_roots_than_fed_is_refused() -> None:
    s = TrackStream(_settings("hybrid", "grid"), 10, M_SUPPORT, H_SUPPORT)
    s.step(0.5, 0.5)
    with pytest.raises(InputError):
        s.trace(2)


def _in_blocks(
    settings: TrackSettings, values: tuple[NDArray[np.float64], ...], cap: int, seed: int
) -> TrackStream:
    """The roots fed in blocks of random sizes (1 to 60)."""
    rng = stream(seed, "tests/track_stream/blocks")
    s = TrackStream(settings, cap, M_SUPPORT, H_SUPPORT)
    n, at = values[0].size, 0
    while at < n:
        k = min(n - at, int(rng.integers(1, 61)))
        s.extend(*(v[at : at + k] for v in values), at_cap=at + k == min(cap, n))
        at += k
    return s


@pytest.mark.parametrize("bets", ["grid", "plugin"])
@pytest.mark.parametrize("bounded_from", [None, 0, 77])
def test_the_block_size_never_moves_a_number_or_a_verdict(
    bets: str, bounded_from: int | None
) -> None:
    """Root by root, in blocks of random sizes (the first bounded root inside a block), and in
    one block: the same trajectories bit for bit and the same frozen verdicts."""
    values = _values(300, 0.8, bounded_from, seed=13)
    settings = _settings("hybrid", bets)
    one_by_one = _fed(settings, values, cap=260)
    whole = TrackStream(settings, 260, M_SUPPORT, H_SUPPORT)
    whole.extend(*values)
    for fed in (_in_blocks(settings, values, 260, seed) for seed in (1, 2)):
        for other in (one_by_one, whole):
            got, want = fed.trace(), other.trace()
            for name in TRACKS:
                assert np.array_equal(got.bounds[name], want.bounds[name])
                assert np.array_equal(got.h_lo[name], want.h_lo[name])
                assert np.array_equal(got.h_hi[name], want.h_hi[name])
            assert dict(fed.verdicts) == dict(other.verdicts)
            for name in TRACKS:
                assert fed.interval(name) == other.interval(name)
                assert fed.bounds(name) == other.bounds(name)
    assert set(one_by_one.verdicts) == set(TRACKS)


def test_a_block_past_the_cap_freezes_the_registered_track_at_the_cap() -> None:
    """No registered verdict within the cap: INCONCLUSIVE there, however far the block reads
    on; the other tracks decide on the roots after it."""
    values = _values(400, 0.5, None, seed=7)
    s = TrackStream(_settings("hybrid", "grid"), 30, M_SUPPORT, H_SUPPORT)
    s.extend(*values)
    assert s.roots == 400
    assert s.verdicts["registered"] == "INCONCLUSIVE"
    assert s.trace().at_stop("X")["registered"].roots_at_verdict == 30


def test_a_bad_value_inside_a_block_is_named_by_its_root_and_nothing_is_fed() -> None:
    m_lo, m_hi, h_lo, h_hi = _values(50, 0.6, None, seed=4)
    h_hi = h_hi.copy()
    k = int(np.flatnonzero(~np.isnan(h_lo))[5])
    h_hi[k] = h_lo[k] - 0.25
    s = TrackStream(_settings("hybrid", "grid"), 100, M_SUPPORT, H_SUPPORT)
    s.step(0.5, None)
    with pytest.raises(InputError) as err:
        s.extend(m_lo, m_hi, h_lo, h_hi)
    assert f"H (root {k + 2})" in str(err.value)
    assert s.roots == 1
