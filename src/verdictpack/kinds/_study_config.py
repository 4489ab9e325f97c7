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

from pydantic import Field, field_validator, model_validator
from pydantic_core import PydanticCustomError

from verdictpack.config._blocks import (
    MAX_COST,
    MAX_ROOTS,
    HumanPrices,
    SequentialSpec,
    currency_field,
    kappa_bound_level_field,
    kappa_min_field,
    sequential_rules,
)
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

    role: str = Field(
        default="judge", min_length=1, description="free text: what kind of judge this is"
    )
    baseline_rate: float = Field(gt=0.0, lt=1.0, description="P(prefers treatment), no effect")
    lean_h: float = Field(
        default=0.0,
        ge=-3.2,
        le=3.2,
        description="prior shift in h units when the effect is present, in [-3.2, 3.2]",
    )
    noise: float = Field(
        default=0.0, ge=0.0, le=1.0, description="prior attenuation toward chance, in [0, 1]"
    )
    position_bias: float = Field(
        default=0.0,
        ge=0.0,
        lt=0.5,
        description="prior shift toward the item shown first, in [0, 0.5)",
    )


class SamplingSpec(StrictModel):
    temperature: float = Field(
        default=0.0, ge=0.0, le=2.0, description="sampling temperature sent, in [0, 2]"
    )
    max_tokens: int = Field(
        default=8,
        ge=1,
        le=4096,
        description="completion token limit per call, 1 to 4096 (also the budget's worst case)",
    )
    seed: int | None = Field(default=None, ge=0, le=MAX_SEED, description="where supported")
    top_logprobs: int = Field(default=5, ge=0, le=20, description="0: do not ask for logprobs")


class PromptSpec(StrictModel):
    system: str | None = Field(default=None, description="default: the built-in system prompt")
    user: str | None = Field(
        default=None,
        description="template with {first}, {second}, {label_first}, {label_second} and "
        "optionally {source}, {open} and {close} (a fence absent from the texts); default: the "
        "built-in pairwise prompt",
    )
    labels: list[Text] = Field(
        default_factory=lambda: ["A", "B"],
        min_length=2,
        max_length=2,
        description="the two answer labels, for the item shown first and second (default A, B)",
    )


class PriceSpec(StrictModel):
    per_million_input: float = Field(
        default=0.0,
        ge=0.0,
        le=MAX_COST,
        description="price per million prompt tokens (from the response's usage), in currency",
    )
    per_million_output: float = Field(
        default=0.0,
        ge=0.0,
        le=MAX_COST,
        description="price per million completion tokens (from the response's usage), in currency",
    )
    per_call: float = Field(
        default=0.0, ge=0.0, le=MAX_COST, description="flat price per request, in currency"
    )


class RetriesSpec(StrictModel):
    """Retries of connection errors, timeouts, 408, 409, 429 and 5xx (other 4xx stop at once)."""

    max_attempts: int = Field(default=6, ge=1, le=100, description="attempts in all")
    base_delay_seconds: float = Field(
        default=0.5,
        ge=0.0,
        le=600.0,
        description="first backoff in seconds, doubled per retry, with full jitter",
    )
    max_delay_seconds: float = Field(
        default=30.0,
        ge=0.0,
        le=3600.0,
        description="cap in seconds on any one wait, a server's Retry-After included",
    )


