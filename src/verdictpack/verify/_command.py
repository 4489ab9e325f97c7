"""Self-audit: ``verdictpack audit RUN_DIR...`` re-derives every headline number by a second method.

The audit reads only an output folder (results.json, the evidence files, the marker). It
never imports the code that computed the numbers (core/, config/, stimuli/, simulate/, kinds/,
render/): every re-derivation is written again in this folder, differently, from the definitions
in docs/statistics.md. This module is the driver over run folders and the ``cli``; the checks
live in ``_kinds`` (every kind, sizing), ``_kinds_oc`` (operating characteristics: verdict,
judges, battery), ``_kinds_engine``, ``_kinds_study``, ``_worlds``, ``_inputs`` (the folder's
marker, the echoed inputs), ``_provenance_checks``; the mathematics in ``_rederive``;
:class:`Finding` and :class:`AuditReport` in ``_findings``.

A live study's folder (DIR holding ``.verdictpack-live.json``) is audited as the study of its
``report/`` folder (which covers the committed prefix of the registered order) plus its ledger:
the hash chain and the committed evidence re-derived (``_ledger_audit``).

Per kind (results.json ``kind``):

* every kind, the folder (``_inputs``): every file is one the marker ``.verdictpack-output.json``
  lists, with its SHA-256, and every listed file is there (an edited, added or removed file
  fails); with ``--config``, every input of the config echoed in results.json or provenance.json
  is the config's (a construct renamed throughout a copied folder fails).
* every kind: the construct block (odds ratio as h, the smaller effect governs, the threshold rate,
  per-tail alpha = alpha / 4, e-boundary = 1 / per-tail alpha); every Quantity well formed; no NaN.
* every kind, provenance.json (``_provenance`` is not imported: its formulas are written here
  again): the seed equals results.json's; the seed commitment is recomputed, SHA-256 of the lines
  ``verdictpack/seed-commitment/v1``, ``config_jcs_sha256``, the decimal seed (each ending in
  ``\\n``); ``config_sha256`` and ``config_jcs_sha256`` are 64 lowercase hex digits. With the config
  file (``--config FILE``; the reproduction passes each example's), ``config_sha256`` is the SHA-256
  of its bytes, ``config_jcs_sha256`` that of its RFC 8785 form (a canonicaliser written here from
  the RFC), and its kind and seed are the recorded ones; without it those two are UNVERIFIED.
* sizing: exact t sizes by quadrature of P(Z + δ > c·√(V/df)) over the density of √(V/df)
  (scipy.integrate.quad; central-t critical value from the incomplete beta function; never
  scipy.stats.nct), both tails: n reaches the target and n − 1 does not, power at n and n − 1, at
  the current n and the checks; normal-approximation and known-variance formulas; exact binomial
  regions, achieved alpha, powers, first n, stable n and the failing list by enumeration over every
  n up to the horizon (lgamma sums); two-proportion n and power (arcsine formula); the simulated
  checks: MCSE = √(p(1 − p)/R), ``simulated_minus_exact_in_mcse`` recomputed from the cell's value,
  its MCSE and the exact power above, and |z| ≤ 5.
* verdict / judges / battery / engine power report (every ScenarioOC found): the simulated
  probabilities are UNVERIFIED (a second simulation only agrees within Monte Carlo error), but
  every probability is a count over R (p·R integral), MCSE = √(p(1 − p)/R), verdict probabilities
  sum to 1 per route, P(wrong) / P(correct) / P(issued) follow from them and the scenario's
  effect_exists; roots: q50 ≤ q90 ≤ q99 ≤ max ≤ cap, mean ≤ max; cost lines re-summed (touches and
  cost, model + human), touches = roots × touches per root, cost = roots × price where the price is
  known (and one constant price per design where it is not), cost per valid verdict = mean cost /
  P(issued); the true rates from the judge sheets (p_j = ½ + (1 − ν)(sin²(clamp(φ(b) + s·ℓ +
  shift)/2) − ½), μ_M = mean_j p_j, h = φ(μ_M) − φ(μ_H)); the SPRT's exact cells (ln A, ln B,
  increments, actual alpha / beta, ASN and N quantiles by a dictionary recursion over successes,
  Wald's ASN from its closed form at h = ±1) and the fixed-n exact binomial by enumeration.
* engine: the three tracks rebuilt from evidence.jsonl by a separately written e-process (product
  over the history per λ, mixture, inversion by a grid of 2,049 points then bisection, running
  intersection), every evidence row's bounds, h-interval, states and log e-values; verdict.json and
  results.json tracks (bounds to 1e-6, never narrower than ours by more than 1e-9); the corners
  and the hybrid h-interval (polygon clipped, min / max brute-forced on fine grids of its edges
  and a 2-D grid, refined by bounded scalar search); cost tables re-summed (results.json costs and
  cost_comparison.csv); gate counts add up; yield; the spot-check size; the kappa interval's
  symmetry; the human baseline's exact power, region and alpha by enumeration; roots_run ≤ the
  effective cap; the JSON files rendered from the same object agree.
* study: judgments.csv (read with the csv module) sorted by root_order.txt, and root_order.txt
  recomputed from the seed when the order is the keyed hash (SHA-256 of
  ``verdictpack/root-order/v1``, the seed and the id, sorted by digest); M_i and H_i rebuilt from
  judgments.csv under the recorded policy, judges, trials and humans per root, against
  evidence.jsonl; the coverage counts re-counted; the three tracks rebuilt from those values by
  the engine's e-process (every evidence row, the tracks at the registered stop, the all-data
  intervals at the last root, the stop reason); Cohen's kappa and its interval from
  reader_audit.csv (reader A sorts first) and the gate; gate counts, cost lines and data-file
  records add up; every data file of provenance carries a SHA-256 (recomputed beside the config
  with ``--config``); the JSON files agree.
* report.md (and the engine's registered_vs_extension.md): rendered again from results.json
  alone and compared byte for byte (the command line passes the renderer, ``rerender``; verify
  never imports it), so every word and number of the report is the one results.json
  determines; the report's text is never parsed back (UNVERIFIED without the renderer).

Anything that cannot be re-derived is reported UNVERIFIED with its reason, never passed silently.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

from verdictpack._errors import UsageError
from verdictpack.verify._findings import (
    AuditReport,
    Finding,
    _ArgumentParser,
    _Auditor,
    _load_json,
)
from verdictpack.verify._inputs import MARKER, _audit_marker
from verdictpack.verify._kinds import _audit_construct, _audit_figures, _audit_sizing
from verdictpack.verify._kinds_engine import _audit_engine
from verdictpack.verify._kinds_oc import _audit_battery, _audit_judges, _audit_verdict
from verdictpack.verify._kinds_study import _audit_study
from verdictpack.verify._ledger_audit import LIVE_MARKER_NAME, audit_ledger, is_live_folder
from verdictpack.verify._provenance_checks import _audit_provenance
from verdictpack.verify._worlds import _audit_worlds

__all__ = ["AuditReport", "Finding", "audit_run", "audit_runs", "cli", "format_reports"]

# results.json's data -> the texts it alone determines, rendered again (the CLI's renderer)
Rerender = Callable[[dict[str, Any]], Mapping[str, str]]

# the version of results.json this audit reads (verdictpack._contract's, written here again)
RESULTS_SCHEMA_VERSION = 1


# ==============================================================================================
# Driver
# ==============================================================================================


def audit_run(
    run_dir: str | Path, config: str | Path | None = None, rerender: Rerender | None = None
) -> AuditReport:
    """Audit one output folder; never raises for a defect in the folder (it becomes a failure).
    With ``config`` (the config file the folder was made from) its hashes are recomputed too.
    ``rerender``: results.json's data -> the texts it alone determines (``report.md``), rendered
    again (the command line passes the renderer; verify never imports it): each is compared with
    the folder's byte for byte, and no longer parsed back."""
    folder = Path(run_dir)
    # a live study's folder: its report in report/, its ledger beside it (_ledger_audit)
    live = is_live_folder(folder)
    run = folder / "report" if live else folder
    A = _Auditor()
    kind = "?"
    try:
        res = _load_json(run / "results.json")
        kind = str(res.get("kind", "?"))
        prov = _load_json(run / "provenance.json") if (run / "provenance.json").exists() else {}
        A.eq("provenance.json $.kind", "provenance names the same kind", kind, prov.get("kind"))
        _audit_marker(A, run)
        A.eq(
            "results.json $.schema_version",
            "the results schema version this audit reads",
            RESULTS_SCHEMA_VERSION,
            res.get("schema_version"),
        )
        _audit_provenance(A, res, prov, None if config is None else Path(config))
        _audit_figures(A, res, "results.json")
        _audit_construct(A, res)
        handlers: dict[str, Callable[[], None]] = {
            "sizing": lambda: _audit_sizing(A, res),
            "verdict": lambda: _audit_verdict(A, res),
            "judges": lambda: _audit_judges(A, res),
            "battery": lambda: _audit_battery(A, res),
            "engine": lambda: _audit_engine(A, res, run, prov),
            "study": lambda: _audit_study(A, res, run, prov),
        }
        if kind not in handlers:
            A.true("results.json $.kind", "a known kind", False, ", ".join(handlers), kind)
        else:
            handlers[kind]()
        if live:
            audit_ledger(A, folder, res)
        _audit_worlds(A, res, None if config is None else Path(config))
        compared = _compare_rendered(A, run, res, rerender)
        for md in ("report.md", "registered_vs_extension.md"):
            if md in compared:
                continue
            if (run / md).exists():
                A.unverified(md, "says what results.json says", _RENDER_TO_COMPARE)
            elif md == "report.md":
                A.true(md, "report present", False, "report.md", "missing")
    except (OSError, ValueError, KeyError, TypeError, IndexError, AttributeError) as exc:
        A.true(
            str(run),
            "the folder could be read completely",
            False,
            "readable outputs",
            f"{type(exc).__name__}: {exc}",
        )
    return AuditReport(str(folder), kind, tuple(A.findings))


