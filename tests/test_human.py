"""Tests of the human layer: Cohen's κ and the audit, the baseline sizing, the cost line."""

# The refusal tests pass ill-typed arguments on purpose.
# mypy: disable-error-code="arg-type,list-item"

from __future__ import annotations

import math
from collections import Counter

import numpy as np
import pytest
from statsmodels.stats.inter_rater import cohens_kappa as sm_cohens_kappa

from verdictpack._errors import InputError
from verdictpack._results import Figure, dump_json
from verdictpack._rng import stream
from verdictpack.core._exact import p_from_h
from verdictpack.simulate._human import (
    AuditGate,
    HumanLayerCost,
    KappaResult,
    cohens_kappa,
    cohens_kappa_from_table,
    expected_kappa,
    simulate_baseline_power,
    simulate_reader_audit,
    size_human_baseline,
)


def mcse(fig: Figure) -> float:
    assert fig.mcse is not None
    return fig.mcse


def labels_from_table(table: list[list[int]], cats: list[str]) -> tuple[list[str], list[str]]:
    a: list[str] = []
    b: list[str] = []
    for i, row in enumerate(table):
        for j, count in enumerate(row):
            a += [cats[i]] * count
            b += [cats[j]] * count
    return a, b


# ------------------------------------------------------------------------------------------
# κ: hand-computed example, brute force, statsmodels
# ------------------------------------------------------------------------------------------


def test_kappa_hand_computed_example() -> None:
    # Table (rows: reader A, columns: reader B), n = 50:
    #            yes  no
    #     yes     20   5      p11 .4  p12 .1   row A: .5 .5
    #     no      10  15      p21 .2  p22 .3   col B: .6 .4
    # P_o = .7, P_e = .5·.6 + .5·.4 = .5, κ = (.7 − .5)/(1 − .5) = .4
    # Var: term_a = .4(1 − 1.1·.6)² + .3(1 − .9·.6)² = .04624 + .06348 = .10972
    #      term_b = .6²·(.1·(.6 + .5)² + .2·(.4 + .5)²) = .36·.283 = .10188
    #      term_c = (.4 − .5·.6)² = .01
    #      Var = (.10972 + .10188 − .01) / (50·.25) = .016128
    a, b = labels_from_table([[20, 5], [10, 15]], ["yes", "no"])
    res = cohens_kappa(a, b)
    assert res.kappa == pytest.approx(0.4, abs=1e-12)
    assert res.observed_agreement == pytest.approx(0.7, abs=1e-12)
    assert res.expected_agreement == pytest.approx(0.5, abs=1e-12)
    assert res.n == 50
    assert res.se == pytest.approx(math.sqrt(0.016128), abs=1e-12)
    z = 1.959963984540054
    assert res.ci_low == pytest.approx(0.4 - z * math.sqrt(0.016128), abs=1e-9)
    assert res.ci_high == pytest.approx(0.4 + z * math.sqrt(0.016128), abs=1e-9)
    assert res.categories == ("no", "yes")
    assert res.ci_basis == "closed_form"
    lo90, hi90 = res.interval(0.90)
    assert hi90 - lo90 == pytest.approx(2 * 1.6448536269514722 * math.sqrt(0.016128), abs=1e-9)
    assert res.ci_low < lo90 < res.kappa < hi90 < res.ci_high


def brute_kappa(a: list[object], b: list[object]) -> tuple[float, float, float]:
    n = len(a)
    p_o = sum(1 for x, y in zip(a, b, strict=True) if x == y) / n
    ca, cb = Counter(a), Counter(b)
    p_e = sum(ca[c] * cb[c] for c in set(a) | set(b)) / n**2
    return (p_o - p_e) / (1 - p_e), p_o, p_e


@pytest.mark.parametrize("seed", range(6))
def test_kappa_matches_brute_force_and_statsmodels(seed: int) -> None:
    rng = np.random.default_rng(seed)
    k = int(rng.integers(2, 6))
    n = int(rng.integers(20, 300))
    cats = [f"c{i}" for i in range(k)]
    a = [cats[i] for i in rng.integers(0, k, size=n)]
    # reader B agrees with A part of the time so κ is well away from 0
    b = [x if rng.random() < 0.6 else cats[int(rng.integers(0, k))] for x in a]
    res = cohens_kappa(a, b, categories=cats)
    kappa, p_o, p_e = brute_kappa(a, b)
    assert res.kappa == pytest.approx(kappa, abs=1e-12)
    assert res.observed_agreement == pytest.approx(p_o, abs=1e-12)
    assert res.expected_agreement == pytest.approx(p_e, abs=1e-12)
    table = np.zeros((k, k), dtype=int)
    for x, y in zip(a, b, strict=True):
        table[cats.index(x), cats.index(y)] += 1
    sm = sm_cohens_kappa(table)
    assert res.kappa == pytest.approx(sm.kappa, abs=1e-12)
    assert res.se == pytest.approx(sm.std_kappa, rel=1e-9)
    from_table = cohens_kappa_from_table(table)
    assert from_table.kappa == pytest.approx(res.kappa, abs=1e-12)
    assert from_table.se == pytest.approx(res.se, abs=1e-12)


