"""The one memory policy: pausing the cyclic collector."""

import gc

from verdictpack._memory import gc_paused


def test_gc_paused_pauses_the_cyclic_collector_and_restores_it() -> None:
    assert gc.isenabled()
    with gc_paused():
        assert not gc.isenabled()
    assert gc.isenabled()
    gc.disable()
    try:
        with gc_paused():
            pass
        assert not gc.isenabled()  # a caller's own choice is kept
    finally:
        gc.enable()
