"""Self-audit checks of every kind (construct block, labelled quantities, no NaN), and of sizing
(exact t, normal and known-variance sizes, exact binomial regions, two proportions, simulated
checks)."""

from __future__ import annotations

import math
from collections.abc import Iterator
from typing import Any

from verdictpack.verify._findings import _MAX_Z, _Auditor, _fv, _is_number, _jp
from verdictpack.verify._rederive import (
    _binomial_enumeration,
    _binomial_normal_n,
    _known_variance_power,
    _phi,
    _phi_inv,
    _t_power,
    _t_size,
    _two_prop_n,
    _two_prop_power,
    _z,
)

# ==============================================================================================
# Every kind: construct, figures, NaN
# ==============================================================================================


def _audit_construct(A: _Auditor, res: dict[str, Any]) -> None:
    c = res.get("construct")
    if not isinstance(c, dict):
        A.true("results.json $.construct", "construct block present", False, "an object", c)
        return
    w = "results.json $.construct"
    p0 = c["human_baseline_rate"]
    ratio = c["threshold_odds_ratio"]
    p_or = ratio * p0 / (1.0 - p0 + ratio * p0)
    h_or = _phi(p_or) - _phi(p0)
    A.num_at(
        w, c, "threshold_h_from_odds_ratio", "odds ratio as h at the baseline", h_or, abs_tol=1e-12
    )
    gov = min(c["threshold_h"], h_or)
    A.num_at(w, c, "governing_threshold_h", "the smaller effect governs", gov, abs_tol=1e-12)
    A.eq_at(
        w,
        c,
        "governs",
        "which threshold governs",
        "h" if c["threshold_h"] <= h_or else "odds_ratio",
    )
    A.num_at(
        w,
        c,
        "p1_at_threshold",
        "rate at the governing threshold sin²((φ(p0) + h)/2)",
        _phi_inv(_phi(p0) + c["governing_threshold_h"]),
        abs_tol=1e-12,
    )
    A.num_at(w, c, "per_tail_alpha", "per-tail alpha = alpha / 4", c["alpha"] / 4.0, abs_tol=1e-15)
    A.num_at(
        w,
        c,
        "e_boundary",
        "e-boundary = 1 / per-tail alpha",
        1.0 / c["per_tail_alpha"],
        abs_tol=1e-9,
    )
    A.true(
        w + ".extension_minimum_h",
        "extension minimum below the governing threshold",
        0 < c["extension_minimum_h"] <= c["governing_threshold_h"],
        f"in (0, {c['governing_threshold_h']}]",
        c["extension_minimum_h"],
    )


def _walk(obj: Any, path: str) -> Iterator[tuple[str, Any]]:
    yield path, obj
    if isinstance(obj, dict):
        for k, v in obj.items():
            yield from _walk(v, _jp(path, str(k)))
    elif isinstance(obj, list):
        for i, v in enumerate(obj):
            yield from _walk(v, _jp(path, i))


def _audit_figures(A: _Auditor, data: Any, file: str) -> None:
    """Every Quantity carries a known basis; simulated ones their MCSE and replicates."""
    bad: list[str] = []
    count = 0
    for path, node in _walk(data, "$"):
        if isinstance(node, dict) and set(node) == {"value", "basis", "mcse", "replicates"}:
            count += 1
            basis = node["basis"]
            ok = _is_number(node["value"]) and basis in ("exact", "closed_form", "simulated")
            if basis == "simulated":
                ok = ok and _is_number(node["mcse"]) and isinstance(node["replicates"], int)
                ok = ok and node["mcse"] >= 0 and node["replicates"] > 0
            elif ok:
                ok = node["mcse"] is None and node["replicates"] is None
            if not ok:
                bad.append(path)
    A.true(
        f"{file} (all {count} figures)",
        "every figure has a basis (simulated: MCSE, R)",
        not bad,
        "well-formed figures",
        ", ".join(bad[:5]),
    )


# ==============================================================================================
# sizing
# ==============================================================================================


def _audit_sizing(A: _Auditor, res: dict[str, Any]) -> None:
    reps = res["replicates"]
    points = {d["name"]: d for d in res["design_points"]}
    for i, arm in enumerate(res["arms"]):
        base = f"results.json $.arms[{i}]"
        test = arm.get("test")
        if test in ("paired_t", "one_sample_t"):
            _sizing_t(A, arm, base, points, reps)
        elif test == "binomial":
            _sizing_binomial(A, arm, base, points)
        elif test == "two_proportions":
            _sizing_two_prop(A, arm, base, points, res["construct"])
        else:
            A.true(
                base + ".test", "a known arm test", False, "t / binomial / two_proportions", test
            )


