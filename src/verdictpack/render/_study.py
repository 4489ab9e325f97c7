"""The study's files (report, verdict, evidence trail, canonical judgments, validity, judges) of a
:class:`StudyResult`."""

from __future__ import annotations

from typing import Any

from verdictpack._cells import csv_text
from verdictpack._contract import results_document
from verdictpack._results import dump_json, to_jsonable
from verdictpack.kinds._study import StudyPrepared, StudyResult
from verdictpack.kinds._study_allocation import FIELD
from verdictpack.kinds._study_live import StudyPlan
from verdictpack.render._allocation import allocation_section
from verdictpack.render._markdown import (
    TRACK_HEADERS,
    audit_text,
    cost_table,
    fmt_interval,
    fmt_money,
    fmt_p,
    fmt_x,
    guarantees_table,
    md_code,
    md_text,
    oc_table,
    table,
    track_row,
)
from verdictpack.render._summary import report_head

_iv = fmt_interval  # an interval as printed in the study's tables


def _policy_text(r: StudyResult) -> str:
    if r.policy.get("model_observation", "choice") == "probability":
        what = (
            "a model judgment is its label probability (the declared probability estimand; one "
            "without a probability is unknown)"
        )
    else:
        what = "a judgment is the answer given (treatment 1, null partner 0)"
    return (
        f"{what}; a tie counts ½; an invalid answer, a missing registered cell and a human "
        "shortfall are unknown, bounded both ways (0 for the lower end of every stream, 1 for "
        "the upper), so each verdict keeps its error bound whatever they were"
    )


def _estimate_section(r: StudyResult) -> list[str]:
    e, c = r.estimate, r.coverage
    out = ["## Estimate\n"]
    what = "answers given" if e.observation == "choice" else "label probabilities"
    out.append(
        table(
            ["figure", "value"],
            [
                ["judges' observation (declared)", what],
                ["judges' rate (known answers)", fmt_x(e.model_rate, 4)],
                ["humans' rate (known answers)", fmt_x(e.human_rate, 4)],
                ["h, point estimate", fmt_x(e.h_point, 4)],
                ["h from the judges' label probabilities", fmt_x(e.h_point_probability, 4)],
                ["unknown model answers (bounded)", f"{e.model_unknown:,}"],
                ["unknown human answers (bounded)", f"{e.human_unknown:,}"],
                ["h-interval width, unknowns bounded", fmt_x(e.width_bounded, 4)],
                ["h-interval width, were each unknown ½", fmt_x(e.width_midpoint, 4)],
            ],
        )
    )
    out.append(
        "The rates pool the known answers and the point estimate is φ(judges) − φ(humans): a "
        "description. The verdict rests on the h-interval, which bounds every unknown answer "
        "both ways; the width it cost is shown against the width were each unknown ½ (that "
        "width has no guarantee).\n"
    )
    if e.warning is not None:
        out.append(f"**Warning:** {md_text(e.warning)}.\n")
    if e.roots_without_humans_unbounded:
        out.append(
            f"**Assumption:** {e.roots_without_humans_unbounded:,} of {c.roots_entered:,} roots "
            "entered have no human judgment and no human count was declared "
            "(humans.judgments_per_root): the human stream reads the roots that have one, "
            "assuming the others are missing at random. Declare the count to bound them "
            "instead.\n"
        )
    if c.gap_roots:
        out.append(
            f"{c.gap_roots:,} admitted roots before the last judged one have no model judgment: "
            "they entered in their registered place with every cell unknown (never skipped).\n"
        )
    return out


def _fenced(text: str) -> str:
    """``text`` as a Markdown code block whose fence no run of backticks in it can close."""
    run = longest = 0
    for ch in text:
        run = run + 1 if ch == "`" else 0
        longest = max(longest, run)
    fence = "`" * max(3, longest + 1)
    return f"{fence}text\n{text}\n{fence}\n"


