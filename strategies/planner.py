"""Turn planning for the built-in heuristics (``plan=turn``): every decision of a turn is valued
by the best position the player can reach by the end of that turn, under its own evaluation.

Why a whole turn: the move decides the site action and the colour of the cards a player may
play, and the option, the effect's choices and the cards played before and after it all
interact. Valued one decision at a time (``plan=action``), the move has no value at all and is
taken at random. Within a turn nothing is hidden from the player to move except the order of
each stack below its top card, and a card drawn is usable only next turn (D9), so the turn is
searched exactly, with no sampling:

- **Depth-first over the player's own decisions** until the turn ends (the seat to move
  changes, or the game ends), with the engine's own ``step``. Forced decisions (one legal
  action, P5, or one the player has seen, below) are applied in line, as the game loop applies
  them (``advance_seen``). Each end-of-turn position is scored by ``compiled.evaluate``; a node
  is worth its best child.
- **Never on a card it cannot see.** A draw exposes the next card of its stack, which the
  player did not know when it planned. A Temple card is the one place such a card is used
  (a draw takes it into the hand, where the evaluation counts cards, not which). So at a
  Temple frame the stacks whose top has changed since the search began are never taken,
  whether the frame offers a choice or one forced step: a frame that offers one card the
  player has seen is a forced step, and a frame that offers none is passed, its effect
  counted as nothing, and the turn goes on (``E.pass_frame``), exactly as the engine passes a
  frame that offers nothing at all. So the search is the same whatever the unseen cards are,
  even where an unseen card decides whether its stack is on offer at all (a stack showing
  "use a card in the Temple" is not, D11). Once the real draw has happened the player sees
  the card and the next decision plans again.
- **Pruning.** Columns with the same content are interchangeable (``compiled.action_signature``):
  one of them is searched. A build of identical groups (two or three stones, two capitals)
  reaches the same position in every order of its columns: those positions are keyed by a
  64-bit hash of the state and searched once. Other orders that meet again (a card played
  before or after the option) meet at the end of the turn, where only the evaluation repeats;
  hashing every position to catch them cost more than it saved (profiled). So the work stays
  near the number of distinct end-of-turn positions, which ``batch.plan_census`` counts for the
  benchmark.
- **Values are reused across the turn's decisions.** The search keeps its best line (the
  principal variation); the later decisions of the turn follow it without searching, as long
  as each decision is the one the line expects (same turn, same legal actions) and no stack's
  top card has changed since the search began (then the player knows more and plans again).
- **Ties** are broken uniformly by the strategy's random stream at every node, so equal plans
  are not chosen by column or stack order, and games stay reproducible from the seed.

Setup placements have no turn of their own to plan: a placement is valued by the best turn the
placed worker could then make, planned as if the player moved it next (the other seats'
placements, still to come, are not foreseen).
"""
from typing import NamedTuple

import numpy as np
from numba import njit

from evora_sim import engine as E
from evora_sim.layout import (
    A_COLUMN, A_DRAW, A_END, A_SKIP, A_SPACE, A_STACK, COL_H, COL_HOLDER, CORE, F_BUILD, F_DISCARD, F_TEMPLE, FRAMES, FW, G_CARD_PLAYED, G_CARD_SPACE, G_CUR, G_MOVED,
    G_LOT, G_NCOLS, G_NPLAYERS, G_NTURNS, G_PHASE, G_SP, G_WINNER,
    MAXC, MAXDEPTH, MAXS, N_ACTIONS, NTYPES, P_WPOS, PH_AFTER, PH_MAIN, PH_SETUP, PH_TERMINAL, PLAYERS, PSTRIDE,
    MAXSTACK, R_MIN_PARTS, STACK_CARDS, STACK_LEN, STACK_TOP, STATE_SIZE, WHITE,
)
from evora_sim.rng import randbelow

from evora_sim.engine import NGROUPS, PATTERNS

from .compiled import AHEAD_FROM, REPLIES, action_signature, evaluate, evaluate_here, memo_find
from .features import progress
from .unseen import determinize