class EndpointSpec(StrictModel):
    """A judge asked live over an OpenAI-compatible endpoint."""

    base_url: str = Field(
        min_length=8, pattern=r"^https?://", description="e.g. http://127.0.0.1:8000/v1"
    )
    model: Text = Field(description="the model name sent with every request")
    api_key_env: str | None = Field(
        default=None,
        min_length=1,
        description="the environment variable holding the API key (never the key itself); "
        "omit for local servers",
    )
    profile: Literal["openai", "vllm", "ollama", "llamacpp", "litellm", "generic"] = Field(
        default="openai",
        description="the server type: sets the token-limit field and how the answer is held to "
        "one of the two labels",
    )
    sampling: SamplingSpec = Field(
        default_factory=SamplingSpec,
        description="sampling settings sent with every request",
    )
    prompt: PromptSpec = Field(
        default_factory=PromptSpec,
        description="the system and user prompts and the two answer labels",
    )
    price: PriceSpec = Field(
        default_factory=PriceSpec,
        description="your prices for this endpoint (default: free)",
    )
    concurrency: int = Field(
        default=8, ge=1, le=256, description="requests in flight at once, 1 to 256"
    )
    requests_per_second: float | None = Field(
        default=None,
        gt=0.0,
        le=100_000.0,
        description="rate limit on requests sent (default: none)",
    )
    timeout_seconds: float = Field(
        default=60.0,
        gt=0.0,
        le=3600.0,
        description="time limit of one request in seconds; a timeout is retried",
    )
    retries: RetriesSpec = Field(
        default_factory=RetriesSpec,
        description="retries of transient failures: attempts and backoff",
    )

    @field_validator("base_url", mode="before")
    @classmethod
    def _no_credentials(cls, value: Any) -> Any:
        # issue 22 row 16: user info in the URL would be stored in the ledger's manifest
        if isinstance(value, str):
            scheme, sep, rest = value.partition("://")
            if not sep:
                scheme, rest = "", value
            authority = rest.split("/", 1)[0].split("?", 1)[0].split("#", 1)[0]
            if "@" in authority:
                # the refusal shows the URL with its user info masked: never the credential
                shown = f"{scheme}{sep}***@{rest.split('@', 1)[1] if '@' in rest else ''}"
                raise PydanticCustomError(
                    "url_credentials",
                    "a URL without credentials (no 'user:password@' or 'user@' before the host: "
                    "it would be stored with the study); put the key in an environment variable "
                    "and name that variable in api_key_env",
                    {"shown": shown},
                )
        return value


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
    prior: PriorSheetSpec | None = Field(
        default=None,
        description="a character sheet as prior, shown beside the estimate and used by --plan, "
        "never mixed into the verdict",
    )


class StudyPanelSpec(StrictModel):
    name: str = Field(min_length=1, description="the panel's name (reported)")
    judges: list[StudyJudgeSpec] = Field(
        min_length=1,
        max_length=100,
        description="the registered judges, 1 to 100, names unique; model rows from other "
        "raters are refused",
    )
    trials: int = Field(
        default=1, ge=1, le=100, description="judgments per judge, root and presentation order"
    )
    latent_correlation: float | None = Field(
        default=None,
        ge=-1.0,
        le=1.0,
        description="prior latent correlation between judges, in [-1, 1]: shown, used by --plan "
        "and by the fitted panel when no judge pair is informative, never in the verdict",
    )


class StudyHumansSpec(StrictModel):
    judgments_per_root: int | None = Field(
        default=None,
        ge=1,
        le=100,
        description="human judgments expected on a root that has any; a shortfall is scored "
        "by the missing policy (default: no expectation)",
    )
    cost_per_touch: float | None = Field(
        default=None,
        ge=0.0,
        le=MAX_COST,
        description="the price of one human touch of any kind, inherited where a kind's own "
        "price is omitted: humans.cost_per_judgment and data.reader_audit.cost_per_reading "
        "(default: none, an omitted price is then 0)",
    )
    cost_per_judgment: float = Field(
        default=0.0,
        ge=0.0,
        le=MAX_COST,
        description="price of one human judgment where a row carries no cost of its own "
        "(default: humans.cost_per_touch, else 0)",
    )


class PairMappingSpec(StrictModel):
    id: str = Field(min_length=1, description="the column holding each pair's root id")
    source: Text | None = Field(
        default=None,
        description="the column holding the source passage (default: the pairs have none)",
    )
    treatment: str = Field(min_length=1, description="the column holding the treatment text")
    null_partner: str = Field(
        min_length=1, description="the column holding the null partner's text"
    )
    metadata: list[Text] = Field(
        default_factory=list,
        description="columns copied into each stimulus's metadata under their own names",
    )


