"""The ledger's hash chain (evidence/_ledger_chain.py): every row linked in the transaction that
writes it, refused writes leave the chain whole, and an outside edit is refused by name."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from verdictpack.evidence._ledger import Ledger, LedgerError

MANIFEST = {"format": 1, "study": "chain"}


def _fill(folder: Path) -> None:
    with Ledger.open(folder, MANIFEST) as led:
        with led.batch():
            for i in range(3):
                body = {"root": f"r{i}", "n": i}
                key = led.request_key(body)
                led.record_request(key, f"r{i}", "judge", "treatment_first", 0, body)
                led.record_answer(
                    key,
                    raw="{}",
                    prompt_tokens=1,
                    completion_tokens=1,
                    cost=0.25,
                    model_id=None,
                    latency=0.0,
                    choice="treatment",
                    path="parser",
                    p_treatment=None,
                )
        led.commit_root(1, "r0", 1.0, None, "{}")
        # a refused write (seq 3 is not next) rolls back its link as well as its row
        with pytest.raises(LedgerError):
            led.commit_root(3, "r1", 1.0, None, "{}")
        with pytest.raises(LedgerError):  # refused by the table's trigger, inside SQLite
            led._write(
                "FULL",
                "INSERT INTO commits (seq, manifest, root_id, m_lo, m_hi, state) "
                "VALUES (5, ?, 'r9', 0, 0, '{}')",
                (led.manifest_hash,),
                "raw insert",
            )
        led.commit_root(2, "r1", 0.5, (0.0, 1.0), "{}")
        led.record_event("run_end", {"stop": "verdict"})


def test_every_write_is_chained_and_reopens(tmp_path: Path) -> None:
    _fill(tmp_path)
    with Ledger.open(tmp_path, MANIFEST) as led:
        assert [c.root_id for c in led.committed()] == ["r0", "r1"]
    db = sqlite3.connect(tmp_path / "ledger.sqlite")
    tables = [t for (t,) in db.execute("SELECT tbl FROM chain ORDER BY seq")]
    db.close()
    # head, manifest, 3 requests and answers, 2 commits, 1 event
    assert tables[:2] == ["", "manifest"] and tables.count("commits") == 2
    assert len(tables) == 2 + 6 + 2 + 1
    Ledger.open_readonly(tmp_path).close()


@pytest.mark.parametrize(
    ("sql", "named"),
    [
        ("UPDATE answers SET cost = 0 WHERE rowid = 2", "row 2 of table answers"),
        ("DELETE FROM commits WHERE seq = 2", "row 2 of table commits"),
        (
            "INSERT INTO events (manifest, kind, json) SELECT hash, 'x', '{}' FROM manifest",
            "of table events",
        ),
        ("DELETE FROM chain WHERE seq = (SELECT max(seq) FROM chain)", "row 1 of table events"),
    ],
)
def test_an_outside_edit_is_refused_by_name(tmp_path: Path, sql: str, named: str) -> None:
    _fill(tmp_path)
    db = sqlite3.connect(tmp_path / "ledger.sqlite")
    triggers = dict(db.execute("SELECT name, sql FROM sqlite_master WHERE type = 'trigger'"))
    for name in triggers:
        db.execute(f"DROP TRIGGER {name}")
    db.execute(sql)
    for text in triggers.values():
        db.execute(text)
    db.commit()
    db.close()
    for opener in (lambda: Ledger.open(tmp_path, MANIFEST), lambda: Ledger.open_readonly(tmp_path)):
        with pytest.raises(LedgerError, match="altered outside verdictpack") as info:
            opener()
        assert named in str(info.value)


def test_dropped_triggers_are_refused(tmp_path: Path) -> None:
    _fill(tmp_path)
    db = sqlite3.connect(tmp_path / "ledger.sqlite")
    db.execute("DROP TRIGGER answers_no_update")
    db.commit()
    db.close()
    with pytest.raises(LedgerError, match=r"schema .* not the one it was created with"):
        Ledger.open_readonly(tmp_path)
