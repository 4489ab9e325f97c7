"""Self-audit checks of the study kind: every headline number re-derived from the folder's own
files, by code written here (nothing is imported from kinds/, evidence/ or core/).

* **Order** (root_order.txt, judgments.csv): the registered order lists each admitted root once
  and no refused one; judgments.csv (read with the csv module) is sorted by it; when provenance
  records the keyed hash, the order is recomputed from the seed, SHA-256 of
  ``verdictpack/root-order/v1\\n{seed}\\n{root_id}`` per admitted root, sorted by digest.
* **Values** (evidence.jsonl): the bounds on M_i and H_i per root rebuilt from judgments.csv
  under the declared observation, judges, trials and humans per root of results.json, in half
  units (treatment 2, null partner 0, tie 1; a model row's 2·p_treatment under the probability
  estimand; an unknown answer -- invalid, a missing cell or probability, a human shortfall --
  0 for the lower value and 2 for the upper): M_i over the 2·J·T cells / 4·J·T, H_i over
  max(n_i, humans_per_root) judgments / twice that (no H_i without humans and no declared
  count); roots enter in the registered order up to the last one holding a model judgment, a
  root before it without one entering with every cell unknown. M and H are the midpoints.
  Coverage counts re-counted from the same rows.
* **Tracks**: the registered, extension and comparison tracks rebuilt from those bounds by the
  self-audit's own e-process (lower ends from the lower values, upper ends from the upper
  values, D's lower end from M_lo − H_hi and its upper from M_hi − H_lo; shared with the engine
  audit): every evidence row's bounds, h-intervals and states; the registered verdict and its
  root; the three tracks as frozen at the registered stop; the ``all_data`` tracks: the
  intervals at the last root, each track's first verdict anywhere in the data (the cap not
  applied; INCONCLUSIVE without one); the stop
  reason.
* **Reader audit** (reader_audit.csv): two readings per root, reader A the id sorting first;
  Cohen's kappa, its Fleiss–Cohen–Everitt standard error and interval; the gate on the point
  estimate and the INSTRUMENT_INVALID outcome below it. A study run without one (``audit_status``
  not_run) has no audit block, no reading and ``instrument_valid`` null: not validated.
* **Counts**: gate counts add up (admitted + refused = total, per-gate refusals and first
  failures from the refused list; a gate switched off never among the gates run); costs
  (cost_comparison.csv against results.json, totals re-summed, touches re-counted from
  judgments.csv and reader_audit.csv; prices re-summed where
  every row carries its own cost); data-file records against the tables.
* **Judges** (judgments.csv): each judge's judgments, ties, rate, per-order rates and position
  bias, and their intervals with the root as the unit (own code: Wilson's interval on the
  root-clustered effective count, t quantile at roots − 1, its fallbacks; the correlated MOVER
  of the two orders for the bias), roots and design effects; the humans' rate likewise; every
  position bias the fitted panel writes otherwise than estimated named in its clips.
* **Files agree**: verdict.json, validity_report.json, judges.json and fitted_panel.json hold
  what results.json holds.
"""

from __future__ import annotations

import math
from collections import Counter, defaultdict
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from verdictpack.verify._findings import _Auditor, _close, _fv, _is_number, _load_json
from verdictpack.verify._kinds_engine import (
    _check_evidence_rows,
    _check_track,
    _read_jsonl,
    _rebuild_tracks,
)
from verdictpack.verify._rederive import _track_verdicts
from verdictpack.verify._study_blocks import (
    _TRACKS,
    _study_costs,
    _study_data_files,
    _study_files_agree,
    _study_gates,
    _study_kappa,
)
from verdictpack.verify._study_judges import _study_judges
from verdictpack.verify._study_tables import (
    _LIVE_STOPS,
    _ORDER_DOMAIN,
    _ORDERS,
    _half_bounds,
    _keyed_order,
    _read_judgments,
    _read_lines,
    _Row,
)

_NO_VERDICT = "NO_VERDICT_WHEN_REGISTERED_STOPPED"


# ==============================================================================================
# The registered order
# ==============================================================================================


