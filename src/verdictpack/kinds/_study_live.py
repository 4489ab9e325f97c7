"""A study with live judges: ask them, commit in the registered order, stop at the verdict, resume.

``verdictpack STUDY.json --out DIR`` on a study whose judges have an ``endpoint``:

1. The study is read and gated as any study (:func:`~verdictpack.kinds._study.prepare_study`);
   judges read from files and the humans' annotations come from their files.
2. The *manifest* -- everything that decides which requests are sent and what they ask (the
   seed and so the registered order, the pairs file's hash, the gates, the construct and
   sequential settings, every judge's endpoint URL, model, profile, sampling and prompt, the trial
   count) -- is hashed; DIR's ledger holds one manifest
   (:class:`~verdictpack.evidence._live_folder.LiveFolder`). Budget, prices, concurrency, rate
   limits and timeouts are not in it: raising a budget or lowering a concurrency resumes it.
3. The committed prefix in the ledger enters the tracks as one block
   (:class:`~verdictpack.core._tracks.TrackStream`, the compiled kernel); the live run goes on
   from there (:func:`~verdictpack.evidence.live._runner.run_live`), each root
   committed through the same tracks, and the result is built from the trace they streamed:
   the verdict the run stopped on is the one it reports, and no track runs twice.
4. The outputs -- every file of a study, from the canonical table of file and live judgments of
   the committed roots -- are written to ``DIR/report/`` (an ordinary output folder, replaced
   whole by each run); the ledger stays. ``report/provenance.json`` records the ledger's hash
   chain as the run left it (``$.settings.ledger_chain``: its number of links and its last
   link), outside the ledger: resume and ``status`` refuse a ledger whose chain does not hold
   that link at that place (rows deleted from its end with their links, or the chain rewritten
   whole; a ledger grown since, by a run killed after its report, is taken up). A study begun
   (its marker there before this run) whose ledger.sqlite is empty (0 bytes), or missing while
   its report records the chain, is refused too, never started afresh over it.

A human judgment added to the files between runs is taken up when its root is committed; a root
already committed keeps the values it was committed with (the ledger's).
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import json
import math
import os
import signal
import time
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from verdictpack._errors import OutputError, UsageError
from verdictpack.config._blocks import build_sequential
from verdictpack.config._compiler import ConfigSource, compile_construct
from verdictpack.core._tracks import TrackStream
from verdictpack.evidence._ledger import Commit, Ledger, LedgerError, manifest_hash
from verdictpack.evidence._live_folder import (
    REPORT_FOLDER,
    LiveFolder,
)
from verdictpack.evidence._source import committed_evidence
from verdictpack.evidence._table import RATER_KINDS
from verdictpack.evidence.live._prices import Price
from verdictpack.evidence.live._profiles import Sampling
from verdictpack.evidence.live._prompts import effective_prompt, prompt_record
from verdictpack.evidence.live._retry import RetryPolicy
from verdictpack.evidence.live._runner import LiveJudge, LiveOutcome, run_live
from verdictpack.evidence.live._transport import HttpxTransport, Transport
from verdictpack.kinds._base import RunOptions
from verdictpack.kinds._study import (
    StudyPrepared,
    StudyResult,
    prepare_study,
    run_study,
)
from verdictpack.kinds._study_config import StudyConfig

__all__ = ["is_live", "live_judges", "manifest", "run_live_study"]

_MODEL, _HUMAN = RATER_KINDS.index("model"), RATER_KINDS.index("human")


def is_live(config: StudyConfig) -> bool:
    """True when some registered judge is asked over an endpoint."""
    return any(j.endpoint is not None for j in config.panel.judges)


def live_judges(config: StudyConfig, environ: Mapping[str, str] | None = None) -> list[LiveJudge]:
    """The endpoint judges, their keys read from the named environment variables (UsageError
    naming a variable that is not set; the key itself is never shown)."""
    env = os.environ if environ is None else environ
    out = []
    for j in config.panel.judges:
        e = j.endpoint
        if e is None:
            continue
        headers: tuple[tuple[str, str], ...] = ()
        if e.api_key_env is not None:
            key = env.get(e.api_key_env)
            if not key:
                raise UsageError(
                    f"judge {j.name!r}: the environment variable {e.api_key_env} (api_key_env) "
                    "is not set; export the API key there (it is never read from the config)"
                )
            headers = (("authorization", f"Bearer {key}"),)
        out.append(
            LiveJudge(
                name=j.name,
                base_url=e.base_url,
                model=e.model,
                profile=e.profile,
                sampling=Sampling(
                    temperature=e.sampling.temperature,
                    max_tokens=e.sampling.max_tokens,
                    seed=e.sampling.seed,
                    top_logprobs=e.sampling.top_logprobs,
                ),
                prompt=effective_prompt(e.prompt),
                price=Price(
                    per_million_input=e.price.per_million_input,
                    per_million_output=e.price.per_million_output,
                    per_call=e.price.per_call,
                ),
                concurrency=e.concurrency,
                requests_per_second=e.requests_per_second,
                timeout=e.timeout_seconds,
                headers=headers,
                retry=RetryPolicy(
                    max_attempts=e.retries.max_attempts,
                    base_delay=e.retries.base_delay_seconds,
                    max_delay=max(e.retries.max_delay_seconds, e.retries.base_delay_seconds),
                ),
            )
        )
    return out


def manifest(config: StudyConfig, prep: StudyPrepared) -> dict[str, Any]:
    """What decides the requests (module docstring, 2); plain JSON, no secrets."""
    stimuli = next(f for f in prep.data.files if f.role == "stimuli")
    judges = []
    for j in config.panel.judges:
        e = j.endpoint
        entry: dict[str, Any] = {"name": j.name, "live": e is not None}
        if e is not None:
            entry.update(
                base_url=e.base_url,
                model=e.model,
                profile=e.profile,
                sampling=e.sampling.model_dump(),
                prompt=prompt_record(effective_prompt(e.prompt)),
                api_key_env=e.api_key_env,
            )
        judges.append(entry)
    return {
        "format": 2,
        "seed": config.seed,
        "stimuli_sha256": stimuli.sha256,
        "gates": config.gates.model_dump(),
        "construct": config.construct_spec.model_dump(mode="json"),
        # the bets only when not the grid: ledgers written before the field resume unchanged
        "sequential": config.sequential.model_dump(
            mode="json", exclude=None if config.sequential.bets != "grid" else {"bets"}
        ),
        "trials": config.panel.trials,
        "judges": judges,
        "root_order": list(prep.order),
    }


@dataclass(frozen=True)
class _Scores:
    """Per admitted root (registered order): the file judges' model scores in half units, their
    lower and upper sums (a missing file cell unknown, 0 .. 2), and H_i's bounds (NaN: no H_i)."""

    file_lo: np.ndarray[Any, Any]
    file_hi: np.ndarray[Any, Any]
    h_lo: np.ndarray[Any, Any]
    h_hi: np.ndarray[Any, Any]

    def human(self, i: int) -> tuple[float, float] | None:
        lo, hi = float(self.h_lo[i]), float(self.h_hi[i])
        return None if lo != lo else (lo, hi)


