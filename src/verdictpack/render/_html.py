"""report.html: one self-contained page per result -- inline CSS, inline SVG pictures, no script,
no network -- rendered from the same result object as report.md.

The page's text and tables are the kind's Markdown report, rendered in the same call from the same
result and translated here to HTML (the renderers' Markdown is a small fixed subset: headings,
pipe tables, paragraphs, bullets, ``**bold**``, ``*em*``, ```code```, ``<br>`` in cells), so the
page can never say other numbers than the report the self-audit checks. The five-line summary
(:func:`verdictpack.render._summary.summary_lines`) opens the page in a box of its own; the
pictures (:mod:`verdictpack.render._plots`, the ``report`` extra) sit at the end of the section
they illustrate, each with a caption saying what it shows and whether its numbers are exact,
closed form or simulated. Without matplotlib there is no page: :func:`render_html` is only called
when :func:`verdictpack.render._plots.available` is true.
"""

from __future__ import annotations

import html
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from typing import Any

from verdictpack.kinds._battery import BatteryResult
from verdictpack.kinds._engine import EngineResult
from verdictpack.kinds._judges import JudgesResult
from verdictpack.kinds._study import StudyResult
from verdictpack.kinds._verdict import VerdictResult
from verdictpack.render import _plots
from verdictpack.render._markdown import route_label
from verdictpack.render._summary import summary_lines

__all__ = ["FIGURES", "Figure", "markdown_to_html", "page", "render_html"]


@dataclass(frozen=True)
class Figure:
    """One picture: its id (unique on the page), the section it belongs to (a level-2 heading's
    first words; None: a section of its own at the end), the SVG and its caption."""

    name: str
    section: str | None
    svg: str
    caption: str


# ----------------------------------------------------------------------------------------------
# Markdown (the renderers' subset) to HTML
# ----------------------------------------------------------------------------------------------

_BOLD = re.compile(r"\*\*(.+?)\*\*")
_EM = re.compile(r"(?<![\w*])\*([^*\s][^*]*?)\*(?![\w*])")
_CODE = re.compile(r"`([^`]+)`")


_MD_UNESCAPE = re.compile(r"\\\||&(amp|lt);")
_MD_LITERAL = {"\\|": "|", "&amp;": "&", "&lt;": "<"}


def inline(text: str) -> str:
    """One line of inline Markdown as HTML (escaped first). The Markdown escapes of user
    strings (:func:`verdictpack.render._markdown.md_text`: ``\\|``, ``&amp;``, ``&lt;``) are
    read back as the characters they stand for, then everything is escaped."""
    text = _MD_UNESCAPE.sub(lambda m: _MD_LITERAL[m.group(0)], text)
    out = html.escape(text, quote=False)
    out = _CODE.sub(r"<code>\1</code>", out)
    out = _BOLD.sub(r"<strong>\1</strong>", out)
    out = _EM.sub(r"<em>\1</em>", out)
    return out.replace("&lt;br&gt;", "<br>")


def _cells(line: str) -> list[str]:
    body = line.strip()
    body = body[1:] if body.startswith("|") else body
    body = body[:-1] if body.endswith("|") else body
    # an escaped pipe (``\\|``, a user string's) never separates cells
    return [c.strip() for c in re.split(r"(?<!\\) \| ", body)] if body.strip() else []


def _table(lines: list[str]) -> str:
    head = _cells(lines[0])
    body = [_cells(x) for x in lines[2:]] if len(lines) > 1 else []
    rows = ["<tr>" + "".join(f"<td>{inline(c)}</td>" for c in row) + "</tr>" for row in body]
    return (
        '<div class="table"><table>\n<thead><tr>'
        + "".join(f"<th>{inline(c)}</th>" for c in head)
        + "</tr></thead>\n<tbody>\n"
        + "\n".join(rows)
        + "\n</tbody></table></div>"
    )