def _prompt_section(r: StudyResult) -> list[str]:
    """The prompt each live judge was sent (its template, before the texts are filled in)."""
    if not r.prompts:
        return []
    out = ["## The prompt the judges saw\n"]
    groups: dict[str, list[str]] = {}
    for judge, prompt in r.prompts.items():
        key = dump_json(prompt)
        groups.setdefault(key, []).append(judge)
    for judges in groups.values():
        prompt = r.prompts[judges[0]]
        names = ", ".join(md_code(j) for j in judges)
        out.append(
            f"Sent to {names}: labels {md_code(prompt['labels'][0])} (the text shown first) and "
            f"{md_code(prompt['labels'][1])}; the question: {md_text(prompt['criterion'])}\n"
        )
        if prompt["system"].strip():
            out.append("System message:\n")
            out.append(_fenced(prompt["system"]))
        out.append("User message (the template; {first}, {second} and {source} are the texts):\n")
        out.append(_fenced(prompt["user"]))
    return out


def render_study_report(r: StudyResult) -> str:
    out = report_head("study", r)
    out.append("## Verdict\n")
    out.append(
        "The registered track's first verdict is the study's verdict; the extension track and the "
        "comparison construction are read on the same evidence up to that root.\n"
    )
    out.append(
        table(TRACK_HEADERS, [track_row(t) for t in (r.registered, r.extension, r.comparison)])
    )
    out.append(
        "Over all the data (the tracks read on past the registered verdict, over judgments "
        "already in the files; each interval is the running intersection, valid at any root):\n"
    )
    out.append(table(TRACK_HEADERS, [track_row(r.all_data[t]) for t in r.all_data]))
    out.extend(_estimate_section(r))
    out.extend(_prompt_section(r))
    if r.roots_to_go is not None:
        g = r.roots_to_go
        med = g.median_extra_roots
        out.append("## How many more roots would settle it (simulated)\n")
        n = g.max_extra_roots
        if g.method == "bootstrap":
            how = (
                f"{g.replicates:,} continuations of the {g.roots_observed:,} roots observed, "
                f"each in a world of its own: a resample (with replacement) of the observed "
                f"roots' values, from which its further roots are drawn, so the figures carry "
                f"the uncertainty of the estimated rates (humans on {fmt_p(g.human_coverage)} "
                f"of the roots observed)"
            )
        else:
            how = (
                f"{g.replicates:,} continuations of the {g.roots_observed:,} roots observed, "
                f"simulated from the fitted sheets (humans at rate {fmt_p(g.human_rate)}, "
                f"coverage {fmt_p(g.human_coverage)}, {g.humans_per_root} per root)"
            )
        out.append(
            f"{how}: P(a verdict within {n:,} more roots) = {g.p_verdict.value:.3f} (MCSE "
            f"{g.p_verdict.mcse:.3f}); median more roots "
            + (f"beyond {n:,}" if med is None else f"{int(med.value):,}")
            + ". A planning figure, not a guarantee. The outcomes within "
            + f"{n:,} more roots (shares summing to 1): "
            + ", ".join(
                f"{'no verdict within ' + format(n, ',') if v == 'INCONCLUSIVE' else v} "
                f"{q.value:.3f} (MCSE {q.mcse:.3f})"
                for v, q in g.verdicts.items()
            )
            + ". The quantiles of the more roots count every continuation; — marks one beyond "
            + f"{n:,}.\n"
        )
        out.append(
            table(
                ["quantile", "more roots"],
                [[k, "—" if v is None else f"{v:,}"] for k, v in g.quantiles_extra_roots.items()],
            )
        )
    out.append("## Data\n")
    out.append(
        table(
            ["role", "file", "format", "records", "SHA-256"],
            [
                [f.role, f.path, f.format, f"{f.records:,}", f.sha256[:16] + "…"]
                for f in r.data_files
            ],
        )
    )
    if r.import_notes:
        out.append("".join(f"- Note: {md_text(note)}\n" for note in r.import_notes))
    c = r.coverage
    out.append(
        table(
            ["count", "value"],
            [
                ["judgment rows (model / human)", f"{c.model_rows:,} / {c.human_rows:,}"],
                ["admitted roots", f"{c.admitted_roots:,}"],
                ["roots entered (to the last judged one)", f"{c.roots_entered:,}"],
                ["admitted roots after the last judged one", f"{c.admitted_roots_unjudged:,}"],
                ["roots entered with no model judgment (all unknown)", f"{c.gap_roots:,}"],
                ["roots with human judgments", f"{c.roots_with_humans:,}"],
                [
                    "roots without a human value (missing at random, assumed)",
                    f"{c.roots_without_humans_unbounded:,}",
                ],
                ["rows on roots the gates refused (left out)", f"{c.rows_on_refused_roots:,}"],
                ["roots some judge saw in one order only", f"{c.roots_one_order_only:,}"],
                [
                    "model ties / invalid / missing cells",
                    f"{c.model_ties:,} / {c.model_invalid:,} / {c.model_missing_cells:,}",
                ],
                ["model answers without a probability", f"{c.model_without_probability:,}"],
                [
                    "human ties / invalid / shortfall",
                    f"{c.human_ties:,} / {c.human_invalid:,} / {c.human_missing:,}",
                ],
                [
                    "unknown values bounded (model / human)",
                    f"{c.model_unknown:,} / {c.human_unknown:,}",
                ],
            ],
        )
    )
    out.append(f"Policy: {_policy_text(r)}. No judgment is dropped because of its value.\n")
    gr = r.gates
    out.append("## Gates\n")
    out.append(
        f"{gr.total:,} pairs; {gr.admitted:,} admitted, {gr.refused:,} refused (listed by id in "
        "validity_report.json).\n"
    )
    rows = [[n, f"{gr.refusals[n]:,}", f"{gr.first_failing[n]:,}"] for n in gr.gates]
    out.append(
        table(
            ["gate", "pairs refused", "first failing gate"],
            rows + [[n, "not applied (switched off)", "—"] for n in gr.off],
        )
    )
    if gr.off:
        out.append(
            f"Switched off by the config, not applied: {', '.join(gr.off)}. The pairs are not "
            "held to what those gates check (e.g. matched lengths, kept content): a preference "
            "is then about the property together with whatever comes with it in these pairs "
            "(docs/study.md, minimal pairs or natural pairs).\n"
        )
    a = r.audit
    out.append("## Reader audit (instrument validation)\n")
    if a is None:
        out.append(
            "**Not run: the instrument is NOT validated.** The config declares "
            '`"reader_audit": "none"`: no reader reconstructed the pairs, so nothing shows that '
            "readers can tell the property the study is about; the verdict comes from the "
            "tracks alone.\n"
        )
    else:
        out.append(audit_text(a) + ".\n")
    j = r.judges_report
    out.append("## The judges as the data show them\n")
    out.append(
        table(
            [
                "judge",
                "judgments",
                "rate",
                f"{j.level:.0%} CI",
                "position bias",
                "CI",
                "kappa with humans (root level)",
                "roots",
                "design effect (rate, position bias)",
            ],
            [
                [
                    e.name,
                    f"{e.judgments:,}",
                    fmt_x(e.rate, 3),
                    _iv(e.rate_ci, 3),
                    fmt_x(e.position_bias, 3),
                    _iv(e.position_bias_ci, 3),
                    "—"
                    if not e.kappa_with_humans or e.kappa_with_humans.get("kappa") is None
                    else f"{e.kappa_with_humans['kappa']:.3f} " + _iv(e.kappa_with_humans["ci"], 3),
                    f"{e.roots:,}",
                    f"{fmt_x(e.rate_design_effect, 2)}, {fmt_x(e.position_bias_design_effect, 2)}",
                ]
                for e in j.judges
            ],
        )
    )
    if j.agreement:
        out.append(
            table(
                ["judge", "judge", "shared judgments", "kappa", "CI"],
                [[p.a, p.b, f"{p.shared:,}", fmt_x(p.kappa, 3), _iv(p.ci, 3)] for p in j.agreement],
            )
        )
    out.append(
        "Every interval takes the root as the unit (a judge's judgments on one root are "
        "correlated): the rates' are Wilson intervals on the root-clustered effective count, "
        "the position biases' the correlated MOVER of the two orders' (docs/statistics.md, "
        "the judges' intervals).\n"
    )
    out.append(
        f"Human rate {fmt_x(j.human_rate, 3)} {_iv(j.human_rate_ci, 3)} over {j.human_judgments:,} "
        f"judgments on {j.human_roots:,} roots (design effect "
        f"{fmt_x(j.human_rate_design_effect, 2)}); latent correlation "
        f"{fmt_x(j.latent_correlation, 3)}, effective panel size {fmt_x(j.effective_size, 2)}. "
        f"{_human_icc_text(j.human_icc)}"
        "Fitted panel (fitted_panel.json, a `panel` block for the sizing, verdict and battery "
        f"kinds): {md_text(j.fitted_panel_note)}.\n"
    )
    out.append("## Cost\n")
    out.append(
        table(
            ["route", "line", "touches", f"cost ({r.currency})"],
            [
                [c.route, c.line, f"{float(c.touches.value):,.0f}", fmt_money(c.cost)]
                for c in r.costs
            ],
        )
    )
    return "\n".join(out).rstrip() + "\n"


