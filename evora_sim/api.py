"""The Python face of the engine, in the spirit of OpenSpiel.

``new_game`` / ``legal_actions`` / ``apply_action`` / ``is_terminal`` / ``returns`` work on a
:class:`State`, a thin holder of the flat state array, its rules and seed. Every rule runs in
the compiled functions of :mod:`evora_sim.engine`; nothing here re-implements one. The readers
``score_now``, ``column_holders``, ``column_leader``, ``column_parts``, ``in_effect``,
``action_kind``, ``action_column`` and ``distinct_actions`` are what a custom Python strategy
(:mod:`strategies.custom`) needs to judge a position. ``choose(spec, state, seed)`` (and the
:class:`Bot` object around it) asks any strategy for its decision at a position.
"""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
from numba import njit

from strategies.builtin import Strategy
from strategies.custom import is_custom
from strategies.decide import choose as decide
from strategies.errors import StrategyError
from strategies.registry import as_strategy, seat_arrays

from . import engine as E
from . import gameloop
from . import layout as L
from . import statecheck
from .names import PHASE_TITLES, effect_title, tile_title, type_title
from .rules import Rules, gift_seat_problem, load_rules


class IllegalActionError(ValueError):
    """An action that is not legal at the current decision point."""


class StateError(ValueError):
    """A State the compiled engine cannot be given: its array is not an engine state, or holds a
    position no game can reach (a cell edited by hand, or damaged). The message names the field.
    Why refuse rather than play on: the engine reads its state without bounds checks, so such a
    state crashed the interpreter, or worse, played on with nonsense."""


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


def check_seed(seed) -> int:
    if isinstance(seed, (bool, np.bool_)) or not isinstance(seed, (int, np.integer)) or not 0 <= seed < 2**63:
        raise ValueError(f"seed must be a whole number from 0 to 2**63-1, got {seed!r}")
    return int(seed)


@dataclass
class State:
    """One game: the flat int32 array plus the rules and seed it was created with."""

    arr: np.ndarray
    rules: Rules
    seed: int
    # (arr, rules, the bytes of arr's game part, arr's dtype) when last known playable (checked,
    # or made by the engine), so a state played through the API is checked once, not every call
    _known: tuple = field(default=(), init=False, repr=False, compare=False)

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
        out = State(self.arr.copy(), self.rules, self.seed)
        if self._known and self._known[0] is self.arr and self._known[1] is self.rules:
            out._known = (out.arr, self.rules, self._known[2], out.arr.dtype)
        return out


def engine_state(arr: np.ndarray, rules: Rules, seed: int) -> State:
    """A State around an array the engine made or played itself (a game's own copy, a position
    built from a checked file, a save file already checked): known playable, not checked again."""
    state = State(arr, rules, seed)
    _known_playable(state)
    return state


def assume_reachable(state: State) -> State:
    """``state`` taken as it is, without the check, until its array changes again outside the
    engine: for positions built by hand for a rule's sake that no game reaches (the rules tests
    fill columns with stones from outside the supply) but whose every cell stays within its
    range. The caller vouches for that: a cell out of range can crash the interpreter."""
    return _known_playable(state)


def _known_playable(state: State) -> State:
    arr = state.arr
    state._known = (arr, state.rules, arr[:L.SCRATCH].tobytes(), arr.dtype)
    return state


