"""Self-audit of the battery's grid of true h (``$.true_h_grid`` of a battery's results.json).

Every grid row's outcome is an ordinary operating-characteristic block, audited with the
scenarios' (:func:`verdictpack.verify._kinds_oc._audit_oc`: verdict probabilities sum to 1, each a
count over R with MCSE sqrt(p(1 − p)/R), roots, cost lines, true h = φ(μ_M) − φ(μ_H)). Here: the
grid as configured (endpoints, size, spacing, order), its replicates and blocks, each point's
own RNG purpose, the true h simulated at each point, and the fixed-n closed form re-derived a
second way (the critical value through the incomplete beta, the power by integrating the normal
tail over the chi-square law of the variance, instead of the noncentral t's series), then set
beside the simulated fixed-n P(EFFECT).
"""

from __future__ import annotations

import itertools
import math
from typing import Any

from verdictpack.verify._findings import _Auditor, _fv, _is_number
from verdictpack.verify._rederive import _t_tail_power, _t_upper

__all__ = ["GRID_PREFIX", "audit_grid", "grid_power_by_integration"]

GRID_PREFIX = "$.true_h_grid"
_DECIMALS = 12  # an evenly spaced grid's inner values are rounded to 12 decimals
_MIN_N_FOR_SIMULATED_CHECK = 30  # below it the normal theory is no yardstick for discrete roots


def grid_power_by_integration(n: int, critical_t: float, noncentrality: float) -> float:
    """P(T > c) for T = (Z + δ)/sqrt(V/ν), V ~ χ²_ν, ν = n − 1, by quadrature, clipped to [0, 1]
    (:func:`verdictpack.verify._rederive._t_tail_power`)."""
    return min(max(_t_tail_power(n - 1, noncentrality, critical_t, 1), 0.0), 1.0)


def _even_values(start: float, stop: float, points: int) -> list[float]:
    step = (stop - start) / (points - 1)
    inner = [round(start + i * step, _DECIMALS) for i in range(1, points - 1)]
    return [float(start), *inner, float(stop)]


