"""The self-audit's findings: :class:`Finding`, :class:`AuditReport`, the collecting
:class:`_Auditor` and the comparison helpers every check uses (tolerances, JSON paths)."""

from __future__ import annotations

import argparse
import json
import math
import re
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
from numpy.typing import NDArray

from verdictpack._errors import UsageError

FloatArray = NDArray[np.float64]

# Tolerances of the comparisons (documented in the report lines they produce).
_TOL_EXACT = 1e-8  # exact powers / probabilities: ours against theirs
_TOL_REL = 1e-9  # relations that hold up to floating point (sums, ratios)
_TOL_BOUND = 1e-6  # engine bounds: agreement
_TOL_NARROW = 1e-9  # engine bounds: how much narrower than ours a published bound may be
_MAX_Z = 5.0  # a simulated check more than 5 MCSE from the exact value fails (P ≈ 6e-7)


# ==============================================================================================
# Findings
# ==============================================================================================


@dataclass(frozen=True)
class Finding:
    """One check: ``status`` is ``pass``, ``fail`` or ``unverified``."""

    status: str
    where: str
    what: str
    expected: str = ""
    found: str = ""

    def line(self) -> str:
        label = {"pass": "ok", "fail": "FAIL", "unverified": "UNVERIFIED"}[self.status]
        text = f"{label} {self.where} — {self.what}"
        if self.status == "fail":
            text += f": expected {self.expected}, found {self.found}"
        elif self.status == "unverified":
            text += f" (reason: {self.expected})"
        return text


@dataclass(frozen=True)
class AuditReport:
    """All findings for one output folder."""

    run_dir: str
    kind: str
    findings: tuple[Finding, ...]

    @property
    def checks(self) -> int:
        return sum(1 for f in self.findings if f.status != "unverified")

    @property
    def failed(self) -> int:
        return sum(1 for f in self.findings if f.status == "fail")

    @property
    def unverified(self) -> int:
        return sum(1 for f in self.findings if f.status == "unverified")

    @property
    def passed(self) -> bool:
        return self.failed == 0

    def failures(self) -> list[Finding]:
        return [f for f in self.findings if f.status == "fail"]


def _show(v: Any) -> str:
    if isinstance(v, float):
        if v == 0 or 1e-4 <= abs(v) < 1e7:
            return f"{v:.12g}"
        return f"{v:.6e}"
    if isinstance(v, (list, tuple)):
        return "[" + ", ".join(_show(x) for x in v) + "]"
    if v is None:
        return "null"
    return str(v)


class _Auditor:
    """Collects findings; every helper returns whether its check passed."""

    def __init__(self) -> None:
        self.findings: list[Finding] = []

    def record(self, ok: bool, where: str, what: str, expected: Any = "", found: Any = "") -> bool:
        self.findings.append(
            Finding("pass" if ok else "fail", where, what, _show(expected), _show(found))
        )
        return ok

    def num(
        self,
        where: str,
        what: str,
        expected: float | None,
        found: Any,
        *,
        abs_tol: float = _TOL_EXACT,
        rel_tol: float = _TOL_REL,
    ) -> bool:
        ok = (
            _is_number(found) and expected is not None and _close(expected, found, abs_tol, rel_tol)
        )
        return self.record(ok, where, what, expected, found)

    def eq(self, where: str, what: str, expected: Any, found: Any) -> bool:
        if expected == found:
            return self.record(True, where, what)
        if isinstance(expected, (dict, list)) and isinstance(found, (dict, list)):
            path, e, f = _first_diff(expected, found, "")
            return self.record(False, where + path, what, e, f)
        return self.record(False, where, what, expected, found)

    def num_at(
        self,
        where: str,
        block: Any,
        key: str,
        what: str,
        expected: float | None,
        *,
        value: bool = False,
        abs_tol: float = _TOL_EXACT,
        rel_tol: float = _TOL_REL,
    ) -> bool:
        """:meth:`num` of field ``key`` of ``block`` (the JSON at ``where``); ``value``: of the
        field's figure value (:func:`_fv`)."""
        found = _fv(block[key]) if value else block[key]
        return self.num(f"{where}.{key}", what, expected, found, abs_tol=abs_tol, rel_tol=rel_tol)

    def eq_at(
        self, where: str, block: Any, key: str, what: str, expected: Any, *, value: bool = False
    ) -> bool:
        """:meth:`eq` of field ``key`` of ``block`` (the JSON at ``where``), as :meth:`num_at`."""
        return self.eq(f"{where}.{key}", what, expected, _fv(block[key]) if value else block[key])

    def true(self, where: str, what: str, cond: bool, expected: Any = "", found: Any = "") -> bool:
        return self.record(bool(cond), where, what, expected, found)

    def unverified(self, where: str, what: str, reason: str) -> None:
        self.findings.append(Finding("unverified", where, what, reason, ""))


