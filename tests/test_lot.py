"""No player reads V4's lot (docs/RULES.md, P10 and V4).

Under ``end.tie_break = shared`` a permutation of the seats is drawn at the start of the game and
records one of the seats tied on VP as the winner. It is drawn from the game's seed and shown to
nobody, so a player must decide the same whatever it is: the same position with the lot drawn
otherwise gets the same decision from the same random stream. Like the order below the stacks'
tops (tests/test_planner.py, tests/test_mcts.py), and checked the same way. The positions are
those of the last rounds of seeded games, where the end and a tie are within a search's reach:
before the players valued a shared victory by its share, the 2-player expert's look-ahead and
the search player (its win reward, and its rollouts' plan cache keyed on the lot) decided
otherwise at about one of these decisions in a hundred to one in ten."""
from __future__ import annotations

import numpy as np
import pytest

from evora_sim import api
from evora_sim import engine as E
from evora_sim import layout as L
from evora_sim.batch import game_decisions
from evora_sim.gameloop import buffers
from evora_sim.rules import load_rules
from strategies.builtin import BUILTINS
from strategies.compiled import KIND_PLANNER
from strategies.decide import choose
from strategies.planner import core_hash, visible_hash
from strategies.registry import seat_arrays
from helpers import relot, to_move

SHARED = load_rules(overrides=["end.tie_break=shared"])
LATE = 8                 # the round the compared decisions start from (games end in round 10 to 12)
PLANNERS = [s.name for s in BUILTINS if s.kind == KIND_PLANNER]


def _finished(players: int, seed: int) -> np.ndarray:
    state = api.new_game(SHARED, players, seed)
    while not api.is_terminal(state):
        api.apply_action(state, api.choose("greedy", state, state.get(L.G_NTURNS)))
    return state.arr.copy()


def _tied(arr: np.ndarray, seats) -> np.ndarray:
    """The finished game ``arr`` with ``seats`` tied at the top on VP, and the winner the lot
    records among them (the seat placed highest in it), as ``engine.final_scoring`` would."""
    out = arr.copy()
    final = out[L.PLAYERS + L.P_FINAL:L.PLAYERS + out[L.G_NPLAYERS] * L.PSTRIDE:L.PSTRIDE]   # a view
    final[list(seats)] = max([final[q] + 1 for q in range(len(final)) if q not in seats] + [max(final[list(seats)])])
    out[L.G_WINNER] = max(seats, key=lambda q: E.lot_place(out, q))
    return out


def test_a_shared_victory_is_valued_by_its_share_whatever_the_lot():
    """Every seat's share of the victory (the players' win bonus and the search player's win
    reward, ``engine.victory_share``): the winner's 1 without a tie, 1/k to each of k seats tied
    at the top whichever of them the lot records, and under the rulebook's tie-break (D18) the
    whole victory to the seat it puts first."""
    R = SHARED.packed
    for players, seed in ((2, 3), (3, 4), (4, 5)):
        arr = _finished(players, seed)
        assert [E.victory_share(arr, R, q) for q in range(players)] == \
            [float(q == arr[L.G_WINNER]) for q in range(players)]
        seats = (0, players - 1) if players < 4 else (0, 2, 3)
        for lot in (arr, relot(arr), relot(relot(arr))):
            tied = _tied(lot, seats)
            assert [E.victory_share(tied, R, q) for q in range(players)] == \
                [(q in seats) / len(seats) for q in range(players)]
    rulebook = load_rules()                           # D18: fewer parts left, then the later seat
    arr = _tied(_finished(2, 3), (0, 1))
    arr[L.G_LOT] = 0
    parts = [arr[L.PLAYERS + q * L.PSTRIDE + L.P_STONES] + arr[L.PLAYERS + q * L.PSTRIDE + L.P_CAPS] for q in (0, 1)]
    arr[L.G_WINNER] = 1 if parts[1] <= parts[0] else 0
    assert [E.victory_share(arr, rulebook.packed, q) for q in (0, 1)] == [float(q == arr[L.G_WINNER]) for q in (0, 1)]


def test_the_planners_keys_leave_the_lot_out():
    """The keys the planner's transposition table, its plan cache and the search player's turn
    tree are kept by: the same for two positions that differ only in the lot, in play and once
    the game is over with the winner the lot recorded among tied seats."""
    for players, seed in ((2, 6), (4, 7)):
        state = api.new_game(SHARED, players, seed)
        for _ in range(60):
            api.apply_action(state, api.choose("greedy", state, 1))
        over = _finished(players, seed)
        for arr in (state.arr, _tied(over, (0, 1))):
            other = relot(arr)
            if arr[L.G_PHASE] == L.PH_TERMINAL:
                other = _tied(other, (0, 1))
                assert other[L.G_WINNER] != arr[L.G_WINNER]
            assert visible_hash(arr) == visible_hash(other) and core_hash(arr) == core_hash(other)


def _decide(kinds, W, arr, legal, n, rs, work):
    p = to_move(arr)
    return int(choose(kinds[p], W, p, arr.copy(), SHARED.packed, legal[:n].copy(), n, rs, work))


def _planners(players: int, g: int) -> list[str]:
    """Game ``g``'s field of built-in planners: every planner meets every other in turn."""
    return [PLANNERS[(g + j * (1 + g // len(PLANNERS))) % len(PLANNERS)] for j in range(players)]


@pytest.mark.parametrize("players, fields, games, least", [
    (2, lambda g: ["expert", "expert"], 14, 400),                    # the look-ahead a round further
    (4, lambda g: ["expert"] * 4, 6, 300),
    (2, lambda g: ["mcts(iterations=100)", "cardheights"], 3, 200),        # rollouts by a cached planner
    (2, lambda g: ["mcts(iterations=100, reward=win)", "greedy"], 4, 200),
    (2, lambda g: ["mcts(iterations=30, horizon=3, reward=win, root=decision)", "balanced"], 2, 100),
    (2, lambda g: _planners(2, g), 180, 4000),
    (4, lambda g: _planners(4, g), 90, 4000),
], ids=["expert2", "expert4", "mcts", "mcts_win", "mcts_win_decision", "planners2", "planners4"])
def test_no_player_reads_the_lot(players, fields, games, least):
    """At every decision with a choice from round ``LATE`` on, in seeded games under shared
    victory, each seat's player decides twice from the same random stream (each side with its
    own buffers, kept through the game, so a plan followed is compared too): at the position,
    and at the position with only the lot drawn otherwise. The decisions are the same."""
    compared = 0
    for g in range(games):
        field = fields(g)
        kinds, W = seat_arrays(field)
        sides = []
        for _ in range(2):
            _, _, rs, work, _ = buffers(players, field)
            rs[0] = np.uint64(700 + g)
            sides.append((rs, work))
        for arr, legal, n, _ in game_decisions(SHARED, players, 300 + g, field):
            if n < 2 or arr[L.G_ROUND] < LATE:
                continue
            mine, theirs = (_decide(kinds, W, x, legal, n, rs, work) for x, (rs, work) in zip((arr, relot(arr)), sides))
            assert mine == theirs, f"{field[to_move(arr)]}, game {g}, round {arr[L.G_ROUND]}: {mine} != {theirs}"
            compared += 1
    assert compared >= least, compared
