"""The one-time compile, said out loud and done once.

Every built-in game runs in one compiled entry, ``batch.compiled_batch`` (the engine, the planners and
the search player, chosen at run time by the seats' kinds). numba compiles it on first use and
caches it (``evora_sim.NUMBA_CACHE``), which takes minutes on a cold cache: without a word a
progress bar would sit at 0% all that time, and every worker process would compile it again at
once. So a command that plays games first asks :func:`compiled` whether the cache holds it; if
not, it says so (:data:`NOTICE`) and compiles it here, in one process, before the bar starts and
before any worker loads it from the cache.
"""
from __future__ import annotations

import numpy as np

from .batch import compiled_batch, play_batch
from .rules import load_rules

COMPILE_MINUTES = "3 to 5"      # measured 2026-12-05: 3 min 25 s at a load of 6 on the 2-core machine
NOTICE = (f"compiling the engine and players (first run only, about {COMPILE_MINUTES} minutes on a 2-core "
          "machine; later runs load it from the cache)")


def compiled() -> bool | None:
    """Whether numba's cache holds the compiled batch driver for today's sources (None: this
    numba cannot say). Loading the cache index checks the source's stamp, as numba does before
    it loads the code."""
    try:
        return bool(compiled_batch._cache._cache_file._load_index())
    except Exception:                      # numba's internals moved: do not guess
        return None


def ensure_compiled(notice=None) -> bool:
    """Compile the batch driver unless the cache holds it, telling ``notice`` first; whether it
    compiled. One short game of random players is enough: every strategy runs in the same entry."""
    if compiled() is not False:
        return False
    if notice is not None:
        notice(NOTICE)
    compile_now()
    return True


def compile_now() -> None:
    play_batch(load_rules(), 2, np.array([1], dtype=np.int64), ["random", "random"])