DEPTH = 40             # decisions searched in one turn (a turn has at most about 20)
TT_BITS = 12
TT_SIZE = 1 << TT_BITS
# per-depth bookkeeping (int64 columns)
B_N, B_NEXT, B_NBEST, B_NSIG, B_ACT, B_SIG, B_BEST, B_CHECK, B_PVLEN, B_STORE, B_CANON, B_DREW = range(12)
NB = 12
# per-depth values (float64): best value, then the signature memo (signatures, values)
V_BEST = 0
V_SIGS = 1
V_SIGV = 1 + MAXC
NV = 1 + 2 * MAXC
# a line entry: action, number of legal actions, checksum of the legal actions
L_ACT, L_N, L_CHECK = 0, 1, 2
# meta (int64): the search stamp, the stack tops it started from, the plan, the counters
M_STAMP = 0
M_TOPS = 1
M_TURN = M_TOPS + NTYPES         # turns played when the plan was made
M_SEAT = M_TURN + 1
M_CURSOR = M_SEAT + 1            # next decision of the plan
M_LEN = M_CURSOR + 1             # decisions in the plan (0: no plan)
M_COUNT = M_LEN + 1              # 1: also count distinct end-of-turn positions (benchmark)
M_SEARCHES = M_COUNT + 1         # turn searches run
M_NODES = M_SEARCHES + 1         # decision nodes expanded
M_LEAVES = M_NODES + 1           # end-of-turn positions evaluated
M_HITS = M_LEAVES + 1            # positions found in the table instead of searched
M_DISTINCT = M_HITS + 1          # distinct end-of-turn positions (with M_COUNT)
M_WANT = M_DISTINCT + 1          # best turns to keep besides the best line (0: the best line only)
M_NTOP = M_WANT + 1              # best turns kept by the last search
M_CACHE = M_NTOP + 1             # the plan cache's generation: 0 off, else plans stored under it are valid
M_CACHE_HITS = M_CACHE + 1       # turns whose plan was found in the cache instead of searched
NMETA = M_CACHE_HITS + 1
TOP_MAX = 32                     # most turns a search keeps (``M_WANT``)
CACHE_BITS = 12                  # the plan cache's slots: 2**12 plans

_FRAMES_END = FRAMES + MAXDEPTH * FW
_MIX1 = np.uint64(0xBF58476D1CE4E5B9)
_KEYS = np.random.default_rng(0x5EED).integers(0, 2**32, size=(2, CORE), dtype=np.uint32)
_K1 = _KEYS[0].copy()
_K2 = _KEYS[1].copy()
assert G_WINNER < G_LOT < STACK_CARDS       # the order ``_known_forms`` takes the fields in
# patterns whose groups are all alike: any order of their columns reaches one position
_ALIKE = np.array([NGROUPS[q] > 1 and PATTERNS[q, 0, 0] == PATTERNS[q, 1, 0]
                   and PATTERNS[q, 0, 1] == PATTERNS[q, 1, 1] for q in range(len(NGROUPS))])


class Transpositions(NamedTuple):
    """The transposition table: positions reached by the alike groups of a build, by their key
    (``core_hash``), each slot valid only in the search that stored it (``M_STAMP``)."""
    keys: np.ndarray         # uint64 a slot: the position's key
    values: np.ndarray       # float64 a slot: its value
    stamps: np.ndarray       # int64 a slot: the search that stored it


class TurnSearch(NamedTuple):
    """One turn search's buffers, a row a depth of the search (one decision of the turn)."""
    states: np.ndarray       # the position at each depth
    legals: np.ndarray       # its legal actions
    nodes: np.ndarray        # its bookkeeping (int64, columns ``B_*``); a spare row: the setup's destinations
    node_values: np.ndarray  # its best value and signature memo (float64, ``V_*``); two spare rows: the setup's values
    lines: np.ndarray        # the best line found from each depth (decisions of ``L_*`` entries)
    node_keys: np.ndarray    # each depth's key (transposable nodes)
    transpositions: Transpositions


class TopTurns(NamedTuple):
    """Where a search asked for its best turns (``M_WANT``) keeps them, a row a turn."""
    lines: np.ndarray        # its decisions (``L_*`` entries)
    values: np.ndarray       # its value
    lengths: np.ndarray      # its number of decisions
    keys: np.ndarray         # the key of the position it ends in


class PlanCache(NamedTuple):
    """Plans by the visible position they were made at (``M_CACHE``), a slot a position."""
    keys: np.ndarray         # the position's key (``visible_hash``)
    generations: np.ndarray  # the generation the plan was stored under
    lengths: np.ndarray      # the plan's number of decisions
    lines: np.ndarray        # its decisions (``L_*`` entries)


class ReplyWork(NamedTuple):
    """The look-ahead's states and legal list (``_plan_with_replies``)."""
    sampled: np.ndarray      # the position, with a sample of the unseen order
    end: np.ndarray          # where a candidate turn and the replies to it lead
    legal: np.ndarray        # the legal actions there


class PlanWork(NamedTuple):
    """Everything the turn planner works in, allocated once per batch and handed on as one value
    (the compiled functions read the fields by name; numba passes a named tuple of arrays as
    cheaply as the arrays one by one)."""
    search: TurnSearch
    plan: np.ndarray         # the plan being followed (``L_*`` entries)
    meta: np.ndarray         # the search stamp, the stack tops, the plan's key, the counters (``M_*``)
    top: TopTurns
    cache: PlanCache
    replies: ReplyWork


def new_reply_work():
    """The look-ahead's states (the sampled position, a candidate's end) and legal list."""
    return ReplyWork(np.zeros(STATE_SIZE, dtype=np.int32), np.zeros(STATE_SIZE, dtype=np.int32),
                     np.zeros(N_ACTIONS, dtype=np.int32))


