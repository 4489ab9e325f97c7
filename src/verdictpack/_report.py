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
    from verdictpack._sizing import BinomialArmResult, TArmResult, TwoProportionArmResult

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
