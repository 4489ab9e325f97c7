"""The shared render helpers on the values that trip formatters: None, Figures, rounding edges."""

from __future__ import annotations

import pytest

from verdictpack._results import closed_form, exact, simulated
from verdictpack.render._markdown import (
    fmt_alpha,
    fmt_count,
    fmt_fig,
    fmt_mean,
    fmt_money,
    fmt_p,
    fmt_x,
    render_results_json,
    table,
)


@pytest.mark.parametrize(
    ("value", "text"),
    [
        (None, "—"),
        (0.0, "0.0000"),
        (1.0, "1.0000"),
        (0.99995, "1.0000"),  # rounds up at the fourth decimal
        (0.00004, "0.0000"),
        (-0.0, "-0.0000"),
        (exact(0.25), "0.2500"),
        (simulated(0.8, 0.004, 1000), "0.8000"),  # fmt_p drops the MCSE
    ],
)
def test_fmt_p(value, text) -> None:
    assert fmt_p(value) == text


def test_fmt_alpha_and_fmt_x() -> None:
    assert fmt_alpha(0.0025) == "0.00250"
    assert fmt_alpha(exact(0.01)) == "0.01000"
    assert fmt_x(None) == "—"
    assert fmt_x(0.123456) == "0.1235"
    assert fmt_x(closed_form(2), digits=1) == "2.0"


@pytest.mark.parametrize(
    ("value", "text"),
    [
        (None, "none issued"),
        (0, "0.00"),
        (1234567.891, "1,234,567.89"),
        (0.005, "0.005"),  # below 1: the significant digits it has, not 0.01
        (0.0005, "0.0005"),
        (0.2366666, "0.236667"),
        (0.00001234, "0.00001234"),
        (0.5, "0.50"),
        (-12.5, "-12.50"),
        (exact(1000), "1,000.00"),
    ],
)
def test_fmt_money(value, text) -> None:
    assert fmt_money(value) == text


def test_fmt_count() -> None:
    assert fmt_count(None) == "—"
    assert fmt_count(12) == "12"
    assert fmt_count(12.0) == "12"
    assert fmt_count(12.5) == "12.50"
    assert fmt_count(exact(7)) == "7"
    assert fmt_count(closed_form(3.25)) == "3.25"


def test_fmt_fig_and_fmt_mean_show_the_mcse_only_when_simulated() -> None:
    sim = simulated(0.81234, 0.0123, 500)
    assert fmt_fig(None) == "—"
    assert fmt_fig(sim) == "0.8123 ± 0.0123"
    assert fmt_fig(sim, 3) == "0.812 ± 0.0123"
    assert fmt_fig(exact(0.5)) == "0.5000"
    assert fmt_mean(None) == "none issued"
    assert fmt_mean(simulated(1234.56, 12.34, 100)) == "1,234.6 ± 12.3"
    assert fmt_mean(exact(1234.56), 2) == "1,234.56"


def test_table_shape_and_cells() -> None:
    text = table(["a", "b"], [[1, None], ["x|y", 0.5]])
    # a "|" in a cell is escaped (issue 22 row 12: it forged a cell), raw HTML neutralised
    assert text == "| a | b |\n|---|---|\n| 1 | None |\n| x\\|y | 0.5 |\n"
    assert table(["<i>"], [["a<br>b <script>", "l1\nl2"]]) == (
        "| &lt;i> |\n|---|\n| a<br>b &lt;script> | l1 l2 |\n"
    )
    assert table(["only"], []) == "| only |\n|---|\n"


def test_results_json_drops_the_provenance() -> None:
    from dataclasses import dataclass

    @dataclass(frozen=True)
    class R:
        kind: str
        provenance: dict

    text = render_results_json(R("k", {"seed": 1}))
    assert '"provenance"' not in text and '"kind": "k"' in text
