"""Request bodies per server profile (verdictpack.evidence.live._profiles): golden dicts."""

from __future__ import annotations

import json

import pytest

from verdictpack._errors import InputError
from verdictpack.evidence.live._profiles import (
    PROFILES,
    Sampling,
    chat_url,
    choice_schema,
    label_grammar,
    request_body,
)

MESSAGES = [
    {"role": "system", "content": "Answer with one label."},
    {"role": "user", "content": "Response A: x\nResponse B: y\nA or B?"},
]
LABELS = ("A", "B")
SCHEMA = {
    "type": "object",
    "properties": {"choice": {"type": "string", "enum": ["A", "B"]}},
    "required": ["choice"],
    "additionalProperties": False,
}


def _core(limit_field: str) -> dict:
    return {
        "model": "m-1",
        "messages": MESSAGES,
        "stream": False,
        "temperature": 0.0,
        limit_field: 8,
        "seed": 7,
        "logprobs": True,
        "top_logprobs": 5,
    }


GOLDEN = {
    "openai": {
        **_core("max_completion_tokens"),
        "response_format": {
            "type": "json_schema",
            "json_schema": {"name": "pairwise_choice", "strict": True, "schema": SCHEMA},
        },
    },
    "vllm": {**_core("max_tokens"), "structured_outputs": {"choice": ["A", "B"]}},
    "ollama": {
        **_core("max_tokens"),
        "response_format": {
            "type": "json_schema",
            "json_schema": {"name": "pairwise_choice", "schema": SCHEMA},
        },
    },
    "llamacpp": {**_core("max_tokens"), "grammar": 'root ::= "A" | "B"'},
    "litellm": _core("max_tokens"),
    "generic": _core("max_tokens"),
}


@pytest.mark.parametrize("profile", PROFILES)
def test_golden_body(profile: str) -> None:
    body = request_body(profile, "m-1", MESSAGES, Sampling(seed=7), LABELS)
    assert body == GOLDEN[profile]
    # fixed key order: the same inputs always serialise to the same bytes
    again = request_body(profile, "m-1", MESSAGES, Sampling(seed=7), LABELS)
    assert json.dumps(body) == json.dumps(again)
    assert list(body)[:3] == ["model", "messages", "stream"]


def test_every_profile_has_a_golden_body() -> None:
    assert set(GOLDEN) == set(PROFILES)


def test_fields_a_server_does_not_read_are_never_sent() -> None:
    ollama = request_body("ollama", "m", MESSAGES, Sampling(), LABELS)
    assert "strict" not in ollama["response_format"]["json_schema"]  # Ollama reads schema only
    for field in ("n", "logit_bias", "user", "tool_choice"):
        assert field not in ollama
    vllm = request_body("vllm", "m", MESSAGES, Sampling(), LABELS)
    assert "guided_choice" not in vllm  # removed in vLLM 0.12, silently ignored
    assert "response_format" not in vllm
    llama = request_body("llamacpp", "m", MESSAGES, Sampling(), LABELS)
    assert "json_schema" not in llama and "response_format" not in llama  # exclusive with grammar
    openai = request_body("openai", "m", MESSAGES, Sampling(), LABELS)
    assert "max_tokens" not in openai  # deprecated in favour of max_completion_tokens
    for plain in ("litellm", "generic"):
        body = request_body(plain, "m", MESSAGES, Sampling(), LABELS)
        assert not {"response_format", "structured_outputs", "grammar"} & set(body)


def test_no_seed_and_no_logprobs_when_not_asked() -> None:
    for profile in PROFILES:
        body = request_body(profile, "m", MESSAGES, Sampling(top_logprobs=0), LABELS)
        assert "seed" not in body
        assert "logprobs" not in body and "top_logprobs" not in body


def test_sampling_values_are_passed_through() -> None:
    s = Sampling(temperature=0.7, max_tokens=3, seed=0, top_logprobs=20)
    body = request_body("vllm", "m", MESSAGES, s, LABELS)
    assert (body["temperature"], body["max_tokens"], body["seed"], body["top_logprobs"]) == (
        0.7,
        3,
        0,
        20,
    )
    assert isinstance(body["temperature"], float)


