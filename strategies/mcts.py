"""The search player: Monte Carlo tree search over the compiled engine (``mcts(...)`` specs).

Why this shape:

- **One engine.** Every iteration copies the root position and plays it forward with the
  engine's own ``step``; nothing here knows a rule. Rollouts play a policy of
  ``strategies.policy`` (random, or any built-in heuristic, turn planners included).
- **What a player knows.** The four stacks lie face up and every card drawn is seen (D9), so
  the only thing hidden is the order of each stack below its top card, and it is hidden from
  everyone (docs/RULES.md, P10). Each iteration therefore searches one *determinization*: the
  cards below every top are put in canonical order, then shuffled from the search's random
  stream (``determinize``). The search never reads the true order, so two positions that
  differ only there get the same decision from the same stream.
- **Single-observer information-set search (OpenSpiel's ``is_mcts``, TAG's MCTS).** The tree is
  keyed by the decisions taken, not by the (sampled) positions. A decision may be legal in one
  determinization and not another (a Temple card under a drawn card), so a child's exploration
  term counts the visits of its parent in which it was available, not all of them.
- **Max^n for any number of seats.** Each node keeps a reward sum per seat, and the seat to
  move at a node picks the child best for itself.
- **Bounded and preallocated.** One node is added per iteration, so a search of N iterations
  needs at most N + 1 nodes: ``new_search_work`` allocates them once per batch (72 bytes a node
  plus the path; ``tree_bytes`` says how much; ``REUSE_TREES`` N + 1 with ``reuse=turn``).
  Forced decisions (one legal action) get no node and no search.
- **Reward** (``reward=``): ``win`` (1 for the D18 winner; a victory shared by k seats under V4
  is 1/k to each, as the lot that records one of them is no one's to know, P10), ``margin``
  (0.5 + 0.5 tanh of the seat's lead over the best other seat, in units of ``MARGIN_SCALE`` VP)
  or ``rank`` (share of the other seats it beats), each on the final scoring's order (a half
  point of starting VP, V2, is half a VP here). A rollout cut at ``horizon`` turns is scored
  (``leaf=``) on the totals the position would give if the game ended there (``score``), or on
  each seat's standing as the rollout policy values it (``eval``), which also counts what the
  position holds but has not scored: cards in hand, parts still to place, majorities no one
  can take.
- **A turn is many decisions** (move, option, the effect's choices, cards before and after).
  Grown one decision at a time, the tree spreads its visits over poor ways to finish the turn,
  and a rollout finishes it at random. With ``finish=plan`` the rest of the turn in progress is
  played as a turn planner with the rollout's weights would play it (``strategies.planner``),
  and the tree holds the decision at hand only: each of its actions is valued by the best turn
  that follows it and by what the next ``horizon`` turns make of that. The next decision of the
  turn is searched again.
- **Reuse within a turn** (``reuse=turn``). The node of the action a search chose is, since
  forced steps get no node, the next decision of the tree. If that decision is the same
  seat's in the same turn and no stack shows a new top card on the way (a card drawn would
  make the samples gathered below the node impossible ones), the search keeps the node and
  the position it expects; the seat's next search, at exactly that position, continues from
  the node with its statistics and adds its own iterations (the budget per decision stays
  the same). Any other search, a new game (``forget_tree``) or a tree too full for another
  search's nodes starts afresh; nodes outside the kept subtree are abandoned. What is kept
  never depends on the hidden order: nothing is kept once a card is drawn.
- **Rollouts plan once per visible position.** A turn planner playing a rollout makes the
  same plan wherever the same position is visible (it never reads the order below the tops),
  and one search's iterations hand the seats the same visible positions again and again (all
  iterations of a candidate that drew no card). So within a search the rollout planners keep
  their plans by visible position (``planner.new_plan_cache``): each is searched once, and
  ties within it are broken once. (A 4-player game with a root=turn seat at 300 iterations
  and horizon 5 took 1.36 s before, 0.12 s with it.)
- **Whole turns** (``root=turn``): the search grows a tree over the seat's own whole turns,
  the turn planner's best ones at each node, instead of a tree of decisions;
  ``strategies.turn_search`` holds it and reuses the pieces here (determinization, rollouts,
  rewards, notes).
"""
import numpy as np
from numba import njit

