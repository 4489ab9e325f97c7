"""A study's data folder read by one call; each judgment file read by its declared format.

The formats and the options each takes (the importers' keyword arguments, as a config gives
them):

* ``table`` -- a CSV, JSONL or Parquet file in the canonical columns or with a ``mapping``,
  ``value_maps``, a ``treatment_side_column``, a ``verdict_text_column`` of free-text verdicts
  (read by the parser below), a ``where`` row filter and ``ignore_raters``
  (:func:`~verdictpack.evidence._table.read_table`); through the Python API, a DataFrame
  (:data:`FRAMES`);
* ``labelstudio`` -- a Label Studio 1.x JSON export (:mod:`~verdictpack.evidence.importers`);
* ``argilla`` -- an Argilla 2.x records export;
* ``mturk`` -- an Amazon Mechanical Turk batch results CSV;
* ``openai_batch`` -- an OpenAI Batch output JSONL of a judge's answers, read by ``custom_id``;
* ``inspect`` -- an Inspect AI evaluation log (``.json`` or ``.eval``) of a judge's answers.

The last two (and a table's ``verdict_text_column``) hold free-text answers, read by the live
judges' parser (:class:`~verdictpack.evidence._choice.TextParser`: ``labels``,
``patterns``, ``ties``).

Whatever the format, the result is a :class:`~verdictpack.evidence._table.JudgmentTable` and the
defects found, each at the file's line or JSON path.

:func:`read_inside` reads a data file once, as a study reads it: only a regular file inside the
config's folder (``..`` and symlinks are followed, and the file they lead to must still be inside
it: never ``/proc/self/environ`` or a FIFO); the bytes it returns are the bytes parsed *and* the
bytes hashed into provenance, so a file rewritten during a run cannot be recorded by the hash of
bytes that were never analysed.

:func:`read_study` reads a study's whole data folder by one call (the pairs, the judgment files,
the double readings of the reader audit, an optional registered order) into one immutable
:class:`StudyData`: each file opened once by :func:`read_inside`, its SHA-256 taken of the bytes
parsed, and every defect of every file collected and sorted by file (in the order read) and line
before any is reported (one :class:`~verdictpack._errors.ConfigError`).
"""

from __future__ import annotations

import hashlib
import os
import stat
from collections.abc import Callable, Mapping, Sequence
from contextvars import ContextVar
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import numpy as np

from verdictpack._errors import ConfigError, Defect, InputError
from verdictpack.config._compiler import ConfigSource, json_path
from verdictpack.config._refusals import Refusals
from verdictpack.evidence._assemble import check_study_table
from verdictpack.evidence._choice import TextParser
from verdictpack.evidence._judgments import _CHOICE_CODE, _ORDER_CODE
from verdictpack.evidence._order import read_order_file
from verdictpack.evidence._readings import Readings, read_readings
from verdictpack.evidence._table import JudgmentTable, read_table
from verdictpack.evidence.importers import (
    read_argilla,
    read_inspect,
    read_labelstudio,
    read_mturk,
    read_openai_batch,
)
from verdictpack.stimuli._pairs import read_pairs, root_id_problem
from verdictpack.stimuli._stimulus import Stimulus

__all__ = [
    "FORMATS",
    "FRAMES",
    "DataFile",
    "StudyData",
    "data_file",
    "read_inside",
    "read_judgment_file",
    "read_study",
]

# judgment files given as DataFrames (verdictpack.run(config, frames=...)): their canonical CSV
# bytes by the path the config names, read instead of the file and hashed as a frame
FRAMES: ContextVar[Mapping[str, bytes] | None] = ContextVar("verdictpack_frames", default=None)

FORMATS = ("table", "labelstudio", "argilla", "mturk", "openai_batch", "inspect")


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
        result = read_table(path, display=display, **opts)
    elif fmt == "labelstudio":
        result = read_labelstudio(path, display=display, **opts)
    elif fmt == "argilla":
        result = read_argilla(path, display=display, **opts)
    elif fmt == "mturk":
        result = read_mturk(path, display=display, **opts)
    elif fmt in ("openai_batch", "inspect"):
        parser = TextParser(
            tuple(opts.pop("labels", ("A", "B"))),
            tuple(opts.pop("patterns", ())),
            tuple(opts.pop("ties", ())),
        )
        reader = read_openai_batch if fmt == "openai_batch" else read_inspect
        result = reader(path, display=display, parser=parser, **opts)
    else:
        raise InputError("format", "one of " + ", ".join(FORMATS), fmt)
    if notes is not None:
        notes.extend(f"{display}: {note}" for note in result.notes)
    return result.table, tuple(result.defects)


