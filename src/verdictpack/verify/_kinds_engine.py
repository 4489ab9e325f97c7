"""Self-audit checks of the engine kind: the tracks rebuilt from evidence.jsonl by a separately
written e-process, the hybrid h-interval, the factory and human-baseline blocks, cost tables
(results.json and cost_comparison.csv) and the agreement of the JSON files."""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from verdictpack.verify._engine_costs import _engine_costs
from verdictpack.verify._engine_human import _engine_human
from verdictpack.verify._findings import (
    _TOL_BOUND,
    _TOL_NARROW,
    FloatArray,
    _agree,
    _Auditor,
    _close,
    _is_number,
    _show,
)
from verdictpack.verify._rederive import (
    _adaptive_log_capital,
    _corners,
    _hybrid_interval,
    _log_e_history,
    _phi,
    _plugin_bets,
    _track_series,
    _track_verdicts,
    _TrackSeries,
)

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
    ``settings.stream_alphas`` when the registered construction is the hybrid, else from the
    ``hybrid_alphas`` pair; None when it is not recorded.
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
    tracks = ("registered", "extension", "comparison")
    _agree(A, "verdict.json", verdict_file, res, tracks, "the track as in results.json")
    keys = ("instrument_valid", "roots_run", "effective_cap", "evidence_source")
    _agree(A, "verdict.json", verdict_file, res, keys)
    validity = json.loads((run / "validity_report.json").read_text(encoding="utf-8"))
    res_factory = {k: v for k, v in res["factory"].items() if k != "admitted"}
    A.eq(
        "validity_report.json $.factory",
        "factory block as in results.json",
        res_factory,
        validity.get("factory", {}),
    )
    _agree(A, "validity_report.json", validity, res, ("spot_check", "audit", "stream_checks"))
    power = json.loads((run / "power_report.json").read_text(encoding="utf-8"))
    for key, mine, what in (
        ("scenarios", "power", "power scenarios"),
        ("confound_arms", "confound_arms", "confound arms"),
    ):
        A.eq(f"power_report.json $.{key}", f"{what} as in results.json", res[mine], power.get(key))


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
    A.num_at(
        w,
        f,
        "admission_yield",
        "yield = admitted / candidates",
        adm / cand,
        value=True,
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
    A.eq_at(w, s, "touches", "touches = pairs × passes", s["pairs"] * s["passes_per_pair"])
    A.num_at(
        w,
        s,
        "bound_at_pairs",
        "1 − (1 − confidence)^(1/n)",
        1 - (1 - conf) ** (1 / n),
        value=True,
        abs_tol=1e-12,
    )
    if n > 1:
        A.num_at(
            w,
            s,
            "bound_at_pairs_minus_1",
            "1 − (1 − confidence)^(1/(n − 1))",
            1 - (1 - conf) ** (1 / (n - 1)),
            value=True,
            abs_tol=1e-12,
        )


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
    for key, what, values in (
        ("model_mean_observed", "mean of M over the rows", m_vals),
        ("human_mean_observed", "mean of H over the rows", hv_all),
        ("treatment_first_rate", "mean first-order choice", first),
        ("treatment_second_rate", "mean second-order choice", second),
    ):
        if hv_all or key != "human_mean_observed":  # no human judgment: no human mean
            mean = float(np.mean(values))
            A.num(f"results.json $.stream_checks.{key}", what, mean, sc[key], abs_tol=1e-12)
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
    grid = (rebuilt.lambdas, logw) if rebuilt.bets == "blend" else None
    n_design = rebuilt.horizon if rebuilt.bets == "horizon" else None
    bets = _plugin_bets(mx, rebuilt.model_alpha, n_design) if rebuilt.bets != "grid" else mx
    bad_e = []
    for t, r in enumerate(rows):
        hist = mx[: t + 1]
        if rebuilt.bets == "grid":
            up = _log_e_history(hist, base, rebuilt.lambdas, logw, 1.0)
            dn = _log_e_history(hist, base, rebuilt.lambdas, logw, -1.0)
        else:
            up = _adaptive_log_capital(hist, bets[: t + 1], base, 1.0, grid)
            dn = _adaptive_log_capital(hist, bets[: t + 1], base, -1.0, grid)
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
    bets: str = "grid"
    model_alpha: float = 0.0  # the registered track's per-tail alpha of M (its bets' level)
    horizon: int | None = None  # the horizon bets' design N (recorded in provenance settings)


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
    bets = settings.get("bets", "grid")  # absent: the grid (recorded only when not it)
    if bets not in ("grid", "plugin", "blend", "horizon"):
        A.true(
            "provenance.json $.settings.bets",
            'the bets are "grid", "plugin", "blend" or "horizon"',
            False,
            "one of the four names",
            bets,
        )
        return None
    horizon = settings.get("horizon")
    if bets == "horizon" and not (isinstance(horizon, int) and horizon >= 1):
        A.true(
            "provenance.json $.settings.horizon",
            'the "horizon" bets\' design N is recorded',
            False,
            "an integer of at least 1",
            horizon,
        )
        return None
    series = _track_series(m_vals, h_vals, lambdas, weights, known, m_upper, h_upper, bets, horizon)
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
    am = known["registered"][0]
    return _Rebuilt(series, thresholds, constructions, lambdas, weights, bets, am, horizon)


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
    A.eq_at(tw, track, "construction", "the track's construction", rebuilt.constructions[name])
    A.num_at(tw, track, "threshold_h", "the track's threshold", rebuilt.thresholds[name], abs_tol=0)
    verdict, at = verdict_at
    A.eq(tw + ".verdict", "verdict rebuilt from the per-root values", verdict, track["verdict"])
    A.eq(tw + ".roots_at_verdict", "root of the verdict", at, track["roots_at_verdict"])
    A.num_at(
        tw,
        track,
        "error_per_side",
        "error per side of the construction",
        ser.error_per_side,
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
