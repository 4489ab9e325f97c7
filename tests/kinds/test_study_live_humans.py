"""Human annotations in a live study: new rows are taken up as their roots are committed; a root
already committed keeps its evidence (a change to its annotations is refused)."""

from __future__ import annotations

import json
from pathlib import Path

from live_helpers import live_study, serve, server_config

from verdictpack._cli import main


def _evidence(out: Path) -> list[dict]:
    text = (out / "report" / "evidence.jsonl").read_text()
    return [json.loads(line) for line in text.splitlines()]


def test_new_annotations_enter_later_roots_and_committed_roots_never_change(
    tmp_path: Path, capsys
) -> None:
    probe, _ = live_study(tmp_path / "probe", "http://127.0.0.1:9/v1")
    with serve(server_config(probe)) as url:
        study, config = live_study(tmp_path / "run", url, concurrency=1)
        judgments = study.parent / "data" / "judgments.csv"
        rows = judgments.read_text().splitlines()
        header, humans = rows[0], rows[1:]
        judgments.write_text(header + "\n")  # no human judgment yet
        config["budget"] = {"judges": 0.0405}  # about ten roots of four calls
        study.write_text(json.dumps(config))
        out = tmp_path / "out"
        assert main([str(study), "--out", str(out), "--quiet"]) == 0
        first = _evidence(out)
        assert first and all(row["H"] is None for row in first)
        done = {row["root_id"] for row in first}
        # annotations arrive for every root: the committed ones' would change their evidence
        judgments.write_text("\n".join([header, *humans]) + "\n")
        config["budget"] = {"judges": 10.0}
        study.write_text(json.dumps(config))
        assert main([str(study), "--out", str(out), "--quiet"]) == 2
        assert "a committed root's evidence cannot change" in capsys.readouterr().err
        # only the roots not yet committed get them: taken up as they are committed
        later = [r for r in humans if r.split(",")[0] not in done]
        judgments.write_text("\n".join([header, *later]) + "\n")
        assert main([str(study), "--out", str(out), "--quiet"]) == 0
        rows_after = _evidence(out)
        assert [r["root_id"] for r in rows_after[: len(first)]] == [r["root_id"] for r in first]
        assert all(r["H"] is None for r in rows_after[: len(first)])
        assert any(r["H"] is not None for r in rows_after[len(first) :])