# a report is proved only by rendering it again from results.json (its text is never parsed)
_RENDER_TO_COMPARE = (
    "it is compared by rendering it again from results.json: verdictpack audit does; "
    "audit_run(..., rerender=...) otherwise"
)


def _compare_rendered(
    A: _Auditor, run: Path, res: dict[str, Any], rerender: Rerender | None
) -> set[str]:
    """The texts results.json alone determines, rendered again and compared byte for byte with
    the folder's (a difference named at its first line); the names compared."""
    if rerender is None:
        return set()
    try:
        texts = dict(rerender(res))
    except (KeyError, TypeError, ValueError, IndexError, AttributeError) as exc:
        A.true(
            "results.json",
            "the report can be rendered again from results.json",
            False,
            "the data of a known result",
            f"{type(exc).__name__}: {exc}",
        )
        return set()
    what = "rendered again from results.json, byte for byte"
    for name, text in sorted(texts.items()):
        path = run / name
        found = path.read_bytes() if path.is_file() else None
        if found == text.encode("utf-8"):
            A.record(True, name, what)
            continue
        if found is None:
            A.true(name, what, False, name, "missing")
            continue
        ours, theirs = text.splitlines(), found.decode("utf-8", "replace").splitlines()
        pairs = zip(ours, theirs, strict=False)
        k = next((i for i, (a, b) in enumerate(pairs) if a != b), min(len(ours), len(theirs)))
        end = "(end of file)"
        A.record(
            False,
            f"{name} line {k + 1}",
            what,
            ours[k] if k < len(ours) else end,
            theirs[k] if k < len(theirs) else end,
        )
    return set(texts)


