"""The battery's tasks and executors: fixed-size blocks of replicates (one SeedSequence child
each), run in this process, in a process pool whose workers end with their parent, or on a Dask
cluster, with their outcomes collected in block order. Used by :mod:`verdictpack.kinds._battery`."""

from __future__ import annotations

import itertools
import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from verdictpack._errors import InputError, UsageError
from verdictpack._parallel import set_parent_death_signal, usable_cpus
from verdictpack._rng import block_streams
from verdictpack.kinds._base import RunOptions, report_progress
from verdictpack.simulate._judges import TruthScenario
from verdictpack.simulate._operating import BlockOutcome, Cell, Job, RouteDesign, run_cells

DASK_HINT = "pip install 'verdictpack[dask]'"


@dataclass(frozen=True)
class BlockTask:
    """Block ``index`` of every scenario: picklable (frozen dataclasses and generators)."""

    index: int
    design: RouteDesign
    scenarios: tuple[TruthScenario, ...]
    sizes: tuple[int, ...]
    generators: tuple[np.random.Generator, ...]
    constructions: tuple[str, ...] | None = None  # None: both, the registered one first


def run_block_task(task: BlockTask, threads: int = 1) -> tuple[int, tuple[BlockOutcome, ...]]:
    """Run one task (the worker entry point); returns its block index with the outcomes.
    ``threads`` spreads the task's replicates over threads (never changes a number)."""
    cells = [
        Cell(task.design, sc, n, rng)
        for sc, n, rng in zip(task.scenarios, task.sizes, task.generators, strict=True)
    ]
    return task.index, tuple(run_cells(cells, task.constructions, threads=threads))


def battery_tasks(
    jobs: Sequence[Job],
    seed: int,
    replicates: int,
    block_size: int,
    first_index: int = 0,
    constructions: tuple[str, ...] | None = None,
) -> list[BlockTask]:
    """One task per block index; job j's block b draws from its purpose's block stream b.
    Task indices start at ``first_index`` (the grid's tasks follow the scenarios' in one run);
    ``constructions`` None: both e-process constructions."""
    if not jobs:
        raise InputError("jobs", "at least one scenario", [])
    design = jobs[0].design
    if any(job.design != design for job in jobs):
        raise InputError("jobs", "scenarios sharing one design", "jobs with different designs")
    streams = [block_streams(seed, job.purpose, replicates, block_size) for job in jobs]
    return [
        BlockTask(
            index=first_index + b,
            design=design,
            scenarios=tuple(job.scenario for job in jobs),
            sizes=tuple(s[b][0] for s in streams),
            generators=tuple(s[b][1] for s in streams),
            constructions=constructions,
        )
        for b in range(len(streams[0]))
    ]


Outcomes = list[tuple[BlockOutcome, ...]]


def _collect(results: Outcomes, item: tuple[int, tuple[BlockOutcome, ...]]) -> None:
    index, outcome = item
    results[index] = outcome


def _run_in_process(tasks: Sequence[BlockTask], tick: Callable[[], None]) -> Outcomes:
    """One process: the tasks in turn, each spread over the CPUs this process may use."""
    threads = usable_cpus()
    out: Outcomes = [() for _ in tasks]
    for task in tasks:
        _collect(out, run_block_task(task, threads))
        tick()
    return out


# Worker processes never outlive the run that started them. A worker's start-up (the pool's
# initializer, in the fresh interpreter of the spawn context) asks Linux to SIGKILL it when its
# parent dies (prctl PR_SET_PDEATHSIG), checks right after that the parent is still the process
# that started it (it may have died before the request), and starts a watchdog thread that polls
# the parent (every platform; the only guard where prctl is missing). The death signal fires when
# the *thread* that forked the worker ends: ProcessPoolExecutor spawns workers from submit() (the
# thread running _run_process_pool, which outlives the pool) or, when it replaces workers, from
# its manager thread (which lives until shutdown), so it never fires early. A worker's stdin and
# stdout are /dev/null: it prints nothing, so the caller's stdout never waits on it; its stderr
# stays (diagnostics) and closes with it. SIGTERM in the parent terminates the pool (workers
# ended, futures cancelled) and exits 143 with one line on stderr.
_ORPHAN_EXIT = 70  # a worker whose parent died exits with this code
_PARENT_POLL_SECONDS = 0.5
_TERMINATED_EXIT = 128 + 15  # the shell's code for "ended by SIGTERM"


class _Terminated(SystemExit):
    """Raised by the pool's SIGTERM handler: unwinds the run (a SystemExit, so no traceback)."""


def _parent_gone(parent_pid: int) -> bool:
    """Whether the process that started this one has died (POSIX: we were re-parented)."""
    import os

    if os.name == "posix":
        return os.getppid() != parent_pid
    import multiprocessing

    parent = multiprocessing.parent_process()
    return parent is not None and not parent.is_alive()


