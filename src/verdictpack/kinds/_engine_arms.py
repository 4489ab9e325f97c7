"""The engine's simulated designs: the power scenarios and their sequential runs, and the
confound arms (each named confound run as its own arm against the registered design). Used by
:mod:`verdictpack.kinds._engine`'s plan and proof run."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import replace
from typing import Any

from verdictpack._results import Quantity
from verdictpack._rng import stream
from verdictpack.config._compiler import Construct
from verdictpack.config._refusals import Loc, Refusals, governing_loc
from verdictpack.core._tracks import TrackStream
from verdictpack.evidence._source import EvidenceSource, RootEvidence, stream_evidence
from verdictpack.kinds._engine_model import ConfoundArm, EngineConfig
from verdictpack.simulate._human import simulate_gate_pass_rate
from verdictpack.simulate._judges import Panel, TruthScenario, judge_rates, make_scenario
from verdictpack.simulate._operating import Job, RouteDesign, simulate_scenarios
from verdictpack.simulate._routes import BLOCK_SIZE
from verdictpack.stimuli import GeneratedStimulus

_ARM_DESIGNS = {
    "position": (
        "every root is shown to every judge in both orders and the verdict uses the "
        "counterbalanced mean, so a first-position preference cancels by design",
        "every judge prefers the first-shown item by the configured position bias; no effect",
    ),
    "density": (
        "null partners carry the same content units (content-preservation gate) at matched "
        "length; a density-only arm varies units per sentence with the register fixed",
        "the model stream moves by the configured shift through density alone; no effect",
    ),
    "register": (
        "the manipulated property itself, isolated by null partners that differ from the "
        "treatment only in register (null-separation gate)",
        "the model stream moves by the configured shift with the register confounded; no effect",
    ),
    "length": (
        "length-matched pairs (length-match gate); a length-only arm varies length with content "
        "and register fixed",
        "the model stream moves by the configured shift through length alone; no effect",
    ),
    "framing": (
        "identical instructions and framing for both items; a framing-swap arm exchanges the "
        "framing between treatment and null partner",
        "the model stream moves by the configured shift through framing alone; no effect",
    ),
    "reader": (
        "the reader-reconstruction audit: two readers must recover the manipulated property "
        "(Cohen's kappa gate) before any preference claim is evaluated",
        "readers at chance: the audit must fail and the verdict be INSTRUMENT_INVALID",
    ),
    "known_null": (
        "known-null pairs that differ in nothing a reader can see; both streams must sit at the "
        "baseline",
        "no effect and no confound: the false-verdict rate of each route",
    ),
}


def _panel_with_position_bias(panel: Panel, bias: float) -> Panel:
    """The same panel with every judge's first-position preference raised to ``bias``."""
    judges = tuple(replace(j, position_bias=max(j.position_bias, bias)) for j in panel.judges)
    return replace(panel, judges=judges)


def _sequential_run(
    source: EvidenceSource,
    stimuli: Sequence[GeneratedStimulus],
    run: TrackStream,
    cap: int,
    baseline_rate: float,
) -> tuple[list[dict[str, Any]], list[RootEvidence]]:
    """Stream roots until the registered track's verdict or the cap; one evidence row per root.

    Each track's result is frozen (verdict, root, interval, bounds) when it first reaches a
    verdict; the registered track alone stops the run.
    """
    rows: list[dict[str, Any]] = []
    seen: list[RootEvidence] = []
    for ev in stream_evidence(source, [g.stimulus for g in stimuli[:cap]], run, cap):
        seen.append(ev)
        bounds = run.bounds("registered")
        above, below = run.model_log_e("registered", baseline_rate)
        row: dict[str, Any] = {
            "root": len(seen),
            "stimulus_id": ev.stimulus_id,
            "model_choices": {j: list(c) for j, c in zip(ev.judges, ev.model_choices, strict=True)},
            "human_choices": list(ev.human_choices),
            "M": ev.model_value,
            "H": ev.human_value,
            "model_bounds": list(bounds["model"] or ()),
            "human_bounds": list(bounds["human"] or ()),
            "diff_bounds": None if bounds["diff"] is None else list(bounds["diff"]),
            "log_e_model_above_baseline": above,
            "log_e_model_below_baseline": below,
            "h_interval": list(run.interval("registered")),
            "state": run.state_labels(),
        }
        row["comparison_h_interval"] = list(run.interval("comparison"))
        rows.append(row)
    return rows, seen


def _scenario(
    cfg: EngineConfig, panel: Panel, construct: Construct, refusals: Refusals
) -> TruthScenario:
    """The proof run's truth scenario; a scenario the panel cannot carry is refused at the
    ``truth`` field that sets it (the governing threshold for the registered alternative)."""
    t = cfg.truth
    threshold = governing_loc(construct)
    field: Loc = {
        "null": ("truth", "scenario"),
        "registered_alternative": threshold,
        "above_threshold": ("truth", "true_h"),
        "confounded": ("truth", "model_shift_h"),
        "correlated_stress": threshold
        if t.stress_base == "registered_alternative"
        else ("truth", "stress_latent_correlation"),
    }.get(t.scenario, ("truth", "scenario"))
    with refusals.at(
        field,
        f"the truth scenario {t.scenario!r}",
        params={
            "true_h": ("truth", "true_h"),
            "model_shift_h": ("truth", "model_shift_h"),
            "latent_correlation": ("truth", "stress_latent_correlation"),
            "stream_correlation": ("truth", "stress_stream_correlation"),
            "stress_base": ("truth", "stress_base"),
            "scenario": ("truth", "scenario"),
        },
    ):
        return make_scenario(
            t.scenario,
            panel,
            construct.human_baseline_rate,
            threshold_h=construct.governing_threshold_h,
            true_h=t.true_h,
            model_shift_h=t.model_shift_h,
            stress_latent_correlation=t.stress_latent_correlation,
            stress_stream_correlation=t.stress_stream_correlation,
            stress_base=t.stress_base,
        )


