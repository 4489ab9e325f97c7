"""The plug-in and blend bets behind the trackers (verdictpack.core._adaptive_batch and the
``bets`` of HTracker / BatchHTracker / TrackTrace): the batch numpy engine gives the
scalar classes' bounds replicate by replicate, every batch path (update, run, trace,
spread_first) agrees with the others, and the verdicts keep their error bound at the boundary
null h = threshold."""

from __future__ import annotations

import math

import numpy as np
import pytest

from verdictpack._errors import InputError
from verdictpack._rng import stream
from verdictpack.core._adaptive import BlendCS, PlugInCS, make_cs
from verdictpack.core._hinterval import corners_h_interval, hybrid_h_interval
from verdictpack.core._mixture import MixtureCS, MixtureSpec
from verdictpack.core._tracker import BatchHTracker, HTracker
from verdictpack.core._tracks import TrackSettings, TrackTrace

MS = np.arange(9) / 8  # M: the mean of 8 cells
HS = np.arange(3) / 2  # H: the mean of 2 human judgments
CLAIMS = {"registered": "r", "extension": "e", "comparison": "c"}
TOL = 1e-12
HZ = 100  # the horizon bets' design N (every other bets ignore it)


def _roots(seed: int, r: int, t: int, mu_m: float = 0.65, mu_h: float = 0.5) -> tuple:
    rng = stream(seed, "tests/adaptive_batch")
    return (
        rng.binomial(8, mu_m, (r, t)),
        rng.binomial(2, mu_h, (r, t)),
        rng.random((r, t)) < 0.7,  # a human judgment on 70 % of the roots
        rng.random((r, t)) < 0.9,  # a replicate skips 10 % of the roots (the active mask)
    )


def test_the_factory_builds_each_bet_by_name_and_refuses_others() -> None:
    assert type(make_cs("grid", 0.05)) is MixtureCS
    assert type(make_cs("plugin", 0.05)) is PlugInCS
    assert type(make_cs("blend", 0.05, MixtureSpec())) is BlendCS
    with pytest.raises(InputError) as exc:
        make_cs("kelly", 0.05)
    assert exc.value.parameter == "bets"
    assert '"grid" or "plugin" or "blend" or "horizon"' in str(exc.value)
    assert "kelly" in str(exc.value)
    assert type(make_cs("horizon", 0.05, horizon=10)) is PlugInCS
    with pytest.raises(InputError) as exc:
        BatchHTracker(2, "corners", 0.05, None, 0.2, MS, HS, bets="horizon")  # no N
    assert exc.value.parameter == "horizon"
    with pytest.raises(InputError):
        BatchHTracker(2, "corners", 0.05, None, 0.2, MS, HS, bets="Plugin")


@pytest.mark.parametrize("bets", ["plugin", "blend", "horizon"])
@pytest.mark.parametrize("construction", ["corners", "hybrid"])
def test_batch_bounds_are_the_scalar_classes_replicate_by_replicate(
    bets: str, construction: str
) -> None:
    r, t = 8, 90
    mi, hi, hp, act = _roots(1, r, t)
    batch = BatchHTracker(r, construction, 0.05, None, 0.2, MS, HS, bets=bets, horizon=HZ)
    scalar = [HTracker(construction, 0.05, None, 0.2, bets=bets, horizon=HZ) for _ in range(r)]
    assert all(isinstance(s.model, BlendCS if bets == "blend" else PlugInCS) for s in scalar)
    assert batch.horizon == scalar[0].horizon == (HZ if bets == "horizon" else None)
    worst = worst_h = 0.0
    for i in range(t):
        batch.update(mi[:, i], hi[:, i], hp[:, i], act[:, i])
        for k, s in enumerate(scalar):
            if act[k, i]:
                s.update(MS[mi[k, i]], HS[hi[k, i]] if hp[k, i] else None)
        if i % 15 == 14 or i == t - 1:
            for k, s in enumerate(scalar):
                got = [batch.model.lower[k], batch.model.upper[k]]
                got += [batch.human.lower[k], batch.human.upper[k]]
                want = [*s.model_bounds, *s.human_bounds]
                if construction == "hybrid":
                    assert batch.diff_lower is not None and batch.diff_upper is not None
                    got += [batch.diff_lower[k], batch.diff_upper[k]]
                    want += [*(s.diff_bounds or ())]
                worst = max(worst, float(np.max(np.abs(np.subtract(got, want)))))
                h_gap = np.subtract([batch.h_lo[k], batch.h_hi[k]], s.h_interval)
                worst_h = max(worst_h, float(np.max(np.abs(h_gap))))
                assert batch.n_roots[k] == s.n_roots
    assert worst <= TOL, worst
    # the h-interval is φ of the bounds: φ' (up to about 5 on these streams) scales their gap
    assert worst_h <= 10 * TOL, worst_h
    # the streams moved: this compared bounds, not the starting [0, 1]
    assert np.all(batch.model.lower > 0.3) and np.all(batch.human.upper < 0.95)
    # e-values of the streams, as the scalar classes give them
    for k, s in enumerate(scalar):
        assert batch.model.log_e_upper(0.5)[k] == pytest.approx(s.model.log_e_upper(0.5), abs=1e-9)
        assert batch.human.log_e_lower(0.6)[k] == pytest.approx(s.human.log_e_lower(0.6), abs=1e-9)


