"""The self-audit's independent mathematics (verify/_rederive.py) against the published anchors
(docs/statistics.md §4, §9)."""

from __future__ import annotations

import math

import numpy as np

from verdictpack.verify import _rederive


def test_independent_t_power_and_size_reproduce_the_anchors() -> None:
    assert _rederive._t_size(0.5, 0.05, 0.80, 2) == 34
    assert _rederive._t_size(0.5, 0.01, 0.95, 2) == 75
    assert round(_rederive._t_power(20, 0.5, 0.05, 2), 4) == 0.5645
    assert round(_rederive._t_power(32, 0.5, 0.05, 2), 4) == 0.7823


def test_independent_binomial_enumeration_reproduces_the_anchors() -> None:
    p1 = _rederive._phi_inv(_rederive._phi(0.5) + 0.3)
    table = _rederive._binomial_enumeration(0.5, p1, 0.005, 1, 202)
    assert table[201].upper == 120 and round(table[201].achieved, 5) == 0.00453
    assert table[201].power >= 0.95 > max(row.power for row in table[:201])
    reader = _rederive._binomial_enumeration(0.5, 0.65, 0.005, 2, 195)
    assert (reader[194].lower, reader[194].upper) == (79, 116)


def test_independent_sprt_recursion_reproduces_the_anchors() -> None:
    p0, p1, a, b = 0.5, 0.6477601033306699, 0.005, 0.05
    la, lb = math.log((1 - b) / a), math.log(b / (1 - a))
    up, dn = math.log(p1 / p0), math.log((1 - p1) / (1 - p0))
    h0 = _rederive._sprt_recursion(la, lb, up, dn, p0, 10_000)
    h1 = _rederive._sprt_recursion(la, lb, up, dn, p1, 10_000)
    assert round(h0.asn, 2) == 67.93 and round(h1.asn, 2) == 112.77
    assert round(h0.p_upper, 5) == 0.00448 and round(h1.p_lower, 4) == 0.0432


def test_hybrid_polygon_brute_force_matches_a_dense_grid() -> None:
    rng = np.random.default_rng(7)
    for _ in range(10):
        lm, um = np.sort(rng.uniform(0.05, 0.95, 2))
        lh, uh = np.sort(rng.uniform(0.05, 0.95, 2))
        ld, ud = np.sort(rng.uniform(-0.9, 0.9, 2))
        iv = _rederive._hybrid_interval(lm, um, lh, uh, ld, ud)
        a, b = np.meshgrid(np.linspace(lm, um, 801), np.linspace(lh, uh, 801))
        inside = (a - b >= ld) & (a - b <= ud)
        if iv is None:
            assert not inside.any()
            continue
        f = _rederive._f_ab(a[inside], b[inside])
        # the brute force is at least as extreme as any grid point, and close to the grid
        assert iv[0] <= f.min() + 1e-12 and iv[1] >= f.max() - 1e-12
        assert f.min() - iv[0] < 5e-3 and iv[1] - f.max() < 5e-3


def test_the_audits_plugin_and_blend_bounds_hold_the_packages_tracks() -> None:
    """The self-audit's own plug-in, blend and horizon confidence sequences (written from the
    formulas, not imported) against the package's tracks on one stream: the package's bounds are
    never narrower than the audit's and agree with them to 1e-9; the grid's differ (the audit reads
    the bets it is told)."""
    from verdictpack._rng import stream
    from verdictpack.core._mixture import MixtureSpec
    from verdictpack.core._tracks import TrackSettings, TrackTrace

    rng = stream(5, "tests/rederive/adaptive")
    n = 150
    m = rng.binomial(8, 0.7, n) / 8
    h = np.where(rng.random(n) < 0.7, rng.binomial(2, 0.5, n) / 2, np.nan)
    spec = MixtureSpec()
    lam, w = np.array(spec.lambdas), np.array(spec.weights)
    claims = {"registered": "r", "extension": "e", "comparison": "c"}
    alphas = {"registered": (0.05 / 4, 0.05), "comparison": (0.05, None)}
    hv = [None if math.isnan(x) else float(x) for x in h]
    for bets in ("plugin", "blend", "horizon"):
        settings = TrackSettings("hybrid", "corners", 0.05, spec, 0.3, 0.2, claims, bets, n)
        trace = TrackTrace(settings, m, h, cap=n)
        ours = _rederive._track_series(m.tolist(), hv, lam, w, alphas, bets=bets, horizon=n)
        grid = _rederive._track_series(m.tolist(), hv, lam, w, alphas)
        for name in alphas:
            got = trace.bounds[name]
            series = ours[name]
            want = [series.model[0], series.model[1], series.human[0], series.human[1]]
            if series.diff is not None:
                want += [(series.diff[0] + 1) / 2, (series.diff[1] + 1) / 2]
            want_arr = np.stack(want, axis=1)
            assert np.max(np.abs(got - want_arr)) < 1e-9
            assert np.all(got[:, 0::2] <= want_arr[:, 0::2] + 1e-15)  # lower ends
            assert np.all(got[:, 1::2] >= want_arr[:, 1::2] - 1e-15)  # upper ends
            assert np.max(np.abs(grid[name].model[0] - series.model[0])) > 1e-3