def _scores(config: StudyConfig, prep: StudyPrepared) -> _Scores:
    """The file judges' and the humans' part of every admitted root, bounded as
    :mod:`~verdictpack.evidence._assemble` bounds a study's values (the same row bounds)."""
    table, policy, order = prep.table, prep.policy, prep.order
    n = len(order)
    rank_of = {r: k for k, r in enumerate(order)}
    rank = np.array([rank_of.get(r, -1) for r in table.roots] + [-1], np.int64)[table.root_code]
    file_judges = {j.name for j in config.panel.judges if j.endpoint is None}
    is_file = np.array([r in file_judges for r in table.raters] + [False], bool)[table.rater_code]
    model = (rank >= 0) & (table.rater_kind == _MODEL) & is_file
    human = (rank >= 0) & (table.rater_kind == _HUMAN)
    m_lo, m_hi = policy.row_bounds(_MODEL, table.choice[model], table.p_treatment[model])
    h_lo, h_hi = policy.row_bounds(_HUMAN, table.choice[human], table.p_treatment[human])
    file_n = np.bincount(rank[model], minlength=n)
    missing = len(file_judges) * 2 * config.panel.trials - file_n
    file_lo = np.bincount(rank[model], weights=m_lo, minlength=n)
    file_hi = np.bincount(rank[model], weights=m_hi, minlength=n) + 2 * missing
    h_n = np.bincount(rank[human], minlength=n)
    expected = config.humans.judgments_per_root or 0
    n_h = np.maximum(h_n, expected)
    shortfall = n_h - h_n
    lo_sum = np.bincount(rank[human], weights=h_lo, minlength=n)
    hi_sum = np.bincount(rank[human], weights=h_hi, minlength=n) + 2 * shortfall
    with np.errstate(invalid="ignore", divide="ignore"):
        lo = np.where(n_h > 0, lo_sum / (2 * np.maximum(n_h, 1)), np.nan)
        hi = np.where(n_h > 0, hi_sum / (2 * np.maximum(n_h, 1)), np.nan)
    return _Scores(file_lo, file_hi, lo, hi)