def new_turn_search():
    """A turn search's buffers: a state and a legal-action list per depth, per-depth
    bookkeeping and lines, and the transposition table."""
    return TurnSearch(np.zeros((DEPTH + 1, STATE_SIZE), dtype=np.int32),
                      np.zeros((DEPTH + 1, N_ACTIONS), dtype=np.int32),
                      np.zeros((DEPTH + 2, NB), dtype=np.int64),       # + a row for the setup's destinations
                      np.zeros((DEPTH + 3, NV), dtype=np.float64),     # + two rows for the setup's values
                      np.zeros((DEPTH + 1, DEPTH + 1, 3), dtype=np.int64),
                      np.zeros(DEPTH + 1, dtype=np.uint64),
                      Transpositions(np.zeros(TT_SIZE, dtype=np.uint64), np.zeros(TT_SIZE, dtype=np.float64),
                                     np.zeros(TT_SIZE, dtype=np.int64)))


def new_plan_work():
    """The planner's buffers, allocated once per batch: the turn search's, the plan and
    counters, the best turns of a search that asks for them, the plan cache and the
    look-ahead's."""
    return PlanWork(new_turn_search(), np.zeros((DEPTH + 1, 3), dtype=np.int64), np.zeros(NMETA, dtype=np.int64),
                    new_top_turns(), new_plan_cache(), new_reply_work())


def new_plan_cache():
    """Plans by the visible position they were made at (``M_CACHE``): each slot's key, its
    generation, the plan's length and its decisions. A search player's rollouts meet the same
    visible position many times in one search (every iteration of a candidate turn that drew no
    card hands the next seat the same position), and the plan made there is the same each time:
    the planner never reads the order below the tops, so a plan depends on what is visible."""
    size = 1 << CACHE_BITS
    return PlanCache(np.zeros(size, dtype=np.uint64), np.zeros(size, dtype=np.int64),
                     np.zeros(size, dtype=np.int64), np.zeros((size, DEPTH + 1, 3), dtype=np.int64))


def new_top_turns():
    """Where a search asked for its best turns (``M_WANT``) keeps them: each turn's line of
    decisions (action, legal actions, their checksum), its value, its length and the key of the
    position it ends in."""
    return TopTurns(np.zeros((TOP_MAX, DEPTH + 1, 3), dtype=np.int64), np.zeros(TOP_MAX, dtype=np.float64),
                    np.zeros(TOP_MAX, dtype=np.int64), np.zeros(TOP_MAX, dtype=np.uint64))


@njit(cache=True, _nrt=False)
def core_hash(s):
    """A 64-bit key of the rules-relevant state (frames above the open ones are stale data and
    left out). Two independent random linear forms mod 2**32: no chain of dependent
    multiplications, so the loops vectorise, and two different states share a key with
    probability about 2**-64."""
    h1, h2 = _known_forms(s)
    h1, h2 = _forms(s, STACK_CARDS, FRAMES + s[G_SP] * FW, h1, h2)
    h1, h2 = _forms(s, _FRAMES_END, CORE, h1, h2)
    return _mixed(h1, h2)


@njit(cache=True, _nrt=False)
def visible_hash(s):
    """``core_hash`` of what every player sees: each stack's cards below its top are left out
    (their order is hidden from everyone, P10), so positions that differ only there share a key
    (as they do in V4's lot, which neither key holds)."""
    h1, h2 = _known_forms(s)
    for t in range(NTYPES):
        base = STACK_CARDS + t * MAXSTACK
        h1, h2 = _forms(s, base, base + min(s[STACK_TOP + t] + 1, s[STACK_LEN + t]), h1, h2)
    h1, h2 = _forms(s, STACK_CARDS + NTYPES * MAXSTACK, FRAMES + s[G_SP] * FW, h1, h2)
    h1, h2 = _forms(s, _FRAMES_END, CORE, h1, h2)
    return _mixed(h1, h2)


@njit(cache=True, inline="always")
def _known_forms(s):
    """The keys' forms of the fields before the stacks' cards, without what no player knows of
    V4's lot: the lot itself, and the winner it records among the seats tied at the top of a
    finished game (which seats they are, the final totals in the key say), so positions that
    differ only in the lot share a key. Without V4 the lot field is 0 (with it never: it orders
    two seats or more) and these are the forms of every field: the keys are what they were."""
    h1, h2 = _forms(s, 0, G_WINNER, np.uint32(0), np.uint32(0))
    if s[G_LOT] == 0:
        h1, h2 = _forms(s, G_WINNER, G_WINNER + 1, h1, h2)
    h1, h2 = _forms(s, G_WINNER + 1, G_LOT, h1, h2)
    return _forms(s, G_LOT + 1, STACK_CARDS, h1, h2)


@njit(cache=True, inline="always")
def _forms(s, lo, hi, h1, h2):
    for k in range(lo, hi):
        x = np.uint32(s[k])
        h1 += x * _K1[k]
        h2 += x * _K2[k]
    return h1, h2


@njit(cache=True, inline="always")
def _mixed(h1, h2):
    h = (np.uint64(h1) << np.uint64(32)) | np.uint64(h2)
    h = (h ^ (h >> np.uint64(30))) * _MIX1      # spread the bits over the table index
    return h ^ (h >> np.uint64(31))


