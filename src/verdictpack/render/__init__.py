"""verdictpack.render: result objects to files (Markdown, JSON, CSV, and HTML with pictures).

Renders only what a frozen result object holds: nothing is recomputed, nothing parsed back. One
module per kind (``_sizing``, ``_verdict``, ``_judges``, ``_engine``, ``_battery``, ``_study``)
over the shared helpers of ``_markdown``; :data:`RENDERERS` maps each kind's result class to its
renderer and :func:`render` dispatches on the result's type. May import every floor below it
(kinds included, for the result types); never ``verify`` or the CLI.

``report.html`` (:mod:`._html`, pictures by :mod:`._plots`) is added beside ``report.md`` when
matplotlib (the ``report`` extra) can be imported; without it the other files are unchanged and
:data:`HTML_HINT` says how to get the page.
"""

from __future__ import annotations

import contextlib
import functools
from collections.abc import Callable, Mapping
from typing import Any

from verdictpack._parallel import Background, in_background
from verdictpack.kinds._battery import BatteryResult
from verdictpack.kinds._engine import EngineResult
from verdictpack.kinds._judges import JudgesResult
from verdictpack.kinds._sizing import SizingResult
from verdictpack.kinds._study import StudyResult
from verdictpack.kinds._verdict import VerdictResult
from verdictpack.render import _battery, _engine, _judges, _plots, _sizing, _study, _verdict
from verdictpack.render._markdown import registered_for

__all__ = ["HTML_HINT", "RENDERERS", "REPORTS", "html_available", "render", "texts"]

# the one line a run prints when report.html could not be drawn
HTML_HINT = "report.html needs matplotlib (the 'report' extra): pip install 'verdictpack[report]'"

# result class -> its files (name -> text); the only place a result meets its renderer
RENDERERS: dict[type, Callable[[Any], Mapping[str, str]]] = {
    SizingResult: _sizing.render_files,
    VerdictResult: _verdict.render_files,
    JudgesResult: _judges.render_files,
    EngineResult: _engine.render_files,
    BatteryResult: _battery.render_files,
    StudyResult: _study.render_files,
}


def html_available() -> bool:
    """Whether :func:`render` adds report.html (matplotlib can be imported)."""
    return _plots.available()


# result class -> its report.md alone (what report.html is drawn beside)
REPORTS: dict[type, Callable[[Any], str]] = {
    SizingResult: _sizing.render_sizing,
    VerdictResult: _verdict.render_verdict,
    JudgesResult: _judges.render_judges,
    EngineResult: _engine.render_engine_report,
    BatteryResult: _battery.render_battery,
    StudyResult: _study.render_study_report,
}

# result class -> its other texts that results.json alone determines, beside report.md
_MORE_TEXTS: dict[type, dict[str, Callable[[Any], str]]] = {
    EngineResult: {"registered_vs_extension.md": _engine.render_registered_vs_extension},
}


def texts(result: object) -> dict[str, str]:
    """The text files of a result that its results.json alone determines (report.md, and the
    engine's registered_vs_extension.md): what the self-audit renders again from results.json
    and compares with the folder's byte for byte."""
    report: Callable[[Any], str] = registered_for(REPORTS, result, "report")
    out = {"report.md": report(result)}
    for name, render_text in _MORE_TEXTS.get(type(result), {}).items():
        out[name] = render_text(result)
    return out


def _page(result: object, report: Callable[[Any], str]) -> str:
    from verdictpack.render._html import render_html

    return render_html(result, report(result))


def render(result: object) -> Mapping[str, str]:
    """The files of one result, by the renderer registered for its exact type; report.html
    beside report.md when matplotlib can be imported (:func:`html_available`).

    The page is drawn in a forked child while the other files are rendered here
    (:func:`verdictpack._parallel.in_background`: the same code on the same result, so the
    same bytes; inline where no child can run it); matplotlib is then imported by the child
    only."""
    renderer: Callable[[Any], Mapping[str, str]] = registered_for(RENDERERS, result, "renderer")
    page: Background[str] | None = None
    if html_available():
        report: Callable[[Any], str] = registered_for(REPORTS, result, "report")
        page = in_background(functools.partial(_page, result, report))
    try:
        files = renderer(result)
    except BaseException:
        if page is not None:
            page.cancel()
        raise
    if page is not None:
        # matplotlib there but failing to import: no page, and the run prints the hint
        with contextlib.suppress(ImportError):
            files = {**files, "report.html": page.result()}
    return files
