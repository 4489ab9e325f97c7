"""The judges report (``report.md``) and ``results.json`` of a :class:`JudgesResult`."""

from __future__ import annotations

from typing import Any

from verdictpack.render._markdown import (
    fmt_fig,
    fmt_mean,
    fmt_money,
    fmt_p,
    fmt_x,
    md_code,
    report_and_results,
    scenario_section,
    table,
)
from verdictpack.render._summary import report_head, worlds_section


def render_judges(r: Any) -> str:
    out = report_head("judges", r)
    out.append(
        f"Registered route: e-process ({r.construction}), cap {r.cap_roots} roots; human stream "
        f"{r.human_judgments_per_root} judgments per root at {fmt_money(r.human_cost_per_judgment)}"
        f" each; {r.replicates} replicates per composition and world (seed {r.seed}). A verdict "
        "is *wrong* when it contradicts the world: EFFECT_SUPPORTED with no effect, "
        "NO_POSITIVE_EFFECT or BELOW_PRACTICAL_THRESHOLD with one.\n"
    )
    out.append("## Price next to accuracy (e-process, registered construction)\n")
    rows = []
    for c in r.compositions:
        for label, sc in (("effect present", c.effect_present), ("effect absent", c.effect_absent)):
            e = sc.routes[0]
            rows.append(
                [
                    c.name,
                    f"{c.nominal_size} ({fmt_x(c.effective_size, 2)})",
                    label,
                    fmt_x(sc.true_h),
                    fmt_fig(e.p_correct, 3),
                    fmt_fig(e.p_wrong, 3),
                    fmt_fig(e.p_verdict["INCONCLUSIVE"], 3),
                    fmt_mean(e.mean_roots),
                    fmt_mean(e.mean_touches),
                    fmt_money(e.mean_cost),
                    fmt_mean(e.cost_per_valid_verdict, 2),
                ]
            )
    out.append(
        table(
            [
                "composition",
                "judges (effective)",
                "world",
                "stream true h",
                "P(correct verdict)",
                "P(wrong verdict)",
                "P(inconclusive)",
                "mean roots",
                "mean touches",
                "mean cost",
                "cost per valid verdict",
            ],
            rows,
        )
    )
    out.append(worlds_section(r.worlds))
    for c in r.compositions:
        out.append(f"## Composition {md_code(c.name)}\n")
        out.append(
            f"Nominal size {c.nominal_size} judges, latent correlation "
            f"{fmt_x(c.latent_correlation, 2)}, effective size {fmt_x(c.effective_size, 2)} "
            f"(closed form, Kish); {c.touches_per_root} touches and "
            f"{fmt_money(c.cost_per_root)} per root (both streams).\n"
        )
        out.append(
            table(
                [
                    "judge",
                    "role",
                    "baseline rate",
                    "lean h",
                    "noise",
                    "position bias",
                    "cost / judgment",
                ],
                [
                    [
                        j.name,
                        j.role,
                        fmt_p(j.baseline_rate),
                        f"{j.lean_h:+.3f}",
                        fmt_x(j.noise, 2),
                        fmt_x(j.position_bias, 2),
                        fmt_money(j.cost_per_judgment),
                    ]
                    for j in c.judges
                ],
            )
        )
        for sc in (c.effect_present, c.effect_absent):
            out += scenario_section(sc)
    return "\n".join(out).rstrip() + "\n"


render_files = report_and_results(render_judges)
