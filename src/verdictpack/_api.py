"""The Python API: run a config and get its result object back; rendering is a separate step.

:func:`run` validates a config (a path, or a mapping with the folder its data paths are
relative to), runs its kind and returns a :class:`Result`: the kind's frozen result object
(``.result``) with the views most callers want -- ``.verdict``, ``.h_interval``,
``.estimate`` -- and the renderings on request (``.files()``, ``.to_json()``, ``.write(out)``).
Nothing is written unless ``.write`` is called; the files are exactly those the command line
writes for the same config (``provenance.json``'s wall-clock field aside).

A study's ``table`` judgment files may be given as DataFrames (``frames``: pandas, polars or a
pyarrow table, duck-typed, none of them imported here), by the path the config names: each is
read into the same canonical table as the equivalent CSV, from a canonical CSV of its columns
(``\\n`` line ends, missing values empty), whose SHA-256 provenance records (format
``table (frame)``) in place of a file's.

A study with live judges keeps a ledger of paid judgments in its folder, so it runs from the
command line (``verdictpack CONFIG --out DIR``) only; :func:`run` refuses it by name.
"""

from __future__ import annotations

import csv
import io
import json
import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from verdictpack._errors import UsageError

__all__ = ["Result", "run"]


@dataclass(frozen=True)
class Result:
    """One run's result. ``kind``: the config's kind; ``result``: the kind's frozen result
    object (every number the outputs hold); ``config``: where the config came from."""

    kind: str
    config: str
    result: Any
    _wall: dict[str, Any] = field(default_factory=dict, repr=False, compare=False)

    @property
    def verdict(self) -> str | None:
        """The registered track's verdict (study, engine); None for kinds that size or
        simulate rather than decide."""
        reg = getattr(self.result, "registered", None)
        return None if reg is None else str(reg.verdict)

    @property
    def h_interval(self) -> tuple[float, float] | None:
        """The registered track's h-interval at its last root, or None."""
        reg = getattr(self.result, "registered", None)
        return None if reg is None else reg.h_interval

    @property
    def estimate(self) -> Any:
        """A study's point estimate of h and both streams' rates (``StudyEstimate``), or None."""
        return getattr(self.result, "estimate", None)

    def files(self) -> dict[str, str]:
        """Every output file's text, by name, as the command line writes them."""
        from verdictpack._cli import with_provenance
        from verdictpack.render import render

        return with_provenance(self.result, render(self.result), self._wall)

    def to_json(self) -> str:
        """results.json's text."""
        return self.files()["results.json"]

    def to_dict(self) -> dict[str, Any]:
        """results.json, parsed."""
        parsed: dict[str, Any] = json.loads(self.to_json())
        return parsed

    def write(self, out: str | os.PathLike[str], *, force: bool = False) -> Path:
        """Write the files into ``out`` (refused, as on the command line, when it holds
        anything verdictpack did not write, unless it is empty or ``force`` replaces an
        earlier verdictpack output)."""
        from verdictpack._output import claim_output

        with claim_output(str(out), config=self.config, force=force) as claim:
            claim.write(self.files())
        return Path(out)


def _source(config: str | os.PathLike[str] | Mapping[str, Any], base: str | None) -> Any:
    from verdictpack.config._compiler import ConfigSource, load_source

    if isinstance(config, Mapping):
        try:
            data = json.dumps(config, allow_nan=False).encode()
        except (TypeError, ValueError, RecursionError) as exc:
            raise UsageError(f"config: expected a JSON-serialisable mapping; {exc}") from None
        folder = Path(base if base is not None else os.getcwd()).resolve()
        return ConfigSource(display="<mapping>", name="<mapping>", data=data, folder=folder)
    if base is not None:
        raise UsageError("base: only for a config given as a mapping; received a path with base")
    return load_source(os.fspath(config))


