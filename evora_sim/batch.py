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

from strategies.builtin import seat_arrays
from strategies.compiled import choose, new_work

from . import engine as E
from . import layout as L
from .rng import STRATEGY_STREAM, seed_stream


@njit(cache=True)
def _play(s, R, n, seed, kinds, W, legal, rs, t, t2, legal2, memo, log):
    """Play one game in ``s``; record actions in ``log`` if it is non-empty. Returns steps."""
    E.init_game(s, R, n, seed)
    seed_stream(rs, seed, STRATEGY_STREAM)
    steps = 0
    cap = log.shape[0]
    while s[L.G_PHASE] != L.PH_TERMINAL:
        k = E.legal_actions(s, R, legal)
        if k == 1:
            a = np.int64(legal[0])            # P5: a forced move asks no strategy
        else:
            p = s[L.G_CUR]
            a = choose(kinds[p], W[p], s, R, legal, k, rs, t, t2, legal2, memo)
        if steps < cap:
            log[steps] = a
        E.apply_action(s, R, a)
        steps += 1
    return steps


@njit(cache=True)
def _batch(R, n, seeds, kinds, W, games, seats, stats):
    s = E.new_state()
    legal = np.empty(L.N_ACTIONS, dtype=np.int32)
    rs = np.zeros(1, dtype=np.uint64)
    t, t2, legal2, memo = new_work(L.STATE_SIZE)
    nolog = np.empty(0, dtype=np.int64)
    for g in range(seeds.shape[0]):
        steps = _play(s, R, n, seeds[g], kinds, W, legal, rs, t, t2, legal2, memo, nolog)
        games[g, 0] = s[L.G_ROUND]
        games[g, 1] = s[L.G_NTURNS]
        games[g, 2] = s[L.G_END_TRIGGER]
        games[g, 3] = s[L.G_WINNER]
        games[g, 4] = steps
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


GAME_COLUMNS = ("rounds", "turns", "end_trigger", "winner_seat", "decisions")
SEAT_COLUMNS = L.BREAKDOWN_NAMES + ("score", "parts_left", "seat_turns")


@dataclass
class BatchResult:
    """Arrays of one batch: games[g, GAME_COLUMNS], seats[g, p, SEAT_COLUMNS], stats[g, p, SSTRIDE]."""

    seeds: np.ndarray
    games: np.ndarray
    seats: np.ndarray
    stats: np.ndarray


def _seats(n_players: int, strategies):
    """Per-seat kinds and weights from built-in ids or names, or Strategy objects."""
    items = list(np.asarray(strategies).tolist()) if isinstance(strategies, np.ndarray) else list(strategies)
    if len(items) != n_players:
        raise ValueError(f"need one strategy per seat ({n_players}), got {len(items)}")
    return seat_arrays(items)


def play_batch(rules, n_players: int, seeds, strategies) -> BatchResult:
    """Play one game per seed; ``strategies`` has one entry per seat (a built-in id or name,
    or a ``strategies.builtin.Strategy``)."""
    seeds = np.ascontiguousarray(seeds, dtype=np.int64)
    kinds, W = _seats(n_players, strategies)
    g = seeds.shape[0]
    games = np.zeros((g, len(GAME_COLUMNS)), dtype=np.int32)
    seats = np.zeros((g, n_players, len(SEAT_COLUMNS)), dtype=np.int32)
    stats = np.zeros((g, n_players, L.SSTRIDE), dtype=np.int32)
    _batch(rules.packed, n_players, seeds, kinds, W, games, seats, stats)
    return BatchResult(seeds, games, seats, stats)


def play_game(rules, n_players: int, seed: int, strategies, max_log: int = 100_000):
    """Play one game; return (final state array, action log)."""
    s = E.new_state()
    legal = np.empty(L.N_ACTIONS, dtype=np.int32)
    rs = np.zeros(1, dtype=np.uint64)
    t, t2, legal2, memo = new_work(L.STATE_SIZE)
    log = np.zeros(max_log, dtype=np.int64)
    kinds, W = _seats(n_players, strategies)
    steps = _play(s, rules.packed, n_players, np.int64(seed), kinds, W, legal, rs, t, t2, legal2, memo, log)
    return s, log[:min(steps, max_log)].copy()
