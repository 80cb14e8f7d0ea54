"""Scripts under scripts/ loaded as modules by the tests, without changing the import path.

Why: a script puts its checkout first on ``sys.path`` so that it runs without an install. Left
there inside a test run, every process the tests start afterwards (joblib and Dask workers)
imported the checkout instead of the installed package the tests import, and, as numba keys its
cache by source path, compiled the engine and every player again from cold. On CI, where the
install is not editable, that cost minutes of the suite.
"""
from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import analysis  # noqa: F401  the top-level packages are bound before any script runs,
import evora_sim  # noqa: F401  so a script's path insertion cannot pick the checkout's copy
import strategies  # noqa: F401

SCRIPTS = Path(__file__).resolve().parents[1] / "scripts"


def load_script(name: str):
    """``scripts/<name>.py`` as the module ``name``; ``sys.path`` is as it was afterwards."""
    saved = list(sys.path)
    sys.path.insert(0, str(SCRIPTS))      # for the scripts' shared modules (benchargs)
    try:
        spec = importlib.util.spec_from_file_location(name, SCRIPTS / f"{name}.py")
        module = importlib.util.module_from_spec(spec)
        sys.modules[name] = module
        spec.loader.exec_module(module)
    finally:
        sys.path[:] = saved
    return module
