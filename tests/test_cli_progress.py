"""Progress: for a run over two seconds, for every kind, a line drawn in place on a terminal and
erased at the end, plain lines every few seconds elsewhere (a log file); none with --quiet or
--progress off; never a change to any output file."""

from __future__ import annotations

import io
import json
import os
import pty
import select
import subprocess
import sys
import time
from pathlib import Path

import pytest

from conftest import load_example, write_tiny_study
from verdictpack import _cli
from verdictpack._cli import ProgressLine, main, progress_line
from verdictpack._errors import UsageError


class _Clock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def test_the_line_waits_two_seconds_redraws_at_most_four_times_a_second_and_is_erased(
    monkeypatch,
) -> None:
    monkeypatch.setenv("COLUMNS", "200")
    clock, out = _Clock(), io.StringIO()
    line = ProgressLine(out, clock=clock)
    line("verdict: blocks", 1, 10)
    clock.now += 1.9
    line("verdict: blocks", 2, 10)
    assert out.getvalue() == ""  # a run under two seconds shows nothing
    clock.now += 0.2
    line("verdict: blocks", 3, 10)
    first = out.getvalue()
    assert first.startswith("\rverdictpack: verdict: blocks [")
    # 2 blocks in 2.1 s since the first call: the rate, the time left at it, the time so far
    assert "3/10 (30%), 0.952/s, ETA 7 s, 2 s elapsed" in first and "\n" not in first
    clock.now += 0.1
    line("verdict: blocks", 4, 10)  # within the interval: not redrawn
    assert out.getvalue() == first
    clock.now += 0.2
    line("engine: power report", 10, 10)
    assert out.getvalue().count("\r") == 2 and "10/10 (100%)" in out.getvalue()
    width = len(out.getvalue().split("\r")[-1])
    line.close()
    assert out.getvalue().endswith("\r" + " " * width + "\r")  # erased, cursor at column 1
    line.close()  # twice: nothing more
    assert out.getvalue().endswith("\r" + " " * width + "\r")


def test_plain_lines_come_every_interval_one_per_line_and_are_never_erased() -> None:
    clock, out = _Clock(), io.StringIO()
    line = ProgressLine(out, plain=True, clock=clock)
    assert line.interval == 5.0
    for step in range(40):  # 20 s, one call every half second, a block each
        line("live study (spend 0.5 of 2): roots committed", step, 100)
        clock.now += 0.5
    line.close()
    shown = out.getvalue().splitlines(keepends=True)
    assert "\r" not in out.getvalue() and all(s.endswith("\n") for s in shown)
    # at 2 s (the delay), then every 5 s: 2, 7, 12, 17
    assert [s.split(", ")[-1] for s in shown] == [f"{t} s elapsed\n" for t in (2, 7, 12, 17)]
    assert shown[1] == (
        "verdictpack: progress live study (spend 0.5 of 2): roots committed 14/100 (14%), "
        "2/s, ETA 43 s, 7 s elapsed\n"
    )


def test_a_long_what_gives_way_on_a_narrow_terminal(monkeypatch) -> None:
    monkeypatch.setenv("COLUMNS", "80")
    clock, out = _Clock(), io.StringIO()
    line = ProgressLine(out, delay=0.0, clock=clock)
    line("live study (h-interval [0.1, 0.9]; 12 calls sent): roots committed", 0, 40)
    clock.now += 10
    line("live study (h-interval [0.1, 0.9]; 12 calls sent): roots committed", 4, 40)
    drawn = out.getvalue().split("\r")[-1]
    assert len(drawn.rstrip()) <= 79 and drawn.startswith("verdictpack: live study (h-i...")
    assert drawn.rstrip().endswith("4/40 (10%), 0.4/s, ETA 1 min 30 s, 10 s elapsed"), drawn


def test_the_modes_a_bar_on_a_terminal_plain_elsewhere() -> None:
    assert progress_line("off") is None and progress_line(False) is None
    line = progress_line(_Terminal())
    assert line is not None and not line.plain and line.interval == 0.25
    line = progress_line(io.StringIO())
    assert line is not None and line.plain and line.interval == 5.0
    line = progress_line("plain", 0.5)
    assert line is not None and line.plain and line.interval == 0.5
    for bad in (0.0, -1.0, float("nan"), float("inf")):
        with pytest.raises(UsageError, match="--progress-interval: expected seconds > 0"):
            progress_line("plain", bad)


def test_a_short_run_draws_nothing_and_close_writes_nothing() -> None:
    out = io.StringIO()
    line = ProgressLine(out)
    line("x", 1, 2)
    line.close()
    assert out.getvalue() == ""


class _Eager(ProgressLine):
    """The CLI's line without the two-second wait (so a quick test run shows it)."""

    made = 0

    def __init__(self, out, plain=False, interval=None) -> None:  # type: ignore[no-untyped-def]
        super().__init__(out, delay=0.0, interval=0.0, plain=plain)
        _Eager.made += 1