from evora_sim import engine as E
from evora_sim.layout import (
    A_COLUMN, A_SKIP, CORE, G_CUR, G_NPLAYERS, G_NTURNS, G_PHASE, MAXP, N_ACTIONS, NTYPES, P_FINAL,
    PH_TERMINAL, PLAYERS, PSTRIDE, R_START_HALF, R_START_VP, STACK_TOP,
    STATE_SIZE,
)
from evora_sim.rng import randbelow

from .compiled import (F_DENIAL, F_VP, F_WIN, KIND_PLANNER, KIND_RANDOM, LEARNED_W, N_OPTIONS, NF, WIDTH, action_signature,
                       evaluate)
from .features import B_OTHER, NB, NL
from .planner import M_CACHE_HITS, M_LEAVES, M_SEARCHES
from .policy import forget_plans, new_policy_work, new_rollout_cache, plan_meta, policy_choose
from .unseen import determinize

# A search seat's options, in the columns after the features of its row of W (its own feature
# columns hold the rollout policy's weights).
(X_ITERATIONS, X_C, X_ROLLOUT, X_REWARD, X_HORIZON, X_LEAF, X_FINISH, X_REUSE, X_ROOT, X_CANDIDATES, X_DEPTH,
 X_OTHERS) = range(12)
NX = 12
assert NX == N_OPTIONS          # the option columns compiled.py reserves in every row of W
REWARDS = ("win", "margin", "rank")
R_WIN, R_MARGIN, R_RANK = 0, 1, 2
LEAVES = ("score", "eval")
L_SCORE, L_EVAL = 0, 1
FINISHES = ("rollout", "plan")
FIN_ROLLOUT, FIN_PLAN = 0, 1
REUSES = ("none", "turn")
RU_NONE, RU_TURN = 0, 1
ROOTS = ("decision", "turn")     # what the search chooses among: the decision's actions, or whole turns
OTHERS = ("rollout", "tree")    # root=turn: the other seats' turns played by the rollout, or nodes of the tree
ROOT_DECISION, ROOT_TURN = 0, 1
# reuse=turn: room for a turn's first search and seven continued ones before a search must
# start afresh (a continued search appends its nodes after the abandoned ones)
REUSE_TREES = 8
# what a search leaves for the next decision of its seat (``keep``): whether a subtree may be
# continued, the seat, its root node, the nodes in use; then counters of the batch's searches
# (for benchmarks): searches run, searches that continued a subtree
K_VALID, K_SEAT, K_ROOT, K_NODES, K_SEARCHES, K_CONTINUED = range(6)
HORIZON_AUTO = -1               # horizon=auto: two rounds and a turn, 2n + 1 turns at n players
MARGIN_SCALE = 10.0             # VP: a lead of 10 VP is worth tanh(1) = 0.76 of a win
# what a search leaves for ``evora replay``: per decision, the turn, the seat, how many actions
# the root searched, then the 3 most visited (action, visits, mean reward of the seat)
WHY_TOP = 3
WHY_COLS = 3 + 3 * WHY_TOP
WHY_ROWS = 4096
NODE_BYTES = 4 * 6 + 8 * 2 + 8 * MAXP        # six int32, two uint64 masks, a reward per seat


def tree_size(iterations: int, reuse: str = "none") -> int:
    """Nodes a search of ``iterations`` needs: one per iteration and the root; with
    ``reuse=turn`` room for ``REUSE_TREES`` searches of a turn, one after the other."""
    return int(iterations) * (REUSE_TREES if reuse == "turn" else 1) + 1


def tree_bytes(iterations: int, reuse: str = "none") -> int:
    """Memory of a search tree of ``iterations`` (nodes, path; the fixed buffers aside)."""
    return tree_size(iterations, reuse) * (NODE_BYTES + 4)


def new_search_work(tree_nodes: int):
    """The search's buffers for trees of up to ``tree_nodes`` nodes, allocated once per batch:
    the tree (parent, action, first child, next sibling, visits, availability, the children's
    action mask, the reward sums per seat), the path of an iteration, a legal-action list, the
    iteration's position, the rollout weights, the leaf's weights, the rewards and totals, the
    replay's notes, a policy's work for the rollouts (its own, so no plan of the real seats
    is disturbed), and what ``reuse=turn`` keeps for the next decision (``keep`` and the
    position it expects)."""
    m = max(int(tree_nodes), 1)
    return (np.zeros(m, dtype=np.int32), np.zeros(m, dtype=np.int32), np.zeros(m, dtype=np.int32),
            np.zeros(m, dtype=np.int32), np.zeros(m, dtype=np.int32), np.zeros(m, dtype=np.int32),
            np.zeros((m, 2), dtype=np.uint64), np.zeros((m, MAXP), dtype=np.float64),
            np.zeros(m + 1, dtype=np.int32), np.zeros(N_ACTIONS, dtype=np.int32),
            np.zeros(STATE_SIZE, dtype=np.int32), np.zeros((MAXP, WIDTH), dtype=np.float64),
            np.zeros((1, WIDTH), dtype=np.float64), np.zeros(MAXP, dtype=np.float64),
            np.zeros(MAXP, dtype=np.float64),
            np.zeros((WHY_ROWS, WHY_COLS), dtype=np.float64), np.zeros(1, dtype=np.int64),
            np.zeros(N_ACTIONS, dtype=np.int64), new_policy_work(), np.zeros(6, dtype=np.int64),
            np.zeros(CORE, dtype=np.int32))


