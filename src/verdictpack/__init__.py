"""verdictpack: verdict-grade tests of LLM-judge bias relative to humans.

The public API. Everything else lives in private ``_module.py`` files, one per layer:
compiler, sizing, sequential core, judges, stimuli, human, engine, battery, audit, seal, report.
"""

from __future__ import annotations

from verdictpack._api import Result, run
from verdictpack._cli import run_config
from verdictpack._errors import (
    ConfigError,
    Defect,
    InputError,
    OutputError,
    UsageError,
    VerdictpackError,
)
from verdictpack._results import Quantity, dump_json, to_jsonable
from verdictpack.config._compiler import Construct, compile_construct
from verdictpack.core._exact import (
    binomial_power,
    binomial_region,
    binomial_sample_size,
    simulate_t_power,
    t_power,
    t_sample_size,
    two_proportion_n,
    two_proportion_power,
)
from verdictpack.core._hinterval import Verdict, classify, corners_h_interval, hybrid_h_interval
from verdictpack.core._mixture import ConfidenceSequence, MixtureCS, MixtureSpec
from verdictpack.core._mixture_batch import BatchMixtureCS
from verdictpack.core._scales import (
    cohens_h,
    h_from_odds_ratio,
    p_from_h,
    p_from_odds_ratio,
    phi,
    phi_inv,
)
from verdictpack.core._sprt import BernoulliSPRT
from verdictpack.core._tracker import BatchHTracker, HTracker
from verdictpack.evidence._assemble import EvidenceBlock
from verdictpack.evidence._source import EvidenceSource, RootEvidence
from verdictpack.simulate._evidence import SimulatedPanelSource
from verdictpack.simulate._judges import JudgeSheet, Panel, TruthScenario, effective_panel_size

__version__ = "0.1.0"

__all__ = [
    "BatchHTracker",
    "BatchMixtureCS",
    "BernoulliSPRT",
    "ConfidenceSequence",
    "ConfigError",
    "Construct",
    "Defect",
    "EvidenceBlock",
    "EvidenceSource",
    "HTracker",
    "InputError",
    "JudgeSheet",
    "MixtureCS",
    "MixtureSpec",
    "OutputError",
    "Panel",
    "Quantity",
    "Result",
    "RootEvidence",
    "SimulatedPanelSource",
    "TruthScenario",
    "UsageError",
    "Verdict",
    "VerdictpackError",
    "__version__",
    "binomial_power",
    "binomial_region",
    "binomial_sample_size",
    "classify",
    "cohens_h",
    "compile_construct",
    "corners_h_interval",
    "dump_json",
    "effective_panel_size",
    "h_from_odds_ratio",
    "hybrid_h_interval",
    "p_from_h",
    "p_from_odds_ratio",
    "phi",
    "phi_inv",
    "run",
    "run_config",
    "simulate_t_power",
    "t_power",
    "t_sample_size",
    "to_jsonable",
    "two_proportion_n",
    "two_proportion_power",
]
