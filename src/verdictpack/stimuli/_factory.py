"""The template generator: candidate stimuli generated as real text, admitted through the gates.

A candidate is a source item (a short passage of content units from the built-in lexicon, plus
optional background sentences that carry no content unit), its *treatment* text (the source
rewritten with the manipulated property, :mod:`._lexicon` templates) and its *null partner*
(the same content, differing from the treatment only in the manipulated property). Each candidate
is a :class:`~verdictpack.stimuli._stimulus.GeneratedStimulus`: the generator's bookkeeping plus
the :class:`~verdictpack.stimuli._stimulus.Stimulus` the gates check.

Generation is deterministic given a ``numpy.random.Generator`` (all draws are taken up front as
arrays). Imperfections are injected at configurable rates (:class:`DefectRates`), so that gates
fail for realistic reasons:

* ``drop_unit``: one content sentence is lost from the rewrite (treatment and null partner alike);
* ``duplicate_fragment``: one rewritten sentence is repeated verbatim (treatment and null alike);
* ``padding``: a filler sentence is added to the treatment only;
* ``extra_difference``: the null partner states a different value for one unit.

:func:`run_factory` generates candidates, checks every gate on every candidate, and admits the
candidates passing all gates.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from verdictpack._errors import InputError
from verdictpack._results import BULK, Quantity, exact
from verdictpack._validate import closed_interval, generator, int_at_least, is_int, nonempty_str
from verdictpack.stimuli._gates import Gate, check_gates
from verdictpack.stimuli._lexicon import DEFAULT_LEXICON, Lexicon, Template
from verdictpack.stimuli._stimulus import GeneratedStimulus, Stimulus

__all__ = [
    "DEFAULT_DEFECT_RATES",
    "NO_DEFECTS",
    "DefectRates",
    "FactoryResult",
    "run_factory",
]


@dataclass(frozen=True)
class DefectRates:
    """Per-candidate probabilities of each injected imperfection (independent; module doc)."""

    drop_unit: float = 0.08
    padding: float = 0.06
    duplicate_fragment: float = 0.05
    extra_difference: float = 0.04

    def __post_init__(self) -> None:
        for name in ("drop_unit", "padding", "duplicate_fragment", "extra_difference"):
            closed_interval(
                f"defect_rates.{name}", getattr(self, name), 0.0, 1.0, "a number in [0.0, 1.0]"
            )

    def as_array(self) -> np.ndarray:
        return np.array(
            [self.drop_unit, self.padding, self.duplicate_fragment, self.extra_difference]
        )


DEFAULT_DEFECT_RATES = DefectRates()
NO_DEFECTS = DefectRates(0.0, 0.0, 0.0, 0.0)


def _render(frame: str, entity: str, phrase: str, value: str, marker: str = "") -> str:
    return " ".join(frame.format(entity=entity, phrase=phrase, value=value, marker=marker).split())


@dataclass(frozen=True)
class FactoryResult:
    """What the factory admitted and why the rest was refused.

    ``gate_failures[g]``: candidates failing gate g (a candidate failing several gates counts in
    each); ``first_failures[g]``: candidates whose first failing gate (in gate order) is g, so
    their sum is ``n_candidates − n_admitted``. ``admission_yield`` = n_admitted / n_candidates.
    """

    family: str
    templates: tuple[str, ...]
    n_candidates: int
    n_admitted: int
    n_rejected: int
    admission_yield: Quantity
    gate_names: tuple[str, ...]
    gate_failures: dict[str, int]
    first_failures: dict[str, int]
    # stimuli.jsonl's records: a file of their own, never in results.json
    admitted: tuple[GeneratedStimulus, ...] = field(metadata=BULK)

    @property
    def stimuli(self) -> tuple[Stimulus, ...]:
        """The admitted stimuli, in admission order (what an evidence source judges)."""
        return tuple(g.stimulus for g in self.admitted)


def _check_templates(templates: Any) -> tuple[Template, ...]:
    if isinstance(templates, (str, Template)) or not isinstance(templates, Sequence):
        raise InputError("templates", "a sequence of at least 2 Template", type(templates).__name__)
    tpls = tuple(templates)
    if len(tpls) < 2:
        raise InputError("templates", "at least 2 templates", len(tpls))
    for t in tpls:
        if not isinstance(t, Template):
            raise InputError("templates", "Template objects", type(t).__name__)
    if len({t.name for t in tpls}) != len(tpls):
        raise InputError("templates", "templates with distinct names", [t.name for t in tpls])
    if len({t.family for t in tpls}) != 1:
        raise InputError("templates", "templates of one family", [t.family for t in tpls])
    return tpls


def run_factory(
    n_candidates: int,
    templates: Sequence[Template],
    gates: Sequence[Gate],
    rng: np.random.Generator,
    defect_rates: DefectRates = DEFAULT_DEFECT_RATES,
    *,
    lexicon: Lexicon = DEFAULT_LEXICON,
    units_per_root: tuple[int, int] = (3, 6),
    background_rate: float = 0.5,
    id_prefix: str = "root",
) -> FactoryResult:
    """Generate ``n_candidates`` candidate stimuli and admit those passing every gate.

    Each candidate: a template (uniform), an entity (uniform), u content units (u uniform in
    ``units_per_root``, distinct attributes, uniform values), a background sentence in the source
    with probability ``background_rate``, markers drawn without replacement within the root (with
    replacement once a template's markers are used up), then the defects of ``defect_rates``
    (drop, extra difference, duplicate, padding -- applied in that order). Candidate i gets the id
    ``f"{id_prefix}-{i:05d}"``; admitted stimuli keep their candidate id. Every gate is checked on
    every candidate. Same Generator state -> same texts and same result.
    """
    n = int_at_least("n_candidates", n_candidates, 1)
    tpls = _check_templates(templates)
    if not isinstance(gates, Sequence) or isinstance(gates, str) or not gates:
        raise InputError("gates", "a non-empty sequence of gates", gates)
    gate_list = check_gates(gates)
    generator("rng", rng)
    if not isinstance(defect_rates, DefectRates):
        raise InputError("defect_rates", "a DefectRates", type(defect_rates).__name__)
    if not isinstance(lexicon, Lexicon):
        raise InputError("lexicon", "a Lexicon", type(lexicon).__name__)
    n_attr = len(lexicon.attributes)
    if (
        not isinstance(units_per_root, (tuple, list))
        or len(units_per_root) != 2
        or not all(is_int(u) for u in units_per_root)
        or not 2 <= units_per_root[0] <= units_per_root[1] <= n_attr
    ):
        raise InputError(
            "units_per_root", f"(lo, hi) integers with 2 <= lo <= hi <= {n_attr}", units_per_root
        )
    bg_rate = closed_interval(
        "background_rate", background_rate, 0.0, 1.0, "a number in [0.0, 1.0]"
    )
    prefix = nonempty_str("id_prefix", id_prefix)
    u_lo, u_hi = int(units_per_root[0]), int(units_per_root[1])

    # all randomness up front, as arrays (one row per candidate)
    n_markers = max(len(t.treatment_markers) for t in tpls)
    tpl_idx = rng.integers(0, len(tpls), size=n)
    ent_idx = rng.integers(0, len(lexicon.entities), size=n)
    n_units = rng.integers(u_lo, u_hi + 1, size=n)
    attr_perm = np.argsort(rng.random((n, n_attr)), axis=1)
    val_draw = rng.integers(0, 1 << 30, size=(n, n_attr))
    marker_keys = rng.random((n, n_markers))
    bg_draw = rng.random(n) < bg_rate
    bg_pick = rng.integers(0, 1 << 30, size=(n, 2))
    defects = rng.random((n, 4)) < defect_rates.as_array()
    defect_pos = rng.integers(0, 1 << 30, size=(n, 5))

    names = [g.name for g in gate_list]
    failures = dict.fromkeys(names, 0)
    first = dict.fromkeys(names, 0)
    admitted: list[GeneratedStimulus] = []
    for i in range(n):
        candidate = _make_candidate(
            i, tpls[int(tpl_idx[i])], lexicon, int(ent_idx[i]), int(n_units[i]),
            attr_perm[i], val_draw[i], marker_keys[i], bool(bg_draw[i]), bg_pick[i],
            defects[i], defect_pos[i], prefix,
        )  # fmt: skip
        ok = True
        stimulus = candidate.stimulus
        for g in gate_list:
            if not g.check(stimulus).passed:
                failures[g.name] += 1
                if ok:
                    first[g.name] += 1
                ok = False
        if ok:
            admitted.append(candidate)
    k = len(admitted)
    return FactoryResult(
        family=tpls[0].family,
        templates=tuple(t.name for t in tpls),
        n_candidates=n,
        n_admitted=k,
        n_rejected=n - k,
        admission_yield=exact(k / n),
        gate_names=tuple(names),
        gate_failures=failures,
        first_failures=first,
        admitted=tuple(admitted),
    )


def _make_candidate(
    index: int,
    tpl: Template,
    lexicon: Lexicon,
    ent: int,
    units: int,
    perm: np.ndarray,
    val_draw: np.ndarray,
    marker_keys: np.ndarray,
    background: bool,
    bg_pick: np.ndarray,
    defects: np.ndarray,
    pos: np.ndarray,
    prefix: str,
) -> GeneratedStimulus:
    entity = lexicon.entities[ent]
    attrs = [int(a) for a in perm[:units]]
    vals = [int(val_draw[a]) % len(lexicon.attributes[a].values) for a in attrs]
    tm = tpl.treatment_markers
    nm = tpl.null_markers
    order = [int(m) for m in np.argsort(marker_keys[: len(tm)])]

    # source passage
    source = [
        _render(
            tpl.source_frame, entity, lexicon.attributes[a].phrase, lexicon.attributes[a].values[v]
        )
        for a, v in zip(attrs, vals, strict=True)
    ]
    if background:
        line = lexicon.background[int(bg_pick[0]) % len(lexicon.background)]
        source.insert(int(bg_pick[1]) % (len(source) + 1), line.format(entity=entity))

    # rewrite slots: (attribute, treatment value, null value, marker index)
    slots = [
        (a, v, v, order[j % len(order)]) for j, (a, v) in enumerate(zip(attrs, vals, strict=True))
    ]
    injected: list[str] = []
    if defects[0] and len(slots) >= 2:  # drop_unit
        del slots[int(pos[0]) % len(slots)]
        injected.append("drop_unit")
    if defects[3]:  # extra_difference: the null partner states another value
        j = int(pos[1]) % len(slots)
        a, v, _, m = slots[j]
        n_vals = len(lexicon.attributes[a].values)
        other = (v + 1 + int(pos[2]) % (n_vals - 1)) % n_vals
        slots[j] = (a, v, other, m)
        injected.append("extra_difference")
    if defects[2]:  # duplicate_fragment: a rewritten sentence repeated verbatim
        j = int(pos[3]) % len(slots)
        slots.insert(j + 1, slots[j])
        injected.append("duplicate_fragment")

    treatment: list[str] = []
    null: list[str] = []
    for a, v_t, v_n, m in slots:
        attr = lexicon.attributes[a]
        treatment.append(_render(tpl.treatment_frame, entity, attr.phrase, attr.values[v_t], tm[m]))
        null_marker = nm[m] if len(nm) == len(tm) else nm[0]
        null.append(_render(tpl.null_frame, entity, attr.phrase, attr.values[v_n], null_marker))
    if defects[1]:  # padding: a filler sentence in the treatment only
        pad = lexicon.padding[int(pos[4]) % len(lexicon.padding)]
        treatment.insert(int(pos[4] // 7) % (len(treatment) + 1), pad)
        injected.append("padding")
    return GeneratedStimulus(
        root_id=f"{prefix}-{index:05d}",
        candidate_index=index,
        template=tpl.name,
        family=tpl.family,
        source=" ".join(source),
        treatment=" ".join(treatment),
        null_partner=" ".join(null),
        injected_defects=tuple(injected),
    )
