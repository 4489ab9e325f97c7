"""Argilla 2.x records exported to JSON or JSONL (``dataset.records.to_list(flatten=False)``
written with ``json.dump``, or ``dataset.records.to_json(path)``).

One record::

    {"id": "r1", "status": "completed",
     "fields": {"response_a": "...", "response_b": "..."},
     "metadata": {"pair_id": "root-1", "treatment_side": "a"},
     "responses": {"preference": [{"value": "A", "user_id": "7f3c...", "status": "submitted"}]},
     "suggestions": {"preference": {"value": "B", "score": 0.9, "agent": "gpt-judge"}}}

Responses become human judgments, rater id the ``user_id``; a response whose status is
``discarded`` or ``draft`` becomes ``invalid`` (counted, never dropped). A record with no
response to the question (no ``responses``, or none for this question: nobody answered it yet)
gives no judgment and is counted in the result's notes; a ``question`` that no record's
responses (or suggestions) name is refused, listing the questions the export holds, and so is an
export whose records give no judgment at all. Suggestions
(model-produced) become model judgments with ``agent`` as rater id when
``include_suggestions`` is set. Places are JSON paths (``$[3].responses.preference[0].value``)
for a JSON list and ``line N`` for JSONL.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from verdictpack.evidence._table import ImportResult, Judgment, Origin
from verdictpack.evidence.importers._common import (
    Defects,
    at,
    check_sides,
    check_value_map,
    display_name,
    load_json_records,
    map_value,
    resolve,
    root_and_side,
)

__all__ = ["read_argilla"]

_STATUSES = ("submitted", "discarded", "draft")


def read_argilla(
    path: Path,
    *,
    question: str,
    root_key: str,
    value_map: Mapping[Any, str],
    treatment_side_key: str | None = None,
    treatment_side: str | None = None,
    side_map: Mapping[str, str] | None = None,
    include_suggestions: bool = False,
    display: str | None = None,
    data: bytes | None = None,
) -> ImportResult:
    """Read an Argilla 2.x export into canonical judgments.

    ``root_key`` and ``treatment_side_key`` are dotted keys of the record: ``"id"``,
    ``"metadata.pair_id"``, ``"fields.side"``. ``value_map`` maps the question's answer values
    (label strings, ratings) to left/right/tie/invalid, ``left`` being the side shown first.
    ``data``, when given, is the file's bytes as already read, parsed instead of ``path``.
    """
    path = Path(path)
    sides = check_sides(treatment_side_key, treatment_side, side_map, "key")
    values = check_value_map("value_map", value_map, required=True)
    defects = Defects(display_name(path, display))
    judgments: list[Judgment] = []
    questions: set[str] = set()  # every question name a record's responses or suggestions hold
    records = unanswered = 0
    for base, record in load_json_records(path, defects, data):
        if not isinstance(record, Mapping):
            defects.add(base, type(record).__name__, "a record object")
            continue
        records += 1
        for key in ("responses", "suggestions"):
            named = record.get(key)
            if isinstance(named, Mapping):
                questions.update(str(q) for q in named)
        answered = record.get("responses")
        if not isinstance(answered, Mapping) or not answered.get(question):
            unanswered += 1
        placed = root_and_side(
            record, base, "", root_key, treatment_side_key, treatment_side, sides, defects
        )
        if placed is None:
            continue
        root, side = placed
        context = _Context(root, side, values, defects)
        judgments.extend(_responses(record, base, question, context))
        if include_suggestions:
            judgments.extend(_suggestions(record, base, question, context))
    notes: list[str] = []
    if records and question not in questions:
        names = ", ".join(sorted(questions)) if questions else "none: no record has responses"
        defects.add("$", question, f"a question of the export (questions it holds: {names})")
    elif records and unanswered == records:
        defects.add(
            "$",
            f"{records} records, none with a response to {question!r}",
            "at least one record answered (every human judgment would be lost)",
        )
    elif unanswered:
        notes.append(
            f"{unanswered} of {records} records have no response to {question!r} and give no "
            "judgment"
        )
    return ImportResult.from_judgments(judgments, defects.result(), notes)


class _Context:
    def __init__(self, root: str, side: str, values: Mapping[Any, str], defects: Defects) -> None:
        self.root = root
        self.side = side
        self.values = values
        self.defects = defects

    def judgment(self, value: Any, where: str, place: str, **extra: Any) -> Judgment | None:
        position = map_value(self.values, value)
        if position is None:
            self.defects.add(where, value, f"one of {sorted(map(str, self.values))} (value_map)")
            return None
        order, choice = resolve(position, self.side)
        return Judgment(
            root_id=self.root,
            order=order,
            choice=choice,
            raw=str(value),
            origin=Origin(self.defects.file, place),
            **extra,
        )


def _responses(
    record: Mapping[str, Any], base: str, question: str, ctx: _Context
) -> list[Judgment]:
    responses = record.get("responses")
    if responses is None:
        return []
    place = at(base, ".responses")
    if not isinstance(responses, Mapping):
        ctx.defects.add(place, responses, "an object of question name -> list of responses")
        return []
    answers = responses.get(question, [])
    place = at(base, f".responses.{question}")
    if not isinstance(answers, list):
        ctx.defects.add(place, answers, "a list of responses")
        return []
    out: list[Judgment] = []
    for i, answer in enumerate(answers):
        here = at(base, f".responses.{question}[{i}]")
        if not isinstance(answer, Mapping):
            ctx.defects.add(here, answer, "a response object with value and user_id")
            continue
        user = answer.get("user_id")
        if not isinstance(user, str) or not user:
            ctx.defects.add(
                at(here, ".user_id"), answer.get("user_id", "(missing)"), "the responding user's id"
            )
            continue
        status = answer.get("status", "submitted")
        if status not in _STATUSES:
            ctx.defects.add(at(here, ".status"), status, f"one of {list(_STATUSES)}")
            continue
        if status != "submitted":
            order, choice = resolve("invalid", ctx.side)
            out.append(
                Judgment(
                    root_id=ctx.root,
                    rater_id=user,
                    rater_kind="human",
                    order=order,
                    choice=choice,
                    raw=status,
                    origin=Origin(ctx.defects.file, here),
                )
            )
            continue
        made = ctx.judgment(
            answer.get("value", "(missing)"),
            at(here, ".value"),
            here,
            rater_id=user,
            rater_kind="human",
        )
        if made is not None:
            out.append(made)
    return out


def _suggestions(
    record: Mapping[str, Any], base: str, question: str, ctx: _Context
) -> list[Judgment]:
    suggestions = record.get("suggestions")
    if suggestions is None:
        return []
    if not isinstance(suggestions, Mapping):
        ctx.defects.add(
            at(base, ".suggestions"), suggestions, "an object of question name -> suggestion"
        )
        return []
    found = suggestions.get(question)
    if found is None:
        return []
    items = [(at(base, f".suggestions.{question}"), found)]
    if isinstance(found, list):
        items = [(at(base, f".suggestions.{question}[{i}]"), s) for i, s in enumerate(found)]
    out: list[Judgment] = []
    for here, suggestion in items:
        if not isinstance(suggestion, Mapping):
            ctx.defects.add(here, suggestion, "a suggestion object with value and agent")
            continue
        agent = suggestion.get("agent")
        if not isinstance(agent, str) or not agent:
            ctx.defects.add(
                at(here, ".agent"),
                suggestion.get("agent", "(missing)"),
                "the producing model's name (agent)",
            )
            continue
        made = ctx.judgment(
            suggestion.get("value", "(missing)"),
            at(here, ".value"),
            here,
            rater_id=agent,
            rater_kind="model",
        )
        if made is not None:
            out.append(made)
    return out
