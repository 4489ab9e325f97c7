"""The engine (kind ``engine``): construct in, verdict out, with the whole evidence trail.

One run, in this order, data flowing one way:

1. **Stimulus factory** -- candidates generated as real text from the construct family's templates
   and admitted through the mechanical gates (:mod:`verdictpack.stimuli`); per-gate
   failure counts
   and the admission yield; the human spot-check of the gate sized and priced.
2. **Human layer, instrument validation** -- the reader-reconstruction audit (N roots x 2
   readers), Cohen's kappa with its interval; kappa below the gate makes the verdict
   INSTRUMENT_INVALID and no preference claim is evaluated (no sequential run at all).
3. **Human layer, preference baseline** -- a pilot plus a confirmatory sample sized by simulation
   to the registered power (:func:`verdictpack.simulate._human.size_human_baseline`).
4. **Sequential run** -- admitted roots stream, one at a time, through an
   :class:`~verdictpack.evidence.EvidenceSource` (today a simulated panel) into the
   sequential
   core; the registered track stops the run at its first verdict or at the cap; the extension track
   (weaker minimum) and the comparison construction are evaluated on the same evidence, frozen
   apart. Every root is one line of ``evidence.jsonl``.
5. **Power report** -- the simulated operating characteristics of this design at and above the
   threshold and under the null, both constructions side by side, and one stress case per
   precommitted confound arm.

Outputs: verdict.json, evidence.jsonl, cost_comparison.csv, validity_report.json,
power_report.json, registered_vs_extension.md, provenance.json, report.md, results.json.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import Any

import numpy as np

from verdictpack._parallel import usable_cpus
from verdictpack._results import exact
from verdictpack._rng import stream
from verdictpack.config._blocks import (
    HumanSpec,
    SequentialSettings,
    build_sequential,
    price,
)
from verdictpack.config._compiler import (
    ConfigSource,
    Construct,
    compile_construct,
)
from verdictpack.config._provenance import provenance
from verdictpack.config._refusals import Refusals, governing_loc
from verdictpack.core._agreement import AuditDecision, AuditGate, expected_kappa
from verdictpack.core._hinterval import Verdict
from verdictpack.core._tracks import TrackResult, TrackStream
from verdictpack.evidence._source import EvidenceSource, RootEvidence
from verdictpack.kinds._base import (
    CostLine,
    Layer,
    RunOptions,
    report_progress,
    sequential_record,
    with_total,
)
from verdictpack.kinds._engine_arms import (
    _check_confound_arms,
    _confound_arms,
    _power_scenarios,
    _scenario,
    _sequential_run,
)
from verdictpack.kinds._engine_config import (
    SpotCheckSpec,
)
from verdictpack.kinds._engine_model import (
    RULES,
    ConfoundArm,
    EngineConfig,
    EngineResult,
)
from verdictpack.kinds._worlds import engine_worlds
from verdictpack.simulate._evidence import SimulatedPanelSource
from verdictpack.simulate._human import (
    HumanBaselineSize,
    ReaderAuditSize,
    simulate_audit_pass_probability,
    simulate_reader_audit,
    size_human_baseline,
    size_reader_audit,
)
from verdictpack.simulate._judges import (
    Panel,
    TruthScenario,
    scenario_panel,
    true_rates,
)
from verdictpack.simulate._operating import Job, RouteDesign, ScenarioOC, simulate_scenarios
from verdictpack.simulate._panels import build_panel, summarize_panel
from verdictpack.simulate._routes import BLOCK_SIZE, route_design
from verdictpack.stimuli import (
    DefectRates,
    FactoryResult,
    GateSpotCheck,
    run_factory,
    size_gate_spot_check,
    standard_gates,
    templates_for,
)

__all__ = [
    "EngineConfig",
    "EnginePlan",
    "EngineResult",
    "EngineTracks",
    "TrackResult",
    "plan_engine",
    "prove_engine",
    "run_engine",
    "run_sequential",
    "simulated_source",
]

# ----------------------------------------------------------------------------------------------
# The run
# ----------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class EnginePlan:
    """Everything the engine settles before the first judgment: stage 1 of a run.

    The stimulus factory and its gate spot-check, the reader audit, the powered human baseline
    and the route design; no evidence source is involved, so a study on real data reuses it.
    """

    construct: Construct
    sequential: SequentialSettings
    panel: Panel
    scenario: TruthScenario
    power_scenarios: tuple[TruthScenario, ...]
    factory: FactoryResult
    spot: GateSpotCheck
    reader_audit: AuditDecision
    audit_sizing: ReaderAuditSize
    baseline: HumanBaselineSize
    design: RouteDesign
    effective_cap: int


@dataclass(frozen=True)
class EngineTracks:
    """Stage 2 of a run: the three tracks, frozen at their verdicts, and the evidence trail."""

    registered: TrackResult
    extension: TrackResult
    comparison: TrackResult
    rows: tuple[dict[str, Any], ...]
    seen: tuple[RootEvidence, ...]
    stream_alphas: Any
    error_per_side: float

    @property
    def roots_run(self) -> int:
        return len(self.rows)


def plan_engine(config: EngineConfig, refusals: Refusals | None = None) -> EnginePlan:
    """Stage 1: every scenario solved (refused at its config field), then the stimulus factory,
    the gate spot-check, the reader audit, the baseline sizing and the route design."""
    refusals = Refusals.none() if refusals is None else refusals
    construct = compile_construct(config.construct_spec)
    sequential = build_sequential(config.sequential)
    panel = build_panel(config.panel)  # a config's panel is proven by its rule (panel_rules)
    seed = config.seed
    # 0. every scenario the run simulates, solved before any work (deterministic, no draws): one
    # the panel cannot carry is refused at the config field that sets it
    scenario = _scenario(config, panel, construct, refusals)
    power_scenarios = _power_scenarios(config, panel, construct, refusals)
    _check_confound_arms(config, panel, construct, refusals)
    # 1. stimulus factory
    family_templates = templates_for(config.stimuli.family)
    if config.stimuli.templates is not None:
        family_templates = tuple(t for t in family_templates if t.name in config.stimuli.templates)
    with refusals.at(
        ("stimuli",),
        "the stimulus factory",
        params={
            "n_candidates": ("stimuli", "candidates"),
            "templates": ("stimuli", "templates"),
            **{f"defect_rates.{f}": ("stimuli", "defect_rates", f) for f in _DEFECT_FIELDS},
        },
    ):
        factory = run_factory(
            config.stimuli.candidates,
            family_templates,
            standard_gates(family_templates, **config.stimuli.gates.model_dump()),
            stream(seed, "engine/stimuli"),
            DefectRates(**config.stimuli.defect_rates.model_dump()),
        )
    sc = config.stimuli.spot_check
    spot_fields = ("error_rate", "confidence", "passes_per_pair", "cost_per_touch")
    with refusals.at(
        ("stimuli", "candidates"),
        "the gate spot-check",
        params={f: ("stimuli", "spot_check", f) for f in spot_fields},
        hint=lambda exc: _admission_hint(factory, sc, exc),
    ):
        spot = size_gate_spot_check(
            sc.error_rate,
            sc.confidence,
            sc.passes_per_pair,
            price(sc.cost_per_touch, "stimuli.spot_check.cost_per_touch"),
            factory.n_admitted,
        )
    # 2. instrument validation
    # sized so that readers at the planning rate pass the gate (on the lower confidence bound of
    # kappa) with probability pass_probability; a registered roots is used as given
    a = config.human.audit
    gate = AuditGate(a.kappa_min, a.kappa_bound_level)
    with refusals.at(
        ("human", "audit", "pass_probability"),
        "the reader-audit sizing",
        params={"reconstruction_rate": ("human", "audit", "reconstruction_rate")},
    ):
        planning = expected_kappa(a.reconstruction_rate, a.categories)
        if a.roots is None or planning > a.kappa_min:
            audit_sizing = size_reader_audit(
                a.reconstruction_rate,
                gate,
                a.pass_probability,
                seed,
                a.categories,
                "engine/audit-sizing",
                min_roots=10,
                max_roots=100_000,
            )
        else:  # readers planned at or below the gate (e.g. at chance): no size passes them
            audit_sizing = ReaderAuditSize(
                planning_rate=a.reconstruction_rate,
                planning_kappa=planning,
                n_categories=a.categories,
                kappa_min=a.kappa_min,
                level=a.kappa_bound_level,
                target_pass_probability=a.pass_probability,
                roots=None,
                readings=None,
                pass_probability=None,
                pass_probability_below=None,
                sizes_evaluated=0,
            )
        if a.roots is not None:
            audit_sizing = replace(
                audit_sizing,
                registered_roots=a.roots,
                pass_probability_registered=simulate_audit_pass_probability(
                    a.roots, a.reconstruction_rate, gate, seed, a.categories, "engine/audit-sizing"
                ),
            )
    audit_roots = a.roots if a.roots is not None else audit_sizing.roots
    assert audit_roots is not None  # sized when not registered
    with refusals.at(("human", "audit", "roots"), "the reader-reconstruction audit"):
        reader_readings = simulate_reader_audit(
            audit_roots, a.reconstruction_rate, stream(seed, "engine/audit"), a.categories
        )
        reader_audit = gate.evaluate(reader_readings)
    # 3. preference baseline
    hb = config.human.baseline
    with refusals.at(
        ("human", "baseline", "power"),
        "the human baseline sizing",
        params={
            "threshold_h": governing_loc(construct),
            "alpha": ("construct", "alpha"),
            "pilot_roots": ("human", "baseline", "pilot_roots"),
            "replicates": ("human", "baseline", "replicates"),
            "n_per_root": ("human", "judgments_per_root"),
            "icc": ("human", "icc"),
        },
    ):
        baseline = size_human_baseline(
            construct.human_baseline_rate,
            construct.governing_threshold_h,
            2 * construct.per_tail_alpha,
            hb.power,
            config.human.judgments_per_root,
            hb.pilot_roots,
            seed,
            "engine/human-baseline",
            hb.replicates,
            icc=config.human.icc,
        )
    fixed_touches = reader_audit.readings + baseline.pilot_touches
    human_price = price(config.human.cost_per_judgment, "human.cost_per_judgment")
    fixed_cost = reader_audit.readings * price(
        a.cost_per_reading, "human.audit.cost_per_reading"
    ) + (baseline.pilot_touches * human_price)
    human_spec = HumanSpec(
        judgments_per_root=config.human.judgments_per_root,
        cost_per_judgment=human_price,
        icc=config.human.icc,
    )
    # the design a config's route rule proved (route_rules)
    design = route_design(
        construct, panel, human_spec, sequential, config.routes, fixed_touches, fixed_cost
    )
    return EnginePlan(
        construct=construct,
        sequential=sequential,
        panel=panel,
        scenario=scenario,
        power_scenarios=tuple(power_scenarios),
        factory=factory,
        spot=spot,
        reader_audit=reader_audit,
        audit_sizing=audit_sizing,
        baseline=baseline,
        design=design,
        effective_cap=min(sequential.cap_roots, factory.n_admitted),
    )


def simulated_source(config: EngineConfig, plan: EnginePlan) -> SimulatedPanelSource:
    """The default evidence source: the panel under the config's truth scenario, on the
    ``engine/evidence`` stream of the config's seed."""
    return SimulatedPanelSource(
        scenario_panel(plan.panel, plan.scenario),
        plan.scenario,
        plan.construct.human_baseline_rate,
        config.human.judgments_per_root,
        stream(config.seed, "engine/evidence"),
        human_icc=config.human.icc,
    )


