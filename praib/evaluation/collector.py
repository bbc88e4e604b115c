"""Python's cycle collector run less often while praib makes many objects that hold no cycles."""

from __future__ import annotations

import gc
from contextlib import contextmanager

#: The thresholds of Python's cycle collector within :func:`fewer_collections` (the default is (700, 10, 10)): a
#: batch being folded makes a few hundred thousand records, sections and scores that live until it is folded, the
#: groups' layout lists and tuples of a million reviews; none holds a cycle, and collecting the youngest objects
#: every 700 new ones walked them again and again (about a tenth of the time of a fold of the benchmark's reviews,
#: 0.8 of 9 CPU s of the layout of a million).
FOLD_GC_THRESHOLDS = (20_000, 10, 10)


@contextmanager
def fewer_collections():
    """Python's cycle collector at :data:`FOLD_GC_THRESHOLDS` within the block, as it was after it."""
    before = gc.get_threshold()
    gc.set_threshold(*FOLD_GC_THRESHOLDS)
    try:
        yield
    finally:
        gc.set_threshold(*before)
