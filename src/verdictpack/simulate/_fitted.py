"""A fitted panel: the judges as the data show them, written as a panel config block.

:func:`fitted_panel_record` turns :class:`verdictpack.core._estimates.PanelEstimates` into the
``panel`` block the sizing, verdict and battery kinds take::

    {"name": ..., "latent_correlation": ρ, "judges": [{"name", "role", "baseline_rate", "lean_h",
     "noise", "position_bias", "cost_per_judgment"}, ...]}

What is *estimated* from the data and what is a *planning assumption*:

* ``baseline_rate`` — estimated: the counterbalanced preference rate (m_first + m_second)/2 when
  the judge was seen in both orders (so unbalanced orders do not tilt it), else the pooled rate.
  It is the rate *on this study's stimuli*, i.e. the rate at whatever effect this study carries;
  calling it a "baseline" (no-effect rate) is a planning assumption. Clipped into
  [``RATE_FLOOR``, 1 − ``RATE_FLOOR``] because a sheet's rate must lie strictly inside (0, 1).
* ``position_bias`` — estimated: δ̂ = (m_first − m_second)/2 of the estimates. A character sheet
  only carries a shift toward the item shown *first* (δ >= 0), so a negative δ̂ is written as 0,
  and δ is capped so that p ± δ stays in [0, 1] and below 0.5.

Nothing is clipped silently: the record holds, beside the block, the values *as estimated*
(``estimated``: each judge's counterbalanced rate and position bias with its interval, the
latent correlation, negative values kept) and one ``clips`` entry per field the simulator
needed changed (judge, field, estimated, written, reason). fitted_panel.json writes all three;
the block alone is what the simulation and ``--plan`` read.
* ``latent_correlation`` — estimated: the mean tetrachoric ρ over informative judge pairs, clipped
  into the range a panel of J judges can carry (ρ >= −1/(2J − 1), 1 + (J − 1)ρ > 0). When no pair
  is informative, ``fallback_latent_correlation`` (a planning assumption, default 0) is used.
* ``lean_h`` and ``noise`` — planning assumptions, not estimable from one study's preference data
  (lean is the response to an effect the study does not vary; noise is confounded with the rate):
  0 and 0 unless given per judge. With a ``reference_rate`` (the humans' rate of a study), the
  judge is written relative to it instead: baseline = the reference and lean_h = the judge's
  estimated distance from it on the φ scale, so effect scale 1 reproduces the observed rates.
* ``role`` and ``cost_per_judgment`` — given by the caller per judge (defaults ``"fitted judge"``
  and 0.0; nothing is guessed from the data).

fitted_panel.json also carries the humans' ``human_icc`` (their votes' between-root ICC, fitted
by the study); :func:`sheet_human_icc` reads it back as the human sheet a plan simulates.

The block is checked by building the :class:`~verdictpack.simulate._judges.Panel` it describes,
so a block this function returns is always one the simulation accepts.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Mapping
from typing import Any, Final

from verdictpack._errors import InputError
from verdictpack.core._estimates import PanelEstimates
from verdictpack.core._scales import phi
from verdictpack.simulate._judges import JudgeSheet, Panel

__all__ = ["RATE_FLOOR", "fitted_panel_record", "sheet_human_icc"]

RATE_FLOOR: Final[float] = 1e-3  # fitted rates are kept in [RATE_FLOOR, 1 - RATE_FLOOR]
_MAX_BIAS: Final[float] = 0.499  # the panel block's position_bias must be < 0.5
_RHO_MARGIN: Final[float] = 1e-9
_DEFAULT_ROLE: Final[str] = "fitted judge"
_WHY_RATE = (
    f"a character sheet's rate must lie strictly inside (0, 1): kept in [{RATE_FLOOR}, "
    f"{1 - RATE_FLOOR}]"
)
_WHY_NEGATIVE = (
    "a character sheet carries only a shift toward the item shown first (position_bias >= 0); "
    "the estimate favours the item shown second, written as 0"
)
_WHY_CAP = "p ± position_bias must stay in [0, 1] and position_bias below 0.5 at the rate written"
_WHY_RHO = "the range a panel of J judges can carry (rho >= -1/(2J - 1), at most 1)"


def sheet_human_icc(sheets: Mapping[str, Any] | None) -> float | None:
    """The human sheet a fitted_panel.json carries: its ``human_icc.icc`` (a study's ANOVA
    estimate, kinds._study_judges) in [0, 1], a negative estimate read as 0; None when absent or
    null (the humans then share no root latent of their own)."""
    fitted = sheets.get("human_icc") if sheets is not None else None
    icc = fitted.get("icc") if isinstance(fitted, Mapping) else None
    if isinstance(icc, int | float) and not isinstance(icc, bool) and math.isfinite(icc):
        return min(max(float(icc), 0.0), 1.0)
    return None


def _per_judge(name: str, table: Mapping[str, Any] | None, default: Any) -> Any:
    if table is None:
        return default
    return table.get(name, default)


def fitted_panel_record(
    estimates: PanelEstimates,
    name: str,
    *,
    roles: Mapping[str, str] | None = None,
    costs: Mapping[str, float] | None = None,
    lean_h: Mapping[str, float] | None = None,
    noise: Mapping[str, float] | None = None,
    fallback_latent_correlation: float = 0.0,
    reference_rate: float | None = None,
) -> dict[str, Any]:
    """``{"panel": block, "estimated": ..., "clips": [...]}``: the panel config block fitted
    from ``estimates`` (see the module docstring), the values as estimated, and every clip the
    block needed, by judge and field.

    ``reference_rate`` (a study's estimated human rate): when given, each judge is written
    relative to it -- ``baseline_rate`` = the reference (no effect: the judge agrees with the
    humans) and ``lean_h`` = Φ⁻¹-scale distance φ(p̂_j) − φ(reference) unless ``lean_h`` names
    the judge (so the world the study observed is effect scale 1, and the construct's null is
    scale 0); the position bias is capped to fit both worlds.

    Every rater of the estimates is a judge of the block, in their order. ``roles``, ``costs``,
    ``lean_h``, ``noise``: per-judge values by name (missing names take the defaults
    ``"fitted judge"``, 0, 0, 0). InputError for a judge without judgments, or values a
    character sheet refuses.
    """
    sheets = []
    estimated: list[dict[str, Any]] = []
    clips: list[dict[str, Any]] = []

    def clip(judge: str | None, field: str, was: float, now: float, why: str) -> None:
        if now != was:
            clips.append(
                {"judge": judge, "field": field, "estimated": was, "written": now, "reason": why}
            )

    for judge, rate, bias in zip(
        estimates.names, estimates.rates, estimates.position_biases, strict=True
    ):
        if rate.rate is None:
            raise InputError("judges", "judges with at least one judgment", judge)
        if bias.rate_first is not None and bias.rate_second is not None:
            p_est = 0.5 * (bias.rate_first + bias.rate_second)
        else:
            p_est = rate.rate
        estimated.append(
            {
                "name": judge,
                "baseline_rate": p_est,
                "position_bias": bias.bias,
                "position_bias_ci": None if bias.ci_low is None else [bias.ci_low, bias.ci_high],
                "position_bias_design_effect": bias.design_effect,
            }
        )
        p = min(max(p_est, RATE_FLOOR), 1.0 - RATE_FLOOR)
        clip(judge, "baseline_rate", p_est, p, _WHY_RATE)
        delta_est = bias.bias or 0.0
        delta = max(0.0, delta_est)
        clip(judge, "position_bias", delta_est, delta, _WHY_NEGATIVE)
        capped = min(delta, p, 1.0 - p, _MAX_BIAS)
        lean = _per_judge(judge, lean_h, 0.0)
        if reference_rate is not None:
            ref = min(max(float(reference_rate), RATE_FLOOR), 1.0 - RATE_FLOOR)
            if lean_h is None or judge not in lean_h:
                lean = phi(p) - phi(ref)
            capped = min(capped, ref, 1.0 - ref)
            p = ref
        clip(judge, "position_bias", delta, capped, _WHY_CAP)
        delta = capped
        sheets.append(
            JudgeSheet(
                name=judge,
                role=_per_judge(judge, roles, _DEFAULT_ROLE),
                baseline_rate=p,
                lean_h=lean,
                noise=_per_judge(judge, noise, 0.0),
                position_bias=delta,
                cost_per_judgment=_per_judge(judge, costs, 0.0),
            )
        )
    rho_est = estimates.latent.rho
    rho = fallback_latent_correlation if rho_est is None else rho_est
    n = len(sheets)
    if n >= 2:
        low = -1.0 / (2 * n - 1) + _RHO_MARGIN
        rho = min(max(float(rho), low), 1.0)
    else:
        rho = min(max(float(rho), -1.0), 1.0)
    if not math.isfinite(rho):
        raise InputError("fallback_latent_correlation", "a number in [-1, 1]", rho)
    if rho_est is not None:
        clip(None, "latent_correlation", float(rho_est), rho, _WHY_RHO)
    panel = Panel(tuple(sheets), rho)  # refuses anything the simulation could not carry
    block = {
        "name": name,
        "latent_correlation": panel.latent_correlation,
        "judges": [dataclasses.asdict(s) for s in panel.judges],
    }
    return {
        "panel": block,
        "estimated": {
            "latent_correlation": rho_est,
            "latent_correlation_source": "estimated"
            if rho_est is not None
            else "no informative judge pair: fallback_latent_correlation, a planning assumption",
            "judges": estimated,
        },
        "clips": clips,
    }
