"""The tension figures the compiled loop counts (lead changes, the winner's comeback, the round
it led from for good, decided in the last round) equal the same figures recomputed in Python
from the score after each round of the re-stepped game."""
from __future__ import annotations

import numpy as np
import pytest

from evora_sim import layout as L
from evora_sim.batch import play_batch, play_game
from evora_sim.gameloop import GAME_COLUMNS
from evora_sim.rules import load_rules
from evora_sim.sample_game import score_rows

RULES = load_rules()


def standings(n, seed, field):
    """Score after each round (the last round's: the final score), re-stepped through the api as
    the report's sample game is, and the winner."""
    state, log = play_game(RULES, n, seed, field)
    return score_rows(RULES, n, seed, log), int(state[L.G_WINNER]), int(state[L.G_ROUND])


def expected(rows, winner):
    leaders = []
    for i, r in enumerate(rows):
        top = np.flatnonzero(r == r.max())
        leaders.append(winner if i == len(rows) - 1 else (int(top[0]) if len(top) == 1 else -1))
    sole = [x for x in leaders if x >= 0]
    changes = sum(a != b for a, b in zip(sole, sole[1:]))
    comeback = int(max([0] + [r.max() - r[winner] for r in rows[:-1]]))
    not_leading = [i + 1 for i, x in enumerate(leaders) if x != winner]
    return changes, comeback, (max(not_leading) + 1 if not_leading else 1)


@pytest.mark.parametrize("n, field", [(2, ["greedy(plan=action)", "random"]),
                                      (3, ["random"] * 3),
                                      (4, ["greedy(plan=action)", "random", "greedy(plan=action)", "random"])])
def test_tension_counted_by_the_loop_matches_the_rounds_replayed(n, field):
    seeds = np.arange(12, dtype=np.int64) + 100 * n
    res = play_batch(RULES, n, seeds, field)
    col = {c: i for i, c in enumerate(GAME_COLUMNS)}
    seen_change = False
    for g, seed in enumerate(seeds):
        rows, winner, rounds = standings(n, int(seed), field)
        assert len(rows) == rounds and winner == res.games[g, col["winner_seat"]]
        changes, comeback, led_from = expected(rows, winner)
        got = res.games[g, [col["lead_changes"], col["comeback"], col["winner_led_from"]]].tolist()
        assert got == [changes, comeback, led_from], f"seed {seed}"
        seen_change |= changes > 0
    assert seen_change                      # the figures are not all trivially 0


def test_tension_columns_in_the_games_table(tmp_path):
    from evora_sim.runner import Execution, simulate

    run = simulate(3, 6, "greedy(plan=action),random,random", seed=2, out=tmp_path / "r",
                   execution=Execution(chunk_size=3))
    g = run.games
    assert {"lead_changes", "comeback", "winner_led_from", "decided_last_round"} <= set(g.columns)
    assert (g["winner_led_from"].between(1, g["rounds"])).all()
    assert (g["decided_last_round"] == (g["winner_led_from"] == g["rounds"])).all()
