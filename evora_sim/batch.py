"""The compiled batch driver: seeded games played start to finish without leaving machine code.

``play_batch`` returns plain arrays (per game, per seat, per seat and card / space) that the
runner turns into tables. ``play_game`` plays one game with the same loop and can record the
full action log, which is what golden playthroughs and ``evora replay`` use: one loop, so a
replayed game is exactly the game the batch played.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from numba import njit

from strategies.custom import is_custom
from strategies.compiled import KIND_RANDOM
from strategies.decide import choose, new_buffers, new_game
from strategies.registry import as_strategy, seat_arrays, tree_nodes, turn_tree_shape

from . import engine as E
from . import layout as L
from .rng import STRATEGY_STREAM, randbelow, seed_stream


# The game's tension, counted as it is played (Ludii / TAG outcome metrics): the running score
# after each round is looked at once, when the next round begins, so the cost is one compare
# per decision and a few operations per round. ``track`` holds:
T_ROUND, T_LEADER, T_CHANGES = 0, 1, 2      # round being played; last sole leader (-1 none); lead changes
T_DEFICIT = 3                               # per seat: largest deficit to the leader after a round
T_BEHIND = T_DEFICIT + L.MAXP               # per seat: last round after which it did not lead alone
TRACK_SIZE = T_BEHIND + L.MAXP


@njit(cache=True, inline="always")
def round_over(s, track):
    """The round ``track[T_ROUND]`` is over (the state holds the next one): note its leader."""
    r = track[T_ROUND]
    track[T_ROUND] = s[L.G_ROUND]
    if r < 1:                                   # the setup placements are no round
        return
    n = s[L.G_NPLAYERS]
    best, leader = -1, -1
    for p in range(n):
        v = s[L.PLAYERS + p * L.PSTRIDE + L.P_SCORE]
        if v > best:
            best, leader = v, p
        elif v == best:
            leader = -1                         # shared lead: nobody leads alone
    if leader >= 0:
        if track[T_LEADER] >= 0 and track[T_LEADER] != leader:
            track[T_CHANGES] += 1
        track[T_LEADER] = leader
    for p in range(n):
        gap = best - s[L.PLAYERS + p * L.PSTRIDE + L.P_SCORE]
        if gap > track[T_DEFICIT + p]:
            track[T_DEFICIT + p] = gap
        if p != leader:
            track[T_BEHIND + p] = r


@njit(cache=True, inline="always")
def advance(s, R, kinds, W, custom, legal, rs, work, log, steps, track):
    """The one game loop: play forced moves and compiled seats until the game ends or a seat
    whose ``custom`` flag is set must choose (that seat is Python's: evora_sim.mixed).
    Records actions in ``log`` while it has room, and the game's tension in ``track`` (from
    its first step, ``steps`` = 0). Returns (legal actions now in ``legal``, or 0 once the game
    is over; steps so far)."""
    cap = log.shape[0]
    if steps == 0:
        track[:] = 0
        track[T_ROUND] = s[L.G_ROUND]
        track[T_LEADER] = -1
    k = E.legal_actions(s, R, legal)
    while k > 0:
        if s[L.G_ROUND] != track[T_ROUND]:
            round_over(s, track)
        p = s[L.G_CUR]
        if k == 1:
            a = np.int64(legal[0])            # P5: a forced move asks no strategy
        elif custom[p]:
            return k, steps
        elif kinds[p] == KIND_RANDOM:
            # handled here: every call passing arrays costs atomic reference counts
            a = np.int64(legal[randbelow(rs, k)])
        else:
            a = choose(kinds[p], W, p, s, R, legal, k, rs, work)
        if steps < cap:
            log[steps] = a
        k = E.step(s, R, a, legal)
        steps += 1
    return 0, steps


UNTIL_EFFECT, UNTIL_TURN = 0, 1


@njit(cache=True, _nrt=False)
def play_on(s, R, kinds, W, until, legal, rs, work):
    """Play the seat to move's decisions with its compiled strategy (``kinds``, ``W`` by seat)
    until the effect being resolved is finished (``UNTIL_EFFECT``) or the turn is over
    (``UNTIL_TURN``). The game loop's own steps, stopped early: what a custom strategy's look
    ahead needs (``api.finish``)."""
    p = s[L.G_CUR]
    turn = s[L.G_NTURNS]
    k = E.legal_actions(s, R, legal)
    while k > 0 and s[L.G_CUR] == p and s[L.G_NTURNS] == turn:
        if until == UNTIL_EFFECT and s[L.G_SP] == 0:
            break
        if k == 1:
            a = np.int64(legal[0])
        elif kinds[p] == KIND_RANDOM:
            a = np.int64(legal[randbelow(rs, k)])
        else:
            a = choose(kinds[p], W, p, s, R, legal, k, rs, work)
        k = E.step(s, R, a, legal)


@njit(cache=True, inline="always")
def start(s, R, n, seed, rs, work):
    """A new game in ``s``, the strategies' random stream of its seed, and seats' ``work`` with
    nothing kept from an earlier game."""
    E.init_game(s, R, n, seed)
    seed_stream(rs, seed, STRATEGY_STREAM)
    new_game(work)


@njit(cache=True, _nrt=False)
def _batch(R, n, seeds, kinds, W, games, seats, stats, s, log, no_custom, legal, rs, work, track):
    """Play one game per seed into row ``g`` of the result arrays. ``s`` ends as the last
    game's final state; ``log`` receives the first game's actions (as many as fit). One
    compiled entry for batches and single games: each compiled layer costs compile time.
    Buffers come from the caller (``buffers``), so no reference counting runs here."""
    for g in range(seeds.shape[0]):
        start(s, R, n, seeds[g], rs, work)
        steps = advance(s, R, kinds, W, no_custom, legal, rs, work, log, 0, track)[1]
        record(s, n, g, steps, games, seats, stats, track)
        log = log[:0]


def buffers(n_players: int, strategies=()):
    """The scratch arrays of the compiled game loop: which seats are custom (none here), the
    legal actions, the strategies' random stream, the seats' work (one tuple; a search tree
    large enough for the largest search budget among ``strategies``), the tension counters."""
    return (np.zeros(n_players, dtype=np.bool_), np.empty(L.N_ACTIONS, dtype=np.int32),
            np.zeros(1, dtype=np.uint64), new_buffers(tree_nodes(strategies), turn_tree_shape(strategies)),
            np.zeros(TRACK_SIZE, dtype=np.int64))


@njit(cache=True)
def record(s, n, g, steps, games, seats, stats, track):
    """Row ``g`` of the result arrays from the finished game ``s`` of ``steps`` decisions and
    its ``track``. The last round's standing is the final score: its leader is the winner."""
    w = s[L.G_WINNER]
    games[g, 0] = s[L.G_ROUND]
    games[g, 1] = s[L.G_NTURNS]
    games[g, 2] = s[L.G_END_TRIGGER]
    games[g, 3] = w
    games[g, 4] = steps
    games[g, 5] = track[T_CHANGES] + (1 if track[T_LEADER] >= 0 and track[T_LEADER] != w else 0)
    games[g, 6] = track[T_DEFICIT + w]
    games[g, 7] = track[T_BEHIND + w] + 1
    for p in range(n):
        b = L.PLAYERS + p * L.PSTRIDE
        for k in range(L.NBREAK):
            seats[g, p, k] = s[b + L.P_VP_BUILD + k]
        seats[g, p, L.NBREAK] = s[b + L.P_FINAL]
        seats[g, p, L.NBREAK + 1] = s[b + L.P_STONES] + s[b + L.P_CAPS]
        seats[g, p, L.NBREAK + 2] = s[b + L.P_TURNS]
        sb = L.STATS + p * L.SSTRIDE
        for k in range(L.SSTRIDE):
            stats[g, p, k] = s[sb + k]


