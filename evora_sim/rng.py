"""A tiny counter-based random stream (SplitMix64) that compiled code can carry in one uint64.

The engine shuffles the four card stacks at setup from the game's seed; strategies draw their
tie-breaks from a second stream of the same seed. Keeping the generator this small makes a
game's randomness a pure function of its seed, whatever process or machine plays it.
"""
import numpy as np
from numba import njit

_GOLDEN = np.uint64(0x9E3779B97F4A7C15)
_M1 = np.uint64(0xBF58476D1CE4E5B9)
_M2 = np.uint64(0x94D049BB133111EB)
STRATEGY_STREAM = 0x5EED5EED  # xor-ed into the seed for the strategies' stream


@njit(cache=True, inline="always")
def next_u64(rs):
    """Advance the stream held in ``rs[0]`` (uint64 array) and return 64 random bits."""
    z = rs[0] + _GOLDEN
    rs[0] = z
    z = (z ^ (z >> np.uint64(30))) * _M1
    z = (z ^ (z >> np.uint64(27))) * _M2
    return z ^ (z >> np.uint64(31))


@njit(cache=True, inline="always")
def randbelow(rs, n):
    """A uniform integer in [0, n) by multiply-shift (Lemire), avoiding a 64-bit division;
    n is small, so the bias is below n / 2**32."""
    return np.int64(((next_u64(rs) >> np.uint64(32)) * np.uint64(n)) >> np.uint64(32))


@njit(cache=True, inline="always")
def seed_stream(rs, seed, stream):
    rs[0] = np.uint64(seed) ^ np.uint64(stream)
    next_u64(rs)


def new_stream(seed: int, stream: int = 0) -> np.ndarray:
    rs = np.zeros(1, dtype=np.uint64)
    seed_stream(rs, np.int64(seed), np.int64(stream))
    return rs
