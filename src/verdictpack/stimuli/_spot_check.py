"""The human spot-check of the mechanical gates' decisions: how many admitted pairs to check.

:func:`size_gate_spot_check` sizes it with the exact zero-failure binomial bound
(:class:`GateSpotCheck`).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from verdictpack._errors import InputError
from verdictpack._results import Quantity, exact
from verdictpack._validate import closed_interval, int_at_least

__all__ = ["MAX_SPOT_CHECK_PAIRS", "GateSpotCheck", "size_gate_spot_check"]


@dataclass(frozen=True)
class GateSpotCheck:
    """Size of the human spot-check of the gate's decisions (exact zero-failure binomial bound).

    ``pairs`` = n, the smallest n with (1 − e)^n ≤ 1 − confidence: if the gate's error rate were
    e or more, n checked pairs would all agree with the gate with probability ≤ 1 − confidence.
    Equivalently, with zero disagreements in n pairs, the exact one-sided (Clopper–Pearson) upper
    bound 1 − (1 − confidence)^(1/n) (``bound_at_pairs``) is ≤ e. touches = pairs × passes.
    """

    error_rate: float
    confidence: float
    pairs: int
    passes_per_pair: int
    touches: int
    cost: float
    bound_at_pairs: Quantity
    bound_at_pairs_minus_1: Quantity | None


# The most pairs a spot-check may need (the most candidates a factory run may make).
MAX_SPOT_CHECK_PAIRS = 1_000_000


def size_gate_spot_check(
    error_rate: float = 0.10,
    confidence: float = 0.95,
    passes_per_pair: int = 4,
    cost_per_touch: float = 1.0,
    n_admitted: int | None = None,
) -> GateSpotCheck:
    """n = ceil(ln(1 − confidence) / ln(1 − error_rate)), checked exactly (see GateSpotCheck).

    The ceiling is verified on both sides against (1 − e)^n ≤ 1 − confidence, so a float ratio that
    lands a hair above an integer does not add a pair. With ``n_admitted`` given, InputError naming
    it when the check needs more pairs than were admitted; InputError naming ``error_rate`` when
    the check would need more than ``MAX_SPOT_CHECK_PAIRS`` pairs.
    """
    e = closed_interval("error_rate", error_rate, 0.0, 1.0, "a number in [0.0, 1.0]")
    if not 0.0 < e < 1.0:
        raise InputError("error_rate", "a number strictly between 0 and 1", error_rate)
    conf = closed_interval("confidence", confidence, 0.0, 1.0, "a number in [0.0, 1.0]")
    if not 0.0 < conf < 1.0:
        raise InputError("confidence", "a number strictly between 0 and 1", confidence)
    passes = int_at_least("passes_per_pair", passes_per_pair, 1)
    cost = closed_interval(
        "cost_per_touch", cost_per_touch, 0.0, math.inf, "a number in [0.0, inf]"
    )
    miss = 1.0 - conf
    estimate = math.log(miss) / math.log1p(-e)
    if not estimate <= MAX_SPOT_CHECK_PAIRS:  # (1 − e)^n rounds to 1 long before e reaches 0
        raise InputError(
            "error_rate",
            f"an error rate whose spot-check needs at most {MAX_SPOT_CHECK_PAIRS:,} pairs (this "
            f"one needs about {estimate:.3g} at confidence {conf:g})",
            error_rate,
        )
    n = max(1, math.ceil(estimate))
    while n > 1 and math.pow(1.0 - e, n - 1) <= miss:
        n -= 1
    while math.pow(1.0 - e, n) > miss:
        n += 1
    if n_admitted is not None:
        avail = int_at_least("n_admitted", n_admitted, 0)
        if n > avail:
            raise InputError("n_admitted", f"at least {n} admitted pairs to spot-check", avail)

    def bound(k: int) -> float:
        return 1.0 - math.pow(miss, 1.0 / k)

    return GateSpotCheck(
        error_rate=e,
        confidence=conf,
        pairs=n,
        passes_per_pair=passes,
        touches=n * passes,
        cost=n * passes * cost,
        bound_at_pairs=exact(bound(n)),
        bound_at_pairs_minus_1=exact(bound(n - 1)) if n > 1 else None,
    )
