"""Game seeds derived from a run seed, independent of how the run is split into chunks.

numpy's ``SeedSequence`` turns the run seed into a 128-bit key; game ``i``'s seed is a
SplitMix64 hash of the key and ``i``. Any chunking, any number of jobs and any backend give
every game the same seed, and a game is replayed from its seed alone.
"""
from __future__ import annotations

import numpy as np

_MASK63 = np.uint64((1 << 63) - 1)


def _mix(z: np.ndarray) -> np.ndarray:
    z = (z ^ (z >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
    z = (z ^ (z >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
    return z ^ (z >> np.uint64(31))


def game_seeds(run_seed: int, start: int, stop: int) -> np.ndarray:
    """Seeds (int64, non-negative) of games ``start`` .. ``stop - 1`` of a run."""
    key = np.random.SeedSequence(int(run_seed)).generate_state(2, dtype=np.uint64)
    idx = np.arange(start, stop, dtype=np.uint64)
    with np.errstate(over="ignore"):
        z = _mix(idx * np.uint64(0x9E3779B97F4A7C15) + key[0]) ^ key[1]
        z = _mix(z)
    return (z & _MASK63).astype(np.int64)