def markdown_to_html(md: str) -> str:
    """The renderers' Markdown as HTML blocks (headings, tables, lists, paragraphs)."""
    out: list[str] = []
    para: list[str] = []
    lines = md.splitlines()
    i = 0

    def flush() -> None:
        if para:
            out.append("<p>" + inline(" ".join(para)) + "</p>")
            para.clear()

    while i < len(lines):
        line = lines[i]
        stripped = line.strip()
        if not stripped:
            flush()
            i += 1
        elif stripped.startswith("#"):
            flush()
            level = len(stripped) - len(stripped.lstrip("#"))
            out.append(f"<h{level}>{inline(stripped[level:].strip())}</h{level}>")
            i += 1
        elif stripped.startswith("|"):
            flush()
            block = []
            while i < len(lines) and lines[i].strip().startswith("|"):
                block.append(lines[i])
                i += 1
            out.append(_table(block))
        elif stripped.startswith("- "):
            flush()
            items = []
            while i < len(lines) and lines[i].strip().startswith("- "):
                items.append(lines[i].strip()[2:])
                i += 1
                # a wrapped item continues on lines that are neither blank nor a new block
                while i < len(lines) and lines[i].startswith("  ") and lines[i].strip():
                    items[-1] += " " + lines[i].strip()
                    i += 1
            out.append("<ul>" + "".join(f"<li>{inline(x)}</li>" for x in items) + "</ul>")
        else:
            para.append(stripped)
            i += 1
    flush()
    return "\n".join(out)


# ----------------------------------------------------------------------------------------------
# The page
# ----------------------------------------------------------------------------------------------

_CSS = """
:root { color-scheme: light; }
body { font-family: "DejaVu Sans", "Helvetica Neue", Arial, "Liberation Sans", sans-serif;
  font-size: 15px; line-height: 1.45; color: #1b1b1b; background: #ffffff; margin: 0; }
main { max-width: 1080px; margin: 0 auto; padding: 24px 28px 48px; }
h1 { font-size: 1.6em; margin: 0.2em 0 0.6em; }
h2 { font-size: 1.25em; margin: 1.8em 0 0.5em; border-bottom: 1px solid #d6d6d6;
  padding-bottom: 0.2em; }
h3 { font-size: 1.05em; margin: 1.4em 0 0.4em; }
.summary { border: 1px solid #9bbbd4; background: #f2f7fb; border-radius: 6px;
  padding: 12px 18px; margin: 0 0 1.4em; }
.summary h2 { border: 0; margin: 0 0 0.3em; font-size: 1.05em; }
.summary ul { margin: 0; padding-left: 1.2em; }
.table { overflow-x: auto; margin: 0.6em 0 1em; }
table { border-collapse: collapse; font-size: 0.86em; }
th, td { border: 1px solid #d0d0d0; padding: 4px 8px; text-align: left; vertical-align: top; }
th { background: #f1f1f1; }
tbody tr:nth-child(even) { background: #fafafa; }
code { font-family: "DejaVu Sans Mono", Menlo, Consolas, monospace; font-size: 0.92em;
  background: #f3f3f3; padding: 0 3px; border-radius: 3px; }
figure { margin: 1.2em 0 1.6em; }
figure svg.plot { display: block; width: 100%; max-width: 1000px; height: auto; }
svg.plot text { font-family: "DejaVu Sans", "Helvetica Neue", Arial, "Liberation Sans",
  sans-serif; }
figcaption { font-size: 0.88em; color: #333333; margin-top: 0.4em; max-width: 980px; }
.note { font-size: 0.85em; color: #555555; }
"""


def _figure_html(number: int, fig: Figure) -> str:
    alt = html.escape(fig.caption, quote=True)
    svg = fig.svg.replace('role="img"', f'role="img" aria-label="{alt}"', 1)
    return (
        f'<figure id="figure-{fig.name}">\n{svg}'
        f"<figcaption><strong>Figure {number}.</strong> {inline(fig.caption)}</figcaption>\n"
        "</figure>"
    )


