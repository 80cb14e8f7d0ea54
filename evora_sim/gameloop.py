"""The one game loop and its results, shared by the compiled batch driver
(:mod:`evora_sim.batch`) and the driver for custom Python seats (:mod:`evora_sim.mixed`).

Both drivers play the same steps with the same buffers and random stream, so a table of
built-ins plays exactly the same games whichever driver runs it. Kept apart from both so that
neither driver imports the other's internals (batch dispatches to mixed; mixed needs only this).
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from numba import njit

from strategies.compiled import KIND_RANDOM
from strategies.decide import choose, new_buffers, new_game
from strategies.errors import StrategyError
from strategies.mcts import WHY_TOP, search_notes as searched
from strategies.registry import as_strategy, tree_nodes, turn_tree_shape

from . import engine as E
from . import layout as L
from . import metrics as M
from .metrics import T_END, T_REFUSED, T_TURN, TRACK_SIZE
from .rng import STRATEGY_STREAM, randbelow, seed_stream

ILLEGAL = -1        # what advance returns instead of the legal actions when a seat chose an illegal one


@njit(cache=True, inline="always")
def is_legal(a, legal, k):
    """Whether ``a`` is one of the ``k`` legal actions. Asked only of a compiled strategy's
    choice (a random or forced move is drawn from ``legal``), which costs far more than k
    compares: a planner that valued every action NaN returns -1 (issue 43)."""
    for i in range(k):
        if legal[i] == a:
            return True
    return False


@njit(cache=True, inline="always")
def is_play(a):
    """Whether action ``a`` plays a card from hand or takes an instant tile (one block of
    actions, in the engine's play-counter order)."""
    return a >= L.A_PLAY and a < L.A_PLAY + L.NTRACK


@njit(cache=True, inline="always")
def advance(s, R, kinds, W, custom, legal, rs, work, log, steps, track):
    """The one game loop: play forced moves and compiled seats until the game ends or a seat
    whose ``custom`` flag is set must choose (that seat is Python's: evora_sim.mixed).
    Records actions in ``log`` while it has room, and the recorded metrics in ``track``
    (:mod:`evora_sim.metrics`, from its first step, ``steps`` = 0). Returns (legal actions now in ``legal``, or 0 once the game
    is over, or ``ILLEGAL`` when the seat to move chose an action that is not legal: it is
    never played, and ``track[T_REFUSED]`` holds it; steps so far)."""
    cap = log.shape[0]
    if steps == 0:
        track[:] = 0
        track[T_TURN] = -1                      # the first turn is looked at too
        M.start(s, track)
    k = E.legal_actions(s, R, legal)
    while k > 0:
        if s[L.G_END_TRIGGER] != track[T_END]:
            track[T_END] = s[L.G_END_TRIGGER]
            M.end_triggered(s, R, track)
        if s[L.G_NTURNS] != track[T_TURN]:
            # the setup placements are no turn: look again at the next one
            track[T_TURN] = -1 if s[L.G_PHASE] == L.PH_SETUP else s[L.G_NTURNS]
            M.turn_begins(s, R, track)
        p = s[L.G_CUR]
        if k == 1:
            a = np.int64(legal[0])            # P5: a forced move asks no strategy
        elif custom[p]:
            return k, steps
        elif kinds[p] == KIND_RANDOM:
            # handled here: every call passing arrays costs atomic reference counts
            a = np.int64(legal[randbelow(rs, k)])
        else:
            a = choose(kinds[p], W, p, s, R, legal, k, rs, work)
            if not is_legal(a, legal, k):
                track[T_REFUSED] = a
                return ILLEGAL, steps
        if steps < cap:
            log[steps] = a
        if is_play(a):
            M.card_played(s, R, a, track)
        k = E.step(s, R, a, legal)
        steps += 1
    return 0, steps


UNTIL_EFFECT, UNTIL_TURN = 0, 1


@njit(cache=True, _nrt=False)
def play_on(s, R, kinds, W, until, legal, rs, work):
    """Play the seat to move's decisions with its compiled strategy (``kinds``, ``W`` by seat)
    until the effect being resolved is finished (``UNTIL_EFFECT``) or the turn is over
    (``UNTIL_TURN``). The game loop's own steps, stopped early: what a custom strategy's look
    ahead needs (``api.finish``). Returns ``ILLEGAL`` (nothing played) if the strategy chose an
    action that is not legal, else 0."""
    p = s[L.G_CUR]
    turn = s[L.G_NTURNS]
    k = E.legal_actions(s, R, legal)
    while k > 0 and s[L.G_CUR] == p and s[L.G_NTURNS] == turn:
        if until == UNTIL_EFFECT and s[L.G_SP] == 0:
            break
        if k == 1:
            a = np.int64(legal[0])
        elif kinds[p] == KIND_RANDOM:
            a = np.int64(legal[randbelow(rs, k)])
        else:
            a = choose(kinds[p], W, p, s, R, legal, k, rs, work)
            if not is_legal(a, legal, k):
                return ILLEGAL
        k = E.step(s, R, a, legal)
    return 0


@njit(cache=True, inline="always")
def start(s, R, n, seed, rs, work):
    """A new game in ``s``, the strategies' random stream of its seed, and seats' ``work`` with
    nothing kept from an earlier game."""
    E.init_game(s, R, n, seed)
    seed_stream(rs, seed, STRATEGY_STREAM)
    new_game(work)




def buffers(n_players: int, strategies=()):
    """The scratch arrays of the compiled game loop: which seats are custom (none here), the
    legal actions, the strategies' random stream, the seats' work (one tuple; a search tree
    large enough for the largest search budget among ``strategies``), the tension counters."""
    return (np.zeros(n_players, dtype=np.bool_), np.empty(L.N_ACTIONS, dtype=np.int32),
            np.zeros(1, dtype=np.uint64), new_buffers(tree_nodes(strategies), turn_tree_shape(strategies)),
            np.zeros(TRACK_SIZE, dtype=np.int64))


@njit(cache=True)
def record(s, n, g, steps, games, seats, stats, states, track):
    """Row ``g`` of the result arrays from the finished game ``s`` of ``steps`` decisions: the
    loop's own columns (``GAME_BASE``, ``SEAT_BASE``), then every recorded metric's from its
    ``track`` (:mod:`evora_sim.metrics`)."""
    games[g, 0] = s[L.G_ROUND]
    games[g, 1] = s[L.G_NTURNS]
    games[g, 2] = s[L.G_END_TRIGGER]
    games[g, 3] = s[L.G_WINNER]
    games[g, 4] = steps
    games[g, 5] = s[L.G_LOT]
    for p in range(n):
        b = L.PLAYERS + p * L.PSTRIDE
        for k in range(L.NBREAK):
            seats[g, p, k] = s[b + L.P_VP_BUILD + k]
        seats[g, p, L.NBREAK] = s[b + L.P_FINAL]
        seats[g, p, L.NBREAK + 1] = s[b + L.P_STONES] + s[b + L.P_CAPS]
        seats[g, p, L.NBREAK + 2] = s[b + L.P_TURNS]
        sb = L.STATS + p * L.SSTRIDE
        for k in range(L.SSTRIDE):
            stats[g, p, k] = s[sb + k]
    M.record(s, n, g, games, seats, states, track)


GAME_BASE, SEAT_BASE = M.GAME_BASE, L.BREAKDOWN_NAMES + M.SEAT_BASE
GAME_COLUMNS = GAME_BASE + tuple(c.name for c in M.columns("games"))
SEAT_COLUMNS = SEAT_BASE + tuple(c.name for c in M.columns("seats"))
CARD_COLUMNS = tuple(c.name for c in M.columns("cards"))


@dataclass
class BatchResult:
    """Arrays of one batch: games[g, GAME_COLUMNS], seats[g, p, SEAT_COLUMNS], stats[g, p, SSTRIDE],
    states[g, p, CARD_COLUMNS, card]."""

    seeds: np.ndarray
    games: np.ndarray
    seats: np.ndarray
    stats: np.ndarray
    states: np.ndarray
    actions: np.ndarray | None = None    # [g, action]: every game's actions, when recorded


def refused(strategies, s, track, steps: int, seed: int) -> StrategyError:
    """The error of a game stopped because the seat to move in ``s`` chose the illegal action
    ``track[T_REFUSED]`` (``advance`` returned ``ILLEGAL``): it names the strategy, the action
    and where, and the game's seed, so the game can be replayed."""
    p = int(s[L.G_CUR])
    return StrategyError(
        f"strategy {strategies[p].name!r} (seat {p}) chose action {int(track[T_REFUSED])}, which is not legal, "
        f"at decision {steps + 1} of the game with seed {seed}; the game was stopped, nothing of it is kept")


def seat_strategies(n_players: int, strategies) -> list:
    """One strategy object per seat from built-in ids, spec strings (``greedy``,
    ``balanced(column=2)``, ``FILE.toml:NAME``, ``FILE.py:NAME``) or strategy objects."""
    items = list(np.asarray(strategies).tolist()) if isinstance(strategies, np.ndarray) else list(strategies)
    if len(items) != n_players:
        raise ValueError(f"need one strategy per seat ({n_players}), got {len(items)}")
    return [as_strategy(x) for x in items]


def new_result(seeds: np.ndarray, n_players: int) -> BatchResult:
    g = seeds.shape[0]
    return BatchResult(seeds, np.zeros((g, len(GAME_COLUMNS)), dtype=np.int32),
                       np.zeros((g, n_players, len(SEAT_COLUMNS)), dtype=np.int32),
                       np.zeros((g, n_players, L.SSTRIDE), dtype=np.int32),
                       np.zeros((g, n_players, len(CARD_COLUMNS), L.NTRACK), dtype=np.int32))



def search_notes(work) -> list[dict]:
    """What each search decision of a game saw, in order: the turn, the seat, how many actions
    its root searched, and the most visited (action, visits, the seat's mean reward)."""
    why, count = searched(work[1])
    out = []
    for row in why[:count]:
        top = [(int(row[3 + 3 * j]), int(row[4 + 3 * j]), float(row[5 + 3 * j]))
               for j in range(WHY_TOP) if row[3 + 3 * j] >= 0]
        out.append({"turn": int(row[0]), "seat": int(row[1]), "actions": int(row[2]), "top": top})
    return out