def search_notes(work):
    """The replay's notes a batch's searches left in ``work`` (``new_search_work``): the rows
    written, then how many."""
    why, whyn = work[15], work[16]
    return why, int(whyn[0])


def rollout_plan_counts(work) -> dict:
    """What the turn planner inside a batch's searches did in ``work`` (``new_search_work``):
    the turn searches it ran (for the rollouts and for each new node's candidate turns), the
    end-of-turn positions they evaluated, and the turns whose plan the plan cache supplied
    instead. Nearly all of a search player's time is there, so the benchmark prints them."""
    meta = plan_meta(work[18])
    return {"searches": int(meta[M_SEARCHES]), "positions": int(meta[M_LEAVES]),
            "cache_hits": int(meta[M_CACHE_HITS])}


def search_counts(work) -> tuple[int, int]:
    """How many searches a batch ran in ``work``, and how many of them continued a subtree
    kept from the decision before (``reuse=turn``)."""
    keep = work[19]
    return int(keep[K_SEARCHES]), int(keep[K_CONTINUED])


@njit(cache=True, _nrt=False)
def forget_tree(work):
    """No search continues a tree kept before this call: a new game begins."""
    keep = work[19]
    keep[K_VALID] = 0


@njit(cache=True, inline="always")
def distinct(s, leg, k, sigs):
    """Keep one of each set of interchangeable column choices (columns of equal content,
    ``compiled.action_signature``) in ``leg[:k]``; return how many actions remain. Equal
    choices lead to equal positions, so the tree does not split its visits between them."""
    m = 0
    seen = 0
    for i in range(k):
        a = leg[i]
        if A_COLUMN <= a < A_SKIP:
            sig = action_signature(s, a)
            dup = False
            for j in range(seen):
                if sigs[j] == sig:
                    dup = True
                    break
            if dup:
                continue
            sigs[seen] = sig
            seen += 1
        leg[m] = a
        m += 1
    return m


@njit(cache=True, inline="always")
def _bit(a):
    return np.uint64(1) << np.uint64(a & 63)


@njit(cache=True, _nrt=False)
def seat_rewards(s, R, kind, leaf, LW, rew, tot):
    """Each seat's reward in ``rew`` for the position ``s``. A game over is scored on its final
    totals. A game cut short is scored on the totals it would give if it ended now
    (``leaf=score``), or on each seat's standing as the rollout policy values it (``leaf=eval``:
    the weights ``LW``, plus the seat's starting VP), which also counts what a position holds
    but has not scored yet: cards in hand, parts left, secured majorities."""
    n = s[G_NPLAYERS]
    over = s[G_PHASE] == PH_TERMINAL
    if not over:
        E.height_majorities(s, R, 0, n)
    for q in range(n):                                 # the standing: VP, then the half point (V2)
        half = 0.5 * R[R_START_HALF + q]
        if over:
            tot[q] = s[PLAYERS + q * PSTRIDE + P_FINAL] + half
        elif leaf == L_EVAL:                           # the policy's value, the starting VP added
            tot[q] = evaluate(s, R, q, LW, np.int32(0)) + LW[0, F_VP] * (R[R_START_VP + q] + half)
        else:
            tot[q] = E.standing(s, R, q)
    if kind == R_WIN:
        if not over and leaf == L_EVAL:                # the best standing as the policy values it
            winner = -1
            for q in range(n):
                if winner < 0 or tot[q] >= tot[winner]:   # equal: the later seat, as D18 ends
                    winner = q
            for q in range(n):
                rew[q] = 1.0 if q == winner else 0.0
            return
        for q in range(n):                             # the final scoring's order on the whole VP
            tot[q] -= 0.5 * R[R_START_HALF + q]        # (of now, if not over), a shared victory (V4)
        for q in range(n):                             # by its share: the lot is no one's to know
            rew[q] = E.share_on(s, R, q, tot, 0, 1)
        return
    for q in range(n):
        best_other = -1e18
        beaten = 0
        for o in range(n):
            if o != q:
                best_other = max(best_other, tot[o])
                if tot[q] > tot[o]:
                    beaten += 1
        if kind == R_MARGIN:
            rew[q] = 0.5 + 0.5 * np.tanh((tot[q] - best_other) / MARGIN_SCALE)
        else:
            rew[q] = beaten / (n - 1)


