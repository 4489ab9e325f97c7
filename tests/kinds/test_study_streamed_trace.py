"""A study handed the tracks' trace it streamed (a live study's ``TrackStream``) reports from it,
the same result as from its own compiled trace, and refuses a trace of other values."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

import numpy as np
import pytest

from conftest import write_tiny_study
from verdictpack._errors import InputError
from verdictpack.config._blocks import build_sequential
from verdictpack.config._compiler import compile_construct, load_source, parse_config
from verdictpack.core._tracks import TrackStream, TrackTrace
from verdictpack.kinds._study import RULES, StudyConfig, prepare_study, run_study


def _study(tmp_path: Path) -> tuple[StudyConfig, object]:
    """The tiny study with an instrument that passes (the tracks run) and bounded values."""
    path = write_tiny_study(tmp_path / "study", roots=60)
    cfg = json.loads(path.read_text())
    cfg["data"]["reader_audit"]["kappa_min"] = 0.1
    cfg["humans"] = {"judgments_per_root": 3}  # two humans of three declared: H bounded
    cfg["planning"] = {"replicates": 100, "max_extra_roots": 200}  # the tracks are the point
    path.write_text(json.dumps(cfg))
    source = load_source(path)
    return parse_config(source, StudyConfig, RULES), source


def _streamed(config: StudyConfig, m_lo, m_hi, h_lo, h_hi) -> TrackTrace:  # type: ignore[no-untyped-def]
    sequential = build_sequential(config.sequential)
    settings = sequential.tracks(compile_construct(config.construct_spec))
    s = TrackStream(settings, sequential.cap_roots, np.array([]), np.array([]))
    n = min(sequential.cap_roots, m_lo.size)
    for i in range(m_lo.size):
        h = None if np.isnan(h_lo[i]) else (float(h_lo[i]), float(h_hi[i]))
        s.step((float(m_lo[i]), float(m_hi[i])), h, at_cap=i + 1 == n)
    return s.trace()


def test_the_streamed_trace_gives_the_result_of_the_studys_own(tmp_path: Path) -> None:
    config, source = _study(tmp_path)
    v = prepare_study(config, source).values
    own = run_study(config, source)
    streamed = run_study(config, source, trace=_streamed(config, v.m_lo, v.m_hi, v.h_lo, v.h_hi))
    assert own.instrument_valid and v.bounded
    assert dataclasses.asdict(streamed.registered) == dataclasses.asdict(own.registered)
    assert streamed.all_data == own.all_data
    np.testing.assert_array_equal(streamed.evidence.h_lo, own.evidence.h_lo)


def test_a_trace_of_other_values_is_refused(tmp_path: Path) -> None:
    config, source = _study(tmp_path)
    v = prepare_study(config, source).values
    m_hi = v.m_hi.copy()
    k = int(np.flatnonzero(m_hi <= 0.75)[0])
    m_hi[k] += 0.25  # one root streamed with another upper bound
    with pytest.raises(InputError) as err:
        run_study(config, source, trace=_streamed(config, v.m_lo, m_hi, v.h_lo, v.h_hi))
    assert "committed roots" in str(err.value)
    with pytest.raises(InputError):  # a trace of fewer roots
        run_study(
            config,
            source,
            trace=_streamed(config, *(a[:-1] for a in (v.m_lo, v.m_hi, v.h_lo, v.h_hi))),
        )