class PairsSpec(StrictModel):
    path: RelPath
    mapping: PairMappingSpec = Field(
        description="which column of the pairs file holds each field of a stimulus"
    )


# the two side settings every annotation-tool importer takes
TreatmentSide = Annotated[
    Literal["left", "right"] | None,
    Field(
        description="the side that always holds the treatment ('left' = shown first), instead of "
        "reading it per record"
    ),
]
SideMap = Annotated[
    dict[str, str] | None,
    Field(
        description="translates the side values read to 'left' / 'right' (default: the values "
        "themselves)"
    ),
]


class TableFileSpec(StrictModel):
    format: Literal["table"] = Field(
        description="a CSV or JSONL file in the canonical columns, or mapped to them"
    )
    path: RelPath
    mapping: dict[str, str] | None = Field(
        default=None,
        description="canonical column -> the file's column (default: the canonical names)",
    )
    value_maps: dict[str, dict[str, str]] | None = Field(
        default=None,
        description="per canonical column (or treatment_side), file value -> canonical value; "
        "unmapped values must be canonical",
    )
    treatment_side_column: Text | None = Field(
        default=None,
        description="a column saying which side held the treatment (A/B or first/second): the "
        "order is derived from it",
    )


class LabelStudioFileSpec(StrictModel):
    format: Literal["labelstudio"] = Field(
        description="a Label Studio 1.x JSON (or JSONL) export of pairwise or choices controls"
    )
    path: RelPath
    root_field: str = Field(
        min_length=1, description="the key of the task's data holding the root id"
    )
    control: str = Field(
        min_length=1, description="the from_name of the pairwise or choices control read"
    )
    treatment_side_field: Text | None = Field(
        default=None,
        description="the key of the task's data saying which side held the treatment",
    )
    treatment_side: TreatmentSide = None
    side_map: SideMap = None
    value_map: dict[str, str] | None = Field(
        default=None,
        description="translates the control's values to left, right, tie or invalid (needed for "
        "choices; optional for pairwise)",
    )
    rater_kind: Literal["model", "human"] = Field(
        default="human", description="whether the annotators are models or humans"
    )


class ArgillaFileSpec(StrictModel):
    format: Literal["argilla"] = Field(description="an Argilla 2.x records export (JSON or JSONL)")
    path: RelPath
    question: str = Field(
        min_length=1, description="the name of the question whose responses are read"
    )
    root_key: str = Field(
        min_length=1,
        description="dotted key of the record holding the root id, e.g. metadata.pair_id",
    )
    value_map: dict[str, str] = Field(
        description="translates each exported answer value to left, right, tie or invalid "
        "('left' = the side shown first)"
    )
    treatment_side_key: Text | None = Field(
        default=None,
        description="dotted key of the record saying which side held the treatment",
    )
    treatment_side: TreatmentSide = None
    side_map: SideMap = None
    include_suggestions: bool = Field(
        default=False,
        description="also read the records' suggestions, as model judgments rated by their agent",
    )


class MTurkFileSpec(StrictModel):
    format: Literal["mturk"] = Field(
        description="an MTurk batch results CSV; every row is one human judgment"
    )
    path: RelPath
    root_column: str = Field(
        min_length=1, description="the Input column holding the root id (Input. prefix optional)"
    )
    answer_column: str = Field(
        min_length=1, description="the Answer column holding the choice (Answer. prefix optional)"
    )
    value_map: dict[str, str] = Field(
        description="translates each exported answer value to left, right, tie or invalid "
        "('left' = the side shown first)"
    )
    treatment_side_column: Text | None = Field(
        default=None,
        description="the Input column saying which side held the treatment",
    )
    treatment_side: TreatmentSide = None
    side_map: SideMap = None


JudgmentFileSpec = Annotated[
    TableFileSpec | LabelStudioFileSpec | ArgillaFileSpec | MTurkFileSpec,
    Field(discriminator="format"),
]


