"""MkDocs hook: the configuration reference, generated at build time from the JSON Schemas.

Each config kind's page (``reference/<kind>.md``) is rendered from ``verdictpack schema KIND``,
run through the installed command line, so the reference is never a stale copy: a field added,
renamed or re-bounded in the code shows up in the next build. Nothing is written into docs/; the
pages exist only in the build.
"""

from __future__ import annotations

import json
import subprocess
import sys
from typing import Any

from mkdocs.structure.files import File, Files

KINDS = ("sizing", "verdict", "judges", "engine", "battery", "study")
BOUNDS = (
    ("minimum", "≥ {}"),
    ("exclusiveMinimum", "> {}"),
    ("maximum", "≤ {}"),
    ("exclusiveMaximum", "< {}"),
    ("minLength", "at least {} characters"),
    ("maxLength", "at most {} characters"),
    ("minItems", "at least {} items"),
    ("maxItems", "at most {} items"),
    ("pattern", "matches `{}`"),
)


def _schemas() -> dict[str, dict[str, Any]]:
    procs = {
        kind: subprocess.Popen(
            [sys.executable, "-m", "verdictpack", "schema", kind],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for kind in KINDS
    }
    out = {}
    for kind, proc in procs.items():
        stdout, stderr = proc.communicate(timeout=120)
        if proc.returncode != 0:
            raise RuntimeError(f"verdictpack schema {kind} failed: {stderr.strip()}")
        out[kind] = json.loads(stdout)
    return out


def _cell(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")


def _anchor(name: str) -> str:
    return name.lower()


def _type(node: dict[str, Any]) -> str:
    if "$ref" in node:
        name = node["$ref"].rsplit("/", 1)[-1]
        return f"[{name}](#{_anchor(name)})"
    if "const" in node:
        return f"`{json.dumps(node['const'])}`"
    if "enum" in node:
        return "one of " + ", ".join(f"`{json.dumps(v)}`" for v in node["enum"])
    for key in ("anyOf", "oneOf"):
        if key in node:
            parts = [_type(n) for n in node[key]]
            return " or ".join(dict.fromkeys(parts))
    kind = node.get("type")
    if kind == "array":
        items = node.get("items")
        return f"list of {_type(items)}" if items else "list"
    if kind == "object" and isinstance(node.get("additionalProperties"), dict):
        return f"object of {_type(node['additionalProperties'])}"
    return str(kind) if kind else "any"


def _bounds(node: dict[str, Any]) -> list[str]:
    found = [
        "non-empty" if (key, node[key]) == ("minLength", 1) else fmt.format(node[key])
        for key, fmt in BOUNDS
        if key in node
    ]
    for key in ("anyOf", "oneOf"):
        for sub in node.get(key, []):
            found.extend(b for b in _bounds(sub) if b not in found)
    if node.get("type") == "array" and isinstance(node.get("items"), dict):
        found.extend(f"each {b}" for b in _bounds(node["items"]))
    return found


def _table(title: str, obj: dict[str, Any]) -> list[str]:
    lines = [f"### {title}", ""]
    if obj.get("description"):
        lines += [obj["description"], ""]
    props = obj.get("properties", {})
    if not props:
        return [*lines, f"Type: {_type(obj)}.", ""]
    required = set(obj.get("required", []))
    lines += ["| field | type | required / default | bounds | meaning |", "|---|---|---|---|---|"]
    for name, node in props.items():
        need = (
            "required"
            if name in required
            else (f"default `{json.dumps(node['default'])}`" if "default" in node else "optional")
        )
        lines.append(
            "| `{}` | {} | {} | {} | {} |".format(
                name,
                _cell(_type(node)),
                _cell(need),
                _cell("; ".join(_bounds(node))),
                _cell(node.get("description", "")),
            )
        )
    return [*lines, ""]


def render(kind: str, schema: dict[str, Any]) -> str:
    lines = [
        f"# `{kind}` config reference",
        "",
        f"Generated from `verdictpack schema {kind}` when this site was built (the code is the",
        "source; this page cannot drift from it). Unknown keys are refused everywhere.",
        "",
        f"## The `{kind}` config",
        "",
    ]
    lines += _table("Top level", schema)[2:]
    defs = schema.get("$defs", {})
    if defs:
        lines += ["## Blocks", ""]
        for name in sorted(defs):
            lines += _table(name, defs[name])
    return "\n".join(lines)


def on_files(files: Files, config: Any) -> Files:
    for kind, schema in _schemas().items():
        files.append(File.generated(config, f"reference/{kind}.md", content=render(kind, schema)))
    return files
