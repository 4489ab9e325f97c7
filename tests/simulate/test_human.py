"""Tests of the human layer: the simulated reader audit and its gate, the baseline sizing
(Cohen's κ itself: tests/core/test_agreement.py)."""

# The refusal tests pass ill-typed arguments on purpose.
# mypy: disable-error-code="arg-type,list-item"

from __future__ import annotations

import math

import numpy as np
import pytest

from conftest import assert_refused_by_name
from verdictpack._errors import InputError
from verdictpack._results import Quantity, dump_json
from verdictpack._rng import stream
from verdictpack.core._agreement import AuditGate, cohens_kappa_from_table, expected_kappa
from verdictpack.core._scales import p_from_h
from verdictpack.simulate._human import (
    _baseline_test,
    _clustered,
    _power_at,
    simulate_audit_pass_probability,
    simulate_gate_pass_rate,
    simulate_reader_audit,
    size_human_baseline,
    size_reader_audit,
)


def mcse(fig: Quantity) -> float:
    assert fig.mcse is not None
    return fig.mcse


def baseline_power(
    n: int,
    rate: float,
    h: float,
    alpha: float,
    m: int,
    seed: int,
    purpose: str = "human/baseline-sizing",
    icc: float | None = None,
) -> Quantity:
    """The confirmatory test's simulated power at n roots, as the baseline sizing simulates each
    size it visits (20,000 replicates on the stream ``purpose``/confirmatory_roots=<n>)."""
    _, test = _baseline_test(rate, h)
    return _power_at(n, m, test, alpha, _clustered(icc, rate, m, test)[2], seed, purpose, 20_000)


# ------------------------------------------------------------------------------------------
# Simulated audit: the reader model, chance readers, coverage
# ------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("rate", "k"), [(0.92, 2), (0.75, 2), (0.5, 2), (0.8, 3), (0.25, 4), (0.1, 2), (1 / 3, 3)]
)
def test_expected_kappa_matches_a_large_simulated_audit(rate: float, k: int) -> None:
    # N large: κ̂'s O(1/N) bias is negligible next to its standard error; compare within 4 se.
    audit = simulate_reader_audit(100_000, rate, stream(3, f"test/kappa/{rate}/{k}"), k)
    assert abs(audit.kappa.kappa - expected_kappa(rate, k)) <= 4 * audit.kappa.se + 1e-12
    assert AuditGate().evaluate(audit).readings == 200_000  # two readers per root
    # the reader model's marginals are uniform and its P_o is r² + (1 − r)²/(k − 1)
    p_o = rate**2 + (1 - rate) ** 2 / (k - 1)
    se_po = math.sqrt(p_o * (1 - p_o) / 100_000)
    assert abs(audit.kappa.observed_agreement - p_o) <= 4 * se_po


@pytest.mark.parametrize("k", [2, 3])
def test_chance_readers_give_kappa_near_zero(k: int) -> None:
    rng = stream(5, f"test/chance/{k}")
    kappas = np.array([simulate_reader_audit(200, 1 / k, rng, k).kappa.kappa for _ in range(600)])
    err = kappas.std(ddof=1) / math.sqrt(kappas.size)
    assert abs(kappas.mean()) <= 4 * err


@pytest.mark.parametrize(("rate", "k"), [(0.85, 2), (0.7, 3)])
def test_kappa_interval_coverage(rate: float, k: int) -> None:
    truth = expected_kappa(rate, k)
    rng = stream(7, f"test/coverage/{rate}/{k}")
    reps = 1500
    covered = sum(
        a.kappa.ci_low <= truth <= a.kappa.ci_high
        for a in (simulate_reader_audit(400, rate, rng, k) for _ in range(reps))
    )
    err = math.sqrt(0.95 * 0.05 / reps)
    assert abs(covered / reps - 0.95) <= 4 * err


def test_simulated_audit_is_deterministic_and_gated() -> None:
    a1 = simulate_reader_audit(200, 0.92, stream(1, "audit"))
    a2 = simulate_reader_audit(200, 0.92, stream(1, "audit"))
    assert a1 == a2
    assert a1.reader_a != simulate_reader_audit(200, 0.92, stream(2, "audit")).reader_a
    decision = AuditGate().evaluate(a1)
    assert decision.passed == (a1.kappa.lower_bound(0.95) >= 0.60)
    assert float(decision.lower_bound) == a1.kappa.lower_bound(0.95) < a1.kappa.kappa
    assert decision.readings == 400 and decision.n_roots == 200
    assert decision.gated_on == "lower_bound"
    assert decision.bound_level == 0.95 and decision.bound_method == "clopper_pearson_agreement"
    assert decision.ci_low.basis == "closed_form" and decision.kappa.basis == "exact"
    assert decision.lower_bound.basis == "closed_form"
    table = np.zeros((2, 2), dtype=int)
    np.add.at(table, (np.asarray(a1.reader_a), np.asarray(a1.reader_b)), 1)
    assert decision.agreement_table == tuple(tuple(int(v) for v in row) for row in table)
    assert decision.agreements == int(np.trace(table))
    dump_json(decision)  # serialisable, no NaN


