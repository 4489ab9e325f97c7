"""Config fuzzer: any raw value at any JSON path of any example is a result or a refusal by name.

Every example config in ``examples/*.json`` is first shrunk (fewer replicates, a small cap, fewer
candidates) so that an accepted config runs in a fraction of a second; the shrunk base itself must
run. Then one raw value is written by hand, as JSON text, at one JSON path of it (any key or list
index, nested, or the whole document): NaN, Infinity, -Infinity, 1e308, -1e308, -0.0, 10**400,
"", [], {}, null, a 10,000-level nesting or a duplicated key. The command line, run in-process
with ``--out``, must exit 0 or 2, never 1 (an internal error), never print a traceback; on exit 2
one defect names the injected path, an ancestor of it or (for a structured value) a path inside
it (in a study's data block, a defect of the file that block reads, by file and line, will do),
and the output folder does not exist. Values that are not JSON, or that the loader refuses
wherever they stand, must exit 2 at every path (swept exhaustively, without Hypothesis: they
never reach a run, so they are cheap).
"""

from __future__ import annotations

import contextlib
import copy
import io
import json
import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from conftest import EXAMPLES
from verdictpack._cli import main
from verdictpack.verify._seal import study_data_paths

Loc = tuple[str | int, ...]

# Per kind: the cheap setting of the knobs that make a run expensive (each path exists in that
# kind's examples; the test below fails if one does not, so the table cannot silently rot).
SHRINK: dict[str, dict[Loc, Any]] = {
    "sizing": {("simulation", "replicates"): 1000},
    "verdict": {("replicates",): 100, ("sequential", "cap_roots"): 60},
    "judges": {("replicates",): 100, ("sequential", "cap_roots"): 60},
    "engine": {
        ("sequential", "cap_roots"): 60,
        ("stimuli", "candidates"): 120,
        ("human", "audit", "roots"): 20,
        ("human", "baseline", "replicates"): 1000,
        ("human", "baseline", "pilot_roots"): 10,
        ("power", "replicates"): 50,
    },
    "battery": {
        ("replicates",): 100,
        ("block_size",): 50,
        ("sequential", "cap_roots"): 60,
        ("designs_replicates",): 100,
    },
    "study": {},  # cheap as it is (its data are small)
}

NESTING = "[" * 10_000 + "]" * 10_000
# label -> raw JSON text; "duplicate key" is built from the config itself (see _render)
RAW: dict[str, str] = {
    "NaN": "NaN",
    "Infinity": "Infinity",
    "-Infinity": "-Infinity",
    "1e308": "1e308",
    "-1e308": "-1e308",
    "-0.0": "-0.0",
    "10**400": str(10**400),
    '""': '""',
    "[]": "[]",
    "{}": "{}",
    "null": "null",
    "nesting": NESTING,
}
DUPLICATE = "duplicate key"
# refused by the loader wherever they stand: exit 2 at every path, without exception
ALWAYS_REFUSED = ("NaN", "Infinity", "-Infinity", "10**400", "nesting", DUPLICATE)
VALUES = (*RAW, DUPLICATE)

EXAMPLE_FILES = sorted(EXAMPLES.glob("*.json"))


def _set(obj: Any, loc: Loc, value: Any) -> None:
    for part in loc[:-1]:
        obj = obj[part]
    obj[loc[-1]] = value


def _get(obj: Any, loc: Loc) -> Any:
    for part in loc:
        obj = obj[part]
    return obj


def shrunk(path: Path) -> dict[str, Any]:
    data = json.loads(path.read_text())
    table = SHRINK.get(data["kind"])
    if table is None:
        pytest.fail(f"{path.name}: kind {data['kind']!r} has no SHRINK entry in this fuzzer")
    for loc, value in table.items():
        try:  # a shrink may set a key the example leaves to its default (its parent exists)
            _get(data, loc[:-1])
        except (KeyError, IndexError, TypeError):
            pytest.fail(f"{path.name}: shrink path {loc} is not in the example")
        _set(data, loc, value)
    return data


