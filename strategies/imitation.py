"""The search player's turns as rows to learn from: what it chose, against what it could have.

Why choices and not outcomes: fitted to the final margins of the search player's games, a
value is fitted to where good play goes, but the planner that uses it ranks every turn it could
take, most of them positions good play never reaches; such a fit played worse than the hand
weights it started from. What the planner needs is the order of the turns at hand, so each of
the teacher's turns is one row group: the end-of-turn positions the planner would weigh (its
``want`` best under the weights being improved, ``planner.search_turn`` keeping its best
turns) and the one the teacher reached, labelled. A conditional logit over each group
(``strategies.fit``) then learns weights under which the teacher's turn ranks first
(imitation, as in expert iteration: Anthony et al. 2017).

Positions are the game's own, replayed from its recorded actions (``runner.simulate``'s
``record_actions``), so every row is a position the teacher met. The alternatives are found by
the planner on the real position, which never reads the order below the stacks' tops (P10),
and the features never do either.
"""
from typing import NamedTuple

import numpy as np
from numba import njit

from evora_sim import engine as E
from evora_sim.layout import G_CUR, G_NTURNS, G_PHASE, N_ACTIONS, PH_SETUP, PH_TERMINAL, STATE_SIZE

from .features import NL, features_into
from .planner import L_ACT, M_NTOP, M_WANT, TOP_MAX, advance_seen, core_hash, search_turn, turn_over

CHOSEN, OTHER, UNLISTED = 1, 0, 2      # a row's label: the teacher's turn, another, the teacher's not listed
MAX_ALTERNATIVES = TOP_MAX             # the planner keeps at most this many turns (its buffers' size)


class TurnRows(NamedTuple):
    """Where ``turn_rows`` writes its rows, a row a listed turn."""
    features: np.ndarray     # the end position's features (``features_into``)
    groups: np.ndarray       # the teacher's turn it belongs to (its number among those listed)
    labels: np.ndarray       # ``CHOSEN``, ``OTHER`` or ``UNLISTED``


class ReplayWork(NamedTuple):
    """The scratch arrays of ``turn_rows`` beside the planner's (``planner.PlanWork``)."""
    state: np.ndarray        # the game replayed
    end: np.ndarray          # where a listed turn ends
    legal: np.ndarray        # the game's legal actions
    legal2: np.ndarray       # those of a listed turn played on
    hashes: np.ndarray       # the listed turns' end keys (``core_hash``)


def new_rows(size: int) -> TurnRows:
    """Room for ``size`` rows of ``turn_rows``."""
    return TurnRows(np.zeros((size, NL)), np.zeros(size, dtype=np.int64), np.zeros(size, dtype=np.int64))


def check_want(want: int) -> int:
    """``want`` if the planner can list that many turns. Compiled code checks no bounds: a larger
    ``want`` would write past the planner's buffers of ``TOP_MAX`` turns."""
    if not 1 <= int(want) <= MAX_ALTERNATIVES:
        raise ValueError(f"the planner lists 1 to {MAX_ALTERNATIVES} turns, not {want}")
    return int(want)


@njit(cache=True, _nrt=False)
def turn_rows(R, n, seed, log, W, want, out, planner, rs, scratch):
    """Replay the game of ``seed`` from its actions ``log``; at the first decision of each turn
    that offers a choice, list the ``want`` best turns of the seat under ``W`` (its row) and
    write each one's end position's features (``features_into``) as a row of ``feats`` in
    ``group`` g (the turn's number among those listed), labelled ``OTHER``; when the turn has
    been played, the row of the position it reached is labelled ``CHOSEN``, or, when the
    planner did not list it (the teacher planned again after a draw showed a new card), it is
    added as ``UNLISTED``. Returns (rows written, groups). The buffers come from the caller:
    ``out`` (``new_rows``), the planner's ``PlanWork`` and this replay's (``new_buffers``)."""
    feats, group, label = out
    state, end, legal, legal2, hashes = scratch
    meta, top = planner.meta, planner.top
    lines, lengths = top.lines, top.lengths
    E.init_game(state, R, n, seed)
    k = E.legal_actions(state, R, legal)
    rows = 0
    g = -1
    listed_turn = -1
    first = 0
    listed = 0
    p = 0
    for i in range(log.shape[0]):
        turn = state[G_NTURNS]
        if k > 1 and state[G_PHASE] != PH_SETUP and listed_turn != turn:
            listed_turn = turn
            p = state[G_CUR]
            meta[M_WANT] = want
            search_turn(state, R, W, p, legal, k, rs, planner.search, meta, top)
            meta[M_WANT] = 0
            g += 1
            first = rows
            listed = 0
            for j in range(meta[M_NTOP]):
                E.copy_core(state, end)
                for d in range(lengths[j]):
                    advance_seen(end, R, p, E.step(end, R, np.int64(lines[j, d, L_ACT]), legal2), legal2, meta)
                if not turn_over(end, p) or rows >= feats.shape[0] - 1:
                    continue
                hashes[listed] = core_hash(end)
                features_into(end, R, np.int64(p), feats[rows])
                group[rows] = g
                label[rows] = OTHER
                rows += 1
                listed += 1
        k = E.step(state, R, np.int64(log[i]), legal)
        if listed_turn == turn and (state[G_PHASE] == PH_TERMINAL or state[G_NTURNS] != turn):
            h = core_hash(state)
            found = -1
            for j in range(listed):
                if hashes[j] == h:
                    found = j
            if found >= 0:
                label[first + found] = CHOSEN
            elif rows < feats.shape[0]:
                E.copy_core(state, end)
                features_into(end, R, np.int64(p), feats[rows])
                group[rows] = g
                label[rows] = UNLISTED
                rows += 1
    return rows, g + 1


def new_buffers():
    """The scratch arrays of ``turn_rows`` beside the planner's (``planner.new_plan_work``)."""
    return ReplayWork(np.zeros(STATE_SIZE, dtype=np.int32), np.zeros(STATE_SIZE, dtype=np.int32),
                      np.zeros(N_ACTIONS, dtype=np.int32), np.zeros(N_ACTIONS, dtype=np.int32),
                      np.zeros(MAX_ALTERNATIVES, dtype=np.uint64))


__all__ = ["turn_rows", "new_buffers", "new_rows", "TurnRows", "ReplayWork", "check_want", "CHOSEN", "OTHER",
           "UNLISTED", "MAX_ALTERNATIVES"]
