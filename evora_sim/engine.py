"""The rules of Évora as compiled functions over one flat int32 state array.

This module is the only implementation of the rules. Python callers (``evora_sim.api``) and the
compiled batch driver call these same functions. Every function takes the state ``s`` and the
packed rules ``R`` (``Rules.packed``); offsets and codes are in :mod:`evora_sim.layout`.

Shape of a turn (OpenSpiel style, one decision per ``apply_action``):
    setup placements -> [choose worker (2 players)] -> move -> main -> after -> next player.
Effects that need choices (builds, Emperor tiles, Temple cards, the Centurion, Governor cards,
paying 3 cards for a tile) push *frames* on a small stack inside the state; the top frame owns
the decision until it is resolved. ``settle`` resolves everything that needs no choice, so a
non-terminal state always has at least one legal action.

Rules decisions: docs/RULES.md (the rulebook in brief, D1-D20 where it is silent, P1-P12, V1-V5).

How it is compiled, for speed (measure with scripts/bench_engine.py):
- Functions that allocate nothing are ``_nrt=False``: numba then emits no atomic reference
  counts on their array arguments (a quarter of a random game's time when it did). Callees
  inherit the flag, so a function that allocates says ``_nrt=True``.
- Small helpers are ``inline="always"``; compiled callees get int64 values, never literals,
  since each distinct argument type is one more compilation, and a cold start is budgeted.
- Game loops use ``step`` (apply, settle, list the next decision's actions in one call);
  ``apply_action`` and ``legal_actions`` stay the API.
"""
import numpy as np
from numba import njit
from numba.cpython.unsafe.numbers import trailing_zeros

from .layout import (
    A_COLUMN, A_DISCARD, A_DRAW, A_EMPTILE, A_END, A_HEIGHT, A_PLAY, A_SITE, A_SKIP, A_SPACE, A_STACK,
    A_TILE, A_WORKER, CARD_AT_CENTURION, CENT_ANY, CENT_MOVE, CENT_SWAP, COL_H, COL_HOLDER, COL_PART, COL_TILE,
    COLPARTS, CORE, E_CENT_ANY, E_CENT_MOVE,
    E_CENT_SWAP, E_EMP_FLIP, E_EMP_PLACE, E_EMP_TEMPLE, E_GOV_COLUMN, E_GOV_HEIGHT,
    E_GOV_WORKERS, EMPTY, END_OUT_OF_STONES, END_ROUND_LIMIT, END_TEMPLE_FULL, F_BUILD, F_CENT,
    F_DISCARD, F_DRAW, F_EMP_FLIP, F_EMP_PLACE, F_GOV_COLUMN, F_GOV_HEIGHT, F_ITILE, F_TEMPLE, FRAMES, FW,
    G_CARD_PLAYED, G_CARD_SPACE, G_CENT_POS, G_CUR, G_END_SEAT, G_END_TRIGGER, G_MOVED, G_NCOLS,
    G_NPLAYERS, G_NSPACES, G_NTURNS, G_PHASE, G_ROUND, G_SETUP_DONE, G_SP, G_TRACK,
    G_TRACK_SCORE0, G_WHITE_LEFT, G_WINNER, ITILE_AVAIL, G_END_TURN, G_LOT, R_AFTER_TRIGGER, R_TIE_BREAK,
    R_PLACEMENT_ORDER, AFTER_FINISH_TURN, AFTER_ONE_MORE_TURN, TIE_SHARED, PLACE_REVERSE, K_CAPITAL, K_STONE, K_WHITE, MAXSTACK,
    N_ACTIONS, NEFF, NITILE, NOWNERS, NTYPES, OCC_CENTURION, P_CAPS, P_FINAL, P_HAND, P_HANDN,
    P_PENDING, P_SCORE, P_STONES, P_TPOS, P_TURNS, P_TVAL, P_VP_BUILD, P_VP_CARDS, P_VP_COLMAJ,
    P_VP_EMPEROR, P_VP_EMPTY, P_VP_HEIGHT, P_VP_WHITE, P_WORKERS, P_WPOS, PAT_CAPITAL_TWO_STONES,
    SCR_BUILT, SCR_TILES, SCR_CLS, SCR_HVP, SCR_LEGAL, MAXP, H_COUNT,
    PAT_ONE_STONE, PAT_STONE_THEN_WHITE, PAT_THREE_STONES, PAT_TWO_CAPITALS,
    PAT_TWO_STONES_SAME, PATTERNS_LIST, PH_AFTER, PH_CHOOSE_WORKER, PH_MAIN, PH_MOVE, PH_SETUP,
    PH_TERMINAL, PLAYERS, PSTRIDE, R_CAPS, R_COLMAJ_VP, R_COPIES, R_EMP_VALUES, R_EMPTY_VP,
    R_GIVE, R_GIVE_SEAT, R_GOV_COL, R_GOV_H, R_GOV_H_TIE, R_GOV_WORKER_CAP, R_GOV_WORKER_VP,
    R_HEIGHT_VP, R_HMAJ, R_HMAJ_TIE, R_MAX_ROUNDS, R_MIN_PARTS, R_NCOLS, R_NSPACES, R_REMOVE,
    R_SITE_WORKERS, R_SPACE_ACTION, R_SPACE_ARG, R_SPACE_COLOUR, R_START_HALF, R_START_VP, R_STONES,
    R_WHITE_VP, R_WHITES, R_WORKERS, S_PLAY_VP, S_PLAYS,
    S_SPACE_USES, S_TEMPLE_USES, SA_BUILD, SA_CENTURION, SA_DRAW2, SA_EMPEROR, SA_TEMPLE, SITE,
    SSTRIDE, STACK_CARDS, STACK_LEN, STACK_TOP, STATE_SIZE, STATS, T_FLIP_BOTH, TILE_PUBLIC, WHITE,
)
from .ranking import order_key as _order_key
from .rng import randbelow, seed_stream

PATTERNS = np.array(PATTERNS_LIST, dtype=np.int64)          # [pattern, group, part]
NGROUPS = np.array([sum(1 for g in p if g[0]) for p in PATTERNS_LIST], dtype=np.int64)
# PARTS_FROM[pattern, g]: parts in groups g.. (the most a build can still place)
PARTS_FROM = np.array([[sum(1 for grp in p[g:] for k in grp if k) for g in range(4)]
                       for p in PATTERNS_LIST], dtype=np.int64)
CARD_PATTERN = np.array([-1] * 6 + [PAT_STONE_THEN_WHITE, PAT_ONE_STONE, PAT_TWO_STONES_SAME]
                        + [-1] * 3, dtype=np.int64)
TILE_PATTERN = np.array([PAT_CAPITAL_TWO_STONES, -1, PAT_TWO_CAPITALS, PAT_THREE_STONES], dtype=np.int64)
NCLASS = 5   # a column's height class for building: 0..4 stones (5 = capped, takes nothing)


# ---------------------------------------------------------------------------------------------
# small accessors
# ---------------------------------------------------------------------------------------------
@njit(cache=True, inline="always")
def pb(p):
    return PLAYERS + p * PSTRIDE


@njit(cache=True, inline="always")
def sb(p):
    return STATS + p * SSTRIDE


@njit(cache=True)
def new_state():
    return np.zeros(STATE_SIZE, dtype=np.int32)