def check_state(state: State) -> State:
    """``state``, once it is known to be one the compiled engine can read: an int32 array of the
    engine's size holding a position these rules can reach (:mod:`evora_sim.statecheck`, about a
    millisecond; skipped, for a comparison of a few microseconds, while the array is as the engine
    or the last check left it). Raises StateError naming the field otherwise. Every function here
    that hands a state to compiled code calls it first."""
    known = getattr(state, "_known", ())
    if known:
        arr = state.arr
        if (known[0] is arr and known[1] is state.rules and arr.dtype is known[3] and arr.flags.writeable
                and arr[:L.SCRATCH].tobytes() == known[2]):
            return state
    if not isinstance(state, State):
        raise StateError(f"not a game state: {type(state).__name__} (evora_sim.api.new_game makes one)")
    arr = state.arr
    if type(arr) is not np.ndarray or arr.dtype != np.int32 or arr.shape != (L.STATE_SIZE,):
        got = f"{arr.dtype} of shape {arr.shape}" if isinstance(arr, np.ndarray) else type(arr).__name__
        raise StateError(f"state.arr must be a numpy int32 array of {L.STATE_SIZE} cells, as new_game makes, "
                         f"got {got}")
    if not (arr.flags.c_contiguous and arr.flags.writeable):
        raise StateError("state.arr must be a contiguous, writeable array (a slice or a read-only view is not: "
                         "give it state.arr.copy())")
    if not isinstance(state.rules, Rules):
        raise StateError(f"state.rules must be the Rules the game is played under (evora_sim.rules.load_rules), "
                         f"got {type(state.rules).__name__}")
    problem = statecheck.state_problem(arr, state.rules)
    if problem:
        raise StateError(f"state.arr is not a position these rules can reach: {problem}")
    return _known_playable(state)


def _below(value, n: int, what: str) -> int:
    """``value`` as an index from 0 to ``n - 1`` (a seat, a column): compiled code reads there."""
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, (int, np.integer)) or not 0 <= value < n:
        raise ValueError(f"{what} must be a whole number from 0 to {n - 1}, got {value!r}")
    return int(value)


def new_game(rules: Rules | None = None, n_players: int = 4, seed: int = 0) -> State:
    rules = rules or load_rules()
    n = check_players(n_players)
    problem = gift_seat_problem(rules, n)
    if problem:
        raise ValueError(problem)
    seed = check_seed(seed)
    arr = E.new_state()
    E.init_game(arr, rules.packed, n, np.int64(seed))
    return engine_state(arr, rules, seed)


_BUF = np.empty(L.N_ACTIONS, dtype=np.int32)


def legal_actions(state: State) -> list[int]:
    check_state(state)
    n = E.legal_actions(state.arr, state.rules.packed, _BUF)
    return _BUF[:n].tolist()


def apply_action(state: State, action: int) -> None:
    legal = legal_actions(state)
    if action not in legal:
        raise IllegalActionError(
            f"action {action} ({describe_action(state, action)}) is not legal at this decision point "
            f"({decision_name(state)}); legal: {legal}")
    E.apply_action(state.arr, state.rules.packed, np.int64(action))
    _known_playable(state)


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
        arr = check_state(state).arr.copy()
        E.final_scoring(arr, state.rules.packed)
    seats = []
    for p in range(state.n_players):
        b = L.PLAYERS + p * L.PSTRIDE
        row = {name: int(arr[b + L.P_VP_BUILD + i]) for i, name in enumerate(L.BREAKDOWN_NAMES)}
        row["parts_left"] = int(arr[b + L.P_STONES] + arr[b + L.P_CAPS])
        row.update(start_vp_entry(state.rules, state.n_players, p))
        row["total"] = int(arr[b + L.P_FINAL])
        seats.append(row)
    return {"seats": seats, "winner": int(arr[L.G_WINNER])}


def start_vp_entry(rules, n_players: int, seat: int) -> dict:
    """``{"start_vp": VP}`` when the rules' variant key players.start_vp gives some seat of this
    game starting VP (they count in the total, in no category; ``x.5``: x VP and the half point
    of V2); ``{}`` otherwise, so scoring tables of the rulebook game keep their shape."""
    values = rules.data["players"]["start_vp"]
    if not any(values[:n_players]):
        return {}
    return {"start_vp": values[seat]}


# ---------------------------------------------------------------------------------------------
# reading a position: what a custom strategy (strategies/custom.py) needs, all from the engine
# ---------------------------------------------------------------------------------------------
WHITE = L.WHITE          # owner code of a white stone (seats are 0 .. n-1)


