"""The scores as if the game ended now, shared by the metrics that ask who leads.

Several metrics ask once a turn (card timing) or a few times a game (where it was decided) how
the final scoring would rank the seats now. Scoring from scratch (``engine.leader_now``) each
turn made random 4-player games about 30% slower, so the part of the score that only the end
adds (Emperor tiles, column and height majorities, the starting VP) is kept between turns, by
category, and only what changed is scored again.

What the end part depends on changes only when a part is placed (a stone, a capital or a white
stone) or an Emperor tile is placed or turned. The engine marks each column given a part in
``SCR_BUILT`` and each seat that placed or turned a tile in ``SCR_TILES`` (scratch space, which
a look clears), so a look asks only whether anything is marked; in random 4-player games about
two looks in five find something. Only in a marked column can a column's holder (D7) change,
only the Emperor tile beside it can be worth more, and only if the new parts are its seat's;
only the height levels its new parts reach can have new leaders (D17), and, since parts are
never taken away, only where the new part's owner now has both the parts a majority needs and
as many as the level's leaders had (``T_BEST``). Each category is scored by the engine's own functions (``emperor_points``,
``level_lead``, ``majority_vp``, ``column_vp``), the one place of each rule. The VP scored
during the game are added fresh every time. tests/test_metrics.py checks the totals and the
leader against ``engine.leader_now`` at every turn and at the end trigger of thousands of games.
"""
from __future__ import annotations

import numpy as np
from numba import njit

from .. import engine as E
from .. import layout as L
from .slots import slots

T_SCORED = slots(1)              # 0 until the end part is first scored in a game
T_ENDGAME = slots(L.MAXP)        # per seat: the VP only the end adds, as of the last look
T_NOW = slots(L.MAXP)            # per seat: the total if the game ended now (after now())
T_COL_H = slots(L.MAXC)          # per column: its height at the last look
T_HOLDER = slots(L.MAXC)         # per column: its holder (D7) at the last look
T_HELD = slots(L.MAXP)           # per seat: columns held
T_EMPEROR = slots(L.MAXP)        # per seat: its Emperor tiles' VP
T_LEVEL = slots(5 * L.MAXP)      # per (level - 1, seat): its height-majority VP
T_BEST = slots(5)                # per level - 1: its leaders' parts at the last look (0: nobody qualifies)


@njit(cache=True, inline="always")
def start(track):
    track[T_SCORED] = 0


@njit(cache=True, inline="always")
def lowest_bit(x):
    """The index of the lowest set bit of ``x`` (not 0)."""
    i = 0
    while not x >> i & 1:
        i += 1
    return i


@njit(cache=True, inline="always")
def score_level(s, R, track, level):
    """Every seat's VP for the majority at ``level`` (D17), into ``T_LEVEL``."""
    best, leaders = E.level_lead(s, level, R[L.R_MIN_PARTS])
    track[T_BEST + level - 1] = best
    vp = E.majority_vp(R, level, 1 if leaders == 1 else 2)
    row = (level - 1) * L.NOWNERS
    for p in range(s[L.G_NPLAYERS]):
        lead = best > 0 and s[L.H_COUNT + row + p] == best
        track[T_LEVEL + (level - 1) * L.MAXP + p] = vp if lead else 0


@njit(cache=True, inline="always")
def score_all(s, R, track):
    """Every category from scratch, and what the next looks compare with."""
    n = s[L.G_NPLAYERS]
    track[T_SCORED] = 1
    s[L.SCR_BUILT] = 0
    s[L.SCR_TILES] = 0
    for p in range(n):
        track[T_EMPEROR + p] = E.emperor_points(s, R, p)
        track[T_HELD + p] = 0
    for c in range(s[L.G_NCOLS]):
        track[T_COL_H + c] = s[L.COL_H + c]
        q = s[L.COL_HOLDER + c]
        track[T_HOLDER + c] = q
        if q >= 0:
            track[T_HELD + q] += 1
    for level in range(1, 6):
        score_level(s, R, track, level)


@njit(cache=True, inline="always")
def rescore(s, R, track):
    """The categories that can have changed since the last look, in which the columns marked in
    ``SCR_BUILT`` were given parts and the seats marked in ``SCR_TILES`` placed or turned
    Emperor tiles."""
    levels = 0               # height levels whose leaders may have changed
    need = R[L.R_MIN_PARTS]
    built, tiles = s[L.SCR_BUILT], s[L.SCR_TILES]
    s[L.SCR_BUILT] = 0
    s[L.SCR_TILES] = 0
    while built:
        c = lowest_bit(built)
        built &= built - 1
        h = s[L.COL_H + c]
        t = s[L.COL_TILE + c]
        for i in range(track[T_COL_H + c], h):
            o = s[L.COL_PART + c * L.COLPARTS + i]
            # counts only grow: a level's leaders change only when an owner's new count reaches
            # the most any qualifying owner had (and D17's minimum)
            if s[L.H_COUNT + i * L.NOWNERS + o] >= max(need, track[T_BEST + i]):
                levels |= 1 << i
            if t >= 0 and t >> 1 == o:                # the tile's seat's own parts are what count
                tiles |= 1 << o
        track[T_COL_H + c] = h
        old, new = track[T_HOLDER + c], s[L.COL_HOLDER + c]
        if old != new:
            track[T_HOLDER + c] = new
            if old >= 0:
                track[T_HELD + old] -= 1
            if new >= 0:
                track[T_HELD + new] += 1
    for p in range(s[L.G_NPLAYERS]):
        if tiles >> p & 1:
            track[T_EMPEROR + p] = E.emperor_points(s, R, p)
    for level in range(1, 6):
        if levels >> (level - 1) & 1:
            score_level(s, R, track, level)


@njit(cache=True, inline="always")
def add_up(s, R, track):
    """Per seat, the categories' VP and its starting VP (V1): ``engine.seat_total`` less the VP
    scored in play, into ``T_ENDGAME``."""
    for p in range(s[L.G_NPLAYERS]):
        end = R[L.R_START_VP + p] + track[T_EMPEROR + p] + E.column_vp(R, track[T_HELD + p])
        for level in range(5):
            end += track[T_LEVEL + level * L.MAXP + p]
        track[T_ENDGAME + p] = end


@njit(cache=True, inline="always")
def look(s, R, track):
    """Bring the kept categories up to date: see the module's docstring."""
    if track[T_SCORED] == 0:
        score_all(s, R, track)
        add_up(s, R, track)
    elif s[L.SCR_BUILT] | s[L.SCR_TILES]:
        rescore(s, R, track)
        add_up(s, R, track)


@njit(cache=True, inline="always")
def now(s, R, track):
    """Every seat's total if the game ended now, into ``T_NOW``."""
    look(s, R, track)
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
