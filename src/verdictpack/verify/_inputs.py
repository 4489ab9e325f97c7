"""Self-audit checks that bind an output folder to its inputs and to what verdictpack wrote.

* :func:`_audit_marker` (always): the folder's marker (``.verdictpack-output.json``, written by
  :mod:`verdictpack._output` before any file) lists every file of the folder with its SHA-256:
  each listed file is there with that digest, and nothing else is in the folder (no unlisted
  file, folder or symlink). An edited, added or removed file fails the audit.
* :func:`_audit_echoes` (with ``--config``): every input of the config that results.json or
  provenance.json echoes equals the config's value. A config value at path ``a.b.c`` is echoed
  at the same path, or -- for the sections a result flattens (``sequential``, ``streams``,
  ``routes``, ``simulation``, ``human``) -- at the top level as ``b_c`` or ``a_b_c``; the
  construct's ``thresholds.h`` / ``thresholds.odds_ratio`` as ``threshold_h`` /
  ``threshold_odds_ratio``. Strings, booleans and structures must be equal; numbers equal up to
  floating point (relative 1e-12: a few echoes are recomputed, 0.45 as 0.44999999999999996).
  Values the config leaves to their defaults are not compared (the config's hashes bind it).
"""

from __future__ import annotations

import hashlib
import math
import os
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from verdictpack.verify._findings import _Auditor, _load_json_bytes

__all__ = ["_audit_echoes", "_audit_marker"]

# the marker's name and form (docs of verdictpack._output), read here again: the audit imports
# nothing that wrote the folder
MARKER = ".verdictpack-output.json"
_HEX64 = re.compile(r"[0-9a-f]{64}")
_MAX_ENTRIES = 100_000  # a folder scan stops here
_FLATTENED = ("sequential", "streams", "routes", "simulation", "human")
_ALIASES: dict[tuple[str | int, ...], tuple[str | int, ...]] = {
    ("construct", "thresholds", "h"): ("construct", "threshold_h"),
    ("construct", "thresholds", "odds_ratio"): ("construct", "threshold_odds_ratio"),
}
_REL = 1e-12

Path_ = tuple[str | int, ...]


# ==============================================================================================
# The marker
# ==============================================================================================


def _digest(path: Path) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def _entries(folder: Path) -> tuple[list[str], list[str]]:
    """(regular files, other entries: folders, symlinks, devices) under ``folder``, relative,
    the top-level marker left out; never following symlinks; at most _MAX_ENTRIES."""
    files: list[str] = []
    other: list[str] = []
    stack = [("", str(folder))]
    while stack and len(files) + len(other) < _MAX_ENTRIES:
        prefix, path = stack.pop()
        with os.scandir(path) as it:
            for e in it:
                rel = prefix + e.name
                if rel == MARKER:
                    continue
                if e.is_dir(follow_symlinks=False):
                    other.append(rel + "/")
                    stack.append((rel + "/", e.path))
                elif e.is_file(follow_symlinks=False):
                    files.append(rel)
                else:
                    other.append(rel)
    return sorted(files), sorted(other)


def _read_marker(raw: bytes) -> dict[str, str] | None:
    """The ``files`` listing of a marker ({"files": {name: sha256}, "format": 1, "written_by":
    "verdictpack"}), or None when ``raw`` is not one."""
    try:
        doc = _load_json_bytes(raw, MARKER)
    except (UnicodeDecodeError, ValueError, RecursionError):
        return None
    if not isinstance(doc, dict) or doc.get("written_by") != "verdictpack":
        return None
    files = doc.get("files")
    if doc.get("format") != 1 or not isinstance(files, dict):
        return None
    if not all(isinstance(v, str) and _HEX64.fullmatch(v) for v in files.values()):
        return None
    return files