@njit(cache=True, inline="always")
def push(s, kind, a, b, c):
    f = FRAMES + s[G_SP] * FW
    s[f] = kind
    s[f + 1] = a
    s[f + 2] = b
    s[f + 3] = c
    s[G_SP] += 1


@njit(cache=True, inline="always")
def pop(s):
    s[G_SP] -= 1


@njit(cache=True, inline="always")
def top(s):
    return FRAMES + (s[G_SP] - 1) * FW


@njit(cache=True, inline="always")
def add_vp(s, p, vp, category):
    s[pb(p) + P_SCORE] += vp
    s[pb(p) + category] += vp


# ---------------------------------------------------------------------------------------------
# setup (D3, D20)
# ---------------------------------------------------------------------------------------------
REMOVE_STREAM = 0x7E40_7E40   # xor-ed into the seed: which replacement gets the odd copy (P12)
LOT_STREAM = 0x10_7510_75     # ... and V4's lot among seats tied on VP


@njit(cache=True, inline="always")
def setup_seat(R, i, n):
    """D20 (V5): the seat that makes setup placement ``i`` (0-based; workers go round by round):
    seat order, or the last seat first under ``setup.placement_order = "reverse"``. Its own
    inverse: the placement of seat ``p`` in each round is ``setup_seat(R, p, n)``."""
    j = i % n
    if R[R_PLACEMENT_ORDER] == PLACE_REVERSE:
        return n - 1 - j
    return j


@njit(cache=True)
def draw_lot(s, n, seed):
    """V4: the order in which a shared victory falls to the seats tied on VP, a permutation of the
    seats drawn from the game's own stream (so the stacks' shuffle is the game's without it): seat
    p's place, 0 to n - 1, in bits 2p..2p+1 of ``G_LOT``; among tied seats the highest place is
    recorded as the winner, each of them with equal chance."""
    rs = np.zeros(1, dtype=np.uint64)
    seed_stream(rs, seed, LOT_STREAM)
    places = np.arange(n)
    for i in range(n - 1, 0, -1):
        j = randbelow(rs, i + 1)
        tmp = places[i]
        places[i] = places[j]
        places[j] = tmp
    lot = 0
    for p in range(n):
        lot |= places[p] << (2 * p)
    s[G_LOT] = lot


@njit(cache=True)
def replace_copies(s, base, e, copies, seed):
    """P12: the copies of effect ``e`` in a stack's unshuffled cards (``base``) become the other
    two effects of its type, alternately, from a coin of the game's own stream: each keeps its
    stack's size (so the game its length) and, over games, an equal share. The stack's shuffle
    is unchanged, so every other card lies where it lies in the game without the removal."""
    rs = np.zeros(1, dtype=np.uint64)
    seed_stream(rs, seed, REMOVE_STREAM)
    t = e // 3
    k = e % 3
    coin = randbelow(rs, 2)
    for j in range(copies):
        other = (k + 1 + (j + coin) % 2) % 3
        s[base + k * copies + j] = t * 3 + other


@njit(cache=True, _nrt=True)
def init_game(s, R, n, seed):
    """Fill ``s`` with a new game for ``n`` players; the stacks are shuffled from ``seed``."""
    for k in range(s.shape[0]):
        s[k] = 0
    s[G_NPLAYERS] = n
    s[G_NSPACES] = R[R_NSPACES]
    s[G_NCOLS] = R[R_NCOLS + n]
    s[G_PHASE] = PH_SETUP
    s[G_CUR] = 0
    s[G_END_SEAT] = -1
    s[G_END_TURN] = -1
    s[G_WINNER] = -1
    s[G_CENT_POS] = 0
    s[G_WHITE_LEFT] = R[R_WHITES]
    s[G_MOVED] = -1
    s[G_CARD_SPACE] = -1
    s[G_TRACK] = -1
    for x in range(s[G_NSPACES]):
        s[SITE + x] = EMPTY
    s[SITE + 0] = OCC_CENTURION
    for c in range(s[G_NCOLS]):
        s[COL_HOLDER + c] = -1
        s[COL_TILE + c] = -1
        for k in range(COLPARTS):
            s[COL_PART + c * COLPARTS + k] = -1
    rs = np.zeros(1, dtype=np.uint64)
    seed_stream(rs, seed, 0)
    copies = R[R_COPIES]
    for t in range(NTYPES):
        base = STACK_CARDS + t * MAXSTACK
        m = 3 * copies
        for i in range(m):
            s[base + i] = t * 3 + i // copies
        if 0 <= R[R_REMOVE] < NEFF and R[R_REMOVE] // 3 == t:
            replace_copies(s, base, R[R_REMOVE], copies, seed)
        for i in range(m - 1, 0, -1):     # Fisher-Yates
            j = randbelow(rs, i + 1)
            tmp = s[base + i]
            s[base + i] = s[base + j]
            s[base + j] = tmp
        s[STACK_LEN + t] = m
        s[STACK_TOP + t] = 0
    for t in range(NITILE):
        s[ITILE_AVAIL + t] = TILE_PUBLIC
    for p in range(n):
        b = pb(p)
        s[b + P_STONES] = R[R_STONES]
        s[b + P_CAPS] = R[R_CAPS]
        s[b + P_WORKERS] = R[R_WORKERS] - R[R_SITE_WORKERS + n]
        for k in range(2):
            s[b + P_WPOS + k] = -1
            s[b + P_TPOS + k] = -1
    if R[R_REMOVE] >= NEFF:               # P12: an instant tile out of the Temple
        s[ITILE_AVAIL + R[R_REMOVE] - NEFF] = 0
    if R[R_TIE_BREAK] == TIE_SHARED:
        draw_lot(s, n, seed)
    s[G_CUR] = setup_seat(R, 0, n)
    give, seat = R[R_GIVE], R[R_GIVE_SEAT]
    if give >= 0 and seat < n:            # P11: a card in hand, or a tile of the seat's own
        if give < NEFF:
            s[pb(seat) + P_HAND + give] += 1
            s[pb(seat) + P_HANDN] += 1
        else:
            s[ITILE_AVAIL + give - NEFF] |= 2 << seat


# ---------------------------------------------------------------------------------------------
# the Construction Site (D4, D12)
# ---------------------------------------------------------------------------------------------
@njit(cache=True, inline="always")
def destinations(s, start, out, n_out):
    """D4: append to ``out`` the first 3 spaces of the first run of 3 empty spaces after ``start``.

    Found with bit masks rather than by walking the loop: every worker move and Centurion move
    lists its destinations, and a walk that counts runs mispredicts a branch at each occupied
    space (the most frequent listing of a random game, profiled)."""
    return destinations_in(empty_spaces(s), s[G_NSPACES], start, out, n_out)


@njit(cache=True, inline="always")
def empty_spaces(s):
    """The empty spaces of the Construction Site, bit x for space x (``destinations_in``)."""
    empty = np.uint64(0)
    for x in range(s[G_NSPACES]):
        if s[SITE + x] == EMPTY:
            empty |= np.uint64(1) << np.uint64(x)
    return empty


