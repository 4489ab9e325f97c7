"""Work beside the calling thread, with the standard library's executors: threads for work that
releases the GIL (the compiled kernel, numpy's generators and ufuncs), a forked child for
pure-Python work that does not.

:func:`map_in_threads` is the package's one way of spreading independent items over threads
(:class:`~concurrent.futures.ThreadPoolExecutor`): results come back in the items' order and
each item's work never depends on which thread ran it, so the numbers are those of a plain loop.
The first error (in item order) is re-raised in the calling thread; items not yet started are
cancelled.

:func:`in_background` runs one call in a child while the caller goes on: a
:class:`~concurrent.futures.ProcessPoolExecutor` of one worker, forked (Linux only, in a process
with one Python thread; elsewhere, when the fork fails, or with ``VERDICTPACK_NO_FORK`` set, the
call simply runs when its result is asked for). The call reaches the child by the fork itself
(the pool's initializer argument), so only its result is pickled; the child is SIGKILLed if the
caller dies. Whatever the child raises, or a child that dies, makes :meth:`Background.result`
run the call in the caller instead, so errors surface exactly as an inline call raises them and
the result is always the call's own.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable, Sequence
from concurrent.futures import (
    FIRST_EXCEPTION,
    Future,
    ProcessPoolExecutor,
    ThreadPoolExecutor,
    wait,
)
from typing import Any, Generic, TypeVar

__all__ = [
    "Background",
    "in_background",
    "map_in_threads",
    "set_parent_death_signal",
    "usable_cpus",
]

T = TypeVar("T")
R = TypeVar("R")


def usable_cpus() -> int:
    """The CPUs this process may use (at most 8): how many threads the kernel's runs get."""
    try:
        n = len(os.sched_getaffinity(0))
    except AttributeError:  # not on Linux
        n = os.cpu_count() or 1
    return max(1, min(8, n))


def map_in_threads(fn: Callable[[T], R], items: Sequence[T], threads: int) -> list[R]:
    """``[fn(x) for x in items]``, the items handed out to ``threads`` threads."""
    if threads <= 1 or len(items) <= 1:
        return [fn(x) for x in items]
    pool = ThreadPoolExecutor(max_workers=min(threads, len(items)))
    try:
        futures = [pool.submit(fn, x) for x in items]
        wait(futures, return_when=FIRST_EXCEPTION)
        for f in futures:  # after an error: the items not started (all after it) never run
            f.cancel()
        return [f.result() for f in futures]
    finally:
        pool.shutdown(wait=True)


_PR_SET_PDEATHSIG = 1  # <linux/prctl.h>


def set_parent_death_signal() -> bool:
    """Linux: SIGKILL this process when its parent dies; False where that is not available."""
    if not sys.platform.startswith("linux"):
        return False
    import ctypes
    import signal

    try:
        libc = ctypes.CDLL(None, use_errno=True)
        ok = libc.prctl(
            ctypes.c_int(_PR_SET_PDEATHSIG),
            ctypes.c_ulong(signal.SIGKILL),
            ctypes.c_ulong(0),
            ctypes.c_ulong(0),
            ctypes.c_ulong(0),
        )
    except (OSError, AttributeError):
        return False
    return int(ok) == 0


def _may_fork() -> bool:
    import threading

    return (
        sys.platform.startswith("linux")
        and not os.environ.get("VERDICTPACK_NO_FORK")
        and threading.active_count() == 1
    )


_CALL: Callable[[], Any] | None = None  # in the child: the call it inherited


def _adopt(fn: Callable[[], Any], parent: int) -> None:
    """The pool's initializer, in the forked child: die with the caller, keep the call."""
    global _CALL
    set_parent_death_signal()
    if os.getppid() != parent:  # the caller died before the death signal was armed
        os._exit(1)
    _CALL = fn


def _run_adopted() -> Any:
    if _CALL is None:
        raise RuntimeError("no call inherited")
    return _CALL()


class Background(Generic[R]):
    """One call started by :func:`in_background`; :meth:`result` gives its value, once."""

    def __init__(self, fn: Callable[[], R]) -> None:
        import multiprocessing

        self._fn = fn
        self._pool: ProcessPoolExecutor | None = None
        self._future: Future[R] | None = None
        if not _may_fork():
            return
        try:
            self._pool = ProcessPoolExecutor(
                max_workers=1,
                mp_context=multiprocessing.get_context("fork"),
                initializer=_adopt,
                initargs=(fn, os.getpid()),
            )
            self._future = self._pool.submit(_run_adopted)
        except OSError:
            self._end()

    @property
    def forked(self) -> bool:
        """Whether a child computes it (for tests)."""
        return self._future is not None

    def result(self) -> R:
        """The call's value: the child's, or (no child, or it failed) computed here now."""
        future, self._future = self._future, None
        if future is not None:
            try:
                return future.result()
            except Exception:  # the call runs here and raises its own error
                pass
            finally:
                self._end()
        return self._fn()

    def cancel(self) -> None:
        """Stop a child whose result is not wanted (the caller failed before asking)."""
        if self._future is not None:
            self._future = None
            self._end(kill=True)

    def _end(self, *, kill: bool = False) -> None:
        pool, self._pool = self._pool, None
        if pool is None:
            return
        if kill:  # the pool then breaks; its manager fails the future and ends
            for p in list((getattr(pool, "_processes", None) or {}).values()):
                p.kill()
        pool.shutdown(wait=True)


def in_background(fn: Callable[[], R]) -> Background[R]:
    """Start ``fn()`` in a forked child (see the module docstring); ``.result()`` to get it."""
    return Background(fn)
