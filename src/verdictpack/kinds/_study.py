"""The study (kind ``study``): the user's own stimuli, judgments and annotations in, a verdict out.

One run, data flowing one way:

1. **Read** the data folder by one call (:func:`~verdictpack.evidence._files.read_study`):
   the pairs, the judgment files (each by its format into one canonical table), the double
   readings of the reader audit and an optional registered order, by paths relative to the
   config's own folder, each file opened once and hashed as parsed. Every defect of every file
   is collected (file and line, or JSON path); any defect refuses the study before a number is
   computed. A live study adds its ledger's committed evidence to the study so read
   (:func:`run_study`'s ``live``), never reading the files again.
2. **Gates** on every pair (length, fragments, content overlap, diff budget, each of them unless
   the config's ``gates.off`` names it; natural pairs under a treatment rule add the
   ``treatment_rule`` gate, which refuses a tie); refused pairs are listed by id with the gates
   that refused them, never silently dropped.
3. **Order**: the admitted roots in the registered order -- a keyed hash of each id under the
   seed (:mod:`verdictpack.evidence._order`), or the order file -- fixed before any judgment is
   read; the table is sorted by it.
4. **Values**: M_i and H_i per root under the declared policy for ties, invalid and missing
   judgments (:mod:`verdictpack.evidence._assemble`).
5. **Reader audit**: Cohen's kappa of the double readings with its interval; below the gate the
   verdict is INSTRUMENT_INVALID and no preference claim is evaluated. A study whose config says
   ``"reader_audit": "none"`` runs without one: ``audit`` is None, ``audit_status`` "not_run",
   ``instrument_valid`` None (not validated), the verdict from the tracks.
6. **Sequential verdict**: the study's data as an evidence source
   (:class:`~verdictpack.evidence._source.FileEvidence`, :func:`study_evidence`) fed, in the
   registered order, to the registered, extension and comparison tracks as one block
   (:func:`~verdictpack.evidence._source.feed_evidence` into a
   :class:`~verdictpack.core._tracks.TrackStream`, as the engine feeds its source root by root);
   a live study's trace was streamed while it committed the roots (the same numbers); a study
   whose instrument failed traces no root, for the tracks' levels. The
   registered verdict is the first one reached (at the cap, or when the data run out:
   INCONCLUSIVE); the tracks then read on to the end of the data already paid for, which gives
   the interval over all of it.
7. **Judges as the data show them**: each judge's rate, position bias and agreement (with the
   other judges and with the humans), the panel's latent correlation and effective size, and
   the fitted panel as a config block (with its values as estimated and each clip the
   simulator needed, named by field). The rates' and position biases' intervals take the root
   as the unit, with each judge's design effect beside them (core._estimates;
   :mod:`verdictpack.kinds._study_judges`). When the
   registered verdict is INCONCLUSIVE, how many more roots would settle it, simulated from the
   fitted sheets.

Outputs: report.md, results.json, verdict.json, evidence.jsonl, judgments.csv (the canonical
table in the registered order), reader_audit.csv, root_order.txt, validity_report.json,
judges.json, fitted_panel.json, cost_comparison.csv, provenance.json (with the SHA-256 of every
data file read). What an importer read but could not turn into a judgment (Argilla records nobody
answered, Label Studio tasks without annotations) is counted in results.json ``import_notes``
and noted under report.md's data files, as ``validate`` prints it.
"""

from __future__ import annotations

import functools
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np