def _study_order(
    A: _Auditor,
    res: dict[str, Any],
    settings: dict[str, Any],
    order: list[str],
    table: list[_Row],
    refused: list[str],
) -> None:
    """root_order.txt lists the admitted roots (recomputed under the keyed hash); judgments.csv
    holds only those roots, sorted by it. A live study's report covers its committed prefix of
    the registered order (which prefix: the ledger audit, verify/_ledger_audit.py)."""
    if _is_live(res):
        A.true(
            "root_order.txt",
            "one line per committed root of a live study (at most one per admitted root)",
            len(order) <= res["gates"]["admitted"],
            f"at most {res['gates']['admitted']}",
            len(order),
        )
    else:
        A.eq(
            "root_order.txt",
            "one line per admitted root",
            res["gates"]["admitted"],
            len(order),
        )
    listed_refused = sorted(set(order) & set(refused))
    A.true(
        "root_order.txt",
        "no root the gates refused",
        not listed_refused,
        "none",
        listed_refused[:5],
    )
    text = settings.get("root_order")
    A.eq(
        "provenance.json $.settings.root_order",
        "the order as results.json records it",
        res["root_order"],
        text,
    )
    if isinstance(text, str) and text.startswith("keyed hash"):
        seed = res["seed"]
        expected = _keyed_order(int(seed), order)
        first = next((k for k, (a, b) in enumerate(zip(expected, order, strict=True)) if a != b), 0)
        A.eq(
            "root_order.txt",
            f"the keyed-hash order of seed {seed} (SHA-256 of {_ORDER_DOMAIN}, seed, id)",
            expected[first : first + 3],
            order[first : first + 3],
        )
    else:
        A.unverified(
            "root_order.txt",
            "the registered order file",
            "the order came from a file of the study (its SHA-256 is in provenance); "
            "the folder holds only the admitted roots in that order",
        )
    rank = {rid: k for k, rid in enumerate(order)}
    outside = [r.line for r in table if r.root not in rank]
    A.true(
        "judgments.csv $[*].root_id",
        "every row on a root of root_order.txt",
        not outside,
        "all rows",
        f"lines {outside[:5]}",
    )
    prev: tuple[int, str, int, int] = (-1, "", 0, 0)
    unsorted = None
    for r in table:
        key = (rank.get(r.root, prev[0]), r.rater, _ORDERS.index(r.order), r.trial)
        if key < prev and unsorted is None:
            unsorted = r.line
        prev = max(prev, key)
    A.true(
        "judgments.csv",
        "rows sorted by the registered order (root_order.txt), then rater id, order, trial",
        unsorted is None,
        "non-decreasing keys",
        f"line {unsorted} goes back to an earlier key",
    )


# ==============================================================================================
# M_i and H_i
# ==============================================================================================


@dataclass
class _Root:
    model_rows: int = 0
    human_rows: int = 0
    model_lo: float = 0  # half units, unknowns at 0
    model_hi: float = 0  # half units, unknowns at 2
    human_lo: float = 0
    human_hi: float = 0
    seen: dict[str, set[str]] = field(default_factory=lambda: defaultdict(set))


@dataclass(frozen=True)
class _Values:
    entered: list[str]
    m_lo: list[float]
    m_hi: list[float]
    h_lo: list[float | None]
    h_hi: list[float | None]
    model_n: list[int]
    human_n: list[int]
    coverage: dict[str, Any]

    @property
    def m(self) -> list[float]:
        return [(a + b) / 2 for a, b in zip(self.m_lo, self.m_hi, strict=True)]

    @property
    def h(self) -> list[float | None]:
        return [
            None if a is None or b is None else (a + b) / 2
            for a, b in zip(self.h_lo, self.h_hi, strict=True)
        ]


def _study_table(A: _Auditor, res: dict[str, Any], table: list[_Row]) -> None:
    """The rows the values are built from are the registered ones: model rows by a judge of
    the panel, in a known presentation order, below the registered trials, each cell once; no
    human rater named like a judge."""
    judges = set(res["judges"])
    trials = int(res["trials"])
    bad: list[str] = []
    cells: Counter[tuple[str, str, str, int]] = Counter()
    for r in table:
        if r.kind == "model":
            cells[(r.root, r.rater, r.order, r.trial)] += 1
            if r.rater not in judges:
                bad.append(f"line {r.line}: {r.rater} is not a judge")
            elif r.order == "unknown":
                bad.append(f"line {r.line}: a model judgment without its order")
            elif not 0 <= r.trial < trials:
                bad.append(f"line {r.line}: trial {r.trial} of {trials}")
        elif r.rater in judges:
            bad.append(f"line {r.line}: human rater {r.rater} named like a judge")
    repeated = [key for key, k in cells.items() if k > 1]
    A.true(
        "judgments.csv",
        "model rows are the registered cells (a panel judge, an order, a trial below "
        "results.json $.trials, each once)",
        not bad and not repeated,
        "all rows",
        "; ".join(bad[:3]) + (f"; repeated cells {repeated[:3]}" if repeated else ""),
    )


