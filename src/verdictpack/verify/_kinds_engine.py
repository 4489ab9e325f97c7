"""Self-audit checks of the engine kind: the tracks rebuilt from evidence.jsonl by a separately
written e-process, the hybrid h-interval, the factory and human-baseline blocks, cost tables
(results.json and cost_comparison.csv) and the agreement of the JSON files."""

from __future__ import annotations

import csv
import io
import json
import math
import re
from collections import defaultdict
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from verdictpack._cells import csv_value
from verdictpack.verify._findings import (
    _MAX_Z,
    _TOL_BOUND,
    _TOL_NARROW,
    FloatArray,
    _Auditor,
    _close,
    _fv,
    _is_number,
    _show,
)
from verdictpack.verify._kappa_bound import check_kappa_gate
from verdictpack.verify._kinds_oc import (
    _audit_oc,
    _Design,
    _find_ocs,
    _Learned,
    _oc_unverified,
    _route_label,
    _sheets_in,
)
from verdictpack.verify._rederive import (
    _binomial_enumeration,
    _binomial_normal_n,
    _corners,
    _hybrid_interval,
    _kappa_and_se,
    _log_e_history,
    _phi,
    _phi_inv,
    _track_series,
    _track_verdicts,
    _TrackSeries,
    _z,
)
from verdictpack.verify._report_map import _printed_match

# ==============================================================================================
# engine
# ==============================================================================================


def _read_jsonl(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line]


def _stream_alphas(
    construction: str, settings: dict[str, Any], a: float
) -> tuple[float, float | None] | None:
    """(per-tail alpha of M and H, of D or None) of a construction, from provenance settings.

    The corners use the per-tail alpha on both streams. The hybrid split is read from
    ``settings.stream_alphas`` when the registered construction is the hybrid, else from a
    ``hybrid_alphas`` pair or the ``hybrid_split`` text; None when it is not recorded.
    """
    if construction == "corners":
        return a, None
    sa = settings.get("stream_alphas")
    if (
        settings.get("construction") == "hybrid"
        and isinstance(sa, dict)
        and _is_number(sa.get("diff"))
        and _is_number(sa.get("model"))
        and sa.get("model") == sa.get("human")
    ):
        return float(sa["model"]), float(sa["diff"])
    pair = settings.get("hybrid_alphas")
    if isinstance(pair, list) and len(pair) == 2 and all(_is_number(x) for x in pair):
        return float(pair[0]), float(pair[1])
    m = re.match(
        r"^M and H at per_tail(?:/(\d+))?, D at per_tail(?:/(\d+))?\b",
        str(settings.get("hybrid_split", "")),
    )
    if m:
        return a / float(m.group(1) or 1), a / float(m.group(2) or 1)
    return None


def _audit_engine(A: _Auditor, res: dict[str, Any], run: Path, prov: dict[str, Any]) -> None:
    settings = prov.get("settings", {})
    rows = _read_jsonl(run / "evidence.jsonl")
    verdict_file = json.loads((run / "verdict.json").read_text(encoding="utf-8"))
    _engine_files_agree(A, res, run, verdict_file)
    _engine_factory(A, res, run, rows)
    _engine_human(A, res)
    _engine_sequential(A, res, rows, settings, verdict_file)
    two_j = 2 * len(rows[0]["model_choices"]) if rows else None
    _engine_costs(A, res, run, rows, two_j)


