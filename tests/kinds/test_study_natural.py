"""A researcher's own data as they hold it: a study without a reader audit, gates switched off by
name, natural pairs (two texts per pair, the treatment named per pair by a column or a rule)."""

from __future__ import annotations

import csv
import io
import json
from pathlib import Path
from typing import Any

import pytest
from test_study import make_study

from verdictpack._cli import main

# what a natural-pairs judgment file says in the pair's own terms, read as if side a held the
# treatment (docs/study.md)
SIDE_MAPS = {
    "choice": {"a": "treatment", "b": "null_partner"},
    "order": {"a": "treatment_first", "b": "null_first"},
}


def _run(config: Path, out: Path) -> None:
    assert main([str(config), "--out", str(out), "--quiet"]) == 0


def _edit(config: Path, change: Any) -> None:
    cfg = json.loads(config.read_text())
    change(cfg)
    config.write_text(json.dumps(cfg, indent=1))


def test_no_reader_audit_and_a_gate_off_are_said_never_passed(tmp_path: Path) -> None:
    cfg = make_study(tmp_path)

    def change(c: dict[str, Any]) -> None:
        c["data"]["reader_audit"] = "none"
        c["gates"] = {"off": ["length_match"], "max_diff_tokens": 3}

    _edit(cfg, change)
    out = tmp_path / "out"
    _run(cfg, out)
    res = json.loads((out / "results.json").read_text())
    assert (res["audit_status"], res["audit"], res["instrument_valid"]) == ("not_run", None, None)
    assert res["gates"]["off"] == ["length_match"]
    assert "length_match" not in res["gates"]["gates"]
    assert res["registered"]["verdict"] != "INSTRUMENT_INVALID"
    report = (out / "report.md").read_text()
    first = report.splitlines()[2]  # the summary's verdict line
    assert "instrument not validated (no reader audit)" in first
    assert "gates not applied (switched off): length_match" in report.split("\n\n")[1]
    assert "| length_match | not applied (switched off) |" in report
    for name in ("report.md", "report.html", "results.json", "validity_report.json"):
        assert "passed" not in (out / name).read_text().lower(), name
    assert "not validated" in (out / "report.html").read_text()
    assert main(["audit", str(out), "--config", str(cfg)]) == 0


