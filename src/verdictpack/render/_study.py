"""The study's files (report, verdict, evidence trail, canonical judgments, validity, judges) of a
:class:`StudyResult`."""

from __future__ import annotations

from verdictpack._results import dump_json, to_jsonable
from verdictpack.kinds._study import StudyPrepared, StudyResult
from verdictpack.kinds._study_live import StudyPlan
from verdictpack.render._markdown import (
    TRACK_HEADERS,
    construct_block,
    cost_table,
    fmt_interval,
    fmt_money,
    fmt_p,
    fmt_x,
    guarantees_table,
    oc_table,
    table,
    track_row,
)
from verdictpack.render._summary import summary_block

_iv = fmt_interval  # an interval as printed in the study's tables


def _opt(v: float | None, digits: int = 3) -> str:
    return "—" if v is None else f"{v:.{digits}f}"


def _policy_text(r: StudyResult) -> str:
    p = r.policy
    tie = "0.5" if p["tie"] == "half" else "against the claim (model 0, human 1)"
    inv = "0.5" if p["invalid"] == "half" else "against the claim (model 0, human 1)"
    mis = "0.5" if p["missing"] == "half" else "against the claim (model 0, human 1)"
    return f"a tie counts {tie}; an invalid judgment counts {inv}; a missing one counts {mis}"