def test_kappa_invariances() -> None:
    rng = np.random.default_rng(11)
    a = rng.integers(0, 3, size=120).tolist()
    b = [x if rng.random() < 0.7 else int(rng.integers(0, 3)) for x in a]
    base = cohens_kappa(a, b)
    # relabelling the categories changes nothing
    rename = {0: "z", 1: "x", 2: "y"}
    renamed = cohens_kappa([rename[x] for x in a], [rename[x] for x in b])
    assert renamed.kappa == pytest.approx(base.kappa, abs=1e-12)
    assert renamed.se == pytest.approx(base.se, abs=1e-12)
    # an unused admissible category adds an empty row and column: same κ and se
    wider = cohens_kappa(a, b, categories=[0, 1, 2, 3])
    assert wider.kappa == pytest.approx(base.kappa, abs=1e-12)
    assert wider.se == pytest.approx(base.se, abs=1e-12)
    # swapping the readers transposes the table: same κ and se
    swapped = cohens_kappa(b, a)
    assert swapped.kappa == pytest.approx(base.kappa, abs=1e-12)
    assert swapped.se == pytest.approx(base.se, abs=1e-12)
    # numpy input equals list input
    assert cohens_kappa(np.array(a), np.array(b)).kappa == base.kappa


def test_kappa_perfect_and_opposite_agreement() -> None:
    perfect = cohens_kappa([0, 1, 1, 0, 1], [0, 1, 1, 0, 1])
    assert perfect.kappa == 1.0 and perfect.se == 0.0 and perfect.ci_high == 1.0
    opposite = cohens_kappa([0, 1] * 10, [1, 0] * 10)
    assert opposite.kappa == pytest.approx(-1.0, abs=1e-12)
    assert opposite.ci_low >= -1.0
    assert all(math.isfinite(v) for v in (opposite.se, opposite.ci_low, opposite.ci_high))


def test_kappa_degenerate_expected_agreement_is_refused() -> None:
    with pytest.raises(InputError) as err:
        cohens_kappa(["a"] * 10, ["a"] * 10)
    assert err.value.parameter == "table"
    with pytest.raises(InputError):
        cohens_kappa_from_table([[10, 0], [0, 0]])
    # one reader constant but the other not: P_e < 1, κ defined (= 0)
    res = cohens_kappa(["a"] * 6, ["a", "b"] * 3)
    assert res.kappa == pytest.approx(0.0, abs=1e-12)
    assert math.isfinite(res.se)


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
    assert audit.expected_kappa.basis == "closed_form"
    assert audit.readings == 200_000
    # the reader model's marginals are uniform and its P_o is r² + (1 − r)²/(k − 1)
    p_o = rate**2 + (1 - rate) ** 2 / (k - 1)
    se_po = math.sqrt(p_o * (1 - p_o) / 100_000)
    assert abs(audit.kappa.observed_agreement - p_o) <= 4 * se_po


def test_expected_kappa_closed_form_values() -> None:
    assert expected_kappa(0.92, 2) == pytest.approx(0.84**2)
    assert expected_kappa(0.5, 2) == 0.0
    assert expected_kappa(0.25, 4) == 0.0
    assert expected_kappa(1.0, 5) == 1.0
    # derivation check: (P_o − 1/k)/(1 − 1/k) with P_o = r² + (1 − r)²/(k − 1)
    for r in (0.1, 0.37, 0.66, 0.9):
        for k in (2, 3, 7):
            p_o = r**2 + (1 - r) ** 2 / (k - 1)
            assert expected_kappa(r, k) == pytest.approx((p_o - 1 / k) / (1 - 1 / k), abs=1e-12)


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
    assert decision.passed == (a1.kappa.kappa >= 0.60)
    assert decision.readings == 400 and decision.n_roots == 200
    assert decision.gated_on == "point_estimate"
    assert decision.ci_low.basis == "closed_form" and decision.kappa.basis == "exact"
    dump_json(decision)  # serialisable, no NaN


def test_audit_gate_gates_the_point_estimate_not_the_interval() -> None:
    # κ̂ = 0.64 (> 0.60) with a lower bound well below 0.60: passes on the point estimate
    res = cohens_kappa_from_table([[41, 9], [9, 41]])
    assert res.kappa == pytest.approx(0.64)
    assert res.ci_low < 0.60
    assert AuditGate(0.60).evaluate(res).passed
    # κ̂ = 0.56 (< 0.60) with an upper bound above 0.60: fails
    low = cohens_kappa_from_table([[39, 11], [11, 39]])
    assert low.kappa == pytest.approx(0.56) and low.ci_high > 0.60
    assert not AuditGate(0.60).evaluate(low).passed
    assert AuditGate(0.5).evaluate(low).passed


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
    at_n = simulate_baseline_power(n, rate, h, alpha, m, seed=99, purpose="test/recheck")
    below = simulate_baseline_power(n - 1, rate, h, alpha, m, seed=99, purpose="test/recheck")
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
        sim = simulate_baseline_power(n, 0.5, 0.3, 0.005, 2, seed=12)
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
# Cost line
# ------------------------------------------------------------------------------------------


