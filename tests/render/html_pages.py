"""Small configs of every kind, run in-process, for the report.html tests (test_html.py and the
browser test): each is an example config with fewer replicates, candidates or roots."""

from __future__ import annotations

import copy
import json
from pathlib import Path

from conftest import load_example, write_tiny_study

KINDS = ("sizing", "verdict", "judges", "engine", "battery", "study")


def small_configs(folder: Path) -> dict[str, Path]:
    """kind -> a small config file of that kind, written under ``folder``."""
    folder.mkdir(parents=True, exist_ok=True)
    cfgs: dict[str, dict] = {}
    cfgs["sizing"] = load_example("sizing_summarization.json")
    v = copy.deepcopy(load_example("verdict_summarization.json"))
    v["replicates"] = 200
    v["sequential"]["cap_roots"] = 200
    cfgs["verdict"] = v
    j = copy.deepcopy(load_example("judges_summarization.json"))
    j["replicates"] = 100
    j["sequential"]["cap_roots"] = 200
    cfgs["judges"] = j
    e = copy.deepcopy(load_example("engine_summarization.json"))
    e["stimuli"]["candidates"] = 500
    e["power"]["replicates"] = 50
    e["human"]["baseline"]["replicates"] = 2000
    cfgs["engine"] = e
    b = copy.deepcopy(load_example("battery_summarization.json"))
    b["replicates"] = 200
    b["block_size"] = 100
    if "designs" in b:
        b["designs_replicates"] = 100
    b["sequential"]["cap_roots"] = 150
    if "true_h_grid" in b:
        b["true_h_grid"] = {"start": 0.0, "stop": 0.6, "points": 4, "replicates": 100}
    cfgs["battery"] = b
    paths = {kind: folder / f"{kind}.json" for kind in cfgs}
    for kind, data in cfgs.items():
        paths[kind].write_text(json.dumps(data))
    paths["study"] = write_tiny_study(folder / "study", roots=60)
    return paths