def _engine_files_agree(
    A: _Auditor, res: dict[str, Any], run: Path, verdict_file: dict[str, Any]
) -> None:
    for key in ("registered", "extension", "comparison"):
        A.eq(
            f"verdict.json $.{key}", "the track as in results.json", res[key], verdict_file.get(key)
        )
    for key in ("instrument_valid", "roots_run", "effective_cap", "evidence_source"):
        A.eq(f"verdict.json $.{key}", f"{key} as in results.json", res[key], verdict_file.get(key))
    validity = json.loads((run / "validity_report.json").read_text(encoding="utf-8"))
    factory = {k: v for k, v in validity.get("factory", {}).items()}
    res_factory = {k: v for k, v in res["factory"].items() if k != "admitted"}
    A.eq("validity_report.json $.factory", "factory block as in results.json", res_factory, factory)
    for key in ("spot_check", "audit", "stream_checks"):
        A.eq(
            f"validity_report.json $.{key}",
            f"{key} as in results.json",
            res[key],
            validity.get(key),
        )
    power = json.loads((run / "power_report.json").read_text(encoding="utf-8"))
    A.eq(
        "power_report.json $.scenarios",
        "power scenarios as in results.json",
        res["power"],
        power.get("scenarios"),
    )
    A.eq(
        "power_report.json $.confound_arms",
        "confound arms as in results.json",
        res["confound_arms"],
        power.get("confound_arms"),
    )


def _engine_factory(
    A: _Auditor, res: dict[str, Any], run: Path, rows: list[dict[str, Any]]
) -> None:
    f = res["factory"]
    w = "results.json $.factory"
    cand, adm = f["n_candidates"], f["n_admitted"]
    A.eq(w + ".n_rejected", "rejected = candidates − admitted", cand - adm, f["n_rejected"])
    A.eq(
        w + ".first_failures",
        "Σ first-failing-gate counts = candidates − admitted",
        cand - adm,
        sum(f["first_failures"].values()),
    )
    A.num(
        w + ".admission_yield",
        "yield = admitted / candidates",
        adm / cand,
        _fv(f["admission_yield"]),
        abs_tol=1e-15,
    )
    ok = all(f["gate_failures"][g] >= f["first_failures"][g] for g in f["gate_names"])
    first_gate = f["gate_names"][0]
    A.true(
        w + ".gate_failures",
        "each gate fails at least its first failures; the first gate's "
        "failures are all first failures",
        ok and f["gate_failures"][first_gate] == f["first_failures"][first_gate],
        "failing ≥ first",
        f["gate_failures"],
    )
    stimuli = _read_jsonl(run / "stimuli.jsonl")
    A.eq("stimuli.jsonl", "one line per admitted stimulus", adm, len(stimuli))
    ids = [s.get("root_id") for s in stimuli]
    A.eq(
        "evidence.jsonl $[*].stimulus_id",
        "roots run in the admitted order",
        ids[: len(rows)],
        [r["stimulus_id"] for r in rows],
    )
    A.unverified(
        w + ".gate_failures",
        "per-gate decisions on the candidates",
        "the rejected candidates are not in the outputs; only the counts' additivity was checked",
    )
    s = res["spot_check"]
    w = "results.json $.spot_check"
    e, conf = s["error_rate"], s["confidence"]
    n = 1
    while (1 - e) ** n > 1 - conf:
        n += 1
    A.eq(w + ".pairs", "smallest n with (1 − e)^n ≤ 1 − confidence", n, s["pairs"])
    A.eq(
        w + ".touches", "touches = pairs × passes", s["pairs"] * s["passes_per_pair"], s["touches"]
    )
    A.num(
        w + ".bound_at_pairs",
        "1 − (1 − confidence)^(1/n)",
        1 - (1 - conf) ** (1 / n),
        _fv(s["bound_at_pairs"]),
        abs_tol=1e-12,
    )
    if n > 1:
        A.num(
            w + ".bound_at_pairs_minus_1",
            "1 − (1 − confidence)^(1/(n − 1))",
            1 - (1 - conf) ** (1 / (n - 1)),
            _fv(s["bound_at_pairs_minus_1"]),
            abs_tol=1e-12,
        )


