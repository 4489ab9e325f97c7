"""The report.md <-> results.json mapping. The self-audit reads report.md (and
registered_vs_extension.md) ONLY to prove that the report says what results.json says: the
headline tables are mapped back to their results fields and compared at the printed precision,
then every printed decimal number is swept against the folder's JSON files. Every number it
checks comes from results.json, the evidence files and provenance, never from the report."""

from __future__ import annotations

import re
from bisect import bisect_left
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from verdictpack.verify._findings import _Auditor, _fv, _is_number, _show
from verdictpack.verify._kinds import _walk
from verdictpack.verify._kinds_oc import _find_ocs, _route_label
from verdictpack.verify._report_summary import _audit_summary

# ==============================================================================================
# report.md: tables mapped back, then the sweep
# ==============================================================================================

_NUM = re.compile(r"(?<![\w.])([-+]?)(\d{1,3}(?:,\d{3})+|\d+)(\.\d+)?(?:[eE]([-+]?\d+))?(?!\w)")


@dataclass(frozen=True)
class _Printed:
    value: float
    tol: float
    decimal: bool
    text: str


def _numbers(text: str) -> list[_Printed]:
    out = []
    for m in _NUM.finditer(text.replace("..", " .. ")):
        sign = -1.0 if m.group(1) == "-" else 1.0
        digits = m.group(2).replace(",", "")
        frac = m.group(3) or ""
        exp = int(m.group(4)) if m.group(4) else 0
        value = sign * float(digits + frac) * 10.0**exp
        decimals = len(frac) - 1 if frac else 0
        tol = 0.5 * 10.0 ** (exp - decimals)
        out.append(_Printed(value, tol, bool(frac) or m.group(4) is not None, m.group(0)))
    return out


def _printed_match(text: str, value: Any) -> bool:
    nums = _numbers(str(text))
    return len(nums) == 1 and _is_number(value) and _matches(nums[0], float(value))


def _matches(p: _Printed, v: float) -> bool:
    return abs(p.value - v) <= p.tol * (1 + 1e-9) + 1e-12 * max(1.0, abs(v))


_PIPE = re.compile(r"(?<!\\)\|")
_MD_ESCAPE = re.compile(r"\\\||&(amp|lt);")
_MD_LITERAL = {"\\|": "|", "&amp;": "&", "&lt;": "<"}


def _md_literal(cell: str) -> str:
    """A report.md cell as the text it stands for (the renderer's ``\\|`` and ``&...;``)."""
    return _MD_ESCAPE.sub(lambda m: _MD_LITERAL[m.group(0)], cell)


@dataclass(frozen=True)
class _MdTable:
    headers: tuple[str, ...]
    rows: tuple[tuple[str, ...], ...]
    headings: tuple[str, ...]  # active headings, outermost first


def _md_tables(text: str) -> list[_MdTable]:
    lines = text.splitlines()
    heads: dict[int, str] = {}
    tables: list[_MdTable] = []
    rule = re.compile(r"^\|(\s*:?-{3,}:?\s*\|)+\s*$")

    def cells(line: str) -> tuple[str, ...]:
        # split at unescaped pipes only; a cell's escapes (a user string's) read back as written
        body = line.strip()
        body = body[1:] if body.startswith("|") else body
        body = body[:-1] if body.endswith("|") and not body.endswith("\\|") else body
        return tuple(_md_literal(c.strip()) for c in _PIPE.split(body))

    i = 0
    while i < len(lines):
        line = lines[i]
        m = re.match(r"^(#{1,6})\s+(.*)$", line)
        if m:
            level = len(m.group(1))
            heads = {k: v for k, v in heads.items() if k < level}
            heads[level] = m.group(2).strip()
            i += 1
            continue
        if line.startswith("|") and i + 1 < len(lines) and rule.match(lines[i + 1]):
            header = cells(line)
            j = i + 2
            body = []
            while j < len(lines) and lines[j].startswith("|"):
                body.append(cells(lines[j]))
                j += 1
            tables.append(_MdTable(header, tuple(body), tuple(heads[k] for k in sorted(heads))))
            i = j
            continue
        i += 1
    return tables


def _value_mcse(fig: Any) -> list[Any]:
    """A Quantity's value and MCSE as printed in a "value ± MCSE" cell (nothing if missing)."""
    return [] if fig is None else [_fv(fig), fig.get("mcse")]


