"""Endpoint limits: concurrency slots never exceeded, the token bucket's schedule (burst, then
one start every 1/rate seconds) on a fake clock, the window bound, a cancelled waiter's token
handed back, and argument checks. One short real-clock check that the rate really waits."""

from __future__ import annotations

import asyncio
import time

import pytest

from verdictpack._errors import InputError
from verdictpack.evidence.live._limits import EndpointLimits


class FakeTime:
    """A monotonic clock that moves only when someone sleeps: sleeping d seconds from time t
    wakes at t + d (the clock jumps to the latest wake time reached so far)."""

    def __init__(self) -> None:
        self.now = 0.0
        self.waits: list[float] = []

    def clock(self) -> float:
        return self.now

    async def sleep(self, delay: float) -> None:
        self.waits.append(delay)
        wake = self.now + delay
        await asyncio.sleep(0)
        self.now = max(self.now, wake)


def _limits(concurrency: int, rps: float | None, fake: FakeTime) -> EndpointLimits:
    return EndpointLimits(concurrency, rps, clock=fake.clock, sleep=fake.sleep)


def test_burst_then_one_start_every_one_over_rate() -> None:
    fake = FakeTime()
    lim = _limits(3, 10.0, fake)
    starts: list[float] = []

    async def go() -> None:
        for _ in range(8):  # one after another: the slot is never the constraint
            async with lim.slot():
                starts.append(fake.now)

    asyncio.run(go())
    # three tokens of burst at t=0, then 0.1 s apart
    assert starts == pytest.approx([0.0, 0.0, 0.0, 0.1, 0.2, 0.3, 0.4, 0.5])
    assert lim.started == 8 and lim.in_flight == 0


def test_tokens_refill_while_idle_up_to_the_burst_only() -> None:
    fake = FakeTime()
    lim = _limits(2, 4.0, fake)
    starts: list[float] = []

    async def go() -> None:
        for _ in range(2):
            async with lim.slot():
                starts.append(fake.now)
        fake.now = 100.0  # a long idle time refills two tokens, not 400
        for _ in range(4):
            async with lim.slot():
                starts.append(fake.now)

    asyncio.run(go())
    assert starts == pytest.approx([0.0, 0.0, 100.0, 100.0, 100.25, 100.5])


def test_concurrent_waiters_are_scheduled_in_arrival_order() -> None:
    fake = FakeTime()
    lim = _limits(50, 20.0, fake)  # burst 50: make it small by spending it first
    lim._tokens = 0.0  # an empty bucket at t=0
    order: list[tuple[int, float]] = []

    async def one(i: int) -> None:
        async with lim.slot():
            order.append((i, fake.now))

    async def go() -> None:
        await asyncio.gather(*(one(i) for i in range(5)))

    asyncio.run(go())
    assert fake.waits == pytest.approx([0.05, 0.10, 0.15, 0.20, 0.25])
    assert sorted(order, key=lambda x: x[1]) == sorted(order)  # FIFO


def test_starts_in_any_window_stay_within_burst_plus_rate_times_length() -> None:
    fake = FakeTime()
    lim = _limits(4, 5.0, fake)
    starts: list[float] = []

    async def go() -> None:
        for k in range(40):
            if k % 7 == 0:
                fake.now += 0.9  # irregular idle gaps
            async with lim.slot():
                starts.append(fake.now)

    asyncio.run(go())
    for i, t0 in enumerate(starts):
        for j in range(i, len(starts)):
            window = starts[j] - t0
            assert j - i + 1 <= lim.burst + 5.0 * window + 1e-9


def test_concurrency_is_never_exceeded_and_slots_are_released() -> None:
    lim = EndpointLimits(3)

    async def one() -> None:
        async with lim.slot():
            assert lim.in_flight <= 3
            await asyncio.sleep(0.001)

    async def failing() -> None:
        async with lim.slot():
            raise RuntimeError("boom")

    async def go() -> None:
        await asyncio.gather(*(one() for _ in range(30)))
        for _ in range(5):
            with pytest.raises(RuntimeError):
                await failing()
        await asyncio.wait_for(asyncio.gather(*(one() for _ in range(6))), 5)

    asyncio.run(go())
    assert lim.max_in_flight == 3 and lim.in_flight == 0 and lim.started == 41


def test_no_rate_limit_never_sleeps() -> None:
    fake = FakeTime()
    lim = _limits(2, None, fake)

    async def go() -> None:
        for _ in range(100):
            async with lim.slot():
                pass

    asyncio.run(go())
    assert fake.waits == [] and lim.started == 100


def test_a_cancelled_waiter_hands_its_token_back() -> None:
    lim = EndpointLimits(5, 2.0)  # real clock and sleep; burst 5
    lim._tokens = 0.0

    async def go() -> float:
        waiter = asyncio.create_task(_enter(lim))
        await asyncio.sleep(0.01)
        waiter.cancel()
        with pytest.raises(asyncio.CancelledError):
            await waiter
        return lim._tokens

    tokens = asyncio.run(go())
    # the cancelled request's token is back: the balance is what refill alone made of 0
    assert 0.0 <= tokens < 0.2
    assert lim.started == 0 and lim.in_flight == 0


async def _enter(lim: EndpointLimits) -> None:
    async with lim.slot():
        pass


def test_the_rate_really_waits_on_the_real_clock() -> None:
    lim = EndpointLimits(1, 50.0)  # burst 1, then 20 ms apart

    async def go() -> float:
        t0 = time.monotonic()
        for _ in range(6):
            async with lim.slot():
                pass
        return time.monotonic() - t0

    took = asyncio.run(go())
    assert 0.09 <= took < 1.0  # five waits of 20 ms


@pytest.mark.parametrize(
    ("name", "args"),
    [
        ("concurrency", (0, None)),
        ("concurrency", (2.0, None)),
        ("concurrency", (True, None)),
        ("requests_per_second", (1, 0)),
        ("requests_per_second", (1, -1.0)),
        ("requests_per_second", (1, float("nan"))),
        ("requests_per_second", (1, float("inf"))),
    ],
)
def test_arguments_are_checked_by_name(name: str, args: tuple) -> None:
    with pytest.raises(InputError) as err:
        EndpointLimits(*args)
    assert err.value.parameter == name
