"""Self-audit checks of the operating characteristics (every ScenarioOC of the verdict, judges,
battery and engine power reports: counts over R, MCSEs, sums, roots, cost lines, true rates from
the judge sheets), the SPRT's exact cells, and the verdict, judges and battery kinds."""

from __future__ import annotations

import math
import re
from collections import defaultdict
from dataclasses import dataclass
from typing import Any

import numpy as np

from verdictpack.verify._findings import _Auditor, _close, _fv, _is_number
from verdictpack.verify._kinds import _walk
from verdictpack.verify._kinds_designs import audit_designs
from verdictpack.verify._kinds_grid import GRID_PREFIX, audit_grid
from verdictpack.verify._rederive import _panel_rate, _phi
from verdictpack.verify._sprt_exact import _audit_sprt_exact

# ==============================================================================================
# Operating characteristics (verdict, judges, battery, engine power report)
# ==============================================================================================

_ROUTE_LABELS = {
    "eprocess": (
        "EFFECT_SUPPORTED",
        "NO_POSITIVE_EFFECT",
        "BELOW_PRACTICAL_THRESHOLD",
        "INCONCLUSIVE",
    ),
    "sprt": ("EFFECT", "NO_EFFECT", "INCONCLUSIVE"),
    "fixed_n": ("EFFECT", "NO_EFFECT"),
}


@dataclass
class _Design:
    """What is known about the design behind a group of ScenarioOC blocks.

    None means unknown: the first route that determines it is used and every later one must
    agree (a constant per design), and the report says the value was derived.
    """

    name: str
    human_rate: float
    two_j: int | None = None
    n_h: int | None = None
    fixed_touches: float | None = None
    fixed_cost: float | None = None
    model_price: float | None = None  # per root
    human_price: float | None = None  # per root
    total_price: float | None = None  # model + human per root
    sheets: list[dict[str, Any]] | None = None
    latent_correlation: float | None = None
    cap: int | None = None
    fixed_n: int | None = None
    threshold: float | None = None  # the governing threshold (registered alternative)


@dataclass(frozen=True)
class _CostRow:
    design: _Design
    kind: str
    where: str
    roots: float
    model_touches: float
    human_touches: float
    model_cost: float
    human_cost: float
    cost: float


class _Learned:
    """The cost lines of every route, checked against the design's prices once all are seen, and
    the simulated figures counted over the scenario blocks (reported UNVERIFIED by
    :meth:`finalize`).

    A known price is the reference; an unknown one is one constant per design, whose reference
    is the median over the design's routes (so a planted cell is the one named, not its peers).
    """

    def __init__(self) -> None:
        self.rows: list[_CostRow] = []
        self.values: dict[tuple[str, str], tuple[float, str]] = {}
        self.simulated = 0
        self.blocks = 0

    def add(self, row: _CostRow) -> None:
        self.rows.append(row)

    def _check(
        self,
        A: _Auditor,
        design: _Design,
        key: str,
        known: float | None,
        items: list[tuple[float, str]],
        what: str,
    ) -> float | None:
        if not items:
            return known
        if known is not None:
            ref, note = known, ""
        else:
            ref = float(np.median([v for v, _ in items]))
            note = f" (one constant per design: the median over its {len(items)} routes)"
        self.values[(design.name, key)] = (ref, "derived" if known is None else "known")
        for value, where in items:
            A.num(where, what + note, ref, value, abs_tol=1e-9, rel_tol=1e-9)
        return ref

    def finalize(self, A: _Auditor, where: str) -> None:
        """The cost lines against the prices, then one UNVERIFIED line (at ``where``) for the
        simulated figures of the scenario blocks seen."""
        designs: dict[str, list[_CostRow]] = defaultdict(list)
        for row in self.rows:
            designs[row.design.name].append(row)
        for rows in designs.values():
            d = rows[0].design
            sprt = [r for r in rows if r.kind == "sprt"]
            humans = [r for r in rows if r.kind != "sprt"]
            self._check(
                A,
                d,
                "two_j",
                d.two_j,
                [(r.model_touches / r.roots, r.where + ".mean_model_touches") for r in rows],
                "model touches = roots × touches per root",
            )
            self._check(
                A,
                d,
                "model_price",
                d.model_price,
                [(r.model_cost / r.roots, r.where + ".mean_model_cost") for r in rows],
                "model cost = roots × model price per root",
            )
            ft = self._check(
                A,
                d,
                "fixed_touches",
                d.fixed_touches,
                [(r.human_touches, r.where + ".mean_human_touches") for r in sprt],
                "the SPRT uses only the fixed human layer (touches)",
            )
            fc = self._check(
                A,
                d,
                "fixed_cost",
                d.fixed_cost,
                [(r.human_cost, r.where + ".mean_human_cost") for r in sprt],
                "the SPRT pays only the fixed human layer",
            )
            if ft is not None:
                self._check(
                    A,
                    d,
                    "n_h",
                    d.n_h,
                    [
                        ((r.human_touches - ft) / r.roots, r.where + ".mean_human_touches")
                        for r in humans
                    ],
                    "human touches = fixed + roots × human judgments per root",
                )
            if fc is not None:
                self._check(
                    A,
                    d,
                    "human_price",
                    d.human_price,
                    [((r.human_cost - fc) / r.roots, r.where + ".mean_human_cost") for r in humans],
                    "human cost = fixed + roots × human price per root",
                )
                if d.total_price is not None:
                    for r in humans:
                        A.num(
                            r.where + ".mean_cost",
                            "cost = fixed + roots × cost per root (both streams)",
                            fc + d.total_price * r.roots,
                            r.cost,
                            abs_tol=1e-9,
                            rel_tol=1e-9,
                        )
        if self.blocks:
            A.unverified(
                where,
                f"{self.simulated} simulated figures in {self.blocks} scenario blocks "
                "(verdict probabilities, roots, touches, costs)",
                "simulated probabilities cannot be re-derived independently (a second simulation "
                "agrees only within Monte Carlo error); their sums, MCSEs, caps and cost lines "
                "were checked",
            )


