"""Report figures (matplotlib, Agg): each function draws one figure from an analysis table and
returns it; ``save`` writes PNG and SVG. Labels carry units; intervals are 95%."""
from __future__ import annotations

from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402


def seat_win_rates(adv: pd.DataFrame):
    counts = sorted(adv["n_players"].unique())
    fig, axes = plt.subplots(1, len(counts), figsize=(4 * len(counts), 3.4), squeeze=False)
    for ax, n in zip(axes[0], counts):
        d = adv[adv["n_players"] == n].sort_values("seat")
        x = d["seat"].values
        y = 100 * d["win_rate"].values
        err = np.vstack([y - 100 * d["ci_lo"].values, 100 * d["ci_hi"].values - y])
        ax.bar(x, y, color="#4c72b0", alpha=0.8)
        ax.errorbar(x, y, yerr=err, fmt="none", ecolor="black", capsize=4)
        ax.axhline(100 / n, color="#c44e52", linestyle="--", label=f"fair share {100 / n:.1f}%")
        ax.set_xticks(x)
        ax.set_xlabel("seat (0 = first player)")
        ax.set_ylabel("win rate (%)")
        ax.set_title(f"{n} players ({int(d['games'].iloc[0]):,} games)")
        ax.legend(loc="lower right", fontsize=8)
    fig.suptitle("Win rate by seat, 95% Wilson intervals")
    fig.tight_layout()
    return fig


def score_by_seat(seats: pd.DataFrame):
    counts = sorted(seats["n_players"].unique())
    fig, axes = plt.subplots(1, len(counts), figsize=(4 * len(counts), 3.4), squeeze=False)
    for ax, n in zip(axes[0], counts):
        d = seats[seats["n_players"] == n]
        data = [d.loc[d["seat"] == s, "score"].values for s in range(n)]
        ax.boxplot(data, showfliers=False)
        ax.set_xticks(range(1, n + 1), [str(s) for s in range(n)])
        ax.set_xlabel("seat (0 = first player)")
        ax.set_ylabel("final score (VP)")
        ax.set_title(f"{n} players")
    fig.suptitle("Final score by seat (boxes: quartiles; whiskers: 1.5 IQR)")
    fig.tight_layout()
    return fig


def game_length(games_by_n: dict[int, np.ndarray]):
    fig, ax = plt.subplots(figsize=(6, 3.4))
    for n, rounds in sorted(games_by_n.items()):
        bins = np.arange(rounds.min(), rounds.max() + 2) - 0.5
        ax.hist(rounds, bins=bins, alpha=0.5, density=True, label=f"{n} players")
    ax.set_xlabel("rounds per game")
    ax.set_ylabel("share of games")
    ax.set_title("Game length")
    ax.legend()
    fig.tight_layout()
    return fig


def save(fig, folder: Path, name: str) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    png = folder / f"{name}.png"
    fig.savefig(png, dpi=110)
    fig.savefig(folder / f"{name}.svg")
    plt.close(fig)
    return png
