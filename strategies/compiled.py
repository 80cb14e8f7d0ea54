"""Built-in strategies that run inside compiled code, next to the engine.

A strategy sees the state, the legal actions and its own random stream, and returns one of
the actions. It never changes the game state; lookahead happens on scratch copies of the
rules-relevant prefix of the state (``layout.CORE``).

- ``random``: uniform over the legal actions at every decision.
- ``greedy``: the action that most raises its own total *if the game were scored now* (running
  VP plus Emperor bonus, column and height majorities: immediate VP plus the change in majority
  standing). An action that opens an effect (a build, a card) is valued after the effect is
  completed greedily. Equal values are broken by the strategy's random stream.
"""
import numpy as np
from numba import njit

from evora_sim import engine as E
from evora_sim.layout import (
    A_COLUMN, A_SKIP, COL_H, COL_HOLDER, COL_PART, COL_TILE, COLPARTS, G_CUR, G_PHASE, G_SP,
    MAXC, N_ACTIONS, PH_CHOOSE_WORKER, PH_MOVE, PH_SETUP, PH_TERMINAL,
)
from evora_sim.rng import randbelow

RANDOM = 0
GREEDY = 1
NAMES = ("random", "greedy")
MEMO = 2 * MAXC      # one memo of (column signature, value) pairs per lookahead level


@njit(cache=True)
def new_work(size):
    """Scratch buffers for lookahead, allocated once per batch, never per decision: two state
    copies, a legal-action list and the column memos of the two lookahead levels."""
    return (np.zeros(size, dtype=np.int32), np.zeros(size, dtype=np.int32),
            np.zeros(N_ACTIONS, dtype=np.int32), np.zeros(2 * MEMO, dtype=np.int64))


@njit(cache=True)
def standing(s, R, p):
    """``p``'s total if the game were scored now."""
    E.height_table(s)
    return E.seat_total(s, R, p)


@njit(cache=True)
def column_signature(s, a):
    """For a column action, the column's whole content (height, owners, Emperor tile, marker);
    -1 for other actions. Two columns with the same signature are interchangeable: the same
    choice made on either leaves states that score the same."""
    if a < A_COLUMN or a >= A_SKIP:
        return -1
    c = a - A_COLUMN
    sig = s[COL_H + c]
    for k in range(COLPARTS):
        sig = sig * 8 + s[COL_PART + c * COLPARTS + k] + 1
    return (sig * 16 + s[COL_TILE + c] + 1) * 8 + s[COL_HOLDER + c] + 1


@njit(cache=True)
def memo_find(memo, base, count, sig):
    for i in range(count):
        if memo[base + i] == sig:
            return i
    return -1


@njit(cache=True)
def _complete_frames(t, R, p, t2, legal2, memo):
    """Finish the effect in progress on ``t`` (same player, frames open) by 1-ply choices,
    the first best on equal values."""
    base = MEMO
    while t[G_PHASE] != PH_TERMINAL and t[G_SP] > 0 and t[G_CUR] == p:
        n = E.legal_actions(t, R, legal2)
        best_a = legal2[0]
        if n > 1:
            best_v = -1 << 30
            seen = 0
            for i in range(n):
                sig = column_signature(t, legal2[i])
                j = memo_find(memo, base, seen, sig) if sig >= 0 else -1
                if j >= 0:
                    continue                 # an equal earlier column: never strictly better
                E.copy_core(t, t2)
                E.apply_action(t2, R, np.int64(legal2[i]))
                v = standing(t2, R, p)
                if sig >= 0:
                    memo[base + seen] = sig
                    seen += 1
                if v > best_v:
                    best_v = v
                    best_a = legal2[i]
        E.apply_action(t, R, np.int64(best_a))


@njit(cache=True)
def greedy(s, R, legal, n, rs, t, t2, legal2, memo):
    p = s[G_CUR]
    ph = s[G_PHASE]
    if s[G_SP] == 0 and (ph == PH_MOVE or ph == PH_CHOOSE_WORKER or ph == PH_SETUP):
        # placing or moving a worker changes no score and no majority: every choice has the
        # same value, so the tie-break alone decides
        return np.int64(legal[randbelow(rs, n)])
    # inside an effect each choice is valued by itself; a choice that opens an effect (the site
    # action, a card) is valued after completing that effect greedily
    opens_effect = s[G_SP] == 0
    best_v = -1 << 30
    n_best = 0
    choice = legal[0]
    seen = 0
    for i in range(n):
        sig = column_signature(s, legal[i])
        j = memo_find(memo, 0, seen, sig) if sig >= 0 else -1
        if j >= 0:
            v = memo[MAXC + j]
        else:
            E.copy_core(s, t)
            E.apply_action(t, R, np.int64(legal[i]))
            if opens_effect:
                _complete_frames(t, R, p, t2, legal2, memo)
            v = standing(t, R, p)
            if sig >= 0:
                memo[seen] = sig
                memo[MAXC + seen] = v
                seen += 1
        if v > best_v:
            best_v = v
            n_best = 1
            choice = legal[i]
        elif v == best_v:
            n_best += 1
            if randbelow(rs, n_best) == 0:   # reservoir: uniform among the equal best
                choice = legal[i]
    return np.int64(choice)


@njit(cache=True)
def choose(sid, s, R, legal, n, rs, t, t2, legal2, memo):
    if sid == GREEDY:
        return greedy(s, R, legal, n, rs, t, t2, legal2, memo)
    return np.int64(legal[randbelow(rs, n)])
