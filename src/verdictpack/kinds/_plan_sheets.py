"""The sheets file of ``--plan --sheets FILE``: a study's fitted_panel.json, read and checked.

A study writes fitted_panel.json (:mod:`verdictpack.simulate._fitted`): its ``panel`` block (the
judges' character sheets as the data show them), the humans' fitted ``human_rate`` and
``human_icc``, and beside them what was ``estimated`` and ``clips`` (reported, not read by a
plan). A file edited by hand, or another file given by mistake, is refused like a config: every
defect with its JSON path, line and column; never an internal error. The plan reads the same
fields the simulation takes, with the defaults :func:`~verdictpack.kinds._study_live.plan_study`
gives a sheet written by hand (role ``judge``, lean, noise and position bias 0); the judges'
prices are always the config's.
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from typing import Annotated, Any

from pydantic import BaseModel, ConfigDict, Field

from verdictpack._errors import MISSING, ConfigError, Defect
from verdictpack.config._blocks import PanelSpec
from verdictpack.config._compiler import (
    CrossRule,
    Found,
    NonEmptyText,
    StrictModel,
    load_source,
    parse_config,
    unique,
)
from verdictpack.simulate._panels import panel_check

__all__ = ["read_sheets"]


class _Judge(StrictModel):
    name: NonEmptyText = Field(description="a registered judge's name")
    role: NonEmptyText = Field(default="judge", description="free text (reported)")
    baseline_rate: float = Field(gt=0.0, lt=1.0, description="P(prefers treatment), no effect")
    lean_h: float = Field(default=0.0, ge=-3.2, le=3.2, description="shift in h units")
    noise: float = Field(default=0.0, ge=0.0, le=1.0, description="attenuation toward chance")
    position_bias: float = Field(default=0.0, ge=0.0, lt=0.5, description="shift toward first")
    cost_per_judgment: float | None = Field(
        default=None, ge=0.0, description="the fit's price (the plan prices the config's)"
    )


class _Panel(StrictModel):
    name: NonEmptyText = Field(default="plan", description="the panel's name")
    latent_correlation: float = Field(default=0.0, ge=-1.0, le=1.0, description="rho")
    order_correlation: float | None = Field(default=None, ge=-1.0, le=1.0)
    judges: Annotated[list[_Judge], unique("a judge name used once")] = Field(min_length=1)


class _HumanIcc(BaseModel):
    """The humans' fitted ICC_H: ``icc`` is read; its interval and basis are reported only."""

    model_config = ConfigDict(extra="allow", strict=True, frozen=True, allow_inf_nan=False)
    icc: float | None = Field(default=None, ge=-1.0, le=1.0)


class _SheetsFile(StrictModel):
    panel: _Panel = Field(description="the judges' character sheets")
    human_rate: float | None = Field(default=None, gt=0.0, lt=1.0)
    human_icc: _HumanIcc | None = None
    estimated: Any = Field(default=None, description="reported by the fit, not read")
    clips: Any = Field(default=None, description="reported by the fit, not read")


def _buildable(panel: _Panel) -> Iterable[Found]:
    """The panel the sheets describe, built by the simulator (its correlation matrix included)."""
    judges = [
        {**j.model_dump(exclude={"cost_per_judgment"}), "cost_per_judgment": 0.0}
        for j in panel.judges
    ]
    block = {**panel.model_dump(exclude={"judges"}), "judges": judges}
    yield from panel_check(PanelSpec.model_validate(block))


def read_sheets(path: str) -> dict[str, Any]:
    """The value of the sheets file at ``path``, once it is a fitted_panel.json the plan can
    simulate from; ConfigError naming each defect otherwise."""
    if not os.path.isfile(path):
        expected = "an existing fitted_panel.json (a study run writes one), JSON or YAML"
        raise ConfigError([Defect(path, "$", MISSING, expected)])
    source = load_source(path)
    value = source.json()
    parse_config(source, _SheetsFile, [CrossRule(at=("panel",), check=_buildable)])
    return dict(value)
