"""From the canonical table of a study to the per-root values the sequential core reads.

:func:`check_study_table` finds what makes a table unusable for a registered study (each a
:class:`~verdictpack._errors.Defect` at the row's file and line) and counts what the declared
policy absorbs (:class:`Coverage`); :func:`root_values` turns the table into M_i and H_i in the
registered order.

The values, in the claim's direction ("greater": judges prefer the treatment more than humans
do). Every judgment scores in half units: treatment 2, null partner 0; a model judgment that
carries ``p_treatment`` (a live judge's probability of preferring the treatment, from its token
logprobs) scores 2·p_treatment instead, unless it is invalid. A tie scores 1 under the
``half`` policy; a model tie scores 0 and a human tie 2 under ``against_claim``. An invalid
judgment, and a missing one, score against the claim (model 0, human 2) under ``against_claim``
and 1 under ``half``. For root i with J registered judges and T trials per presentation order:

* M_i = (sum of the scores of the 2·J·T registered cells (judge, order, trial), a missing cell
  scored by the missing policy) / (4·J·T);
* H_i = (sum of the human scores) / (2·n_i), n_i the humans' judgments on the root, raised to
  ``humans_per_root`` when that many were expected (the shortfall scored by the missing policy);
  no H_i (model stream only) for a root without human judgments.

No judgment is dropped because of its value. Roots enter in the registered order; an admitted
root with no model judgment is not yet judged and does not enter (the data have run out there).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

import numpy as np
from numpy.typing import NDArray

from verdictpack._errors import Defect, InputError
from verdictpack.evidence._table import CHOICES, ORDERS, RATER_KINDS, JudgmentTable

__all__ = ["POLICIES", "Coverage", "Policy", "RootValues", "check_study_table", "root_values"]

POLICIES = ("half", "against_claim")
_MODEL, _HUMAN = RATER_KINDS.index("model"), RATER_KINDS.index("human")
_UNKNOWN = ORDERS.index("unknown")
_TIE, _INVALID = CHOICES.index("tie"), CHOICES.index("invalid")
_TREATMENT = CHOICES.index("treatment")


@dataclass(frozen=True)
class Policy:
    """How ties, invalid and missing judgments score (module docstring)."""

    tie: Literal["half", "against_claim"] = "half"
    invalid: Literal["half", "against_claim"] = "against_claim"
    missing: Literal["half", "against_claim"] = "against_claim"

    def __post_init__(self) -> None:
        for name in ("tie", "invalid", "missing"):
            if getattr(self, name) not in POLICIES:
                raise InputError(name, "one of " + ", ".join(POLICIES), getattr(self, name))

    def scores(self, kind: int) -> NDArray[np.int64]:
        """Half-unit score of each choice code for a rater kind (0 model, 1 human)."""
        against = 0 if kind == _MODEL else 2
        out = np.zeros(len(CHOICES), np.int64)
        out[_TREATMENT] = 2
        out[_TIE] = 1 if self.tie == "half" else against
        out[_INVALID] = 1 if self.invalid == "half" else against
        return out

    def missing_score(self, kind: int) -> int:
        return 1 if self.missing == "half" else (0 if kind == _MODEL else 2)


@dataclass(frozen=True)
class Coverage:
    """What the data hold, beyond defects: every count the policy absorbs, reported."""

    rows: int
    model_rows: int
    human_rows: int
    rows_on_refused_roots: int
    roots_with_rows_refused: int
    admitted_roots: int
    admitted_roots_unjudged: int
    roots_entered: int
    roots_with_humans: int
    roots_one_order_only: int
    one_order_examples: tuple[str, ...]
    model_ties: int
    model_invalid: int
    model_missing_cells: int
    human_ties: int
    human_invalid: int
    human_missing: int
    humans_above_expected: int


@dataclass(frozen=True)
class RootValues:
    """M_i and H_i of the roots entered, in the registered order (H NaN without humans)."""

    root_ids: tuple[str, ...]
    m: NDArray[np.float64]
    h: NDArray[np.float64]
    model_judgments: NDArray[np.int64]
    human_judgments: NDArray[np.int64]
    coverage: Coverage

    def h_value(self, i: int) -> float | None:
        v = float(self.h[i])
        return None if v != v else v


def _defect(table: JudgmentTable, i: int, received: object, expected: str) -> Defect:
    o = table.origin(i)
    return Defect(o.file if o else "(table)", o.where if o else f"row {i}", received, expected)


def check_study_table(
    table: JudgmentTable,
    stimulus_ids: Sequence[str],
    stimuli_file: str,
    judges: Sequence[str],
    trials: int,
) -> tuple[Defect, ...]:
    """Every row a registered study cannot use: a root not in the stimulus file, a model rater
    not in the panel, a model judgment without its presentation order, a trial beyond the
    registered count, a rater id used for both kinds or shared with a judge, duplicates."""
    out: list[Defect] = []
    known = set(stimulus_ids)
    bad_root = np.array([r not in known for r in table.roots], bool)
    judge_set = set(judges)
    model = table.rater_kind == _MODEL
    is_judge = np.array([r in judge_set for r in table.raters], bool)
    kinds_of = np.zeros((len(table.raters), 2), bool)
    if len(table):
        kinds_of[table.rater_code, table.rater_kind] = True
    checks = (
        (
            bad_root[table.root_code] if len(table.roots) else np.zeros(len(table), bool),
            lambda i: table.roots[table.root_code[i]],
            f"a stimulus id of {stimuli_file}",
        ),
        (
            model & ~is_judge[table.rater_code] if len(table.raters) else model,
            lambda i: table.raters[table.rater_code[i]],
            "a judge of the registered panel (" + ", ".join(judges) + ")",
        ),
        (
            ~model & is_judge[table.rater_code] if len(table.raters) else ~model,
            lambda i: table.raters[table.rater_code[i]],
            "a human rater id that is not a registered judge's name",
        ),
        (
            model & (table.order == _UNKNOWN),
            lambda i: "unknown",
            "treatment_first or null_first for a model judgment (the counterbalanced mean "
            "needs both presentation orders)",
        ),
        (
            model & (table.trial >= trials),
            lambda i: int(table.trial[i]),
            f"a trial below {trials} (panel.trials)",
        ),
    )
    for mask, received, expected in checks:
        for i in np.flatnonzero(mask)[:50].tolist():
            out.append(_defect(table, i, received(i), expected))
    both = kinds_of.all(axis=1)
    for code in np.flatnonzero(both)[:10].tolist():
        i = int(np.flatnonzero(table.rater_code == code)[0])
        out.append(
            _defect(table, i, table.raters[code], "one rater kind per rater id (model or human)")
        )
    out.extend(table.duplicates())
    return tuple(out)


def root_values(
    table: JudgmentTable,
    order: Sequence[str],
    admitted: int,
    judges: Sequence[str],
    trials: int,
    policy: Policy,
    humans_per_root: int | None,
    refused: Sequence[str] = (),
) -> RootValues:
    """M_i and H_i (module docstring) of the roots of ``order`` holding a model judgment.

    ``order`` lists the admitted roots in the registered order (``admitted`` of them); rows on
    roots not in it (``refused`` by the gates) are counted and left out. The table must have
    passed :func:`check_study_table`.
    """
    n_roots = len(order)
    rank_of = {r: k for k, r in enumerate(order)}
    rank = np.array([rank_of.get(r, -1) for r in table.roots] + [-1], np.int64)[table.root_code]
    refused_set = set(refused)
    on_refused = np.array([r in refused_set for r in table.roots] + [False], bool)[table.root_code]
    keep = rank >= 0
    kind, choice, ordr = table.rater_kind, table.choice, table.order
    model = keep & (kind == _MODEL)
    j = len(judges)
    cells = 2 * j * trials
    m_rows = np.bincount(rank[model], minlength=n_roots)
    # humans count only on roots that enter (a root without model judgments is not judged yet)
    judged = np.r_[m_rows > 0, False]
    human = keep & (kind == _HUMAN) & judged[rank]
    h_rows = np.bincount(rank[human], minlength=n_roots)
    m_weights = policy.scores(_MODEL)[choice[model]].astype(np.float64)
    soft = ~np.isnan(table.p_treatment[model]) & (choice[model] != _INVALID)
    m_weights[soft] = 2.0 * table.p_treatment[model][soft]
    m_score = np.bincount(rank[model], weights=m_weights, minlength=n_roots)
    h_score = np.bincount(
        rank[human], weights=policy.scores(_HUMAN)[choice[human]], minlength=n_roots
    )
    m_missing = np.where(m_rows > 0, cells - m_rows, 0)
    m_total = m_score + m_missing * policy.missing_score(_MODEL)
    expected = humans_per_root or 0
    n_h = np.where(h_rows > 0, np.maximum(h_rows, expected), 0)
    h_missing = n_h - h_rows
    h_total = h_score + h_missing * policy.missing_score(_HUMAN)
    entered = np.flatnonzero(m_rows > 0)
    m = m_total[entered] / (2 * cells)
    with np.errstate(invalid="ignore", divide="ignore"):
        h = np.where(n_h[entered] > 0, h_total[entered] / (2 * n_h[entered]), np.nan)
    # roots a judge saw in one presentation order only
    first = np.zeros((n_roots, max(1, len(table.raters))), bool)
    second = np.zeros_like(first)
    mr = np.flatnonzero(model)
    sel_first = ordr[mr] == ORDERS.index("treatment_first")
    first[rank[mr[sel_first]], table.rater_code[mr[sel_first]]] = True
    second[rank[mr[~sel_first]], table.rater_code[mr[~sel_first]]] = True
    one_order = (first ^ second).any(axis=1)
    examples = tuple(order[k] for k in np.flatnonzero(one_order)[:5].tolist())
    refused_rows = int(on_refused.sum())
    coverage = Coverage(
        rows=len(table),
        model_rows=int((kind == _MODEL).sum()),
        human_rows=int((kind == _HUMAN).sum()),
        rows_on_refused_roots=refused_rows,
        roots_with_rows_refused=int(np.unique(table.root_code[on_refused]).size),
        admitted_roots=admitted,
        admitted_roots_unjudged=int(admitted - entered.size),
        roots_entered=int(entered.size),
        roots_with_humans=int((h_rows[entered] > 0).sum()),
        roots_one_order_only=int(one_order.sum()),
        one_order_examples=examples,
        model_ties=int((model & (choice == _TIE)).sum()),
        model_invalid=int((model & (choice == _INVALID)).sum()),
        model_missing_cells=int(m_missing.sum()),
        human_ties=int((human & (choice == _TIE)).sum()),
        human_invalid=int((human & (choice == _INVALID)).sum()),
        human_missing=int(h_missing.sum()),
        humans_above_expected=int(((h_rows > expected) & (expected > 0)).sum()),
    )
    return RootValues(
        root_ids=tuple(order[k] for k in entered.tolist()),
        m=m.astype(np.float64),
        h=h.astype(np.float64),
        model_judgments=m_rows[entered].astype(np.int64),
        human_judgments=h_rows[entered].astype(np.int64),
        coverage=coverage,
    )
