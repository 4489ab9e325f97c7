"""Simulated continuations of an INCONCLUSIVE study (verdictpack.simulate._continuation)."""

from __future__ import annotations

import itertools
from typing import Any

import numpy as np
import pytest

from verdictpack._errors import InputError
from verdictpack._rng import stream
from verdictpack.config._blocks import PanelSpec
from verdictpack.core._mixture import MixtureSpec
from verdictpack.core._tracker import BatchHTracker, HTracker
from verdictpack.simulate._continuation import roots_to_go
from verdictpack.simulate._judges import Panel
from verdictpack.simulate._panels import build_panel

SPEC = MixtureSpec()


def _panel(rate: float = 0.7, judges: int = 2) -> Panel:
    sheet = {"role": "judge", "lean_h": 0.0, "noise": 0.0, "position_bias": 0.05}
    return build_panel(
        PanelSpec.model_validate(
            {
                "name": "fitted",
                "latent_correlation": 0.2,
                "judges": [
                    {**sheet, "name": f"j{k}", "baseline_rate": rate, "cost_per_judgment": 0.0}
                    for k in range(judges)
                ],
            }
        )
    )


def _prefix(n: int, seed: int = 3) -> tuple[np.ndarray[Any, Any], np.ndarray[Any, Any]]:
    rng = stream(seed, "tests/continuation/prefix")
    m = rng.binomial(4, 0.7, n) / 4
    h = np.where(rng.random(n) < 0.6, rng.binomial(2, 0.4, n) / 2, np.nan)
    return m, h


def _go(prefix: tuple[Any, Any], cap: int, seed: int = 1, reps: int = 200, **kw: Any) -> Any:
    args: dict[str, Any] = {
        "construction": "hybrid",
        "alpha": 0.05,
        "spec": SPEC,
        "threshold": 0.3,
        "panel": _panel(),
        "human_rate": 0.4,
        "humans_per_root": 2,
        "human_coverage": 0.6,
        "replicates": reps,
        "max_extra_roots": cap,
        "method": "sheets",
    }
    args.update(kw)
    return roots_to_go(prefix[0], prefix[1], rng=stream(seed, "tests/continuation"), **args)


def test_seeded_deterministic() -> None:
    prefix = _prefix(20)
    a, b = _go(prefix, 300), _go(prefix, 300)
    assert a == b
    c = _go(prefix, 300, seed=2)
    assert c.quantiles_extra_roots != a.quantiles_extra_roots


def test_p_verdict_rises_with_max_extra_roots() -> None:
    prefix = _prefix(20)
    runs = [_go(prefix, cap) for cap in (10, 80, 150, 600)]
    ps = [r.p_verdict.value for r in runs]
    assert ps[0] == 0.0
    for lo, hi in itertools.pairwise(runs):
        # each step well beyond its Monte Carlo error
        assert hi.p_verdict.value > lo.p_verdict.value + 2 * (hi.p_verdict.mcse or 0)
    assert ps[-1] == 1.0
    last = runs[-1]
    assert last.median_extra_roots is not None and last.median_extra_roots.basis == "simulated"
    q = [last.quantiles_extra_roots[f"q{k}"] for k in (10, 25, 50, 75, 90)]
    assert all(v is not None for v in q) and q == sorted(q)
    assert q[2] == last.median_extra_roots.value
    assert last.verdicts["EFFECT_SUPPORTED"].value == 1.0
    assert runs[0].median_extra_roots is None


def test_an_informative_prefix_needs_fewer_extra_roots() -> None:
    """The prefix reaches every replicate (spread_first): a longer one leaves less to go."""
    short = _go(_prefix(5), 600)
    long = _go(_prefix(90), 600)
    assert long.roots_observed == 90 and short.roots_observed == 5
    assert long.median_extra_roots.value < short.median_extra_roots.value - 40


def test_recorded_settings() -> None:
    r = _go(_prefix(12), 5, reps=100, human_rate=0.0, human_coverage=0.25)
    assert (r.replicates, r.max_extra_roots, r.humans_per_root) == (100, 5, 2)
    assert r.human_coverage == 0.25
    assert 0.0 < r.human_rate < 1e-5  # clipped into (0, 1)
    assert r.p_verdict.replicates == 100