def _engine_human(A: _Auditor, res: dict[str, Any]) -> None:
    a = res["audit"]
    w = "results.json $.audit"
    k = _fv(a["kappa"])
    lo, hi = _fv(a["ci_low"]), _fv(a["ci_high"])
    check_kappa_gate(A, w, a, a.get("agreement_table"), "the agreement table")
    _engine_audit_sizing(A, res)
    A.eq(
        "results.json $.instrument_valid",
        "instrument valid iff the audit passed",
        a["passed"],
        res["instrument_valid"],
    )
    A.eq(w + ".readings", "readings = roots × 2 readers", 2 * a["n_roots"], a["readings"])
    half = (hi - lo) / 2
    if lo > -1 and hi < 1:
        A.num(
            w + ".ci_low",
            "kappa CI = kappa ± z·se (symmetric about kappa)",
            k - half,
            lo,
            abs_tol=1e-12,
        )
    table = a.get("agreement_table")
    if table is None:
        A.unverified(
            w + ".ci_low",
            f"the kappa standard error (implied se {half / _z(0.5 + a['level'] / 2):.6f})",
            "the reader table is not in the outputs; only the symmetry kappa ± z·se was checked",
        )
    else:
        _check_kappa_table(A, w, a, table, "the agreement table")
    b = res["baseline"]
    w = "results.json $.baseline"
    p_h, m = b["human_rate"], b["n_per_root"]
    A.num(
        w + ".human_rate",
        "the construct's baseline",
        res["construct"]["human_baseline_rate"],
        p_h,
        abs_tol=0,
    )
    shifted = _phi_inv(_phi(p_h) + b["threshold_h"])
    A.num(w + ".shifted_rate", "sin²((φ(p_H) + h)/2)", shifted, b["shifted_rate"], abs_tol=1e-12)
    A.eq(
        w + ".pilot_touches",
        "pilot roots × judgments per root",
        b["pilot_roots"] * m,
        b["pilot_touches"],
    )
    A.eq(
        w + ".confirmatory_touches",
        "confirmatory roots × judgments per root",
        b["confirmatory_roots"] * m,
        b["confirmatory_touches"],
    )
    A.eq(
        w + ".total_touches",
        "pilot + confirmatory touches",
        b["pilot_touches"] + b["confirmatory_touches"],
        b["total_touches"],
    )
    alpha = b["alpha"]
    A.num(
        w + ".alpha",
        "one-sided level = 2 × per-tail alpha",
        2 * res["construct"]["per_tail_alpha"],
        alpha,
        abs_tol=1e-15,
    )
    roots = b["confirmatory_roots"]
    cf = math.ceil(_binomial_normal_n(shifted, p_h, alpha, b["target_power"], 1) / m)
    A.eq(
        w + ".closed_form_roots",
        "closed-form roots = ceil(normal n / judgments per root)",
        cf,
        _fv(b["closed_form_roots"]),
    )
    table = _binomial_enumeration(shifted, p_h, alpha, 1, roots * m)
    row = table[roots * m - 1]
    crit = row.lower if b["direction"] == "less" else row.upper
    A.eq(
        w + ".critical_value",
        "critical count of the exact one-sided test (enumeration)",
        crit,
        b["critical_value"],
    )
    A.num(
        w + ".achieved_alpha",
        "achieved alpha of that region",
        row.achieved,
        _fv(b["achieved_alpha"]),
    )
    A.num(w + ".exact_power", "exact power at the human rate", row.power, _fv(b["exact_power"]))
    if roots > 1 and b.get("exact_power_below") is not None:
        A.num(
            w + ".exact_power_below",
            "exact power one root below",
            table[(roots - 1) * m - 1].power,
            _fv(b["exact_power_below"]),
        )
    for key, ex in (
        ("simulated_power", row.power),
        ("simulated_power_below", table[(roots - 1) * m - 1].power if roots > 1 else None),
    ):
        fig = b.get(key)
        if fig is None or ex is None:
            continue
        p, mc, reps = _fv(fig), fig["mcse"], fig["replicates"]
        A.num(
            w + f".{key}.mcse",
            "MCSE = sqrt(p(1 − p)/R)",
            math.sqrt(p * (1 - p) / reps),
            mc,
            abs_tol=1e-12,
        )
        zv = (p - ex) / mc if mc else 0.0
        A.true(
            w + f".{key}",
            f"simulated within {_MAX_Z:g} MCSE of our exact power",
            abs(zv) <= _MAX_Z,
            f"|z| <= {_MAX_Z:g} (exact {ex:.6f})",
            f"z = {zv:.2f}",
        )
    A.true(
        w + ".simulated_power",
        "the confirmatory size is the first simulated crossing",
        _fv(b["simulated_power"]) >= b["target_power"]
        and (
            b.get("simulated_power_below") is None
            or _fv(b["simulated_power_below"]) < b["target_power"]
        ),
        f"power(n) ≥ {b['target_power']} > power(n − 1)",
        f"{_fv(b['simulated_power'])} / {_fv(b.get('simulated_power_below'))}",
    )


