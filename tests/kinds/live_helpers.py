"""Shared pieces of the live study tests: the tiny study with its judges asked over an endpoint,
the items the test server recognises, and the server's judge sheets (and the test server's own
names, from tests/evidence/live/oai_server.py)."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

from conftest import write_tiny_study

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "evidence" / "live"))
from oai_server import Faults, ServerConfig, Sheet, serve

# the test server's names are re-exported: importing this module puts it on the path
__all__ = ["Faults", "ServerConfig", "Sheet", "items", "live_study", "serve", "server_config"]


def live_study(
    tmp_path: Path, base_url: str, *, roots: int = 40, cap: int = 40, **endpoint: Any
) -> tuple[Path, dict[str, Any]]:
    """The tiny study of ``roots`` roots with its two judges asked live (humans and readings from
    files), ``cap`` roots at most; ``endpoint`` overrides the judges' endpoint settings."""
    study = write_tiny_study(tmp_path / "study", roots=roots)
    config = json.loads(study.read_text())
    # the judges' file rows go: they are asked live now
    judgments = study.parent / "data" / "judgments.csv"
    rows = judgments.read_text().splitlines()
    judgments.write_text("\n".join([rows[0], *[r for r in rows[1:] if ",human," in r]]) + "\n")
    for judge in config["panel"]["judges"]:
        judge["endpoint"] = {
            "base_url": base_url,
            "model": judge["name"],
            "profile": "openai",
            "concurrency": 4,
            "price": {"per_call": 0.001},
            "retries": {"base_delay_seconds": 0.005, "max_delay_seconds": 0.05},
            **endpoint,
        }
    config["sequential"]["cap_roots"] = cap
    study.write_text(json.dumps(config, indent=2))
    return study, config


def items(study: Path) -> dict[str, bool]:
    """The study's texts -> is it the treatment (how the test server tells the order shown)."""
    out = {}
    for line in (study.parent / "data" / "pairs.jsonl").read_text().splitlines():
        rec = json.loads(line)
        out[rec["treatment"]] = True
        out[rec["null_partner"]] = False
    return out


def server_config(study: Path, **kw: Any) -> ServerConfig:
    """The test server for the tiny study: judge-a at 0.9 with a position bias, judge-b at 0.85."""
    judges = {"judge-a": Sheet(rate=0.9, position_bias=0.05), "judge-b": Sheet(rate=0.85)}
    return ServerConfig(judges=judges, items=items(study), seed=7, **kw)