@njit(cache=True, _nrt=False)
def random_playout(st, R, leg, k, rs, horizon, root_turns):
    """Play ``st`` (``k`` legal actions in ``leg``) at random until the game ends or ``horizon``
    turns after the root have been played. Nearly every step of a random search is taken here,
    so the engine's step is compiled into this small function (``engine.step_here``) rather
    than called once a step: the call profiled at about a fifth of a random search's time."""
    while k > 0 and within(st, root_turns, horizon):
        a = np.int64(leg[0]) if k == 1 else np.int64(leg[randbelow(rs, k)])
        k = E.step_here(st, R, a, leg)
    return k


@njit(cache=True, _nrt=False)
def plan_choose_seat(RW, st, R, leg, k, rs, rwork):
    """The move of the seat to move at ``st`` as a turn planner with the rollout's weights
    (``finish=plan``); a call of its own, so the rollout loop is not compiled around it."""
    return policy_choose(KIND_PLANNER, RW, st[G_CUR], st, R, leg, k, rs, rwork)


@njit(cache=True, inline="always")
def search_options(W, p, players):
    """Seat ``p``'s budget, exploration constant, rollout kind, reward, horizon and leaf, from
    its row of ``W``; a horizon of ``HORIZON_AUTO`` is two rounds and a turn at ``players``."""
    horizon = np.int64(W[p, NF + X_HORIZON])
    if horizon == HORIZON_AUTO:
        horizon = 2 * players + 1
    return (np.int64(W[p, NF + X_ITERATIONS]), W[p, NF + X_C], np.int64(W[p, NF + X_ROLLOUT]),
            np.int64(W[p, NF + X_REWARD]), horizon, np.int64(W[p, NF + X_LEAF]))


@njit(cache=True, inline="always")
def within(st, root_turns, horizon):
    """Whether a rollout from a root ``root_turns`` turns into the game still plays on at ``st``:
    fewer than ``horizon`` turns played since (a horizon of 0 plays to the end)."""
    return horizon <= 0 or st[G_NTURNS] - root_turns < horizon


@njit(cache=True, inline="always")
def rollout_weights(W, p, RW, LW):
    """Every seat of a rollout modelled by seat ``p``'s rollout policy (``RW``), and the
    weights a cut rollout's leaf is valued with (``LW``)."""
    for q in range(MAXP):
        for f in range(WIDTH):
            RW[q, f] = W[p, f]
    for f in range(WIDTH):
        LW[0, f] = W[p, f]
    LW[0, F_DENIAL] = 0.0                              # the leaf values each seat's own standing;
    LW[0, F_WIN] = 0.0                                 # comparing the seats is the reward's job
    LW[0, LEARNED_W + B_OTHER] = 0.0                   # (a learned evaluation's as well)
    LW[0, LEARNED_W + NB + B_OTHER] = 0.0
    LW[0, LEARNED_W + NL] = 0.0


@njit(cache=True, inline="always")
def plan_rest_of_turn(RW, st, R, leg, k, rs, rwork, root_turns):
    """Play the turn in progress to its end as a turn planner with the rollout's weights
    (its own loop: the rollout's stays lean). Returns the legal actions then."""
    while k > 0 and st[G_NTURNS] == root_turns:
        a = np.int64(leg[0]) if k == 1 else plan_choose_seat(RW, st, R, leg, k, rs, rwork)
        k = E.step(st, R, a, leg)
    return k


@njit(cache=True, inline="always")
def play_out(rkind, RW, st, R, leg, k, rs, horizon, root_turns, rwork):
    """Play ``st`` by the rollout policy until the game ends or ``horizon`` turns after the
    root have been played."""
    if rkind == KIND_RANDOM:
        return random_playout(st, R, leg, k, rs, horizon, root_turns)
    while k > 0 and within(st, root_turns, horizon):
        a = np.int64(leg[0]) if k == 1 else policy_choose(rkind, RW, st[G_CUR], st, R, leg, k, rs, rwork)
        k = E.step(st, R, a, leg)
    return k