def _human_icc_text(icc: dict[str, Any] | None) -> str:
    """The humans' between-root ICC sentence of the judges section (empty for an older result)."""
    if not icc:
        return ""
    if icc.get("icc") is None:
        return f"Humans' between-root ICC not estimated: {md_text(str(icc.get('reason', '')))}. "
    return (
        f"Humans' between-root ICC {fmt_x(icc['icc'], 3)} {_iv(icc.get('ci'), 3)} "
        f"on {icc['roots']:,} roots with two or more human judgments (one-way ANOVA, cluster "
        "bootstrap; fitted_panel.json `human_icc`, the human sheet `--plan --sheets` uses). "
    )


def render_files(r: StudyResult) -> dict[str, str]:
    data = results_document(r)
    evidence = r.evidence
    refused = to_jsonable(r.gates.refused_pairs)
    verdict = {
        "construct": r.construct.name,
        "audit_status": r.audit_status,
        "instrument_valid": r.instrument_valid,
        "evidence_source": r.evidence_source,
        "roots_run": r.roots_run,
        "roots_available": r.roots_available,
        "stop_reason": r.stop_reason,
        "registered": data["registered"],
        "extension": data["extension"],
        "comparison": data["comparison"],
        "all_data": data["all_data"],
    }
    validity = {
        "gates": {**data["gates"], "refused_pairs": refused},
        "coverage": data["coverage"],
        "audit_status": data["audit_status"],
        "audit": data["audit"],
        "policy": data["policy"],
    }
    return {
        "report.md": render_study_report(r),
        "results.json": dump_json(data),
        "verdict.json": dump_json(verdict),
        "evidence.jsonl": evidence.to_jsonl(),
        "judgments.csv": r.table.to_csv_bytes().decode("utf-8"),
        "reader_audit.csv": r.readings.to_csv_bytes().decode("utf-8"),
        "root_order.txt": "".join(f"{rid}\n" for rid in r.order),
        "validity_report.json": dump_json(validity),
        "judges.json": dump_json(data["judges_report"]),
        "fitted_panel.json": dump_json(fitted_panel_file(data["judges_report"])),
        "cost_comparison.csv": render_cost_csv(r.costs),
    }


