"""The registered order of a study's roots (verdictpack.evidence._order)."""

from __future__ import annotations

import hashlib
import random
from pathlib import Path

import pytest

from verdictpack.evidence._order import ORDER_DOMAIN, read_order_file, registered_order

IDS = [f"pair-{k:03d}" for k in range(200)]


def order_key(seed: int, root_id: str) -> bytes:
    """The documented key of ``root_id`` under ``seed`` (the module docstring's hash)."""
    return hashlib.sha256(f"verdictpack/root-order/v1\n{seed}\n{root_id}".encode()).digest()


def test_order_sorts_by_the_documented_key() -> None:
    assert ORDER_DOMAIN == "verdictpack/root-order/v1"
    got = registered_order(5, IDS)
    assert got == tuple(sorted(IDS, key=lambda r: order_key(5, r)))
    assert sorted(got) == sorted(IDS)
    assert got != tuple(IDS)  # a hash order, not the input order


def test_file_order_does_not_matter() -> None:
    want = registered_order(11, IDS)
    for k in range(5):
        shuffled = list(IDS)
        random.Random(k).shuffle(shuffled)
        assert registered_order(11, shuffled) == want
    assert registered_order(11, iter(IDS[::-1])) == want


def test_adding_ids_keeps_the_relative_order_of_the_old_ones() -> None:
    old = registered_order(3, IDS[:120])
    new = registered_order(3, IDS[:120] + [f"late-{k}" for k in range(80)])
    assert tuple(r for r in new if r in set(old)) == old
    assert len(new) == 200


def test_different_seed_different_order() -> None:
    orders = {registered_order(s, IDS) for s in range(6)}
    assert len(orders) == 6


def test_non_ascii_ids() -> None:
    ids = ["Zürich-1", "東京-2", "plain"]
    got = registered_order(1, ids)
    assert got == tuple(sorted(ids, key=lambda r: order_key(1, r)))


def test_order_file(tmp_path: Path) -> None:
    p = tmp_path / "order.txt"
    p.write_bytes(b"\xef\xbb\xbfb\n\n  \r\na\r\nc\n")
    assert read_order_file(p, "order.txt") == (("b", "a", "c"), ())


@pytest.mark.parametrize("line", ["  a  ", "a\t", "a\x0bb", "a\u2028b", "a\x85"])
def test_order_file_refuses_an_id_with_spaces_or_control_characters(
    tmp_path: Path, line: str
) -> None:
    """Issue 22 row 6: such an id was stripped (or split) and read as another id, and the run
    then failed its own self-audit; it is refused at its line, naming the value."""
    p = tmp_path / "order.txt"
    p.write_bytes(f"b\n{line}\nc\n".encode())
    ids, defects = read_order_file(p, "order.txt")
    assert ids == ("b", "c")
    assert [(d.file, d.path, d.received) for d in defects] == [("order.txt", "line 2", line)]
    assert "white space" in defects[0].expected or "control" in defects[0].expected


def test_order_file_repeat_named_at_its_line(tmp_path: Path) -> None:
    p = tmp_path / "order.txt"
    p.write_text("a\nb\n\na\nc\nb\n")
    ids, defects = read_order_file(p, "o.txt")
    assert ids == ("a", "b", "c")
    assert [(d.file, d.path, d.received) for d in defects] == [
        ("o.txt", "line 4", "a"),
        ("o.txt", "line 6", "b"),
    ]
    assert "first at line 1" in defects[0].expected
    assert "first at line 2" in defects[1].expected


@pytest.mark.parametrize("content", [b"", b"\n  \n"])
def test_order_file_without_ids(tmp_path: Path, content: bytes) -> None:
    p = tmp_path / "order.txt"
    p.write_bytes(content)
    ids, (d,) = read_order_file(p, "o.txt")
    assert ids == () and (d.file, d.path) == ("o.txt", "line 1")


def test_order_file_unreadable(tmp_path: Path) -> None:
    ids, (d,) = read_order_file(tmp_path / "absent.txt", "absent.txt")
    assert ids == () and (d.file, d.path) == ("absent.txt", "(file)")
    p = tmp_path / "latin1.txt"
    p.write_bytes("caf\xe9\n".encode("latin-1"))
    ids, (d,) = read_order_file(p, "latin1.txt")
    assert ids == () and (d.path, d.received) == ("line 1", "byte 0xE9 at column 4")
    assert d.expected.startswith("UTF-8 text (the bytes read as Windows-1252")


def test_order_file_ids_outside_the_stimuli_are_defects_at_their_lines(tmp_path: Path) -> None:
    path = tmp_path / "order.txt"
    path.write_text("r1\nghost\n\nr2\n")
    ids, defects = read_order_file(path, "order.txt", known={"r1", "r2"})
    assert ids == ("r1", "r2")
    assert [(d.path, d.received) for d in defects] == [("line 2", "ghost")]
    assert defects[0].expected == "a stimulus id of the pairs file"
