"""The built-in strategies, read from ``builtin.toml``: names, descriptions, weight vectors.

A strategy's id is its position in the file; ``random`` is 0 and ``greedy`` 1.
"""
from __future__ import annotations

import tomllib
from dataclasses import dataclass, field
from importlib import resources

import numpy as np

from .compiled import FEATURES, KIND_HEURISTIC, KIND_RANDOM, NF


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


def as_strategy(item) -> Strategy:
    """A Strategy from a Strategy, a built-in id or a built-in name."""
    if isinstance(item, Strategy):
        return item
    if isinstance(item, (int, np.integer)) and not isinstance(item, bool):
        return BUILTINS[int(item)]
    if isinstance(item, str) and item in NAMES:
        return BUILTINS[NAMES.index(item)]
    raise ValueError(f"not a strategy: {item!r} (built-ins: {', '.join(NAMES)})")


def seat_arrays(items) -> tuple[np.ndarray, np.ndarray]:
    """(kinds int64[n], weights float64[n, NF]) for the compiled driver, one row per seat."""
    strategies = [as_strategy(x) for x in items]
    kinds = np.array([s.kind for s in strategies], dtype=np.int64)
    weights = np.array([s.weights for s in strategies], dtype=np.float64).reshape(len(strategies), NF)
    return kinds, weights