class ReadingsMappingSpec(StrictModel):
    root_id: str = Field(
        default="root_id", min_length=1, description="the column holding the root read"
    )
    reader_id: str = Field(
        default="reader_id", min_length=1, description="the column holding the reader's id"
    )
    category: str = Field(
        default="category", min_length=1, description="the column holding the category read"
    )


class ReaderAuditDataSpec(StrictModel):
    path: RelPath
    mapping: ReadingsMappingSpec = Field(
        default_factory=ReadingsMappingSpec,
        description="which column of the readings file holds root, reader and category",
    )
    kappa_min: float = kappa_min_field()
    kappa_bound_level: float = kappa_bound_level_field()
    categories: list[Text] | None = Field(
        default=None, min_length=2, description="the admissible categories (default: as read)"
    )
    cost_per_reading: float = Field(
        default=0.0,
        ge=0.0,
        le=MAX_COST,
        description="price of one reading, in currency (default: humans.cost_per_touch, else 0)",
    )


class DataSpec(StrictModel):
    stimuli: PairsSpec = Field(description="the pairs file: one stimulus per root")
    judgments: list[JudgmentFileSpec] = Field(
        min_length=1,
        max_length=100,
        description="the judgment files, 1 to 100, each read by its format into one table",
    )
    reader_audit: ReaderAuditDataSpec = Field(
        description="the reader-reconstruction audit: a kappa below kappa_min makes the verdict "
        "INSTRUMENT_INVALID"
    )
    root_order: RelPath | None = Field(
        default=None,
        description="a registered order file (one root id a line), fixed before the judgments; "
        "default: the keyed hash of each id under the seed",
    )


class StudyGatesSpec(StrictModel):
    length_unit: Literal["words", "characters"] = Field(
        default="words", description="length_match: what a text's length L counts"
    )
    length_target: float = Field(
        default=0.0,
        ge=0.0,
        le=10.0,
        description="length_match: intended (L_treatment - L_null) / L_null (0: matched "
        "lengths, 0.5: 50% longer)",
    )
    length_tolerance: float = Field(
        gt=0.0,
        le=5.0,
        description="length_match: largest distance of the relative length difference from "
        "length_target admitted",
    )
    fragment_threshold: float = Field(
        default=0.5,
        gt=0.0,
        le=1.0,
        description="fragment_distinctness: largest word 3-gram Jaccard admitted between two "
        "sentences of one text",
    )
    content_threshold: float = Field(
        default=0.8,
        gt=0.0,
        le=1.0,
        description="content_overlap: least share of the source's content units both texts keep",
    )
    require_numbers: bool = Field(
        default=True,
        description="content_overlap: every number of the source in both texts, the same "
        "numbers in each",
    )
    max_diff_tokens: int = Field(
        ge=1,
        le=1000,
        description="diff_budget: most word tokens the treatment and null partner may differ "
        "by (at least 1)",
    )


_IMPUTED = {
    "half": "scoring an unknown answer ½ imputes a value the judge or reader never gave: at a "
    "low human baseline it made false EFFECT_SUPPORTED verdicts several times more likely than "
    "alpha allows",
    "against_claim": "scoring an unknown answer against the claim protects EFFECT_SUPPORTED "
    "only: it moves what the streams estimate, so BELOW_PRACTICAL_THRESHOLD and "
    "NO_POSITIVE_EFFECT lose their guarantee",
}


def _bounded_only(value: Any) -> Any:
    if value in _IMPUTED:
        raise ValueError(
            f"'bounded' ({value!r} is no longer accepted: {_IMPUTED[value]}; an unknown answer "
            "is now bounded both ways, which keeps every verdict's error bound)"
        )
    return value