def run_sequential(
    plan: EnginePlan, source: EvidenceSource, refusals: Refusals | None = None
) -> EngineTracks:
    """Stage 2: the admitted stimuli, one at a time, from ``source`` into the three trackers.

    Nothing runs when the reader audit failed (every track INSTRUMENT_INVALID); a track without
    a verdict when the registered track stopped says so.
    """
    refusals = Refusals.none() if refusals is None else refusals
    construct, sequential = plan.construct, plan.sequential
    with refusals.at(
        ("sequential",),
        "the sequential trackers",
        params={"alpha": ("construct", "per_tail_alpha"), "threshold": governing_loc(construct)},
    ):
        # M_i is a share of the panel's 2J choices; H_i's values widen the support as they come
        j = plan.panel.n_judges
        run = TrackStream(
            sequential.tracks(construct),
            plan.effective_cap,
            np.arange(2 * j + 1) / (2 * j),
            np.array([]),
        )
    rows: list[dict[str, Any]] = []
    seen: list[RootEvidence] = []
    if plan.reader_audit.passed:
        rows, seen = _sequential_run(
            source,
            plan.factory.admitted,
            run,
            plan.effective_cap,
            construct.human_baseline_rate,
        )
    trace = run.trace()
    if rows:
        verdicts = trace.at_stop("NO_VERDICT_WHEN_REGISTERED_STOPPED")
    else:
        verdicts = trace.over_all(Verdict.INSTRUMENT_INVALID.value)
    return EngineTracks(
        registered=verdicts["registered"],
        extension=verdicts["extension"],
        comparison=verdicts["comparison"],
        rows=tuple(rows),
        seen=tuple(seen),
        stream_alphas=trace.stream_alphas,
        error_per_side=trace.error_per_side["registered"],
    )


