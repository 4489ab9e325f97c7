"""The simulated worlds held to their names, from results.json alone.

:func:`_audit_worlds` re-derives each ``worlds`` entry: the h its name says (from the scenario's
name and the construct, independently of the kind's code), its true h (the scenario's
``true_h``, itself re-derived from the judge sheets elsewhere; the engine's proof-run world
re-derived here from the sheets and the world's effect scale), and whether it departs from its
name by more than the tolerance; every named world of the kind must have its entry.
"""

from __future__ import annotations

import math
import re
from pathlib import Path
from typing import Any

from verdictpack.verify._findings import _Auditor, _fv, _is_number, load_config_bytes
from verdictpack.verify._rederive import _panel_rate, _phi

__all__ = ["WORLD_TOLERANCE", "_audit_worlds"]

# the self-audit's own copy of the kinds' tolerance (kinds/_worlds.py WORLD_TOLERANCE_H)
WORLD_TOLERANCE = 0.01


def _expected_worlds(res: dict[str, Any]) -> dict[str, tuple[float, bool, float, str]]:
    """where -> (named h, at least, true h, results path) for every named world of the result."""
    kind = res.get("kind")
    thr = float(res["construct"]["governing_threshold_h"])
    out: dict[str, tuple[float, bool, float, str]] = {}
    if kind == "engine":
        above = {}
        for k, oc in enumerate(res.get("power", [])):
            name = str(oc["scenario"])
            named: float | None = {"null": 0.0, "registered_alternative": thr}.get(name)
            m = re.match(r"^above_threshold h=([0-9.eE+-]+)$", name)
            if m:
                named = float(m.group(1))
                above[named] = oc
            if named is not None:
                out[f"power scenario `{name}`"] = (named, False, oc["true_h"], f"$.power[{k}]")
        for k, arm in enumerate(res.get("confound_arms", [])):
            oc = arm.get("outcome")
            if oc and oc["model_shift_h"] == 0 and oc["effect_scale"] == 0:
                out[f"confound arm `{oc['scenario']}`"] = (
                    0.0,
                    False,
                    oc["true_h"],
                    f"$.confound_arms[{k}].outcome",
                )
    elif kind == "verdict":
        for k, oc in enumerate(res.get("scenarios", [])):
            # the verdict kind's panel leans exactly 1 (h per unit of effect scale) at the baseline
            out[f"scenario `{oc['scenario']}`"] = (
                float(oc["effect_scale"]),
                False,
                oc["true_h"],
                f"$.scenarios[{k}]",
            )
    elif kind == "battery":
        for k, row in enumerate(res.get("scenarios", [])):
            oc, params = row["outcome"], row.get("parameters") or {}
            name = row["scenario"]
            base = params.get("stress_base") or "registered_alternative"
            named = {
                "null": 0.0,
                "registered_alternative": thr,
                "above_threshold": params.get("true_h"),
                "correlated_stress": thr if base == "registered_alternative" else 0.0,
            }.get(name)
            if named is not None:
                out[f"scenario `{row['label']}`"] = (
                    float(named),
                    False,
                    oc["true_h"],
                    f"$.scenarios[{k}].outcome",
                )
    elif kind == "judges":
        for k, c in enumerate(res.get("compositions", [])):
            out[f"composition `{c['name']}`, effect present"] = (
                thr,
                True,
                c["effect_present"]["true_h"],
                f"$.compositions[{k}].effect_present",
            )
            out[f"composition `{c['name']}`, effect absent"] = (
                0.0,
                False,
                c["effect_absent"]["true_h"],
                f"$.compositions[{k}].effect_absent",
            )
    return out


def _truth_world(res: dict[str, Any]) -> tuple[float, float] | None:
    """The engine's proof-run world: (named h, true h re-derived from the sheets)."""
    t = res["truth_scenario"]
    thr = float(res["construct"]["governing_threshold_h"])
    judges = (res.get("panel") or {}).get("judges") or []
    if not judges or "truth_effect_scale" not in res:
        return None
    mu = _panel_rate(judges, res["truth_effect_scale"], res["truth_model_shift_h"])
    h = _phi(mu) - _phi(res["truth_mu_human"])
    if t == "correlated_stress":
        return None  # its named h depends on the config's stress_base, not in results.json
    # an above-threshold world's named h is the config's truth.true_h (not in results.json)
    named = {"null": 0.0, "registered_alternative": thr}.get(t, math.nan)
    return named, h


