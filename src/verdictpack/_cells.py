"""Spreadsheet-safe CSV cells: the one rule every CSV verdictpack writes follows, and its inverse.

A spreadsheet opening a CSV reads a cell whose first character is ``=``, ``+``, ``-`` or ``@``
(and, in some, a tab or a carriage return) as a formula: an id such as ``=HYPERLINK(...)`` in
judgments.csv would run when the file is opened (formula injection). The usual rule neutralises
it: such a cell is written with a leading single quote (``'=HYPERLINK(...)``), which spreadsheets
show as text.

To keep every value round-tripping exactly, a cell that *already* starts with single quotes
followed by one of those characters gets one more quote, and a reader removes exactly one quote
from a cell that starts with one or more quotes followed by one of those characters (and from no
other cell): :func:`csv_cell` and :func:`csv_value` are inverse for every string.
"""

from __future__ import annotations

import csv
import io
import re
from collections.abc import Iterable, Sequence

__all__ = ["FORMULA_START", "csv_cell", "csv_text", "csv_value", "csv_values"]

# the first characters a spreadsheet reads as the start of a formula
FORMULA_START = ("=", "+", "-", "@", "\t", "\r")
_WRITE = re.compile(r"'*[=+\-@\t\r]")
_READ = re.compile(r"'+[=+\-@\t\r]")


def csv_cell(value: str) -> str:
    """``value`` as written in a CSV cell: with one more leading ``'`` when a spreadsheet would
    read it as a formula (its first character after any quotes is in :data:`FORMULA_START`)."""
    return "'" + value if _WRITE.match(value) else value


def csv_value(cell: str) -> str:
    """The value a CSV cell written by :func:`csv_cell` holds: one leading ``'`` removed from a
    cell of quotes followed by a formula character, every other cell as it is."""
    return cell[1:] if _READ.match(cell) else cell


def csv_values(cells: Sequence[str]) -> Sequence[str]:
    """:func:`csv_value` of every cell (the same sequence when no cell starts with a quote)."""
    if not any(c[:1] == "'" for c in cells):
        return cells
    return [csv_value(c) for c in cells]


def csv_text(rows: Iterable[Sequence[str]]) -> str:
    """CSV text of ``rows`` (``\\n`` line ends): every cell through :func:`csv_cell`, quoted only
    when it holds a comma, a quote or a line break (the csv module's minimal quoting)."""
    buf = io.StringIO(newline="")
    writer = csv.writer(buf, lineterminator="\n")
    for row in rows:
        writer.writerow([csv_cell(c) for c in row])
    return buf.getvalue()
