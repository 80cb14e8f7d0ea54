"""How a player plays the game, from run folders of one strategy in every seat: cards played from
hand, instant tiles taken, Temple uses, and the game's length, per game with 95% intervals over
games (each game is one independent unit). Issue 40 asks whether the expert plays the game the
search player plays; this prints the table that answers it, as Markdown.

    python scripts/behaviour_table.py runs/expert/teacher-2p runs/behaviour/expert-2p runs/behaviour/cardheights-2p
"""
from __future__ import annotations

import argparse
import math
import sys

import numpy as np

from analysis.numbers import ranged
from analysis.stats import mean_ci


def _mean_ci(x: np.ndarray) -> str:
    """A count per game with its range, through the report's own formatter: never below 0, never a
    zero-width range (a planner that never plays a card), more digits where two would print the
    estimate on a limit."""
    m, lo, hi = mean_ci(np.asarray(x, dtype=float))
    return ranged(m, lo, hi, scale=1.0, unit="", bounds=(0.0, math.inf)).replace("every seed", "every game")


def row(folder: str) -> dict:
    from evora_sim.runner import open_run

    run = open_run(folder)
    cfg = run.manifest["config"]
    if len(set(cfg["strategies"])) != 1:
        sys.exit(f"behaviour_table: {folder} holds {', '.join(cfg['strategies'])}; give runs of one strategy in "
                 "every seat")
    games = run.table("games", columns=["game_id", "turns"])
    cards = run.table("cards", columns=["game_id", "card", "plays", "temple_uses"])
    ids = games["game_id"].to_numpy()
    tile = cards["card"].astype(str).str.startswith("tile_").to_numpy()

    def per_game(mask, column):
        sums = cards[mask].groupby("game_id", observed=True)[column].sum()
        return sums.reindex(ids, fill_value=0).to_numpy()

    return {"strategy": cfg["strategies"][0], "players": int(cfg["players"]), "games": len(ids),
            "cards played a game": _mean_ci(per_game(~tile, "plays")),
            "instant tiles a game": _mean_ci(per_game(tile, "plays")),
            "Temple uses a game": _mean_ci(per_game(np.ones(len(cards), bool), "temple_uses")),
            "turns a game": _mean_ci(games["turns"].to_numpy())}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("runs", nargs="+", metavar="RUN", help="run folders, each one strategy in every seat")
    args = ap.parse_args()
    rows = [row(f) for f in args.runs]
    keys = list(rows[0])
    print("| " + " | ".join(keys) + " |")
    print("|" + "---|" * len(keys))
    for r in rows:
        print("| " + " | ".join(f"`{v}`" if k == "strategy" else (f"{v:,}" if isinstance(v, int) else str(v))
                                for k, v in r.items()) + " |")
    print("\nMeans per game (all seats together) with 95% intervals over games (t).")


if __name__ == "__main__":
    main()
