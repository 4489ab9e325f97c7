"""Importers of Label Studio, Argilla and MTurk exports (fixtures in tests/evidence/data/)."""

from __future__ import annotations

import csv
import json
from pathlib import Path

import pytest

from verdictpack._errors import Defect, InputError
from verdictpack.evidence._table import ImportResult, Judgment, JudgmentTable, Origin
from verdictpack.evidence.importers import read_argilla, read_labelstudio, read_mturk

DATA = Path(__file__).parent / "data"


def bare(judgments: tuple[Judgment, ...]) -> list[tuple[object, ...]]:
    """The output columns of each judgment, origin left out."""
    return [
        (j.root_id, j.rater_id, j.rater_kind, j.order, j.choice, j.trial, j.raw, j.timestamp)
        for j in judgments
    ]


def places(result: object) -> list[str]:
    return [d.path for d in result.defects]  # type: ignore[attr-defined]


# ---------------------------------------------------------------- Label Studio


def test_labelstudio_pairwise_good_tasks() -> None:
    result = read_labelstudio(
        DATA / "labelstudio_pairwise.json",
        root_field="pair_id",
        treatment_side_field="tside",
        control="pref",
    )
    assert result.defects == ()
    ts = "2024-05-01T10:0{}:00.000000Z"
    assert bare(result.judgments) == [
        ("root-1", "3", "human", "treatment_first", "treatment", 0, "left", ts.format(0)),
        ("root-1", "5", "human", "treatment_first", "null_partner", 0, "right", ts.format(5)),
        (
            "root-2",
            "3",
            "human",
            "null_first",
            "treatment",
            0,
            "right",
            "2024-05-01T10:10:00.000000Z",
        ),
        (
            "root-2",
            "5",
            "human",
            "null_first",
            "invalid",
            0,
            "was_cancelled",
            "2024-05-01T10:12:00.000000Z",
        ),
    ]
    assert result.judgments[1].origin == Origin("labelstudio_pairwise.json", "$[0].annotations[1]")


def test_labelstudio_choices_fixed_side_and_model_raters() -> None:
    result = read_labelstudio(
        DATA / "labelstudio_choices.json",
        root_field="pair_id",
        treatment_side="right",
        control="label",
        value_map={"A is better": "left", "B is better": "right", "Tie": "tie"},
        rater_kind="model",
        display="ls.json",
    )
    assert result.defects == ()
    assert [
        (j.root_id, j.rater_id, j.rater_kind, j.order, j.choice, j.raw) for j in result.judgments
    ] == [
        ("7", "2", "model", "null_first", "null_partner", "A is better"),
        ("7", "4", "model", "null_first", "tie", "Tie"),
    ]
    assert result.judgments[0].origin == Origin("ls.json", "$[0].annotations[0]")


def test_labelstudio_malformed_tasks_all_refused_with_place() -> None:
    result = read_labelstudio(
        DATA / "labelstudio_bad.json",
        root_field="pair_id",
        treatment_side_field="tside",
        control="pref",
    )
    assert places(result) == [
        "$[0].data.pair_id",
        "$[1].data.tside",
        "$[2].annotations[0].result[0].value.selected",
        "$[2].annotations[1].completed_by",
        "$[2].annotations[2].result",
        "$[3]",
    ]
    assert bare(result.judgments) == [
        ("root-3", "2", "human", "treatment_first", "null_partner", 0, "right", None)
    ]
    message = result.defects[1].message()
    assert message.startswith('labelstudio_bad.json: $[1].data.tside: received "middle"; expected')


def test_labelstudio_broken_json_is_one_defect_with_line(tmp_path: Path) -> None:
    path = tmp_path / "export.json"
    path.write_text('[\n  {"id": 1,\n   "data": }\n]\n', encoding="utf-8")
    result = read_labelstudio(path, root_field="r", treatment_side="left", control="pref")
    assert result.judgments == ()
    assert places(result) == ["line 3"]


