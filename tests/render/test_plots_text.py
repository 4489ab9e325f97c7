"""Issue 22 row 8 (mathtext): judge names and currencies are drawn as literal text, never parsed
as matplotlib mathtext (a ``$...$`` name raised, or was silently drawn as math)."""

from __future__ import annotations

import html
import re

import pytest

pytest.importorskip("matplotlib")

from verdictpack.render._plots import CostBar, SheetRow, cost_svg, sheets_svg

NAMES = ("gpt-4o ($2.50 in, $10 out)", "judge $x^2$", r"bad $\notacommand{$ name$")


def _text(svg: str) -> str:
    """The text drawn: every <text> element's content (matplotlib also copies a label into an
    SVG comment, which proves nothing)."""
    return "\n".join(html.unescape(t) for t in re.findall(r"<text\b[^>]*>([^<]*)</text>", svg))


def test_names_with_dollars_are_drawn_literally_in_sheets() -> None:
    rows = [SheetRow(n, (0.7, (0.6, 0.8)), (0.0, (-0.1, 0.1)), None) for n in NAMES]
    svg = _text(sheets_svg("sheets-test", rows, None, 0.95))
    for name in NAMES:
        assert name in svg.splitlines()


def test_cost_plot_draws_route_names_and_currency_literally() -> None:
    bars = [CostBar(NAMES[0], 1.0, 2.0), CostBar(NAMES[2], 0.5, 0.0)]
    svg = _text(cost_svg("cost-test", [("this run", bars)], "US$ ($)"))
    lines = svg.splitlines()
    assert NAMES[0] in lines and NAMES[2] in lines and "cost (US$ ($))" in lines
