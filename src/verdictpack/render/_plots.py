"""The pictures of report.html, drawn as inline SVG by matplotlib (the ``report`` extra).

matplotlib is imported inside the functions only: the package imports and runs without it
(:func:`available` says whether the pictures can be drawn). Every picture takes plain numbers
(the HTML renderer reads them from the result object) and returns one ``<svg>`` element as text.

Byte-reproducible: the object API only (``Figure`` + ``FigureCanvasSVG``, never pyplot), every
setting inside ``matplotlib.rc_context`` (no global rcParams change), a fixed ``svg.hashsalt``,
text kept as text (``svg.fonttype = "none"``; the page's CSS gives the font stack), no date or
creator metadata, and every id prefixed by the figure's name so two pictures on one page never
share an id. Long traces are thinned deterministically by :func:`thin` (every marked point kept,
at most :data:`MAX_POINTS` a line).
"""

from __future__ import annotations

import io
import math
import re
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

__all__ = [
    "MAX_POINTS",
    "CostBar",
    "OCCurve",
    "SheetRow",
    "available",
    "cost_svg",
    "funnel_svg",
    "kappa_svg",
    "log_axis",
    "oc_svg",
    "panels_svg",
    "sequence_svg",
    "sheets_svg",
    "thin",
]

MAX_POINTS = 600  # most roots drawn per line of a trace (the plot is ~500 px wide)
LOG_FROM = 2000  # a trace of more roots is drawn on a log root axis

# a colour-blind-safe palette (Okabe-Ito), fixed so the bytes never depend on a style
BLUE, ORANGE, GREEN, RED, PURPLE, GREY, SKY = (
    "#0072B2",
    "#E69F00",
    "#009E73",
    "#D55E00",
    "#CC79A7",
    "#666666",
    "#56B4E9",
)
_VERDICT_COLOURS = {
    "EFFECT_SUPPORTED": GREEN,
    "EFFECT": GREEN,
    "NO_POSITIVE_EFFECT": RED,
    "NO_EFFECT": RED,
    "BELOW_PRACTICAL_THRESHOLD": ORANGE,
    "INCONCLUSIVE": GREY,
}

_RC: dict[str, Any] = {
    "svg.fonttype": "none",
    "svg.image_inline": True,
    "font.family": "DejaVu Sans",  # bundled with matplotlib: the layout never depends on the host
    "font.size": 9.0,
    "axes.titlesize": 9.5,
    "axes.labelsize": 9.0,
    "legend.fontsize": 8.0,
    "xtick.labelsize": 8.0,
    "ytick.labelsize": 8.0,
    "axes.spines.top": False,
    "axes.spines.right": False,
    "axes.grid": True,
    "grid.color": "#dddddd",
    "grid.linewidth": 0.6,
    "lines.linewidth": 1.4,
    "path.simplify": True,  # deterministic: drops points closer than the threshold to a line
    "path.simplify_threshold": 0.2,
    # user strings (judge names, currencies, routes) are drawn as text, never as math: a name
    # such as "gpt-4o ($2.50 in)" would otherwise be parsed as mathtext (issue 22 row 8)
    "text.parse_math": False,
    "text.usetex": False,
}
_METADATA = {"Date": None, "Creator": None, "Format": None, "Type": None}
_ID = re.compile(r'\bid="([^"]+)"')
_REF = re.compile(r'(\bid="|href="#|url\(#)([^")]+)')
_PATH = re.compile(r' d="([^"]*)"')
_NUM = re.compile(r"-?\d+\.\d+")
_WS = re.compile(r"\s+")


def _round(m: re.Match[str]) -> str:
    text = f"{float(m.group(0)):.1f}"
    return "0.0" if text == "-0.0" else text


def available() -> bool:
    """Whether matplotlib is installed (the ``report`` extra), found without importing it (the
    page is drawn in a child process, which imports it; a copy that fails to import there
    means no page, as its absence does)."""
    import importlib.util
    import sys

    if "matplotlib" in sys.modules:
        return sys.modules["matplotlib"] is not None
    try:
        return importlib.util.find_spec("matplotlib") is not None
    except (ImportError, ValueError):
        return False