@njit(cache=True, _nrt=False)
def mcts_choose(s, R, W, p, legal, n, rs, work):
    """Seat ``p``'s decision at ``s`` (``n`` >= 2 legal actions in ``legal``) by searching
    ``W[p, NF + X_ITERATIONS]`` iterations."""
    (parent, act, child, sib, visits, avail, mask, value, path, leg, st, RW, LW, rew, tot,
     why, whyn, sigs, rwork, keep, expect) = work
    iterations, c, rkind, reward, horizon, leaf = search_options(W, p, s[G_NPLAYERS])
    finish = np.int64(W[p, NF + X_FINISH])
    reuse = np.int64(W[p, NF + X_REUSE])
    players = s[G_NPLAYERS]
    continued = reuse == RU_TURN and _kept_root_fits(s, p, iterations, keep, expect, parent.shape[0])
    keep[K_VALID] = 0                                  # whatever follows, this tree is used up
    rollout_weights(W, p, RW, LW)
    new_rollout_cache(rwork)
    for i in range(n):
        leg[i] = legal[i]
    if distinct(s, leg, n, sigs) == 1:                 # the choices are all alike
        _note_alike(why, whyn, s, p, n, leg[0])
        return np.int64(leg[0])
    root_turns = s[G_NTURNS]
    keep[K_SEARCHES] += 1
    if continued:                                      # the subtree of the action taken before
        root = np.int64(keep[K_ROOT])
        nodes = np.int64(keep[K_NODES])
        keep[K_CONTINUED] += 1
    else:
        root = np.int64(0)
        parent[0] = -1
        child[0] = -1
        sib[0] = -1
        visits[0] = 0
        mask[0, 0] = 0
        mask[0, 1] = 0
        for q in range(MAXP):
            value[0, q] = 0.0
        nodes = np.int64(1)
    for _ in range(iterations):
        E.copy_core(s, st)
        determinize(st, rs)
        node = root
        depth = 0
        path[0] = root
        for i in range(n):
            leg[i] = legal[i]
        k = n
        # selection and expansion
        while k > 0 and (finish == FIN_ROLLOUT or depth == 0):
            if k == 1:
                k = E.step(st, R, np.int64(leg[0]), leg)
                continue
            k = distinct(st, leg, k, sigs)
            mover = st[G_CUR]
            lm0 = np.uint64(0)
            lm1 = np.uint64(0)
            for i in range(k):
                if leg[i] < 64:
                    lm0 |= _bit(leg[i])
                else:
                    lm1 |= _bit(leg[i])
            untried = 0
            for i in range(k):
                a = leg[i]
                have = (mask[node, 0] & _bit(a)) if a < 64 else (mask[node, 1] & _bit(a))
                if have == 0:
                    untried += 1
            best = -1
            best_u = -np.inf
            ch = child[node]
            while ch >= 0:                             # availability, then UCB among the available
                a = act[ch]
                here = (lm0 & _bit(a)) if a < 64 else (lm1 & _bit(a))
                if here != 0:
                    avail[ch] += 1
                    if untried == 0:
                        u = value[ch, mover] / visits[ch] + c * np.sqrt(np.log(avail[ch]) / visits[ch])
                        if u > best_u:
                            best_u = u
                            best = ch
                ch = sib[ch]
            if untried > 0:
                r = randbelow(rs, untried)
                a = -1
                for i in range(k):
                    x = leg[i]
                    have = (mask[node, 0] & _bit(x)) if x < 64 else (mask[node, 1] & _bit(x))
                    if have == 0:
                        if r == 0:
                            a = x
                            break
                        r -= 1
                new = nodes
                nodes += 1
                parent[new] = node
                act[new] = a
                child[new] = -1
                sib[new] = child[node]
                child[node] = new
                visits[new] = 0
                avail[new] = 1
                mask[new, 0] = 0
                mask[new, 1] = 0
                for q in range(MAXP):
                    value[new, q] = 0.0
                if a < 64:
                    mask[node, 0] |= _bit(a)
                else:
                    mask[node, 1] |= _bit(a)
                k = E.step(st, R, np.int64(a), leg)
                depth += 1
                path[depth] = new
                break
            k = E.step(st, R, np.int64(act[best]), leg)
            node = best
            depth += 1
            path[depth] = node
        # rollout
        forget_plans(rwork)
        if finish == FIN_PLAN:
            k = plan_rest_of_turn(RW, st, R, leg, k, rs, rwork, root_turns)
        play_out(rkind, RW, st, R, leg, k, rs, horizon, root_turns, rwork)
        seat_rewards(st, R, reward, leaf, LW, rew, tot)
        for d in range(depth + 1):
            x = path[d]
            visits[x] += 1
            for q in range(players):
                value[x, q] += rew[q]
    # the most visited child; equal visits: the better mean for p
    best = -1
    ch = child[root]
    while ch >= 0:
        if best < 0 or visits[ch] > visits[best] or (
                visits[ch] == visits[best] and value[ch, p] > value[best, p]):
            best = ch
        ch = sib[ch]
    _note(why, whyn, s, p, root, child, sib, act, visits, value)
    if reuse == RU_TURN:
        _keep_child(s, R, p, best, act[best], nodes, keep, expect, st, leg)
    return np.int64(act[best])


