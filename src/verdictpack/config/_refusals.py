"""Refusals of the statistics, reported as config defects at the field they came from.

A kind's run turns config values into statistics calls, and the statistics refuse a bad argument
with an :class:`~verdictpack._errors.InputError` naming *their* parameter (``n_admitted``,
``target_h``), which means nothing to the author of a config. So every place where a run feeds
config values into the statistics states which config field feeds it::

    with refusals.at(("stimuli", "candidates"), "the gate spot-check",
                     params={"error_rate": ("stimuli", "spot_check", "error_rate")},
                     hint="the gates admitted 0 of 1 candidates ..."):
        spot = size_gate_spot_check(...)

and an ``InputError`` raised inside becomes ``ConfigError([Defect(file, "$.stimuli.candidates",
<the config's value there>, <what the statistic expected, which one refused which value, the
hint>)])``: the CLI prints it like any other config defect and exits 2. Runs write nothing (the
CLI writes the output folder only after the run returns), so a refusal leaves nothing behind.

:func:`expected_text` builds the same message for checks that run before the run (cross rules).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from typing import Any

from verdictpack._errors import MISSING, ConfigError, Defect, InputError, format_value
from verdictpack.config._compiler import ConfigSource, Construct, json_path, raw_at
from verdictpack.config._strict import MAX_INTEGER

__all__ = ["MAX_SEED", "SEED_TEXT", "Loc", "Refusals", "expected_text", "governing_loc"]

Loc = tuple[str | int, ...]

# The largest seed a config may carry: the largest integer a config may carry at all (the
# canonical JSON, RFC 8785, hashed into provenance represents no larger integer exactly).
MAX_SEED = MAX_INTEGER
SEED_TEXT = "root seed of every simulated number, an integer in [0, 2^53 - 1]"
Hint = str | Callable[[InputError], str] | None


def expected_text(
    exc: InputError, what: str, hint: str = "", field: str | int | None = None
) -> str:
    """What a config field must satisfy, from a statistic's refusal of the value it fed: the
    statistic's own expectation when it refused the field itself (``field``, the name of the
    config field, is the refused parameter or None), otherwise a value the statistic can work
    with, naming the refused quantity and what it expected of it."""
    value = format_value(exc.received)
    if field is None or field == exc.parameter:
        text = f"{exc.allowed} ({what} refused {exc.parameter} = {value}"
    else:
        text = (
            f"a value {what} can work with (it refused {exc.parameter} = {value}, expecting "
            f"{exc.allowed}"
        )
    return text + (f"; {hint})" if hint else ")")


def governing_loc(construct: Construct) -> Loc:
    """The construct field whose threshold governs (the smaller effect)."""
    return ("construct", "thresholds", "h" if construct.governs == "h" else "odds_ratio")


class Refusals:
    """Maps the statistics' refusals during one run back to paths of its config ``source``."""

    def __init__(self, source: ConfigSource | None) -> None:
        self.source = source
        self._raw: Any = MISSING

    @classmethod
    def none(cls) -> Refusals:
        """Refusals that pass every InputError through unchanged (API calls without a config)."""
        return cls(None)

    def value(self, loc: Loc) -> Any:
        """The config's raw value at ``loc`` (MISSING when absent)."""
        if self._raw is MISSING:
            self._raw = None if self.source is None else self.source.value()
        return raw_at(self._raw, loc, MISSING)

    def defect(self, exc: InputError, loc: Loc, what: str, hint: str = "") -> Defect:
        field = loc[-1] if loc else None
        text = expected_text(exc, what, hint, field)
        display = "(config)" if self.source is None else self.source.display
        return Defect(display, json_path(loc), self.value(loc), text)

    @contextmanager
    def at(
        self,
        default: Loc,
        what: str,
        *,
        params: Mapping[str, Loc] | None = None,
        hint: Hint = None,
    ) -> Iterator[None]:
        """Inside, an InputError becomes a ConfigError at the path of the config field that fed
        the refused parameter (``params``; ``default`` for any other), naming ``what`` refused
        it and the ``hint`` (text, or a function of the refusal)."""
        try:
            yield
        except InputError as exc:
            if self.source is None:
                raise
            loc = (params or {}).get(exc.parameter, default)
            text = hint(exc) if callable(hint) else (hint or "")
            raise ConfigError([self.defect(exc, loc, what, text)]) from None
