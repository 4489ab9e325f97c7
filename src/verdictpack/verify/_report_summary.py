"""The report's opening summary and the simulated worlds held to their names, against results.json.

Two checks, both from results.json alone (never from the report's own numbers):

- :func:`_audit_worlds` re-derives each ``worlds`` entry: the h its name says (from the scenario's
  name and the construct, independently of the kind's code), its true h (the scenario's
  ``true_h``, itself re-derived from the judge sheets elsewhere; the engine's proof-run world
  re-derived here from the sheets and the world's effect scale), and whether it departs from its
  name by more than the tolerance; every named world of the kind must have its entry.
- :func:`_audit_summary` reads the bullet lines right under report.md's title (at most five) and
  maps each number of each line back to its results field, at the printed precision.
"""

from __future__ import annotations

import math
import re
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from verdictpack.verify._findings import _Auditor, _fv, _is_number, _show, load_config_bytes
from verdictpack.verify._rederive import _phi, _sheet_rate

__all__ = ["WORLD_TOLERANCE", "_audit_summary", "_audit_worlds"]

# The report's escaping of user strings (names, paths, currencies, sources), written again here
# (verify never imports render/): a text has raw HTML neutralised ("<" as "&lt;" but for "<br>"),
# "|" as "\\|", "&" as "&amp;" only before "lt;" or "amp;", line breaks as spaces; a name in an
# inline code span is written between backticks as it is, unless it holds a backtick or a line
# break: then as the escaped text with each backtick as "\\`". The summary's lines are compared
# against these forms, so an unescaped name fails the check.
_BREAKS = re.compile(r"\r\n|[\r\n\u2028\u2029\x85\v\f]")
_SPECIAL = re.compile(r"&(?=lt;|amp;)|<(?!br>)|\|")
_ESCAPED = {"&": "&amp;", "<": "&lt;", "|": "\\|"}


def _md(value: Any) -> str:
    """``value`` as report.md writes a user string in its text."""
    return _SPECIAL.sub(lambda m: _ESCAPED[m.group(0)], _BREAKS.sub(" ", str(value)))


def _code(value: Any) -> str:
    """``value`` as report.md writes a name in an inline code span."""
    text = str(value)
    if "`" in text or _BREAKS.search(text):
        return _md(text).replace("`", "\\`")
    return f"`{text}`"


# the self-audit's own copy of the kinds' tolerance (kinds/_worlds.py WORLD_TOLERANCE_H)
WORLD_TOLERANCE = 0.01
MAX_LINES = 5

# ==============================================================================================
# worlds
# ==============================================================================================


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
    rates = [
        _sheet_rate(
            j["baseline_rate"],
            j["lean_h"],
            j["noise"],
            res["truth_effect_scale"],
            res["truth_model_shift_h"],
        )
        for j in judges
    ]
    mu = min(max(math.fsum(rates) / len(rates), 0.0), 1.0)
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


# ==============================================================================================
# the summary lines of report.md
# ==============================================================================================

_NUMS = re.compile(r"(?<![\w.`])[-+]?\d{1,3}(?:,\d{3})+(?:\.\d+)?|(?<![\w.`])[-+]?\d+(?:\.\d+)?")


def _printed(text: str) -> list[tuple[float, float]]:
    """(value, half a unit of the last printed digit) for each number of ``text`` outside
    backticks (names like `above_threshold h=0.45` are text, not numbers)."""
    text = re.sub(r"`[^`]*`", "``", text)
    out = []
    for m in _NUMS.finditer(text):
        s = m.group(0).replace(",", "")
        decimals = len(s.split(".")[1]) if "." in s else 0
        out.append((float(s), 0.5 * 10.0**-decimals))
    return out


def summary_block(text: str) -> list[str]:
    """The bullet lines right under report.md's title (its first line), without the bullet."""
    lines = text.splitlines()
    i = 1
    while i < len(lines) and not lines[i].strip():
        i += 1
    out = []
    while i < len(lines) and lines[i].startswith("- "):
        out.append(lines[i][2:])
        i += 1
    return out


