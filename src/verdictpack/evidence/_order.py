"""The registered order of a study's roots: fixed by the seed before any judgment is read.

Each root's place is a keyed hash of its id under the seed,

    key(root) = SHA-256("verdictpack/root-order/v1\\n{seed}\\n{root_id}")

and the roots enter the sequential core by increasing key (ties, which SHA-256 makes
unthinkable, by id). The order is therefore a function of the seed and the ids alone: never
of file order, of completion order or of any judgment's value, and adding roots to a study
never reorders the ones it had. The seed commitment published before data collection fixes
it (see the provenance), and anyone can recompute it from the seed and the ids.

A study may instead bring a registered order of its own (``read_order_file``: one root id a
line), e.g. one filed with a pre-registration; its SHA-256 is recorded in the provenance.
"""

from __future__ import annotations

import hashlib
from collections.abc import Collection, Iterable
from pathlib import Path

from verdictpack._errors import Defect, not_utf8
from verdictpack.stimuli._pairs import root_id_problem

__all__ = ["ORDER_DOMAIN", "read_order_file", "registered_order"]

ORDER_DOMAIN = "verdictpack/root-order/v1"


def registered_order(seed: int, root_ids: Iterable[str]) -> tuple[str, ...]:
    """``root_ids`` (distinct) in the registered order of ``seed``."""
    base = hashlib.sha256(f"{ORDER_DOMAIN}\n{int(seed)}\n".encode())

    def key(r: str) -> bytes:
        h = base.copy()
        h.update(r.encode())
        return h.digest()

    return tuple(sorted(root_ids, key=lambda r: (key(r), r)))


def read_order_file(
    path: Path, display: str, known: Collection[str] | None = None, data: bytes | None = None
) -> tuple[tuple[str, ...], tuple[Defect, ...]]:
    """A registered order file: UTF-8, one root id a line (``\\n`` or ``\\r\\n``; blank lines
    ignored), no repeats, no id with white space at either end or a control character; with
    ``known`` (the stimulus ids), an id outside it is a defect at its line. ``data``, when
    given, is the file's bytes as already read, parsed instead of reading ``path``."""
    try:
        raw = path.read_bytes() if data is None else data
        text = raw.decode("utf-8-sig")
    except OSError as exc:
        return (), (Defect(display, "(file)", str(path), f"a readable file ({exc.strerror})"),)
    except UnicodeDecodeError:
        return (), (not_utf8(display, raw),)
    ids: list[str] = []
    first: dict[str, int] = {}
    defects: list[Defect] = []
    for n, line in enumerate(text.split("\n"), start=1):
        rid = line.removesuffix("\r")
        if not rid.strip():
            continue
        problem = root_id_problem(rid)
        if problem is not None:
            defects.append(Defect(display, f"line {n}", rid, problem))
            continue
        if rid in first:
            defects.append(
                Defect(display, f"line {n}", rid, f"each root once (first at line {first[rid]})")
            )
            continue
        first[rid] = n
        if known is not None and rid not in known:
            defects.append(Defect(display, f"line {n}", rid, "a stimulus id of the pairs file"))
            continue
        ids.append(rid)
    if not ids and not defects:
        defects.append(Defect(display, "line 1", "(no ids)", "one root id a line"))
    return tuple(ids), tuple(defects)
