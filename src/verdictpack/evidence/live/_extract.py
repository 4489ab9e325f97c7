"""The judge's choice, read from a chat-completion response in a declared order of preference.

:func:`extract_choice` tries four paths, in this order, and reports which one answered:

1. ``logprobs`` — the answer the judge gave (the sampled answer token's label: the position is
   always the answer, never the more probable label) with the probabilities of the two labels
   at that token recorded beside it: ``p_first = P(label_first) / (P(label_first) +
   P(label_second))``. At temperature 0 the two agree; above it they need not, and the
   observation of a judgment is the answer (the probability is an estimand a study declares
   on its own, never mixed in by default). The answer token is
   the first generated token; when the content is a structured answer (a JSON object, as under
   OpenAI's or Ollama's ``response_format``) it is the token at which the ``"choice"`` value
   starts, found by laying the tokens end to end over the content (the path does not apply when
   they do not spell the content or no token starts exactly at the value). The probability of a
   label is the sum over the listed alternatives at that position whose text, stripped of white
   space and compared case-insensitively, is the label (``" A"``, ``"A"`` and ``"a"`` all count
   for ``A``); the sampled token is counted when the alternatives omit it. The path applies only
   when (a) the sampled answer token is itself a label, (b) the whole text is a valid answer by
   path 2 or 3 (so a refusal that happens to list ``A`` among its first token's alternatives is
   not read as a choice), and (c) both labels are among the alternatives: a label below the
   listed ones has an unknown probability, not zero, so the path falls through rather than
   guess. Both the OpenAI shape (``choices[0].logprobs.content[i].top_logprobs[j] = {token,
   logprob}``, also vLLM's, Ollama's since v0.12.11 and llama.cpp's) and llama.cpp's
   ``post_sampling_probs`` shape (``prob`` and ``top_probs``) are read.
2. ``structured`` — the content is a JSON object ``{"choice": label}`` (extra keys allowed; the
   label compared case-insensitively after stripping white space).
3. ``parser`` — a :class:`TextParser`: the whole trimmed content is exactly one label,
   optionally followed by one period, compared case-insensitively (``"A"``, ``" b "``,
   ``"A."``); then, only where the study declares them, strict patterns in the declared order
   (:data:`PATTERNS` by name, or a regular expression with a group named ``label``): a pattern
   must match the whole trimmed text (``"**A**"``, ``"[[B]]"``, ``"Response A"``, ``"Assistant
   B is better."``), except the ``*_anywhere`` ones, which may occur anywhere but must name one
   answer only (a reasoned verdict ending in ``[[A]]``; ``[[A]]`` and ``[[B]]`` both present is
   no answer). Declared tie words (MT-Bench's ``C``) read as ``tie``. Which rule read the text is
   in ``detail``. Files of free-text verdicts are read by the same parser
   (:meth:`TextParser.read`).
4. otherwise ``invalid`` (path ``none``): no choices, an empty or refused message (OpenAI's
   ``message.refusal``), or any text that is not exactly a label. Nothing is guessed.

Malformed responses (``{}``, missing fields, wrong types) are invalid answers, never exceptions:
the request was made and paid for. Only the labels, which the caller supplies, are validated.

The response shapes were taken from the servers' documentation and source: the OpenAI API spec
(openai/openai-openapi ``openapi.yaml``: ``ChatCompletionTokenLogprob``,
``ChatCompletionResponseMessage.refusal``, ``CompletionUsage``), vLLM's OpenAI-compatible server
(the OpenAI shape), Ollama's openai/openai.go (``ChoiceLogprobs{content: [Logprob]}``, v0.12.11+)
and llama.cpp's tools/server (``completion_token_output::probs_vector_to_json``: ``id``,
``token``, ``bytes``, ``logprob``/``prob``, ``top_logprobs``/``top_probs``; zero probability as
the lowest float rather than ``-inf``).

:func:`canonical_choice` maps a position to the study's vocabulary for a presentation order;
:func:`model_id_of` reads the served model's name.
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping
from typing import Any

from verdictpack._validate import is_real
from verdictpack.evidence._choice import (
    PATHS,
    PATTERNS,
    POSITIONS,
    Extraction,
    TextParser,
    _label_of,
    canonical_choice,
    check_labels,
)
from verdictpack.evidence.live._profiles import STRUCTURED_KEY

__all__ = [
    "PATHS",
    "PATTERNS",
    "POSITIONS",
    "Extraction",
    "TextParser",
    "canonical_choice",
    "extract_choice",
    "message_text",
    "model_id_of",
]


def _content_of(message: Mapping[str, Any]) -> str | None:
    """The message text: a string, or the text parts of a content-part list joined."""
    content = message.get("content")
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        parts = [
            p.get("text")
            for p in content
            if isinstance(p, Mapping) and p.get("type") == "text" and isinstance(p.get("text"), str)
        ]
        if parts and len(parts) == len(content):
            return "".join(parts)  # type: ignore[arg-type]
    return None


def message_text(completion: Mapping[str, Any]) -> str | None:
    """The text of a chat completion's first choice (:func:`_content_of`), or None."""
    choices = completion.get("choices")
    if isinstance(choices, list) and choices and isinstance(choices[0], Mapping):
        message = choices[0].get("message")
        if isinstance(message, Mapping):
            return _content_of(message)
    return None


