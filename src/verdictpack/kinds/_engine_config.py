"""The engine's config blocks (kind ``engine``): the human layer, the stimulus factory and its
gates, the simulated truth, the power report and the confound stress, each field described (the
top-level :class:`~verdictpack.kinds._engine.EngineConfig` joins them).

Every human touch has a price: its own field, or ``human.cost_per_touch``, inherited where the
own one is omitted (:data:`HUMAN_PRICES`; an engine touch with neither is refused by name).
"""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import Field, model_validator

from verdictpack.config._blocks import (
    MAX_COST,
    HumanPrices,
    human_icc_field,
    kappa_bound_level_field,
    kappa_min_field,
)
from verdictpack.config._compiler import Found, StrictModel, refuse
from verdictpack.simulate._judges import SCENARIO_NAMES
from verdictpack.stimuli import templates_for

__all__ = [
    "HUMAN_PRICES",
    "MAX_CANDIDATES",
    "BaselineSpec",
    "ConfoundStressSpec",
    "DefectRatesSpec",
    "EngineHumanSpec",
    "GatesSpec",
    "PowerSpec",
    "ReaderAuditSpec",
    "SpotCheckSpec",
    "StimuliSpec",
    "TruthSpec",
]


class ReaderAuditSpec(StrictModel):
    """The reader audit (the kappa gate): config key ``human.audit``."""

    roots: int | None = Field(
        default=None,
        ge=10,
        le=100_000,
        description="roots read by both readers (default: sized so that readers at "
        "reconstruction_rate pass the gate with probability pass_probability)",
    )
    kappa_min: float = kappa_min_field()
    kappa_bound_level: float = kappa_bound_level_field()
    pass_probability: float = Field(
        default=0.80,
        gt=0.0,
        lt=1.0,
        description="probability with which readers at the planning kappa (that of "
        "reconstruction_rate) pass the gate: the audit is sized to it, and printed beside a "
        "given roots",
    )
    reconstruction_rate: float = Field(
        gt=0.0,
        le=1.0,
        description="simulated readers' reconstruction rate (proof run), also the planning rate "
        "of the audit sizing",
    )
    categories: int = Field(
        ge=2,
        le=10,
        description="label categories each reader chooses among, 2 to 10 (chance agreement is "
        "1 / categories)",
    )
    cost_per_reading: float | None = Field(
        default=None,
        ge=0.0,
        le=MAX_COST,
        description=f"price of one reading, at most {MAX_COST:.0e} (default: human.cost_per_touch)",
    )


class BaselineSpec(StrictModel):
    pilot_roots: int = Field(
        ge=0,
        le=100_000,
        description="pilot roots of human judgments, 0 to 100,000: paid by every route, never "
        "pooled into the confirmatory test",
    )
    power: float = Field(
        gt=0.0,
        lt=1.0,
        description="power the confirmatory human sample is sized to at the governing threshold",
    )
    replicates: int = Field(
        ge=1000,
        le=1_000_000,
        description="simulated replicates per candidate size while sizing the confirmatory "
        "sample, 1,000 to 1,000,000",
    )


class EngineHumanSpec(StrictModel):
    judgments_per_root: int = Field(
        ge=1, le=100, description="human judgments per root at the baseline rate, 1 to 100"
    )
    cost_per_touch: float | None = Field(
        default=None,
        ge=0.0,
        le=MAX_COST,
        description="the price of one human touch of any kind, inherited by each kind whose own "
        "price is omitted: human.cost_per_judgment, human.audit.cost_per_reading and "
        "stimuli.spot_check.cost_per_touch (default: none, each kind then needs its own)",
    )
    cost_per_judgment: float | None = Field(
        default=None,
        ge=0.0,
        le=MAX_COST,
        description=f"price of one human judgment, at most {MAX_COST:.0e} (default: "
        "human.cost_per_touch)",
    )
    icc: float | None = human_icc_field()
    audit: ReaderAuditSpec = Field(
        description="the reader-reconstruction audit: a kappa below kappa_min makes the verdict "
        "INSTRUMENT_INVALID"
    )
    baseline: BaselineSpec = Field(
        description="the human preference baseline: a pilot plus a confirmatory sample sized by "
        "simulation"
    )


class GatesSpec(StrictModel):
    length_tolerance: float = Field(
        gt=0.0,
        le=5.0,
        description="length gate: largest |r - length_target| admitted, r = (L_treatment - "
        "L_null) / L_null in words",
    )
    length_target: float = Field(
        ge=0.0,
        le=10.0,
        description="length gate: intended relative lengthening r of the treatment (0: matched "
        "lengths, e.g. 1.5 for 150% longer)",
    )
    content_threshold: float = Field(
        gt=0.0,
        le=1.0,
        description="content gate: least share of the source's content units the treatment "
        "keeps, in (0, 1]",
    )
    fragment_threshold: float = Field(
        gt=0.0,
        le=1.0,
        description="fragment gate: largest 3-gram Jaccard similarity admitted between two "
        "sentences of one text, in (0, 1]",
    )
    max_diff_tokens: int = Field(
        ge=0,
        le=1000,
        description="null-separation gate: most tokens treatment and null partner may differ by "
        "outside the manipulated spans, 0 to 1000",
    )


