"""The engine's files (report, verdict, evidence trail, stimuli, costs, validity and power) of an
:class:`EngineResult`."""

from __future__ import annotations

import json
from typing import Any

from verdictpack._cells import csv_text
from verdictpack._contract import results_document
from verdictpack._results import dump_json, to_jsonable
from verdictpack.kinds._engine import EngineResult
from verdictpack.render._markdown import (
    TRACK_HEADERS,
    audit_text,
    construction_comparison,
    fmt_count,
    fmt_fig,
    fmt_money,
    fmt_p,
    fmt_x,
    guarantees_table,
    md_code,
    md_text,
    oc_table,
    route_label,
    scenario_section,
    table,
    track_row,
)
from verdictpack.render._summary import report_head, worlds_section
from verdictpack.simulate._human import ReaderAuditSize

# ----------------------------------------------------------------------------------------------
# Engine
# ----------------------------------------------------------------------------------------------


def render_engine_report(r: Any) -> str:
    out = report_head("engine", r)
    out.append("## Verdict\n")
    out.append(
        f"Evidence: {md_text(r.evidence_source)}; true h of the simulated streams "
        f"{fmt_x(r.truth_true_h)} "
        f"(model rate {fmt_p(r.truth_mu_model)}, human rate {fmt_p(r.truth_mu_human)}). "
        f"Roots run: {r.roots_run} of a cap of {r.effective_cap} "
        + (
            f"(configured cap {r.cap_roots}, limited by the {r.factory.n_admitted} admitted "
            "stimuli)"
            if r.effective_cap < r.cap_roots
            else f"(the configured cap; {r.factory.n_admitted} stimuli admitted)"
        )
        + ". The registered track's verdict stops the run; the extension track and the "
        "comparison construction are read on the same evidence.\n"
    )
    out.append(
        table(TRACK_HEADERS, [track_row(t) for t in (r.registered, r.extension, r.comparison)])
    )
    f = r.factory
    out.append("## Stimulus factory\n")
    out.append(
        f"{f.n_candidates} candidates from the `{f.family}` templates ({', '.join(f.templates)}); "
        f"{f.n_admitted} admitted, yield {fmt_p(f.admission_yield)} (exact).\n"
    )
    out.append(
        table(
            ["gate", "candidates failing", "first failing gate"],
            [[g, f.gate_failures[g], f.first_failures[g]] for g in f.gate_names],
        )
    )
    s = r.spot_check
    out.append(
        f"Human spot-check of the mechanical gate: {s.pairs} admitted pairs × {s.passes_per_pair} "
        f"passes = {s.touches} touches, cost {fmt_money(s.cost)} (zero disagreements in "
        f"{s.pairs} pairs bound the gate's error below {fmt_p(s.error_rate)} at confidence "
        f"{fmt_p(s.confidence)}; exact).\n"
    )
    a, b, z = r.audit, r.baseline, r.audit_sizing
    out.append("## Human layer\n")
    out.append(
        table(
            ["function", "result"],
            [
                ["instrument validation (reader reconstruction)", audit_text(a)],
                ["reader-audit sizing", _audit_sizing_text(z)],
                [
                    "preference baseline (powered)",
                    f"pilot {b.pilot_roots} roots ({b.pilot_touches} touches) + confirmatory "
                    f"{b.confirmatory_roots} roots ({b.confirmatory_touches} touches) sized by "
                    f"simulation: power {fmt_fig(b.simulated_power)} (exact "
                    f"{fmt_p(b.exact_power)}; closed-form size {fmt_count(b.closed_form_roots)} "
                    "roots)" + _baseline_icc_text(b),
                ],
            ],
        )
    )
    out.append("## Cost of this run (the human layer its own line)\n")
    out.append(
        table(
            ["line", "touches", "cost"],
            [[c.line, fmt_count(c.touches), fmt_money(c.cost)] for c in r.costs],
        )
    )
    out.append("## Power report: this design at and above the threshold (simulated)\n")
    out.append(construction_comparison(r.power))
    out.append(guarantees_table(r.power[0]) if r.power else "")
    for sc in r.power:
        out += scenario_section(sc)
    out.append(worlds_section(r.worlds))
    out.append("## Confound arms (precommitted)\n")
    out.append(
        "No inference rule repairs a confounded design: each arm names the design that isolates "
        "the confound and shows what each route concludes when only that confound is present.\n"
    )
    for arm in r.confound_arms:
        name = arm.confound + (f" × {', '.join(arm.crossed_with)}" if arm.crossed_with else "")
        out.append(f"### Arm {md_code(name)}\n")
        out.append(f"- design: {arm.design}\n- stress case: {arm.stress}\n")
        if arm.outcome is not None:
            out.append(oc_table(arm.outcome))
        if arm.audit_pass_rate_at_chance is not None:
            out.append(
                "P(the kappa gate passes with readers at chance) = "
                f"{fmt_fig(arm.audit_pass_rate_at_chance, 4)}: otherwise the verdict is "
                "INSTRUMENT_INVALID and no preference claim is evaluated.\n"
            )
    return "\n".join(out).rstrip() + "\n"