class _ReportMapper:
    """Maps the cells of known report tables back to results fields."""

    def __init__(self, A: _Auditor, file: str, res: dict[str, Any]) -> None:
        self.A = A
        self.file = file
        self.res = res
        self.unmapped: list[str] = []
        self.ocs = _find_ocs(res)
        self.seen_headings: set[str] = set()
        self.track_tables = 0

    def cell(self, title: str, row: str, col: str, text: str, expected: Sequence[Any]) -> None:
        where = f"{self.file} › {title} › row {row!r} › column {col!r}"
        nums = _numbers(text)
        exp = [float(_fv(e)) for e in expected if e is not None]
        if len(nums) != len(exp):
            self.A.record(
                False, where, "printed numbers equal their results fields", _show(exp), text
            )
            return
        bad = [(p.text, e) for p, e in zip(nums, exp, strict=True) if not _matches(p, e)]
        self.A.record(
            not bad,
            where,
            "printed value equals its results field at the printed precision",
            ", ".join(f"{e:.10g}" for _, e in bad) or _show(exp),
            ", ".join(t for t, _ in bad) or text,
        )

    def text(self, title: str, row: str, col: str, printed: str, expected: str) -> None:
        where = f"{self.file} › {title} › row {row!r} › column {col!r}"
        self.A.eq(where, "printed text equals its results field", expected, printed)

    def absent(self, title: str, row: str, what: str, known: Any, found: Any) -> None:
        """A table row whose key names nothing in results.json: a failure naming the row."""
        self.A.record(False, f"{self.file} › {title} › row {row!r}", f"{what} exists", known, found)

    def keyed_rows(
        self, t: _MdTable, title: str, col: str, rows: Mapping[str, Sequence[Any]], label: str
    ) -> None:
        """A two-column table whose first cell names the results fields of the second."""
        for r in t.rows:
            if r[0] in rows:
                self.cell(title, r[0], col, r[1], rows[r[0]])
            else:
                self.unmapped.append(f"{label} row {r[0]!r}")

    # -- common -------------------------------------------------------------------------------
    def construct(self, t: _MdTable) -> None:
        c = self.res["construct"]
        rows = {
            "human baseline rate": [c["human_baseline_rate"]],
            "threshold h": [c["threshold_h"]],
            "threshold odds ratio (as h at the baseline)": [
                c["threshold_odds_ratio"],
                c["threshold_h_from_odds_ratio"],
            ],
            "governing threshold h (the smaller effect governs)": [c["governing_threshold_h"]],
            "extension minimum h": [c["extension_minimum_h"]],
            "alpha (joint) / per tail / e-boundary": [
                c["alpha"],
                c["per_tail_alpha"],
                c["e_boundary"],
            ],
        }
        for r in t.rows:
            if r[0] in rows:
                self.cell("construct", r[0], "value", r[1], rows[r[0]])
            elif r[0] == "transformation":
                self.text("construct", r[0], "value", r[1], c["transformation"])
            elif r[0] == "metric (direction)":
                self.text("construct", r[0], "value", r[1], f"{c['metric']} ({c['direction']})")
            else:
                self.unmapped.append(f"construct row {r[0]!r}")

    def find_oc(self, headings: tuple[str, ...]) -> tuple[str, dict[str, Any]] | None:
        scen = comp = arm = None
        for h in headings:
            if m := re.match(r"^Scenario `(.+?)`", h):
                scen = m.group(1)
            if m := re.match(r"^Composition `(.+?)`", h):
                comp = m.group(1)
            if m := re.match(r"^Arm `(.+?)`", h):
                arm = m.group(1)
        if arm is not None:
            for i, a in enumerate(self.res.get("confound_arms", [])):
                label = a["confound"] + (
                    f" × {', '.join(a['crossed_with'])}" if a["crossed_with"] else ""
                )
                if label == arm and a.get("outcome") is not None:
                    return f"$.confound_arms[{i}].outcome", a["outcome"]
            return None
        if scen is None:
            return None
        cands = [(p, oc) for p, oc in self.ocs if oc["scenario"] == scen]
        if comp is not None:
            idx = [i for i, cc in enumerate(self.res.get("compositions", [])) if cc["name"] == comp]
            cands = [
                (p, oc) for p, oc in cands if idx and p.startswith(f"$.compositions[{idx[0]}]")
            ]
        if len(cands) != 1:
            return None
        return cands[0]

    def heading(self, headings: tuple[str, ...], found: tuple[str, dict[str, Any]]) -> None:
        h = headings[-1]
        if h in self.seen_headings or not h.startswith("Scenario"):
            return
        self.seen_headings.add(h)
        m = re.search(
            r"— true h (.*?) \(model rate (.*?), human rate (.*?); effect (\w+); "
            r"(\d+) replicates\)",
            h,
        )
        where = f"{self.file} › heading of {self.context(headings)}"
        oc = found[1]
        if not m:
            self.unmapped.append(f"heading {h!r}")
            return
        nums = _numbers(" ".join(m.group(i) for i in (1, 2, 3, 5)))
        exp = [oc["true_h"], oc["mu_model"], oc["mu_human"], oc["replicates"]]
        ok = len(nums) == 4 and all(_matches(p, e) for p, e in zip(nums, exp, strict=True))
        self.A.record(
            ok,
            where,
            "scenario heading: true h, rates, replicates",
            _show(exp),
            ", ".join(p.text for p in nums),
        )
        self.A.eq(
            where,
            "scenario heading: effect exists/absent",
            "exists" if oc["effect_exists"] else "absent",
            m.group(4),
        )

    @staticmethod
    def context(headings: tuple[str, ...]) -> str:
        parts = []
        for h in headings:
            m = re.match(r"^(Scenario|Composition|Arm) `(.+?)`", h)
            if m:
                parts.append(f"{m.group(1).lower()} `{m.group(2)}`")
        return " › ".join(parts) or (headings[-1] if headings else "table")

    def oc_table(self, t: _MdTable) -> None:
        found = self.find_oc(t.headings)
        title = self.context(t.headings)
        if found is None:
            self.A.record(
                False,
                f"{self.file} › {title}",
                "operating-characteristics table belongs to a scenario of results.json",
                "a scenario",
                t.headings,
            )
            return
        self.heading(t.headings, found)
        oc = found[1]
        routes = {_route_label(r): r for r in oc["routes"]}
        for row in t.rows:
            r = routes.get(row[0])
            if r is None:
                self.A.record(
                    False,
                    f"{self.file} › {title} › row {row[0]!r}",
                    "route row exists in results.json",
                    list(routes),
                    row[0],
                )
                continue
            for col, text in zip(t.headers[1:], row[1:], strict=False):
                exp = self.oc_expected(col, r)
                if exp is None:
                    self.unmapped.append(f"column {col!r}")
                    continue
                self.cell(title, row[0], col, text, exp)
                if col == "P(verdict) ± MCSE":
                    labels = re.findall(r"[A-Z][A-Z_]{3,}", text)
                    if labels != list(r["p_verdict"]):
                        self.text(title, row[0], col, " ".join(labels), " ".join(r["p_verdict"]))

    @staticmethod
    def oc_expected(col: str, r: dict[str, Any]) -> list[Any] | None:
        if col == "P(verdict) ± MCSE":
            return [x for fig in r["p_verdict"].values() for x in _value_mcse(fig)]
        q = r["roots_quantiles"]
        return {
            "P(wrong)": _value_mcse(r["p_wrong"]),
            "mean roots": _value_mcse(r["mean_roots"]),
            "roots q50 / q90 / q99": [q["q50"], q["q90"], q["q99"], r["max_roots"], r["cap"]],
            "mean touches": _value_mcse(r["mean_touches"]),
            "mean cost": [r["mean_cost"]],
            "cost per valid verdict": _value_mcse(r.get("cost_per_valid_verdict")),
        }.get(col)

    def cost_table(self, t: _MdTable) -> None:
        found = self.find_oc(t.headings)
        title = self.context(t.headings) + " (cost lines)"
        if found is None:
            self.A.record(
                False,
                f"{self.file} › {title}",
                "cost table belongs to a scenario",
                "a scenario",
                t.headings,
            )
            return
        routes = {_route_label(r): r for r in found[1]["routes"]}
        keys = {
            "model judgments (touches)": ("mean_model_touches", True),
            "human layer (touches)": ("mean_human_touches", True),
            "total (touches)": ("mean_touches", True),
            "model judgments (cost)": ("mean_model_cost", False),
            "human layer (cost)": ("mean_human_cost", False),
            "total (cost)": ("mean_cost", False),
        }
        for row in t.rows:
            if row[0] not in keys:
                self.unmapped.append(f"cost line {row[0]!r}")
                continue
            key, with_mcse = keys[row[0]]
            for col, text in zip(t.headers[1:], row[1:], strict=False):
                r = routes.get(col)
                if r is None:
                    self.A.record(
                        False,
                        f"{self.file} › {title} › column {col!r}",
                        "route column exists in results.json",
                        list(routes),
                        col,
                    )
                    continue
                fig = r[key]
                self.cell(
                    title, row[0], col, text, [_fv(fig), fig["mcse"]] if with_mcse else [_fv(fig)]
                )

    def guarantees(self, t: _MdTable) -> None:
        if not self.ocs:
            return
        first = self.ocs[0][1]
        routes = {_route_label(r): r for r in first["routes"]}
        for row in t.rows:
            r = routes.get(row[0])
            if r is None:
                self.A.record(
                    False,
                    f"{self.file} › guarantees › row {row[0]!r}",
                    "route exists in results.json",
                    list(routes),
                    row[0],
                )
            else:
                self.text("guarantees", row[0], "guarantee it carries", row[1], r["guarantee"])

    # -- sizing ---------------------------------------------------------------------------------
    def sizing(self, t: _MdTable) -> bool:
        res = self.res
        arms = {a["name"]: a for a in res["arms"]}
        h = t.headers
        if h[:3] == ("design point", "alpha (two-sided)", "power"):
            points = {d["name"]: d for d in res["design_points"]}
            for r in t.rows:
                d = points.get(r[0])
                if d is None:
                    self.unmapped.append(f"design point {r[0]!r}")
                    continue
                self.cell("design points", r[0], "alpha", r[1], [d["alpha"]])
                self.cell("design points", r[0], "power", r[2], [d["power"]])
            return True
        if h[:4] == ("arm", "design", "test alpha", "n (exact)"):
            for r in t.rows:
                arm = arms.get(r[0])
                s = next((x for x in (arm or {}).get("sizes", []) if x["design"] == r[1]), None)
                if s is None:
                    self.absent("t arms", r[0], "arm / design", list(arms), r[:2])
                    continue
                key = f"{r[0]} / {r[1]}"
                sim = s["simulated_power_at_n"]
                exp = [
                    [s["test_alpha"]],
                    [s["n"]],
                    [s["power_at_n"]],
                    [s["power_at_n_minus_1"]],
                    [s["normal_n"]],
                    [sim, sim["mcse"]],
                    [s["simulated_minus_exact_in_mcse"]],
                ]
                for col, text, e in zip(h[2:], r[2:], exp, strict=False):
                    self.cell("t arms", key, col, text, e)
            return True
        if h[:4] == ("arm", "design", "n", "power (exact)"):
            for r in t.rows:
                arm = arms.get(r[0])
                nums = _numbers(r[2])
                n = int(nums[0].value) if nums else -1
                group = "at_current_n" if "(current)" in r[2] else "checks"
                pa = next(
                    (x for x in (arm or {}).get(group, []) if x["design"] == r[1] and x["n"] == n),
                    None,
                )
                if pa is None:
                    self.absent("named sizes", r[0], "arm / design / n", group, r[:3])
                    continue
                key = f"{r[0]} / {r[1]} / n {n}"
                sim = pa["simulated_power"]
                z = pa["simulated_minus_exact_in_mcse"]
                exp = [
                    [pa["exact_power"]],
                    [pa["known_variance_power"]],
                    [] if sim is None else [sim, sim["mcse"]],
                    [] if z is None else [z],
                ]
                for col, text, e in zip(h[3:], r[3:], exp, strict=False):
                    self.cell("named sizes", key, col, text, e)
            return True
        if h[:4] == ("arm", "design", "test alpha", "first n (exact)"):
            for r in t.rows:
                m = re.match(r"^(.*) \((\S+) vs (\S+), h (\S+), (\d)-sided\)$", r[0])
                arm = arms.get(m.group(1)) if m else None
                s = next((x for x in (arm or {}).get("sizes", []) if x["design"] == r[1]), None)
                if arm is None or s is None or m is None:
                    self.absent("binomial arms", r[0], "arm / design", list(arms), r[:2])
                    continue
                key = f"{arm['name']} / {r[1]}"
                self.cell(
                    "binomial arms",
                    key,
                    "arm",
                    r[0][len(arm["name"]) :],
                    [arm["p0"], arm["p1"], arm["h"], arm["sides"]],
                )
                exp = [
                    [s["test_alpha"]],
                    [s["first_n"]],
                    [s["power_at_first"]],
                    [s["power_at_first_minus_1"]],
                    [s["region_lower"], s["region_upper"]],
                    [s["achieved_alpha"]],
                    [s["stable_n"]],
                    [s["power_at_stable"]],
                    list(s["failing_between"]),
                    [s["normal_n"]],
                ]
                for col, text, e in zip(h[2:], r[2:], exp, strict=False):
                    self.cell("binomial arms", key, col, text, e)
            return True
        if h[:4] == ("arm", "design", "test alpha", "baseline → threshold rate"):
            for r in t.rows:
                arm = arms.get(r[0])
                s = next((x for x in (arm or {}).get("sizes", []) if x["design"] == r[1]), None)
                if arm is None or s is None:
                    self.absent("two proportions", r[0], "arm / design", list(arms), r[:2])
                    continue
                key = f"{r[0]} / {r[1]}"
                exp = [
                    [s["test_alpha"]],
                    [arm["p0"], arm["p1"]],
                    [arm["governing_h"]],
                    [s["n_per_group"]],
                    [s["total"]],
                    [s["power_at_n"]],
                ]
                for col, text, e in zip(h[2:], r[2:], exp, strict=False):
                    self.cell("two proportions", key, col, text, e)
                self.text(
                    "two proportions",
                    key,
                    "governing h (from)",
                    r[4].split("(")[-1].rstrip(")"),
                    arm["governs"],
                )
            return True
        return False

    # -- verdict / battery design tables, SPRT ---------------------------------------------------
    def settings(self, t: _MdTable) -> None:
        res = self.res
        known: dict[str, list[Any]] = {
            "cap": [res.get("cap_roots")],
            "human stream": [res.get("human_judgments_per_root")],
            "touches / cost per root (both streams)": [
                res.get("touches_per_root"),
                res.get("cost_per_root"),
            ],
            "fixed-n design": [res.get("fixed_n_roots")],
            "replicates per scenario (seed)": [res.get("replicates"), res.get("seed")],
        }
        if res.get("kind") == "verdict":
            known["model stream"] = [res.get("judges_per_root"), 2]
        else:
            known["model stream"] = [res.get("judges_per_root"), 2, res.get("latent_correlation")]
            known["scenarios × replicates"] = [
                len(res.get("scenarios", [])),
                res.get("replicates"),
                res.get("sequential_runs"),
            ]
            known["blocks (seed)"] = [res.get("n_blocks"), res.get("block_size"), res.get("seed")]
        for r in t.rows:
            if r[0] in known and None not in known[r[0]]:
                self.cell("design", r[0], "value", r[1], known[r[0]])
            elif r[0] == "registered construction (comparison)":
                self.text(
                    "design", r[0], "value", r[1].split(" (")[0], str(res.get("construction"))
                )
            else:
                self.unmapped.append(f"setting {r[0]!r}")

    def sprt(self, t: _MdTable) -> None:
        s = self.res["sprt_exact"]
        rows = {
            "ln A / ln B": [s["log_a"], s["log_b"]],
            "per success / per failure": [s["step_success"], s["step_failure"]],
            "actual alpha": [s["actual_alpha"]],
            "actual beta": [s["actual_beta"]],
            "ASN under H0 (Wald)": [s["asn_h0"], s["wald_asn_h0"]],
            "ASN under H1 (Wald)": [s["asn_h1"], s["wald_asn_h1"]],
            "N quantiles under H0": [
                x for k, v in s["n_quantiles_h0"].items() for x in (float(k), v)
            ],
            "N quantiles under H1": [
                x for k, v in s["n_quantiles_h1"].items() for x in (float(k), v)
            ],
            "fixed-n exact binomial of the same claim": [s["fixed_n_exact"]],
        }
        self.keyed_rows(t, "SPRT exact", "value", rows, "SPRT")

    # -- judges ---------------------------------------------------------------------------------
    def judges_summary(self, t: _MdTable) -> None:
        comps = {c["name"]: c for c in self.res["compositions"]}
        for r in t.rows:
            comp = comps.get(r[0])
            world = {"effect present": "effect_present", "effect absent": "effect_absent"}.get(r[2])
            if comp is None or world is None:
                self.absent(
                    "price next to accuracy", r[0], "composition / world", list(comps), r[:3]
                )
                continue
            sc = comp[world]
            e = sc["routes"][0]
            key = f"{r[0]} / {r[2]}"

            def vm(fig: Any) -> list[Any]:
                return [] if fig is None else [_fv(fig), fig["mcse"]]

            exp = [
                [comp["nominal_size"], comp["effective_size"]],
                None,
                [sc["true_h"]],
                vm(e["p_correct"]),
                vm(e["p_wrong"]),
                vm(e["p_verdict"]["INCONCLUSIVE"]),
                vm(e["mean_roots"]),
                vm(e["mean_touches"]),
                [e["mean_cost"]],
                vm(e.get("cost_per_valid_verdict")),
            ]
            for col, text, ex in zip(t.headers[1:], r[1:], exp, strict=False):
                if ex is not None:
                    self.cell("price next to accuracy", key, col, text, ex)

    def judge_sheets(self, t: _MdTable) -> None:
        comp_name = next(
            (m.group(1) for h in t.headings if (m := re.match(r"^Composition `(.+?)`", h))), None
        )
        comp = next((c for c in self.res.get("compositions", []) if c["name"] == comp_name), None)
        if comp is None:
            self.A.record(
                False,
                f"{self.file} › judge sheets",
                "composition exists",
                "a composition",
                t.headings,
            )
            return
        sheets = {j["name"]: j for j in comp["judges"]}
        for r in t.rows:
            j = sheets.get(r[0])
            if j is None:
                self.absent(f"{comp_name} sheets", r[0], "judge", list(sheets), r[0])
                continue
            exp = [
                [j["baseline_rate"]],
                [j["lean_h"]],
                [j["noise"]],
                [j["position_bias"]],
                [j["cost_per_judgment"]],
            ]
            for col, text, e in zip(t.headers[2:], r[2:], exp, strict=False):
                self.cell(f"{comp_name} sheets", r[0], col, text, e)

    # -- engine ---------------------------------------------------------------------------------
    def tracks(self, t: _MdTable) -> None:
        # a study prints the tracks at the registered verdict, then over all the data
        source, title = self.res, "tracks"
        if self.res.get("kind") == "study" and self.track_tables > 0:
            source, title = self.res.get("all_data", {}), "tracks over all the data"
        self.track_tables += 1
        for r in t.rows:
            track = source.get(r[0])
            if not isinstance(track, dict):
                self.absent(title, r[0], "track", "registered / extension / comparison", r[0])
                continue
            exp = [
                None,
                [track["threshold_h"]],
                None,
                [track["roots_at_verdict"]],
                track["h_interval"] or [],
                track["model_bounds"] or [],
                track["human_bounds"] or [],
                track["diff_bounds"] or [],
                [track["error_per_side"]],
            ]
            for col, text, e in zip(t.headers[1:], r[1:], exp, strict=False):
                if e is not None:
                    self.cell(title, r[0], col, text, e)
            self.text(title, r[0], "verdict", r[3].strip("*"), track["verdict"])
            self.text(title, r[0], "construction", r[1], track["construction"])

    def gates(self, t: _MdTable) -> None:
        f = self.res["factory"]
        for r in t.rows:
            if r[0] not in f["gate_failures"]:
                self.absent("gates", r[0], "gate", f["gate_names"], r[0])
                continue
            self.cell("gates", r[0], "candidates failing", r[1], [f["gate_failures"][r[0]]])
            self.cell("gates", r[0], "first failing gate", r[2], [f["first_failures"][r[0]]])

    def human_layer(self, t: _MdTable) -> None:
        a, b = self.res["audit"], self.res["baseline"]
        rows = {
            "instrument validation (reader reconstruction)": [
                a["n_roots"],
                2,
                a["readings"],
                a["kappa"],
                100 * a["level"],
                a["ci_low"],
                a["ci_high"],
                100 * a["bound_level"],
                a["lower_bound"],
                a["kappa_min"],
            ],
            "reader-audit sizing": _audit_sizing_numbers(self.res.get("audit_sizing")),
            "preference baseline (powered)": [
                b["pilot_roots"],
                b["pilot_touches"],
                b["confirmatory_roots"],
                b["confirmatory_touches"],
                b["simulated_power"],
                b["simulated_power"]["mcse"],
                b["exact_power"],
                b["closed_form_roots"],
            ],
        }
        self.keyed_rows(t, "human layer", "result", rows, "human layer")

    def run_costs(self, t: _MdTable) -> None:
        lines = {x["line"]: x for x in self.res["costs"]}
        for r in t.rows:
            x = lines.get(r[0])
            if x is None:
                self.absent("run costs", r[0], "cost line", list(lines), r[0])
                continue
            self.cell("run costs", r[0], "touches", r[1], [x["touches"]])
            self.cell("run costs", r[0], "cost", r[2], [x["cost"]])

    # -- study ----------------------------------------------------------------------------------
    def study_files(self, t: _MdTable) -> None:
        files = {(f["role"], f["path"]): f for f in self.res["data_files"]}
        for r in t.rows:
            f = files.get((r[0], r[1]))
            if f is None:
                self.absent("data files", f"{r[0]} {r[1]}", "data file", list(files), r[:2])
                continue
            key = f"{r[0]} {r[1]}"
            self.text("data files", key, "format", r[2], f["format"])
            self.cell("data files", key, "records", r[3], [f["records"]])
            self.text("data files", key, "SHA-256", r[4], f["sha256"][:16] + "…")

    def study_counts(self, t: _MdTable) -> None:
        c = self.res["coverage"]
        rows = {
            "judgment rows (model / human)": [c["model_rows"], c["human_rows"]],
            "admitted roots": [c["admitted_roots"]],
            "roots entered (to the last judged one)": [c["roots_entered"]],
            "admitted roots after the last judged one": [c["admitted_roots_unjudged"]],
            "roots entered with no model judgment (all unknown)": [c["gap_roots"]],
            "roots with human judgments": [c["roots_with_humans"]],
            "roots without a human value (missing at random, assumed)": [
                c["roots_without_humans_unbounded"]
            ],
            "rows on roots the gates refused (left out)": [c["rows_on_refused_roots"]],
            "roots some judge saw in one order only": [c["roots_one_order_only"]],
            "model ties / invalid / missing cells": [
                c["model_ties"],
                c["model_invalid"],
                c["model_missing_cells"],
            ],
            "model answers without a probability": [c["model_without_probability"]],
            "human ties / invalid / shortfall": [
                c["human_ties"],
                c["human_invalid"],
                c["human_missing"],
            ],
            "unknown values bounded (model / human)": [c["model_unknown"], c["human_unknown"]],
        }
        self.keyed_rows(t, "coverage", "value", rows, "coverage")

    def study_estimate(self, t: _MdTable) -> None:
        e = self.res["estimate"]
        what = "answers given" if e["observation"] == "choice" else "label probabilities"
        rows = {
            "judges' rate (known answers)": [e["model_rate"]],
            "humans' rate (known answers)": [e["human_rate"]],
            "h, point estimate": [e["h_point"]],
            "h from the judges' label probabilities": [e["h_point_probability"]],
            "unknown model answers (bounded)": [e["model_unknown"]],
            "unknown human answers (bounded)": [e["human_unknown"]],
            "h-interval width, unknowns bounded": [e["width_bounded"]],
            "h-interval width, were each unknown ½": [e["width_midpoint"]],
        }
        for r in t.rows:
            if r[0] == "judges' observation (declared)":
                self.text("estimate", r[0], "value", r[1], what)
            elif r[0] in rows:
                self.cell("estimate", r[0], "value", r[1], rows[r[0]])
            else:
                self.unmapped.append(f"estimate row {r[0]!r}")

    def study_gates(self, t: _MdTable) -> None:
        g = self.res["gates"]
        for r in t.rows:
            if r[0] not in g["refusals"]:
                self.absent("gates", r[0], "gate", g["gates"], r[0])
                continue
            self.cell("gates", r[0], "pairs refused", r[1], [g["refusals"][r[0]]])
            self.cell("gates", r[0], "first failing gate", r[2], [g["first_failing"][r[0]]])

    def study_judges(self, t: _MdTable) -> None:
        judges = {j["name"]: j for j in self.res["judges_report"]["judges"]}
        for r in t.rows:
            j = judges.get(r[0])
            if j is None:
                self.absent("judges", r[0], "judge", list(judges), r[0])
                continue
            k = j.get("kappa_with_humans") or {}
            kh = [] if k.get("kappa") is None else [k["kappa"], *(k.get("ci") or [])]
            exp = [
                [j["judgments"]],
                [j["rate"]],
                j["rate_ci"] or [],
                [j["position_bias"]],
                j["position_bias_ci"] or [],
                kh,
                [j.get("roots")],
                [j.get("rate_design_effect"), j.get("position_bias_design_effect")],
            ]
            for col, text, e in zip(t.headers[1:], r[1:], exp, strict=False):
                self.cell("judges", r[0], col, text, e)

    def study_agreement(self, t: _MdTable) -> None:
        pairs = {(p["a"], p["b"]): p for p in self.res["judges_report"]["agreement"]}
        for r in t.rows:
            p = pairs.get((r[0], r[1]))
            key = f"{r[0]} / {r[1]}"
            if p is None:
                self.absent("agreement", key, "judge pair", list(pairs), key)
                continue
            self.cell("agreement", key, "shared judgments", r[2], [p["shared"]])
            self.cell("agreement", key, "kappa", r[3], [p["kappa"]])
            self.cell("agreement", key, "CI", r[4], p["ci"] or [])

    def study_roots_to_go(self, t: _MdTable) -> None:
        g = self.res.get("roots_to_go") or {}
        quantiles = g.get("quantiles_extra_roots", {})
        for r in t.rows:
            if r[0] not in quantiles:
                self.absent("roots to go", r[0], "quantile", list(quantiles), r[0])
                continue
            self.cell("roots to go", r[0], "more roots", r[1], [quantiles[r[0]]])

    def study_costs(self, t: _MdTable) -> None:
        lines = {(x["route"], x["line"]): x for x in self.res["costs"]}
        for r in t.rows:
            x = lines.get((r[0], r[1]))
            key = f"{r[0]} / {r[1]}"
            if x is None:
                self.absent("cost", key, "cost line", list(lines), key)
                continue
            self.cell("cost", key, "touches", r[2], [x["touches"]])
            self.cell("cost", key, "cost", r[3], [x["cost"]])

    # -- both constructions side by side (verdict, battery) -------------------------------------
    def construction_comparison(self, t: _MdTable) -> None:
        for r in t.rows:
            name = re.sub(r" \(boundary null\)$", "", r[0].strip("`"))
            cands = [oc for _, oc in self.ocs if oc["scenario"] == name]
            route = None
            if len(cands) == 1:
                route = next(
                    (
                        x
                        for x in cands[0]["routes"]
                        if x.get("route") == "eprocess" and x.get("construction") == r[2]
                    ),
                    None,
                )
            if route is None:
                self.A.record(
                    False,
                    f"{self.file} › constructions › row {r[0]!r}",
                    "scenario / construction exists in results.json",
                    "one route",
                    f"{len(cands)} scenario(s) named {name!r}",
                )
                continue
            key = f"{name} / {r[2]}"
            exp: dict[str, list[Any]] = {
                "true h": [cands[0]["true_h"]],
                "P(EFFECT_SUPPORTED within the cap)": _value_mcse(
                    route["p_verdict"]["EFFECT_SUPPORTED"]
                ),
                "P(wrong verdict)": _value_mcse(route["p_wrong"]),
                "median roots": _value_mcse(route["roots_quantiles"]["q50"]),
                "mean roots": _value_mcse(route["mean_roots"]),
                "cost per valid verdict": _value_mcse(route.get("cost_per_valid_verdict")),
            }
            for col, text in zip(t.headers[1:], r[1:], strict=False):
                if col == "construction":
                    continue
                if col not in exp:
                    self.unmapped.append(f"constructions column {col!r}")
                    continue
                self.cell("constructions", key, col, text, exp[col])

    # -- battery --------------------------------------------------------------------------------
    def battery_summary(self, t: _MdTable) -> None:
        rows = {s.get("label", s.get("scenario")): s for s in self.res.get("scenarios", [])}
        for r in t.rows:
            label = r[0].strip("`")
            s = rows.get(label)
            if s is None:
                self.absent("summary", label, "scenario", list(rows), label)
                continue
            oc = s["outcome"]
            routes = {_route_label(x): x for x in oc["routes"]}
            self.cell("summary", label, "true h", r[1], [oc["true_h"]])
            for col, text in zip(t.headers[2:], r[2:], strict=False):
                if ": " not in col:
                    self.unmapped.append(f"summary column {col!r}")
                    continue
                route_label, metric = col.split(": ", 1)
                route = routes.get(route_label)
                exp: list[Any] | None = None
                if route is not None:
                    pv = route["p_verdict"]
                    exp = {
                        "P(verdict)": [x for f in pv.values() for x in (_fv(f), f["mcse"])],
                        "mean roots": [_fv(route["mean_roots"]), route["mean_roots"]["mcse"]],
                        "cost per valid verdict": (
                            []
                            if route.get("cost_per_valid_verdict") is None
                            else [
                                _fv(route["cost_per_valid_verdict"]),
                                route["cost_per_valid_verdict"]["mcse"],
                            ]
                        ),
                        "P(calls the effect)": [
                            _fv(pv.get("EFFECT")),
                            (pv.get("EFFECT") or {}).get("mcse"),
                        ],
                        "P(correct)": [_fv(route["p_correct"]), route["p_correct"]["mcse"]],
                    }.get(metric)
                if exp is None:
                    self.unmapped.append(f"summary column {col!r}")
                    continue
                self.cell("summary", label, col, text, exp)

    # -- simulated worlds against their names ---------------------------------------------------
    def worlds(self, t: _MdTable) -> None:
        entries = {w["where"]: w for w in self.res.get("worlds", [])}
        for r in t.rows:
            w = entries.get(r[0])
            if w is None:
                self.absent("simulated worlds", r[0], "world", list(entries), r[0])
                continue
            self.cell("simulated worlds", r[0], "named h", r[1], [w["named_h"]])
            self.A.eq(
                f"{self.file} › simulated worlds › row {r[0]!r} › column 'named h'",
                "a floor (≥) exactly when the name states one",
                bool(w["at_least"]),
                r[1].startswith("≥ "),
            )
            self.cell("simulated worlds", r[0], "true h", r[2], [w["true_h"]])
            self.text(
                "simulated worlds",
                r[0],
                "where its name says",
                r[3],
                "**no: not where its name says**" if w["departs"] else "yes",
            )
        self.A.eq(
            f"{self.file} › simulated worlds",
            "every world of results.json $.worlds has its row",
            sorted(entries),
            sorted(r[0] for r in t.rows),
        )

    # -- dispatch -------------------------------------------------------------------------------
    def table(self, t: _MdTable) -> None:
        h = t.headers
        kind = self.res.get("kind")
        if h == ("field", "value"):
            self.construct(t)
        elif h[:2] == ("route", "P(verdict) ± MCSE"):
            self.oc_table(t)
        elif h[0] == "cost line (mean per run)":
            self.cost_table(t)
        elif h == ("route", "guarantee it carries"):
            self.guarantees(t)
        elif kind == "sizing" and self.sizing(t):
            pass
        elif h == ("setting", "value") and kind in ("verdict", "battery"):
            self.settings(t)
        elif h == ("quantity", "value", "basis") and "sprt_exact" in self.res:
            self.sprt(t)
        elif h[:3] == ("composition", "judges (effective)", "world"):
            self.judges_summary(t)
        elif h[:2] == ("judge", "role"):
            self.judge_sheets(t)
        elif h[:3] == ("track", "construction", "threshold h"):
            self.tracks(t)
        elif kind == "study" and h == ("role", "file", "format", "records", "SHA-256"):
            self.study_files(t)
        elif kind == "study" and h == ("count", "value"):
            self.study_counts(t)
        elif kind == "study" and h == ("figure", "value"):
            self.study_estimate(t)
        elif kind == "study" and h == ("gate", "pairs refused", "first failing gate"):
            self.study_gates(t)
        elif kind == "study" and h[:3] == ("judge", "judgments", "rate"):
            self.study_judges(t)
        elif kind == "study" and h[:3] == ("judge", "judge", "shared judgments"):
            self.study_agreement(t)
        elif (
            kind == "study"
            and h[:3] == ("route", "line", "touches")
            and h[3:4]
            and h[3].startswith("cost")
        ):
            self.study_costs(t)
        elif kind == "study" and h == ("quantile", "more roots"):
            self.study_roots_to_go(t)
        elif h == ("gate", "candidates failing", "first failing gate"):
            self.gates(t)
        elif h == ("function", "result"):
            self.human_layer(t)
        elif h == ("line", "touches", "cost"):
            self.run_costs(t)
        elif h == ("world", "named h", "true h (closed form)", "where its name says"):
            self.worlds(t)
        elif h[:3] == ("scenario", "true h", "construction"):
            self.construction_comparison(t)
        elif h[:2] == ("scenario", "true h") and kind == "battery":
            self.battery_summary(t)
        else:
            self.unmapped.append("table [" + " | ".join(h[:3]) + " …]")


