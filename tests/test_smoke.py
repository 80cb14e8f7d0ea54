"""A seeded random game runs to its end through the public API."""
import random

from evora_sim import api


def test_random_game_reaches_an_end_trigger():
    state = api.new_game(n_players=3, seed=5)
    rng = random.Random(5)
    while not api.is_terminal(state):
        api.apply_action(state, rng.choice(api.legal_actions(state)))
    scoring = api.final_scoring(state)
    assert scoring["winner"] in (0, 1, 2)
    assert sum(api.returns(state)) == 1.0
