"""The search player's search over whole turns (``mcts(..., root=turn)``).

Why: a turn is many decisions (the move, the option, the effect's choices, the cards played
before and after). A tree grown one decision at a time spends its budget on poor ways to
finish the turn, and at four seats the few visits left for each real choice are drowned by
the noise of three opponents' turns. The turn planner (``strategies.planner``) already finds,
exactly, the turns its evaluation values most; what it cannot see is what the other seats do
next. So this search lets the planner propose its ``candidates`` best distinct turns, and
spends the budget on telling them apart by what follows: each iteration samples the unseen
stack order (``mcts.determinize``), plays one candidate turn, lets every seat play on as the
rollout policy for ``horizon`` turns, and scores the seats (``mcts.seat_rewards``). The
candidates are chosen by UCB, as the tree's children are; the most visited is played.

- **One engine, one planner.** The candidates come from the planner's own search
  (``planner.search_turn`` keeping its best turns), on a sampled copy of the position, so the
  search never reads the hidden order. Every step is the engine's ``step``.
- **The chosen turn is followed** (``planner.planned_action``) while each decision is the
  one it expects and no stack shows a new top card; after a draw the seat knows more, and the
  rest of the turn is searched again.
- **Setup placements** have no turn to plan: they are searched as decisions (``mcts_choose``).
- A line that cannot be replayed in a sample (it never should: no candidate uses a card
  its seat has not seen) is finished by the planner.
"""
import numpy as np
from numba import njit

from evora_sim import engine as E
from evora_sim.layout import G_NPLAYERS, G_NTURNS, G_PHASE, G_SP, MAXP, PH_SETUP
from evora_sim.rng import randbelow

from .compiled import NF
from .mcts import (
    K_VALID, WHY_TOP, X_CANDIDATES, determinize, mcts_choose, note_row, play_out, plan_rest_of_turn,
    rollout_weights, search_options, seat_rewards,
)
from .planner import (
    DEPTH, L_ACT, M_LEN, M_NTOP, M_WANT, NMETA, TOP_MAX, adopt_plan, new_top_turns, planned_action,
    search_turn,
)
from .policy import forget_plans, new_rollout_cache


def new_turn_work():
    """The turn search's buffers, allocated once per batch: the candidate turns, their visits
    and reward sums per seat, and the turn being followed (a plan in the planner's form)."""
    return (new_top_turns(), np.zeros(TOP_MAX, dtype=np.int64), np.zeros((TOP_MAX, MAXP), dtype=np.float64),
            np.zeros((DEPTH + 1, 3), dtype=np.int64), np.zeros(NMETA, dtype=np.int64))


@njit(cache=True, _nrt=False)
def forget_turn(turn_work):
    """No turn chosen in an earlier game is followed in the next one."""
    turn_work[4][M_LEN] = 0


@njit(cache=True, _nrt=False)
def turn_choose(s, R, W, p, legal, n, rs, work, turn_work):
    """Seat ``p``'s decision at ``s``: the next step of the turn it chose, or, with no turn to
    follow, a search among its planner's best turns (``W[p, NF + X_CANDIDATES]`` of them)."""
    top, visits, value, plan, meta = turn_work
    if s[G_PHASE] == PH_SETUP and s[G_SP] == 0:
        return mcts_choose(s, R, W, p, legal, n, rs, work)
    (parent, act, child, sib, tvisits, avail, mask, tvalue, path, leg, st, RW, LW, rew, tot,
     why, whyn, sigs, rwork, keep, expect) = work
    a = planned_action(s, legal, n, plan, meta)
    if a >= 0:
        note_row(why, whyn, s, p, 0)                   # the replay's note: following the turn chosen
        return np.int64(a)
    iterations, c, rkind, reward, horizon, leaf = search_options(W, p)
    keep[K_VALID] = 0                                  # no decision tree is continued after this
    rollout_weights(W, p, RW, LW)
    new_rollout_cache(rwork)
    m = _candidates(s, R, RW, p, legal, n, rs, np.int64(W[p, NF + X_CANDIDATES]), st, rwork, top)
    lines, _, lengths, _ = top
    players = s[G_NPLAYERS]
    root_turns = s[G_NTURNS]
    for i in range(m):
        visits[i] = 0
        for q in range(MAXP):
            value[i, q] = 0.0
    lo = np.inf                                        # the range of seat p's rewards so far
    hi = -np.inf
    if m > 1:
        for it in range(iterations):
            i = _pick(visits, value, m, p, it, c, lo, hi)
            E.copy_core(s, st)
            determinize(st, rs)
            for j in range(n):
                leg[j] = legal[j]
            k = _replay(st, R, lines[i], lengths[i], leg, n, root_turns)
            forget_plans(rwork)
            k = plan_rest_of_turn(RW, st, R, leg, k, rs, rwork, root_turns)
            play_out(rkind, RW, st, R, leg, k, rs, horizon, root_turns, rwork)
            seat_rewards(st, R, reward, leaf, LW, rew, tot)
            visits[i] += 1
            for q in range(players):
                value[i, q] += rew[q]
            lo = min(lo, rew[p])
            hi = max(hi, rew[p])
    best = 0
    for i in range(1, m):
        if visits[i] > visits[best] or (visits[i] == visits[best] and value[i, p] > value[best, p]):
            best = i
    _note_turns(why, whyn, s, p, m, lines, visits, value)
    adopt_plan(s, lines[best], lengths[best], plan, meta)
    a = planned_action(s, legal, n, plan, meta)
    return np.int64(a if a >= 0 else legal[randbelow(rs, n)])


