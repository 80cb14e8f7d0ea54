"""Seat compensation: the starting VP per seat (``players.start_vp``) that equalise the seats' win
rates, estimated from played games by re-scoring them.

**Re-scoring.** Given each game's final totals, the half points its seats started with and
their parts left, the winner under extra starting VP ``x`` is found by the game's own rule
(``evora_sim.ranking.order_key``: most VP, then the half point of V2, then fewer parts left, then
the later seat). Starting VP count in the total only (docs/RULES.md, V1) and the half point only
breaks ties on the final totals (V2), so this is exact for the final scoring of any ``x`` in
steps of half a VP; the players' play may change a little once they know the standings differ,
which is why the command plays the estimate and estimates again, and why only the confirmation
on fresh seeds is reported as the result.

**Half VP and between.** As totals are whole, a half point orders the seats exactly as half a VP
would, so the playable values are the multiples of 0.5 and win rates are step functions on them.
A value between two of them is read as a coin flip between the two (``x = 2.3``: 2.5 with
probability 0.6, else 2): every game's expected wins are then continuous, piecewise linear
functions of ``x``, exact at the playable values, and the offsets solving "every seat wins 1/n"
are unique enough to estimate.

**Estimate and interval.** Seat 0 is the reference (0 VP over it). The offsets of seats 1..n-1
solve the n - 1 equations mean_seeds(win rate of seat k) = 1/n, a Z-estimator with the seed as
the independent unit (a seed's rotations share its stacks). Its covariance is the sandwich
``J^-1 S J^-T / C``: ``S`` the covariance over the ``C`` seeds of the per-seed deviations, ``J``
the Jacobian of the mean win rates (central differences of half a VP). Each seat's interval is
the t interval on C - 1 degrees of freedom; ``tests/test_compensation.py`` checks its coverage by
simulation, at and away from "no compensation needed".
"""
from __future__ import annotations

from dataclasses import dataclass
from itertools import product

import numpy as np
from scipy import stats

from evora_sim.ranking import order_key
from evora_sim.rules import start_vp_text

from .numbers import bracket

STEP = 0.5           # half-width of the central differences (VP)


@dataclass(frozen=True)
class Games:
    """Per game of one player count: final totals (whole VP), parts left and the half points the
    seats started with (V2: 1 or 0) per seat (G, n), the seed."""

    totals: np.ndarray
    parts: np.ndarray
    seed: np.ndarray          # seed index 0..C-1 per game
    half: np.ndarray | int = 0

    @property
    def players(self) -> int:
        return self.totals.shape[1]

    @property
    def seeds(self) -> int:
        return int(self.seed.max()) + 1 if len(self.seed) else 0

    @property
    def halves(self) -> np.ndarray:
        """The totals in half VP, the half points included: the final scoring's order on them."""
        return 2 * self.totals + self.half


def games_from_seats(seats, players: int, half=0, rotations: int | None = None) -> Games:
    """From a run's seats table (game_id, seat, score, parts_left) and its rules' half points per
    seat (``Rules.half_points``); game_id // rotations is the seed index (``rotations``: the
    run's, ``players`` under seat rotation, the default; 1 without), counted from the first seed
    present."""
    s = seats.sort_values(["game_id", "seat"], kind="stable")
    totals = s["score"].to_numpy().reshape(-1, players).astype(np.int64)
    parts = s["parts_left"].to_numpy().reshape(-1, players).astype(np.int64)
    seed = s["game_id"].to_numpy()[::players] // (players if rotations is None else rotations)
    seed = seed - (seed.min() if len(seed) else 0)
    return Games(totals, parts, seed.astype(np.int64), np.asarray(half, dtype=np.int64))


