"""The turn bound (strategies/turn_bound.py) is never below the best end of turn.

A branch-and-bound turn search may skip a line only if its bound is below a value already found;
a bound below the true best would change the player's choice. So the bound is checked against
the planner's exact search (itself checked against a brute force in test_planner.py) at every
decision of whole games, for built-ins whose evaluations weigh different features, and it must
be finite there (a bound that gives up everywhere would pass the first check and prune nothing).
"""
from __future__ import annotations

import numpy as np
import pytest

from evora_sim import api
from evora_sim import layout as L
from evora_sim.batch import game_decisions
from evora_sim.rules import load_rules
from strategies import planner as P
from strategies.registry import parse_spec
from strategies.turn_bound import turn_bound

RULES = load_rules()


def _decisions(spec: str, n_players: int, seed: int):
    """Every decision after the setup of a game of ``spec`` against itself: (state, legal, n)."""
    seats = [parse_spec(spec)] * n_players
    return [(s, legal, n) for s, legal, n, _ in game_decisions(RULES, n_players, seed, seats)
            if s[L.G_PHASE] not in (L.PH_SETUP, L.PH_TERMINAL)]


@pytest.mark.parametrize("spec,n_players,seed", [
    ("cardheights", 4, 9000), ("cards", 2, 9001), ("blocker", 2, 9002), ("majority", 2, 9003),
    ("emperor", 3, 9004),
])
def test_bound_never_below_the_exact_turn_search(spec, n_players, seed):
    W = np.array([parse_spec(spec).weights] * n_players, dtype=np.float64)
    ps, pl, bk, bv, line, hk, key, val, stamp, _, meta, top, _ = P.new_plan_work()
    rs = np.zeros(1, dtype=np.uint64)
    checked = 0
    for s, legal, n in _decisions(spec, n_players, seed):
        p = int(s[L.G_CUR])
        best = P.search_turn(s.copy(), RULES.packed, W, p, legal, n, rs, ps, pl, bk, bv, line, hk, key, val,
                             stamp, meta, top)
        bound = turn_bound(s, RULES.packed, p, W, p)
        assert np.isfinite(bound), f"no bound at decision {checked}"
        assert bound >= best, f"decision {checked}: bound {bound} below the best end of turn {best}"
        checked += 1
    assert checked > 20


def test_bound_gives_up_on_a_negative_weight():
    W = np.array([parse_spec("greedy(vp=-1)").weights] * 2, dtype=np.float64)
    st = api.new_game(RULES, 2, 1)
    assert turn_bound(st.arr, RULES.packed, 0, W, 0) == np.inf