def page(title: str, summary: Sequence[str], markdown: str, figures: Sequence[Figure]) -> str:
    """The whole page: the summary box, the report's sections, each section's pictures at its
    end (pictures of no section last, under a heading of their own)."""
    body = markdown
    bullets = "\n".join(f"- {line}" for line in summary)
    if summary and bullets in body:  # report.md carries the same lines under its title
        body = body.replace(bullets + "\n", "", 1)
    chunks = re.split(r"(?m)^(?=## )", body)
    placed: set[str] = set()  # a figure's number is its place on the page
    parts: list[str] = []
    for k, chunk in enumerate(chunks):
        html_chunk = markdown_to_html(chunk)
        if k == 0 and summary:
            h1_end = html_chunk.find("</h1>")
            box = (
                '<section class="summary" aria-label="summary"><h2>At a glance</h2><ul>'
                + "".join(f"<li>{inline(line)}</li>" for line in summary)
                + "</ul></section>"
            )
            if h1_end >= 0:
                html_chunk = html_chunk[: h1_end + 5] + "\n" + box + html_chunk[h1_end + 5 :]
            else:
                html_chunk = box + "\n" + html_chunk
        parts.append(html_chunk)
        heading = chunk[3:].split("\n", 1)[0] if chunk.startswith("## ") else ""
        for fig in figures:
            if fig.name not in placed and fig.section and heading.startswith(fig.section):
                placed.add(fig.name)
                parts.append(_figure_html(len(placed), fig))
    rest = [f for f in figures if f.name not in placed]
    if rest:
        parts.append("<h2>Pictures</h2>")
        parts += [_figure_html(len(placed) + k, f) for k, f in enumerate(rest, 1)]
    return (
        "<!DOCTYPE html>\n"
        '<html lang="en">\n<head>\n<meta charset="utf-8">\n'
        '<meta name="viewport" content="width=device-width, initial-scale=1">\n'
        f"<title>{html.escape(title)}</title>\n<style>{_CSS}</style>\n</head>\n<body>\n<main>\n"
        + "\n".join(parts)
        + '\n<p class="note">Rendered by verdictpack from the same result as report.md and '
        "results.json; every picture is inline, the page loads nothing.</p>\n"
        "</main>\n</body>\n</html>\n"
    )


# ----------------------------------------------------------------------------------------------
# The pictures of each kind, read from the result object
# ----------------------------------------------------------------------------------------------


def _pair(v: Any) -> tuple[float, float]:
    return (float(v[0]), float(v[1]))


_BOUNDS = ("model_bounds", "human_bounds", "diff_bounds", "h_interval")


def _plateau_ends(rows: Sequence[dict[str, Any]], idx: list[int], keep: set[int]) -> list[int]:
    """``idx`` without the roots inside a stretch where no bound moves (a straight line between
    the stretch's ends draws it exactly); marked roots always stay."""

    def at(k: int) -> tuple[Any, ...]:
        return tuple(tuple(rows[k][b]) if rows[k].get(b) else None for b in _BOUNDS)

    out = []
    for j, k in enumerate(idx):
        inner = 0 < j < len(idx) - 1 and k not in keep
        if inner and at(idx[j - 1]) == at(k) == at(idx[j + 1]):
            continue
        out.append(k)
    return out


