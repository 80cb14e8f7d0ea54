"""An upper bound on the best end-of-turn evaluation a seat can still reach from a decision of
its own turn, for a turn search that skips what cannot win (branch and bound).

Why: a turn planner that searches every line of its turn is capped near the number of distinct
end-of-turn positions (``scripts/planner_floor.py``), a few times short of the speed the
planners are asked for. A bound that is never below the true best lets the search skip a child
whose bound is below the best value already found, with the same result. The bound is
admissible or useless: it is tested against the exact search on every decision of many games
(``tests/test_turn_bound.py``), and it gives up (``inf``) wherever its reasoning needs a sign it
cannot check (a negative weight, a negative VP in the rules).

How: what the rest of the turn can still do is summed into a budget, per effect, as a tuple
(stones, whites, capitals, Emperor tiles placed, tiles flipped, cards drawn, Governor VP, change
of the cards held): the open frames (each is carried out, so they add), the option if it is not
taken yet (the draw or the space's action: the larger, component by component), and the one
card or instant tile still playable (taken as a second scenario, as playing costs cards). An
effect that chooses among alternatives (a Temple card, the Centurion's space) takes the
component-wise maximum. The budget is then priced against the position now: the stones are
shared out over the height levels at the few counts where the seat's standing there changes
(tie, sole lead), the rest of them at the best rate a stone earns; columns gained are counted
from the fewest parts each would need; what the opponents can lose bounds the denial feature.

Status: checked admissible, and measured not to pay, so no search uses it. Commit 3e2f237 put it
in ``planner.search_turn`` behind a switch and timed the same turn searches with and without it
(``scripts/bench_bound.py`` as of commit d86dc2b; 2026-12-04, 4 players, 3 games each): it cut the
end-of-turn positions evaluated about threefold (cards 81.6 to 24.5 a search, cardheights 122.9
to 39.9) but made the searches 1.4 and 2.2 times slower. One bound costs about 3 us, ten
evaluations (half of it summing the budgets, ``_budgets``), and 20 to 76 bounds a search outweigh
the positions they save. The switch was then taken out again: compiled into the search that play
uses, it lengthened every cold compile of a planner for no gain in play. Using the bound in play
would also change which of several equal plans a planner takes (its ties draw from the random
stream once per tie met, and a skipped line meets fewer).
"""
import numpy as np
from numba import njit

from evora_sim import engine as E
from evora_sim.engine import CARD_PATTERN, NGROUPS, PATTERNS, TILE_PATTERN
from evora_sim.layout import (
    COL_H, COL_HOLDER, COL_PART, COLPARTS, E_CENT_ANY, E_CENT_MOVE, E_CENT_SWAP, E_EMP_FLIP,
    E_EMP_PLACE, E_EMP_TEMPLE, E_GOV_COLUMN, E_GOV_HEIGHT, E_GOV_WORKERS, F_BUILD, F_CENT, F_DRAW,
    F_EMP_FLIP, F_EMP_PLACE, F_GOV_COLUMN, F_GOV_HEIGHT, F_ITILE, F_TEMPLE, FRAMES, FW, G_CARD_PLAYED,
    G_END_TRIGGER, G_MOVED, G_NCOLS, G_NPLAYERS, G_NSPACES, G_PHASE, G_ROUND, G_SP,
    G_WHITE_LEFT, H_COUNT, ITILE_AVAIL, K_CAPITAL, K_STONE, K_WHITE, MAXSTACK, NEFF, NITILE, NOWNERS,
    NTYPES, P_CAPS, P_HAND, P_HANDN, P_STONES, P_TPOS, P_WPOS, PH_CHOOSE_WORKER, PH_MAIN, PH_MOVE, PH_SETUP,
    PH_TERMINAL, PLAYERS,
    PSTRIDE, R_COLMAJ_VP, R_EMP_VALUES, R_EMPTY_VP, R_GOV_COL, R_GOV_H, R_GOV_H_TIE, R_GOV_WORKER_CAP,
    R_HEIGHT_VP, R_HMAJ, R_HMAJ_TIE, R_MAX_ROUNDS, R_MIN_PARTS, R_SPACE_ACTION, R_SPACE_ARG,
    R_WHITE_VP, SA_BUILD, SA_CENTURION, SA_DRAW2, SA_EMPEROR, SA_TEMPLE, STACK_CARDS,
    STACK_TOP, T_FLIP_BOTH, TILE_PUBLIC, WHITE,
)

