"""SIGTERM during a live run: it stops the run at an ``await``, as Ctrl-C does, never between
two statements of synchronous ledger bookkeeping (where a ``KeyboardInterrupt`` could lose a
staged request record; see ``_sigterm_as_interrupt``)."""

from __future__ import annotations

import asyncio
import os
import signal

import pytest

from verdictpack.kinds._study_live import _sigterm_as_interrupt

pytestmark = pytest.mark.skipif(not hasattr(signal, "SIGTERM"), reason="POSIX signals")


def _busy(iterations: int) -> int:
    """Synchronous work long enough for a pending signal to be handled inside it."""
    total = 0
    for i in range(iterations):
        total += i % 7
    return total


def test_sigterm_inside_asyncio_run_cancels_at_the_next_await_not_mid_statement() -> None:
    steps: list[str] = []

    async def run() -> None:
        try:
            os.kill(os.getpid(), signal.SIGTERM)  # handled during the loop below
            _busy(200_000)
            steps.append("synchronous part finished")
            await asyncio.sleep(5)
            steps.append("not reached")
        except asyncio.CancelledError:
            steps.append("cancelled at the await")
            raise

    with pytest.raises(KeyboardInterrupt), _sigterm_as_interrupt():
        asyncio.run(run())
    assert steps == ["synchronous part finished", "cancelled at the await"]


def test_a_cleanup_after_the_cancel_runs_whole() -> None:
    """The run's ``finally`` (cancellations recorded, the group's commit awaited) completes."""
    steps: list[str] = []

    async def run() -> None:
        try:
            os.kill(os.getpid(), signal.SIGTERM)
            await asyncio.sleep(5)
        finally:
            _busy(100_000)
            await asyncio.sleep(0)
            steps.append("cleanup done")

    with pytest.raises(KeyboardInterrupt), _sigterm_as_interrupt():
        asyncio.run(run())
    assert steps == ["cleanup done"]


def test_outside_asyncio_run_sigterm_raises_keyboard_interrupt() -> None:
    with pytest.raises(KeyboardInterrupt), _sigterm_as_interrupt():
        os.kill(os.getpid(), signal.SIGTERM)
        _busy(1_000_000)


def test_the_previous_sigterm_handler_comes_back() -> None:
    before = signal.getsignal(signal.SIGTERM)
    with _sigterm_as_interrupt():
        assert signal.getsignal(signal.SIGTERM) is not before
    assert signal.getsignal(signal.SIGTERM) is before
