"""State invariants of the engine, checked from outside the engine.

``check_state(arr, rules)`` looks at one flat state array and returns the invariants it breaks
as ``(check name, message)`` pairs (empty list: all hold). ``check_step(prev, arr, rules)`` adds
the invariants between two consecutive states (one ``apply_action`` apart).

The checks are compiled (numba) so they can run after every single action of hundreds of games.
They deliberately re-derive what they check (the D7 column majority, the build VP, card
conservation) rather than calling the engine's own helpers; the only engine function used is
``legal_actions`` (to check that a non-terminal state always has a decision to offer). Every
count the checks expect (supplies, Quarry, cards, columns, VP per height) comes from the rules
data (``Rules.data``), so a designer's variant is checked against its own numbers.
"""
from __future__ import annotations

import numpy as np
from numba import njit

from evora_sim import engine as E
from evora_sim import layout as L
from evora_sim.layout import (
    COL_H, COL_HOLDER, COL_PART, COL_TILE, COLPARTS, END_OUT_OF_STONES, H_COUNT,
    END_ROUND_LIMIT, END_TEMPLE_FULL, F_DISCARD, F_DRAW, FRAMES, FW, G_CENT_POS, G_CUR, G_END_SEAT,
    G_END_TRIGGER, G_NCOLS, G_NPLAYERS, G_NSPACES, G_NTURNS, G_PHASE, G_ROUND, G_SETUP_DONE,
    G_SP, G_WHITE_LEFT, G_WINNER, ITILE_AVAIL, MAXC, MAXDEPTH, MAXP, MAXSTACK, N_ACTIONS, NEFF, NITILE,
    NOWNERS, NTYPES, OCC_CENTURION, P_CAPS, P_FINAL, P_HAND, P_HANDN, P_PENDING, P_SCORE,
    P_STONES, P_TPOS, P_TURNS, P_TVAL, P_VP_BUILD, P_VP_CARDS, P_VP_EMPTY, P_VP_WHITE,
    P_WORKERS, P_WPOS, PH_SETUP, PH_TERMINAL, PLAYERS, PSTRIDE, S_PLAYS, SITE, SSTRIDE,
    STACK_CARDS, STACK_LEN, STACK_TOP, STATS, WHITE,
)

# ---- the checks, in the order of the rows of the result array ------------------------------
STATE_CHECKS = (
    "supply_stones",      # per seat: stones in the Temple + stones in supply == supply.stones
    "supply_capitals",    # per seat: capitals in the Temple + in supply == supply.capitals
    "white_stones",       # white stones in the Temple + in the Quarry == supply.white_stones
    "column_shape",       # <= 4 stones + 1 capital, capital only on exactly 4 stones, -1 above COL_H
    "workers",            # per seat: majority workers on columns + supply + on the site == supply.workers
    "column_holder",      # COL_HOLDER is the seat with the D7 majority, or -1
    "cards",              # stacks + hands + pending + played (1 per effect, 3 per tile) == all cards
    "emperor_tiles",      # each tile in supply or beside exactly one column; COL_TILE agrees
    "site",               # site occupancy agrees with worker positions and the Centurion
    "legal_actions",      # non-terminal -> at least one legal action (distinct, in range)
    "score_breakdown",    # running score == its categories; final total == its 11 categories
    "build_vp",           # build VP == height VP of the seat's own parts; white VP == 2 per white
    "end_trigger",        # the trigger agrees with the Temple / supplies (D16)
    "turns",              # turn counts agree with the round and the seat to play
    "frames",             # the pending-effect stack is within bounds
    "moves_d4",           # a worker's / the Centurion's move offers exactly the D4 destinations
    "height_counts",      # the kept parts per (level, owner) == a count of the columns
)
STEP_CHECKS = (
    "score_monotone",     # no running score ever goes down
    "temple_grows",       # parts are never removed or changed once placed
    "holder_update",      # D7: after a placement, a seat leading a column without a marker has none in supply
    "counters_monotone",  # stacks only shrink, the Quarry only empties, play counts only grow
)
NSTATE = len(STATE_CHECKS)
NSTEP = len(STEP_CHECKS)
_W = 6   # result row: count, then up to 5 details of the first violation

(C_STONES, C_CAPS, C_WHITE, C_SHAPE, C_WORKERS, C_HOLDER, C_CARDS, C_EMP, C_SITE, C_LEGAL,
 C_SCORE, C_BUILDVP, C_END, C_TURNS, C_FRAMES, C_MOVES, C_HCOUNT) = range(NSTATE)