from .compiled import (
    F_CARDS, F_COLUMN, F_DENIAL, F_EMPEROR, F_EMPTY, F_H1, F_PARTS, F_SECURED, F_TILES, F_VP, F_WIN, NF,
    evaluate_here,
)


NOTHING = (0, 0, 0, 0, 0, 0, 0, 0)      # stones, whites, capitals, placed, flipped, drawn, gov VP, cards


@njit(cache=True, inline="always")
def _vmax(a, b):
    return (max(a[0], b[0]), max(a[1], b[1]), max(a[2], b[2]), max(a[3], b[3]),
            max(a[4], b[4]), max(a[5], b[5]), max(a[6], b[6]), max(a[7], b[7]))


@njit(cache=True, inline="always")
def _vadd(a, b):
    return (a[0] + b[0], a[1] + b[1], a[2] + b[2], a[3] + b[3],
            a[4] + b[4], a[5] + b[5], a[6] + b[6], a[7] + b[7])


@njit(cache=True, inline="always")
def _build(pat, g):
    """The parts groups ``g``.. of build pattern ``pat`` hold, by kind."""
    st, wh, cp = 0, 0, 0
    for j in range(g, NGROUPS[pat]):
        for k in range(2):
            kind = PATTERNS[pat, j, k]
            st += kind == K_STONE
            wh += kind == K_WHITE
            cp += kind == K_CAPITAL
    return (st, wh, cp, 0, 0, 0, 0, 0)


@njit(cache=True, _nrt=False)
def _gov_column_vp(s, R, p):
    """The most a Governor column card can pay this turn: each column's VP as if every part
    still to come there were the seat's own."""
    best = 0
    for c in range(s[G_NCOLS]):
        h = s[COL_H + c]
        vp = 0
        for i in range(COLPARTS):
            if i >= h or s[COL_PART + c * COLPARTS + i] == p:
                vp += R[R_GOV_COL + i + 1]
        best = max(best, vp)
    return best


@njit(cache=True, _nrt=False)
def _gov_height_vp(R):
    best = 0
    for level in range(1, 6):
        best = max(best, R[R_GOV_H + level], R[R_GOV_H_TIE + level])
    return best


@njit(cache=True, _nrt=False)
def _effect(s, R, p, e, nested, space1, space_c, temple_all):
    """The budget of card effect ``e`` carried out now, ``nested`` within a Temple card or not:
    ``space1`` and ``space_c`` are the largest budgets of a space the Centurion reaches nested
    and not, ``temple_all`` that of a Temple card on any stack (a Temple card never picks
    another, D11)."""
    if e == E_GOV_COLUMN:
        return (0, 0, 0, 0, 0, 0, _gov_column_vp(s, R, p), 0)
    if e == E_GOV_WORKERS:
        return (0, 0, 0, 0, 0, 0, np.int64(R[R_GOV_WORKER_CAP]), 0)
    if e == E_GOV_HEIGHT:
        return (0, 0, 0, 0, 0, 0, _gov_height_vp(R), 0)
    if e == E_EMP_PLACE:
        return (0, 0, 0, 1, 0, 0, 0, 0)
    if e == E_EMP_FLIP:
        return (0, 0, 0, 0, 1, 0, 0, 0)
    if e == E_CENT_SWAP or e == E_CENT_ANY or e == E_CENT_MOVE:
        return _centurion(nested, space1, space_c)
    if e == E_EMP_TEMPLE:
        return NOTHING if nested else temple_all
    return _build(CARD_PATTERN[e], 0)


@njit(cache=True, inline="always")
def _centurion(nested, space1, space_c):
    """The budget of a Centurion move: the largest of the spaces it can reach, nested or not."""
    return space1 if nested else space_c


@njit(cache=True, _nrt=False)
def _temple(s, R, p, mask, space1):
    """The largest budget of a Temple card on a stack of ``mask`` (its effect nested)."""
    v = NOTHING
    for t in range(NTYPES):
        if (mask >> t) & 1 and E.temple_choosable(s, t):
            e = np.int64(s[STACK_CARDS + t * MAXSTACK + s[STACK_TOP + t]])
            v = _vmax(v, _effect(s, R, p, e, 1, space1, NOTHING, NOTHING))
    return v