def _rebuild_values(res: dict[str, Any], order: list[str], table: list[_Row]) -> _Values:
    """The bounds on M_i and H_i and the coverage counts (module docstring) from
    judgments.csv."""
    observation = res["policy"].get("model_observation", "choice")
    cells = 2 * len(res["judges"]) * int(res["trials"])
    expected = int(res["humans_per_root"] or 0)
    roots = {rid: _Root() for rid in order}
    counts: Counter[str] = Counter()
    for r in table:
        x = roots.get(r.root)
        if x is None:
            continue
        lo, hi = _half_bounds(r, observation)
        if r.kind == "model":
            x.model_rows += 1
            x.model_lo += lo
            x.model_hi += hi
            x.seen[r.rater].add(r.order)
            if lo != hi:
                counts["model_unknown_rows"] += 1
        else:
            x.human_rows += 1
            x.human_lo += lo
            x.human_hi += hi
            if lo != hi:
                counts["human_unknown_rows"] += 1
        if r.choice in ("tie", "invalid"):
            counts[f"{r.kind}_{'ties' if r.choice == 'tie' else 'invalid'}"] += 1
    judged = [k for k, rid in enumerate(order) if roots[rid].model_rows > 0]
    entered = order[: judged[-1] + 1] if judged else []
    m_lo: list[float] = []
    m_hi: list[float] = []
    h_lo: list[float | None] = []
    h_hi: list[float | None] = []
    model_n: list[int] = []
    human_n: list[int] = []
    missing_cells = human_missing = no_h = 0
    for rid in entered:
        x = roots[rid]
        gap = cells - x.model_rows
        missing_cells += gap
        m_lo.append(x.model_lo / (2 * cells))
        m_hi.append((x.model_hi + 2 * gap) / (2 * cells))
        n_h = max(x.human_rows, expected)
        if n_h:
            short = n_h - x.human_rows
            human_missing += short
            h_lo.append(x.human_lo / (2 * n_h))
            h_hi.append((x.human_hi + 2 * short) / (2 * n_h))
        else:
            no_h += 1
            h_lo.append(None)
            h_hi.append(None)
        model_n.append(x.model_rows)
        human_n.append(x.human_rows)
    one_order = sum(
        1
        for x in roots.values()
        if any(
            ("treatment_first" in o) != ("null_first" in o)
            for o in x.seen.values()
            if o - {"unknown"}
        )
    )
    coverage = {
        "admitted_roots": len(order),
        "admitted_roots_unjudged": len(order) - len(entered),
        "roots_entered": len(entered),
        "gap_roots": sum(1 for rid in entered if roots[rid].model_rows == 0),
        "roots_with_humans": sum(1 for n in human_n if n),
        "roots_without_humans_unbounded": no_h,
        "roots_one_order_only": one_order,
        "model_ties": counts["model_ties"],
        "model_invalid": counts["model_invalid"],
        "model_missing_cells": missing_cells,
        "model_without_probability": counts["model_unknown_rows"] - counts["model_invalid"],
        "model_unknown": counts["model_unknown_rows"] + missing_cells,
        "human_ties": counts["human_ties"],
        "human_invalid": counts["human_invalid"],
        "human_missing": human_missing,
        "human_unknown": counts["human_unknown_rows"] + human_missing,
        "humans_above_expected": sum(
            1 for x in roots.values() if expected > 0 and x.human_rows > expected
        ),
    }
    return _Values(entered, m_lo, m_hi, h_lo, h_hi, model_n, human_n, coverage)