# ---------------------------------------------------------------- Argilla

ARGILLA = {
    "question": "preference",
    "root_key": "metadata.pair_id",
    "treatment_side_key": "metadata.treatment_side",
    "side_map": {"a": "left", "b": "right"},
    "value_map": {"A": "left", "B": "right", "Tie": "tie"},
    "include_suggestions": True,
}
ARGILLA_EXPECTED = [
    ("root-1", "u-111", "human", "treatment_first", "treatment", 0, "A", None),
    ("root-1", "u-222", "human", "treatment_first", "null_partner", 0, "B", None),
    ("root-1", "u-333", "human", "treatment_first", "invalid", 0, "discarded", None),
    ("root-1", "judge-gpt", "model", "treatment_first", "null_partner", 0, "B", None),
    ("root-2", "u-111", "human", "null_first", "tie", 0, "Tie", None),
    ("root-2", "judge-gpt", "model", "null_first", "treatment", 0, "B", None),
]


@pytest.mark.parametrize("name", ["argilla_records.json", "argilla_records.jsonl"])
def test_argilla_records_json_and_jsonl(name: str) -> None:
    result = read_argilla(DATA / name, **ARGILLA)  # type: ignore[arg-type]
    assert result.defects == ()
    assert bare(result.judgments) == ARGILLA_EXPECTED
    where = "$[0].responses.preference[1]" if name.endswith(".json") else "line 1"
    assert result.judgments[1].origin == Origin(name, where)


def test_argilla_without_suggestions_only_humans() -> None:
    options = {**ARGILLA, "include_suggestions": False}
    result = read_argilla(DATA / "argilla_records.json", **options)  # type: ignore[arg-type]
    assert {j.rater_kind for j in result.judgments} == {"human"}
    assert len(result.judgments) == 4


def test_argilla_malformed_records_json_paths() -> None:
    result = read_argilla(DATA / "argilla_bad.json", **ARGILLA)  # type: ignore[arg-type]
    assert places(result) == [
        "$[0].metadata.pair_id",
        "$[1].responses.preference[0].value",
        "$[1].responses.preference[1].user_id",
        "$[1].responses.preference[2].status",
        "$[1].suggestions.preference.agent",
        "$[2].metadata.treatment_side",
    ]
    assert result.judgments == ()


def test_argilla_malformed_jsonl_lines() -> None:
    result = read_argilla(DATA / "argilla_bad.jsonl", **ARGILLA)  # type: ignore[arg-type]
    assert places(result) == ["line 1"] + ["line 2"] * 4 + ["line 3", "line 4"]


# ---------------------------------------------------------------- MTurk

MTURK = {
    "root_column": "pair_id",
    "treatment_side_column": "Input.tside",
    "side_map": {"A": "left", "B": "right"},
    "answer_column": "pref",
    "value_map": {"A": "left", "B": "right", "same": "tie"},
}


def test_mturk_batch_results() -> None:
    result = read_mturk(DATA / "mturk_batch.csv", **MTURK)  # type: ignore[arg-type]
    assert result.defects == ()
    ts = "Tue Jan 02 10:0{} PST 2024"
    assert bare(result.judgments) == [
        ("root-1", "A1WORKER", "human", "treatment_first", "treatment", 0, "A", ts.format("0:00")),
        (
            "root-1",
            "A2WORKER",
            "human",
            "treatment_first",
            "null_partner",
            0,
            "B",
            ts.format("1:00"),
        ),
        ("root-2", "A1WORKER", "human", "null_first", "invalid", 0, "A", ts.format("3:00")),
        ("root-2", "A3WORKER", "human", "null_first", "tie", 0, "same", ts.format("4:00")),
    ]
    # a row with a quoted newline starts on line 4 and the next one on line 6
    assert [j.origin.where for j in result.judgments if j.origin] == [
        "line 2",
        "line 3",
        "line 4",
        "line 6",
    ]