@dataclass(frozen=True)
class DataFile:
    """One data file read: its role, its path as the config names it, its bytes' SHA-256."""

    role: str
    path: str
    format: str
    sha256: str
    bytes: int
    records: int


def data_file(role: str, path: str, fmt: str, data: bytes, records: int) -> DataFile:
    """The entry of a file whose bytes are ``data`` (the very bytes parsed)."""
    return DataFile(role, path, fmt, hashlib.sha256(data).hexdigest(), len(data), records)


@dataclass(frozen=True)
class StudyData:
    """Every data file of a study, read and checked (nothing computed yet)."""

    files: tuple[DataFile, ...]
    stimuli: tuple[Stimulus, ...]
    table: JudgmentTable
    readings: Readings
    order_file: tuple[str, ...] | None
    # what the files held that gave no judgment and is no defect (e.g. unanswered records)
    notes: tuple[str, ...] = ()


class _Reader:
    """Reads the config's data files inside its folder, once each, and collects every defect."""

    def __init__(self, source: ConfigSource) -> None:
        self.source = source
        self.defects: list[Defect] = []
        self.files: list[DataFile] = []
        self.notes: list[str] = []

    def resolve(self, loc: tuple[str | int, ...], rel: str) -> tuple[Path, bytes] | None:
        """The file's path and bytes (:func:`read_inside`), or None with a defect at the config
        field ``loc``."""
        folder = self.source.folder
        found = "a config read from a file" if folder is None else read_inside(folder, rel)
        if isinstance(found, str):
            self.defects.append(Defect(self.source.display, json_path(loc), rel, found))
            return None
        return found

    def check_roots(self, name: str, table: JudgmentTable) -> None:
        """A defect at the first row of each root id of ``table`` with white space at either
        end or a control character (root_order.txt and the outputs hold one id a line)."""
        for code, root in enumerate(table.roots):
            problem = root_id_problem(root)
            if problem is None:
                continue
            first = int(np.flatnonzero(table.root_code == code)[0])
            origin = table.origin(first)
            place = origin.where if origin is not None and origin.where else "(file)"
            self.defects.append(Defect(name, place, root, f"{problem} (root_id)"))

    def in_file_order(self) -> list[Defect]:
        """The defects grouped by file (in the order the files were read), each file's by line."""
        rank: dict[str, int] = {}
        for d in self.defects:
            rank.setdefault(d.file, len(rank))

        def line(d: Defect) -> int:
            tail = d.path[5:] if d.path.startswith("line ") else ""
            return int(tail) if tail.isdigit() else (0 if d.path != "(more)" else 1 << 62)

        return sorted(self.defects, key=lambda d: (rank[d.file], line(d)))


_FILE_KEYS = ("format", "path")


def _mirrored(table: JudgmentTable, b_treated: frozenset[str]) -> JudgmentTable:
    """Natural pairs: the judgments were read as if side a held the treatment; on the roots
    whose treatment is side b, the choice and the order are mirrored (p_treatment: 1 - p)."""
    if not b_treated or not len(table):
        return table
    flip = np.array([r in b_treated for r in table.roots] + [False], bool)[table.root_code]
    choice, order = table.choice.copy(), table.order.copy()
    for codes, (x, y) in (
        (choice, (_CHOICE_CODE["treatment"], _CHOICE_CODE["null_partner"])),
        (order, (_ORDER_CODE["treatment_first"], _ORDER_CODE["null_first"])),
    ):
        was = codes.copy()
        codes[flip & (was == x)] = y
        codes[flip & (was == y)] = x
    p = np.where(flip, 1.0 - table.p_treatment, table.p_treatment)
    return replace(table, choice=choice, order=order, p_treatment=p)


