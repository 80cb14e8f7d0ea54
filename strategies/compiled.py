"""Built-in strategies that run inside compiled code, next to the engine.

A strategy sees the state, the legal actions and its own random stream, and returns one of
the actions. It never changes the game state; lookahead happens on scratch copies of the
rules-relevant prefix of the state (``layout.CORE``).

Two kinds:
- ``KIND_RANDOM``: uniform over the legal actions at every decision.
- ``KIND_HEURISTIC``: the action whose resulting position has the highest weighted sum of the
  FEATURES below, for the player to move (weights per seat: ``strategies/builtin.toml``). An
  action that opens an effect (the site action, a card, a tile) is valued after completing the
  effect with the same weights, first best on equal values. Ties between actions are broken by
  the strategy's random stream. Choosing by ``w . C(after)`` is choosing by the weighted change
  ``w . (C(after) - C(before))``: ``C(before)`` is the same for every action.
"""
import numpy as np
from numba import njit

from evora_sim import engine as E
from evora_sim.layout import (
    A_COLUMN, A_SKIP, A_STACK, F_DRAW, FRAMES, FW, G_NTURNS, NTYPES, STACK_LEN, STACK_TOP, COL_H, COL_HOLDER, COL_PART, COL_TILE, COLPARTS, G_CUR, G_NPLAYERS,
    G_PHASE, G_SP, MAXC, N_ACTIONS, NEFF, P_CAPS, P_HANDN, P_PENDING, P_SCORE, P_STONES, P_TPOS,
    P_TVAL, P_VP_EMPTY, PH_CHOOSE_WORKER, PH_MOVE, PH_SETUP, PH_TERMINAL, PLAYERS, PSTRIDE,
    R_CAPS, R_STONES,
)
from evora_sim.rng import randbelow

from .features import NL, learned_value, win_bonus

KIND_RANDOM = 0
KIND_HEURISTIC = 1     # plan=action: each decision valued on its own (this module)
KIND_PLANNER = 2       # plan=turn: each decision valued by the best end of the turn (planner.py)
KIND_MCTS = 3          # a search player (mcts.py)
FEATURES = ("vp", "column", "h1", "h2", "h3", "h4", "capitals", "emperor", "tiles", "cards",
            "parts", "denial", "empty_stack", "secured", "win")
NF = len(FEATURES)
F_VP, F_COLUMN, F_H1, F_EMPEROR, F_TILES, F_CARDS, F_PARTS, F_DENIAL, F_EMPTY = 0, 1, 2, 7, 8, 9, 10, 11, 12
F_SECURED, F_WIN = 13, 14
# A seat's row of the weights matrix W: the FEATURES' weights; the search player's options
# (``strategies.mcts``, X_*); then the learned evaluation (``strategies.features``): a flag
# (nonzero: the position is valued by the learned weights, the FEATURES' weights unused), its
# 2 * NB weights and the win weight, how many of its best turns a learned planner values by
# the next seat's reply (``planner``; 0: none), and from how far into the game it does
# (``features.progress``; 0: from the start).
N_OPTIONS = 12
LEARNED = NF + N_OPTIONS
LEARNED_W = LEARNED + 1
REPLIES = LEARNED_W + NL + 1
AHEAD_FROM = REPLIES + 1
WIDTH = AHEAD_FROM + 1
MEMO = 2 * MAXC      # one memo of (action signature, value) pairs per lookahead level
# The first choice inside each effect a phase-level action opens, as the lookahead valued it:
# a key of the state (turns played, seat, frames, top frame), the legal actions and their
# values. When that action is chosen, the real decision that follows is that same state, so
# its values are taken from here instead of being computed again.
KEYLEN = 7
SLOT = KEYLEN + 1 + 2 * N_ACTIONS
PLANS = 2 * MEMO
CHOSEN = PLANS + N_ACTIONS * SLOT    # slot of the action just chosen, -1 for none
WORK_SIZE = CHOSEN + 1


@njit(cache=True)
def new_work(size):
    """Scratch buffers for lookahead, allocated once per batch, never per decision: two state
    copies, a legal-action list, and the memos (action values) of the two lookahead levels
    with the first-choice values of each opened effect."""
    memo = np.zeros(WORK_SIZE, dtype=np.float64)
    memo[CHOSEN] = -1.0
    return (np.zeros(size, dtype=np.int32), np.zeros(size, dtype=np.int32),
            np.zeros(N_ACTIONS, dtype=np.int32), memo)


@njit(cache=True, inline="always")
def state_key(s, memo, base, write):
    """Write (or, with ``write`` False, compare) the key of decision state ``s`` at ``base``."""
    f = FRAMES + (s[G_SP] - 1) * FW
    same = True
    for k in range(KEYLEN):
        if k == 0:
            x = s[G_NTURNS]
        elif k == 1:
            x = s[G_CUR]
        elif k == 2:
            x = s[G_SP]
        else:
            x = s[f + k - 3]
        if write:
            memo[base + k] = x
        elif memo[base + k] != x:
            same = False
    return same