def _engine_audit_sizing(A: _Auditor, res: dict[str, Any]) -> None:
    """The reader-audit sizing: its planning kappa, the size the audit used, and the search's
    own claim (pass probability at the size ≥ target, one root below < target)."""
    z = res.get("audit_sizing")
    w = "results.json $.audit_sizing"
    if z is None:
        A.true(w, "the reader-audit sizing is reported", False, "an object", None)
        return
    r, k = z["planning_rate"], z["n_categories"]
    A.num(
        w + ".planning_kappa",
        "((k·r − 1)/(k − 1))² at the planning reconstruction rate",
        ((k * r - 1) / (k - 1)) ** 2,
        z["planning_kappa"],
        abs_tol=1e-12,
    )
    a = res["audit"]
    for key in ("kappa_min",):
        A.eq(w + "." + key, "the gate the audit was sized for", a[key], z[key])
    A.eq(w + ".level", "the bound level the audit was sized for", a["bound_level"], z["level"])
    used = z["roots"] if z.get("registered_roots") is None else z["registered_roots"]
    if z.get("roots") is None:
        A.true(
            w + ".roots",
            "no size when the planning kappa does not exceed kappa_min",
            z["planning_kappa"] <= a["kappa_min"] and z.get("registered_roots") is not None,
            f"planning kappa ≤ {a['kappa_min']} and a registered size",
            z["planning_kappa"],
        )
        A.eq("results.json $.audit.n_roots", "the registered audit size", used, a["n_roots"])
        return
    A.eq("results.json $.audit.n_roots", "the sized (or registered) audit size", used, a["n_roots"])
    A.true(
        w + ".pass_probability",
        "simulated pass probability at the size reaches the target",
        _fv(z["pass_probability"]) >= z["target_pass_probability"],
        f"≥ {z['target_pass_probability']}",
        _fv(z["pass_probability"]),
    )
    below = z.get("pass_probability_below")
    if below is not None:
        A.true(
            w + ".pass_probability_below",
            "one root fewer does not reach the target (first crossing)",
            _fv(below) < z["target_pass_probability"],
            f"< {z['target_pass_probability']}",
            _fv(below),
        )


def _check_kappa_table(
    A: _Auditor, w: str, a: dict[str, Any], table: list[list[int]], source: str
) -> float | None:
    """An audit block (``w``: kappa, se, n_roots, level, ci_low, ci_high) against Cohen's kappa
    and its Fleiss–Cohen–Everitt interval from ``table`` (reader A by rows); our kappa, or None
    when it is undefined (expected agreement 1)."""
    A.eq(w + ".n_roots", f"roots in {source}", sum(sum(row) for row in table), a["n_roots"])
    try:
        k2, se2 = _kappa_and_se(table)
    except ZeroDivisionError:
        A.true(w + ".kappa", f"kappa defined by {source}", False, "P_e < 1", "P_e = 1")
        return None
    A.num(w + ".kappa", f"Cohen's kappa from {source}", k2, _fv(a["kappa"]), abs_tol=1e-12)
    A.num(
        w + ".se", f"Fleiss–Cohen–Everitt standard error from {source}", se2, a["se"], abs_tol=1e-12
    )
    zq = _z(0.5 + a["level"] / 2)
    A.num(
        w + ".ci_low",
        "kappa − z·se (clipped at −1)",
        max(-1.0, k2 - zq * se2),
        _fv(a["ci_low"]),
        abs_tol=1e-9,
    )
    A.num(
        w + ".ci_high",
        "kappa + z·se (clipped at 1)",
        min(1.0, k2 + zq * se2),
        _fv(a["ci_high"]),
        abs_tol=1e-9,
    )
    return k2