def _supports(
    total_cells: int, scores: _Scores
) -> tuple[np.ndarray[Any, Any], np.ndarray[Any, Any]]:
    """The values M_i and H_i are expected to take: M in half units of the root's cells, H
    those of the human judgments in the files (any other value widens the tracks' supports as
    it comes: a probability observation's, say)."""
    files = np.concatenate([scores.h_lo, scores.h_hi])
    return np.arange(2 * total_cells + 1) / (2 * total_cells), files[~np.isnan(files)]


def _check_committed(commits: Sequence[Commit], prep: StudyPrepared, scores: _Scores) -> None:
    """A committed root's evidence never changes: the commits must follow the registered order,
    and the human annotations in the files must still give each committed root the H_i bounds
    it was committed with (new annotations belong to roots not yet committed, where they are
    taken up in the registered order)."""
    for k, c in enumerate(commits):
        if k >= len(prep.order) or c.root_id != prep.order[k]:
            raise UsageError(
                f"the ledger's commit {k + 1} is root {c.root_id!r}, not the registered "
                "order's: the ledger does not belong to these stimuli"
            )
        now = scores.human(k)
        then = None if c.h_lo is None or c.h_hi is None else (c.h_lo, c.h_hi)
        same = (then is None and now is None) or (
            then is not None
            and now is not None
            and math.isclose(now[0], then[0])
            and math.isclose(now[1], then[1])
        )
        if not same:
            raise UsageError(
                f"the human annotations of root {c.root_id!r}, committed as root {k + 1} with "
                f"H in {then}, now give H in {now}: a committed root's evidence cannot change "
                "(add annotations only for roots not yet committed, or start a new study folder)"
            )