def render_study_report(r: StudyResult) -> str:
    out = [f"# verdictpack study — {r.construct.name}", "", summary_block(r)]
    out.append(construct_block(r.construct))
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
    if r.roots_to_go is not None:
        g = r.roots_to_go
        med = g.median_extra_roots
        out.append("## How many more roots would settle it (simulated)\n")
        out.append(
            f"Simulated from the fitted sheets (humans at rate {fmt_p(g.human_rate)}, coverage "
            f"{fmt_p(g.human_coverage)}, {g.humans_per_root} per root), {g.replicates:,} "
            f"continuations of the {g.roots_observed:,} roots observed: P(a verdict within "
            f"{g.max_extra_roots:,} more roots) = {g.p_verdict.value:.3f} (MCSE "
            f"{g.p_verdict.mcse:.3f}); median more roots "
            + ("beyond the horizon" if med is None else f"{int(med.value):,}")
            + ". A planning figure under the fitted sheets, not a guarantee. Which verdict: "
            + ", ".join(f"{v} {q.value:.3f} (MCSE {q.mcse:.3f})" for v, q in g.verdicts.items())
            + ".\n"
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
    c = r.coverage
    out.append(
        table(
            ["count", "value"],
            [
                ["judgment rows (model / human)", f"{c.model_rows:,} / {c.human_rows:,}"],
                ["admitted roots", f"{c.admitted_roots:,}"],
                ["roots entered (with model judgments)", f"{c.roots_entered:,}"],
                ["admitted roots not yet judged", f"{c.admitted_roots_unjudged:,}"],
                ["roots with human judgments", f"{c.roots_with_humans:,}"],
                ["rows on roots the gates refused (left out)", f"{c.rows_on_refused_roots:,}"],
                ["roots some judge saw in one order only", f"{c.roots_one_order_only:,}"],
                [
                    "model ties / invalid / missing cells",
                    f"{c.model_ties:,} / {c.model_invalid:,} / {c.model_missing_cells:,}",
                ],
                [
                    "human ties / invalid / missing",
                    f"{c.human_ties:,} / {c.human_invalid:,} / {c.human_missing:,}",
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
    out.append(
        table(
            ["gate", "pairs refused", "first failing gate"],
            [[n, f"{gr.refusals[n]:,}", f"{gr.first_failing[n]:,}"] for n in gr.gates],
        )
    )
    a = r.audit
    out.append("## Reader audit (instrument validation)\n")
    out.append(
        f"{a.n_roots} roots × 2 readers = {a.readings} readings; Cohen's kappa "
        f"{fmt_p(a.kappa)} (95% CI {fmt_p(a.ci_low)}..{fmt_p(a.ci_high)}, closed form); gate "
        f"kappa ≥ {fmt_p(a.kappa_min)} on the point estimate: "
        f"**{'PASSED' if a.passed else 'FAILED — INSTRUMENT_INVALID'}**.\n"
    )
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
            ],
            [
                [
                    e.name,
                    f"{e.judgments:,}",
                    _opt(e.rate),
                    _iv(e.rate_ci, 3),
                    _opt(e.position_bias),
                    _iv(e.position_bias_ci, 3),
                    "—"
                    if not e.kappa_with_humans or e.kappa_with_humans.get("kappa") is None
                    else f"{e.kappa_with_humans['kappa']:.3f} " + _iv(e.kappa_with_humans["ci"], 3),
                ]
                for e in j.judges
            ],
        )
    )
    if j.agreement:
        out.append(
            table(
                ["judge", "judge", "shared judgments", "kappa", "CI"],
                [[p.a, p.b, f"{p.shared:,}", _opt(p.kappa), _iv(p.ci, 3)] for p in j.agreement],
            )
        )
    out.append(
        f"Human rate {_opt(j.human_rate)} {_iv(j.human_rate_ci, 3)} over {j.human_judgments:,} "
        f"judgments; latent correlation {_opt(j.latent_correlation)}, effective panel size "
        f"{_opt(j.effective_size, 2)}. Fitted panel (fitted_panel.json, a `panel` block for the "
        f"sizing, verdict and battery kinds): {j.fitted_panel_note}.\n"
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


def render_files(r: StudyResult) -> dict[str, str]:
    data = to_jsonable(r)
    data.pop("provenance", None)
    evidence = r.evidence
    refused = data["gates"].pop("refused_pairs")
    verdict = {
        "construct": r.construct.name,
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
        "audit": data["audit"],
        "policy": data["policy"],
    }
    costs = ["route,line,touches,cost,basis"]
    costs += [
        f"{c.route},{c.line},{int(c.touches.value)},{float(c.cost.value)!r},{c.cost.basis}"
        for c in r.costs
    ]
    fitted = data["judges_report"]["fitted_panel"]
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
        "fitted_panel.json": dump_json({"panel": fitted} if fitted else {}),
        "cost_comparison.csv": "\n".join(costs) + "\n",
    }


def render_validation(prep: StudyPrepared, config_name: str) -> str:
    """``verdictpack validate``'s summary of a study's data (no defect was found)."""
    c = prep.values.coverage
    gc = prep.gate_counts
    lines = [f"{config_name}: the config and every data file are valid (no defects)."]
    for f in prep.data.files:
        lines.append(f"  {f.role}: {f.path} ({f.format}), {f.records:,} records, sha256 {f.sha256}")
    lines += [
        f"  pairs: {gc.total:,}; admitted by the gates {len(gc.admitted):,}, refused "
        f"{len(gc.refused):,}"
        + (
            " (first failing: "
            + ", ".join(f"{g} {n:,}" for g, n in gc.first_failing.items() if n)
            + ")"
            if gc.refused
            else ""
        ),
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
        f"  reader audit: {len(prep.data.readings) // 2:,} roots read twice",
    ]
    return "\n".join(lines) + "\n"


def render_plan(plan: StudyPlan) -> str:
    """``verdictpack STUDY --plan``: the projected routes, spending nothing (all simulated)."""
    oc = plan.oc
    out = [f"# verdictpack study plan — {plan.construct.name}", ""]
    out.append(
        f"Simulated from {plan.sheets_source}, in the world they describe (true h "
        f"{fmt_x(oc.true_h)}: model rate {fmt_p(oc.mu_model)}, human rate {fmt_p(oc.mu_human)}); "
        f"{oc.replicates:,} replicates per route. Nothing was sent to any endpoint.\n"
    )
    out.append(
        f"Worst-case cost of one root's live judgments: {plan.cost_per_root:.6g} "
        f"(every live judge, both orders, every trial, at the price's upper estimate); "
        f"{plan.roots_available:,} admitted roots; humans (from the files) on "
        f"{fmt_p(plan.human_coverage)} of them (the routes below assume humans on every root).\n"
    )
    w = plan.within_budget
    if w is not None:
        binds = [f"{w.max_extra_roots:,} roots (the cap and the admitted roots allow"]
        if plan.roots_within_budget is not None:
            binds.append(
                f"; the judges' budget {plan.budget:.6g} covers {plan.roots_within_budget:,})"
            )
        else:
            binds.append("; no budget set)")
        out.append(
            f"**P(a registered verdict within {''.join(binds)} = {w.p_verdict.value:.3f}** "
            f"(simulated, MCSE {w.p_verdict.mcse:.3f}, {w.replicates:,} replicates, at the "
            "observed human coverage).\n"
        )
    out.append("## Every route\n")
    out.append(oc_table(oc))
    out.append(cost_table(oc))
    out.append(guarantees_table(oc))
    return "\n".join(out).rstrip() + "\n"