def _trace(
    rows: Sequence[dict[str, Any]],
    track: Any,
    evidence: str,
    name: str,
    crossings: list[int] | None = None,
) -> Figure | None:
    """The registered track's confidence sequences over roots, from the evidence rows
    (``crossings``: the roots where a track's state changes, when the caller knows them)."""
    if not rows:
        return None
    if crossings is None:
        crossings = [k for k in range(1, len(rows)) if rows[k]["state"] != rows[k - 1]["state"]]
    verdict_root = track.roots_at_verdict
    keep = [*crossings]
    if verdict_root is not None:
        keep.append(verdict_root - 1)
    log = _plots.log_axis(int(rows[-1]["root"]))
    idx = _plateau_ends(rows, _plots.thin(len(rows), keep, log=log), set(keep))
    sel = [rows[k] for k in idx]
    has_diff = all(r.get("diff_bounds") is not None for r in sel) and track.construction == "hybrid"
    svg = _plots.sequence_svg(
        name,
        [int(r["root"]) for r in sel],
        [_pair(r["model_bounds"]) for r in sel],
        [_pair(r["human_bounds"]) for r in sel],
        [_pair(r["diff_bounds"]) for r in sel] if has_diff else None,
        [_pair(r["h_interval"]) for r in sel],
        float(track.threshold_h),
        verdict_root,
        track.verdict,
    )
    if len(sel) == len(rows):
        shown = f"all {len(rows):,} roots"
    elif len(rows) <= _plots.MAX_POINTS:
        shown = (
            f"{len(rows):,} roots ({len(sel):,} drawn: every root but those inside a stretch "
            "where no bound moves)"
        )
    else:
        shown = (
            f"{len(rows):,} roots ({len(sel):,} drawn: an even stride of at most "
            f"{_plots.MAX_POINTS:,}{' on a log scale' if log else ''}, every root where a "
            "track's state changes, and the ends of each stretch where no bound moves)"
        ) + (" on a log root axis" if log else "")
    streams = "M (model), H (human) and D = M − H (paired difference)" if has_diff else "M and H"
    caption = (
        f"The registered track ({track.construction}) over {shown}: the confidence sequences of "
        f"{streams} and the h-interval, against the threshold h = {track.threshold_h:g} (dashed) "
        "and zero; the dotted line marks the registered verdict "
        f"({track.verdict}"
        + (f" at root {verdict_root}" if verdict_root is not None else ", no verdict root")
        + "). Exact: each bound is computed from the evidence of this run as evidence.jsonl "
        f"records it ({evidence}); the intervals start at the whole range and narrow as roots "
        "arrive (the h axis is cut to the informative part)."
    )
    return Figure(name, "Verdict", svg, caption)


def _kappa(audit: Any, name: str, simulated_readers: bool) -> Figure:
    svg = _plots.kappa_svg(
        name,
        float(audit.kappa),
        (float(audit.ci_low), float(audit.ci_high)),
        float(audit.kappa_min),
        bool(audit.passed),
        float(audit.level),
    )
    who = "simulated readers (the proof run)" if simulated_readers else "the readers' files"
    caption = (
        f"The reader audit: Cohen's kappa of {audit.n_roots:,} roots read by two readers "
        f"({who}) with its {audit.level:.0%} interval, against the gate kappa ≥ "
        f"{audit.kappa_min:g} (dashed): {'PASSED' if audit.passed else 'FAILED'} on the "
        f"one-sided {100 * audit.bound_level:g}% lower bound {float(audit.lower_bound):.4f} "
        "(exact Clopper–Pearson bound of the observed agreement, chance-corrected), not on the "
        "point estimate. The kappa is exact from the readings; its two-sided interval is closed "
        "form (asymptotic)."
    )
    return Figure(name, None, svg, caption)


def _oc_curves(scenarios: Sequence[Any]) -> list[_plots.OCCurve]:
    """P(each verdict) against true h for each route, over scenarios sorted by true h."""
    ordered = sorted(scenarios, key=lambda s: float(s.true_h))
    curves: dict[str, list[tuple[float, dict[str, tuple[float, float]]]]] = {}
    for sc in ordered:
        for r in sc.routes:
            curves.setdefault(route_label(r), []).append(
                (
                    float(sc.true_h),
                    {v: (float(q.value), float(q.mcse or 0.0)) for v, q in r.p_verdict.items()},
                )
            )
    return [_plots.OCCurve(label, tuple(points)) for label, points in curves.items()]


