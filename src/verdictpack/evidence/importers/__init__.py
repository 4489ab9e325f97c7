"""verdictpack.evidence.importers: annotation-tool exports -> canonical judgments.

One function per tool, each returning an :class:`~verdictpack.evidence._table.ImportResult`
(the columnar table of the judgments -- records via ``.judgments`` -- and every defect of the file
with its place), the same shape as :func:`~verdictpack.evidence._table.read_table` returns:

- :func:`read_labelstudio` — Label Studio 1.x JSON export, ``pairwise`` or ``choices`` control;
- :func:`read_argilla` — Argilla 2.x records exported to JSON/JSONL (responses, suggestions);
- :func:`read_mturk` — Amazon Mechanical Turk batch results CSV;
- :func:`read_openai_batch` — an OpenAI Batch output JSONL of a judge's answers (by custom_id);
- :func:`read_inspect` — an Inspect AI evaluation log (.json or .eval) of a judge's answers.

Each takes where the root id and the treatment's side live and a value map from the tool's
answers to positions (``left`` = shown first, ``right``, ``tie``, ``invalid``); the order and
choice of each judgment follow from the position and the treatment's side. Cancelled, discarded
or rejected annotations become ``invalid`` judgments: counted, never dropped.
"""

from verdictpack.evidence.importers._argilla import read_argilla
from verdictpack.evidence.importers._inspect import read_inspect
from verdictpack.evidence.importers._labelstudio import read_labelstudio
from verdictpack.evidence.importers._mturk import read_mturk
from verdictpack.evidence.importers._openai_batch import read_openai_batch

__all__ = ["read_argilla", "read_inspect", "read_labelstudio", "read_mturk", "read_openai_batch"]
