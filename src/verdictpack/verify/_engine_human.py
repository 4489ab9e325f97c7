"""Self-audit checks of the engine's human layer: the reader audit's kappa, its gate on the lower
bound and the audit's sizing, and the human-baseline block, each re-derived here (with the
humans' ICC_H, the clustered model of docs/statistics.md §11 by our own quadrature and
convolution)."""

from __future__ import annotations

import math
from typing import Any

import numpy as np
from scipy import special

from verdictpack.verify._findings import FloatArray, _Auditor, _fv
from verdictpack.verify._kappa_bound import check_kappa_gate
from verdictpack.verify._kinds import _mcse_z, _within_z
from verdictpack.verify._rederive import (
    _binomial_enumeration,
    _binomial_normal_n,
    _kappa_and_se,
    _phi,
    _phi_inv,
    _z,
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
    A.eq_at(w, b, "pilot_touches", "pilot roots × judgments per root", b["pilot_roots"] * m)
    A.eq_at(
        w,
        b,
        "confirmatory_touches",
        "confirmatory roots × judgments per root",
        b["confirmatory_roots"] * m,
    )
    A.eq_at(
        w,
        b,
        "total_touches",
        "pilot + confirmatory touches",
        b["pilot_touches"] + b["confirmatory_touches"],
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
    n_cf = _binomial_normal_n(shifted, p_h, alpha, b["target_power"], 1)
    icc, r = b.get("icc"), b.get("latent_correlation")
    if icc is not None and not (isinstance(r, (int, float)) and 0.0 <= r <= 1.0):
        A.true(w + ".latent_correlation", "ICC_H's latent r reported", False, "in [0, 1]", r)
        return
    if icc is not None:
        pair = _latent_pmf(2, p_h, r)
        A.num(
            w + ".latent_correlation",
            "our two-vote pmf at the human rate with this latent r gives back ICC_H",
            icc,
            (pair[2] - p_h * p_h) / (p_h * (1.0 - p_h)),
            abs_tol=1e-9,
        )
    clustered = icc is not None and icc > 0 and m > 1
    if clustered:
        cf = math.ceil(n_cf * (1.0 + (m - 1) * icc) / m)
        how = "clustered model: our quadrature and pgf convolution"
        crit, achieved, power = _clustered_test(shifted, p_h, r, m, roots, alpha, b["direction"])
        below = (
            _clustered_test(shifted, p_h, r, m, roots - 1, alpha, b["direction"])[2]
            if roots > 1
            else None
        )
    else:
        cf = math.ceil(n_cf / m)
        how = "enumeration"
        table = _binomial_enumeration(shifted, p_h, alpha, 1, roots * m)
        row = table[roots * m - 1]
        crit = row.lower if b["direction"] == "less" else row.upper
        achieved, power = row.achieved, row.power
        below = table[(roots - 1) * m - 1].power if roots > 1 else None
    A.eq_at(
        w,
        b,
        "closed_form_roots",
        "closed-form roots = ceil(normal n"
        + (" × design effect 1 + (m − 1)·ICC_H" if clustered else "")
        + " / judgments per root)",
        cf,
        value=True,
    )
    A.eq_at(w, b, "critical_value", f"critical count of the exact one-sided test ({how})", crit)
    A.num_at(w, b, "achieved_alpha", "achieved alpha of that region", achieved, value=True)
    A.num(w + ".exact_power", "exact power at the human rate", power, _fv(b["exact_power"]))
    if below is not None and b.get("exact_power_below") is not None:
        A.num_at(w, b, "exact_power_below", "exact power one root below", below, value=True)
    for key, ex in (("simulated_power", power), ("simulated_power_below", below)):
        fig = b.get(key)
        if fig is None or ex is None:
            continue
        zv = _mcse_z(A, f"{w}.{key}.mcse", _fv(fig), fig["mcse"], fig["replicates"], ex)
        _within_z(A, f"{w}.{key}", "simulated", zv, ex)
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


def _latent_pmf(m: int, p: float, r: float) -> FloatArray:
    """P(Y = j), j = 0..m: the count of m votes 1[W < c], c = Φ⁻¹(p), whose latents share a root
    latent of correlation r: Binom(j; m, Φ(x)) averaged over x = (c − √r·z)/√(1 − r), z the
    root latent, by the uniform trapezoid rule (exponentially accurate for smooth integrands
    that vanish at both ends, step 0.005). r < 1/2: over z ∈ [−12, 12], every j. r ≥ 1/2: over
    x ∈ [−40, 40] (the density of x is then at least as wide as the binomial's) for 0 < j < m,
    which vanish beyond; P(Y = 0) and P(Y = m) then from Σ q = 1 and E[Y] = m·p.
    r = 1: the votes agree."""
    q = np.zeros(m + 1)
    if r >= 1.0:
        q[0], q[m] = 1.0 - p, p
        return q
    c, s, t = _z(p), math.sqrt(r), math.sqrt(1.0 - r)
    if r < 0.5:  # dz = 0.005
        z = np.linspace(-12.0, 12.0, 4801)
        x, log_w, dz, inner = (c - s * z) / t, -z * z / 2, 0.005, range(m + 1)
    else:  # dz = (√(1 − r)/√r)·dx, dx = 0.005
        x = np.linspace(-40.0, 40.0, 16001)
        log_w, dz, inner = -(((c - t * x) / s) ** 2) / 2, 0.005 * t / s, range(1, m)
    below, above = special.log_ndtr(x), special.log_ndtr(-x)
    for k in inner:  # bounded: at most m + 1 counts
        comb = math.lgamma(m + 1) - math.lgamma(k + 1) - math.lgamma(m - k + 1)
        q[k] = np.exp(comb + k * below + (m - k) * above + log_w).sum() * dz
    q /= math.sqrt(2.0 * math.pi)
    if r >= 0.5:
        j = np.arange(m + 1)
        q[m] = (m * p - float(j @ q)) / m
        q[0] = 1.0 - float(q.sum())
    return q


def _clustered_test(
    p0: float, p1: float, r: float, m: int, roots: int, alpha: float, direction: str
) -> tuple[int, float, float]:
    """(critical count, achieved alpha, power) of the one-sided exact test of the clustered
    count over ``roots`` roots in the original counts, its law the roots-th power of one root's
    pgf (FFT)."""
    n = roots * m
    size = 1 << (n + 1).bit_length()
    laws = []
    for p in (p0, p1):
        pgf = np.fft.rfft(_latent_pmf(m, p, r), size)
        laws.append(np.clip(np.fft.irfft(pgf**roots, size)[: n + 1], 0.0, None))
    if direction == "less":
        null, alt = np.cumsum(laws[0]), np.cumsum(laws[1])
        hits = np.flatnonzero(null <= alpha)
        c = int(hits[-1]) if hits.size else -1
    else:
        null, alt = np.cumsum(laws[0][::-1])[::-1], np.cumsum(laws[1][::-1])[::-1]
        hits = np.flatnonzero(null <= alpha)
        c = int(hits[0]) if hits.size else n + 1
    if not 0 <= c <= n:
        return c, 0.0, 0.0
    return c, float(null[c]), float(alt[c])


def _engine_audit_sizing(A: _Auditor, res: dict[str, Any]) -> None:
    """The reader-audit sizing: its planning kappa, the size the audit used, and the search's
    own claim (pass probability at the size ≥ target, one root below < target)."""
    z = res.get("audit_sizing")
    w = "results.json $.audit_sizing"
    if z is None:
        A.true(w, "the reader-audit sizing is reported", False, "an object", None)
        return
    r, k = z["planning_rate"], z["n_categories"]
    A.num_at(
        w,
        z,
        "planning_kappa",
        "((k·r − 1)/(k − 1))² at the planning reconstruction rate",
        ((k * r - 1) / (k - 1)) ** 2,
        abs_tol=1e-12,
    )
    a = res["audit"]
    A.eq(w + ".kappa_min", "the gate the audit was sized for", a["kappa_min"], z["kappa_min"])
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
    A.num_at(w, a, "se", f"Fleiss–Cohen–Everitt standard error from {source}", se2, abs_tol=1e-12)
    zq = _z(0.5 + a["level"] / 2)
    A.num_at(
        w,
        a,
        "ci_low",
        "kappa − z·se (clipped at −1)",
        max(-1.0, k2 - zq * se2),
        value=True,
        abs_tol=1e-9,
    )
    A.num_at(
        w,
        a,
        "ci_high",
        "kappa + z·se (clipped at 1)",
        min(1.0, k2 + zq * se2),
        value=True,
        abs_tol=1e-9,
    )
    return k2
