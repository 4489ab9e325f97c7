"""Inspect AI evaluation logs: a judge's answers, one sample per judgment.

Both log formats Inspect writes (``inspect_ai`` 0.3.x, log format version 2) are read:

* ``.json``: one object ``{"version": 2, "status": ..., "eval": {"model": ...}, "samples": [...]}``;
* ``.eval``: a ZIP archive holding ``header.json`` (or, for a run still going,
  ``_journal/start.json``) with the ``eval`` block, and one ``samples/<id>_epoch_<n>.json`` per
  sample.

A sample is ``{"id": ..., "epoch": 1, "input": ..., "metadata": {...}, "output": {"model": ...,
"choices": [{"message": {"role": "assistant", "content": ...}}], "completion": "..."},
"scores": {"<scorer>": {"value": ..., "answer": ..., "explanation": ...}}, "error": ...}``.
Where the judge's answer is (``answer``): ``"completion"`` (the sample's ``output.completion``,
else its first choice's text) or ``"score:<scorer>"`` (that score's ``answer``). It is read
by the live judges' :class:`~verdictpack.evidence._choice.TextParser`, the same rules
for both. The root id and the presentation order are read at dotted keys of the sample
(``root_key``, e.g. ``"metadata.pair_id"`` or ``"id"``; ``order_key`` with ``order_map`` for
other spellings than ``treatment_first`` / ``null_first``). The rater id is ``judge``, else
the eval's ``model``; the trial is ``epoch - 1``. A sample with an ``error``, or whose answer no
rule reads, is an ``invalid`` judgment: counted, never dropped. Places: ``$.samples[i]`` (a
``.json`` log) or ``samples/<name>`` (a ``.eval`` archive).
"""

from __future__ import annotations

import io
import json
import zipfile
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

from verdictpack._errors import InputError, not_utf8
from verdictpack.config._data_json import DataJSONError, load_data_json
from verdictpack.evidence._choice import TextParser, canonical_choice
from verdictpack.evidence._table import ImportResult, Judgment, Origin
from verdictpack.evidence.importers._common import Defects, check_order_map, display_name, lookup
from verdictpack.evidence.live._extract import message_text
from verdictpack.stimuli._pairs import root_id_problem

__all__ = ["read_inspect"]

_MAX_MEMBERS = 1_000_000


def read_inspect(
    path: Path,
    *,
    root_key: str,
    order_key: str,
    parser: TextParser,
    answer: str = "completion",
    order_map: Mapping[str, str] | None = None,
    judge: str | None = None,
    display: str | None = None,
    data: bytes | None = None,
) -> ImportResult:
    """Read an Inspect AI log (``.json`` or ``.eval``) into canonical model judgments."""
    if answer != "completion" and not (answer.startswith("score:") and len(answer) > 6):
        raise InputError("answer", "'completion' or 'score:<scorer name>'", answer)
    orders = check_order_map(order_map)
    path = Path(path)
    defects = Defects(display_name(path, display))
    judgments: list[Judgment] = []
    try:
        raw = path.read_bytes() if data is None else data
    except OSError as exc:
        defects.add("(file)", str(exc), "a readable Inspect log (.json or .eval)")
        return ImportResult.from_judgments((), defects.result())
    model, samples = _samples(raw, defects)
    rater = judge if judge is not None else model
    for where, sample in samples:
        if not rater:
            defects.add(where, None, "a judge: `judge`, or the log's eval.model")
            break
        made = _judgment(sample, where, root_key, order_key, orders, answer, parser, defects)
        if made is not None:
            judgments.append(Judgment(rater_id=rater, rater_kind="model", **made))
    return ImportResult.from_judgments(judgments, defects.result())


def _parse(text: bytes, where: str, defects: Defects) -> Any:
    try:
        return load_data_json(text.decode("utf-8-sig"))
    except UnicodeDecodeError:
        bad = not_utf8(defects.file, text)
        defects.add(
            bad.path if where == "$" else f"{where}: {bad.path}", bad.received, bad.expected
        )
    except json.JSONDecodeError as exc:
        defects.add(where, f"line {exc.lineno}: {exc.msg}", "valid JSON")
    except DataJSONError as exc:
        defects.add(where, exc.received, exc.expected)
    return None