from verdictpack._errors import ConfigError, Defect, InputError
from verdictpack._parallel import Background, in_background
from verdictpack._results import BULK, exact
from verdictpack._rng import stream
from verdictpack.config._blocks import PanelSpec, build_sequential
from verdictpack.config._compiler import ConfigSource, Construct, compile_construct
from verdictpack.config._provenance import Provenance, provenance
from verdictpack.config._refusals import Refusals, governing_loc
from verdictpack.core._agreement import AuditDecision, AuditGate
from verdictpack.core._estimates import reader_audit_from_readings
from verdictpack.core._hinterval import Verdict
from verdictpack.core._scales import phi
from verdictpack.core._tracks import TRACKS, TrackResult, TrackStream, TrackTrace
from verdictpack.evidence._assemble import Coverage, Policy, RootValues, root_values
from verdictpack.evidence._files import DataFile, StudyData, read_study
from verdictpack.evidence._order import ORDER_DOMAIN, registered_order
from verdictpack.evidence._readings import Readings
from verdictpack.evidence._source import CommittedEvidence, FileEvidence, feed_evidence
from verdictpack.evidence._table import JudgmentTable
from verdictpack.evidence._trail import EvidenceTrail
from verdictpack.evidence.live._prompts import effective_prompt, prompt_record
from verdictpack.kinds._base import (
    CostLine,
    Layer,
    RunOptions,
    report_progress,
    sequential_record,
    with_total,
)
from verdictpack.kinds._study_config import RULES, StudyConfig
from verdictpack.kinds._study_judges import JudgesReport, judges_report
from verdictpack.simulate._continuation import RootsToGo, roots_to_go
from verdictpack.simulate._panels import build_panel
from verdictpack.stimuli._gates import Gate
from verdictpack.stimuli._pairs import TreatmentRuleGate
from verdictpack.stimuli._realtext import GateCounts, gate_counts, real_text_gates
from verdictpack.stimuli._stimulus import Stimulus

__all__ = [
    "RULES",
    "StudyConfig",
    "StudyData",
    "StudyEstimate",
    "StudyPrepared",
    "StudyResult",
    "load_study",
    "prepare_study",
    "run_study",
    "study_evidence",
]

# ----------------------------------------------------------------------------------------------
# Reading the data
# ----------------------------------------------------------------------------------------------


def load_study(
    config: StudyConfig, source: ConfigSource, gates: Sequence[Gate]
) -> tuple[StudyData, GateCounts]:
    """The study's data folder read by one call (:func:`~verdictpack.evidence._files.read_study`)
    and the gates' counts on its pairs.

    The gates run on the pairs as soon as they are read, in a forked child
    (:func:`verdictpack._parallel.in_background`) while the judgment files are read; the counts
    are the same as ``gate_counts(stimuli, gates)`` afterwards (the call itself, when no child
    can run it), and an error it raises surfaces as that call raises it."""
    started: list[Background[GateCounts]] = []

    def on_pairs(stimuli: tuple[Stimulus, ...]) -> None:
        started.append(in_background(functools.partial(gate_counts, stimuli, gates)))

    judges = [j.name for j in config.panel.judges]
    try:
        data = read_study(config.data, judges, config.panel.trials, source, on_pairs)
    except BaseException:
        for job in started:
            job.cancel()
        raise
    return data, started[0].result() if started else gate_counts(data.stimuli, gates)


# ----------------------------------------------------------------------------------------------
# Result objects
# ----------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class GateReport:
    """What the gates did to the pairs: counts per gate and first failing, refused ids."""

    gates: tuple[str, ...]
    # the study's gates switched off by the config (not applied)
    off: tuple[str, ...]
    settings: dict[str, Any]
    total: int
    admitted: int
    refused: int
    refusals: dict[str, int]
    first_failing: dict[str, int]
    # validity_report.json's list, never in results.json
    refused_pairs: tuple[dict[str, Any], ...] = field(metadata=BULK)


@dataclass(frozen=True)
class StudyEstimate:
    """What the data say as point figures, beside the interval that carries the guarantee.

    ``model_rate`` and ``human_rate`` pool the known answers (unknowns left out: description,
    not a test); ``h_point`` is φ(model_rate) − φ(human_rate). Where
    model judgments carry label probabilities, ``h_point_probability`` is the same figure from
    them (the estimand not declared, shown beside) and ``warning`` says when the two disagree in
    sign or in relation to the threshold. ``width_bounded`` is the registered h-interval's width
    over all the data with every unknown bounded both ways, ``width_midpoint`` the width the
    same data would give were each unknown ½ (for reference only: no guarantee), both None when
    nothing was bounded."""

    observation: str
    model_rate: float | None
    human_rate: float | None
    h_point: float | None
    model_rate_probability: float | None
    h_point_probability: float | None
    warning: str | None
    model_unknown: int
    human_unknown: int
    roots_without_humans_unbounded: int
    width_bounded: float | None
    width_midpoint: float | None


def _point_h(model: float | None, human: float | None) -> float | None:
    """φ(model) − φ(human): the claim reads 'greater' in every sequential kind."""
    return None if model is None or human is None else float(phi(model) - phi(human))


