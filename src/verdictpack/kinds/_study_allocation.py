"""``--plan``'s human allocation: a study config's prices, budget and humans fed to the planner.

:func:`~verdictpack.simulate._allocation.plan_allocations` compares 1, 2 and 3 human judgments
per root (and the config's own ``humans.judgments_per_root``) under the config's bets, in the
world of the judges' sheets and the humans' sheet (ICC_H of ``--sheets``' fitted_panel.json, a
negative fit read as 0; without one the humans are independent across roots). Prices: one human
judgment ``humans.cost_per_judgment``; a root's model judgments at the live judges' worst-case
call prices (the plan's cost per root); the reader audit's readings (its double-read roots'
readings over the admitted roots: a planned study double-reads the same share) at
``data.reader_audit.cost_per_reading`` per root. ``budget.humans`` (with a human price) caps each
allocation at the roots its human judgments cover. The target is today's P(verdict within its
cap).
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

from verdictpack.config._blocks import build_sequential
from verdictpack.config._compiler import compile_construct
from verdictpack.kinds._study import StudyPrepared
from verdictpack.kinds._study_config import StudyConfig
from verdictpack.simulate._allocation import AllocationPlan, Prices, plan_allocations
from verdictpack.simulate._fitted import sheet_human_icc
from verdictpack.simulate._judges import Panel, TruthScenario

__all__ = ["FIELD", "plan_humans", "plan_icc"]

FIELD = "humans.judgments_per_root"  # the study config field that takes the chosen allocation


def plan_icc(config: StudyConfig, sheets: Mapping[str, Any] | None) -> tuple[float | None, str]:
    """The human sheet's ICC_H a plan simulates and a sentence saying where it came from: a
    fitted_panel.json's fitted ICC (--sheets) first, else the config's ``humans.icc``."""
    fitted = sheets.get("human_icc") if sheets is not None else None
    raw = fitted.get("icc") if isinstance(fitted, Mapping) else None
    icc = sheet_human_icc(sheets)
    if icc is None and config.humans.icc is not None:
        return config.humans.icc, f"ICC_H {config.humans.icc:.3f}, the config's humans.icc"
    if icc is None:
        return None, "the humans independent across roots (no fitted human sheet: --sheets)"
    if isinstance(raw, int | float) and raw < 0:
        return icc, f"ICC_H 0: the fitted ICC_H {float(raw):.3f} is negative, read as 0"
    return icc, f"ICC_H {icc:.3f}, fitted with the sheets"


def plan_humans(
    config: StudyConfig,
    prep: StudyPrepared,
    panel: Panel,
    sheets: Mapping[str, Any] | None,
    per_root: float,
    human_rate: float,
    cap: int,
    replicates: int,
) -> tuple[AllocationPlan | None, str]:
    """The allocation plan of a study and a sentence on the ICC_H it assumed (None and the
    reason when the human budget covers no root of today's allocation)."""
    human_icc, icc_note = plan_icc(config, sheets)
    construct = compile_construct(config.construct_spec)
    sequential = build_sequential(config.sequential)
    audit = config.data.reader_audit
    reading = 0.0
    if audit is not None and prep.order:  # the audit's readings per admitted root, priced
        reading = audit.cost_per_reading * len(prep.data.readings) / len(prep.order)
    price = config.humans.cost_per_judgment
    budget = config.budget.humans
    human_budget = budget / price if budget is not None and price > 0 else None
    if human_budget is not None and not math.isfinite(human_budget):
        human_budget = None
    current = (config.humans.judgments_per_root or 1, sequential.bets)
    if human_budget is not None and human_budget < current[0]:
        return None, (
            f"not planned: budget.humans covers {human_budget:.6g} human judgments at "
            f"humans.cost_per_judgment, fewer than one root takes today ({current[0]})"
        )
    plan = plan_allocations(
        panel,
        TruthScenario(name="the sheets' world", effect_scale=1.0),
        human_rate,
        human_icc,
        construction=sequential.construction,
        alpha=construct.per_tail_alpha,
        spec=sequential.spec,
        threshold=construct.governing_threshold_h,
        cap=max(1, cap),
        prices=Prices(human=price, model_root=per_root, reading_root=reading),
        current=current,
        seed=config.seed,
        replicates=replicates,
        human_budget=human_budget,
        bets=(sequential.bets,),
    )
    return plan, icc_note
