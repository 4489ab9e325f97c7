"""The five-line summary every report opens with (render/_summary.py), and the simulated worlds held
to their names (kinds/_worlds.py): at most five inline-Markdown lines, the verdict/root or the sizes
first, every number a field of the result, and the honest-worlds line exactly when a world misses
its name by more than the stated tolerance."""

from __future__ import annotations

import copy
import json
import math
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from conftest import load_example, write_tiny_study
from verdictpack._cli import _parsed, load_layer
from verdictpack.kinds._base import RunOptions
from verdictpack.kinds._worlds import WORLD_TOLERANCE_H, named_world
from verdictpack.render import render
from verdictpack.render._markdown import fmt_interval, fmt_money, fmt_x
from verdictpack.render._summary import MAX_LINES, SUMMARIES, summary_lines


def _reduced(kind: str) -> dict[str, Any]:
    """The example config of ``kind``, reduced to run in seconds."""
    cfg = load_example(f"{kind}_summarization.json")
    if kind == "verdict":
        cfg["replicates"], cfg["sequential"]["cap_roots"] = 100, 200
    elif kind == "judges":
        cfg["replicates"], cfg["sequential"]["cap_roots"] = 100, 300
    elif kind == "engine":
        cfg["power"]["replicates"], cfg["sequential"]["cap_roots"] = 50, 300
    elif kind == "battery":
        cfg["replicates"], cfg["block_size"], cfg["sequential"]["cap_roots"] = 100, 100, 150
        cfg.pop("true_h_grid", None)
    elif kind == "sizing":
        cfg["simulation"]["replicates"] = 2000
    return cfg


def _run(path: Path) -> Any:
    source, kind, parsed = _parsed(str(path))
    return load_layer(kind).run(parsed, source, RunOptions())


def _run_config(tmp: Path, name: str, cfg: dict[str, Any]) -> Any:
    path = tmp / f"{name}.json"
    path.write_text(json.dumps(cfg))
    return _run(path)


