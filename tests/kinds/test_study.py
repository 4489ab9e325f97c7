"""The study kind end to end through the command line, on small study folders built here."""

from __future__ import annotations

import csv
import hashlib
import io
import json
from pathlib import Path
from typing import Any

import pytest

from conftest import load_example, write_tiny_study
from verdictpack._cli import main
from verdictpack._rng import stream
from verdictpack.evidence._order import registered_order
from verdictpack.simulate._export import judgments_from_evidence, pairs_jsonl, readings_from_audit
from verdictpack.simulate._human import simulate_reader_audit
from verdictpack.stimuli._stimulus import Stimulus

OUTPUTS = {
    "report.md",
    "results.json",
    "verdict.json",
    "evidence.jsonl",
    "judgments.csv",
    "reader_audit.csv",
    "root_order.txt",
    "validity_report.json",
    "judges.json",
    "fitted_panel.json",
    "cost_comparison.csv",
    "provenance.json",
}
JUDGES = ("ja", "jb")
SEED = 7


def _pair(i: int) -> dict[str, str]:
    return {
        "id": f"p{i:03d}",
        "treatment": f"The council in Oslo approved the budget of {1000 + i} crowns quickly.",
        "null_partner": f"The council in Oslo approved the budget of {1000 + i} crowns rapidly.",
    }


# refused by the content gate: the number changes between the two texts
REFUSED = {
    "id": "bad1",
    "treatment": "The council approved 5 crowns.",
    "null_partner": "The council approved 6 crowns.",
}


def make_study(
    folder: Path,
    n: int = 30,
    m_rate: float = 1.0,
    h_rate: float = 0.0,
    sub: str = "",
    config: dict[str, Any] | None = None,
) -> Path:
    """A study folder: pairs (n admitted, one refused), a judgment table, double readings and
    the config; data files in ``folder/sub``. Returns the config's path."""
    data = folder / sub if sub else folder
    data.mkdir(parents=True, exist_ok=True)
    pairs = [_pair(i) for i in range(n)] + [REFUSED]
    (data / "pairs.jsonl").write_text("".join(json.dumps(p) + "\n" for p in pairs))
    rng = stream(SEED, "tests/study/judgments")
    rows = ["root_id,rater_id,rater_kind,order,choice,trial"]
    for p in pairs:
        for j in JUDGES:
            for o in ("treatment_first", "null_first"):
                c = "treatment" if rng.random() < m_rate else "null_partner"
                rows.append(f"{p['id']},{j},model,{o},{c},0")
        for k in range(2):
            c = "treatment" if rng.random() < h_rate else "null_partner"
            rows.append(f"{p['id']},human-{k},human,unknown,{c},0")
    (data / "judgments.csv").write_text("\n".join(rows) + "\n")
    readings = ["root_id,reader_id,category"]
    for i in range(20):
        c = "treatment" if i % 2 else "null_partner"
        readings += [f"a{i},r1,{c}", f"a{i},r2,{c}"]
    (data / "readings.csv").write_text("\n".join(readings) + "\n")
    engine = load_example("engine_summarization.json")
    prefix = f"{sub}/" if sub else ""
    cfg: dict[str, Any] = {
        "kind": "study",
        "seed": SEED,
        "construct": engine["construct"],
        "sequential": engine["sequential"],
        "panel": {"name": "two judges", "judges": [{"name": j} for j in JUDGES]},
        "humans": {"judgments_per_root": 2},
        "data": {
            "stimuli": {
                "path": f"{prefix}pairs.jsonl",
                "mapping": {"id": "id", "treatment": "treatment", "null_partner": "null_partner"},
            },
            "judgments": [{"format": "table", "path": f"{prefix}judgments.csv"}],
            "reader_audit": {"path": f"{prefix}readings.csv", "kappa_min": 0.6},
        },
        "gates": {"length_tolerance": 0.1, "max_diff_tokens": 3},
        "planning": {"replicates": 100, "max_extra_roots": 40},
    }
    if config:
        for key, value in config.items():
            cfg[key] = value
    path = folder / "config.json"
    path.write_text(json.dumps(cfg, indent=1))
    return path