class _Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def _small(name: str) -> dict:
    data = load_example(name)
    if data["kind"] in ("verdict", "judges"):
        data["replicates"] = 200
    if data["kind"] == "engine":
        data["power"]["replicates"] = 50
        data["human"]["baseline"]["replicates"] = 1000
    if data["kind"] == "sizing":
        data["simulation"]["replicates"] = 1000
    return data


@pytest.mark.parametrize(
    "name",
    [
        "sizing_summarization.json",
        "verdict_summarization.json",
        "judges_summarization.json",
        "engine_summarization.json",
        "study",
    ],
)
def test_every_kind_tells_its_progress_and_no_file_changes(
    tmp_path: Path, monkeypatch, name: str
) -> None:
    if name == "study":
        cfg = write_tiny_study(tmp_path / "study")
    else:
        cfg = tmp_path / name
        cfg.write_text(json.dumps(_small(name)))
    monkeypatch.setattr(_cli, "ProgressLine", _Eager)
    monkeypatch.setattr(sys, "stderr", _Terminal())
    assert main([str(cfg), "--out", str(tmp_path / "a")]) == 0
    shown = sys.stderr.getvalue()  # type: ignore[attr-defined]
    assert "\rverdictpack: " in shown and "(100%)" in shown, shown
    # the line is erased before the closing line
    assert "\r\n" not in shown and shown.splitlines()[-1].lstrip().startswith("verdictpack")
    assert main([str(cfg), "--out", str(tmp_path / "b"), "--quiet"]) == 0
    for f in (tmp_path / "a").iterdir():
        if f.name not in ("provenance.json", ".verdictpack-output.json"):
            assert f.read_bytes() == (tmp_path / "b" / f.name).read_bytes(), f.name


def test_plain_lines_when_not_a_terminal_none_when_quiet_or_off(
    tmp_path: Path, monkeypatch, capsys
) -> None:
    cfg = tmp_path / "v.json"
    cfg.write_text(json.dumps(_small("verdict_summarization.json")))
    monkeypatch.setattr(_cli, "ProgressLine", _Eager)
    _Eager.made = 0
    assert main([str(cfg), "--out", str(tmp_path / "a")]) == 0  # capsys: not a terminal
    err = capsys.readouterr().err
    assert "\r" not in err and _Eager.made == 1
    assert "verdictpack: progress verdict: " in err and err.endswith(f"files in {tmp_path}/a\n")
    assert main([str(cfg), "--out", str(tmp_path / "b"), "--progress", "off"]) == 0
    assert "progress" not in capsys.readouterr().err and _Eager.made == 1
    monkeypatch.setattr(sys, "stderr", _Terminal())
    assert main([str(cfg), "--out", str(tmp_path / "c"), "--quiet"]) == 0
    assert sys.stderr.getvalue() == "" and _Eager.made == 1  # type: ignore[attr-defined]
    assert main([str(cfg), "--progress", "sometimes"]) == 2


def _run_on_a_terminal(args: list[str]) -> str:
    """Run the CLI with stderr (and stdout) on a pseudo-terminal; everything it wrote."""
    leader, follower = pty.openpty()
    proc = subprocess.Popen(
        [sys.executable, "-m", "verdictpack", *args],
        stdin=subprocess.DEVNULL,
        stdout=follower,
        stderr=follower,
        env={**os.environ, "COLUMNS": "200"},
    )
    os.close(follower)
    chunks: list[bytes] = []
    deadline = time.monotonic() + 300
    while time.monotonic() < deadline:
        ready, _, _ = select.select([leader], [], [], 1.0)
        if ready:
            try:
                data = os.read(leader, 4096)
            except OSError:  # the child closed the terminal
                break
            if not data:
                break
            chunks.append(data)
        elif proc.poll() is not None:
            break
    proc.wait(timeout=60)
    os.close(leader)
    assert proc.returncode == 0, b"".join(chunks)
    return b"".join(chunks).decode("utf-8", "replace")


def test_a_slow_run_on_a_terminal_shows_the_line_and_quiet_hides_it(tmp_path: Path) -> None:
    """The real CLI on a pseudo-terminal: a verdict run of several seconds draws the line
    (the real two-second wait), then erases it before its closing line; --quiet draws none."""
    cfg = tmp_path / "v.json"  # about 3 s on an idle machine of this project's size
    cfg.write_text(json.dumps(load_example("verdict_summarization.json")))
    shown = _run_on_a_terminal([str(cfg), "--out", str(tmp_path / "a")])
    assert "\rverdictpack: verdict: " in shown and " blocks [" in shown, shown
    assert shown.rstrip().splitlines()[-1].strip().startswith("verdictpack")
    quiet = _run_on_a_terminal([str(cfg), "--out", str(tmp_path / "b"), "--quiet"])
    assert "\r" not in quiet.replace("\r\n", "\n"), quiet