@contextmanager
def _drawing(name: str, width: float, height: float) -> Iterator[Any]:
    """A figure (inches), drawn and saved inside this picture's own rc_context."""
    import matplotlib
    from matplotlib.figure import Figure

    params: Any = {**_RC, "svg.hashsalt": f"verdictpack-{name}", "svg.id": name}
    with matplotlib.rc_context(params):
        yield Figure(figsize=(width, height))


def _margins(
    fig: Any,
    left: float,
    bottom: float = 0.45,
    top: float = 0.3,
    right: float = 0.15,
    hspace: float = 0.0,
    wspace: float = 0.0,
) -> None:
    """Fixed margins in inches (a fixed layout is cheap and never moves between runs);
    ``hspace``/``wspace``: the gap between panels in inches."""
    w, h = fig.get_size_inches()
    rows, cols = fig.axes[0].get_subplotspec().get_gridspec().get_geometry()
    inner_h = max(h - bottom - top, 0.1)
    inner_w = max(w - left - right, 0.1)
    fig.subplots_adjust(
        left=left / w,
        right=1 - right / w,
        bottom=bottom / h,
        top=1 - top / h,
        hspace=hspace / max(inner_h / rows - hspace, 0.1) if rows > 1 else 0.2,
        wspace=wspace / max(inner_w / cols - wspace, 0.1) if cols > 1 else 0.2,
    )


def _label_width(labels: Sequence[str]) -> float:
    """Inches for y tick labels of ``labels`` at 8 pt (DejaVu Sans averages ~0.6 em a char)."""
    return 0.25 + 0.068 * max((len(x) for x in labels), default=4)


def _svg(name: str, fig: Any) -> str:
    """The figure as one inline ``<svg>`` element, ids prefixed by ``name`` (call it inside
    :func:`_drawing`)."""
    from matplotlib.backends.backend_svg import FigureCanvasSVG

    FigureCanvasSVG(fig)
    buf = io.StringIO()
    fig.savefig(buf, format="svg", metadata=_METADATA)
    text = buf.getvalue()
    text = text[text.index("<svg") :]
    # inline in HTML the parser knows the SVG and xlink namespaces: no namespace URLs
    text = text.replace(' xmlns:xlink="http://www.w3.org/1999/xlink"', "", 1)
    text = text.replace(' xmlns="http://www.w3.org/2000/svg"', "", 1)
    text = re.sub(r"\s*<metadata>.*?</metadata>", "", text, flags=re.S)
    ids = {m for m in _ID.findall(text) if m != name}

    def prefixed(m: re.Match[str]) -> str:
        ref = m.group(2)
        return m.group(1) + (f"{name}-{ref}" if ref in ids else ref)

    text = _REF.sub(prefixed, text)
    # a tenth of a point is finer than any screen draws: shorter paths, same picture
    text = _PATH.sub(lambda m: ' d="' + _NUM.sub(_round, _WS.sub(" ", m.group(1))) + '"', text)
    # the page's CSS gives the font stack (DejaVu Sans first, the face the layout was made with)
    text = text.replace("font-family: 'DejaVu Sans'; ", "")
    text = text.replace("; font-family: 'DejaVu Sans'", "")
    # scale with the page: the viewBox keeps the drawing, the width comes from CSS
    text = re.sub(r'<svg ([^>]*?)width="([\d.]+)pt" height="([\d.]+)pt"', _sized, text, count=1)
    return text.rstrip() + "\n"


def _sized(m: re.Match[str]) -> str:
    w, h = float(m.group(2)), float(m.group(3))
    return (
        f'<svg {m.group(1)}width="{w * 4 / 3:.0f}" height="{h * 4 / 3:.0f}" class="plot" role="img"'
    )


def log_axis(roots: int) -> bool:
    """Whether a trace of ``roots`` roots is drawn on a log root axis (a long run's verdict and
    its early narrowing would sit in the first pixels of a linear one)."""
    return roots > LOG_FROM


