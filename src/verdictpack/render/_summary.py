"""The summary every report opens with: at most five lines, the answer first.

:func:`summary_lines` returns, for one result object, up to :data:`MAX_LINES` lines of inline
Markdown (``**bold**`` and ```code``` names only: no tables, links or line breaks), chosen by the
result's type in :data:`SUMMARIES` (one registry, like ``RENDERERS``). Each line starts with a
fixed lead word (the self-audit renders the report again from results.json and compares it
byte for byte). What each kind says:

- a run on evidence (engine, study): the registered verdict, the root it was reached at and its
  h-interval against the threshold; what the evidence was (a simulated world named as such, with
  its true h, or the study's data files / live judges); the cost with its currency; for the
  engine, the design's P(a verdict within the cap) at the planning effect;
- a design (verdict, judges, battery): its size, P(a verdict within the cap) at the planning effect
  (the smallest simulated true h above the threshold) with its cost, the false-verdict rate where
  there is no effect, and that the evidence is simulated;
- a sizing: the sizes, the power they reach and that nothing is spent.

Wherever a simulated world does not sit where its name says (the result's ``worlds`` entries with
``departs``), a ``Simulated worlds`` line says so and gives each one's true h (closed form).
Every number is a field of the result, formatted as in the detail below; nothing is recomputed.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from verdictpack.kinds._battery import BatteryResult
from verdictpack.kinds._engine import EngineResult
from verdictpack.kinds._judges import JudgesResult
from verdictpack.kinds._sizing import (
    BinomialArmResult,
    SizingResult,
    TArmResult,
    TwoProportionArmResult,
)
from verdictpack.kinds._study import StudyResult
from verdictpack.kinds._verdict import VerdictResult
from verdictpack.kinds._worlds import WORLD_TOLERANCE_H, NamedWorld
from verdictpack.render._markdown import (
    construct_block,
    fmt_count,
    fmt_interval,
    fmt_money,
    fmt_p,
    fmt_x,
    md_code,
    md_text,
    registered_for,
    route_label,
    table,
)
from verdictpack.simulate._operating import RouteOC, ScenarioOC

__all__ = [
    "MAX_LINES",
    "SUMMARIES",
    "WORLDS_LISTED",
    "report_head",
    "summary_block",
    "summary_lines",
    "worlds_line",
    "worlds_section",
]

MAX_LINES = 5
WORLDS_LISTED = 3  # departing worlds named in the summary line; the detail lists them all


def _currency(r: Any) -> str:
    cur = getattr(r, "currency", None)
    return f" {md_text(cur)}" if cur else " (currency not named)"


def _fig(q: Any) -> str:
    """A simulated probability as the summary prints it: value and MC s.e., 4 decimals."""
    return f"{float(q.value):.4f} (simulated, MC s.e. {q.mcse:.4f})"


def _verdict_line(reg: Any, tail: str) -> str:
    where = f" at root {reg.roots_at_verdict:,}" if reg.roots_at_verdict else ""
    # the tail says why the run stopped; "verdict reached at root N" only repeats ``where``
    why = "" if reg.roots_at_verdict and tail.startswith("verdict reached") else f"; {tail}"
    return (
        f"**Registered verdict: {reg.verdict}**{where} (h-interval {fmt_interval(reg.h_interval)} "
        f"against the threshold h = {fmt_x(reg.threshold_h)}){why}."
    )


def _registered_route(sc: ScenarioOC, construction: str) -> RouteOC:
    return sc.route("eprocess", construction)


def _planning(scenarios: Sequence[ScenarioOC], threshold: float) -> ScenarioOC | None:
    """The planning effect: the simulated world of smallest true h above the threshold (by more
    than the worlds' tolerance: power lives above the boundary, where a verdict is near-unreachable
    by construction)."""
    floor = threshold + WORLD_TOLERANCE_H
    above = [sc for sc in scenarios if sc.effect_exists and sc.true_h > floor]
    return min(above, key=lambda sc: sc.true_h) if above else None


def _planning_line(
    scenarios: Sequence[ScenarioOC], threshold: float, construction: str, r: Any
) -> str | None:
    sc = _planning(scenarios, threshold)
    if sc is None:
        return None
    e = _registered_route(sc, construction)
    return (
        f"Planning: at true h {fmt_x(sc.true_h)} (scenario {md_code(sc.scenario)}) this design "
        "reaches a "
        f"verdict within the cap of {e.cap:,} roots {float(e.p_verdict_issued.value):.4f} of the "
        f"time (simulated, MC s.e. {e.p_verdict_issued.mcse:.4f}), EFFECT_SUPPORTED "
        f"{float(e.p_verdict['EFFECT_SUPPORTED'].value):.4f}; mean cost per run "
        f"{fmt_money(e.mean_cost)}{_currency(r)}."
    )


def _null_line(scenarios: Sequence[ScenarioOC], construction: str) -> str | None:
    nulls = [sc for sc in scenarios if not sc.effect_exists]
    if not nulls:
        return None
    worst = max(
        nulls,
        key=lambda sc: float(
            _registered_route(sc, construction).p_verdict["EFFECT_SUPPORTED"].value
        ),
    )
    e = _registered_route(worst, construction)
    return (
        f"No effect: over the {len(nulls)} no-effect world(s) the registered {route_label(e)} "
        f"calls EFFECT_SUPPORTED at most {_fig(e.p_verdict['EFFECT_SUPPORTED'])} of the time, in "
        f"scenario {md_code(worst.scenario)} (true h {fmt_x(worst.true_h)})."
    )


def _world_text(w: NamedWorld) -> str:
    named = f"≥ {fmt_x(w.named_h)}" if w.at_least else fmt_x(w.named_h)
    return f"{md_text(w.where)} at true h {fmt_x(w.true_h)} (named {named})"


def worlds_line(worlds: Sequence[NamedWorld]) -> str | None:
    """The honest-worlds line: every world that misses its name (None when none does)."""
    off = [w for w in worlds if w.departs]
    if not off:
        return None
    shown = "; ".join(_world_text(w) for w in off[:WORLDS_LISTED])
    more = len(off) - WORLDS_LISTED
    return (
        f"Simulated worlds: **{len(off)} of {len(worlds)} not where their names say** (true h "
        f"closed form, from the judges' sheets; tolerance {fmt_x(off[0].tolerance)}): {shown}"
        + (f"; and {more} more (see the detail)" if more > 0 else "")
        + "."
    )


def _lines(*lines: str | None) -> tuple[str, ...]:
    out = tuple(line for line in lines if line)
    if len(out) > MAX_LINES:  # a programming error, never a user's input
        raise AssertionError(f"a summary has at most {MAX_LINES} lines, got {len(out)}")
    return out


# ----------------------------------------------------------------------------------------------
# one function per kind
# ----------------------------------------------------------------------------------------------


def _engine(r: EngineResult) -> tuple[str, ...]:
    reg = r.registered
    truth = next((w for w in r.worlds if w.where.startswith("the proof run's world")), None)
    simulated = r.evidence_source.startswith("simulated")
    if simulated:
        evidence = (
            f"Evidence: {md_text(r.evidence_source)}, a **simulated world** at true h "
            f"{fmt_x(r.truth_true_h)} (closed form; model rate {fmt_p(r.truth_mu_model)}, human "
            f"rate {fmt_p(r.truth_mu_human)})"
        )
        if truth is not None and truth.departs:
            evidence += f": **not where its name says** (named h {fmt_x(truth.named_h)})"
        evidence += "."
    else:
        evidence = f"Evidence: {md_text(r.evidence_source)}."
    total = next(c for c in r.costs if c.line == "total")
    cost = (
        f"Cost of this run: {fmt_money(total.cost)}{_currency(r)} for {fmt_count(total.touches)} "
        f"touches ({r.roots_run:,} of a cap of {r.effective_cap:,} roots run)."
    )
    others = [w for w in r.worlds if w is not truth]
    return _lines(
        _verdict_line(reg, "reader audit " + ("passed" if r.instrument_valid else "FAILED")),
        evidence,
        worlds_line(others),
        cost,
        _planning_line(r.power, r.construct.governing_threshold_h, r.construction, r),
    )


def estimate_line(r: StudyResult) -> str | None:
    """The study's point figures and what was bounded (None before any root entered)."""
    e = r.estimate
    if e.model_rate is None and e.human_rate is None:
        return None
    what = "answers given" if e.observation == "choice" else "label probabilities"
    line = (
        f"Estimate: h = {fmt_x(e.h_point)} from the judges' {what}, a point estimate (the "
        "verdict rests on the interval)"
    )
    if e.width_bounded is not None:
        line += (
            f"; {fmt_count(e.model_unknown)} model and {fmt_count(e.human_unknown)} human "
            f"answers unknown, bounded both ways (h-interval width {fmt_x(e.width_bounded)}; "
            f"{fmt_x(e.width_midpoint)} were each ½)"
        )
    if e.warning is not None:
        line += "; **the judges' label probabilities point elsewhere** (see Estimate)"
    return line + "."


