"""The study kind's config: every block a ``study`` config holds, and its cross-field rules.

Data files are named by paths relative to the config's own folder (absolute paths refused); a
judge either has judgments in the files or an ``endpoint`` to be asked live; the policy for ties,
invalid and missing judgments, the planning of roots-to-go and the budget are declared here,
before any data. See :mod:`verdictpack.kinds._study` for the run.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import PurePosixPath, PureWindowsPath
from typing import Annotated, Any, Literal

from pydantic import Field

from verdictpack.config._blocks import MAX_COST, MAX_ROOTS, SequentialSpec, sequential_rules
from verdictpack.config._compiler import (
    ConstructSpec,
    CrossRule,
    StrictModel,
    sequential_construct_rules,
)
from verdictpack.config._refusals import MAX_SEED, SEED_TEXT

# ----------------------------------------------------------------------------------------------
# Config
# ----------------------------------------------------------------------------------------------

Text = Annotated[str, Field(min_length=1)]
RelPath = Annotated[
    str,
    Field(
        min_length=1,
        max_length=4096,
        description="a file path relative to the config's own folder (never the working directory)",
    ),
]


class PriorSheetSpec(StrictModel):
    """A judge's character sheet as a prior: shown beside the estimate, never mixed into it."""

    role: str = Field(default="judge", min_length=1)
    baseline_rate: float = Field(gt=0.0, lt=1.0, description="P(prefers treatment), no effect")
    lean_h: float = Field(default=0.0, ge=-3.2, le=3.2)
    noise: float = Field(default=0.0, ge=0.0, le=1.0)
    position_bias: float = Field(default=0.0, ge=0.0, lt=0.5)


class SamplingSpec(StrictModel):
    temperature: float = Field(default=0.0, ge=0.0, le=2.0)
    max_tokens: int = Field(default=8, ge=1, le=4096)
    seed: int | None = Field(default=None, ge=0, le=MAX_SEED, description="where supported")
    top_logprobs: int = Field(default=5, ge=0, le=20, description="0: do not ask for logprobs")


class PromptSpec(StrictModel):
    system: str | None = Field(default=None, description="default: the built-in system prompt")
    user: str | None = Field(
        default=None,
        description="template with {first}, {second}, {label_first}, {label_second} and "
        "optionally {source}; default: the built-in pairwise prompt",
    )
    labels: list[Text] = Field(default_factory=lambda: ["A", "B"], min_length=2, max_length=2)


class PriceSpec(StrictModel):
    per_million_input: float = Field(default=0.0, ge=0.0, le=MAX_COST)
    per_million_output: float = Field(default=0.0, ge=0.0, le=MAX_COST)
    per_call: float = Field(default=0.0, ge=0.0, le=MAX_COST)


class RetriesSpec(StrictModel):
    """Retries of connection errors, timeouts, 408, 409, 429 and 5xx (other 4xx stop at once)."""

    max_attempts: int = Field(default=6, ge=1, le=100, description="attempts in all")
    base_delay_seconds: float = Field(default=0.5, ge=0.0, le=600.0)
    max_delay_seconds: float = Field(default=30.0, ge=0.0, le=3600.0)


class EndpointSpec(StrictModel):
    """A judge asked live over an OpenAI-compatible endpoint."""

    base_url: str = Field(
        min_length=8, pattern=r"^https?://", description="e.g. http://127.0.0.1:8000/v1"
    )
    model: Text
    api_key_env: str | None = Field(
        default=None,
        min_length=1,
        description="the environment variable holding the API key (never the key itself); "
        "omit for local servers",
    )
    profile: Literal["openai", "vllm", "ollama", "llamacpp", "litellm", "generic"] = "openai"
    sampling: SamplingSpec = Field(default_factory=SamplingSpec)
    prompt: PromptSpec = Field(default_factory=PromptSpec)
    price: PriceSpec = Field(default_factory=PriceSpec)
    concurrency: int = Field(default=8, ge=1, le=256)
    requests_per_second: float | None = Field(default=None, gt=0.0, le=100_000.0)
    timeout_seconds: float = Field(default=60.0, gt=0.0, le=3600.0)
    retries: RetriesSpec = Field(default_factory=RetriesSpec)


