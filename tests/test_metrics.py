"""The recorded metrics as declared in evora_sim.metrics: the shared scores as if the game ended
now, kept between turns and scored again only when a part or an Emperor tile changes, equal the
engine's scoring from scratch at every turn; and every declared column reaches the tables with
its declared type and the storage checks its seat values."""
from __future__ import annotations

import numpy as np
import pytest

from evora_sim import engine as E
from evora_sim import layout as L
from evora_sim import metrics as M
from evora_sim.batch import play_batch, play_game
from evora_sim.metrics import standings
from evora_sim.rules import load_rules
from evora_sim.storage import seat_ranges
from evora_sim.result_tables import batch_tables

RULES = load_rules()
VARIANT = load_rules(overrides=("players.start_vp=0,1.5,2,3", "end.tie_break=shared"))


@pytest.mark.parametrize("rules, n, field", [(RULES, 4, ["random"] * 4), (RULES, 2, ["greedy(plan=action)", "random"]),
                                             (VARIANT, 3, ["random"] * 3)])
def test_kept_standings_equal_scoring_from_scratch_at_every_turn(rules, n, field):
    """Each game's log re-stepped: at every turn the kept totals and leader equal
    ``engine.leader_now``'s, and the kept end part is reused at some turns and scored again at
    others (so both ways are checked)."""
    track = np.zeros(M.TRACK_SIZE, dtype=np.int64)
    fresh = np.zeros(L.MAXP, dtype=np.int64)
    legal = np.zeros(L.N_ACTIONS, dtype=np.int32)
    reused = rescored = 0
    for seed in range(8):
        _, log = play_game(rules, n, seed, field)
        s = E.new_state()
        E.init_game(s, rules.packed, n, seed)
        track[:] = 0
        standings.start(track)
        turn = -1
        for a in log:
            if s[L.G_PHASE] != L.PH_SETUP and s[L.G_NTURNS] != turn:
                turn = s[L.G_NTURNS]
                key = track[standings.T_KEY]
                standings.now(s, rules.packed, track)
                reused, rescored = reused + (key == track[standings.T_KEY]), rescored + (key != track[standings.T_KEY])
                want = E.leader_now(s.copy(), rules.packed, fresh, 0)
                assert track[standings.T_NOW:standings.T_NOW + n].tolist() == fresh[:n].tolist(), (seed, turn)
                assert standings.leader(s, rules.packed, track) == want, (seed, turn)
            E.legal_actions(s, rules.packed, legal)
            E.apply_action(s, rules.packed, np.int64(a))
    assert reused > 0 and rescored > 0


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