@njit(cache=True, inline="always")
def _slot(h):
    return np.int64(h >> np.uint64(64 - TT_BITS))


@njit(cache=True, inline="always")
def tt_find(table, meta, h):
    """The slot of ``table`` holding ``h`` in the current search, or -1."""
    i = _slot(h)
    if table.keys[i] == h and table.stamps[i] == meta[M_STAMP]:
        return i
    return -1


@njit(cache=True, inline="always")
def tt_store(table, meta, h, v):
    i = _slot(h)
    table.keys[i] = h
    table.values[i] = v
    table.stamps[i] = meta[M_STAMP]


@njit(cache=True, inline="always")
def turn_over(s, p):
    return s[G_PHASE] == PH_TERMINAL or s[G_CUR] != p


@njit(cache=True, inline="always")
def unseen_card(s, a, meta):
    """A Temple choice of a stack whose top card the player did not know when the search
    began (a draw in this turn exposed it)."""
    if not (A_STACK <= a < A_STACK + NTYPES) or s[G_SP] == 0:
        return False
    if s[FRAMES + (s[G_SP] - 1) * FW] != F_TEMPLE:
        return False
    t = a - A_STACK
    return s[STACK_TOP + t] != meta[M_TOPS + t]


@njit(cache=True, inline="always")
def seen_choices(s, legal, n, meta):
    """How many of the ``n`` legal actions of decision ``s`` the player can take on what it
    has seen (all but a Temple frame's ``unseen_card``), and the first of them."""
    seen = 0
    first = np.int64(-1)
    for i in range(n):
        if not unseen_card(s, np.int64(legal[i]), meta):
            if seen == 0:
                first = np.int64(legal[i])
            seen += 1
    return seen, first


@njit(cache=True, inline="always")
def advance_seen(c, R, p, k, legal, meta):
    """From decision ``c`` (``k`` legal actions in ``legal``) on to the next decision of seat
    ``p``'s turn that offers two or more choices it has seen, or to the turn's end: a single
    such choice is applied in line (a forced step, P5), a Temple frame that offers none is
    passed (see the module). So whether an unseen card is on offer changes nothing, not even
    where the line has a decision. Returns the legal actions then."""
    while k > 0 and not turn_over(c, p):
        seen, first = seen_choices(c, legal, k, meta)
        if seen == 0:
            k = E.pass_frame(c, R, legal)
        elif seen == 1:
            k = E.step(c, R, first, legal)
        else:
            break
    return k


@njit(cache=True, inline="always")
def plan_signature(s, a):
    """``compiled.action_signature`` for the turn search: a key shared only by actions whose
    best ends of turn are worth the same; -1 if none. Besides interchangeable columns and the
    stacks to draw from (only whether a stack is empty matters: nothing is played after a
    draw, see ``redundant``), the 3 cards paid for an instant tile: no feature tells cards
    apart and a tile is the turn's one play, so every choice of them is worth the same (the
    first, in canonical order, is searched)."""
    if s[G_SP] > 0 and s[FRAMES + (s[G_SP] - 1) * FW] == F_DISCARD:
        return np.int64(1) << 40
    return action_signature(s, a)


@njit(cache=True, inline="always")
def redundant(s, a, drew):
    """A card or tile played after drawing the turn's card: playing it before the draw reaches
    a position worth the same, since the draw changes only the stacks and the pending cards (a
    Temple card that would use the stack drawn from cannot be planned on: its top is unseen)."""
    return drew and s[G_PHASE] == PH_AFTER and s[G_SP] == 0 and a != A_END


@njit(cache=True, inline="always")
def transposable(s):
    """Whether the children of decision ``s`` may be reached again in another order: a later
    group of a build whose groups are alike."""
    if s[G_SP] == 0:
        return False
    f = FRAMES + (s[G_SP] - 1) * FW
    return s[f] == F_BUILD and s[f + 2] >= 1 and _ALIKE[s[f + 1]]


@njit(cache=True, _nrt=False)
def in_any_order(s, R):
    """Whether a build of alike groups reaches the same position in every order of its columns.
    It does unless a column's majority is held by a seat without its marker worker on it (D7:
    that seat had none left): there the order decides whether a marker returned by one
    placement is placed by the next."""
    for c in range(s[G_NCOLS]):
        if s[COL_HOLDER + c] < 0 and s[COL_H + c] >= R[R_MIN_PARTS]:
            leader = E.column_leader(s, R, c)
            if 0 <= leader < WHITE:
                return 0
    return 1


@njit(cache=True, inline="always")
def searched_column(search, d):
    """The column of the open build's previous group if this search chose it, at decision
    ``d - 1``; else -1. Orders of alike groups are searched in increasing column order only
    among the groups the search itself places: a search that starts in the middle of a build
    (its plan ended there) finds the earlier groups placed in any order, and ordering against
    them could prune every column left."""
    if d == 0:
        return -1
    s, q = search.states[d], search.states[d - 1]
    f = FRAMES + (s[G_SP] - 1) * FW
    a = search.nodes[d, B_ACT]
    if (q[G_SP] != s[G_SP] or q[f] != F_BUILD or q[f + 1] != s[f + 1] or q[f + 2] != s[f + 2] - 1
            or not A_COLUMN <= a < A_SKIP):
        return -1
    return a - A_COLUMN