@njit(cache=True, inline="always")
def destinations_in(empty, ns, start, out, n_out):
    """``destinations`` on a site of ``ns`` spaces whose empty ones are ``empty``
    (``empty_spaces``): a caller that lists several workers' moves on one site builds it once."""
    after = start + 1 if start + 1 < ns else 0
    # the ns - 1 spaces after start, the next one as bit 0 (start itself is left out)
    ring = (empty >> np.uint64(after)) | (empty << np.uint64(ns - after))
    ring &= (np.uint64(1) << np.uint64(ns - 1)) - np.uint64(1)
    runs = ring & (ring >> np.uint64(1)) & (ring >> np.uint64(2))     # bit i: i, i+1, i+2 all empty
    if runs == 0:
        return n_out
    first = after + np.int64(trailing_zeros(runs))
    for k in range(3):
        y = first + k
        out[n_out + k] = A_SPACE + (y - ns if y >= ns else y)
    return n_out + 3


# ---------------------------------------------------------------------------------------------
# majorities (D7, D17)
# ---------------------------------------------------------------------------------------------
@njit(cache=True, inline="always")
def column_leader(s, R, c):
    """D7: the colour (seat, or WHITE) holding column ``c``, or -1."""
    h = s[COL_H + c]
    need = R[R_MIN_PARTS]
    best = -1
    best_n = 0
    best_hi = -1
    for o in range(NOWNERS):
        cnt = 0
        hi = -1
        for k in range(h):
            if s[COL_PART + c * COLPARTS + k] == o:
                cnt += 1
                hi = k
        if cnt >= need and (cnt > best_n or (cnt == best_n and hi > best_hi)):
            best = o
            best_n = cnt
            best_hi = hi
    return best


@njit(cache=True, inline="always")
def update_column_holder(s, R, c):
    """D7: after a placement in ``c``, the majority worker moves to the current holder."""
    leader = column_leader(s, R, c)
    if leader == WHITE:
        leader = -1
    old = s[COL_HOLDER + c]
    if old == leader:
        return
    if old >= 0:
        s[pb(old) + P_WORKERS] += 1
        s[COL_HOLDER + c] = -1
    if leader >= 0 and s[pb(leader) + P_WORKERS] > 0:
        s[pb(leader) + P_WORKERS] -= 1
        s[COL_HOLDER + c] = leader


@njit(cache=True, _nrt=False)
def count_heights(s):
    """Recount ``H_COUNT`` (parts of each owner at each level: 1-4 stones, 5 capitals) from
    the columns. Play keeps the counts as parts are placed; a position written column by
    column (``evora score``, tests) calls this once it is complete."""
    for k in range(5 * NOWNERS):
        s[H_COUNT + k] = 0
    for c in range(s[G_NCOLS]):
        for i in range(s[COL_H + c]):
            s[H_COUNT + i * NOWNERS + s[COL_PART + c * COLPARTS + i]] += 1


@njit(cache=True, inline="always")
def level_lead(s, level, need):
    """D17: the most parts an owner with at least ``need`` has at
    ``level`` (0: nobody qualifies), and how many owners (white included) have that many."""
    row = H_COUNT + (level - 1) * NOWNERS
    best = 0
    for o in range(NOWNERS):      # selects, not branches: every evaluation asks at each level
        x = s[row + o]
        best = max(best, x if x >= need else 0)
    leaders = 0
    for o in range(NOWNERS):
        leaders += s[row + o] == best
    return best, leaders if best > 0 else 0


@njit(cache=True, inline="always")
def height_standing(s, level, p, need):
    """D17: 0 if ``p`` does not lead ``level``, 1 if it leads alone,
    2 if it leads tied (white included)."""
    best, leaders = level_lead(s, level, need)
    if best == 0 or s[H_COUNT + (level - 1) * NOWNERS + p] != best:
        return 0
    return 1 if leaders == 1 else 2


# ---------------------------------------------------------------------------------------------
# building (D6, D8, D16)
# ---------------------------------------------------------------------------------------------
@njit(cache=True, inline="always")
def trigger_end(s, kind, p):
    """The end is triggered (D16, P4) by seat ``p`` (-1: the round limit) in the turn being played."""
    s[G_END_TRIGGER] = kind
    s[G_END_SEAT] = p
    s[G_END_TURN] = s[G_NTURNS]


@njit(cache=True, inline="always")
def check_end(s, R, p):
    """D16: checked after every part placed."""
    if s[G_END_TRIGGER] != 0:
        return
    full = True
    for c in range(s[G_NCOLS]):
        if s[COL_H + c] < 4:
            full = False
            break
    if full:
        trigger_end(s, END_TEMPLE_FULL, p)
    elif s[pb(p) + P_STONES] == 0:
        trigger_end(s, END_OUT_OF_STONES, p)


@njit(cache=True, inline="always")
def can_place(s, p, c, kind):
    h = s[COL_H + c]
    if kind == K_STONE:
        return h < 4 and s[pb(p) + P_STONES] > 0
    if kind == K_WHITE:
        return h < 4 and s[G_WHITE_LEFT] > 0
    return h == 4 and s[pb(p) + P_CAPS] > 0


@njit(cache=True, inline="always")
def place_part(s, R, p, c, kind):
    """Place one part at the top of column ``c``: its VP at once, the holder, the end check."""
    h = s[COL_H + c]
    if kind == K_WHITE:
        s[COL_PART + c * COLPARTS + h] = WHITE
        s[H_COUNT + h * NOWNERS + WHITE] += 1
        s[G_WHITE_LEFT] -= 1
        add_vp(s, p, R[R_WHITE_VP], P_VP_WHITE)
    else:
        s[COL_PART + c * COLPARTS + h] = p
        s[H_COUNT + h * NOWNERS + p] += 1
        if kind == K_STONE:
            s[pb(p) + P_STONES] -= 1
        else:
            s[pb(p) + P_CAPS] -= 1
        add_vp(s, p, R[R_HEIGHT_VP + h + 1], P_VP_BUILD)
    s[COL_H + c] = h + 1
    s[SCR_BUILT] |= 1 << c          # for the recorded metrics' kept scores (metrics.standings)
    update_column_holder(s, R, c)
    check_end(s, R, p)


@njit(cache=True, inline="always")
def group_fill(pat, g, h, stones, whites, caps):
    """Parts group ``g`` of ``pat`` places on a column of height ``h`` (D6: in order, skipping
    parts that do not fit), and the supplies left: (placed, stones, whites, caps)."""
    placed = 0
    for k in range(2):
        kind = PATTERNS[pat, g, k]
        if kind == K_STONE:
            if h < 4 and stones > 0:
                stones -= 1
                h += 1
                placed += 1
        elif kind == K_WHITE:
            if h < 4 and whites > 0:
                whites -= 1
                h += 1
                placed += 1
        elif kind == K_CAPITAL:
            if h == 4 and caps > 0:
                caps -= 1
                h += 1
                placed += 1
    return placed, stones, whites, caps