def audit_grid(A: _Auditor, res: dict[str, Any]) -> None:
    """The grid of a battery's results.json (nothing when the battery has none)."""
    grid = res.get("true_h_grid")
    if grid is None:
        return
    w = "results.json " + GRID_PREFIX
    rows = grid.get("rows") or []
    values = [row.get("true_h") for row in rows]
    A.eq(w + ".points", "grid points = rows", grid.get("points"), len(rows))
    if not rows or not all(_is_number(v) for v in values):
        A.true(w + ".rows", "grid rows with a true h each", False, ">= 2 numbers", values)
        return
    A.eq(w + ".start", "the grid's first point is its start", grid.get("start"), values[0])
    A.eq(w + ".stop", "the grid's last point is its stop", grid.get("stop"), values[-1])
    A.true(
        w + ".rows",
        "true h strictly increasing (each value once)",
        all(b > a for a, b in itertools.pairwise(values)),
        "strictly increasing",
        values,
    )
    if grid.get("spacing") == "even" and len(values) >= 2:
        A.eq(
            w + ".rows",
            "evenly spaced from start to stop (inner values rounded to 12 decimals)",
            _even_values(values[0], values[-1], len(values)),
            values,
        )
    reps, block = grid.get("replicates"), grid.get("block_size")
    A.eq(w + ".block_size", "the battery's block size", res.get("block_size"), block)
    if isinstance(reps, int) and isinstance(block, int) and block > 0:
        A.eq_at(w, grid, "n_blocks", "blocks = replicates / block size", -(-reps // block))
    purposes = [row.get("purpose") for row in rows]
    A.eq(
        w + ".rows[*].purpose",
        "each point's own RNG purpose battery-grid/h=<repr(h)>",
        [f"battery-grid/h={float(v)!r}" for v in values],
        purposes,
    )
    per_tail = res["construct"]["per_tail_alpha"]
    for i, row in enumerate(rows):
        rw = f"{w}.rows[{i}]"
        oc = row.get("outcome") or {}
        A.num(
            rw + ".outcome.true_h",
            "the true h simulated at this point",
            values[i],
            oc.get("true_h"),
            abs_tol=1e-8,
        )
        A.eq(rw + ".outcome.replicates", "replicates per grid point", reps, oc.get("replicates"))
        _audit_fixed_n(A, rw, row, oc, res, 2.0 * per_tail, reps)


def _audit_fixed_n(
    A: _Auditor,
    rw: str,
    row: dict[str, Any],
    oc: dict[str, Any],
    res: dict[str, Any],
    alpha: float,
    reps: Any,
) -> None:
    f = row.get("fixed_n_closed_form") or {}
    fw = rw + ".fixed_n_closed_form"
    n = f.get("n")
    A.eq(fw + ".n", "the fixed-n route's planned roots", res.get("fixed_n_roots"), n)
    A.num(
        fw + ".alpha", "the per-side alpha 2 × per-tail alpha", alpha, f.get("alpha"), abs_tol=1e-15
    )
    if _is_number(oc.get("mu_model")) and _is_number(oc.get("mu_human")):
        A.num(
            fw + ".mean_d",
            "E[D] = μ_M − μ_H of this point's outcome",
            oc["mu_model"] - oc["mu_human"],
            f.get("mean_d"),
            abs_tol=1e-12,
        )
    if not (
        isinstance(n, int)
        and n >= 2
        and all(_is_number(f.get(k)) for k in ("mean_d", "sd_d", "critical_t", "noncentrality"))
    ):
        A.true(fw, "a closed form with n >= 2 and finite parts", False, "numbers", f)
        return
    crit, nc, sd, mean = f["critical_t"], f["noncentrality"], f["sd_d"], f["mean_d"]
    A.num(
        fw + ".critical_t",
        "P(T_{n−1} > t_crit) = alpha (incomplete beta)",
        alpha,
        _t_upper(crit, n - 1) if crit >= 0 else 1.0 - _t_upper(-crit, n - 1),
        abs_tol=1e-10,
        rel_tol=1e-8,
    )
    expected_nc = math.sqrt(n) * mean / sd if sd > 0 else 0.0
    A.num(
        fw + ".noncentrality",
        "δ = sqrt(n) · E[D] / sd(D)",
        expected_nc,
        nc,
        abs_tol=1e-12,
        rel_tol=1e-10,
    )
    power = _fv(f.get("power"))
    if sd > 0:
        second = grid_power_by_integration(n, crit, nc)
        A.num(
            fw + ".power",
            "fixed-n power re-derived by integrating the normal tail over the χ² variance law",
            second,
            power,
            abs_tol=1e-7,
        )
    else:
        A.eq(fw + ".power", "D constant: power 1 iff E[D] > 0", float(mean > 0), power)
    sim = next((r for r in oc.get("routes") or [] if r.get("route") == "fixed_n"), None)
    if sim is None or not _is_number(power) or not isinstance(reps, int):
        return
    p_sim = _fv(sim["p_verdict"]["EFFECT"])
    if n < _MIN_N_FOR_SIMULATED_CHECK:
        A.unverified(
            rw + ".outcome.routes[fixed_n].p_verdict.EFFECT",
            "simulated fixed-n P(EFFECT) against the closed form",
            f"n = {n} < {_MIN_N_FOR_SIMULATED_CHECK}: the normal theory is no yardstick",
        )
        return
    se = math.sqrt(max(power * (1.0 - power), 0.0) / reps)
    A.num(
        rw + ".outcome.routes[fixed_n].p_verdict.EFFECT",
        "simulated fixed-n P(EFFECT) within 4 MCSE + 0.01 (normal-theory slack) of the closed form",
        power,
        p_sim,
        abs_tol=4.0 * se + 0.01,
    )