def study_estimate(
    values: RootValues,
    policy: Policy,
    construct: Construct,
    widths: tuple[float, float] | None,
) -> StudyEstimate:
    """The point figures of :class:`StudyEstimate` from the study's values."""
    h_choice = _point_h(values.model_rate, values.human_rate)
    h_prob = None
    if policy.model_observation == "choice":
        h_prob = _point_h(values.model_rate_probability, values.human_rate)
    warning = None
    if h_choice is not None and h_prob is not None:
        thr = construct.governing_threshold_h
        if (h_choice > 0) != (h_prob > 0) or (h_choice >= thr) != (h_prob >= thr):
            warning = (
                f"the judges' label probabilities give h = {h_prob:.3f}, their answers "
                f"h = {h_choice:.3f}: they disagree in sign or against the threshold "
                f"{thr:.3f}. The verdict is on the answers (the declared observation); a study "
                "of the probabilities declares policy.model_observation = probability"
            )
    c = values.coverage
    return StudyEstimate(
        observation=policy.model_observation,
        model_rate=values.model_rate,
        human_rate=values.human_rate,
        h_point=h_choice,
        model_rate_probability=values.model_rate_probability,
        h_point_probability=h_prob,
        warning=warning,
        model_unknown=c.model_unknown,
        human_unknown=c.human_unknown,
        roots_without_humans_unbounded=c.roots_without_humans_unbounded,
        width_bounded=None if widths is None else widths[0],
        width_midpoint=None if widths is None else widths[1],
    )


@dataclass(frozen=True)
class StudyResult:
    kind: str
    construct: Construct
    seed: int
    evidence_source: str
    panel_name: str
    judges: tuple[str, ...]
    trials: int
    humans_per_root: int | None
    policy: dict[str, str]
    construction: str
    comparison_construction: str
    cap_roots: int
    root_order: str
    data_files: tuple[DataFile, ...]
    # what the importers read but gave no judgment (Argilla records nobody answered, Label
    # Studio tasks without annotations), each naming its file
    import_notes: tuple[str, ...]
    gates: GateReport
    coverage: Coverage
    estimate: StudyEstimate
    # None, with audit_status "not_run" and instrument_valid None: no reader audit (the config's
    # choice); the instrument is then not validated, the verdict comes from the tracks
    audit: AuditDecision | None
    audit_status: str
    instrument_valid: bool | None
    registered: TrackResult
    extension: TrackResult
    comparison: TrackResult
    all_data: dict[str, TrackResult]
    roots_run: int
    roots_available: int
    stop_reason: str
    judges_report: JudgesReport
    roots_to_go: RootsToGo | None
    costs: tuple[CostLine, ...]
    currency: str
    prompts: dict[str, dict[str, Any]]
    provenance: Provenance
    # bulk data, rendered as files of their own (evidence.jsonl, judgments.csv,
    # reader_audit.csv, root_order.txt), never into results.json; the evidence trail is held
    # as columns (a sequence of row dicts on demand)
    evidence: EvidenceTrail = field(repr=False, metadata=BULK)
    table: JudgmentTable = field(repr=False, metadata=BULK)
    readings: Readings = field(repr=False, metadata=BULK)
    order: tuple[str, ...] = field(repr=False, metadata=BULK)


# ----------------------------------------------------------------------------------------------
# The run
# ----------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class StudyPrepared:
    """A study read, gated, ordered and valued: everything before the verdict (``validate``)."""

    data: StudyData
    gate_counts: GateCounts
    gate_settings: dict[str, Any]
    order: tuple[str, ...]
    values: RootValues
    table: JudgmentTable
    policy: Policy
    # the reader audit's decision: validate and the run check the readings by this one call
    # (None: the config runs the study without a reader audit)
    audit: AuditDecision | None


def _reader_audit(
    config: StudyConfig, refusals: Refusals, readings: Readings
) -> AuditDecision | None:
    """Cohen's kappa of the double readings through the gate (stage 5); refused by name when
    the readings cannot give one (none, or an empty file). None: no reader audit (config)."""
    a = config.data.reader_audit
    if a is None:
        return None
    with refusals.at(
        ("data", "reader_audit", "path"),
        "the reader audit",
        params={"categories": ("data", "reader_audit", "categories")},
    ):
        kappa = reader_audit_from_readings(
            readings.root, readings.reader, readings.category, categories=a.categories
        )
        return AuditGate(a.kappa_min, a.kappa_bound_level).evaluate(kappa)