def _number_pool(datas: Sequence[Any]) -> list[float]:
    pool: list[float] = []
    for data in datas:
        for _, node in _walk(data, "$"):
            if _is_number(node):
                pool.append(float(node))
            elif isinstance(node, str):
                pool.extend(p.value for p in _numbers(node))
    return sorted(pool)


def _sweep(A: _Auditor, file: str, text: str, pool: list[float]) -> None:
    unmatched = []
    count = 0
    for line_no, line in enumerate(text.splitlines(), start=1):
        for p in _numbers(line):
            if not p.decimal:
                continue
            count += 1
            lo = bisect_left(pool, p.value - p.tol * (1 + 1e-9) - 1e-12 * max(1, abs(p.value)))
            if lo >= len(pool) or not _matches(p, pool[lo]):
                unmatched.append(f"line {line_no}: {p.text}")
    A.record(
        not unmatched,
        f"{file} (sweep of {count} decimal numbers)",
        "every printed decimal equals some number of the folder's JSON at its precision",
        "a match for each",
        "; ".join(unmatched[:6]) + (f" … ({len(unmatched)} in all)" if len(unmatched) > 6 else ""),
    )


_STUDY_LINES = (
    (
        "headline",
        re.compile(
            r"^(?:- )?\*\*Registered verdict: (?P<verdict>\w+)\*\*(?: at root (?P<root>[\d,]+))? "
            r"\(h-interval (?P<iv>.*?) against the threshold h = (?P<h>\S+)\)(?:; (?P<stop>.*))?\.$"
        ),
    ),
    (
        "evidence",
        re.compile(
            r"^(?:- )?Evidence: (?P<source>.*) — (?P<available>[\d,]+) roots judged in the "
            r"registered order \((?P<order>.*)\); (?P<run>[\d,]+) read to the registered verdict\.$"
        ),
    ),
    (
        "gates",
        re.compile(
            r"^(?P<total>[\d,]+) pairs; (?P<admitted>[\d,]+) admitted, (?P<refused>[\d,]+) "
            r"refused \(listed by id in validity_report\.json\)\.$"
        ),
    ),
    (
        "reader audit",
        re.compile(
            r"^(?P<roots>[\d,]+) roots × 2 readers = (?P<readings>[\d,]+) readings; Cohen's kappa "
            r"(?P<kappa>\S+) \(point estimate; (?P<level>[\d.]+)% CI (?P<lo>\S+)\.\.(?P<hi>\S+), "
            r"closed form\); one-sided (?P<blevel>[\d.]+)% lower bound (?P<bound>\S+) \(exact "
            r"Clopper–Pearson bound of the observed agreement, chance-corrected\); gate lower "
            r"bound ≥ (?P<min>\S+): \*\*(?P<gate>[^*]+)\*\*\.$"
        ),
    ),
)