T_SCORE, T_TEMPLE, T_HOLDER, T_COUNTERS = range(NSTEP)

# ---- the expected numbers, from the rules data ---------------------------------------------
X_STONES, X_CAPS, X_WHITES, X_WORKERS, X_MINPARTS, X_CARDS, X_COPIES, X_NSPACES = range(8)
X_NCOLS = 8          # + player count (2..4)
X_SITEW = 13         # + player count
X_HVP = 18           # + height (1..5)
X_WHITEVP = 24
X_MAXROUNDS = 25
X_GIVE, X_GIVE_SEAT, X_REMOVE = 26, 27, 28      # P11, P12: card given / removed, -1 none
XSIZE = 29


def expected_numbers(rules) -> np.ndarray:
    """The counts the invariants expect, read from ``rules.data`` (not from the packed array)."""
    d = rules.data
    X = np.zeros(XSIZE, dtype=np.int64)
    X[X_STONES] = d["supply"]["stones"]
    X[X_CAPS] = d["supply"]["capitals"]
    X[X_WHITES] = d["supply"]["white_stones"]
    X[X_WORKERS] = d["supply"]["workers"]
    X[X_MINPARTS] = d["majority"]["min_parts"]
    X[X_COPIES] = d["cards"]["copies"]
    X[X_CARDS] = len(L.TYPE_NAMES) * 3 * d["cards"]["copies"]    # 4 stacks x 3 effects x copies
    X[X_NSPACES] = len(d["board"]["spaces"])
    for n in range(2, 5):
        X[X_NCOLS + n] = d["temple"]["columns"][str(n)]
        X[X_SITEW + n] = d["players"]["workers_on_site"][str(n)]
    for h in range(1, 6):
        X[X_HVP + h] = d["height_vp"][str(h)]
    X[X_WHITEVP] = d["white_stone"]["vp"]
    X[X_MAXROUNDS] = d["limits"]["max_rounds"]
    names = list(L.EFFECT_NAMES + L.ITILE_NAMES)
    exp = d["experiment"]
    X[X_GIVE] = names.index(exp["give"]) if exp["give"] else -1
    X[X_GIVE_SEAT] = exp["give_seat"]
    X[X_REMOVE] = names.index(exp["remove"]) if exp["remove"] else -1
    if 0 <= X[X_GIVE] < NEFF:
        X[X_CARDS] += 1                                            # P11: one card from outside
    return X


_XCACHE: dict = {}


def _x_for(rules) -> np.ndarray:
    X = _XCACHE.get(rules.hash)
    if X is None:
        X = _XCACHE[rules.hash] = expected_numbers(rules)
    return X


# ---- compiled core ---------------------------------------------------------------------------
@njit(cache=True)
def _flag(out, k, a, b, c, d, e):
    if out[k, 0] == 0:
        out[k, 1] = a
        out[k, 2] = b
        out[k, 3] = c
        out[k, 4] = d
        out[k, 5] = e
    out[k, 0] += 1


@njit(cache=True)
def _pb(p):
    return PLAYERS + p * PSTRIDE


@njit(cache=True)
def _leader(s, c, need):
    """D7, re-derived: the owner (seat or WHITE) holding column ``c``, or -1."""
    h = s[COL_H + c]
    counts = np.zeros(NOWNERS, dtype=np.int64)
    high = np.full(NOWNERS, -1, dtype=np.int64)
    for k in range(min(h, COLPARTS)):
        o = s[COL_PART + c * COLPARTS + k]
        if 0 <= o < NOWNERS:
            counts[o] += 1
            high[o] = k
    best = -1
    for o in range(NOWNERS):
        if counts[o] < need:
            continue
        if best < 0 or counts[o] > counts[best] or (counts[o] == counts[best] and high[o] > high[best]):
            best = o
    return best


@njit(cache=True)
def _d4(s, start, nsp, want):
    """D4, re-derived: mark in ``want`` the first 3 spaces of the first run of 3 empty spaces
    after ``start`` (clockwise, wrapping; the mover's own space counts as occupied)."""
    run = 0
    for i in range(1, nsp):
        x = (start + i) % nsp
        if s[SITE + x] == L.EMPTY:
            run += 1
            if run == 3:
                for k in range(3):
                    want[(x - k) % nsp] = True
                return 3
        else:
            run = 0
    return 0


