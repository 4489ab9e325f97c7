"""Work beside the calling thread: threads for work that releases the GIL (the compiled kernel,
numpy's generators and ufuncs), a forked child for pure-Python work that does not.

:func:`map_in_threads` is the package's one way of spreading independent items over threads:
results come back in the items' order and each item's work never depends on which thread ran
it, so the numbers are those of a plain loop. The first error raised by any item is re-raised in
the calling thread (the remaining items are skipped).

:func:`in_background` runs one call in a forked child while the caller goes on (Linux only,
in a process with one Python thread; elsewhere, when the fork fails, or with
``VERDICTPACK_NO_FORK`` set, the call simply runs when its result is asked for). The child
inherits the caller's memory as it stood, computes, sends its pickled result down a pipe and
ends with ``os._exit`` (no atexit handler; the standard streams are flushed before the fork
and again, with only the child's own writes, before it ends); it is SIGKILLed if the caller
dies first. Whatever the child raises, or a child that dies, makes
:meth:`Background.result` run the call in the caller instead, so errors surface exactly as an
inline call raises them and the result is always the call's own.
"""

from __future__ import annotations

import contextlib
import os
import sys
from collections.abc import Callable, Sequence
from typing import Generic, TypeVar

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
    import os

    try:
        n = len(os.sched_getaffinity(0))
    except AttributeError:  # not on Linux
        n = os.cpu_count() or 1
    return max(1, min(8, n))


def map_in_threads(fn: Callable[[T], R], items: Sequence[T], threads: int) -> list[R]:
    """``[fn(x) for x in items]``, the items handed out one at a time to ``threads`` threads (the
    calling thread is one of them)."""
    n = len(items)
    if threads <= 1 or n <= 1:
        return [fn(x) for x in items]
    import threading

    results: list[R | None] = [None] * n
    lock = threading.Lock()
    state = {"next": 0}
    errors: list[BaseException] = []

    def work() -> None:
        while True:
            with lock:
                i = state["next"]
                if i >= n or errors:
                    return
                state["next"] = i + 1
            try:
                results[i] = fn(items[i])
            except BaseException as exc:  # re-raised in the calling thread
                with lock:
                    errors.append(exc)

    helpers = [threading.Thread(target=work) for _ in range(min(threads, n) - 1)]
    for t in helpers:
        t.start()
    work()
    for t in helpers:
        t.join()
    if errors:
        raise errors[0]
    return results  # type: ignore[return-value]


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
        and hasattr(os, "fork")
        and not os.environ.get("VERDICTPACK_NO_FORK")
        and threading.active_count() == 1
    )


def _flush_std() -> None:
    for stream in (sys.stdout, sys.stderr):
        with contextlib.suppress(Exception):
            if stream is not None:
                stream.flush()


class Background(Generic[R]):
    """One call started by :func:`in_background`; :meth:`result` gives its value, once."""

    def __init__(self, fn: Callable[[], R]) -> None:
        self._fn = fn
        self._pid = 0
        self._fd = -1
        self.forked = False  # whether a child computes it (for tests and --stages)
        if not _may_fork():
            return
        try:
            r, w = os.pipe()
        except OSError:
            return
        parent = os.getpid()
        _flush_std()  # the child starts with empty buffers: nothing of ours is written twice
        try:
            pid = os.fork()
        except OSError:
            os.close(r)
            os.close(w)
            return
        if pid == 0:  # the child: never returns from here
            code = 1
            try:
                os.close(r)
                set_parent_death_signal()
                if os.getppid() == parent:
                    import pickle

                    data = pickle.dumps(fn(), protocol=pickle.HIGHEST_PROTOCOL)
                    view = memoryview(data)
                    while view:
                        view = view[os.write(w, view) :]
                    code = 0
            except BaseException:  # the caller runs the call itself and sees the error
                code = 1
            finally:
                _flush_std()  # what the call itself printed (a warning, say) is not lost
                os._exit(code)
        os.close(w)
        self._pid, self._fd, self.forked = pid, r, True

    def result(self) -> R:
        """The call's value: the child's, or (no child, or it failed) computed here now."""
        if not self.forked:
            return self._fn()
        chunks: list[bytes] = []
        try:
            while True:
                chunk = os.read(self._fd, 1 << 20)
                if not chunk:
                    break
                chunks.append(chunk)
        finally:
            os.close(self._fd)
            _, status = os.waitpid(self._pid, 0)
            self.forked = False
        if os.waitstatus_to_exitcode(status) != 0:
            return self._fn()
        import pickle

        value: R = pickle.loads(b"".join(chunks))
        return value

    def cancel(self) -> None:
        """Stop a child whose result is not wanted (the caller failed before asking)."""
        if not self.forked:
            return
        import signal

        with contextlib.suppress(ProcessLookupError):
            os.kill(self._pid, signal.SIGKILL)
        os.close(self._fd)
        os.waitpid(self._pid, 0)
        self.forked = False


def in_background(fn: Callable[[], R]) -> Background[R]:
    """Start ``fn()`` in a forked child (see the module docstring); ``.result()`` to get it."""
    return Background(fn)
