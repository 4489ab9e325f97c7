"""Bounds on M_i and H_i of a study table, and the defects that refuse one
(verdictpack.evidence._assemble).

Every expected value is worked by hand from the module docstring: scores in half units
(treatment 2, null partner 0, tie 1; an unknown answer -- invalid, a missing cell, a human
shortfall -- 0 for the lower value and 2 for the upper), M_i over the 2·J·T cells divided by
4·J·T, H_i over max(n_i, humans_per_root) judgments divided by twice that.
"""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pytest

from verdictpack._errors import Defect, InputError
from verdictpack.evidence._assemble import Policy, check_study_table, root_values
from verdictpack.evidence._table import CANONICAL_COLUMNS, JudgmentTable, read_table

HEADER = ",".join(CANONICAL_COLUMNS[:6])
JUDGES = ("ja", "jb")
TF, NF, UNK = "treatment_first", "null_first", "unknown"


def _table(tmp_path: Path, rows: list[str], name: str = "j.csv") -> JudgmentTable:
    """A table read from a canonical CSV (row k of ``rows`` is at line k + 2)."""
    path = tmp_path / name
    path.write_text("\n".join([HEADER, *rows]) + "\n", encoding="utf-8")
    result = read_table(path)
    assert result.defects == ()
    return result.table


def _row(root: str, rater: str, kind: str, order: str, choice: str, trial: int = 0) -> str:
    return f"{root},{rater},{kind},{order},{choice},{trial}"


# r1: judge ja both orders (treatment, tie); judge jb treatment_first invalid, null_first missing;
#     humans h1 treatment, h2 tie, h3 invalid.
# r2: one model cell (ja treatment_first null_partner), no humans.
# r3: humans only (not yet judged by the panel: after the last judged root, the data run out).
# bad: a pair the gates refused (rows counted, left out).
ROWS = [
    _row("r1", "ja", "model", TF, "treatment"),
    _row("r1", "ja", "model", NF, "tie"),
    _row("r1", "jb", "model", TF, "invalid"),
    _row("r1", "h1", "human", UNK, "treatment"),
    _row("r1", "h2", "human", UNK, "tie"),
    _row("r1", "h3", "human", UNK, "invalid"),
    _row("r2", "ja", "model", TF, "null_partner"),
    _row("r3", "h1", "human", UNK, "treatment"),
    _row("bad", "ja", "model", TF, "treatment"),
    _row("bad", "h1", "human", UNK, "treatment"),
]
ORDER = ("r2", "r1", "r3")


@pytest.mark.parametrize("humans_per_root", [None, 4])
def test_bounds_by_hand(tmp_path: Path, humans_per_root: int | None) -> None:
    table = _table(tmp_path, ROWS)
    v = root_values(table, ORDER, 3, JUDGES, 1, Policy(), humans_per_root, refused=("bad",))
    assert v.root_ids == ("r2", "r1")  # registered order; r3 after the last judged root
    # r2: one null partner (0) and three missing cells (0 .. 2 each) over 2·J·T = 4 cells
    # r1: treatment 2, tie 1, invalid 0 .. 2, one missing cell 0 .. 2
    np.testing.assert_array_equal(v.m_lo, [0 / 8, 3 / 8])
    np.testing.assert_array_equal(v.m_hi, [6 / 8, 7 / 8])
    np.testing.assert_array_equal(v.m, [3 / 8, 5 / 8])  # midpoints
    # humans on r1: treatment 2, tie 1, invalid 0 .. 2 (and under 4 declared, a shortfall)
    if humans_per_root is None:
        assert math.isnan(v.h_lo[0]) and math.isnan(v.h[0])  # r2: no H_i (missing at random)
        assert (v.h_lo[1], v.h_hi[1]) == (3 / 6, 5 / 6)
        assert v.coverage.roots_without_humans_unbounded == 1
    else:
        assert (v.h_lo[0], v.h_hi[0]) == (0.0, 1.0)  # a declared count: r2 wholly unknown
        assert (v.h_lo[1], v.h_hi[1]) == (3 / 8, 7 / 8)
        assert v.coverage.roots_without_humans_unbounded == 0
    np.testing.assert_array_equal(v.model_judgments, [1, 3])
    np.testing.assert_array_equal(v.human_judgments, [0, 3])
    assert v.bounded