@pytest.mark.parametrize("bets", ["plugin", "blend", "horizon"])
def test_run_trace_and_spread_first_agree_with_root_by_root_updates(bets: str) -> None:
    r, t = 6, 150
    mi, hi, _, _ = _roots(2, r, t, mu_m=0.8, mu_h=0.45)
    ran = BatchHTracker(r, "hybrid", 0.05, None, 0.2, MS, HS, bets=bets, horizon=HZ)
    codes = ran.run(mi, hi, cap=t)
    stepped = BatchHTracker(r, "hybrid", 0.05, None, 0.2, MS, HS, bets=bets, horizon=HZ)
    open_ = np.ones(r, dtype=bool)
    for i in range(t):
        stepped.update(mi[:, i], hi[:, i], active=open_)
        now = stepped.verdict_codes(at_cap=stepped.n_roots >= t)
        open_ &= now == 0
    assert np.array_equal(codes, stepped.verdict_codes(at_cap=stepped.n_roots >= t))
    assert np.array_equal(ran.n_roots, stepped.n_roots) and np.all(codes != 0)
    assert np.array_equal(ran.h_lo, stepped.h_lo) and np.array_equal(ran.h_hi, stepped.h_hi)
    # a trace of replicate 0 is the root-by-root path of one replicate
    one = BatchHTracker(1, "hybrid", 0.05, None, 0.2, MS, HS, bets=bets, horizon=HZ)
    bounds, lo, hi_ = one.trace(mi[0], hi[0], np.ones(t, dtype=bool))
    solo = BatchHTracker(1, "hybrid", 0.05, None, 0.2, MS, HS, bets=bets, horizon=HZ)
    for i in range(t):
        solo.update(mi[:1, i], hi[:1, i])
        assert (lo[i], hi_[i]) == (solo.h_lo[0], solo.h_hi[0])
        assert bounds[i, 0] == solo.model.lower[0] and bounds[i, 5] * 2 - 1 == solo.diff_upper[0]
    # spread_first: every replicate continues from replicate 0's state
    fan = BatchHTracker(3, "hybrid", 0.05, None, 0.2, MS, HS, bets=bets, horizon=HZ)
    first = np.array([True, False, False])
    for i in range(40):
        fan.update(np.full(3, mi[0, i]), np.full(3, hi[0, i]), active=first)
    fan.spread_first()
    for i in range(40, 60):
        fan.update(np.full(3, mi[0, i]), np.full(3, hi[0, i]))
    assert np.all(fan.h_lo == lo[59]) and np.all(fan.n_roots == 60)


@pytest.mark.parametrize("bets", ["plugin", "blend", "horizon"])
def test_the_traced_tracks_are_the_scalar_trackers(bets: str) -> None:
    """TrackTrace (the compiled kernel: every kind's tracks) and the scalar trackers (HTracker
    pairs fed the lower and the upper values) give the same tracks with the same bets,
    bounded values too."""
    rng = stream(3, "tests/adaptive_batch/tracks")
    n = 120
    m = rng.binomial(8, 0.7, n) / 8
    h = np.where(rng.random(n) < 0.6, rng.binomial(2, 0.5, n) / 2, np.nan)
    m_up = np.where(rng.random(n) < 0.1, np.minimum(m + 0.25, 1.0), m)
    settings = TrackSettings("hybrid", "corners", 0.05, MixtureSpec(), 0.3, 0.2, CLAIMS, bets, HZ)
    trace = TrackTrace(settings, m, h, cap=n, m_upper=m_up)
    tracks = {
        "registered": ("hybrid", 0.3),
        "extension": ("hybrid", 0.2),
        "comparison": ("corners", 0.3),
    }
    for name, tracked in trace.over_all("x").items():
        con, thr = tracks[name]
        low, high = (HTracker(con, 0.05, MixtureSpec(), thr, bets=bets, horizon=HZ) for _ in "lh")
        for i in range(n):
            hv = None if math.isnan(h[i]) else float(h[i])
            low.update(float(m[i]), hv)
            high.update(float(m_up[i]), hv)
        ends = (
            low.model_bounds[0],
            high.model_bounds[1],
            high.human_bounds[0],
            low.human_bounds[1],
        )
        if con == "hybrid":
            d = (low.diff_bounds[0], high.diff_bounds[1])  # type: ignore[index]
            lo, hi, _ = hybrid_h_interval(*ends, *d)
        else:
            lo, hi, _ = corners_h_interval(*ends)
        assert tracked.h_interval is not None and tracked.model_bounds is not None
        assert np.allclose(tracked.h_interval, (float(lo), float(hi)), rtol=0, atol=1e-11)
        assert np.allclose(tracked.model_bounds, ends[:2], rtol=0, atol=TOL)
        assert np.allclose(tracked.human_bounds, ends[2:], rtol=0, atol=TOL)


