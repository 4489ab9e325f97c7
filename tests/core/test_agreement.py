"""Tests of verdictpack.core._agreement: Cohen's κ (hand-computed example, brute force,
statsmodels, invariances, degenerate tables), the closed-form population κ, and refusals."""

# The refusal tests pass ill-typed arguments on purpose.
# mypy: disable-error-code="arg-type,list-item"

from __future__ import annotations

import math
from collections import Counter

import numpy as np
import pytest
from statsmodels.stats.inter_rater import cohens_kappa as sm_cohens_kappa

from conftest import assert_refused_by_name
from verdictpack._errors import InputError
from verdictpack.core._agreement import (
    KappaResult,
    cohens_kappa,
    cohens_kappa_from_table,
    expected_kappa,
)


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
]


@pytest.mark.parametrize(
    ("parameter", "call"), REFUSALS, ids=[f"{i}-{p}" for i, (p, _) in enumerate(REFUSALS)]
)
def test_invalid_arguments_are_refused_by_name(parameter: str, call) -> None:  # type: ignore[no-untyped-def]
    assert_refused_by_name(parameter, call)


def test_numeric_arrays_take_the_vectorised_path_with_the_same_result() -> None:
    from verdictpack.core._agreement import _numeric_codes

    rng = np.random.default_rng(16)
    for trial in range(200):
        cats = [0.0, 0.5, 1.0] if trial % 2 else [0, 1, 2, 3]
        n = int(rng.integers(2, 60))
        a = rng.choice(np.asarray(cats), size=n)
        b = rng.choice(np.asarray(cats), size=n)
        if trial % 5 == 0:
            a = a.astype(np.int64) if trial % 2 == 0 else a
        assert _numeric_codes(a, b, cats) is not None
        try:
            general = cohens_kappa(a.tolist(), b.tolist(), categories=cats)
        except InputError as err:
            with pytest.raises(InputError) as fast_err:
                cohens_kappa(a, b, categories=cats)
            assert str(fast_err.value) == str(err)
            continue
        fast = cohens_kappa(a, b, categories=cats)
        assert fast == general
    # a label outside the categories: the general path decides (and refuses)
    with pytest.raises(InputError):
        cohens_kappa(np.array([0.0, 2.0]), np.array([0.0, 1.0]), categories=[0.0, 1.0])
    assert _numeric_codes(np.array([0.0, 2.0]), np.array([0.0, 1.0]), [0.0, 1.0]) is None
    assert _numeric_codes(np.array([0.0, 1.0]), np.array([0.0, 1.0]), None) is None
    assert _numeric_codes(np.array([0, 2**60]), np.array([0, 1]), [0, 2**60]) is None