def _samples(raw: bytes, defects: Defects) -> tuple[str | None, Iterator[tuple[str, Any]]]:
    """The eval's model and the samples, in file order, with their places."""
    if raw[:4] == b"PK\x03\x04":
        return _eval_archive(raw, defects)
    log = _parse(raw, "$", defects)
    if log is None:
        return None, iter(())
    if not isinstance(log, Mapping) or not isinstance(log.get("samples"), list):
        defects.add("$", type(log).__name__, "an Inspect log object with a list of samples")
        return None, iter(())
    model = _model(log)
    return model, ((f"$.samples[{i}]", s) for i, s in enumerate(log["samples"]))


def _model(block: Any) -> str | None:
    found, model = lookup(block, "eval.model") if isinstance(block, Mapping) else (False, None)
    return model if found and isinstance(model, str) and model else None


def _eval_archive(raw: bytes, defects: Defects) -> tuple[str | None, Iterator[tuple[str, Any]]]:
    try:
        archive = zipfile.ZipFile(io.BytesIO(raw))
        names = archive.namelist()
    except (zipfile.BadZipFile, OSError) as exc:
        defects.add("(file)", str(exc), "an Inspect .eval archive (ZIP)")
        return None, iter(())
    if len(names) > _MAX_MEMBERS:
        defects.add("(file)", f"{len(names)} members", f"at most {_MAX_MEMBERS:,} members")
        return None, iter(())
    model = None
    for head in ("header.json", "_journal/start.json"):
        if head in names:
            model = _model(_parse(archive.read(head), head, defects))
            break
    samples = sorted(
        (n for n in names if n.startswith("samples/") and n.endswith(".json")), key=_sample_key
    )
    if not samples:
        defects.add("(file)", names[:5], "an archive with samples/<id>_epoch_<n>.json members")

    def each() -> Iterator[tuple[str, Any]]:
        for name in samples:
            sample = _parse(archive.read(name), name, defects)
            if sample is not None:
                yield name, sample

    return model, each()


def _sample_key(name: str) -> tuple[str, int, str]:
    stem = name[len("samples/") : -len(".json")]
    sid, _, epoch = stem.rpartition("_epoch_")
    return (sid, int(epoch), name) if epoch.isdigit() else (stem, 0, name)


def _judgment(
    sample: Any,
    where: str,
    root_key: str,
    order_key: str,
    orders: Mapping[str, str],
    answer: str,
    parser: TextParser,
    defects: Defects,
) -> dict[str, Any] | None:
    """The sample's judgment fields but the rater's, or None with a defect."""
    if not isinstance(sample, Mapping):
        defects.add(where, type(sample).__name__, "a sample (a JSON object)")
        return None
    found, root = lookup(sample, root_key)
    if not found or isinstance(root, bool) or not isinstance(root, (str, int)) or root == "":
        defects.add(f"{where}.{root_key}", root if found else "(missing)", "a root id")
        return None
    problem = root_id_problem(str(root))
    if problem is not None:
        defects.add(f"{where}.{root_key}", root, problem)
        return None
    found, shown = lookup(sample, order_key)
    order = orders.get(shown) if isinstance(shown, str) else None
    if order is None:
        defects.add(
            f"{where}.{order_key}", shown if found else "(missing)", f"one of {sorted(orders)}"
        )
        return None
    epoch = sample.get("epoch", 1)
    if isinstance(epoch, bool) or not isinstance(epoch, int) or epoch < 1:
        defects.add(f"{where}.epoch", epoch, "an epoch number >= 1")
        return None
    text = _answer_text(sample, answer)
    if sample.get("error"):
        choice, p_t = "invalid", None
    else:
        choice, p_t = canonical_choice(parser.read(text), order)
    return {
        "root_id": str(root),
        "order": order,
        "choice": choice,
        "trial": epoch - 1,
        "raw": text,
        "origin": Origin(defects.file, where),
        "p_treatment": p_t,
    }


def _answer_text(sample: Mapping[str, Any], answer: str) -> str | None:
    if answer.startswith("score:"):
        scores = sample.get("scores")
        score = scores.get(answer[6:]) if isinstance(scores, Mapping) else None
        value = score.get("answer") if isinstance(score, Mapping) else None
        return value if isinstance(value, str) else None
    output = sample.get("output")
    if not isinstance(output, Mapping):
        return None
    completion = output.get("completion")
    if isinstance(completion, str) and completion:
        return completion
    return message_text(output)
