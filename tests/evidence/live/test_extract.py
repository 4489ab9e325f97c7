"""Reading the choice from each server's response shape (verdictpack.evidence.live._extract).

The response fixtures follow each server's documented shape (versions named per builder):

* OpenAI — openai/openai-openapi ``openapi.yaml`` (snapshot 2026-08-21):
  ``CreateChatCompletionResponse``, ``ChatCompletionTokenLogprob``, ``message.refusal``.
* vLLM 0.12 OpenAI-compatible server — the OpenAI shape, plus ``reasoning_content`` and
  ``stop_reason``; a ``-inf`` logprob is sent clamped to ``-9999.0``.
* Ollama v0.12.11+ (openai/openai.go) — ``system_fingerprint: "fp_ollama"``,
  ``choices[0].logprobs.content = [{token, logprob, bytes, top_logprobs}]``.
* llama.cpp server (tools/server, ``probs_vector_to_json``) — entries with ``id``, ``token``,
  ``bytes``, ``logprob`` and ``top_logprobs``; with ``post_sampling_probs`` ``prob`` and
  ``top_probs``; probability 0 written as the lowest float.
* LiteLLM proxy — the OpenAI shape passed through.
"""

from __future__ import annotations

import json
import math
from typing import Any

import pytest

from verdictpack._errors import InputError
from verdictpack.evidence.live._extract import (
    Extraction,
    canonical_choice,
    extract_choice,
    model_id_of,
)
from verdictpack.evidence.live._runner import _reported_usage

LABELS = ("A", "B")
LOWEST_FLOAT = -3.4028234663852886e38


def _alts(pairs: list[tuple[str, float]]) -> list[dict[str, Any]]:
    return [{"token": t, "logprob": lp, "bytes": list(t.encode())} for t, lp in pairs]


def openai_response(
    content: str | None,
    tokens: list[tuple[str, float, list[tuple[str, float]]]] | None = None,
    refusal: str | None = None,
) -> dict[str, Any]:
    """A chat.completion as the OpenAI spec documents it (logprobs when ``tokens`` given)."""
    choice: dict[str, Any] = {
        "index": 0,
        "message": {"role": "assistant", "content": content, "refusal": refusal},
        "logprobs": None,
        "finish_reason": "stop",
    }
    if tokens is not None:
        choice["logprobs"] = {
            "content": [
                {"token": t, "logprob": lp, "bytes": list(t.encode()), "top_logprobs": _alts(top)}
                for t, lp, top in tokens
            ],
            "refusal": None,
        }
    return {
        "id": "chatcmpl-1",
        "object": "chat.completion",
        "created": 1760000000,
        "model": "gpt-4o-mini-2024-07-18",
        "system_fingerprint": "fp_1",
        "choices": [choice],
        "usage": {"prompt_tokens": 120, "completion_tokens": 1, "total_tokens": 121},
    }


def vllm_response(content: str, first: list[tuple[str, float]]) -> dict[str, Any]:
    """vLLM 0.12: OpenAI shape with vLLM's extra fields; structured_outputs choice → bare label."""
    token, lp = first[0]
    return {
        "id": "chatcmpl-vllm",
        "object": "chat.completion",
        "created": 1760000000,
        "model": "Qwen/Qwen2.5-7B-Instruct",
        "choices": [
            {
                "index": 0,
                "message": {
                    "role": "assistant",
                    "content": content,
                    "reasoning_content": None,
                    "tool_calls": [],
                },
                "logprobs": {
                    "content": [
                        {
                            "token": token,
                            "logprob": lp,
                            "bytes": list(token.encode()),
                            "top_logprobs": _alts(first),
                        }
                    ]
                },
                "finish_reason": "stop",
                "stop_reason": None,
            }
        ],
        "usage": {"prompt_tokens": 88, "total_tokens": 89, "completion_tokens": 1},
        "prompt_logprobs": None,
    }


def ollama_response(content: str, tokens: list[tuple[str, float, list]] | None) -> dict[str, Any]:
    """Ollama v0.12.11+ /v1/chat/completions (openai/openai.go ToChatCompletion)."""
    choice: dict[str, Any] = {
        "index": 0,
        "message": {"role": "assistant", "content": content},
        "finish_reason": "stop",
    }
    if tokens is not None:
        choice["logprobs"] = {
            "content": [
                {"token": t, "logprob": lp, "bytes": list(t.encode()), "top_logprobs": _alts(top)}
                for t, lp, top in tokens
            ]
        }
    return {
        "id": "chatcmpl-42",
        "object": "chat.completion",
        "created": 1760000000,
        "model": "llama3.2",
        "system_fingerprint": "fp_ollama",
        "choices": [choice],
        "usage": {"prompt_tokens": 60, "completion_tokens": 6, "total_tokens": 66},
    }


