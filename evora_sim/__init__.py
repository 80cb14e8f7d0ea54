"""evora-sim: a rules-exact, compiled Évora engine and balance-analysis toolkit."""
from __future__ import annotations

import hashlib
import os
from pathlib import Path

__version__ = "0.1.0"


def _configure_numba_cache() -> str:
    """Point numba's cache at a folder named after a hash of every compiled source file.

    numba checks a cached function against its *own* file only: after an edit to engine.py, a
    cached batch driver in batch.py would keep running the old rules. Keying the folder on all
    compiled sources makes any change compile afresh. Must run before the first ``@njit``.
    """
    import numba
    from numba.core import config

    # LLVM's -O3 doubled the cold compile time (41 s -> 22 s at -O2) with no measurable gain
    # in games per second; a user's own NUMBA_OPT still wins.
    if "NUMBA_OPT" not in os.environ and hasattr(config, "_OptLevel"):
        config.OPT = config._OptLevel(2)

    here = Path(__file__).resolve().parent
    sources = sorted(here.glob("*.py")) + sorted((here.parent / "strategies").glob("*.py"))
    digest = hashlib.sha256()
    for path in sources:
        text = path.read_bytes()
        # compiled code, and layout.py, whose constants numba freezes into it
        if b"njit" in text or path.name == "layout.py":
            digest.update(path.name.encode())
            digest.update(text)
    base = os.environ.get("EVORA_CACHE_DIR") or os.path.join(
        os.environ.get("XDG_CACHE_HOME") or os.path.join(Path.home(), ".cache"), "evora-sim")
    folder = os.path.join(base, f"numba-{numba.__version__}-O{int(config.OPT)}-{digest.hexdigest()[:16]}")
    numba.config.CACHE_DIR = folder
    return folder


NUMBA_CACHE = _configure_numba_cache()
