"""Analysis tables from run folders, as pandas DataFrames.

Ties for the win do not exist in the tables: the engine breaks them (D18: fewer parts left,
then the later seat), so every game has exactly one winner and ``win`` counts that winner.
"""
from __future__ import annotations

import numpy as np
import pandas as pd

from evora_sim.runner import RunResult, open_run

from .stats import ALPHA, binom_p, chi_square_uniform, holm, mean_ci, wilson

SEAT_COLUMNS = ["game_id", "seat", "strategy", "score", "win"]


def load_seats(runs: list[RunResult], columns: list[str] | None = None) -> pd.DataFrame:
    """Seat rows of several runs, with the game's player count and seat-rotation flag."""
    frames = []
    for i, run in enumerate(runs):
        cols = columns or SEAT_COLUMNS
        seats = run.table("seats", columns=cols)
        seats = seats.assign(run=i, n_players=run.manifest["config"]["players"],
                             seat_rotation=run.manifest["config"]["seat_rotation"])
        frames.append(seats)
    return pd.concat(frames, ignore_index=True)


def seat_advantage(seats: pd.DataFrame) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Per player count and seat: win rate with its interval against the fair share 1/n,
    an exact binomial test per seat (Holm-corrected within each player count), and mean
    score and score margin with intervals. Second table: a chi-square test across seats."""
    rows, tests = [], []
    for n, grp in seats.groupby("n_players"):
        fair = 1.0 / n
        by_seat = grp.groupby("seat")
        wins = by_seat["win"].sum()
        games = by_seat["win"].size()
        lo, hi = wilson(wins.values, games.values)
        pvals = [binom_p(k, m, fair) for k, m in zip(wins.values, games.values)]
        adj = holm(pvals)
        margin = score_margin(grp, n)
        for i, seat in enumerate(wins.index):
            sel = grp["seat"] == seat
            m, mlo, mhi = mean_ci(grp.loc[sel, "score"])
            mm, mmlo, mmhi = mean_ci(margin[sel.values])
            rows.append({
                "n_players": n, "seat": int(seat), "games": int(games.iloc[i]),
                "wins": int(wins.iloc[i]), "win_rate": wins.iloc[i] / games.iloc[i],
                "ci_lo": lo[i], "ci_hi": hi[i], "fair_share": fair,
                "diff": wins.iloc[i] / games.iloc[i] - fair, "p_binom": pvals[i], "p_holm": adj[i],
                "significant": adj[i] < ALPHA,
                "mean_score": m, "score_lo": mlo, "score_hi": mhi,
                "mean_margin": mm, "margin_lo": mmlo, "margin_hi": mmhi,
                "seat_rotation": bool(grp["seat_rotation"].all()),
            })
        chi, p = chi_square_uniform(wins.values)
        tests.append({"n_players": n, "games": int(games.iloc[0]), "chi_square": chi,
                      "df": len(wins) - 1, "p": p, "significant": p < ALPHA})
    return pd.DataFrame(rows), pd.DataFrame(tests)


def score_margin(grp: pd.DataFrame, n: int) -> np.ndarray:
    """Own score minus the best other seat's score in the same game, aligned with ``grp``'s
    rows (every game has exactly ``n`` seat rows)."""
    order = np.lexsort((grp["seat"].values, grp["game_id"].values, grp["run"].values))
    scores = grp["score"].values[order].astype(np.int64).reshape(-1, n)
    top2 = np.sort(scores, axis=1)[:, -2:]
    other = np.where(scores == top2[:, 1:2], top2[:, 0:1], top2[:, 1:2])
    margin = np.empty(len(grp), dtype=np.int64)
    margin[order] = (scores - other).reshape(-1)
    return margin


def strategy_win_rates(seats: pd.DataFrame) -> pd.DataFrame:
    """Win rate of each strategy per player count, with interval and games."""
    rows = []
    for (n, strat), grp in seats.groupby(["n_players", "strategy"], observed=True):
        k, m = int(grp["win"].sum()), len(grp)
        lo, hi = wilson(k, m)
        rows.append({"n_players": n, "strategy": strat, "seat_games": m, "wins": k,
                     "win_rate": k / m, "ci_lo": float(lo), "ci_hi": float(hi), "fair_share": 1 / n})
    return pd.DataFrame(rows)


def game_shape(runs: list[RunResult]) -> pd.DataFrame:
    """Rounds and turns per game and end-trigger shares, per player count."""
    rows = []
    for run in runs:
        g = run.table("games", columns=["rounds", "turns", "end_trigger"])
        n = run.manifest["config"]["players"]
        shares = g["end_trigger"].value_counts(normalize=True)
        rows.append({"n_players": n, "games": len(g),
                     "rounds_mean": g["rounds"].mean(), "rounds_median": g["rounds"].median(),
                     "turns_mean": g["turns"].mean(),
                     "end_temple_full": float(shares.get("temple_full", 0.0)),
                     "end_out_of_stones": float(shares.get("out_of_stones", 0.0)),
                     "end_round_limit": float(shares.get("round_limit", 0.0))})
    return pd.DataFrame(rows)


def open_runs(paths) -> list[RunResult]:
    return [open_run(p) for p in paths]
