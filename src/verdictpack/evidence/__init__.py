"""verdictpack.evidence: where judgments come from.

An :class:`EvidenceSource` hands over the judgments on one stimulus at a time (a
:class:`RootEvidence`: every model-panel cell in both presentation orders and the human
judgments, unknown answers stated with the bounds they leave), and a source whose evidence is in
hand a run of roots at once (an :class:`EvidenceBlock`, the columns the tracks read). The kinds
feed every source to the same tracks: the engine root by root (``_source.stream_evidence``; a
simulated panel, :mod:`verdictpack.simulate._evidence`, a floor above), a study its files as one
block (``_source.feed_evidence`` on a :class:`FileEvidence`: the data folder read by one call
into a ``StudyData``, ``_files``, and valued under its policy, ``_assemble``); a live study's
ledger hands over its committed prefix (``_source.CommittedEvidence``). May import the
foundations, ``core``, ``config`` and ``stimuli``; never ``simulate`` or anything above it.

Modules: ``_source`` (the protocol, RootEvidence, the file source and the two ways into the
tracks; a live study's committed evidence from its ledger), ``_files`` (a study's data folder
read by one call into StudyData), ``_assemble`` (a study's values under its policy), ``_table``
(the canonical long table of judgments: one row per judgment, the import target and export
format; the ``table`` importer), ``importers/`` (Label Studio, Argilla and MTurk exports into
canonical rows), ``_trail`` (a study's evidence rows as columns, and evidence.jsonl written from
them).
"""

from verdictpack.evidence._assemble import EvidenceBlock
from verdictpack.evidence._source import EvidenceSource, FileEvidence, RootEvidence
from verdictpack.evidence._trail import EvidenceTrail

__all__ = ["EvidenceBlock", "EvidenceSource", "EvidenceTrail", "FileEvidence", "RootEvidence"]
