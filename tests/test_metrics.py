"""The recorded metrics as declared in evora_sim.metrics: the shared scores as if the game ended
now, kept between looks and scored again only where a part or an Emperor tile changed, equal
the engine's scoring from scratch at every look; and every declared column reaches the tables with
its declared type and the storage checks its seat values."""
from __future__ import annotations

import numpy as np
import pytest
from numba import njit

from evora_sim import engine as E
from evora_sim import layout as L
from evora_sim import metrics as M
from evora_sim.batch import play_batch, play_game
from evora_sim.metrics import standings
from evora_sim.rng import STRATEGY_STREAM, randbelow, seed_stream
from evora_sim.rules import load_rules
from evora_sim.storage import seat_ranges
from evora_sim.result_tables import batch_tables

RULES = load_rules()
VARIANT = load_rules(overrides=("players.start_vp=0,1.5,2,3", "end.tie_break=shared"))
# the end part's categories weighted otherwise, and the end reached otherwise
OTHER = load_rules(overrides=("majority.min_parts=1", "emperor_tile.values=2,7", "majority.column_vp=3",
                              "end.after_trigger=one_more_turn", "supply.white_stones=4"))
LOOK_TURNS, LOOK_ANY = 0, 1


@njit(cache=True)
def checked_games(R, n, seeds, when, s, legal, rs, track, fresh, counts):
    """Random games whose kept standings are brought up to date at every turn's start and at
    the end trigger, as the game loop does (``LOOK_TURNS``), or at about one decision in three
    chosen at random (``LOOK_ANY``: several seats may then have moved between looks), and
    compared each time with ``engine.leader_now``'s scoring from scratch. Returns the first
    (seed, turn) whose totals or leader differ, or (-1, -1); ``counts`` gets the looks at which
    the end part was kept and those at which it changed."""
    for g in range(seeds.shape[0]):
        E.init_game(s, R, n, seeds[g])
        seed_stream(rs, seeds[g], STRATEGY_STREAM)
        track[:] = 0
        standings.start(track)
        turn, trigger = -1, 0
        k = E.legal_actions(s, R, legal)
        while k > 0:
            if when == LOOK_TURNS:
                look = s[L.G_PHASE] != L.PH_SETUP and (s[L.G_NTURNS] != turn or s[L.G_END_TRIGGER] != trigger)
            else:
                look = s[L.G_PHASE] != L.PH_SETUP and randbelow(rs, 3) == 0
            turn, trigger = s[L.G_NTURNS], s[L.G_END_TRIGGER]
            if look:
                before = track[standings.T_ENDGAME:standings.T_ENDGAME + n].copy()
                standings.now(s, R, track)
                same = True
                for p in range(n):
                    same = same and before[p] == track[standings.T_ENDGAME + p]
                counts[0 if same else 1] += 1
                want = E.leader_now(s, R, fresh, 0)
                for p in range(n):
                    if fresh[p] != track[standings.T_NOW + p]:
                        return seeds[g], turn
                if standings.leader(s, R, track) != want:
                    return seeds[g], turn
            a = legal[0] if k == 1 else legal[randbelow(rs, k)]
            k = E.step(s, R, np.int64(a), legal)
    return -1, -1


@pytest.mark.parametrize("rules", [RULES, VARIANT, OTHER], ids=["rulebook", "start_vp+shared", "other"])
@pytest.mark.parametrize("n", [2, 3, 4])
@pytest.mark.parametrize("when", [LOOK_TURNS, LOOK_ANY], ids=["turns", "any"])
def test_kept_standings_equal_scoring_from_scratch(rules, n, when):
    """Over 1,000 random games a case, the kept totals and leader equal ``engine.leader_now``'s
    at every look, and the end part is kept at some looks and changed at others."""
    s, legal = E.new_state(), np.zeros(L.N_ACTIONS, dtype=np.int32)
    rs, track = np.zeros(1, dtype=np.uint64), np.zeros(M.TRACK_SIZE, dtype=np.int64)
    fresh, counts = np.zeros(L.MAXP, dtype=np.int64), np.zeros(2, dtype=np.int64)
    seeds = np.arange(1000, dtype=np.int64) + 1000 * n
    assert checked_games(rules.packed, n, seeds, when, s, legal, rs, track, fresh, counts) == (-1, -1)
    assert counts[0] > 0 and counts[1] > 0


def test_kept_standings_in_games_of_the_planners():
    """The same at every turn of games played by planners (which build otherwise than random
    seats), each game's log re-stepped."""
    track = np.zeros(M.TRACK_SIZE, dtype=np.int64)
    fresh = np.zeros(L.MAXP, dtype=np.int64)
    legal = np.zeros(L.N_ACTIONS, dtype=np.int32)
    for n, field in ((2, ["greedy(plan=action)", "cardheights"]), (4, ["cardheights", "balanced", "random", "greedy"])):
        for seed in range(6):
            _, log = play_game(RULES, n, seed, field)
            s = E.new_state()
            E.init_game(s, RULES.packed, n, seed)
            track[:] = 0
            standings.start(track)
            turn = -1
            for a in log:
                if s[L.G_PHASE] != L.PH_SETUP and s[L.G_NTURNS] != turn:
                    turn = s[L.G_NTURNS]
                    standings.now(s, RULES.packed, track)
                    want = E.leader_now(s.copy(), RULES.packed, fresh, 0)
                    assert track[standings.T_NOW:standings.T_NOW + n].tolist() == fresh[:n].tolist(), (seed, turn)
                    assert standings.leader(s, RULES.packed, track) == want, (seed, turn)
                E.legal_actions(s, RULES.packed, legal)
                E.apply_action(s, RULES.packed, np.int64(a))


def test_declared_columns_reach_the_tables_and_the_checks():
    """Every metric's columns are in its table, in the registry's order, with the declared type;
    a seat column's range is checked on reading."""
    n = 3
    res = play_batch(RULES, n, np.arange(5, dtype=np.int64), ["random"] * n)
    tables = batch_tables(res, np.arange(5), 0, ["random"] * n)
    ranges = seat_ranges(n)
    for table in ("games", "seats", "cards"):
        declared = M.columns(table)
        names = [c for c in tables[table].columns if c in {d.name for d in declared}]
        assert names == [c.name for c in declared]
        for c in declared:
            assert tables[table][c.name].dtype == np.dtype(c.dtype), c.name
            if c.seat:
                assert ranges[(table, c.name)] == (0 if c.seat == "seat" else -1, n - 1)
    assert len(M.columns("games")) and len(M.columns("seats")) and len(M.columns("cards"))