@njit(cache=True, _nrt=False)
def best_from(pat, g, stones, whites, caps, cls):
    """Most parts groups g.. of ``pat`` can still place on distinct columns, given ``cls[h]``
    free columns of each height class; every group takes one column or is skipped (class
    NCLASS). Patterns have at most 3 groups: nested loops, each prefix filled once."""
    rem = NGROUPS[pat] - g
    if rem <= 0:
        return 0
    most = PARTS_FROM[pat, g]
    best = 0
    for d0 in range(NCLASS + 1):
        if d0 < NCLASS and cls[d0] < 1:
            continue
        k0, st0, wh0, cp0 = 0, stones, whites, caps
        if d0 < NCLASS:
            k0, st0, wh0, cp0 = group_fill(pat, g, d0, stones, whites, caps)
        if rem == 1:
            best = max(best, k0)
        else:
            for d1 in range(NCLASS + 1):
                if d1 < NCLASS and cls[d1] < 1 + (d1 == d0):
                    continue
                k1, st1, wh1, cp1 = 0, st0, wh0, cp0
                if d1 < NCLASS:
                    k1, st1, wh1, cp1 = group_fill(pat, g + 1, d1, st0, wh0, cp0)
                if rem == 2:
                    best = max(best, k0 + k1)
                else:
                    for d2 in range(NCLASS):
                        if cls[d2] >= 1 + (d2 == d0) + (d2 == d1):
                            k2 = group_fill(pat, g + 2, d2, st1, wh1, cp1)[0]
                            best = max(best, k0 + k1 + k2)
                    best = max(best, k0 + k1)
                if best == most:      # nothing can beat placing every part
                    return best
        if best == most:
            return best
    return best


@njit(cache=True, inline="always")
def most_parts(pat, g, stones, whites, caps, cls):
    """``best_from`` with every count as int64: one compiled version serves all callers."""
    return best_from(np.int64(pat), np.int64(g), np.int64(stones), np.int64(whites), np.int64(caps), cls)


@njit(cache=True, inline="always")
def free_classes(s, used):
    cls = s[SCR_CLS:SCR_CLS + NCLASS + 1]
    for h in range(NCLASS + 1):
        cls[h] = 0
    for c in range(s[G_NCOLS]):
        if not (used >> c) & 1:
            h = s[COL_H + c]
            if h < NCLASS:
                cls[h] += 1
    return cls


@njit(cache=True, inline="always")
def build_target(s, f):
    """D6: the most parts the build in frame ``f`` can still place (0: the build is over)."""
    p = s[G_CUR]
    cls = free_classes(s, s[f + 3])
    return most_parts(s[f + 1], s[f + 2], s[pb(p) + P_STONES], s[G_WHITE_LEFT], s[pb(p) + P_CAPS], cls)


@njit(cache=True, inline="always")
def legal_build(s, R, f, out, n):
    """D6: the columns (or a skip) for the next group that keep the largest build possible."""
    p = s[G_CUR]
    pat = s[f + 1]
    g = s[f + 2]
    used = s[f + 3]
    st = s[pb(p) + P_STONES]
    wh = s[G_WHITE_LEFT]
    cp = s[pb(p) + P_CAPS]
    target = build_target(s, f)
    if target == 0:
        return n
    cls = s[SCR_CLS:SCR_CLS + NCLASS + 1]    # filled by build_target
    good = 0    # bitmask of height classes whose columns keep the best build
    for h in range(NCLASS):
        if cls[h] > 0:
            k, st2, wh2, cp2 = group_fill(pat, g, h, st, wh, cp)
            if k > 0:
                cls[h] -= 1
                if k + most_parts(pat, g + 1, st2, wh2, cp2, cls) == target:
                    good |= 1 << h
                cls[h] += 1
    for c in range(s[G_NCOLS]):
        h = s[COL_H + c]
        if h < NCLASS and (good >> h) & 1 and not (used >> c) & 1:
            out[n] = A_COLUMN + c
            n += 1
    # P5: skipping a group that the next, identical group could replace ("skip, then place"
    # vs "place, then skip") offers the same build twice; identical groups skip last
    same_as_next = (g + 1 < NGROUPS[pat] and PATTERNS[pat, g, 0] == PATTERNS[pat, g + 1, 0]
                    and PATTERNS[pat, g, 1] == PATTERNS[pat, g + 1, 1])
    if not same_as_next and most_parts(pat, g + 1, st, wh, cp, cls) == target:
        out[n] = A_SKIP
        n += 1
    return n


@njit(cache=True, inline="always")
def apply_build(s, R, f, a):
    p = s[G_CUR]
    pat = s[f + 1]
    g = s[f + 2]
    if a != A_SKIP:
        c = a - A_COLUMN
        for k in range(2):
            kind = PATTERNS[pat, g, k]
            if kind != 0 and can_place(s, p, c, kind):
                place_part(s, R, p, c, kind)
        s[f + 3] |= 1 << c
    s[f + 2] = g + 1
    if g + 1 >= NGROUPS[pat]:
        pop(s)


# ---------------------------------------------------------------------------------------------
# cards, tiles and site actions (D9-D15)
# ---------------------------------------------------------------------------------------------
@njit(cache=True, inline="always")
def draw_card(s, R, p, t):
    """D9: a drawn card waits face down until the end of the turn; an empty stack pays VP."""
    top_i = s[STACK_TOP + t]
    if top_i < s[STACK_LEN + t]:
        e = s[STACK_CARDS + t * MAXSTACK + top_i]
        s[STACK_TOP + t] = top_i + 1
        s[pb(p) + P_PENDING + e] += 1
    else:
        add_vp(s, p, R[R_EMPTY_VP], P_VP_EMPTY)


@njit(cache=True, _nrt=False)
def push_emp_place(s, p):
    """D14: which tile to place is a choice only if both are in supply with different sides up."""
    b = pb(p)
    in0 = s[b + P_TPOS] < 0
    in1 = s[b + P_TPOS + 1] < 0
    if in0 and in1:
        chosen = 0 if s[b + P_TVAL] == s[b + P_TVAL + 1] else -1
    elif in0:
        chosen = 0
    elif in1:
        chosen = 1
    else:
        chosen = -2   # no tile left: nothing to place
    push(s, F_EMP_PLACE, chosen, 0, 0)


@njit(cache=True, _nrt=False)
def dispatch_effect(s, R, p, e, nested):
    """Carry out card effect ``e`` for ``p`` (from hand or from the Temple). Callers pass
    int64 arguments, never literals: each distinct argument type is another compilation."""
    if e == E_GOV_COLUMN:
        push(s, F_GOV_COLUMN, 0, 0, 0)
    elif e == E_GOV_WORKERS:
        add_vp(s, p, min(columns_held(s, p) * R[R_GOV_WORKER_VP], R[R_GOV_WORKER_CAP]), P_VP_CARDS)
    elif e == E_GOV_HEIGHT:
        push(s, F_GOV_HEIGHT, 0, 0, 0)
    elif e == E_EMP_PLACE:
        push_emp_place(s, p)
    elif e == E_EMP_FLIP:
        push(s, F_EMP_FLIP, 0, 0, 0)
    elif e == E_EMP_TEMPLE:
        push(s, F_TEMPLE, (1 << NTYPES) - 1, 0, 0)
    elif e == E_CENT_SWAP:
        push(s, F_CENT, CENT_SWAP, nested, 0)
    elif e == E_CENT_ANY:
        push(s, F_CENT, CENT_ANY, nested, 0)
    elif e == E_CENT_MOVE:
        push(s, F_CENT, CENT_MOVE, nested, 0)
    else:
        push(s, F_BUILD, CARD_PATTERN[e], 0, 0)


