"""The compiled batch driver: seeded games played start to finish without leaving machine code.

``play_batch`` returns plain arrays (per game, per seat, per seat and card / space) that the
runner turns into tables. ``play_game`` plays one game with the same loop and can record the
full action log, which is what golden playthroughs and ``evora replay`` use: one loop, so a
replayed game is exactly the game the batch played.
"""
from __future__ import annotations

import numpy as np
from numba import njit

from strategies import planner as P
from strategies.custom import is_custom
from strategies.mcts import rollout_plan_counts
from strategies.policy import plan_meta
from strategies.registry import seat_arrays

from . import api
from . import engine as E
from .gameloop import (GAME_COLUMNS, ILLEGAL, BatchResult, advance, buffers, new_result, record, refused, search_notes,
                       seat_strategies, start)
from .layout import N_ACTIONS
from .mixed import play_mixed_batch, play_mixed_game

MAX_RECORDED = 4096      # actions kept per game with ``record_actions`` (a 4-player game takes about 700)


DECISIONS = GAME_COLUMNS.index("decisions")


@njit(cache=True, _nrt=False)
def compiled_batch(R, n, seeds, kinds, W, results, s, logs, scratch):
    """Play one game per seed into row ``g`` of the result arrays (``results``: the games,
    seats, stats and states arrays of a ``BatchResult``). ``s`` ends as the last
    game's final state; row ``g`` of ``logs`` (at least one row) receives game ``g``'s actions
    (as many as fit), for the games it has rows for. One compiled entry for batches and single
    games: each compiled layer costs compile time. The loop's scratch arrays come from the caller
    (``scratch``, as ``buffers`` makes them), so no reference counting runs here. Returns -1, or
    the row of the game a seat stopped by choosing an illegal action (``s`` then holds that game
    as it stood; its steps are in ``games[g, decisions]``)."""
    games, seats, stats, states = results
    no_custom, legal, rs, work, track = scratch
    for g in range(seeds.shape[0]):
        start(s, R, n, seeds[g], rs, work)
        log = logs[g] if g < logs.shape[0] else logs[0, :0]
        k, steps = advance(s, R, kinds, W, no_custom, legal, rs, work, log, 0, track)
        if k == ILLEGAL:
            games[g, DECISIONS] = steps
            return g
        record(s, n, g, steps, games, seats, stats, states, track)
    return -1


def _run(items, seeds, res, s, logs, bufs, rules, n_players) -> None:
    """``compiled_batch`` over ``seeds``; a game stopped by an illegal action is a StrategyError."""
    kinds, W = seat_arrays(items)
    g = compiled_batch(rules.packed, n_players, seeds, kinds, W, (res.games, res.seats, res.stats, res.states), s, logs,
                       bufs)
    if g >= 0:
        raise refused(items, s, bufs[4], int(res.games[g, DECISIONS]), int(seeds[g]))


def play_batch(rules, n_players: int, seeds, strategies, decision_timeout: float | None = None,
               record_actions: bool = False) -> BatchResult:
    """Play one game per seed; ``strategies`` has one entry per seat (a built-in id, a spec
    string, or a strategy object). With a custom Python strategy at the table the games are
    played by :func:`evora_sim.mixed.play_mixed_batch` (same arrays, same rules).
    ``record_actions``: keep every game's actions (``BatchResult.actions``, at most
    ``MAX_RECORDED`` a game; the ``decisions`` column says whether a game had more)."""
    seeds = np.ascontiguousarray(seeds, dtype=np.int64)
    items = seat_strategies(n_players, strategies)
    logs = np.zeros((len(seeds), MAX_RECORDED) if record_actions else (1, 0), dtype=np.int64)
    if any(is_custom(x) for x in items):
        res = play_mixed_batch(rules, n_players, seeds, items, decision_timeout, logs)
    else:
        res = new_result(seeds, n_players)
        _run(items, seeds, res, E.new_state(), logs, buffers(n_players, items), rules, n_players)
    if record_actions:
        res.actions = logs
    return res


def plan_census(rules, n_players: int, seeds, strategies) -> dict:
    """What the turn planners' searches cost over the games of ``seeds`` (built-in seats only):
    per turn played, the searches run, the decisions expanded, the end-of-turn positions
    evaluated and the distinct ones among them (counted with a hash of each, so slower than
    ``play_batch``: for benchmarks). Under ``"search"``, per game, what the planner inside the
    search players' searches did (``mcts.rollout_plan_counts``)."""
    seeds = np.ascontiguousarray(seeds, dtype=np.int64)
    res = new_result(seeds, n_players)
    items = seat_strategies(n_players, strategies)
    bufs = buffers(n_players, items)
    work = bufs[3]
    meta = plan_meta(work[0])
    meta[P.M_COUNT] = 1
    _run(items, seeds, res, E.new_state(), np.zeros((1, 0), dtype=np.int64), bufs, rules, n_players)
    turns = int(res.games[:, GAME_COLUMNS.index("turns")].sum())
    counts = {"searches": P.M_SEARCHES, "nodes": P.M_NODES, "leaves": P.M_LEAVES, "distinct": P.M_DISTINCT}
    search = {k: v / len(seeds) for k, v in rollout_plan_counts(work[1]).items()}
    return {"turns": turns, **{k: int(meta[i]) / max(turns, 1) for k, i in counts.items()}, "search": search}


def play_game(rules, n_players: int, seed: int, strategies, max_log: int = 100_000,
              decision_timeout: float | None = None, notes: list | None = None):
    """Play one game; return (final state array, action log). With a list as ``notes``, each
    decision a search player made appends what it saw (``search_notes``)."""
    items = seat_strategies(n_players, strategies)
    if any(is_custom(x) for x in items):
        return play_mixed_game(rules, n_players, seed, items, max_log, decision_timeout, notes)
    s = E.new_state()
    logs = np.zeros((1, max_log), dtype=np.int64)
    seeds = np.array([seed], dtype=np.int64)
    res = new_result(seeds, n_players)
    bufs = buffers(n_players, items)
    _run(items, seeds, res, s, logs, bufs, rules, n_players)
    if notes is not None:
        notes.extend(search_notes(bufs[3]))
    steps = int(res.games[0, GAME_COLUMNS.index("decisions")])
    return s, logs[0, :min(steps, max_log)].copy()


def game_decisions(rules, n_players: int, seed: int, strategies):
    """Every decision of the seeded game ``strategies`` play, in order, as (the state before it,
    its legal actions in an ``N_ACTIONS`` buffer as the compiled searches take them, their count,
    the action taken): the game's own log replayed through ``api`` (which checks each action),
    so tools and tests can study a player's real positions one at a time. All are copies."""
    _, log = play_game(rules, n_players, seed, strategies)
    st = api.new_game(rules, n_players, seed)
    for a in log:
        legal = np.zeros(N_ACTIONS, dtype=np.int32)
        n = E.legal_actions(st.arr, rules.packed, legal)
        yield st.arr.copy(), legal, int(n), int(a)
        api.apply_action(st, int(a))