@njit(cache=True, _nrt=False)
def _space(s, R, p, x, nested, by_centurion, space1, space_c):
    """The budget of space ``x``'s action (``engine.execute_space``); ``space_c`` is the largest
    budget of a space the Centurion reaches from a non-nested Centurion action."""
    kind = R[R_SPACE_ACTION + x]
    arg = R[R_SPACE_ARG + x]
    if kind == SA_BUILD:
        return _build(arg, 0)
    if kind == SA_EMPEROR:
        return (0, 0, 0, 1, 0, 0, 0, 0)
    if kind == SA_DRAW2:
        return (0, 0, 0, 0, 0, 2, 0, 0)
    if kind == SA_CENTURION:
        if by_centurion:
            return NOTHING
        return _centurion(nested, space1, space_c)
    if kind == SA_TEMPLE and not nested:
        return _temple(s, R, p, arg, space1)
    return NOTHING


@njit(cache=True, _nrt=False)
def _spaces(s, R, p, nested, by_centurion, space1, space_c):
    v = NOTHING
    for x in range(s[G_NSPACES]):
        v = _vmax(v, _space(s, R, p, x, nested, by_centurion, space1, space_c))
    return v


@njit(cache=True, _nrt=False)
def _budgets(s, R, p):
    """The rest of the turn's budget without a card play, and the largest extra budget of the
    one play still allowed (its cards component -4 when no play is possible)."""
    space1 = _spaces(s, R, p, 1, True, NOTHING, NOTHING)      # Centurion inside a Temple card
    space_c = _spaces(s, R, p, 0, True, space1, NOTHING)      # Centurion from the site or a card
    temple_all = _temple(s, R, p, (1 << NTYPES) - 1, space1)   # a Temple card from the hand
    total = NOTHING
    for j in range(s[G_SP]):
        f = FRAMES + j * FW
        kind = s[f]
        if kind == F_BUILD:
            total = _vadd(total, _build(s[f + 1], s[f + 2]))
        elif kind == F_EMP_PLACE:
            if s[f + 1] >= -1:
                total = _vadd(total, (0, 0, 0, 1, 0, 0, 0, 0))
        elif kind == F_EMP_FLIP:
            total = _vadd(total, (0, 0, 0, 0, 1, 0, 0, 0))
        elif kind == F_TEMPLE:
            total = _vadd(total, _temple(s, R, p, s[f + 1], space1))
        elif kind == F_CENT:
            total = _vadd(total, _centurion(s[f + 2], space1, space_c))
        elif kind == F_GOV_COLUMN:
            total = _vadd(total, (0, 0, 0, 0, 0, 0, _gov_column_vp(s, R, p), 0))
        elif kind == F_GOV_HEIGHT:
            total = _vadd(total, (0, 0, 0, 0, 0, 0, _gov_height_vp(R), 0))
        elif kind == F_DRAW:
            total = _vadd(total, (0, 0, 0, 0, 0, 1, 0, 0))
        elif kind == F_ITILE:
            t = s[f + 1]
            if t == T_FLIP_BOTH:
                total = _vadd(total, (0, 0, 0, 0, 2, 0, 0, 0))
            else:
                total = _vadd(total, _build(TILE_PATTERN[t], 0))
        # F_DISCARD pays cards: the cards held only fall
    b = PLAYERS + p * PSTRIDE
    ph = s[G_PHASE]
    if ph == PH_MAIN or ph == PH_MOVE or ph == PH_CHOOSE_WORKER:
        # the option: a draw, or the action of the space the moved worker stands on when it is
        # taken (before the move, or if a Centurion swap may move it first: any space's)
        if ph == PH_MAIN and not _swap_possible(s, p):
            opt = _space(s, R, p, s[b + P_WPOS + s[G_MOVED]], 0, False, space1, space_c)
        else:
            opt = _spaces(s, R, p, 0, False, space1, space_c)
        total = _vadd(total, _vmax(opt, (0, 0, 0, 0, 0, 1, 0, 0)))
    play = (0, 0, 0, 0, 0, 0, 0, -4)      # -4: no play
    if ph != PH_SETUP and ph != PH_TERMINAL and not s[G_CARD_PLAYED] and s[b + P_HANDN] > 0:
        for e in range(NEFF):                 # any colour: the space a card matches may still change
            if s[b + P_HAND + e] > 0:
                v = _effect(s, R, p, np.int64(e), 0, space1, space_c, temple_all)
                play = _vmax(play, (v[0], v[1], v[2], v[3], v[4], v[5], v[6], -1))
        if s[b + P_HANDN] >= 3:
            mine = TILE_PUBLIC | (2 << p)
            for t in range(NITILE):
                if s[ITILE_AVAIL + t] & mine:
                    if t == T_FLIP_BOTH:
                        v = (0, 0, 0, 0, 2, 0, 0, -3)
                    else:
                        v = _build(TILE_PATTERN[t], 0)
                        v = (v[0], v[1], v[2], 0, 0, 0, 0, -3)
                    play = _vmax(play, v)
    return total, play