def render_cost_csv(costs: Any) -> str:
    """cost_comparison.csv: one row per cost line, every cell through :func:`csv_cell` and
    quoted by the csv rules when it needs it."""
    rows = [("route", "line", "touches", "cost", "basis")]
    rows += [
        (c.route, c.line, str(int(c.touches.value)), repr(float(c.cost.value)), c.cost.basis)
        for c in costs
    ]
    return csv_text(rows)


def fitted_panel_file(judges_report: dict[str, Any]) -> dict[str, Any]:
    """fitted_panel.json: the fitted panel block and, when the study had human judgments, the
    humans' rate its sheets are written relative to and the humans' vote ICC (``human_icc``;
    ``--plan --sheets`` plans with all three);
    ``estimated``, the values as estimated (a negative position bias kept), and ``clips``,
    each field the simulator's block needed clipped (judge, field, estimated, written,
    reason)."""
    fitted = judges_report.get("fitted_panel")
    if not fitted:
        return {}
    out: dict[str, Any] = {"panel": fitted}
    if judges_report.get("human_rate") is not None:
        out["human_rate"] = judges_report["human_rate"]
    if judges_report.get("human_icc") is not None:
        out["human_icc"] = judges_report["human_icc"]
    out["estimated"] = judges_report.get("fitted_panel_estimated")
    out["clips"] = judges_report.get("fitted_panel_clips") or []
    return out