def _departs(named: float, at_least: bool, true_h: float) -> bool:
    gap = named - true_h if at_least else abs(true_h - named)
    return gap > WORLD_TOLERANCE


def _configured_truth_h(config: Path | None) -> float | None:
    """The engine config's ``truth.true_h`` (None without a readable config that has one)."""
    if config is None:
        return None
    try:
        data = load_config_bytes(config.read_bytes(), config.name)
    except (OSError, ValueError):
        return None
    truth = data.get("truth") if isinstance(data, dict) else None
    value: Any = truth.get("true_h") if isinstance(truth, dict) else None
    return float(value) if _is_number(value) else None


def _audit_worlds(A: _Auditor, res: dict[str, Any], config: Path | None = None) -> None:
    kind = res.get("kind")
    if kind not in ("engine", "verdict", "judges", "battery"):
        return
    worlds = res.get("worlds")
    w0 = "results.json $.worlds"
    if not isinstance(worlds, list):
        A.record(False, w0, "the named simulated worlds are listed", "a list", worlds)
        return
    expected = _expected_worlds(res)
    seen: set[str] = set()
    for k, w in enumerate(worlds):
        where = f"{w0}[{k}]"
        A.num(where + ".tolerance", "the documented tolerance", WORLD_TOLERANCE, w["tolerance"])
        A.eq(where + ".true_h.basis", "true h is closed form", "closed_form", w["true_h"]["basis"])
        true_h = float(_fv(w["true_h"]))
        if kind == "engine" and str(w["where"]).startswith("the proof run's world"):
            seen.add(w["where"])
            A.num(
                where + ".true_h",
                "the proof run's true h is results.json $.truth_true_h",
                res["truth_true_h"],
                true_h,
            )
            derived = _truth_world(res)
            if derived is None:
                A.unverified(
                    where + ".true_h",
                    "the proof run's true h from the judge sheets",
                    "the judge sheets or the world's effect scale are not in results.json",
                )
            else:
                A.num(
                    where + ".true_h",
                    "the proof run's true h re-derived from the judge sheets "
                    "(φ(mean_j rate_j(effect scale, shift)) − φ(μ_H))",
                    derived[1],
                    true_h,
                    abs_tol=1e-12,
                )
                configured = _configured_truth_h(config) if math.isnan(derived[0]) else None
                if math.isnan(derived[0]) and configured is None:
                    A.unverified(
                        where + ".named_h",
                        "the h the proof run's world is named for",
                        "the configured truth.true_h is in the config, not in results.json "
                        "(verdictpack audit RUN_DIR --config FILE checks it)",
                    )
                elif math.isnan(derived[0]):
                    A.num(
                        where + ".named_h",
                        "the h the world's name says: the config's truth.true_h",
                        configured,
                        w["named_h"],
                    )
                else:
                    A.num(
                        where + ".named_h", "the h the world's name says", derived[0], w["named_h"]
                    )
            A.eq(
                where + ".departs",
                f"departs iff it misses its name by more than {WORLD_TOLERANCE}",
                _departs(w["named_h"], w["at_least"], true_h),
                w["departs"],
            )
            continue
        exp = expected.get(w["where"])
        if exp is None:
            A.record(
                False,
                where + ".where",
                "names a simulated world of results.json",
                sorted(expected),
                w["where"],
            )
            continue
        seen.add(w["where"])
        named, at_least, oc_h, path = exp
        A.num(where + ".named_h", "the h the world's name says", named, w["named_h"])
        A.eq(where + ".at_least", "an exact h or a floor", at_least, w["at_least"])
        A.num(where + ".true_h", f"the world's true h is results.json {path}.true_h", oc_h, true_h)
        A.eq(
            where + ".departs",
            f"departs iff it misses its name by more than {WORLD_TOLERANCE}",
            _departs(named, at_least, oc_h),
            w["departs"],
        )
    missing = sorted(set(expected) - seen)
    A.true(w0, "every named simulated world has its entry", not missing, "none missing", missing)