def _frame_columns(frame: Any, name: str) -> dict[str, list[Any]]:
    """A DataFrame's columns as lists: pyarrow's ``to_pydict()``, polars'
    ``to_dict(as_series=False)``, pandas' ``to_dict("list")``."""
    try:
        if hasattr(frame, "to_pydict"):
            columns = frame.to_pydict()
        elif type(frame).__module__.split(".")[0] == "polars":
            columns = frame.to_dict(as_series=False)
        else:
            columns = frame.to_dict("list")
    except (AttributeError, TypeError, ValueError) as exc:
        raise UsageError(
            f"frames[{name!r}]: expected a pandas or polars DataFrame or a pyarrow table; "
            f"received {type(frame).__name__} ({exc})"
        ) from None
    if not isinstance(columns, dict):
        raise UsageError(f"frames[{name!r}]: expected a DataFrame; received {type(frame).__name__}")
    return {str(k): list(v) for k, v in columns.items()}


def _frame_value(v: Any) -> str:
    """A frame's cell as CSV text: missing (None, NaN, NA, NaT) empty, numpy scalars as Python
    values, text under verdictpack's spreadsheet rule (undone by the reader)."""
    from verdictpack._cells import csv_cell
    from verdictpack.evidence._table import cell_text

    try:
        missing = v is None or bool(v != v)
    except (TypeError, ValueError):  # pandas.NA refuses bool()
        missing = True
    if missing:
        return ""
    if hasattr(v, "item") and not isinstance(v, str | bytes):
        v = v.item()  # a numpy scalar
    return csv_cell(cell_text(v)) if isinstance(v, str) else cell_text(v)


def frame_bytes(frame: Any, name: str = "frame") -> bytes:
    """The canonical CSV of a DataFrame (module docstring): the bytes read and hashed."""
    columns = _frame_columns(frame, name)
    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\n")
    w.writerow(columns)
    w.writerows(zip(*(map(_frame_value, v) for v in columns.values()), strict=True))
    return buf.getvalue().encode("utf-8")


def _frames(frames: Mapping[str, Any], kind: str, parsed: Any) -> dict[str, bytes]:
    """Each frame's canonical CSV by its path; UsageError for a path the config does not name
    as a table judgment file."""
    if not isinstance(frames, Mapping):
        raise UsageError(f"frames: expected a mapping of data paths to DataFrames; {frames!r}")
    specs = parsed.data.judgments if kind == "study" else ()
    tables = sorted(spec.path for spec in specs if spec.format == "table")
    for name in frames:
        if name not in tables:
            raise UsageError(
                f"frames[{name!r}]: expected the path of a table judgment file of the config "
                f"({', '.join(tables) or 'none'})"
            )
    return {name: frame_bytes(frame, name) for name, frame in frames.items()}


def run(
    config: str | os.PathLike[str] | Mapping[str, Any],
    *,
    base: str | None = None,
    workers: int = 1,
    frames: Mapping[str, Any] | None = None,
) -> Result:
    """Validate and run one config; return its :class:`Result` (module doc).

    ``config``: a config file's path, or the config as a mapping, whose data paths (a study's)
    are then relative to ``base`` (default: the working directory). Bad input raises
    :class:`~verdictpack.ConfigError` (every defect, by JSON path) or
    :class:`~verdictpack.UsageError`, as the command line reports them. ``frames``: a study's
    table judgment files as DataFrames, by the path its config names (module docstring)."""
    from verdictpack._cli import _parsed, load_layer, timed
    from verdictpack.evidence._files import FRAMES
    from verdictpack.kinds._base import RunOptions

    if isinstance(workers, bool) or not isinstance(workers, int) or workers < 1:
        raise UsageError(f"workers: expected an integer >= 1; received {workers!r}")
    source, kind, parsed = _parsed(_source(config, base))
    layer = load_layer(kind)
    if kind == "study":
        from verdictpack.kinds._study_live import is_live

        if is_live(parsed):
            raise UsageError(
                f"{source.display}: a study with live judges keeps a ledger of paid judgments in "
                "its folder; run it from the command line: verdictpack CONFIG --out DIR"
            )
    given = _frames(frames or {}, kind, parsed)
    token = FRAMES.set(given)
    try:
        result, wall = timed(lambda: layer.run(parsed, source, RunOptions(workers=workers)))
    finally:
        FRAMES.reset(token)
    wall.update(workers=workers, executor="local")
    return Result(kind=kind, config=str(source.display), result=result, _wall=wall)