def _study_values(
    A: _Auditor, res: dict[str, Any], v: _Values, rows: list[dict[str, Any]], table: list[_Row]
) -> None:
    """The rebuilt coverage against results.json, and the rebuilt M_i, H_i and judgment counts
    against evidence.jsonl, row by row."""
    cov = res["coverage"]
    w = "results.json $.coverage"
    for key, ours in v.coverage.items():
        A.eq(f"{w}.{key}", f"{key} re-counted from judgments.csv", ours, cov.get(key))
    model_rows = sum(1 for r in table if r.kind == "model")
    if _is_live(res):
        # a live report holds the rows of its committed roots; the rows read also hold the
        # data files' rows on admitted roots not yet committed (in the files, not the report)
        A.true(
            f"{w}.rows",
            "rows >= rows of judgments.csv + rows on refused roots (a live study's report holds "
            "its committed roots only)",
            cov["rows"] >= len(table) + cov["rows_on_refused_roots"],
            f">= {len(table) + cov['rows_on_refused_roots']}",
            cov["rows"],
        )
    else:
        A.eq(
            f"{w}.rows",
            "rows = rows of judgments.csv + rows on refused roots",
            len(table) + cov["rows_on_refused_roots"],
            cov["rows"],
        )
    A.eq(
        f"{w}.model_rows",
        "model rows + human rows = rows",
        cov["rows"],
        cov["model_rows"] + cov["human_rows"],
    )
    A.true(
        f"{w}.model_rows",
        "model rows of judgments.csv ≤ model rows ≤ those + rows on refused roots",
        model_rows <= cov["model_rows"] <= model_rows + cov["rows_on_refused_roots"],
        f"{model_rows}..{model_rows + cov['rows_on_refused_roots']}",
        cov["model_rows"],
    )
    A.eq(
        "results.json $.roots_available",
        "roots entered (holding a model judgment)",
        len(v.entered),
        res["roots_available"],
    )
    if res["instrument_valid"] is False:
        A.eq("evidence.jsonl", "no evidence row when the instrument is invalid", 0, len(rows))
        return
    w = "evidence.jsonl"
    A.eq(w, "one evidence row per root entered", len(v.entered), len(rows))
    bad_ids = [
        r.get("root") for r, rid in zip(rows, v.entered, strict=False) if r["root_id"] != rid
    ]
    A.true(
        w + " $[*].root_id",
        "the roots entered, in the registered order (root_order.txt)",
        not bad_ids,
        "all rows",
        f"rows {bad_ids[:5]}",
    )
    A.eq(
        w + " $[*].root",
        "roots numbered 1..n",
        list(range(1, len(rows) + 1)),
        [r["root"] for r in rows],
    )
    bad: dict[str, list[str]] = {k: [] for k in ("M", "H", "M_lo", "M_hi", "H_lo", "H_hi")}
    bad_n = []
    ours_by_key: dict[str, list[Any]] = {
        "M": v.m,
        "H": v.h,
        "M_lo": v.m_lo,
        "M_hi": v.m_hi,
        "H_lo": v.h_lo,
        "H_hi": v.h_hi,
    }
    for t, r in enumerate(rows[: len(v.entered)]):
        for key, ours_list in ours_by_key.items():
            ours, found = ours_list[t], r.get(key)
            same = ours is None and found is None
            if ours is not None and found is not None and _is_number(found):
                same = _close(ours, float(found), 1e-12, 0)
            if not same:
                bad[key].append(f"root {r['root']}: {found} vs ours {ours!r}")
        if (r.get("model_judgments"), r.get("human_judgments")) != (v.model_n[t], v.human_n[t]):
            bad_n.append(f"root {r['root']}")
    for key, found_bad in bad.items():
        what = "M_i" if key.startswith("M") else "H_i"
        part = {"lo": "lower bound", "hi": "upper bound"}.get(key[2:], "midpoint")
        A.true(
            f"{w} $[*].{key}",
            f"{what}'s {part} rebuilt from judgments.csv (unknown answers bounded both ways)",
            not found_bad,
            "all rows",
            "; ".join(found_bad[:3]),
        )
    A.true(
        w + " $[*].model_judgments,human_judgments",
        "judgments per root counted in judgments.csv",
        not bad_n,
        "all rows",
        bad_n[:5],
    )


# ==============================================================================================
# Reader audit
# ==============================================================================================


def _is_live(res: dict[str, Any]) -> bool:
    """A live study's report (its judgments partly from a ledger)."""
    return any(isinstance(f, dict) and f.get("role") == "live" for f in res.get("data_files", []))


def _stop_reason(verdict: str, roots_run: int, cap_roots: int, valid: bool) -> str:
    if not valid:
        return "instrument invalid: the reader audit's kappa is below the gate"
    if verdict == "INCONCLUSIVE":
        if roots_run >= cap_roots:
            return f"cap reached ({cap_roots:,} roots) without a verdict"
        return "the data ran out without a verdict"
    return f"verdict reached at root {roots_run}"