def _watch_parent(parent_pid: int, interval: float = _PARENT_POLL_SECONDS) -> None:
    """Start a daemon thread that ends this process (``os._exit``) once the parent is gone; it
    polls every ``interval`` seconds for as long as the process lives."""
    import os
    import threading
    import time

    def watch() -> None:
        while not _parent_gone(parent_pid):
            time.sleep(interval)
        os._exit(_ORPHAN_EXIT)

    threading.Thread(target=watch, name="verdictpack-parent-watch", daemon=True).start()


def _worker_start(parent_pid: int) -> None:
    """The pool's initializer, run first in every worker: die with the parent, hold no pipe of the
    caller's on stdin or stdout."""
    import os

    set_parent_death_signal()
    if _parent_gone(parent_pid):  # the parent died before the death signal was armed
        os._exit(_ORPHAN_EXIT)
    _watch_parent(parent_pid)
    devnull = os.open(os.devnull, os.O_RDWR)
    try:
        for fd in (0, 1):
            os.dup2(devnull, fd)
    finally:
        os.close(devnull)


def _end_workers(pool: Any, timeout: float = 5.0) -> None:
    """Terminate the pool's worker processes and wait (bounded) until they are gone."""
    from multiprocessing.connection import wait

    procs = list((getattr(pool, "_processes", None) or {}).values())
    for p in procs:
        if p.is_alive():
            p.terminate()
    alive = [p for p in procs if p.is_alive()]
    if alive:
        wait([p.sentinel for p in alive], timeout)
    for p in procs:
        if p.is_alive():
            p.kill()


def _run_process_pool(
    tasks: Sequence[BlockTask], workers: int, tick: Callable[[], None]
) -> Outcomes:
    import multiprocessing
    import os
    import signal
    import threading
    from concurrent.futures import ProcessPoolExecutor, as_completed

    def on_sigterm(signum: int, frame: Any) -> None:
        raise _Terminated(_TERMINATED_EXIT)

    # Only the main thread may set handlers; a handler someone else installed is left alone.
    previous: Any = None
    main = threading.current_thread() is threading.main_thread()
    if main and signal.getsignal(signal.SIGTERM) == signal.SIG_DFL:
        previous = signal.signal(signal.SIGTERM, on_sigterm)

    out: Outcomes = [() for _ in tasks]
    # spawn: a fresh interpreter per worker, safe whatever threads the parent holds
    ctx = multiprocessing.get_context("spawn")
    pool: ProcessPoolExecutor | None = None
    try:
        pool = ProcessPoolExecutor(
            max_workers=min(workers, len(tasks)),
            mp_context=ctx,
            initializer=_worker_start,
            initargs=(os.getpid(),),
        )
        futures = [pool.submit(run_block_task, task) for task in tasks]
        for fut in as_completed(futures):
            _collect(out, fut.result())
            tick()
        pool.shutdown(wait=True)
    except BaseException as exc:
        # Ending the workers breaks the pool: its manager fails every pending future and exits.
        # (No future is cancelled here: Python 3.11's manager then fails on the cancelled ones.)
        if pool is not None:
            _end_workers(pool)
            pool.shutdown(wait=True)
        if isinstance(exc, _Terminated):
            print(
                "verdictpack: terminated (SIGTERM); workers ended, nothing written", file=sys.stderr
            )
        raise
    finally:
        if previous is not None:
            signal.signal(signal.SIGTERM, previous)
    return out


def _run_dask(tasks: Sequence[BlockTask], scheduler: str, tick: Callable[[], None]) -> Outcomes:
    try:
        from distributed import Client, as_completed
    except ImportError:
        raise UsageError(
            "--executor dask: the Dask executor needs the optional dependency "
            f"dask[distributed], which is not installed; install it with: {DASK_HINT}"
        ) from None
    try:
        client = Client(scheduler, timeout="20s")
    except (OSError, TimeoutError, ValueError) as exc:
        raise UsageError(
            f"--scheduler: expected the address of a running Dask scheduler; could not connect "
            f"to {scheduler!r} ({type(exc).__name__}: {exc})"
        ) from None
    out: Outcomes = [() for _ in tasks]
    try:
        futures = client.map(run_block_task, list(tasks), pure=False)
        try:
            for fut in as_completed(futures):
                _collect(out, fut.result())
                tick()
        except BaseException:
            client.cancel(futures)
            raise
    finally:
        client.close()
    return out


def execute_tasks(tasks: Sequence[BlockTask], options: RunOptions) -> Outcomes:
    """Run the tasks on the executor ``options`` names; outcomes in task (block) order. The
    run's progress hook (``options.progress``) hears of each finished block, from 0 of them."""
    tell = report_progress(options, "battery, blocks") if tasks else None
    done = itertools.count()

    def tick() -> None:
        if tell is not None:
            tell(next(done), len(tasks))

    tick()
    if options.executor == "dask":
        if not options.scheduler:
            raise UsageError("--executor dask: expected --scheduler ADDRESS; received none")
        return _run_dask(tasks, options.scheduler, tick)
    if options.executor != "local":
        raise UsageError(f"--executor: expected local or dask; received {options.executor}")
    if options.workers <= 1 or len(tasks) <= 1:
        return _run_in_process(tasks, tick)
    return _run_process_pool(tasks, options.workers, tick)
