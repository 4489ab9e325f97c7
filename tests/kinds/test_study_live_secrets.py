"""Issue 22 row 2: a server that echoes the API key -- in a JSON error, in a text body past
1,000 bytes, as headers written in a body, inside a 200 answer -- never gets any run of 8
consecutive characters of it into a file verdictpack writes (the ledger included), nor onto
stdout or stderr, with or without ``--debug``."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from verdictpack._cli import main

pytest.importorskip("httpx")

from live_helpers import live_study, serve, server_config

KEY = "sk-echo-Q7w9Zt3Lm5Xv2Rb8Nc4Hd6Jf1Kg0Py"
RUNS = [KEY[i : i + 8] for i in range(len(KEY) - 7)]


def _leaks(data: bytes | str) -> list[str]:
    text = data.decode("utf-8", errors="replace") if isinstance(data, bytes) else data
    return [run for run in RUNS if run in text]


@pytest.mark.parametrize("debug", [False, True], ids=["plain", "debug"])
@pytest.mark.parametrize("mode", ["json", "text", "headers", "ok"])
def test_an_echoed_key_leaves_no_8_character_run_anywhere(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    mode: str,
    debug: bool,
) -> None:
    probe, _ = live_study(tmp_path / "probe", "http://127.0.0.1:9/v1", roots=12, cap=12)
    monkeypatch.setenv("VP_TEST_ECHO_KEY", KEY)
    with serve(server_config(probe, echo_key=mode)) as url:
        study, _ = live_study(
            tmp_path / "run", url, roots=12, cap=12, api_key_env="VP_TEST_ECHO_KEY"
        )
        out = tmp_path / "out"
        argv = [str(study), "--out", str(out), *(["--debug"] if debug else [])]
        code = main(argv)
        counts = url.counts()
    captured = capsys.readouterr()
    if mode == "ok":
        # the answers are evidence: kept, with the echoed key blanked
        assert code == 0, captured.err
        assert counts["ok"] > 0
    else:
        assert code == 2, captured.err
        assert "HTTP 401" in captured.err
        assert counts["unauthorized"] > 0
    assert _leaks(captured.out) == [] and _leaks(captured.err) == []
    files = [p for p in sorted(out.rglob("*")) if p.is_file()]
    assert any(p.name == "ledger.sqlite" for p in files)
    for p in files:
        assert _leaks(p.read_bytes()) == [], p


@pytest.mark.parametrize(
    "base_url",
    ["http://user:pa55-w0rd-secret@127.0.0.1:9/v1", "https://tok-en-user-secret@api.test/v1"],
)
def test_credentials_in_base_url_are_refused_by_name(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], base_url: str
) -> None:
    # issue 22 row 16: user info in base_url was stored in the ledger's manifest
    study, _ = live_study(tmp_path / "run", base_url, roots=12, cap=12)
    out = tmp_path / "out"
    for argv in (["validate", str(study)], [str(study), "--out", str(out), "--quiet"]):
        assert main(argv) == 2
        err = capsys.readouterr().err
        assert "$.panel.judges[0].endpoint.base_url" in err and "api_key_env" in err
        assert "secret" not in err and "***@" in err
    assert not out.exists()


def test_a_key_pasted_as_api_key_env_is_refused_and_never_shown(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """api_key_env names a variable; a key pasted there would be echoed in the refusal and
    stored with the study. It is refused by name with its length only, with and without
    --debug, and nothing is written."""
    study, _ = live_study(tmp_path / "run", "http://127.0.0.1:9/v1", roots=12, cap=12)
    config = json.loads(study.read_text())
    config["panel"]["judges"][0]["endpoint"]["api_key_env"] = KEY
    study.write_text(json.dumps(config))
    out = tmp_path / "out"
    for argv in (
        ["validate", str(study)],
        [str(study), "--out", str(out), "--quiet"],
        [str(study), "--out", str(out), "--debug"],
        [str(study), "--plan"],
    ):
        assert main(argv) == 2
        captured = capsys.readouterr()
        assert "$.panel.judges[0].endpoint.api_key_env" in captured.err
        assert f"({len(KEY)} characters, not shown)" in captured.err
        assert _leaks(captured.out) == [] and _leaks(captured.err) == []
    assert not out.exists()


@pytest.mark.parametrize(
    ("base_url", "shown", "expected"),
    [
        (f"http://127.0.0.1:9/v1?key={KEY}", '"http://127.0.0.1:9/v1?***"', "without a query"),
        (f"http://127.0.0.1:9/v1#{KEY}", '"http://127.0.0.1:9/v1#***"', "without a query"),
        ("http://127.0.0.1:9/v1/chat/completions", "/v1/chat/completions", "without /chat/"),
    ],
)
def test_a_base_url_the_run_cannot_call_is_refused_before_anything_is_written(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], base_url: str, shown: str, expected: str
) -> None:
    """validate refuses what the run would refuse, before a ledger stores the URL; a query or
    fragment (where a key may ride) is never shown."""
    study, _ = live_study(tmp_path / "run", base_url, roots=12, cap=12)
    out = tmp_path / "out"
    for argv in (["validate", str(study)], [str(study), "--out", str(out), "--quiet"]):
        assert main(argv) == 2
        err = capsys.readouterr().err
        assert "$.panel.judges[0].endpoint.base_url" in err and expected in err
        assert shown in err and _leaks(err) == []
    assert not out.exists()
