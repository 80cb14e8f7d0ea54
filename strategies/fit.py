"""Fitting a learned evaluation to a teacher's choices: a conditional logit over each turn.

Each turn is a group of end-of-turn positions (``strategies.imitation``); the model says the
teacher picks position j with probability proportional to exp(w . x_j), so only differences
within a turn matter, as they do to a planner that takes the best. The weights maximise the
mean log-likelihood of the teacher's picks, with a ridge penalty that pulls them towards a
starting point (the hand weights of ``cardheights``, restated: ``learned.from_hand``) rather
than towards zero: with few turns the fit stays near a player known to be sound, and the data
move it only where they speak. Features are put on one scale (their standard deviation) for the
penalty and the optimiser; the weights are returned on the features' own scale.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np


@dataclass(frozen=True)
class Fit:
    """A fitted weight vector and what the fit says of itself."""

    weights: np.ndarray          # on the features' scale
    log_likelihood: float        # mean over the turns, of the teacher's picks
    agreement: float             # share of turns whose best-valued position is the teacher's favourite
    turns: int
    iterations: int
    converged: bool


def _groups(group: np.ndarray):
    order = np.argsort(group, kind="stable")
    starts = np.r_[0, np.flatnonzero(np.diff(group[order])) + 1]
    return order, starts, np.diff(np.r_[starts, len(order)])


def conditional_logit(X: np.ndarray, group: np.ndarray, target: np.ndarray, start: np.ndarray,
                      ridge: float = 1e-4, max_iterations: int = 2000) -> Fit:
    """Weights under which the rows of each ``group`` are picked as ``target`` says: a share per
    row (the search player's visits, normalised here to sum to 1 in each group), or True for the
    one row picked; groups with nothing picked are left out. Pulled towards ``start`` by
    ``ridge`` (on the standardised scale)."""
    # lazy: `evora strategies` reaches this module (through experiments.train_runs), and scipy.optimize
    # would add 0.9 s to its 3.5 s (measured)
    from scipy.optimize import minimize

    X = np.asarray(X, dtype=np.float64)
    target = np.asarray(target, dtype=np.float64)
    group = np.asarray(group)
    mass = np.bincount(group, weights=target)
    keep = mass[group] > 0
    X, group, target = X[keep], group[keep], target[keep] / mass[group[keep]]
    order, starts, sizes = _groups(group)
    X, target = X[order], target[order]
    scale = X.std(axis=0)
    scale[scale == 0] = 1.0
    Z = X / scale
    u0 = np.asarray(start, dtype=np.float64) * scale
    n_turns = len(starts)
    z_chosen = target @ Z

    def objective(u):
        s = Z @ u
        peak = np.maximum.reduceat(s, starts)
        e = np.exp(s - np.repeat(peak, sizes))
        total = np.add.reduceat(e, starts)
        ll = target @ s - (peak + np.log(total)).sum()
        p = e / np.repeat(total, sizes)
        grad = z_chosen - p @ Z
        d = u - u0
        return -ll / n_turns + ridge * (d @ d) / 2, -grad / n_turns + ridge * d

    res = minimize(objective, u0, jac=True, method="L-BFGS-B", options={"maxiter": max_iterations})
    u = res.x
    s = Z @ u
    best = np.repeat(np.maximum.reduceat(s, starts), sizes)
    favourite = np.repeat(np.maximum.reduceat(target, starts), sizes)
    # the share of turns whose best-valued row is the teacher's favourite
    agreement = float(np.add.reduceat((s >= best) & (target >= favourite), starts).astype(bool).mean())
    return Fit(u / scale, float(-objective(u)[0] + ridge * ((u - u0) @ (u - u0)) / 2), agreement, n_turns,
               int(res.nit), bool(res.success))