def _study_tracks(
    A: _Auditor,
    res: dict[str, Any],
    settings: dict[str, Any],
    v: _Values,
    rows: list[dict[str, Any]],
) -> None:
    """The three tracks rebuilt from the rebuilt values (module docstring)."""
    roots_run = res["roots_run"]
    n = len(v.entered)
    A.eq(
        "provenance.json $.settings.cap_roots",
        "the cap as results.json records it",
        res["cap_roots"],
        settings.get("cap_roots"),
    )
    # instrument_valid None: no reader audit ran (not validated), the tracks decide
    valid = res["instrument_valid"] is not False
    if not valid or n == 0:
        label = "INCONCLUSIVE" if valid else "INSTRUMENT_INVALID"
        for key in _TRACKS:
            # without roots the other tracks are INCONCLUSIVE or "no verdict when the
            # registered track stopped"; without a valid instrument, all INSTRUMENT_INVALID
            labels = (
                {label} if key == "registered" or label != "INCONCLUSIVE" else {label, _NO_VERDICT}
            )
            for place, track in ((key, res[key]), (f"all_data.{key}", res["all_data"][key])):
                A.true(
                    f"results.json $.{place}.verdict",
                    "no preference claim, no root, no interval without roots or a valid instrument",
                    track["verdict"] in labels
                    and track["roots_at_verdict"] is None
                    and track["h_interval"] is None,
                    f"{' or '.join(sorted(labels))}, null, null",
                    [track["verdict"], track["roots_at_verdict"], track["h_interval"]],
                )
        A.eq("results.json $.roots_run", "no root read", 0, roots_run)
        A.eq(
            "results.json $.stop_reason",
            "the stop reason",
            _stop_reason(label, 0, res["cap_roots"], valid),
            res["stop_reason"],
        )
        return
    if len(rows) != n:
        A.unverified(
            "verdict.json",
            "the tracks rebuilt",
            "evidence.jsonl does not hold one row per root entered (failed above)",
        )
        return
    rebuilt = _rebuild_tracks(A, res, settings, v.m_lo, v.h_lo, v.m_hi, v.h_hi)
    if rebuilt is None:
        return
    cap = min(int(res["cap_roots"]), n)
    states, reached = _track_verdicts(rebuilt.series, rebuilt.thresholds, cap)
    # over all the data each track's first verdict counts whatever the cap (no cap: 0)
    _, anywhere = _track_verdicts(rebuilt.series, rebuilt.thresholds, 0)
    stop = reached["registered"][1] if "registered" in reached else cap
    A.eq(
        "results.json $.roots_run",
        "the registered verdict's root (the verdict, the cap or the end of the data)",
        stop,
        roots_run,
    )
    _check_evidence_rows(A, "evidence.jsonl", rows, rebuilt, states)
    flags = [r.get("after_registered_stop") for r in rows]
    A.eq(
        "evidence.jsonl $[*].after_registered_stop",
        "true exactly on the rows after the registered verdict",
        [t + 1 > stop for t in range(n)],
        flags,
    )
    reg_verdict = reached.get("registered", ("INCONCLUSIVE", stop))[0]
    reason = _stop_reason(reg_verdict, stop, int(res["cap_roots"]), True)
    found = str(res["stop_reason"])
    live_stops = tuple(_LIVE_STOPS.values())
    if _is_live(res) and reason.startswith("the data ran out") and found.startswith(live_stops):
        A.true(
            "results.json $.stop_reason",
            "the stop reason: a live run's stop before its data ran out",
            found.startswith(live_stops)
            and (not found.startswith(_LIVE_STOPS["budget"]) or found.endswith("stopped at it")),
            " or ".join(live_stops),
            found,
        )
    else:
        A.eq("results.json $.stop_reason", "the stop reason", reason, found)
    for name in rebuilt.series:
        got = reached.get(name)
        at_stop = got if got is not None and got[1] <= stop else (_NO_VERDICT, None)
        _check_track(
            A,
            f"results.json $.{name}",
            res[name],
            name,
            rebuilt,
            (at_stop[0], at_stop[1]),
            (at_stop[1] or stop) - 1,
        )
        seen = anywhere.get(name)
        first = seen if seen is not None else ("INCONCLUSIVE", None)
        _check_track(
            A,
            f"results.json $.all_data.{name}",
            res["all_data"][name],
            name,
            rebuilt,
            (first[0], first[1]),
            n - 1,
        )


# ----------------------------------------------------------------------------------------------
# The judges' intervals: the root is the unit (written here, not imported from core/)
# ----------------------------------------------------------------------------------------------