def run_live_study(
    config: StudyConfig,
    source: ConfigSource,
    out: str | Path,
    options: RunOptions | None = None,
    *,
    transport: Transport | None = None,
    environ: Mapping[str, str] | None = None,
    force: bool = False,
) -> tuple[StudyResult, LiveOutcome]:
    """Start or resume the live study in ``out`` (module docstring); the result of the committed
    prefix and what this run did."""
    prep = prepare_study(config, source)
    judges = live_judges(config, environ)
    construct = compile_construct(config.construct_spec)
    sequential = build_sequential(config.sequential)
    man = manifest(config, prep)
    digest = manifest_hash(man)
    with LiveFolder(out, config=source.display, manifest=digest, force=force) as folder:
        headers = [v for j in judges for k, v in j.headers if k == "authorization"]
        # the key itself and its header; a key shorter than 8 characters cannot be told from
        # ordinary text and is not guarded (no real provider issues one)
        secrets = [x for v in headers for x in (v, v.split(" ", 1)[-1]) if len(x) >= 8]
        anchor = recorded_chain(folder.path)
        _refuse_lost_ledger(
            folder.ledger, begun=not folder.fresh or anchor is not None, anchor=anchor
        )
        ledger = Ledger.open(folder.ledger, man, secrets=secrets)
        try:
            check_chain(ledger, anchor)
            committed = ledger.committed()
            scores = _scores(config, prep)
            _check_committed(committed, prep, scores)
            total_cells = (len(config.panel.judges)) * 2 * config.panel.trials
            tracks = TrackStream(
                sequential.tracks(construct),
                sequential.cap_roots,
                *_supports(total_cells, scores),
            )
            nan = float("nan")  # the committed prefix into the tracks as one block
            tracks.extend(
                [c.m_lo for c in committed],
                [c.m_hi for c in committed],
                [nan if c.h_lo is None else c.h_lo for c in committed],
                [nan if c.h_hi is None else c.h_hi for c in committed],
                at_cap=len(committed) == min(sequential.cap_roots, len(prep.order)),
            )
            policy = prep.policy
            by_id = {s.id: s for s in prep.data.stimuli}
            roots = [by_id[r] for r in prep.order]

            def root_value(
                i: int, cells: Mapping[tuple[str, str, int], tuple[str, float | None]]
            ) -> tuple[float, float]:
                live = [policy.cell_bounds(ch, p) for ch, p in cells.values()]
                lo = scores.file_lo[i] + sum(b[0] for b in live)
                hi = scores.file_hi[i] + sum(b[1] for b in live)
                return float(lo / (2 * total_cells)), float(hi / (2 * total_cells))

            own = transport or HttpxTransport()
            hook = options.progress if options else None
            total = min(sequential.cap_roots, len(roots))

            def tell(outcome: LiveOutcome, tracks: TrackStream) -> None:
                if hook is not None:  # the run's progress hook, e.g. the CLI's line
                    lo, hi = tracks.interval("registered")
                    cap = config.budget.judges
                    spend = f"spend {ledger.spend().total:.4g}" + (
                        "" if cap is None else f" of {cap:.4g}"
                    )
                    what = f"live study (h-interval [{lo:.3f}, {hi:.3f}]; {outcome.sent:,} calls"
                    what += f" sent, {outcome.cached:,} from the ledger; {spend}): roots committed"
                    hook(what, outcome.committed, total)

            progress = tell if hook is not None else None

            async def go() -> LiveOutcome:
                try:
                    return await run_live(
                        roots,
                        judges,
                        config.panel.trials,
                        ledger,
                        own,
                        tracks,
                        root_value,
                        scores.human,
                        cap=sequential.cap_roots,
                        budget=config.budget.judges,
                        seed=config.seed,
                        progress=progress,
                    )
                finally:
                    if transport is None:
                        await own.aclose()

            before = ledger.sent_tally()[0]  # this run's calls: the sent records after it
            ledger.record_event(
                "run_start",
                {
                    "budget_judges": config.budget.judges,
                    "judges": len(judges),
                    "t": round(time.time(), 3),
                    "sent_before": before,
                    "pid": os.getpid(),
                },
            )
            t0 = time.perf_counter()
            try:
                with _sigterm_as_interrupt():
                    outcome = asyncio.run(go())
            except KeyboardInterrupt:
                outcome = LiveOutcome(
                    committed=len(ledger.committed()),
                    stop="interrupted",
                    sent=ledger.sent_tally(before)[1],
                    seconds=time.perf_counter() - t0,
                )
            ledger.record_event(
                "run_end",
                {
                    "t": round(time.time(), 3),
                    "stop": outcome.stop,
                    "committed": outcome.committed,
                    "sent": outcome.sent,
                    "cached": outcome.cached,
                    "cancelled": outcome.cancelled,
                    "cancelled_cost": outcome.cancelled_cost,
                    "seconds": round(outcome.seconds, 3),
                    "message": outcome.message,
                },
            )
            live = committed_evidence(
                ledger.committed(),
                ledger.answers_by_key().values(),
                outcome.stop,
                ledger.chain_head(),
            )
        finally:
            ledger.close()
        result = run_study(
            config, source, options, prep=prep, live=live, trace=tracks.trace(len(live.roots))
        )
    return result, outcome


@contextlib.contextmanager
def _sigterm_as_interrupt() -> Iterator[None]:
    """SIGTERM stops a live run as Ctrl-C does: in-flight calls cancelled and recorded, the
    committed prefix reported, exit 130 (the main thread only; elsewhere nothing changes).

    The signal is handed to whatever answers SIGINT at that moment. Inside ``asyncio.run``
    that is the runner's handler, which cancels the main task, so the run stops at an
    ``await`` and never between a ledger write and the bookkeeping beside it (a
    ``KeyboardInterrupt`` raised at any bytecode could lose a staged request record and then
    cancel a request the ledger never held); the runner raises ``KeyboardInterrupt`` once the
    run has unwound. Outside it, SIGINT's default handler raises ``KeyboardInterrupt``.
    """

    def handler(signum: int, frame: Any) -> None:
        current = signal.getsignal(signal.SIGINT)
        if callable(current):
            current(signal.SIGINT, frame)
        else:  # SIGINT ignored or defaulted by the embedding program: stop as Ctrl-C would
            raise KeyboardInterrupt("terminated")

    try:
        previous = signal.signal(signal.SIGTERM, handler)
    except ValueError:  # not the main thread
        yield
        return
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, previous)