def test_validate_refuses_a_missing_reader_audit_naming_none(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    cfg = make_study(tmp_path)
    _edit(cfg, lambda c: c["data"].pop("reader_audit"))
    assert main(["validate", str(cfg)]) == 2
    err = capsys.readouterr().err
    assert "$.data.reader_audit" in err and '"none"' in err and "Traceback" not in err


def _side_rows(text: str, treated: dict[str, str]) -> str:
    """The canonical judgments of a minimal-pairs study told in the pair's sides: which side
    was shown first and which was chosen (a human's order stays unknown)."""
    other = {"a": "b", "b": "a"}
    out = io.StringIO()
    rows = list(csv.DictReader(io.StringIO(text)))
    writer = csv.DictWriter(out, fieldnames=[*rows[0], "shown_first", "picked"])
    writer.writeheader()
    for r in rows:
        t = treated[r["root_id"]]
        order = {"treatment_first": t, "null_first": other[t]}.get(r["order"], "unknown")
        picked = {"treatment": t, "null_partner": other[t]}.get(r["choice"], r["choice"])
        writer.writerow({**r, "order": "", "choice": "", "shown_first": order, "picked": picked})
    return out.getvalue()


def _naturalise(folder: Path, treated: dict[str, str], stimuli: dict[str, Any]) -> None:
    """Rewrite make_study's pairs and judgments in ``folder`` as natural pairs: side a or b
    holds the treatment as ``treated`` says; the config reads them by ``stimuli``."""
    pairs = [json.loads(line) for line in (folder / "pairs.jsonl").read_text().splitlines()]
    lines = []
    for p in pairs:
        t, n = p["treatment"], p["null_partner"]
        a, b = (t, n) if treated[p["id"]] == "a" else (n, t)
        side = "first" if treated[p["id"]] == "a" else "second"
        lines.append(json.dumps({"pair": p["id"], "answer_a": a, "answer_b": b, "better": side}))
    (folder / "pairs.jsonl").write_text("\n".join(lines) + "\n")
    judged = folder / "judgments.csv"
    judged.write_text(_side_rows(judged.read_text(), treated))

    def change(c: dict[str, Any]) -> None:
        c["data"]["stimuli"] = {"path": "pairs.jsonl", **stimuli}
        c["data"]["judgments"] = [
            {
                "format": "table",
                "path": "judgments.csv",
                "mapping": {"order": "shown_first", "choice": "picked"},
                "value_maps": SIDE_MAPS,
            }
        ]

    _edit(folder / "config.json", change)


_SAME = ("registered", "extension", "comparison", "all_data", "coverage", "estimate", "audit")


def _same_study(minimal: Path, natural: Path, keys: tuple[str, ...] = _SAME) -> None:
    a = json.loads((minimal / "results.json").read_text())
    b = json.loads((natural / "results.json").read_text())
    for key in keys:
        assert a[key] == b[key], key
    assert a["registered"]["verdict"] == "EFFECT_SUPPORTED"
    for name in ("judgments.csv", "evidence.jsonl", "root_order.txt"):
        assert (minimal / name).read_bytes() == (natural / name).read_bytes(), name


def test_natural_pairs_with_a_treatment_column_read_as_the_minimal_pairs(tmp_path: Path) -> None:
    make_study(tmp_path / "minimal")
    _run(tmp_path / "minimal" / "config.json", tmp_path / "out-minimal")
    folder = tmp_path / "natural"
    make_study(folder)
    ids = [json.loads(x)["id"] for x in (folder / "pairs.jsonl").read_text().splitlines()]
    treated = {rid: "ab"[k % 2] for k, rid in enumerate(ids)}
    _naturalise(
        folder,
        treated,
        {
            "mapping": {"id": "pair", "a": "answer_a", "b": "answer_b"},
            "treatment_column": "better",
            "treatment_values": {"first": "a", "second": "b"},
        },
    )
    _run(folder / "config.json", tmp_path / "out-natural")
    _same_study(tmp_path / "out-minimal", tmp_path / "out-natural")
    assert main(["audit", str(tmp_path / "out-natural")]) == 0


def test_natural_pairs_under_the_longer_words_rule(tmp_path: Path) -> None:
    """The treatment is the longer text, whichever side it is on; a tie names none and is
    refused by the treatment_rule gate (counted and listed, never silently dropped)."""

    def lengthen(c: dict[str, Any]) -> None:
        c["gates"] = {"off": ["length_match", "content_overlap", "diff_budget"]}

    for name in ("minimal", "natural"):
        make_study(tmp_path / name)
        folder = tmp_path / name
        pairs = [json.loads(x) for x in (folder / "pairs.jsonl").read_text().splitlines()]
        for p in pairs[:-1]:  # the last pair (5 vs 6 crowns) is a tie in words
            p["treatment"] += " Everyone agreed."
        if name == "minimal":
            pairs = pairs[:-1]
        (folder / "pairs.jsonl").write_text("".join(json.dumps(p) + "\n" for p in pairs))
        _edit(folder / "config.json", lengthen)
    ids = [
        json.loads(x)["id"] for x in (tmp_path / "natural/pairs.jsonl").read_text().split("\n")[:-1]
    ]
    treated = {rid: "ba"[k % 2] for k, rid in enumerate(ids)}
    _naturalise(
        tmp_path / "natural",
        treated,
        {
            "mapping": {"id": "pair", "a": "answer_a", "b": "answer_b"},
            "treatment_rule": "longer_words",
        },
    )
    # the minimal study holds no judgment of the tied pair (its root is not in its pairs file)
    judged = tmp_path / "minimal" / "judgments.csv"
    judged.write_text("".join(x for x in judged.read_text().splitlines(True) if "bad1" not in x))
    _run(tmp_path / "minimal" / "config.json", tmp_path / "out-minimal")
    _run(tmp_path / "natural" / "config.json", tmp_path / "out-natural")
    # the natural study's coverage counts the tied pair's rows as left out
    _same_study(tmp_path / "out-minimal", tmp_path / "out-natural", _SAME[:4] + _SAME[5:])
    gates = json.loads((tmp_path / "out-natural" / "results.json").read_text())["gates"]
    assert gates["gates"][-1] == "treatment_rule"
    assert (gates["refused"], gates["first_failing"]["treatment_rule"]) == (1, 1)
    validity = json.loads((tmp_path / "out-natural" / "validity_report.json").read_text())
    assert validity["gates"]["refused_pairs"] == [{"id": "bad1", "failed": ["treatment_rule"]}]


def test_a_treatment_side_not_a_or_b_is_refused_at_its_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    make_study(tmp_path)
    ids = [json.loads(x)["id"] for x in (tmp_path / "pairs.jsonl").read_text().splitlines()]
    stimuli = {
        "mapping": {"id": "pair", "a": "answer_a", "b": "answer_b"},
        "treatment_column": "better",
        "treatment_values": {"first": "a", "second": "b"},
    }
    _naturalise(tmp_path, dict.fromkeys(ids, "a"), stimuli)
    pairs = tmp_path / "pairs.jsonl"
    pairs.write_text(pairs.read_text().replace('"better": "first"', '"better": "left"', 1))
    assert main(["validate", str(tmp_path / "config.json")]) == 2
    err = capsys.readouterr().err
    assert "pairs.jsonl: line 1: received \"left\"; expected a treatment side in 'better'" in err