def _first_diff(a: Any, b: Any, path: str) -> tuple[str, Any, Any]:
    """The first place where two JSON values differ: (relative path, a there, b there)."""
    if isinstance(a, dict) and isinstance(b, dict):
        for k in list(a) + [k for k in b if k not in a]:
            if k not in a or k not in b:
                return f"{path}.{k}", a.get(k, "(missing)"), b.get(k, "(missing)")
            if a[k] != b[k]:
                return _first_diff(a[k], b[k], f"{path}.{k}")
    elif isinstance(a, list) and isinstance(b, list) and len(a) == len(b):
        for i, (x, y) in enumerate(zip(a, b, strict=True)):
            if x != y:
                return _first_diff(x, y, f"{path}[{i}]")
    return path, a, b


def _is_number(x: Any) -> bool:
    return isinstance(x, (int, float)) and not isinstance(x, bool) and math.isfinite(float(x))


def _close(a: float, b: float, abs_tol: float, rel_tol: float) -> bool:
    return abs(float(a) - float(b)) <= max(abs_tol, rel_tol * max(abs(float(a)), abs(float(b))))


def _fv(x: Any) -> Any:
    """The value of a Quantity ({"value", ...}) or the number itself."""
    if isinstance(x, dict) and "value" in x:
        return x["value"]
    return x


def _agree(
    A: _Auditor,
    file: str,
    doc: dict[str, Any],
    res: dict[str, Any],
    keys: Iterable[str],
    what: str = "{} as in results.json",
) -> None:
    """Each of ``keys`` of ``file`` (its JSON ``doc``) holds what results.json (``res``) holds."""
    for key in keys:
        A.eq(f"{file} $.{key}", what.format(key), res[key], doc.get(key))


def _check_totals(A: _Auditor, w: str, parts: list[Any], total: dict[str, Any]) -> None:
    """A total cost line (at ``w``) re-summed from its ``parts``: touches, then cost."""
    for key, add in (("touches", sum), ("cost", math.fsum)):
        A.num(
            f"{w}[total].{key}",
            f"total {key} re-summed",
            add(float(_fv(x[key])) for x in parts),
            _fv(total[key]),
            abs_tol=1e-9,
        )


def _jp(base: str, *keys: str | int) -> str:
    out = base
    for k in keys:
        out += f"[{k}]" if isinstance(k, int) else f".{k}"
    return out


def _load_json_bytes(raw: bytes, name: str) -> Any:
    def refuse(constant: str) -> Any:
        raise ValueError(f"non-finite number {constant} in {name}")

    return json.loads(raw.decode("utf-8"), parse_constant=refuse)


class _ArgumentParser(argparse.ArgumentParser):
    """The verify commands' parser: a command-line error is a UsageError (with the usage)."""

    def error(self, message: str) -> Any:
        raise UsageError(f"{message}\n{self.format_usage().strip()}")


YAML_SUFFIXES = (".yaml", ".yml")


def load_config_bytes(raw: bytes, name: str) -> Any:
    """A config file's value, read by its suffix: YAML (``.yaml`` / ``.yml``) with PyYAML's safe
    loader, directly (verify never imports config/, the code under audit: the loader there only
    accepts YAML that the safe loader reads into the same value), else strict JSON. A leading
    byte-order mark is not content (the config loader drops it too)."""
    raw = raw.removeprefix(b"\xef\xbb\xbf")
    if name.lower().endswith(YAML_SUFFIXES):
        import yaml

        try:
            return yaml.safe_load(raw.decode("utf-8"))
        except yaml.YAMLError as exc:
            raise ValueError(f"{name} is not YAML: {exc}") from None
    return _load_json_bytes(raw, name)


def _load_json(path: Path) -> Any:
    return _load_json_bytes(path.read_bytes(), path.name)


# ==============================================================================================
# Numbers as printed (CSV cells): a printed number matches a value at its printed precision
# ==============================================================================================

_PRINTED = re.compile(r"[-+]?\d+(?:\.(\d+))?(?:[eE]([-+]?\d+))?")


def _printed_match(text: str, value: Any) -> bool:
    """``text`` is one number (as ``:g``, ``.4f`` or ``str(int)`` print it) equal to ``value`` to
    half a unit in its last printed digit."""
    m = _PRINTED.fullmatch(str(text))
    if m is None or not _is_number(value):
        return False
    tol = 0.5 * 10.0 ** (int(m.group(2) or 0) - len(m.group(1) or ""))
    v = float(value)
    return abs(float(m.group(0)) - v) <= tol * (1 + 1e-9) + 1e-12 * max(1.0, abs(v))
