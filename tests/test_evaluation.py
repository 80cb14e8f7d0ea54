"""The compiled evaluation (``strategies.compiled.evaluate``) against a plain restatement of its
features, read straight from the state's fields.

The compiled evaluation counts every seat's columns in one pass and shares it between the
features (column majorities, secured majorities, the denial of the best other seat); this
restatement counts each feature on its own, the slow way, so a shortcut that miscounts a seat or
a feature shows here. Positions come from real games (4 and 2 players, a start VP variant so the
half point and the starting VP take part) and every built-in's weights are checked at them, for
every seat.
"""
from __future__ import annotations

import numpy as np
import pytest

from evora_sim import api
from evora_sim import layout as L
from evora_sim.batch import play_game
from evora_sim.rules import load_rules
from strategies.builtin import BUILTINS
from strategies.compiled import FEATURES, evaluate
from strategies.registry import seat_arrays

HEURISTICS = [s for s in BUILTINS if s.name != "random"]


def height_vp(arr, R, level, p):
    """D17 at ``level`` (1-4 stones, 5 capitals) as if scored now."""
    counts = arr[L.H_COUNT + (level - 1) * L.NOWNERS:L.H_COUNT + level * L.NOWNERS]
    qualified = [c for c in counts if c >= R[L.R_MIN_PARTS]]
    best = max(qualified, default=0)
    if best == 0 or counts[p] != best:
        return 0
    alone = sum(1 for c in counts if c == best) == 1
    return int(R[L.R_HMAJ + level] if alone else R[L.R_HMAJ_TIE + level])


def held(arr, p, complete_only=False):
    return sum(1 for c in range(arr[L.G_NCOLS]) if arr[L.COL_HOLDER + c] == p
               and (not complete_only or arr[L.COL_H + c] == 5))


def emperor_vp(arr, R, p):
    b = L.PLAYERS + p * L.PSTRIDE
    vp = 0
    for k in range(2):
        c = arr[b + L.P_TPOS + k]
        if c >= 0:
            own = sum(1 for i in range(arr[L.COL_H + c]) if arr[L.COL_PART + c * L.COLPARTS + i] == p)
            vp += own * int(R[L.R_EMP_VALUES + arr[b + L.P_TVAL + k]])
    return vp


def total(arr, R, p):
    """The seat's standing: the final scoring's total as if the game ended now, plus half a VP
    for the half point of its starting VP."""
    b = L.PLAYERS + p * L.PSTRIDE
    vp = (arr[b + L.P_SCORE] + emperor_vp(arr, R, p) + held(arr, p) * R[L.R_COLMAJ_VP]
          + R[L.R_START_VP + p] + sum(height_vp(arr, R, lv, p) for lv in range(1, 6)))
    return vp + 0.5 * R[L.R_START_HALF + p]


def features(arr, R, p):
    b = L.PLAYERS + p * L.PSTRIDE
    lowest = min(arr[L.COL_H + c] for c in range(arr[L.G_NCOLS]))
    secured = held(arr, p, True) * R[L.R_COLMAJ_VP] + sum(height_vp(arr, R, lv, p) for lv in range(1, lowest + 1))
    caps_left = sum(arr[L.PLAYERS + q * L.PSTRIDE + L.P_CAPS] for q in range(arr[L.G_NPLAYERS]))
    if lowest < 5 and caps_left == 0:
        secured += height_vp(arr, R, 5, p)
    others = [total(arr, R, q) for q in range(arr[L.G_NPLAYERS]) if q != p]
    f = {
        "vp": arr[b + L.P_SCORE] - arr[b + L.P_VP_EMPTY],
        "column": held(arr, p) * R[L.R_COLMAJ_VP],
        **{f"h{lv}": height_vp(arr, R, lv, p) for lv in range(1, 5)},
        "capitals": height_vp(arr, R, 5, p),
        "emperor": emperor_vp(arr, R, p),
        "tiles": sum(int(arr[b + L.P_TPOS + k] >= 0) + arr[b + L.P_TVAL + k] for k in range(2)),
        "cards": arr[b + L.P_HANDN] + arr[b + L.P_PENDING:b + L.P_PENDING + L.NEFF].sum(),
        "parts": R[L.R_STONES] + R[L.R_CAPS] - arr[b + L.P_STONES] - arr[b + L.P_CAPS],
        "denial": -max(others),
        "empty_stack": arr[b + L.P_VP_EMPTY],
        "secured": secured,
        "win": int(arr[L.G_PHASE] == L.PH_TERMINAL and arr[L.G_WINNER] == p),
    }
    assert set(f) == set(FEATURES)
    return np.array([f[name] for name in FEATURES], dtype=np.float64)


@pytest.mark.parametrize("players, seed, start_vp", [(4, 71, "0,1.5,0,3"), (2, 72, "2.5,0")])
def test_evaluation_is_the_weighted_sum_of_its_features(players, seed, start_vp):
    rules = load_rules(overrides=[f"players.start_vp={start_vp}"])
    R = rules.packed
    W = np.array([s.weights for s in HEURISTICS], dtype=np.float64)
    full = seat_arrays(HEURISTICS)[1]          # the rows the compiled players read: every column
    _, log = play_game(rules, players, seed, ["balanced"] * players)
    state = api.new_game(rules, players, seed)
    checked = 0
    for i, a in enumerate(log):
        api.apply_action(state, int(a))
        if i % 3 and i != len(log) - 1:
            continue
        arr = state.arr.copy()
        for p in range(players):
            want = W @ features(arr, R, p)
            for me, strategy in enumerate(HEURISTICS):
                got = evaluate(arr.copy(), R, np.int32(p), full, np.int32(me))   # the players' types: no compile of its own
                assert got == pytest.approx(want[me], abs=1e-9), \
                    f"{strategy.name}, seat {p}, decision {i}: compiled {got}, restated {want[me]}"
                checked += 1
    assert api.is_terminal(state) and checked > 500
