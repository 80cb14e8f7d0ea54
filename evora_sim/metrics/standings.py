"""The scores as if the game ended now, shared by the metrics that ask who leads.

Several metrics ask once a turn (card timing) or a few times a game (where it was decided) how
the final scoring would rank the seats now. Scoring from scratch (``engine.leader_now``) each
turn made random 4-player games about 30% slower, so the part of the score that only the end
adds (Emperor tiles, column and height majorities, the starting VP) is kept between turns and
scored again only when what it depends on has changed. It changes only when a part is placed
(a stone, a capital or a white stone leaves a supply: the majorities and the Emperor tiles'
columns) or an Emperor tile is placed or turned; each of these only ever goes one way, so
:func:`endgame_key` grows exactly when one of them happens (about two turns in five in random
4-player games). The VP scored during the game are added fresh every time. tests/test_metrics.py
checks the totals and the leader against ``engine.leader_now`` at every turn of seeded games.
"""
from __future__ import annotations

import numpy as np
from numba import njit

from .. import engine as E
from .. import layout as L
from .slots import slots

T_KEY = slots(1)                 # endgame_key when the end part was last scored
T_ENDGAME = slots(L.MAXP)        # per seat: the VP only the end adds, as of T_KEY
T_NOW = slots(L.MAXP)            # per seat: the total if the game ended now (after now())

NO_KEY = -(1 << 40)              # below any key: nothing scored yet in this game


@njit(cache=True, inline="always")
def start(track):
    track[T_KEY] = NO_KEY


@njit(cache=True, inline="always")
def endgame_key(s):
    """A number that grows with every part placed and every Emperor tile placed or turned."""
    k = -s[L.G_WHITE_LEFT]
    for p in range(s[L.G_NPLAYERS]):
        b = L.PLAYERS + p * L.PSTRIDE
        k += (s[b + L.P_TPOS] + s[b + L.P_TPOS + 1] + s[b + L.P_TVAL] + s[b + L.P_TVAL + 1]
              - s[b + L.P_STONES] - s[b + L.P_CAPS])
    return k


@njit(cache=True, inline="always")
def endgame_vp(s, R, track):
    """Per seat, ``engine.seat_total`` less the VP scored in play, into ``T_ENDGAME``: the same
    category functions, every seat's columns counted in one pass, and no scratch space of the
    state written."""
    n = s[L.G_NPLAYERS]
    census, _ = E.column_census(s)
    for p in range(n):
        track[T_ENDGAME + p] = (R[L.R_START_VP + p] + E.emperor_points(s, R, p)
                                + E.column_vp(R, E.census_count(census, p, False)))
    need = R[L.R_MIN_PARTS]
    for level in range(1, 6):
        best, leaders = E.level_lead(s, level, need)
        if best > 0:
            vp = E.majority_vp(R, level, 1 if leaders == 1 else 2)
            for p in range(n):
                if s[L.H_COUNT + (level - 1) * L.NOWNERS + p] == best:
                    track[T_ENDGAME + p] += vp


@njit(cache=True, inline="always")
def now(s, R, track):
    """Every seat's total if the game ended now, into ``T_NOW``."""
    key = endgame_key(s)
    if key != track[T_KEY]:
        track[T_KEY] = key
        endgame_vp(s, R, track)
    for p in range(s[L.G_NPLAYERS]):
        track[T_NOW + p] = track[T_ENDGAME + p] + s[L.PLAYERS + p * L.PSTRIDE + L.P_SCORE]


@njit(cache=True, inline="always")
def leader(s, R, track):
    """The seat the final scoring would rank first with the totals of ``now`` (``final_key``)."""
    best, best_key = -1, np.int64(0)
    for p in range(s[L.G_NPLAYERS]):
        key = E.final_key(s, R, np.int64(track[T_NOW + p]), p)
        if best < 0 or key > best_key:
            best, best_key = p, key
    return best
