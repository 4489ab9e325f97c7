"""The sizing report (``report.md``) and ``results.json`` of a :class:`SizingResult`."""

from __future__ import annotations

from typing import Any

from verdictpack.kinds._sizing import (
    BinomialArmResult,
    TArmResult,
    TwoProportionArmResult,
)
from verdictpack.render._markdown import (
    fmt_alpha,
    fmt_count,
    fmt_fig,
    fmt_p,
    fmt_x,
    md_text,
    report_and_results,
    table,
)
from verdictpack.render._summary import report_head


def _region(lower: int | None, upper: int | None) -> str:
    parts = []
    if lower is not None:
        parts.append(f"X ≤ {lower}")
    if upper is not None:
        parts.append(f"X ≥ {upper}")
    return " or ".join(parts) if parts else "—"


def render_sizing(r: Any) -> str:
    out = report_head("sizing", r)
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
                    f"- {md_text(a.name)}, {md_text(s.design)}: the design uses the "
                    f"{s.design_uses}; "
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


render_files = report_and_results(render_sizing)
