"""Markdown reports, rendered from result objects only (never recomputed, never parsed back).

Every number printed comes from a field of the result object, formatted by the helpers here:
probabilities and powers with 4 decimals, alphas with 5, effect sizes with 4, counts as integers.
``results.json`` carries the same numbers unrounded.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from verdictpack._results import Figure, dump_json, to_jsonable

__all__ = [
    "fmt_alpha",
    "fmt_count",
    "fmt_fig",
    "fmt_p",
    "fmt_x",
    "render_battery",
    "render_results_json",
    "render_sizing",
    "table",
]


def render_results_json(result: Any) -> str:
    """results.json: the result object, minus its provenance (which has its own file)."""
    data = to_jsonable(result)
    data.pop("provenance", None)
    return dump_json(data)


def table(headers: Sequence[str], rows: Sequence[Sequence[Any]]) -> str:
    head = "| " + " | ".join(headers) + " |"
    rule = "|" + "|".join("---" for _ in headers) + "|"
    body = ["| " + " | ".join(str(c) for c in row) + " |" for row in rows]
    return "\n".join([head, rule, *body]) + "\n"


def fmt_p(x: float | Figure | None) -> str:
    if x is None:
        return "—"
    return f"{float(x):.4f}"


def fmt_alpha(x: float | Figure) -> str:
    return f"{float(x):.5f}"


def fmt_x(x: float | Figure | None, digits: int = 4) -> str:
    if x is None:
        return "—"
    return f"{float(x):.{digits}f}"


def fmt_count(x: int | float | Figure | None) -> str:
    if x is None:
        return "—"
    v = x.value if isinstance(x, Figure) else x
    if isinstance(v, float) and not v.is_integer():
        return f"{v:.2f}"
    return str(int(v))


def fmt_fig(fig: Figure | None, digits: int = 4) -> str:
    """A probability-like Figure with its Monte Carlo standard error where simulated."""
    if fig is None:
        return "—"
    if fig.basis == "simulated":
        return f"{float(fig.value):.{digits}f} ± {fig.mcse:.4f}"
    return f"{float(fig.value):.{digits}f}"


def _region(lower: int | None, upper: int | None) -> str:
    parts = []
    if lower is not None:
        parts.append(f"X ≤ {lower}")
    if upper is not None:
        parts.append(f"X ≥ {upper}")
    return " or ".join(parts) if parts else "—"


def construct_block(c: Any) -> str:
    lines = [
        f"**Construct** {c.name} (version {c.version}) — {c.registered_claim}",
        "",
        table(
            ["field", "value"],
            [
                ["transformation", c.transformation],
                ["metric (direction)", f"{c.metric} ({c.direction})"],
                ["human baseline rate", fmt_p(c.human_baseline_rate)],
                ["threshold h", fmt_x(c.threshold_h)],
                [
                    "threshold odds ratio (as h at the baseline)",
                    f"{fmt_x(c.threshold_odds_ratio)} ({fmt_x(c.threshold_h_from_odds_ratio)})",
                ],
                [
                    "governing threshold h (the smaller effect governs)",
                    f"{fmt_x(c.governing_threshold_h)} (from {c.governs})",
                ],
                ["extension minimum h", fmt_x(c.extension_minimum_h)],
                [
                    "alpha (joint) / per tail / e-boundary",
                    f"{fmt_alpha(c.alpha)} / {fmt_alpha(c.per_tail_alpha)} / {c.e_boundary:g}",
                ],
            ],
        ),
    ]
    return "\n".join(lines)


def render_sizing(r: Any) -> str:
    from verdictpack.kinds._sizing import BinomialArmResult, TArmResult, TwoProportionArmResult

    out = [f"# verdictpack sizing — {r.construct.name}", ""]
    out.append(construct_block(r.construct))
    out.append("## Design points\n")
    out.append(
        "A design point's alpha is two-sided; a one-sided arm is tested at alpha/2. "
        "Every number is labelled: *exact*, *closed form* (a formula or approximation) or "
        f"*simulated* (± its Monte Carlo standard error; {r.replicates} replicates, seed "
        f"{r.seed}).\n"
    )
    out.append(
        table(
            ["design point", "alpha (two-sided)", "power"],
            [[p.name, fmt_alpha(p.alpha), fmt_p(p.power)] for p in r.design_points],
        )
    )
    t_arms = [a for a in r.arms if isinstance(a, TArmResult)]
    if t_arms:
        out.append("## t arms (exact noncentral t, both rejection tails)\n")
        rows = []
        for a in t_arms:
            for s in a.sizes:
                rows.append(
                    [
                        a.name,
                        s.design,
                        fmt_alpha(s.test_alpha),
                        f"{fmt_count(s.n)} {a.unit}",
                        fmt_p(s.power_at_n),
                        fmt_p(s.power_at_n_minus_1),
                        fmt_count(s.normal_n),
                        fmt_fig(s.simulated_power_at_n),
                        f"{s.simulated_minus_exact_in_mcse:+.2f}",
                    ]
                )
        out.append(
            table(
                [
                    "arm",
                    "design",
                    "test alpha",
                    "n (exact)",
                    "power at n (exact)",
                    "power at n−1 (exact)",
                    "normal-approx n (closed form)",
                    "simulated power at n, estimated variance",
                    "simulated − exact (MCSE units)",
                ],
                rows,
            )
        )
        rows = []
        for a in t_arms:
            for pa in (*a.at_current_n, *a.checks):
                rows.append(
                    [
                        a.name,
                        pa.design,
                        f"{pa.n} {a.unit}" + (" (current)" if pa in a.at_current_n else ""),
                        fmt_p(pa.exact_power),
                        fmt_p(pa.known_variance_power),
                        fmt_fig(pa.simulated_power),
                        "—"
                        if pa.simulated_minus_exact_in_mcse is None
                        else f"{pa.simulated_minus_exact_in_mcse:+.2f}",
                    ]
                )
        if rows:
            out.append("### Power at named sizes (the protocol's current n and checks)\n")
            out.append(
                table(
                    [
                        "arm",
                        "design",
                        "n",
                        "power (exact)",
                        "known-variance power (closed form)",
                        "simulated power, estimated variance",
                        "simulated − exact (MCSE units)",
                    ],
                    rows,
                )
            )
    out.extend(_binomial_section([a for a in r.arms if isinstance(a, BinomialArmResult)]))
    out.extend(_two_prop_section([a for a in r.arms if isinstance(a, TwoProportionArmResult)]))
    return "\n".join(out).rstrip() + "\n"


def _binomial_section(b_arms: list[Any]) -> list[str]:
    out: list[str] = []
    if b_arms:
        out.append("## One-sample exact binomial arms\n")
        out.append(
            "Power is not monotone in n (the saw-tooth): the first n reaching the target and the "
            "stable n from which every larger n (up to the search horizon) is powered are both "
            "printed.\n"
        )
        rows = []
        for a in b_arms:
            for s in a.sizes:
                rows.append(
                    [
                        f"{a.name} ({fmt_p(a.p0)} vs {fmt_p(a.p1)}, h {fmt_x(a.h)}, "
                        f"{a.sides}-sided)",
                        s.design,
                        fmt_alpha(s.test_alpha),
                        f"{fmt_count(s.first_n)} {a.unit}",
                        fmt_p(s.power_at_first),
                        fmt_p(s.power_at_first_minus_1),
                        _region(s.region_lower, s.region_upper),
                        fmt_alpha(s.achieved_alpha),
                        fmt_count(s.stable_n),
                        fmt_p(s.power_at_stable),
                        ", ".join(str(n) for n in s.failing_between) or "none",
                        fmt_count(s.normal_n),
                    ]
                )
        out.append(
            table(
                [
                    "arm",
                    "design",
                    "test alpha",
                    "first n (exact)",
                    "power at first n",
                    "power at first n−1",
                    "rejection region",
                    "achieved alpha",
                    "stable n (exact)",
                    "power at stable n",
                    "n below target between",
                    "normal n (closed form)",
                ],
                rows,
            )
        )
        for a in b_arms:
            for s in a.sizes:
                out.append(
                    f"- {a.name}, {s.design}: the design uses the {s.design_uses}; "
                    f"search horizon {s.search_horizon}."
                )
        out.append("")
    return out


def _two_prop_section(p_arms: list[Any]) -> list[str]:
    out: list[str] = []
    if p_arms:
        out.append("## Two proportions by Cohen's h (closed form, arcsine scale)\n")
        rows = []
        for a in p_arms:
            for s in a.sizes:
                rows.append(
                    [
                        a.name,
                        s.design,
                        fmt_alpha(s.test_alpha),
                        f"{fmt_p(a.p0)} → {fmt_p(a.p1)}",
                        f"{fmt_x(a.governing_h)} ({a.governs})",
                        f"{fmt_count(s.n_per_group)} {a.unit}",
                        fmt_count(s.total),
                        fmt_p(s.power_at_n),
                    ]
                )
        out.append(
            table(
                [
                    "arm",
                    "design",
                    "test alpha",
                    "baseline → threshold rate",
                    "governing h (from)",
                    "n per group",
                    "total",
                    "power at n",
                ],
                rows,
            )
        )
    return out


# ----------------------------------------------------------------------------------------------
# Operating characteristics (verdict, judges, engine power report, battery)
# ----------------------------------------------------------------------------------------------


def route_label(route: Any) -> str:
    if route.route == "eprocess":
        return f"e-process ({route.construction})"
    return {"sprt": "SPRT", "fixed_n": "fixed-n"}.get(str(route.route), str(route.route))


def fmt_money(x: float | Figure | None) -> str:
    if x is None:
        return "none issued"
    return f"{float(x):,.2f}"


def fmt_mean(fig: Figure | None, digits: int = 1) -> str:
    if fig is None:
        return "none issued"
    if fig.basis == "simulated":
        return f"{float(fig.value):,.{digits}f} ± {fig.mcse:,.{digits}f}"
    return f"{float(fig.value):,.{digits}f}"


def verdict_cells(route: Any) -> str:
    return "<br>".join(f"{name} {fmt_fig(p, 3)}" for name, p in route.p_verdict.items())


def oc_table(sc: Any) -> str:
    rows = []
    for r in sc.routes:
        q = r.roots_quantiles
        rows.append(
            [
                route_label(r),
                verdict_cells(r),
                fmt_fig(r.p_wrong, 3),
                fmt_mean(r.mean_roots),
                f"{fmt_count(q['q50'])} / {fmt_count(q['q90'])} / {fmt_count(q['q99'])} "
                f"(max {r.max_roots}, cap {r.cap})",
                fmt_mean(r.mean_touches),
                fmt_money(r.mean_cost),
                fmt_mean(r.cost_per_valid_verdict, 2),
            ]
        )
    return table(
        [
            "route",
            "P(verdict) ± MCSE",
            "P(wrong)",
            "mean roots",
            "roots q50 / q90 / q99",
            "mean touches",
            "mean cost",
            "cost per valid verdict",
        ],
        rows,
    )


def cost_table(sc: Any) -> str:
    """Rows are cost lines -- the human layer always its own line -- and columns are routes."""
    routes = list(sc.routes)
    header = ["cost line (mean per run)", *[route_label(r) for r in routes]]
    rows = [
        ["model judgments (touches)", *[fmt_mean(r.mean_model_touches) for r in routes]],
        ["human layer (touches)", *[fmt_mean(r.mean_human_touches) for r in routes]],
        ["total (touches)", *[fmt_mean(r.mean_touches) for r in routes]],
        ["model judgments (cost)", *[fmt_money(r.mean_model_cost) for r in routes]],
        ["human layer (cost)", *[fmt_money(r.mean_human_cost) for r in routes]],
        ["total (cost)", *[fmt_money(r.mean_cost) for r in routes]],
    ]
    return table(header, rows)


def scenario_heading(sc: Any) -> str:
    return (
        f"### Scenario `{sc.scenario}` — true h {fmt_x(sc.true_h)} "
        f"(model rate {fmt_p(sc.mu_model)}, human rate {fmt_p(sc.mu_human)}; effect "
        f"{'exists' if sc.effect_exists else 'absent'}; {sc.replicates} replicates)\n"
    )


def guarantees_table(sc: Any) -> str:
    return table(
        ["route", "guarantee it carries"],
        [[route_label(r), r.guarantee] for r in sc.routes],
    )


def render_verdict(r: Any) -> str:
    out = [f"# verdictpack verdict — {r.construct.name}", "", construct_block(r.construct)]
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
        out.append(scenario_heading(sc))
        out.append(oc_table(sc))
        out.append(cost_table(sc))
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


def render_judges(r: Any) -> str:
    out = [f"# verdictpack judges — {r.construct.name}", "", construct_block(r.construct)]
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
    for c in r.compositions:
        out.append(f"## Composition `{c.name}`\n")
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
            out.append(scenario_heading(sc))
            out.append(oc_table(sc))
            out.append(cost_table(sc))
    return "\n".join(out).rstrip() + "\n"


# ----------------------------------------------------------------------------------------------
# Engine
# ----------------------------------------------------------------------------------------------


def _interval(iv: Any, digits: int = 4) -> str:
    if iv is None:
        return "—"
    return f"[{iv[0]:.{digits}f}, {iv[1]:.{digits}f}]"


def _track_row(t: Any) -> list[str]:
    return [
        t.track,
        t.construction,
        fmt_x(t.threshold_h),
        f"**{t.verdict}**",
        "—" if t.roots_at_verdict is None else str(t.roots_at_verdict),
        _interval(t.h_interval),
        _interval(t.model_bounds),
        _interval(t.human_bounds),
        _interval(t.diff_bounds),
        fmt_alpha(t.error_per_side),
    ]


_TRACK_HEADERS = [
    "track",
    "construction",
    "threshold h",
    "verdict",
    "at root",
    "h-interval",
    "model CS",
    "human CS",
    "difference CS",
    "error per side",
]


def render_engine_report(r: Any) -> str:
    out = [f"# verdictpack engine — {r.construct.name}", "", construct_block(r.construct)]
    out.append("## Verdict\n")
    out.append(
        f"Evidence: {r.evidence_source}; true h of the simulated streams {fmt_x(r.truth_true_h)} "
        f"(model rate {fmt_p(r.truth_mu_model)}, human rate {fmt_p(r.truth_mu_human)}). "
        f"Roots run: {r.roots_run} of a cap of {r.effective_cap} (configured cap {r.cap_roots}, "
        "limited by the admitted stimuli). The registered track's verdict stops the run; the "
        "extension track and the comparison construction are read on the same evidence.\n"
    )
    out.append(
        table(_TRACK_HEADERS, [_track_row(t) for t in (r.registered, r.extension, r.comparison)])
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
    a, b = r.audit, r.baseline
    out.append("## Human layer\n")
    out.append(
        table(
            ["function", "result"],
            [
                [
                    "instrument validation (reader reconstruction)",
                    f"{a.n_roots} roots × 2 readers = {a.readings} readings; Cohen's kappa "
                    f"{fmt_p(a.kappa)} (95% CI {fmt_p(a.ci_low)}..{fmt_p(a.ci_high)}, closed "
                    f"form); gate kappa ≥ {fmt_p(a.kappa_min)} on the point estimate: "
                    f"**{'PASSED' if a.passed else 'FAILED — INSTRUMENT_INVALID'}**",
                ],
                [
                    "preference baseline (powered)",
                    f"pilot {b.pilot_roots} roots ({b.pilot_touches} touches) + confirmatory "
                    f"{b.confirmatory_roots} roots ({b.confirmatory_touches} touches) sized by "
                    f"simulation: power {fmt_fig(b.simulated_power)} (exact "
                    f"{fmt_p(b.exact_power)}; closed-form size {fmt_count(b.closed_form_roots)} "
                    "roots)",
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
        out.append(scenario_heading(sc))
        out.append(oc_table(sc))
        out.append(cost_table(sc))
    out.append("## Confound arms (precommitted)\n")
    out.append(
        "No inference rule repairs a confounded design: each arm names the design that isolates "
        "the confound and shows what each route concludes when only that confound is present.\n"
    )
    for arm in r.confound_arms:
        name = arm.confound + (f" × {', '.join(arm.crossed_with)}" if arm.crossed_with else "")
        out.append(f"### Arm `{name}`\n")
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
        f"# Registered vs extension — {r.construct.name}",
        "",
        "Two tracks, frozen apart. The registered track tests the registered claim at the "
        "registered threshold and alone decides when the run stops. The extension track runs the "
        "same machinery at the weaker minimum on the same evidence; **its result is never the "
        "registered test**.",
        "",
        table(_TRACK_HEADERS, [_track_row(reg), _track_row(ext)]),
        f"- Registered claim: {reg.claim}",
        f"- Registered verdict: **{reg.verdict}**"
        + (f" at root {reg.roots_at_verdict}" if reg.roots_at_verdict else ""),
        f"- Extension claim (not the registered test): {ext.claim}",
        f"- Extension verdict: **{ext.verdict}**"
        + (f" at root {ext.roots_at_verdict}" if ext.roots_at_verdict else ""),
    ]
    return "\n".join(lines).rstrip() + "\n"


def render_cost_csv(r: Any) -> str:
    rows = ["route,scenario,line,touches,touches_mcse,cost,cost_mcse,basis"]
    for c in r.costs:
        rows.append(
            f"{c.route},this run,{c.line},{float(c.touches.value):g},,"
            f"{float(c.cost.value):.4f},,{c.touches.basis}"
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
                    f"{label},{sc.scenario},{line},{float(t.value):.4f},{t.mcse:.4f},"
                    f"{float(cost.value):.4f},{cost.mcse:.4f},simulated"
                )
    return "\n".join(rows) + "\n"


def render_engine_files(r: Any) -> dict[str, str]:
    import json

    data = to_jsonable(r)
    data.pop("provenance", None)
    evidence = data.pop("evidence")
    admitted = data["factory"].pop("admitted")
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


# ----------------------------------------------------------------------------------------------
# Battery
# ----------------------------------------------------------------------------------------------


def _battery_summary_row(row: Any) -> list[str]:
    sc = row.outcome
    eps = [r for r in sc.routes if r.route == "eprocess"]
    sprt = sc.route("sprt")
    fixed = sc.route("fixed_n")
    cells = [
        f"`{row.label}`",
        f"{fmt_x(sc.true_h)} ({'effect' if sc.effect_exists else 'no effect'})",
    ]
    for e in eps:
        cells += [verdict_cells(e), fmt_mean(e.mean_roots), fmt_mean(e.cost_per_valid_verdict, 2)]
    cells += [
        fmt_fig(sprt.p_verdict["EFFECT"], 3),
        fmt_mean(sprt.mean_roots),
        fmt_fig(fixed.p_correct, 3),
    ]
    return cells


def render_battery(r: Any) -> str:
    """The battery report: summary table, plain reading, guarantees once, then every scenario."""
    out = [f"# verdictpack battery — {r.construct.name}", "", construct_block(r.construct)]
    out.append("## Design\n")
    out.append(
        table(
            ["setting", "value"],
            [
                [
                    "registered construction (comparison)",
                    f"{r.construction} ({r.comparison_construction})",
                ],
                ["cap", f"{r.cap_roots} roots"],
                [
                    "model stream",
                    f"panel `{r.panel_name}`: {r.judges_per_root} judges × 2 orders "
                    f"per root, latent correlation {fmt_x(r.latent_correlation, 2)}",
                ],
                ["human stream", f"{r.human_judgments_per_root} judgments per root"],
                [
                    "touches / cost per root (both streams)",
                    f"{r.touches_per_root} / {fmt_money(r.cost_per_root)}",
                ],
                ["fixed-n design", f"{r.fixed_n_roots} roots (closed form, two proportions)"],
                [
                    "scenarios × replicates",
                    f"{len(r.scenarios)} × {r.replicates:,} = {r.sequential_runs:,} "
                    "sequential runs",
                ],
                [
                    "blocks (seed)",
                    f"{r.n_blocks} blocks of {r.block_size:,} replicates per scenario ({r.seed})",
                ],
            ],
        )
    )
    out.append(
        "Every replicate stops at its first verdict or at the cap. Both e-process constructions, "
        "the SPRT and the fixed-n test see the same simulated roots (common random numbers). A "
        "verdict is *wrong* when it contradicts the world: EFFECT_SUPPORTED (SPRT: EFFECT) with "
        "no effect, NO_POSITIVE_EFFECT or BELOW_PRACTICAL_THRESHOLD (SPRT and fixed-n: NO_EFFECT) "
        "with one. Block b of every scenario draws from its own seed-sequence child, so these "
        "numbers do not depend on the worker count or the executor.\n"
    )
    out.append("## Summary (simulated, ± Monte Carlo standard error)\n")
    if r.scenarios:
        first = r.scenarios[0].outcome
        labels = [route_label(x) for x in first.routes if x.route == "eprocess"]
        headers = ["scenario", "true h"]
        for label in labels:
            headers += [
                f"{label}: P(verdict)",
                f"{label}: mean roots",
                f"{label}: cost per valid verdict",
            ]
        headers += ["SPRT: P(calls the effect)", "SPRT: mean roots", "fixed-n: P(correct)"]
        out.append(table(headers, [_battery_summary_row(row) for row in r.scenarios]))
    out.append("## The two constructions side by side\n")
    out.append(construction_comparison([row.outcome for row in r.scenarios]))
    out.append("## Reading the battery\n")
    out.append(
        "- At exactly the registered threshold, EFFECT_SUPPORTED is near-unreachable by "
        "construction: a valid confidence sequence's lower bound crosses the true value only with "
        "tail probability. The registered alternative is **a boundary, not a power point**; a "
        "procedure claiming high power at exactly its own threshold is mis-calibrated. Power "
        "lives above the boundary."
    )
    for row in r.scenarios:
        sc = row.outcome
        eps = [x for x in sc.routes if x.route == "eprocess"]
        sprt, fixed = sc.route("sprt"), sc.route("fixed_n")
        e_text = ", ".join(
            f"{route_label(e)} {fmt_fig(e.p_verdict['EFFECT_SUPPORTED'], 4)}" for e in eps
        )
        if not sc.effect_exists:
            out.append(
                f"- `{row.label}` (no effect; stream h {fmt_x(sc.true_h)}): false "
                f"EFFECT_SUPPORTED {e_text}; the SPRT calls the effect "
                f"{fmt_fig(sprt.p_verdict['EFFECT'], 4)}, the fixed-n test "
                f"{fmt_fig(fixed.p_verdict['EFFECT'], 4)}."
            )
        else:
            out.append(
                f"- `{row.label}` (effect; true h {fmt_x(sc.true_h)}): EFFECT_SUPPORTED "
                f"{e_text}; INCONCLUSIVE at the cap "
                + ", ".join(
                    f"{route_label(e)} {fmt_fig(e.p_verdict['INCONCLUSIVE'], 4)}" for e in eps
                )
                + f"; the SPRT calls the effect {fmt_fig(sprt.p_verdict['EFFECT'], 4)}, the "
                f"fixed-n test {fmt_fig(fixed.p_verdict['EFFECT'], 4)}."
            )
    out.append(
        "- The routes carry different guarantees (below); savings are claimed only between "
        "routes of equal guarantee.\n"
    )
    if r.scenarios:
        out.append("## Routes and the guarantee each carries\n")
        out.append(guarantees_table(r.scenarios[0].outcome))
    out.append("## Operating characteristics per scenario\n")
    for row in r.scenarios:
        out.append(scenario_heading(row.outcome))
        if row.parameters:
            out.append(
                "Scenario `"
                + row.scenario
                + "`: "
                + ", ".join(f"{k} = {v}" for k, v in row.parameters.items())
                + ".\n"
            )
        out.append(oc_table(row.outcome))
        out.append(cost_table(row.outcome))
    return "\n".join(out).rstrip() + "\n"


def construction_comparison(scenarios: Any) -> str:
    """Both e-process constructions side by side on the same seeds (docs/statistics.md §7)."""
    rows = []
    for sc in scenarios:
        boundary = sc.effect_exists and sc.scenario.startswith(("registered", "boundary"))
        for e in (x for x in sc.routes if x.route == "eprocess"):
            rows.append(
                [
                    sc.scenario + (" (boundary null)" if boundary else ""),
                    fmt_x(sc.true_h),
                    e.construction,
                    fmt_fig(e.p_verdict["EFFECT_SUPPORTED"], 4),
                    fmt_fig(e.p_wrong, 4),
                    fmt_mean(e.roots_quantiles["q50"]),
                    fmt_mean(e.mean_roots),
                    fmt_mean(e.cost_per_valid_verdict, 2),
                ]
            )
    return (
        "Same seeds, same roots. At the boundary null (true h exactly at the threshold) "
        "P(EFFECT_SUPPORTED) is the false-verdict rate; both constructions bound it by 2 × the "
        "per-tail alpha.\n\n"
        + table(
            [
                "scenario",
                "true h",
                "construction",
                "P(EFFECT_SUPPORTED within the cap)",
                "P(wrong verdict)",
                "median roots",
                "mean roots",
                "cost per valid verdict",
            ],
            rows,
        )
    )
