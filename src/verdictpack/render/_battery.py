"""The battery report (``report.md``) and ``results.json`` of a :class:`BatteryResult`."""

from __future__ import annotations

from typing import Any

from verdictpack._contract import results_document
from verdictpack._results import dump_json
from verdictpack.kinds._battery import BatteryResult
from verdictpack.render._markdown import (
    construction_comparison,
    cost_table,
    fmt_fig,
    fmt_mean,
    fmt_money,
    fmt_x,
    guarantees_table,
    md_code,
    oc_table,
    render_results_json,
    route_label,
    scenario_heading,
    table,
    verdict_cells,
)
from verdictpack.render._summary import report_head, worlds_section

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
    out = report_head("battery", r)
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
                f"- {md_code(row.label)} (no effect; stream h {fmt_x(sc.true_h)}): false "
                f"EFFECT_SUPPORTED {e_text}; the SPRT calls the effect "
                f"{fmt_fig(sprt.p_verdict['EFFECT'], 4)}, the fixed-n test "
                f"{fmt_fig(fixed.p_verdict['EFFECT'], 4)}."
            )
        else:
            out.append(
                f"- {md_code(row.label)} (effect; true h {fmt_x(sc.true_h)}): EFFECT_SUPPORTED "
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
    out.append(worlds_section(r.worlds))
    if r.true_h_grid is not None:
        out.append(_grid_section(r.true_h_grid))
    if r.designs is not None:
        out.append(_designs_section(r.designs, r.currency))
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


def _grid_section(grid: Any) -> str:
    """The true-h grid: one table per route, a row per true h (P(each verdict) ± MC s.e., mean
    roots and cost; the fixed-n route's closed-form power beside its simulated one)."""
    if not grid.rows:
        return ""
    out = [
        "## Operating characteristics against the true h (grid)\n",
        f"{grid.points} true h from {fmt_x(grid.start)} to {fmt_x(grid.stop)} "
        f"({'evenly spaced' if grid.spacing == 'even' else 'as listed'}), "
        f"{grid.replicates:,} replicates per point in {grid.n_blocks} blocks of "
        f"{grid.block_size:,}; ± is the Monte Carlo standard error sqrt(p(1 − p)/"
        f"{grid.replicates:,}). Each point draws from its own seed-sequence child (purpose "
        "`battery-grid/h=<h>`), so adding a point moves no other number. The fixed-n closed "
        "form is the noncentral t with the exact per-root mean and s.d. of D = M − H (exact "
        "for normal D; the normal-theory value for these discrete roots).\n",
    ]
    for k, route in enumerate(grid.rows[0].outcome.routes):
        labels = list(route.p_verdict)
        headers = ["true h", *[f"P({lab})" for lab in labels]]
        if route.route == "fixed_n":
            headers.append("P(EFFECT), closed form")
        headers += ["mean roots", "mean cost"]
        rows = []
        for point in grid.rows:
            r = point.outcome.routes[k]
            cells = [fmt_x(point.true_h), *[fmt_fig(r.p_verdict[lab], 3) for lab in labels]]
            if route.route == "fixed_n":
                cells.append(f"{float(point.fixed_n_closed_form.power.value):.3f}")
            cells += [fmt_mean(r.mean_roots), fmt_mean(r.mean_cost, 2)]
            rows.append(cells)
        out.append(f"### {route_label(route)}\n")
        out.append(table(headers, rows))
    return "\n".join(out)


def _designs_section(d: Any, currency: str) -> str:
    """The designs side by side: one row per scenario and design (simulated ± MC s.e.; the
    fixed-n human judgments in closed form)."""
    if not d.designs:
        return ""
    labels = list(d.designs[0].rows[0].p_verdict) if d.designs[0].rows else []
    headers = [
        "scenario",
        "design",
        *[f"P({lab})" for lab in labels],
        "P(right)",
        "human judgments, mean",
        "q10 / q50 / q90",
        f"expected cost ({currency})",
        f"cost per valid verdict ({currency})",
        "fixed-n human judgments",
    ]
    rows = []
    for i in range(len(d.designs[0].rows)):
        for des in d.designs:
            row = des.rows[i]
            q = row.human_judgments_quantiles
            rows.append(
                [
                    f"`{row.scenario}`",
                    f"{des.name} ({des.bets}, {des.humans_per_root} per root)",
                    *[fmt_fig(row.p_verdict[lab], 3) for lab in labels],
                    fmt_fig(row.p_right, 3),
                    fmt_mean(row.human_judgments),
                    " / ".join(f"{float(q[k].value):g}" for k in ("q10", "q50", "q90")),
                    fmt_mean(row.expected_cost, 2),
                    fmt_mean(row.cost_per_valid_verdict, 2)
                    if row.cost_per_valid_verdict is not None
                    else "no right verdict",
                    f"{int(row.fixed_n_human_judgments.value):,}",
                ]
            )
    return "\n".join(
        [
            "## Designs side by side\n",
            f"The registered e-process ({d.construction}, cap {d.cap_roots:,} roots) under each "
            f"design's bets and human judgments per root, {d.replicates:,} simulated runs per "
            f"design and scenario in {d.n_blocks} block{'s' if d.n_blocks != 1 else ''} of "
            f"{d.block_size:,}; ± is the Monte Carlo standard error. Human judgments count k "
            "per root up to the verdict (a run "
            "that reaches the cap counts the cap's); cost per valid verdict = expected cost / "
            "P(right verdict). The fixed-n test's human judgments at the same error are its "
            f"{d.fixed_n_roots:,} roots × k (closed form), set beside them for comparison. "
            "Each design and scenario draws from its own seed-sequence child "
            "(purpose `battery-designs/<design>/<scenario>`), so adding a design moves no other "
            "number.\n",
            table(headers, rows),
        ]
    )


def render_files(result: BatteryResult) -> dict[str, str]:
    """``report.md`` and ``results.json`` (which has no ``true_h_grid`` or ``designs`` key
    when the config asks for none: such a battery's outputs are those of a battery before them)."""
    if result.true_h_grid is not None and result.designs is not None:
        results = render_results_json(result)
    else:
        data = results_document(result)
        for key in ("true_h_grid", "designs"):
            if data.get(key) is None:
                data.pop(key, None)
        results = dump_json(data)
    return {"report.md": render_battery(result), "results.json": results}