class StudyJudgeSpec(StrictModel):
    name: str = Field(min_length=1, description="the judge's rater_id in the judgment files")
    endpoint: EndpointSpec | None = Field(
        default=None, description="ask this judge live instead of reading its judgments"
    )
    cost_per_judgment: float = Field(
        default=0.0,
        ge=0.0,
        le=MAX_COST,
        description="price of one judgment where a row carries no cost of its own",
    )
    prior: PriorSheetSpec | None = None


class StudyPanelSpec(StrictModel):
    name: str = Field(min_length=1)
    judges: list[StudyJudgeSpec] = Field(min_length=1, max_length=100)
    trials: int = Field(
        default=1, ge=1, le=100, description="judgments per judge, root and presentation order"
    )
    latent_correlation: float | None = Field(
        default=None, ge=-1.0, le=1.0, description="prior latent correlation (shown, not used)"
    )


class StudyHumansSpec(StrictModel):
    judgments_per_root: int | None = Field(
        default=None,
        ge=1,
        le=100,
        description="human judgments expected on a root that has any; a shortfall is scored "
        "by the missing policy (default: no expectation)",
    )
    cost_per_judgment: float = Field(default=0.0, ge=0.0, le=MAX_COST)


class PairMappingSpec(StrictModel):
    id: str = Field(min_length=1)
    source: Text | None = None
    treatment: str = Field(min_length=1)
    null_partner: str = Field(min_length=1)
    metadata: list[Text] = Field(default_factory=list)


class PairsSpec(StrictModel):
    path: RelPath
    mapping: PairMappingSpec


class TableFileSpec(StrictModel):
    format: Literal["table"]
    path: RelPath
    mapping: dict[str, str] | None = None
    value_maps: dict[str, dict[str, str]] | None = None
    treatment_side_column: Text | None = None


class LabelStudioFileSpec(StrictModel):
    format: Literal["labelstudio"]
    path: RelPath
    root_field: str = Field(min_length=1)
    control: str = Field(min_length=1)
    treatment_side_field: Text | None = None
    treatment_side: Literal["left", "right"] | None = None
    side_map: dict[str, str] | None = None
    value_map: dict[str, str] | None = None
    rater_kind: Literal["model", "human"] = "human"


class ArgillaFileSpec(StrictModel):
    format: Literal["argilla"]
    path: RelPath
    question: str = Field(min_length=1)
    root_key: str = Field(min_length=1)
    value_map: dict[str, str]
    treatment_side_key: Text | None = None
    treatment_side: Literal["left", "right"] | None = None
    side_map: dict[str, str] | None = None
    include_suggestions: bool = False


class MTurkFileSpec(StrictModel):
    format: Literal["mturk"]
    path: RelPath
    root_column: str = Field(min_length=1)
    answer_column: str = Field(min_length=1)
    value_map: dict[str, str]
    treatment_side_column: Text | None = None
    treatment_side: Literal["left", "right"] | None = None
    side_map: dict[str, str] | None = None


JudgmentFileSpec = Annotated[
    TableFileSpec | LabelStudioFileSpec | ArgillaFileSpec | MTurkFileSpec,
    Field(discriminator="format"),
]


class ReadingsMappingSpec(StrictModel):
    root_id: str = Field(default="root_id", min_length=1)
    reader_id: str = Field(default="reader_id", min_length=1)
    category: str = Field(default="category", min_length=1)


class ReaderAuditDataSpec(StrictModel):
    path: RelPath
    mapping: ReadingsMappingSpec = Field(default_factory=ReadingsMappingSpec)
    kappa_min: float = Field(gt=0.0, lt=1.0, description="instrument gate on Cohen's kappa")
    categories: list[Text] | None = Field(
        default=None, min_length=2, description="the admissible categories (default: as read)"
    )
    cost_per_reading: float = Field(default=0.0, ge=0.0, le=MAX_COST)


