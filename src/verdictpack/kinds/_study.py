"""The study (kind ``study``): the user's own stimuli, judgments and annotations in, a verdict out.

One run, data flowing one way:

1. **Read** every data file the config names, by paths relative to the config's own folder:
   the pairs (:func:`~verdictpack.stimuli.read_pairs`), the judgment files (each by its
   format into one canonical table), the double readings of the reader audit, and an optional
   registered order. Every defect of every file is collected (file and line, or JSON path);
   any defect refuses the study before a number is computed.
2. **Gates** on every pair (length, fragments, content overlap, diff budget); refused pairs are
   listed by id with the gates that refused them, never silently dropped.
3. **Order**: the admitted roots in the registered order -- a keyed hash of each id under the
   seed (:mod:`verdictpack.evidence._order`), or the order file -- fixed before any judgment is
   read; the table is sorted by it.
4. **Values**: M_i and H_i per root under the declared policy for ties, invalid and missing
   judgments (:mod:`verdictpack.evidence._assemble`).
5. **Reader audit**: Cohen's kappa of the double readings with its interval; below the gate the
   verdict is INSTRUMENT_INVALID and no preference claim is evaluated.
6. **Sequential verdict**: the roots, in the registered order, through the registered, extension
   and comparison tracks (:class:`~verdictpack.core._tracks.TrackRun`). The registered verdict is
   the first one reached (at the cap, or when the data run out: INCONCLUSIVE); the tracks then
   read on to the end of the data already paid for, which gives the interval over all of it.
7. **Judges as the data show them**: each judge's rate, position bias and agreement (with the
   other judges and with the humans), the panel's latent correlation and effective size, and
   the fitted panel as a config block (with its values as estimated and each clip the
   simulator needed, named by field). The rates' and position biases' intervals take the root
   as the unit, with each judge's design effect beside them (core._estimates). When the
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
import hashlib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import numpy as np

from verdictpack._errors import ConfigError, Defect, InputError
from verdictpack._parallel import Background, in_background
from verdictpack._results import BULK, Quantity, exact
from verdictpack._rng import stream
from verdictpack.config._blocks import PanelSpec, SequentialSettings, build_sequential
from verdictpack.config._compiler import (
    ConfigSource,
    Construct,
    compile_construct,
    json_path,
)
from verdictpack.config._provenance import Provenance, provenance
from verdictpack.config._refusals import Refusals, governing_loc
from verdictpack.core._agreement import AuditDecision, AuditGate, KappaResult, cohens_kappa
from verdictpack.core._estimates import (
    PanelEstimates,
    clustered_rate,
    estimate_panel,
    reader_audit_from_readings,
)
from verdictpack.core._hinterval import Verdict
from verdictpack.core._mixture import MixtureSpec
from verdictpack.core._scales import phi
from verdictpack.core._tracks import TRACKS, TrackResult, TrackRun, TrackTrace
from verdictpack.evidence._assemble import (
    Coverage,
    Policy,
    RootValues,
    check_study_table,
    root_values,
)
from verdictpack.evidence._files import read_inside, read_judgment_file
from verdictpack.evidence._order import ORDER_DOMAIN, read_order_file, registered_order
from verdictpack.evidence._readings import Readings, read_readings
from verdictpack.evidence._table import RATER_KINDS, JudgmentTable
from verdictpack.evidence._trail import EvidenceTrail
from verdictpack.kinds._base import Layer, RunOptions, report_progress
from verdictpack.kinds._study_config import RULES, StudyConfig
from verdictpack.simulate._continuation import RootsToGo, roots_to_go
from verdictpack.simulate._fitted import fitted_panel_record
from verdictpack.simulate._panels import build_panel
from verdictpack.stimuli._gates import Gate
from verdictpack.stimuli._pairs import read_pairs, root_id_problem
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
    "track_claims",
    "track_run",
]

# ----------------------------------------------------------------------------------------------
# Reading the data
# ----------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class DataFile:
    """One data file read: its role, its path as the config names it, its bytes' SHA-256."""

    role: str
    path: str
    format: str
    sha256: str
    bytes: int
    records: int


@dataclass(frozen=True)
class StudyData:
    """Every data file of a study, read and checked (nothing computed yet)."""

    files: tuple[DataFile, ...]
    stimuli: tuple[Stimulus, ...]
    table: JudgmentTable
    readings: Readings
    order_file: tuple[str, ...] | None
    # the gates' counts, when load_study was given the gates (computed while it read on)
    gate_counts: GateCounts | None = None
    # what the files held that gave no judgment and is no defect (e.g. unanswered records)
    notes: tuple[str, ...] = ()