_SETTLED = {
    "EFFECT_SUPPORTED": "settled: by at least h = {thr} more than the humans do",
    "BELOW_PRACTICAL_THRESHOLD": "settled: any excess over the humans is below h = {thr}",
    "NO_POSITIVE_EFFECT": "settled: not more than the humans do",
    "INSTRUMENT_INVALID": "not judged: the instrument failed its reader audit",
}


def plain_line(r: StudyResult) -> str | None:
    """One plain sentence: which way the judges lean against the humans, by how much, whether it
    is settled, and, when not, how many more roots would likely settle it (simulated)."""
    e, reg = r.estimate, r.registered
    if e.model_rate is None or e.human_rate is None:
        return None
    if e.model_rate > e.human_rate:
        lean = "more often than"
    elif e.model_rate < e.human_rate:
        lean = "less often than"
    else:
        lean = "exactly as often as"
    head = (
        f"In plain words: the judges prefer the treatment {lean} the humans do "
        f"({fmt_p(e.model_rate)} vs {fmt_p(e.human_rate)}; h = {fmt_x(e.h_point)})"
    )
    thr = fmt_x(reg.threshold_h)
    if reg.verdict in _SETTLED:
        return f"{head}; {_SETTLED[reg.verdict].format(thr=thr)}."
    tail = "; not settled at this size"
    g = r.roots_to_go
    if g is not None:
        med = g.median_extra_roots
        n = f"{g.max_extra_roots:,}"
        if med is None:
            tail += f": most simulated continuations reach no verdict within {n} more roots"
        else:
            tail += (
                f": half of the simulated continuations of the data reach a verdict within "
                f"{int(med.value):,} more roots, and P(a verdict within {n} more roots) = "
                f"{_fig(g.p_verdict)}"
            )
    return head + tail + "."