@njit(cache=True, _nrt=False)
def _keep_child(s, R, p, node, a, nodes, keep, expect, st, leg):
    """Keep the subtree of ``node`` (action ``a`` at ``s``) for seat ``p``'s next decision,
    if that decision is the node's: play ``a`` and the forced steps after it, as an iteration
    does, and keep the position reached if it is ``p``'s decision in the same turn and no stack
    shows a new top card. A card drawn would make the subtree's samples of the unseen order
    impossible ones; the replay may draw from the true order, but then nothing is kept, so
    what is kept never depends on it."""
    E.copy_core(s, st)
    k = E.step(st, R, np.int64(a), leg)
    while k == 1:
        k = E.step(st, R, np.int64(leg[0]), leg)
    if k == 0 or st[G_CUR] != p or st[G_NTURNS] != s[G_NTURNS]:
        return
    for t in range(NTYPES):
        if st[STACK_TOP + t] != s[STACK_TOP + t]:
            return
    E.copy_core(st, expect)
    keep[K_VALID] = 1
    keep[K_SEAT] = p
    keep[K_ROOT] = node
    keep[K_NODES] = nodes


@njit(cache=True, _nrt=False)
def _kept_root_fits(s, p, iterations, keep, expect, capacity):
    """A subtree is kept for seat ``p`` at exactly the position ``s``, and the tree has room
    for ``iterations`` more nodes after the ones in use."""
    if keep[K_VALID] == 0 or keep[K_SEAT] != p or keep[K_NODES] + iterations > capacity:
        return False
    for i in range(CORE):
        if s[i] != expect[i]:
            return False
    return True


@njit(cache=True, inline="always")
def note_row(why, whyn, s, p, count):
    """The next row of the replay's notes, headed by the turn, the seat and how many actions
    the root searched (-1 once the notes are full)."""
    row = whyn[0]
    if row >= why.shape[0]:
        return -1
    whyn[0] = row + 1
    why[row, 0] = s[G_NTURNS]
    why[row, 1] = p
    why[row, 2] = count
    for j in range(WHY_TOP):
        why[row, 3 + 3 * j] = -1
    return row


@njit(cache=True, _nrt=False)
def _note_alike(why, whyn, s, p, n, a):
    """The note of a decision whose ``n`` choices are all alike: nothing searched."""
    row = note_row(why, whyn, s, p, 1)
    if row >= 0:
        why[row, 3] = a
        why[row, 4] = 0
        why[row, 5] = np.nan


@njit(cache=True, _nrt=False)
def _note(why, whyn, s, p, root, child, sib, act, visits, value):
    """Keep the root's most visited actions for ``evora replay``."""
    count = 0
    ch = child[root]
    while ch >= 0:
        count += 1
        ch = sib[ch]
    row = note_row(why, whyn, s, p, count)
    if row < 0:
        return
    for j in range(WHY_TOP):
        best = -1
        ch = child[root]
        while ch >= 0:
            taken = False
            for i in range(j):
                if why[row, 3 + 3 * i] == act[ch]:
                    taken = True
            if not taken and (best < 0 or visits[ch] > visits[best]):
                best = ch
            ch = sib[ch]
        if best < 0:
            break
        why[row, 3 + 3 * j] = act[best]
        why[row, 4 + 3 * j] = visits[best]
        why[row, 5 + 3 * j] = value[best, p] / max(visits[best], 1)
