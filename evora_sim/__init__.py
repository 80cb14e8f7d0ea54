"""evora-sim: a rules-exact, compiled Évora engine and balance-analysis toolkit."""
from __future__ import annotations

import hashlib
import os
import re
from pathlib import Path

import numba
from numba.core import config

__version__ = "0.1.0"


# The project's packages: an import of one of them can carry code or constants into compiled code.
PACKAGES = ("evora_sim", "strategies", "analysis")
_IMPORT = re.compile(r"^[ \t]*(?:from[ \t]+([\w.]+)[ \t]+import[ \t]+(\([^)]*\)|[^\n]*)|import[ \t]+([^\n]*))",
                     re.MULTILINE)


def _imports(text: str, package: list[str]) -> set[str]:
    """Every module name ``text`` imports, at any depth of indentation (a lazy import in a
    function is counted too: more files in the key, never fewer), relative names resolved
    against ``package``."""
    out = set()
    for found in _IMPORT.finditer(text):
        source, names, plain = found.groups()
        if plain is not None:
            out.update(n.split("#")[0].split(" as ")[0].strip() for n in plain.split(","))
            continue
        dots = len(source) - len(source.lstrip("."))
        if dots:
            source = ".".join(package[:len(package) - dots + 1] + [source[dots:]] * bool(source[dots:]))
        out.add(source)
        for line in names.strip("()").splitlines():
            out.update(f"{source}.{n.split(' as ')[0].strip()}" for n in line.split("#")[0].split(",") if n.strip())
    return out


def compiled_sources(root: Path) -> list[Path]:
    """The project's source files whose text can change what numba compiles: every module that
    mentions ``njit``, and every project module those import, and so on. ranking.py holds no
    ``njit`` but the engine compiles its ``order_key``; layout.py's constants are frozen into the
    compiled code. Modules no compiled module reaches (the CLI, the runner, the reports) are left
    out, so editing them does not cost a cold compile of several minutes."""
    known = {}                           # dotted name -> file, for every module of the packages
    for pkg in PACKAGES:
        for path in (root / pkg).rglob("*.py"):
            parts = path.relative_to(root).with_suffix("").parts
            known[".".join(parts[:-1] if parts[-1] == "__init__" else parts)] = path
    todo = [path for path in known.values() if b"njit" in path.read_bytes()]
    seen = set()
    while todo:
        path = todo.pop()
        if path in seen:
            continue
        seen.add(path)
        package = list(path.relative_to(root).parts[:-1])
        for name in _imports(path.read_text(encoding="utf-8"), package):
            steps = name.split(".")      # importing a.b.c runs a and a.b as well
            todo += [known[m] for m in (".".join(steps[:i]) for i in range(1, len(steps) + 1)) if m in known]
    return sorted(seen)


def source_key(root: Path) -> str:
    """A hash of :func:`compiled_sources`, their paths below ``root`` and their text."""
    digest = hashlib.sha256()
    for path in compiled_sources(root):
        digest.update(path.relative_to(root).as_posix().encode() + b"\0")
        digest.update(path.read_bytes() + b"\0")
    return digest.hexdigest()[:16]


def _configure_numba_cache() -> str:
    """Point numba's cache at a folder named after a hash of every source compiled code can reach.

    numba checks a cached function against its *own* file only: after an edit to engine.py, a
    cached batch driver in batch.py would keep running the old rules, and after an edit to
    ranking.py the engine would keep the old order of the seats. Keying the folder on every
    source file the compiled modules import (:func:`compiled_sources`) makes any such change
    compile afresh. Must run before the first ``@njit``.
    """
    # LLVM's -O3 doubled the cold compile time (41 s -> 22 s at -O2) with no measurable gain
    # in games per second; a user's own NUMBA_OPT still wins.
    if "NUMBA_OPT" not in os.environ and hasattr(config, "_OptLevel"):
        config.OPT = config._OptLevel(2)

    key = source_key(Path(__file__).resolve().parent.parent)
    base = os.environ.get("EVORA_CACHE_DIR") or os.path.join(
        os.environ.get("XDG_CACHE_HOME") or os.path.join(Path.home(), ".cache"), "evora-sim")
    folder = os.path.join(base, f"numba-{numba.__version__}-O{int(config.OPT)}-{key}")
    numba.config.CACHE_DIR = folder
    return folder


NUMBA_CACHE = _configure_numba_cache()
