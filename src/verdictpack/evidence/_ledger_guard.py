"""The ledger's secret guard: no run of 8 or more characters of an API key is ever written into
a ledger row (the keys checked, their runs, the refusal). Part of
:mod:`verdictpack.evidence._ledger`."""

from __future__ import annotations

import functools
from collections.abc import Sequence

from verdictpack._errors import InputError
from verdictpack.evidence._ledger_records import LedgerError

_MIN_SECRET = 8


def _check_secrets(secrets: Sequence[str]) -> tuple[str, ...]:
    if isinstance(secrets, str):
        raise InputError("secrets", "a sequence of strings", "(a single string)")
    out = []
    for i, s in enumerate(secrets):
        if not isinstance(s, str) or len(s) < _MIN_SECRET:
            # never echo the value: describe it
            size = len(s) if isinstance(s, str) else "?"
            got = f"(a {type(s).__name__} of length {size})"
            raise InputError(f"secrets[{i}]", f"a string of at least {_MIN_SECRET} characters", got)
        out.append(s)
    return tuple(out)


@functools.lru_cache(maxsize=64)
def _secret_runs(secret: str) -> tuple[str, ...]:
    """Every run of :data:`_MIN_SECRET` consecutive characters of ``secret`` -- of its token,
    when it is an ``Authorization`` value (``Bearer <token>``): a text holding any of them holds
    part of the key (the same rule as the live transport's redaction)."""
    scheme, _, token = secret.partition(" ")
    if token.strip() and scheme.lower() in {"bearer", "basic", "token"}:
        secret = token.strip() if len(token.strip()) >= _MIN_SECRET else secret
    n = _MIN_SECRET
    return tuple(dict.fromkeys(secret[i : i + n] for i in range(len(secret) - n + 1)))


def _guard(secrets: tuple[str, ...], field: str, text: str) -> None:
    """Refuse ``text`` when it holds a secret or any run of 8 of its consecutive characters."""
    for s in secrets:
        if any(run in text for run in _secret_runs(s)):
            raise LedgerError(
                f"ledger: the {field} to store contains (part of) the value of a secret (an API "
                "key); refused, nothing written"
            )