def _config_name(run_dir: Path) -> Any:
    """The config file name a folder's provenance records (None when unreadable)."""
    try:
        if is_live_folder(run_dir):
            run_dir = run_dir / "report"
        prov = _load_json(run_dir / "provenance.json")
    except (OSError, ValueError):
        return None
    return prov.get("config_name") if isinstance(prov, dict) else None


def _pair_configs(run_dirs: Sequence[Path], configs: Sequence[Path]) -> dict[int, Path]:
    """Which config file each folder is checked against: one folder and one config are paired;
    otherwise a config goes to every folder whose provenance names its file name."""
    for c in configs:
        if not c.is_file():
            raise UsageError(f"verdictpack audit: --config {c}: expected a config file; not found")
    if len(run_dirs) == 1 and len(configs) == 1:
        return {0: configs[0]}
    by_name: dict[str, Path] = {}
    for c in configs:
        if c.name in by_name:
            raise UsageError(
                f"verdictpack audit: --config {c}: two configs named {c.name}; expected one "
                "config per name (a folder is matched by the config_name in its provenance)"
            )
        by_name[c.name] = c
    names = [_config_name(d) for d in run_dirs]
    for name, c in by_name.items():
        if name not in names:
            raise UsageError(
                f"verdictpack audit: --config {c}: no folder's provenance.json names "
                f"config_name {name!r}; expected a config of one of the folders "
                f"({', '.join(str(n) for n in names)})"
            )
    return {i: by_name[n] for i, n in enumerate(names) if isinstance(n, str) and n in by_name}