def thin(n: int, keep: Sequence[int] = (), limit: int = MAX_POINTS, log: bool = False) -> list[int]:
    """Indices 0..n-1 to draw: all of them when n <= limit, else an even stride (even on a log
    scale with ``log``) plus the first, the last and every index in ``keep`` (verdicts,
    crossings); deterministic."""
    if n <= limit:
        return list(range(n))
    marked = {0, n - 1, *(k for k in keep if 0 <= k < n)}
    budget = max(limit - len(marked), 2)
    if log:
        scale = math.log(n) / (budget - 1)
        chosen = {min(n - 1, round(math.exp(i * scale)) - 1) for i in range(budget)}
    else:
        step = (n - 1) / (budget - 1)
        chosen = {round(i * step) for i in range(budget)}
    return sorted(chosen | marked)


def _band(
    ax: Any, x: Sequence[int], iv: Sequence[tuple[float, float]], colour: str, label: str
) -> None:
    """An interval over roots: one filled polygon whose edge draws both bounds."""
    from matplotlib.colors import to_rgba

    ax.fill_between(
        x,
        [a for a, _ in iv],
        [b for _, b in iv],
        facecolor=to_rgba(colour, 0.2),
        edgecolor=colour,
        linewidth=1.2,
        label=label,
    )


def sequence_svg(
    name: str,
    roots: Sequence[int],
    model: Sequence[tuple[float, float]],
    human: Sequence[tuple[float, float]],
    diff: Sequence[tuple[float, float]] | None,
    h_interval: Sequence[tuple[float, float]],
    threshold: float,
    verdict_root: int | None,
    verdict: str,
) -> str:
    """The confidence sequences of M and H (and D) and the h-interval over roots, against the
    threshold and zero, the registered verdict's root marked."""
    panels = 3 if diff is not None else 2
    above = {"loc": "lower right", "bbox_to_anchor": (1.0, 1.0), "frameon": False}
    with _drawing(name, 7.6, 1.9 * panels + 0.5) as fig:
        axes = fig.subplots(panels, 1, sharex=True)
        _margins(fig, 0.65, top=0.3, hspace=0.4)
        x = list(roots)
        ax = axes[0]
        _band(ax, x, model, BLUE, "M: model stream")
        _band(ax, x, human, ORANGE, "H: human stream")
        ax.set_ylim(0.0, 1.0)
        ax.set_ylabel("rate")
        ax.set_title("Confidence sequences", loc="left")
        ax.legend(ncols=2, borderaxespad=0.2, **above)
        if diff is not None:
            ax = axes[1]
            _band(ax, x, diff, PURPLE, "D = M − H: paired difference")
            ax.axhline(0.0, color="black", linewidth=0.8)
            ax.set_ylim(-1.0, 1.0)
            ax.set_ylabel("difference")
            ax.legend(borderaxespad=0.2, **above)
        ax = axes[-1]
        _band(ax, x, h_interval, GREEN, "h-interval")
        ax.axhline(
            threshold, color=RED, linestyle="--", linewidth=1.0, label=f"threshold h {threshold:g}"
        )
        ax.axhline(0.0, color="black", linewidth=0.8, label="h = 0")
        n = len(x)
        log = bool(x) and log_axis(x[-1])
        # the h axis is cut to the interval a quarter of the way in (on a log axis: at sqrt(n))
        mark = math.sqrt(x[-1]) if log else x[0] + (x[-1] - x[0]) / 4 if x else 0
        k = min((i for i, r in enumerate(x) if r >= mark), default=0)
        lo_k = h_interval[k][0] if n else -1.0
        hi_k = h_interval[k][1] if n else 1.0
        lower = max(-math.pi, min(-0.3, lo_k, threshold - 0.3) - 0.05)
        upper = min(math.pi, max(threshold + 0.3, hi_k, 0.3) + 0.05)
        ax.set_ylim(lower, upper)
        ax.set_ylabel("Cohen's h")
        ax.legend(ncols=3, borderaxespad=0.2, **above)
        if verdict_root is not None:
            for a in axes:
                a.axvline(verdict_root, color="black", linestyle=":", linewidth=1.2)
            ax.set_xlabel(f"root (dotted line: {verdict} at root {verdict_root})")
        else:
            ax.set_xlabel(f"root ({verdict}: no verdict root)")
        if x:
            ax.set_xlim(x[0], x[-1])
        if log:
            ax.set_xscale("log")
        return _svg(name, fig)


