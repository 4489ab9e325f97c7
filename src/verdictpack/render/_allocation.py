"""`--plan`'s humans-per-root section: the allocations side by side, the chosen one."""

from __future__ import annotations

from verdictpack._results import Quantity
from verdictpack.render._markdown import md_code, md_text, table
from verdictpack.simulate._allocation import AllocationPlan

__all__ = ["allocation_section"]


def _q(x: Quantity, digits: int = 1) -> str:
    """A simulated figure with its MCSE."""
    return f"{float(x.value):,.{digits}f} ± {float(x.mcse or 0.0):,.{digits}f}"


def _pct(x: Quantity) -> str:
    return f"{100 * float(x.value):.1f} % ± {100 * float(x.mcse or 0.0):.1f} %"


def allocation_section(plan: AllocationPlan | None, icc_note: str, field: str) -> str:
    """The table of allocations (today's and the chosen marked) and what to set to take one."""
    if plan is None:
        return f"## Humans per root\n\nHumans per root {md_text(icc_note)}.\n"
    target_se = "" if plan.target_mcse is None else f" ± {plan.target_mcse:.4f}"
    head = (
        f"Simulated, {plan.replicates:,} replicates per allocation, humans on every root, "
        f"{md_text(icc_note)}. Each allocation's roots N: the fewest whose P(a verdict within "
        f"N roots) reaches the target {plan.target:.4f}{target_se} ({plan.target_source}); then "
        "the "
        "expected roots E[min(T, N)] (T the verdict's root), human judgments k·E[min(T, N)] "
        "and cost, each ± its Monte Carlo standard error. One run per allocation gives "
        "P(T ≤ n) for every n: T is a stopping time. Prices: a human judgment "
        f"{plan.prices.human:.6g}, a root's model judgments {plan.prices.model_root:.6g}, "
        + (
            f"its reader-audit readings {plan.prices.reading_root:.6g}."
            if plan.audit_roots is None
            else f"the reader audit {plan.prices.audit:.6g} once."
        )
        + (f" {md_text(plan.audit_note)}" if plan.audit_note else "")
        + "\n"
    )
    n_a = plan.audit_roots
    rows = []
    for i, a in enumerate(plan.allocations):
        mark = ", ".join(m for m, on in (("today", a.current), ("chosen", i == plan.chosen)) if on)
        rows.append(
            [
                a.humans_per_root,
                a.bets,
                f"{a.cap:,}",
                "—" if a.roots is None else f"{a.roots:,} ± {a.roots_mcse or 0.0:,.0f}",
                _q(a.p_verdict, 3),
                _q(a.expected_roots),
                _q(a.human_judgments),
                _q(a.cost, 2),
                *([] if n_a is None else [f"{min(1.0, n_a / (a.roots or a.cap)):.3f}"]),
                mark,
            ]
        )
    out = [
        "## Humans per root\n",
        head,
        table(
            [
                "humans per root",
                "bets",
                "cap (roots)",
                "roots N",
                "P(verdict within N)",
                "E roots",
                "human judgments",
                "cost",
                *([] if n_a is None else ["double-read share"]),
                "",
            ],
            rows,
        ),
    ]
    if plan.chosen is None:
        out.append(
            "Nothing chosen: today's allocation reached no verdict within its cap, so there is no "
            "chance of a verdict to match.\n"
            if plan.target == 0.0
            else "No allocation reaches the target within its cap (— in the roots N column).\n"
        )
        return "\n".join(out)
    c, now = plan.allocations[plan.chosen], plan.allocations[plan.current]
    text = (
        f"**Chosen: {c.humans_per_root} human judgment(s) per root, bets {c.bets}, N = "
        f"{c.roots:,} roots** (the least expected cost reaching the target; ties: fewer human "
        "judgments)."
    )
    if plan.chosen == plan.current:
        out.append(text + " Today's allocation is the cheapest: nothing to change.\n")
        return "\n".join(out)
    if plan.saving_humans is not None and plan.saving_cost is not None:
        share = plan.saving_humans_share
        text += (
            f" Predicted saving against today's {now.humans_per_root} per root: "
            f"{_q(plan.saving_humans)} human judgments"
            + ("" if share is None else f" ({_pct(share)})")
            + f", cost {_q(plan.saving_cost, 2)} (simulated)."
        )
    text += (
        f" To take it, set {md_code(field)} to {c.humans_per_root} (a root with fewer human "
        "judgments is scored by the missing policy)"
        + ("" if c.bets == now.bets else f", `sequential.bets` to {c.bets}")
        + f" and `sequential.cap_roots` to {c.roots:,}.\n"
    )
    out.append(text)
    return "\n".join(out)