@njit(cache=True, inline="always")
def secured_points(s, R, p, census, lowest):
    """The majority VP of seat ``p`` that no later placement can change (after
    ``height_majorities``; ``census`` and ``lowest`` from ``engine.column_census``): its column
    majorities on columns that are complete (the capital placed: the column takes no more
    parts), and its height majorities at levels no column can still reach (every column already
    has a part there; for capitals, every column is capped or nobody has a capital left)."""
    vp = E.column_vp(R, E.census_count(census, p, True))
    for level in range(1, lowest + 1):
        vp += E.height_points(s, level, p)
    if lowest < 5:
        caps = 0
        for q in range(s[G_NPLAYERS]):
            caps += s[PLAYERS + q * PSTRIDE + P_CAPS]
        if caps == 0:
            vp += E.height_points(s, 5, p)
    return vp


@njit(cache=True, _nrt=False)
def evaluate(s, R, p, W, me):
    """``evaluate_here``, compiled once: the callers that are not a search's inner loop."""
    return evaluate_here(s, R, p, W, me)


@njit(cache=True, inline="always")
def evaluate_here(s, R, p, W, me):
    """``W[me] . C``: the weighted features of position ``s`` for seat ``p``; features whose
    weight is zero are not computed. (The weights matrix and a row index are passed rather
    than a row view: a view costs atomic reference counts on every call.) Every seat's columns
    are counted in one pass (``engine.column_census``): an end-of-turn search evaluates
    hundreds of positions a turn, and with denial each needs every seat's total. A learned row
    (``W[me, LEARNED]`` set) is valued by ``features.learned_value`` instead."""
    if W[me, LEARNED] != 0.0:
        return learned_value(s, R, p, W, me, LEARNED_W)
    denial = W[me, F_DENIAL] != 0.0
    if denial:
        E.height_majorities(s, R, 0, s[G_NPLAYERS])      # every seat's standing
    elif W[me, F_SECURED] != 0.0:
        E.height_majorities(s, R, p, p + 1)               # this seat's only
    else:
        for level in range(1, 6):
            if W[me, F_H1 + level - 1] != 0.0:
                E.height_majorities(s, R, p, p + 1)
                break
    census, lowest = 0, 5
    if denial or W[me, F_COLUMN] != 0.0 or W[me, F_SECURED] != 0.0:
        census, lowest = E.column_census(s)
    b = PLAYERS + p * PSTRIDE
    # VP scored so far, with the 2 VP of drawing from an empty stack kept apart: valued like
    # other VP, it lets a player stall an ended-up game forever (docs/RULES.md, P4)
    v = W[me, F_VP] * (s[b + P_SCORE] - s[b + P_VP_EMPTY]) + W[me, F_EMPTY] * s[b + P_VP_EMPTY]
    if W[me, F_COLUMN] != 0.0:
        v += W[me, F_COLUMN] * E.column_vp(R, E.census_count(census, p, False))
    for level in range(1, 6):
        if W[me, F_H1 + level - 1] != 0.0:
            v += W[me, F_H1 + level - 1] * E.height_points(s, level, p)
    if W[me, F_EMPEROR] != 0.0:
        v += W[me, F_EMPEROR] * E.emperor_points(s, R, p)
    if W[me, F_TILES] != 0.0:
        tiles = 0
        for k in range(2):
            tiles += (s[b + P_TPOS + k] >= 0) + s[b + P_TVAL + k]
        v += W[me, F_TILES] * tiles
    if W[me, F_CARDS] != 0.0:
        cards = s[b + P_HANDN]
        for e in range(NEFF):
            cards += s[b + P_PENDING + e]
        v += W[me, F_CARDS] * cards
    if W[me, F_PARTS] != 0.0:
        v += W[me, F_PARTS] * (R[R_STONES] + R[R_CAPS] - s[b + P_STONES] - s[b + P_CAPS])
    if W[me, F_SECURED] != 0.0:
        v += W[me, F_SECURED] * secured_points(s, R, p, census, lowest)
    if W[me, F_WIN] != 0.0:
        v += win_bonus(s, R, p, W[me, F_WIN])
    if denial:
        leader = -(1 << 30)
        for q in range(s[G_NPLAYERS]):
            if q != p:
                leader = max(leader, E.standing_holding(s, R, q, E.census_count(census, q, False)))
        v -= W[me, F_DENIAL] * leader
    return v