def _engine_sequential(
    A: _Auditor,
    res: dict[str, Any],
    rows: list[dict[str, Any]],
    settings: dict[str, Any],
    verdict_file: dict[str, Any],
) -> None:
    w = "evidence.jsonl"
    roots_run = res["roots_run"]
    A.true(
        "results.json $.roots_run",
        "roots run ≤ effective cap ≤ cap",
        roots_run <= res["effective_cap"] <= res["cap_roots"]
        and res["effective_cap"] == min(res["cap_roots"], res["factory"]["n_admitted"]),
        f"≤ {res['effective_cap']} = min(cap, admitted)",
        roots_run,
    )
    A.eq(w, "one evidence row per root run", roots_run, len(rows))
    A.eq(
        w + " $[*].root",
        "roots numbered 1..n",
        list(range(1, len(rows) + 1)),
        [r["root"] for r in rows],
    )
    if not res["instrument_valid"]:
        for key in ("registered", "extension", "comparison"):
            A.eq(
                f"verdict.json $.{key}.verdict",
                "no preference claim when the instrument is invalid",
                "INSTRUMENT_INVALID",
                verdict_file[key]["verdict"],
            )
        return
    if not rows:
        return
    # M and H from the recorded choices
    m_vals, h_vals, first, second = [], [], [], []
    bad_m: list[int] = []
    for r in rows:
        choices = [x for pair in r["model_choices"].values() for x in pair]
        mv = sum(choices) / len(choices)
        first += [pair[0] for pair in r["model_choices"].values()]
        second += [pair[1] for pair in r["model_choices"].values()]
        hv = (sum(r["human_choices"]) / len(r["human_choices"])) if r["human_choices"] else None
        if not (
            _close(mv, r["M"], 1e-12, 0)
            and (
                (hv is None and r["H"] is None) or (hv is not None and _close(hv, r["H"], 1e-12, 0))
            )
        ):
            bad_m.append(r["root"])
        m_vals.append(mv)
        h_vals.append(hv)
    A.true(
        w + " $[*].M,H",
        "M and H = means of the recorded choices",
        not bad_m,
        "all rows",
        f"rows {bad_m[:5]}",
    )
    A.unverified(
        w + " $[*].model_choices",
        "the judges' and humans' choices",
        "simulated evidence (the input of the verdict), not re-derivable",
    )
    sc = res["stream_checks"]
    hv_all = [h for h in h_vals if h is not None]
    A.num(
        "results.json $.stream_checks.model_mean_observed",
        "mean of M over the rows",
        float(np.mean(m_vals)),
        sc["model_mean_observed"],
        abs_tol=1e-12,
    )
    if hv_all:
        A.num(
            "results.json $.stream_checks.human_mean_observed",
            "mean of H over the rows",
            float(np.mean(hv_all)),
            sc["human_mean_observed"],
            abs_tol=1e-12,
        )
    A.num(
        "results.json $.stream_checks.treatment_first_rate",
        "mean first-order choice",
        float(np.mean(first)),
        sc["treatment_first_rate"],
        abs_tol=1e-12,
    )
    A.num(
        "results.json $.stream_checks.treatment_second_rate",
        "mean second-order choice",
        float(np.mean(second)),
        sc["treatment_second_rate"],
        abs_tol=1e-12,
    )
    A.eq(
        "results.json $.stream_checks.complete_pairs",
        "roots with a human judgment",
        len(hv_all),
        sc["complete_pairs"],
    )
    A.num(
        "results.json $.truth_true_h",
        "true h = φ(μ_M) − φ(μ_H)",
        _phi(res["truth_mu_model"]) - _phi(res["truth_mu_human"]),
        res["truth_true_h"],
        abs_tol=1e-12,
    )
    rebuilt = _rebuild_tracks(A, res, settings, m_vals, h_vals)
    if rebuilt is None:
        return
    cap = res["effective_cap"]
    states, reached = _track_verdicts(rebuilt.series, rebuilt.thresholds, cap)
    stop = reached["registered"][1] if "registered" in reached else cap
    A.eq(
        "results.json $.roots_run",
        "the registered track's verdict (or the cap) stops the run",
        stop,
        roots_run,
    )
    _check_evidence_rows(A, w, rows, rebuilt, states)
    base = res["construct"]["human_baseline_rate"]
    mx = np.array(m_vals)
    logw = np.log(rebuilt.weights)
    bad_e = []
    for t, r in enumerate(rows):
        hist = mx[: t + 1]
        up = _log_e_history(hist, base, rebuilt.lambdas, logw, 1.0)
        dn = _log_e_history(hist, base, rebuilt.lambdas, logw, -1.0)
        if not (
            _close(up, r["log_e_model_above_baseline"], 1e-9, 1e-9)
            and _close(dn, r["log_e_model_below_baseline"], 1e-9, 1e-9)
        ):
            bad_e.append(r["root"])
    A.true(
        f"{w} $[*].log_e_model_*_baseline",
        "log e-values at the baseline (products over the history)",
        not bad_e,
        f"all {len(rows)} rows",
        f"rows {bad_e[:5]}",
    )
    for name in rebuilt.series:
        verdict, at = reached.get(name, ("NO_VERDICT_WHEN_REGISTERED_STOPPED", None))
        _check_track(
            A,
            f"verdict.json $.{name}",
            verdict_file[name],
            name,
            rebuilt,
            (verdict, at),
            (at or roots_run) - 1,
        )