def llamacpp_response(content: str, top: list[tuple[int, str, float]], post: bool = False) -> dict:
    """llama.cpp server /v1/chat/completions with ``logprobs`` (n_probs) — or post-sampling."""
    key, top_key = ("prob", "top_probs") if post else ("logprob", "top_logprobs")
    tid, tok, v = top[0]
    return {
        "choices": [
            {
                "finish_reason": "stop",
                "index": 0,
                "message": {"role": "assistant", "content": content},
                "logprobs": {
                    "content": [
                        {
                            "id": tid,
                            "token": tok,
                            "bytes": list(tok.encode()),
                            key: v,
                            top_key: [
                                {"id": i, "token": t, "bytes": list(t.encode()), key: p}
                                for i, t, p in top
                            ],
                        }
                    ]
                },
            }
        ],
        "created": 1760000000,
        "model": "qwen2.5-7b-instruct-q4_k_m.gguf",
        "object": "chat.completion",
        "usage": {"completion_tokens": 1, "prompt_tokens": 44, "total_tokens": 45},
        "id": "chatcmpl-abc",
        "timings": {"prompt_n": 44, "predicted_n": 1},
    }


# ---------------------------------------------------------------- path 1: logprobs


def test_openai_logprobs_arithmetic() -> None:
    r = openai_response("A", [("A", -0.2, [("A", -0.2), ("B", -1.9), ("The", -4.0)])])
    got = extract_choice(r, LABELS)
    pa, pb = math.exp(-0.2), math.exp(-1.9)
    assert got.path == "logprobs" and got.position == "first"
    assert got.p_first == pytest.approx(pa / (pa + pb), rel=1e-12)
    assert "at token 0" in got.detail


def test_vllm_choice_constraint_logprobs_second() -> None:
    r = vllm_response("B", [("B", -0.05), ("A", -3.0), ("C", -9999.0)])
    got = extract_choice(r, LABELS)
    pa, pb = math.exp(-3.0), math.exp(-0.05)
    assert (got.path, got.position) == ("logprobs", "second")
    assert got.p_first == pytest.approx(pa / (pa + pb), rel=1e-12)


def test_leading_space_and_case_variants_are_summed() -> None:
    top = [(" A", math.log(0.4)), ("A", math.log(0.1)), ("a", math.log(0.1)), (" B", math.log(0.2))]
    r = openai_response(" A", [(" A", math.log(0.4), top)])
    got = extract_choice(r, LABELS)
    assert got.path == "logprobs"
    assert got.p_first == pytest.approx(0.6 / 0.8, rel=1e-12)


def test_lowercase_answer_token_counts_for_its_label() -> None:
    r = openai_response("b", [("b", -0.1, [("b", -0.1), ("a", -2.0)])])
    got = extract_choice(r, LABELS)
    assert (got.path, got.position) == ("logprobs", "second")


def test_sampled_token_is_counted_when_the_top_list_omits_it() -> None:
    # sampled at temperature > 0 from outside the listed alternatives
    r = openai_response("B", [("B", math.log(0.01), [("A", math.log(0.9)), ("X", -1.0)])])
    got = extract_choice(r, LABELS)
    # the answer given is B, however improbable: the position is the answer, the
    # probability is recorded beside it
    assert got.path == "logprobs" and got.position == "second"
    assert got.p_first == pytest.approx(0.9 / 0.91, rel=1e-12)


def test_equal_probabilities_keep_the_answer_given() -> None:
    r = openai_response("A", [("A", math.log(0.4), [("A", math.log(0.4)), ("B", math.log(0.4))])])
    got = extract_choice(r, LABELS)
    assert (got.path, got.position, got.p_first) == ("logprobs", "first", 0.5)


@pytest.mark.parametrize("answer", ["A", "B"])
def test_the_position_is_the_answer_given_not_the_more_probable_label(answer: str) -> None:
    # a judge sampled at temperature > 0 answers against its own more probable label
    other = "B" if answer == "A" else "A"
    top = [(other, math.log(0.7)), (answer, math.log(0.3))]
    got = extract_choice(openai_response(answer, [(answer, math.log(0.3), top)]), LABELS)
    assert got.path == "logprobs"
    assert got.position == ("first" if answer == "A" else "second")
    assert got.p_first == pytest.approx(0.3 if answer == "A" else 0.7, rel=1e-12)


