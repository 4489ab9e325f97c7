"""Each server's wire quirks: the request body a live judge sends, per profile.

A judge names a ``profile``; :func:`request_body` builds the ``POST {base_url}/chat/completions``
body for it. Every profile sends the OpenAI Chat Completions core — ``model``, ``messages``,
``temperature``, a token limit, ``stream: false`` and ``seed`` when one is set — and, when
``Sampling.top_logprobs > 0``, ``logprobs: true`` with ``top_logprobs`` (the labels' token
probabilities are the first path of :mod:`._extract`). Profiles differ in the token-limit field
and in how they constrain the answer to one of the two labels:

========  ==================================  ===============================================
profile   token limit                         answer constraint
========  ==================================  ===============================================
openai    ``max_completion_tokens``           ``response_format`` json_schema, ``strict: true``
vllm      ``max_tokens``                      ``structured_outputs: {"choice": [A, B]}``
ollama    ``max_tokens``                      ``response_format`` json_schema (schema only)
llamacpp  ``max_tokens``                      ``grammar`` (GBNF ``root ::= "A" | "B"``)
litellm   ``max_tokens``                      none (plain OpenAI)
generic   ``max_tokens``                      none (plain OpenAI)
========  ==================================  ===============================================

What each server documents, and so what is sent (sources read for this module):

* **openai** — the OpenAI API spec (github.com/openai/openai-openapi, ``openapi.yaml``,
  ``CreateChatCompletionRequest``; snapshot of 2026-08-21): ``logprobs`` (boolean),
  ``top_logprobs`` (integer 0..20, requires ``logprobs: true``), ``max_completion_tokens``
  (``max_tokens`` is deprecated and not accepted by the o-series), ``seed`` (deprecated, best
  effort, still accepted), ``response_format`` =
  ``{"type": "json_schema", "json_schema": {"name", "schema", "strict"}}``
  (``ResponseFormatJsonSchema``; ``name`` is required). Strict mode needs every property required
  and ``additionalProperties: false``, which :func:`choice_schema` satisfies. The answer then
  arrives as ``{"choice": "A"}``; :mod:`._extract` finds the label's token inside it. Reasoning
  models reject ``logprobs`` and a non-default ``temperature``: use ``top_logprobs = 0`` there.
* **vllm** — docs.vllm.ai "Structured Outputs" (docs/features/structured_outputs.md in
  vllm-project/vllm) and ``StructuredOutputsParams`` (vllm/sampling_params.py: ``choice:
  list[str]``): extra body field ``structured_outputs: {"choice": [...]}``, available since
  v0.10.2; the older ``guided_choice`` was removed in v0.12.0 and is silently ignored by newer
  servers, so it is not sent. ``logprobs``/``top_logprobs`` follow OpenAI (docs.vllm.ai
  "OpenAI-Compatible Server"; the server caps them with ``--max-logprobs``, default 20). With a
  choice constraint the first generated token is the label, so the logprobs path applies.
* **ollama** — docs/api/openai-compatibility.mdx and openai/openai.go in ollama/ollama
  (v0.33.0-rc2): ``/v1/chat/completions`` reads ``model, messages, stream, max_tokens, seed,
  stop, temperature, top_p, frequency_penalty, presence_penalty, response_format, tools,
  logprobs, top_logprobs``. ``logprobs``/``top_logprobs`` (0..20) have been read since v0.12.11
  (commit 59241c5, "add logprobs and top_logprobs support"), although the compatibility page
  still leaves "Logprobs" unticked. ``response_format`` ``json_schema`` is honoured since v0.5.0,
  but only its ``json_schema.schema`` is read (``name`` and ``strict`` are ignored, so
  ``strict`` is not sent). ``n``, ``logit_bias``, ``user`` and ``tool_choice`` are not supported
  and are never sent.
* **llamacpp** — tools/server/README.md in ggml-org/llama.cpp: ``/v1/chat/completions`` takes
  the OpenAI fields plus the ``/completion`` options, among them ``grammar`` (GBNF) and
  ``json_schema`` (the two are mutually exclusive); ``logprobs: true`` maps ``top_logprobs`` to
  ``n_probs`` and the reply carries ``choices[0].logprobs.content`` in the OpenAI shape
  (``post_sampling_probs`` switches it to ``prob``/``top_probs``, which :mod:`._extract` also
  reads). A grammar is sent rather than a ``response_format``: the README's example
  ``{"type": "json_schema", "schema": ...}`` is not the form the parser reads (it reads
  ``response_format.json_schema.schema``), and a grammar keeps the label the first token.
* **litellm** — docs.litellm.ai "Input Params" and "Drop Unsupported Params": the proxy
  translates the OpenAI parameters per provider and by default raises on a parameter the
  provider does not support (``logprobs`` for many) unless the proxy is configured with
  ``litellm_settings: drop_params: true``. The body is plain OpenAI; structured output is not
  sent because its support differs by provider.
* **generic** — any other OpenAI-compatible server: the same plain OpenAI body.

Bodies are plain ``dict``/``list``/``str``/number trees with a fixed key order, so the same
judge, stimulus and sampling always serialise to the same bytes (the ledger keys on them).
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit

from verdictpack._errors import InputError
from verdictpack._validate import closed_interval, is_int, nonempty_str, positive_int
from verdictpack.evidence.live._prompts import check_labels

__all__ = [
    "PROFILES",
    "SCHEMA_NAME",
    "STRUCTURED_KEY",
    "Sampling",
    "chat_url",
    "choice_schema",
    "label_grammar",
    "request_body",
]

PROFILES = ("openai", "vllm", "ollama", "llamacpp", "litellm", "generic")

# The key of the structured answer {"choice": label}, and the schema's name (OpenAI: a-z, 0-9,
# "_" or "-", at most 64 characters).
STRUCTURED_KEY = "choice"
SCHEMA_NAME = "pairwise_choice"

# The documented top_logprobs range of OpenAI and Ollama (vLLM's default --max-logprobs).
_MAX_TOP_LOGPROBS = 20


@dataclass(frozen=True)
class Sampling:
    """Sampling settings of one judge.

    ``temperature`` in [0, 2] (0 asks for the most likely answer); ``max_tokens`` >= 1 caps the
    generated tokens (also the budget's worst case); ``seed`` an integer or None (not sent);
    ``top_logprobs`` in 0..20: how many alternatives per token to ask for, 0 = do not ask for
    logprobs at all (the answer is then read from the text only).
    """

    temperature: float = 0.0
    max_tokens: int = 8
    seed: int | None = None
    top_logprobs: int = 5

    def __post_init__(self) -> None:
        t = closed_interval(
            "sampling.temperature", self.temperature, 0.0, 2.0, "a number in [0, 2]"
        )
        object.__setattr__(self, "temperature", t)
        object.__setattr__(self, "max_tokens", positive_int("sampling.max_tokens", self.max_tokens))
        if self.seed is not None:
            if not is_int(self.seed):
                raise InputError("sampling.seed", "an integer or None", self.seed)
            object.__setattr__(self, "seed", int(self.seed))
        k = self.top_logprobs
        if not is_int(k) or not 0 <= k <= _MAX_TOP_LOGPROBS:
            raise InputError("sampling.top_logprobs", f"an integer in 0..{_MAX_TOP_LOGPROBS}", k)
        object.__setattr__(self, "top_logprobs", int(k))


def chat_url(base_url: str) -> str:
    """``{base_url}/chat/completions``: the base URL (typically ending in ``/v1``), one slash.

    The base URL must be ``http://`` or ``https://`` with a host and no query or fragment;
    trailing slashes are dropped. A URL that already ends in ``/chat/completions`` is refused
    rather than doubled.
    """
    nonempty_str("base_url", base_url)
    parts = urlsplit(base_url)
    if parts.scheme not in ("http", "https") or not parts.netloc:
        raise InputError("base_url", "an http:// or https:// URL with a host", base_url)
    if parts.query or parts.fragment or base_url.endswith(("?", "#")):
        raise InputError("base_url", "a URL without a query or fragment", base_url)
    base = base_url.rstrip("/")
    if base.endswith("/chat/completions"):
        raise InputError(
            "base_url", "the API base (e.g. https://host/v1), without /chat/completions", base_url
        )
    return base + "/chat/completions"


def choice_schema(labels: tuple[str, str]) -> dict[str, Any]:
    """The JSON schema of the structured answer: ``{"choice": <one of the labels>}``, strict."""
    a, b = check_labels(labels)
    return {
        "type": "object",
        "properties": {STRUCTURED_KEY: {"type": "string", "enum": [a, b]}},
        "required": [STRUCTURED_KEY],
        "additionalProperties": False,
    }


def label_grammar(labels: tuple[str, str]) -> str:
    """A GBNF grammar whose only sentences are the two labels (llama.cpp's ``grammar``).

    Labels are written as GBNF string literals with JSON escapes (``\\"``, ``\\\\``, ``\\n``,
    ``\\uXXXX``), which GBNF reads the same way.
    """
    a, b = check_labels(labels)
    return f"root ::= {json.dumps(a)} | {json.dumps(b)}"


def _check_messages(messages: Any) -> list[dict[str, str]]:
    if isinstance(messages, (str, bytes)) or not isinstance(messages, Sequence) or not messages:
        raise InputError("messages", "a non-empty list of {role, content} mappings", messages)
    out = []
    for k, m in enumerate(messages):
        if not isinstance(m, Mapping):
            raise InputError(f"messages[{k}]", "a mapping with 'role' and 'content'", m)
        role, content = m.get("role"), m.get("content")
        if role not in ("system", "user", "assistant"):
            raise InputError(f"messages[{k}].role", "'system', 'user' or 'assistant'", role)
        if not isinstance(content, str):
            raise InputError(f"messages[{k}].content", "a string", type(content).__name__)
        out.append({"role": role, "content": content})
    return out


def request_body(
    profile: str,
    model: str,
    messages: Sequence[Mapping[str, str]],
    sampling: Sampling,
    labels: tuple[str, str],
) -> dict[str, Any]:
    """The chat-completions request body for ``profile`` (see the module docstring's table).

    ``messages`` are ``{"role", "content"}`` mappings (copied); ``labels`` the two answer labels
    of the prompt, first-position label first.
    """
    if profile not in PROFILES:
        raise InputError("profile", "one of " + ", ".join(PROFILES), profile)
    nonempty_str("model", model)
    msgs = _check_messages(messages)
    if not isinstance(sampling, Sampling):
        raise InputError("sampling", "a Sampling", type(sampling).__name__)
    a, b = check_labels(labels)

    body: dict[str, Any] = {"model": model, "messages": msgs, "stream": False}
    body["temperature"] = sampling.temperature
    limit_field = "max_completion_tokens" if profile == "openai" else "max_tokens"
    body[limit_field] = sampling.max_tokens
    if sampling.seed is not None:
        body["seed"] = sampling.seed
    if sampling.top_logprobs > 0:
        body["logprobs"] = True
        body["top_logprobs"] = sampling.top_logprobs

    if profile == "openai":
        body["response_format"] = {
            "type": "json_schema",
            "json_schema": {"name": SCHEMA_NAME, "strict": True, "schema": choice_schema((a, b))},
        }
    elif profile == "ollama":
        body["response_format"] = {
            "type": "json_schema",
            "json_schema": {"name": SCHEMA_NAME, "schema": choice_schema((a, b))},
        }
    elif profile == "vllm":
        body["structured_outputs"] = {"choice": [a, b]}
    elif profile == "llamacpp":
        body["grammar"] = label_grammar((a, b))
    return body
