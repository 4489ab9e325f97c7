"""report.html: every kind renders one self-contained, deterministic, bounded page; without
matplotlib the other files are unchanged and the run says how to get the page."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
from html_pages import KINDS, small_configs

from verdictpack._cli import _parsed, load_layer, main, run_config
from verdictpack.kinds._base import RunOptions
from verdictpack.render import HTML_HINT, _html, _plots, render

SRC = Path(__file__).resolve().parents[2] / "src"
MAX_PAGE_BYTES = 400_000


@pytest.fixture(scope="module")
def configs(tmp_path_factory) -> dict[str, Path]:
    return small_configs(tmp_path_factory.mktemp("html-configs"))


@pytest.fixture(scope="module")
def results(configs: dict[str, Path]) -> dict[str, object]:
    """kind -> the result object of its small config."""
    out = {}
    for kind in KINDS:
        source, name, parsed = _parsed(str(configs[kind]))
        out[kind] = load_layer(name).run(parsed, source, RunOptions())
    return out


@pytest.fixture(scope="module")
def files(results: dict[str, object]) -> dict[str, dict[str, str]]:
    """kind -> the rendered files of its small config."""
    return {kind: dict(render(results[kind])) for kind in KINDS}


def _ids(page: str) -> list[str]:
    return re.findall(r'\bid="([^"]+)"', page)


@pytest.mark.parametrize("kind", KINDS)
def test_every_kind_has_a_page_beside_its_report(files, kind: str) -> None:
    page = files[kind]["report.html"]
    assert page.startswith("<!DOCTYPE html>\n<html")
    assert page.rstrip().endswith("</html>")
    title = files[kind]["report.md"].split("\n", 1)[0].lstrip("# ")
    assert f"<h1>{title}</h1>" in page.replace("&quot;", '"')
    # the summary box opens the page, right under the title
    assert page.index('<section class="summary"') < page.index("<h2>", page.index("</section>"))
    # every picture is a figure with a caption and an accessible label
    figures = re.findall(r"<figure\b.*?</figure>", page, flags=re.S)
    assert page.count("<svg") == len(figures) == page.count("</svg>")
    for fig in figures:
        assert "<figcaption><strong>Figure" in fig
        assert re.search(r'<svg [^>]*aria-label="[^"]{40,}"', fig)


@pytest.mark.parametrize(
    ("kind", "pictures"),
    [
        (
            "engine",
            {"engine-sequence", "engine-funnel", "engine-kappa", "engine-cost", "engine-oc"},
        ),
        ("study", {"study-sequence", "study-funnel", "study-kappa", "study-sheets", "study-cost"}),
        ("judges", {"judges-panels", "judges-cost"}),
        ("verdict", {"verdict-oc", "verdict-cost"}),
        ("sizing", set()),
    ],
)
def test_each_kind_draws_its_pictures(files, kind: str, pictures: set[str]) -> None:
    page = files[kind]["report.html"]
    assert set(re.findall(r'<figure id="figure-([^"]+)"', page)) == pictures


def test_the_battery_draws_its_curves_from_the_grid_when_it_has_one(files) -> None:
    results = json.loads(files["battery"]["results.json"])
    page = files["battery"]["report.html"]
    name = "battery-grid" if results.get("true_h_grid") else "battery-oc"
    assert f'<figure id="figure-{name}"' in page
    assert '<figure id="figure-battery-cost"' in page


@pytest.mark.parametrize("kind", KINDS)
def test_a_page_is_self_contained(files, kind: str) -> None:
    page = files[kind]["report.html"]
    assert "http://" not in page and "https://" not in page
    assert "<script" not in page.lower()
    assert "<link" not in page.lower()
    assert "@import" not in page
    assert not re.search(r"\ssrc=", page)
    # the only url() and href references point inside the page
    assert all(u.startswith("#") for u in re.findall(r"url\(([^)]*)\)", page))
    assert all(h.startswith("#") for h in re.findall(r'href="([^"]*)"', page))


@pytest.mark.parametrize("kind", KINDS)
def test_ids_are_unique_and_every_reference_resolves(files, kind: str) -> None:
    page = files[kind]["report.html"]
    ids = _ids(page)
    assert len(ids) == len(set(ids))
    refs = set(re.findall(r'href="#([^"]+)"', page)) | set(re.findall(r"url\(#([^)]+)\)", page))
    assert refs <= set(ids)


@pytest.mark.parametrize("kind", KINDS)
def test_a_page_is_bounded(files, kind: str) -> None:
    assert len(files[kind]["report.html"].encode()) < MAX_PAGE_BYTES


def test_two_renders_are_byte_identical(files, results) -> None:
    for kind in KINDS:
        assert render(results[kind])["report.html"] == files[kind]["report.html"], kind


def test_a_run_writes_the_page_its_result_renders(files, configs) -> None:
    assert run_config(str(configs["study"]))["report.html"] == files["study"]["report.html"]


def test_the_page_says_what_the_markdown_says(files) -> None:
    """Every table cell of report.md is on the page (the same rows, the same numbers)."""
    for kind in KINDS:
        md, page = files[kind]["report.md"], files[kind]["report.html"]
        cells = [
            c.strip()
            for line in md.splitlines()
            if line.startswith("|") and not line.startswith("|---")
            for c in line.strip("|").split(" | ")
        ]
        text = re.sub(r"<[^>]+>", "", page.replace("<br>", "\n"))
        text = text.replace("&lt;", "<").replace("&gt;", ">").replace("&amp;", "&")
        for cell in cells:
            plain = re.sub(r"\*\*|`", "", cell).replace("<br>", "\n").strip()
            for part in plain.split("\n"):
                assert part in text, (kind, part)


# ----------------------------------------------------------------------------------------------
# The pieces
# ----------------------------------------------------------------------------------------------


def test_markdown_subset_to_html() -> None:
    md = (
        "# Title\n\n- **bold** a < b\n- `code` & *em*\n\nplain\ntext\n\n"
        "| a | b |\n|---|---|\n| 1 | x<br>y |\n\n## Section\n"
    )
    out = _html.markdown_to_html(md)
    assert "<h1>Title</h1>" in out
    assert "<li><strong>bold</strong> a &lt; b</li>" in out
    assert "<li><code>code</code> &amp; <em>em</em></li>" in out
    assert "<p>plain text</p>" in out
    assert "<th>a</th><th>b</th>" in out
    assert "<td>1</td><td>x<br>y</td>" in out
    assert "<h2>Section</h2>" in out


def test_thinning_keeps_the_marks_and_the_bound() -> None:
    assert _plots.thin(10) == list(range(10))
    keep = [3, 77_777, 99_998]
    idx = _plots.thin(100_000, keep)
    assert len(idx) <= _plots.MAX_POINTS + len(keep)
    assert {0, 99_999, *keep} <= set(idx)
    assert idx == sorted(set(idx)) == _plots.thin(100_000, keep)


def test_a_long_trace_stays_small() -> None:
    """100,000 roots: the picture keeps at most MAX_POINTS roots a line (and every state
    change), so a long study's page stays small."""
    n = 100_000
    rows = []
    for t in range(1, n + 1):
        w = 1.0 / (1.0 + t / 50.0) ** 0.5
        state = "CONTINUE" if t < 61_234 else "EFFECT_SUPPORTED"
        rows.append(
            {
                "root": t,
                "model_bounds": [max(0.0, 0.7 - w), min(1.0, 0.7 + w)],
                "human_bounds": [max(0.0, 0.5 - w), min(1.0, 0.5 + w)],
                "diff_bounds": [max(-1.0, 0.2 - 2 * w), min(1.0, 0.2 + 2 * w)],
                "h_interval": [0.4 - 3 * w, 0.4 + 3 * w],
                "state": {"registered": state},
            }
        )

    class Track:
        construction = "hybrid"
        threshold_h = 0.3
        roots_at_verdict = 61_234
        verdict = "EFFECT_SUPPORTED"

    fig = _html._trace(rows, Track(), "synthetic", "long-sequence")
    assert fig is not None
    assert len(fig.svg.encode()) < 120_000
    assert "over 100,000 roots" in fig.caption
    longest = max(p.count(" L ") for p in re.findall(r' d="([^"]*)"', fig.svg))
    assert longest <= 2 * _plots.MAX_POINTS + 10  # a band: both bounds, at most MAX_POINTS each