def test_openai_strict_json_answer_token_located_inside_the_object() -> None:
    content = '{"choice":"B"}'
    tokens = [
        ('{"', -0.0001, [('{"', -0.0001)]),
        ("choice", -0.0001, [("choice", -0.0001)]),
        ('":"', -0.0001, [('":"', -0.0001)]),
        ("B", math.log(0.7), [("B", math.log(0.7)), ("A", math.log(0.3))]),
        ('"}', -0.0001, [('"}', -0.0001)]),
    ]
    got = extract_choice(openai_response(content, tokens), LABELS)
    assert (got.path, got.position) == ("logprobs", "second")
    assert got.p_first == pytest.approx(0.3, rel=1e-12)
    assert "at token 3" in got.detail


def test_ollama_json_schema_answer_with_spaces_and_a_preceding_key() -> None:
    content = '{ "reason": "x", "choice": "A" }'
    pieces = ['{ "', "reason", '": "', "x", '", "', "choice", '": "', "A", '" }']
    tokens = [(p, -0.01, [(p, -0.01)]) for p in pieces]
    tokens[7] = ("A", math.log(0.8), [("A", math.log(0.8)), ("B", math.log(0.1))])
    got = extract_choice(ollama_response(content, tokens), LABELS)
    assert (got.path, got.position) == ("logprobs", "first")
    assert got.p_first == pytest.approx(0.8 / 0.9, rel=1e-12)


def test_json_answer_whose_tokens_do_not_align_falls_back_to_structured() -> None:
    content = '{"choice":"A"}'
    pieces = ['{"', "choice", '":"A', '"}']  # the label merged with punctuation
    tokens = [(p, -0.01, [(p, -0.01), ("B", -3.0)]) for p in pieces]
    got = extract_choice(ollama_response(content, tokens), LABELS)
    assert (got.path, got.position, got.p_first) == ("structured", "first", None)
    tokens_short = tokens[:2]  # tokens that do not spell the content
    got = extract_choice(ollama_response(content, tokens_short), LABELS)
    assert got.path == "structured"


def test_llamacpp_logprobs_with_lowest_float_for_zero() -> None:
    top = [(32, "A", math.log(0.6)), (33, "B", math.log(0.2)), (34, "C", LOWEST_FLOAT)]
    got = extract_choice(llamacpp_response("A", top), LABELS)
    assert got.path == "logprobs"
    assert got.p_first == pytest.approx(0.75, rel=1e-12)


def test_llamacpp_post_sampling_probs_shape() -> None:
    top = [(33, "B", 0.55), (32, "A", 0.45)]
    got = extract_choice(llamacpp_response("B", top, post=True), LABELS)
    assert (got.path, got.position) == ("logprobs", "second")
    assert got.p_first == pytest.approx(0.45, rel=1e-12)


def test_llamacpp_zero_mass_for_both_labels_falls_back() -> None:
    top = [(32, "A", LOWEST_FLOAT), (33, "B", LOWEST_FLOAT)]
    got = extract_choice(llamacpp_response("A", top), LABELS)
    assert got.path == "parser" and "probability 0" in got.detail


# ------------------------------------------------- fall-through from logprobs


def test_neither_label_in_the_top_list_falls_back_to_the_parser() -> None:
    r = openai_response("A", [("A", -0.1, [("X", -0.5), ("Y", -0.9)])])
    r["choices"][0]["logprobs"]["content"][0].pop("logprob")  # the sampled token unscored
    got = extract_choice(r, LABELS)
    assert (got.path, got.position, got.p_first) == ("parser", "first", None)
    assert "not among the top tokens" in got.detail


def test_neither_label_in_the_top_list_falls_back_to_structured() -> None:
    content = '{"choice": "B"}'
    pieces = ['{"', "choice", '": "', "B", '"}']
    tokens = [(p, -0.01, [(p, -0.01)]) for p in pieces]
    tokens[3] = ("B", -0.01, [("Sure", -4.0), ("The", -5.0)])
    r = ollama_response(content, tokens)
    r["choices"][0]["logprobs"]["content"][3].pop("logprob")  # the sampled token unscored
    got = extract_choice(r, LABELS)
    assert (got.path, got.position) == ("structured", "second")
    assert "not among the top tokens" in got.detail


def test_one_label_missing_is_unknown_not_zero() -> None:
    r = openai_response("A", [("A", -0.01, [("A", -0.01), ("The", -5.0)])])
    got = extract_choice(r, LABELS)
    assert (got.path, got.position, got.p_first) == ("parser", "first", None)
    assert "'B'" in got.detail


