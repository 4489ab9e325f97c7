"""Memory policy shared by every floor: one way to pause CPython's cyclic garbage collector.

verdictpack's results, tables and evidence rows hold no reference cycles, and a large run builds
millions of small containers (a 100,000-root study: its pairs, the table's columns as lists, the
evidence rows). CPython's full collections rescan every live object each time the heap has grown
by a quarter, seconds of work that find nothing. Reference counting frees everything else as it
goes, so pausing the collector while such objects are built costs no memory that would have been
freed. Used by the table import, the gates, the study's evidence rows and a batch run as a whole
(the CLI); a live study, hours of asyncio I/O, keeps the collector on.
"""

from __future__ import annotations

import contextlib
import gc
from collections.abc import Iterator

__all__ = ["gc_paused"]


@contextlib.contextmanager
def gc_paused() -> Iterator[None]:
    """No cyclic garbage collection inside; the collector's state before is restored after (a
    caller that had turned it off keeps it off)."""
    was = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was:
            gc.enable()