@njit(cache=True, _nrt=False)
def _swap_possible(s, p):
    """Whether a Centurion swap could still move the seat's own worker before its option."""
    b = PLAYERS + p * PSTRIDE
    if s[b + P_HAND + E_CENT_SWAP] > 0:
        return True
    for j in range(s[G_SP]):
        f = FRAMES + j * FW
        if s[f] == F_CENT or s[f] == F_TEMPLE:
            return True
    if s[b + P_HAND + E_EMP_TEMPLE] > 0:
        for t in range(NTYPES):
            if E.temple_choosable(s, t) and s[STACK_CARDS + t * MAXSTACK + s[STACK_TOP + t]] == E_CENT_SWAP:
                return True
    return False


@njit(cache=True, _nrt=False)
def turn_bound(s, R, p, W, me):
    """An upper bound on ``evaluate`` (seat ``p``, weights ``W[me]``) over every position the
    rest of seat ``p``'s turn can end in; ``inf`` when the bound's assumptions do not hold."""
    for f in range(NF):
        if W[me, f] < 0.0:
            return np.inf
    for k in range(R_HEIGHT_VP, R_HEIGHT_VP + 6):
        if R[k] < 0:
            return np.inf
    if (R[R_EMP_VALUES] < 0 or R[R_EMP_VALUES + 1] < 0 or R[R_WHITE_VP] < 0 or R[R_EMPTY_VP] < 0
            or R[R_COLMAJ_VP] < 0):
        return np.inf
    for level in range(1, 6):
        if R[R_HMAJ + level] < 0 or R[R_HMAJ_TIE + level] < 0:
            return np.inf
    now = evaluate_here(s, R, p, W, me)
    if s[G_PHASE] == PH_TERMINAL:
        return now
    total, play = _budgets(s, R, p)
    best = _priced(s, R, p, W, me, total)
    if play[7] > -4:
        best = max(best, _priced(s, R, p, W, me, _vadd(total, play)))
    return now + best + 1e-9 * (1.0 + abs(now))


@njit(cache=True, inline="always")
def _level(s, R, p, level, wh, wsec, sec_now, sec_able):
    """Level ``level``'s standing thresholds for seat ``p``: the stones that make it tie and
    lead alone, and the evaluation's gain at 0 stones, at the tie and at the sole lead (whites
    and the other seats' parts cannot raise it within the seat's turn)."""
    row = H_COUNT + (level - 1) * NOWNERS
    cnt = s[row + p]
    mo = 0
    for o in range(NOWNERS):
        if o != p:
            mo = max(mo, s[row + o])
    need = R[R_MIN_PARTS]
    now_pts = E.height_points(s, level, p)
    kt = max(0, need - cnt, mo - cnt)
    ka = max(0, need - cnt, mo - cnt + 1)
    tie_pts = R[R_HMAJ + level] if cnt + kt > mo else R[R_HMAJ_TIE + level]
    alone = R[R_HMAJ + level]
    sec = 1.0 if (sec_now or sec_able) else 0.0
    had = now_pts if sec_now else 0
    g0 = wsec * (sec * now_pts - had)
    gt = wh * (tie_pts - now_pts) + wsec * (sec * tie_pts - had)
    ga = wh * (alone - now_pts) + wsec * (sec * alone - had)
    return kt, max(g0, gt), ka, max(g0, gt, ga), g0


