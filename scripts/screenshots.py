"""Makes the README's screenshots of report.html (docs/screenshots/*.png) in headless Chromium.

Run by hand by maintainers, from the repository root, after the example outputs are regenerated::

    python scripts/screenshots.py            # both screenshots
    python scripts/screenshots.py --fresh    # render the pages now instead of the committed ones

Each screenshot is the top of one example's report.html -- the summary, the verdict table and the
first picture (the confidence sequences) -- at a window 1200 px wide: ``engine_report.png`` from
``examples/outputs/engine_summarization/report.html``, ``study_report.png`` from
``examples/outputs/study_summarization/report.html``. Where a committed page is missing (or with
``--fresh``) the example config is run in a temporary folder and its page is used. Chromium runs
with a private profile, no network and no extensions, and is killed after 60 s.
"""

from __future__ import annotations

import argparse
import os
import shutil
import signal
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
OUT = ROOT / "docs" / "screenshots"
# (example stem, screenshot, window height in px: the summary, the verdict and the first picture)
SHOTS = (
    ("engine_summarization", "engine_report.png", 2100),
    ("study_summarization", "study_report.png", 2300),
)
TIMEOUT = 60


def _page(stem: str, work: Path, fresh: bool) -> Path:
    committed = ROOT / "examples" / "outputs" / stem / "report.html"
    if committed.is_file() and not fresh:
        return committed
    sys.path.insert(0, str(ROOT / "src"))
    from verdictpack._cli import run_config

    files = run_config(str(ROOT / "examples" / f"{stem}.json"))
    if "report.html" not in files:
        raise SystemExit("no report.html: install matplotlib (pip install 'verdictpack[report]')")
    page = work / stem / "report.html"
    page.parent.mkdir(parents=True)
    page.write_text(files["report.html"], encoding="utf-8")
    return page


def shoot(browser: str, page: Path, png: Path, height: int, work: Path) -> None:
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
        f"--screenshot={png}",
        f"--window-size=1200,{height}",
        page.resolve().as_uri(),
    ]
    proc = subprocess.Popen(
        args, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, start_new_session=True
    )
    try:
        _, err = proc.communicate(timeout=TIMEOUT)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.communicate()
        raise SystemExit(f"{page}: chromium did not finish within {TIMEOUT} s") from None
    if not png.is_file():
        raise SystemExit(f"{page}: no screenshot ({err.decode(errors='replace')[-500:]})")


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    p.add_argument("--fresh", action="store_true", help="render the pages now")
    args = p.parse_args(argv)
    browser = shutil.which("chromium") or shutil.which("chromium-browser")
    if browser is None:
        raise SystemExit("chromium not found (Debian: apt-get install chromium)")
    OUT.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix="verdictpack-shots-") as tmp:
        work = Path(tmp)
        for stem, name, height in SHOTS:
            page = _page(stem, work, args.fresh)
            shoot(browser, page, OUT / name, height, work)
            print(f"{OUT / name}: {page.relative_to(ROOT) if page.is_relative_to(ROOT) else stem}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
