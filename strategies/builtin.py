"""The built-in strategies, read from ``builtin.toml``: names, descriptions, weight vectors.

A strategy's id is its position in the file; ``random`` is 0 and ``greedy`` 1. This module only
holds the data; turning specs into strategies is :mod:`strategies.registry`'s job.
"""
from __future__ import annotations

import tomllib
from dataclasses import dataclass, field
from importlib import resources

from .compiled import FEATURES, KIND_HEURISTIC, KIND_PLANNER, KIND_RANDOM, NF


# how a heuristic decides: the spec option plan= and the compiled kind it selects
PLANS = {"turn": KIND_PLANNER, "action": KIND_HEURISTIC}
DEFAULT_PLAN = "turn"
PLAN_HELP = {
    "turn": "plans its whole turn: each decision is valued by the best position it can reach by "
            "the end of the turn (the move, the option, the effect's choices, the cards)",
    "action": "values each decision alone, an effect once finished; places and moves its workers "
              "at random (the behaviour before turn planning; faster)",
}


@dataclass(frozen=True)
class Strategy:
    """A compiled strategy for one seat: its kind and its weights over FEATURES."""

    name: str
    kind: int
    weights: tuple[float, ...] = field(default=(0.0,) * NF)
    description: str = ""
    search: tuple[float, ...] = ()     # a search player's options (strategies.search_spec)
    rollout: str = ""                  # ... and its rollout policy's name
    # a learned evaluation (strategies.learned): per player count, (n, its 2 * NB weights and the
    # win weight); when set, positions are valued by it and ``weights`` are unused (a search
    # player: its rollout's)
    learned: tuple[tuple[int, tuple[float, ...]], ...] = ()
    # per player count, (n, how many of its best turns it values by the next seat's reply;
    # strategies.planner); counts not named plan one ply
    replies: tuple[tuple[int, int], ...] = ()
    # per player count, (n, the game's progress from which it values them so: features.progress,
    # 0 to 1); counts not named: from the start
    ahead_from: tuple[tuple[int, float], ...] = ()
    # learned weights: the hash of the rules they were trained for, as their file records it ("":
    # not recorded); read to warn when they play other rules, never part of what they play
    rules_hash: str = field(default="", compare=False)

    def weight_dict(self) -> dict[str, float]:
        return {f: w for f, w in zip(FEATURES, self.weights) if w}

    @property
    def is_learned(self) -> bool:
        return bool(self.learned)

    def learned_for(self, n: int) -> tuple[float, ...] | None:
        """The learned weights for ``n`` players (None: none trained for ``n``)."""
        return dict(self.learned).get(n)

    def replies_for(self, n: int) -> int:
        """How many best turns it values by the next seat's reply at ``n`` players (0: none)."""
        return dict(self.replies).get(n, 0)

    def ahead_from_for(self, n: int) -> float:
        """From which progress of the game (0 to 1) it looks ahead at ``n`` players."""
        return dict(self.ahead_from).get(n, 0.0)

    @property
    def is_heuristic(self) -> bool:
        return self.kind in PLANS.values()

    @property
    def plan(self) -> str | None:
        """``turn`` or ``action`` for a heuristic, None otherwise."""
        return next((k for k, v in PLANS.items() if v == self.kind), None)


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
        out.append(Strategy(name, PLANS[DEFAULT_PLAN], vec, entry["description"]))
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
    "secured": "majority VP that no later placement can change: column majorities on capped columns, "
               "height majorities at levels every column has reached",
    "win": "1 once the game is over if it has won, else 0 (what matters at the end)",
}
assert set(FEATURE_HELP) == set(FEATURES)
