"""provenance.json: what produced an output folder, with the wall-clock kept in one field.

Everything except the ``wall_clock`` field is a pure function of the config bytes, the seed and the
installed versions, so two runs of the same config produce byte-identical files apart from that
field. No machine path is recorded: the config is named by its file name only.
"""

from __future__ import annotations

import hashlib
import platform
from dataclasses import dataclass
from importlib import metadata
from typing import Any

import rfc8785

from verdictpack._results import dump_json, to_jsonable
from verdictpack.config._compiler import ConfigSource

__all__ = ["WALL_CLOCK_FIELD", "Provenance", "provenance", "render_provenance", "seed_commitment"]

WALL_CLOCK_FIELD = "wall_clock"
# matplotlib draws report.html's pictures: their bytes follow its version
_DEPENDENCIES = ("numpy", "scipy", "pydantic", "rfc8785", "matplotlib")


def seed_commitment(seed: int, config_jcs_sha256: str) -> str:
    """SHA-256 binding the seed to the canonical config; publishable before any data exists."""
    text = f"verdictpack/seed-commitment/v1\n{config_jcs_sha256}\n{int(seed)}\n"
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


@dataclass(frozen=True)
class Provenance:
    config_name: str
    config_sha256: str
    config_jcs_sha256: str
    kind: str
    seed: int | None
    seed_commitment: str | None
    settings: dict[str, Any]
    tool: dict[str, str]


def _version(name: str) -> str:
    try:
        return metadata.version(name)
    except metadata.PackageNotFoundError:
        return "not installed"


def provenance(
    source: ConfigSource, kind: str, seed: int | None, settings: dict[str, Any] | None = None
) -> Provenance:
    canonical = rfc8785.dumps(source.json())
    jcs = hashlib.sha256(canonical).hexdigest()
    tool = {"verdictpack": _version("verdictpack"), "python": platform.python_version()}
    tool.update({dep: _version(dep) for dep in _DEPENDENCIES})
    return Provenance(
        config_name=source.name,
        config_sha256=source.sha256,
        config_jcs_sha256=jcs,
        kind=kind,
        seed=seed,
        seed_commitment=None if seed is None else seed_commitment(seed, jcs),
        settings=dict(settings or {}),
        tool=tool,
    )


def render_provenance(prov: Provenance, wall_clock: dict[str, Any]) -> str:
    """provenance.json text; ``wall_clock`` is the only field that varies between runs."""
    data = to_jsonable(prov)
    data[WALL_CLOCK_FIELD] = wall_clock
    return dump_json(data)