def _study(r: StudyResult) -> tuple[str, ...]:
    total = next(
        (c for c in r.costs if c.route == "to the registered verdict" and c.line == "total"), None
    )
    cost = None
    if total is not None:
        cost = (
            f"Cost to the registered verdict: {fmt_money(total.cost)}{_currency(r)} for "
            f"{fmt_count(total.touches)} touches."
        )
    verdict = _verdict_line(r.registered, r.stop_reason)
    if r.audit is None:
        verdict = verdict[:-1] + "; **instrument not validated (no reader audit)**."
    off = r.gates.off
    return _lines(
        verdict,
        plain_line(r),
        estimate_line(r),
        f"Evidence: {md_text(r.evidence_source)} — {r.roots_available:,} roots judged in the "
        f"registered order ({md_text(r.root_order)}); {r.roots_run:,} read to the registered "
        "verdict" + (f"; gates not applied (switched off): {', '.join(off)}" if off else "") + ".",
        cost,
    )


def _verdict(r: VerdictResult) -> tuple[str, ...]:
    return _lines(
        f"**Design, no verdict**: e-process ({r.construction}) capped at {r.cap_roots:,} roots, "
        f"{r.judges_per_root} judges × 2 orders and {r.human_judgments_per_root} human "
        f"judgment(s) per root, costing {fmt_money(r.cost_per_root)}{_currency(r)} a root; the "
        f"fixed-n test needs {r.fixed_n_roots:,} roots.",
        _planning_line(r.scenarios, r.construct.governing_threshold_h, r.construction, r),
        _null_line(r.scenarios, r.construction),
        f"Evidence: **simulated worlds only** ({len(r.scenarios)} scenario(s) × "
        f"{r.replicates:,} replicates, seed {r.seed}); no data, nothing spent.",
        worlds_line(r.worlds),
    )


def _battery(r: BatteryResult) -> tuple[str, ...]:
    ocs = [row.outcome for row in r.scenarios]
    return _lines(
        f"**Battery, no verdict**: {len(r.scenarios)} scenario(s) × {r.replicates:,} replicates = "
        f"{r.sequential_runs:,} sequential runs of e-process ({r.construction}) capped at "
        f"{r.cap_roots:,} roots, panel {md_code(r.panel_name)} ({r.judges_per_root} judges).",
        _planning_line(ocs, r.construct.governing_threshold_h, r.construction, r),
        _null_line(ocs, r.construction),
        f"Evidence: **simulated worlds only** (seed {r.seed}); no data, nothing spent.",
        worlds_line(r.worlds),
    )


