"""Self-audit checks of a study's blocks read from its files: the reader audit's kappa and gate,
the gates' counts, the data files' hashes and the agreement of the JSON files, and the cost
tables."""

from __future__ import annotations

import csv
import io
import math
from collections import defaultdict
from pathlib import Path
from typing import Any

from verdictpack._cells import csv_value
from verdictpack.verify._engine_human import _check_kappa_table
from verdictpack.verify._findings import (
    _agree,
    _Auditor,
    _check_totals,
    _fv,
    _load_json,
    _printed_match,
)
from verdictpack.verify._kappa_bound import check_kappa_gate
from verdictpack.verify._study_tables import _Row

_READING_CELLS = ("root_id", "reader_id", "category")
_TRACKS = ("registered", "extension", "comparison")


def _study_kappa(A: _Auditor, res: dict[str, Any], run: Path) -> int:
    """Cohen's kappa of reader_audit.csv against results.json $.audit; returns the readings."""
    text = (run / "reader_audit.csv").read_text(encoding="utf-8")
    recs = list(csv.DictReader(io.StringIO(text, newline="")))
    by_root: dict[str, list[tuple[str, str]]] = defaultdict(list)
    for rec in recs:
        # cells as written by the spreadsheet rule (verdictpack._cells), undone exactly
        root_id, reader_id, category = (csv_value(rec[c]) for c in _READING_CELLS)
        by_root[root_id].append((reader_id, category))
    bad = [rid for rid, rs in by_root.items() if len(rs) != 2 or rs[0][0] == rs[1][0]]
    a = res["audit"]
    w = "results.json $.audit"
    if a is None or res.get("audit_status") == "not_run":
        # no reader audit (the config's choice): nothing read, nothing validated, nothing passed
        A.true(
            "results.json $.audit_status",
            "no reader audit: status not_run, no audit block, the instrument not validated, no "
            "reading in reader_audit.csv",
            a is None
            and res.get("audit_status") == "not_run"
            and res["instrument_valid"] is None
            and not recs,
            "not_run, null, null, 0 readings",
            [res.get("audit_status"), a, res["instrument_valid"], len(recs)],
        )
        return 0
    A.eq(
        "results.json $.audit_status",
        "the audit's status as its decision",
        "passed" if a["passed"] else "failed",
        res.get("audit_status"),
    )
    A.true(
        "reader_audit.csv",
        "exactly two readings per root, by two readers",
        not bad,
        "all roots",
        bad[:5],
    )
    A.eq(w + ".readings", "readings in reader_audit.csv", len(recs), a["readings"])
    A.eq(
        "results.json $.instrument_valid",
        "instrument valid iff the audit passed",
        a["passed"],
        res["instrument_valid"],
    )
    if bad or len(by_root) < 2:
        check_kappa_gate(A, w, a, None, "reader_audit.csv")
        return len(recs)
    cats = sorted({c for rs in by_root.values() for _, c in rs})
    index = {c: i for i, c in enumerate(cats)}
    k = max(len(cats), 2)
    table = [[0] * k for _ in range(k)]
    for rs in by_root.values():
        (_, ca), (_, cb) = sorted(rs)
        table[index[ca]][index[cb]] += 1
    _check_kappa_table(A, w, a, table, "reader_audit.csv (reader A sorts first)")
    check_kappa_gate(A, w, a, table, "reader_audit.csv")
    return len(recs)


# ==============================================================================================
# Gates, files, costs
# ==============================================================================================