@njit(cache=True, _nrt=False)
def _priced(s, R, p, W, me, v):
    """The most budget ``v`` can add to the evaluation of ``s`` (an upper bound)."""
    b = PLAYERS + p * PSTRIDE
    n = s[G_NPLAYERS]
    ks = min(v[0], s[b + P_STONES])
    kw = min(v[1], s[G_WHITE_LEFT])
    kc = min(v[2], s[b + P_CAPS])
    ep, ef, dr, gov, cd = v[3], v[4], v[5], v[6], v[7]
    wvp = W[me, F_VP]
    wsec = W[me, F_SECURED]
    emax = max(R[R_EMP_VALUES], R[R_EMP_VALUES + 1])
    gain = wvp * (kw * R[R_WHITE_VP] + gov)
    gain += dr * max(W[me, F_CARDS], W[me, F_EMPTY] * R[R_EMPTY_VP])
    gain += W[me, F_CARDS] * cd
    gain += W[me, F_TILES] * (ep + ef)
    # Emperor: a tile placed or flipped beside the seat's largest column; each part placed
    # earns at most the higher tile value (in the rates below)
    own_max = 0
    ncols = s[G_NCOLS]
    fill = 0                       # parts that bring every column to 4
    uncapped = 0
    for c in range(ncols):
        h = s[COL_H + c]
        own = 0
        for i in range(h):
            own += s[COL_PART + c * COLPARTS + i] == p
        own_max = max(own_max, own)
        fill += max(0, 4 - h)
        uncapped += h < 5
    gain += W[me, F_EMPEROR] * (ep + ef) * emax * own_max
    has_tile = s[b + P_TPOS] >= 0 or s[b + P_TPOS + 1] >= 0
    emp_rate = W[me, F_EMPEROR] * emax if (has_tile or ep > 0) else 0.0
    part_rate = W[me, F_PARTS] + emp_rate
    # heights: the stones shared out over levels 1-4 at the counts where the standing changes,
    # the rest at the best rate a stone earns; the capitals likewise at level 5
    denial = W[me, F_DENIAL] != 0.0
    E.height_majorities(s, R, 0 if denial else p, n if denial else p + 1)   # denial: every seat's
    census, lowest = E.column_census(s)
    caps_all = 0
    for q in range(n):
        caps_all += s[PLAYERS + q * PSTRIDE + P_CAPS]
    kpw = ks + kw
    r1 = wvp * R[R_HEIGHT_VP + 1] + part_rate
    r2 = wvp * R[R_HEIGHT_VP + 2] + part_rate
    r3 = wvp * R[R_HEIGHT_VP + 3] + part_rate
    r4 = wvp * R[R_HEIGHT_VP + 4] + part_rate
    rmax = max(r1, r2, r3, r4)
    t1, g1t, a1, g1a, g10 = _level(s, R, p, 1, W[me, F_H1], wsec, lowest >= 1, _fills(s, 1, kpw))
    t2, g2t, a2, g2a, g20 = _level(s, R, p, 2, W[me, F_H1 + 1], wsec, lowest >= 2, _fills(s, 2, kpw))
    t3, g3t, a3, g3a, g30 = _level(s, R, p, 3, W[me, F_H1 + 2], wsec, lowest >= 3, _fills(s, 3, kpw))
    t4, g4t, a4, g4a, g40 = _level(s, R, p, 4, W[me, F_H1 + 3], wsec, lowest >= 4, _fills(s, 4, kpw))
    stones = -np.inf
    for i1 in range(3):
        k1, v1 = _pick(i1, t1, g1t, a1, g1a, g10)
        if k1 > ks:
            continue
        for i2 in range(3):
            k2, v2 = _pick(i2, t2, g2t, a2, g2a, g20)
            if k1 + k2 > ks:
                continue
            for i3 in range(3):
                k3, v3 = _pick(i3, t3, g3t, a3, g3a, g30)
                if k1 + k2 + k3 > ks:
                    continue
                for i4 in range(3):
                    k4, v4 = _pick(i4, t4, g4t, a4, g4a, g40)
                    used = k1 + k2 + k3 + k4
                    if used > ks:
                        continue
                    x = (v1 + v2 + v3 + v4 + k1 * r1 + k2 * r2 + k3 * r3 + k4 * r4
                         + (ks - used) * rmax)
                    stones = max(stones, x)
    sec5_now = lowest >= 5 or caps_all == 0
    sec5_able = caps_all - kc <= 0 or (fill <= kpw and uncapped <= kc)
    t5, g5t, a5, g5a, g50 = _level(s, R, p, 5, W[me, F_H1 + 4], wsec, sec5_now, sec5_able)
    r5 = wvp * R[R_HEIGHT_VP + 5] + part_rate
    caps = -np.inf
    for i5 in range(3):
        k5, v5 = _pick(i5, t5, g5t, a5, g5a, g50)
        if k5 <= kc:
            caps = max(caps, v5 + kc * r5)
    gain += stones + caps
    # columns: each column the seat could take, by the fewest own parts it needs
    colvp = R[R_COLMAJ_VP]
    held = E.census_count(census, p, False)
    complete = E.census_count(census, p, True)
    k_any = ks + kc + kw
    gained = _columns_gained(s, R, p, k_any)
    gain += W[me, F_COLUMN] * colvp * gained
    gain += wsec * colvp * max(0, min(kc, held + gained - complete))
    # winning: only if the game may end at the end of this turn (the last seat's, D16)
    if W[me, F_WIN] != 0.0 and p == n - 1:
        if (s[G_END_TRIGGER] != 0 or s[G_ROUND] >= R[R_MAX_ROUNDS] or fill <= kpw
                or (k_any > 0 and s[b + P_STONES] - ks <= 0)):
            gain += W[me, F_WIN]
    # denial: the best opponent loses at most the majorities the seat's parts can reach
    if denial:
        lead_now = -np.inf
        lead_low = -np.inf
        for q in range(n):
            if q != p:
                hq = E.census_count(census, q, False)
                st = E.standing_holding(s, R, q, hq)
                lead_now = max(lead_now, st)
                low = st
                if k_any > 0:
                    low -= colvp * min(hq, k_any)
                    for level in range(1, 6):
                        low -= E.height_points(s, level, q)
                lead_low = max(lead_low, low)
        gain += W[me, F_DENIAL] * (lead_now - lead_low)
    return gain