@njit(cache=True, _nrt=False)
def _candidates(s, R, RW, p, legal, n, rs, want, st, rwork, top):
    """The planner's ``want`` best distinct turns from ``s`` (into ``top``), searched on a
    sample of the unseen stack order; returns how many there are."""
    t, t2, legal2, memo, ps, pl, bk, bv, line, hk, key, val, stamp, rplan, rmeta, _, _ = rwork
    E.copy_core(s, st)
    determinize(st, rs)
    rmeta[M_WANT] = want
    search_turn(st, R, RW, p, legal, n, rs, ps, pl, bk, bv, line, hk, key, val, stamp, rmeta, top)
    rmeta[M_WANT] = 0
    return rmeta[M_NTOP]


@njit(cache=True, inline="always")
def _pick(visits, value, m, p, it, c, lo, hi):
    """The candidate to play this iteration: each once in turn, then UCB on seat ``p``'s mean
    reward, rescaled to the range ``lo``..``hi`` of its rewards so far. Candidate turns are
    close: when a seat is far behind or ahead, every candidate's margin reward lies near 0 or
    1, and on the raw scale the exploration term would drown their differences."""
    if it < m:
        return it
    best = 0
    best_u = -np.inf
    log_n = np.log(it)
    span = hi - lo if hi > lo else 1.0
    for i in range(m):
        u = (value[i, p] / visits[i] - lo) / span + c * np.sqrt(log_n / visits[i])
        if u > best_u:
            best_u = u
            best = i
    return best


@njit(cache=True, _nrt=False)
def _replay(st, R, line, length, leg, k, root_turns):
    """Play a candidate turn's decisions at ``st`` (``k`` legal actions in ``leg``), with the
    forced steps between them; stop early if the turn ends or a decision is not legal here.
    Returns the legal actions then."""
    for j in range(length):
        while k == 1 and st[G_NTURNS] == root_turns:
            k = E.step(st, R, np.int64(leg[0]), leg)
        if k == 0 or st[G_NTURNS] != root_turns:
            return k
        a = line[j, L_ACT]
        here = False
        for i in range(k):
            if leg[i] == a:
                here = True
                break
        if not here:
            return k
        k = E.step(st, R, np.int64(a), leg)
    return k


@njit(cache=True, _nrt=False)
def _note_turns(why, whyn, s, p, m, lines, visits, value):
    """Keep the most visited candidate turns for ``evora replay``, each by its first decision
    (a note of ``-m`` actions: ``m`` whole turns were searched)."""
    row = note_row(why, whyn, s, p, -m)
    if row < 0:
        return
    for i in range(m):
        rank = 0                                       # candidates ahead of i: more visits, or as
        for o in range(m):                             # many and listed earlier
            if visits[o] > visits[i] or (visits[o] == visits[i] and o < i):
                rank += 1
        if rank < WHY_TOP:
            why[row, 3 + 3 * rank] = lines[i, 0, L_ACT]
            why[row, 4 + 3 * rank] = visits[i]
            why[row, 5 + 3 * rank] = value[i, p] / max(visits[i], 1)