@njit(cache=True, inline="always")
def action_signature(s, a):
    """A key that two actions share only if they lead to positions that ``evaluate`` scores
    the same; -1 if the action has no such key. A column action: the column's whole content
    (height, owners, Emperor tile, marker; columns are otherwise interchangeable). Choosing the
    stack to draw from: whether it is empty (the features count cards, not which card)."""
    if A_COLUMN <= a < A_SKIP:
        c = a - A_COLUMN
        sig = s[COL_H + c]
        for k in range(COLPARTS):
            sig = sig * 8 + s[COL_PART + c * COLPARTS + k] + 1
        return (sig * 16 + s[COL_TILE + c] + 1) * 8 + s[COL_HOLDER + c] + 1   # < 2**25
    if A_STACK <= a < A_STACK + NTYPES and s[G_SP] > 0 and s[FRAMES + (s[G_SP] - 1) * FW] == F_DRAW:
        t = a - A_STACK
        return (1 << 30) + (s[STACK_TOP + t] >= s[STACK_LEN + t])
    return -1


@njit(cache=True, inline="always")
def memo_find(memo, base, count, sig):
    for i in range(count):
        if memo[base + i] == sig:
            return i
    return -1


@njit(cache=True, _nrt=False)
def _complete_frames(t, R, p, W, t2, legal2, memo, slot):
    """Finish the effect in progress on ``t`` (same player, frames open) by 1-ply choices,
    the first best on equal values; record its first choice's values in plan ``slot``."""
    base = MEMO
    sb = PLANS + slot * SLOT
    memo[sb + KEYLEN] = 0                    # no first choice recorded (yet)
    first = True
    while t[G_PHASE] != PH_TERMINAL and t[G_SP] > 0 and t[G_CUR] == p:
        n = E.legal_actions(t, R, legal2)
        best_a = legal2[0]
        if n > 1:
            record = first
            if record:
                state_key(t, memo, sb, True)
                memo[sb + KEYLEN] = n
            best_v = -np.inf
            seen = 0
            for i in range(n):
                sig = action_signature(t, legal2[i])
                j = memo_find(memo, base, seen, sig) if sig >= 0 else -1
                if j >= 0:
                    v = memo[base + MAXC + j]    # an equal earlier action: never strictly better
                else:
                    E.copy_core(t, t2)
                    E.apply_action(t2, R, np.int64(legal2[i]))
                    v = evaluate(t2, R, p, W, p)
                    if sig >= 0:
                        memo[base + seen] = sig
                        memo[base + MAXC + seen] = v
                        seen += 1
                    if v > best_v:
                        best_v = v
                        best_a = legal2[i]
                if record:
                    memo[sb + KEYLEN + 1 + i] = legal2[i]
                    memo[sb + KEYLEN + 1 + N_ACTIONS + i] = v
        first = False
        E.apply_action(t, R, np.int64(best_a))


@njit(cache=True, _nrt=False)
def _planned(s, legal, n, memo):
    """The plan slot holding this decision's values, if the last choice recorded them."""
    slot = np.int64(memo[CHOSEN])
    memo[CHOSEN] = -1.0
    if slot < 0 or s[G_SP] == 0:
        return -1
    sb = PLANS + slot * SLOT
    if memo[sb + KEYLEN] != n or not state_key(s, memo, sb, False):
        return -1
    for i in range(n):
        if memo[sb + KEYLEN + 1 + i] != legal[i]:
            return -1
    return sb


@njit(cache=True, _nrt=False)
def heuristic(s, R, W, legal, n, rs, t, t2, legal2, memo):
    p = s[G_CUR]
    ph = s[G_PHASE]
    plan = _planned(s, legal, n, memo)
    if s[G_SP] == 0 and (ph == PH_MOVE or ph == PH_CHOOSE_WORKER or ph == PH_SETUP):
        # placing or moving a worker changes no feature: every choice has the same value, so
        # the tie-break alone decides
        return np.int64(legal[randbelow(rs, n)])
    opens_effect = s[G_SP] == 0
    best_v = -np.inf
    n_best = 0
    choice = 0
    seen = 0
    for i in range(n):
        if plan >= 0:
            v = memo[plan + KEYLEN + 1 + N_ACTIONS + i]
        else:
            sig = action_signature(s, legal[i])
            j = memo_find(memo, 0, seen, sig) if sig >= 0 else -1
            if j >= 0:
                v = memo[MAXC + j]
            else:
                E.copy_core(s, t)
                E.apply_action(t, R, np.int64(legal[i]))
                if opens_effect:
                    _complete_frames(t, R, p, W, t2, legal2, memo, i)
                v = evaluate(t, R, p, W, p)
                if sig >= 0:
                    memo[seen] = sig
                    memo[MAXC + seen] = v
                    seen += 1
        if v > best_v:
            best_v = v
            n_best = 1
            choice = i
        elif v == best_v:
            n_best += 1
            if randbelow(rs, n_best) == 0:   # reservoir: uniform among the equal best
                choice = i
    if opens_effect:
        memo[CHOSEN] = choice                # its effect's first choice is already valued
    return np.int64(legal[choice])