def _oc_figure(
    scenarios: Sequence[Any], threshold: float, name: str, section: str, what: str
) -> Figure | None:
    if len(scenarios) < 2:
        return None
    svg = _plots.oc_svg(name, _oc_curves(scenarios), threshold)
    hs = ", ".join(f"{float(s.true_h):.3f}" for s in sorted(scenarios, key=lambda s: s.true_h))
    reps = sorted({s.replicates for s in scenarios})
    caption = (
        f"Operating characteristics: P(each verdict) against the true h of {what} (true h "
        f"{hs}), one panel per route; threshold h = {threshold:g} dashed, zero solid. Simulated: "
        f"{', '.join(f'{n:,}' for n in reps)} replicates per point, bands ± 2 Monte Carlo "
        "standard errors; the lines only join the simulated points."
    )
    return Figure(name, section, svg, caption)


def _cost_bars(sc: Any) -> list[_plots.CostBar]:
    return [
        _plots.CostBar(route_label(r), float(r.mean_model_cost), float(r.mean_human_cost))
        for r in sc.routes
    ]


def _cost_figure(
    groups: Sequence[tuple[str, Sequence[_plots.CostBar]]],
    currency: str,
    name: str,
    section: str,
    basis: str,
) -> Figure:
    svg = _plots.cost_svg(name, groups, currency)
    caption = (
        "Cost per route, the judges' cost (blue) and the human layer's (orange) stacked apart, "
        f"the total at the end of each bar. {basis}"
    )
    return Figure(name, section, svg, caption)


def _currency(r: Any) -> str:
    return str(r.currency) if hasattr(r, "currency") else "currency not named"


def _engine_figures(r: EngineResult) -> list[Figure]:
    figs: list[Figure] = []
    trace = _trace(r.evidence, r.registered, r.evidence_source, "engine-sequence")
    if trace is not None:
        figs.append(trace)
    f = r.factory
    figs.append(
        Figure(
            "engine-funnel",
            "Stimulus factory",
            _plots.funnel_svg(
                "engine-funnel",
                f.n_candidates,
                [(g, f.first_failures[g]) for g in f.gate_names],
                f.n_admitted,
            ),
            f"The gate funnel: {f.n_candidates:,} candidates generated, refused at the first "
            f"gate each fails, {f.n_admitted:,} admitted. Exact counts of this run.",
        )
    )
    k = _kappa(r.audit, "engine-kappa", simulated_readers=True)
    figs.append(Figure(k.name, "Human layer", k.svg, k.caption))
    run_judges = sum(float(c.cost) for c in r.costs if "model" in c.line)
    run_humans = sum(float(c.cost) for c in r.costs if "model" not in c.line and c.line != "total")
    groups: list[tuple[str, Sequence[_plots.CostBar]]] = [
        ("this run (exact)", [_plots.CostBar("e-process (this run)", run_judges, run_humans)])
    ]
    groups += [
        (f"{sc.scenario}, true h {sc.true_h:.3f} (simulated mean per run)", _cost_bars(sc))
        for sc in r.power
    ]
    figs.append(
        _cost_figure(
            groups,
            _currency(r),
            "engine-cost",
            "Cost of this run",
            "The first panel is this run's cost (exact; the human layer includes the gate "
            "spot-check, the reader audit and the preference baseline); the others are the "
            "simulated mean cost of one run of each route in each world of the power report.",
        )
    )
    oc = _oc_figure(
        r.power,
        r.construct.governing_threshold_h,
        "engine-oc",
        "Power report",
        "the power report's simulated worlds",
    )
    if oc is not None:
        figs.append(oc)
    return figs