def test_human_layer_cost_line() -> None:
    cost = HumanLayerCost.of(400, 200, 350)
    assert cost.total == 950
    assert cost.line().startswith("human layer: 950 touches")
    audit = simulate_reader_audit(200, 0.92, stream(1, "audit"))
    sizing = size_human_baseline(0.5, 0.3, 0.005, 0.95, n_per_root=2, pilot_roots=100, seed=1)
    line = HumanLayerCost.from_parts(AuditGate().evaluate(audit), sizing)
    assert line.audit_readings == 400
    assert line.total == 400 + sizing.pilot_touches + sizing.confirmatory_touches
    assert HumanLayerCost.from_parts(audit, sizing) == line
    assert HumanLayerCost.from_parts(400, sizing) == line


# ------------------------------------------------------------------------------------------
# Refusals
# ------------------------------------------------------------------------------------------

GEN = np.random.default_rng(0)

REFUSALS = [
    ("b", lambda: cohens_kappa([0, 1, 0], [0, 1])),
    ("a", lambda: cohens_kappa([0], [0])),
    ("a, b", lambda: cohens_kappa("ab", "ab")),
    ("a, b", lambda: cohens_kappa([0, 2], [0, 1], categories=[0, 1])),
    ("a, b", lambda: cohens_kappa([[0], [1]], [[0], [1]])),
    ("categories", lambda: cohens_kappa([0, 1], [0, 1], categories=[0, 0, 1])),
    ("categories", lambda: cohens_kappa([0, 0], [0, 0], categories=[0])),
    ("level", lambda: cohens_kappa([0, 1], [0, 1], level=1.0)),
    ("level", lambda: cohens_kappa([0, 1], [0, 1], level=float("nan"))),
    ("table", lambda: cohens_kappa_from_table([[1, 2, 3], [4, 5, 6]])),
    ("table", lambda: cohens_kappa_from_table([[1, -2], [4, 5]])),
    ("table", lambda: cohens_kappa_from_table([[1.5, 2], [4, 5]])),
    ("table", lambda: cohens_kappa_from_table([[1, 0], [0, 0]])),
    ("table", lambda: cohens_kappa_from_table([[5]])),
    ("level", lambda: KappaResult(0.5, 0.75, 0.5, 10, 0.1, 0.95, 0.3, 0.7, (0, 1)).interval(0)),
    ("reconstruction_rate", lambda: expected_kappa(1.2, 2)),
    ("reconstruction_rate", lambda: expected_kappa(True, 2)),
    ("n_categories", lambda: expected_kappa(0.5, 1)),
    ("n_categories", lambda: expected_kappa(0.5, 2.0)),
    ("n_roots", lambda: simulate_reader_audit(1, 0.9, GEN)),
    ("reconstruction_rate", lambda: simulate_reader_audit(10, -0.1, GEN)),
    ("n_categories", lambda: simulate_reader_audit(10, 0.9, GEN, 1)),
    ("rng", lambda: simulate_reader_audit(10, 0.9, 42)),
    ("kappa_min", lambda: AuditGate(1.5)),
    ("kappa_min", lambda: AuditGate(float("nan"))),
    ("result", lambda: AuditGate().evaluate(0.7)),
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
    ("confirmatory_roots", lambda: simulate_baseline_power(0, 0.5, 0.3, 0.05, 2, seed=1)),
    ("audit_readings", lambda: HumanLayerCost.of(-1, 0, 0)),
    ("confirmatory_touches", lambda: HumanLayerCost.of(1, 0, 2.5)),
    ("baseline", lambda: HumanLayerCost.from_parts(10, None)),
]


@pytest.mark.parametrize(
    ("parameter", "call"), REFUSALS, ids=[f"{i}-{p}" for i, (p, _) in enumerate(REFUSALS)]
)
def test_invalid_arguments_are_refused_by_name(parameter: str, call) -> None:  # type: ignore[no-untyped-def]
    with pytest.raises(InputError) as err:
        call()
    assert err.value.parameter == parameter
    assert parameter in str(err.value)


def test_gate_pass_rate_matches_single_audits() -> None:
    """The vectorised pass rate agrees with gating one simulated audit at a time."""
    from verdictpack._rng import stream as _stream
    from verdictpack.simulate._human import (
        AuditGate,
        simulate_gate_pass_rate,
        simulate_reader_audit,
    )

    n, rate, kmin = 60, 0.78, 0.35
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