@dataclass(frozen=True)
class _Rebuilt:
    """The three tracks rebuilt from (M_i, H_i) under the recorded settings."""

    series: dict[str, _TrackSeries]
    thresholds: dict[str, float]
    constructions: dict[str, str]
    lambdas: FloatArray
    weights: FloatArray


def _rebuild_tracks(
    A: _Auditor,
    res: dict[str, Any],
    settings: dict[str, Any],
    m_vals: list[float],
    h_vals: list[float | None],
    m_upper: list[float] | None = None,
    h_upper: list[float | None] | None = None,
) -> _Rebuilt | None:
    """The registered, extension and comparison series from the per-root values (or their
    bounds: ``m_vals``/``h_vals`` the lower values, ``m_upper``/``h_upper`` the upper ones), with
    the settings they need checked (per-tail alpha, bet grid, stream alphas, error per side);
    None (with a failure or UNVERIFIED finding) when the settings do not allow it. Shared by
    every sequential kind whose outputs record M_i and H_i (engine, study)."""
    c = res["construct"]
    a = float(settings.get("per_tail_alpha", c["per_tail_alpha"]))
    A.num(
        "provenance.json $.settings.per_tail_alpha",
        "the construct's per-tail alpha",
        c["per_tail_alpha"],
        a,
        abs_tol=0,
    )
    lambdas = np.array(settings.get("lambdas", []), dtype=float)
    weights = np.array(settings.get("weights") or [1.0 / max(lambdas.size, 1)] * lambdas.size)
    if lambdas.size == 0 or weights.size != lambdas.size:
        A.true(
            "provenance.json $.settings.lambdas",
            "the bet grid (lambdas, weights) is recorded",
            False,
            "lambdas and weights",
            settings.get("lambdas"),
        )
        return None
    constructions = {
        "registered": settings.get("construction", res["construction"]),
        "extension": settings.get("construction", res["construction"]),
        "comparison": settings.get("comparison_construction", res["comparison_construction"]),
    }
    alphas = {name: _stream_alphas(cons, settings, a) for name, cons in constructions.items()}
    if alphas["registered"] is None:
        A.unverified(
            "verdict.json",
            "the verdict rebuilt from the per-root values",
            "the hybrid's stream alphas are not recorded in provenance settings",
        )
        return None
    for name in [n for n, al in alphas.items() if al is None]:
        A.unverified(
            f"verdict.json $.{name}",
            f"the {name} track rebuilt from the per-root values",
            "the hybrid's stream alphas are not recorded in provenance settings",
        )
    known = {name: al for name, al in alphas.items() if al is not None}
    series = _track_series(m_vals, h_vals, lambdas, weights, known, m_upper, h_upper)
    if _is_number(settings.get("error_per_side")):
        A.num(
            "provenance.json $.settings.error_per_side",
            "error per side of the registered construction (4·a_MH + a_D or 2·a)",
            series["registered"].error_per_side,
            settings["error_per_side"],
            abs_tol=1e-15,
        )
    thresholds = {
        "registered": c["governing_threshold_h"],
        "extension": c["extension_minimum_h"],
        "comparison": c["governing_threshold_h"],
    }
    return _Rebuilt(series, thresholds, constructions, lambdas, weights)