def _find_ocs(data: Any, path: str = "$") -> list[tuple[str, dict[str, Any]]]:
    keys = {"scenario", "routes", "effect_exists", "mu_model", "mu_human", "true_h", "replicates"}
    return [
        (p, node) for p, node in _walk(data, path) if isinstance(node, dict) and keys <= set(node)
    ]


def _route_label(route: dict[str, Any]) -> str:
    if route.get("route") == "eprocess":
        return f"e-process ({route.get('construction')})"
    return {"sprt": "SPRT", "fixed_n": "fixed-n"}.get(str(route.get("route")), str(route))


def _audit_oc(
    A: _Auditor,
    path: str,
    oc: dict[str, Any],
    design: _Design,
    learned: _Learned,
) -> None:
    w = "results.json " + path
    reps = oc["replicates"]
    eff = oc["effect_exists"]
    A.eq(
        w + ".effect_exists",
        "effect exists iff the effect scale is positive",
        oc["effect_scale"] > 0,
        eff,
    )
    A.num_at(
        w, oc, "mu_human", "human rate = the construct's baseline", design.human_rate, abs_tol=0
    )
    A.num_at(
        w,
        oc,
        "true_h",
        "true h = φ(μ_M) − φ(μ_H)",
        _phi(oc["mu_model"]) - _phi(oc["mu_human"]),
        abs_tol=1e-12,
    )
    if design.sheets is not None:  # else one UNVERIFIED line for all blocks (the caller's)
        A.num_at(
            w,
            oc,
            "mu_model",
            "model-stream rate re-derived from the judge sheets "
            "(mean_j ½ + (1 − ν)(sin²(θ/2) − ½))",
            _panel_rate(design.sheets, oc["effect_scale"], oc["model_shift_h"]),
            abs_tol=1e-12,
        )
    if design.latent_correlation is not None and oc["scenario"] != "correlated_stress":
        A.num_at(
            w,
            oc,
            "latent_correlation",
            "the panel's latent correlation",
            design.latent_correlation,
            abs_tol=0,
        )
    name = str(oc["scenario"])
    if name == "null":
        A.true(
            w,
            "the null scenario carries no effect and no shift",
            oc["effect_scale"] == 0 and oc["model_shift_h"] == 0,
            "0 / 0",
            f"{oc['effect_scale']} / {oc['model_shift_h']}",
        )
    match = re.match(r"^above_threshold h=([0-9.]+)$", name)
    if name == "registered_alternative" or match:
        target = design.threshold if not match else float(match.group(1))
        if target is not None:
            A.num_at(w, oc, "true_h", f"scenario '{name}': true h as named", target, abs_tol=1e-8)
    for k, r in enumerate(oc["routes"]):
        learned.simulated += _audit_route(A, f"{w}.routes[{k}]", r, reps, eff, design, learned)
    learned.blocks += 1


