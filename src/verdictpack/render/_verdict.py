"""The verdict report (``report.md``) and ``results.json`` of a :class:`VerdictResult`."""

from __future__ import annotations

from typing import Any

from verdictpack.render._markdown import (
    construction_comparison,
    fmt_alpha,
    fmt_count,
    fmt_money,
    fmt_p,
    guarantees_table,
    report_and_results,
    scenario_section,
    table,
)
from verdictpack.render._summary import report_head, worlds_section


def render_verdict(r: Any) -> str:
    out = report_head("verdict", r)
    out.append("## Design\n")
    out.append(
        table(
            ["setting", "value"],
            [
                [
                    "registered construction (comparison)",
                    f"{r.construction} ({'hybrid' if r.construction == 'corners' else 'corners'})",
                ],
                ["cap", f"{r.cap_roots} roots"],
                ["model stream", f"{r.judges_per_root} judges × 2 orders per root"],
                ["human stream", f"{r.human_judgments_per_root} judgments per root"],
                [
                    "touches / cost per root (both streams)",
                    f"{r.touches_per_root} / {fmt_money(r.cost_per_root)}",
                ],
                ["fixed-n design", f"{r.fixed_n_roots} roots (closed form, two proportions)"],
                ["replicates per scenario (seed)", f"{r.replicates} ({r.seed})"],
            ],
        )
    )
    if r.scenarios:
        out.append("## Routes and the guarantee each carries\n")
        out.append(guarantees_table(r.scenarios[0]))
    out.append("## The two constructions side by side\n")
    out.append(construction_comparison(r.scenarios))
    out.append("## Operating characteristics (simulated, ± Monte Carlo standard error)\n")
    for sc in r.scenarios:
        out += scenario_section(sc)
    out.append(worlds_section(r.worlds))
    s = r.sprt_exact
    out.append("## SPRT, exact (recursion over the continuation region)\n")
    out.append(
        f"{s.note}. p0 {fmt_p(s.p0)} vs p1 {fmt_p(s.p1)}, alpha {fmt_alpha(s.alpha)}, "
        f"beta {fmt_alpha(s.beta)}.\n"
    )
    out.append(
        table(
            ["quantity", "value", "basis"],
            [
                ["ln A / ln B", f"{s.log_a:.6f} / {s.log_b:.6f}", "closed form"],
                [
                    "per success / per failure",
                    f"{s.step_success:+.6f} / {s.step_failure:+.6f}",
                    "closed form",
                ],
                ["actual alpha", f"{float(s.actual_alpha):.5f}", s.actual_alpha.label()],
                ["actual beta", f"{float(s.actual_beta):.5f}", s.actual_beta.label()],
                [
                    "ASN under H0 (Wald)",
                    f"{float(s.asn_h0):.2f} ({float(s.wald_asn_h0):.2f})",
                    "exact (closed form)",
                ],
                [
                    "ASN under H1 (Wald)",
                    f"{float(s.asn_h1):.2f} ({float(s.wald_asn_h1):.2f})",
                    "exact (closed form)",
                ],
                [
                    "N quantiles under H0",
                    " / ".join(f"{k} {v}" for k, v in s.n_quantiles_h0.items()),
                    "exact",
                ],
                [
                    "N quantiles under H1",
                    " / ".join(f"{k} {v}" for k, v in s.n_quantiles_h1.items()),
                    "exact",
                ],
                ["fixed-n exact binomial of the same claim", fmt_count(s.fixed_n_exact), "exact"],
            ],
        )
    )
    out.append(
        f"The SPRT is open-ended: the recursion runs to {s.horizon} judgments and the mass "
        f"beyond is {s.mass_beyond_horizon:.2e}.\n"
    )
    return "\n".join(out).rstrip() + "\n"


render_files = report_and_results(render_verdict)
