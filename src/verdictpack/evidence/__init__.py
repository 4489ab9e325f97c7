"""verdictpack.evidence: where judgments come from.

:class:`RootEvidence` is the canonical record of one root's judgments (every model-panel
judgment in both presentation orders, and the human judgments); an :class:`EvidenceSource` hands
one over per admitted stimulus, which is how the engine pulls its evidence (a simulated panel,
:mod:`verdictpack.simulate._evidence`, a floor above). A study's files are read whole into a
``StudyData`` (``_files``) and valued under its policy (``_assemble``); a live study's ledger
hands over its committed prefix (``_source.CommittedEvidence``). May import the foundations,
``core``, ``config`` and ``stimuli``; never ``simulate`` or anything above it.

Modules: ``_source`` (the protocol and RootEvidence; a live study's committed evidence from its
ledger), ``_files`` (a study's data folder read by one call into StudyData), ``_table`` (the
canonical long table of judgments: one row per judgment, the import target and export format;
the ``table`` importer), ``importers/`` (Label Studio, Argilla and MTurk exports into canonical
rows), ``_trail`` (a study's evidence rows as columns, and evidence.jsonl written from them).
"""

from verdictpack.evidence._source import EvidenceSource, RootEvidence
from verdictpack.evidence._trail import EvidenceTrail

__all__ = ["EvidenceSource", "EvidenceTrail", "RootEvidence"]