@njit(cache=True)
def _score_now(s, R, p):
    E.height_majorities(s, R, p, p + 1)   # writes scratch space only, never the game
    return E.standing(s, R, p)


def score_now(state: State, seat: int) -> int | float:
    """``seat``'s total if the game were scored now: VP so far plus the Emperor bonus, column
    and height majorities the position would give, and its starting VP (the measure ``greedy``
    maximises). A whole number; ``x.5`` when the seat's starting VP carry the half point (V2),
    so that comparing two seats' ``score_now`` gives the final scoring's order (the parts left
    aside)."""
    check_state(state)
    value = float(_score_now(state.arr, state.rules.packed, _below(seat, state.n_players, "seat")))
    return int(value) if value.is_integer() else value


def n_columns(state: State) -> int:
    """The column spaces of the Temple in this game."""
    return state.get(L.G_NCOLS)


def column_parts(state: State, column: int) -> list[int]:
    """Owners of the parts in ``column``, bottom to top (a seat, or ``WHITE``); a fifth part
    is the capital."""
    column = _below(column, n_columns(state), "column")
    h = state.get(L.COL_H + column)
    base = L.COL_PART + column * L.COLPARTS
    return state.arr[base:base + h].tolist()


def column_leader(state: State, column: int) -> int:
    """D7: who holds ``column`` (a seat, or ``WHITE``), or -1 if nobody does yet."""
    column = _below(column, n_columns(check_state(state)), "column")
    return int(E.column_leader(state.arr, state.rules.packed, column))


def column_holders(state: State) -> list[int]:
    """For each column, the seat whose majority worker stands on it (D7), or -1: the column
    majorities a seat would score now."""
    n = state.get(L.G_NCOLS)
    return state.arr[L.COL_HOLDER:L.COL_HOLDER + n].tolist()


def distinct_actions(state: State, actions: list[int] | None = None) -> list[int]:
    """``actions`` (default: the legal actions) without interchangeable repeats: of several
    columns with the same content (parts, majority worker, Emperor tile), only the first is
    kept; the positions they lead to score the same. Lookahead over these is shorter."""
    if actions is None:
        actions = legal_actions(state)
    arr = state.arr
    out, seen = [], set()
    for a in actions:
        if L.A_COLUMN <= a < L.A_SKIP:
            c = a - L.A_COLUMN
            base = L.COL_PART + c * L.COLPARTS
            sig = (int(arr[L.COL_TILE + c]), int(arr[L.COL_HOLDER + c]),
                   tuple(arr[base:base + arr[L.COL_H + c]].tolist()))
            if sig in seen:
                continue
            seen.add(sig)
        out.append(a)
    return out


def finish(state: State, policy="greedy", until: str = "turn", rng=None) -> State:
    """Play ``state`` on, in place, until the turn of the seat to move is over (``until="turn"``)
    or the effect being resolved is finished (``until="effect"``), choosing with ``policy``,
    and return it. A position is worth judging only there: in the middle of an effect, or
    before the option of a turn, the VP it is about to score are not on the board yet.

    ``policy`` is a built-in spec (``"greedy"``, ``"balanced(plan=action)"``, ``"random"``:
    compiled, fast) or a function ``(state, legal_actions, rng) -> action``. Ties and ``random``
    draw from ``rng`` (a numpy Generator, e.g. the one your strategy was given) so that games
    stay reproducible; without one, from the state's seed."""
    if until not in ("turn", "effect"):
        raise ValueError(f"until must be 'turn' or 'effect', got {until!r}")
    check_state(state)
    if rng is None:
        rng = np.random.default_rng([state.seed, state.get(L.G_NTURNS)])
    if callable(policy):
        seat, turn = state.get(L.G_CUR), state.get(L.G_NTURNS)
        while not is_terminal(state) and state.get(L.G_CUR) == seat and state.get(L.G_NTURNS) == turn:
            if until == "effect" and not in_effect(state):
                break
            legal = legal_actions(state)
            apply_action(state, legal[0] if len(legal) == 1 else policy(state.clone(), legal, rng))
        return state
    strategy = as_strategy(policy)
    if not isinstance(strategy, Strategy):
        raise ValueError(f"policy {policy!r} is not a built-in spec or a function")
    kinds, W = seat_arrays([strategy] * L.MAXP)
    rs = np.array([rng.integers(0, 2**63)], dtype=np.uint64)
    global _FINISH_WORK
    if _FINISH_WORK is None or strategy.search:   # the compiled loop's buffers, made once
        _FINISH_WORK = gameloop.buffers(L.MAXP, [strategy])[1:4]
    legal, _, work = _FINISH_WORK
    if gameloop.play_on(state.arr, state.rules.packed, kinds, W, 0 if until == "effect" else 1, legal, rs,
                        work) == gameloop.ILLEGAL:
        raise ValueError(f"policy {strategy.name!r} chose an action that is not legal; the state is left "
                         "before that decision")
    return _known_playable(state)