def render_registered_vs_extension(r: Any) -> str:
    reg, ext = r.registered, r.extension
    lines = [
        f"# Registered vs extension — {md_text(r.construct.name)}",
        "",
        "Two tracks, frozen apart. The registered track tests the registered claim at the "
        "registered threshold and alone decides when the run stops. The extension track runs the "
        "same machinery at the weaker minimum on the same evidence; **its result is never the "
        "registered test**.",
        "",
        table(TRACK_HEADERS, [track_row(reg), track_row(ext)]),
        f"- Registered claim: {md_text(reg.claim)}",
        f"- Registered verdict: **{reg.verdict}**"
        + (f" at root {reg.roots_at_verdict}" if reg.roots_at_verdict else ""),
        f"- Extension claim (not the registered test): {md_text(ext.claim)}",
        f"- Extension verdict: **{ext.verdict}**"
        + (f" at root {ext.roots_at_verdict}" if ext.roots_at_verdict else ""),
    ]
    return "\n".join(lines).rstrip() + "\n"


def render_cost_csv(r: Any) -> str:
    rows = [("route", "scenario", "line", "touches", "touches_mcse", "cost", "cost_mcse", "basis")]
    for c in r.costs:
        rows.append(
            (
                c.route,
                "this run",
                c.line,
                f"{float(c.touches.value):g}",
                "",
                f"{float(c.cost.value):.4f}",
                "",
                c.touches.basis,
            )
        )
    for sc in r.power:
        for route in sc.routes:
            label = route_label(route)
            for line, t, cost in (
                ("model judgments", route.mean_model_touches, route.mean_model_cost),
                ("human layer", route.mean_human_touches, route.mean_human_cost),
                ("total", route.mean_touches, route.mean_cost),
            ):
                rows.append(
                    (
                        label,
                        sc.scenario,
                        line,
                        f"{float(t.value):.4f}",
                        f"{t.mcse:.4f}",
                        f"{float(cost.value):.4f}",
                        f"{cost.mcse:.4f}",
                        "simulated",
                    )
                )
    return csv_text(rows)


def render_files(r: EngineResult) -> dict[str, str]:
    data = results_document(r)
    evidence = to_jsonable(r.evidence)
    admitted = to_jsonable(r.factory.admitted)
    verdict = {
        "construct": r.construct.name,
        "instrument_valid": r.instrument_valid,
        "evidence_source": r.evidence_source,
        "roots_run": r.roots_run,
        "effective_cap": r.effective_cap,
        "registered": data["registered"],
        "extension": data["extension"],
        "comparison": data["comparison"],
    }
    validity = {
        "factory": data["factory"],
        "spot_check": data["spot_check"],
        "audit": data["audit"],
        "stream_checks": data["stream_checks"],
    }
    power = {"scenarios": data["power"], "confound_arms": data["confound_arms"]}
    return {
        "report.md": render_engine_report(r),
        "results.json": dump_json(data),
        "verdict.json": dump_json(verdict),
        "evidence.jsonl": "".join(
            json.dumps(row, ensure_ascii=False, allow_nan=False) + "\n" for row in evidence
        ),
        "stimuli.jsonl": "".join(
            json.dumps(root, ensure_ascii=False, allow_nan=False) + "\n" for root in admitted
        ),
        "cost_comparison.csv": render_cost_csv(r),
        "validity_report.json": dump_json(validity),
        "power_report.json": dump_json(power),
        "registered_vs_extension.md": render_registered_vs_extension(r),
    }


def _baseline_icc_text(b: Any) -> str:
    """The humans' ICC_H and design effect behind the baseline sizing ("" when not given)."""
    if b.icc is None:
        return ""
    deff = 1.0 + (b.n_per_root - 1) * b.icc
    model = "clustered model" if b.n_per_root > 1 and b.icc > 0 else "binomial model exact"
    return (
        f"; ICC_H {fmt_p(b.icc)} (latent r {fmt_p(b.latent_correlation)}), design effect "
        f"{deff:.3g} ({model})"
    )


def _audit_sizing_text(z: ReaderAuditSize) -> str:
    """The reader-audit sizing: the roots at which readers at the planning kappa pass the gate
    with the target probability, and the registered roots' pass probability when one is set."""
    head = (
        f"readers at the planning kappa {fmt_p(z.planning_kappa)} (reconstruction rate "
        f"{fmt_p(z.planning_rate)})"
    )
    if z.roots is None:
        text = (
            f"{head} do not exceed the gate kappa_min: no audit size passes them with "
            f"probability ≥ {fmt_p(z.target_pass_probability)}"
        )
    else:
        text = (
            f"{head} pass the gate with probability ≥ {fmt_p(z.target_pass_probability)} from "
            f"{z.roots} roots (simulated {fmt_fig(z.pass_probability)}"
        )
        if z.pass_probability_below is not None:
            text += f"; {z.roots - 1} roots: {fmt_fig(z.pass_probability_below)}"
        text += ")"
    if z.registered_roots is None:
        return text + "; the audit uses that size"
    return (
        f"{text}; the registered {z.registered_roots} roots pass with probability "
        f"{fmt_fig(z.pass_probability_registered)}"
    )