def _study_gates(A: _Auditor, res: dict[str, Any], validity: dict[str, Any]) -> list[str]:
    """Gate counts add up; returns the refused ids."""
    g = validity.get("gates", {})
    refused_pairs = g.get("refused_pairs", [])
    A.eq(
        "validity_report.json $.gates",
        "the gate report as in results.json",
        res["gates"],
        {k: v for k, v in g.items() if k != "refused_pairs"},
    )
    w = "results.json $.gates"
    gr = res["gates"]
    A.eq(w + ".total", "admitted + refused = total", gr["total"], gr["admitted"] + gr["refused"])
    A.eq(
        "validity_report.json $.gates.refused_pairs",
        "one listed pair per refused pair",
        gr["refused"],
        len(refused_pairs),
    )
    names = gr["gates"]
    off = gr.get("off") or []
    A.true(
        w + ".off",
        "a gate switched off is not applied (never among the gates run)",
        not set(off) & set(names) and off == (gr.get("settings") or {}).get("off", []),
        "disjoint from $.gates.gates, as the settings say",
        off,
    )
    ids = [p.get("id") for p in refused_pairs]
    bad = [
        p.get("id")
        for p in refused_pairs
        if not p.get("failed")
        or any(x not in names for x in p["failed"])
        or p["failed"] != sorted(p["failed"], key=names.index)
    ]
    A.true(
        "validity_report.json $.gates.refused_pairs",
        "every refused pair names its failing gates, in gate order",
        not bad and len(set(ids)) == len(ids),
        "known gates, distinct ids",
        bad[:5] or ids[:5],
    )
    if not bad:
        refusals = {n: sum(1 for p in refused_pairs if n in p["failed"]) for n in names}
        first = {n: sum(1 for p in refused_pairs if p["failed"][0] == n) for n in names}
        A.eq(w + ".refusals", "per-gate refusals from the refused list", refusals, gr["refusals"])
        A.eq(
            w + ".first_failing",
            "first failing gates from the refused list",
            first,
            gr["first_failing"],
        )
    return [str(x) for x in ids]


def _study_files_agree(
    A: _Auditor,
    res: dict[str, Any],
    run: Path,
    verdict_file: dict[str, Any],
    validity: dict[str, Any],
) -> None:
    """The files rendered from the same result hold the same values."""
    tracks = (*_TRACKS, "all_data")
    _agree(A, "verdict.json", verdict_file, res, tracks, "the track as in results.json")
    keys = ("audit_status", "instrument_valid", "roots_run", "roots_available", "stop_reason")
    _agree(A, "verdict.json", verdict_file, res, (*keys, "evidence_source"))
    _agree(
        A, "validity_report.json", validity, res, ("coverage", "audit_status", "audit", "policy")
    )
    judges = _load_json(run / "judges.json")
    A.eq("judges.json", "the judges report as in results.json", res["judges_report"], judges)
    fitted = _load_json(run / "fitted_panel.json")
    jr = res["judges_report"]
    block = jr.get("fitted_panel")
    expected: dict[str, Any] = {"panel": block} if block else {}
    if block and jr.get("human_rate") is not None:
        expected["human_rate"] = jr["human_rate"]
    if block and jr.get("human_icc") is not None:
        expected["human_icc"] = jr["human_icc"]
    if block:
        expected["estimated"] = jr.get("fitted_panel_estimated")
        expected["clips"] = jr.get("fitted_panel_clips") or []
    A.eq(
        "fitted_panel.json",
        "the fitted panel block (and the humans' rate its sheets are relative to), its "
        "values as estimated and its clips",
        expected,
        fitted,
    )


def _study_data_files(
    A: _Auditor, res: dict[str, Any], settings: dict[str, Any], readings: int
) -> None:
    """The data files recorded: as in provenance, their record counts those of the tables."""
    files = res["data_files"]
    w = "results.json $.data_files"
    A.eq(
        "provenance.json $.settings.data_files",
        "the data files as results.json records them",
        [{k: f.get(k) for k in ("role", "path", "format", "sha256")} for f in files],
        settings.get("data_files"),
    )
    by_role: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for f in files:
        by_role[f["role"]].append(f)
    judged = by_role.get("judgments", []) + by_role.get("live", [])
    A.eq(
        w + "[judgments].records",
        "judgment rows read (files and a live study's ledger) = coverage rows",
        res["coverage"]["rows"],
        sum(f["records"] for f in judged),
    )
    A.eq(
        "results.json $.evidence_source",
        "the judgment files, as read",
        "study data: " + ", ".join(f"{f['path']} ({f['format']})" for f in judged),
        res["evidence_source"],
    )
    audited = res["audit"] is not None
    for role, expected, what in (
        ("stimuli", [res["gates"]["total"]], "pairs read = pairs gated"),
        (
            "reader_audit",
            [readings] if audited else [],
            "readings read = rows of reader_audit.csv (no file without a reader audit)",
        ),
    ):
        got = [f["records"] for f in by_role.get(role, [])]
        A.eq(f"{w}[{role}].records", what, expected, got)
    rf = by_role.get("root_order", [])
    order_text = str(res.get("root_order", ""))
    A.eq(
        f"{w}[root_order]",
        "an order file read iff the order is a registered order file",
        not order_text.startswith("keyed hash"),
        bool(rf),
    )


