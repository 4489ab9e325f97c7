"""One renderer per result type, found by the result's type; an unknown type is refused."""

from __future__ import annotations

import importlib

import pytest

import verdictpack.render as render_module
from verdictpack._cli import KINDS, load_layer
from verdictpack.render import RENDERERS, render


def _result_types() -> set[type]:
    types = set()
    for kind, module_name in KINDS.items():
        module = importlib.import_module(module_name)
        types.add(getattr(module, f"{kind.capitalize()}Result"))
        assert load_layer(kind).run is not None
    return types


def test_every_kind_result_type_has_a_renderer() -> None:
    assert set(RENDERERS) == _result_types()
    assert all(callable(fn) for fn in RENDERERS.values())


def test_a_layer_carries_no_renderer() -> None:
    for kind in KINDS:
        assert not hasattr(load_layer(kind), "render")


def test_an_unknown_type_is_refused_by_name() -> None:
    class NotAResult:
        pass

    with pytest.raises(TypeError, match="NotAResult"):
        render(NotAResult())


def test_a_subclass_is_not_its_parent() -> None:
    """Dispatch is by exact type: a subclass must register its own renderer."""
    (parent,) = [t for t in RENDERERS if t.__name__ == "SizingResult"]
    child = type("ChildResult", (parent,), {})
    with pytest.raises(TypeError, match="ChildResult"):
        render(child.__new__(child))


def test_dispatch_reaches_the_registered_renderer(monkeypatch) -> None:
    (cls,) = [t for t in RENDERERS if t.__name__ == "VerdictResult"]
    monkeypatch.setitem(RENDERERS, cls, lambda r: {"report.md": "marker"})
    monkeypatch.setattr(render_module, "html_available", lambda: False)
    assert render(cls.__new__(cls)) == {"report.md": "marker"}


def test_the_page_joins_the_renderer_s_files_when_it_can_be_drawn(monkeypatch) -> None:
    (cls,) = [t for t in RENDERERS if t.__name__ == "VerdictResult"]
    monkeypatch.setitem(RENDERERS, cls, lambda r: {"report.md": "# marker\n"})
    # the page is drawn from the kind's report function (in a child where one can run)
    monkeypatch.setitem(render_module.REPORTS, cls, lambda r: "# marker\n")
    monkeypatch.setattr(render_module, "html_available", lambda: True)
    monkeypatch.setattr(
        "verdictpack.render._html.render_html", lambda r, md: f"<html>{md.strip()}</html>"
    )
    files = render(cls.__new__(cls))
    assert files == {"report.md": "# marker\n", "report.html": "<html># marker</html>"}


def test_every_renderer_has_its_report_function_and_they_agree() -> None:
    """report.html is drawn beside the report that REPORTS gives; for every kind it is the
    report.md its renderer writes (the html tests compare the two pages' text per kind)."""
    assert set(render_module.REPORTS) == set(RENDERERS)
    import inspect

    for cls, renderer in RENDERERS.items():
        report = render_module.REPORTS[cls]
        # a kind of report.md and results.json only: its renderer is made from the report
        made_from = inspect.getclosurevars(renderer).nonlocals.get("report")
        if made_from is not None:
            assert made_from is report, (cls.__name__, report.__name__)
        else:
            assert report.__name__ in inspect.getsource(renderer), (cls.__name__, report.__name__)