def test_mturk_malformed_rows_refused_with_physical_line() -> None:
    result = read_mturk(DATA / "mturk_bad.csv", **MTURK)  # type: ignore[arg-type]
    assert places(result) == ["line 2", "line 3", "line 4", "line 4", "line 5", "line 8"]
    assert [j.origin.where for j in result.judgments if j.origin] == ["line 6"]
    assert "AssignmentStatus" in result.defects[2].expected
    assert "Input.tside" in result.defects[3].expected


def test_mturk_missing_columns_refused_on_header(tmp_path: Path) -> None:
    path = tmp_path / "batch.csv"
    path.write_text("HITId,WorkerId,Answer.pref\nH1,W1,A\n", encoding="utf-8")
    result = read_mturk(path, **MTURK)  # type: ignore[arg-type]
    assert result.judgments == ()
    assert places(result) == ["line 1"]
    assert "Input.pair_id" in result.defects[0].received


def test_defects_capped_with_count_of_the_rest(tmp_path: Path) -> None:
    with (DATA / "mturk_batch.csv").open(newline="") as handle:
        rows = list(csv.reader(handle))
    answer = rows[0].index("Answer.pref")
    bad = [list(rows[1]) for _ in range(60)]
    for row in bad:
        row[answer] = "??"
    path = tmp_path / "big.csv"
    with path.open("w", newline="") as handle:
        csv.writer(handle).writerows([rows[0], *bad])
    result = read_mturk(path, **MTURK)  # type: ignore[arg-type]
    assert len(result.defects) == 51
    assert result.defects[49].path == "line 51"
    # the summary as cap_defects words it, for every importer alike
    more = Defect("big.csv", "(more)", "10 more defects not listed", "a file without defects")
    assert result.defects[50] == more


# ---------------------------------------------------------------- importer arguments


def test_arguments_refused() -> None:
    path = DATA / "mturk_batch.csv"
    with pytest.raises(InputError, match="treatment_side"):
        read_mturk(path, root_column="a", answer_column="b", value_map={"A": "left"})
    with pytest.raises(InputError, match="treatment_side"):
        read_mturk(
            path,
            root_column="a",
            answer_column="b",
            value_map={"A": "left"},
            treatment_side_column="s",
            treatment_side="left",
        )
    with pytest.raises(InputError, match="value_map"):
        read_mturk(
            path,
            root_column="a",
            answer_column="b",
            value_map={"A": "treatment"},
            treatment_side="left",
        )
    with pytest.raises(InputError, match="rater_kind"):
        read_labelstudio(
            path, root_field="a", control="c", treatment_side="left", rater_kind="crowd"
        )
    with pytest.raises(InputError, match="side_map"):
        read_argilla(
            path,
            question="q",
            root_key="id",
            value_map={"A": "left"},
            treatment_side_key="metadata.s",
            side_map={"a": "top"},
        )


def test_judgments_are_judgments() -> None:
    result = read_argilla(DATA / "argilla_records.json", **ARGILLA)  # type: ignore[arg-type]
    assert all(isinstance(j, Judgment) for j in result.judgments)


def test_every_importer_returns_the_table_shape() -> None:
    """One result shape for all importers: a JudgmentTable, its records, the defects."""
    results = [
        read_argilla(DATA / "argilla_records.json", **ARGILLA),  # type: ignore[arg-type]
        read_labelstudio(
            DATA / "labelstudio_pairwise.json",
            root_field="pair_id",
            treatment_side_field="tside",
            control="pref",
        ),
        read_mturk(DATA / "mturk_batch.csv", **MTURK),  # type: ignore[arg-type]
    ]
    for result in results:
        assert isinstance(result, ImportResult)
        assert isinstance(result.table, JudgmentTable)
        assert len(result.table) == len(result.judgments) > 0
        # the records survive the columnar form: values and origins (JSON paths, lines) alike
        again = JudgmentTable.from_judgments(result.judgments).judgments()
        assert again == result.judgments
        assert all(j.origin is not None for j in result.judgments)
    empty = read_mturk(DATA / "absent.csv", **MTURK)  # type: ignore[arg-type]
    assert len(empty.table) == 0 and empty.judgments == () and len(empty.defects) == 1


