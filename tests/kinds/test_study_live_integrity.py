"""The integrity of a live study's folder (issue 22, rows 5, 7, 8 and 11).

* Row 7: the ledger is hash-chained; an edited choice, a deleted answer, a deleted commit, a
  changed cost or dropped triggers (each made with the stdlib sqlite3, the triggers dropped and
  put back around the edit) is refused by name -- table and row -- by resume and ``status``
  (exit 2) and by ``verdictpack audit DIR`` (a FAIL naming the row).
* Row 5: ``verdictpack audit DIR`` on an untampered live study passes, stopped at its verdict or
  by its budget.
* Row 8: a corrupted ledger (not SQLite, truncated) is refused with exit 2 naming the file.
* Row 11: a run SIGKILLed after every filesystem call of a live study's start leaves a folder
  the next run resumes to its end.
"""

from __future__ import annotations

import json
import shutil
import signal
import sqlite3
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from verdictpack._cli import main

pytest.importorskip("httpx")

from live_helpers import live_study, serve, server_config

from verdictpack.evidence._live_folder import LIVE_LOCK, LIVE_MARKER

ROOTS = 80
LOOSE = {"alpha": 0.2, "per_tail_alpha": 0.05, "e_boundary": 20}


def _study(folder: Path, url: str, budget: float | None = None) -> Path:
    """The tiny live study with humans at rate 0.2 and a loose construct: a verdict in tens of
    roots (or a budget stop)."""
    study, config = live_study(folder, url, roots=ROOTS, cap=ROOTS)
    table = study.parent / "data" / "judgments.csv"
    rows = [table.read_text().splitlines()[0]]
    for i in range(ROOTS):
        for k, h in enumerate(("h1", "h2")):
            rows.append(
                f"r{i:03d},{h},human,unknown,{'treatment' if i % 5 == k else 'null_partner'}"
            )
    table.write_text("\n".join(rows) + "\n")
    config["construct"].update(LOOSE)
    if budget is not None:
        config["budget"] = {"judges": budget}
    study.write_text(json.dumps(config, indent=2))
    return study