def test_other_labels_reach_every_constraint() -> None:
    labels = ("1", "2")
    assert request_body("vllm", "m", MESSAGES, Sampling(), labels)["structured_outputs"] == {
        "choice": ["1", "2"]
    }
    assert request_body("llamacpp", "m", MESSAGES, Sampling(), labels)["grammar"] == (
        'root ::= "1" | "2"'
    )
    schema = choice_schema(labels)
    assert schema["properties"]["choice"]["enum"] == ["1", "2"]


def test_grammar_escapes_quotes_and_backslashes() -> None:
    assert label_grammar(('say "x"', "b\\c")) == r'root ::= "say \"x\"" | "b\\c"'


def test_messages_are_copied_not_aliased() -> None:
    msgs = [{"role": "user", "content": "hi"}]
    body = request_body("generic", "m", msgs, Sampling(), LABELS)
    body["messages"][0]["content"] = "changed"
    assert msgs[0]["content"] == "hi"


@pytest.mark.parametrize(
    ("kwargs", "parameter"),
    [
        ({"temperature": -0.1}, "sampling.temperature"),
        ({"temperature": 2.5}, "sampling.temperature"),
        ({"temperature": float("nan")}, "sampling.temperature"),
        ({"max_tokens": 0}, "sampling.max_tokens"),
        ({"max_tokens": True}, "sampling.max_tokens"),
        ({"seed": 1.5}, "sampling.seed"),
        ({"top_logprobs": 21}, "sampling.top_logprobs"),
        ({"top_logprobs": -1}, "sampling.top_logprobs"),
    ],
)
def test_sampling_refuses(kwargs: dict, parameter: str) -> None:
    with pytest.raises(InputError) as err:
        Sampling(**kwargs)
    assert err.value.parameter == parameter


def test_request_body_refuses() -> None:
    with pytest.raises(InputError, match="profile"):
        request_body("anthropic", "m", MESSAGES, Sampling(), LABELS)
    with pytest.raises(InputError, match="model"):
        request_body("openai", " ", MESSAGES, Sampling(), LABELS)
    with pytest.raises(InputError, match="messages"):
        request_body("openai", "m", [], Sampling(), LABELS)
    with pytest.raises(InputError, match=r"messages\[0\]\.role"):
        request_body("openai", "m", [{"role": "tool", "content": "x"}], Sampling(), LABELS)
    with pytest.raises(InputError, match=r"messages\[0\]\.content"):
        request_body("openai", "m", [{"role": "user", "content": None}], Sampling(), LABELS)
    with pytest.raises(InputError, match="sampling"):
        request_body("openai", "m", MESSAGES, {"temperature": 0}, LABELS)  # type: ignore[arg-type]
    with pytest.raises(InputError, match="labels"):
        request_body("openai", "m", MESSAGES, Sampling(), ("A", "a"))


@pytest.mark.parametrize(
    ("base", "url"),
    [
        ("http://127.0.0.1:8000/v1", "http://127.0.0.1:8000/v1/chat/completions"),
        ("https://api.openai.com/v1/", "https://api.openai.com/v1/chat/completions"),
        ("http://localhost:11434/v1//", "http://localhost:11434/v1/chat/completions"),
        ("http://proxy:4000", "http://proxy:4000/chat/completions"),
    ],
)
def test_chat_url(base: str, url: str) -> None:
    assert chat_url(base) == url


@pytest.mark.parametrize(
    "base",
    [
        "",
        "localhost:8000/v1",
        "ftp://host/v1",
        "http:///v1",
        "http://host/v1?key=x",
        "http://host/v1#frag",
        "http://host/v1/chat/completions",
        "http://host/v1/chat/completions/",
    ],
)
def test_chat_url_refuses(base: str) -> None:
    with pytest.raises(InputError) as err:
        chat_url(base)
    assert err.value.parameter == "base_url"