def _structured(content: str, labels: tuple[str, str]) -> tuple[int | None, str]:
    try:
        data = json.loads(content)
    except ValueError:
        return None, "not JSON"
    if not isinstance(data, dict):
        return None, "JSON but not an object"
    value = data.get(STRUCTURED_KEY)
    if not isinstance(value, str):
        return None, f"JSON object without a string {STRUCTURED_KEY!r}"
    k = _label_of(value, labels)
    if k is None:
        return None, f"{STRUCTURED_KEY!r} is not a label"
    return k, f"{STRUCTURED_KEY!r} = {value!r}"


def _prob(entry: Mapping[str, Any], kind: str) -> float | None:
    """The probability of one token entry; None when absent or not a number."""
    raw: Any = entry.get(kind)
    if not is_real(raw):
        return None
    v = float(raw)
    if kind == "logprob":
        if math.isnan(v) or v > 0.0:
            return None
        return math.exp(v) if math.isfinite(v) else 0.0
    return v if 0.0 <= v <= 1.0 else None


def _answer_index(entries: list[Any], content: str) -> int | None:
    """Index of the answer token: 0, or in a JSON answer the token where the value starts."""
    if not content.lstrip().startswith("{"):
        return 0
    raw = [e.get("token") if isinstance(e, Mapping) else None for e in entries]
    tokens = [t for t in raw if isinstance(t, str)]
    if len(tokens) != len(raw) or "".join(tokens) != content:
        return None
    try:
        data = json.loads(content)
    except ValueError:
        return None
    value = data.get(STRUCTURED_KEY) if isinstance(data, dict) else None
    if not isinstance(value, str):
        return None
    # the value's first character: after the key, the colon and the opening quote
    decoder = json.JSONDecoder()
    pos = content.index("{") + 1
    while True:
        while pos < len(content) and content[pos] in " \t\r\n,":
            pos += 1
        try:
            key, end = decoder.raw_decode(content, pos)
        except ValueError:
            return None
        colon = content.index(":", end) + 1
        while colon < len(content) and content[colon] in " \t\r\n":
            colon += 1
        if key == STRUCTURED_KEY:
            start = colon + 1 if content[colon : colon + 1] == '"' else None
            break
        try:
            _, pos = decoder.raw_decode(content, colon)
        except ValueError:
            return None
    if start is None:
        return None
    offset = 0
    for i, t in enumerate(tokens):
        if offset == start and t:
            return i
        offset += len(t)
        if offset > start:
            return None
    return None