class _Files:
    """Reads the config's data files inside its folder, once each, and collects every defect."""

    def __init__(self, source: ConfigSource) -> None:
        self.source = source
        self.defects: list[Defect] = []
        self.files: list[DataFile] = []
        self.notes: list[str] = []

    def resolve(self, loc: tuple[str | int, ...], rel: str) -> tuple[Path, bytes] | None:
        """The file's path and bytes (:func:`~verdictpack.evidence._files.read_inside`: a
        regular file inside the config's folder), or None with a defect at the config field."""
        folder = self.source.folder
        if folder is None:
            self.defects.append(
                Defect(self.source.display, json_path(loc), rel, "a config read from a file")
            )
            return None
        found = read_inside(folder, rel)
        if isinstance(found, str):
            self.defects.append(Defect(self.source.display, json_path(loc), rel, found))
            return None
        return found

    def record(self, role: str, rel: str, fmt: str, data: bytes, records: int) -> None:
        """The file's entry in provenance: the SHA-256 of the very bytes parsed."""
        sha = hashlib.sha256(data).hexdigest()
        self.files.append(DataFile(role, rel, fmt, sha, len(data), records))

    def check_roots(self, name: str, table: JudgmentTable) -> None:
        """A defect at the first row of each root id of ``table`` with white space at either
        end or a control character (root_order.txt and the outputs hold one id a line)."""
        for code, root in enumerate(table.roots):
            problem = root_id_problem(root)
            if problem is None:
                continue
            first = int(np.flatnonzero(table.root_code == code)[0])
            origin = table.origin(first)
            place = origin.where if origin is not None and origin.where else "(file)"
            self.defects.append(Defect(name, place, root, f"{problem} (root_id)"))


_FILE_KEYS = ("format", "path")


def _in_file_order(defects: Sequence[Defect]) -> list[Defect]:
    """Defects grouped by file (in the order the files were read), each file's by line."""
    rank: dict[str, int] = {}
    for d in defects:
        rank.setdefault(d.file, len(rank))

    def line(d: Defect) -> int:
        tail = d.path[5:] if d.path.startswith("line ") else ""
        return int(tail) if tail.isdigit() else (0 if d.path != "(more)" else 1 << 62)

    return sorted(defects, key=lambda d: (rank[d.file], line(d)))


def load_study(
    config: StudyConfig, source: ConfigSource, gates: Sequence[Gate] | None = None
) -> StudyData:
    """Read every data file of the study; ConfigError listing every defect of every file.

    Given ``gates``, the gates run on the pairs as soon as they are read, in a forked child
    (:func:`verdictpack._parallel.in_background`) while the judgment files are read here; the
    counts are the same as ``gate_counts(stimuli, gates)`` afterwards (the call itself, when no
    child can run it), and an error it raises surfaces as that call raises it."""
    started: list[Background[GateCounts]] = []
    try:
        data = _load_study(config, source, gates, started)
    except BaseException:
        for job in started:
            job.cancel()
        raise
    if not started:
        return data
    return replace(data, gate_counts=started[0].result())


