"""What every kind that simulates routes shares: the route design of one construct and panel, and
one scenario simulated under every route, in blocks of :data:`BLOCK_SIZE` replicates.

Lives a floor below the kinds so that no kind imports another (verdict, judges, engine and
battery all build their designs here).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from verdictpack._errors import InputError
from verdictpack.config._blocks import HumanSpec, RoutesSpec, SequentialSettings, fixed_n_defect
from verdictpack.config._compiler import Construct
from verdictpack.simulate._judges import Panel, TruthScenario
from verdictpack.simulate._operating import Job, RouteDesign, ScenarioOC, simulate_scenarios

__all__ = ["BLOCK_SIZE", "route_design", "simulate_scenario"]

# replicates per block of the RNG policy's block streams (verdict, judges and engine runs)
BLOCK_SIZE = 500


def route_design(
    construct: Construct,
    panel: Panel,
    human: HumanSpec,
    sequential: SequentialSettings,
    routes: RoutesSpec,
    fixed_human_touches: int = 0,
    fixed_human_cost: float = 0.0,
) -> RouteDesign:
    fixed_n, defect = fixed_n_defect(construct, routes.fixed_n_power)
    if fixed_n is None:  # configs are refused before the run (route_rules); API callers here
        loc, expected = defect or (("construct",), "a fixed-n design within the bounds")
        parameter, received = {
            "alpha": ("alpha", 2 * construct.per_tail_alpha),
            "fixed_n_power": ("fixed_n_power", routes.fixed_n_power),
        }.get(str(loc[-1]), ("threshold_h", construct.governing_threshold_h))
        raise InputError(parameter, expected, received)
    return RouteDesign(
        construct=construct,
        panel=panel,
        human_judgments_per_root=human.judgments_per_root,
        human_cost_per_judgment=human.cost_per_judgment,
        sequential=sequential,
        sprt_beta=routes.sprt_beta,
        fixed_n=fixed_n,
        fixed_human_touches=fixed_human_touches,
        fixed_human_cost=fixed_human_cost,
        human_icc=human.icc,
    )


def simulate_scenario(
    design: RouteDesign,
    scenario: TruthScenario,
    seed: int,
    purpose: str,
    replicates: int,
    constructions: Sequence[str] | None = None,
    tick: Callable[[int, int], None] | None = None,
) -> ScenarioOC:
    """All routes under one scenario, block by block on the RNG policy's block streams
    (``tick(done, total)`` after each block: progress only)."""
    job = Job(design, scenario, purpose)
    return simulate_scenarios([job], seed, replicates, BLOCK_SIZE, constructions, tick=tick)[0]