def prove_engine(
    config: EngineConfig,
    plan: EnginePlan,
    refusals: Refusals | None = None,
    options: RunOptions | None = None,
) -> tuple[tuple[ScenarioOC, ...], tuple[ConfoundArm, ...]]:
    """Stage 3, which needs no evidence source: the power report of this design and the
    precommitted confound arms, simulated (the kernel spreads the replicates over the CPUs;
    ``options.progress`` hears of each block)."""
    refusals = Refusals.none() if refusals is None else refusals
    threads = usable_cpus()
    jobs = [Job(plan.design, sc, f"engine/power/{sc.name}") for sc in plan.power_scenarios]
    with refusals.at(("power",), "the power report"):
        power = simulate_scenarios(
            jobs,
            config.seed,
            config.power.replicates,
            BLOCK_SIZE,
            threads=threads,
            tick=report_progress(options, "engine: power report"),
        )
    with refusals.at(("confound_stress",), "the confound arms"):
        arms = _confound_arms(
            config,
            plan.design,
            plan.construct,
            threads,
            report_progress(options, "engine: confound arms"),
            plan.reader_audit.n_roots,
        )
    return tuple(power), tuple(arms)


def run_engine(
    config: EngineConfig,
    source: ConfigSource,
    options: RunOptions | None = None,
    evidence: EvidenceSource | None = None,
) -> EngineResult:
    """Plan, run on ``evidence`` (default: the simulated panel of the config), prove."""
    refusals = Refusals(source)
    plan = plan_engine(config, refusals)
    construct, sequential, scenario = plan.construct, plan.sequential, plan.scenario
    mu_m, mu_h, true_h = true_rates(
        scenario_panel(plan.panel, scenario), scenario, construct.human_baseline_rate
    )
    evidence_source = simulated_source(config, plan) if evidence is None else evidence
    tracks = run_sequential(plan, evidence_source, refusals)
    model_touches = sum(ev.model_touches for ev in tracks.seen)
    human_touches = sum(ev.human_touches for ev in tracks.seen)
    power, arms = prove_engine(config, plan, refusals, options)
    return EngineResult(
        kind="engine",
        construct=construct,
        seed=config.seed,
        evidence_source=evidence_source.description,
        truth_scenario=scenario.name,
        truth_true_h=true_h,
        truth_mu_model=mu_m,
        truth_mu_human=mu_h,
        truth_effect_scale=scenario.effect_scale,
        truth_model_shift_h=scenario.model_shift_h,
        panel=summarize_panel(config.panel),
        construction=sequential.construction,
        comparison_construction=sequential.other_construction(),
        cap_roots=sequential.cap_roots,
        effective_cap=plan.effective_cap,
        factory=plan.factory,
        spot_check=plan.spot,
        audit=plan.reader_audit,
        audit_sizing=plan.audit_sizing,
        baseline=plan.baseline,
        instrument_valid=plan.reader_audit.passed,
        registered=tracks.registered,
        extension=tracks.extension,
        comparison=tracks.comparison,
        roots_run=tracks.roots_run,
        model_touches=model_touches,
        human_stream_touches=human_touches,
        stream_checks=_stream_checks(tracks.seen, mu_m, mu_h),
        costs=_costs(config, plan, tracks.roots_run, model_touches, human_touches),
        power=power,
        confound_arms=arms,
        worlds=engine_worlds(config, construct.governing_threshold_h, true_h, power, arms),
        evidence=tracks.rows,
        currency=config.currency,
        provenance=provenance(
            source,
            "engine",
            config.seed,
            {
                **sequential_record(sequential),
                "per_tail_alpha": construct.per_tail_alpha,
                "stream_alphas": tracks.stream_alphas,
                "error_per_side": tracks.error_per_side,
                "cap_roots": sequential.cap_roots,
                "evidence_source": evidence_source.description,
                "truth_scenario": scenario.name,
            },
        ),
    )