def _from_logprobs(
    choice: Mapping[str, Any], content: str, labels: tuple[str, str]
) -> tuple[Extraction | None, str]:
    lp = choice.get("logprobs")
    entries = lp.get("content") if isinstance(lp, Mapping) else None
    if not isinstance(entries, list) or not entries:
        return None, "no token logprobs"
    idx = _answer_index(entries, content)
    if idx is None or idx >= len(entries) or not isinstance(entries[idx], Mapping):
        return None, "answer token not found among the token logprobs"
    entry = entries[idx]
    token = entry.get("token")
    if not isinstance(token, str) or _label_of(token, labels) is None:
        return None, f"answer token {token!r} is not a label"
    if "top_logprobs" in entry or "logprob" in entry:
        kind, alternatives = "logprob", entry.get("top_logprobs")
    else:
        kind, alternatives = "prob", entry.get("top_probs")
    if not isinstance(alternatives, list):
        alternatives = []
    seen: set[tuple[Any, str]] = set()
    mass = [0.0, 0.0]
    found = [False, False]
    for alt in [*alternatives, entry]:
        if not isinstance(alt, Mapping) or not isinstance(alt.get("token"), str):
            continue
        ident = (alt.get("id"), alt["token"])
        if ident in seen:
            continue
        seen.add(ident)
        k = _label_of(alt["token"], labels)
        p = _prob(alt, kind)
        if k is None or p is None:
            continue
        mass[k] += p
        found[k] = True
    if not all(found):
        missing = [labels[k] for k in (0, 1) if not found[k]]
        return None, "label(s) " + ", ".join(map(repr, missing)) + " not among the top tokens"
    total = mass[0] + mass[1]
    if not total > 0.0:
        return None, "both labels have probability 0"
    p_first = min(1.0, max(0.0, mass[0] / total))
    position = "first" if _label_of(token, labels) == 0 else "second"  # the answer given
    detail = f"P({labels[0]})={mass[0]:.6g}, P({labels[1]})={mass[1]:.6g} at token {idx}"
    return Extraction(position, "logprobs", p_first, detail), ""


def extract_choice(
    response: Mapping[str, Any], labels: tuple[str, str], parser: TextParser | None = None
) -> Extraction:
    """The choice in a chat-completion ``response`` (module docstring: paths and their order);
    ``parser`` reads the text (default: the exact label only)."""
    labels = check_labels(labels)
    reader = TextParser(labels) if parser is None else parser
    if not isinstance(response, Mapping):
        return Extraction("invalid", "none", None, "response is not a JSON object")
    choices = response.get("choices")
    if not isinstance(choices, list) or not choices or not isinstance(choices[0], Mapping):
        return Extraction("invalid", "none", None, "no choices")
    choice = choices[0]
    message = choice.get("message")
    if not isinstance(message, Mapping):
        return Extraction("invalid", "none", None, "no message")
    refusal = message.get("refusal")
    if isinstance(refusal, str) and refusal.strip():
        return Extraction("invalid", "none", None, "refusal: " + refusal.strip()[:80])
    content = _content_of(message)
    if content is None or not content.strip():
        return Extraction("invalid", "none", None, "empty message")

    k_struct, why_struct = (None, "not JSON")
    if content.lstrip().startswith("{"):
        k_struct, why_struct = _structured(content.strip(), labels)
    parsed = None if k_struct is not None else reader.read(content)
    k_parse = None
    if parsed is not None and parsed.position in ("first", "second"):
        k_parse = POSITIONS.index(parsed.position)
    notes = []
    if k_struct is not None or k_parse is not None:
        got, why = _from_logprobs(choice, content, labels)
        if got is not None:
            return got
        notes.append(why)
    if k_struct is not None:
        pos = POSITIONS[k_struct]
        return Extraction(pos, "structured", None, "; ".join([why_struct, *notes]))
    if parsed is not None and parsed.path == "parser":
        return Extraction(parsed.position, "parser", None, "; ".join([parsed.detail, *notes]))
    return Extraction("invalid", "none", None, f"not a label: {content.strip()[:80]!r}")


def model_id_of(response: Mapping[str, Any]) -> str | None:
    """The served model's name (``response["model"]``), or None when absent or empty."""
    model = response.get("model") if isinstance(response, Mapping) else None
    return model if isinstance(model, str) and model.strip() else None
