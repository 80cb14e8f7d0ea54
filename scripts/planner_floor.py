"""The speed floor of a turn planner: what one engine step and one evaluation cost, and the
games/s they allow if a search reached each distinct end-of-turn position with exactly one step
and evaluated it once, with nothing else to do.

Why: a planner that searches its whole turn exactly, without bounds that skip positions, must at
least create and score every distinct position its turns can end in. The census counts those;
this prices them, so the benchmark shows how far a planner is from what its own definition
allows, and whether a speed target is reachable by tuning at all or needs a different search.

The parts are timed on positions of the strategy's own games, every decision point and each of
its legal actions (a search's children), in compiled loops. Each figure is the fastest of many
short batches: on a shared machine a batch that ran uninterrupted is the one that measures the
code, and a floor must not be raised by another process's load.
"""
from __future__ import annotations

import time

import numpy as np
from numba import njit

from evora_sim import engine as E
from evora_sim.layout import G_CUR, N_ACTIONS
from strategies.compiled import evaluate

BATCHES = 200           # timed batches per part; the fastest is kept
BATCH_SECONDS = 0.002   # about this long each: shorter than a time slice on a shared core
MAX_PAIRS = 4000        # (position, action) pairs timed


@njit(cache=False)
def _steps(S, A, R, reps):
    c = S[0].copy()
    out = np.empty(N_ACTIONS, np.int32)
    acc = 0
    for _ in range(reps):
        for i in range(S.shape[0]):
            E.copy_core(S[i], c)
            acc += E.step(c, R, A[i], out)
    return acc


@njit(cache=False)
def _evaluations(C, P, R, W, reps):
    acc = 0.0
    for _ in range(reps):
        for i in range(C.shape[0]):
            acc += evaluate(C[i], R, P[i], W, P[i])
    return acc


def _children(S, A, R):
    C = S.copy()
    out = np.empty(N_ACTIONS, np.int32)
    for i in range(len(S)):
        E.step(C[i], R, np.int64(A[i]), out)
    return C


def sample_pairs(rules, n_players: int, seeds, strategies, max_pairs: int = MAX_PAIRS):
    """Every decision point of the games of ``seeds`` with each of its legal actions (the game's
    own action log replayed), thinned evenly to at most ``max_pairs``."""
    from evora_sim.batch import game_decisions
    states, actions = [], []
    for seed in seeds:
        for s, legal, n, _ in game_decisions(rules, n_players, int(seed), strategies):
            for b in legal[:n]:
                states.append(s)
                actions.append(b)
    keep = np.linspace(0, len(states) - 1, min(max_pairs, len(states))).astype(np.int64)
    return np.array([states[i] for i in keep]), np.array([actions[i] for i in keep], dtype=np.int64)


def _fastest_ns(f, n_items: int, *args) -> float:
    f(*args, 1)                                       # compile, and a first pass to warm the cache
    t0 = time.perf_counter()
    f(*args, 1)
    once = max(time.perf_counter() - t0, 1e-7)
    reps = max(1, int(BATCH_SECONDS / once))
    best = float("inf")
    for _ in range(BATCHES):
        t0 = time.perf_counter()
        f(*args, reps)
        best = min(best, time.perf_counter() - t0)
    return best / (reps * n_items) * 1e9


def part_costs(rules, n_players: int, seeds, strategies, weights) -> dict:
    """Nanoseconds of one step (state copy, action, the next decision's legal actions) and of
    one evaluation by ``weights`` (the seats' matrix), on the games' own positions."""
    S, A = sample_pairs(rules, n_players, seeds, strategies)
    R = rules.packed
    C = _children(S, A, R)
    # the seats as the players pass them (int32, read from the state): a cached compiled function
    # called with other types gains a second entry in the shared cache, which the split compile's
    # test (tests/test_runner.py) counts as a compile the driver did not need
    P = S[:, G_CUR].astype(np.int32)
    return {"pairs": len(S),
            "step_ns": _fastest_ns(_steps, len(S), S, A, R),
            "evaluate_ns": _fastest_ns(_evaluations, len(S), C, P, R, weights)}


def floor_games_per_second(distinct_per_turn: float, turns_per_game: float,
                           step_ns: float, evaluate_ns: float) -> float:
    """Games/s if each distinct end-of-turn position cost one step and one evaluation."""
    ns = distinct_per_turn * turns_per_game * (step_ns + evaluate_ns)
    return 1e9 / ns if ns > 0 else float("inf")