def test_the_full_answers_lie_inside_the_bounds(tmp_path: Path) -> None:
    """Whatever an unknown answer would have been, M_i and H_i computed with it lie inside."""
    rng = np.random.default_rng(20261203)
    full = []
    for r in range(12):
        for j in JUDGES:
            for o in (TF, NF):
                for t in range(2):
                    full.append(
                        (
                            f"r{r}",
                            j,
                            "model",
                            o,
                            str(rng.choice(["treatment", "null_partner", "tie"])),
                            t,
                        )
                    )
        for k in range(2):
            full.append(
                (
                    f"r{r}",
                    f"h{k}",
                    "human",
                    UNK,
                    str(rng.choice(["treatment", "null_partner", "tie"])),
                    0,
                )
            )
    order = tuple(f"r{r}" for r in range(12))
    truth = root_values(
        _table(tmp_path, [_row(*x) for x in full], "full.csv"), order, 12, JUDGES, 2, Policy(), 2
    )
    assert not truth.bounded
    for rep in range(20):
        seen = []
        for x in full:
            u = rng.random()
            if u < 0.15:
                continue  # missing cell (a model cell or a human shortfall)
            seen.append((*x[:4], "invalid", *x[5:]) if u < 0.3 else x)
        v = root_values(
            _table(tmp_path, [_row(*x) for x in seen], f"s{rep}.csv"), order, 12, JUDGES, 2,
            Policy(), 2,
        )  # fmt: skip
        k = len(v.root_ids)
        assert np.all(v.m_lo <= truth.m[:k]) and np.all(truth.m[:k] <= v.m_hi)
        assert np.all(v.h_lo <= truth.h[:k]) and np.all(truth.h[:k] <= v.h_hi)


def test_a_gap_in_the_registered_order_enters_as_unknown_never_skipped(tmp_path: Path) -> None:
    rows = [_row("r1", j, "model", o, "treatment") for j in JUDGES for o in (TF, NF)]
    rows += [_row("r3", j, "model", o, "null_partner") for j in JUDGES for o in (TF, NF)]
    v = root_values(_table(tmp_path, rows), ("r1", "r2", "r3", "r4"), 4, JUDGES, 1, Policy(), None)
    assert v.root_ids == ("r1", "r2", "r3")  # r2 enters in its place; r4: the data ran out
    np.testing.assert_array_equal(v.m_lo, [1.0, 0.0, 0.0])
    np.testing.assert_array_equal(v.m_hi, [1.0, 1.0, 0.0])
    c = v.coverage
    assert (c.gap_roots, c.admitted_roots_unjudged, c.roots_entered) == (1, 1, 3)
    assert c.model_missing_cells == 4 and c.model_unknown == 4


def test_coverage_counts_everything_bounded(tmp_path: Path) -> None:
    table = _table(tmp_path, ROWS)
    v = root_values(table, ORDER, 3, JUDGES, 1, Policy(), 4, refused=("bad",))
    c = v.coverage
    assert (c.rows, c.model_rows, c.human_rows) == (10, 5, 5)
    assert (c.rows_on_refused_roots, c.roots_with_rows_refused) == (2, 1)
    assert (c.admitted_roots, c.admitted_roots_unjudged, c.roots_entered) == (3, 1, 2)
    assert c.roots_with_humans == 1 and c.gap_roots == 0
    # r1 (jb one order only) and r2 (ja one order only)
    assert c.roots_one_order_only == 2
    assert c.one_order_examples == ("r2", "r1")
    assert (c.model_ties, c.model_invalid, c.model_missing_cells) == (1, 1, 1 + 3)
    assert c.model_unknown == 1 + 4 and c.model_without_probability == 0
    assert (c.human_ties, c.human_invalid) == (1, 1)
    # r1 holds 3 of 4 declared human judgments, r2 none of 4
    assert c.human_missing == 1 + 4 and c.human_unknown == 1 + 5
    assert c.humans_above_expected == 0
    # pooled point rates over the known answers
    assert v.model_rate == pytest.approx((0 + 2 + 1) / 6)
    assert v.human_rate == pytest.approx((2 + 1) / 4)
    assert v.model_rate_probability is None


