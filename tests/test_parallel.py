"""map_in_threads: a plain loop's results, in order, whatever the thread count."""

from __future__ import annotations

import threading

import numpy as np
import pytest

from verdictpack._parallel import map_in_threads


@pytest.mark.parametrize("threads", [1, 2, 5, 64])
def test_results_in_order_and_every_item_once(threads: int) -> None:
    seen: list[int] = []
    lock = threading.Lock()

    def fn(x: int) -> int:
        with lock:
            seen.append(x)
        return x * x

    items = list(range(37))
    assert map_in_threads(fn, items, threads) == [x * x for x in items]
    assert sorted(seen) == items
    assert map_in_threads(fn, [], threads) == []


def test_threads_are_used_and_numbers_unchanged() -> None:
    names: set[str] = set()
    barrier = threading.Barrier(2, timeout=10)

    def fn(seed: int) -> float:
        if seed < 2:  # the first two items meet: they cannot run on one thread
            barrier.wait()
        names.add(threading.current_thread().name)
        return float(np.random.default_rng(seed).standard_normal(1000).sum())

    assert map_in_threads(fn, range(8), 2) == [_plain(s) for s in range(8)]
    assert len(names) == 2


def _plain(seed: int) -> float:
    return float(np.random.default_rng(seed).standard_normal(1000).sum())


def test_first_error_is_raised_in_the_caller() -> None:
    def fn(x: int) -> int:
        if x == 3:
            raise ValueError("item 3")
        return x

    with pytest.raises(ValueError, match="item 3"):
        map_in_threads(fn, range(10), 3)
    with pytest.raises(ValueError, match="item 3"):
        map_in_threads(fn, range(10), 1)