@pytest.mark.parametrize(
    ("name", "value"), [("replicates", 1), ("max_extra_roots", 0), ("humans_per_root", 0)]
)
def test_arguments_refused(name: str, value: int) -> None:
    with pytest.raises(InputError) as err:
        _go(_prefix(5), 10, **{name: value})
    assert err.value.parameter == name


@pytest.mark.parametrize("construction", ["hybrid", "corners"])
def test_spread_first_copies_replicate_zero(construction: str) -> None:
    ms, hs = np.arange(5) / 4, np.arange(3) / 2
    r = 5
    bt = BatchHTracker(r, construction, 0.05, SPEC, 0.3, ms, hs)
    scalar = HTracker(construction, 0.05, SPEC, 0.3)
    rng = stream(9, "tests/continuation/spread")
    first = np.zeros(r, bool)
    first[0] = True
    for _ in range(60):
        mi, hi, present = int(rng.integers(2, 5)), int(rng.integers(0, 3)), rng.random() < 0.7
        mv, hv = np.zeros(r, np.int64), np.zeros(r, np.int64)
        mv[0], hv[0] = mi, hi
        bt.update(mv, hv, first & present, first)
        scalar.update(float(ms[mi]), float(hs[hi]) if present else None)
    assert bt.n_roots.tolist() == [60, 0, 0, 0, 0]
    assert bt.h_lo[1] == -np.pi
    bt.spread_first()
    assert bt.n_roots.tolist() == [60] * r
    for arr in (bt.h_lo, bt.h_hi, bt.model.lower, bt.human.upper):
        assert np.all(arr == arr[0])
    np.testing.assert_allclose([bt.h_lo[0], bt.h_hi[0]], scalar.h_interval, rtol=1e-12)
    # afterwards the replicates move together on equal roots
    bt.update(np.full(r, 4), np.zeros(r, np.int64), np.ones(r, bool))
    scalar.update(1.0, 0.0)
    assert np.all(bt.h_lo == bt.h_lo[0])
    np.testing.assert_allclose([bt.h_lo[0], bt.h_hi[0]], scalar.h_interval, rtol=1e-12)


@pytest.mark.parametrize("method", ["sheets", "bootstrap"])
@pytest.mark.parametrize("cap", [10, 60, 600])
def test_shares_sum_to_one_with_no_verdict_within_n(method: str, cap: int) -> None:
    """Every outcome, "no verdict within N" (INCONCLUSIVE) among them, sums to 1, and that
    share is 1 − P(a verdict); a quantile beyond N is None."""
    r = _go(_prefix(30), cap, method=method)
    assert r.method == method
    shares = {k: q.value for k, q in r.verdicts.items()}
    assert set(shares) == {
        "EFFECT_SUPPORTED",
        "NO_POSITIVE_EFFECT",
        "BELOW_PRACTICAL_THRESHOLD",
        "INCONCLUSIVE",
    }
    assert sum(shares.values()) == pytest.approx(1.0, abs=1e-12)
    assert shares["INCONCLUSIVE"] == pytest.approx(1.0 - r.p_verdict.value, abs=1e-12)
    q = r.quantiles_extra_roots
    beyond = [k for k, v in q.items() if v is None]
    # the quantiles at or above 1 − share(beyond N) are the ones reported beyond N
    assert all(float(k[1:]) / 100 > r.p_verdict.value - 1e-9 for k in beyond)
    assert all(v <= cap for v in q.values() if v is not None)


def test_bootstrap_is_the_default_with_a_prefix_and_needs_one() -> None:
    prefix = _prefix(25)
    r = _go(prefix, 200, method=None)
    assert r.method == "bootstrap"
    assert _go(prefix, 200, method=None) == r  # seeded
    empty = (np.zeros(0), np.zeros(0))
    assert _go(empty, 50, method=None).method == "sheets"
    with pytest.raises(InputError) as err:
        _go(empty, 50, method="bootstrap")
    assert err.value.parameter == "method"
    with pytest.raises(InputError):
        _go(prefix, 50, method="plug-in")


def test_bootstrap_worlds_spread_wider_than_the_plug_in() -> None:
    """Each bootstrap replicate continues in its own resampled world, so the extra roots
    spread wider than continuations from the observed rows taken as the truth."""
    prefix = _prefix(40)
    boot = _go(prefix, 2000, method="bootstrap", reps=400)
    q = boot.quantiles_extra_roots
    assert q["q10"] is not None and q["q90"] is not None
    assert q["q90"] / q["q10"] > 2.0