def _load_study(
    config: StudyConfig,
    source: ConfigSource,
    gates: Sequence[Gate] | None,
    started: list[Background[GateCounts]],
) -> StudyData:
    refusals = Refusals(source)
    files = _Files(source)
    d = config.data
    stimuli: tuple[Stimulus, ...] = ()
    stim_loc = ("data", "stimuli", "path")
    stim_file = files.resolve(stim_loc, d.stimuli.path)
    stimuli_read = False
    if stim_file is not None:
        stim_path, stim_data = stim_file
        mapping = d.stimuli.mapping.model_dump()
        with refusals.at(("data", "stimuli", "mapping"), "the pair file reader"):
            try:
                pairs = read_pairs(stim_path, mapping, display=d.stimuli.path, data=stim_data)
            except InputError as exc:
                if exc.parameter != "path":
                    raise
                files.defects.append(
                    Defect(source.display, json_path(stim_loc), d.stimuli.path, exc.allowed)
                )
                pairs = None
        if pairs is not None:
            files.defects.extend(pairs.defects)
            stimuli = pairs.stimuli
            stimuli_read = not pairs.defects
            if stimuli_read and gates is not None:
                started.append(in_background(functools.partial(gate_counts, stimuli, gates)))
            files.record("stimuli", d.stimuli.path, stim_path.suffix[1:], stim_data, len(stimuli))
    tables: list[JudgmentTable] = []
    for k, spec in enumerate(d.judgments):
        loc: tuple[str | int, ...] = ("data", "judgments", k)
        judgment_file = files.resolve((*loc, "path"), spec.path)
        if judgment_file is None:
            continue
        path, raw = judgment_file
        options = {
            key: value
            for key, value in spec.model_dump().items()
            if key not in _FILE_KEYS and value is not None
        }
        params = {key: (*loc, key) for key in options}
        params.update({"mapping['order']": (*loc, "mapping"), "value_maps": (*loc, "value_maps")})
        with refusals.at(loc, f"the {spec.format} importer", params=params):
            table, found = read_judgment_file(
                spec.format, path, spec.path, options, raw, files.notes
            )
        files.defects.extend(found)
        files.check_roots(spec.path, table)
        tables.append(table)
        files.record("judgments", spec.path, spec.format, raw, len(table))
    table = JudgmentTable.concat(tables)
    a = d.reader_audit
    readings = Readings((), (), (), ())
    audit_file = files.resolve(("data", "reader_audit", "path"), a.path)
    if audit_file is not None:
        audit_path, audit_data = audit_file
        readings, found = read_readings(audit_path, a.mapping.model_dump(), a.path, audit_data)
        files.defects.extend(found)
        files.record("reader_audit", a.path, audit_path.suffix[1:], audit_data, len(readings))
        if a.categories is not None:
            allowed = set(a.categories)
            for line, cat in zip(readings.lines, readings.category, strict=True):
                if cat not in allowed:
                    files.defects.append(
                        Defect(a.path, f"line {line}", cat, "one of " + ", ".join(a.categories))
                    )
    order_file: tuple[str, ...] | None = None
    if d.root_order is not None:
        order_read = files.resolve(("data", "root_order"), d.root_order)
        if order_read is not None:
            known = {s.id for s in stimuli} if stimuli_read else None
            order_file, found = read_order_file(order_read[0], d.root_order, known, order_read[1])
            files.defects.extend(found)
            files.record("root_order", d.root_order, "text", order_read[1], len(order_file))
    if stimuli_read:
        judges = [j.name for j in config.panel.judges]
        files.defects.extend(
            check_study_table(
                table, [s.id for s in stimuli], d.stimuli.path, judges, config.panel.trials
            )
        )
    if files.defects:
        raise ConfigError(_in_file_order(files.defects))
    return StudyData(
        tuple(files.files), stimuli, table, readings, order_file, notes=tuple(files.notes)
    )


# ----------------------------------------------------------------------------------------------
# Result objects
# ----------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class GateReport:
    """What the gates did to the pairs: counts per gate and first failing, refused ids."""

    gates: tuple[str, ...]
    settings: dict[str, Any]
    total: int
    admitted: int
    refused: int
    refusals: dict[str, int]
    first_failing: dict[str, int]
    refused_pairs: tuple[dict[str, Any], ...]


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


@dataclass(frozen=True)
class StudyCost:
    route: str
    line: str
    touches: Quantity
    cost: Quantity


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
    audit: AuditDecision
    instrument_valid: bool
    registered: TrackResult
    extension: TrackResult
    comparison: TrackResult
    all_data: dict[str, TrackResult]
    roots_run: int
    roots_available: int
    stop_reason: str
    judges_report: JudgesReport
    roots_to_go: RootsToGo | None
    costs: tuple[StudyCost, ...]
    currency: str
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
    audit: AuditDecision | None = None


def _reader_audit(config: StudyConfig, refusals: Refusals, readings: Readings) -> AuditDecision:
    """Cohen's kappa of the double readings through the gate (stage 5); refused by name when
    the readings cannot give one (none, or an empty file)."""
    a = config.data.reader_audit
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
    g = config.gates
    settings = g.model_dump()
    with refusals.at(("gates",), "the gates"):
        gates = real_text_gates(**settings)
    return gates, settings


