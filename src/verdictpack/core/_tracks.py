"""The three tracks of a sequential run, fed one root at a time, frozen at their verdicts.

Every sequential kind reads the same evidence through three :class:`HTracker`\\ s: the
*registered* track (the registered construction at the governing threshold: its verdict stops
the run), the *extension* track (the same construction at the weaker extension minimum) and the
*comparison* track (the other construction at the governing threshold). :class:`TrackRun` feeds
them (M_i, H_i) pairs in the registered order and freezes each track's state -- verdict, root,
interval and bounds -- the first time it reaches a verdict; it never decides when to stop, which
stays with the caller (the engine stops at the registered verdict; a study on real data also
reads on to the end of the data it already holds, for the interval over all of it).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from types import MappingProxyType

from verdictpack.core._hinterval import classify
from verdictpack.core._mixture import MixtureSpec
from verdictpack.core._tracker import HTracker

__all__ = ["TRACKS", "TrackResult", "TrackRun", "track_state"]

TRACKS = ("registered", "extension", "comparison")


@dataclass(frozen=True)
class TrackResult:
    """One track's verdict: registered, extension, or the comparison construction."""

    track: str
    construction: str
    threshold_h: float
    claim: str
    verdict: str
    roots_at_verdict: int | None
    h_interval: tuple[float, float] | None
    model_bounds: tuple[float, float] | None
    human_bounds: tuple[float, float] | None
    diff_bounds: tuple[float, float] | None
    error_per_side: float


def track_state(
    tracker: HTracker, verdict: str, root: int | None, track: str, claim: str
) -> TrackResult:
    """A track's verdict with the interval and bounds as they stand now."""
    has = tracker.n_roots > 0
    return TrackResult(
        track=track,
        construction=tracker.construction,
        threshold_h=tracker.threshold,
        claim=claim,
        verdict=verdict,
        roots_at_verdict=root,
        h_interval=tracker.h_interval if has else None,
        model_bounds=tracker.model_bounds if has else None,
        human_bounds=tracker.human_bounds if has else None,
        diff_bounds=tracker.diff_bounds if has else None,
        error_per_side=tracker.error_per_side,
    )


class TrackRun:
    """The registered, extension and comparison trackers over one stream of roots.

    ``construction`` is the registered construction and ``other`` the comparison one; every
    tracker runs at the per-tail level ``alpha`` with the bet grid ``spec``. ``claims`` names each
    track's claim (keys :data:`TRACKS`). :meth:`step` consumes one root; ``at_cap`` marks the
    root at which the registered track must decide (INCONCLUSIVE when it cannot).
    """

    def __init__(
        self,
        construction: str,
        other: str,
        alpha: float,
        spec: MixtureSpec,
        threshold_h: float,
        extension_h: float,
        claims: Mapping[str, str],
    ) -> None:
        self.trackers: dict[str, HTracker] = {
            "registered": HTracker(construction, alpha, spec, threshold_h),
            "extension": HTracker(construction, alpha, spec, extension_h),
            "comparison": HTracker(other, alpha, spec, threshold_h),
        }
        self.claims = MappingProxyType({t: claims[t] for t in TRACKS})
        self._verdicts: dict[str, TrackResult] = {}
        self.roots = 0

    @property
    def registered(self) -> HTracker:
        return self.trackers["registered"]

    @property
    def verdicts(self) -> Mapping[str, TrackResult]:
        """The tracks frozen so far, by name."""
        return MappingProxyType(self._verdicts)

    @property
    def stopped(self) -> bool:
        """True once the registered track has its verdict."""
        return "registered" in self._verdicts

    def step(self, m: float, h: float | None, at_cap: bool = False) -> None:
        """Feed one root to every tracker; freeze the tracks reaching a verdict on it."""
        for tracker in self.trackers.values():
            tracker.update(m, h)
        self.roots += 1
        for name, tracker in self.trackers.items():
            if name in self._verdicts:
                continue
            lo, hi = tracker.h_interval
            v = classify(lo, hi, tracker.threshold, at_cap=at_cap and name == "registered")
            if v is not None:
                self._verdicts[name] = track_state(
                    tracker, v.value, self.roots, name, self.claims[name]
                )

    def state_labels(self) -> dict[str, str]:
        """Each track's verdict so far (CONTINUE while it has none)."""
        return {
            name: self._verdicts[name].verdict if name in self._verdicts else "CONTINUE"
            for name in self.trackers
        }

    def results(self, missing: str) -> dict[str, TrackResult]:
        """Every track: its frozen verdict, or its state now labelled ``missing``."""
        out = dict(self._verdicts)
        for name, tracker in self.trackers.items():
            if name not in out:
                out[name] = track_state(tracker, missing, None, name, self.claims[name])
        return {name: out[name] for name in TRACKS}

    def now(self, label: str) -> dict[str, TrackResult]:
        """Every track's interval and bounds over everything fed so far, labelled ``label``."""
        return {
            name: track_state(t, label, None, name, self.claims[name])
            for name, t in self.trackers.items()
        }