def test_audit_gate_gates_the_lower_bound_not_the_point_estimate() -> None:
    # κ̂ = 0.64 (> 0.60) but its one-sided 95 % lower bound is 0.49: fails on the bound
    res = cohens_kappa_from_table([[41, 9], [9, 41]])
    assert res.kappa == pytest.approx(0.64)
    decision = AuditGate(0.60).evaluate(res)
    assert not decision.passed and float(decision.lower_bound) < 0.60 < float(decision.kappa)
    assert AuditGate(0.45).evaluate(res).passed
    # κ̂ = 0.84, bound 0.72: passes a 0.70 gate, fails a 0.75 gate; a lower level passes it
    high = cohens_kappa_from_table([[46, 4], [4, 46]])
    assert AuditGate(0.70).evaluate(high).passed
    assert not AuditGate(0.75).evaluate(high).passed
    assert high.lower_bound(0.60) > 0.75 and AuditGate(0.75, 0.60).evaluate(high).passed


def test_readers_at_chance_fail_the_gate_and_good_readers_pass() -> None:
    rng = stream(9, "gate")
    assert not AuditGate().evaluate(simulate_reader_audit(200, 0.5, rng)).passed
    assert AuditGate().evaluate(simulate_reader_audit(200, 0.97, rng)).passed


# ------------------------------------------------------------------------------------------
# Baseline sizing
# ------------------------------------------------------------------------------------------


def brute_lower_test(n: int, p_null: float, p_true: float, alpha: float) -> tuple[int, float]:
    """Reject X ≤ c, c the largest with P_null(X ≤ c) ≤ α; returns (c, power at p_true)."""

    def pmf(x: int, p: float) -> float:
        return math.comb(n, x) * p**x * (1 - p) ** (n - x)

    c, cum = -1, 0.0
    for x in range(n + 1):
        cum += pmf(x, p_null)
        if cum > alpha:
            break
        c = x
    return c, sum(pmf(x, p_true) for x in range(c + 1))


CASES = [
    # human_rate, threshold_h, alpha, power, n_per_root
    (0.5, 0.3, 0.005, 0.95, 2),
    (0.3, 0.3, 0.025, 0.80, 2),
    (0.15, -0.3, 0.025, 0.80, 3),
]


@pytest.mark.parametrize(("rate", "h", "alpha", "power", "m"), CASES)
def test_baseline_size_is_powered_and_the_size_below_is_not(
    rate: float, h: float, alpha: float, power: float, m: int
) -> None:
    res = size_human_baseline(rate, h, alpha, power, n_per_root=m, pilot_roots=50, seed=4)
    n = res.confirmatory_roots
    # an independent re-simulation (another purpose) at n and n − 1
    at_n = baseline_power(n, rate, h, alpha, m, seed=99, purpose="test/recheck")
    below = baseline_power(n - 1, rate, h, alpha, m, seed=99, purpose="test/recheck")
    assert at_n.value >= power - 4 * mcse(at_n)
    assert below.value <= power + 4 * mcse(below)
    # the search's own figures agree with the exact power of the same test within MC error
    assert res.simulated_power.value >= power
    assert abs(res.simulated_power.value - res.exact_power.value) <= 4 * mcse(res.simulated_power)
    assert res.simulated_power_below is not None and res.exact_power_below is not None
    assert res.simulated_power_below.value < power
    assert abs(res.simulated_power_below.value - res.exact_power_below.value) <= 4 * mcse(
        res.simulated_power_below
    )
    # the exact power and region against a brute-force binomial sum
    shifted = p_from_h(rate, h)
    if res.direction == "less":
        c, pw = brute_lower_test(n * m, shifted, rate, alpha)
        assert res.critical_value == c
    else:  # mirrored: count failures
        c, pw = brute_lower_test(n * m, 1 - shifted, 1 - rate, alpha)
        assert res.critical_value == n * m - c
    assert res.exact_power.value == pytest.approx(pw, abs=1e-10)
    assert res.achieved_alpha.value <= alpha
    # touches add up
    assert res.pilot_touches == 50 * m
    assert res.confirmatory_touches == n * m
    assert res.total_touches == res.pilot_touches + res.confirmatory_touches
    assert res.simulated_power.basis == "simulated" and res.simulated_power.replicates == 20_000
    assert res.closed_form_roots.basis == "closed_form"
    dump_json(res)