@njit(cache=True, inline="always")
def checksum(legal, n):
    c = 0
    for i in range(n):
        c = c * 131 + legal[i] + 1
    return c


@njit(cache=True, inline="always")
def _offer(rs, search, d, a, v, tail):
    """Child ``a`` of node ``d`` is worth ``v``: keep the best, uniform among equal bests, and
    its line (``a``, then depth ``d + 1``'s line when ``tail``)."""
    nodes, values, lines = search.nodes, search.node_values, search.lines
    if v > values[d, V_BEST]:
        values[d, V_BEST] = v
        nodes[d, B_NBEST] = 1
    elif v == values[d, V_BEST]:
        nodes[d, B_NBEST] += 1
        if randbelow(rs, nodes[d, B_NBEST]) != 0:
            return
    else:
        return
    nodes[d, B_BEST] = a
    lines[d, d, L_ACT] = a
    lines[d, d, L_N] = nodes[d, B_N]
    lines[d, d, L_CHECK] = nodes[d, B_CHECK]
    end = d + 1
    if tail:
        end = nodes[d + 1, B_PVLEN]
        for j in range(d + 1, end):
            for k in range(3):
                lines[d, j, k] = lines[d + 1, j, k]
    nodes[d, B_PVLEN] = end


@njit(cache=True, inline="always")
def _open(search, d, n, a, sig):
    """Node ``d`` opens with the ``n`` legal actions in its row of ``search.legals``, reached by
    action ``a`` of signature ``sig``."""
    nodes, values = search.nodes, search.node_values
    nodes[d, B_N] = n
    nodes[d, B_NEXT] = 0
    nodes[d, B_NBEST] = 0
    nodes[d, B_NSIG] = 0
    nodes[d, B_ACT] = a
    nodes[d, B_SIG] = sig
    nodes[d, B_BEST] = -1
    nodes[d, B_CHECK] = checksum(search.legals[d], n)
    nodes[d, B_PVLEN] = d
    nodes[d, B_STORE] = 0
    nodes[d, B_CANON] = -1
    values[d, V_BEST] = -np.inf


@njit(cache=True, inline="always")
def _remember(search, d, sig, v):
    """Record the value of a child with column signature ``sig`` (its equals are skipped)."""
    nodes, values = search.nodes, search.node_values
    if sig >= 0 and nodes[d, B_NSIG] < MAXC:
        j = nodes[d, B_NSIG]
        values[d, V_SIGS + j] = sig
        values[d, V_SIGV + j] = v
        nodes[d, B_NSIG] = j + 1


@njit(cache=True, _nrt=False)
def _keep_top(top, meta, nodes, d, a, v, end):
    """Keep the turn ending at position ``end`` among the ``M_WANT`` best so far: the decisions
    that led to depth ``d``, then ``a`` (-1: the turn stops at ``d``, every choice there
    pruned). Orders that meet only at the end of the turn (a card played before or after the
    option) reach it more than once; it is kept once, by its key."""
    lines, values, lengths, keys = top
    m = meta[M_NTOP]
    slot = m
    if m == meta[M_WANT]:                      # full: replace the worst, if this one is better
        slot = _worst(values, m)
        if v <= values[slot]:
            return
    h = core_hash(end)
    for i in range(m):
        if keys[i] == h:
            return
    if slot == m:
        meta[M_NTOP] = m + 1
    for j in range(d):
        lines[slot, j, L_ACT] = nodes[j + 1, B_ACT]
        lines[slot, j, L_N] = nodes[j, B_N]
        lines[slot, j, L_CHECK] = nodes[j, B_CHECK]
    length = d
    if a >= 0:
        lines[slot, d, L_ACT] = a
        lines[slot, d, L_N] = nodes[d, B_N]
        lines[slot, d, L_CHECK] = nodes[d, B_CHECK]
        length = d + 1
    values[slot] = v
    lengths[slot] = length
    keys[slot] = h


@njit(cache=True, inline="always")
def _worst(values, m):
    slot = 0
    for i in range(1, m):
        if values[i] < values[slot]:
            slot = i
    return slot


@njit(cache=True, _nrt=False)
def search_turn(root, R, W, p, legal, n, rs, search, meta, top):
    """Value seat ``p``'s decision ``root`` (``n`` legal actions in ``legal``) by the best
    end-of-turn evaluation each action leads to; ``search.lines[0]`` then holds the best line of
    decisions. Returns the root's value."""
    for t in range(NTYPES):
        meta[M_TOPS + t] = root[STACK_TOP + t]
    return search_seen(root, R, W, p, p, legal, n, rs, search, meta, top)