def _check_prob(A: _Auditor, w: str, what: str, fig: Any, reps: int) -> float:
    p = _fv(fig)
    A.true(
        w,
        f"{what}: a count over {reps} replicates, MCSE sqrt(p(1 − p)/R)",
        _is_number(p)
        and abs(p * reps - round(p * reps)) < 1e-6 * max(1, reps)
        and fig.get("replicates") == reps
        and _close(math.sqrt(max(p * (1 - p), 0.0) / reps), fig.get("mcse") or 0.0, 1e-12, 1e-9),
        f"k/{reps} with MCSE {math.sqrt(max(p * (1 - p), 0) / reps):.6g}",
        f"{p} with MCSE {fig.get('mcse')} (R {fig.get('replicates')})",
    )
    return float(p)


def _audit_route(
    A: _Auditor,
    rw: str,
    r: dict[str, Any],
    reps: int,
    eff: bool,
    design: _Design,
    learned: _Learned,
) -> int:
    kind = r.get("route")
    labels = _ROUTE_LABELS.get(str(kind))
    if labels is None:
        A.true(rw + ".route", "a known route", False, "eprocess / sprt / fixed_n", kind)
        return 0
    pv = r["p_verdict"]
    A.eq(rw + ".p_verdict", "verdict labels of the route", list(labels), list(pv))
    p = {
        lab: _check_prob(A, f"{rw}.p_verdict.{lab}", f"P({lab})", pv[lab], reps)
        for lab in labels
        if lab in pv
    }
    A.num(
        rw + ".p_verdict",
        "verdict probabilities sum to 1",
        1.0,
        math.fsum(p.values()),
        abs_tol=1e-9,
    )
    if kind == "eprocess":
        issued = p.get(labels[0], 0) + p.get(labels[1], 0) + p.get(labels[2], 0)
        wrong = p.get(labels[0], 0) if not eff else p.get(labels[1], 0) + p.get(labels[2], 0)
    elif kind == "sprt":
        issued = p.get("EFFECT", 0) + p.get("NO_EFFECT", 0)
        wrong = p.get("EFFECT", 0) if not eff else p.get("NO_EFFECT", 0)
    else:
        issued = 1.0
        wrong = p.get("EFFECT", 0) if not eff else p.get("NO_EFFECT", 0)
    for key, val in (
        ("p_wrong", wrong),
        ("p_verdict_issued", issued),
        ("p_correct", issued - wrong),
    ):
        got = _check_prob(A, f"{rw}.{key}", key, r[key], reps)
        A.num(
            f"{rw}.{key}",
            f"{key} from the verdict probabilities and effect_exists={eff}",
            val,
            got,
            abs_tol=1e-9,
        )
    # roots
    cap, mx = r["cap"], r["max_roots"]
    mean_roots = float(_fv(r["mean_roots"]))
    q = {k: _fv(v) for k, v in r["roots_quantiles"].items()}
    raw: list[Any] = [q.get("q50"), q.get("q90"), q.get("q99")]
    qs = [float(x) if _is_number(x) else math.nan for x in raw]
    integral = all(x.is_integer() for x in qs)
    A.true(
        rw + ".roots_quantiles",
        "q50 ≤ q90 ≤ q99 ≤ max ≤ cap, integral order statistics",
        integral and qs[0] <= qs[1] <= qs[2] <= mx <= cap,
        f"≤ max {mx} ≤ cap {cap}",
        raw,
    )
    A.true(
        rw + ".mean_roots",
        "1 ≤ mean roots ≤ max ≤ cap",
        1 <= mean_roots <= mx <= cap,
        f"[1, {mx}]",
        mean_roots,
    )
    if kind == "fixed_n":
        A.true(
            rw + ".mean_roots",
            "fixed-n runs exactly its n",
            mean_roots == cap == mx,
            cap,
            mean_roots,
        )
        if design.fixed_n is not None:
            A.eq(rw + ".cap", "fixed-n roots of the design", design.fixed_n, cap)
    elif design.cap is not None:
        A.eq(rw + ".cap", "the design's cap", design.cap, cap)
    # cost lines
    mt, ht, tt = (
        float(_fv(r[k])) for k in ("mean_model_touches", "mean_human_touches", "mean_touches")
    )
    mc, hc, tc = (float(_fv(r[k])) for k in ("mean_model_cost", "mean_human_cost", "mean_cost"))
    A.num(rw + ".mean_touches", "touches re-summed: model + human", mt + ht, tt, abs_tol=1e-9)
    A.num(rw + ".mean_cost", "cost re-summed: model + human", mc + hc, tc, abs_tol=1e-9)
    learned.add(_CostRow(design, str(kind), rw, mean_roots, mt, ht, mc, hc, tc))
    for key, num_v in (("cost_per_valid_verdict", tc), ("touches_per_valid_verdict", tt)):
        fig = r.get(key)
        if issued == 0:
            A.eq(rw + "." + key, f"{key}: none when no verdict is issued", None, fig)
        else:
            A.num(
                rw + "." + key,
                f"{key} = mean / P(issued)",
                num_v / issued,
                _fv(fig),
                abs_tol=1e-9,
                rel_tol=1e-9,
            )
    return (
        sum(1 for v in r.values() if isinstance(v, dict) and v.get("basis") == "simulated")
        + sum(1 for v in pv.values() if isinstance(v, dict))
        + len(r["roots_quantiles"])
    )