def _check_evidence_rows(
    A: _Auditor,
    w: str,
    rows: list[dict[str, Any]],
    rebuilt: _Rebuilt,
    states: dict[str, list[str]],
) -> None:
    """Every evidence row's registered bounds, h-intervals and track states against the
    rebuilt series (row t is root t + 1)."""
    reg = rebuilt.series["registered"]
    checks = [
        ("model_bounds", reg.model, "registered model CS"),
        ("human_bounds", reg.human, "registered human CS"),
    ]
    if reg.diff is not None:
        checks.append(("diff_bounds", reg.diff, "registered difference CS"))
    for field, (lo_arr, hi_arr), what in checks:
        bad = [
            r["root"]
            for t, r in enumerate(rows)
            if not _conservative(lo_arr[t], hi_arr[t], r[field])
        ]
        A.true(
            f"{w} $[*].{field}",
            f"{what} rebuilt (to {_TOL_BOUND:g}, never narrower)",
            not bad,
            "all rows",
            _bad_rows(bad, rows, field, lo_arr, hi_arr),
        )
    for field, name in (("h_interval", "registered"), ("comparison_h_interval", "comparison")):
        if name not in rebuilt.series:
            continue
        ivs = rebuilt.series[name].h
        bad = [
            r["root"]
            for t, r in enumerate(rows)
            if field in r and not _conservative(ivs[t][0], ivs[t][1], r[field])
        ]
        A.true(
            f"{w} $[*].{field}",
            f"{name} h-interval rebuilt ({rebuilt.constructions[name]})",
            not bad,
            "all rows",
            _bad_rows(
                bad, rows, field, np.array([x[0] for x in ivs]), np.array([x[1] for x in ivs])
            ),
        )
    bad_state = [
        r["root"]
        for t, r in enumerate(rows)
        if any(r["state"].get(name) != states[name][t] for name in rebuilt.series)
    ]
    A.true(
        f"{w} $[*].state",
        "every track's state per root",
        not bad_state,
        "all rows",
        f"rows {bad_state[:5]}",
    )