def _study_roots_to_go(A: _Auditor, res: dict[str, Any], v: _Values) -> None:
    """The roots-to-go block (present only for a valid, INCONCLUSIVE study): its inputs from the
    rebuilt values (roots observed, human rate and coverage, humans per root), its quantiles in
    order, its verdict probabilities summing to 1. The simulated figures stay UNVERIFIED."""
    g = res.get("roots_to_go")
    w = "results.json $.roots_to_go"
    wanted = res["instrument_valid"] is not False and res["registered"]["verdict"] == "INCONCLUSIVE"
    if g is None:
        A.true(
            w,
            "roots to go only for a valid, INCONCLUSIVE study (or without a fitted panel)",
            not wanted or res["judges_report"].get("fitted_panel") is None or not v.entered,
            "absent when not wanted",
            "absent",
        )
        return
    A.true(w, "roots to go only for a valid, INCONCLUSIVE study", wanted, True, "present")
    hs = [h for h in v.h if h is not None]
    A.eq(w + ".roots_observed", "roots entered", len(v.entered), g["roots_observed"])
    A.num_at(
        w,
        g,
        "human_rate",
        "mean H_i over the roots holding one (0.5 without)",
        math.fsum(hs) / len(hs) if hs else 0.5,
        abs_tol=1e-12,
    )
    A.num_at(
        w,
        g,
        "human_coverage",
        "share of the roots entered holding an H_i",
        len(hs) / len(v.entered) if v.entered else 0.0,
        abs_tol=1e-12,
    )
    if res["humans_per_root"] is not None:
        expected_n = int(res["humans_per_root"])
    else:
        counts = Counter(n for n, h in zip(v.human_n, v.h, strict=True) if h is not None)
        expected_n = min(counts, key=lambda k: (-counts[k], k)) if counts else 1
    A.eq_at(
        w,
        g,
        "humans_per_root",
        "the humans expected per root (else the commonest count)",
        max(1, expected_n),
    )
    q = [
        g["quantiles_extra_roots"][k]
        for k in sorted(g["quantiles_extra_roots"], key=lambda k: float(k[1:]))
    ]
    known = [x for x in q if x is not None]
    A.true(
        w + ".quantiles_extra_roots",
        "quantiles in order",
        known == sorted(known),
        "non-decreasing",
        q,
    )
    med = g.get("median_extra_roots")
    A.eq(
        w + ".median_extra_roots",
        "the median is the q50 quantile",
        g["quantiles_extra_roots"].get("q50"),
        None if med is None else _fv(med),
    )
    probs = {k: float(_fv(x)) for k, x in g["verdicts"].items()}
    A.num(
        w + ".verdicts",
        "verdict probabilities sum to 1",
        1.0,
        math.fsum(probs.values()),
        abs_tol=1e-9,
    )
    A.num_at(
        w,
        g,
        "p_verdict",
        "P(a verdict) = 1 − P(INCONCLUSIVE)",
        1.0 - probs.get("INCONCLUSIVE", 0.0),
        value=True,
        abs_tol=1e-9,
    )
    A.unverified(
        w,
        "the simulated continuations",
        "a simulation (continuations resampled from the study's roots); a second simulation "
        "agrees only within Monte Carlo error",
    )


# ==============================================================================================
# Entry
# ==============================================================================================


def _audit_study(A: _Auditor, res: dict[str, Any], run: Path, prov: dict[str, Any]) -> None:
    """Every check of the module docstring on one study folder."""
    settings = prov.get("settings", {})
    verdict_file = _load_json(run / "verdict.json")
    validity = _load_json(run / "validity_report.json")
    rows = _read_jsonl(run / "evidence.jsonl")
    table = _read_judgments(A, run / "judgments.csv")
    order = _read_lines(A, run / "root_order.txt")
    _study_files_agree(A, res, run, verdict_file, validity)
    refused = _study_gates(A, res, validity)
    _study_order(A, res, settings, order, table, refused)
    readings = _study_kappa(A, res, run)
    _study_table(A, res, table)
    values = _rebuild_values(res, order, table)
    _study_values(A, res, values, rows, table)
    _study_tracks(A, res, settings, values, rows)
    _study_costs(A, res, run, table, values.entered, readings)
    _study_data_files(A, res, settings, readings)
    _study_judges(A, res, table, values.entered)
    _study_roots_to_go(A, res, values)
    A.unverified(
        "judges.json",
        "the judges' pairwise agreement, latent correlation and the fitted panel's sheets",
        "estimates of the study's own code; the rates, position biases, their intervals and the "
        "fitted panel's clips were re-derived, the rest only checked for the files' agreement",
    )
