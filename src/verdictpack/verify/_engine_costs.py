"""Self-audit checks of the engine's cost tables: results.json's routes and
cost_comparison.csv, each cost re-derived from the touches and the prices."""

from __future__ import annotations

import csv
import io
import math
from collections import defaultdict
from pathlib import Path
from typing import Any

from verdictpack._cells import csv_value
from verdictpack.verify._findings import _Auditor, _check_totals, _fv, _printed_match
from verdictpack.verify._kinds_oc import (
    _audit_oc,
    _Design,
    _find_ocs,
    _Learned,
    _route_label,
    _sheets_in,
)


def _engine_costs(
    A: _Auditor, res: dict[str, Any], run: Path, rows: list[dict[str, Any]], two_j: int | None
) -> None:
    c = res["construct"]
    aud, bl = res["audit"], res["baseline"]
    fixed_touches = aud["readings"] + bl["pilot_touches"]
    n_h = bl["n_per_root"]
    design = _Design(
        name="engine",
        human_rate=c["human_baseline_rate"],
        two_j=two_j,
        n_h=n_h,
        fixed_touches=float(fixed_touches),
        sheets=_sheets_in(res),
        cap=res["cap_roots"],
        threshold=c["governing_threshold_h"],
    )
    learned = _Learned()
    for path, oc in _find_ocs(res):
        _audit_oc(A, path, oc, design, learned)
    if design.sheets is None:  # one line for every scenario
        A.unverified(
            "results.json $.power[*].mu_model",
            "model-stream rates from the sheets",
            "the engine's judge sheets are not in results.json (only mu_model)",
        )
    learned.finalize(A, "results.json $.power, $.confound_arms")
    # this run's cost lines
    lines = {x["line"]: x for x in res["costs"]}
    w = "results.json $.costs"
    human_stream = sum(len(r["human_choices"]) for r in rows)
    model_touches = sum(2 * len(r["model_choices"]) for r in rows)
    A.eq(
        "results.json $.human_stream_touches",
        "human judgments in evidence.jsonl",
        human_stream,
        res["human_stream_touches"],
    )
    A.eq(
        "results.json $.model_touches",
        "model judgments in evidence.jsonl",
        model_touches,
        res["model_touches"],
    )
    spot = lines.get("stimulus gate spot-check (human)")
    model = lines.get("model judgments")
    human = lines.get("human layer")
    total = lines.get("total")
    if not (spot and model and human and total):
        A.true(
            w,
            "the four cost lines of this run",
            False,
            "spot-check, model, human, total",
            list(lines),
        )
        return
    A.eq(
        w + "[spot].touches",
        "spot-check touches",
        res["spot_check"]["touches"],
        _fv(spot["touches"]),
    )
    A.num(
        w + "[spot].cost",
        "spot-check cost",
        res["spot_check"]["cost"],
        _fv(spot["cost"]),
        abs_tol=1e-9,
    )
    A.eq(w + "[model].touches", "model touches of the run", model_touches, _fv(model["touches"]))
    price = learned.values.get(("engine", "model_price"))
    if price is not None:
        A.num(
            w + "[model].cost",
            f"roots run × model price per root ({price[1]} from the power report)",
            res["roots_run"] * price[0],
            _fv(model["cost"]),
            abs_tol=1e-9,
        )
    A.eq(
        w + "[human].touches",
        "audit readings + pilot + human stream touches",
        fixed_touches + human_stream,
        _fv(human["touches"]),
    )
    fc = learned.values.get(("engine", "fixed_cost"))
    hp = learned.values.get(("engine", "human_price"))
    if fc is not None and hp is not None and n_h:
        A.num(
            w + "[human].cost",
            "fixed human cost + stream touches × price per judgment "
            "(prices as in the power report)",
            fc[0] + human_stream * hp[0] / n_h,
            _fv(human["cost"]),
            abs_tol=1e-9,
        )
    _check_totals(A, w, [spot, model, human], total)
    _engine_csv(A, res, run)


def _engine_csv(A: _Auditor, res: dict[str, Any], run: Path) -> None:
    path = run / "cost_comparison.csv"
    text = path.read_text(encoding="utf-8")
    rows = [
        {k: csv_value(v) for k, v in rec.items() if isinstance(k, str) and isinstance(v, str)}
        for rec in csv.DictReader(io.StringIO(text, newline=""))
    ]
    lines = {x["line"]: x for x in res["costs"]}
    ocs = {oc["scenario"]: oc for oc in res["power"]}
    bad: list[str] = []
    sums: dict[tuple[str, str, str], dict[str, float]] = defaultdict(dict)
    for i, r in enumerate(rows, start=2):
        where = f"line {i} ({r.get('route')}, {r.get('scenario')}, {r.get('line')})"
        if r.get("scenario") == "this run":
            ref = lines.get(r["line"])
            if ref is None or not (
                _printed_match(r["touches"], float(_fv(ref["touches"])))
                and _printed_match(r["cost"], float(_fv(ref["cost"])))
            ):
                bad.append(where)
        else:
            oc = ocs.get(r.get("scenario", ""))
            route = (
                None
                if oc is None
                else next((x for x in oc["routes"] if _route_label(x) == r.get("route")), None)
            )
            keys = {
                "model judgments": ("mean_model_touches", "mean_model_cost"),
                "human layer": ("mean_human_touches", "mean_human_cost"),
                "total": ("mean_touches", "mean_cost"),
            }.get(r.get("line", ""))
            if route is None or keys is None:
                bad.append(where + ": no such route / scenario / line in results.json")
                continue
            t_fig, c_fig = route[keys[0]], route[keys[1]]
            if not (
                _printed_match(r["touches"], _fv(t_fig))
                and _printed_match(r["touches_mcse"], t_fig["mcse"])
                and _printed_match(r["cost"], _fv(c_fig))
                and _printed_match(r["cost_mcse"], c_fig["mcse"])
            ):
                bad.append(where)
        try:
            sums[(r["route"], r["scenario"], "cost")][r["line"]] = float(r["cost"])
            sums[(r["route"], r["scenario"], "touches")][r["line"]] = float(r["touches"])
        except (KeyError, ValueError):
            bad.append(where + ": unreadable number")
    A.true(
        "cost_comparison.csv",
        "every row equals its results.json figure at the printed precision",
        not bad,
        "all rows",
        "; ".join(bad[:4]),
    )
    resum_bad = []
    for key, d in sums.items():
        parts = [v for k, v in d.items() if k != "total"]
        if "total" in d and abs(math.fsum(parts) - d["total"]) > 1.5e-4 * max(len(parts), 1):
            resum_bad.append(f"{key}: {parts} vs total {d['total']}")
    A.true(
        "cost_comparison.csv",
        "totals re-summed from their lines (printed precision)",
        not resum_bad,
        "sums",
        "; ".join(resum_bad[:3]),
    )
