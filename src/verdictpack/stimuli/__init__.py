"""verdictpack.stimuli: what a stimulus is, and the gates that admit or refuse it.

Owns the :class:`Stimulus` type (what gates and evidence sources take), the mechanical gates
(text-only ones that read any texts, template-bound ones that need the template generator's
knowledge), the built-in template generator for simulated studies (lexicon, templates,
:func:`run_factory`) and the gate spot-check sizing. May import the foundations, ``core`` and
``config`` only.

Modules: ``_stimulus`` (Stimulus, GeneratedStimulus), ``_text`` (tokens, sentences),
``_lexicon`` (lexicon, content units, templates), ``_gates``, ``_factory`` (generation and
admission), ``_spot_check``; for user files: ``_pairs`` (pair files with a field mapping ->
Stimulus, defects by file and line) and ``_realtext`` (gates on any real text: content overlap,
diff budget, and per-gate / first-failing counts).
"""

from verdictpack.stimuli._factory import (
    DEFAULT_DEFECT_RATES,
    NO_DEFECTS,
    DefectRates,
    FactoryResult,
    run_factory,
)
from verdictpack.stimuli._gates import (
    ContentPreservationGate,
    FragmentDistinctnessGate,
    Gate,
    GateOutcome,
    LengthMatchGate,
    NullSeparationGate,
    standard_gates,
)
from verdictpack.stimuli._lexicon import (
    DEFAULT_LEXICON,
    LENGTH_TEMPLATES,
    SUMMARIZATION_TEMPLATES,
    Attribute,
    Lexicon,
    Template,
    content_units,
    templates_for,
)
from verdictpack.stimuli._spot_check import (
    MAX_SPOT_CHECK_PAIRS,
    GateSpotCheck,
    size_gate_spot_check,
)
from verdictpack.stimuli._stimulus import (
    TEMPLATE_GENERATOR,
    GeneratedStimulus,
    Stimulus,
    require_template_stimulus,
)

__all__ = [
    "DEFAULT_DEFECT_RATES",
    "DEFAULT_LEXICON",
    "LENGTH_TEMPLATES",
    "MAX_SPOT_CHECK_PAIRS",
    "NO_DEFECTS",
    "SUMMARIZATION_TEMPLATES",
    "TEMPLATE_GENERATOR",
    "Attribute",
    "ContentPreservationGate",
    "DefectRates",
    "FactoryResult",
    "FragmentDistinctnessGate",
    "Gate",
    "GateOutcome",
    "GateSpotCheck",
    "GeneratedStimulus",
    "LengthMatchGate",
    "Lexicon",
    "NullSeparationGate",
    "Stimulus",
    "Template",
    "content_units",
    "require_template_stimulus",
    "run_factory",
    "size_gate_spot_check",
    "standard_gates",
    "templates_for",
]