def _verdict_figures(r: VerdictResult) -> list[Figure]:
    figs: list[Figure] = []
    oc = _oc_figure(
        r.scenarios,
        r.construct.governing_threshold_h,
        "verdict-oc",
        "Operating characteristics",
        "the simulated worlds",
    )
    if oc is not None:
        figs.append(oc)
    if r.scenarios:
        figs.append(
            _cost_figure(
                [(f"{sc.scenario}, true h {sc.true_h:.3f}", _cost_bars(sc)) for sc in r.scenarios],
                _currency(r),
                "verdict-cost",
                "Operating characteristics",
                "Simulated: the mean cost of one run of each route in each world.",
            )
        )
    return figs


def _judges_figures(r: JudgesResult) -> list[Figure]:
    points = []
    for c in r.compositions:
        for world, sc in (("effect present", c.effect_present), ("effect absent", c.effect_absent)):
            e = sc.routes[0]
            points.append(
                (
                    c.name,
                    world,
                    float(e.mean_cost),
                    float(e.p_correct),
                    float(e.p_correct.mcse or 0),
                )
            )
    figs = [
        Figure(
            "judges-panels",
            "Price next to accuracy",
            _plots.panels_svg("judges-panels", points),
            "Panel compositions: the mean cost of one run (judges and human layer) against "
            "P(correct verdict) of the registered e-process, in the world with the effect and "
            "without it. Simulated: "
            f"{r.replicates:,} replicates per composition and world, bars ± 2 Monte Carlo "
            "standard errors.",
        )
    ]
    groups = []
    for world in ("effect present", "effect absent"):
        bars = []
        for c in r.compositions:
            e = (c.effect_present if world == "effect present" else c.effect_absent).routes[0]
            bars.append(_plots.CostBar(c.name, float(e.mean_model_cost), float(e.mean_human_cost)))
        groups.append((f"{world} (simulated mean per run)", bars))
    figs.append(
        _cost_figure(
            groups,
            _currency(r),
            "judges-cost",
            "Price next to accuracy",
            "Simulated: the mean cost of one run of the registered e-process for each composition.",
        )
    )
    return figs


def _battery_figures(r: BatteryResult) -> list[Figure]:
    figs: list[Figure] = []
    grid = _battery_grid(r)
    if grid is not None:
        figs.append(grid)
    else:
        plain = [
            row.outcome
            for row in r.scenarios
            if row.scenario in ("null", "registered_alternative", "above_threshold")
        ]
        oc = _oc_figure(
            plain,
            r.construct.governing_threshold_h,
            "battery-oc",
            "Summary",
            "the battery's plain worlds (null, registered alternative, above the threshold; "
            "the confounded and stressed worlds are in the tables)",
        )
        if oc is not None:
            figs.append(oc)
    if r.scenarios:
        figs.append(
            _cost_figure(
                [
                    (f"{row.label}, true h {row.outcome.true_h:.3f}", _cost_bars(row.outcome))
                    for row in r.scenarios
                ],
                _currency(r),
                "battery-cost",
                "Summary",
                "Simulated: the mean cost of one run of each route in each scenario.",
            )
        )
    return figs


def _battery_grid(r: BatteryResult) -> Figure | None:
    """The OC curves over the battery's grid of true h (when the result holds one), the
    fixed-n route's closed-form power beside its simulated P(EFFECT)."""
    grid = r.true_h_grid
    if grid is None or len(grid.rows) < 2:
        return None
    curves = _oc_curves([row.outcome for row in grid.rows])
    ref = tuple(
        (float(row.outcome.true_h), float(row.fixed_n_closed_form.power)) for row in grid.rows
    )
    curves = [
        replace(c, reference=("EFFECT", "closed form", ref)) if c.label == "fixed-n" else c
        for c in curves
    ]
    threshold = r.construct.governing_threshold_h
    svg = _plots.oc_svg("battery-grid", curves, threshold)
    caption = (
        f"Operating characteristics over the grid of true h ({grid.points} points from "
        f"{grid.start:g} to {grid.stop:g}): P(each verdict) against true h, one panel per route; "
        f"threshold h = {threshold:g} dashed, zero solid. Simulated: {grid.replicates:,} "
        "replicates per point, bands ± 2 Monte Carlo standard errors; the fixed-n panel adds "
        "its power in closed form (black dashes)."
    )
    return Figure("battery-grid", "Operating characteristics against the true h", svg, caption)


