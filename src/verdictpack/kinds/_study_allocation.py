"""``--plan``'s human allocation: a study config's prices, budget and humans fed to the planner.

:func:`~verdictpack.simulate._allocation.plan_allocations` compares 1, 2 and 3 human judgments per
root (and the config's own ``humans.judgments_per_root``) under each bets construction
``planning.bets`` names (default grid, plug-in, blend and horizon; the config's ``sequential.bets``
first), in the world of the judges' sheets and the humans' sheet (ICC_H of ``--sheets``'
fitted_panel.json, a negative fit read as 0; without one the humans are independent across roots).
Prices: one human judgment ``humans.cost_per_judgment``; a root's model judgments at the live
judges' worst-case call prices (the plan's cost per root); the reader audit
(:func:`plan_reader_audit`) sized by :func:`~verdictpack.simulate._human.size_reader_audit` so that
readers at the study's observed kappa pass its gate with probability 0.8 (the engine's default
``pass_probability``): its roots n_a double-read, two readings each at
``data.reader_audit.cost_per_reading``, priced once per allocation (a share n_a / N of its roots).
Readers at or below the gate: no size passes them, and the audit is priced as the study's readings
per admitted root (a planned study double-reads the same share). ``budget.humans`` (with a human
price) caps each allocation at the roots its human judgments cover. The target is today's P(verdict
within its cap).
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Mapping
from typing import Any

from verdictpack._errors import InputError
from verdictpack._parallel import usable_cpus
from verdictpack.config._blocks import SequentialSettings
from verdictpack.config._compiler import Construct
from verdictpack.core._agreement import AuditGate, reconstruction_rate_for
from verdictpack.kinds._study import StudyPrepared
from verdictpack.kinds._study_config import StudyConfig
from verdictpack.simulate._allocation import AllocationPlan, Prices, plan_allocations
from verdictpack.simulate._fitted import sheet_human_icc
from verdictpack.simulate._human import size_reader_audit
from verdictpack.simulate._judges import Panel, TruthScenario

__all__ = [
    "FIELD",
    "PASS_PROBABILITY",
    "StudyPlanInputs",
    "plan_humans",
    "plan_icc",
    "plan_reader_audit",
]

FIELD = "humans.judgments_per_root"  # the study config field that takes the chosen allocation
PASS_PROBABILITY = 0.8  # the engine's default human.audit.pass_probability
MAX_AUDIT_ROOTS = 100_000  # the engine's sizing horizon


@dataclasses.dataclass(frozen=True)
class StudyPlanInputs:
    """What ``--plan`` has already built that the allocation plan reuses: the compiled construct
    and sequential settings, the sheets' panel, the ICC_H with its sentence (:func:`plan_icc`),
    the humans' rate, a root's model-judgment price, the cap and the replicates."""

    construct: Construct
    sequential: SequentialSettings
    panel: Panel
    icc: tuple[float | None, str]
    human_rate: float
    per_root: float
    cap: int
    replicates: int


def plan_reader_audit(
    config: StudyConfig, prep: StudyPrepared
) -> tuple[float, float, int | None, str]:
    """The reader audit a planned study needs: (price of readings per root, the audit's one
    price, roots double-read n_a or None, a sentence). Sized (module docstring) at the
    reconstruction rate whose kappa is the study's kappa-hat (core ``reconstruction_rate_for``)."""
    a, decision = config.data.reader_audit, prep.audit
    if a is None or decision is None:
        return 0.0, 0.0, None, 'The plan includes no reader audit (`data.reader_audit` "none").'
    kappa = float(decision.kappa.value)
    table = decision.agreement_table
    k = len(table) if table else max(2, len(set(prep.data.readings.category)))
    per_root = a.cost_per_reading * len(prep.data.readings) / len(prep.order) if prep.order else 0
    rate = reconstruction_rate_for(kappa, k)
    fallback = (
        f" the plan prices the study's own readings per admitted root ({per_root:.6g} a root)."
    )
    seen = f"readers at the study's kappa-hat {kappa:.3f}"
    size = None
    if kappa > a.kappa_min:
        gate = AuditGate(a.kappa_min, a.kappa_bound_level)
        purpose = "study/plan/reader-audit"
        try:
            size = size_reader_audit(
                rate, gate, PASS_PROBABILITY, config.seed, k, purpose, max_roots=MAX_AUDIT_ROOTS
            )
        except InputError:  # the planning kappa at the gate, or no size within the horizon
            size = None
    p = None if size is None else size.pass_probability
    if size is None or size.roots is None or size.readings is None or p is None:
        why = (
            f"at or below kappa_min {a.kappa_min:g}, cannot pass its gate: no reader-audit size "
            "passes them"
            if kappa <= a.kappa_min
            else f"pass its gate with probability {PASS_PROBABILITY} at no size up to "
            f"{MAX_AUDIT_ROOTS:,} roots"
        )
        return per_root, 0.0, None, f"Reader audit: {seen}, {why};{fallback}"
    cost = size.readings * a.cost_per_reading
    note = (
        f"Reader audit: n_a = {size.roots:,} roots double-read ({size.readings:,} readings, "
        f"{cost:.6g} per allocation) so that {seen} (reconstruction rate {rate:.4f}, {k} "
        f"categories) pass its gate (kappa's one-sided {a.kappa_bound_level:g} lower bound at "
        f"least {a.kappa_min:g}) with probability at least {PASS_PROBABILITY} (the engine's "
        f"default pass_probability): {float(p.value):.4f} ({p.label()}). The share of each "
        "allocation's roots N double-read is n_a / N, capped at 1."
    )
    return 0.0, cost, size.roots, note


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
    plan: StudyPlanInputs,
) -> tuple[AllocationPlan | None, str]:
    """The allocation plan of a study and a sentence on the ICC_H it assumed (None and the
    reason when the human budget covers no root of today's allocation)."""
    construct, sequential, panel = plan.construct, plan.sequential, plan.panel
    (human_icc, icc_note), human_rate, cap = plan.icc, plan.human_rate, plan.cap
    per_root = plan.per_root
    reading, audit_cost, audit_roots, audit_note = plan_reader_audit(config, prep)
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
    out = plan_allocations(
        panel,
        TruthScenario(name="the sheets' world", effect_scale=1.0),
        human_rate,
        human_icc,
        construction=sequential.construction,
        alpha=construct.per_tail_alpha,
        spec=sequential.spec,
        threshold=construct.governing_threshold_h,
        cap=max(1, cap),
        prices=Prices(human=price, model_root=per_root, reading_root=reading, audit=audit_cost),
        current=current,
        seed=config.seed,
        replicates=plan.replicates,
        human_budget=human_budget,
        bets=tuple(dict.fromkeys((sequential.bets, *config.planning.bets))),
        threads=usable_cpus(),  # the same numbers on any thread count (seeded blocks)
    )
    return dataclasses.replace(out, audit_roots=audit_roots, audit_note=audit_note), icc_note