def prepare_study(
    config: StudyConfig,
    source: ConfigSource,
    extra: JudgmentTable | None = None,
    roots: Sequence[str] | None = None,
) -> StudyPrepared:
    """Read, gate, order and value the study (stages 1-4 of the module docstring).

    A live study adds the judgments its ledger holds (``extra``) and restricts the roots to its
    committed prefix (``roots``, a prefix of the registered order)."""
    refusals = Refusals(source)
    gates, settings = _gates(config, refusals)
    data = load_study(config, source, gates)
    if extra is not None:
        raw = extra.to_csv_bytes()
        live = DataFile(
            "live",
            "ledger.sqlite",
            "live judges",
            hashlib.sha256(raw).hexdigest(),
            len(raw),
            len(extra),
        )
        data = replace(
            data,
            table=JudgmentTable.concat([data.table, extra]),
            files=(*data.files, live),
        )
    counts = data.gate_counts if data.gate_counts is not None else gate_counts(data.stimuli, gates)
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
    if roots is not None:
        if tuple(roots) != order[: len(roots)]:
            raise InputError("roots", "a prefix of the registered order", list(roots)[:3])
        order = tuple(roots)
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
        counts.refused,
    )
    admitted_set = set(order)
    keep = np.array([r in admitted_set for r in data.table.roots] + [False], bool)
    table = data.table.take(np.flatnonzero(keep[data.table.root_code]))
    table = table.sorted_by(order)
    audit = _reader_audit(config, refusals, data.readings)
    return StudyPrepared(data, counts, settings, order, values, table, policy, audit)


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


def _judges_report(
    config: StudyConfig, prep: StudyPrepared, entered: Sequence[str]
) -> JudgesReport:
    table, policy = prep.table, prep.policy
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
            judges=names,
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
) -> tuple[StudyCost, ...]:
    entered = values.root_ids
    reading_cost = readings * config.data.reader_audit.cost_per_reading
    lines: list[StudyCost] = []
    for route, limit in (("to the registered verdict", roots_run), ("all data", len(entered))):
        spend, n = _row_costs(prep.table, config, limit, entered)
        rows = [
            StudyCost(route, "model judgments", exact(n["model"]), exact(spend["model"])),
            StudyCost(route, "human judgments", exact(n["human"]), exact(spend["human"])),
            StudyCost(route, "reader audit readings", exact(readings), exact(reading_cost)),
        ]
        total_t = sum(float(c.touches.value) for c in rows)
        total_c = sum(float(c.cost.value) for c in rows)
        lines.extend([*rows, StudyCost(route, "total", exact(total_t), exact(total_c))])
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
        )


def track_claims(construct: Construct) -> dict[str, str]:
    """Each track's claim: the registered claim, the extension claim, the registered again."""
    return {
        "registered": construct.registered_claim,
        "extension": construct.extension_claim,
        "comparison": construct.registered_claim,
    }


def track_run(construct: Construct, sequential: SequentialSettings) -> TrackRun:
    """The three streaming trackers of a study (a live study's, or a probe of the settings)."""
    return TrackRun(*_track_settings(construct, sequential))


def _track_settings(
    construct: Construct, sequential: SequentialSettings
) -> tuple[str, str, float, MixtureSpec, float, float, dict[str, str]]:
    """The three tracks' settings, as TrackRun and TrackTrace both take them first: the
    registered and other construction, alpha per tail, the mixture, both thresholds, the claims."""
    return (
        sequential.construction,
        sequential.other_construction(),
        construct.per_tail_alpha,
        sequential.spec,
        construct.governing_threshold_h,
        construct.extension_minimum_h,
        track_claims(construct),
    )


