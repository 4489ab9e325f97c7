"""report.html in a real browser: headless Chromium loads each committed page (and pages rendered
fresh from small configs), takes a screenshot and fails on a console message, a missing picture
(an <svg> of zero size, a figure without its caption) or a blank page.

The page is copied to a private folder and a small checker script is added to the copy only (the
pages themselves carry no script); Chromium runs with a private profile, no network, no
extensions, under a timeout, and is killed when the timeout passes. Without Chromium the test
skips, except in CI (the env var ``CI`` set), where it fails: ``.ci/run`` installs Debian's
``chromium``.
"""

from __future__ import annotations

import os
import re
import shutil
import signal
import subprocess
from pathlib import Path

import pytest
from html_pages import KINDS, small_configs

from conftest import ROOT
from verdictpack._cli import run_config

COMMITTED = sorted((ROOT / "examples" / "outputs").glob("*/report.html"))
TIMEOUT = 60  # seconds per page
WINDOW = "1200,3000"

_CHECKER = """
<script>
window.addEventListener("load", function () {
  var bad = [];
  var svgs = document.querySelectorAll("svg");
  svgs.forEach(function (s, i) {
    var r = s.getBoundingClientRect();
    if (!(r.width > 0 && r.height > 0)) bad.push("svg " + i + " has no size");
    if (!s.querySelector("path, text")) bad.push("svg " + i + " draws nothing");
  });
  var figures = document.querySelectorAll("figure");
  figures.forEach(function (f, i) {
    var c = f.querySelector("figcaption");
    if (!c || c.textContent.trim().length < 20) bad.push("figure " + i + " has no caption");
    if (!f.querySelector("svg")) bad.push("figure " + i + " has no picture");
  });
  if (svgs.length !== figures.length) {
    bad.push(svgs.length + " svgs, " + figures.length + " figures");
  }
  if (document.body.innerText.trim().length < 200) bad.push("no text");
  var p = document.createElement("pre");
  p.id = "vp-check";
  p.textContent = "VP-CHECK " + svgs.length + " " + (bad.length ? "FAIL " + bad.join("; ") : "OK");
  document.body.appendChild(p);
});
</script>
"""


def _chromium() -> str | None:
    return shutil.which("chromium") or shutil.which("chromium-browser")


@pytest.fixture(scope="module")
def browser() -> str:
    path = _chromium()
    if path is None:
        if os.environ.get("CI"):
            pytest.fail("chromium is not installed; CI must run the browser test (.ci/run)")
        pytest.skip("chromium is not installed (the browser test runs in CI)")
    return path


@pytest.fixture(scope="module")
def fresh_pages(tmp_path_factory) -> dict[str, Path]:
    """kind -> a report.html rendered now from that kind's small config."""
    root = tmp_path_factory.mktemp("fresh-pages")
    configs = small_configs(root / "configs")
    pages = {}
    for kind in KINDS:
        page = root / kind / "report.html"
        page.parent.mkdir()
        page.write_text(run_config(str(configs[kind]))["report.html"], encoding="utf-8")
        pages[kind] = page
    return pages


def _load(browser: str, page: Path, work: Path) -> tuple[str, str, Path]:
    """Chromium on a checked copy of ``page``: (the DOM it ends with, its log, the screenshot)."""
    work.mkdir(parents=True, exist_ok=True)
    copy = work / "page.html"
    text = page.read_text(encoding="utf-8")
    copy.write_text(text.replace("</body>", _CHECKER + "</body>", 1), encoding="utf-8")
    shot = work / "screenshot.png"
    args = [
        browser,
        "--headless",
        "--no-sandbox",
        "--disable-gpu",
        "--disable-background-networking",
        "--disable-extensions",
        "--no-first-run",
        "--hide-scrollbars",
        f"--user-data-dir={work / 'profile'}",
        "--enable-logging=stderr",
        "--v=0",
        f"--screenshot={shot}",
        "--dump-dom",
        f"--window-size={WINDOW}",
        copy.as_uri(),
    ]
    proc = subprocess.Popen(
        args,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,  # its own process group: a timeout kills every child
    )
    try:
        out, err = proc.communicate(timeout=TIMEOUT)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.communicate()
        pytest.fail(f"{page}: chromium did not finish within {TIMEOUT} s (killed)")
    return out, err, shot


def _colours(png: Path) -> tuple[int, float]:
    """(distinct colours, share of pixels that are not the background) of a screenshot."""
    from PIL import Image

    with Image.open(png) as im:
        rgb = im.convert("RGB")
        colours = rgb.getcolors(maxcolors=1 << 20) or []
        total = rgb.width * rgb.height
    background = max(colours)[0] if colours else total
    return len(colours), 1.0 - background / total


def _check(browser: str, page: Path, work: Path) -> None:
    html = page.read_text(encoding="utf-8")
    dom, log, shot = _load(browser, page, work)
    console = [line for line in log.splitlines() if ":CONSOLE" in line]
    assert not console, f"{page}: console messages:\n" + "\n".join(console)
    verdict = re.search(r"VP-CHECK (\d+) (OK|FAIL[^<]*)", dom)
    assert verdict, f"{page}: the checker did not run (no verdict in the DOM)\n{log[-2000:]}"
    assert verdict.group(2) == "OK", f"{page}: {verdict.group(2)}"
    assert int(verdict.group(1)) == html.count("<svg"), f"{page}: pictures lost on the way"
    assert shot.is_file() and shot.stat().st_size > 0, f"{page}: no screenshot"
    n_colours, ink = _colours(shot)
    assert n_colours > 16, f"{page}: a blank page ({n_colours} colours)"
    assert ink > 0.01, f"{page}: a blank page ({ink:.2%} of the pixels drawn)"


@pytest.mark.parametrize("page", COMMITTED, ids=[p.parent.name for p in COMMITTED])
def test_a_committed_page_renders_in_chromium(browser: str, page: Path, tmp_path: Path) -> None:
    _check(browser, page, tmp_path)


@pytest.mark.parametrize("kind", KINDS)
def test_a_fresh_page_renders_in_chromium(
    browser: str, fresh_pages: dict[str, Path], kind: str, tmp_path: Path
) -> None:
    _check(browser, fresh_pages[kind], tmp_path)


def test_the_checker_catches_a_missing_picture(browser: str, tmp_path: Path) -> None:
    """The test can fail: a figure whose picture has no size and no caption is caught."""
    page = tmp_path / "bad.html"
    page.write_text(
        "<!DOCTYPE html><html><body><main><h1>bad</h1><p>"
        + "text " * 60
        + '</p><figure><svg width="0" height="0"><path d="M 0 0"/></svg></figure>'
        "</main></body></html>",
        encoding="utf-8",
    )
    dom, _, _ = _load(browser, page, tmp_path / "work")
    verdict = re.search(r"VP-CHECK (\d+) (OK|FAIL[^<]*)", dom)
    assert verdict and verdict.group(2).startswith("FAIL")
    assert "no size" in verdict.group(2) and "no caption" in verdict.group(2)
