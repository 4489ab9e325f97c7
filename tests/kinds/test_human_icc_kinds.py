"""The human sheet through the kinds: a simulated kind's ``icc`` refused below what the stream
correlation gives (exit 2, the JSON path, the lowest ICC), a study's humans' ICC fitted into
fitted_panel.json, judges.json and the report, and ``--plan --sheets`` simulating with it."""

from __future__ import annotations

import json
from pathlib import Path

from conftest import load_example, write_tiny_study
from verdictpack._cli import main
from verdictpack.core._icc import vote_icc


def test_an_icc_below_the_stream_correlations_floor_is_refused(tmp_path: Path, capsys) -> None:
    cfg = load_example("verdict_summarization.json")
    cfg["streams"]["stream_correlation"] = 0.5
    cfg["streams"]["human"]["icc"] = 0.05
    path = tmp_path / "v.json"
    path.write_text(json.dumps(cfg))
    assert main([str(path), "--out", str(tmp_path / "out")]) == 2
    err = capsys.readouterr().err
    assert "$.streams.human.icc" in err and "0.05" in err
    assert f"at least {vote_icc(0.5, 0.25):.6g}" in err and "Traceback" not in err
    assert not (tmp_path / "out").exists()


def test_a_study_fits_the_humans_icc(tmp_path: Path) -> None:
    """The tiny study's two humans agree on every root: ICC 1, its interval [1, 1]; one human
    per root gives no estimate, and says why."""
    study = write_tiny_study(tmp_path / "study")
    config = json.loads(study.read_text())
    config["planning"] = {"replicates": 100, "max_extra_roots": 40}
    study.write_text(json.dumps(config))
    out = tmp_path / "out"
    assert main([str(study), "--out", str(out), "--quiet"]) == 0
    fitted = json.loads((out / "fitted_panel.json").read_text())
    icc = fitted["human_icc"]
    assert icc["icc"] == 1.0 and icc["ci"] == [1.0, 1.0]
    assert icc["roots"] == 40 and icc["votes"] == 80
    assert json.loads((out / "judges.json").read_text())["human_icc"] == icc
    assert (
        "Humans' between-root ICC 1.000 [1.000, 1.000] on 40 roots"
        in (out / "report.md").read_text()
    )
    assert main(["audit", str(out), "--config", str(study)]) == 0
    judgments = study.parent / "data" / "judgments.csv"
    rows = judgments.read_text().splitlines()
    judgments.write_text("\n".join(r for r in rows if ",h2," not in r) + "\n")
    assert main([str(study), "--out", str(tmp_path / "one"), "--quiet"]) == 0
    one = json.loads((tmp_path / "one" / "fitted_panel.json").read_text())["human_icc"]
    assert one["icc"] is None and one["roots"] == 0 and "at least 10" in one["reason"]


def test_plan_simulates_the_humans_with_the_fitted_icc(tmp_path: Path, capsys) -> None:
    study = write_tiny_study(tmp_path / "study")
    config = json.loads(study.read_text())
    for judge in config["panel"]["judges"]:
        judge["endpoint"] = {
            "base_url": "http://127.0.0.1:9/v1",  # nothing listens: --plan must not call
            "model": judge["name"],
            "price": {"per_call": 0.002},
        }
    config["sequential"]["cap_roots"] = 40
    config["planning"] = {"bets": ["grid"]}  # the grid alone: this test is about the ICC_H
    study.write_text(json.dumps(config))
    judges = [{"name": n, "baseline_rate": 0.5, "lean_h": 0.25} for n in ("judge-a", "judge-b")]
    sheets = {"panel": {"name": "fitted", "latent_correlation": 0.2, "judges": judges}}
    path = tmp_path / "fitted_panel.json"
    outs = []
    for icc in (None, {"icc": 0.6, "ci": [0.4, 0.8], "roots": 40}):
        if icc is not None:
            sheets["human_icc"] = icc
        path.write_text(json.dumps(sheets))
        assert main([str(study), "--plan", "--sheets", str(path)]) == 0
        outs.append(capsys.readouterr().out)
    assert "ICC" not in outs[0]
    assert "the humans' between-root ICC 0.600, fitted with the sheets" in outs[1]
    tables = [o[o.index("One cap") :] for o in outs]  # the routes, simulated
    assert tables[0] != tables[1]


def test_without_an_icc_a_simulated_run_is_byte_identical_to_the_committed_one(
    tmp_path: Path,
) -> None:
    """No ``human.icc``: no V is drawn, the engine example's outputs are the committed bytes
    (provenance.json's wall clock aside)."""
    from conftest import EXAMPLES
    from verdictpack.verify._seal import compare_folders

    out = tmp_path / "engine_summarization"
    assert main([str(EXAMPLES / "engine_summarization.json"), "--out", str(out), "--quiet"]) == 0
    assert compare_folders(EXAMPLES / "outputs" / "engine_summarization", out) == []