def read_study(
    data: Any,
    judges: Sequence[str],
    trials: int,
    source: ConfigSource,
    on_pairs: Callable[[tuple[Stimulus, ...]], None] | None = None,
) -> StudyData:
    """Read every data file of a study (module docstring); ConfigError listing every defect.

    ``data`` is the study config's ``data`` block (its ``stimuli``, ``judgments``,
    ``reader_audit`` and ``root_order``), ``judges`` the registered judges' names and ``trials``
    their trials per presentation order; paths are relative to ``source``'s folder and defects
    of a config field are placed at its JSON path. ``on_pairs`` is handed the stimuli as soon as
    the pairs file is read without a defect (the study kind starts its gates there)."""
    refusals = Refusals(source)
    files = _Reader(source)
    stimuli: tuple[Stimulus, ...] = ()
    b_treated: frozenset[str] = frozenset()
    stim_loc = ("data", "stimuli", "path")
    stim_file = files.resolve(stim_loc, data.stimuli.path)
    stimuli_read = False
    if stim_file is not None:
        stim_path, stim_data = stim_file
        mapping = data.stimuli.mapping.model_dump()
        sides = {
            k: getattr(data.stimuli, k)
            for k in ("treatment_column", "treatment_values", "treatment_rule")
        }
        with refusals.at(("data", "stimuli", "mapping"), "the pair file reader"):
            try:
                pairs = read_pairs(
                    stim_path, mapping, display=data.stimuli.path, data=stim_data, **sides
                )
            except InputError as exc:
                if exc.parameter != "path":
                    raise
                files.defects.append(
                    Defect(source.display, json_path(stim_loc), data.stimuli.path, exc.allowed)
                )
                pairs = None
        if pairs is not None:
            files.defects.extend(pairs.defects)
            stimuli, b_treated = pairs.stimuli, pairs.b_treated
            stimuli_read = not pairs.defects
            if stimuli_read and on_pairs is not None:
                on_pairs(stimuli)
            files.files.append(
                data_file(
                    "stimuli", data.stimuli.path, stim_path.suffix[1:], stim_data, len(stimuli)
                )
            )
    tables: list[JudgmentTable] = []
    for k, spec in enumerate(data.judgments):
        loc: tuple[str | int, ...] = ("data", "judgments", k)
        frame = (FRAMES.get() or {}).get(spec.path) if spec.format == "table" else None
        if frame is not None:  # a DataFrame's canonical CSV, given through the Python API
            judgment_file: tuple[Path, bytes] | None = (Path(spec.path).with_suffix(".csv"), frame)
        else:
            judgment_file = files.resolve((*loc, "path"), spec.path)
        if judgment_file is None:
            continue
        path, raw = judgment_file
        options = {
            key: value
            for key, value in spec.model_dump(by_alias=True).items()
            if key not in _FILE_KEYS and value is not None
        }
        params = {key: (*loc, key) for key in options}
        params.update({"mapping['order']": (*loc, "mapping"), "value_maps": (*loc, "value_maps")})
        with refusals.at(loc, f"the {spec.format} importer", params=params):
            table, found = read_judgment_file(
                spec.format, path, spec.path, options, raw, files.notes
            )
        files.defects.extend(found)
        files.check_roots(spec.path, table)
        tables.append(table)
        fmt = spec.format if frame is None else f"{spec.format} (frame)"
        files.files.append(data_file("judgments", spec.path, fmt, raw, len(table)))
    a = data.reader_audit
    readings = Readings((), (), (), ())
    audit_file = None if a is None else files.resolve(("data", "reader_audit", "path"), a.path)
    if audit_file is not None:
        audit_path, audit_data = audit_file
        readings, found = read_readings(audit_path, a.mapping.model_dump(), a.path, audit_data)
        files.defects.extend(found)
        files.files.append(
            data_file("reader_audit", a.path, audit_path.suffix[1:], audit_data, len(readings))
        )
        if a.categories is not None:
            allowed = set(a.categories)
            for line, cat in zip(readings.lines, readings.category, strict=True):
                if cat not in allowed:
                    files.defects.append(
                        Defect(a.path, f"line {line}", cat, "one of " + ", ".join(a.categories))
                    )
    order_file: tuple[str, ...] | None = None
    if data.root_order is not None:
        order_read = files.resolve(("data", "root_order"), data.root_order)
        if order_read is not None:
            known = {s.id for s in stimuli} if stimuli_read else None
            order_file, found = read_order_file(
                order_read[0], data.root_order, known, order_read[1]
            )
            files.defects.extend(found)
            files.files.append(
                data_file("root_order", data.root_order, "text", order_read[1], len(order_file))
            )
    table = _mirrored(JudgmentTable.concat(tables), b_treated)
    if stimuli_read:
        files.defects.extend(
            check_study_table(
                table, [s.id for s in stimuli], data.stimuli.path, list(judges), trials
            )
        )
    if files.defects:
        raise ConfigError(files.in_file_order())
    return StudyData(tuple(files.files), stimuli, table, readings, order_file, tuple(files.notes))
