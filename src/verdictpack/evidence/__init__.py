"""verdictpack.evidence: where judgments come from, behind one :class:`EvidenceSource` interface.

:class:`RootEvidence` is the canonical record of one root's judgments (every model-panel
judgment in both presentation orders, and the human judgments); an :class:`EvidenceSource` hands
one over per admitted stimulus. The engine runs on any source: simulated panels
(:mod:`verdictpack.simulate._evidence`, a floor above), live judge clients or imported annotation
files. May import the foundations, ``core``, ``config`` and ``stimuli``; never ``simulate`` or
anything above it.

Modules: ``_source`` (the protocol and RootEvidence), ``_table`` (the canonical long table of
judgments: one row per judgment, the import target and export format; the ``table`` importer),
``importers/`` (Label Studio, Argilla and MTurk exports into canonical rows).
"""

from verdictpack.evidence._source import EvidenceSource, RootEvidence

__all__ = ["EvidenceSource", "RootEvidence"]