_ANCHOR_PATH = "$.settings.ledger_chain"


def recorded_chain(folder: Path) -> tuple[int, str] | None:
    """The ledger chain's (length, last link) that ``folder/report/provenance.json`` recorded,
    or None when there is no report yet (or one written before reports recorded it)."""
    path = folder / REPORT_FOLDER / "provenance.json"
    if not path.is_file():
        return None
    try:
        data = json.loads(path.read_bytes())
    except (OSError, ValueError, RecursionError) as exc:
        raise OutputError(f"{path}: unreadable ({type(exc).__name__}: {exc})") from None
    settings = data.get("settings") if isinstance(data, dict) else None
    held = settings.get("ledger_chain") if isinstance(settings, dict) else None
    if held is None:
        return None
    length = held.get("length") if isinstance(held, dict) else None
    head = held.get("head") if isinstance(held, dict) else None
    if (
        not isinstance(length, int)
        or isinstance(length, bool)
        or length < 1
        or not isinstance(head, str)
        or len(head) != 64
    ):
        raise OutputError(
            f"{path} {_ANCHOR_PATH}: {held!r}; expected the ledger chain's length (an integer "
            ">= 1) and last link (64 hex digits) as verdictpack records them"
        )
    return length, head


def check_chain(ledger: Ledger, anchor: tuple[int, str] | None) -> None:
    """Refuse the ledger unless its chain holds the recorded last link at its recorded place
    (it may have grown since, never shrunk below it or diverged from it)."""
    if anchor is None:
        return
    length, head = anchor
    links, link = ledger.chain_head(length - 1)
    where = f"{REPORT_FOLDER}/provenance.json {_ANCHOR_PATH}"
    if links < length:
        what = f"its hash chain has {links:,} links; {where} recorded {length:,}"
    elif link != head:
        what = f"its hash chain's link {length - 1:,} is not the one {where} recorded"
    else:
        return
    raise LedgerError(
        f"ledger {ledger.path}: {what}: rows were deleted from its end or its chain rewritten "
        "outside verdictpack; refused: its evidence can no longer be trusted. Restore the "
        "ledger from a backup, or start the study afresh in a new folder"
    )


def _refuse_lost_ledger(path: Path, *, begun: bool, anchor: tuple[int, str] | None) -> None:
    """A study begun (its marker or report there before this run) never starts afresh over a
    lost ledger.sqlite: emptied (0 bytes), or gone while the report records its chain (a ledger
    missing with no report is a start killed before its ledger was made: taken up afresh). A
    folder in the ledger's place is refused by name."""
    lost = (
        "refused: its evidence is gone (never started afresh over it). Restore the ledger "
        "from a backup, or start the study afresh in a new folder"
    )
    if path.is_dir():
        raise LedgerError(f"ledger {path}: a folder, not a ledger file; refused")
    if begun and path.is_file() and not path.is_symlink() and path.stat().st_size == 0:
        raise LedgerError(
            f"ledger {path}: empty (0 bytes) in a live study's folder whose marker says the "
            f"study was begun; {lost}"
        )
    if anchor is not None and not os.path.lexists(path):
        raise LedgerError(
            f"ledger {path}: missing from a live study's folder whose report records "
            f"{anchor[0]:,} links of its hash chain; {lost}"
        )


# ----------------------------------------------------------------------------------------------
# --plan: what the study would cost, spending nothing
# ----------------------------------------------------------------------------------------------

PLAN_SPRT_BETA = 0.2
MAX_PLAN_ROOTS = 1_000_000
PLAN_FIXED_N_POWER = 0.8


