"""Markdown reports, rendered from result objects only (never recomputed, never parsed back).

The shared helpers of every kind's renderer (tables, number formats, the construct block, the
operating-characteristics tables); each kind's report lives in its own module of this folder.
Every number printed comes from a field of the result object, formatted by the helpers here:
probabilities and powers with 4 decimals, alphas with 5, effect sizes with 4, counts as integers.
``results.json`` carries the same numbers unrounded.
"""

import re
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from verdictpack._contract import results_document
from verdictpack._results import Quantity, dump_json

__all__ = [
    "TRACK_HEADERS",
    "audit_text",
    "construct_block",
    "construction_comparison",
    "cost_table",
    "fmt_alpha",
    "fmt_count",
    "fmt_fig",
    "fmt_interval",
    "fmt_mean",
    "fmt_money",
    "fmt_p",
    "fmt_x",
    "guarantees_table",
    "md_code",
    "md_text",
    "oc_table",
    "render_results_json",
    "report_and_results",
    "route_label",
    "scenario_heading",
    "scenario_section",
    "table",
    "track_row",
    "verdict_cells",
]


def registered_for(registry: Mapping[type, Any], result: object, what: str) -> Any:
    """The entry ``registry`` holds for the result's exact type (renderers, summaries); a type
    with none is refused: TypeError naming it and the registered ones."""
    entry = registry.get(type(result))
    if entry is None:
        known = ", ".join(sorted(cls.__name__ for cls in registry))
        raise TypeError(
            f"no {what} registered for result type {type(result).__qualname__} "
            f"(registered: {known})"
        )
    return entry


def render_results_json(result: Any) -> str:
    """results.json: the result object, minus its provenance (which has its own file), with its
    schema version (:func:`verdictpack._contract.results_document`)."""
    return dump_json(results_document(result))


def report_and_results(report: Callable[[Any], str]) -> Callable[[Any], dict[str, str]]:
    """The renderer of a kind whose files are ``report.md`` (by ``report``) and ``results.json``."""

    def render_files(result: Any) -> dict[str, str]:
        return {"report.md": report(result), "results.json": render_results_json(result)}

    return render_files


_LINE_BREAKS = re.compile(r"\r\n|[\r\n\u2028\u2029\x85\v\f]")
# "&" only where it would start one of the two entities used here, so the escape is one-to-one
_MD_SPECIAL = re.compile(r"&(?=lt;|amp;)|<(?!br>)|\|")
_MD_ESCAPED = {"&": "&amp;", "<": "&lt;", "|": "\\|"}


def md_text(value: Any) -> str:
    """``value`` as inert Markdown text: raw HTML neutralised (``<`` as ``&lt;``), ``|`` escaped
    as ``\\|`` (no forged table cell), line breaks as spaces; ``&`` becomes ``&amp;`` only before
    ``lt;`` or ``amp;``, so every escaped text reads back as exactly one original. The cells' own
    ``<br>`` (renderers join lines of a cell with it) is kept; a name holding ``<br>`` only
    breaks its cell's line. Texts without ``<``, ``|`` or line breaks are unchanged."""
    text = _LINE_BREAKS.sub(" ", str(value))
    return _MD_SPECIAL.sub(lambda m: _MD_ESCAPED[m.group(0)], text)


def md_code(value: Any) -> str:
    """``value`` as an inline code span (between backticks), where raw HTML is inert; a name
    holding a backtick or a line break (which would end the span early) is written instead as
    :func:`md_text` with each backtick escaped (``\\```). Outside table cells only (a table
    cell passes through :func:`md_text` as a whole)."""
    text = str(value)
    if "`" in text or _LINE_BREAKS.search(text):
        return md_text(text).replace("`", "\\`")
    return f"`{text}`"


def table(headers: Sequence[str], rows: Sequence[Sequence[Any]]) -> str:
    """A pipe table; every header and cell passes through :func:`md_text` (user strings --
    judge names, ids, currencies -- reach a cell inert)."""
    head = "| " + " | ".join(map(md_text, headers)) + " |"
    rule = "|" + "|".join("---" for _ in headers) + "|"
    body = ["| " + " | ".join(map(md_text, row)) + " |" for row in rows]
    return "\n".join([head, rule, *body]) + "\n"


def fmt_p(x: float | Quantity | None) -> str:
    if x is None:
        return "—"
    return f"{float(x):.4f}"