class DefectRatesSpec(StrictModel):
    drop_unit: float = Field(
        ge=0.0,
        le=1.0,
        description="probability a candidate loses one content sentence from both rewrites "
        "(tests the content gate)",
    )
    padding: float = Field(
        ge=0.0,
        le=1.0,
        description="probability a filler sentence is added to the treatment only (tests the "
        "length gate)",
    )
    duplicate_fragment: float = Field(
        ge=0.0,
        le=1.0,
        description="probability one rewritten sentence is repeated verbatim (tests the "
        "fragment gate)",
    )
    extra_difference: float = Field(
        ge=0.0,
        le=1.0,
        description="probability the null partner states a different value for one unit (tests "
        "the null-separation gate)",
    )


class SpotCheckSpec(StrictModel):
    error_rate: float = Field(
        gt=0.0,
        lt=1.0,
        description="gate error rate the spot-check must detect; one so small that the check "
        "needs more than 1,000,000 pairs is refused",
    )
    confidence: float = Field(
        gt=0.0,
        lt=1.0,
        description="confidence of the zero-failure bound: n checked pairs all agreeing with the "
        "gate put its error rate below error_rate",
    )
    passes_per_pair: int = Field(
        ge=1,
        le=100,
        description="human passes over each checked pair, 1 to 100 (touches = pairs x passes)",
    )
    cost_per_touch: float | None = Field(
        default=None,
        ge=0.0,
        le=MAX_COST,
        description=f"price of one spot-check touch (one pass over a pair), at most "
        f"{MAX_COST:.0e} (default: human.cost_per_touch)",
    )


# The most candidates one engine run generates: the admitted stimuli stay in memory and go to
# stimuli.jsonl whole (10^5 candidates: about 0.5 GB at the peak, 80 MB of stimuli.jsonl).
MAX_CANDIDATES = 100_000


class StimuliSpec(StrictModel):
    family: Literal["summarization", "length"] = Field(
        description="the construct family whose templates generate the candidates"
    )
    templates: list[str] | None = Field(
        default=None, description="names of the family's templates to use (default: all)"
    )
    candidates: int = Field(
        ge=1,
        le=MAX_CANDIDATES,
        description=f"candidate roots generated, at most {MAX_CANDIDATES:,} (every admitted "
        "stimulus is held in memory and written to stimuli.jsonl, about 1 KB each)",
    )
    gates: GatesSpec = Field(
        description="thresholds of the four admission gates: length, content, fragments, null "
        "separation"
    )
    defect_rates: DefectRatesSpec = Field(
        description="per-candidate probabilities of each injected imperfection, independent"
    )
    spot_check: SpotCheckSpec = Field(
        description="the human spot-check of the gates' decisions, sized by an exact "
        "zero-failure binomial bound"
    )

    @model_validator(mode="after")
    def _templates(self) -> StimuliSpec:
        if self.templates is None:
            return self
        known = [t.name for t in templates_for(self.family)]
        found: list[Found] = [
            (("templates", i), name, "one of " + ", ".join(known))
            for i, name in enumerate(self.templates)
            if name not in known
        ]
        if len(self.templates) < 2:
            found.append(
                (
                    ("templates",),
                    self.templates,
                    "at least two templates (one template cannot separate the manipulation "
                    "from the template)",
                )
            )
        refuse(found)
        return self


class TruthSpec(StrictModel):
    scenario: str = Field(description="one of " + ", ".join(SCENARIO_NAMES))
    true_h: float | None = Field(default=None, description="for above_threshold")
    model_shift_h: float = Field(ge=-3.0, le=3.0, description="for confounded")
    stress_latent_correlation: float = Field(
        ge=-1.0,
        le=1.0,
        description="for correlated_stress: the panel's raised latent correlation between "
        "judges, in [-1, 1]",
    )
    stress_stream_correlation: float = Field(
        ge=-1.0,
        le=1.0,
        description="for correlated_stress: the raised correlation of the human latents with "
        "the panel's root latent, in [-1, 1]",
    )
    stress_base: Literal["registered_alternative", "null"] = Field(
        description="for correlated_stress: the effect it raises the correlations under"
    )

    @model_validator(mode="after")
    def _scenario(self) -> TruthSpec:
        found: list[Found] = []
        if self.scenario not in SCENARIO_NAMES:
            found.append((("scenario",), self.scenario, "one of " + ", ".join(SCENARIO_NAMES)))
        if self.scenario == "above_threshold" and self.true_h is None:
            found.append((("true_h",), None, "a true h for the above_threshold scenario"))
        refuse(found)
        return self


class PowerSpec(StrictModel):
    replicates: int = Field(
        ge=50,
        le=1_000_000,
        description="simulated runs per power-report scenario and confound arm, 50 to 1,000,000 "
        "(sets the Monte Carlo error)",
    )
    above_threshold_h: list[Annotated[float, Field(gt=0.0, le=3.0)]] = Field(
        min_length=1,
        description="true h values in (0, 3] above the null and the registered alternative "
        "that the power report also simulates, at least one",
    )


class ConfoundStressSpec(StrictModel):
    model_shift_h: float = Field(gt=0.0, le=3.0, description="shift of a content confound")
    position_bias: float = Field(gt=0.0, lt=0.5, description="first-position shift per judge")


# every human touch of the engine has a price: its own, or human.cost_per_touch
HUMAN_PRICES = HumanPrices(
    default=("human", "cost_per_touch"),
    touches=(
        ("human", "cost_per_judgment"),
        ("human", "audit", "cost_per_reading"),
        ("stimuli", "spot_check", "cost_per_touch"),
    ),
    required=True,
)