def all_paths(value: Any, loc: Loc = ()) -> Iterator[Loc]:
    """Every JSON path of a value: the document itself, every key and list index, nested."""
    yield loc
    if isinstance(value, dict):
        for key, item in value.items():
            yield from all_paths(item, (*loc, key))
    elif isinstance(value, list):
        for i, item in enumerate(value):
            yield from all_paths(item, (*loc, i))


def json_path(loc: Loc) -> str:
    return "$" + "".join(f"[{p}]" if isinstance(p, int) else f".{p}" for p in loc)


def _in_parent(target: Loc) -> bool:
    return bool(target) and isinstance(target[-1], str)


def _render(value: Any, loc: Loc, target: Loc, raw: str | None) -> str:
    """JSON text of ``value`` with ``raw`` written at ``target``. ``raw=None`` duplicates a key:
    the target's own key in its parent object; for the document or a list item, the first key of
    the object there (or, where no object is there, a fresh object with one key twice)."""
    here = loc == target
    if here and raw is not None:
        return raw
    own = raw is None and here and not _in_parent(target)
    if own and not (isinstance(value, dict) and value):
        return '{"dup": 0, "dup": 0}'
    if isinstance(value, dict):
        members = []
        for i, (key, item) in enumerate(value.items()):
            text = f"{json.dumps(key)}: {_render(item, (*loc, key), target, raw)}"
            members.append(text)
            if (raw is None and (*loc, key) == target) or (own and i == 0):
                members.append(text)
        return "{" + ", ".join(members) + "}"
    if isinstance(value, list):
        items = (_render(x, (*loc, i), target, raw) for i, x in enumerate(value))
        return "[" + ", ".join(items) + "]"
    return json.dumps(value)


def inject(base: dict[str, Any], target: Loc, label: str) -> str:
    return _render(base, (), target, None if label == DUPLICATE else RAW[label])


def with_data(example: Path, folder: Path) -> Path:
    """Copy a study example's data files into ``folder`` at their relative paths (a config's
    data paths resolve against its own folder); other kinds have none. Returns ``folder``."""
    for rel in study_data_paths(json.loads(example.read_text())):
        (folder / rel).parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(example.parent / rel, folder / rel)
    return folder


def _run(text: str, folder: Path) -> tuple[int, str, Path, Path]:
    cfg = folder / "config.json"
    cfg.write_text(text, encoding="utf-8")
    out = folder / "out"
    stdout, stderr = io.StringIO(), io.StringIO()
    try:
        with contextlib.redirect_stdout(stdout), contextlib.redirect_stderr(stderr):
            code = main([str(cfg), "--out", str(out), "--quiet"])
    finally:
        cfg.unlink()  # a fresh file each run: rewriting one in place is slow on some disks
    return code, stdout.getvalue() + stderr.getvalue(), cfg, out


def defect_paths(output: str, cfg: Path) -> list[str]:
    """The JSON paths of the defect lines ``FILE: PATH: received ...`` about ``cfg``."""
    prefix = f"{cfg}: $"
    return [
        line[len(prefix) - 1 :].split(": received ", 1)[0]
        for line in output.splitlines()
        if line.startswith(prefix) and ": received " in line
    ]


def related(reported: str, injected: str) -> bool:
    """``reported`` is ``injected``, an ancestor of it, or a path inside it."""

    def within(inner: str, outer: str) -> bool:
        return inner == outer or (inner.startswith(outer) and inner[len(outer)] in ".[")

    return within(injected, reported) or within(reported, injected)


def names_its_data(base: dict[str, Any], target: Loc, output: str) -> bool:
    """A defect of the data file read by the study block ``target`` is in (``FILE: line N:
    received ...``): a block's maps and columns are legal in any shape and wrong only for the
    file's rows, which are named by file and line."""
    if target[:2] == ("data", "judgments") and len(target) > 2:
        block = base["data"]["judgments"][target[2]]
    elif target[:2] == ("data", "stimuli"):
        block = base["data"]["stimuli"]
    else:
        return False
    prefix = f"{block['path']}: "
    return any(x.startswith(prefix) and ": received " in x for x in output.splitlines())