def _study_figures(r: StudyResult) -> list[Figure]:
    figs: list[Figure] = []
    trail = r.evidence
    trace = _trace(trail, r.registered, r.evidence_source, "study-sequence", trail.state_changes())
    if trace is not None:
        figs.append(trace)
    g = r.gates
    figs.append(
        Figure(
            "study-funnel",
            "Gates",
            _plots.funnel_svg(
                "study-funnel", g.total, [(n, g.first_failing[n]) for n in g.gates], g.admitted
            ),
            f"The gate funnel: {g.total:,} pairs offered, refused at the first gate each fails, "
            f"{g.admitted:,} admitted. Exact counts from the study's files."
            + (f" Not applied (switched off): {', '.join(g.off)}." if g.off else ""),
        )
    )
    if r.audit is not None:  # else no reader audit ran: the summary says so
        k = _kappa(r.audit, "study-kappa", simulated_readers=False)
        figs.append(Figure(k.name, "Reader audit", k.svg, k.caption))
    j = r.judges_report
    rows = []
    for e in j.judges:
        kw = e.kappa_with_humans or {}
        rows.append(
            _plots.SheetRow(
                e.name,
                None if e.rate is None or e.rate_ci is None else (e.rate, _pair(e.rate_ci)),
                None
                if e.position_bias is None or e.position_bias_ci is None
                else (e.position_bias, _pair(e.position_bias_ci)),
                None
                if kw.get("kappa") is None or kw.get("ci") is None
                else (float(kw["kappa"]), _pair(kw["ci"])),
            )
        )
    if rows:
        human = (
            None
            if j.human_rate is None or j.human_rate_ci is None
            else (j.human_rate, _pair(j.human_rate_ci))
        )
        figs.append(
            Figure(
                "study-sheets",
                "The judges as the data show them",
                _plots.sheets_svg("study-sheets", rows, human, j.level),
                "Each judge's sheet as fitted from the study's data: the rate of preferring the "
                "treatment (the human rate in orange), the position bias (treatment shown first "
                "minus second) and the root-level kappa with the humans, each with its "
                f"{j.level:.0%} interval (closed form, from the judgments in the files).",
            )
        )
    by_route: dict[str, list[float]] = {}
    for c in r.costs:
        if c.line == "total":
            continue
        slot = by_route.setdefault(c.route, [0.0, 0.0])
        slot[0 if "model" in c.line else 1] += float(c.cost)
    if by_route:
        figs.append(
            _cost_figure(
                [
                    (
                        "this study (exact)",
                        [_plots.CostBar(k2, v[0], v[1]) for k2, v in by_route.items()],
                    )
                ],
                r.currency,
                "study-cost",
                "Cost",
                "Exact, from the judgments counted in the files at the configured prices; the "
                "human layer is the human judgments and the reader audit's readings.",
            )
        )
    return figs


# result class -> its pictures (a sizing has none)
FIGURES: dict[type, Callable[[Any], list[Figure]]] = {
    VerdictResult: _verdict_figures,
    JudgesResult: _judges_figures,
    EngineResult: _engine_figures,
    BatteryResult: _battery_figures,
    StudyResult: _study_figures,
}


def render_html(result: object, report_md: str) -> str:
    """report.html of ``result``; ``report_md`` is its report.md as rendered in the same call."""
    figures = FIGURES[type(result)](result) if type(result) in FIGURES else []
    title_line = report_md.split("\n", 1)[0].lstrip("# ").strip()
    return page(title_line, summary_lines(result), report_md, figures)