class PolicySpec(StrictModel):
    """How a judgment becomes an observation, declared before the data."""

    model_observation: Literal["choice", "probability"] = Field(
        default="choice",
        description="the estimand of a model judgment: 'choice', the answer the judge gave "
        "(treatment 1, null partner 0, tie ½), as humans give theirs; or 'probability', a live "
        "judge's probability of the treatment label from its logprobs (a judgment without one "
        "is unknown, bounded both ways); never mixed in one stream",
    )
    tie: Literal["half"] = Field(
        default="half",
        description="a tie is a declared outcome scored ½ (part of the metric) for models and "
        "humans alike",
    )
    invalid: Literal["bounded"] = Field(
        default="bounded",
        description="an invalid answer is unknown: scored 0 for the lower end of every stream "
        "and 1 for the upper end (the only policy that keeps every verdict valid)",
    )
    missing: Literal["bounded"] = Field(
        default="bounded",
        description="a registered cell with no judgment, a human shortfall under "
        "humans.judgments_per_root and a gap in the registered order are unknown, bounded "
        "both ways like an invalid answer",
    )

    @field_validator("tie", mode="before")
    @classmethod
    def _tie(cls, value: Any) -> Any:
        if value == "against_claim":
            raise ValueError(
                "'half' ('against_claim' is no longer accepted: it scores a tie 0 for the "
                "judges and 1 for the humans, a different metric in each stream)"
            )
        return value

    @field_validator("invalid", "missing", mode="before")
    @classmethod
    def _unknown(cls, value: Any) -> Any:
        return _bounded_only(value)


class BudgetSpec(StrictModel):
    """Hard caps on spend, judges and humans on their own lines (the study's currency)."""

    judges: float | None = Field(
        default=None, ge=0.0, le=MAX_COST, description="cap on live judges' spend"
    )
    humans: float | None = Field(
        default=None, ge=0.0, le=MAX_COST, description="cap on the human lines (reported)"
    )


class PlanningSpec(StrictModel):
    replicates: int = Field(
        default=1000,
        ge=100,
        le=100_000,
        description="simulated continuations of an INCONCLUSIVE study, 100 to 100,000",
    )
    max_extra_roots: int = Field(
        default=20_000,
        ge=1,
        le=MAX_ROOTS,
        description="most extra roots a simulated continuation may take before it counts as "
        "unsettled",
    )


# the study's human touches: a judgment without a cost of its own, an audit reading
HUMAN_PRICES = HumanPrices(
    default=("humans", "cost_per_touch"),
    touches=(("humans", "cost_per_judgment"), ("data", "reader_audit", "cost_per_reading")),
    required=False,
)


class StudyConfig(StrictModel):
    kind: Literal["study"] = Field(description="the config kind: 'study'")
    seed: int = Field(ge=0, le=MAX_SEED, description=SEED_TEXT + "; it also fixes the root order")
    construct_spec: ConstructSpec = Field(
        alias="construct", description="the construct, shared by every kind"
    )
    sequential: SequentialSpec = Field(
        description="the anytime-valid route: construction, bet grid and cap, fixed before data"
    )
    panel: StudyPanelSpec = Field(
        description="the registered judges: judgments in the files or asked live"
    )
    humans: StudyHumansSpec = Field(
        default_factory=StudyHumansSpec,
        description="the human stream: expected judgments per root and their price",
    )
    data: DataSpec = Field(
        description="the data files, each a path relative to the config's folder"
    )
    gates: StudyGatesSpec = Field(
        description="the gates on real text every pair must pass, in order"
    )
    policy: PolicySpec = Field(
        default_factory=PolicySpec,
        description="how ties, invalid and missing judgments score, declared before the data",
    )
    planning: PlanningSpec = Field(
        default_factory=PlanningSpec,
        description="the simulation of how many more roots would settle an INCONCLUSIVE study",
    )
    budget: BudgetSpec = Field(
        default_factory=BudgetSpec,
        description="hard caps on spend, judges and humans apart (default: none)",
    )
    currency: str = currency_field()

    @model_validator(mode="before")
    @classmethod
    def _inherit_prices(cls, data: Any) -> Any:
        return HUMAN_PRICES.inherit(data)


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
