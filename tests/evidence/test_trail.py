"""EvidenceTrail: the study's evidence rows as columns; evidence.jsonl written from them is byte
for byte what ``json.dumps`` writes of the row dicts."""

from __future__ import annotations

import json

import numpy as np
import pytest

from verdictpack.evidence._trail import EvidenceTrail

TRACKS = ("registered", "extension", "comparison")
LABELS = ("CONTINUE", "EFFECT_SUPPORTED", "NO_POSITIVE_EFFECT", "BELOW_PRACTICAL_THRESHOLD")
ODD_IDS = ["plain", 'with "quotes"', "back\\slash", "tab\tand\nline", "ünïcödé ✓", "\x01ctl", ""]


def _trail(seed: int, n: int, hybrid: bool) -> EvidenceTrail:
    rng = np.random.default_rng(seed)

    def pairs() -> np.ndarray:
        a = rng.uniform(-3.2, 3.2, size=(n, 2))
        a[rng.random(n) < 0.1] = 0.0
        a[rng.random(n) < 0.05] = -0.0  # a signed zero, written as json writes it
        return np.sort(a, axis=1)

    h = rng.choice([0.0, 1 / 3, 0.5, 2 / 3, 1.0, np.nan], size=n)
    ids = tuple(f"{ODD_IDS[k % len(ODD_IDS)]}-{k}" for k in range(n))
    states = {
        t: tuple(LABELS[int(x)] for x in np.minimum(np.cumsum(rng.random(n) < 0.02), 3))
        for t in TRACKS
    }
    m = rng.random(n) * rng.choice([1.0, 1e-300, 1e300], size=n)
    wide = rng.random(n) < 0.2  # some values bounded both ways
    h_hi = np.where(rng.random(n) < 0.2, np.minimum(h + 0.25, 1.0), h)
    return EvidenceTrail(
        root_ids=ids,
        m_lo=m,
        m_hi=np.where(wide, m + 0.125, m),
        h_lo=h,
        h_hi=h_hi,
        model_judgments=rng.integers(0, 20, size=n),
        human_judgments=rng.integers(0, 4, size=n),
        model_bounds=pairs(),
        human_bounds=pairs(),
        diff_bounds=pairs() if hybrid else None,
        h_interval=pairs(),
        comparison_h_interval=pairs(),
        states=states,
        stop=int(rng.integers(-1, n)),
    )


@pytest.mark.parametrize("seed", range(6))
def test_jsonl_is_what_json_dumps_writes_of_every_row(seed: int) -> None:
    trail = _trail(seed, 300, hybrid=seed % 2 == 0)
    expected = "".join(json.dumps(row, ensure_ascii=False, allow_nan=False) + "\n" for row in trail)
    assert trail.to_jsonl() == expected
    rows = [json.loads(line) for line in expected.splitlines()]
    assert [r["root"] for r in rows] == list(range(1, 301))
    stop = trail.stop
    assert [r["after_registered_stop"] for r in rows] == [t > stop for t in range(300)]


def test_rows_on_demand_and_the_sequence_protocol() -> None:
    trail = _trail(7, 50, hybrid=True)
    assert len(trail) == 50
    assert trail[-1] == trail[49] and trail[0]["root"] == 1
    assert trail[10:13] == [trail[10], trail[11], trail[12]]
    assert list(trail)[5] == trail[5]
    with pytest.raises(IndexError):
        trail[50]
    with pytest.raises(IndexError):
        trail[-51]
    row = trail[3]
    assert row["H"] is None or isinstance(row["H"], float)
    assert row["M_lo"] <= row["M"] <= row["M_hi"]
    assert (row["H"] is None) == (row["H_lo"] is None) == (row["H_hi"] is None)
    assert isinstance(row["model_judgments"], int) and isinstance(row["model_bounds"], list)


def test_state_changes_are_the_roots_whose_state_moved() -> None:
    trail = _trail(11, 400, hybrid=False)
    rows = list(trail)
    expected = [k for k in range(1, len(rows)) if rows[k]["state"] != rows[k - 1]["state"]]
    assert expected  # the seeded states do change
    assert trail.state_changes() == expected


def test_the_empty_trail() -> None:
    trail = EvidenceTrail.empty(TRACKS)
    assert len(trail) == 0 and list(trail) == [] and trail.to_jsonl() == ""
    assert trail.state_changes() == []


def test_a_non_finite_value_is_refused_as_json_refuses_it() -> None:
    trail = _trail(3, 20, hybrid=False)
    bad = trail.model_bounds.copy()
    bad[4, 1] = np.inf
    broken = EvidenceTrail(**{**trail.__dict__, "model_bounds": bad})
    with pytest.raises(ValueError, match="JSON compliant"):
        broken.to_jsonl()
    with pytest.raises(ValueError):
        json.dumps(broken[4], allow_nan=False)


def test_columns_of_the_wrong_shape_are_refused() -> None:
    trail = _trail(5, 10, hybrid=False)
    with pytest.raises(ValueError, match="model_bounds"):
        EvidenceTrail(**{**trail.__dict__, "model_bounds": np.zeros((9, 2))})
    with pytest.raises(ValueError, match="m_lo: expected"):
        EvidenceTrail(**{**trail.__dict__, "m_lo": np.zeros(11)})
    with pytest.raises(ValueError, match="states"):
        EvidenceTrail(**{**trail.__dict__, "states": {"registered": ("CONTINUE",)}})
