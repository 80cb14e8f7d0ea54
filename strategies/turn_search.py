"""The search player's search over whole turns (``mcts(..., root=turn)``).

Why: a turn is many decisions (the move, the option, the effect's choices, the cards played
before and after). A tree grown one decision at a time spends its budget on poor ways to
finish the turn, and at four seats the few visits left for each real choice are drowned by
the noise of three opponents' turns. The turn planner (``strategies.planner``) already finds,
exactly, the turns its evaluation values most; what it cannot see is what the other seats do
next. So this search lets the planner propose its ``candidates`` best distinct turns, and
spends the budget on telling them apart by what follows: each iteration samples the unseen
stack order (``unseen.determinize``), plays one candidate turn, goes on through the turns that
follow (down the tree, then as the rollout policy plays), and scores the seats
(``mcts.seat_rewards``) ``horizon`` turns after the root. The most visited candidate is played.

- **A tree over the seat's own turns** (``others=rollout``: TAG's "self-only" tree, with the
  other seats played by the rollout policy). A node is the seat's decision at the start of a
  later turn of its own, keyed by the position as every player sees it (``planner.visible_hash``): nobody knows
  the order below the tops (P10), so that position is every seat's information set, and the
  planner's candidate turns from it, which never read that order, are legal in every sample
  of it. An iteration walks down the nodes it meets, choosing a candidate at each by UCB on
  the seat's reward rescaled to the range seen there; the first new node gets its candidates
  and the rollout policy plays on from it. So more iterations look further into the seat's own
  later turns. ``depth=1`` keeps the root only (the choice among the turns at hand);
  ``TREE_CAP`` bounds the nodes.
- **Or a tree over every seat's turns** (``others=tree``, the default): the other seats' turns
  are nodes too, each with its seat's planner's best turns as edges, chosen by UCB on that
  seat's reward (max^n, as the decision tree does). The self-only tree models the others as
  the rollout policy plays, exactly right against that policy and wrong against anyone
  stronger; a tree of everyone's turns models each seat as choosing for itself, so a larger
  budget can correct the model instead of only averaging more samples of it. Head to head (2
  players, 1,000 iterations each) it beats the self-only tree, and it gains more from a
  larger budget (README: the search player, with the duels).
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
from evora_sim.layout import G_CUR, G_NPLAYERS, G_NTURNS, G_PHASE, G_SP, PH_SETUP
from evora_sim.rng import randbelow

from .compiled import NF
from .compiled import KIND_RANDOM
from .mcts import (
    K_VALID, WHY_TOP, X_CANDIDATES, X_DEPTH, X_OTHERS, mcts_choose, note_row, play_out, plan_rest_of_turn,
    rollout_weights, search_options, seat_rewards, within,
)
from .planner import (
    DEPTH, L_ACT, M_LEN, M_NTOP, M_WANT, NMETA, adopt_plan, new_top_turns, planned_action,
    cache_best_line, search_turn, visible_hash,
)
from .policy import PLANNER_WORK, forget_plans, new_rollout_cache, policy_choose
from .unseen import determinize


TREE_CAP = 1 << 15          # most nodes of one search's tree (``tree_nodes``)
# a tree's counters (``TC``): nodes in use, the slots of its table
T_NODES, T_SLOTS = 0, 1


def turn_tree_nodes(iterations: int) -> int:
    """Nodes a search of ``iterations`` over whole turns may add: the root and one a iteration,
    up to ``TREE_CAP`` (a larger search stops growing its tree there and keeps iterating)."""
    return min(int(iterations) + 1, TREE_CAP)


def turn_tree_bytes(iterations: int, candidates: int) -> int:
    """Memory of the tree of ``turn_tree_nodes(iterations)`` nodes of ``candidates`` turns each."""
    n = turn_tree_nodes(iterations)
    # per node: key, visits, edges, range (2), seat, path entry (2); per edge: its line, length,
    # visits, reward sum; the table; the counters
    return n * (8 * 8 + int(candidates) * (2 * (DEPTH + 1) + 2 + 8 + 8)) + _slots(n) * 4 + 16 + 16


def _slots(n: int) -> int:
    return 1 << max(1, (2 * int(n) - 1).bit_length())


def new_turn_work(nodes: int = 1, candidates: int = 1):
    """The turn search's buffers, allocated once per batch: the root's candidate turns (in the
    planner's form, to be followed), the turn being followed, the search tree of up to
    ``nodes`` nodes of ``candidates`` turns each (``new_turn_tree``), and where a new node's
    candidates are found."""
    return (new_top_turns(), np.zeros((DEPTH + 1, 3), dtype=np.int64), np.zeros(NMETA, dtype=np.int64),
            new_turn_tree(nodes, candidates), new_top_turns())


def new_turn_tree(nodes: int, candidates: int):
    """A tree over whole turns of the searching seat. A node is a decision of that seat at the
    start of a turn of its own (or at the root), keyed by the position as every player sees it
    (``planner.visible_hash``): the stacks' order below the tops is hidden from everyone, so
    that is the information set of every seat, and the planner's candidate turns from it are
    legal in every position it holds. Per node: its key, its visits, the reward range of the
    seat, its candidate turns (actions and length) and each turn's visits and reward sum; a
    table from key to node; the path of an iteration; the counters ``TC``; the seat to move at
    each node (with ``others=tree`` any seat's turn is a node)."""
    n = max(int(nodes), 1)
    k = max(int(candidates), 1)
    return (np.zeros(n, dtype=np.uint64), np.zeros(n, dtype=np.int64), np.zeros(n, dtype=np.int64),
            np.zeros((n, 2), dtype=np.float64), np.zeros((n, k, DEPTH + 1), dtype=np.int16),
            np.zeros((n, k), dtype=np.int16), np.zeros((n, k), dtype=np.int64), np.zeros((n, k), dtype=np.float64),
            np.zeros(_slots(n), dtype=np.int32), np.zeros((n + 1, 2), dtype=np.int64), np.zeros(2, dtype=np.int64),
            np.zeros(n, dtype=np.int64))


@njit(cache=True, _nrt=False)
def forget_turn(turn_work):
    """No turn chosen in an earlier game is followed in the next one."""
    turn_work[2][M_LEN] = 0


@njit(cache=True, _nrt=False)
def turn_choose(s, R, W, p, legal, n, rs, work, turn_work):
    """Seat ``p``'s decision at ``s``: the next step of the turn it chose, or, with no turn to
    follow, a search over its planner's best turns (``W[p, NF + X_CANDIDATES]`` of them at each
    node) and those of its own later turns (``W[p, NF + X_DEPTH]`` turns deep; 0: as deep as
    the horizon reaches)."""
    top, plan, meta, tree, found = turn_work
    if s[G_PHASE] == PH_SETUP and s[G_SP] == 0:
        return mcts_choose(s, R, W, p, legal, n, rs, work)
    (parent, act, child, sib, tvisits, avail, mask, tvalue, path, leg, st, RW, LW, rew, tot,
     why, whyn, sigs, rwork, keep, expect) = work
    a = planned_action(s, legal, n, plan, meta)
    if a >= 0:
        note_row(why, whyn, s, p, 0)                   # the replay's note: following the turn chosen
        return np.int64(a)
    iterations, c, rkind, reward, horizon, leaf = search_options(W, p, s[G_NPLAYERS])
    want = np.int64(W[p, NF + X_CANDIDATES])
    depth = np.int64(W[p, NF + X_DEPTH])
    others_tree = W[p, NF + X_OTHERS] > 0
    keep[K_VALID] = 0                                  # no decision tree is continued after this
    rollout_weights(W, p, RW, LW)
    new_rollout_cache(rwork)
    m = _candidates(s, R, RW, p, legal, n, rs, want, st, rwork, top)
    keys, nvisits, nedges, span, lines, lengths, evisits, evalue, table, tpath, TC, seat = tree
    _clear(tree)
    root = _add_node(tree, visible_hash(s), p)
    nedges[root] = _edges_from(top, m, lines[root], lengths[root])
    root_turns = s[G_NTURNS]
    if m > 1:
        for _ in range(iterations):
            E.copy_core(s, st)
            determinize(st, rs)
            for j in range(n):
                leg[j] = legal[j]
            k = n
            u = root
            steps = 0
            own = 1
            while True:                                # down the tree, one turn of p's a node
                i = _pick(nvisits[u], nedges[u], evisits[u], evalue[u], span[u], c)
                tpath[steps, 0] = u
                tpath[steps, 1] = i
                steps += 1
                turn = st[G_NTURNS]
                k = _replay(st, R, lines[u, i], lengths[u, i], leg, k, turn)
                forget_plans(rwork)
                k = plan_rest_of_turn(RW, st, R, leg, k, rs, rwork, turn)
                if others_tree:                        # the next seat's turn is a node too
                    k = _forced(st, R, leg, k, horizon, root_turns)
                else:
                    k = _others_play(rkind, RW, st, R, leg, k, rs, horizon, root_turns, rwork, p)
                if k == 0 or not within(st, root_turns, horizon) or (depth > 0 and own >= depth):
                    break
                own += 1
                h = visible_hash(st)
                v = _find(tree, h)
                if v < 0:                              # a new node: its candidates, then a rollout
                    q = st[G_CUR]
                    v = _add_node(tree, h, q)
                    if v >= 0:
                        nedges[v] = _node_candidates(st, R, RW, q, leg, k, rs, want, rwork, found, lines[v],
                                                     lengths[v])
                    break
                u = v
            forget_plans(rwork)
            play_out(rkind, RW, st, R, leg, k, rs, horizon, root_turns, rwork)
            seat_rewards(st, R, reward, leaf, LW, rew, tot)
            for d in range(steps):
                u = tpath[d, 0]
                i = tpath[d, 1]
                r = rew[seat[u]]                       # max^n: each node's edges hold its seat's reward
                nvisits[u] += 1
                evisits[u, i] += 1
                evalue[u, i] += r
                span[u, 0] = min(span[u, 0], r)
                span[u, 1] = max(span[u, 1], r)
    best = 0
    for i in range(1, m):
        if evisits[root, i] > evisits[root, best] or (
                evisits[root, i] == evisits[root, best] and evalue[root, i] > evalue[root, best]):
            best = i
    _note_turns(why, whyn, s, p, m, top.lines, evisits[root], evalue[root])
    adopt_plan(s, top.lines[best], top.lengths[best], plan, meta)
    a = planned_action(s, legal, n, plan, meta)
    return np.int64(a if a >= 0 else legal[randbelow(rs, n)])


@njit(cache=True, _nrt=False)
def _candidates(s, R, RW, p, legal, n, rs, want, st, rwork, top):
    """The planner's ``want`` best distinct turns from ``s`` (into ``top``), searched on a
    sample of the unseen stack order; returns how many there are."""
    E.copy_core(s, st)
    determinize(st, rs)
    return _best_turns(st, R, RW, p, legal, n, rs, want, rwork, top)


@njit(cache=True, inline="always")
def _best_turns(st, R, RW, p, legal, n, rs, want, rwork, top):
    """The planner's ``want`` best distinct turns from ``st`` into ``top``."""
    planner = rwork[PLANNER_WORK]
    rmeta = planner.meta
    rmeta[M_WANT] = want
    search_turn(st, R, RW, p, legal, n, rs, planner.search, rmeta, top)
    rmeta[M_WANT] = 0
    cache_best_line(st, planner)                         # a rollout from here plays it, unsearched
    return rmeta[M_NTOP]


@njit(cache=True, _nrt=False)
def _node_candidates(st, R, RW, p, leg, k, rs, want, rwork, top, lines, lengths):
    """A new node's candidate turns: the planner's best from the iteration's position (what it
    sees of it is the node's), written into the node's ``lines``; the position is left as it
    was. Returns how many."""
    t = rwork[0]
    E.copy_core(st, t)
    legal2 = rwork[2]
    for j in range(k):
        legal2[j] = leg[j]
    m = _best_turns(t, R, RW, p, legal2, k, rs, want, rwork, top)
    return _edges_from(top, m, lines, lengths)


@njit(cache=True, inline="always")
def _edges_from(top, m, lines, lengths):
    """The ``m`` best turns in ``top`` as a node's candidates (their decisions only)."""
    tl, _, tlen, _ = top
    for i in range(m):
        lengths[i] = tlen[i]
        for j in range(tlen[i]):
            lines[i, j] = tl[i, j, L_ACT]
    return m


@njit(cache=True, inline="always")
def _others_play(rkind, RW, st, R, leg, k, rs, horizon, root_turns, rwork, p):
    """The other seats play the rollout policy until seat ``p`` has a decision to make (forced
    steps are taken), the horizon is reached or the game ends. Returns the legal actions."""
    while True:
        k = _forced(st, R, leg, k, horizon, root_turns)
        if k == 0 or not within(st, root_turns, horizon) or st[G_CUR] == p:
            break
        if rkind == KIND_RANDOM:
            a = np.int64(leg[randbelow(rs, k)])
        else:
            a = policy_choose(rkind, RW, st[G_CUR], st, R, leg, k, rs, rwork)
        k = E.step(st, R, a, leg)
    return k


@njit(cache=True, inline="always")
def _forced(st, R, leg, k, horizon, root_turns):
    """The forced steps up to the next decision of any seat (or the horizon, or the end)."""
    while k == 1 and within(st, root_turns, horizon):
        k = E.step(st, R, np.int64(leg[0]), leg)
    return k


@njit(cache=True, inline="always")
def _clear(tree):
    keys, nvisits, nedges, span, lines, lengths, evisits, evalue, table, tpath, TC, seat = tree
    for i in range(table.shape[0]):
        table[i] = 0
    TC[T_NODES] = 0


@njit(cache=True, _nrt=False)
def _add_node(tree, h, q):
    """A node for the visible position of key ``h``, seat ``q`` to move; -1 if the tree is full."""
    keys, nvisits, nedges, span, lines, lengths, evisits, evalue, table, tpath, TC, seat = tree
    u = TC[T_NODES]
    if u >= keys.shape[0]:
        return -1
    TC[T_NODES] = u + 1
    keys[u] = h
    seat[u] = q
    nvisits[u] = 0
    nedges[u] = 0
    span[u, 0] = np.inf
    span[u, 1] = -np.inf
    for i in range(evisits.shape[1]):
        evisits[u, i] = 0
        evalue[u, i] = 0.0
    mask = table.shape[0] - 1
    j = np.int64(h & np.uint64(mask))
    while table[j] != 0:                               # open addressing; the table is twice the nodes
        j = (j + 1) & mask
    table[j] = u + 1
    return u


@njit(cache=True, _nrt=False)
def _find(tree, h):
    """The node of key ``h``, or -1."""
    keys, nvisits, nedges, span, lines, lengths, evisits, evalue, table, tpath, TC, seat = tree
    mask = table.shape[0] - 1
    j = np.int64(h & np.uint64(mask))
    while table[j] != 0:
        u = table[j] - 1
        if keys[u] == h:
            return u
        j = (j + 1) & mask
    return -1


@njit(cache=True, inline="always")
def _pick(visits, m, ev, evv, span, c):
    """The candidate to play at a node: each once in order, then UCB on the seat's mean
    reward, rescaled to the range of its rewards seen at the node. Candidate turns are close:
    when a seat is far behind or ahead, every candidate's margin reward lies near 0 or 1, and on
    the raw scale the exploration term would drown their differences."""
    for i in range(m):
        if ev[i] == 0:
            return i
    best = 0
    best_u = -np.inf
    log_n = np.log(visits)
    width = span[1] - span[0] if span[1] > span[0] else 1.0
    for i in range(m):
        u = (evv[i] / ev[i] - span[0]) / width + c * np.sqrt(log_n / ev[i])
        if u > best_u:
            best_u = u
            best = i
    return best


@njit(cache=True, _nrt=False)
def _replay(st, R, actions, length, leg, k, turn):
    """Play a candidate turn's decisions at ``st`` (``k`` legal actions in ``leg``), with the
    forced steps between them; stop early if the turn ends or a decision is not legal here.
    Returns the legal actions then."""
    for j in range(length):
        while k == 1 and st[G_NTURNS] == turn:
            k = E.step(st, R, np.int64(leg[0]), leg)
        if k == 0 or st[G_NTURNS] != turn:
            return k
        a = np.int64(actions[j])
        here = False
        for i in range(k):
            if leg[i] == a:
                here = True
                break
        if not here:
            return k
        k = E.step(st, R, a, leg)
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
            why[row, 5 + 3 * rank] = value[i] / max(visits[i], 1)
