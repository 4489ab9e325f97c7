"""The ``panel`` config block built into the generative model, and reported as results carry it.

* :func:`build_panel`: a validated :class:`~verdictpack.config._blocks.PanelSpec` into a
  :class:`~verdictpack.simulate._judges.Panel`;
* :func:`panel_rules`: cross rules building each validated panel of a config through the model,
  so a panel the model refuses (a latent correlation that makes the correlation matrix not
  positive semi-definite, p ± position bias outside [0, 1]) is reported as a config defect at the
  right JSON path (duplicate judge names are the panel model's own rule);
* :func:`summarize_panel`: the character sheets as results report them.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from verdictpack._errors import InputError
from verdictpack.config._blocks import PanelSpec
from verdictpack.config._compiler import CrossRule, Found
from verdictpack.simulate._judges import JudgeSheet, Panel

__all__ = [
    "JudgeRow",
    "PanelSummary",
    "build_panel",
    "panel_check",
    "panel_rules",
    "summarize_panel",
]


@dataclass(frozen=True)
class JudgeRow:
    """A character sheet as reported (results carry the sheets their numbers come from)."""

    name: str
    role: str
    baseline_rate: float
    lean_h: float
    noise: float
    position_bias: float
    cost_per_judgment: float


@dataclass(frozen=True)
class PanelSummary:
    name: str
    latent_correlation: float
    order_correlation: float | None
    judges: tuple[JudgeRow, ...]


def summarize_panel(spec: PanelSpec) -> PanelSummary:
    return PanelSummary(
        name=spec.name,
        latent_correlation=spec.latent_correlation,
        order_correlation=spec.order_correlation,
        judges=tuple(JudgeRow(**j.model_dump()) for j in spec.judges),
    )


def build_panel(spec: PanelSpec) -> Panel:
    judges = tuple(JudgeSheet(**j.model_dump()) for j in spec.judges)
    return Panel(judges, spec.latent_correlation, spec.order_correlation)


_SHEET_PARAMS = {"baseline_rate", "lean_h", "noise", "position_bias", "cost_per_judgment"}


def panel_check(spec: PanelSpec) -> Iterable[Found]:
    """The validated panel (names already unique: its model's rule) built through the model."""
    try:
        build_panel(spec)
    except InputError as exc:
        param = exc.parameter
        where: tuple[str | int, ...]
        if param in ("latent_correlation", "order_correlation"):
            where = (param,)
        else:
            index = next((i for i, j in enumerate(spec.judges) if j.name in str(exc)), None)
            leaf = param if param in _SHEET_PARAMS else "position_bias"
            where = ("judges", index, leaf) if index is not None else ("judges",)
        yield (where, exc.received, exc.allowed)


def panel_rules(*locations: tuple[str | int, ...]) -> list[CrossRule]:
    """Cross rules building each panel found at ``locations`` (a panel, or a list of panels)
    through the generative model, from the panel the schema built."""
    return [CrossRule(at=loc, check=panel_check) for loc in locations]
