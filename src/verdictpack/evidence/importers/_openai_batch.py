"""OpenAI Batch API output files: the judge's answers, one JSON line per request.

A batch's output file (``client.files.content(batch.output_file_id)``, also the error file) holds
one line per request of the batch's input file::

    {"id": "batch_req_...", "custom_id": "root-17|null_first|0",
     "response": {"status_code": 200, "request_id": "...",
                  "body": {"object": "chat.completion", "model": "gpt-4o-mini-2024-07-18",
                           "choices": [{"index": 0, "message": {"role": "assistant",
                                        "content": "B"}, "logprobs": null,
                                        "finish_reason": "stop"}], "usage": {...}}},
     "error": null}

(the shape of the Batch API's output as documented for ``/v1/chat/completions`` requests, 2024
onwards). The batch says nothing of which text was shown first: the study's requests named
that in their ``custom_id``, and ``custom_id`` (a regular expression) reads it back with named
groups: ``root`` (the root id, required), ``order`` (``treatment_first`` / ``null_first``,
required; other spellings through ``order_map``), and optionally ``trial`` (an integer) and
``judge`` (the rater id; else ``judge`` given here, else the body's ``model``; a failed
request, which has no body, takes the batch's one model).

The answer is read by the live judges' extractor (:func:`~verdictpack.evidence.live._extract.
extract_choice`: the answer token with its logprobs where the request asked for them, a
structured ``{"choice": ...}`` object, or the text through the study's :class:`TextParser`),
so a batch of free-text verdicts and a live run read the same. A request that failed (an
``error``, a status other than 200) or whose answer no rule reads is an ``invalid`` judgment:
counted, never dropped. Every defect is placed at ``line N``.
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from verdictpack._errors import InputError
from verdictpack.evidence._choice import TextParser, canonical_choice
from verdictpack.evidence._table import ImportResult, Judgment, Origin
from verdictpack.evidence.importers._common import (
    Defects,
    check_order_map,
    display_name,
    load_json_records,
)
from verdictpack.evidence.live._extract import extract_choice, message_text
from verdictpack.stimuli._pairs import root_id_problem

__all__ = ["compile_custom_id", "read_openai_batch"]


def compile_custom_id(pattern: str) -> re.Pattern[str]:
    """The ``custom_id`` pattern compiled, with its ``root`` and ``order`` groups; else
    InputError naming ``custom_id``."""
    try:
        rx = re.compile(pattern)
    except (re.error, TypeError) as exc:
        raise InputError("custom_id", f"a regular expression ({exc})", pattern) from None
    missing = [g for g in ("root", "order") if g not in rx.groupindex]
    if missing:
        raise InputError(
            "custom_id",
            "a regular expression with the groups (?P<root>...) and (?P<order>...)",
            pattern,
        )
    return rx


def read_openai_batch(
    path: Path,
    *,
    custom_id: str,
    parser: TextParser,
    order_map: Mapping[str, str] | None = None,
    judge: str | None = None,
    display: str | None = None,
    data: bytes | None = None,
) -> ImportResult:
    """Read an OpenAI Batch output JSONL into canonical model judgments (module docstring)."""
    rx = compile_custom_id(custom_id)
    orders = check_order_map(order_map)
    if judge is not None and (not isinstance(judge, str) or not judge.strip()):
        raise InputError("judge", "a rater id (a non-empty string)", judge)
    path = Path(path)
    defects = Defects(display_name(path, display))
    judgments: list[Judgment] = []
    for where, record in load_json_records(path, defects, data):
        made = _judgment(record, where, rx, orders, parser, judge, defects)
        if made is not None:
            judgments.append(made)
    # a failed request carries no body: its judge is the batch's one model, when it has one
    models = {j.rater_id for j in judgments if j.rater_id}
    out = []
    for j in judgments:
        if j.rater_id:
            out.append(j)
        elif len(models) == 1:
            out.append(dataclasses.replace(j, rater_id=next(iter(models))))
        else:
            where = j.origin.where if j.origin is not None else "(file)"
            defects.add(where, sorted(models), "a judge: a (?P<judge>...) group, or `judge`")
    return ImportResult.from_judgments(out, defects.result())


def _judgment(
    record: Any,
    where: str,
    rx: re.Pattern[str],
    orders: Mapping[str, str],
    parser: TextParser,
    judge: str | None,
    defects: Defects,
) -> Judgment | None:
    if not isinstance(record, Mapping):
        defects.add(where, type(record).__name__, "a batch output record (a JSON object)")
        return None
    cid = record.get("custom_id")
    m = rx.fullmatch(cid) if isinstance(cid, str) else None
    if m is None:
        defects.add(where, cid, f"a custom_id matching {rx.pattern!r}")
        return None
    root, order = m.group("root"), orders.get(m.group("order"))
    problem = root_id_problem(root) if root else "a non-empty root id"
    if problem is not None:
        defects.add(where, root, f"custom_id's root: {problem}")
        return None
    if order is None:
        defects.add(where, m.group("order"), f"custom_id's order: one of {sorted(orders)}")
        return None
    trial = 0
    if "trial" in rx.groupindex and m.group("trial") is not None:
        text = m.group("trial")
        if not text.isdigit() or len(text) > 9:
            defects.add(where, text, "custom_id's trial: a non-negative integer")
            return None
        trial = int(text)
    response = record.get("response")
    body = response.get("body") if isinstance(response, Mapping) else None
    rater = m.group("judge") if "judge" in rx.groupindex and m.group("judge") else judge
    if rater is None and isinstance(body, Mapping) and isinstance(body.get("model"), str):
        rater = body["model"]
    status = response.get("status_code") if isinstance(response, Mapping) else None
    raw: str | None
    if record.get("error") is not None or status != 200 or not isinstance(body, Mapping):
        choice, p_t = "invalid", None
        error = record.get("error")
        raw = str(error.get("message") if isinstance(error, Mapping) else status)[:200]
    else:
        extraction = extract_choice(body, parser.labels, parser)
        choice, p_t = canonical_choice(extraction, order)
        raw = message_text(body)
    return Judgment(
        root_id=root,
        rater_id=str(rater or ""),
        rater_kind="model",
        order=order,
        choice=choice,
        trial=trial,
        raw=raw,
        origin=Origin(defects.file, where),
        p_treatment=p_t,
    )