def _gates(config: StudyConfig, refusals: Refusals) -> tuple[Any, dict[str, Any]]:
    """The gates the study applies: the standard ones not switched off by name, then a natural
    pairs' treatment rule's (a tie names no treatment)."""
    g = config.gates
    settings = g.model_dump()
    given = {k: v for k, v in settings.items() if k != "off" and v is not None}
    with refusals.at(("gates",), "the gates"):
        # a gate switched off may lack its setting: a placeholder, never applied
        built = real_text_gates(**{"length_tolerance": 5.0, "max_diff_tokens": 1, **given})
    gates: list[Any] = [gate for gate in built if gate.name not in g.off]
    rule = config.data.stimuli.treatment_rule
    if rule is not None:
        gates.append(TreatmentRuleGate(rule))
    return tuple(gates), settings


def prepare_study(config: StudyConfig, source: ConfigSource) -> StudyPrepared:
    """Read, gate, order and value the study, and decide its reader audit (stages 1-5 of the
    module docstring)."""
    refusals = Refusals(source)
    gates, settings = _gates(config, refusals)
    data, counts = load_study(config, source, gates)
    if data.order_file is None:
        order = registered_order(config.seed, counts.admitted)
    else:
        admitted = set(counts.admitted)
        order = tuple(r for r in data.order_file if r in admitted)
        listed = set(order)
        missing = [r for r in counts.admitted if r not in listed]
        if missing:
            raise ConfigError(
                [
                    Defect(
                        str(config.data.root_order),
                        "(file)",
                        missing[:5],
                        f"every admitted root listed ({len(missing)} admitted roots are not)",
                    )
                ]
            )
    values, table, policy = _valued(config, data, order, counts.refused)
    audit = _reader_audit(config, refusals, data.readings)
    return StudyPrepared(data, counts, settings, order, values, table, policy, audit)


def _with_committed(
    config: StudyConfig, prep: StudyPrepared, live: CommittedEvidence
) -> StudyPrepared:
    """A live study's committed prefix: ``prep`` (the study as read once) with the ledger's
    judgments on its committed roots and its order cut to them; nothing is read again."""
    if live.roots != prep.order[: len(live.roots)]:
        raise InputError("roots", "a prefix of the registered order", list(live.roots)[:3])
    data = replace(
        prep.data,
        table=JudgmentTable.concat([prep.data.table, live.table]),
        files=(*prep.data.files, live.file),
    )
    values, table, _ = _valued(config, data, live.roots, prep.gate_counts.refused)
    return replace(prep, data=data, order=live.roots, values=values, table=table)


def _valued(
    config: StudyConfig, data: StudyData, order: tuple[str, ...], refused: Sequence[str]
) -> tuple[RootValues, JudgmentTable, Policy]:
    """The roots' values in ``order`` and the table of their judgments sorted by it."""
    policy = Policy(model_observation=config.policy.model_observation)
    judges = [j.name for j in config.panel.judges]
    values = root_values(
        data.table,
        order,
        len(order),
        judges,
        config.panel.trials,
        policy,
        config.humans.judgments_per_root,
        refused,
    )
    admitted_set = set(order)
    keep = np.array([r in admitted_set for r in data.table.roots] + [False], bool)
    table = data.table.take(np.flatnonzero(keep[data.table.root_code]))
    return values, table.sorted_by(order), policy


def study_evidence(config: StudyConfig, prep: StudyPrepared) -> FileEvidence:
    """The study's data as an evidence source: the roots its files (and a live study's ledger)
    entered, valued under its policy."""
    files = [f"{f.path} ({f.format})" for f in prep.data.files if f.role in ("judgments", "live")]
    return FileEvidence(
        prep.values,
        prep.table,
        [j.name for j in config.panel.judges],
        config.panel.trials,
        prep.policy,
        config.humans.judgments_per_root,
        "study data: " + ", ".join(files),
    )