def test_baseline_simulated_power_vs_exact_at_several_sizes() -> None:
    # 0.5 vs the rate one h = 0.3 away: simulated power tracks the exact power within MC error
    for n in (20, 60, 97, 140):
        sim = baseline_power(n, 0.5, 0.3, 0.005, 2, seed=12)
        _, exact_power = brute_lower_test(2 * n, p_from_h(0.5, 0.3), 0.5, 0.005)
        assert abs(sim.value - exact_power) <= 4 * mcse(sim) + 1e-12


def test_baseline_closed_form_is_close_where_the_normal_approximation_holds() -> None:
    # at a central rate the normal-approximation size is within a few roots of the simulated one
    res = size_human_baseline(0.5, 0.3, 0.005, 0.95, n_per_root=2, pilot_roots=100, seed=1)
    # closed form by hand: N = ((z_.995·√(p_s q_s) + z_.95·√(.25)) / (p_s − .5))²
    ps = p_from_h(0.5, 0.3)
    z_a, z_b = 2.5758293035489004, 1.6448536269514722
    n_j = math.ceil(((z_a * math.sqrt(ps * (1 - ps)) + z_b * 0.5) / (ps - 0.5)) ** 2)
    assert res.closed_form_roots.value == math.ceil(n_j / 2)
    assert abs(res.confirmatory_roots - res.closed_form_roots.value) <= 3


def test_baseline_mirror_symmetry_and_determinism() -> None:
    up = size_human_baseline(0.3, 0.25, 0.01, 0.9, n_per_root=2, pilot_roots=10, seed=8)
    down = size_human_baseline(0.7, -0.25, 0.01, 0.9, n_per_root=2, pilot_roots=10, seed=8)
    assert up.direction == "less" and down.direction == "greater"
    assert up.confirmatory_roots == down.confirmatory_roots
    assert up.simulated_power == down.simulated_power
    assert up.exact_power.value == pytest.approx(down.exact_power.value, abs=1e-12)
    again = size_human_baseline(0.3, 0.25, 0.01, 0.9, n_per_root=2, pilot_roots=10, seed=8)
    assert again == up
    # the search stays small: coarse doubling, 16 medium steps, a fine scan
    assert up.sizes_evaluated <= 2 * math.log2(up.confirmatory_roots + 1) + 40


def test_baseline_reports_unreachable_targets_by_horizon() -> None:
    with pytest.raises(InputError) as err:
        size_human_baseline(0.5, 0.05, 0.005, 0.95, seed=1, max_roots=50, replicates=1000)
    assert err.value.parameter == "max_roots"


# ------------------------------------------------------------------------------------------
# Refusals
# ------------------------------------------------------------------------------------------

GEN = np.random.default_rng(0)

REFUSALS = [
    ("n_roots", lambda: simulate_reader_audit(1, 0.9, GEN)),
    ("reconstruction_rate", lambda: simulate_reader_audit(10, -0.1, GEN)),
    ("n_categories", lambda: simulate_reader_audit(10, 0.9, GEN, 1)),
    ("rng", lambda: simulate_reader_audit(10, 0.9, 42)),
    ("kappa_min", lambda: AuditGate(1.5)),
    ("kappa_min", lambda: AuditGate(float("nan"))),
    ("kappa_min", lambda: AuditGate(0.0)),
    ("level", lambda: AuditGate(0.6, 0.5)),
    ("level", lambda: AuditGate(0.6, 1.0)),
    ("level", lambda: AuditGate(0.6, float("nan"))),
    ("result", lambda: AuditGate().evaluate(0.7)),
    ("reconstruction_rate", lambda: size_reader_audit(0.85, AuditGate(0.6), 0.8, 1)),
    ("pass_probability", lambda: size_reader_audit(0.95, AuditGate(0.6), 1.0, 1)),
    ("gate", lambda: size_reader_audit(0.95, 0.6, 0.8, 1)),
    ("max_roots", lambda: size_reader_audit(0.95, AuditGate(0.6), 0.999, 1, max_roots=20)),
    ("n_roots", lambda: simulate_audit_pass_probability(1, 0.9, AuditGate(), 1)),
    ("level", lambda: simulate_gate_pass_rate(40, 0.9, 0.6, GEN, level=0.3)),
    ("human_rate", lambda: size_human_baseline(0.0, 0.3, 0.05, 0.8)),
    ("human_rate", lambda: size_human_baseline(1.0, 0.3, 0.05, 0.8)),
    ("threshold_h", lambda: size_human_baseline(0.5, 0.0, 0.05, 0.8)),
    ("threshold_h", lambda: size_human_baseline(0.9, 1.0, 0.05, 0.8)),
    ("threshold_h", lambda: size_human_baseline(0.5, float("inf"), 0.05, 0.8)),
    ("alpha", lambda: size_human_baseline(0.5, 0.3, 0.0, 0.8)),
    ("power", lambda: size_human_baseline(0.5, 0.3, 0.05, 1.0)),
    ("power", lambda: size_human_baseline(0.5, 0.3, 0.05, 0.04)),
    ("n_per_root", lambda: size_human_baseline(0.5, 0.3, 0.05, 0.8, n_per_root=0)),
    ("pilot_roots", lambda: size_human_baseline(0.5, 0.3, 0.05, 0.8, pilot_roots=-1)),
    ("seed", lambda: size_human_baseline(0.5, 0.3, 0.05, 0.8, seed=-1)),
    ("purpose", lambda: size_human_baseline(0.5, 0.3, 0.05, 0.8, purpose="")),
    ("replicates", lambda: size_human_baseline(0.5, 0.3, 0.05, 0.8, replicates=10)),
    ("max_roots", lambda: size_human_baseline(0.5, 0.3, 0.05, 0.8, max_roots=0)),
]


