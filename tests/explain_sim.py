"""Simulated runs with planted mechanisms, for the tests of ``analysis.explain_stats``: a toy game whose
outcome rule is known, so the true parts of every seat's deviation are known too (to any precision,
from enough simulated seeds) and the decomposition's intervals can be checked to cover them.

The toy game: ``n`` seats, ``rounds`` rounds of one turn each in seat order, every turn scoring
0..``points`` VP at random. Each seed draws its turns' points once and plays them under every seat
rotation (rotation r gives seat s the points of slot (s - r) mod n), so a seed's games are
correlated as a real seed's rotations are (they share their stacks). The end is triggered in the
last round after the turn of a seat drawn at random; the round is finished (the rulebook). The
winner has the most VP, then the later seat (the tie-break). Planted mechanisms:

- ``extra``: the last seat plays one more turn after the round, scoring 0..``extra`` VP: an extra
  scoring turn, after the trigger;
- ``points`` small (0..1): ties on VP are common and the later seat wins them: the tie-break's
  seat order.

``toy_run`` returns the games and seats tables in the run folders' schema (the columns
``analysis.explain_stats`` reads).
"""
from __future__ import annotations

import numpy as np
import pandas as pd

from evora_sim.ranking import DECIDED_BY


def _leader(score: np.ndarray) -> np.ndarray:
    """The seat ahead in each row: most VP, then the later seat."""
    n = score.shape[1]
    return np.argmax(score * (n + 1) + np.arange(n), axis=1)


def toy_run(seeds: int, rng: np.random.Generator, n: int = 4, rounds: int = 4, points: int = 4,
            extra: int = 0) -> tuple[pd.DataFrame, pd.DataFrame]:
    """The games and seats tables of ``seeds`` seeds x ``n`` rotations of the toy game."""
    turn_points = rng.integers(0, points + 1, size=(seeds, rounds, n))
    bonus = rng.integers(0, extra + 1, size=seeds) if extra else np.zeros(seeds, np.int64)
    trig_slot = rng.integers(0, n, size=seeds)
    games, seats = [], []
    for r in range(n):
        slot_of = (np.arange(n) - r) % n                    # seat s plays slot (s - r) mod n
        pts = turn_points[:, :, slot_of]                     # (seeds, rounds, seat)
        trig = (trig_slot + r) % n                           # the trigger follows its slot's seat
        before_last = pts[:, :-1, :].sum(axis=1)
        last = pts[:, -1, :]
        seat = np.arange(n)[None, :]
        at_trigger = before_last + np.where(seat <= trig[:, None], last, 0)
        final = before_last + last
        final[:, n - 1] += bonus
        lead_trig = _leader(at_trigger)
        before_turn = np.full((seeds, n), -1)
        running = at_trigger.copy()
        for s in range(n):                                   # the turns after the trigger, in order
            after = s > trig
            before_turn[:, s] = np.where(after, _leader(running), -1)
            running[:, s] += np.where(after, last[:, s], 0)
        winner = _leader(final)
        top2 = np.sort(final, axis=1)[:, -2:]
        decided = np.where(top2[:, 1] > top2[:, 0], DECIDED_BY.index("vp"), DECIDED_BY.index("seat_order"))
        ids = np.arange(seeds) * n + r
        games.append(pd.DataFrame({"game_id": ids, "winner_seat": winner, "trigger_seat": trig,
                                   "leader_at_trigger": lead_trig,
                                   "decided_by": pd.Categorical.from_codes(decided, categories=DECIDED_BY)}))
        seats.append(pd.DataFrame({"game_id": np.repeat(ids, n), "seat": np.tile(np.arange(n), seeds),
                                   "leader_before_final_turn": before_turn.reshape(-1)}))
    return pd.concat(games, ignore_index=True), pd.concat(seats, ignore_index=True)
