"""Threads for work that releases the GIL (the compiled kernel, numpy's generators and ufuncs).

:func:`map_in_threads` is the package's one way of spreading independent items over threads:
results come back in the items' order and each item's work never depends on which thread ran
it, so the numbers are those of a plain loop. The first error raised by any item is re-raised in
the calling thread (the remaining items are skipped).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TypeVar

__all__ = ["map_in_threads", "usable_cpus"]

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