_FINISH_WORK = None


def in_effect(state: State) -> bool:
    """True while an effect (a build, a card, a tile) is being resolved: the decisions that
    follow finish it, and belong to the same player."""
    return state.get(L.G_SP) > 0


def action_column(action: int) -> int | None:
    """The column an action names (building, an Emperor tile, a Governor card), else None."""
    return int(action) - L.A_COLUMN if L.A_COLUMN <= int(action) < L.A_SKIP else None


# the kinds of actions, by their first code (layout.py holds the whole table)
_KINDS = ((L.A_SPACE, "space"), (L.A_COLUMN, "column"), (L.A_SKIP, "skip"), (L.A_STACK, "stack"),
          (L.A_HEIGHT, "height"), (L.A_WORKER, "worker"), (L.A_PLAY, "play"), (L.A_TILE, "tile"),
          (L.A_DISCARD, "discard"), (L.A_SITE, "site"), (L.A_END, "end"),
          (L.A_EMPTILE, "emperor_tile"), (L.A_DRAW, "draw"))


def action_kind(action: int) -> str:
    """What kind of choice an action code is: ``space`` (move a worker there), ``column``,
    ``skip``, ``stack`` (draw from / use the Temple card of a stack), ``height``, ``worker``,
    ``play`` (a card), ``tile`` (pay cards for an instant tile), ``discard``, ``site`` (use the
    Construction Site action), ``end`` (end the turn), ``emperor_tile`` or ``draw`` (1 card)."""
    a = int(action)
    kind = "unknown"
    for first, name in _KINDS:
        if a >= first:
            kind = name
    return kind if 0 <= a < L.N_ACTIONS else "unknown"


def decision_name(state: State) -> str:
    sp = state.get(L.G_SP)
    if sp:
        kind = state.get(L.FRAMES + (sp - 1) * L.FW)
        return {L.F_BUILD: "build", L.F_EMP_PLACE: "Emperor tile", L.F_EMP_FLIP: "flip Emperor tile",
                L.F_TEMPLE: "Temple card", L.F_CENT: "Centurion", L.F_GOV_COLUMN: "Governor column",
                L.F_GOV_HEIGHT: "Governor height", L.F_DISCARD: "pay a card for a tile",
                L.F_DRAW: "draw"}.get(kind, "frame")
    return PHASE_TITLES[L.PHASE_NAMES[state.get(L.G_PHASE)]]


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
        return f"{verb} {type_title(a - L.A_STACK)} stack"
    if L.A_HEIGHT <= a < L.A_WORKER:
        h = a - L.A_HEIGHT + 1
        return "capitals" if h == 5 else f"height {h}"
    if L.A_WORKER <= a < L.A_PLAY:
        return f"worker {a - L.A_WORKER}"
    if L.A_PLAY <= a < L.A_TILE:
        return f"play {effect_title(a - L.A_PLAY)}"
    if L.A_TILE <= a < L.A_DISCARD:
        return f"pay 3 cards for {tile_title(a - L.A_TILE)}"
    if L.A_DISCARD <= a < L.A_SITE:
        return f"pay {effect_title(a - L.A_DISCARD)}"
    if a == L.A_SITE:
        return "use the site action"
    if a == L.A_END:
        return "end turn"
    if a == L.A_DRAW:
        return "draw 1 card"
    if L.A_EMPTILE <= a < L.N_ACTIONS:
        return f"Emperor tile {a - L.A_EMPTILE}"
    return f"action {a}"