def winners(halves: np.ndarray, parts: np.ndarray) -> np.ndarray:
    """The winning seat of each game from its totals in half VP (``Games.halves``), by the final
    scoring's own order."""
    return np.argmax(order_key(halves // 2, halves % 2, parts, np.arange(halves.shape[1])), axis=1)


def expected_wins(games: Games, x) -> np.ndarray:
    """Each game's expected wins per seat (G, n) with extra starting VP ``x`` per seat, a value
    between two multiples of 0.5 being a coin flip between them."""
    u = 2 * np.asarray(x, dtype=float)          # in half VP
    base = np.floor(u)
    frac = u - base
    n = games.players
    out = np.zeros(games.totals.shape)
    rows = np.arange(len(games.totals))
    halves = games.halves
    for bits in product((0, 1), repeat=n):
        b = np.array(bits)
        prob = float(np.prod(np.where(b == 1, frac, 1 - frac)))
        if prob == 0:
            continue
        w = winners(halves + (base + b).astype(np.int64), games.parts)
        np.add.at(out, (rows, w), prob)
    return out


def seed_rates(games: Games, x) -> np.ndarray:
    """Per seed, each seat's expected win rate over the seed's games (C, n)."""
    w = expected_wins(games, x)
    c = games.seeds
    sums = np.stack([np.bincount(games.seed, weights=w[:, k], minlength=c) for k in range(games.players)], axis=1)
    counts = np.bincount(games.seed, minlength=c)[:, None]
    return sums / counts


def _full(x_rest: np.ndarray) -> np.ndarray:
    return np.r_[0.0, x_rest]


def _equations(games: Games, x_rest: np.ndarray) -> np.ndarray:
    n = games.players
    return seed_rates(games, _full(x_rest))[:, 1:].mean(axis=0) - 1.0 / n


def _jacobian(games: Games, x_rest: np.ndarray) -> np.ndarray:
    k = len(x_rest)
    jac = np.empty((k, k))
    for j in range(k):
        e = np.zeros(k)
        e[j] = STEP
        jac[:, j] = (_equations(games, x_rest + e) - _equations(games, x_rest - e)) / (2 * STEP)
    return jac


@dataclass(frozen=True)
class Compensation:
    """Starting VP over seat 0's per seat (seat 0: 0) that equalise the win rates, with intervals."""

    offsets: np.ndarray        # (n,), seat 0 = 0
    lo: np.ndarray
    hi: np.ndarray
    seeds: int
    games: int
    level: float
    converged: bool


def estimate(games: Games, alpha: float = 0.05, start=None, iterations: int = 60) -> Compensation:
    """Solve for the offsets (damped Newton, steps of at most 4 VP) and their sandwich intervals."""
    n = games.players
    x = np.zeros(n - 1) if start is None else np.asarray(start, dtype=float)[1:] - float(np.asarray(start)[0])
    converged = False
    for _ in range(iterations):
        f = _equations(games, x)
        if np.max(np.abs(f)) < 1e-6:
            converged = True
            break
        jac = _jacobian(games, x)
        try:
            step = np.linalg.solve(jac, -f)
        except np.linalg.LinAlgError:
            step = -f / np.maximum(np.abs(np.diag(jac)), 1e-3)
        step = np.clip(step, -4.0, 4.0)
        best, scale = np.max(np.abs(f)), 1.0
        while scale > 1 / 64:            # halve the step until the equations get closer to 0
            trial = x + scale * step
            if np.max(np.abs(_equations(games, trial))) < best:
                break
            scale /= 2
        x = x + scale * step
        if np.max(np.abs(scale * step)) < 1e-4:
            converged = np.max(np.abs(_equations(games, x))) < 1e-3
            break
    c = games.seeds
    psi = seed_rates(games, _full(x))[:, 1:] - 1.0 / n
    cov_s = np.atleast_2d(np.cov(psi, rowvar=False))
    jac = _jacobian(games, x)
    try:
        inv = np.linalg.inv(jac)
        cov = inv @ cov_s @ inv.T / c
        half = float(stats.t.isf(alpha / 2, c - 1)) * np.sqrt(np.maximum(np.diag(cov), 0))
    except np.linalg.LinAlgError:
        half = np.full(n - 1, np.inf)
    full = _full(x)
    return Compensation(full, _full(x - half), _full(x + half), c, len(games.totals), 1 - alpha, converged)


def playable_vp(games: Games, offsets: np.ndarray) -> np.ndarray:
    """Starting VP in steps of half a VP near ``offsets`` (each rounded down or up to a multiple of
    0.5) whose re-scored seat win rates are closest to 1/n (least sum of squares), shifted so the
    smallest is 0. Re-scoring is exact at these values, so the choice is made on the games'
    own outcomes."""
    n = games.players
    lo = np.floor(2 * np.asarray(offsets, dtype=float)) / 2
    best, best_err = None, np.inf
    for bits in product((0, 0.5), repeat=n - 1):
        cand = lo + np.r_[0, bits]
        err = float(((seed_rates(games, cand).mean(axis=0) - 1.0 / n) ** 2).sum())
        if err < best_err - 1e-15:
            best, best_err = cand, err
    return best - best.min()


def step(games: Games, played, alpha: float = 0.05) -> tuple[Compensation, np.ndarray]:
    """One estimate from games played with starting VP ``played``: the further offsets over seat
    0 with their intervals, and the half-VP starting VP they lead to (``played`` plus the nearest
    playable offsets, the smallest 0). An iteration and the final run of ``evora balance
    --compensation`` both take this step; they differ in the games they give it."""
    est = estimate(games, alpha)
    nxt = playable_vp(games, est.offsets) + np.asarray(played, dtype=float)
    return est, nxt - nxt.min()


def needed_line(label: str, rung: int, games: Games, played, alpha: float = 0.05) -> str:
    """What a rung where a compensation does not hold would need instead, in one line: the
    starting VP its own games, re-scored, say would equalise its seats, each over seat 0 with its
    interval. Why: a designer told only "does not hold at the top rung" cannot see whether the
    top players need a little more of the same or the opposite; two good players that need
    different compensations (docs: reports/p2_compensation_expert) are then shown side by side.
    An estimate from games played under ``played``, not played itself or confirmed."""
    est, nxt = step(games, played, alpha)
    over = np.asarray(played, dtype=float) - float(played[0])
    seats = ", ".join(f"seat {k} {bracket(over[k] + est.offsets[k], over[k] + est.lo[k], over[k] + est.hi[k], 1.0, ' VP', signed=True)}"
                      for k in range(1, games.players))
    return (f"  rung {rung + 1} ({label}) would need players.start_vp={start_vp_text(nxt)} instead "
            f"(over seat 0: {seats}; {100 * est.level:.4g}% intervals, {est.seeds:,} seeds)")