class DataSpec(StrictModel):
    stimuli: PairsSpec
    judgments: list[JudgmentFileSpec] = Field(min_length=1, max_length=100)
    reader_audit: ReaderAuditDataSpec
    root_order: RelPath | None = Field(
        default=None,
        description="a registered order file (one root id a line), fixed before the judgments; "
        "default: the keyed hash of each id under the seed",
    )


class StudyGatesSpec(StrictModel):
    length_unit: Literal["words", "characters"] = "words"
    length_target: float = Field(default=0.0, ge=0.0, le=10.0)
    length_tolerance: float = Field(gt=0.0, le=5.0)
    fragment_threshold: float = Field(default=0.5, gt=0.0, le=1.0)
    content_threshold: float = Field(default=0.8, gt=0.0, le=1.0)
    require_numbers: bool = True
    max_diff_tokens: int = Field(ge=1, le=1000)


class PolicySpec(StrictModel):
    tie: Literal["half", "against_claim"] = "half"
    invalid: Literal["half", "against_claim"] = "against_claim"
    missing: Literal["half", "against_claim"] = "against_claim"


class BudgetSpec(StrictModel):
    """Hard caps on spend, judges and humans on their own lines (the study's currency)."""

    judges: float | None = Field(
        default=None, ge=0.0, le=MAX_COST, description="cap on live judges' spend"
    )
    humans: float | None = Field(
        default=None, ge=0.0, le=MAX_COST, description="cap on the human lines (reported)"
    )


class PlanningSpec(StrictModel):
    replicates: int = Field(default=1000, ge=100, le=100_000)
    max_extra_roots: int = Field(default=20_000, ge=1, le=MAX_ROOTS)


class StudyConfig(StrictModel):
    kind: Literal["study"]
    seed: int = Field(ge=0, le=MAX_SEED, description=SEED_TEXT + "; it also fixes the root order")
    construct_spec: ConstructSpec = Field(alias="construct")
    sequential: SequentialSpec
    panel: StudyPanelSpec
    humans: StudyHumansSpec = Field(default_factory=StudyHumansSpec)
    data: DataSpec
    gates: StudyGatesSpec
    policy: PolicySpec = Field(default_factory=PolicySpec)
    planning: PlanningSpec = Field(default_factory=PlanningSpec)
    budget: BudgetSpec = Field(default_factory=BudgetSpec)
    currency: str = Field(
        default="USD", min_length=1, max_length=12, description="the unit of every price and cost"
    )


def _relative(value: Any) -> str | None:
    if not isinstance(value, str) or not value:
        return None
    if "\x00" in value:
        return "a path without NUL characters"
    if PurePosixPath(value).is_absolute() or PureWindowsPath(value).is_absolute():
        return "a path relative to the config's own folder, not an absolute path"
    return None


def _study_check(cfg: dict[str, Any]) -> Iterator[tuple[tuple[str | int, ...], Any, str]]:
    data = cfg.get("data")
    if isinstance(data, dict):
        places: list[tuple[tuple[str | int, ...], Any]] = []
        for key in ("stimuli", "reader_audit"):
            if isinstance(data.get(key), dict):
                places.append(((key, "path"), data[key].get("path")))
        if isinstance(data.get("judgments"), list):
            for k, spec in enumerate(data["judgments"]):
                if isinstance(spec, dict):
                    places.append((("judgments", k, "path"), spec.get("path")))
        places.append((("root_order",), data.get("root_order")))
        for rel, value in places:
            problem = _relative(value)
            if problem:
                yield (("data", *rel), value, problem)
    panel = cfg.get("panel")
    if isinstance(panel, dict) and isinstance(panel.get("judges"), list):
        seen: set[str] = set()
        for k, judge in enumerate(panel["judges"]):
            name = judge.get("name") if isinstance(judge, dict) else None
            if isinstance(name, str):
                if name in seen:
                    yield (("panel", "judges", k, "name"), name, "a judge name used once")
                seen.add(name)


RULES = (
    *sequential_construct_rules(("construct",)),
    *sequential_rules(("sequential",)),
    CrossRule(at=(), check=_study_check),
)