def _power_scenarios(
    cfg: EngineConfig, panel: Panel, construct: Construct, refusals: Refusals
) -> list[TruthScenario]:
    """The power report's scenarios: the null, the registered alternative and each
    ``power.above_threshold_h`` (refused at that entry when the panel cannot reach it)."""
    rate = construct.human_baseline_rate
    scenarios = [make_scenario("null", panel, rate)]
    with refusals.at(governing_loc(construct), "the registered alternative of the power report"):
        scenarios.append(
            make_scenario(
                "registered_alternative", panel, rate, threshold_h=construct.governing_threshold_h
            )
        )
    for k, h in enumerate(cfg.power.above_threshold_h):
        at = ("power", "above_threshold_h", k)
        with refusals.at(at, f"the power report's scenario h = {h:g}"):
            sc = make_scenario("above_threshold", panel, rate, true_h=h)
        scenarios.append(replace(sc, name=f"above_threshold h={h:g}"))
    return scenarios


def _reader_audit_pass_rate_at_chance(cfg: EngineConfig, roots: int) -> Quantity:
    """P(the kappa gate passes) when both readers of a ``roots``-root audit answer at chance
    (simulated; the gate on the lower confidence bound)."""
    a = cfg.human.audit
    return simulate_gate_pass_rate(
        roots,
        1.0 / a.categories,
        a.kappa_min,
        stream(cfg.seed, "engine/confound/reader"),
        a.categories,
        level=a.kappa_bound_level,
    )


def _confound_entries(construct: Construct) -> list[tuple[str, tuple[str, ...]]]:
    """Each precommitted confound arm: every confound alone, then each crossing."""
    entries: list[tuple[str, tuple[str, ...]]] = [(n, ()) for n, _, _ in construct.known_confounds]
    for name, _, crossed in construct.known_confounds:
        for other in crossed:
            entries.append((name, (other,)))
    return entries


_CONTENT_CONFOUNDS = ("density", "register", "length", "framing")


def _check_confound_arms(
    cfg: EngineConfig, panel: Panel, construct: Construct, refusals: Refusals
) -> None:
    """Refuse, before any work, a confound arm the panel cannot carry: the stress position bias
    on a judge (at ``confound_stress.position_bias``) or a stress shift pushing some judge's
    p ± δ out of [0, 1] (at ``confound_stress.model_shift_h``)."""
    stress = cfg.confound_stress
    for name, crossed in _confound_entries(construct):
        involved = (name, *crossed)
        if "reader" in involved:
            continue
        arm = " + ".join(involved)
        arm_panel = panel
        if "position" in involved:
            with refusals.at(
                ("confound_stress", "position_bias"), f"the confound arm {arm} (position stress)"
            ):
                arm_panel = _panel_with_position_bias(panel, stress.position_bias)
        shift = stress.model_shift_h * sum(1 for n in involved if n in _CONTENT_CONFOUNDS)
        field = "model_shift_h" if shift > 0 else "position_bias"
        with refusals.at(("confound_stress", field), f"the confound arm {arm}"):
            judge_rates(
                arm_panel,
                TruthScenario(name=f"confound:{'+'.join(involved)}", model_shift_h=shift),
            )


def _confound_arms(
    cfg: EngineConfig,
    design: RouteDesign,
    construct: Construct,
    threads: int,
    tick: Callable[[int, int], None] | None,
    audit_roots: int,
) -> tuple[ConfoundArm, ...]:
    stress = cfg.confound_stress
    arms: list[ConfoundArm] = []
    entries = _confound_entries(construct)
    registered_only = (design.sequential.construction,)
    jobs: list[Job] = []
    slots: list[int] = []
    for name, crossed in entries:
        involved = (name, *crossed)
        design_text = "; crossed with ".join(_ARM_DESIGNS[n][0] for n in involved)
        stress_text = " + ".join(_ARM_DESIGNS[n][1] for n in involved)
        if "reader" in involved:
            arms.append(
                ConfoundArm(
                    name,
                    crossed,
                    design_text,
                    stress_text,
                    None,
                    _reader_audit_pass_rate_at_chance(cfg, audit_roots),
                )
            )
            continue
        shift = stress.model_shift_h * sum(1 for n in involved if n in _CONTENT_CONFOUNDS)
        arm_design = design
        if "position" in involved:
            arm_design = replace(
                design, panel=_panel_with_position_bias(design.panel, stress.position_bias)
            )
        scenario = TruthScenario(
            name=f"confound:{'+'.join(involved)}", effect_scale=0.0, model_shift_h=shift
        )
        jobs.append(Job(arm_design, scenario, f"engine/confound/{'+'.join(involved)}"))
        slots.append(len(arms))
        arms.append(ConfoundArm(name, crossed, design_text, stress_text, None, None))
    results = simulate_scenarios(
        jobs, cfg.seed, cfg.power.replicates, BLOCK_SIZE, registered_only, threads, tick=tick
    )
    for slot, oc in zip(slots, results, strict=True):
        arms[slot] = replace(arms[slot], outcome=oc)
    return tuple(arms)