def _false_effects(bets: str, construction: str, r: int, t: int) -> tuple[float, float]:
    """Share of replicates reaching EFFECT_SUPPORTED at the boundary null h = threshold, and
    the bound it must keep (the per-tail alpha plus 3 Monte Carlo standard errors)."""
    alpha, thr, mu_h = 0.05, 0.2, 0.5
    mu_m = math.sin((2 * math.asin(math.sqrt(mu_h)) + thr) / 2) ** 2  # φ(μ_M) − φ(μ_H) = thr
    rng = stream(11, f"tests/adaptive_batch/null/{bets}/{construction}")
    mi = rng.binomial(8, mu_m, (r, t))
    hi = rng.binomial(2, mu_h, (r, t))
    tracker = BatchHTracker(r, construction, alpha, None, thr, MS, HS, bets=bets, horizon=t)
    codes = tracker.run(mi, hi, cap=t)
    return float(np.mean(codes == 1)), alpha + 3 * math.sqrt(alpha * (1 - alpha) / r)


@pytest.mark.parametrize("bets", ["plugin", "blend", "horizon"])
@pytest.mark.parametrize("construction", ["corners", "hybrid"])
def test_at_the_boundary_null_false_effects_stay_within_alpha(bets: str, construction: str) -> None:
    share, bound = _false_effects(bets, construction, 400, 150)
    assert share <= bound, (share, bound)


@pytest.mark.parametrize("bets", ["plugin", "blend", "horizon"])
@pytest.mark.parametrize("construction", ["corners", "hybrid"])
def test_at_the_boundary_null_false_effects_stay_within_alpha_longer(
    bets: str, construction: str
) -> None:
    """The slower version (SLOW_CHECKS): more replicates, a longer horizon."""
    share, bound = _false_effects(bets, construction, 2000, 400)
    assert 0 < share <= bound, (share, bound)


def test_the_kernels_plug_in_bank_refuses_mismatched_buffers() -> None:
    """The compiled plug-in bank checks its buffers (no out-of-bounds access): sizes, rows,
    value indices and the room left in a history."""
    from verdictpack.core import _kernel

    tracker = BatchHTracker(3, "corners", 0.05, None, 0.2, MS, HS, bets="blend")
    bank = tracker._bank
    state = list(bank._state(0))
    tail = (bank.n, 0, float(bank.logc[0]), 0.75, 0.0, True)  # plug_observe's: horizon 0.0
    rows, vidx, moved = np.arange(3, dtype=np.int64), np.zeros(3, np.int64), np.zeros(3, np.uint8)
    with pytest.raises(ValueError, match="rows, vidx and moved"):
        _kernel.plug_observe(*state, *tail, rows, vidx[:2], moved)
    with pytest.raises(ValueError, match="out of range"):
        _kernel.plug_observe(*state, *tail, rows, vidx + 9, moved)
    with pytest.raises(ValueError, match="out of range"):
        _kernel.plug_observe(*state, *tail, rows + 1, vidx, moved)
    bad = list(state)
    bad[3] = np.zeros(bank.t.size - 1)
    with pytest.raises(ValueError, match="state sizes"):
        _kernel.plug_observe(*bad, *tail, rows, vidx, moved)
    with pytest.raises(ValueError, match="state sizes"):
        _kernel.plug_observe(
            *state, bank.n, 0, float(bank.logc[0]), 1.5, 0.0, True, rows, vidx, moved
        )
    for horizon in (-1.0, float("inf"), float("nan")):
        with pytest.raises(ValueError, match="horizon"):
            _kernel.plug_observe(
                *state, bank.n, 0, float(bank.logc[0]), 0.75, horizon, True, rows, vidx, moved
            )
    full = list(state)
    full[1], full[2] = np.zeros((3, 0), np.int32), np.zeros((3, 0))  # no room for a value
    with pytest.raises(ValueError, match="out of range"):
        _kernel.plug_observe(*full, *tail, rows, vidx, moved)
    with pytest.raises(ValueError, match="one entry per row"):
        _kernel.plug_log_e(*state, *tail[:4], True, 0, np.zeros(2), np.zeros(2))
    tracker.update(np.array([8, 0, 4]), np.array([2, 0, 1]))  # and the bank still works
    assert np.all(bank.t == 1)
