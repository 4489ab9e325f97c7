"""M_i and H_i of a study table, and the defects that refuse one (verdictpack.evidence._assemble).

Every expected value is worked by hand from the module docstring: scores in half units
(treatment 2, null partner 0; a tie 1 under ``half``; invalid and missing against the claim --
model 0, human 2 -- under ``against_claim`` and 1 under ``half``), M_i over the 2·J·T cells
divided by 4·J·T, H_i over max(n_i, humans_per_root) judgments divided by twice that.
"""

from __future__ import annotations

import itertools
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
# r3: humans only (not yet judged by the panel).
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

POLICY_GRID = list(itertools.product(("half", "against_claim"), repeat=3))


def _half(v: str) -> int:
    return 1 if v == "half" else 0


@pytest.mark.parametrize(("tie", "invalid", "missing"), POLICY_GRID)
@pytest.mark.parametrize("humans_per_root", [None, 4])
def test_m_and_h_by_hand_under_every_policy(
    tmp_path: Path, tie: str, invalid: str, missing: str, humans_per_root: int | None
) -> None:
    table = _table(tmp_path, ROWS)
    policy = Policy(tie=tie, invalid=invalid, missing=missing)  # type: ignore[arg-type]
    v = root_values(table, ORDER, 3, JUDGES, 1, policy, humans_per_root, refused=("bad",))
    assert v.root_ids == ("r2", "r1")  # registered order; r3 has no model judgment
    # model ties score 1 (half) or 0 (against); invalid and missing 1 or 0
    t_m, i_m, x_m = _half(tie), _half(invalid), _half(missing)
    m_r2 = (0 + 3 * x_m) / 8
    m_r1 = (2 + t_m + i_m + x_m) / 8
    np.testing.assert_array_equal(v.m, [m_r2, m_r1])
    # human ties score 1 (half) or 2 (against); invalid 1 or 2; a shortfall 1 or 2
    t_h, i_h, x_h = 2 - _half(tie), 2 - _half(invalid), 2 - _half(missing)
    h_r1 = (2 + t_h + i_h) / 6 if humans_per_root is None else (2 + t_h + i_h + x_h) / 8
    assert math.isnan(v.h[0]) and v.h_value(0) is None
    assert v.h[1] == h_r1 and v.h_value(1) == h_r1
    np.testing.assert_array_equal(v.model_judgments, [1, 3])
    np.testing.assert_array_equal(v.human_judgments, [0, 3])


def test_coverage_counts_everything_the_policy_absorbs(tmp_path: Path) -> None:
    table = _table(tmp_path, ROWS)
    v = root_values(table, ORDER, 3, JUDGES, 1, Policy(), 4, refused=("bad",))
    c = v.coverage
    assert (c.rows, c.model_rows, c.human_rows) == (10, 5, 5)
    assert (c.rows_on_refused_roots, c.roots_with_rows_refused) == (2, 1)
    assert (c.admitted_roots, c.admitted_roots_unjudged, c.roots_entered) == (3, 1, 2)
    assert c.roots_with_humans == 1
    # r1 (jb one order only) and r2 (ja one order only)
    assert c.roots_one_order_only == 2
    assert c.one_order_examples == ("r2", "r1")
    assert (c.model_ties, c.model_invalid, c.model_missing_cells) == (1, 1, 1 + 3)
    assert (c.human_ties, c.human_invalid) == (1, 1)
    assert c.humans_above_expected == 0


def test_human_shortfall_counted_on_entered_roots_only(tmp_path: Path) -> None:
    table = _table(tmp_path, ROWS)
    v = root_values(table, ORDER, 3, JUDGES, 1, Policy(), 4, refused=("bad",))
    # r1 holds 3 of 4 expected human judgments: the one shortfall scored into H_r1
    assert v.coverage.human_missing == 1


def test_more_humans_than_expected_are_all_kept(tmp_path: Path) -> None:
    rows = [_row("r1", j, "model", o, "treatment") for j in JUDGES for o in (TF, NF)]
    rows += [_row("r1", f"h{k}", "human", UNK, "null_partner") for k in range(3)]
    rows += [_row("r1", "h3", "human", UNK, "treatment")]
    table = _table(tmp_path, rows)
    v = root_values(table, ("r1",), 1, JUDGES, 1, Policy(), 2)
    assert v.m.tolist() == [1.0]
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
    # r1: 2 + 0 + 1 + 2 over 4 cells; r2: one cell of 4, three missing (against: 0)
    assert v.m.tolist() == [5 / 8, 2 / 8]
    assert v.coverage.model_missing_cells == 3
    v3 = root_values(table, ("r1", "r2"), 2, ("ja",), 3, Policy(missing="half"), None)
    # three trials: 6 cells each; r1 two missing, r2 five missing, each scored 1
    assert v3.m.tolist() == [(5 + 2) / 12, (2 + 5) / 12]


def test_values_do_not_depend_on_file_order(tmp_path: Path) -> None:
    a = root_values(_table(tmp_path, ROWS, "a.csv"), ORDER, 3, JUDGES, 1, Policy(), 4, ("bad",))
    b = root_values(
        _table(tmp_path, ROWS[::-1], "b.csv"), ORDER, 3, JUDGES, 1, Policy(), 4, ("bad",)
    )
    assert a.root_ids == b.root_ids
    np.testing.assert_array_equal(a.m, b.m)
    np.testing.assert_array_equal(a.h, b.h)
    assert a.coverage == b.coverage


def test_judgment_values_never_drop_a_row(tmp_path: Path) -> None:
    """A root whose every model judgment is invalid still enters, scored against the claim."""
    rows = [_row("r1", j, "model", o, "invalid") for j in JUDGES for o in (TF, NF)]
    rows += [_row("r1", "h1", "human", UNK, "invalid")]
    v = root_values(_table(tmp_path, rows), ("r1",), 1, JUDGES, 1, Policy(), None)
    assert v.root_ids == ("r1",)
    assert (v.m.tolist(), v.h.tolist()) == ([0.0], [1.0])


def test_empty_order_and_table() -> None:
    v = root_values(JudgmentTable.empty(), (), 0, JUDGES, 1, Policy(), None)
    assert v.root_ids == () and v.m.size == 0 and v.h.size == 0
    assert v.coverage.roots_entered == 0


@pytest.mark.parametrize("field", ["tie", "invalid", "missing"])
def test_policy_refuses_unknown_names(field: str) -> None:
    with pytest.raises(InputError) as err:
        Policy(**{field: "drop"})  # type: ignore[arg-type]
    assert err.value.parameter == field


def test_policy_scores_per_kind() -> None:
    p = Policy(tie="against_claim", invalid="half", missing="against_claim")
    assert p.scores(0).tolist() == [2, 0, 0, 1]  # treatment, null_partner, tie, invalid
    assert p.scores(1).tolist() == [2, 0, 2, 1]
    assert (p.missing_score(0), p.missing_score(1)) == (0, 2)
    assert Policy(missing="half").missing_score(1) == 1


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