# ---------------------------------------------------------------------------------------------
# asking a player: any strategy spec's decision at a given position
# ---------------------------------------------------------------------------------------------
def choose(spec, state: State, seed: int = 0) -> int:
    """The action the strategy ``spec`` takes at this decision of ``state`` (which is not
    changed), so a player can be probed position by position: ``choose("cardheights", state)``.

    ``spec`` is anything ``--strategies`` takes for one seat (a built-in, ``NAME(weights)``,
    ``mcts(...)``, ``FILE.toml:NAME``, ``FILE.py:NAME``) or a strategy object. Its random
    choices (ties, ``random``, a search's samples) draw from ``seed``, so the same call gives
    the same answer. A decision with one legal action asks nobody (P5) and returns it. Built-in
    players decide in the compiled engine, exactly as in a game; a game's own decisions may
    still differ from this one where its random stream, shaped by the decisions before,
    breaks a tie otherwise. Raises ValueError at the end of the game, and StrategyError if the
    strategy answers with an action that is not legal."""
    legal = legal_actions(state)
    if not legal:
        raise ValueError("the game is over: there is no decision to make")
    if len(legal) == 1:
        return legal[0]
    seed = check_seed(seed)
    strategy = as_strategy(spec)
    seat = current_player(state)
    if is_custom(strategy):
        a = strategy.new_player()(state.clone(), list(legal), np.random.default_rng([int(seed), seat]))
    elif not strategy.kind:                                     # random: no evaluation
        a = legal[int(np.random.default_rng(int(seed)).integers(len(legal)))]
    else:
        a = _compiled_choice(strategy, state, legal, int(seed))
    if isinstance(a, (bool, np.bool_)) or not isinstance(a, (int, np.integer)) or int(a) not in legal:
        raise StrategyError(f"strategy {strategy.name!r} chose {a!r} at {decision_name(state)!r}, which is not "
                            f"legal; legal: {legal}")
    return int(a)


def _compiled_choice(strategy, state: State, legal: list[int], seed: int) -> int:
    """A built-in's decision through the game loop's own dispatch (``strategies.decide``), in
    fresh buffers (nothing kept from another position)."""
    kinds, W = seat_arrays([strategy] * state.n_players)
    _, _, rs, work, _ = gameloop.buffers(state.n_players, [strategy])
    rs[0] = np.uint64(seed)
    seat = state.arr[L.G_CUR].astype(np.int32)          # typed as the game loop types it: no new compile
    moves = np.array(legal, dtype=np.int32)
    return int(decide(kinds[seat], W, seat, state.arr.copy(), state.rules.packed, moves, len(moves), rs, work))


class Bot:
    """A player as an object, in the manner of OpenSpiel's bots: ``step(state)`` returns the
    action ``spec`` takes there (:func:`choose`), each call with its own seed drawn from
    ``seed``, so a sequence of calls is reproducible.

    >>> bot = Bot("greedy", seed=3)
    >>> state = new_game(n_players=2, seed=1)
    >>> bot.step(state) in legal_actions(state)
    True
    """

    def __init__(self, spec, seed: int = 0):
        self.strategy = as_strategy(spec)
        self.rng = np.random.default_rng(check_seed(seed))

    def step(self, state: State) -> int:
        return choose(self.strategy, state, int(self.rng.integers(2**63)))