def fmt_alpha(x: float | Quantity) -> str:
    return f"{float(x):.5f}"


def fmt_x(x: float | Quantity | None, digits: int = 4) -> str:
    if x is None:
        return "—"
    return f"{float(x):.{digits}f}"


def fmt_count(x: int | float | Quantity | None) -> str:
    if x is None:
        return "—"
    v = x.value if isinstance(x, Quantity) else x
    if isinstance(v, float) and not v.is_integer():
        return f"{v:.2f}"
    return str(int(v))


def fmt_fig(fig: Quantity | None, digits: int = 4) -> str:
    """A probability-like Quantity with its Monte Carlo standard error where simulated."""
    if fig is None:
        return "—"
    if fig.basis == "simulated":
        return f"{float(fig.value):.{digits}f} ± {fig.mcse:.4f}"
    return f"{float(fig.value):.{digits}f}"


def construct_block(c: Any) -> str:
    lines = [
        f"**Construct** {md_text(c.name)} (version {md_text(c.version)}) — "
        f"{md_text(c.registered_claim)}",
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


# ----------------------------------------------------------------------------------------------
# Operating characteristics (verdict, judges, engine power report, battery)
# ----------------------------------------------------------------------------------------------


def route_label(route: Any) -> str:
    if route.route == "eprocess":
        return f"e-process ({route.construction})"
    return {"sprt": "SPRT", "fixed_n": "fixed-n"}.get(str(route.route), str(route.route))


def fmt_money(x: float | Quantity | None) -> str:
    """A cost: two decimals from 1 up; below 1 with the significant digits it has (up to six),
    so a price of 0.0005 is not printed 0.00."""
    if x is None:
        return "none issued"
    v = float(x)
    if v == 0.0 or abs(v) >= 1.0:
        return f"{v:,.2f}"
    text = f"{v:.6g}"
    if "e" in text:  # below 1e-4: plain decimals, trailing zeros dropped
        text = f"{v:.12f}".rstrip("0")
    whole, _, frac = text.partition(".")
    return f"{whole}.{frac.ljust(2, '0')}"


def fmt_mean(fig: Quantity | None, digits: int = 1) -> str:
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
        f"### Scenario {md_code(sc.scenario)} — true h {fmt_x(sc.true_h)} "
        f"(model rate {fmt_p(sc.mu_model)}, human rate {fmt_p(sc.mu_human)}; effect "
        f"{'exists' if sc.effect_exists else 'absent'}; {sc.replicates} replicates)\n"
    )


def scenario_section(sc: Any) -> list[str]:
    """One scenario's heading, operating characteristics and cost lines."""
    return [scenario_heading(sc), oc_table(sc), cost_table(sc)]


def guarantees_table(sc: Any) -> str:
    return table(
        ["route", "guarantee it carries"],
        [[route_label(r), r.guarantee] for r in sc.routes],
    )


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


# the three tracks' table (engine and study)
TRACK_HEADERS = [
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


def audit_text(a: Any) -> str:
    """The reader audit (instrument validation) in one sentence (engine and study): κ with its
    interval, the one-sided lower bound and the gate's outcome."""
    return (
        f"{a.n_roots} roots × 2 readers = {a.readings} readings; Cohen's kappa "
        f"{fmt_p(a.kappa)} (point estimate; {100 * a.level:g}% CI {fmt_p(a.ci_low)}.."
        f"{fmt_p(a.ci_high)}, closed form); one-sided {100 * a.bound_level:g}% lower bound "
        f"{fmt_p(a.lower_bound)} (exact Clopper–Pearson bound of the observed agreement, "
        f"chance-corrected); gate lower bound ≥ {fmt_p(a.kappa_min)}: "
        f"**{'PASSED' if a.passed else 'FAILED — INSTRUMENT_INVALID'}**"
    )


def fmt_interval(iv: Any, digits: int = 4) -> str:
    if iv is None:
        return "—"
    return f"[{iv[0]:.{digits}f}, {iv[1]:.{digits}f}]"


def track_row(t: Any) -> list[str]:
    return [
        t.track,
        t.construction,
        fmt_x(t.threshold_h),
        f"**{t.verdict}**",
        "—" if t.roots_at_verdict is None else str(t.roots_at_verdict),
        fmt_interval(t.h_interval),
        fmt_interval(t.model_bounds),
        fmt_interval(t.human_bounds),
        fmt_interval(t.diff_bounds),
        fmt_alpha(t.error_per_side),
    ]
