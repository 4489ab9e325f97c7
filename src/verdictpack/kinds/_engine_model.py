"""The engine kind's config model and its cross rules, and the frozen result an engine run
returns (its cost lines and confound arms). The run is :mod:`verdictpack.kinds._engine`."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal

from pydantic import Field, model_validator

from verdictpack._results import BULK, Quantity
from verdictpack.config._blocks import (
    PanelSpec,
    RoutesSpec,
    SequentialSpec,
    currency_field,
    human_icc_rule,
    route_rules,
)
from verdictpack.config._compiler import (
    Construct,
    SequentialConstruct,
    StrictModel,
)
from verdictpack.config._provenance import Provenance
from verdictpack.config._refusals import MAX_SEED, SEED_TEXT
from verdictpack.core._agreement import AuditDecision
from verdictpack.core._tracks import TrackResult
from verdictpack.kinds._base import CostLine
from verdictpack.kinds._engine_config import (
    HUMAN_PRICES,
    ConfoundStressSpec,
    EngineHumanSpec,
    PowerSpec,
    StimuliSpec,
    TruthSpec,
)
from verdictpack.kinds._worlds import NamedWorld
from verdictpack.simulate._human import (
    HumanBaselineSize,
    ReaderAuditSize,
)
from verdictpack.simulate._operating import ScenarioOC
from verdictpack.simulate._panels import PanelSummary, panel_rules
from verdictpack.stimuli import (
    FactoryResult,
    GateSpotCheck,
)

# ----------------------------------------------------------------------------------------------
# Config
# ----------------------------------------------------------------------------------------------


class EngineConfig(StrictModel):
    kind: Literal["engine"] = Field(description="the config kind: 'engine'")
    seed: int = Field(ge=0, le=MAX_SEED, description=SEED_TEXT)
    currency: str = currency_field()
    construct_spec: SequentialConstruct = Field(
        alias="construct", description="the construct, shared by every kind"
    )
    sequential: SequentialSpec = Field(
        description="the anytime-valid route: construction, bet grid and cap, fixed before data"
    )
    panel: PanelSpec = Field(description="the simulated judge panel, as character sheets")
    human: EngineHumanSpec = Field(
        description="the human layer: judgments per root, their price, the reader audit and "
        "the preference baseline"
    )
    stimuli: StimuliSpec = Field(
        description="the stimulus factory: family, candidates, gates, injected defects, spot-check"
    )
    routes: RoutesSpec = Field(description="the SPRT's beta and the fixed-n route's power")
    truth: TruthSpec = Field(description="the scenario the simulated proof run is drawn under")
    power: PowerSpec = Field(
        description="the power report: replicates and the above-threshold scenarios"
    )
    confound_stress: ConfoundStressSpec = Field(
        description="the stress applied in each precommitted confound arm"
    )

    @model_validator(mode="before")
    @classmethod
    def _inherit_prices(cls, data: Any) -> Any:
        return HUMAN_PRICES.inherit(data)


RULES = (
    *panel_rules(("panel",)),
    *route_rules(),
    HUMAN_PRICES.rule(),
    human_icc_rule(
        ("human",),
        lambda c: [c.truth.stress_stream_correlation * (c.truth.scenario == "correlated_stress")],
    ),
)

# ----------------------------------------------------------------------------------------------
# Result objects
# ----------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class ConfoundArm:
    confound: str
    crossed_with: tuple[str, ...]
    design: str
    stress: str
    outcome: ScenarioOC | None
    audit_pass_rate_at_chance: Quantity | None


@dataclass(frozen=True)
class EngineResult:
    kind: str
    construct: Construct
    seed: int
    evidence_source: str
    truth_scenario: str
    truth_true_h: float
    truth_mu_model: float
    truth_mu_human: float
    truth_effect_scale: float
    truth_model_shift_h: float
    panel: PanelSummary
    construction: str
    comparison_construction: str
    cap_roots: int
    effective_cap: int
    factory: FactoryResult
    spot_check: GateSpotCheck
    audit: AuditDecision
    audit_sizing: ReaderAuditSize
    baseline: HumanBaselineSize
    instrument_valid: bool
    registered: TrackResult
    extension: TrackResult
    comparison: TrackResult
    roots_run: int
    model_touches: int
    human_stream_touches: int
    stream_checks: dict[str, Any]
    costs: tuple[CostLine, ...]
    power: tuple[ScenarioOC, ...]
    confound_arms: tuple[ConfoundArm, ...]
    worlds: tuple[NamedWorld, ...]
    # evidence.jsonl's rows: a file of their own, never in results.json
    evidence: tuple[dict[str, Any], ...] = field(metadata=BULK)
    currency: str
    provenance: Provenance