def _audit_sizing_numbers(z: dict[str, Any] | None) -> list[Any]:
    """The numbers of the engine's "reader-audit sizing" row, in printed order."""
    if z is None:
        return []
    out: list[Any] = [z["planning_kappa"], z["planning_rate"], z["target_pass_probability"]]
    if z.get("roots") is not None:
        out += [z["roots"], *_value_mcse(z["pass_probability"])]
        if z.get("pass_probability_below") is not None:
            out += [z["roots"] - 1, *_value_mcse(z["pass_probability_below"])]
    if z.get("registered_roots") is not None:
        out += [z["registered_roots"], *_value_mcse(z["pass_probability_registered"])]
    return out


def _study_prose(A: _Auditor, file: str, text: str, res: dict[str, Any]) -> None:
    """The study report's sentences (headline, evidence, gates, reader audit) against
    results.json: each sentence present once, its words and numbers those of results.json."""
    lines = text.splitlines()
    reg, gates, audit = res["registered"], res["gates"], res["audit"]
    for name, pattern in _STUDY_LINES:
        where = f"{file} › {name} sentence"
        found = [m for m in (pattern.match(line) for line in lines) if m]
        if not A.eq(where, "the sentence is printed once", 1, len(found)):
            continue
        m = found[0]
        g = m.groupdict()
        words: list[tuple[str, Any, Any]] = []
        nums: list[tuple[str, str, Sequence[Any]]] = []
        if name == "headline":
            # a verdict's stop reason ("verdict reached at root N") only repeats the root, so
            # the summary leaves it out; every other stop reason is printed
            stop = res["stop_reason"]
            shown = f"verdict reached at root {g['root']}" if g["stop"] is None else g["stop"]
            words = [
                ("verdict", reg["verdict"], g["verdict"]),
                ("stop", stop, shown.replace(",", "") if g["stop"] is None else shown),
            ]
            nums = [
                ("root", g["root"] or "", [reg["roots_at_verdict"]]),
                ("h-interval", g["iv"], reg["h_interval"] or []),
                ("threshold", g["h"], [reg["threshold_h"]]),
            ]
        elif name == "evidence":
            words = [
                ("evidence source", res["evidence_source"], g["source"]),
                ("order", res["root_order"], g["order"]),
            ]
            nums = [
                ("roots judged", g["available"], [res["roots_available"]]),
                ("roots read", g["run"], [res["roots_run"]]),
            ]
        elif name == "gates":
            nums = [(k, g[k], [gates[k]]) for k in ("total", "admitted", "refused")]
        else:
            gate = "PASSED" if audit["passed"] else "FAILED — INSTRUMENT_INVALID"
            words = [("gate", gate, g["gate"])]
            nums = [
                ("roots", g["roots"], [audit["n_roots"]]),
                ("readings", g["readings"], [audit["readings"]]),
                ("kappa", g["kappa"], [audit["kappa"]]),
                ("level", g["level"], [100 * audit["level"]]),
                ("CI", f"{g['lo']} {g['hi']}", [audit["ci_low"], audit["ci_high"]]),
                ("bound level", g["blevel"], [100 * audit["bound_level"]]),
                ("lower bound", g["bound"], [audit["lower_bound"]]),
                ("kappa_min", g["min"], [audit["kappa_min"]]),
            ]
        for what, expected, printed in words:
            A.eq(f"{where} › {what}", "printed text equals its results field", expected, printed)
        for what, printed, expected in nums:
            exp = [float(_fv(e)) for e in expected if e is not None]
            got = _numbers(printed)
            ok = len(got) == len(exp) and all(_matches(p, e) for p, e in zip(got, exp, strict=True))
            A.record(
                ok,
                f"{where} › {what}",
                "printed value equals its results field at the printed precision",
                _show(exp),
                printed or "(nothing)",
            )


def _audit_markdown(
    A: _Auditor, file: str, text: str, res: dict[str, Any], pool: list[float]
) -> None:
    mapper = _ReportMapper(A, file, res)
    for t in _md_tables(text):
        try:
            mapper.table(t)
        except (KeyError, TypeError, IndexError, ValueError, AttributeError) as exc:
            A.record(
                False,
                f"{file} › table [{' | '.join(t.headers[:3])} …]",
                "a known table maps back to results.json",
                "every printed cell has its results field",
                f"{type(exc).__name__}: {exc}",
            )
    if mapper.unmapped:
        seen = sorted(set(mapper.unmapped))
        A.unverified(
            file,
            f"{len(seen)} table part(s) not mapped to results fields: "
            + "; ".join(seen[:6])
            + (" …" if len(seen) > 6 else ""),
            "layout not mapped by the audit; its numbers are covered by the sweep only",
        )
    if file == "report.md":
        _audit_summary(A, file, text, res)
    if res.get("kind") == "study" and file == "report.md":
        _study_prose(A, file, text, res)
    _sweep(A, file, text, pool)
