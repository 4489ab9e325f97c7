"""Simulated worlds held to their names: where a named world really sits (closed form).

A simulated world is named for what it is meant to be -- ``null`` (h = 0), the registered
alternative (h at the threshold), ``above_threshold h=0.45``, the judges kind's "effect present"
(at or above the threshold) -- but the judges' sheets decide where it sits: noisy judges pull the
panel toward 0.5, so with a human baseline of 0.64 a "null" world sits at h −0.136. Each kind that
simulates named worlds lists them as :class:`NamedWorld` entries (its ``worlds`` field): the h its
name says, the world's true h (closed form, φ(μ_M) − φ(μ_H) from the sheets, the same number its
operating characteristics carry) and whether it departs from its name by more than
:data:`WORLD_TOLERANCE_H`. The reports say so in their summary and detail; the self-audit
re-derives each entry from the scenario it names.

Shared by the kinds (like ``_base``); not a kind itself.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from verdictpack._results import Quantity, closed_form
from verdictpack.simulate._operating import ScenarioOC

__all__ = [
    "WORLD_TOLERANCE_H",
    "NamedWorld",
    "engine_worlds",
    "named_world",
    "oc_world",
    "scenario_named_h",
]

# A world departs from its name when its true h differs from the named h by more than this
# (Cohen's h; a tenth of the smallest effect Cohen calls "small", and above the reports' 4-decimal
# printing): below it the world sits where its name says.
WORLD_TOLERANCE_H = 0.01


@dataclass(frozen=True)
class NamedWorld:
    """One simulated world against its name.

    ``where`` names it in the report (e.g. ``power scenario `null```); ``named_h`` is the h its name
    says -- exactly (``at_least`` false) or as a floor (``at_least`` true: an effect-present world
    claims h ≥ the threshold); ``true_h`` is the world's true h (closed form, from the sheets);
    ``departs`` is whether it misses its name by more than ``tolerance``."""

    where: str
    scenario: str
    named_h: float
    at_least: bool
    true_h: Quantity
    tolerance: float
    departs: bool


def named_world(
    where: str, scenario: str, named_h: float, true_h: float, *, at_least: bool = False
) -> NamedWorld:
    """The entry for one world: ``true_h`` (closed form) against ``named_h``."""
    gap = named_h - true_h if at_least else abs(true_h - named_h)
    return NamedWorld(
        where=where,
        scenario=scenario,
        named_h=float(named_h),
        at_least=at_least,
        true_h=closed_form(float(true_h)),
        tolerance=WORLD_TOLERANCE_H,
        departs=gap > WORLD_TOLERANCE_H,
    )


def scenario_named_h(name: str, threshold: float, truth: Any) -> float | None:
    """The h a :func:`~verdictpack.simulate._judges.make_scenario` world's name says (None for a
    confounded world, whose name states no h). ``truth`` carries ``true_h`` and ``stress_base``
    (an engine ``truth`` block or a battery scenario)."""
    if name == "correlated_stress":
        base = getattr(truth, "stress_base", None) or "registered_alternative"
        return threshold if base == "registered_alternative" else 0.0
    named: dict[str, float | None] = {
        "null": 0.0,
        "registered_alternative": threshold,
        "above_threshold": getattr(truth, "true_h", None),
    }
    return named.get(name)


def engine_worlds(
    cfg: Any,
    threshold: float,
    truth_h: float,
    power: Sequence[ScenarioOC],
    arms: Sequence[Any],
) -> tuple[NamedWorld, ...]:
    """The engine's named worlds: the proof run's (``cfg.truth``, at true h ``truth_h``), the
    power report's (``cfg.power.above_threshold_h`` names its above-threshold worlds) and the
    unshifted confound arms' (a shifted arm's name states no h)."""
    t = cfg.truth
    truth_named = scenario_named_h(t.scenario, threshold, t)
    worlds = []
    if truth_named is not None:
        worlds.append(
            named_world(f"the proof run's world `{t.scenario}`", t.scenario, truth_named, truth_h)
        )
    by_name = {"null": 0.0, "registered_alternative": threshold}
    by_name.update({f"above_threshold h={h:g}": h for h in cfg.power.above_threshold_h})
    for sc in power:
        h = by_name.get(sc.scenario)
        if h is not None:
            worlds.append(named_world(f"power scenario `{sc.scenario}`", sc.scenario, h, sc.true_h))
    for arm in arms:
        oc = arm.outcome
        if oc is not None and oc.model_shift_h == 0.0 and oc.effect_scale == 0.0:
            worlds.append(named_world(f"confound arm `{oc.scenario}`", oc.scenario, 0.0, oc.true_h))
    return tuple(worlds)


def oc_world(
    where: str, oc: ScenarioOC, named_h: float | None, *, at_least: bool = False
) -> list[NamedWorld]:
    """The entry of one operating-characteristics world (none when its name states no h)."""
    if named_h is None:
        return []
    return [named_world(where, oc.scenario, named_h, oc.true_h, at_least=at_least)]
