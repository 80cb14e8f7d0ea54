"""Asking a player for its decision from Python (issue 44, point 6): ``api.choose(spec, state,
seed)`` and the ``api.Bot`` around it. They answer as the player does in a game, leave the
state as it was, repeat themselves for the same seed, and cannot see the order of the cards
below the stacks' tops (P10): a no-peeking test written with the public API."""
from __future__ import annotations

import numpy as np
import pytest

from evora_sim import api
from helpers import reorder_hidden
from strategies.errors import StrategyError

SPECS = ["random", "greedy", "cardheights", "greedy(plan=action)", "mcts(iterations=30, horizon=3)",
         "strategies/examples/steady.py:Steady"]


def _positions(players: int, seed: int, every: int = 7, limit: int = 12):
    """Positions of a seeded game of greedy players where the seat to move has a real choice."""
    state, out, k = api.new_game(n_players=players, seed=seed), [], 0
    while not api.is_terminal(state) and len(out) < limit:
        legal = api.legal_actions(state)
        if len(legal) > 1:
            k += 1
            if k % every == 0:
                out.append(state.clone())
        api.apply_action(state, api.choose("greedy", state, k))
    return out


@pytest.mark.parametrize("spec", SPECS)
def test_choose_answers_a_legal_action_and_leaves_the_state_as_it_was(spec):
    for state in _positions(3, 41, limit=3):
        before = state.arr.copy()
        a = api.choose(spec, state, 5)
        assert a in api.legal_actions(state) and (state.arr == before).all()
        assert api.choose(spec, state, 5) == a                         # same seed, same answer


@pytest.mark.parametrize("spec, players", [
    ("greedy", 4), ("cardheights", 4), ("expert", 4), ("mcts(iterations=40, horizon=3)", 4),
    ("mcts(iterations=40, horizon=3, rollout=expert)", 4), ("expert", 2)])     # 2 players: two plies
def test_no_player_peeks_below_the_top_cards(spec, players):
    """P10 through the public API: the same position with the cards below each stack's top in
    another order gets the same decision."""
    rng = np.random.default_rng(3)
    differed = 0
    for state in _positions(players, 77, every=5, limit=10):
        other = reorder_hidden(state, rng)
        differed += bool((other.arr != state.arr).any())
        assert api.choose(spec, state, 11) == api.choose(spec, other, 11)
    assert differed >= 5


def test_a_bot_steps_reproducibly_and_a_finished_game_has_no_decision():
    state = _positions(2, 5, limit=1)[0]
    a, b = api.Bot("balanced", seed=4), api.Bot("balanced", seed=4)
    assert [a.step(state) for _ in range(3)] == [b.step(state) for _ in range(3)]
    over = api.new_game(n_players=2, seed=1)
    while not api.is_terminal(over):
        api.apply_action(over, api.legal_actions(over)[0])
    with pytest.raises(ValueError, match="game is over"):
        api.choose("greedy", over)


def test_a_custom_strategy_that_answers_nonsense_is_named(tmp_path):
    bad = tmp_path / "bad.py"
    bad.write_text("def choose(state, legal, rng):\n    return -7\n")
    state = _positions(2, 5, limit=1)[0]
    with pytest.raises(StrategyError, match="not legal"):
        api.choose(f"{bad}:choose", state)