def _audit_marker(A: _Auditor, run: Path) -> None:
    """Every file of ``run`` is one verdictpack wrote, unchanged (its marker's SHA-256), and every
    file the marker lists is there."""
    where = f"{MARKER}"
    try:
        listing = _read_marker((run / MARKER).read_bytes())
    except OSError as exc:
        A.true(where, "the folder carries verdictpack's marker", False, MARKER, str(exc))
        return
    if listing is None:
        A.true(where, "a valid verdictpack marker", False, "a valid marker", "not one")
        return
    files, other = _entries(run)
    folders = {
        "/".join(n.split("/")[:i]) + "/" for n in listing for i in range(1, n.count("/") + 1)
    }
    strangers = [f for f in files if f not in listing] + [o for o in other if o not in folders]
    A.true(
        where,
        "the folder holds nothing the marker does not list (no added file)",
        not strangers,
        "only the listed files",
        ", ".join(strangers[:8]),
    )
    missing = [n for n in sorted(listing) if n not in files]
    A.true(where, "every listed file is there", not missing, "all", ", ".join(missing[:8]))
    for name in sorted(set(listing) & set(files)):
        A.eq(
            f"{name}",
            "the SHA-256 the marker lists (unchanged since written)",
            listing[name],
            _digest(run / name),
        )


# ==============================================================================================
# Echoed inputs
# ==============================================================================================


def _leaves(value: Any, path: Path_ = ()) -> Iterator[tuple[Path_, Any]]:
    """(path, value) of every leaf of a config; a list of objects is walked item by item."""
    if isinstance(value, dict):
        for k, v in value.items():
            yield from _leaves(v, (*path, str(k)))
    elif isinstance(value, list) and value and all(isinstance(v, dict) for v in value):
        for i, v in enumerate(value):
            yield from _leaves(v, (*path, i))
    else:
        yield path, value


def _get(doc: Any, path: Path_) -> tuple[Any] | None:
    for k in path:
        if isinstance(k, int):
            if not isinstance(doc, list) or k >= len(doc):
                return None
        elif not isinstance(doc, dict) or k not in doc:
            return None
        doc = doc[k]
    return (doc,)


def _echo_paths(path: Path_) -> Iterator[Path_]:
    yield _ALIASES.get(path, path)
    if len(path) >= 2 and path[0] in _FLATTENED and all(isinstance(k, str) for k in path):
        yield ("_".join(map(str, path[1:])),)
        yield ("_".join(map(str, path)),)


def _same(a: Any, b: Any) -> bool:
    if isinstance(a, bool) or isinstance(b, bool):
        return type(a) is type(b) and a == b
    if isinstance(a, (int, float)) and isinstance(b, (int, float)):
        return math.isclose(float(a), float(b), rel_tol=_REL, abs_tol=1e-15)
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(_same(x, y) for x, y in zip(a, b, strict=True))
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(_same(a[k], b[k]) for k in a)
    return type(a) is type(b) and a == b


def _show_path(path: Path_) -> str:
    return "$" + "".join(f"[{k}]" if isinstance(k, int) else f".{k}" for k in path)


def _audit_echoes(
    A: _Auditor, res: dict[str, Any], prov: dict[str, Any], config: Any, name: str
) -> None:
    """Every config value echoed in results.json or provenance.json's settings is the config's."""
    if not isinstance(config, dict):
        return
    raw = prov.get("settings")
    settings: dict[str, Any] = raw if isinstance(raw, dict) else {}
    compared = 0
    for path, value in _leaves(config):
        for doc, file, prefix in (
            (res, "results.json", "$"),
            (settings, "provenance.json", "$.settings"),
        ):
            for echo in _echo_paths(path):
                got = _get(doc, echo)
                if got is None:
                    continue
                compared += 1
                if not _same(value, got[0]):
                    A.record(
                        False,
                        f"{file} {prefix}{_show_path(echo)[1:]}",
                        f"the input echoed is {name} {_show_path(path)}",
                        value,
                        got[0],
                    )
                break
    A.true(
        "results.json, provenance.json",
        f"inputs of {name} are echoed and compared",
        compared > 0,
        "at least one echoed input",
        compared,
    )
