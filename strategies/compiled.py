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
from evora_sim.layout import CORE, G_CUR, G_PHASE, G_SP, MAXP, N_ACTIONS, PH_TERMINAL
from evora_sim.rng import randbelow

RANDOM = 0
GREEDY = 1
NAMES = ("random", "greedy")


@njit(cache=True)
def new_work(size):
    """Scratch buffers for lookahead, allocated once per batch, never per decision."""
    return (np.zeros(size, dtype=np.int32), np.zeros(size, dtype=np.int32),
            np.zeros(N_ACTIONS, dtype=np.int32), np.zeros(MAXP, dtype=np.int64))


@njit(cache=True)
def _complete_frames(t, R, p, t2, legal2, tot):
    """Finish the effect in progress on ``t`` (same player, frames open) by 1-ply choices."""
    while t[G_PHASE] != PH_TERMINAL and t[G_SP] > 0 and t[G_CUR] == p:
        n = E.legal_actions(t, R, legal2)
        best_a = legal2[0]
        best_v = -1 << 30
        if n > 1:
            for i in range(n):
                E.copy_core(t, t2)
                E.apply_action(t2, R, np.int64(legal2[i]))
                E.provisional_totals(t2, R, tot)
                if tot[p] > best_v:
                    best_v = tot[p]
                    best_a = legal2[i]
        E.apply_action(t, R, np.int64(best_a))


@njit(cache=True)
def greedy(s, R, legal, n, rs, t, t2, legal2, tot):
    p = s[G_CUR]
    # inside an effect each choice is valued by itself; a choice that opens an effect (the site
    # action, a card) is valued after completing that effect greedily
    opens_effect = s[G_SP] == 0
    best_v = -1 << 30
    n_best = 0
    choice = legal[0]
    for i in range(n):
        E.copy_core(s, t)
        E.apply_action(t, R, np.int64(legal[i]))
        if opens_effect:
            _complete_frames(t, R, p, t2, legal2, tot)
        E.provisional_totals(t, R, tot)
        v = tot[p]
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
def choose(sid, s, R, legal, n, rs, t, t2, legal2, tot):
    if sid == GREEDY:
        return greedy(s, R, legal, n, rs, t, t2, legal2, tot)
    return np.int64(legal[randbelow(rs, n)])
