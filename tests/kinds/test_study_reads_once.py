"""A study reads its data folder once: every data file opened once (a study and a live study
alike), and a live study reads, gates and computes its verdict once (its committed prefix
valued from the study as first read: nothing re-read, re-gated or computed again)."""

from __future__ import annotations

import builtins
import collections
import io
import json
import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

import verdictpack.kinds._study as study
import verdictpack.kinds._study_live as study_live
from conftest import write_tiny_study
from verdictpack._cli import main
from verdictpack.core._tracks import TrackStream

pytest.importorskip("httpx")

from live_helpers import live_study, serve, server_config


def _count_opens(monkeypatch: pytest.MonkeyPatch, folder: Path) -> collections.Counter[str]:
    """Every open of a file under ``folder`` (by os.open, open or Path.open), by file name."""
    opened: collections.Counter[str] = collections.Counter()
    root = os.path.realpath(folder)

    def note(path: Any) -> None:
        if isinstance(path, str | os.PathLike):
            real = os.path.realpath(os.fspath(path))
            if real.startswith(root + os.sep):
                opened[os.path.relpath(real, root)] += 1

    def wrap(fn: Callable[..., Any]) -> Callable[..., Any]:
        def counted(path: Any, *args: Any, **kwargs: Any) -> Any:
            note(path)
            return fn(path, *args, **kwargs)

        return counted

    monkeypatch.setattr(os, "open", wrap(os.open))
    monkeypatch.setattr(builtins, "open", wrap(builtins.open))
    monkeypatch.setattr(io, "open", wrap(io.open))
    monkeypatch.setattr(Path, "open", wrap(Path.open))
    return opened


def _spy(monkeypatch: pytest.MonkeyPatch, name: str) -> list[int]:
    """Calls of the study's function ``name``, by the study and the live study alike."""
    calls: list[int] = []
    fn = getattr(study, name)

    def spied(*args: Any, **kwargs: Any) -> Any:
        calls.append(1)
        return fn(*args, **kwargs)

    for module in (study, study_live):
        if hasattr(module, name):
            monkeypatch.setattr(module, name, spied)
    return calls


def _quick(cfg: Path) -> None:
    """Few simulated continuations of the INCONCLUSIVE verdict: the reads are the point."""
    config = json.loads(cfg.read_text())
    config["planning"] = {"replicates": 100, "max_extra_roots": 500}
    cfg.write_text(json.dumps(config))


def test_a_study_opens_each_data_file_once(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    cfg = write_tiny_study(tmp_path / "study")
    _quick(cfg)
    data = cfg.parent / "data"
    names = {p.name for p in data.iterdir()}
    opened = _count_opens(monkeypatch, data)
    assert main([str(cfg), "--out", str(tmp_path / "out"), "--quiet"]) == 0
    assert dict(opened) == dict.fromkeys(names, 1)


def test_a_live_study_reads_gates_and_decides_once(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """It read every data file twice (a second ``run_study`` over the files after the live
    run), gated and valued them again, and serialised the ledger's rows to CSV to hash them."""
    probe, _ = live_study(tmp_path / "probe", "http://127.0.0.1:9/v1")
    with serve(server_config(probe)) as url:
        cfg, _ = live_study(tmp_path / "run", url, roots=12, cap=12)
        _quick(cfg)
        data = cfg.parent / "data"
        names = {p.name for p in data.iterdir()}
        opened = _count_opens(monkeypatch, data)
        reads = _spy(monkeypatch, "load_study")
        prepared = _spy(monkeypatch, "prepare_study")
        verdicts = _spy(monkeypatch, "run_study")
        traced = _traces(monkeypatch)
        steps = _steps(monkeypatch)
        assert main([str(cfg), "--out", str(tmp_path / "out"), "--quiet"]) == 0
    assert dict(opened) == dict.fromkeys(names, 1)
    assert (len(reads), len(prepared), len(verdicts)) == (1, 1, 1)
    # every committed root went through the tracks once, while committed; the result is built
    # from that stream's trace (no trace of the committed values computed again)
    assert len(steps) == 12  # the cap: every root committed
    assert not any("m_upper" in kw for kw in traced)  # the point-value width trace aside


def _traces(monkeypatch: pytest.MonkeyPatch) -> list[dict[str, Any]]:
    """The keyword arguments of every TrackTrace the study computes from values."""
    calls: list[dict[str, Any]] = []
    cls = study.TrackTrace

    class Counted(cls):  # type: ignore[misc, valid-type]
        def __init__(self, *args: Any, **kwargs: Any) -> None:
            calls.append(kwargs)
            super().__init__(*args, **kwargs)

    monkeypatch.setattr(study, "TrackTrace", Counted)
    return calls


def _steps(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """Every root fed to a live study's tracks."""
    calls: list[int] = []
    step = TrackStream.step

    def counted(self: TrackStream, *args: Any, **kwargs: Any) -> None:
        calls.append(1)
        step(self, *args, **kwargs)

    monkeypatch.setattr(TrackStream, "step", counted)
    return calls