def _test_alpha_check(
    A: _Auditor, w: str, size: dict[str, Any], points: dict[str, Any], sides: int
) -> tuple[float, float]:
    point = points[size["design"]]
    alpha = point["alpha"] if sides == 2 else point["alpha"] / 2.0
    A.num_at(
        w, size, "test_alpha", "test alpha (one-sided: half the design alpha)", alpha, abs_tol=1e-15
    )
    A.num_at(
        w, size, "target_power", "target power of the design point", point["power"], abs_tol=1e-15
    )
    return alpha, point["power"]


def _mcse_z(A: _Auditor, w: str, p: float, mcse: Any, reps: int, exact: float) -> float:
    """The MCSE of a simulated power ``p`` over ``reps`` replicates checked (at ``w``); the
    power's z against ``exact`` (0 without an MCSE), for :func:`_within_z`."""
    A.num(w, "MCSE = sqrt(p(1 − p)/R)", math.sqrt(p * (1 - p) / reps), mcse, abs_tol=1e-12)
    return float((p - exact) / mcse) if mcse else 0.0


def _within_z(A: _Auditor, w: str, what: str, z: float, exact: float) -> None:
    """The |z| check of a simulated power (``what``, at ``w``): within _MAX_Z MCSE of ``exact``."""
    A.true(
        w,
        f"{what} within {_MAX_Z:g} MCSE of our exact power",
        abs(z) <= _MAX_Z,
        f"|z| <= {_MAX_Z:g} (exact {exact:.6f})",
        f"z = {z:.2f}",
    )


def _sim_check(A: _Auditor, w: str, fig: Any, z: Any, exact_power: float, reps: int) -> None:
    p = _fv(fig)
    A.eq(
        w + ".replicates",
        "simulated check uses the configured replicates",
        reps,
        fig.get("replicates"),
    )
    mine = _mcse_z(A, w + ".mcse", p, fig.get("mcse"), reps, exact_power)
    A.num(
        w.rsplit(".", 1)[0] + ".simulated_minus_exact_in_mcse",
        "(simulated − exact) / MCSE recomputed from the cell and our exact power",
        mine,
        z,
        abs_tol=2e-6,
    )
    _within_z(A, w + ".value", "simulated power", mine, exact_power)


def _sizing_t(
    A: _Auditor, arm: dict[str, Any], base: str, points: dict[str, Any], reps: int
) -> None:
    dz, sides = arm["dz"], arm["sides"]
    for j, s in enumerate(arm["sizes"]):
        w = f"{base}.sizes[{j}]"
        alpha, power = _test_alpha_check(A, w, s, points, sides)
        n_mine = _t_size(dz, alpha, power, sides)
        p_n = _t_power(n_mine, dz, alpha, sides)
        p_nm1 = _t_power(n_mine - 1, dz, alpha, sides) if n_mine > 2 else None
        n = _fv(s["n"])
        A.eq(
            w + ".n",
            f"exact t size (quadrature: power(n) {p_n:.6f} >= {power}, "
            f"power(n−1) {p_nm1 if p_nm1 is None else round(p_nm1, 6)} < {power})",
            n_mine,
            n,
        )
        A.num(w + ".power_at_n", "exact power at n", p_n, _fv(s["power_at_n"]))
        if p_nm1 is not None:
            A.num_at(w, s, "power_at_n_minus_1", "exact power at n − 1", p_nm1, value=True)
        else:
            A.eq(w + ".power_at_n_minus_1", "no n − 1 below n = 2", None, s["power_at_n_minus_1"])
        normal = math.ceil(((_z(1 - alpha / sides) + _z(power)) / abs(dz)) ** 2)
        A.eq_at(
            w, s, "normal_n", "normal-approximation n ceil(((z_a + z_b)/dz)²)", normal, value=True
        )
        _sim_check(
            A,
            w + ".simulated_power_at_n",
            s["simulated_power_at_n"],
            s["simulated_minus_exact_in_mcse"],
            p_n,
            reps,
        )
    for key in ("at_current_n", "checks"):
        for j, pa in enumerate(arm.get(key) or []):
            w = f"{base}.{key}[{j}]"
            point = points[pa["design"]]
            alpha = point["alpha"] if sides == 2 else point["alpha"] / 2.0
            n = pa["n"]
            ex = _t_power(n, dz, alpha, sides)
            A.num(w + ".exact_power", f"exact power at n = {n}", ex, _fv(pa["exact_power"]))
            A.num_at(
                w,
                pa,
                "known_variance_power",
                "known-variance (normal) power formula",
                _known_variance_power(n, dz, alpha, sides),
                value=True,
                abs_tol=1e-12,
            )
            if key == "at_current_n":
                A.eq(w + ".n", "the arm's current n", arm.get("current_n"), n)
            if pa.get("simulated_power") is not None:
                _sim_check(
                    A,
                    w + ".simulated_power",
                    pa["simulated_power"],
                    pa["simulated_minus_exact_in_mcse"],
                    ex,
                    reps,
                )