@pytest.fixture(scope="module")
def results(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    tmp = tmp_path_factory.mktemp("summary")
    out = {
        kind: _run_config(tmp, kind, _reduced(kind))
        for kind in ("sizing", "verdict", "judges", "engine", "battery")
    }
    out["study"] = _run(write_tiny_study(tmp / "study"))
    return out


KINDS = ("sizing", "verdict", "judges", "engine", "battery", "study")


@pytest.mark.parametrize("kind", KINDS)
def test_at_most_five_inline_lines_right_under_the_title(
    results: dict[str, Any], kind: str
) -> None:
    r = results[kind]
    lines = summary_lines(r)
    assert 1 <= len(lines) <= MAX_LINES
    for line in lines:
        assert line and "\n" not in line and "|" not in line and not line.startswith(("#", "-"))
        assert line.count("**") % 2 == 0  # bold only, balanced
    report = render(r)["report.md"].splitlines()
    assert report[0].startswith("# verdictpack ")
    assert report[1] == ""
    assert report[2 : 2 + len(lines)] == [f"- {line}" for line in lines]
    assert report[2 + len(lines)] == ""


def test_every_result_type_has_a_summary_and_an_unknown_one_is_refused() -> None:
    from verdictpack.render import RENDERERS

    assert set(SUMMARIES) == set(RENDERERS)

    class NotAResult:
        pass

    with pytest.raises(TypeError, match="NotAResult"):
        summary_lines(NotAResult())


@pytest.mark.parametrize("kind", ["engine", "study"])
def test_a_run_opens_with_its_registered_verdict_root_and_h_interval(
    results: dict[str, Any], kind: str
) -> None:
    r = results[kind]
    first = summary_lines(r)[0]
    reg = r.registered
    assert first.startswith(f"**Registered verdict: {reg.verdict}**")
    if reg.roots_at_verdict:
        assert f"at root {reg.roots_at_verdict:,}" in first
    assert f"h-interval {fmt_interval(reg.h_interval)}" in first
    assert f"against the threshold h = {fmt_x(reg.threshold_h)}" in first


def test_the_engine_lines_carry_its_fields(results: dict[str, Any]) -> None:
    r = results["engine"]
    lines = summary_lines(r)
    evidence = next(x for x in lines if x.startswith("Evidence:"))
    assert "**simulated world**" in evidence and r.evidence_source in evidence
    assert f"true h {fmt_x(r.truth_true_h)} (closed form" in evidence
    total = next(c for c in r.costs if c.line == "total")
    cost = next(x for x in lines if x.startswith("Cost of this run:"))
    assert cost.startswith(f"Cost of this run: {fmt_money(total.cost)}")
    assert f"{r.roots_run:,} of a cap of {r.effective_cap:,} roots" in cost
    # the planning effect: the smallest true h above the threshold (not the boundary itself)
    thr = r.construct.governing_threshold_h
    plan = min(
        (sc for sc in r.power if sc.effect_exists and sc.true_h > thr + WORLD_TOLERANCE_H),
        key=lambda sc: sc.true_h,
    )
    e = plan.route("eprocess", r.construction)
    planning = next(x for x in lines if x.startswith("Planning:"))
    assert f"at true h {fmt_x(plan.true_h)} (scenario `{plan.scenario}`)" in planning
    p, mcse = float(e.p_verdict_issued.value), e.p_verdict_issued.mcse
    assert f"{p:.4f} of the time (simulated, MC s.e. {mcse:.4f})" in planning


def test_the_sizing_opens_with_its_sizes(results: dict[str, Any]) -> None:
    r = results["sizing"]
    first = summary_lines(r)[0]
    assert first.startswith("**Sizes**")
    design = r.design_points[0].name
    for a in r.arms:
        s = next(x for x in a.sizes if x.design == design)
        n = getattr(s, "n", None) or getattr(s, "n_per_group", None)
        if n is None:
            n = s.stable_n if s.design_uses.startswith("stable") else s.first_n
        assert f"`{a.name}` {int(n.value)} {a.unit}" in first
    assert any(line.startswith("Cost: none") for line in summary_lines(r))


@pytest.mark.parametrize("kind", ["verdict", "battery", "judges"])
def test_a_design_says_its_evidence_is_simulated(results: dict[str, Any], kind: str) -> None:
    r = results[kind]
    lines = summary_lines(r)
    assert str(r.cap_roots) in lines[0] or f"{r.cap_roots:,}" in lines[0]
    assert any("**simulated worlds only**" in x for x in lines)


def test_the_study_names_its_data_and_cost_with_currency(results: dict[str, Any]) -> None:
    r = results["study"]
    lines = summary_lines(r)
    assert any(x.startswith(f"Evidence: {r.evidence_source}") for x in lines)
    total = next(c for c in r.costs if c.route == "to the registered verdict" and c.line == "total")
    cost = f"Cost to the registered verdict: {fmt_money(total.cost)} {r.currency} for "
    assert any(x.startswith(cost) for x in lines)


# ----------------------------------------------------------------------------------------------
# honest worlds
# ----------------------------------------------------------------------------------------------


def test_named_world_departs_only_beyond_the_tolerance() -> None:
    tol = WORLD_TOLERANCE_H
    assert not named_world("w", "null", 0.0, tol * 0.99).departs
    assert not named_world("w", "null", 0.0, -tol * 0.99).departs
    assert named_world("w", "null", 0.0, -tol * 1.01).departs
    assert named_world("w", "null", 0.3, 0.3 + tol * 1.5).departs
    # a floor: above it never departs, below it by more than the tolerance does
    assert not named_world("w", "effect present", 0.3, 0.9, at_least=True).departs
    assert not named_world("w", "effect present", 0.3, 0.3 - tol / 2, at_least=True).departs
    assert named_world("w", "effect present", 0.3, 0.2, at_least=True).departs
    w = named_world("w", "null", 0.0, -0.136)
    assert w.true_h.basis == "closed_form" and w.tolerance == tol


def _worlds_line(lines: tuple[str, ...]) -> list[str]:
    return [x for x in lines if x.startswith("Simulated worlds:")]


@pytest.mark.parametrize("kind", ["verdict", "battery", "judges"])
def test_the_worlds_line_appears_exactly_when_a_world_departs(
    results: dict[str, Any], kind: str
) -> None:
    r = results[kind]
    on_name = tuple(
        named_world(w.where, w.scenario, w.named_h, w.named_h + WORLD_TOLERANCE_H / 2)
        for w in r.worlds
    )
    assert r.worlds
    assert _worlds_line(summary_lines(replace(r, worlds=on_name))) == []
    off = (
        named_world(on_name[0].where, on_name[0].scenario, 0.0, -0.136),
        *on_name[1:],
    )
    (line,) = _worlds_line(summary_lines(replace(r, worlds=off)))
    assert f"**1 of {len(off)} not where their names say**" in line
    assert f"{off[0].where} at true h -0.1360 (named 0.0000)" in line
    assert f"tolerance {fmt_x(WORLD_TOLERANCE_H)}" in line
    report = render(replace(r, worlds=off))["report.md"]
    assert "## Simulated worlds against their names" in report
    assert "**no: not where its name says**" in report


def test_the_engine_says_when_its_own_world_misses_its_name(results: dict[str, Any]) -> None:
    r = results["engine"]
    truth = r.worlds[0]
    assert truth.where.startswith("the proof run's world")
    moved = replace(truth, true_h=replace(truth.true_h, value=truth.named_h - 0.2), departs=True)
    lines = summary_lines(replace(r, worlds=(moved, *r.worlds[1:])))
    assert "**not where its name says**" in next(x for x in lines if x.startswith("Evidence:"))
    original = next(x for x in summary_lines(r) if x.startswith("Evidence:"))
    assert ("**not where its name says**" in original) == truth.departs


def test_noisy_judges_pull_a_null_world_off_its_name(tmp_path: Path) -> None:
    """The issue's case: a human baseline of 0.64 and noisy judges at it put the "effect absent"
    world near h −0.14; the summary names it with its true h (closed form)."""
    cfg = _reduced("judges")
    cfg["construct"]["human_baseline_rate"] = 0.64
    comp = copy.deepcopy(cfg["compositions"][0])
    comp["name"] = "noisy"
    for j in comp["judges"]:
        j["baseline_rate"], j["noise"] = 0.64, 0.5
    cfg["compositions"] = [comp]
    r = _run_config(tmp_path, "judges64", cfg)
    absent = next(w for w in r.worlds if w.where.endswith("effect absent"))
    # closed form: each judge at 0.5 + (1 − 0.5)(0.64 − 0.5) = 0.57
    expected = 2 * math.asin(math.sqrt(0.57)) - 2 * math.asin(math.sqrt(0.64))
    assert float(absent.true_h.value) == pytest.approx(expected, abs=1e-12)
    assert absent.departs and absent.named_h == 0.0
    assert float(absent.true_h.value) == r.compositions[0].effect_absent.true_h
    (line,) = _worlds_line(summary_lines(r))
    assert f"composition `noisy`, effect absent at true h {fmt_x(expected)} (named 0.0000)" in line


def test_the_judges_example_flags_exactly_its_departing_worlds(results: dict[str, Any]) -> None:
    r = results["judges"]
    thr = r.construct.governing_threshold_h
    for c in r.compositions:
        present = next(w for w in r.worlds if w.where == f"composition `{c.name}`, effect present")
        absent = next(w for w in r.worlds if w.where == f"composition `{c.name}`, effect absent")
        assert present.departs == (c.effect_present.true_h < thr - WORLD_TOLERANCE_H)
        assert absent.departs == (abs(c.effect_absent.true_h) > WORLD_TOLERANCE_H)
    assert len(r.worlds) == 2 * len(r.compositions)


def test_the_results_carry_the_worlds(results: dict[str, Any]) -> None:
    data = json.loads(render(results["verdict"])["results.json"])
    assert [w["scenario"] for w in data["worlds"]] == [s["scenario"] for s in data["scenarios"]]
    assert all(w["true_h"]["basis"] == "closed_form" for w in data["worlds"])
