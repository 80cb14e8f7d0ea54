"""Save a game state to JSON and load it back, refusing files this engine cannot read.

A save file holds a format tag, the state layout's size and signature (a file written by an
engine with a different state layout is refused, not misread), the hash of the rules the game
was played under (a game is only loaded with the same rules), the seed, the raw state array and
a readable summary (phase, current player, scores) that loading ignores.

The engine's scratch space (``layout.SCR_*``, the end of the array) is not part of the game: it
is neither saved nor compared. Files are written atomically (temp file + ``os.replace``).
"""
from __future__ import annotations

import hashlib
import json
import os
import tempfile
from pathlib import Path

import numpy as np

from . import api
from . import layout as L
from .jsonfile import read_json
from .api import State
from .rules import Rules, load_rules
from .statecheck import state_problem

FORMAT = "evora-sim savegame"
VERSION = 1


class SaveError(ValueError):
    """A save file that cannot be loaded here; the message says why."""


# The saved (and compared) prefix of the state array: everything before the scratch space.
GAME_SIZE = L.SCRATCH


def _layout_signature() -> str:
    """A hash of every layout name that gives the state array its meaning."""
    items = {}
    for k, v in sorted(vars(L).items()):
        if not k.isupper() or k.startswith(("SCR_", "R_")) or k in ("STATE_SIZE", "RULES_SIZE", "SCRATCH"):
            continue
        if isinstance(v, bool) or not isinstance(v, (int, tuple)):
            continue
        items[k] = v
    text = json.dumps({"game_size": GAME_SIZE, "names": items}, sort_keys=True)
    return hashlib.sha256(text.encode()).hexdigest()[:16]


LAYOUT_SIGNATURE = _layout_signature()


def summary(state: State) -> dict:
    """What a reader wants to see of a saved game; informative only, never loaded."""
    s = state.arr
    n = state.n_players
    trig = int(s[L.G_END_TRIGGER])
    out = {
        "players": n,
        "phase": L.PHASE_NAMES[int(s[L.G_PHASE])],
        "decision": api.decision_name(state),
        "round": int(s[L.G_ROUND]),
        "current_player": api.current_player(state),
        "scores": [int(s[L.PLAYERS + p * L.PSTRIDE + L.P_SCORE]) for p in range(n)],
        "end_trigger": L.END_NAMES[trig] if 0 <= trig < len(L.END_NAMES) else trig,
    }
    if api.is_terminal(state):
        out["final_totals"] = [int(s[L.PLAYERS + p * L.PSTRIDE + L.P_FINAL]) for p in range(n)]
        out["winner"] = int(s[L.G_WINNER])
    return out


def _umask() -> int:
    mask = os.umask(0o022)
    os.umask(mask)
    return mask


def save_state(state: State, path: str | Path) -> None:
    """Write ``state`` to ``path`` as JSON, atomically."""
    path = Path(path)
    head = {
        "format": FORMAT,
        "version": VERSION,
        "layout": {"state_size": GAME_SIZE, "signature": LAYOUT_SIGNATURE},
        "rules_hash": state.rules.hash,
        "rules_name": str(state.rules.data.get("meta", {}).get("name", "")),
        "seed": int(state.seed),
        "summary": summary(state),
    }
    body = json.dumps(head, indent=2, ensure_ascii=False)
    values = ",".join(str(int(v)) for v in state.arr[:GAME_SIZE])
    text = body[:-2] + f',\n  "state": [{values}]\n}}\n'     # the array on one line
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent or ".")
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            fh.write(text)
            fh.flush()
            os.fsync(fh.fileno())
        os.chmod(tmp, 0o666 & ~_umask())      # mkstemp makes the file private; a save is not
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except FileNotFoundError:
            pass
        raise


def load_state(path: str | Path, rules: Rules | None = None) -> State:
    """Read a state written by :func:`save_state`; ``rules`` must be the rules it was played under
    (the shipped rules if not given)."""
    rules = rules or load_rules()
    doc = read_json(path, "save file", SaveError)
    if not isinstance(doc, dict) or doc.get("format") != FORMAT:
        raise SaveError(f"{path} is not an evora-sim save file (no format tag {FORMAT!r})")
    if doc.get("version") != VERSION:
        raise SaveError(f"save file {path} has format version {doc.get('version')!r}; "
                        f"this engine reads version {VERSION}")
    layout = doc.get("layout")
    if not isinstance(layout, dict) or layout.get("state_size") != GAME_SIZE \
            or layout.get("signature") != LAYOUT_SIGNATURE:
        got = layout if isinstance(layout, dict) else {}
        raise SaveError(
            f"save file {path} was written by an engine with a different state layout "
            f"(size {got.get('state_size')!r}, signature {got.get('signature')!r}; this engine: "
            f"size {GAME_SIZE}, signature {LAYOUT_SIGNATURE}), so it cannot be loaded")
    if doc.get("rules_hash") != rules.hash:
        raise SaveError(
            f"save file {path} was played under rules with hash {doc.get('rules_hash')!r} "
            f"({doc.get('rules_name', '?')!r}), but the rules given have hash {rules.hash}: "
            f"load it with the rules file it was played under")
    seed = doc.get("seed")
    if isinstance(seed, bool) or not isinstance(seed, int) or not 0 <= seed < 2**63:
        raise SaveError(f"save file {path}: 'seed' must be a whole number from 0 to 2**63-1, got {seed!r}")
    values = doc.get("state")
    if (not isinstance(values, list) or len(values) != GAME_SIZE
            or not all(isinstance(v, int) and not isinstance(v, bool) and -2**31 <= v < 2**31
                       for v in values)):
        raise SaveError(f"save file {path}: 'state' must be a list of {GAME_SIZE} 32-bit whole numbers")
    arr = np.zeros(L.STATE_SIZE, dtype=np.int32)
    arr[:GAME_SIZE] = np.asarray(values, dtype=np.int32)
    problem = state_problem(arr, rules)          # the engine reads it unchecked: check it all here
    if problem:
        raise SaveError(f"save file {path}: the state is not a game these rules can reach: {problem}")
    return api.engine_state(arr, rules, seed)


def same_game(a: State, b: State) -> bool:
    """Whether two states hold the same game (scratch space ignored)."""
    return bool(np.array_equal(a.arr[:GAME_SIZE], b.arr[:GAME_SIZE]))


__all__ = ["SaveError", "FORMAT", "VERSION", "GAME_SIZE", "LAYOUT_SIGNATURE", "summary",
           "save_state", "load_state", "same_game"]