# ---------------------------------------------------------------- issue 22: nothing lost silently


def _argilla_file(tmp_path: Path, records: list[dict[str, object]]) -> Path:
    p = tmp_path / "argilla.json"
    p.write_text(json.dumps(records))
    return p


def _argilla_record(root: str, responses: object = None) -> dict[str, object]:
    record: dict[str, object] = {"metadata": {"pair_id": root, "treatment_side": "a"}}
    if responses is not None:
        record["responses"] = responses
    return record


ANSWERED = {"preference": [{"value": "A", "user_id": "u1", "status": "submitted"}]}


def test_argilla_question_matching_nothing_is_refused_listing_the_questions(
    tmp_path: Path,
) -> None:
    """Issue 22 row 9: a typo in ``question`` dropped every human judgment, no defect."""
    p = _argilla_file(tmp_path, [_argilla_record("r1", ANSWERED), _argilla_record("r2", ANSWERED)])
    result = read_argilla(p, **{**ARGILLA, "question": "preferense"})  # type: ignore[arg-type]
    assert [(d.path, d.received) for d in result.defects] == [("$", "preferense")]
    assert "questions it holds: preference" in result.defects[0].expected


def test_argilla_without_any_responses_is_refused(tmp_path: Path) -> None:
    """Issue 22 row 9: records without ``responses`` gave no judgment and no defect."""
    p = _argilla_file(tmp_path, [_argilla_record("r1"), _argilla_record("r2", {})])
    result = read_argilla(p, **ARGILLA)  # type: ignore[arg-type]
    assert [d.path for d in result.defects] == ["$"]
    assert len(result.judgments) == 0


def test_argilla_unanswered_records_are_counted_in_the_notes(tmp_path: Path) -> None:
    records = [_argilla_record("r1", ANSWERED), _argilla_record("r2"), _argilla_record("r3", {})]
    result = read_argilla(_argilla_file(tmp_path, records), **ARGILLA)  # type: ignore[arg-type]
    assert result.defects == ()
    assert len(result.judgments) == 1
    assert result.notes == ("2 of 3 records have no response to 'preference' and give no judgment",)


def test_labelstudio_control_matching_nothing_is_named_once_listing_the_controls() -> None:
    """Issue 22 row 9: the configured control is refused by name, with the controls present."""
    options = {"root_field": "pair_id", "treatment_side_field": "tside", "control": "prefs"}
    result = read_labelstudio(DATA / "labelstudio_pairwise.json", **options)  # type: ignore[arg-type]
    assert result.defects[0].path == "$" and result.defects[0].received == "prefs"
    assert "controls it holds: pref" in result.defects[0].expected


def _labelstudio_file(tmp_path: Path, annotated: list[bool]) -> Path:
    """A Label Studio export of one task per flag, annotated (one ``pref`` choice) or not."""
    answer = {"id": 1, "completed_by": 3, "was_cancelled": False}
    answer["result"] = [{"from_name": "pref", "type": "pairwise", "value": {"selected": "left"}}]
    tasks = [
        {"id": i, "data": {"pair_id": f"r{i}"}, "annotations": [answer] if flag else []}
        for i, flag in enumerate(annotated)
    ]
    p = tmp_path / "labelstudio.json"
    p.write_text(json.dumps(tasks))
    return p


LABELSTUDIO = {"root_field": "pair_id", "treatment_side": "left", "control": "pref"}