@njit(cache=True)
def _check_state_core(s, R, X, out, legal):
    n = s[G_NPLAYERS]
    if n < 2 or n > 4:
        _flag(out, C_TURNS, 0, n, 0, 0, 0)
        return
    ncols = s[G_NCOLS]
    nsp = s[G_NSPACES]
    terminal = s[G_PHASE] == PH_TERMINAL
    sitew = X[X_SITEW + n]

    # ---- the Temple: shape of every column, parts per owner --------------------------------
    if ncols != X[X_NCOLS + n]:
        _flag(out, C_SHAPE, -1, 6, ncols, X[X_NCOLS + n], 0)
    stones_in = np.zeros(NOWNERS, dtype=np.int64)
    caps_in = np.zeros(NOWNERS, dtype=np.int64)
    at_level = np.zeros((COLPARTS, NOWNERS), dtype=np.int64)
    build_vp = np.zeros(NOWNERS, dtype=np.int64)
    all_full = True
    for c in range(MAXC):
        h = s[COL_H + c]
        if c >= ncols:
            if h != 0:
                _flag(out, C_SHAPE, c, 5, h, 0, 0)       # an unavailable column holds parts
            continue
        if h < 4:
            all_full = False
        if h < 0 or h > COLPARTS:
            _flag(out, C_SHAPE, c, 1, h, 0, 0)          # height out of range
            continue
        for k in range(COLPARTS):
            o = s[COL_PART + c * COLPARTS + k]
            if k < h and 0 <= o < NOWNERS:
                at_level[k, o] += 1
            if k >= h:
                if o != -1:
                    _flag(out, C_SHAPE, c, 2, k, o, h)  # a part above the column's height
            elif k == 4:
                # the 5th part is the capital: coloured, on exactly 4 stones
                if o < 0 or o >= n:
                    _flag(out, C_SHAPE, c, 3, k, o, h)
                else:
                    caps_in[o] += 1
                    build_vp[o] += X[X_HVP + 5]
            else:
                if o == WHITE:
                    stones_in[WHITE] += 1
                elif 0 <= o < n:
                    stones_in[o] += 1
                    build_vp[o] += X[X_HVP + k + 1]
                else:
                    _flag(out, C_SHAPE, c, 4, k, o, h)  # not a seat of this game, not white

    for k in range(COLPARTS):
        for o in range(NOWNERS):
            if s[H_COUNT + k * NOWNERS + o] != at_level[k, o]:
                _flag(out, C_HCOUNT, k + 1, o, s[H_COUNT + k * NOWNERS + o], at_level[k, o], 0)

    for p in range(n):
        b = _pb(p)
        if stones_in[p] + s[b + P_STONES] != X[X_STONES] or s[b + P_STONES] < 0:
            _flag(out, C_STONES, p, stones_in[p], s[b + P_STONES], X[X_STONES], 0)
        if caps_in[p] + s[b + P_CAPS] != X[X_CAPS] or s[b + P_CAPS] < 0:
            _flag(out, C_CAPS, p, caps_in[p], s[b + P_CAPS], X[X_CAPS], 0)
    if stones_in[WHITE] + s[G_WHITE_LEFT] != X[X_WHITES] or s[G_WHITE_LEFT] < 0:
        _flag(out, C_WHITE, stones_in[WHITE], s[G_WHITE_LEFT], X[X_WHITES], 0, 0)

    # ---- column majority markers (D7) and the workers ---------------------------------------
    on_cols = np.zeros(NOWNERS, dtype=np.int64)
    for c in range(ncols):
        hold = s[COL_HOLDER + c]
        if hold == -1:
            continue
        if hold < 0 or hold >= n:
            _flag(out, C_HOLDER, c, hold, -9, 0, 0)
            continue
        on_cols[hold] += 1
        lead = _leader(s, c, X[X_MINPARTS])
        if lead != hold:
            _flag(out, C_HOLDER, c, hold, lead, s[COL_H + c], 0)

    placed = 0
    for p in range(n):
        b = _pb(p)
        for k in range(2):
            if s[b + P_WPOS + k] >= 0:
                placed += 1
        sup = s[b + P_WORKERS]
        if on_cols[p] + sup + sitew != X[X_WORKERS] or sup < 0:
            _flag(out, C_WORKERS, p, on_cols[p], sup, sitew, X[X_WORKERS])

    # ---- the Construction Site ----------------------------------------------------------------
    if nsp != X[X_NSPACES]:
        _flag(out, C_SITE, -1, 9, nsp, X[X_NSPACES], 0)
    expect_placed = s[G_SETUP_DONE] if s[G_PHASE] == PH_SETUP else n * sitew
    if placed != expect_placed:
        _flag(out, C_SITE, -1, 1, placed, expect_placed, 0)    # workers on the site
    cents = 0
    occupied = 0
    for x in range(nsp):
        occ = s[SITE + x]
        if occ == L.EMPTY:
            continue
        occupied += 1
        if occ == OCC_CENTURION:
            cents += 1
            if s[G_CENT_POS] != x:
                _flag(out, C_SITE, x, 2, occ, s[G_CENT_POS], 0)   # Centurion not where recorded
        elif 0 <= occ < 2 * n and occ % 2 < sitew:
            if s[_pb(occ // 2) + P_WPOS + occ % 2] != x:
                _flag(out, C_SITE, x, 3, occ, s[_pb(occ // 2) + P_WPOS + occ % 2], 0)
        else:
            _flag(out, C_SITE, x, 4, occ, 0, 0)                   # unknown occupant
    if cents != 1:
        _flag(out, C_SITE, -1, 5, cents, 0, 0)
    if occupied != placed + 1:
        _flag(out, C_SITE, -1, 6, occupied, placed + 1, 0)
    for p in range(n):
        b = _pb(p)
        for k in range(2):
            x = s[b + P_WPOS + k]
            if x < 0:
                if x != -1 or (k < sitew and s[G_PHASE] != PH_SETUP):
                    _flag(out, C_SITE, x, 7, p, k, 0)             # a site worker is missing
            elif k >= sitew or x >= nsp or s[SITE + x] != p * 2 + k:
                _flag(out, C_SITE, x, 8, p, k, s[SITE + x] if x < nsp else -99)

    # ---- cards ----------------------------------------------------------------------------------
    in_stacks = 0
    for t in range(NTYPES):
        ln = s[STACK_LEN + t]
        tp = s[STACK_TOP + t]
        if ln != 3 * X[X_COPIES] or tp < 0 or tp > ln:
            _flag(out, C_CARDS, 3, t, ln, tp, 0)
            continue
        in_stacks += ln - tp
        per = np.zeros(3, dtype=np.int64)
        for i in range(ln):
            e = s[STACK_CARDS + t * MAXSTACK + i]
            if e // 3 != t or e < 0:
                _flag(out, C_CARDS, 4, t, i, e, 0)                # a card in the wrong stack
            else:
                per[e % 3] += 1
        removed = X[X_REMOVE] - 3 * t                  # P12: its copies are the other two's
        for j in range(3):
            if 0 <= removed < 3:
                bad = per[j] != 0 if j == removed else abs(per[j] - 3 * X[X_COPIES] / 2) > 0.5
            else:
                bad = per[j] != X[X_COPIES]
            if bad:
                _flag(out, C_CARDS, 5, t, j, per[j], 0)           # copies of one effect
    in_hands = 0
    pending = 0
    played = 0
    tile_uses = np.zeros(NITILE, dtype=np.int64)
    for p in range(n):
        b = _pb(p)
        hn = 0
        for e in range(NEFF):
            h = s[b + P_HAND + e]
            pe = s[b + P_PENDING + e]
            if h < 0 or pe < 0:
                _flag(out, C_CARDS, 6, p, e, h, pe)
            hn += h
            pending += pe
        if hn != s[b + P_HANDN]:
            _flag(out, C_CARDS, 2, p, hn, s[b + P_HANDN], 0)     # hand size out of step
        in_hands += hn
        sb = STATS + p * SSTRIDE
        for e in range(NEFF):
            played += s[sb + S_PLAYS + e]
        for t in range(NITILE):
            played += 3 * s[sb + S_PLAYS + NEFF + t]
            tile_uses[t] += s[sb + S_PLAYS + NEFF + t]
    unpaid = 0
    for i in range(min(max(s[G_SP], 0), MAXDEPTH)):
        f = FRAMES + i * FW
        if s[f] == F_DISCARD:
            unpaid += s[f + 1]          # cards of a tile not paid yet are still in the hand
    total = in_stacks + in_hands + pending + played - unpaid
    if total != X[X_CARDS]:
        _flag(out, C_CARDS, 1, total, in_stacks, in_hands + pending, played - unpaid)
    for t in range(NITILE):
        copies = (0 if X[X_REMOVE] == NEFF + t else 1) + (1 if X[X_GIVE] == NEFF + t else 0)
        left = 0
        for bit in range(1 + MAXP):
            left += (s[ITILE_AVAIL + t] >> bit) & 1
        if tile_uses[t] + left != copies:
            _flag(out, C_CARDS, 7, t, tile_uses[t], s[ITILE_AVAIL + t], 0)

    # ---- Emperor tiles ---------------------------------------------------------------------------
    for p in range(n):
        b = _pb(p)
        for k in range(2):
            pos = s[b + P_TPOS + k]
            v = s[b + P_TVAL + k]
            if v != 0 and v != 1:
                _flag(out, C_EMP, p, k, 1, v, 0)
            beside = 0
            where = -1
            for c in range(ncols):
                if s[COL_TILE + c] == p * 2 + k:
                    beside += 1
                    where = c
            if pos == -1:
                if beside != 0:
                    _flag(out, C_EMP, p, k, 2, pos, where)       # in supply and on the board
            elif pos < 0 or pos >= ncols or beside != 1 or where != pos:
                _flag(out, C_EMP, p, k, 3, pos, beside)
    for c in range(ncols):
        tile = s[COL_TILE + c]
        if tile != -1 and (tile < 0 or tile // 2 >= n or s[_pb(tile // 2) + P_TPOS + tile % 2] != c):
            _flag(out, C_EMP, -1, c, 4, tile, 0)

    # ---- legal actions ------------------------------------------------------------------------
    cur0 = s[G_CUR]
    k = E.legal_actions(s.copy(), R, legal)     # on a copy: the engine may use scratch slots
    if terminal:
        if k != 0:
            _flag(out, C_LEGAL, s[G_PHASE], k, 1, 0, 0)
    elif k <= 0:
        _flag(out, C_LEGAL, s[G_PHASE], k, 2, s[G_SP], 0)
    else:
        for i in range(k):
            a = legal[i]
            if a < 0 or a >= N_ACTIONS:
                _flag(out, C_LEGAL, s[G_PHASE], k, 3, a, 0)
            for j in range(i):
                if legal[j] == a:
                    _flag(out, C_LEGAL, s[G_PHASE], k, 4, a, 0)

    # ---- moves (D4) ---------------------------------------------------------------------------
    start = -1
    if not terminal and s[G_SP] == 0 and s[G_PHASE] == L.PH_MOVE:
        mv = s[L.G_MOVED]
        if 0 <= mv < 2 and 0 <= cur0 < n:
            start = s[_pb(cur0) + P_WPOS + mv]
    elif not terminal and 0 < s[G_SP] <= MAXDEPTH:
        f = FRAMES + (s[G_SP] - 1) * FW
        if s[f] == L.F_CENT and s[f + 1] == L.CENT_MOVE:
            start = s[G_CENT_POS]
    if 0 <= start < nsp and k >= 0:
        want = np.zeros(nsp, dtype=np.bool_)
        nwant = _d4(s, start, nsp, want)
        got = np.zeros(nsp, dtype=np.bool_)
        extra = -1
        for i in range(k):
            x = legal[i] - L.A_SPACE
            if 0 <= x < nsp:
                got[x] = True
            else:
                extra = legal[i]
        if extra >= 0:
            _flag(out, C_MOVES, start, 1, extra, 0, 0)          # a non-space action offered
        for x in range(nsp):
            if want[x] != got[x]:
                _flag(out, C_MOVES, start, 2, x, 1 if want[x] else 0, nwant)
                break

    # ---- scores ---------------------------------------------------------------------------------
    white_vp = 0
    for p in range(n):
        b = _pb(p)
        running = s[b + P_VP_BUILD] + s[b + P_VP_WHITE] + s[b + P_VP_EMPTY] + s[b + P_VP_CARDS]
        if running != s[b + P_SCORE]:
            _flag(out, C_SCORE, p, s[b + P_SCORE], running, 1, 0)
        full = 0
        for i in range(L.NBREAK):
            full += s[b + P_VP_BUILD + i]
            if s[b + P_VP_BUILD + i] < 0:
                _flag(out, C_SCORE, p, i, s[b + P_VP_BUILD + i], 2, 0)
        full += R[L.R_START_VP + p]                       # the variant's starting VP (V1)
        if terminal and full != s[b + P_FINAL]:
            _flag(out, C_SCORE, p, s[b + P_FINAL], full, 3, 0)
        if s[b + P_VP_BUILD] != build_vp[p]:
            _flag(out, C_BUILDVP, p, s[b + P_VP_BUILD], build_vp[p], 1, 0)
        white_vp += s[b + P_VP_WHITE]
    if white_vp != X[X_WHITEVP] * stones_in[WHITE]:
        _flag(out, C_BUILDVP, -1, white_vp, X[X_WHITEVP] * stones_in[WHITE], 2, 0)
    if terminal:
        w = s[G_WINNER]
        if w < 0 or w >= n:
            _flag(out, C_SCORE, -1, w, 0, 4, 0)

    # ---- the end trigger (D16) ------------------------------------------------------------------
    trig = s[G_END_TRIGGER]
    es = s[G_END_SEAT]
    if trig == 0:
        if es != -1 or terminal:
            _flag(out, C_END, trig, es, 1, 0, 0)
        if all_full and ncols > 0:
            _flag(out, C_END, trig, es, 2, 0, 0)                  # Temple full, no trigger
        for p in range(n):
            if s[_pb(p) + P_STONES] == 0:
                _flag(out, C_END, trig, p, 3, 0, 0)               # out of stones, no trigger
    elif trig == END_TEMPLE_FULL:
        if not all_full or es < 0 or es >= n:
            _flag(out, C_END, trig, es, 4, 0, 0)
    elif trig == END_OUT_OF_STONES:
        if es < 0 or es >= n or s[_pb(es) + P_STONES] != 0:
            _flag(out, C_END, trig, es, 5, 0, 0)
    elif trig == END_ROUND_LIMIT:
        if s[G_ROUND] < X[X_MAXROUNDS]:
            _flag(out, C_END, trig, es, 6, s[G_ROUND], 0)
    else:
        _flag(out, C_END, trig, es, 7, 0, 0)

    # ---- turns ------------------------------------------------------------------------------------
    cur = s[G_CUR]
    rnd = s[G_ROUND]
    tsum = 0
    for p in range(n):
        tsum += s[_pb(p) + P_TURNS]
    if tsum != s[G_NTURNS]:
        _flag(out, C_TURNS, -1, tsum, s[G_NTURNS], 1, 0)
    if cur < 0 or cur >= n:
        _flag(out, C_TURNS, -1, cur, 0, 2, 0)
    for p in range(n):
        t = s[_pb(p) + P_TURNS]
        if s[G_PHASE] == PH_SETUP:
            want = 0
        elif terminal:
            want = rnd
        else:
            want = rnd - 1 + (1 if p < cur else 0)
        if t != want:
            _flag(out, C_TURNS, p, t, want, 3, rnd)

    # ---- the pending-effect stack -----------------------------------------------------------------
    sp = s[G_SP]
    if sp < 0 or sp > MAXDEPTH or (terminal and sp != 0):
        _flag(out, C_FRAMES, sp, s[G_PHASE], 0, 0, 0)
    else:
        for i in range(sp):
            kind = s[FRAMES + i * FW]
            if kind < 1 or kind > F_DRAW:
                _flag(out, C_FRAMES, sp, s[G_PHASE], i, kind, 0)


@njit(cache=True)
def _check_step_core(s0, s, X, out):
    n = s[G_NPLAYERS]
    ncols = s[G_NCOLS]
    for p in range(n):
        b = _pb(p)
        if s[b + P_SCORE] < s0[b + P_SCORE]:
            _flag(out, T_SCORE, p, s0[b + P_SCORE], s[b + P_SCORE], 0, 0)
    changed = 0
    last = -1
    for c in range(ncols):
        h0 = s0[COL_H + c]
        h = s[COL_H + c]
        if h < h0:
            _flag(out, T_TEMPLE, c, h0, h, -1, 0)
        for k in range(min(h0, COLPARTS)):
            if s[COL_PART + c * COLPARTS + k] != s0[COL_PART + c * COLPARTS + k]:
                _flag(out, T_TEMPLE, c, h0, h, k, s[COL_PART + c * COLPARTS + k])
        if h != h0:
            changed += 1
            last = c
    if changed == 1:
        # D7: the placement recomputed this column's holder; a seat that leads it but has no
        # marker on it must have had no worker in supply (only one column changed, so no worker
        # came back to it from elsewhere during this action).
        c = last
        lead = _leader(s, c, X[X_MINPARTS])
        if 0 <= lead < n and s[COL_HOLDER + c] == -1 and s[_pb(lead) + P_WORKERS] > 0:
            _flag(out, T_HOLDER, c, lead, s[_pb(lead) + P_WORKERS], 0, 0)
    for t in range(NTYPES):
        if s[STACK_TOP + t] < s0[STACK_TOP + t]:
            _flag(out, T_COUNTERS, 1, t, s0[STACK_TOP + t], s[STACK_TOP + t], 0)
    if s[G_WHITE_LEFT] > s0[G_WHITE_LEFT]:
        _flag(out, T_COUNTERS, 2, s0[G_WHITE_LEFT], s[G_WHITE_LEFT], 0, 0)
    for p in range(n):
        sb = STATS + p * SSTRIDE
        for i in range(L.NTRACK):
            if s[sb + S_PLAYS + i] < s0[sb + S_PLAYS + i]:
                _flag(out, T_COUNTERS, 3, p, i, s0[sb + S_PLAYS + i], s[sb + S_PLAYS + i])
        if s[_pb(p) + P_TURNS] < s0[_pb(p) + P_TURNS]:
            _flag(out, T_COUNTERS, 4, p, s0[_pb(p) + P_TURNS], s[_pb(p) + P_TURNS], 0)
    for t in range(NITILE):
        if s[ITILE_AVAIL + t] > s0[ITILE_AVAIL + t]:
            _flag(out, T_COUNTERS, 5, t, 0, 0, 0)


# ---- messages -------------------------------------------------------------------------------
_SHAPE = {1: "height {c} out of range 0..5", 2: "part {c} above the height ({e}) is {d}, not -1",
          3: "capital (part {c}, height {e}) owned by {d}: not a seat of this game",
          4: "stone {c} owned by {d}: neither a seat nor white", 5: "unavailable column holds {c} parts",
          6: "state has {c} columns, rules say {d}"}
_SITE = {1: "{b} workers on the site, expected {c}", 2: "Centurion found here, G_CENT_POS says {c}",
         3: "worker {b} found here, its position says {c}", 4: "unknown occupant {b}",
         5: "{b} Centurions on the site", 6: "{b} occupied spaces, expected {c} (workers + Centurion)",
         7: "seat {b} worker {c} is missing from the site", 8: "seat {b} worker {c} points here, space holds {d}",
         9: "state has {b} spaces, rules say {c}"}
_CARDS = {1: "{a} cards counted (stacks {b} + hands/pending {c} + played {d}), expected {X}",
          2: "seat {a}: hand holds {b} cards, P_HANDN says {c}",
          3: "stack {a}: length {b}, top {c} inconsistent", 4: "stack {a} card {b} is effect {c}: wrong type",
          5: "stack {a}: {c} copies of effect #{b}", 6: "seat {a}: negative count for effect {b} (hand {c}, pending {d})",
          7: "instant tile {a}: used {b} times, still available = {c}"}
_END = {1: "no trigger but end seat {b} / terminal", 2: "all columns hold 4 stones but no trigger",
        3: "seat {b} has no stone left but no trigger", 4: "temple_full but a column has < 4 stones (seat {b})",
        5: "out_of_stones by seat {b}, who still has stones", 6: "round_limit in round {d}",
        7: "unknown trigger {a}"}
_EMP = {1: "side value {d}", 2: "in supply but beside column {e}",
        3: "position {d} but beside {e} column(s) / elsewhere", 4: "column {b} lists tile {d}, whose owner disagrees"}


def _message(name, d, X):
    a, b, c, dd, e = (int(v) for v in d)
    if name == "supply_stones":
        return f"seat {a}: {b} stones in the Temple + {c} in supply != {dd}"
    if name == "supply_capitals":
        return f"seat {a}: {b} capitals in the Temple + {c} in supply != {dd}"
    if name == "white_stones":
        return f"{a} white stones in the Temple + {b} in the Quarry != {c}"
    if name == "column_shape":
        return f"column {a}: " + _SHAPE.get(b, "?").format(c=c, d=dd, e=e)
    if name == "workers":
        return f"seat {a}: {b} on columns + {c} in supply + {dd} on the site != {e}"
    if name == "column_holder":
        return f"column {a}: marker of seat {b}, but the D7 majority is {c} (height {dd})"
    if name == "cards":
        return _CARDS.get(a, "?").format(a=b, b=c, c=dd, d=e, X=int(X[X_CARDS]))
    if name == "emperor_tiles":
        return f"seat {a} tile {b}: " + _EMP.get(c, "?").format(b=b, d=dd, e=e)
    if name == "site":
        return f"space {a}: " + _SITE.get(b, "?").format(b=c, c=dd, d=e)
    if name == "legal_actions":
        what = {1: "terminal state offers actions", 2: f"non-terminal state offers none (frames {dd})",
                3: f"action {dd} out of range", 4: f"action {dd} offered twice"}.get(c, "?")
        return f"phase {L.PHASE_NAMES[a] if 0 <= a < len(L.PHASE_NAMES) else a}, {b} legal: {what}"
    if name == "score_breakdown":
        if dd == 1:
            return f"seat {a}: score {b} != running categories {c}"
        if dd == 2:
            return f"seat {a}: category {L.BREAKDOWN_NAMES[b]} negative ({c})"
        if dd == 3:
            return f"seat {a}: final {b} != sum of 11 categories and the starting VP {c}"
        return f"winner {b} not a seat"
    if name == "build_vp":
        if dd == 1:
            return f"seat {a}: vp_build {b} != height VP of its parts in the Temple {c}"
        return f"white VP of all seats {b} != white VP x whites in the Temple {c}"
    if name == "end_trigger":
        return f"trigger {L.END_NAMES[a] if 0 <= a < 4 else a}: " + _END.get(c, "?").format(a=a, b=b, d=dd)
    if name == "turns":
        return {1: f"seat turns sum to {b}, G_NTURNS {c}", 2: f"current seat {b} out of range",
                3: f"seat {a} has {b} turns, expected {c} in round {e}"}.get(dd, f"players {b}")
    if name == "frames":
        return f"{a} frames open (phase {b}); frame {c} kind {dd}"
    if name == "height_counts":
        return f"level {a}, owner {b}: {c} parts kept, {dd} in the columns"
    if name == "moves_d4":
        if b == 1:
            return f"move from space {a}: non-space action {c} offered"
        return (f"move from space {a}: space {c} is {'a D4 destination but not offered' if dd else 'offered but not a D4 destination'}")
    if name == "score_monotone":
        return f"seat {a}: score went down from {b} to {c}"
    if name == "temple_grows":
        return f"column {a}: height {b} -> {c}" + (f", part {dd} changed to {e}" if dd >= 0 else "")
    if name == "holder_update":
        return f"column {a}: seat {b} holds the D7 majority, has {c} workers in supply, but no marker"
    if name == "counters_monotone":
        return {1: f"stack {b} top went back {c} -> {dd}", 2: f"Quarry refilled {b} -> {c}",
                3: f"seat {b} play count {c} went down {dd} -> {e}", 4: f"seat {b} turns went down {c} -> {dd}",
                5: f"instant tile {b} came back"}.get(a, "?")
    return str((a, b, c, dd, e))


_LEGAL = np.empty(N_ACTIONS, dtype=np.int32)   # the engine's action-list dtype (as in api)


def check_state(arr: np.ndarray, rules) -> list[tuple[str, str]]:
    """The state invariants ``arr`` breaks, as (check, message) pairs; [] if all hold."""
    X = _x_for(rules)
    out = np.zeros((NSTATE, _W), dtype=np.int64)
    _check_state_core(arr, rules.packed, X, out, _LEGAL)
    if not out[:, 0].any():
        return []
    return [(STATE_CHECKS[k], _message(STATE_CHECKS[k], out[k, 1:], X)
             + (f" (+{out[k, 0] - 1} more)" if out[k, 0] > 1 else ""))
            for k in range(NSTATE) if out[k, 0]]


def check_step(prev: np.ndarray, arr: np.ndarray, rules) -> list[tuple[str, str]]:
    """The invariants between two consecutive states that the step ``prev -> arr`` breaks."""
    X = _x_for(rules)
    out = np.zeros((NSTEP, _W), dtype=np.int64)
    _check_step_core(prev, arr, X, out)
    if not out[:, 0].any():
        return []
    return [(STEP_CHECKS[k], _message(STEP_CHECKS[k], out[k, 1:], X)) for k in range(NSTEP) if out[k, 0]]


__all__ = ["STATE_CHECKS", "STEP_CHECKS", "check_state", "check_step", "expected_numbers"]