def run_study(
    config: StudyConfig,
    source: ConfigSource,
    options: RunOptions | None = None,
    *,
    extra: JudgmentTable | None = None,
    roots: Sequence[str] | None = None,
    stop: str | None = None,
    ledger_chain: Mapping[str, Any] | None = None,
) -> StudyResult:
    """Read the data, gate, order, value, run the tracks, estimate the judges (module doc).

    ``extra``, ``roots``: a live study's ledger judgments and committed prefix
    (:func:`prepare_study`); ``stop``: why its live run stopped (``budget``, ``failed``...);
    ``ledger_chain``: its ledger's hash chain as the run left it (length and last link),
    recorded in provenance (``settings.ledger_chain``) outside the ledger."""
    refusals = Refusals(source)
    construct = compile_construct(config.construct_spec)
    sequential = build_sequential(config.sequential)
    tick = report_progress(options, "study: data read, tracks run, judges fitted")
    prep = prepare_study(config, source, extra, roots)
    if tick is not None:
        tick(1, 3)
    values = prep.values
    audit = prep.audit
    if audit is None:  # pragma: no cover - prepare_study always decides it
        audit = _reader_audit(config, refusals, prep.data.readings)
    n = len(values.root_ids)
    widths: tuple[float, float] | None = None
    trace: TrackTrace | None = None
    trail = EvidenceTrail.empty(TRACKS)  # an invalid instrument enters no root
    if audit.passed:
        with refusals.at(
            ("sequential",),
            "the sequential trackers",
            params={
                "alpha": ("construct", "per_tail_alpha"),
                "threshold": governing_loc(construct),
            },
        ):
            trace = TrackTrace(
                *_track_settings(construct, sequential),
                values.m_lo,
                values.h_lo,
                sequential.cap_roots,
                m_upper=values.m_hi,
                h_upper=values.h_hi,
            )
            if trace.bounded and n:
                mid = TrackTrace(
                    *_track_settings(construct, sequential),
                    values.m,
                    values.h,
                    sequential.cap_roots,
                )
                widths = (
                    float(trace.h_hi["registered"][-1] - trace.h_lo["registered"][-1]),
                    float(mid.h_hi["registered"][-1] - mid.h_lo["registered"][-1]),
                )
        at_stop = trace.at_stop("NO_VERDICT_WHEN_REGISTERED_STOPPED")
        all_data = trace.over_all(Verdict.INCONCLUSIVE.value)
        trail = _evidence_trail(values, trace)
        stream_alphas = trace.stream_alphas
        error_per_side = trace.error_per_side["registered"]
        hybrid = next((a for a in trace.track_alphas.values() if "diff" in a), None)
    else:
        invalid = Verdict.INSTRUMENT_INVALID.value
        with refusals.at(("sequential",), "the sequential trackers"):
            probe = track_run(construct, sequential)
        at_stop = probe.results(invalid)
        all_data = probe.results(invalid)
        stream_alphas = probe.registered.stream_alphas
        error_per_side = probe.registered.error_per_side
        hybrid = next(
            (t.stream_alphas for t in probe.trackers.values() if "diff" in t.stream_alphas), None
        )
    reg = at_stop["registered"]
    roots_run = 0 if trace is None or trace.stop is None else trace.stop + 1
    if tick is not None:
        tick(2, 3)
    report = _judges_report(config, prep, values.root_ids)
    if tick is not None:
        tick(3, 3)
    to_go = None
    if audit.passed and reg.verdict == Verdict.INCONCLUSIVE.value:
        to_go = _continuation(config, values, report, construct, sequential, refusals)
    files = [f"{f.path} ({f.format})" for f in prep.data.files if f.role in ("judgments", "live")]
    description = "study data: " + ", ".join(files)
    order_text = (
        f"keyed hash of each root id under the seed ({ORDER_DOMAIN})"
        if config.data.root_order is None
        else f"registered order file {config.data.root_order}"
    )
    gc = prep.gate_counts
    refused_pairs = tuple({"id": rid, "failed": list(gc.failed[rid])} for rid in sorted(gc.refused))
    gates = GateReport(
        gates=gc.gates,
        settings=prep.gate_settings,
        total=gc.total,
        admitted=len(gc.admitted),
        refused=len(gc.refused),
        refusals=dict(gc.refusals),
        first_failing=dict(gc.first_failing),
        refused_pairs=refused_pairs,
    )
    settings = {
        "construction": sequential.construction,
        "comparison_construction": sequential.other_construction(),
        "lambdas": list(sequential.spec.lambdas),
        "weights": list(sequential.spec.weights or ()),
        "per_tail_alpha": construct.per_tail_alpha,
        "stream_alphas": stream_alphas,
        "hybrid_alphas": None if hybrid is None else [hybrid["model"], hybrid["diff"]],
        "error_per_side": error_per_side,
        "cap_roots": sequential.cap_roots,
        "evidence_source": description,
        "root_order": order_text,
        "policy": config.policy.model_dump(),
        "data_files": [
            {"role": f.role, "path": f.path, "format": f.format, "sha256": f.sha256}
            for f in prep.data.files
        ],
    }
    if ledger_chain is not None:
        settings["ledger_chain"] = dict(ledger_chain)
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
        instrument_valid=audit.passed,
        registered=at_stop["registered"],
        extension=at_stop["extension"],
        comparison=at_stop["comparison"],
        all_data=all_data,
        roots_run=int(roots_run),
        roots_available=n,
        stop_reason=_stop_reason(
            reg, int(roots_run), sequential.cap_roots, audit.passed, stop, config.budget.judges
        ),
        judges_report=report,
        roots_to_go=to_go,
        costs=_costs(config, prep, values, int(roots_run), len(prep.data.readings)),
        currency=config.currency,
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