GAME_COLUMNS = ("rounds", "turns", "end_trigger", "winner_seat", "decisions",
                "lead_changes", "comeback", "winner_led_from")
SEAT_COLUMNS = L.BREAKDOWN_NAMES + ("score", "parts_left", "seat_turns")


@dataclass
class BatchResult:
    """Arrays of one batch: games[g, GAME_COLUMNS], seats[g, p, SEAT_COLUMNS], stats[g, p, SSTRIDE]."""

    seeds: np.ndarray
    games: np.ndarray
    seats: np.ndarray
    stats: np.ndarray


def seat_strategies(n_players: int, strategies) -> list:
    """One strategy object per seat from built-in ids, spec strings (``greedy``,
    ``balanced(column=2)``, ``FILE.toml:NAME``, ``FILE.py:NAME``) or strategy objects."""
    items = list(np.asarray(strategies).tolist()) if isinstance(strategies, np.ndarray) else list(strategies)
    if len(items) != n_players:
        raise ValueError(f"need one strategy per seat ({n_players}), got {len(items)}")
    return [as_strategy(x) for x in items]


def new_result(seeds: np.ndarray, n_players: int) -> BatchResult:
    g = seeds.shape[0]
    return BatchResult(seeds, np.zeros((g, len(GAME_COLUMNS)), dtype=np.int32),
                       np.zeros((g, n_players, len(SEAT_COLUMNS)), dtype=np.int32),
                       np.zeros((g, n_players, L.SSTRIDE), dtype=np.int32))