@njit(cache=True, _nrt=False)
def search_seen(root, R, W, p, me, legal, n, rs, search, meta, top):
    """``search_turn`` for seat ``p`` valuing positions with the weights of row ``me``, knowing
    only the stack tops in ``meta`` (those of an earlier decision: a reply foreseen after a turn
    that drew must not use the card the draw exposed, P10)."""
    states, legals, nodes, node_values = search.states, search.legals, search.nodes, search.node_values
    node_keys, table = search.node_keys, search.transpositions
    meta[M_STAMP] += 1
    meta[M_SEARCHES] += 1
    E.copy_core(root, states[0])
    for i in range(n):
        legals[0, i] = legal[i]
    _open(search, 0, n, -1, -1)
    nodes[0, B_DREW] = 0        # a search that starts after the draw: the plays are real options
    meta[M_NTOP] = 0
    meta[M_NODES] += 1
    d = 0
    while True:
        if nodes[d, B_NEXT] < nodes[d, B_N]:
            a = np.int64(legals[d, nodes[d, B_NEXT]])
            nodes[d, B_NEXT] += 1
            s = states[d]
            if unseen_card(s, a, meta) or redundant(s, a, nodes[d, B_DREW]):
                continue
            alike = transposable(s)
            if alike and A_COLUMN <= a < A_SKIP:
                if nodes[d, B_CANON] < 0:
                    nodes[d, B_CANON] = in_any_order(s, R)
                if nodes[d, B_CANON] == 1 and a - A_COLUMN < searched_column(search, d):
                    continue                      # the same columns in increasing order
            sig = plan_signature(s, a)
            if sig >= 0 and memo_find(node_values[d], V_SIGS, nodes[d, B_NSIG], sig) >= 0:
                continue                          # an equal column was searched: same value
            c = states[d + 1]
            E.copy_core(s, c)
            k = advance_seen(c, R, p, E.step(c, R, a, legals[d + 1]), legals[d + 1], meta)
            store = alike and nodes[d, B_CANON] != 1     # orders that may meet: key them
            h = np.uint64(0)
            if store:
                h = core_hash(c)
                i = tt_find(table, meta, h)
                if i >= 0:                        # reached before in another order
                    meta[M_HITS] += 1
                    _remember(search, d, sig, table.values[i])
                    _offer(rs, search, d, a, table.values[i], False)
                    continue
            if turn_over(c, p) or d + 1 == DEPTH:
                meta[M_LEAVES] += 1
                if meta[M_COUNT] and not store:
                    hc = core_hash(c)
                    if tt_find(table, meta, hc) < 0:
                        meta[M_DISTINCT] += 1
                        tt_store(table, meta, hc, 0.0)
                elif store:
                    meta[M_DISTINCT] += meta[M_COUNT]
                v = evaluate_here(c, R, p, W, me)
                if store:
                    tt_store(table, meta, h, v)
                if meta[M_WANT] > 0:
                    _keep_top(top, meta, nodes, d, a, v, c)
                _remember(search, d, sig, v)
                _offer(rs, search, d, a, v, False)
            else:
                meta[M_NODES] += 1
                d += 1
                _open(search, d, k, a, sig)
                nodes[d, B_STORE] = store
                nodes[d, B_DREW] = nodes[d - 1, B_DREW] or a == A_DRAW
                node_keys[d] = h
        else:
            v = node_values[d, V_BEST]
            if nodes[d, B_BEST] < 0:              # every choice pruned (a build's column order)
                v = evaluate(states[d], R, p, W, me)
                if meta[M_WANT] > 0:
                    _keep_top(top, meta, nodes, d, -1, v, states[d])
            if nodes[d, B_STORE]:
                tt_store(table, meta, node_keys[d], v)
            if d == 0:
                return v
            a = nodes[d, B_ACT]
            sig = nodes[d, B_SIG]
            d -= 1
            _remember(search, d, sig, v)
            _offer(rs, search, d, a, v, True)


@njit(cache=True, inline="always")
def forget_plan(meta):
    """Drop the plan being followed: the next decision searches afresh (a search player's
    rollouts reach one turn in many different positions, so no plan carries over)."""
    meta[M_LEN] = 0


@njit(cache=True, _nrt=False)
def planned_action(s, legal, n, plan, meta):
    """This decision's action from the current plan, or -1 if there is none: another turn or
    seat, a decision the plan did not expect, or a stack's top card changed since it was made."""
    if meta[M_LEN] == 0 or meta[M_TURN] != s[G_NTURNS] or meta[M_SEAT] != s[G_CUR]:
        return -1
    for t in range(NTYPES):
        if s[STACK_TOP + t] != meta[M_TOPS + t]:
            return -1
    j = meta[M_CURSOR]
    if j >= meta[M_LEN] or plan[j, L_N] != n or plan[j, L_CHECK] != checksum(legal, n):
        return -1
    meta[M_CURSOR] = j + 1
    return plan[j, L_ACT]