def _run(config: Path, out: Path) -> int:
    return main([str(config), "--out", str(out), "--quiet"])


def _json(path: Path) -> Any:
    return json.loads(path.read_text())


@pytest.fixture(scope="module")
def done(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    folder = tmp_path_factory.mktemp("study")
    cfg = make_study(folder)
    out = folder / "out"
    assert _run(cfg, out) == 0
    return folder, out


def test_every_output_file_written(done: tuple[Path, Path]) -> None:
    _, out = done
    assert {p.name for p in out.iterdir()} >= OUTPUTS
    verdict = _json(out / "verdict.json")
    assert verdict["registered"]["verdict"] == "EFFECT_SUPPORTED"
    assert verdict["instrument_valid"] is True
    assert verdict["roots_available"] == 30
    assert verdict["stop_reason"].startswith("verdict reached at root")
    assert _json(out / "results.json")["roots_to_go"] is None
    evidence = (out / "evidence.jsonl").read_text().splitlines()
    assert len(evidence) == 30  # the tracks read on to the end of the data
    assert json.loads(evidence[-1])["after_registered_stop"] is True


def test_root_order_is_the_registered_order_and_sorts_judgments(done: tuple[Path, Path]) -> None:
    _, out = done
    order = (out / "root_order.txt").read_text().splitlines()
    assert tuple(order) == registered_order(SEED, [f"p{i:03d}" for i in range(30)])
    rows = list(csv.DictReader(io.StringIO((out / "judgments.csv").read_text())))
    assert len(rows) == 30 * 6
    rank = {r: k for k, r in enumerate(order)}
    ranks = [rank[r["root_id"]] for r in rows]
    assert ranks == sorted(ranks)
    assert "bad1" not in {r["root_id"] for r in rows}
    evidence = [json.loads(x) for x in (out / "evidence.jsonl").read_text().splitlines()]
    assert [e["root_id"] for e in evidence] == order


def test_refused_pairs_listed(done: tuple[Path, Path]) -> None:
    _, out = done
    v = _json(out / "validity_report.json")
    assert v["gates"]["refused_pairs"] == [{"id": "bad1", "failed": ["content_overlap"]}]
    assert (v["gates"]["total"], v["gates"]["admitted"], v["gates"]["refused"]) == (31, 30, 1)
    assert v["coverage"]["rows_on_refused_roots"] == 6
    assert v["coverage"]["roots_with_rows_refused"] == 1
    assert v["policy"] == {
        "model_observation": "choice",
        "tie": "half",
        "invalid": "bounded",
        "missing": "bounded",
    }


def test_data_file_hashes_in_provenance(done: tuple[Path, Path]) -> None:
    folder, out = done
    files = _json(out / "provenance.json")["settings"]["data_files"]
    assert [(f["role"], f["path"]) for f in files] == [
        ("stimuli", "pairs.jsonl"),
        ("judgments", "judgments.csv"),
        ("reader_audit", "readings.csv"),
    ]
    for f in files:
        assert f["sha256"] == hashlib.sha256((folder / f["path"]).read_bytes()).hexdigest()


def _refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], config: Path, *expected: str
) -> str:
    out = tmp_path / "out"
    assert _run(config, out) == 2
    err = capsys.readouterr().err
    for text in expected:
        assert text in err
    assert "nothing written" in err
    assert not out.exists()
    return err