def test_more_humans_than_expected_are_all_kept(tmp_path: Path) -> None:
    rows = [_row("r1", j, "model", o, "treatment") for j in JUDGES for o in (TF, NF)]
    rows += [_row("r1", f"h{k}", "human", UNK, "null_partner") for k in range(3)]
    rows += [_row("r1", "h3", "human", UNK, "treatment")]
    table = _table(tmp_path, rows)
    v = root_values(table, ("r1",), 1, JUDGES, 1, Policy(), 2)
    assert v.m.tolist() == [1.0] and not v.bounded
    assert v.h.tolist() == [2 / 8]  # n_i = 4 > 2 expected: all four count, no shortfall
    assert v.coverage.humans_above_expected == 1
    assert v.coverage.human_missing == 0
    assert v.coverage.roots_one_order_only == 0


def test_trials_above_one_fill_two_j_t_cells(tmp_path: Path) -> None:
    rows = [
        _row("r1", "ja", "model", TF, "treatment", 0),
        _row("r1", "ja", "model", TF, "null_partner", 1),
        _row("r1", "ja", "model", NF, "tie", 0),
        _row("r1", "ja", "model", NF, "treatment", 1),
        _row("r2", "ja", "model", NF, "treatment", 1),
    ]
    table = _table(tmp_path, rows)
    v = root_values(table, ("r1", "r2"), 2, ("ja",), 2, Policy(), None)
    # r1: 2 + 0 + 1 + 2 over 4 cells; r2: one cell of 4, three missing (0 .. 2 each)
    assert v.m_lo.tolist() == [5 / 8, 2 / 8] and v.m_hi.tolist() == [5 / 8, 8 / 8]
    assert v.coverage.model_missing_cells == 3
    v3 = root_values(table, ("r1", "r2"), 2, ("ja",), 3, Policy(), None)
    # three trials: 6 cells each; r1 two missing, r2 five missing
    assert v3.m_lo.tolist() == [5 / 12, 2 / 12] and v3.m_hi.tolist() == [9 / 12, 12 / 12]


def test_the_probability_estimand_is_declared_never_mixed(tmp_path: Path) -> None:
    path = tmp_path / "p.csv"
    head = ",".join([*CANONICAL_COLUMNS[:6], "p_treatment"])
    lines = [
        "r1,ja,model,treatment_first,treatment,0,0.75",
        "r1,ja,model,null_first,null_partner,0,",  # no probability: unknown under that estimand
        "r1,jb,model,treatment_first,null_partner,0,0.25",
        "r1,jb,model,null_first,invalid,0,",
    ]
    path.write_text("\n".join([head, *lines]) + "\n", encoding="utf-8")
    table = read_table(path, mapping={"p_treatment": "p_treatment"}).table
    choice = root_values(table, ("r1",), 1, JUDGES, 1, Policy(), None)
    # the answers given: treatment, null partner, null partner, invalid (0 .. 2)
    assert (choice.m_lo[0], choice.m_hi[0]) == (2 / 8, 4 / 8)
    assert choice.model_rate_probability == pytest.approx(0.5)  # shown beside, never mixed in
    prob = root_values(table, ("r1",), 1, JUDGES, 1, Policy("probability"), None)
    # 2·0.75 and 2·0.25 known; a row without a probability and the invalid one unknown
    assert (prob.m_lo[0], prob.m_hi[0]) == (2 / 8, 6 / 8)
    assert prob.coverage.model_without_probability == 1
    assert prob.coverage.model_unknown == 2