def render_validation(prep: StudyPrepared, config_name: str) -> str:
    """``verdictpack validate``'s summary of a study's data (no defect was found)."""
    c = prep.values.coverage
    gc = prep.gate_counts
    lines = [f"{config_name}: the config and every data file are valid (no defects)."]
    for f in prep.data.files:
        lines.append(f"  {f.role}: {f.path} ({f.format}), {f.records:,} records, sha256 {f.sha256}")
    off = prep.gate_settings.get("off") or []
    lines += [
        f"  pairs: {gc.total:,}; admitted by the gates {len(gc.admitted):,}, refused "
        f"{len(gc.refused):,}"
        + (
            " (first failing: "
            + ", ".join(f"{g} {n:,}" for g, n in gc.first_failing.items() if n)
            + ")"
            if gc.refused
            else ""
        )
        + (f"; not applied (switched off): {', '.join(off)}" if off else ""),
        f"  judgments: {c.model_rows:,} model, {c.human_rows:,} human; "
        f"{c.rows_on_refused_roots:,} on refused pairs (left out)",
        f"  roots in the registered order: {c.roots_entered:,} judged, "
        f"{c.admitted_roots_unjudged:,} admitted but not yet judged",
        f"  human coverage: {c.roots_with_humans:,} of {c.roots_entered:,} judged roots",
        f"  one presentation order only: {c.roots_one_order_only:,} roots"
        + (f" (e.g. {', '.join(c.one_order_examples)})" if c.one_order_examples else ""),
        f"  policy absorbs: model ties {c.model_ties:,}, invalid {c.model_invalid:,}, missing "
        f"cells {c.model_missing_cells:,}; human ties {c.human_ties:,}, invalid "
        f"{c.human_invalid:,}, missing {c.human_missing:,}",
        "  reader audit: none (the instrument is not validated)"
        if prep.audit is None
        else f"  reader audit: {len(prep.data.readings) // 2:,} roots read twice",
    ]
    return "\n".join(lines) + "\n"


def render_plan(plan: StudyPlan) -> str:
    """``verdictpack STUDY --plan``: the projected routes, spending nothing (all simulated)."""
    oc = plan.oc
    out = [f"# verdictpack study plan — {md_text(plan.construct.name)}", ""]
    out.append(
        f"Simulated from {md_text(plan.sheets_source)}, in the world they describe (true h "
        f"{fmt_x(oc.true_h)}: model rate {fmt_p(oc.mu_model)}, human rate {fmt_p(oc.mu_human)}, "
        f"the humans' rate from {md_text(plan.human_rate_source)}"
        + (
            ""
            if plan.human_icc is None
            else f"; the humans' between-root ICC {plan.human_icc:.3f}, fitted with the sheets"
        )
        + f"); {oc.replicates:,} "
        "replicates per "
        "route. Nothing was sent to any endpoint. Each verdict is scored from that true h: "
        "EFFECT_SUPPORTED is right iff h ≥ the threshold "
        f"{fmt_x(plan.construct.governing_threshold_h)}, BELOW_PRACTICAL_THRESHOLD iff h is below "
        'it, NO_POSITIVE_EFFECT iff h ≤ 0 (SPRT and fixed-n: "effect" wrong iff h ≤ 0, "no '
        'effect" wrong iff h ≥ the threshold); INCONCLUSIVE is neither.\n'
    )
    out.append(
        f"Worst-case cost of one root's live judgments: {plan.cost_per_root:.6g} "
        f"(every live judge, both orders, every trial, at the price's upper estimate); "
        f"{plan.roots_available:,} admitted roots; humans (from the files) on "
        f"{fmt_p(plan.human_coverage)} of them (the routes below assume humans on every root).\n"
    )
    out.append(
        f"One cap for the whole plan: {plan.cap:,} roots ({md_text(plan.cap_reason)}), in the "
        "sentence "
        "below and in every sequential route's table alike.\n"
    )
    w = plan.within_budget
    if w is not None:
        out.append(
            f"**P(a registered verdict within {plan.cap:,} roots) = {w.p_verdict.value:.3f}** "
            f"(simulated, MCSE {w.p_verdict.mcse:.3f}, {w.replicates:,} replicates, at the "
            "observed human coverage); the outcomes within them: "
            + ", ".join(
                f"{'no verdict' if v == 'INCONCLUSIVE' else v} {q.value:.3f}"
                for v, q in w.verdicts.items()
            )
            + ".\n"
        )
    out.append("## Every route\n")
    out.append(oc_table(oc))
    out.append(cost_table(oc))
    out.append(guarantees_table(oc))
    if plan.allocation is not None:
        allocation, icc_note = plan.allocation
        out.append(allocation_section(allocation, icc_note, FIELD))
    return "\n".join(out).rstrip() + "\n"
