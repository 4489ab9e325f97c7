"""One judgment file of a study, read by its declared format into the canonical table.

The formats and the options each takes (the importers' keyword arguments, as a config gives
them):

* ``table`` -- a CSV or JSONL file in the canonical columns or with a ``mapping``, ``value_maps``
  and a ``treatment_side_column`` (:func:`~verdictpack.evidence._table.read_table`);
* ``labelstudio`` -- a Label Studio 1.x JSON export (:mod:`~verdictpack.evidence.importers`);
* ``argilla`` -- an Argilla 2.x records export;
* ``mturk`` -- an Amazon Mechanical Turk batch results CSV.

Whatever the format, the result is a :class:`~verdictpack.evidence._table.JudgmentTable` and the
defects found, each at the file's line or JSON path.

:func:`read_inside` reads a data file once, as a study reads it: only a regular file inside the
config's folder (``..`` and symlinks are followed, and the file they lead to must still be inside
it: never ``/proc/self/environ`` or a FIFO); the bytes it returns are the bytes parsed *and* the
bytes hashed into provenance, so a file rewritten during a run cannot be recorded by the hash of
bytes that were never analysed.
"""

from __future__ import annotations

import hashlib
import os
import stat
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from verdictpack._errors import Defect, InputError
from verdictpack.evidence._table import JudgmentTable, read_table
from verdictpack.evidence.importers import read_argilla, read_labelstudio, read_mturk

__all__ = ["FORMATS", "file_sha256", "read_inside", "read_judgment_file"]

FORMATS = ("table", "labelstudio", "argilla", "mturk")


def file_sha256(path: Path) -> str:
    """SHA-256 of a file's bytes, read in chunks."""
    h = hashlib.sha256()
    with path.open("rb") as fh:
        for chunk in iter(lambda: fh.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()


_NOT_REGULAR = (
    (stat.S_ISDIR, "a directory"),
    (stat.S_ISFIFO, "a FIFO"),
    (stat.S_ISSOCK, "a socket"),
    (stat.S_ISCHR, "a character device"),
    (stat.S_ISBLK, "a block device"),
)


def read_inside(folder: Path, rel: str) -> tuple[Path, bytes] | str:
    """``(path, bytes)`` of the regular file ``rel`` names inside ``folder`` (a resolved folder),
    read once; else what is expected instead, as a Defect's expected text."""
    inside = f"a regular file inside the config's folder {folder}"
    try:
        real = (folder / rel).resolve(strict=True)
    except FileNotFoundError:
        return f"an existing file relative to the config's folder (no file {folder / rel})"
    except (OSError, RuntimeError) as exc:  # a symlink loop, a path component not a folder
        return f"{inside} (this path cannot be resolved: {getattr(exc, 'strerror', None) or exc})"
    if not real.is_relative_to(folder):
        return f"{inside} (this path leads out of it, to {real})"
    flags = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0)
    flags |= getattr(os, "O_NOFOLLOW", 0)  # swapped for a symlink since it was resolved
    try:
        fd = os.open(real, flags)
    except OSError as exc:
        return f"{inside}, readable ({exc.strerror or exc})"
    mode = os.fstat(fd).st_mode
    if not stat.S_ISREG(mode):
        os.close(fd)
        kind = next((name for test, name in _NOT_REGULAR if test(mode)), "not a regular file")
        return f"{inside} (this path is {kind})"
    with os.fdopen(fd, "rb") as handle:
        try:
            return folder / rel, handle.read()  # as named: its suffix names the format
        except OSError as exc:
            return f"{inside}, readable ({exc.strerror or exc})"


def _as_table(result: Any) -> tuple[JudgmentTable, tuple[Defect, ...]]:
    table = getattr(result, "table", None)
    if isinstance(table, JudgmentTable):
        return table, tuple(result.defects)
    return JudgmentTable.from_judgments(result.judgments), tuple(result.defects)


def read_judgment_file(
    fmt: str,
    path: Path,
    display: str,
    options: Mapping[str, Any],
    data: bytes | None = None,
    notes: list[str] | None = None,
) -> tuple[JudgmentTable, tuple[Defect, ...]]:
    """Read ``path`` as ``fmt`` with the importer's keyword ``options``; InputError for options
    the importer refuses (the caller names them at their config path). ``data``: the file's
    bytes as already read (:func:`read_inside`), parsed instead of reading ``path``; ``notes``
    gets the importer's notes (records read that gave no judgment), each naming the file."""
    opts = dict(options)
    if data is not None:
        opts["data"] = data
    if fmt == "table":
        result: Any = read_table(path, display=display, **opts)
    elif fmt == "labelstudio":
        result = read_labelstudio(path, display=display, **opts)
    elif fmt == "argilla":
        result = read_argilla(path, display=display, **opts)
    elif fmt == "mturk":
        result = read_mturk(path, display=display, **opts)
    else:
        raise InputError("format", "one of " + ", ".join(FORMATS), fmt)
    if notes is not None:
        notes.extend(f"{display}: {note}" for note in getattr(result, "notes", ()))
    return _as_table(result)