def _row_costs(
    table: JudgmentTable, config: StudyConfig, limit_rank: int, order: Sequence[str]
) -> tuple[dict[str, float], dict[str, int]]:
    """Model and human spend (a row's own cost, else the configured price) on the roots up to
    ``limit_rank`` of ``order``."""
    price = {j.name: j.cost_per_judgment for j in config.panel.judges}
    rank_of = {r: k for k, r in enumerate(order)}
    rank = np.array([rank_of.get(r, -1) for r in table.roots] + [-1], np.int64)[table.root_code]
    fallback = np.array(
        [price.get(r, config.humans.cost_per_judgment) for r in table.raters] + [0.0]
    )[table.rater_code]
    cost = np.where(np.isnan(table.cost), fallback, table.cost)
    inside = (rank >= 0) & (rank < limit_rank)
    out_cost, out_n = {}, {}
    for name, kind in (("model", 0), ("human", 1)):
        sel = inside & (table.rater_kind == kind)
        out_cost[name] = float(cost[sel].sum())
        out_n[name] = int(sel.sum())
    return out_cost, out_n


def _costs(
    config: StudyConfig, prep: StudyPrepared, values: RootValues, roots_run: int, readings: int
) -> tuple[CostLine, ...]:
    entered = values.root_ids
    a = config.data.reader_audit
    reading_cost = 0.0 if a is None else readings * a.cost_per_reading
    lines: list[CostLine] = []
    for route, limit in (("to the registered verdict", roots_run), ("all data", len(entered))):
        spend, n = _row_costs(prep.table, config, limit, entered)
        rows = [
            CostLine(route, "model judgments", exact(n["model"]), exact(spend["model"])),
            CostLine(route, "human judgments", exact(n["human"]), exact(spend["human"])),
            CostLine(route, "reader audit readings", exact(readings), exact(reading_cost)),
        ]
        lines.extend(with_total(route, rows))
    return tuple(lines)


def _stop_reason(
    registered: TrackResult,
    roots_run: int,
    cap: int,
    valid: bool,
    live_stop: str | None = None,
    budget: float | None = None,
) -> str:
    if not valid:
        return "instrument invalid: the reader audit's kappa is below the gate"
    if registered.verdict == Verdict.INCONCLUSIVE.value:
        if roots_run >= cap:
            return f"cap reached ({cap:,} roots) without a verdict"
        if live_stop == "budget":
            return f"the judges' budget ({budget!r}) would not cover the next call: stopped at it"
        if live_stop == "failed":
            return "the live run stopped on an endpoint error (rerun to resume)"
        if live_stop == "interrupted":
            return "interrupted (rerun to resume)"
        return "the data ran out without a verdict"
    return f"verdict reached at root {registered.roots_at_verdict}"


def _streamed(trace: TrackTrace | None, values: RootValues) -> TrackTrace | None:
    """A live study's streamed trace, held to the roots' values as its ledger's answers give
    them (the values it committed, root by root, must be those; a probability's sums may differ
    in the last bits by their order)."""
    if trace is None:
        return None
    want = (values.m_lo, values.m_hi, values.h_lo, values.h_hi)
    pairs = zip(trace.values, want, strict=True)
    same = trace.n == want[0].size and all(
        np.allclose(a, b, rtol=0.0, atol=1e-12, equal_nan=True) for a, b in pairs
    )
    if not same:
        raise InputError(
            "the live study's committed roots",
            "the values M_i, H_i its ledger's answers and the files give",
            "other values streamed to the tracks",
        )
    return trace


def _evidence_trail(values: RootValues, trace: TrackTrace) -> EvidenceTrail:
    """The evidence.jsonl rows as columns: each root's values, the registered track's bounds
    and interval after it, the comparison interval and every track's state."""
    b = trace.bounds["registered"]
    stop = trace.stop
    return EvidenceTrail(
        root_ids=tuple(values.root_ids),
        m_lo=values.m_lo,
        m_hi=values.m_hi,
        h_lo=values.h_lo,
        h_hi=values.h_hi,
        model_judgments=values.model_judgments,
        human_judgments=values.human_judgments,
        model_bounds=b[:, 0:2],
        human_bounds=b[:, 2:4],
        diff_bounds=2.0 * b[:, 4:6] - 1.0 if b.shape[1] > 4 else None,
        h_interval=np.column_stack([trace.h_lo["registered"], trace.h_hi["registered"]]),
        comparison_h_interval=np.column_stack([trace.h_lo["comparison"], trace.h_hi["comparison"]]),
        states={name: tuple(trace.labels(name).tolist()) for name in TRACKS},
        stop=-1 if stop is None else stop,
    )