class _Summary:
    def __init__(self, A: _Auditor, file: str, res: dict[str, Any]) -> None:
        self.A, self.file, self.res = A, file, res

    def nums(self, lead: str, line: str, expected: Sequence[Any]) -> None:
        where = f"{self.file} › summary › {lead!r} line"
        exp = [float(_fv(e)) for e in expected]
        got = _printed(line)
        ok = len(got) == len(exp) and all(
            abs(v - e) <= tol * (1 + 1e-9) + 1e-12 * max(1.0, abs(e))
            for (v, tol), e in zip(got, exp, strict=True)
        )
        self.A.record(
            ok,
            where,
            "every printed number equals its results field at the printed precision",
            _show(exp),
            ", ".join(f"{v:g}" for v, _ in got) + f"  ({line})",
        )

    def words(self, lead: str, what: str, expected: str, line: str) -> None:
        self.A.true(
            f"{self.file} › summary › {lead!r} line › {what}",
            "the line names its results field",
            expected in line,
            expected,
            line,
        )

    # -- the leads --------------------------------------------------------------------------
    def registered(self, line: str, reg: dict[str, Any]) -> None:
        self.words(
            "Registered verdict", "verdict", f"**Registered verdict: {reg['verdict']}**", line
        )
        exp: list[Any] = []
        if reg.get("roots_at_verdict"):
            exp.append(reg["roots_at_verdict"])
        exp += list(reg.get("h_interval") or [])
        exp.append(reg["threshold_h"])
        self.nums("Registered verdict", line.split(");")[0], exp)

    def planning_oc(self, ocs: list[dict[str, Any]]) -> dict[str, Any] | None:
        thr = float(self.res["construct"]["governing_threshold_h"]) + WORLD_TOLERANCE
        above = [oc for oc in ocs if oc["effect_exists"] and oc["true_h"] > thr]
        return min(above, key=lambda oc: oc["true_h"]) if above else None

    def route(self, oc: dict[str, Any]) -> dict[str, Any]:
        c = self.res["construction"]
        return next(r for r in oc["routes"] if r["route"] == "eprocess" and r["construction"] == c)

    def planning(self, line: str, ocs: list[dict[str, Any]]) -> None:
        oc = self.planning_oc(ocs)
        if not self.A.true(
            f"{self.file} › summary › 'Planning' line",
            "a planning world exists (effect, true h above the threshold)",
            oc is not None,
        ):
            return
        assert oc is not None
        self.words("Planning", "scenario", f"(scenario {_code(oc['scenario'])})", line)
        e = self.route(oc)
        pv = e["p_verdict_issued"]
        self.nums(
            "Planning",
            line,
            [
                oc["true_h"],
                e["cap"],
                pv,
                pv["mcse"],
                e["p_verdict"]["EFFECT_SUPPORTED"],
                e["mean_cost"],
            ],
        )

    def no_effect(self, line: str, ocs: list[dict[str, Any]]) -> None:
        nulls = [oc for oc in ocs if not oc["effect_exists"]]
        if not nulls:
            self.A.record(False, f"{self.file} › summary › 'No effect' line", "a no-effect world")
            return
        worst = max(nulls, key=lambda oc: _fv(self.route(oc)["p_verdict"]["EFFECT_SUPPORTED"]))
        f = self.route(worst)["p_verdict"]["EFFECT_SUPPORTED"]
        self.words("No effect", "scenario", f"scenario {_code(worst['scenario'])}", line)
        self.nums("No effect", line, [len(nulls), f, f["mcse"], worst["true_h"]])

    def worlds(self, line: str) -> None:
        worlds = self.res.get("worlds") or []
        off = [w for w in worlds if w["departs"]]
        if self.res.get("kind") == "engine":
            worlds = [w for w in worlds if not w["where"].startswith("the proof run's world")]
            off = [w for w in worlds if w["departs"]]
        exp: list[Any] = [len(off), len(worlds), WORLD_TOLERANCE]
        for w in off[:3]:
            self.words("Simulated worlds", "world", _md(w["where"]), line)
            exp += [w["true_h"], w["named_h"]]
        if len(off) > 3:
            exp.append(len(off) - 3)
        self.nums("Simulated worlds", line, exp)

    def audit(self, lines: list[str]) -> None:
        res, A = self.res, self.A
        kind = res.get("kind")
        A.true(
            f"{self.file} › summary",
            f"the report opens with a summary of 1 to {MAX_LINES} lines under its title",
            1 <= len(lines) <= MAX_LINES,
            f"1..{MAX_LINES} lines",
            len(lines),
        )
        worlds = res.get("worlds") or []
        departing = [
            w
            for w in worlds
            if w["departs"]
            and not (kind == "engine" and w["where"].startswith("the proof run's world"))
        ]
        has_worlds = any(line.startswith("Simulated worlds:") for line in lines)
        A.eq(
            f"{self.file} › summary › 'Simulated worlds' line",
            "printed exactly when a simulated world is not where its name says",
            bool(departing),
            has_worlds,
        )
        ocs = self.main_ocs()
        if kind in ("engine", "verdict", "battery"):
            A.eq(
                f"{self.file} › summary › 'Planning' line",
                "printed exactly when a simulated world sits above the threshold",
                self.planning_oc(ocs) is not None,
                any(line.startswith("Planning: at true h") for line in lines),
            )
        unmapped = []
        for line in lines:
            if line.startswith("**Registered verdict:"):
                self.registered(line, res["registered"])
            elif line.startswith("Planning: at true h"):
                self.planning(line, ocs)
            elif line.startswith("Planning: P(a verdict within") and res.get("roots_to_go"):
                g = res["roots_to_go"]
                self.nums(
                    "Planning", line, [g["max_extra_roots"], g["p_verdict"], g["p_verdict"]["mcse"]]
                )
            elif line.startswith("No effect:"):
                self.no_effect(line, ocs)
            elif line.startswith("Simulated worlds:"):
                self.worlds(line)
            elif line.startswith("Evidence:") and kind == "engine":
                self.words("Evidence", "source", _md(res["evidence_source"]), line)
                if str(res["evidence_source"]).startswith("simulated"):
                    truth = next(
                        (w for w in worlds if w["where"].startswith("the proof run's world")), None
                    )
                    exp = [res["truth_true_h"], res["truth_mu_model"], res["truth_mu_human"]]
                    if truth and truth["departs"]:
                        exp.append(truth["named_h"])
                    self.nums("Evidence", line.replace(_md(res["evidence_source"]), ""), exp)
                    A.eq(
                        f"{self.file} › summary › 'Evidence' line",
                        "says the proof run's world is not where its name says exactly when so",
                        bool(truth and truth["departs"]),
                        "not where its name says" in line,
                    )
            elif line.startswith("Estimate:") and kind == "study":
                e = res["estimate"]
                exp = [e["model_rate"], e["human_rate"], e["h_point"]]
                if e["width_bounded"] is not None:
                    exp += [
                        e["model_unknown"],
                        e["human_unknown"],
                        e["width_bounded"],
                        e["width_midpoint"],
                    ]
                self.nums("Estimate", line, exp)
                what = "answers given" if e["observation"] == "choice" else "label probabilities"
                self.words("Estimate", "the declared observation", what, line)
                A.eq(
                    f"{self.file} › summary › 'Estimate' line",
                    "flags the label probabilities exactly when results.json warns",
                    e["warning"] is not None,
                    "label probabilities point elsewhere" in line,
                )
            elif line.startswith("Evidence:") and kind == "study":
                self.words("Evidence", "source", _md(res["evidence_source"]), line)
                self.nums(
                    "Evidence",
                    line.replace(_md(res["evidence_source"]), "").replace(
                        _md(res["root_order"]), ""
                    ),
                    [res["roots_available"], res["roots_run"]],
                )
            elif line.startswith("Cost of this run:") and kind == "engine":
                total = next(c for c in res["costs"] if c["line"] == "total")
                self.nums(
                    "Cost",
                    line,
                    [total["cost"], total["touches"], res["roots_run"], res["effective_cap"]],
                )
            elif line.startswith("Cost to the registered verdict:") and kind == "study":
                total = next(
                    c
                    for c in res["costs"]
                    if c["route"] == "to the registered verdict" and c["line"] == "total"
                )
                self.words("Cost", "currency", _md(res.get("currency")), line)
                self.nums("Cost", line, [total["cost"], total["touches"]])
            elif not self.design_line(line):
                unmapped.append(line.split(":")[0].strip("*"))
        if unmapped:
            A.unverified(
                f"{self.file} › summary",
                f"{len(unmapped)} summary line(s) not mapped to results fields: "
                + "; ".join(repr(u) for u in unmapped),
                "sizes and settings lines; their decimals are covered by the sweep only",
            )

    def design_line(self, line: str) -> bool:
        """The design kinds' and the sizing's lines; False for a line of no known lead."""
        res = self.res
        kind = res.get("kind")
        if kind == "verdict" and line.startswith("**Design, no verdict**:"):
            self.words("Design", "construction", f"e-process ({res['construction']})", line)
            self.nums(
                "Design",
                line,
                [
                    res["cap_roots"],
                    res["judges_per_root"],
                    2,
                    res["human_judgments_per_root"],
                    res["cost_per_root"],
                    res["fixed_n_roots"],
                ],
            )
        elif kind == "battery" and line.startswith("**Battery, no verdict**:"):
            self.words("Battery", "construction", f"e-process ({res['construction']})", line)
            self.words("Battery", "panel", f"panel {_code(res['panel_name'])}", line)
            self.nums(
                "Battery",
                line,
                [
                    len(res["scenarios"]),
                    res["replicates"],
                    res["sequential_runs"],
                    res["cap_roots"],
                    res["judges_per_root"],
                ],
            )
        elif kind == "judges" and line.startswith("**Panels compared, no verdict**:"):
            comps = res["compositions"]
            for c in comps:
                self.words(
                    "Panels compared",
                    "composition",
                    f"{_code(c['name'])} {c['nominal_size']}",
                    line,
                )
            self.nums(
                "Panels compared",
                line,
                [len(comps), *(c["nominal_size"] for c in comps), res["cap_roots"]],
            )
        elif kind == "judges" and line.startswith("Effect present:"):
            best = max(
                res["compositions"],
                key=lambda c: _fv(c["effect_present"]["routes"][0]["p_correct"]),
            )
            e = best["effect_present"]["routes"][0]
            self.words("Effect present", "composition", _code(best["name"]), line)
            self.nums(
                "Effect present",
                line,
                [
                    e["p_correct"],
                    e["p_correct"]["mcse"],
                    best["effect_present"]["true_h"],
                    e["mean_cost"],
                ],
            )
        elif kind == "judges" and line.startswith("Effect absent:"):
            worst = max(
                res["compositions"], key=lambda c: _fv(c["effect_absent"]["routes"][0]["p_wrong"])
            )
            e = worst["effect_absent"]["routes"][0]
            self.words("Effect absent", "composition", _code(worst["name"]), line)
            self.nums("Effect absent", line, [e["p_wrong"], e["p_wrong"]["mcse"]])
        elif kind in ("verdict", "battery", "judges") and line.startswith(
            "Evidence: **simulated worlds only**"
        ):
            exp: list[Any] = {
                "verdict": lambda: [len(res["scenarios"]), res["replicates"], res["seed"]],
                "battery": lambda: [res["seed"]],
                "judges": lambda: [len(res["compositions"]), 2, res["replicates"], res["seed"]],
            }[str(kind)]()
            self.nums("Evidence", line, exp)
        elif kind == "sizing" and line.startswith("**Sizes** at design point"):
            self.sizes(line)
        elif kind == "sizing" and line.startswith("Power: the design points are"):
            self.nums(
                "Power",
                line,
                [x for d in res["design_points"] for x in (d["alpha"], d["power"])],
            )
        elif kind == "sizing" and line.startswith("Evidence: none"):
            self.nums("Evidence", line, [res["replicates"], res["seed"]])
        elif kind == "sizing" and line.startswith("Cost: none"):
            self.nums("Cost", line, [])
        else:
            return False
        return True

    def sizes(self, line: str) -> None:
        """Each arm's size at the first design point (a binomial arm's stable n where its design
        uses it) and the power there."""
        points = self.res["design_points"]
        design = points[0]["name"] if points else None
        exp: list[Any] = []
        for a in self.res["arms"]:
            s = next((x for x in a["sizes"] if x["design"] == design), None)
            if s is None:
                continue
            self.words("Sizes", "arm", _code(a["name"]), line)
            if "n" in s:
                exp += [s["n"], s["power_at_n"]]
            elif "n_per_group" in s:
                exp += [s["n_per_group"], s["power_at_n"]]
            elif str(s.get("design_uses", "")).startswith("stable"):
                exp += [s["stable_n"], s["power_at_stable"]]
            else:
                exp += [s["first_n"], s["power_at_first"]]
        self.nums("Sizes", line, exp)

    def main_ocs(self) -> list[dict[str, Any]]:
        res = self.res
        kind = res.get("kind")
        if kind == "engine":
            return list(res.get("power", []))
        if kind == "verdict":
            return list(res.get("scenarios", []))
        if kind == "battery":
            return [row["outcome"] for row in res.get("scenarios", [])]
        return []


def _audit_summary(A: _Auditor, file: str, text: str, res: dict[str, Any]) -> None:
    """The summary under report.md's title: at most five lines, each number its results field."""
    _Summary(A, file, res).audit(summary_block(text))
