"""The judges of a study as its data show them (stage 7 of :mod:`verdictpack.kinds._study`).

Each judge's rate and position bias with intervals taking the root as the unit (and its design
effect beside them, :mod:`verdictpack.core._estimates`), its agreement with the other judges and
with the humans, the panel's latent correlation and effective size, and the fitted panel as a
config block (its values as estimated and each clip the simulator needed, named by field),
and the humans' between-root heterogeneity ICC_H (:func:`verdictpack.core._icc.fit_icc`, on the
roots with two or more human judgments; the human sheet ``--plan --sheets`` simulates with).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from verdictpack._errors import InputError
from verdictpack._rng import stream
from verdictpack.core._agreement import KappaResult, cohens_kappa
from verdictpack.core._estimates import PanelEstimates, clustered_rate, estimate_panel
from verdictpack.core._icc import fit_icc
from verdictpack.evidence._assemble import Policy
from verdictpack.evidence._table import RATER_KINDS, JudgmentTable
from verdictpack.kinds._study_config import StudyConfig
from verdictpack.simulate._fitted import fitted_panel_record

__all__ = ["JudgeEstimate", "JudgesReport", "PanelAgreement", "judges_report"]


@dataclass(frozen=True)
class JudgeEstimate:
    """One judge as the data show it, beside its prior sheet (if any)."""

    name: str
    judgments: int
    ties: int
    rate: float | None
    rate_ci: tuple[float, float] | None
    position_bias: float | None
    position_bias_ci: tuple[float, float] | None
    rate_treatment_first: float | None
    rate_treatment_second: float | None
    kappa_with_humans: dict[str, Any] | None
    prior: dict[str, Any] | None
    # the root is the unit of the intervals (core._estimates): roots judged, each interval's
    # basis, and the design effect (cluster-robust variance / variance if independent) beside it
    roots: int = 0
    rate_ci_basis: str = ""
    rate_design_effect: float | None = None
    rate_effective_n: float | None = None
    position_bias_ci_basis: str = ""
    position_bias_design_effect: float | None = None


@dataclass(frozen=True)
class PanelAgreement:
    a: str
    b: str
    shared: int
    kappa: float | None
    ci: tuple[float, float] | None


@dataclass(frozen=True)
class JudgesReport:
    """The panel as the data show it (intervals at ``level``)."""

    level: float
    judges: tuple[JudgeEstimate, ...]
    human_rate: float | None
    human_rate_ci: tuple[float, float] | None
    human_judgments: int
    agreement: tuple[PanelAgreement, ...]
    latent_correlation: float | None
    effective_size: float | None
    fitted_panel: dict[str, Any] | None
    fitted_panel_note: str
    human_roots: int = 0
    human_rate_ci_basis: str = ""
    human_rate_design_effect: float | None = None
    # the fitted panel's values as estimated (negative position biases kept) and every clip
    # the simulator's block needed, by judge and field (simulate._fitted.fitted_panel_record)
    fitted_panel_estimated: dict[str, Any] | None = None
    fitted_panel_clips: tuple[dict[str, Any], ...] = ()
    # the humans' vote ICC on roots with two or more human judgments: icc, ci, level, roots,
    # votes, basis and (when icc is null) the reason (core._icc.fit_icc)
    human_icc: dict[str, Any] | None = None


def _human_icc(seed: int, root: Any, value: Any, level: float) -> dict[str, Any]:
    """The humans' vote ICC and its cluster-bootstrap interval, on the run's own stream."""
    fit = fit_icc(root, value, stream(seed, "study/human-icc"), level=level)
    out: dict[str, Any] = {
        "icc": fit.icc,
        "ci": None if fit.ci is None else list(fit.ci),
        "level": fit.level,
        "roots": fit.roots,
        "votes": fit.votes,
        "basis": fit.basis,
    }
    if fit.icc is None:
        out["reason"] = fit.reason
    return out


def _value_array(table: JudgmentTable, policy: Policy, kind: int) -> np.ndarray[Any, Any]:
    """Each row's observation for a rater kind (the study's declared observation): treatment
    1, null partner 0, a tie ½, or a model row's p_treatment under the probability estimand;
    NaN for an unknown one (an invalid answer, a missing probability), which the judges'
    estimates leave out."""
    lo, hi = policy.row_bounds(kind, table.choice, table.p_treatment)
    return np.where(lo == hi, lo / 2.0, np.nan)


def _interval(k: KappaResult | None) -> tuple[float, float] | None:
    return None if k is None else (k.ci_low, k.ci_high)


def _root_label(v: np.ndarray[Any, Any]) -> np.ndarray[Any, Any]:
    return np.where(v > 0.5, "treatment", np.where(v < 0.5, "null_partner", "even"))


def judges_report(
    config: StudyConfig, table: JudgmentTable, policy: Policy, entered: Sequence[str]
) -> JudgesReport:
    """Each judge's rate, position bias and agreement on the roots ``entered`` (in that order),
    the humans' rate, the panel's latent correlation and the fitted panel (stage 7)."""
    names = [j.name for j in config.panel.judges]
    index = {n: k for k, n in enumerate(names)}
    model_kind, human_kind = RATER_KINDS.index("model"), RATER_KINDS.index("human")
    rank_of = {r: k for k, r in enumerate(entered)}
    root_rank = np.array([rank_of.get(r, -1) for r in table.roots] + [-1], np.int64)
    rank = root_rank[table.root_code]
    judge_of = np.array([index.get(r, -1) for r in table.raters] + [-1], np.int64)
    values = _value_array(table, policy, model_kind)
    human_values = _value_array(table, policy, human_kind)
    model = (table.rater_kind == model_kind) & (rank >= 0) & ~np.isnan(values)
    human = (table.rater_kind == human_kind) & (rank >= 0) & ~np.isnan(human_values)
    mi = np.flatnonzero(model)
    est: PanelEstimates = estimate_panel(
        rank[mi],
        judge_of[table.rater_code[mi]],
        table.order[mi],
        values[mi],
        names=names,
        trial=table.trial[mi],
    )
    hi = np.flatnonzero(human)
    n_roots = len(entered)
    human_rate = human_ci = None
    human_root = np.full(n_roots, np.nan)
    pooled = None
    icc = _human_icc(config.seed, rank[hi], human_values[hi], est.level)
    if hi.size:
        pooled = clustered_rate(rank[hi], human_values[hi], level=est.level)
        human_rate = pooled.rate
        human_ci = (pooled.ci_low, pooled.ci_high) if pooled.ci_low is not None else None
        sums = np.bincount(rank[hi], weights=human_values[hi], minlength=n_roots)
        counts = np.bincount(rank[hi], minlength=n_roots)
        with np.errstate(invalid="ignore", divide="ignore"):
            human_root = np.where(counts > 0, sums / np.maximum(counts, 1), np.nan)
    judges: list[JudgeEstimate] = []
    cats = ("null_partner", "even", "treatment")
    for k, name in enumerate(names):
        rate, bias = est.rates[k], est.position_biases[k]
        mine = mi[judge_of[table.rater_code[mi]] == k]
        sums = np.bincount(rank[mine], weights=values[mine], minlength=n_roots)
        counts = np.bincount(rank[mine], minlength=n_roots)
        both = (counts > 0) & ~np.isnan(human_root)
        kappa_h: dict[str, Any] | None = None
        if both.sum() >= 2:
            jl = _root_label(sums[both] / counts[both])
            hl = _root_label(human_root[both])
            try:
                kr = cohens_kappa(jl.tolist(), hl.tolist(), categories=cats)
                kappa_h = {
                    "roots": int(both.sum()),
                    "kappa": kr.kappa,
                    "ci": [kr.ci_low, kr.ci_high],
                    "basis": "closed form (asymptotic), root-level labels",
                }
            except InputError as exc:
                kappa_h = {"roots": int(both.sum()), "kappa": None, "note": str(exc)}
        prior = next(j.prior for j in config.panel.judges if j.name == name)
        judges.append(
            JudgeEstimate(
                name=name,
                judgments=rate.n,
                ties=rate.n_ties,
                rate=rate.rate,
                rate_ci=None if rate.ci_low is None else (rate.ci_low, rate.ci_high),  # type: ignore[arg-type]
                position_bias=bias.bias,
                position_bias_ci=None if bias.ci_low is None else (bias.ci_low, bias.ci_high),  # type: ignore[arg-type]
                rate_treatment_first=bias.rate_first,
                rate_treatment_second=bias.rate_second,
                kappa_with_humans=kappa_h,
                prior=None if prior is None else prior.model_dump(),
                roots=rate.n_roots,
                rate_ci_basis=rate.ci_basis,
                rate_design_effect=rate.design_effect,
                rate_effective_n=rate.effective_n,
                position_bias_ci_basis=bias.ci_basis,
                position_bias_design_effect=bias.design_effect,
            )
        )
    agreement = tuple(
        PanelAgreement(
            names[p.a],
            names[p.b],
            p.n_shared,
            None if p.kappa is None else p.kappa.kappa,
            _interval(p.kappa),
        )
        for p in est.kappas
    )
    fitted: dict[str, Any] | None = None
    record: dict[str, Any] = {}
    note = (
        "each judge relative to the humans' estimated rate: baseline_rate = that rate (no "
        "effect: the judge agrees with the humans), lean_h = the judge's estimated distance from "
        "it on the φ scale (effect scale 1 reproduces the observed rates), position biases and "
        "the latent correlation as estimated, noise from the judge's prior (else 0); set the "
        "planning config's human_baseline_rate to the humans' rate shown here"
        if human_rate is not None
        else "no human judgments: each judge's rate as observed, lean_h and noise from its "
        "prior (else 0)"
    )
    try:
        record = fitted_panel_record(
            est,
            f"{config.panel.name} (fitted)",
            roles={j.name: j.prior.role for j in config.panel.judges if j.prior is not None},
            costs={j.name: j.cost_per_judgment for j in config.panel.judges},
            lean_h=None
            if human_rate is not None
            else {j.name: j.prior.lean_h for j in config.panel.judges if j.prior is not None},
            noise={j.name: j.prior.noise for j in config.panel.judges if j.prior is not None},
            reference_rate=human_rate,
            fallback_latent_correlation=config.panel.latent_correlation or 0.0,
        )
        fitted = record["panel"]
        if record["clips"]:
            note += (
                "; clipped for the simulator (fitted_panel.json `clips` names each, "
                "`estimated` keeps the values as estimated): "
                + ", ".join(f"{c['judge'] or 'panel'} {c['field']}" for c in record["clips"])
            )
    except InputError as exc:
        note = f"no fitted panel: {exc}"
    return JudgesReport(
        level=est.level,
        judges=tuple(judges),
        human_rate=human_rate,
        human_rate_ci=human_ci,  # type: ignore[arg-type]
        human_judgments=int(hi.size),
        agreement=agreement,
        latent_correlation=est.latent.rho,
        effective_size=est.latent.effective_size,
        fitted_panel=fitted,
        fitted_panel_note=note,
        human_roots=0 if pooled is None else pooled.n_roots,
        human_rate_ci_basis="" if pooled is None else pooled.ci_basis,
        human_rate_design_effect=None if pooled is None else pooled.design_effect,
        fitted_panel_estimated=record.get("estimated"),
        fitted_panel_clips=tuple(record.get("clips", ())),
        human_icc=icc,
    )
