"""The study kind's config: every block a ``study`` config holds, and its cross-field rules.

Data files are named by paths relative to the config's own folder (absolute paths refused); a
judge either has judgments in the files or an ``endpoint`` to be asked live; the policy for ties,
invalid and missing judgments, the planning of roots-to-go and the budget are declared here,
before any data. See :mod:`verdictpack.kinds._study` for the run.
"""

from __future__ import annotations

import re
from typing import Annotated, Any, Literal

from pydantic import AfterValidator, Field, field_validator, model_validator
from pydantic_core import PydanticCustomError

from verdictpack._errors import InputError
from verdictpack.config._blocks import (
    MAX_COST,
    MAX_ROOTS,
    HumanPrices,
    SequentialSpec,
    currency_field,
    kappa_bound_level_field,
    kappa_min_field,
)
from verdictpack.config._compiler import (
    CrossRule,
    SequentialConstruct,
    StrictModel,
    refuse,
    unique,
)
from verdictpack.config._refusals import MAX_SEED, SEED_TEXT
from verdictpack.core._adaptive import BETS, Bets
from verdictpack.evidence.live._profiles import chat_url
from verdictpack.kinds._study_files import JudgmentFileSpec, RelPath, Text

# ----------------------------------------------------------------------------------------------
# Config
# ----------------------------------------------------------------------------------------------


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
    criterion: Text | None = Field(
        default=None,
        description="the question the judge answers, the {criterion} of the prompt; default: "
        "'Which response is better?' (naming no property a construct might test)",
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


_ENV_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


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

    @field_validator("api_key_env", mode="before")
    @classmethod
    def _a_variable_name(cls, value: Any) -> Any:
        # a key pasted where its variable's name goes would be echoed and stored: refused masked
        if isinstance(value, str) and value and not _ENV_NAME.fullmatch(value):
            raise PydanticCustomError(
                "env_name",
                "the name of an environment variable (letters, digits and '_', not starting "
                "with a digit), such as OPENAI_API_KEY: never the key itself, which is not "
                "shown here",
                {"shown": f"({len(value)} characters, not shown)"},
            )
        return value

    @field_validator("base_url", mode="before")
    @classmethod
    def _a_base_url(cls, value: Any) -> Any:
        """The URL the run will call, checked before anything is written (the ledger's manifest
        stores it): user info refused (issue 22 row 16), and what ``chat_url`` refuses (a query
        or fragment, another scheme, /chat/completions doubled) refused here, never echoed."""
        if not isinstance(value, str):
            return value
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
        try:
            chat_url(value)
        except InputError as exc:
            # a query or fragment may carry a key ('?key=...'): shown masked
            cut = min((i for i in (value.find("?"), value.find("#")) if i >= 0), default=-1)
            shown = value if cut < 0 else value[:cut] + value[cut] + "***"
            raise PydanticCustomError("base_url", exc.allowed, {"shown": shown}) from None
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
    judges: Annotated[list[StudyJudgeSpec], unique("a judge name used once")] = Field(
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
    icc: float | None = Field(
        default=None,
        ge=0.0,
        le=1.0,
        description="the humans' between-root intraclass correlation ICC_H that --plan "
        "simulates (a planning prior; with --sheets a fitted_panel.json's fitted ICC_H takes "
        "precedence; default: none, humans independent across roots)",
    )


class PairMappingSpec(StrictModel):
    id: str = Field(min_length=1, description="the column holding each pair's root id")
    source: Text | None = Field(
        default=None,
        description="the column holding the source passage (default: the pairs have none)",
    )
    treatment: Text | None = Field(
        default=None, description="minimal pairs: the column holding the treatment text"
    )
    null_partner: Text | None = Field(
        default=None, description="minimal pairs: the column holding the null partner's text"
    )
    a: Text | None = Field(
        default=None,
        description="natural pairs: the column holding the pair's first text (side a); which "
        "side is the treatment comes from the pairs block's treatment_column or treatment_rule",
    )
    b: Text | None = Field(
        default=None, description="natural pairs: the column holding the pair's second text"
    )
    metadata: list[Text] = Field(
        default_factory=list,
        description="columns copied into each stimulus's metadata under their own names",
    )

    @model_validator(mode="after")
    def _one_shape(self) -> PairMappingSpec:
        minimal, natural = (self.treatment, self.null_partner), (self.a, self.b)
        if all(minimal) == all(natural) or (any(minimal) and any(natural)):
            raise ValueError(
                "either 'treatment' and 'null_partner' (minimal pairs) or 'a' and 'b' (natural "
                "pairs, with treatment_column or treatment_rule), not a mix"
            )
        return self


TreatmentRule = Literal["longer_words", "longer_characters", "shorter_words", "shorter_characters"]


class PairsSpec(StrictModel):
    path: RelPath
    mapping: PairMappingSpec = Field(
        description="which column of the pairs file holds each field of a stimulus"
    )
    treatment_column: Text | None = Field(
        default=None,
        description="natural pairs: the column saying which side holds the treatment (a or b, "
        "or values translated by treatment_values)",
    )
    treatment_values: dict[str, Literal["a", "b"]] | None = Field(
        default=None,
        description='natural pairs: treatment_column\'s values -> a or b (e.g. {"first": '
        '"a", "second": "b"}; default: the values a and b themselves)',
    )
    treatment_rule: TreatmentRule | None = Field(
        default=None,
        description="natural pairs: the treatment is the longer (or shorter) text in words or "
        "characters, a rule fixed before the data; a pair of equal lengths is refused by the "
        "treatment_rule gate",
    )

    @model_validator(mode="after")
    def _treatment_named(self) -> PairsSpec:
        named = (self.treatment_column is not None) + (self.treatment_rule is not None)
        column = self.treatment_values is None or self.treatment_column is not None
        if not column or named != (self.mapping.a is not None):
            raise ValueError(
                "natural pairs (mapping 'a' and 'b') name the treatment by one of "
                "treatment_column (with treatment_values) or treatment_rule; minimal pairs by none"
            )
        return self


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
    # "none" is held as None (a nullable block, so a defect inside the block is named at its
    # own path); an omitted block (or null) is refused by _audit_chosen, naming "none"
    reader_audit: ReaderAuditDataSpec | None = Field(
        default=None,
        validate_default=True,
        description="the reader-reconstruction audit: a kappa below kappa_min makes the verdict "
        'INSTRUMENT_INVALID; "none" runs the study without one, and every output then says '
        "the instrument is not validated",
    )
    root_order: RelPath | None = Field(
        default=None,
        description="a registered order file (one root id a line), fixed before the judgments; "
        "default: the keyed hash of each id under the seed",
    )

    @field_validator("reader_audit", mode="before")
    @classmethod
    def _audit_chosen(cls, value: Any) -> Any:
        if value is None:
            raise PydanticCustomError(
                "reader_audit_required",
                'a reader_audit block (path, kappa_min ...), or "none" to run the study '
                "without a reader audit: an explicit choice, and every output then says the "
                "instrument is not validated",
            )
        return None if value == "none" else value


GateName = Literal["length_match", "fragment_distinctness", "content_overlap", "diff_budget"]


def _once(names: list[str]) -> list[str]:
    if len(set(names)) != len(names):
        raise ValueError("each gate named once")
    return names


class StudyGatesSpec(StrictModel):
    off: Annotated[list[GateName], AfterValidator(_once)] = Field(
        default_factory=list,
        description="gates switched off by name (length_match, fragment_distinctness, "
        "content_overlap, diff_budget): not applied, and reported as not applied; all four off "
        "admits natural pairs as they are",
    )
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
    length_tolerance: float | None = Field(
        default=None,
        gt=0.0,
        le=5.0,
        description="length_match: largest distance of the relative length difference from "
        "length_target admitted (required unless length_match is off)",
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
    max_diff_tokens: int | None = Field(
        default=None,
        ge=1,
        le=1000,
        description="diff_budget: most word tokens the treatment and null partner may differ "
        "by (at least 1; required unless diff_budget is off)",
    )

    @model_validator(mode="after")
    def _settings_of_gates_on(self) -> StudyGatesSpec:
        needed = (("length_match", "length_tolerance"), ("diff_budget", "max_diff_tokens"))
        for name, setting in needed:
            if name not in self.off and getattr(self, setting) is None:
                raise PydanticCustomError(
                    "gate_setting",
                    "a {setting} for the {name} gate (or {name} in gates.off)",
                    {"setting": setting, "name": name},
                )
        return self


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
    bets: list[Bets] = Field(
        default_factory=lambda: list(BETS),
        min_length=1,
        max_length=4,
        description="the bets --plan's human allocation compares, each named once (default all "
        "four: the plug-in, blend and horizon bets take about 5, 11 and 5 times the grid's "
        "simulation time); the config's own sequential.bets is always compared, first",
    )

    @field_validator("bets")
    @classmethod
    def _bets_once(cls, bets: list[str]) -> list[str]:
        seen: set[str] = set()
        found = []
        for i, name in enumerate(bets):
            if name in seen:
                found.append(((i,), name, "a bets name used once"))
            seen.add(name)
        refuse(found)
        return bets


# the study's human touches: a judgment without a cost of its own, an audit reading
HUMAN_PRICES = HumanPrices(
    default=("humans", "cost_per_touch"),
    touches=(("humans", "cost_per_judgment"), ("data", "reader_audit", "cost_per_reading")),
    required=False,
)


class StudyConfig(StrictModel):
    kind: Literal["study"] = Field(description="the config kind: 'study'")
    seed: int = Field(ge=0, le=MAX_SEED, description=SEED_TEXT + "; it also fixes the root order")
    construct_spec: SequentialConstruct = Field(
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


RULES: tuple[CrossRule, ...] = ()
