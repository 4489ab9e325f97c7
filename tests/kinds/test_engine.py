"""The engine: one config in, the seven output files out, every number traceable."""

from __future__ import annotations

import copy
import json
import math
from pathlib import Path

import numpy as np
import pytest

from conftest import load_example
from verdictpack._cli import main
from verdictpack.render import html_available

OUTPUTS = {
    "verdict.json",
    "evidence.jsonl",
    "cost_comparison.csv",
    "validity_report.json",
    "power_report.json",
    "registered_vs_extension.md",
    "provenance.json",
    "report.md",
    "results.json",
    "stimuli.jsonl",
}


def small_engine() -> dict:
    cfg = copy.deepcopy(load_example("engine_summarization.json"))
    cfg["stimuli"]["candidates"] = 500
    cfg["power"]["replicates"] = 50
    cfg["human"]["baseline"]["replicates"] = 2000
    return cfg


@pytest.fixture(scope="module")
def run(tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("engine")
    cfg = root / "engine.json"
    cfg.write_text(json.dumps(small_engine()))
    out = root / "out"
    assert main([str(cfg), "--out", str(out)]) == 0
    return out


def test_all_outputs_written(run: Path) -> None:
    html = {"report.html"} if html_available() else set()
    assert {p.name for p in run.iterdir()} == OUTPUTS | html | {".verdictpack-output.json"}


def test_two_runs_byte_identical_apart_from_wall_clock(run: Path, tmp_path: Path) -> None:
    cfg = tmp_path / "engine.json"
    cfg.write_text(json.dumps(small_engine()))
    again = tmp_path / "again"
    assert main([str(cfg), "--out", str(again)]) == 0
    for name in OUTPUTS - {"provenance.json"}:
        assert (run / name).read_bytes() == (again / name).read_bytes(), name
    a = json.loads((run / "provenance.json").read_text())
    b = json.loads((again / "provenance.json").read_text())
    assert a.pop("wall_clock") is not None and b.pop("wall_clock") is not None
    assert a == b


def test_evidence_rows_are_consistent(run: Path) -> None:
    rows = [json.loads(x) for x in (run / "evidence.jsonl").read_text().splitlines()]
    verdict = json.loads((run / "verdict.json").read_text())
    assert len(rows) == verdict["roots_run"] >= 1
    for i, row in enumerate(rows, start=1):
        assert row["root"] == i
        choices = [c for pair in row["model_choices"].values() for c in pair]
        assert row["M"] == sum(choices) / len(choices)
        assert row["H"] == sum(row["human_choices"]) / len(row["human_choices"])
    assert rows[-1]["state"]["registered"] == verdict["registered"]["verdict"]


# --- a separately written e-process (no import of verdictpack.core._mixture) --------------------


def _log_e(
    xs: np.ndarray, m: float, lambdas: list[float], weights: list[float], sign: int
) -> float:
    terms = [
        math.log(w) + float(np.sum(np.log1p(sign * lam * (xs - m))))
        for lam, w in zip(lambdas, weights, strict=True)
    ]
    top = max(terms)
    return top + math.log(sum(math.exp(t - top) for t in terms))


def _naive_cs(xs: np.ndarray, alpha: float, lambdas, weights) -> tuple[float, float]:
    """Running-intersection CS the obvious way: the whole history's product at every prefix on a
    grid of candidate means, then bisection inside the deciding grid cells."""
    bound = math.log(1 / alpha)
    grid = np.linspace(0.0, 1.0, 2001)
    lw = np.log(np.asarray(weights))[:, None, None]
    lam = np.asarray(lambdas)[:, None, None]
    diff = xs[None, :, None] - grid[None, None, :]
    out = []
    for sign in (+1, -1):
        logs = np.cumsum(np.log1p(sign * lam * diff), axis=1) + lw  # (K, T, G)
        top = logs.max(axis=0)
        log_e = top + np.log(np.exp(logs - top).sum(axis=0))  # (T, G)
        below = log_e < bound
        ends = []
        for t in range(len(xs)):
            idx = np.flatnonzero(below[t])
            if not idx.size:
                continue
            g = idx[0] if sign > 0 else idx[-1]
            a, b = (grid[max(g - 1, 0)], grid[g]) if sign > 0 else (grid[g], grid[min(g + 1, 2000)])
            for _ in range(60):
                mid = (a + b) / 2
                inside = _log_e(xs[: t + 1], mid, lambdas, weights, sign) < bound
                if sign > 0:
                    a, b = (a, mid) if inside else (mid, b)
                else:
                    a, b = (mid, b) if inside else (a, mid)
            ends.append(a if sign > 0 else b)
        out.append(max(ends, default=0.0) if sign > 0 else min(ends, default=1.0))
    return out[0], out[1]


def _phi(p: float) -> float:
    return 2 * math.asin(math.sqrt(min(max(p, 0.0), 1.0)))


def test_verdict_and_bounds_rebuilt_from_evidence_alone(run: Path) -> None:
    rows = [json.loads(x) for x in (run / "evidence.jsonl").read_text().splitlines()]
    verdict = json.loads((run / "verdict.json").read_text())
    prov = json.loads((run / "provenance.json").read_text())
    results = json.loads((run / "results.json").read_text())
    s = prov["settings"]
    lambdas, weights, a = s["lambdas"], s["weights"], s["per_tail_alpha"]
    reg = verdict["registered"]
    assert reg["construction"] == "hybrid"
    m = np.array([r["M"] for r in rows])
    h = np.array([r["H"] for r in rows])
    # the hybrid split: M and H at a/4 per tail, D at a
    m_lo, m_hi = _naive_cs(m, a / 4, lambdas, weights)
    h_lo, h_hi = _naive_cs(h, a / 4, lambdas, weights)
    d_lo, d_hi = _naive_cs((m - h + 1) / 2, a, lambdas, weights)
    d_lo, d_hi = 2 * d_lo - 1, 2 * d_hi - 1
    for got, want in (
        (reg["model_bounds"], (m_lo, m_hi)),
        (reg["human_bounds"], (h_lo, h_hi)),
        (reg["diff_bounds"], (d_lo, d_hi)),
    ):
        assert got[0] == pytest.approx(want[0], abs=1e-6) and got[0] <= want[0] + 1e-9
        assert got[1] == pytest.approx(want[1], abs=1e-6) and got[1] >= want[1] - 1e-9
    # h-interval: brute force over the polygon
    xs = np.linspace(m_lo, m_hi, 801)
    ys = np.linspace(h_lo, h_hi, 801)
    grid_x, grid_y = np.meshgrid(xs, ys)
    feasible = (grid_x - grid_y >= d_lo - 1e-12) & (grid_x - grid_y <= d_hi + 1e-12)
    f = 2 * np.arcsin(np.sqrt(grid_x)) - 2 * np.arcsin(np.sqrt(grid_y))
    brute_lo, brute_hi = float(f[feasible].min()), float(f[feasible].max())
    assert reg["h_interval"][0] == pytest.approx(brute_lo, abs=5e-3)
    assert reg["h_interval"][0] <= brute_lo + 1e-9
    assert reg["h_interval"][1] >= brute_hi - 1e-9
    threshold = results["construct"]["governing_threshold_h"]
    if reg["verdict"] == "EFFECT_SUPPORTED":
        assert reg["h_interval"][0] >= threshold
        assert brute_lo >= threshold - 5e-3
    elif reg["verdict"] == "BELOW_PRACTICAL_THRESHOLD":
        assert reg["h_interval"][1] < threshold


def test_readers_at_chance_make_the_instrument_invalid(tmp_path: Path) -> None:
    cfg = small_engine()
    cfg["human"]["audit"]["reconstruction_rate"] = 0.5
    cfg["human"]["audit"]["roots"] = 200  # registered: no size can pass readers at chance
    path = tmp_path / "chance.json"
    path.write_text(json.dumps(cfg))
    out = tmp_path / "out"
    assert main([str(path), "--out", str(out)]) == 0
    verdict = json.loads((out / "verdict.json").read_text())
    assert verdict["instrument_valid"] is False
    for track in ("registered", "extension", "comparison"):
        assert verdict[track]["verdict"] == "INSTRUMENT_INVALID"
        assert verdict[track]["h_interval"] is None
    assert (out / "evidence.jsonl").read_text() == ""
    assert verdict["roots_run"] == 0


@pytest.mark.parametrize(
    ("mutate", "path"),
    [
        (lambda c: c["truth"].__setitem__("scenario", "alt"), "$.truth.scenario"),
        (
            lambda c: c["stimuli"].__setitem__("templates", ["summary-framing-clauses"]),
            "$.stimuli.templates",
        ),
        (
            lambda c: c["stimuli"].__setitem__("templates", ["nope", "summary-framing-clauses"]),
            "$.stimuli.templates[0]",
        ),
        (lambda c: c["construct"].__setitem__("direction", "less"), "$.construct.direction"),
        (
            lambda c: c["panel"].__setitem__("latent_correlation", -0.9),
            "$.panel.latent_correlation",
        ),
        (
            lambda c: c["panel"]["judges"][1].__setitem__("name", "frontier-a"),
            "$.panel.judges[1].name",
        ),
    ],
)
def test_engine_refusals_name_the_path(tmp_path, capsys, mutate, path) -> None:
    cfg = small_engine()
    mutate(cfg)
    p = tmp_path / "bad.json"
    p.write_text(json.dumps(cfg))
    assert main([str(p), "--out", str(tmp_path / "out")]) == 2
    err = capsys.readouterr().err
    assert f"{p}: {path}:" in err
    assert not (tmp_path / "out").exists()