def funnel_svg(name: str, offered: int, refused: Sequence[tuple[str, int]], admitted: int) -> str:
    """Pairs offered, refused at each gate (by the first gate they fail), admitted."""
    labels = [f"offered ({offered:,})"]
    starts, widths, colours = [0.0], [float(offered)], [GREY]
    left = float(offered)
    for gate, count in refused:
        left -= count
        labels.append(f"refused by {gate} ({count:,})")
        starts.append(left)
        widths.append(float(count))
        colours.append(RED)
    labels.append(f"admitted ({admitted:,})")
    starts.append(0.0)
    widths.append(float(admitted))
    colours.append(GREEN)
    with _drawing(name, 7.6, 0.42 * len(labels) + 0.8) as fig:
        ax = fig.subplots()
        _margins(fig, _label_width(labels), top=0.1)
        y = list(range(len(labels)))[::-1]
        ax.barh(y, widths, left=starts, color=colours, height=0.6)
        ax.set_yticks(y, labels)
        ax.set_xlim(0, max(offered, admitted, 1) * 1.02)
        ax.set_xlabel("pairs (each refused pair counted at the first gate it fails)")
        ax.grid(axis="y", visible=False)
        return _svg(name, fig)


def kappa_svg(
    name: str, kappa: float, ci: tuple[float, float], gate: float, passed: bool, level: float
) -> str:
    """The reader audit's kappa with its interval against the gate."""
    with _drawing(name, 7.6, 1.5) as fig:
        ax = fig.subplots()
        _margins(fig, 0.3, top=0.35)
        colour = GREEN if passed else RED
        ax.errorbar(
            [kappa],
            [0],
            xerr=[[kappa - ci[0]], [ci[1] - kappa]],
            fmt="o",
            color=colour,
            capsize=4,
            label=f"Cohen's kappa {kappa:.3f} ({level:.0%} CI {ci[0]:.3f}..{ci[1]:.3f})",
        )
        ax.axvline(gate, color=RED, linestyle="--", linewidth=1.0, label=f"gate kappa ≥ {gate:g}")
        ax.axvline(0.0, color="black", linewidth=0.8)
        ax.set_xlim(min(-0.05, ci[0] - 0.05), 1.0)
        ax.set_ylim(-1, 1)
        ax.set_yticks([])
        ax.set_xlabel("Cohen's kappa between the two readers")
        fig.legend(loc="upper center", ncols=2, frameon=False)
        return _svg(name, fig)


@dataclass(frozen=True)
class CostBar:
    """One route's cost, the judges' part and the human layer's part apart."""

    label: str
    judges: float
    humans: float


def cost_svg(name: str, groups: Sequence[tuple[str, Sequence[CostBar]]], currency: str) -> str:
    """Cost per route, stacked: the judges' cost, then the human layer's; one panel per group
    (the run itself, or a simulated world)."""
    rows = sum(len(b) for _, b in groups)
    with _drawing(name, 7.6, 0.34 * rows + 0.55 * len(groups) + 0.7) as fig:
        axes = fig.subplots(
            len(groups), 1, sharex=True, height_ratios=[max(len(b), 1) for _, b in groups]
        )
        axes = list(axes) if len(groups) > 1 else [axes]
        labels = [b.label for _, bars in groups for b in bars]
        _margins(fig, _label_width(labels), top=0.45, hspace=0.45)
        top = max((b.judges + b.humans for _, bars in groups for b in bars), default=1.0) or 1.0
        for i, (ax, (title, bars)) in enumerate(zip(axes, groups, strict=True)):
            y = list(range(len(bars)))[::-1]
            ax.barh(y, [b.judges for b in bars], color=BLUE, height=0.6, label="judges (model)")
            ax.barh(
                y,
                [b.humans for b in bars],
                left=[b.judges for b in bars],
                color=ORANGE,
                height=0.6,
                label="human layer",
            )
            for yy, b in zip(y, bars, strict=True):
                ax.annotate(
                    f"{b.judges + b.humans:,.2f}",
                    xy=(b.judges + b.humans, yy),
                    xytext=(3, 0),
                    textcoords="offset points",
                    va="center",
                    fontsize=7.5,
                )
            ax.set_yticks(y, [b.label for b in bars])
            ax.set_title(title, loc="left")
            ax.grid(axis="y", visible=False)
            ax.set_xlim(0, top * 1.15)
            if i == 0:
                fig.legend(loc="upper right", ncols=2, frameon=False)
        axes[-1].set_xlabel(f"cost ({currency})")
        return _svg(name, fig)