# ---- SPRT exact cells (verdict kind) --------------------------------------------------------


def _audit_verdict(A: _Auditor, res: dict[str, Any]) -> None:
    c = res["construct"]
    name = "verdict"
    two_j = 2 * res["judges_per_root"]
    n_h = res["human_judgments_per_root"]
    A.eq(
        "results.json $.touches_per_root",
        "touches per root = 2J + human judgments",
        two_j + n_h,
        res["touches_per_root"],
    )
    design = _Design(
        name=name,
        human_rate=c["human_baseline_rate"],
        two_j=two_j,
        n_h=n_h,
        fixed_touches=0.0,
        fixed_cost=0.0,
        total_price=res["cost_per_root"],
        sheets=[{"baseline_rate": c["human_baseline_rate"], "lean_h": 1.0, "noise": 0.0}],
        cap=res["cap_roots"],
        fixed_n=res["fixed_n_roots"],
        threshold=c["governing_threshold_h"],
    )
    learned = _Learned()
    for path, oc in _find_ocs(res):
        _audit_oc(A, path, oc, design, learned)
        A.num(
            "results.json " + path + ".effect_scale",
            "verdict streams: the model rate sits exactly true h above the baseline",
            oc["effect_scale"] + oc["model_shift_h"],
            oc["true_h"],
            abs_tol=1e-12,
        )
    learned.finalize(A, "results.json $.scenarios")
    _audit_sprt_exact(A, res)


def _audit_judges(A: _Auditor, res: dict[str, Any]) -> None:
    c = res["construct"]
    learned = _Learned()
    n_h = res["human_judgments_per_root"]
    for i, comp in enumerate(res["compositions"]):
        w = f"results.json $.compositions[{i}]"
        judges = comp["judges"]
        j_n = len(judges)
        rho = comp["latent_correlation"]
        A.eq(w + ".nominal_size", "nominal size = number of sheets", j_n, comp["nominal_size"])
        A.num_at(
            w,
            comp,
            "effective_size",
            "Kish J / (1 + (J − 1)ρ)",
            j_n / (1 + (j_n - 1) * rho),
            value=True,
            abs_tol=1e-12,
        )
        A.eq_at(w, comp, "touches_per_root", "2J + human judgments", 2 * j_n + n_h)
        model_price = 2.0 * math.fsum(j["cost_per_judgment"] for j in judges)
        human_price = n_h * res["human_cost_per_judgment"]
        A.num_at(
            w,
            comp,
            "cost_per_root",
            "2 Σ judge prices + human judgments × price",
            model_price + human_price,
            abs_tol=1e-12,
        )
        design = _Design(
            name=f"composition {i}",
            human_rate=c["human_baseline_rate"],
            two_j=2 * j_n,
            n_h=n_h,
            fixed_touches=0.0,
            fixed_cost=0.0,
            model_price=model_price,
            human_price=human_price,
            total_price=model_price + human_price,
            sheets=judges,
            latent_correlation=rho,
            cap=res["cap_roots"],
        )
        for key in ("effect_present", "effect_absent"):
            _audit_oc(A, f"$.compositions[{i}].{key}", comp[key], design, learned)
        A.true(
            w + ".effect_absent.effect_scale",
            "the effect-absent world has scale 0",
            comp["effect_absent"]["effect_scale"] == 0,
            0,
            comp["effect_absent"]["effect_scale"],
        )
    learned.finalize(A, "results.json $.compositions")