def test_malformed_judgment_row(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    cfg = make_study(tmp_path / "s")
    p = tmp_path / "s" / "judgments.csv"
    lines = p.read_text().splitlines()
    lines[4] = "p000,ja,model,sideways,treatment,0"
    p.write_text("\n".join(lines) + "\n")
    _refused(tmp_path, capsys, cfg, 'judgments.csv: line 5: received "sideways"')


def test_unknown_root(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    cfg = make_study(tmp_path / "s")
    p = tmp_path / "s" / "judgments.csv"
    n = len(p.read_text().splitlines())
    with p.open("a") as fh:
        fh.write("zz9,ja,model,null_first,treatment,0\n")
    _refused(
        tmp_path,
        capsys,
        cfg,
        f'judgments.csv: line {n + 1}: received "zz9"',
        "a stimulus id of pairs.jsonl",
    )


def test_missing_data_file(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    cfg = make_study(tmp_path / "s")
    (tmp_path / "s" / "readings.csv").unlink()
    _refused(tmp_path, capsys, cfg, "$.data.reader_audit.path", "readings.csv")


def test_absolute_path(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    cfg = make_study(tmp_path / "s")
    data = json.loads(cfg.read_text())
    data["data"]["judgments"][0]["path"] = str(tmp_path / "s" / "judgments.csv")
    cfg.write_text(json.dumps(data))
    _refused(tmp_path, capsys, cfg, "$.data.judgments[0].path", "not an absolute path")


def test_every_file_defect_listed_at_once(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    cfg = make_study(tmp_path / "s")
    p = tmp_path / "s" / "judgments.csv"
    lines = p.read_text().splitlines()
    lines[2] = "p000,jx,model,null_first,treatment,0"
    lines[7] = "p001,ja,human,unknown,treatment,0"
    p.write_text("\n".join(lines) + "\n")
    (tmp_path / "s" / "readings.csv").write_text("root_id,reader_id,category\na1,r1,x\n")
    _refused(
        tmp_path,
        capsys,
        cfg,
        "judgments.csv: line 3",
        "judgments.csv: line 8",
        "readings.csv: line 2",
    )


def test_paths_resolve_against_the_config_folder(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Run from another folder holding a decoy ``data/`` of its own: the config's files win."""
    cfg = make_study(tmp_path / "study", sub="data")
    elsewhere = tmp_path / "elsewhere"
    (elsewhere / "data").mkdir(parents=True)
    (elsewhere / "data" / "judgments.csv").write_text("not,a,table\n")
    monkeypatch.chdir(elsewhere)
    out = tmp_path / "out"
    assert _run(Path("..") / "study" / "config.json", out) == 0
    files = _json(out / "provenance.json")["settings"]["data_files"]
    assert [f["path"] for f in files] == [
        "data/pairs.jsonl",
        "data/judgments.csv",
        "data/readings.csv",
    ]
    want = hashlib.sha256((cfg.parent / "data" / "judgments.csv").read_bytes()).hexdigest()
    assert files[1]["sha256"] == want


def test_inconclusive_when_the_data_run_out(tmp_path: Path) -> None:
    cfg = make_study(tmp_path / "s", n=12, m_rate=0.6, h_rate=0.4)
    out = tmp_path / "out"
    assert _run(cfg, out) == 0
    verdict = _json(out / "verdict.json")
    assert verdict["registered"]["verdict"] == "INCONCLUSIVE"
    assert verdict["stop_reason"] == "the data ran out without a verdict"
    assert verdict["roots_run"] == verdict["roots_available"] == 12
    to_go = _json(out / "results.json")["roots_to_go"]
    assert to_go is not None
    assert (to_go["roots_observed"], to_go["replicates"], to_go["max_extra_roots"]) == (12, 100, 40)
    assert to_go["p_verdict"]["basis"] == "simulated"
    assert 0.0 <= to_go["p_verdict"]["value"] <= 1.0


def test_same_config_same_outputs(done: tuple[Path, Path], tmp_path: Path) -> None:
    folder, out = done
    again = tmp_path / "again"
    assert _run(folder / "config.json", again) == 0
    for name in OUTPUTS - {"provenance.json"}:
        assert (again / name).read_bytes() == (out / name).read_bytes(), name


def test_registered_order_file(tmp_path: Path) -> None:
    ids = [f"p{i:03d}" for i in range(30)]
    order = list(reversed(ids))
    folder = tmp_path / "s"
    folder.mkdir()
    (folder / "order.txt").write_text("\n".join(["bad1", *order]) + "\n")
    cfg = make_study(folder)
    data = json.loads(cfg.read_text())
    data["data"]["root_order"] = "order.txt"
    cfg.write_text(json.dumps(data))
    out = tmp_path / "out"
    assert _run(cfg, out) == 0
    assert (out / "root_order.txt").read_text().splitlines() == order  # refused bad1 left out
    rows = list(csv.DictReader(io.StringIO((out / "judgments.csv").read_text())))
    firsts = list(dict.fromkeys(r["root_id"] for r in rows))
    assert firsts == order
    files = _json(out / "provenance.json")["settings"]["data_files"]
    (entry,) = [f for f in files if f["role"] == "root_order"]
    assert entry["sha256"] == hashlib.sha256((folder / "order.txt").read_bytes()).hexdigest()


def test_order_file_missing_an_admitted_root(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    folder = tmp_path / "s"
    folder.mkdir()
    (folder / "order.txt").write_text("\n".join(f"p{i:03d}" for i in range(29)) + "\n")
    cfg = make_study(folder)
    data = json.loads(cfg.read_text())
    data["data"]["root_order"] = "order.txt"
    cfg.write_text(json.dumps(data))
    _refused(tmp_path, capsys, cfg, "order.txt", "p029", "every admitted root listed")


def test_instrument_invalid_when_readers_disagree(tmp_path: Path) -> None:
    cfg = make_study(tmp_path / "s")
    rng = stream(SEED, "tests/study/readers")
    lines = ["root_id,reader_id,category"]
    for i in range(40):
        a, b = rng.integers(0, 2, 2).tolist()
        lines += [f"a{i},r1,c{a}", f"a{i},r2,c{b}"]
    (tmp_path / "s" / "readings.csv").write_text("\n".join(lines) + "\n")
    out = tmp_path / "out"
    assert _run(cfg, out) == 0
    verdict = _json(out / "verdict.json")
    assert verdict["instrument_valid"] is False
    assert verdict["registered"]["verdict"] == "INSTRUMENT_INVALID"
    assert (out / "evidence.jsonl").read_text() == ""


def test_exported_engine_evidence_round_trips(tmp_path: Path) -> None:
    """Simulated evidence written by simulate._export is read back by the study path: every
    root's M and H in evidence.jsonl are the means of the exported choices."""
    folder = tmp_path / "s"
    cfg = make_study(folder, n=3)  # the config and its folder; the data are replaced below
    rng = stream(SEED, "tests/study/round-trip")
    pairs = [_pair(i) for i in range(25)]
    stimuli = [
        Stimulus(id=p["id"], treatment=p["treatment"], null_partner=p["null_partner"])
        for p in pairs
    ]
    rows = [
        {
            "stimulus_id": s.id,
            "model_choices": {j: rng.integers(0, 2, 2).tolist() for j in JUDGES},
            "human_choices": rng.integers(0, 2, 2).tolist() if k % 3 else [],
        }
        for k, s in enumerate(stimuli)
    ]
    (folder / "pairs.jsonl").write_text(pairs_jsonl(stimuli))
    (folder / "judgments.csv").write_bytes(judgments_from_evidence(rows).to_csv_bytes())
    # 60 roots: the gate is on the kappa lower bound (0.66 here, kappa 0.83; 30 roots give 0.44)
    audit = simulate_reader_audit(60, 0.97, stream(SEED, "tests/study/round-trip-audit"))
    data = json.loads(cfg.read_text())
    (folder / "readings.csv").write_bytes(readings_from_audit(audit).to_csv_bytes())
    data["humans"] = {}
    cfg.write_text(json.dumps(data))
    out = tmp_path / "out"
    assert _run(cfg, out) == 0
    evidence = {
        e["root_id"]: e for e in map(json.loads, (out / "evidence.jsonl").read_text().splitlines())
    }
    assert len(evidence) == 25
    for row in rows:
        e = evidence[row["stimulus_id"]]
        choices = [c for pair in row["model_choices"].values() for c in pair]
        assert e["M"] == sum(choices) / len(choices)
        humans = row["human_choices"]
        assert e["H"] == (sum(humans) / len(humans) if humans else None)


def test_forked_gates_and_page_give_the_bytes_of_an_inline_run(tmp_path: Path) -> None:
    """The gates (and report.html) computed in forked children, as the CLI does on Linux, and
    the same run with every fork refused: every file identical but the wall clock's."""
    import os
    import subprocess
    import sys

    cfg = write_tiny_study(tmp_path / "study")
    env = {k: v for k, v in os.environ.items() if k != "VERDICTPACK_NO_FORK"}
    for name, extra in (("forked", {}), ("inline", {"VERDICTPACK_NO_FORK": "1"})):
        done = subprocess.run(
            [sys.executable, "-m", "verdictpack", str(cfg), "--out", str(tmp_path / name)],
            capture_output=True,
            text=True,
            timeout=120,
            env={**env, **extra},
            check=False,
        )
        assert done.returncode == 0, done.stderr
    a, b = tmp_path / "forked", tmp_path / "inline"
    names = sorted(f.name for f in a.iterdir())
    assert names == sorted(f.name for f in b.iterdir()) and "report.html" in names
    for n in names:
        if n not in ("provenance.json", ".verdictpack-output.json"):
            assert (a / n).read_bytes() == (b / n).read_bytes(), n


def test_gate_counts_survive_pickling() -> None:
    import pickle

    from verdictpack.stimuli._realtext import gate_counts, real_text_gates

    source = "The council met on 3 May to debate the river budget."
    treatment = "The council met on 3 May to debate the river budget today."
    null = "The council met on 3 May to discuss the river budget today."
    stimuli = [
        Stimulus(
            id=f"s{k}", source=source, treatment=treatment, null_partner=null if k % 2 else "x"
        )
        for k in range(6)
    ]
    counts = gate_counts(stimuli, real_text_gates(length_tolerance=0.2, max_diff_tokens=3))
    assert counts.refused and counts.admitted  # both kinds of outcome travel
    back = pickle.loads(pickle.dumps(counts))
    assert back == counts and type(back.refusals) is type(counts.refusals)


# ---------------------------------------------------------------- issue 22: files and inputs


def _validate(config: Path, capsys: pytest.CaptureFixture[str]) -> tuple[int, str]:
    code = main(["validate", str(config)])
    return code, capsys.readouterr().err


@pytest.mark.parametrize("case", ["dotdot", "proc", "symlink-out"])
def test_a_data_path_leaving_the_config_folder_is_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], case: str
) -> None:
    """Issue 22 row 4: ``..`` was accepted, and ``pairs.jsonl -> /proc/self/environ`` made
    validate print the whole environment as the file's first line."""
    cfg = make_study(tmp_path / "s")
    pairs = tmp_path / "s" / "pairs.jsonl"
    if case == "dotdot":
        pairs.rename(tmp_path / "pairs.jsonl")
        data = json.loads(cfg.read_text())
        data["data"]["stimuli"]["path"] = "../pairs.jsonl"
        cfg.write_text(json.dumps(data))
    else:
        target = Path("/proc/self/environ") if case == "proc" else tmp_path / "outside.jsonl"
        if case == "symlink-out":
            pairs.rename(target)
        else:
            pairs.unlink()
        pairs.symlink_to(target)
    code, err = _validate(cfg, capsys)
    assert code == 2
    assert "$.data.stimuli.path" in err and "a regular file inside the config's folder" in err
    assert "pairs.jsonl: line" not in err  # nothing of the file read, nothing of it printed


def test_provenance_hashes_the_bytes_parsed_not_a_second_read(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Issue 22 row 10: the file was hashed by a second read; rewritten in between, provenance
    named bytes that were never analysed."""
    import verdictpack.evidence._files as files

    cfg = make_study(tmp_path / "s")
    judgments = tmp_path / "s" / "judgments.csv"
    parsed_bytes = judgments.read_bytes()
    original = files.read_judgment_file

    def read_then_rewrite(*args: Any, **kwargs: Any) -> Any:
        out = original(*args, **kwargs)
        judgments.write_bytes(parsed_bytes + b"p000,ja,model,null_first,tie,1\n")
        return out

    monkeypatch.setattr(files, "read_judgment_file", read_then_rewrite)
    from verdictpack._cli import _parsed

    source, _, parsed = _parsed(str(cfg))
    judges = [j.name for j in parsed.panel.judges]
    data = files.read_study(parsed.data, judges, parsed.panel.trials, source)
    entry = next(f for f in data.files if f.role == "judgments")
    assert entry.sha256 == hashlib.sha256(parsed_bytes).hexdigest()
    assert entry.bytes == len(parsed_bytes)


def test_a_judgment_root_id_with_spaces_is_refused_at_its_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Issue 22 row 6: the id was read as given (with ``value_maps`` it could even match)."""
    cfg = make_study(tmp_path / "s")
    p = tmp_path / "s" / "judgments.csv"
    lines = p.read_text().splitlines()
    lines[3] = '" p000",ja,model,null_first,treatment,0'
    p.write_text("\n".join(lines) + "\n")
    data = json.loads(cfg.read_text())
    data["data"]["judgments"][0]["value_maps"] = {"root_id": {" p000": "p000"}}
    data["data"]["judgments"].append({"format": "table", "path": "extra.csv"})
    (tmp_path / "s" / "extra.csv").write_text(
        "root_id,rater_id,rater_kind,order,choice,trial\np001\t,ja,model,null_first,tie,1\n"
    )
    cfg.write_text(json.dumps(data))
    code, err = _validate(cfg, capsys)
    assert code == 2
    assert 'extra.csv: line 2: received "p001\\t"' in err
    assert "white space" in err


@pytest.mark.parametrize(
    "readings", ["root_id,reader_id,category\n", "root_id,reader_id,category\na1,r1,treatment\n"]
)
def test_validate_refuses_the_readings_the_run_refuses(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], readings: str
) -> None:
    """Issue 22 row 15: validate passed a reader audit with no double readings (a header
    alone) that the run then refused: both now refuse it by the one call."""
    cfg = make_study(tmp_path / "s")
    (tmp_path / "s" / "readings.csv").write_text(readings)
    code, err = _validate(cfg, capsys)
    assert code == 2
    run_err = _refused(tmp_path, capsys, cfg)
    tail = "; nothing written"
    assert [ln for ln in err.splitlines() if tail not in ln] == [
        ln for ln in run_err.splitlines() if tail not in ln
    ]


def test_a_live_study_on_a_read_only_folder_exits_2_naming_it(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Issue 22 row 8: a read-only mount (EROFS) or an immutable folder (EPERM) was an internal
    error (exit 1) with a traceback's last line; the folder's first write stands for both."""
    import errno
    import os

    from live_helpers import live_study

    from verdictpack.evidence._live_folder import LiveFolder

    study, _ = live_study(tmp_path, "http://127.0.0.1:9/v1")
    out = tmp_path / "live"

    def read_only(self: LiveFolder) -> None:
        raise OSError(errno.EROFS, os.strerror(errno.EROFS), str(self.path / "lock"))

    monkeypatch.setattr(LiveFolder, "_lock", read_only)
    assert main([str(study), "--out", str(out), "--quiet"]) == 2
    err = capsys.readouterr().err
    assert f"--out {out}: the live study's folder cannot be written" in err
    assert "Read-only file system" in err and "internal error" not in err
