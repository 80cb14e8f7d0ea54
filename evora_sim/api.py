"""The Python face of the engine, in the spirit of OpenSpiel.

``new_game`` / ``legal_actions`` / ``apply_action`` / ``is_terminal`` / ``returns`` work on a
:class:`State`, a thin holder of the flat state array, its rules and seed. Every rule runs in
the compiled functions of :mod:`evora_sim.engine`; nothing here re-implements one.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from . import engine as E
from . import layout as L
from .rules import Rules, load_rules


class IllegalActionError(ValueError):
    """An action that is not legal at the current decision point."""


GAME_TYPE = {
    "short_name": "evora",
    "min_players": 2,
    "max_players": 4,
    "dynamics": "sequential",
    "chance": "deterministic after setup (stacks shuffled from the seed, face up)",
    "information": "perfect",
    "utility": "general-sum VP; returns() gives 1 to the winner, 0 to the others",
    "num_distinct_actions": L.N_ACTIONS,
}


def check_players(n_players) -> int:
    if isinstance(n_players, bool) or not isinstance(n_players, (int, np.integer)) or not 2 <= n_players <= 4:
        raise ValueError(f"player count must be 2, 3 or 4, got {n_players!r}")
    return int(n_players)


@dataclass
class State:
    """One game: the flat int32 array plus the rules and seed it was created with."""

    arr: np.ndarray
    rules: Rules
    seed: int

    @property
    def n_players(self) -> int:
        return int(self.arr[L.G_NPLAYERS])

    def get(self, offset: int) -> int:
        return int(self.arr[offset])

    def player(self, p: int, field: int) -> int:
        return int(self.arr[L.PLAYERS + p * L.PSTRIDE + field])

    def stat(self, p: int, field: int) -> int:
        return int(self.arr[L.STATS + p * L.SSTRIDE + field])

    def clone(self) -> "State":
        return State(self.arr.copy(), self.rules, self.seed)


def new_game(rules: Rules | None = None, n_players: int = 4, seed: int = 0) -> State:
    rules = rules or load_rules()
    n = check_players(n_players)
    if not isinstance(seed, (int, np.integer)) or not 0 <= seed < 2**63:
        raise ValueError(f"seed must be a whole number from 0 to 2**63-1, got {seed!r}")
    arr = E.new_state()
    E.init_game(arr, rules.packed, n, np.int64(seed))
    return State(arr, rules, int(seed))


_BUF = np.empty(L.N_ACTIONS, dtype=np.int32)


def legal_actions(state: State) -> list[int]:
    n = E.legal_actions(state.arr, state.rules.packed, _BUF)
    return [int(a) for a in _BUF[:n]]


def apply_action(state: State, action: int) -> None:
    legal = legal_actions(state)
    if action not in legal:
        raise IllegalActionError(
            f"action {action} ({describe_action(state, action)}) is not legal at this decision point "
            f"({decision_name(state)}); legal: {legal}")
    E.apply_action(state.arr, state.rules.packed, np.int64(action))


def is_terminal(state: State) -> bool:
    return state.get(L.G_PHASE) == L.PH_TERMINAL


def current_player(state: State) -> int:
    """The seat to decide, or -4 (OpenSpiel's terminal id) once the game is over."""
    return -4 if is_terminal(state) else state.get(L.G_CUR)


def returns(state: State) -> list[float]:
    if not is_terminal(state):
        return [0.0] * state.n_players
    w = state.get(L.G_WINNER)
    return [1.0 if p == w else 0.0 for p in range(state.n_players)]


def final_scoring(state: State) -> dict:
    """Per-seat breakdown and totals; for a game not yet over, the scoring if it ended now."""
    arr = state.arr
    if not is_terminal(state):
        arr = arr.copy()
        E.final_scoring(arr, state.rules.packed)
    seats = []
    for p in range(state.n_players):
        b = L.PLAYERS + p * L.PSTRIDE
        row = {name: int(arr[b + L.P_VP_BUILD + i]) for i, name in enumerate(L.BREAKDOWN_NAMES)}
        row["parts_left"] = int(arr[b + L.P_STONES] + arr[b + L.P_CAPS])
        row["total"] = int(arr[b + L.P_FINAL])
        seats.append(row)
    return {"seats": seats, "winner": int(arr[L.G_WINNER])}


def decision_name(state: State) -> str:
    sp = state.get(L.G_SP)
    if sp:
        kind = state.get(L.FRAMES + (sp - 1) * L.FW)
        return {L.F_BUILD: "build", L.F_EMP_PLACE: "Emperor tile", L.F_EMP_FLIP: "flip Emperor tile",
                L.F_TEMPLE: "Temple card", L.F_CENT: "Centurion", L.F_GOV_COLUMN: "Governor column",
                L.F_GOV_HEIGHT: "Governor height", L.F_DISCARD: "pay a card for a tile",
                L.F_DRAW: "draw"}.get(kind, "frame")
    return L.PHASE_NAMES[state.get(L.G_PHASE)]


def describe_action(state: State, action: int) -> str:
    """A readable name for ``action`` at the current decision point."""
    a = int(action)
    rules = state.rules
    if L.A_SPACE <= a < L.A_COLUMN:
        x = a - L.A_SPACE
        return f"space {rules.space_name(x)}" if x < rules.n_spaces else f"space {x}"
    if L.A_COLUMN <= a < L.A_SKIP:
        return f"column {a - L.A_COLUMN}"
    if a == L.A_SKIP:
        return "skip (nothing more fits)"
    if L.A_STACK <= a < L.A_HEIGHT:
        verb = "use Temple card of" if decision_name(state) == "Temple card" else "draw from"
        return f"{verb} {L.TYPE_NAMES[a - L.A_STACK]} stack"
    if L.A_HEIGHT <= a < L.A_WORKER:
        h = a - L.A_HEIGHT + 1
        return "capitals" if h == 5 else f"height {h}"
    if L.A_WORKER <= a < L.A_PLAY:
        return f"worker {a - L.A_WORKER}"
    if L.A_PLAY <= a < L.A_TILE:
        return f"play {L.EFFECT_NAMES[a - L.A_PLAY]}"
    if L.A_TILE <= a < L.A_DISCARD:
        return f"pay 3 cards for {L.ITILE_NAMES[a - L.A_TILE]}"
    if L.A_DISCARD <= a < L.A_SITE:
        return f"pay {L.EFFECT_NAMES[a - L.A_DISCARD]}"
    if a == L.A_SITE:
        return "use the site action"
    if a == L.A_END:
        return "end turn"
    if a == L.A_DRAW:
        return "draw 1 card"
    if L.A_EMPTILE <= a < L.N_ACTIONS:
        return f"Emperor tile {a - L.A_EMPTILE}"
    return f"action {a}"