@pytest.fixture(scope="module")
def studies(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """Two untampered live studies run to their end: one stopped at its verdict, one by its
    budget (the server gone afterwards: a refusal must come before any call)."""
    tmp = tmp_path_factory.mktemp("live")
    probe = _study(tmp / "probe", "http://127.0.0.1:9/v1")
    out: dict[str, Any] = {}
    with serve(server_config(probe)) as url:
        for name, budget in (("verdict", None), ("budget", 0.0305)):
            study = _study(tmp / name, url, budget)
            folder = tmp / f"out-{name}"
            assert main([str(study), "--out", str(folder), "--quiet"]) == 0
            out[name] = (study, folder)
    return out


def test_untampered_live_studies_pass_the_audit(
    studies: dict[str, Any], capsys: pytest.CaptureFixture[str]
) -> None:
    verdict = json.loads((studies["verdict"][1] / "report" / "verdict.json").read_text())
    assert verdict["registered"]["verdict"] == "EFFECT_SUPPORTED"
    budget = json.loads((studies["budget"][1] / "report" / "results.json").read_text())
    assert "budget" in budget["stop_reason"]
    for name in ("verdict", "budget"):
        assert main(["audit", str(studies[name][1])]) == 0, capsys.readouterr().out
        out = capsys.readouterr().out
        assert "AUDIT PASS" in out
        # the ledger was read and its chain checked
        assert main(["audit", "--verbose", str(studies[name][1])]) == 0
        verbose = capsys.readouterr().out
        assert "the hash chain holds" in verbose
        assert "every commit's bounds on M_i and H_i rebuilt" in verbose


def _tamper(ledger: Path, sql: str, *, keep_triggers: bool = True) -> None:
    """Edit the ledger as an outsider would: drop the triggers, run ``sql``, put them back."""
    db = sqlite3.connect(ledger)
    try:
        triggers = dict(db.execute("SELECT name, sql FROM sqlite_master WHERE type = 'trigger'"))
        for name in triggers:
            db.execute(f"DROP TRIGGER {name}")
        db.execute(sql)
        if keep_triggers:
            for text in triggers.values():
                db.execute(text)
        db.commit()
    finally:
        db.close()


EDITS = {
    "edited choice": (
        "UPDATE answers SET choice = CASE choice WHEN 'treatment' THEN 'null_partner' "
        "ELSE 'treatment' END WHERE rowid = 3",
        "row 3 of table answers",
    ),
    "deleted answer": ("DELETE FROM answers WHERE rowid = 5", "row 5 of table answers"),
    "deleted commit": (
        "DELETE FROM commits WHERE seq = (SELECT max(seq) FROM commits)",
        "of table commits",
    ),
    "changed cost": ("UPDATE answers SET cost = 0 WHERE rowid = 2", "row 2 of table answers"),
    "dropped triggers": ("SELECT 1", "schema"),
}


@pytest.mark.parametrize("edit", sorted(EDITS))
def test_a_tampered_ledger_is_refused_by_name(
    studies: dict[str, Any], tmp_path: Path, edit: str, capsys: pytest.CaptureFixture[str]
) -> None:
    study, original = studies["verdict"]
    folder = tmp_path / "out"
    shutil.copytree(original, folder)
    sql, named = EDITS[edit]
    _tamper(folder / "ledger.sqlite", sql, keep_triggers=edit != "dropped triggers")
    capsys.readouterr()
    for argv in (["status", str(folder)], [str(study), "--out", str(folder), "--quiet"]):
        assert main(argv) == 2
        err = capsys.readouterr().err
        assert "altered outside verdictpack" in err and str(folder / "ledger.sqlite") in err
        assert named in err
        assert "Traceback" not in err
    assert main(["audit", str(folder)]) == 1
    out = capsys.readouterr().out
    assert "FAIL ledger.sqlite" in out and "altered outside verdictpack" in out
    if edit != "dropped triggers":
        table = named.split("table ")[1]
        assert f"FAIL ledger.sqlite table {table} row" in out
    else:
        assert "FAIL ledger.sqlite schema" in out


@pytest.mark.parametrize("damage", ["not sqlite", "truncated"])
def test_a_corrupted_ledger_exits_2_naming_the_file(
    studies: dict[str, Any], tmp_path: Path, damage: str, capsys: pytest.CaptureFixture[str]
) -> None:
    study, original = studies["verdict"]
    folder = tmp_path / "out"
    shutil.copytree(original, folder)
    ledger = folder / "ledger.sqlite"
    data = ledger.read_bytes()
    ledger.write_bytes(b"this is not a database\n" * 200 if damage == "not sqlite" else data[:8192])
    capsys.readouterr()
    for argv in (["status", str(folder)], [str(study), "--out", str(folder), "--quiet"]):
        assert main(argv) == 2
        err = capsys.readouterr().err
        assert str(ledger) in err and "Traceback" not in err
        assert "backup" in err or "altered" in err
    assert ledger.stat().st_size == (4600 if damage == "not sqlite" else 8192)


# The filesystem calls of a live study's start that change the disk: DIR made, the lock created,
# the temporary marker created and written, then renamed into place.
START_CALLS = 5
DRIVER = Path(__file__).parents[1] / "kill_driver.py"


@pytest.mark.skipif(sys.platform == "win32", reason="POSIX signals")
@pytest.mark.parametrize("kill", range(1, START_CALLS + 2))
def test_a_kill_at_a_call_of_the_start_resumes(tmp_path: Path, kill: int) -> None:
    """Killed (by tests/kill_driver.py, from outside) after each call of the start on DIR and its
    own files (the marker's write half-way); one call past the last the run is not killed, so
    every call was one of these."""
    probe = _study(tmp_path / "probe", "http://127.0.0.1:9/v1")
    with serve(server_config(probe)) as url:
        study = _study(tmp_path / "run", url)
        out = tmp_path / "out"
        command = [str(study), "--out", str(out), "--quiet"]
        case = {"cwd": str(tmp_path), "args": command, "kill": kill, "trace": None}
        case["watch"] = [str(out), f"{out}/.verdictpack-live*"]
        killed = subprocess.run(
            [sys.executable, str(DRIVER), "--module"],
            input=json.dumps([case]).encode(),
            capture_output=True,
            timeout=120,
        )
        expected = -signal.SIGKILL if kill <= START_CALLS else 0
        assert killed.returncode == expected, (kill, killed.stderr[-500:])
        again = subprocess.run(
            [sys.executable, "-m", "verdictpack", *command], capture_output=True, timeout=120
        )
        assert again.returncode == 0, (kill, again.stderr.decode()[-800:])
        names = {p.name for p in out.iterdir()}
        assert names == {LIVE_MARKER, LIVE_LOCK, "ledger.sqlite", "report"}, (kill, names)
        assert (out / "report" / "verdict.json").is_file()


def test_a_stranger_beside_the_lock_is_never_touched(tmp_path: Path) -> None:
    """A folder holding our lock and a file of someone else's is refused, the file kept."""
    probe = _study(tmp_path / "probe", "http://127.0.0.1:9/v1")
    out = tmp_path / "out"
    out.mkdir()
    (out / LIVE_LOCK).write_bytes(b"")
    (out / f"{LIVE_MARKER}.tmp").write_text("not ours")
    assert main([str(probe), "--out", str(out), "--quiet"]) == 2
    assert (out / f"{LIVE_MARKER}.tmp").read_text() == "not ours"


# ---------------------------------------------------------------- the chain's anchor (row 7)


def _cut_tail(ledger: Path, keep: str) -> int:
    """Delete the newest rows of the ledger together with their chain links, as an outsider who
    knows the chain would (triggers dropped and put back): every link after the last one of
    ``keep`` ("the last commit": up to the one before it; "run_end": the last link only).
    Returns the links left; the chain that is left holds by itself."""
    db = sqlite3.connect(ledger)
    try:
        (last,) = db.execute("SELECT max(seq) FROM chain").fetchone()
        if keep == "the last commit":
            (cut,) = db.execute("SELECT max(seq) FROM chain WHERE tbl = 'commits'").fetchone()
        else:
            cut = last
        triggers = dict(db.execute("SELECT name, sql FROM sqlite_master WHERE type = 'trigger'"))
        for name in triggers:
            db.execute(f"DROP TRIGGER {name}")
        for tbl, rid in db.execute("SELECT tbl, rid FROM chain WHERE seq >= ?", (cut,)).fetchall():
            db.execute(f'DELETE FROM "{tbl}" WHERE rowid = ?', (rid,))
        db.execute("DELETE FROM chain WHERE seq >= ?", (cut,))
        for text in triggers.values():
            db.execute(text)
        db.commit()
        return int(cut)
    finally:
        db.close()


def _rechain(ledger: Path, sql: str) -> None:
    """Edit the ledger and rewrite its whole chain after the edit with verdictpack's own link
    rule: the chain holds by itself, only the link recorded outside the ledger tells."""
    from verdictpack.evidence._ledger_chain import _link

    db = sqlite3.connect(ledger)
    try:
        triggers = dict(db.execute("SELECT name, sql FROM sqlite_master WHERE type = 'trigger'"))
        for name in triggers:
            db.execute(f"DROP TRIGGER {name}")
        db.execute(sql)
        links = db.execute("SELECT seq, tbl, rid, link FROM chain ORDER BY seq").fetchall()
        prev = links[0][3]
        for seq, tbl, rid, _ in links[1:]:
            values = db.execute(f'SELECT * FROM "{tbl}" WHERE rowid = ?', (rid,)).fetchone()
            prev = _link(prev, tbl, rid, values)
            db.execute("UPDATE chain SET link = ? WHERE seq = ?", (prev, seq))
        for text in triggers.values():
            db.execute(text)
        db.commit()
    finally:
        db.close()


ANCHOR_EDITS = {
    "run_end cut with its link": "its hash chain has",
    "the last commit on cut with their links": "its hash chain has",
    "a cost lowered, the whole chain rewritten": "its hash chain's link",
}


@pytest.mark.parametrize("edit", sorted(ANCHOR_EDITS))
def test_a_ledger_cut_short_or_rechained_is_refused_by_the_recorded_link(
    studies: dict[str, Any], tmp_path: Path, edit: str, capsys: pytest.CaptureFixture[str]
) -> None:
    """Issue 22 row 7: rows deleted from the ledger's end with their chain links, or the whole
    chain rewritten after an edit, leave a chain that holds by itself; the report's record of
    the chain (report/provenance.json $.settings.ledger_chain) tells, on resume, in ``status``
    and in the audit."""
    study, original = studies["verdict"]
    folder = tmp_path / "out"
    shutil.copytree(original, folder)
    ledger = folder / "ledger.sqlite"
    prov = json.loads((folder / "report" / "provenance.json").read_text())
    recorded = prov["settings"]["ledger_chain"]
    assert recorded["length"] > 2 and len(recorded["head"]) == 64
    if "cut" in edit:
        left = _cut_tail(ledger, "the last commit" if "commit" in edit else "run_end")
        assert left < recorded["length"]
    else:
        _rechain(ledger, "UPDATE answers SET cost = 0 WHERE rowid = 2")
    before = ledger.read_bytes()
    capsys.readouterr()
    for argv in (["status", str(folder)], [str(study), "--out", str(folder), "--quiet"]):
        assert main(argv) == 2, argv
        err = capsys.readouterr().err
        assert str(ledger) in err and "report/provenance.json $.settings.ledger_chain" in err
        assert ANCHOR_EDITS[edit] in err and "Traceback" not in err
    assert ledger.read_bytes() == before  # nothing written
    assert main(["audit", str(folder)]) == 1
    out = capsys.readouterr().out
    assert "FAIL ledger.sqlite table chain" in out
    assert "the hash chain holds the last link report/provenance.json" in out


def test_a_ledger_grown_beyond_the_recorded_link_is_taken_up(
    studies: dict[str, Any], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A run killed after its report leaves a ledger longer than the report recorded: fine."""
    from verdictpack.evidence._ledger import Ledger

    _, original = studies["verdict"]
    folder = tmp_path / "out"
    shutil.copytree(original, folder)
    ledger = Ledger.open_readonly(folder / "ledger.sqlite")
    manifest = ledger.manifest
    ledger.close()
    ledger = Ledger.open(folder / "ledger.sqlite", manifest)
    ledger.record_event("run_start", {"budget_judges": None, "judges": 2})
    ledger.close()
    capsys.readouterr()
    assert main(["status", str(folder)]) == 0, capsys.readouterr().err
    assert main(["audit", str(folder)]) == 0, capsys.readouterr().out


@pytest.mark.parametrize("report", [True, False])
def test_an_emptied_ledger_of_a_begun_study_is_refused_never_restarted(
    studies: dict[str, Any], tmp_path: Path, report: bool, capsys: pytest.CaptureFixture[str]
) -> None:
    """Issue 22 row 7: a 0-byte ledger.sqlite in a folder whose marker says the study was begun
    (with or without its report) is refused by name (exit 2), never silently started afresh."""
    study, original = studies["verdict"]
    folder = tmp_path / "out"
    shutil.copytree(original, folder)
    if not report:
        shutil.rmtree(folder / "report")
    ledger = folder / "ledger.sqlite"
    ledger.write_bytes(b"")
    before = {p.name: p.stat().st_size for p in folder.iterdir()}
    capsys.readouterr()
    for argv in (["status", str(folder)], [str(study), "--out", str(folder), "--quiet"]):
        assert main(argv) == 2, argv
        err = capsys.readouterr().err
        assert str(ledger) in err and "empty (0 bytes)" in err and "Traceback" not in err
    # nothing written: the ledger still empty, no file added or grown
    assert {p.name: p.stat().st_size for p in folder.iterdir()} == before


@pytest.mark.parametrize("how", ["deleted", "a folder in its place"])
def test_a_lost_ledger_of_a_study_with_a_report_is_refused_and_none_is_made(
    studies: dict[str, Any], tmp_path: Path, how: str, capsys: pytest.CaptureFixture[str]
) -> None:
    """A ledger deleted while the report records its chain is refused as missing (before: a new
    ledger was made, then refused for its chain); a folder where the ledger goes is named."""
    study, original = studies["verdict"]
    folder = tmp_path / "out"
    shutil.copytree(original, folder)
    ledger = folder / "ledger.sqlite"
    ledger.unlink()
    if how != "deleted":
        ledger.mkdir()
    before = sorted(p.name for p in folder.rglob("*"))
    capsys.readouterr()
    for argv in (["status", str(folder)], [str(study), "--out", str(folder), "--quiet"]):
        assert main(argv) == 2, argv
        err = capsys.readouterr().err
        said = (
            "missing from a live study's folder whose report records"
            if how == "deleted"
            else ("a folder, not a ledger file")
        )
        assert f"ledger {ledger}: {said}" in err and "Traceback" not in err
    assert sorted(p.name for p in folder.rglob("*")) == before  # no ledger made


MARKERS = {
    "garbage": b"not json at all\n",
    "another manifest": None,  # the marker of another study: one hex digit changed
    "not ours": b'{"format": 1, "manifest": "x", "written_by": "someone"}\n',
}


@pytest.mark.parametrize("marker", sorted(MARKERS))
def test_a_replaced_marker_fails_the_audit(
    studies: dict[str, Any], tmp_path: Path, marker: str, capsys: pytest.CaptureFixture[str]
) -> None:
    """The audit reads the folder's marker, not only its existence: garbage, another study's
    manifest or a marker verdictpack never writes fails by name (before: AUDIT PASS)."""
    _, original = studies["verdict"]
    folder = tmp_path / "out"
    shutil.copytree(original, folder)
    path = folder / LIVE_MARKER
    data = MARKERS[marker]
    if data is None:
        held = json.loads(path.read_text())
        last = held["manifest"][-1]
        held["manifest"] = held["manifest"][:-1] + ("0" if last != "0" else "1")
        data = json.dumps(held, sort_keys=True, indent=2).encode() + b"\n"
    path.write_bytes(data)
    capsys.readouterr()
    assert main(["audit", str(folder)]) == 1
    out = capsys.readouterr().out
    assert f"FAIL {LIVE_MARKER}" in out, out
    # the untampered copy passes, its marker checked
    shutil.copy(original / LIVE_MARKER, path)
    assert main(["audit", "--verbose", str(folder)]) == 0
    assert "naming the ledger's manifest" in capsys.readouterr().out