@dataclass(frozen=True)
class StudyPlan:
    """The projected routes of a study under its judges' sheets (all simulated)."""

    construct: Any
    sheets_source: str
    panel: dict[str, Any]
    cost_per_root: float
    roots_available: int
    human_coverage: float
    oc: Any  # ScenarioOC of the sheets' world under every route
    budget: float | None
    roots_within_budget: int | None
    within_budget: Any  # RootsToGo: P(a verdict within the budget's roots), or None
    human_rate: float = 0.5  # the humans' rate of the planned world
    human_rate_source: str = ""
    human_icc: float | None = None  # the human sheet's vote ICC the plan simulates (fitted)
    cap: int = 0  # the one cap of the plan: its sentences and its route tables alike
    cap_reason: str = ""
    allocation: Any = None  # (AllocationPlan, its ICC_H sentence): humans per root compared


def _sheet_panel(
    config: StudyConfig, sheets: Mapping[str, Any] | None, call_costs: Mapping[str, float]
) -> tuple[dict[str, Any], str]:
    """The panel block to plan with: a previous study's fitted panel (``sheets``) or the
    judges' priors; every registered judge needs a sheet."""
    if sheets is not None:
        block = dict(sheets.get("panel", sheets))
        by_name = {j["name"]: dict(j) for j in block.get("judges", [])}
        source = "sheets fitted by a previous study (--sheets)"
    else:
        by_name = {
            j.name: {"name": j.name, **j.prior.model_dump()}
            for j in config.panel.judges
            if j.prior is not None
        }
        block = {
            "name": f"{config.panel.name} (priors)",
            "latent_correlation": config.panel.latent_correlation or 0.0,
        }
        source = "the judges' priors in the config"
    missing = [j.name for j in config.panel.judges if j.name not in by_name]
    if missing:
        raise UsageError(
            "--plan: every registered judge needs a character sheet to simulate from; none for "
            + ", ".join(missing)
            + " (give each a `prior` in the config, or --sheets FILE with a fitted_panel.json)"
        )
    judges = []
    for j in config.panel.judges:
        sheet = by_name[j.name]
        judges.append(
            {
                "name": j.name,
                "role": sheet.get("role", "judge"),
                "baseline_rate": sheet["baseline_rate"],
                "lean_h": sheet.get("lean_h", 0.0),
                "noise": sheet.get("noise", 0.0),
                "position_bias": sheet.get("position_bias", 0.0),
                "cost_per_judgment": call_costs.get(j.name, 0.0),
            }
        )
    return {
        "name": block.get("name", "plan"),
        "latent_correlation": block.get("latent_correlation", 0.0),
        "judges": judges,
    }, source