def panels_svg(
    name: str,
    points: Sequence[tuple[str, str, float, float, float]],
) -> str:
    """Panel compositions: mean cost of a run against P(correct verdict), one panel per world,
    one colour per composition; points are (composition, world, cost, p, mcse)."""
    worlds = list(dict.fromkeys(w for _, w, _, _, _ in points))
    comps = list(dict.fromkeys(c for c, _, _, _, _ in points))
    palette = (BLUE, ORANGE, GREEN, PURPLE, RED, SKY, GREY)
    markers = ("o", "s", "^", "D", "v", "P", "X")
    with _drawing(name, 7.6, 3.0) as fig:
        axes = fig.subplots(1, max(len(worlds), 1), sharey=True, squeeze=False)[0]
        _margins(fig, 0.6, top=0.55, wspace=0.3)
        xs = [p[2] for p in points]
        span = (max(xs) - min(xs)) if xs else 1.0
        span = span or max(max(xs, default=1.0), 1.0)
        for ax, world in zip(axes, worlds, strict=True):
            for k, comp in enumerate(comps):
                pts = [p for p in points if p[1] == world and p[0] == comp]
                ax.errorbar(
                    [p[2] for p in pts],
                    [p[3] for p in pts],
                    yerr=[2 * p[4] for p in pts],
                    fmt=markers[k % len(markers)],
                    color=palette[k % len(palette)],
                    markersize=6,
                    capsize=3,
                    linestyle="none",
                    label=comp,
                )
            ax.set_title(world, loc="left")
            ax.set_ylim(-0.05, 1.08)
            ax.set_xlim(min(xs, default=0.0) - 0.1 * span, max(xs, default=1.0) + 0.1 * span)
            ax.set_xlabel("mean cost of a run")
        axes[0].set_ylabel("P(correct verdict)")
        handles, labels = axes[0].get_legend_handles_labels()
        fig.legend(
            handles,
            labels,
            loc="upper center",
            ncols=min(len(comps), 4),
            frameon=False,
            title=None,
        )
        return _svg(name, fig)


@dataclass(frozen=True)
class OCCurve:
    """One route's P(each verdict) over true h: ``points`` are (true h, {verdict: (p, mcse)})."""

    label: str
    points: tuple[tuple[float, dict[str, tuple[float, float]]], ...]
    # an exact or closed-form P(verdict) over true h drawn beside the simulated points:
    # (verdict, its basis, ((true h, p), ...))
    reference: tuple[str, str, tuple[tuple[float, float], ...]] | None = None