def _study_costs(
    A: _Auditor,
    res: dict[str, Any],
    run: Path,
    table: list[_Row],
    entered: list[str],
    readings: int,
) -> None:
    """cost_comparison.csv against results.json; each route's touches re-counted, totals
    re-summed."""
    text = (run / "cost_comparison.csv").read_text(encoding="utf-8")
    recs = list(csv.DictReader(io.StringIO(text, newline="")))
    lines = res["costs"]
    bad = []
    for i, (rec, ref) in enumerate(zip(recs, lines, strict=False), start=2):
        try:
            ok = (
                csv_value(rec["route"]) == ref["route"]
                and csv_value(rec["line"]) == ref["line"]
                and _printed_match(rec["touches"], float(_fv(ref["touches"])))
                and float(rec["cost"]) == float(_fv(ref["cost"]))
            )
        except (KeyError, ValueError, TypeError):
            ok = False
        if not ok:
            bad.append(f"line {i}")
    A.true(
        "cost_comparison.csv",
        "every row equals its results.json cost line (touches at the printed precision, "
        "cost exactly)",
        not bad and len(recs) == len(lines),
        f"{len(lines)} rows",
        f"{len(recs)} rows; differing: {bad[:4]}",
    )
    rank = {rid: k for k, rid in enumerate(entered)}
    limits = {"to the registered verdict": res["roots_run"], "all data": len(entered)}
    by_route: dict[str, dict[str, dict[str, Any]]] = defaultdict(dict)
    for x in lines:
        by_route[x["route"]][x["line"]] = x
    A.eq("results.json $.costs", "the two routes", sorted(limits), sorted(by_route))
    for route, limit in limits.items():
        got = by_route.get(route, {})
        w = f"results.json $.costs[{route}]"
        parts = ("model judgments", "human judgments", "reader audit readings")
        if not A.true(
            w,
            "the four cost lines",
            all(p in got for p in (*parts, "total")),
            list(parts),
            list(got),
        ):
            continue
        inside = [r for r in table if rank.get(r.root, limit) < limit]
        for line, kind in (("model judgments", "model"), ("human judgments", "human")):
            mine = [r for r in inside if r.kind == kind]
            A.eq(
                f"{w}[{line}].touches",
                f"{kind} judgments on the first {limit} roots entered",
                len(mine),
                _fv(got[line]["touches"]),
            )
            if mine and all(r.cost is not None for r in mine):
                A.num(
                    f"{w}[{line}].cost",
                    "the rows' own costs re-summed",
                    math.fsum(r.cost or 0.0 for r in mine),
                    _fv(got[line]["cost"]),
                    abs_tol=1e-9,
                )
        A.eq(
            f"{w}[reader audit readings].touches",
            "readings of reader_audit.csv",
            readings,
            _fv(got["reader audit readings"]["touches"]),
        )
        _check_totals(A, w, [got[p] for p in parts], got["total"])
    reading_costs = {
        r: _fv(x["reader audit readings"]["cost"])
        for r, x in by_route.items()
        if "reader audit readings" in x
    }
    A.true(
        "results.json $.costs[*][reader audit readings].cost",
        "the reader audit costs the same on every route (readings × one price)",
        len(set(reading_costs.values())) <= 1,
        "one cost",
        reading_costs,
    )
    A.unverified(
        "results.json $.costs[*].cost",
        "cost of rows without a cost of their own",
        "the configured prices are in the config, not in the outputs",
    )


# ==============================================================================================
# The tracks
# ==============================================================================================