def _sizing_binomial(A: _Auditor, arm: dict[str, Any], base: str, points: dict[str, Any]) -> None:
    p0, p1, sides = arm["p0"], arm["p1"], arm["sides"]
    A.num(base + ".h", "Cohen's h = φ(p1) − φ(p0)", _phi(p1) - _phi(p0), arm["h"], abs_tol=1e-12)
    A.eq_at(base, arm, "direction", "direction from p1 vs p0", "greater" if p1 > p0 else "less")
    for j, s in enumerate(arm["sizes"]):
        w = f"{base}.sizes[{j}]"
        alpha, power = _test_alpha_check(A, w, s, points, sides)
        normal = _binomial_normal_n(p0, p1, alpha, power, sides)
        A.eq(w + ".normal_n", "closed-form normal n", normal, _fv(s["normal_n"]))
        horizon = max(2 * normal, normal + 200)
        A.eq_at(w, s, "search_horizon", "search horizon max(2·normal n, normal n + 200)", horizon)
        table = _binomial_enumeration(p0, p1, alpha / sides, sides, horizon)
        ok = [row.power >= power for row in table]
        if not any(ok) or not ok[-1]:
            A.true(
                w,
                "exact binomial: target reached inside the horizon",
                False,
                "a powered horizon",
                "not reached",
            )
            continue
        first = ok.index(True) + 1
        failing = [i + 1 for i, good in enumerate(ok) if not good]
        stable = failing[-1] + 1 if failing and failing[-1] > first else first
        between = [n for n in failing if first < n < stable]
        r1, rs = table[first - 1], table[stable - 1]
        A.eq(w + ".first_n", "first n reaching the target (enumeration)", first, _fv(s["first_n"]))
        A.num_at(w, s, "power_at_first", "exact power at the first n", r1.power, value=True)
        if first > 1:
            A.num_at(
                w,
                s,
                "power_at_first_minus_1",
                "exact power at first n − 1",
                table[first - 2].power,
                value=True,
            )
        A.eq(w + ".region_lower", "rejection region, lower end", r1.lower, s["region_lower"])
        A.eq(w + ".region_upper", "rejection region, upper end", r1.upper, s["region_upper"])
        A.num_at(w, s, "achieved_alpha", "achieved alpha of the region", r1.achieved, value=True)
        A.eq_at(
            w,
            s,
            "stable_n",
            "stable n (every larger n up to the horizon powered)",
            stable,
            value=True,
        )
        A.num_at(w, s, "power_at_stable", "exact power at the stable n", rs.power, value=True)
        A.eq_at(w, s, "stable_region_lower", "region at the stable n, lower", rs.lower)
        A.eq_at(w, s, "stable_region_upper", "region at the stable n, upper", rs.upper)
        A.eq(
            w + ".failing_between",
            "n below target between first and stable",
            between,
            list(s["failing_between"]),
        )


def _sizing_two_prop(
    A: _Auditor, arm: dict[str, Any], base: str, points: dict[str, Any], c: dict[str, Any]
) -> None:
    A.num(base + ".p0", "the construct's baseline", c["human_baseline_rate"], arm["p0"], abs_tol=0)
    A.num_at(
        base,
        arm,
        "governing_h",
        "the construct's governing h",
        c["governing_threshold_h"],
        abs_tol=0,
    )
    A.num_at(
        base,
        arm,
        "p1",
        "sin²((φ(p0) + h)/2)",
        _phi_inv(_phi(arm["p0"]) + arm["governing_h"]),
        abs_tol=1e-12,
    )
    h, sides = arm["governing_h"], arm["sides"]
    for j, s in enumerate(arm["sizes"]):
        w = f"{base}.sizes[{j}]"
        alpha, power = _test_alpha_check(A, w, s, points, sides)
        n = _two_prop_n(h, alpha, power, sides)
        A.eq_at(w, s, "n_per_group", "two-proportion n = ceil(2((z_a + z_b)/h)²)", n, value=True)
        A.eq(w + ".total", "total = 2 × n per group", 2 * n, _fv(s["total"]))
        A.num_at(
            w,
            s,
            "power_at_n",
            "arcsine power at n",
            _two_prop_power(n, h, alpha, sides),
            value=True,
            abs_tol=1e-12,
        )