@pytest.mark.parametrize(
    ("parameter", "call"), REFUSALS, ids=[f"{i}-{p}" for i, (p, _) in enumerate(REFUSALS)]
)
def test_invalid_arguments_are_refused_by_name(parameter: str, call) -> None:  # type: ignore[no-untyped-def]
    assert_refused_by_name(parameter, call)


def test_gate_pass_rate_matches_single_audits() -> None:
    """The vectorised pass rate agrees with gating one simulated audit at a time."""
    from verdictpack._rng import stream as _stream
    from verdictpack.simulate._human import (
        AuditGate,
        simulate_gate_pass_rate,
        simulate_reader_audit,
    )

    n, rate, kmin = 60, 0.85, 0.35
    fast = simulate_gate_pass_rate(n, rate, kmin, _stream(5, "gate/fast"), replicates=4000)
    gen = _stream(5, "gate/slow")
    slow_reps = 600
    passed = sum(
        AuditGate(kmin).evaluate(simulate_reader_audit(n, rate, gen)).passed
        for _ in range(slow_reps)
    )
    p_slow = passed / slow_reps
    se = (fast.value * (1 - fast.value) / slow_reps + fast.mcse**2) ** 0.5
    assert 0.05 < fast.value < 0.95  # an informative point: the check can fail
    assert abs(fast.value - p_slow) <= 4 * se
    chance = simulate_gate_pass_rate(200, 0.5, 0.6, _stream(5, "gate/chance"))
    assert chance.value == 0.0


def test_table_draws_match_label_draws_of_the_reader_model() -> None:
    """The sizing's pass probability (one multinomial table per audit) agrees with the label
    simulation of simulate_gate_pass_rate (the same law, other draws)."""
    gate = AuditGate(0.35)
    tables = simulate_audit_pass_probability(60, 0.85, gate, 3, replicates=8000)
    labels = simulate_gate_pass_rate(60, 0.85, 0.35, stream(3, "gate/labels"), replicates=8000)
    assert 0.05 < tables.value < 0.95
    assert abs(tables.value - labels.value) <= 4 * math.hypot(mcse(tables), mcse(labels))


def test_reader_audit_sizing_is_the_first_crossing_and_deterministic() -> None:
    gate = AuditGate(0.6)
    size = size_reader_audit(0.92, gate, 0.8, seed=4, replicates=2000)
    assert size == size_reader_audit(0.92, gate, 0.8, seed=4, replicates=2000)
    assert size.planning_kappa == pytest.approx(expected_kappa(0.92, 2))
    assert size.pass_probability.value >= 0.8
    assert size.pass_probability_below is not None
    assert size.pass_probability_below.value < 0.8
    assert size.readings == 2 * size.roots
    # each size has its own stream: re-simulating the chosen size gives the same estimate
    again = simulate_audit_pass_probability(
        size.roots, 0.92, gate, 4, replicates=2000, purpose="human/reader-audit-sizing"
    )
    assert again == size.pass_probability
    # far below the size, an instrument at the planning kappa rarely passes
    assert simulate_audit_pass_probability(40, 0.92, gate, 4).value < 0.3