def check(base: dict[str, Any], target: Loc, label: str, folder: Path) -> None:
    """One injection, run in ``folder`` (left as found: an accepted run's output is removed)."""
    text = inject(base, target, label)
    where = f"{base['kind']} config, {json_path(target)} = {label}"
    code, output, cfg, out = _run(text, folder)
    try:
        assert "Traceback" not in output, f"{where}: a traceback\n{output}"
        assert code in (0, 2), f"{where}: exit {code}\n{output[-2000:]}"
        if label in ALWAYS_REFUSED:
            assert code == 2, f"{where}: accepted a value the loader must refuse\n{output}"
        if code == 2:
            assert not out.exists(), f"{where}: refused, yet {out} was written"
            paths = defect_paths(output, cfg)
            injected = json_path(target)
            named = any(related(p, injected) for p in paths)
            assert named or names_its_data(base, target, output), (
                f"{where}: refused without naming {injected} (or an ancestor / a path inside "
                f"it)\n{output[-2000:]}"
            )
        else:
            assert (out / "results.json").is_file(), f"{where}: exit 0 without results\n{output}"
    finally:
        if out.is_dir():
            shutil.rmtree(out)


def test_every_example_has_a_shrink() -> None:
    assert EXAMPLE_FILES, "no examples found"
    kinds = {json.loads(p.read_text())["kind"] for p in EXAMPLE_FILES}
    assert kinds <= set(SHRINK)


@pytest.mark.parametrize("example", EXAMPLE_FILES, ids=lambda p: p.stem)
def test_shrunk_base_runs(example: Path) -> None:
    base = shrunk(example)
    with tempfile.TemporaryDirectory(prefix="vp-fuzz-") as tmp:
        code, output, _, out = _run(json.dumps(base, indent=2), with_data(example, Path(tmp)))
        assert code == 0, output
        assert (out / "results.json").is_file()


def test_injection_writes_the_raw_text_at_the_path() -> None:
    base = {"a": {"b": [1, {"c": 2}]}, "d": 3}
    assert inject(base, ("a", "b", 1, "c"), "NaN") == '{"a": {"b": [1, {"c": NaN}]}, "d": 3}'
    assert inject(base, ("d",), "-0.0") == '{"a": {"b": [1, {"c": 2}]}, "d": -0.0}'
    assert inject(base, ("d",), DUPLICATE).endswith('"d": 3, "d": 3}')
    assert inject(base, ("a", "b", 1), DUPLICATE) == ('{"a": {"b": [1, {"c": 2, "c": 2}]}, "d": 3}')
    assert inject(base, ("a", "b", 0), DUPLICATE) == (
        '{"a": {"b": [{"dup": 0, "dup": 0}, {"c": 2}]}, "d": 3}'
    )
    assert inject(base, (), DUPLICATE).startswith('{"a": {"b": [1, {"c": 2}]}, "a": {')
    assert related("$.a", "$.a.b[1]") and related("$.a.b[1].c", "$.a.b[1]")
    assert not related("$.a.bc", "$.a.b") and not related("$.d", "$.a")


@pytest.mark.parametrize("example", EXAMPLE_FILES, ids=lambda p: p.stem)
def test_values_the_loader_refuses_are_refused_at_every_path(example: Path, tmp_path) -> None:
    base = shrunk(example)
    with_data(example, tmp_path)
    for target in all_paths(base):
        for label in ALWAYS_REFUSED:
            check(base, target, label, tmp_path)


@pytest.mark.parametrize("example", EXAMPLE_FILES, ids=lambda p: p.stem)
def test_any_value_at_any_path_is_a_result_or_a_refusal_by_name(example: Path) -> None:
    base = shrunk(example)
    paths = list(all_paths(base))

    @settings(
        derandomize=True,
        database=None,
        max_examples=150,
        deadline=None,
        suppress_health_check=[HealthCheck.too_slow],
    )
    @given(target=st.sampled_from(paths), label=st.sampled_from(VALUES))
    def fuzz(target: Loc, label: str) -> None:
        check(copy.deepcopy(base), target, label, folder)

    with tempfile.TemporaryDirectory(prefix="vp-fuzz-") as tmp:
        folder = with_data(example, Path(tmp))
        fuzz()