_DEFECT_FIELDS = ("drop_unit", "padding", "duplicate_fragment", "extra_difference")
_GATE_FIELDS = {
    "length_match": "stimuli.gates.length_tolerance / length_target",
    "content_preservation": "stimuli.gates.content_threshold, stimuli.defect_rates.drop_unit",
    "fragment_distinctness": (
        "stimuli.gates.fragment_threshold, stimuli.defect_rates.duplicate_fragment"
    ),
    "null_separation": "stimuli.gates.max_diff_tokens, stimuli.defect_rates.extra_difference",
}


def _admission_hint(factory: FactoryResult, spot: SpotCheckSpec, exc: Any) -> str:
    """Which gates refused the candidates, and how many candidates would admit enough."""
    if exc.parameter != "n_admitted":
        return ""
    failing = sorted(
        ((g, n) for g, n in factory.first_failures.items() if n > 0), key=lambda item: -item[1]
    )
    refused = ", ".join(
        f"{g} {n} (set by {_GATE_FIELDS.get(g, 'stimuli.gates')})" for g, n in failing
    )
    head = f"the gates admitted {factory.n_admitted} of {factory.n_candidates} candidates" + (
        f"; first failing gate: {refused}" if refused else ""
    )
    if factory.n_admitted == 0:
        return head + "; none passed, so more candidates cannot help: relax the gate"
    needed = size_gate_spot_check(
        spot.error_rate,
        spot.confidence,
        spot.passes_per_pair,
        price(spot.cost_per_touch, "stimuli.spot_check.cost_per_touch"),
    ).pairs
    per = factory.n_admitted / factory.n_candidates
    return head + (
        f"; at this yield about {math.ceil(needed / per):,} candidates admit the {needed} pairs"
    )


