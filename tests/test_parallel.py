"""map_in_threads: a plain loop's results, in order, whatever the thread count; in_background:
the call's own value or error, computed in a forked child or in the caller."""

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


def test_after_an_error_the_items_not_started_never_run() -> None:
    import time

    ran: list[int] = []

    def fn(x: int) -> int:
        ran.append(x)
        if x == 1:
            raise ValueError("item 1")
        time.sleep(0.01)
        return x

    with pytest.raises(ValueError, match="item 1"):
        map_in_threads(fn, range(200), 2)
    assert len(ran) < 100


# ---- in_background: one call in a forked child ----------------------------------------------
# The forked path runs only in a process with one Python thread (a pytest-xdist worker has more),
# so these checks run their scenario in a fresh interpreter and read back what it printed.

_SCENARIOS = r"""
import os, pickle, signal, sys, threading, time
from verdictpack._parallel import in_background

def work():
    return {"pid": os.getpid(), "values": [x * x for x in range(1000)]}

def fails():
    raise ValueError("the call's own error")

def dies_in_the_child():
    if os.getpid() != PARENT:
        os._exit(3)
    return "computed in the caller"

PARENT = os.getpid()
what = sys.argv[1]
if what == "value":
    job = in_background(work)
    forked = job.forked
    got = job.result()
    print(forked, got["pid"] != PARENT, got["values"] == [x * x for x in range(1000)])
elif what == "error":
    job = in_background(fails)
    try:
        job.result()
    except ValueError as exc:
        print(job.forked, str(exc))
elif what == "dies":
    job = in_background(dies_in_the_child)
    print(job.forked, job.result())
elif what == "thread":
    stop = threading.Event()
    t = threading.Thread(target=stop.wait)
    t.start()
    job = in_background(work)
    print(job.forked, job.result()["pid"] == PARENT)
    stop.set()
    t.join()
elif what == "cancel":
    def sleeps():
        with open(sys.argv[2], "w") as fh:
            fh.write(str(os.getpid()))
        time.sleep(60)
    job = in_background(sleeps)
    for _ in range(600):  # the child says who it is
        if os.path.getsize(sys.argv[2]) if os.path.exists(sys.argv[2]) else 0:
            break
        time.sleep(0.05)
    pid = int(open(sys.argv[2]).read())
    job.cancel()
    try:
        os.kill(pid, 0)
        print("child still there")
    except ProcessLookupError:
        print("child gone", job.forked)
elif what == "streams":
    sys.stdout.write("parent before; ")  # unflushed when the child is forked
    def talks():
        sys.stdout.write("child wrote; ")
        return 1
    job = in_background(talks)
    started = job.forked
    job.result()
    print("forked" if started else "inline")
elif what == "many":
    jobs = [in_background(lambda k=k: k * 10) for k in range(5)]
    print([j.result() for j in jobs], any(j.forked for j in jobs))
"""


def _scenario(tmp_path, what: str, **env: str) -> str:
    import os
    import subprocess
    import sys

    script = tmp_path / "scenario.py"
    script.write_text(_SCENARIOS)
    # buffered streams, as a plain run has them (PYTHONUNBUFFERED would hide a lost buffer)
    drop = ("VERDICTPACK_NO_FORK", "PYTHONUNBUFFERED")
    env_all = {k: v for k, v in os.environ.items() if k not in drop}
    done = subprocess.run(
        [sys.executable, str(script), what, str(tmp_path / "pid")],
        capture_output=True,
        text=True,
        timeout=60,
        env={**env_all, **env},
        check=False,
    )
    assert done.returncode == 0, done.stderr
    return done.stdout.strip()


linux_only = pytest.mark.skipif(
    not __import__("sys").platform.startswith("linux"), reason="the forked path is Linux only"
)


@linux_only
def test_the_child_computes_the_value_the_call_returns(tmp_path) -> None:
    assert _scenario(tmp_path, "value") == "True True True"


def test_without_a_fork_the_call_runs_in_the_caller(tmp_path) -> None:
    assert _scenario(tmp_path, "value", VERDICTPACK_NO_FORK="1") == "False False True"


@linux_only
def test_an_error_in_the_child_is_raised_by_the_call_in_the_caller(tmp_path) -> None:
    # the child's failure is not passed on as such: the caller runs the call and raises its error
    assert _scenario(tmp_path, "error") == "False the call's own error"


@linux_only
def test_a_child_that_dies_leaves_the_call_to_the_caller(tmp_path) -> None:
    # a child was started (True) and the value is the caller's own
    assert _scenario(tmp_path, "dies") == "True computed in the caller"


def test_no_fork_while_another_thread_runs(tmp_path) -> None:
    assert _scenario(tmp_path, "thread") == "False True"


@linux_only
def test_cancel_kills_and_reaps_the_child(tmp_path) -> None:
    assert _scenario(tmp_path, "cancel") == "child gone False"


@linux_only
def test_several_children_each_give_their_own_value(tmp_path) -> None:
    assert _scenario(tmp_path, "many") == "[0, 10, 20, 30, 40] False"


@linux_only
def test_the_streams_carry_each_write_once(tmp_path) -> None:
    """What the caller had buffered is not written again by the child, and what the child
    printed reaches the output (stdout is a pipe here: block-buffered)."""
    assert _scenario(tmp_path, "streams") == "parent before; child wrote; forked"
