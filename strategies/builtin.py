"""The built-in strategies, read from ``builtin.toml``: names, descriptions, weight vectors.

A strategy's id is its position in the file; ``random`` is 0 and ``greedy`` 1.
"""
from __future__ import annotations

import tomllib
from dataclasses import dataclass, field
from importlib import resources

import numpy as np

from .compiled import FEATURES, KIND_HEURISTIC, KIND_RANDOM, NF
from .custom import CustomStrategy


@dataclass(frozen=True)
class Strategy:
    """A compiled strategy for one seat: its kind and its weights over FEATURES."""

    name: str
    kind: int
    weights: tuple[float, ...] = field(default=(0.0,) * NF)
    description: str = ""

    def weight_dict(self) -> dict[str, float]:
        return {f: w for f, w in zip(FEATURES, self.weights) if w}


def _load() -> tuple[Strategy, ...]:
    data = tomllib.loads((resources.files("strategies") / "builtin.toml").read_text(encoding="utf-8"))
    out = []
    for name, entry in data.items():
        weights = entry.get("weights")
        if weights is None:
            out.append(Strategy(name, KIND_RANDOM, description=entry["description"]))
            continue
        unknown = set(weights) - set(FEATURES)
        if unknown:
            raise ValueError(f"builtin.toml [{name}]: unknown feature(s) {sorted(unknown)}")
        vec = tuple(float(weights.get(f, 0.0)) for f in FEATURES)
        out.append(Strategy(name, KIND_HEURISTIC, vec, entry["description"]))
    return tuple(out)


BUILTINS: tuple[Strategy, ...] = _load()
NAMES: tuple[str, ...] = tuple(s.name for s in BUILTINS)
RANDOM = NAMES.index("random")
GREEDY = NAMES.index("greedy")


# What each feature measures, for the player to move (builtin.toml says the same in comments).
FEATURE_HELP: dict[str, str] = {
    "vp": "VP scored so far, except the VP for drawing from an empty stack",
    "column": "VP its column-majority workers would score now (5 per column held)",
    "h1": "VP its height-1 majority would score now",
    "h2": "VP its height-2 majority would score now",
    "h3": "VP its height-3 majority would score now",
    "h4": "VP its height-4 majority would score now",
    "capitals": "VP its capitals majority would score now",
    "emperor": "Emperor bonus its placed tiles would score now",
    "tiles": "Emperor tiles placed beside columns plus tiles flipped to the high side",
    "cards": "cards in hand and drawn this turn",
    "parts": "own stones and capitals placed in the Temple",
    "denial": "minus the best opponent's total if the game were scored now",
    "empty_stack": "VP scored by drawing from empty stacks (0 in every built-in: valued like other "
                   "VP it lets a player stall the game, docs/RULES.md P4)",
}
assert set(FEATURE_HELP) == set(FEATURES)


def as_strategy(item):
    """A strategy from a Strategy or CustomStrategy, a built-in id, or a spec string (a
    built-in name, ``balanced(column=2)``, ``FILE.toml:NAME``, ``FILE.py:NAME``; see
    :mod:`strategies.registry`)."""
    if isinstance(item, (Strategy, CustomStrategy)):
        return item
    if isinstance(item, (int, np.integer)) and not isinstance(item, bool):
        if not 0 <= int(item) < len(BUILTINS):
            raise ValueError(f"not a strategy id: {item!r} (built-ins: 0..{len(BUILTINS) - 1})")
        return BUILTINS[int(item)]
    if isinstance(item, str):
        if item in NAMES:
            return BUILTINS[NAMES.index(item)]
        from .registry import parse_spec
        return parse_spec(item)
    raise ValueError(f"not a strategy: {item!r} (built-ins: {', '.join(NAMES)})")


def seat_arrays(items) -> tuple[np.ndarray, np.ndarray]:
    """(kinds int64[n], weights float64[n, NF]) for the compiled driver, one row per seat (a
    custom Python strategy's row is never read by compiled code)."""
    strategies = [as_strategy(x) for x in items]
    kinds = np.array([s.kind for s in strategies], dtype=np.int64)
    weights = np.array([s.weights for s in strategies], dtype=np.float64).reshape(len(strategies), NF)
    return kinds, weights
