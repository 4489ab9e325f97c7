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
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from verdictpack._errors import Defect, InputError
from verdictpack.evidence._table import JudgmentTable, read_table
from verdictpack.evidence.importers import read_argilla, read_labelstudio, read_mturk

__all__ = ["FORMATS", "file_sha256", "read_judgment_file"]

FORMATS = ("table", "labelstudio", "argilla", "mturk")


def file_sha256(path: Path) -> str:
    """SHA-256 of a file's bytes, read in chunks."""
    h = hashlib.sha256()
    with path.open("rb") as fh:
        for chunk in iter(lambda: fh.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()


def _as_table(result: Any) -> tuple[JudgmentTable, tuple[Defect, ...]]:
    table = getattr(result, "table", None)
    if isinstance(table, JudgmentTable):
        return table, tuple(result.defects)
    return JudgmentTable.from_judgments(result.judgments), tuple(result.defects)


def read_judgment_file(
    fmt: str, path: Path, display: str, options: Mapping[str, Any]
) -> tuple[JudgmentTable, tuple[Defect, ...]]:
    """Read ``path`` as ``fmt`` with the importer's keyword ``options``; InputError for options
    the importer refuses (the caller names them at their config path)."""
    opts = dict(options)
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
    return _as_table(result)