def _check_track(
    A: _Auditor,
    tw: str,
    track: dict[str, Any],
    name: str,
    rebuilt: _Rebuilt,
    verdict_at: tuple[str, int | None],
    t: int,
) -> None:
    """One published track (``tw`` names it) against the rebuilt series: construction,
    threshold, the expected verdict and root ``verdict_at``, error per side, and the bounds and
    h-interval at row ``t`` (to the bound tolerance, never narrower), then the h-interval
    recomputed from the printed bounds themselves."""
    ser = rebuilt.series[name]
    A.eq(
        tw + ".construction",
        "the track's construction",
        rebuilt.constructions[name],
        track["construction"],
    )
    A.num(
        tw + ".threshold_h",
        "the track's threshold",
        rebuilt.thresholds[name],
        track["threshold_h"],
        abs_tol=0,
    )
    verdict, at = verdict_at
    A.eq(tw + ".verdict", "verdict rebuilt from the per-root values", verdict, track["verdict"])
    A.eq(tw + ".roots_at_verdict", "root of the verdict", at, track["roots_at_verdict"])
    A.num(
        tw + ".error_per_side",
        "error per side of the construction",
        ser.error_per_side,
        track["error_per_side"],
        abs_tol=1e-15,
    )
    for field, bounds in (
        ("model_bounds", ser.model),
        ("human_bounds", ser.human),
        ("diff_bounds", ser.diff),
    ):
        if bounds is None:
            A.eq(tw + "." + field, "no difference CS for the corners", None, track[field])
            continue
        lo_arr, hi_arr = bounds
        A.true(
            tw + "." + field,
            f"bounds rebuilt at root {t + 1} (to {_TOL_BOUND:g}, never narrower)",
            _conservative(lo_arr[t], hi_arr[t], track[field]),
            [lo_arr[t], hi_arr[t]],
            track[field],
        )
    iv = ser.h[t]
    A.true(
        tw + ".h_interval",
        f"h-interval rebuilt at root {t + 1}",
        _conservative(iv[0], iv[1], track["h_interval"]),
        list(iv),
        track["h_interval"],
    )
    # the interval from the printed bounds themselves
    if track.get("model_bounds") and track.get("human_bounds"):
        mb, hb, db = track["model_bounds"], track["human_bounds"], track.get("diff_bounds")
        from_bounds = (
            _corners(mb[0], mb[1], hb[0], hb[1])
            if db is None
            else _hybrid_interval(mb[0], mb[1], hb[0], hb[1], db[0], db[1])
        )
        A.true(
            tw + ".h_interval",
            f"h-interval from the printed bounds ({track['construction']})",
            from_bounds is not None
            and _close(from_bounds[0], track["h_interval"][0], 1e-9, 0)
            and _close(from_bounds[1], track["h_interval"][1], 1e-9, 0),
            from_bounds,
            track["h_interval"],
        )


def _conservative(lo: float, hi: float, found: Any) -> bool:
    if not (isinstance(found, list) and len(found) == 2 and all(_is_number(x) for x in found)):
        return False
    f_lo, f_hi = float(found[0]), float(found[1])
    return (lo - _TOL_BOUND <= f_lo <= lo + _TOL_NARROW) and (
        hi - _TOL_NARROW <= f_hi <= hi + _TOL_BOUND
    )


def _bad_rows(
    bad: list[int], rows: list[dict[str, Any]], field: str, lo: FloatArray, hi: FloatArray
) -> str:
    if not bad:
        return ""
    parts = []
    for root in bad[:3]:
        t = root - 1
        parts.append(
            f"root {root}: {_show(rows[t].get(field))} vs ours [{lo[t]:.12g}, {hi[t]:.12g}]"
        )
    return f"{len(bad)} rows differ; " + "; ".join(parts)


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
        sheets_reason="the engine's judge sheets are not in results.json (only mu_model)",
        cap=res["cap_roots"],
        threshold=c["governing_threshold_h"],
    )
    stats = {"simulated": 0, "blocks": 0}
    learned = _Learned()
    for path, oc in _find_ocs(res):
        _audit_oc(A, path, oc, design, learned, stats)
    if design.sheets is None:
        A.findings[:] = [
            f
            for f in A.findings
            if not (f.status == "unverified" and f.where.endswith(".mu_model"))
        ]
        A.unverified(
            "results.json $.power[*].mu_model",
            "model-stream rates from the sheets",
            design.sheets_reason,
        )
    learned.finalize(A)
    _oc_unverified(A, "results.json $.power, $.confound_arms", stats)
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
    A.num(
        w + "[total].touches",
        "total touches re-summed",
        sum(float(_fv(x["touches"])) for x in (spot, model, human)),
        _fv(total["touches"]),
        abs_tol=1e-9,
    )
    A.num(
        w + "[total].cost",
        "total cost re-summed",
        math.fsum(float(_fv(x["cost"])) for x in (spot, model, human)),
        _fv(total["cost"]),
        abs_tol=1e-9,
    )
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