def play_batch(rules, n_players: int, seeds, strategies, decision_timeout: float | None = None) -> BatchResult:
    """Play one game per seed; ``strategies`` has one entry per seat (a built-in id, a spec
    string, or a strategy object). With a custom Python strategy at the table the games are
    played by :func:`evora_sim.mixed.play_mixed_batch` (same arrays, same rules)."""
    seeds = np.ascontiguousarray(seeds, dtype=np.int64)
    items = seat_strategies(n_players, strategies)
    if any(is_custom(x) for x in items):
        from .mixed import play_mixed_batch
        return play_mixed_batch(rules, n_players, seeds, items, decision_timeout)
    kinds, W = seat_arrays(items)
    res = new_result(seeds, n_players)
    _batch(rules.packed, n_players, seeds, kinds, W, res.games, res.seats, res.stats, E.new_state(),
           np.empty(0, dtype=np.int64), *buffers(n_players, items))
    return res


def plan_census(rules, n_players: int, seeds, strategies) -> dict:
    """What the turn planners' searches cost over the games of ``seeds`` (built-in seats only):
    per turn played, the searches run, the decisions expanded, the end-of-turn positions
    evaluated and the distinct ones among them (counted with a hash of each, so slower than
    ``play_batch``: for benchmarks)."""
    from strategies import planner as P
    from strategies.policy import plan_meta

    seeds = np.ascontiguousarray(seeds, dtype=np.int64)
    res = new_result(seeds, n_players)
    items = seat_strategies(n_players, strategies)
    kinds, W = seat_arrays(items)
    no_custom, legal, rs, work, track = buffers(n_players, items)
    meta = plan_meta(work[0])
    meta[P.M_COUNT] = 1
    _batch(rules.packed, n_players, seeds, kinds, W, res.games, res.seats, res.stats, E.new_state(),
           np.empty(0, dtype=np.int64), no_custom, legal, rs, work, track)
    turns = int(res.games[:, GAME_COLUMNS.index("turns")].sum())
    counts = {"searches": P.M_SEARCHES, "nodes": P.M_NODES, "leaves": P.M_LEAVES, "distinct": P.M_DISTINCT}
    return {"turns": turns, **{k: int(meta[i]) / max(turns, 1) for k, i in counts.items()}}


def play_game(rules, n_players: int, seed: int, strategies, max_log: int = 100_000,
              decision_timeout: float | None = None, notes: list | None = None):
    """Play one game; return (final state array, action log). With a list as ``notes``, each
    decision a search player made appends what it saw (``search_notes``)."""
    items = seat_strategies(n_players, strategies)
    if any(is_custom(x) for x in items):
        from .mixed import play_mixed_game
        return play_mixed_game(rules, n_players, seed, items, max_log, decision_timeout, notes)
    s = E.new_state()
    log = np.zeros(max_log, dtype=np.int64)
    kinds, W = seat_arrays(items)
    seeds = np.array([seed], dtype=np.int64)
    res = new_result(seeds, n_players)
    bufs = buffers(n_players, items)
    _batch(rules.packed, n_players, seeds, kinds, W, res.games, res.seats, res.stats, s, log, *bufs)
    if notes is not None:
        notes.extend(search_notes(bufs[3]))
    steps = int(res.games[0, GAME_COLUMNS.index("decisions")])
    return s, log[:min(steps, max_log)].copy()


def search_notes(work) -> list[dict]:
    """What each search decision of a game saw, in order: the turn, the seat, how many actions
    its root searched, and the most visited (action, visits, the seat's mean reward)."""
    from strategies.mcts import WHY_TOP, search_notes as written
    why, count = written(work[1])
    out = []
    for row in why[:count]:
        top = [(int(row[3 + 3 * j]), int(row[4 + 3 * j]), float(row[5 + 3 * j]))
               for j in range(WHY_TOP) if row[3 + 3 * j] >= 0]
        out.append({"turn": int(row[0]), "seat": int(row[1]), "actions": int(row[2]), "top": top})
    return out