@njit(cache=True, inline="always")
def _pick(i, kt, gt, ka, ga, g0):
    if i == 0:
        return 0, g0
    if i == 1:
        return kt, gt
    return ka, ga


@njit(cache=True, inline="always")
def _fills(s, level, k):
    """Whether ``k`` parts can bring every column to ``level`` (the level becomes secured)."""
    need = 0
    for c in range(s[G_NCOLS]):
        need += max(0, level - s[COL_H + c])
    return need <= k


@njit(cache=True, _nrt=False)
def _columns_gained(s, R, p, k):
    """The most columns seat ``p`` can newly hold with ``k`` parts: each column's fewest own
    parts to lead (its newest part on top wins a tie, D7), the cheapest first."""
    need = R[R_MIN_PARTS]
    n1, n2, n3, n4, n5 = 0, 0, 0, 0, 0
    for c in range(s[G_NCOLS]):
        h = s[COL_H + c]
        if h >= 5 or s[COL_HOLDER + c] == p:
            continue
        c0, c1, c2, c3, c4 = 0, 0, 0, 0, 0
        for i in range(h):
            o = s[COL_PART + c * COLPARTS + i]
            c0 += o == 0
            c1 += o == 1
            c2 += o == 2
            c3 += o == 3
            c4 += o == WHITE
        mine = (c0, c1, c2, c3, c4)[p]
        mo = 0
        if p != 0:
            mo = max(mo, c0)
        if p != 1:
            mo = max(mo, c1)
        if p != 2:
            mo = max(mo, c2)
        if p != 3:
            mo = max(mo, c3)
        mo = max(mo, c4)
        if E.column_leader(s, R, c) == p:
            x = 1                              # leads without a marker: any part may seat one
        else:
            x = max(1, need - mine, mo - mine)
        if x > 5 - h:
            continue
        if x == 1:
            n1 += 1
        elif x == 2:
            n2 += 1
        elif x == 3:
            n3 += 1
        elif x == 4:
            n4 += 1
        else:
            n5 += 1
    gained = 0
    left = k
    for x, cnt in ((1, n1), (2, n2), (3, n3), (4, n4), (5, n5)):
        take = min(cnt, left // x)
        gained += take
        left -= take * x
    return gained
