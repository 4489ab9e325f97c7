"""The study config's data paths and judgment-file formats: the text and path types every
study block uses, and one model per judgment-file format (``table``, ``labelstudio``,
``argilla``, ``mturk``, ``openai_batch``, ``inspect``), with the free-text parser's settings
and the row filters a table may declare. Part of :mod:`verdictpack.kinds._study_config`.
"""

from __future__ import annotations

from pathlib import PurePosixPath, PureWindowsPath
from typing import Annotated, Any, Literal

from pydantic import AfterValidator, BeforeValidator, Field

from verdictpack.config._compiler import StrictModel

Text = Annotated[str, Field(min_length=1)]


def _relative(value: str) -> str:
    if "\x00" in value:
        raise ValueError("a path without NUL characters")
    if PurePosixPath(value).is_absolute() or PureWindowsPath(value).is_absolute():
        raise ValueError("a path relative to the config's own folder, not an absolute path")
    return value


RelPath = Annotated[
    str,
    Field(
        min_length=1,
        max_length=4096,
        description="a file path relative to the config's own folder (never the working directory)",
    ),
    AfterValidator(_relative),
]


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


class _ParserSpec(StrictModel):
    """How a judge's free-text answer is read (the live judges' parser)."""

    labels: list[Text] = Field(
        default_factory=lambda: ["A", "B"],
        min_length=2,
        max_length=2,
        description="the answer labels of the text shown first and second (default A, B)",
    )
    patterns: list[Text] = Field(
        default_factory=list,
        description="strict patterns tried after the exact label, in order: bold, brackets, "
        "named, brackets_anywhere, or a regular expression with a group named label",
    )
    ties: list[Text] = Field(
        default_factory=list, description="answers that mean a tie (e.g. MT-Bench's C)"
    )


def _listed(value: Any) -> Any:
    return [value] if isinstance(value, dict) else value


class WhereSpec(StrictModel):
    column: Text = Field(description="the file's column compared")
    in_: list[str] = Field(
        alias="in", min_length=1, description="the values (as text) of the rows kept"
    )


class TableFileSpec(_ParserSpec):
    format: Literal["table"] = Field(
        description="a CSV, JSONL or Parquet file in the canonical columns, or mapped to them"
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
    verdict_text_column: Text | None = Field(
        default=None,
        description="a column of free-text verdicts read by the parser (labels, patterns, "
        "ties) instead of a choice column; what it cannot read is invalid",
    )
    where: (
        Annotated[
            list[WhereSpec],
            BeforeValidator(_listed, json_schema_input_type=WhereSpec | list[WhereSpec]),
        ]
        | None
    ) = Field(
        default=None,
        description="keep only the rows whose column holds one of the values (one clause or a "
        "list, all must hold)",
    )
    ignore_raters: list[Text] | None = Field(
        default=None, description="rater ids whose rows are left out (counted in the report)"
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


class _FreeTextSpec(_ParserSpec):
    """A judge's free-text answers in a judge-log format, and whose they are."""

    order_map: dict[str, Literal["treatment_first", "null_first"]] | None = Field(
        default=None,
        description="the file's spelling of the presentation order -> treatment_first or "
        "null_first (default: those two words)",
    )
    judge: Text | None = Field(
        default=None,
        description="the panel judge these answers are from (default: the model the file names)",
    )


class OpenAIBatchFileSpec(_FreeTextSpec):
    format: Literal["openai_batch"] = Field(
        description="an OpenAI Batch output JSONL (chat completions) of one judge's answers"
    )
    path: RelPath
    custom_id: Text = Field(
        description="a regular expression each custom_id matches whole, with groups named root "
        "and order (and optionally trial, judge)"
    )


class InspectFileSpec(_FreeTextSpec):
    format: Literal["inspect"] = Field(
        description="an Inspect AI evaluation log (.json or .eval) of one judge's answers"
    )
    path: RelPath
    root_key: Text = Field(description="dotted key of the sample holding the root id")
    order_key: Text = Field(description="dotted key of the sample holding the order shown")
    answer: Text = Field(
        default="completion",
        description="where the answer is: completion, or score:<scorer> (that score's answer)",
    )


JudgmentFileSpec = Annotated[
    TableFileSpec
    | LabelStudioFileSpec
    | ArgillaFileSpec
    | MTurkFileSpec
    | OpenAIBatchFileSpec
    | InspectFileSpec,
    Field(discriminator="format"),
]
