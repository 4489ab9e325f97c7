"""What a live call costs: a per-judge price and the arithmetic of the budget.

A :class:`Price` is three non-negative rates, in the currency the study's budget is written in:
``per_million_input`` (per million prompt tokens), ``per_million_output`` (per million completion
tokens) and ``per_call`` (a flat fee per request, for endpoints billed by the call). All default
to 0 (a local server). The cost of an answered call is

    cost = prompt_tokens * per_million_input / 1e6
         + completion_tokens * per_million_output / 1e6
         + per_call

with the token counts the server reported (``usage``). Before a call is sent, the budget check uses
:func:`max_call_cost`: the same formula at :func:`prompt_token_bound` and ``max_tokens``, the most
the completion can be, so a call is sent only if even its worst case fits. The prompt's bound is
one token per UTF-8 byte of its messages' text -- every token of a byte-level BPE or a
byte-fallback tokenizer covers at least one byte, so no such tokenizer counts more, in any
script (a character of Chinese, Japanese or Korean is 3 bytes and at most 3 tokens) -- plus the
chat template's tokens: ``TEMPLATE_TOKENS_PER_MESSAGE`` a message (its role markers) and
``TEMPLATE_TOKENS_PER_REQUEST`` a request (a preamble such as Llama 3.1's dated system header).
For English text it is 3 to 5 times the tokens billed; the excess is held only while a call is
in flight. A call whose tokens are
unknown -- a 200 without ``usage``, a body cut off before it, no response at all (a timeout, a
dropped connection, a kill) -- costs that worst case: tokens may have been generated, so the flat
per-call fee alone is never taken for its cost (the live runner's accounting, and the ledger's).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from verdictpack._errors import InputError
from verdictpack._validate import finite_real, int_at_least

__all__ = [
    "TEMPLATE_TOKENS_PER_MESSAGE",
    "TEMPLATE_TOKENS_PER_REQUEST",
    "Price",
    "call_cost",
    "max_call_cost",
    "prompt_token_bound",
]

TEMPLATE_TOKENS_PER_MESSAGE = 16
TEMPLATE_TOKENS_PER_REQUEST = 64


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


def prompt_token_bound(messages: Sequence[Mapping[str, Any]]) -> int:
    """The most prompt tokens ``messages`` (chat messages, their ``content`` text) can be billed
    as: their UTF-8 bytes plus the chat template's tokens (module docstring)."""
    text = sum(len(str(m.get("content") or "").encode("utf-8")) for m in messages)
    return text + TEMPLATE_TOKENS_PER_MESSAGE * len(messages) + TEMPLATE_TOKENS_PER_REQUEST


def max_call_cost(price: Price, prompt_tokens_bound: int, max_tokens: int) -> float:
    """The most one call can cost: ``call_cost`` at the prompt's bound and ``max_tokens``."""
    return call_cost(price, prompt_tokens_bound, max_tokens)