def test_labelstudio_export_without_any_annotation_is_refused(tmp_path: Path) -> None:
    """Issue 22 row 9: tasks exported before anyone annotated gave no judgment and no defect."""
    p = _labelstudio_file(tmp_path, [False, False, False])
    result = read_labelstudio(p, **LABELSTUDIO)  # type: ignore[arg-type]
    assert [(d.path, d.received) for d in result.defects] == [
        ("$", "3 tasks, none with an annotation")
    ]
    assert "at least one annotated task" in result.defects[0].expected
    assert len(result.judgments) == 0


def test_labelstudio_unannotated_tasks_are_counted_in_the_notes(tmp_path: Path) -> None:
    p = _labelstudio_file(tmp_path, [True, False, True, False])
    result = read_labelstudio(p, **LABELSTUDIO)  # type: ignore[arg-type]
    assert result.defects == ()
    assert len(result.judgments) == 2
    assert result.notes == ("2 of 4 tasks have no annotation and give no judgment",)


def test_mturk_header_naming_a_column_twice_is_refused(tmp_path: Path) -> None:
    """Issue 22 row 15: the first of two ``Answer.pref`` columns was read silently."""
    rows = list(csv.reader((DATA / "mturk_batch.csv").open(newline="")))
    rows[0].append("Answer.pref")
    for row in rows[1:]:
        row.append("B")
    p = tmp_path / "batch.csv"
    with p.open("w", newline="") as fh:
        csv.writer(fh).writerows(rows)
    result = read_mturk(p, **MTURK)  # type: ignore[arg-type]
    assert [(d.path, d.received) for d in result.defects] == [("line 1", ["Answer.pref"])]
    assert len(result.judgments) == 0


def test_mturk_broken_quoting_is_a_defect_at_its_line(tmp_path: Path) -> None:
    """Text after a closing quote was joined to the field silently; it is now a defect at the
    row's first line, and the rows after it are read."""
    lines = (DATA / "mturk_batch.csv").read_text(encoding="utf-8").splitlines()
    lines[2] = lines[2].replace('"B","",""', '"B"x,"",""')  # line 3: Answer.pref "B"x
    p = tmp_path / "batch.csv"
    p.write_text("\n".join(lines) + "\n", encoding="utf-8")
    result = read_mturk(p, **MTURK)  # type: ignore[arg-type]
    assert places(result) == ["line 3"]
    assert "every quote closed" in result.defects[0].expected
    assert [j.origin.where for j in result.judgments if j.origin] == ["line 2", "line 4", "line 6"]


def test_jsonl_lines_end_only_at_line_ends(tmp_path: Path) -> None:
    """A JSONL record holding U+2028 or NEL as they are (valid in a JSON string) was cut in two
    there (``str.splitlines``): its record refused, the lines after it misnumbered."""
    first = _argilla_record("r1", ANSWERED) | {"fields": {"text_a": "one\u2028two\x85three"}}
    second = json.dumps(_argilla_record("r2", ANSWERED))
    lines = [json.dumps(first, ensure_ascii=False), "{", second]
    p = tmp_path / "argilla.jsonl"
    p.write_text("\n".join(lines) + "\n", encoding="utf-8")
    result = read_argilla(p, **ARGILLA)  # type: ignore[arg-type]
    assert places(result) == ["line 2"]
    assert [j.origin.where for j in result.judgments if j.origin] == ["line 1", "line 3"]


@pytest.mark.parametrize("root", [" root-1", "root-1\n", "root\x1b1"])
def test_a_root_id_with_spaces_or_control_characters_is_refused(tmp_path: Path, root: str) -> None:
    """Issue 22 row 6: such ids were read as given; the run then failed its own self-audit."""
    p = _argilla_file(tmp_path, [_argilla_record(root, ANSWERED), _argilla_record("r2", ANSWERED)])
    result = read_argilla(p, **ARGILLA)  # type: ignore[arg-type]
    assert [(d.path, d.received) for d in result.defects] == [("$[0].metadata.pair_id", root)]
    assert [j.root_id for j in result.judgments] == ["r2"]