def test_answer_token_that_is_not_a_label_falls_back() -> None:
    r = openai_response("\nA", [("\n", -0.1, [("\n", -0.1), ("A", -2.0), ("B", -3.0)])])
    got = extract_choice(r, LABELS)
    assert (got.path, got.position) == ("parser", "first")
    assert "is not a label" in got.detail


def test_refusal_text_is_invalid_even_with_labels_among_its_alternatives() -> None:
    text = "I'm sorry, but I can't choose between these responses."
    r = openai_response(text, [("I", -0.1, [("I", -0.1), ("A", -3.0), ("B", -3.5)])])
    got = extract_choice(r, LABELS)
    assert (got.position, got.path, got.p_first) == ("invalid", "none", None)


def test_label_first_token_of_a_sentence_is_not_a_choice() -> None:
    r = openai_response("A is better", [("A", -0.1, [("A", -0.1), ("B", -2.0)])])
    assert extract_choice(r, LABELS).position == "invalid"


def test_openai_refusal_field_is_invalid() -> None:
    r = openai_response(None, refusal="I'm sorry, I cannot help with that.")
    got = extract_choice(r, LABELS)
    assert (got.position, got.path) == ("invalid", "none")
    assert got.detail.startswith("refusal:")


# ------------------------------------------------------ path 2: structured


@pytest.mark.parametrize(
    ("content", "position"),
    [
        ('{"choice": "A"}', "first"),
        ('{"choice":"B"}', "second"),
        (' {\n  "choice": "b"\n}\n', "second"),
        ('{"choice": " A ", "reason": "clearer"}', "first"),
    ],
)
def test_structured(content: str, position: str) -> None:
    got = extract_choice(ollama_response(content, None), LABELS)
    assert (got.path, got.position, got.p_first) == ("structured", position, None)


@pytest.mark.parametrize(
    "content",
    ['{"choice": "C"}', '{"answer": "A"}', '{"choice": 1}', '["A"]', '"A"', '{"choice": "A"'],
)
def test_structured_not_a_label_is_invalid(content: str) -> None:
    got = extract_choice(ollama_response(content, None), LABELS)
    assert (got.position, got.path) == ("invalid", "none")


# ---------------------------------------------------------- path 3: parser


@pytest.mark.parametrize(
    ("content", "position"),
    [("A", "first"), ("B", "second"), ("  a\n", "first"), ("B.", "second"), ("b. ", "second")],
)
def test_parser(content: str, position: str) -> None:
    got = extract_choice(openai_response(content), LABELS)
    assert (got.path, got.position, got.p_first) == ("parser", position, None)


@pytest.mark.parametrize(
    "content",
    ["", "   ", "A..", "A .", "**A**", "Response A", "A or B", "AB", "C", "Both.", "A!"],
)
def test_parser_refuses_anything_else(content: str) -> None:
    got = extract_choice(openai_response(content), LABELS)
    assert (got.position, got.path) == ("invalid", "none")


def test_litellm_passthrough_without_logprobs() -> None:
    r = openai_response("B.")
    r["model"] = "anthropic/claude-x"
    got = extract_choice(r, LABELS)
    assert (got.path, got.position) == ("parser", "second")


def test_other_labels() -> None:
    r = openai_response("2", [("2", -0.3, [("2", -0.3), ("1", -1.0)])])
    got = extract_choice(r, ("1", "2"))
    assert (got.path, got.position) == ("logprobs", "second")
    assert extract_choice(openai_response("Yes."), ("yes", "no")).position == "first"


# ------------------------------------------------------------- malformed


@pytest.mark.parametrize(
    "response",
    [
        {},
        {"choices": []},
        {"choices": "A"},
        {"choices": [None]},
        {"choices": [{"message": "A"}]},
        {"choices": [{"message": {"content": None}}]},
        {"choices": [{"message": {"content": 7}}]},
        [],
    ],
)
def test_malformed_responses_are_invalid_not_errors(response: Any) -> None:
    got = extract_choice(response, LABELS)
    assert (got.position, got.path, got.p_first) == ("invalid", "none", None)


def test_malformed_logprobs_fall_back_quietly() -> None:
    r = openai_response("A")
    for junk in ("x", {"content": "x"}, {"content": [None]}, {"content": [{"token": 5}]}):
        r["choices"][0]["logprobs"] = junk
        assert extract_choice(r, LABELS).path == "parser"
    r["choices"][0]["logprobs"] = {
        "content": [{"token": "A", "logprob": float("nan"), "top_logprobs": [{"token": "B"}]}]
    }
    assert extract_choice(r, LABELS).path == "parser"