def audit_runs(
    run_dirs: Sequence[str | Path],
    configs: Sequence[str | Path] = (),
    rerender: Rerender | None = None,
) -> list[AuditReport]:
    """Audit several folders (UsageError when one does not exist); ``configs``: the config files
    they were made from, matched by :func:`_pair_configs` (a folder without one has its config
    hashes UNVERIFIED)."""
    for d in run_dirs:
        if not Path(d).is_dir():
            raise UsageError(f"verdictpack audit: {d}: expected an output folder; not found")
        if not any((Path(d) / f).exists() for f in ("results.json", MARKER, LIVE_MARKER_NAME)):
            # no file verdictpack writes first: not an output folder (a tampered one fails)
            raise UsageError(
                f"verdictpack audit: {d}: expected an output folder verdictpack wrote; it has "
                f"no results.json, {MARKER} or {LIVE_MARKER_NAME}"
            )
    dirs = [Path(d) for d in run_dirs]
    paired = _pair_configs(dirs, [Path(c) for c in configs])
    return [audit_run(d, paired.get(i), rerender) for i, d in enumerate(dirs)]


def format_reports(reports: Sequence[AuditReport], verbose: bool = False) -> str:
    out = []
    for r in reports:
        out.append(
            f"audit {r.run_dir} (kind {r.kind}): {r.checks} checks, {r.failed} failed, "
            f"{r.unverified} UNVERIFIED"
        )
        for f in r.findings:
            if verbose or f.status != "pass":
                out.append("  " + f.line())
    checks = sum(r.checks for r in reports)
    failed = sum(r.failed for r in reports)
    unver = sum(r.unverified for r in reports)
    verdict = "AUDIT PASS" if failed == 0 else "AUDIT FAIL"
    out.append(
        f"{verdict}: {len(reports)} folder(s), {checks} checks, {failed} failed, {unver} UNVERIFIED"
    )
    return "\n".join(out) + "\n"


def cli(argv: Sequence[str], rerender: Rerender | None = None) -> int:
    """``verdictpack audit RUN_DIR... [--config FILE]... [--verbose]``: 0 when nothing failed,
    1 otherwise; ``rerender``: the renderer the command line passes (see :func:`audit_run`)."""
    p = _ArgumentParser(
        prog="verdictpack audit",
        description="Re-derive every headline number of output folders by a second method.",
    )
    p.add_argument("run_dirs", nargs="+", metavar="RUN_DIR")
    p.add_argument(
        "--config",
        action="append",
        default=[],
        metavar="FILE",
        help="the config a folder was made from: its SHA-256 and RFC 8785 hashes are recomputed "
        "(repeatable; matched to folders by the config_name in their provenance)",
    )
    p.add_argument("--verbose", action="store_true", help="print every check, not only failures")
    args = p.parse_args(list(argv))
    reports = audit_runs(args.run_dirs, args.config, rerender)
    print(format_reports(reports, args.verbose), end="")
    return 0 if all(r.passed for r in reports) else 1