def plan_study(
    config: StudyConfig,
    source: ConfigSource,
    sheets: Mapping[str, Any] | None = None,
    replicates: int = 2000,
) -> StudyPlan:
    """Every route of the study simulated from the judges' sheets in the world they describe
    (effect scale 1), at the live judges' worst-case call prices (file judges' and humans' at
    their ``cost_per_judgment``); nothing is sent."""
    from verdictpack._rng import stream
    from verdictpack.config._blocks import HumanSpec, PanelSpec, RoutesSpec
    from verdictpack.evidence.live._prices import max_call_cost, prompt_token_bound
    from verdictpack.evidence.live._prompts import render_messages
    from verdictpack.kinds._study_allocation import StudyPlanInputs, plan_humans, plan_icc
    from verdictpack.simulate._continuation import roots_to_go
    from verdictpack.simulate._judges import TruthScenario
    from verdictpack.simulate._panels import build_panel
    from verdictpack.simulate._routes import route_design, simulate_scenario

    prep = prepare_study(config, source)
    construct = compile_construct(config.construct_spec)
    sequential = build_sequential(config.sequential)
    judges = live_judges(config, environ={k: "planning" for k in _key_vars(config)})
    sample = next((s for s in prep.data.stimuli if s.id in set(prep.order)), None)
    call_costs: dict[str, float] = {}
    for j in judges:
        messages = render_messages(j.prompt, sample, "treatment_first") if sample else []
        tokens = prompt_token_bound(messages)
        call_costs[j.name] = max_call_cost(j.price, tokens, j.sampling.max_tokens)
    live_per_root = sum(call_costs.values()) * config.panel.trials * 2  # what budget.judges caps
    for spec in config.panel.judges:  # a judge read from files: its price per judgment
        call_costs.setdefault(spec.name, spec.cost_per_judgment)
    block, source_text = _sheet_panel(config, sheets, call_costs)
    human_rate, rate_source = _plan_human_rate(construct.human_baseline_rate, sheets)
    human_icc = (icc := plan_icc(config, sheets))[0]  # and the sentence saying whence
    panel = build_panel(PanelSpec.model_validate(block))
    per_root = sum(call_costs.values()) * config.panel.trials * 2
    scores = _scores(config, prep)
    has_h = ~np.isnan(scores.h_lo)
    coverage = float(has_h.mean()) if has_h.size else 0.0
    n_h = config.humans.judgments_per_root or 1
    human_price = config.humans.cost_per_judgment
    budget = config.budget.judges
    # one cap for the whole plan: the config's cap, the admitted roots, the budget's roots
    horizon = min(sequential.cap_roots, len(prep.order))
    reason = (
        f"the cap of {sequential.cap_roots:,} roots"
        if sequential.cap_roots <= len(prep.order)
        else f"the {len(prep.order):,} admitted roots"
    )
    roots_budget = None
    if budget is not None and live_per_root > 0:
        roots_budget = min(int(budget // live_per_root), MAX_PLAN_ROOTS)
        if roots_budget < horizon:
            horizon = roots_budget
            reason = f"the judges' budget {budget:.6g}, which covers {roots_budget:,} roots"
    design = dataclasses.replace(
        route_design(
            construct,
            panel,
            HumanSpec(judgments_per_root=n_h, cost_per_judgment=human_price, icc=human_icc),
            dataclasses.replace(sequential, cap_roots=max(1, horizon)),
            RoutesSpec(sprt_beta=PLAN_SPRT_BETA, fixed_n_power=PLAN_FIXED_N_POWER),
        ),
        human_rate=human_rate,
        score_by_true_h=True,
    )
    scenario = TruthScenario(name="the sheets' world", effect_scale=1.0)
    oc = simulate_scenario(design, scenario, config.seed, "study/plan", replicates)
    within = None
    if horizon >= 1:
        within = roots_to_go(
            np.zeros(0),
            np.zeros(0),
            sequential.construction,
            construct.per_tail_alpha,
            sequential.spec,
            construct.governing_threshold_h,
            panel,
            human_rate,
            n_h,
            max(coverage, 1e-9),
            max(100, replicates // 2),
            horizon,
            stream(config.seed, "study/plan/budget"),
            effect_scale=1.0,
            bets=sequential.bets,
            horizon=max(1, horizon),  # as the plan's design: bets tuned to the plan's cap
            method="sheets",
            human_icc=human_icc,
        )
    inputs = StudyPlanInputs(
        construct, sequential, panel, icc, human_rate, per_root, horizon, replicates
    )
    allocation = plan_humans(config, prep, inputs)
    return StudyPlan(
        construct=construct,
        sheets_source=source_text,
        panel=block,
        cost_per_root=per_root,
        roots_available=len(prep.order),
        human_coverage=coverage,
        oc=oc,
        budget=budget,
        roots_within_budget=roots_budget,
        within_budget=within,
        human_rate=human_rate,
        human_rate_source=rate_source,
        human_icc=human_icc,
        cap=horizon,
        cap_reason=reason,
        allocation=allocation,
    )


def _plan_human_rate(configured: float, sheets: Mapping[str, Any] | None) -> tuple[float, str]:
    """The humans' rate of the planned world: the one a fitted_panel.json carries (its sheets
    are written relative to it, so the two belong together), else ``configured`` (the
    construct's human baseline rate)."""
    if sheets is None:
        return configured, "the construct's human baseline rate"
    fitted = sheets.get("human_rate") if "panel" in sheets else None
    if isinstance(fitted, int | float) and 0.0 < float(fitted) < 1.0:
        return float(fitted), "the humans' rate fitted with the sheets (fitted_panel.json)"
    return configured, (
        "the construct's human baseline rate: the sheets carry no fitted human rate (a "
        "fitted_panel.json written before it did, or a study without human judgments), so "
        "sheets fitted relative to another rate would shift the planned world's h"
    )


def _key_vars(config: StudyConfig) -> list[str]:
    return [
        j.endpoint.api_key_env
        for j in config.panel.judges
        if j.endpoint is not None and j.endpoint.api_key_env is not None
    ]
