"""What a live call costs: a per-judge price and the arithmetic of the budget.

A :class:`Price` is three non-negative rates, in the currency the study's budget is written in:
``per_million_input`` (per million prompt tokens), ``per_million_output`` (per million completion
tokens) and ``per_call`` (a flat fee per request, for endpoints billed by the call). All default
to 0 (a local server). The cost of an answered call is

    cost = prompt_tokens * per_million_input / 1e6
         + completion_tokens * per_million_output / 1e6
         + per_call

with the token counts the server reported (``usage``). Before a call is sent, the budget check uses
:func:`max_call_cost`: the same formula at the prompt-token estimate and ``max_tokens``, the most
the completion can be, so a call is sent only if even its worst case fits. A call whose tokens are
unknown -- a 200 without ``usage``, a body cut off before it, no response at all (a timeout, a
dropped connection, a kill) -- costs that worst case: tokens may have been generated, so the flat
per-call fee alone is never taken for its cost (the live runner's accounting, and the ledger's).
"""

from __future__ import annotations

from dataclasses import dataclass

from verdictpack._errors import InputError
from verdictpack._validate import finite_real, int_at_least

__all__ = ["Price", "call_cost", "max_call_cost"]


@dataclass(frozen=True)
class Price:
    """Per-million-token input and output rates and a per-call fee, each finite and >= 0."""

    per_million_input: float = 0.0
    per_million_output: float = 0.0
    per_call: float = 0.0

    def __post_init__(self) -> None:
        for name in ("per_million_input", "per_million_output", "per_call"):
            value = finite_real(f"price.{name}", getattr(self, name), "a finite number >= 0")
            if value < 0.0:
                raise InputError(f"price.{name}", "a finite number >= 0", value)
            object.__setattr__(self, name, value)


def call_cost(price: Price, prompt_tokens: int, completion_tokens: int) -> float:
    """The cost of one answered call at ``price`` (module docstring: the formula)."""
    if not isinstance(price, Price):
        raise InputError("price", "a Price", type(price).__name__)
    p = int_at_least("prompt_tokens", prompt_tokens, 0)
    c = int_at_least("completion_tokens", completion_tokens, 0)
    return p * price.per_million_input / 1e6 + c * price.per_million_output / 1e6 + price.per_call


def max_call_cost(price: Price, prompt_tokens_estimate: int, max_tokens: int) -> float:
    """The most one call can cost: ``call_cost`` at the prompt estimate and ``max_tokens``."""
    return call_cost(price, prompt_tokens_estimate, max_tokens)