# ----------------------------------------------------------------------------------------------
# Without matplotlib
# ----------------------------------------------------------------------------------------------

_WITHOUT = """
import sys
sys.modules["matplotlib"] = None  # any import of matplotlib now raises ImportError
from verdictpack._cli import main
sys.exit(main(sys.argv[1:]))
"""


def _cli(args: list[str], *, without_matplotlib: bool, hash_seed: str = "0"):
    env = {**os.environ, "PYTHONPATH": str(SRC), "PYTHONHASHSEED": hash_seed}
    code = _WITHOUT if without_matplotlib else "import sys\nfrom verdictpack._cli import main\n"
    if not without_matplotlib:
        code += "sys.exit(main(sys.argv[1:]))\n"
    return subprocess.run(
        [sys.executable, "-c", code, *args],
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )


def _folder(out: Path) -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in out.iterdir() if p.is_file()}


@pytest.mark.parametrize("kind", ["sizing", "study"])
def test_without_matplotlib_no_page_the_rest_byte_identical_and_a_hint(
    configs, tmp_path: Path, kind: str
) -> None:
    with_out, without_out = tmp_path / "with", tmp_path / "without"
    a = _cli([str(configs[kind]), "--out", str(with_out)], without_matplotlib=False)
    b = _cli([str(configs[kind]), "--out", str(without_out)], without_matplotlib=True)
    assert a.returncode == 0 and b.returncode == 0, (a.stderr, b.stderr)
    with_files, without_files = _folder(with_out), _folder(without_out)
    assert "report.html" in with_files and "report.html" not in without_files
    assert set(with_files) - {"report.html"} == set(without_files)
    for name in without_files:
        if name in ("provenance.json", ".verdictpack-output.json"):
            continue  # the wall clock; the marker lists the folder's files
        assert with_files[name] == without_files[name], name
    a_prov = json.loads(with_files["provenance.json"])
    b_prov = json.loads(without_files["provenance.json"])
    a_prov.pop("wall_clock"), b_prov.pop("wall_clock")
    assert a_prov == b_prov
    assert b.stderr.count(HTML_HINT) == 1
    assert "pip install 'verdictpack[report]'" in b.stderr
    assert HTML_HINT not in a.stderr


def test_the_page_does_not_depend_on_the_hash_seed(configs, tmp_path: Path, files) -> None:
    """Another process, another PYTHONHASHSEED: the same bytes."""
    out = tmp_path / "other"
    run = _cli(
        [str(configs["study"]), "--out", str(out), "--quiet"],
        without_matplotlib=False,
        hash_seed="4711",
    )
    assert run.returncode == 0, run.stderr
    assert (out / "report.html").read_text(encoding="utf-8") == files["study"]["report.html"]


def test_the_self_audit_passes_on_a_folder_with_the_page(configs, tmp_path: Path) -> None:
    out = tmp_path / "study"
    assert main([str(configs["study"]), "--out", str(out), "--quiet"]) == 0
    assert (out / "report.html").is_file()
    assert main(["audit", str(out)]) == 0