def oc_svg(name: str, curves: Sequence[OCCurve], threshold: float) -> str:
    """Operating characteristics: P(each verdict) against true h, one panel per route."""
    n = len(curves)
    cols = 2 if n > 1 else 1
    rows = math.ceil(n / cols)
    with _drawing(name, 7.6, 2.3 * rows + 0.9) as fig:
        grid = fig.subplots(rows, cols, sharex=True, sharey=True, squeeze=False)
        _margins(fig, 0.6, top=0.75, hspace=0.45, wspace=0.2)
        flat = [a for row in grid for a in row]
        for ax, c in zip(flat, curves, strict=False):
            hs = [h for h, _ in c.points]
            verdicts = list(dict.fromkeys(v for _, ps in c.points for v in ps))
            for v in verdicts:
                ps = [ps.get(v, (0.0, 0.0)) for _, ps in c.points]
                colour = _VERDICT_COLOURS.get(v, BLUE)
                ax.plot(hs, [p for p, _ in ps], marker="o", markersize=3, color=colour, label=v)
                ax.fill_between(
                    hs,
                    [max(0.0, p - 2 * m) for p, m in ps],
                    [min(1.0, p + 2 * m) for p, m in ps],
                    color=colour,
                    alpha=0.15,
                    linewidth=0,
                )
            if c.reference is not None:
                verdict, basis, ref = c.reference
                ax.plot(
                    [h for h, _ in ref],
                    [p for _, p in ref],
                    color="black",
                    linestyle=(0, (4, 2)),
                    linewidth=1.0,
                    label=f"{verdict} ({basis})",
                )
            ax.axvline(threshold, color=RED, linestyle="--", linewidth=0.9)
            ax.axvline(0.0, color="black", linewidth=0.8)
            ax.set_title(c.label, loc="left")
            ax.set_ylim(-0.02, 1.02)
        handles: dict[str, Any] = {}
        for ax in flat[:n]:
            for h, lab in zip(*ax.get_legend_handles_labels(), strict=True):
                handles.setdefault(lab, h)
        fig.legend(
            list(handles.values()), list(handles), loc="upper center", ncols=4, frameon=False
        )
        for ax in flat[n:]:
            ax.set_visible(False)
        for ax in grid[-1]:
            ax.set_xlabel("true h")
        for row in grid:
            row[0].set_ylabel("P(verdict)")
        return _svg(name, fig)


@dataclass(frozen=True)
class SheetRow:
    """One judge's fitted sheet: (estimate, (lo, hi)) or None for each column."""

    name: str
    rate: tuple[float, tuple[float, float]] | None
    position_bias: tuple[float, tuple[float, float]] | None
    kappa: tuple[float, tuple[float, float]] | None


def sheets_svg(
    name: str,
    rows: Sequence[SheetRow],
    human_rate: tuple[float, tuple[float, float]] | None,
    level: float,
) -> str:
    """Each judge's fitted sheet with intervals: rate, position bias, kappa with the humans."""
    with _drawing(name, 7.6, 0.38 * len(rows) + 1.3) as fig:
        axes = fig.subplots(1, 3, sharey=True)
        _margins(fig, _label_width([r.name for r in rows]), bottom=0.55, top=0.3, wspace=0.25)
        y = list(range(len(rows)))[::-1]
        columns = (
            ("rate (P prefers treatment)", [r.rate for r in rows], 0.5),
            ("position bias", [r.position_bias for r in rows], 0.0),
            ("kappa with humans", [r.kappa for r in rows], 0.0),
        )
        for ax, (title, cells, ref) in zip(axes, columns, strict=True):
            ax.axvline(ref, color="black", linewidth=0.8)
            for yy, cell in zip(y, cells, strict=True):
                if cell is None:
                    continue
                est, (lo, hi) = cell
                ax.errorbar(
                    [est], [yy], xerr=[[est - lo], [hi - est]], fmt="o", color=BLUE, capsize=3
                )
            ax.set_title(title, loc="left")
            ax.grid(axis="y", visible=False)
        if human_rate is not None:
            est, (lo, hi) = human_rate
            axes[0].axvspan(lo, hi, color=ORANGE, alpha=0.2, linewidth=0)
            axes[0].axvline(est, color=ORANGE, linewidth=1.2, label="human rate")
            axes[0].legend(loc="lower left", frameon=False, fontsize=7)
        axes[0].set_yticks(y, [r.name for r in rows])
        axes[0].set_ylim(-0.7, len(rows) - 0.3)
        axes[1].set_xlabel(f"each estimate with its {level:.0%} interval")
        return _svg(name, fig)