@njit(cache=True, _nrt=False)
def plan_turn(s, R, W, legal, n, rs, work):
    """Make the best line of the rest of the turn from decision ``s`` the plan: searched, or
    with the cache on (``M_CACHE``) the plan made before at this visible position.

    A seat with replies looks a round ahead once the game's ``progress`` has reached its
    ``AHEAD_FROM`` (0: always), and plans one ply before. Why: at 3 and 4 players what looking
    ahead wins is won late in the game, where the one-ply value misses the last turns' races,
    and looking ahead only there costs a fraction of the time (docs/history/expert.md)."""
    cache, meta, search = work.cache, work.meta, work.search
    h = np.uint64(0)
    if meta[M_CACHE] > 0:
        h = visible_hash(s)
        i = _cache_slot(h)
        if cache.keys[i] == h and cache.generations[i] == meta[M_CACHE]:
            meta[M_CACHE_HITS] += 1
            adopt_plan(s, cache.lines[i], cache.lengths[i], work.plan, meta)
            return
    p = s[G_CUR]
    replies = np.int64(W[p, REPLIES])
    if replies > 0 and progress(s, R) >= W[p, AHEAD_FROM]:
        _plan_with_replies(s, R, W, p, legal, n, rs, work, replies)
        return
    search_turn(s, R, W, p, legal, n, rs, search, meta, work.top)
    adopt_plan(s, search.lines[0], search.nodes[0, B_PVLEN], work.plan, meta)
    if meta[M_CACHE] > 0:
        _store_plan(cache, meta, h, search.lines[0], search.nodes[0, B_PVLEN])


@njit(cache=True, _nrt=False)
def _replay(c, R, p, line, m, legal, meta):
    """Play the ``m`` decisions of ``line`` from decision ``c`` of seat ``p``, forced steps
    between them as the search took them."""
    for d in range(m):
        advance_seen(c, R, p, E.step(c, R, np.int64(line[d, L_ACT]), legal), legal, meta)


@njit(cache=True, _nrt=False)
def _play_best_turn(c, R, W, q, me, legal, rs, work):
    """Play seat ``q``'s best turn at ``c`` as this seat (weights row ``me``) foresees it."""
    k = E.legal_actions(c, R, legal)
    search = work.search
    search_seen(c, R, W, q, me, legal, k, rs, search, work.meta, work.top)
    _replay(c, R, q, search.lines[0], search.nodes[0, B_PVLEN], legal, work.meta)


@njit(cache=True, _nrt=False)
def _plan_with_replies(s, R, W, p, legal, n, rs, work, replies):
    """A round ahead: the seat's ``replies`` best turns under its value, each played on until its
    own next turn has been played too (every other seat's best reply in turn, then its own best
    next turn, each searched with this seat's weights: it does not know the others'), and
    valued there: its value less the best other seat's. A turn the game ends in is valued where
    it ends.

    What is not known stays unknown (P10): the turns are played on one sample of the order below
    the stacks' tops (``unseen.determinize``, from the seat's own stream), so a card a foreseen
    draw takes is a sampled card, and each foreseen search knows only the tops the seat saw when
    it planned (``search_seen``).

    Why: a one-turn planner values its turn as if no one moved after it, and the turn that
    leaves the next seat a majority or a strong space looks as good as one that does not, and
    so does a turn that leaves itself nothing to do next. Looking a round ahead from the 8 best
    turns lifted the 2-player expert from about 70% to about 90% against ``cardheights`` and
    from about 27% to about 50% against ``mcts(iterations=100)``; it costs 4 to 12 times the
    time (docs/history/expert.md has the figures)."""
    base, end, legal3 = work.replies
    lines, values, lengths, _ = work.top
    meta = work.meta
    meta[M_WANT] = min(replies, TOP_MAX)
    search_turn(s, R, W, p, legal, n, rs, work.search, meta, work.top)
    meta[M_WANT] = 0
    m = meta[M_NTOP]
    players = s[G_NPLAYERS]
    E.copy_core(s, base)
    determinize(base, rs)
    best = -1
    best_u = -np.inf
    best_v = -np.inf
    for j in range(m):
        E.copy_core(base, end)
        _replay(end, R, p, lines[j], lengths[j], legal3, meta)
        for _ in range(players - 1):                # the others' replies, in turn
            if end[G_PHASE] == PH_TERMINAL or end[G_CUR] == p:
                break
            _play_best_turn(end, R, W, end[G_CUR], p, legal3, rs, work)
        if end[G_PHASE] != PH_TERMINAL and end[G_CUR] == p:     # then its own next turn
            _play_best_turn(end, R, W, p, p, legal3, rs, work)
        u = evaluate(end, R, p, W, p)
        other = -np.inf
        for q in range(players):
            if q != p:
                other = max(other, evaluate(end, R, q, W, p))
        u -= other
        if u > best_u or (u == best_u and values[j] > best_v):
            best = j
            best_u = u
            best_v = values[j]
    adopt_plan(s, lines[best], lengths[best], work.plan, meta)


@njit(cache=True, inline="always")
def _cache_slot(h):
    """The plan cache's slot for visible-position key ``h`` (its top ``CACHE_BITS`` bits), one
    rule for the lookup and the store."""
    return np.int64(h >> np.uint64(64 - CACHE_BITS))