def _judges(r: JudgesResult) -> tuple[str, ...]:
    comps = r.compositions
    sizes = ", ".join(f"{md_code(c.name)} {c.nominal_size}" for c in comps)
    best = max(comps, key=lambda c: float(c.effect_present.routes[0].p_correct.value))
    e = best.effect_present.routes[0]
    worst = max(comps, key=lambda c: float(c.effect_absent.routes[0].p_wrong.value))
    w = worst.effect_absent.routes[0]
    return _lines(
        f"**Panels compared, no verdict**: {len(comps)} composition(s) ({sizes} judges), each "
        f"run to the e-process ({r.construction}) verdict capped at {r.cap_roots:,} roots.",
        f"Effect present: most often right is {md_code(best.name)}, P(correct verdict) "
        f"{_fig(e.p_correct)}"
        f" at true h {fmt_x(best.effect_present.true_h)}, mean cost per run "
        f"{fmt_money(e.mean_cost)}{_currency(r)}.",
        f"Effect absent: the largest P(wrong verdict) is {md_code(worst.name)}'s "
        f"{_fig(w.p_wrong)}.",
        f"Evidence: **simulated worlds only** ({len(comps)} composition(s) × 2 worlds × "
        f"{r.replicates:,} replicates, seed {r.seed}); no data, nothing spent.",
        worlds_line(r.worlds),
    )


def _sizing(r: SizingResult) -> tuple[str, ...]:
    design = r.design_points[0].name if r.design_points else None
    parts = []
    for a in r.arms:
        s: Any = next((x for x in a.sizes if x.design == design), a.sizes[0] if a.sizes else None)
        if s is None:
            continue
        if isinstance(a, TArmResult):
            parts.append(
                f"{md_code(a.name)} {fmt_count(s.n)} {a.unit} (power {fmt_p(s.power_at_n)})"
            )
        elif isinstance(a, BinomialArmResult):
            stable = s.design_uses.startswith("stable")
            n, p = (s.stable_n, s.power_at_stable) if stable else (s.first_n, s.power_at_first)
            parts.append(f"{md_code(a.name)} {fmt_count(n)} {a.unit} (power {fmt_p(p)})")
        elif isinstance(a, TwoProportionArmResult):
            parts.append(
                f"{md_code(a.name)} {fmt_count(s.n_per_group)} {a.unit} per group (power "
                f"{fmt_p(s.power_at_n)})"
            )
    points = "; ".join(
        f"{md_code(p.name)} alpha {p.alpha:g} (two-sided), power {p.power:g}"
        for p in r.design_points
    )
    return _lines(
        f"**Sizes** at design point {md_code(design)}: " + "; ".join(parts) + ".",
        f"Power: the design points are {points}; every arm and design is in the detail.",
        f"Evidence: none — exact and closed-form calculation, checked by simulation "
        f"({r.replicates:,} replicates, seed {r.seed}); no data.",
        "Cost: none — a sizing spends nothing; its sizes are priced by the verdict and engine "
        "kinds.",
    )


SUMMARIES: dict[type, Callable[[Any], tuple[str, ...]]] = {
    SizingResult: _sizing,
    VerdictResult: _verdict,
    JudgesResult: _judges,
    EngineResult: _engine,
    BatteryResult: _battery,
    StudyResult: _study,
}


def summary_lines(result: object) -> tuple[str, ...]:
    """At most five lines of inline Markdown (bold and code spans), by the summary registered for
    the result's type; a type with no summary is refused (TypeError naming it)."""
    lines: tuple[str, ...] = registered_for(SUMMARIES, result, "summary")(result)
    return lines


def summary_block(result: object) -> str:
    """The summary as report.md prints it right under the title: one bullet per line."""
    return "".join(f"- {line}\n" for line in summary_lines(result))


def report_head(kind: str, r: Any) -> list[str]:
    """What every report opens with: its title (the kind and the construct's name), the summary
    and the construct block."""
    return [
        f"# verdictpack {kind} — {md_text(r.construct.name)}",
        "",
        summary_block(r),
        construct_block(r.construct),
    ]


def worlds_section(worlds: Sequence[NamedWorld]) -> str:
    """The detail: every named simulated world against its name (a table)."""
    if not worlds:
        return ""
    rows = [
        [
            w.where,
            ("≥ " if w.at_least else "") + fmt_x(w.named_h),
            fmt_x(w.true_h),
            "**no: not where its name says**" if w.departs else "yes",
        ]
        for w in worlds
    ]
    floors = ""
    if any(w.at_least for w in worlds):
        floors = (
            " A world named for an effect (named h ≥ the threshold) sits where its name says at or "
            "above that h, less the tolerance"
            + (
                "; where one sits below, its P(correct verdict) still counts EFFECT_SUPPORTED as "
                "the right verdict there: read it with that in mind"
                if any(w.at_least and w.departs for w in worlds)
                else ""
            )
            + "."
        )
    return (
        "## Simulated worlds against their names\n\n"
        "Each simulated world's true h is closed form (φ(μ_M) − φ(μ_H) from the judges' sheets); "
        f"a world sits where its name says when it is within {fmt_x(worlds[0].tolerance)} of the "
        f"h its name states.{floors}\n\n"
        + table(["world", "named h", "true h (closed form)", "where its name says"], rows)
    )
