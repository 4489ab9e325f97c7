"""From the canonical table of a study to the per-root values the sequential core reads.

:func:`check_study_table` finds what makes a table unusable for a registered study (each a
:class:`~verdictpack._errors.Defect` at the row's file and line) and counts what the data hold
beyond that (:class:`Coverage`); :func:`root_values` turns the table into bounds on M_i and H_i
in the registered order.

**The observation.** A model judgment's observation is the answer the judge gave (its
``choice``): treatment 1, null partner 0, a tie ½ (a declared outcome, part of the metric). A
study may declare the *probability* estimand instead (``Policy.model_observation``
``"probability"``): then a model judgment's observation is its ``p_treatment`` (a live judge's
probability of preferring the treatment, from its token logprobs), and a judgment without one is
an unknown value. The two are never mixed in one stream. Humans always give choices.

**Unknown values, bounded both ways.** An invalid answer, a registered cell (judge, order,
trial) with no judgment and a human shortfall (fewer judgments on a root than the declared
``humans_per_root``) are unknown: each is scored 0 for the lower value and 1 for the upper one.
For root i with J registered judges and T trials per presentation order, in half units
(treatment 2, null partner 0, tie 1, unknown 0 .. 2):

* M_i ∈ [M_lo, M_hi]: the scores of the 2·J·T registered cells / (4·J·T), unknowns at 0 / at 2;
* H_i ∈ [H_lo, H_hi]: the human scores / (2·n_i), n_i the humans' judgments on the root raised
  to ``humans_per_root`` when declared (the shortfall unknown, so a root without humans under a
  declared count has H_i ∈ [0, 1]); without a declared count a root without humans has no H_i
  (the human stream assumes its judgments are missing at random: the count is reported).

Whatever the unknowns were, the values that full, valid answers would have given lie inside
these bounds, so a lower confidence bound computed from the lower values and an upper one from
the upper values keep their level (the e-processes are monotone in the observations; see
docs/statistics.md). ``m`` and ``h`` are the midpoints (unknowns at ½), for description only.

**No silent gaps.** Roots enter in the registered order up to the last admitted root holding a
model judgment (after it, the data have run out); an admitted root before it with no model
judgment is a gap, every cell unknown (M_i ∈ [0, 1]), never skipped.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

import numpy as np
from numpy.typing import NDArray

from verdictpack._errors import Defect, InputError
from verdictpack.evidence._table import CHOICES, ORDERS, RATER_KINDS, JudgmentTable

__all__ = [
    "OBSERVATIONS",
    "Coverage",
    "EvidenceBlock",
    "Policy",
    "RootValues",
    "check_study_table",
    "root_values",
]

OBSERVATIONS = ("choice", "probability")
_MODEL, _HUMAN = RATER_KINDS.index("model"), RATER_KINDS.index("human")
_UNKNOWN = ORDERS.index("unknown")
_TIE, _INVALID = CHOICES.index("tie"), CHOICES.index("invalid")
_TREATMENT = CHOICES.index("treatment")
# half-unit (lower, upper) score of each choice code: treatment, null partner, tie, invalid
_CHOICE_LO = np.array([2, 0, 1, 0], np.float64)
_CHOICE_HI = np.array([2, 0, 1, 2], np.float64)


@dataclass(frozen=True)
class Policy:
    """The declared observation of a model judgment (module docstring). Ties score ½; invalid
    and missing answers are unknown and bounded both ways, whatever the policy."""

    model_observation: Literal["choice", "probability"] = "choice"

    def __post_init__(self) -> None:
        if self.model_observation not in OBSERVATIONS:
            raise InputError(
                "model_observation", "one of " + ", ".join(OBSERVATIONS), self.model_observation
            )

    def row_bounds(
        self, kind: int, choice: NDArray[np.int8], p_treatment: NDArray[np.float64]
    ) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
        """Half-unit (lower, upper) scores of rows of one rater kind (0 model, 1 human)."""
        lo = _CHOICE_LO[choice]
        hi = _CHOICE_HI[choice]
        if kind == _MODEL and self.model_observation == "probability":
            known = ~np.isnan(p_treatment) & (choice != _INVALID)
            soft = np.where(known, 2.0 * np.nan_to_num(p_treatment), 0.0)
            lo = np.where(known, soft, 0.0)
            hi = np.where(known, soft, 2.0)
        return lo, hi

    def cell_bounds(self, choice: str, p_treatment: float | None) -> tuple[float, float]:
        """Half-unit (lower, upper) score of one model judgment (a live answer)."""
        code = np.array([CHOICES.index(choice)], np.int8)
        p = np.array([np.nan if p_treatment is None else float(p_treatment)])
        lo, hi = self.row_bounds(_MODEL, code, p)
        return float(lo[0]), float(hi[0])


@dataclass(frozen=True)
class Coverage:
    """What the data hold, beyond defects: every count behind the bounds, reported."""

    rows: int
    model_rows: int
    human_rows: int
    rows_on_refused_roots: int
    roots_with_rows_refused: int
    admitted_roots: int
    admitted_roots_unjudged: int
    roots_entered: int
    gap_roots: int
    roots_with_humans: int
    roots_without_humans_unbounded: int
    roots_one_order_only: int
    one_order_examples: tuple[str, ...]
    model_ties: int
    model_invalid: int
    model_missing_cells: int
    model_without_probability: int
    model_unknown: int
    human_ties: int
    human_invalid: int
    human_missing: int
    human_unknown: int
    humans_above_expected: int


@dataclass(frozen=True)
class EvidenceBlock:
    """Roots in the order they entered, as the tracks read them: bounds on M_i and H_i (H NaN
    where a root has no human stream value; lower equal to upper where every answer is known).
    What every evidence source hands the tracks (:mod:`verdictpack.evidence._source`)."""

    root_ids: tuple[str, ...]
    m_lo: NDArray[np.float64]
    m_hi: NDArray[np.float64]
    h_lo: NDArray[np.float64]
    h_hi: NDArray[np.float64]

    def __len__(self) -> int:
        return len(self.root_ids)

    @property
    def columns(self) -> tuple[NDArray[np.float64], ...]:
        """(M_lo, M_hi, H_lo, H_hi): what :meth:`~verdictpack.core._tracks.TrackStream.extend`
        takes."""
        return self.m_lo, self.m_hi, self.h_lo, self.h_hi


@dataclass(frozen=True)
class RootValues(EvidenceBlock):
    """A study's :class:`EvidenceBlock` (the roots entered, in the registered order) with what
    the data hold beyond the values: the judgments per root, the coverage counts, the midpoints
    ``m``, ``h`` and the pooled point rates."""

    model_judgments: NDArray[np.int64]
    human_judgments: NDArray[np.int64]
    coverage: Coverage
    model_rate: float | None
    human_rate: float | None
    model_rate_probability: float | None

    @property
    def m(self) -> NDArray[np.float64]:
        """M_i with unknowns at ½ (the midpoint of its bounds; description only)."""
        return np.asarray((self.m_lo + self.m_hi) / 2.0)

    @property
    def h(self) -> NDArray[np.float64]:
        """H_i with unknowns at ½ (NaN where the root has no human stream value)."""
        return np.asarray((self.h_lo + self.h_hi) / 2.0)

    @property
    def bounded(self) -> bool:
        """True when some value is an interval (an unknown answer was bounded)."""
        has = ~np.isnan(self.h_lo)
        return bool(np.any(self.m_lo != self.m_hi) or np.any(self.h_lo[has] != self.h_hi[has]))


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


def _pooled(total: float, count: int) -> float | None:
    return None if count == 0 else float(total / (2 * count))


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
    """Bounds on M_i and H_i (module docstring) of the roots of ``order`` up to the last one
    holding a model judgment.

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
    cells = 2 * len(judges) * trials
    m_rows = np.bincount(rank[model], minlength=n_roots)
    judged = np.flatnonzero(m_rows > 0)
    n_in = int(judged[-1]) + 1 if judged.size else 0  # roots entered: up to the last judged one
    entered_mask = np.arange(n_roots) < n_in
    human = keep & (kind == _HUMAN) & np.r_[entered_mask, False][rank]
    h_rows = np.bincount(rank[human], minlength=n_roots)
    p_model = table.p_treatment[model]
    m_lo_s, m_hi_s = policy.row_bounds(_MODEL, choice[model], p_model)
    h_lo_s, h_hi_s = policy.row_bounds(_HUMAN, choice[human], table.p_treatment[human])
    m_lo_sum = np.bincount(rank[model], weights=m_lo_s, minlength=n_roots)
    m_hi_sum = np.bincount(rank[model], weights=m_hi_s, minlength=n_roots)
    h_lo_sum = np.bincount(rank[human], weights=h_lo_s, minlength=n_roots)
    h_hi_sum = np.bincount(rank[human], weights=h_hi_s, minlength=n_roots)
    m_missing = np.where(entered_mask, cells - m_rows, 0)
    expected = humans_per_root or 0
    n_h = np.where(entered_mask, np.maximum(h_rows, expected), 0)
    h_missing = n_h - h_rows
    sl = slice(0, n_in)
    m_lo = m_lo_sum[sl] / (2 * cells)
    m_hi = (m_hi_sum[sl] + 2 * m_missing[sl]) / (2 * cells)
    with np.errstate(invalid="ignore", divide="ignore"):
        h_lo = np.where(n_h[sl] > 0, h_lo_sum[sl] / (2 * n_h[sl]), np.nan)
        h_hi = np.where(n_h[sl] > 0, (h_hi_sum[sl] + 2 * h_missing[sl]) / (2 * n_h[sl]), np.nan)
    # pooled point rates over the known answers (description: the bounds carry the guarantee)
    m_known = m_lo_s == m_hi_s
    h_known = h_lo_s == h_hi_s
    with_p = ~np.isnan(p_model) & (choice[model] != _INVALID)
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
    model_unknown_rows = int((~m_known).sum())
    model_invalid = int((choice[model] == _INVALID).sum())
    coverage = Coverage(
        rows=len(table),
        model_rows=int((kind == _MODEL).sum()),
        human_rows=int((kind == _HUMAN).sum()),
        rows_on_refused_roots=refused_rows,
        roots_with_rows_refused=int(np.unique(table.root_code[on_refused]).size),
        admitted_roots=admitted,
        admitted_roots_unjudged=int(admitted - n_in),
        roots_entered=n_in,
        gap_roots=int((m_rows[sl] == 0).sum()),
        roots_with_humans=int((h_rows[sl] > 0).sum()),
        roots_without_humans_unbounded=int((n_h[sl] == 0).sum()),
        roots_one_order_only=int(one_order.sum()),
        one_order_examples=examples,
        model_ties=int((choice[model] == _TIE).sum()),
        model_invalid=model_invalid,
        model_missing_cells=int(m_missing.sum()),
        model_without_probability=model_unknown_rows - model_invalid,
        model_unknown=model_unknown_rows + int(m_missing.sum()),
        human_ties=int((choice[human] == _TIE).sum()),
        human_invalid=int((choice[human] == _INVALID).sum()),
        human_missing=int(h_missing.sum()),
        human_unknown=int((~h_known).sum() + h_missing.sum()),
        humans_above_expected=int(((h_rows > expected) & (expected > 0)).sum()),
    )
    return RootValues(
        root_ids=tuple(order[:n_in]),
        m_lo=m_lo.astype(np.float64),
        m_hi=m_hi.astype(np.float64),
        h_lo=h_lo.astype(np.float64),
        h_hi=h_hi.astype(np.float64),
        model_judgments=m_rows[sl].astype(np.int64),
        human_judgments=h_rows[sl].astype(np.int64),
        coverage=coverage,
        model_rate=_pooled(float(m_lo_s[m_known].sum()), int(m_known.sum())),
        human_rate=_pooled(float(h_lo_s[h_known].sum()), int(h_known.sum())),
        model_rate_probability=(float(p_model[with_p].mean()) if with_p.any() else None),
    )