@njit(cache=True, inline="always")
def _store_plan(cache, meta, h, line, m):
    i = _cache_slot(h)
    for j in range(m):
        for k in range(3):
            cache.lines[i, j, k] = line[j, k]
    cache.keys[i] = h
    cache.generations[i] = meta[M_CACHE]
    cache.lengths[i] = m


@njit(cache=True, _nrt=False)
def cache_best_line(s, work):
    """With the cache on, keep the best line a search from ``s`` just found
    (``work.search.lines[0]``) as the plan at ``s``'s visible position: a search that asked for
    its best turns (a search player's new node) has searched exactly what a rollout's planner
    would search there."""
    if work.meta[M_CACHE] > 0:
        search = work.search
        _store_plan(work.cache, work.meta, visible_hash(s), search.lines[0], search.nodes[0, B_PVLEN])


@njit(cache=True, inline="always")
def new_cache_generation(meta):
    """Plans cached from here on are valid until the next call; none cached before is used. A
    search player calls this once a search: its rollouts' weights and rules stay the same."""
    meta[M_CACHE] += 1


@njit(cache=True, inline="always")
def adopt_plan(s, line, m, plan, meta):
    """Make the first ``m`` decisions of ``line`` the plan followed from decision ``s``: valid
    in this turn, for the seat to move, while the stacks show the tops they show now."""
    for j in range(m):
        for k in range(3):
            plan[j, k] = line[j, k]
    meta[M_LEN] = m
    meta[M_CURSOR] = 0
    meta[M_TURN] = s[G_NTURNS]
    meta[M_SEAT] = s[G_CUR]
    for t in range(NTYPES):
        meta[M_TOPS + t] = s[STACK_TOP + t]


@njit(cache=True, _nrt=False)
def _arrival_value(s, R, W, p, y, rs, scratch, scratch_legal, work):
    """The best turn of seat ``p``'s setup worker once it has moved to space ``y``: the worker
    placed on ``y`` and the option (draw or site action) chosen there. Placing a worker on
    ``x`` and moving it on to ``y`` leaves this same position, whatever ``x`` was."""
    E.copy_core(s, scratch)
    E.apply_action(scratch, R, np.int64(A_SPACE + y))
    b = PLAYERS + p * PSTRIDE
    k_worker = 0
    for k in range(2):
        if scratch[b + P_WPOS + k] == y:
            k_worker = k
    scratch[G_CUR] = p                        # as if the player had just moved it there
    scratch[G_MOVED] = k_worker
    scratch[G_PHASE] = PH_MAIN
    scratch[G_CARD_SPACE] = y
    scratch[G_CARD_PLAYED] = 0
    n = E.legal_actions(scratch, R, scratch_legal)
    return search_turn(scratch, R, W, p, scratch_legal, n, rs, work.search, work.meta, work.top)


@njit(cache=True, _nrt=False)
def placement_values(s, R, W, legal, n, rs, scratch, scratch_legal, work, out):
    """Each setup placement's value (into ``out``): the best turn the placed worker could make
    from there, as if the player moved it next (the other seats' placements still to come are
    not foreseen). A destination's value is searched once for all the placements that reach it.
    Public: the valuation :func:`plan_choose` takes its best from, which a test reads to check the
    placement taken is one of the best."""
    p = s[G_CUR]
    arrival = work.search.node_values[DEPTH + 1]      # per space: the value of arriving there
    dest = work.search.nodes[DEPTH + 1]
    for x in range(MAXS):
        arrival[x] = np.nan
    for i in range(n):
        E.copy_core(s, scratch)
        E.apply_action(scratch, R, np.int64(legal[i]))
        nd = E.destinations(scratch, np.int64(legal[i] - A_SPACE), dest, 0)
        best = -np.inf
        for j in range(nd):
            y = dest[j] - A_SPACE
            if np.isnan(arrival[y]):
                arrival[y] = _arrival_value(s, R, W, p, y, rs, scratch, scratch_legal, work)
            best = max(best, arrival[y])
        out[i] = best


@njit(cache=True, _nrt=False)
def plan_choose(s, R, W, legal, n, rs, scratch, scratch_legal, work):
    """The turn planner's action at a decision of the player to move (``scratch`` and
    ``scratch_legal``: a state and a legal list for the setup's placements to work in; ``work``:
    the planner's ``PlanWork``)."""
    if s[G_PHASE] == PH_SETUP and s[G_SP] == 0:
        work.meta[M_LEN] = 0
        values = work.search.node_values[DEPTH + 2]   # one value per placement
        placement_values(s, R, W, legal, n, rs, scratch, scratch_legal, work, values)
        best_v = -np.inf
        nb = 0
        choice = legal[0]
        for i in range(n):
            if values[i] > best_v:
                best_v = values[i]
                nb = 1
                choice = legal[i]
            elif values[i] == best_v:
                nb += 1
                if randbelow(rs, nb) == 0:
                    choice = legal[i]
        return np.int64(choice)
    a = planned_action(s, legal, n, work.plan, work.meta)
    if a < 0:
        plan_turn(s, R, W, legal, n, rs, work)
        a = planned_action(s, legal, n, work.plan, work.meta)
    return np.int64(a)