@njit(cache=True, _nrt=False)
def execute_space(s, R, p, x, nested, by_centurion):
    """Carry out the action of space ``x``.

    D12: reached by the Centurion, the "use the Centurion" space does nothing.
    P1: reached while resolving a Temple card (``nested``), a Temple space does nothing.
    """
    s[sb(p) + S_SPACE_USES + x] += 1
    kind = R[R_SPACE_ACTION + x]
    arg = R[R_SPACE_ARG + x]
    if kind == SA_BUILD:
        push(s, F_BUILD, arg, 0, 0)
    elif kind == SA_EMPEROR:
        push_emp_place(s, p)
    elif kind == SA_DRAW2:
        draw_card(s, R, p, arg // NTYPES)
        draw_card(s, R, p, arg % NTYPES)
    elif kind == SA_CENTURION:
        if not by_centurion:
            # D10: a card played after this action matches the Centurion's space, wherever
            # the Centurion ends up (a Temple Centurion card may move it again)
            s[G_CARD_SPACE] = CARD_AT_CENTURION
            push(s, F_CENT, CENT_MOVE, nested, 0)
    elif kind == SA_TEMPLE:
        if not nested:
            push(s, F_TEMPLE, arg, 0, 0)


@njit(cache=True, _nrt=False)
def apply_itile(s, R, p, t):
    """D15: an instant bonus tile, once its 3 cards are paid."""
    if t == T_FLIP_BOTH:
        s[pb(p) + P_TVAL] = 1
        s[pb(p) + P_TVAL + 1] = 1
        s[SCR_TILES] |= 1 << p       # for the recorded metrics' kept scores (metrics.standings)
    else:
        push(s, F_BUILD, TILE_PATTERN[t], 0, 0)


@njit(cache=True, inline="always")
def play_colour(s, R):
    """The card type a card played now must have: the colour of the space the moved worker
    stands on, or of the Centurion's space after the Centurion action (D10, P9); -1 if none."""
    x = s[G_CARD_SPACE]
    if x == CARD_AT_CENTURION:
        x = s[G_CENT_POS]
    return R[R_SPACE_COLOUR + x] if x >= 0 else -1


@njit(cache=True, inline="always")
def legal_plays(s, R, p, out, n):
    """Cards ``p`` may play now (the 3 effects of the matching type), then instant tiles.
    With ``out`` None, only whether there is any (``n`` is then 0 or 1)."""
    b = pb(p)
    if s[G_CARD_PLAYED] or s[b + P_HANDN] == 0:
        return n
    colour = play_colour(s, R)
    if colour >= 0:
        for e in range(colour * 3, colour * 3 + 3):
            if s[b + P_HAND + e] > 0:
                if out is None:
                    return 1
                out[n] = A_PLAY + e
                n += 1
    if s[b + P_HANDN] >= 3:
        mine = TILE_PUBLIC | (2 << p)
        for t in range(NITILE):
            if s[ITILE_AVAIL + t] & mine:
                if out is None:
                    return 1
                out[n] = A_TILE + t
                n += 1
    return n


@njit(cache=True, inline="always")
def any_play(s, R, p):
    return legal_plays(s, R, p, None, 0) > 0


@njit(cache=True, inline="always")
def temple_choosable(s, t):
    """D11: a non-empty stack whose top card is not itself "use a card in the Temple"."""
    top_i = s[STACK_TOP + t]
    if top_i >= s[STACK_LEN + t]:
        return False
    return s[STACK_CARDS + t * MAXSTACK + top_i] != E_EMP_TEMPLE


# ---------------------------------------------------------------------------------------------
# legal actions
# ---------------------------------------------------------------------------------------------
@njit(cache=True, _nrt=False)
def legal_frame(s, R, out):
    """Legal actions of the top frame (0 if it has no choice to offer)."""
    f = top(s)
    kind = s[f]
    p = s[G_CUR]
    b = pb(p)
    n = 0
    if kind == F_BUILD:
        return legal_build(s, R, f, out, 0)
    if kind == F_EMP_PLACE:
        chosen = s[f + 1]
        if chosen == -1:
            out[0] = A_EMPTILE
            out[1] = A_EMPTILE + 1
            return 2
        if chosen >= 0:
            for c in range(s[G_NCOLS]):
                if s[COL_TILE + c] < 0:
                    out[n] = A_COLUMN + c
                    n += 1
        return n
    if kind == F_EMP_FLIP:
        for k in range(2):
            if s[b + P_TVAL + k] == 0:
                # two front-side tiles both in supply are the same choice
                if k == 1 and n == 1 and s[b + P_TPOS] < 0 and s[b + P_TPOS + 1] < 0:
                    continue
                out[n] = A_EMPTILE + k
                n += 1
        return n
    if kind == F_TEMPLE:
        mask = s[f + 1]
        for t in range(NTYPES):
            if (mask >> t) & 1 and temple_choosable(s, t):
                out[n] = A_STACK + t
                n += 1
        return n
    if kind == F_CENT:
        mode = s[f + 1]
        if mode == CENT_MOVE:
            return destinations(s, s[G_CENT_POS], out, 0)
        for x in range(s[G_NSPACES]):
            occ = s[SITE + x]
            if (mode == CENT_ANY and occ == EMPTY) or (mode == CENT_SWAP and 0 <= occ < OCC_CENTURION):
                out[n] = A_SPACE + x
                n += 1
        return n
    if kind == F_GOV_COLUMN:
        for c in range(s[G_NCOLS]):
            out[n] = A_COLUMN + c
            n += 1
        return n
    if kind == F_GOV_HEIGHT:
        for level in range(1, 6):
            if height_standing(s, level, p, R[R_MIN_PARTS]) > 0:
                out[n] = A_HEIGHT + level - 1
                n += 1
        return n
    if kind == F_DRAW:
        for t in range(NTYPES):     # D9: an empty stack may be named (it pays VP instead)
            out[n] = A_STACK + t
            n += 1
        return n
    if kind == F_DISCARD:
        # P5: cards are paid in non-decreasing effect order, so a card is payable only if
        # enough cards of its effect or higher remain to pay the rest of the price
        need = s[f + 1]
        left = 0
        for e in range(NEFF - 1, s[f + 2] - 1, -1):
            left += s[b + P_HAND + e]
            if s[b + P_HAND + e] > 0 and left >= need:
                out[n] = A_DISCARD + e
                n += 1
        return n
    return 0


@njit(cache=True, inline="always")
def phase_actions(s, R, out):
    """Legal actions of a decision that no frame owns (0 once the game is over)."""
    ph = s[G_PHASE]
    if ph == PH_TERMINAL:
        return 0
    p = s[G_CUR]
    n = 0
    if ph == PH_SETUP:
        for x in range(s[G_NSPACES]):
            if s[SITE + x] == EMPTY:
                out[n] = A_SPACE + x
                n += 1
        return n
    if ph == PH_CHOOSE_WORKER:
        for k in range(R[R_SITE_WORKERS + s[G_NPLAYERS]]):
            out[n] = A_WORKER + k
            n += 1
        return n
    if ph == PH_MOVE:
        return destinations(s, s[pb(p) + P_WPOS + s[G_MOVED]], out, 0)
    n = legal_plays(s, R, p, out, 0)
    if ph == PH_MAIN:
        out[n] = A_DRAW
        out[n + 1] = A_SITE
        n += 2
    else:
        out[n] = A_END
        n += 1
    return n


@njit(cache=True, _nrt=False)
def legal_actions(s, R, out):
    """Write the legal actions into ``out`` (int32, length >= N_ACTIONS) and return how many."""
    if s[G_PHASE] != PH_TERMINAL and s[G_SP] > 0:
        return legal_frame(s, R, out)
    return phase_actions(s, R, out)


# ---------------------------------------------------------------------------------------------
# applying an action
# ---------------------------------------------------------------------------------------------
@njit(cache=True, inline="always")
def begin_turn(s, R):
    if R[R_SITE_WORKERS + s[G_NPLAYERS]] > 1:
        s[G_PHASE] = PH_CHOOSE_WORKER      # D5
    else:
        s[G_MOVED] = 0
        s[G_PHASE] = PH_MOVE


@njit(cache=True, inline="always")
def emperor_points(s, R, p):
    """Emperor bonus: each own tile's value times own parts in its column."""
    b = pb(p)
    emp = 0
    for k in range(2):
        c = s[b + P_TPOS + k]
        if c >= 0:
            own = 0
            for i in range(s[COL_H + c]):
                if s[COL_PART + c * COLPARTS + i] == p:
                    own += 1
            emp += own * R[R_EMP_VALUES + s[b + P_TVAL + k]]
    return emp


@njit(cache=True, inline="always")
def columns_held(s, p):
    """D7: how many columns carry ``p``'s majority workers."""
    held = 0
    for c in range(s[G_NCOLS]):
        if s[COL_HOLDER + c] == p:
            held += 1
    return held


@njit(cache=True, inline="always")
def column_majority_points(s, R, p):
    """D7: VP for each of ``p``'s majority workers on a column."""
    return column_vp(R, columns_held(s, p))


@njit(cache=True, inline="always")
def column_vp(R, held):
    """D7: the VP of holding ``held`` column majorities (the one place of this rule)."""
    return held * R[R_COLMAJ_VP]


@njit(cache=True, inline="always")
def majority_vp(R, level, standing):
    """D17: the VP of a height-majority ``standing`` (1 alone, 2 tied, 0 none) at ``level``."""
    if standing == 1:
        return R[R_HMAJ + level]
    if standing == 2:
        return R[R_HMAJ_TIE + level]
    return 0


@njit(cache=True, inline="always")
def height_majorities(s, R, first, last):
    """D17: the VP of seats ``first``..``last - 1`` for the majority at each level (1-4,
    5 = capitals) as if scored now, each level's leaders found once for all of them, into the
    scratch table read by ``height_points``."""
    need = R[R_MIN_PARTS]
    for level in range(1, 6):
        best, leaders = level_lead(s, level, need)
        vp = majority_vp(R, level, 1 if leaders == 1 else 2)
        for q in range(first, last):
            lead = best > 0 and s[H_COUNT + (level - 1) * NOWNERS + q] == best
            s[SCR_HVP + (level - 1) * MAXP + q] = vp if lead else 0


@njit(cache=True, inline="always")
def height_points(s, level, p):
    """``p``'s VP for the majority at ``level`` (after ``height_majorities``)."""
    return s[SCR_HVP + (level - 1) * MAXP + p]


@njit(cache=True, inline="always")
def column_census(s):
    """One pass over the columns for evaluations that need several seats' majorities: the
    columns each seat holds (D7), a byte a seat from bit 0, the complete columns (capital
    placed: no part can change their majority) each seat holds, a byte a seat from bit 32, and
    the height of the lowest column. Read with ``census_count``."""
    packed = 0
    lowest = 5
    for c in range(s[G_NCOLS]):
        h = s[COL_H + c]
        lowest = min(lowest, h)
        q = s[COL_HOLDER + c]
        if q >= 0:
            packed += 1 << (8 * q)
            if h == 5:
                packed += 1 << (32 + 8 * q)
    return packed, lowest


@njit(cache=True, inline="always")
def census_count(packed, p, complete):
    """Seat ``p``'s columns from ``column_census``: all it holds, or (``complete``) the
    complete ones only."""
    return (packed >> (8 * p + (32 if complete else 0))) & 0xFF


@njit(cache=True, inline="always")
def total_holding(s, R, p, held):
    """``seat_total`` of ``p`` holding ``held`` columns, counted by the caller."""
    tot = s[pb(p) + P_SCORE] + emperor_points(s, R, p) + column_vp(R, held) + R[R_START_VP + p]
    for level in range(1, 6):
        tot += height_points(s, level, p)
    return tot


@njit(cache=True, inline="always")
def seat_total(s, R, p):
    """``p``'s total if the game were scored now (after ``height_majorities``), in whole VP, from
    the same category functions as the final scoring (the whole VP the seat started with
    included: variant key players.start_vp; the strategies compare seats by ``standing``)."""
    return total_holding(s, R, p, columns_held(s, p))


order_key = njit(cache=True, inline="always")(_order_key)


@njit(cache=True, inline="always")
def standing(s, R, p):
    """``p``'s place in the order of the final scoring if the game were scored now, as a number
    the strategies compare (after ``height_majorities``): its total, and half a VP for the half
    point of its starting VP (V2). Totals are whole, so ordering by this number is ordering by
    VP and then by the half point, exactly as ``order_key`` does; the parts left are not in it."""
    return standing_holding(s, R, p, columns_held(s, p))


@njit(cache=True, inline="always")
def standing_holding(s, R, p, held):
    """``standing`` of ``p`` holding ``held`` columns, counted by the caller."""
    return total_holding(s, R, p, held) + 0.5 * R[R_START_HALF + p]


@njit(cache=True, inline="always")
def final_key(s, R, total, p):
    """Seat ``p``'s place in the final scoring's order with ``total`` VP, as a number (larger is
    better; no two seats share one): D18 (more VP; then fewer parts left; then later in turn
    order) with V2's half point between the VP and the parts, the one rule ``ranking.order_key``;
    under V4's shared victory the lot's order (``draw_lot``) stands for the parts and the seat.
    Every reader of who wins calls this (the final scoring, the tracked leader); the players read
    it through ``known_key``, which leaves the lot out."""
    if R[R_TIE_BREAK] == TIE_SHARED:
        return order_key(total, R[R_START_HALF + p], 0, lot_place(s, p))
    return order_key(total, R[R_START_HALF + p], s[pb(p) + P_STONES] + s[pb(p) + P_CAPS], p)


@njit(cache=True, inline="always")
def lot_place(s, p):
    """V4: seat ``p``'s place in the lot (``draw_lot``)."""
    return (s[G_LOT] >> (2 * p)) & 3


@njit(cache=True, inline="always")
def known_key(s, R, total, p):
    """``final_key`` as the players can know it. The lot of V4's shared victory is drawn at the
    start and shown to no one (P10), so it is left out: seats tied on VP and V2's half point
    share a key. Under D18 every part of the key is public and it is ``final_key``."""
    if R[R_TIE_BREAK] == TIE_SHARED:
        return order_key(total, R[R_START_HALF + p], 0, 0)
    return final_key(s, R, total, p)


@njit(cache=True, inline="always")
def share_on(s, R, p, totals, at, stride):
    """Seat ``p``'s share of the victory if the game were decided with seat q's whole VP at
    ``totals[at + q * stride]``, as the players value it: ``known_key``'s k seats tied at the top
    get 1/k each, the chance that the lot records each of them the winner (V4). Under D18 no
    two keys tie, so its winner gets 1 and every other seat 0."""
    mine = known_key(s, R, np.int64(totals[at + p * stride]), p)
    tied = 0
    for q in range(s[G_NPLAYERS]):
        key = known_key(s, R, np.int64(totals[at + q * stride]), q)
        if key > mine:
            return 0.0
        tied += key == mine
    return 1.0 / tied


@njit(cache=True, inline="always")
def victory_share(s, R, p):
    """``share_on`` for the finished game ``s``, on the final totals: what the players' win
    bonus counts, whatever seat the lot recorded in ``G_WINNER``."""
    return share_on(s, R, p, s, PLAYERS + P_FINAL, PSTRIDE)


@njit(cache=True, inline="always")
def game_ends(s, R, p, n):
    """Whether the game ends with the turn seat ``p`` has just finished, the end being triggered
    (V3): the round finished (D16: the last seat's turn), the triggering turn itself, or every
    seat's one more turn after it (the triggering seat's, ``n`` turns later). The round limit
    (P4), reached at the last seat's turn, ends it at once."""
    mode = R[R_AFTER_TRIGGER]
    if mode == AFTER_FINISH_TURN or s[G_END_TRIGGER] == END_ROUND_LIMIT:
        return True
    if mode == AFTER_ONE_MORE_TURN:
        return s[G_NTURNS] == s[G_END_TURN] + 1 + n
    return p == n - 1


@njit(cache=True, _nrt=False)
def leader_now(s, R, out, at):
    """The seat the final scoring would rank first if the game ended now (``final_key``), each
    seat's total then written to ``out[at + p]`` (the categories of the final scoring and V1's
    starting VP, as ``seat_total``). Writes scratch space only, never the game."""
    n = s[G_NPLAYERS]
    height_majorities(s, R, 0, n)
    best, best_key = -1, np.int64(0)
    for p in range(n):
        total = seat_total(s, R, p)
        out[at + p] = total
        key = final_key(s, R, total, p)
        if best < 0 or key > best_key:
            best, best_key = p, key
    return best


@njit(cache=True, _nrt=False)
def final_scoring(s, R):
    """Emperor bonus, column majorities, height majorities; then the winner (D17-D19)."""
    n = s[G_NPLAYERS]
    height_majorities(s, R, 0, n)
    for p in range(n):
        b = pb(p)
        s[b + P_VP_EMPEROR] = emperor_points(s, R, p)
        s[b + P_VP_COLMAJ] = column_majority_points(s, R, p)
        for level in range(1, 6):
            s[b + P_VP_HEIGHT + level - 1] = height_points(s, level, p)
    best, best_key = -1, np.int64(0)
    for p in range(n):
        b = pb(p)
        # the starting VP (variant key players.start_vp, V1) count in the total only: the 11
        # categories stay what was scored during the game and at its end
        total = s[b + P_SCORE] + s[b + P_VP_EMPEROR] + s[b + P_VP_COLMAJ] + R[R_START_VP + p]
        for k in range(5):
            total += s[b + P_VP_HEIGHT + k]
        s[b + P_FINAL] = total
        key = final_key(s, R, total, p)
        if best < 0 or key > best_key:
            best, best_key = p, key
    s[G_WINNER] = best
    s[G_PHASE] = PH_TERMINAL


@njit(cache=True, _nrt=False)
def end_turn(s, R):
    """D9 (drawn cards join the hand), D16 (finish the round), P4 (round limit)."""
    p = s[G_CUR]
    b = pb(p)
    for e in range(NEFF):
        k = s[b + P_PENDING + e]
        if k:
            s[b + P_HAND + e] += k
            s[b + P_HANDN] += k
            s[b + P_PENDING + e] = 0
    s[b + P_TURNS] += 1
    s[G_NTURNS] += 1
    s[G_CARD_PLAYED] = 0
    s[G_MOVED] = -1
    s[G_CARD_SPACE] = -1
    n = s[G_NPLAYERS]
    if p == n - 1 and s[G_END_TRIGGER] == 0 and s[G_ROUND] >= R[R_MAX_ROUNDS]:
        trigger_end(s, END_ROUND_LIMIT, -1)
        s[G_END_TURN] = s[G_NTURNS] - 1          # the turn just finished
    if s[G_END_TRIGGER] != 0 and game_ends(s, R, p, n):
        final_scoring(s, R)
        return
    if p == n - 1:
        s[G_CUR] = 0
        s[G_ROUND] += 1
    else:
        s[G_CUR] = p + 1
    begin_turn(s, R)


@njit(cache=True, inline="always")
def settle(s, R, out, listing):
    """Resolve everything that needs no choice: tiles whose cards are paid, frames that have
    nothing left to offer, a turn with nothing left to do. Returns how many legal actions the
    open frame now offers (written to ``out`` when ``listing``; a positive count otherwise),
    or 0 when no frame is open (a phase-level decision, or the end of the game)."""
    while s[G_PHASE] != PH_TERMINAL:
        p = s[G_CUR]
        if s[G_SP] > 0:
            f = top(s)
            if s[f] == F_ITILE:
                t = s[f + 1]
                pop(s)
                apply_itile(s, R, p, t)
                continue
            if listing:
                open_choices = legal_frame(s, R, out)
            elif s[f] == F_BUILD:
                open_choices = build_target(s, f)
            elif s[f] == F_DRAW or s[f] == F_DISCARD or s[f] == F_GOV_COLUMN:
                # never without a choice: any of the four stacks (D9), any column, and a
                # tile's price is payable in canonical order (P5) once 3 cards are in hand
                open_choices = 1
            else:
                open_choices = legal_frame(s, R, out)
            if open_choices == 0:
                pop(s)
                continue
            return open_choices
        tr = s[G_TRACK]
        if tr >= 0:
            s[sb(p) + S_PLAY_VP + tr] += s[pb(p) + P_SCORE] - s[G_TRACK_SCORE0]
            s[G_TRACK] = -1
        if s[G_PHASE] == PH_AFTER and not any_play(s, R, p):
            end_turn(s, R)
            continue
        return 0
    return 0


@njit(cache=True, inline="always")
def apply_frame(s, R, a):
    f = top(s)
    kind = s[f]
    p = s[G_CUR]
    b = pb(p)
    if kind == F_BUILD:
        apply_build(s, R, f, a)
    elif kind == F_EMP_PLACE:
        if a >= A_EMPTILE:
            s[f + 1] = a - A_EMPTILE
        else:
            c = a - A_COLUMN
            k = s[f + 1]
            s[b + P_TPOS + k] = c
            s[COL_TILE + c] = p * 2 + k
            s[SCR_TILES] |= 1 << p
            pop(s)
    elif kind == F_EMP_FLIP:
        s[b + P_TVAL + a - A_EMPTILE] = 1
        s[SCR_TILES] |= 1 << p
        pop(s)
    elif kind == F_TEMPLE:
        t = a - A_STACK
        e = s[STACK_CARDS + t * MAXSTACK + s[STACK_TOP + t]]
        s[sb(p) + S_TEMPLE_USES + e] += 1
        pop(s)
        dispatch_effect(s, R, np.int64(p), np.int64(e), np.int64(1))
    elif kind == F_CENT:
        x = a - A_SPACE
        mode = s[f + 1]
        nested = s[f + 2]
        old = s[G_CENT_POS]
        if mode == CENT_SWAP:
            w = s[SITE + x]
            s[SITE + old] = w
            s[pb(w // 2) + P_WPOS + w % 2] = old     # D12: the worker takes the old space
        else:
            s[SITE + old] = EMPTY
        s[SITE + x] = OCC_CENTURION
        s[G_CENT_POS] = x
        pop(s)
        execute_space(s, R, np.int64(p), np.int64(x), np.int64(nested), np.bool_(True))
    elif kind == F_GOV_COLUMN:
        c = a - A_COLUMN
        vp = 0
        if not (s[COL_TILE + c] >= 0 and s[COL_TILE + c] // 2 == p):   # D13
            for i in range(s[COL_H + c]):
                if s[COL_PART + c * COLPARTS + i] == p:
                    vp += R[R_GOV_COL + i + 1]
        add_vp(s, p, vp, P_VP_CARDS)
        pop(s)
    elif kind == F_GOV_HEIGHT:
        level = a - A_HEIGHT + 1
        st = height_standing(s, level, p, R[R_MIN_PARTS])
        add_vp(s, p, R[R_GOV_H + level] if st == 1 else R[R_GOV_H_TIE + level], P_VP_CARDS)
        pop(s)
    elif kind == F_DRAW:
        draw_card(s, R, p, a - A_STACK)
        pop(s)
    elif kind == F_DISCARD:
        e = a - A_DISCARD
        s[b + P_HAND + e] -= 1
        s[b + P_HANDN] -= 1
        s[f + 1] -= 1
        s[f + 2] = e
        if s[f + 1] == 0:
            pop(s)


@njit(cache=True, inline="always")
def carry_out(s, R, a):
    """The immediate consequences of one legal action, before ``settle``."""
    p = s[G_CUR]
    b = pb(p)
    n = s[G_NPLAYERS]
    if s[G_SP] > 0:
        apply_frame(s, R, a)
    elif s[G_PHASE] == PH_SETUP:
        x = a - A_SPACE
        k = s[G_SETUP_DONE] // n
        s[SITE + x] = p * 2 + k
        s[b + P_WPOS + k] = x
        s[G_SETUP_DONE] += 1
        if s[G_SETUP_DONE] == n * R[R_SITE_WORKERS + n]:
            s[G_CUR] = 0
            s[G_ROUND] = 1
            begin_turn(s, R)
        else:
            s[G_CUR] = setup_seat(R, s[G_SETUP_DONE], n)
    elif s[G_PHASE] == PH_CHOOSE_WORKER:
        s[G_MOVED] = a - A_WORKER
        s[G_PHASE] = PH_MOVE
    elif s[G_PHASE] == PH_MOVE:
        x = a - A_SPACE
        k = s[G_MOVED]
        s[SITE + s[b + P_WPOS + k]] = EMPTY
        s[SITE + x] = p * 2 + k
        s[b + P_WPOS + k] = x
        s[G_CARD_SPACE] = x
        s[G_PHASE] = PH_MAIN
    elif a >= A_PLAY and a < A_PLAY + NEFF:
        e = a - A_PLAY
        s[G_CARD_PLAYED] = 1
        s[b + P_HAND + e] -= 1
        s[b + P_HANDN] -= 1
        s[sb(p) + S_PLAYS + e] += 1
        s[G_TRACK] = e
        s[G_TRACK_SCORE0] = s[b + P_SCORE]
        dispatch_effect(s, R, np.int64(p), np.int64(e), np.int64(0))
    elif a >= A_TILE and a < A_TILE + NITILE:
        t = a - A_TILE
        s[G_CARD_PLAYED] = 1
        # P11: the Temple's tile first; the seat's own stays for later (nobody else can take it)
        own = s[ITILE_AVAIL + t]
        s[ITILE_AVAIL + t] = own & ~TILE_PUBLIC if own & TILE_PUBLIC else own & ~(2 << p)
        s[sb(p) + S_PLAYS + NEFF + t] += 1
        s[G_TRACK] = NEFF + t
        s[G_TRACK_SCORE0] = s[b + P_SCORE]
        push(s, F_ITILE, t, 0, 0)
        push(s, F_DISCARD, 3, 0, 0)
    elif a == A_DRAW:
        s[G_PHASE] = PH_AFTER
        push(s, F_DRAW, 0, 0, 0)
    elif a == A_SITE:
        s[G_PHASE] = PH_AFTER
        execute_space(s, R, np.int64(p), np.int64(s[b + P_WPOS + s[G_MOVED]]), np.int64(0), np.bool_(False))
    elif a == A_END:
        end_turn(s, R)


@njit(cache=True, inline="always")
def settled(s, R, out, listing):
    """``settle``, then with ``listing`` the phase's actions when no frame is open: what every
    change of the state ends with (an action, or a frame passed)."""
    n = settle(s, R, out, listing)
    if listing and n == 0:
        n = phase_actions(s, R, out)
    return n


@njit(cache=True, inline="always")
def take_action_here(s, R, a, out, listing):
    """``take_action`` compiled into its caller (see ``step_here``)."""
    carry_out(s, R, a)
    return settled(s, R, out, listing)


@njit(cache=True, _nrt=False)
def pass_frame(s, R, out):
    """Close the open frame without taking any of its choices, as ``settle`` closes a frame
    that has none to offer, then settle and list the next decision's legal actions (returns
    how many). Not a move of the game: the turn planner's way to leave out an effect it cannot
    know, so that it searches alike whether the engine offered that effect or not
    (strategies/planner.py, P10)."""
    pop(s)
    return settled(s, R, out, np.bool_(True))


@njit(cache=True, _nrt=False)
def take_action(s, R, a, out, listing):
    """Apply one legal action (the caller guarantees legality) and settle the state; with
    ``listing``, also write the next decision's legal actions into ``out`` and return how
    many. One compiled body serves ``apply_action`` and ``step`` (``step_here`` is the one
    other copy)."""
    return take_action_here(s, R, a, out, listing)


@njit(cache=True, inline="always")
def apply_action(s, R, a):
    """Apply one legal action (the caller guarantees legality) and settle the state."""
    take_action(s, R, a, s[SCR_LEGAL:SCR_LEGAL + N_ACTIONS], np.bool_(False))   # not a literal:
    # a literal argument would compile a second take_action


@njit(cache=True, inline="always")
def step(s, R, a, out):
    """``apply_action`` then ``legal_actions`` in one call, for game loops: the frame whose
    choices settle lists is the next decision, so they are listed once."""
    return take_action(s, R, a, out, np.bool_(True))


@njit(cache=True, inline="always")
def step_here(s, R, a, out):
    """``step`` compiled into the caller's own body, for a loop that takes almost every step of
    a search (the search player's random playouts): a call passes each array as seven words and
    clears the callee's frame, which profiled at about a fifth of a random playout's time. Each
    such copy adds about half a minute to a cold start, so everywhere else ``step`` calls the one
    compiled ``take_action``."""
    return take_action_here(s, R, a, out, np.bool_(True))


# ---------------------------------------------------------------------------------------------
# evaluation helpers shared by strategies and tools
# ---------------------------------------------------------------------------------------------
@njit(cache=True, inline="always")
def copy_core(src, dst):
    """The rules-relevant prefix of a state, for lookahead (an explicit loop: numba compiles
    slice assignment to a far slower element-wise copy)."""
    for k in range(CORE):
        dst[k] = src[k]
