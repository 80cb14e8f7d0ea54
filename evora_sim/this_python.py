"""How to start a Python process that runs this very copy of the code.

A helper process (a part of the cold compile, the dashboard's figure drawer) must import the same
modules as the process that starts it, not another installed copy: a checkout run in place, a
test's clone and an installed package each put their own folder first on the child's path.

``python -c`` alone would put the current folder before that: README's first run is started in the
clone it installed from, which holds a second copy of the sources, and the child imported that one.
numba keys its cache by the source file's path, so a compile helper started there filled a cache
the run never read, and the run compiled everything again alone (about 100 s more, measured
2026-12-07). ``-P`` (Python 3.11+) leaves the current folder off the child's path."""
from __future__ import annotations

import os
import sys
from pathlib import Path

ROOT = str(Path(__file__).resolve().parent.parent)        # the folder holding evora_sim, strategies, analysis


def python_command(code: str) -> tuple[list[str], dict]:
    """The arguments and the environment of ``python -P -c code`` in this interpreter, this copy of
    the code first on its path and the current folder not on it (for ``subprocess.Popen(args,
    env=env)``)."""
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(filter(None, [ROOT, os.environ.get("PYTHONPATH")])))
    return [sys.executable, "-P", "-c", code], env
