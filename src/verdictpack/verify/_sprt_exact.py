"""Self-audit of the SPRT's exact operating characteristics: the stopping-boundary walk
re-derived here by exact enumeration, compared with what results.json prints."""

from __future__ import annotations

import math
from typing import Any

from verdictpack.verify._findings import _Auditor, _fv, _is_number
from verdictpack.verify._rederive import _binomial_enumeration, _sprt_recursion, _two_prop_n


def _audit_sprt_exact(A: _Auditor, res: dict[str, Any]) -> None:
    s = res["sprt_exact"]
    c = res["construct"]
    w = "results.json $.sprt_exact"
    A.num(w + ".p0", "p0 = the human baseline", c["human_baseline_rate"], s["p0"], abs_tol=0)
    A.num_at(
        w, s, "p1", "p1 = the rate at the governing threshold", c["p1_at_threshold"], abs_tol=0
    )
    A.num_at(
        w,
        s,
        "alpha",
        "alpha = the per-side error 2 × per-tail alpha",
        2 * c["per_tail_alpha"],
        abs_tol=1e-15,
    )
    p0, p1, al, be = s["p0"], s["p1"], s["alpha"], s["beta"]
    la, lb = math.log((1 - be) / al), math.log(be / (1 - al))
    up, dn = math.log(p1 / p0), math.log((1 - p1) / (1 - p0))
    A.num(w + ".log_a", "ln A = ln((1 − β)/α)", la, s["log_a"], abs_tol=1e-12)
    A.num(w + ".log_b", "ln B = ln(β/(1 − α))", lb, s["log_b"], abs_tol=1e-12)
    A.num(w + ".step_success", "ln(p1/p0)", up, s["step_success"], abs_tol=1e-12)
    A.num(w + ".step_failure", "ln((1 − p1)/(1 − p0))", dn, s["step_failure"], abs_tol=1e-12)
    horizon = int(s["horizon"])
    h0 = _sprt_recursion(la, lb, up, dn, p0, horizon)
    h1 = _sprt_recursion(la, lb, up, dn, p1, horizon)
    for key, what, ours, tol in (
        ("actual_alpha", "P(accept H1 | p0) by recursion", h0.p_upper, 1e-10),
        ("actual_beta", "P(accept H0 | p1) by recursion", h1.p_lower, 1e-10),
        ("asn_h0", "E[min(N, horizon)] under H0 by recursion", h0.asn, 1e-7),
        ("asn_h1", "E[min(N, horizon)] under H1 by recursion", h1.asn, 1e-7),
    ):
        A.num_at(w, s, key, what, ours, value=True, abs_tol=tol)
    big_a, big_b = math.exp(la), math.exp(lb)
    oc0 = (big_a - 1) / (big_a - big_b)  # Wald's OC at h = 1 (p0) and h = −1 (p1)
    oc1 = (1 / big_a - 1) / (1 / big_a - 1 / big_b)
    wald0 = (oc0 * lb + (1 - oc0) * la) / (p0 * up + (1 - p0) * dn)
    wald1 = (oc1 * lb + (1 - oc1) * la) / (p1 * up + (1 - p1) * dn)
    for key, what, ours in (
        ("wald_asn_h0", "Wald's ASN under H0 (closed form, h = 1)", wald0),
        ("wald_asn_h1", "Wald's ASN under H1 (closed form, h = −1)", wald1),
    ):
        A.num_at(w, s, key, what, ours, value=True, abs_tol=1e-9)
    for key, mine in (("n_quantiles_h0", h0), ("n_quantiles_h1", h1)):
        A.eq(
            w + "." + key,
            "quantiles of N by recursion",
            {k: v for k, v in mine.quantiles.items() if v is not None},
            s[key],
        )
    beyond = max(h0.beyond, h1.beyond)
    A.num_at(
        w,
        s,
        "mass_beyond_horizon",
        "P(N > horizon) by recursion",
        beyond,
        abs_tol=1e-300,
        rel_tol=1e-6,
    )
    fixed = _fv(s["fixed_n_exact"])
    power: Any = res.get("fixed_n_power")
    if not _is_number(power):
        A.true("results.json $.fixed_n_power", "target power recorded", False, "a number", power)
        return
    table = _binomial_enumeration(p0, p1, al, 1, 1000)
    first = next((i + 1 for i, row in enumerate(table) if row.power >= power), None)
    A.eq(
        w + ".fixed_n_exact",
        f"first n whose exact binomial power reaches {power} (enumeration)",
        first,
        fixed,
    )
    if isinstance(res.get("fixed_n_roots"), int):
        A.eq(
            "results.json $.fixed_n_roots",
            f"two-proportion n at one-sided 2 × per-tail alpha and power {power}",
            _two_prop_n(c["governing_threshold_h"], al, power, 1),
            res["fixed_n_roots"],
        )