def _sheets_in(res: dict[str, Any]) -> list[dict[str, Any]] | None:
    for key in ("judges", "panel"):
        node = res.get(key)
        if isinstance(node, dict):
            node = node.get("judges")
        if (
            isinstance(node, list)
            and node
            and all(
                isinstance(j, dict) and {"baseline_rate", "lean_h", "noise"} <= set(j) for j in node
            )
        ):
            return node
    return None


def _battery_parameters(A: _Auditor, w: str, row: Any, threshold: float) -> None:
    """The scenario as configured (its parameters) against the scenario as simulated."""
    if not isinstance(row, dict) or not isinstance(row.get("outcome"), dict):
        return
    oc, params = row["outcome"], row.get("parameters") or {}
    fields = {
        "true_h": "true_h",
        "model_shift_h": "model_shift_h",
        "stress_latent_correlation": "latent_correlation",
        "stress_stream_correlation": "stream_correlation",
    }
    for key, target in fields.items():
        if _is_number(params.get(key)):
            A.num(
                f"{w}.outcome.{target}",
                f"the scenario's configured {key}",
                params[key],
                oc[target],
                abs_tol=1e-8,
            )
    base = params.get("stress_base")
    if row.get("scenario") == "registered_alternative" or base == "registered_alternative":
        A.num(
            f"{w}.outcome.true_h",
            "true h exactly at the registered threshold",
            threshold,
            oc["true_h"],
            abs_tol=1e-8,
        )
    if row.get("scenario") in ("null", "confounded") or base == "null":
        A.eq(
            f"{w}.outcome.effect_scale",
            "no effect in this scenario",
            0.0,
            float(oc["effect_scale"]),
        )


def _audit_battery(A: _Auditor, res: dict[str, Any]) -> None:
    c = res["construct"]
    name = "battery"
    sheets = _sheets_in(res)
    two_j = 2 * res["judges_per_root"] if isinstance(res.get("judges_per_root"), int) else None
    n_h = res.get("human_judgments_per_root")
    if two_j is not None and isinstance(n_h, int) and "touches_per_root" in res:
        A.eq(
            "results.json $.touches_per_root",
            "touches per root = 2J + human judgments",
            two_j + n_h,
            res["touches_per_root"],
        )
    scenarios = res.get("scenarios") or []
    if isinstance(res.get("replicates"), int) and isinstance(res.get("block_size"), int):
        reps, block = res["replicates"], res["block_size"]
        if "n_blocks" in res:
            A.eq(
                "results.json $.n_blocks",
                "blocks = ceil(replicates / block size)",
                -(-reps // block),
                res["n_blocks"],
            )
        if "sequential_runs" in res:
            A.eq(
                "results.json $.sequential_runs",
                "sequential runs = scenarios × replicates",
                len(scenarios) * reps,
                res["sequential_runs"],
            )
    design = _Design(
        name=name,
        human_rate=c["human_baseline_rate"],
        two_j=two_j,
        n_h=n_h if isinstance(n_h, int) else None,
        fixed_touches=0.0,
        fixed_cost=0.0,
        total_price=res.get("cost_per_root"),
        sheets=sheets,
        latent_correlation=res.get("latent_correlation"),
        cap=res.get("cap_roots"),
        fixed_n=res.get("fixed_n_roots"),
        threshold=c["governing_threshold_h"],
    )
    learned = _Learned()
    ocs = _find_ocs(res)
    A.true("results.json $.scenarios", "scenario blocks present", bool(ocs), ">= 1", len(ocs))
    for i, row in enumerate(scenarios):
        _battery_parameters(A, f"results.json $.scenarios[{i}]", row, c["governing_threshold_h"])
    for path, oc in ocs:
        _audit_oc(A, path, oc, design, learned)
        if isinstance(res.get("replicates"), int) and not path.startswith(GRID_PREFIX):
            A.eq(
                "results.json " + path + ".replicates",
                "replicates per scenario",
                res["replicates"],
                oc["replicates"],
            )
    audit_grid(A, res)  # the grid's own replicates, ends, purposes and fixed-n closed form
    audit_designs(A, res)  # the designs' sums, quantiles, cost per valid verdict, fixed-n
    learned.finalize(A, "results.json $.scenarios")
    if sheets is None and ocs:  # one line for every scenario
        A.unverified(
            "results.json $.scenarios[*].outcome.mu_model",
            "model-stream rates from the judge sheets",
            "the battery's judge sheets are not in results.json (only the panel name)",
        )