def test_values_do_not_depend_on_file_order(tmp_path: Path) -> None:
    a = root_values(_table(tmp_path, ROWS, "a.csv"), ORDER, 3, JUDGES, 1, Policy(), 4, ("bad",))
    b = root_values(
        _table(tmp_path, ROWS[::-1], "b.csv"), ORDER, 3, JUDGES, 1, Policy(), 4, ("bad",)
    )
    assert a.root_ids == b.root_ids
    np.testing.assert_array_equal(a.m_lo, b.m_lo)
    np.testing.assert_array_equal(a.m_hi, b.m_hi)
    np.testing.assert_array_equal(a.h_lo, b.h_lo)
    np.testing.assert_array_equal(a.h_hi, b.h_hi)
    assert a.coverage == b.coverage


def test_judgment_values_never_drop_a_row(tmp_path: Path) -> None:
    """A root whose every answer is invalid still enters, every value unknown."""
    rows = [_row("r1", j, "model", o, "invalid") for j in JUDGES for o in (TF, NF)]
    rows += [_row("r1", "h1", "human", UNK, "invalid")]
    v = root_values(_table(tmp_path, rows), ("r1",), 1, JUDGES, 1, Policy(), None)
    assert v.root_ids == ("r1",)
    assert (v.m_lo.tolist(), v.m_hi.tolist()) == ([0.0], [1.0])
    assert (v.h_lo.tolist(), v.h_hi.tolist()) == ([0.0], [1.0])
    assert v.model_rate is None and v.human_rate is None


def test_empty_order_and_table() -> None:
    v = root_values(JudgmentTable.empty(), (), 0, JUDGES, 1, Policy(), None)
    assert v.root_ids == () and v.m.size == 0 and v.h.size == 0
    assert v.coverage.roots_entered == 0


def test_policy_refuses_unknown_observations() -> None:
    with pytest.raises(InputError) as err:
        Policy("logits")  # type: ignore[arg-type]
    assert err.value.parameter == "model_observation"


def test_row_bounds_per_kind_and_observation() -> None:
    codes = np.array([0, 1, 2, 3], np.int8)  # treatment, null_partner, tie, invalid
    p = np.array([0.9, 0.2, np.nan, 0.4])
    for kind in (0, 1):
        lo, hi = Policy().row_bounds(kind, codes, p)
        assert lo.tolist() == [2, 0, 1, 0] and hi.tolist() == [2, 0, 1, 2]
    lo, hi = Policy("probability").row_bounds(0, codes, p)
    assert lo.tolist() == pytest.approx([1.8, 0.4, 0, 0]) and hi.tolist() == pytest.approx(
        [1.8, 0.4, 2, 2]
    )
    lo, hi = Policy("probability").row_bounds(1, codes, p)  # humans give choices
    assert lo.tolist() == [2, 0, 1, 0] and hi.tolist() == [2, 0, 1, 2]
    assert Policy().cell_bounds("invalid", None) == (0.0, 2.0)
    assert Policy().cell_bounds("null_partner", 0.9) == (0.0, 0.0)  # the answer, not its p
    assert Policy("probability").cell_bounds("null_partner", 0.9) == (1.8, 1.8)


# ---------------------------------------------------------------- check_study_table

CLEAN = [
    _row("r1", "ja", "model", TF, "treatment"),
    _row("r1", "jb", "model", NF, "null_partner"),
    _row("r1", "h1", "human", UNK, "tie"),
]
STIMULI = ("r1", "r2")


def _check(tmp_path: Path, extra: list[str], trials: int = 1) -> tuple[Defect, ...]:
    table = _table(tmp_path, CLEAN + extra)
    return check_study_table(table, STIMULI, "pairs.jsonl", ("ja", "jb", "jc"), trials)


def test_clean_table_has_no_defect(tmp_path: Path) -> None:
    assert _check(tmp_path, []) == ()


def test_unknown_root(tmp_path: Path) -> None:
    (d,) = _check(tmp_path, [_row("zz", "h1", "human", UNK, "treatment")])
    assert (d.file, d.path, d.received) == ("j.csv", "line 5", "zz")
    assert "pairs.jsonl" in d.expected


