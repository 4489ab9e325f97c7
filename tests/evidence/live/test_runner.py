"""The live runner's requests (verdictpack.evidence.live._runner): the bytes sent are the body's
canonical JSON, the very text the ledger records under the request's key, whether the cell's
text is spliced from its plan's pieces or (a template that does not cut cleanly) serialised
whole; keys and bodies equal the whole computation for awkward texts."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Mapping
from pathlib import Path

import numpy as np

from verdictpack.core._mixture import MixtureSpec
from verdictpack.core._tracks import TrackSettings, TrackStream
from verdictpack.evidence._ledger import Ledger, canonical_json
from verdictpack.evidence.live._prices import Price
from verdictpack.evidence.live._profiles import Sampling
from verdictpack.evidence.live._prompts import DEFAULT_PROMPT
from verdictpack.evidence.live._runner import _MESSAGES_MARK, LiveJudge, build_cells, run_live
from verdictpack.evidence.live._transport import HttpRequest, HttpResponse, MockTransport
from verdictpack.stimuli._stimulus import Stimulus

MANIFEST = {"format": 1, "test": "runner"}
CLAIMS = {"registered": "at 0.3", "extension": "at 0.2", "comparison": "at 0.3"}


def _judge(name: str, profile: str, model: str | None = None) -> LiveJudge:
    return LiveJudge(
        name=name,
        base_url="http://127.0.0.1:9/v1",
        model=model or name,
        profile=profile,
        sampling=Sampling(temperature=0.0, max_tokens=8, seed=7, top_logprobs=5),
        prompt=DEFAULT_PROMPT,
        price=Price(per_million_input=1.0, per_million_output=2.0),
        concurrency=3,
    )


def _roots(n: int) -> list[Stimulus]:
    # quotes, backslashes, non-ASCII text, a control character and the messages marker itself
    awkward = 'He said "twelve" \\ percent, ünïcödé ✓\t\x01 ' + _MESSAGES_MARK
    return [
        Stimulus(
            id=f"root-{i}" + ("-é" if i % 2 else ""),
            source=f"source {i}: {awkward}",
            treatment=f"<<treatment>> {i} {awkward}",
            null_partner=f"<<null>> {i}",
        )
        for i in range(n)
    ]


def _answer(request: HttpRequest) -> HttpResponse:
    label = "A" if len(request.body) % 2 else "B"
    body = {
        "model": "served-model",
        "choices": [{"index": 0, "message": {"role": "assistant", "content": label}}],
        "usage": {"prompt_tokens": 100, "completion_tokens": 1},
    }
    return HttpResponse(200, {"content-type": "application/json"}, json.dumps(body).encode(), 0.01)


def _value(i: int, cells: Mapping[tuple[str, str, int], tuple[str, float | None]]) -> float:
    return sum(c == "treatment" for c, _ in cells.values()) / len(cells)


def _run(judges: list[LiveJudge], roots: list[Stimulus], folder: Path) -> list[HttpRequest]:
    transport = MockTransport(_answer)
    ledger = Ledger.open(folder, MANIFEST)
    try:
        settings = TrackSettings("hybrid", "corners", 0.05, MixtureSpec(), 0.3, 0.2, CLAIMS)
        tracks = TrackStream(settings, len(roots), np.array([]), np.array([]))
        outcome = asyncio.run(
            run_live(
                roots, judges, 2, ledger, transport, tracks, _value, lambda i: None, cap=len(roots)
            )
        )
        assert outcome.committed == len(roots) and outcome.sent == len(roots) * len(judges) * 4
        recorded = {body for (body,) in ledger._db.execute("SELECT body FROM requests")}
    finally:
        ledger.close()
    sent = [r.body.decode("utf-8") for r in transport.requests]
    assert len(set(sent)) == len(sent) == len(recorded)
    assert set(sent) == recorded  # the ledger holds, byte for byte, what went out
    for text in sent:
        assert text == canonical_json(json.loads(text))
    return transport.requests


def test_the_bytes_sent_are_the_canonical_body_the_ledger_records(tmp_path: Path) -> None:
    judges = [_judge("judge-o", "openai"), _judge("judge-v", "vllm"), _judge("judge-l", "llamacpp")]
    roots = _roots(5)
    with Ledger.open(tmp_path / "keys.sqlite", MANIFEST) as led:
        cells = build_cells(roots, judges, 2, led)
        for c in cells:  # every plan cut cleanly: the spliced text, equal to the whole one
            assert c.text is not None
            assert "".join(c.text) == canonical_json(dict(c.body))
            mapping = {
                "root_id": c.root_id,
                "judge": c.judge,
                "order": c.order,
                "trial": c.trial,
                "url": "http://127.0.0.1:9/v1/chat/completions",
                "body": dict(c.body),
            }
            assert c.key == led.request_key(mapping)
    run = tmp_path / "run"
    run.mkdir()
    _run(judges, roots, run)


def test_a_template_that_does_not_cut_cleanly_is_serialised_whole(tmp_path: Path) -> None:
    # the model's name is the marker: the body's template holds it twice, so it is not used
    odd = _judge("judge-odd", "openai", model=_MESSAGES_MARK)
    roots = _roots(3)
    with Ledger.open(tmp_path / "keys.sqlite", MANIFEST) as led:
        cells = build_cells(roots, [odd], 2, led)
    assert all(c.text is None for c in cells)
    run = tmp_path / "run"
    run.mkdir()
    requests = _run([odd, _judge("judge-o", "openai")], roots, run)
    assert any(json.loads(r.body)["model"] == odd.model for r in requests)
