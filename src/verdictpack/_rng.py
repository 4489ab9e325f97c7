"""The one RNG policy of verdictpack.

Reproducibility contract
------------------------
* Every random number comes from a ``numpy.random.Generator`` (PCG64) built from a
  ``numpy.random.SeedSequence``; nothing reads the global NumPy state or the clock.
* A computation is identified by the config's integer ``seed`` and a *purpose* string
  (for example ``"sizing/stage2/t-check"``). The purpose is hashed with SHA-256 (never
  Python's ``hash``) into the ``spawn_key`` of the root sequence, so two purposes never
  share a stream and adding a purpose never moves another one.
* Replicated simulations are cut into fixed-size blocks of ``block_size`` replicates.
  Block ``b`` always draws from ``root.spawn(n_blocks)[b]``, whichever worker, process or
  cluster node runs it. Results are assembled in block order, so the numbers are the same
  for any worker count or executor. A seed is never derived as ``root + worker_id``.
* Same config, same seed, same package version -> byte-identical outputs.
"""

from __future__ import annotations

import hashlib

import numpy as np

__all__ = ["DEFAULT_BLOCK_SIZE", "block_sizes", "block_streams", "purpose_key", "stream"]

DEFAULT_BLOCK_SIZE = 1000


def purpose_key(purpose: str) -> int:
    """A stable 64-bit integer for a purpose string."""
    digest = hashlib.sha256(purpose.encode("utf-8")).digest()
    return int.from_bytes(digest[:8], "big")


def _root(seed: int, purpose: str) -> np.random.SeedSequence:
    return np.random.SeedSequence(entropy=int(seed), spawn_key=(purpose_key(purpose),))


def stream(seed: int, purpose: str) -> np.random.Generator:
    """One generator for a computation that is not cut into blocks."""
    return np.random.Generator(np.random.PCG64(_root(seed, purpose)))


def block_sizes(n_replicates: int, block_size: int = DEFAULT_BLOCK_SIZE) -> list[int]:
    """Sizes of the fixed-size blocks covering ``n_replicates`` (the last may be short)."""
    if n_replicates <= 0:
        return []
    full, rest = divmod(int(n_replicates), int(block_size))
    return [block_size] * full + ([rest] if rest else [])


def block_streams(
    seed: int, purpose: str, n_replicates: int, block_size: int = DEFAULT_BLOCK_SIZE
) -> list[tuple[int, np.random.Generator]]:
    """``(size, generator)`` for each block, in block order; block b uses child b."""
    sizes = block_sizes(n_replicates, block_size)
    children = _root(seed, purpose).spawn(len(sizes))
    return [
        (size, np.random.Generator(np.random.PCG64(child)))
        for size, child in zip(sizes, children, strict=True)
    ]