def _continuation(
    config: StudyConfig,
    values: RootValues,
    report: JudgesReport,
    construct: Construct,
    sequential: Any,
    refusals: Refusals,
) -> RootsToGo | None:
    if report.fitted_panel is None or values.coverage.roots_entered == 0:
        return None
    panel = build_panel(PanelSpec.model_validate(report.fitted_panel))
    has_h = ~np.isnan(values.h)
    human_rate = float(np.mean(values.h[has_h])) if has_h.any() else 0.5
    if config.humans.judgments_per_root is not None:
        n_h = config.humans.judgments_per_root
    elif has_h.any():
        n_h = int(np.bincount(values.human_judgments[has_h]).argmax())
    else:
        n_h = 1
    with refusals.at(("planning",), "the roots-to-go simulation"):
        return roots_to_go(
            values.m_lo,
            values.h_lo,
            sequential.construction,
            construct.per_tail_alpha,
            sequential.spec,
            construct.governing_threshold_h,
            panel,
            human_rate,
            max(1, n_h),
            float(has_h.mean()),
            config.planning.replicates,
            config.planning.max_extra_roots,
            stream(config.seed, "study/roots-to-go"),
            effect_scale=1.0 if report.human_rate is not None else 0.0,
            prefix_m_upper=values.m_hi,
            prefix_h_upper=values.h_hi,
            bets=sequential.bets,
            horizon=sequential.cap_roots,
        )