def test_unregistered_judge(tmp_path: Path) -> None:
    (d,) = _check(tmp_path, [_row("r2", "jx", "model", TF, "treatment")])
    assert (d.file, d.path, d.received) == ("j.csv", "line 5", "jx")
    assert "ja, jb, jc" in d.expected


def test_human_id_equal_to_a_judge_name(tmp_path: Path) -> None:
    (d,) = _check(tmp_path, [_row("r2", "jc", "human", UNK, "treatment")])
    assert (d.file, d.path, d.received) == ("j.csv", "line 5", "jc")
    assert "not a registered judge" in d.expected


def test_model_row_without_presentation_order(tmp_path: Path) -> None:
    (d,) = _check(tmp_path, [_row("r2", "ja", "model", UNK, "treatment")])
    assert (d.file, d.path, d.received) == ("j.csv", "line 5", "unknown")
    assert "treatment_first or null_first" in d.expected


def test_trial_beyond_the_registered_count(tmp_path: Path) -> None:
    extra = [_row("r2", "ja", "model", TF, "treatment", 1), _row("r2", "ja", "model", NF, "tie", 2)]
    assert _check(tmp_path, extra, trials=2)[0].path == "line 6"
    assert len(_check(tmp_path, extra, trials=2)) == 1
    ds = _check(tmp_path, extra, trials=1)
    assert [(d.path, d.received) for d in ds] == [("line 5", 1), ("line 6", 2)]
    assert all("below 1" in d.expected for d in ds)
    assert _check(tmp_path, extra, trials=3) == ()


def test_human_trials_are_not_bounded_by_panel_trials(tmp_path: Path) -> None:
    assert _check(tmp_path, [_row("r2", "h1", "human", UNK, "treatment", 5)]) == ()


def test_duplicate_key(tmp_path: Path) -> None:
    (d,) = _check(tmp_path, [_row("r1", "ja", "model", TF, "null_partner")])
    assert (d.file, d.path) == ("j.csv", "line 5")
    assert d.received == {"root_id": "r1", "rater_id": "ja", "order": TF, "trial": 0}
    assert "j.csv: line 2" in d.expected


def test_rater_id_with_both_kinds(tmp_path: Path) -> None:
    """A rater both model and human: the first row of that rater is named (beside the defect
    its model or human rows already carry)."""
    ds = _check(tmp_path, [_row("r2", "h1", "model", TF, "treatment")])
    both = [d for d in ds if "one rater kind" in d.expected]
    assert [(d.file, d.path, d.received) for d in both] == [("j.csv", "line 4", "h1")]
    assert any(d.path == "line 5" and "registered panel" in d.expected for d in ds)
    ds = _check(tmp_path, [_row("r2", "ja", "human", UNK, "treatment")])
    both = [d for d in ds if "one rater kind" in d.expected]
    assert [(d.path, d.received) for d in both] == [("line 2", "ja")]
    assert any(d.path == "line 5" and "not a registered judge" in d.expected for d in ds)


def test_every_defect_reported_at_once(tmp_path: Path) -> None:
    extra = [
        _row("zz", "h1", "human", UNK, "treatment"),
        _row("r2", "jx", "model", TF, "treatment"),
        _row("r2", "jc", "human", UNK, "treatment"),
        _row("r2", "ja", "model", UNK, "treatment"),
        _row("r2", "jb", "model", TF, "treatment", 4),
        _row("r1", "ja", "model", TF, "tie"),
    ]
    ds = _check(tmp_path, extra)
    assert sorted(int(d.path[5:]) for d in ds) == list(range(5, 11))
    assert {d.file for d in ds} == {"j.csv"}


def test_defects_from_two_files_name_their_own_file(tmp_path: Path) -> None:
    a = _table(tmp_path, CLEAN, "a.csv")
    b = _table(tmp_path, [_row("zz", "h9", "human", UNK, "tie")], "b.csv")
    (d,) = check_study_table(JudgmentTable.concat([a, b]), STIMULI, "p.csv", ("ja", "jb"), 1)
    assert (d.file, d.path, d.received) == ("b.csv", "line 2", "zz")