def test_content_part_list_is_read() -> None:
    r = openai_response(None)
    r["choices"][0]["message"]["content"] = [{"type": "text", "text": "B"}]
    assert extract_choice(r, LABELS).position == "second"


def test_a_json_roundtrip_of_the_fixtures_reads_the_same() -> None:
    r = openai_response("A", [("A", -0.2, [("A", -0.2), ("B", -1.9)])])
    assert extract_choice(json.loads(json.dumps(r)), LABELS) == extract_choice(r, LABELS)


def test_labels_are_validated() -> None:
    with pytest.raises(InputError):
        extract_choice(openai_response("A"), ("A", "a"))


# ---------------------------------------------------------- canonical_choice


def test_canonical_choice_both_orders() -> None:
    first = Extraction("first", "logprobs", 0.8, "")
    second = Extraction("second", "parser", None, "")
    tie = Extraction("tie", "logprobs", 0.5, "")
    bad = Extraction("invalid", "none", None, "")
    assert canonical_choice(first, "treatment_first") == ("treatment", 0.8)
    c, p = canonical_choice(first, "null_first")
    assert c == "null_partner" and p == pytest.approx(0.2, abs=1e-15)
    assert canonical_choice(second, "treatment_first") == ("null_partner", None)
    assert canonical_choice(second, "null_first") == ("treatment", None)
    assert canonical_choice(tie, "treatment_first") == ("tie", 0.5)
    assert canonical_choice(tie, "null_first") == ("tie", 0.5)
    assert canonical_choice(bad, "treatment_first") == ("invalid", None)
    assert canonical_choice(bad, "null_first") == ("invalid", None)
    with pytest.raises(InputError, match="order"):
        canonical_choice(first, "unknown")
    with pytest.raises(InputError, match="extraction"):
        canonical_choice(("first",), "null_first")  # type: ignore[arg-type]


def test_same_answer_in_both_orders_gives_opposite_choices() -> None:
    # a judge that always answers "A" prefers the first position, not the treatment
    got = extract_choice(openai_response("A"), LABELS)
    assert canonical_choice(got, "treatment_first")[0] == "treatment"
    assert canonical_choice(got, "null_first")[0] == "null_partner"


@pytest.mark.parametrize(
    ("args", "fragment"),
    [
        (("second", "none", None, ""), "exactly when"),
        (("invalid", "parser", None, ""), "exactly when"),
        (("maybe", "parser", None, ""), "position"),
        (("first", "guess", None, ""), "path"),
        (("first", "logprobs", 1.5, ""), "p_first"),
    ],
)
def test_extraction_refuses(args: tuple, fragment: str) -> None:
    with pytest.raises(InputError, match=fragment):
        Extraction(*args)


# ------------------------------------------------------- usage and model id


def test_usage_and_model_id_per_server() -> None:
    # the token counts a live run prices an answer by (the runner reads the body's usage)
    assert _reported_usage(openai_response("A"), b"") == (120, 1)
    assert _reported_usage(vllm_response("A", [("A", -0.1)]), b"") == (88, 1)
    assert _reported_usage(ollama_response("A", None), b"") == (60, 6)
    assert _reported_usage(llamacpp_response("A", [(1, "A", -0.1)]), b"") == (44, 1)
    assert model_id_of(openai_response("A")) == "gpt-4o-mini-2024-07-18"
    assert model_id_of(ollama_response("A", None)) == "llama3.2"
    assert model_id_of(llamacpp_response("A", [(1, "A", -0.1)])) == (
        "qwen2.5-7b-instruct-q4_k_m.gguf"
    )


@pytest.mark.parametrize(
    "response",
    [
        {},
        {"usage": None},
        {"usage": {"prompt_tokens": "12", "completion_tokens": True}},
        {"usage": {"prompt_tokens": -3, "completion_tokens": 2.5}},
        {"usage": {"prompt_tokens": 9}},
        [],
    ],
)
def test_usage_absent_malformed_or_partial_is_unknown(response: Any) -> None:
    # no usable counts: the call is priced at its worst case
    assert _reported_usage(response, b"") is None


@pytest.mark.parametrize("response", [{}, {"model": ""}, {"model": 3}, {"model": "  "}, []])
def test_model_id_absent(response: Any) -> None:
    assert model_id_of(response) is None