def run_study(
    config: StudyConfig,
    source: ConfigSource,
    options: RunOptions | None = None,
    *,
    prep: StudyPrepared | None = None,
    live: CommittedEvidence | None = None,
    trace: TrackTrace | None = None,
) -> StudyResult:
    """Read the data, gate, order and value them (:func:`prepare_study`, unless ``prep`` holds
    them already), run the tracks, estimate the judges (module doc).

    A live study hands over the study it read (``prep``), its ledger's evidence (``live``) and
    the tracks' trace it streamed while committing those roots (``trace``,
    :class:`~verdictpack.core._tracks.TrackStream`): the result is that of the committed prefix,
    nothing read again and the tracks not run again, with why the run stopped and the ledger's
    hash chain as it left it (``settings.ledger_chain`` in provenance, outside the ledger)."""
    refusals = Refusals(source)
    construct = compile_construct(config.construct_spec)
    sequential = build_sequential(config.sequential)
    tick = report_progress(options, "study: data read, tracks run, judges fitted")
    if prep is None:
        prep = prepare_study(config, source)
    if live is not None:
        prep = _with_committed(config, prep, live)
    if tick is not None:
        tick(1, 3)
    values = prep.values
    evidence = study_evidence(config, prep)
    audit = prep.audit
    n = len(values.root_ids)
    widths: tuple[float, float] | None = None
    streamed, trace = trace, None
    trail = EvidenceTrail.empty(TRACKS)  # an invalid instrument enters no root
    valid = None if audit is None else audit.passed
    if valid is not False:
        trace = _streamed(streamed, values)
        with refusals.at(
            ("sequential",),
            "the sequential trackers",
            params={
                "alpha": ("construct", "per_tail_alpha"),
                "threshold": governing_loc(construct),
            },
        ):
            tracks = sequential.tracks(construct)
            if trace is None:  # the files' evidence through the tracks, as one block
                stream = TrackStream(tracks, sequential.cap_roots, (), ())
                by_id = {s.id: s for s in prep.data.stimuli}
                feed_evidence(evidence, [by_id[r] for r in values.root_ids], stream)
                trace = stream.trace()
            if trace.bounded and n:
                mid = TrackTrace(tracks, values.m, values.h, sequential.cap_roots)
                widths = (
                    float(trace.h_hi["registered"][-1] - trace.h_lo["registered"][-1]),
                    float(mid.h_hi["registered"][-1] - mid.h_lo["registered"][-1]),
                )
        at_stop = trace.at_stop("NO_VERDICT_WHEN_REGISTERED_STOPPED")
        all_data = trace.over_all(Verdict.INCONCLUSIVE.value)
        trail = _evidence_trail(values, trace)
        levels = trace
    else:
        invalid = Verdict.INSTRUMENT_INVALID.value
        with refusals.at(("sequential",), "the sequential trackers"):
            none = np.zeros(0)  # no root enters: the tracks' levels only
            probe = TrackTrace(sequential.tracks(construct), none, none, sequential.cap_roots)
        at_stop = probe.over_all(invalid)
        all_data = probe.over_all(invalid)
        levels = probe
    hybrid = next((a for a in levels.track_alphas.values() if "diff" in a), None)
    reg = at_stop["registered"]
    roots_run = 0 if trace is None or trace.stop is None else trace.stop + 1
    if tick is not None:
        tick(2, 3)
    report = judges_report(config, prep.table, prep.policy, values.root_ids)
    if tick is not None:
        tick(3, 3)
    to_go = None
    if valid is not False and reg.verdict == Verdict.INCONCLUSIVE.value:
        to_go = _continuation(config, values, report, construct, sequential, refusals)
    description = evidence.description
    order_text = (
        f"keyed hash of each root id under the seed ({ORDER_DOMAIN})"
        if config.data.root_order is None
        else f"registered order file {config.data.root_order}"
    )
    gc = prep.gate_counts
    refused_pairs = tuple({"id": rid, "failed": list(gc.failed[rid])} for rid in sorted(gc.refused))
    gates = GateReport(
        gates=gc.gates,
        off=tuple(config.gates.off),
        settings=prep.gate_settings,
        total=gc.total,
        admitted=len(gc.admitted),
        refused=len(gc.refused),
        refusals=dict(gc.refusals),
        first_failing=dict(gc.first_failing),
        refused_pairs=refused_pairs,
    )
    settings = {
        **sequential_record(sequential),
        "per_tail_alpha": construct.per_tail_alpha,
        "stream_alphas": levels.stream_alphas,
        "hybrid_alphas": None if hybrid is None else [hybrid["model"], hybrid["diff"]],
        "error_per_side": levels.error_per_side["registered"],
        "cap_roots": sequential.cap_roots,
        "evidence_source": description,
        "root_order": order_text,
        "policy": config.policy.model_dump(),
        "data_files": [
            {"role": f.role, "path": f.path, "format": f.format, "sha256": f.sha256}
            for f in prep.data.files
        ],
    }
    prompts = {
        j.name: prompt_record(effective_prompt(j.endpoint.prompt))
        for j in config.panel.judges
        if j.endpoint is not None
    }
    if prompts:
        settings["prompts"] = prompts
    if live is not None:
        settings["ledger_chain"] = {"length": live.chain[0], "head": live.chain[1]}
    return StudyResult(
        kind="study",
        construct=construct,
        seed=config.seed,
        evidence_source=description,
        panel_name=config.panel.name,
        judges=tuple(j.name for j in config.panel.judges),
        trials=config.panel.trials,
        humans_per_root=config.humans.judgments_per_root,
        policy=config.policy.model_dump(),
        construction=sequential.construction,
        comparison_construction=sequential.other_construction(),
        cap_roots=sequential.cap_roots,
        root_order=order_text,
        data_files=prep.data.files,
        import_notes=prep.data.notes,
        gates=gates,
        coverage=values.coverage,
        estimate=study_estimate(values, prep.policy, construct, widths),
        audit=audit,
        audit_status="not_run" if valid is None else ("passed" if valid else "failed"),
        instrument_valid=valid,
        registered=at_stop["registered"],
        extension=at_stop["extension"],
        comparison=at_stop["comparison"],
        all_data=all_data,
        roots_run=int(roots_run),
        roots_available=n,
        stop_reason=_stop_reason(
            reg,
            int(roots_run),
            sequential.cap_roots,
            valid is not False,
            None if live is None else live.stop,
            config.budget.judges,
        ),
        judges_report=report,
        roots_to_go=to_go,
        costs=_costs(config, prep, values, int(roots_run), len(prep.data.readings)),
        currency=config.currency,
        prompts=prompts,
        evidence=trail,
        provenance=provenance(source, "study", config.seed, settings),
        table=prep.table,
        readings=prep.data.readings,
        order=prep.order,
    )


def _run(config: StudyConfig, source: ConfigSource, options: RunOptions) -> StudyResult:
    return run_study(config, source, options)


LAYER = Layer(
    kind="study",
    summary="your stimuli, judgments and annotations in: gates, registered order, verdict",
    model=StudyConfig,
    rules=RULES,
    run=_run,
)