def _stream_checks(seen: Sequence[RootEvidence], mu_m: float, mu_h: float) -> dict[str, Any]:
    """Plain checks on the streams actually observed (no inference)."""
    if not seen:
        return {"roots": 0}
    m = np.array([ev.model_value for ev in seen])
    h = np.array([ev.human_value for ev in seen if ev.human_value is not None])
    # each judge's cells: the first half in the first order, the second half in the other
    cells = [(c[: len(c) // 2], c[len(c) // 2 :]) for ev in seen for c in ev.model_choices]
    first = np.array([v for a, _ in cells for v in a if v is not None], dtype=float)
    second = np.array([v for _, b in cells for v in b if v is not None], dtype=float)
    return {
        "roots": len(seen),
        "complete_pairs": int(h.size),
        "model_values_in_unit_interval": bool(np.all((m >= 0) & (m <= 1))),
        "human_values_in_unit_interval": bool(np.all((h >= 0) & (h <= 1))),
        "model_mean_observed": float(m.mean()),
        "model_mean_simulated_truth": mu_m,
        "human_mean_observed": float(h.mean()) if h.size else None,
        "human_mean_simulated_truth": mu_h,
        "treatment_first_rate": float(first.mean()) if first.size else None,
        "treatment_second_rate": float(second.mean()) if second.size else None,
    }


def _costs(
    cfg: EngineConfig, plan: EnginePlan, roots_run: int, model_touches: int, human_touches: int
) -> tuple[CostLine, ...]:
    h = cfg.human
    spot, reader_audit, baseline = plan.spot, plan.reader_audit, plan.baseline
    rows = [
        CostLine(
            "this run (e-process)",
            "stimulus gate spot-check (human)",
            exact(spot.touches),
            exact(spot.cost),
        ),
        CostLine(
            "this run (e-process)",
            "model judgments",
            exact(model_touches),
            exact(roots_run * plan.design.model_cost_per_root),
        ),
        CostLine(
            "this run (e-process)",
            "human layer",
            exact(reader_audit.readings + baseline.pilot_touches + human_touches),
            exact(
                reader_audit.readings
                * price(h.audit.cost_per_reading, "human.audit.cost_per_reading")
                + (baseline.pilot_touches + human_touches)
                * price(h.cost_per_judgment, "human.cost_per_judgment")
            ),
        ),
    ]
    return tuple(with_total("this run (e-process)", rows))


LAYER = Layer(
    kind="engine",
    summary="construct in, verdict out: factory, human layer, sequential run, evidence trail",
    model=EngineConfig,
    rules=RULES,
    run=run_engine,
)
