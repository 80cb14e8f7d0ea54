"""A game you can see: the sample game of a report (:mod:`evora_sim.sample_game`: game 0 of the
run, replayed by the command that makes the report) drawn as a picture: the Temple at the end, the
Construction Site loop with the workers, each seat's score by round.

DominionSim's "sample game" is the precedent: a reader who sees one real game understands the
numbers better. The game is played by the command, not here: the statistics layer reads what the
runs recorded and plays no games (the layers are in ``.importlinter``).
"""
from __future__ import annotations

import matplotlib.pyplot as plt
from matplotlib.patches import Polygon, Rectangle
import numpy as np

from evora_sim import layout as L

from .plots import COLOURS, tight_layout

# ---------------------------------------------------------------------------------------------
# the picture
# ---------------------------------------------------------------------------------------------
SPACE_FILL = {"governor": "#f1dc8a", "emperor": "#cdb6e6", "architect": "#b9d3ee", "centurion": "#f2b9b3"}
ACTION_SHORT = {"build_two_stones": "2S", "build_one_stone": "1S", "build_capital": "Cap",
                "build_stone_and_white": "S+W", "build_capital_and_white": "C+W",
                "build_stone_then_white": "S/W", "emperor_tile": "Emp", "draw2": "D2",
                "centurion": "Cen", "temple": "Tmp"}
WHITE_FILL = "#fbfbfb"


def _pb(p: int) -> int:
    return L.PLAYERS + p * L.PSTRIDE


def draw(game):
    """The picture of ``game`` (an :class:`evora_sim.sample_game.SampleGame`)."""
    s, R, n = game.state, game.rules.packed, game.players
    seat_colour = [COLOURS[p % len(COLOURS)] for p in range(n)]
    fig = plt.figure(figsize=(12, 7.2))
    grid = fig.add_gridspec(2, 2, width_ratios=[1.55, 1], height_ratios=[1.15, 1])
    temple, site, line = fig.add_subplot(grid[0, 0]), fig.add_subplot(grid[0, 1]), fig.add_subplot(grid[1, :])

    # the Temple: each column's parts bottom-up, capitals on top, majority workers, Emperor tiles
    ncols = int(s[L.G_NCOLS])
    for c in range(ncols):
        h = int(s[L.COL_H + c])
        for i in range(h):
            o = int(s[L.COL_PART + c * L.COLPARTS + i])
            fill = WHITE_FILL if o == L.WHITE else seat_colour[o]
            if i == 4:                           # the capital
                temple.add_patch(Polygon([(c - 0.45, i), (c + 0.45, i), (c + 0.45, i + 0.55), (c, i + 0.9),
                                          (c - 0.45, i + 0.55)], closed=True, fc=fill, ec="black", lw=0.8))
            else:
                temple.add_patch(Rectangle((c - 0.38, i), 0.76, 0.92, fc=fill, ec="#555555", lw=0.8))
        holder = int(s[L.COL_HOLDER + c])
        if holder >= 0:
            temple.plot([c], [5.35], marker="o", ms=9, color=seat_colour[holder], mec="black")
        temple.text(c, -0.35, str(c), ha="center", va="top", fontsize=7, color="#555555")
    for q in range(n):
        for k in range(2):
            c = int(s[_pb(q) + L.P_TPOS + k])
            if c >= 0:
                value = int(R[L.R_EMP_VALUES + int(s[_pb(q) + L.P_TVAL + k])])
                temple.add_patch(Rectangle((c - 0.32, -1.55), 0.64, 0.62, fc=seat_colour[q], ec="black", lw=0.8))
                temple.text(c, -1.24, str(value), ha="center", va="center", fontsize=8, color="white",
                            fontweight="bold")
    temple.set_xlim(-0.8, ncols - 0.2)
    temple.set_ylim(-1.8, 5.9)
    temple.set_xticks([])
    temple.set_yticks([0.46, 1.46, 2.46, 3.46, 4.4], ["1", "2", "3", "4", "capital"], fontsize=7)
    temple.set_ylabel("height")
    temple.set_title("The Temple at the end: stones by owner (white: white stones), capitals, "
                     "majority workers (dots), Emperor tiles (squares, value)", fontsize=8.5)
    for side in ("top", "right", "bottom"):
        temple.spines[side].set_visible(False)

    # the Construction Site: the loop clockwise from the top left, workers and the Centurion
    spaces = game.rules.data["board"]["spaces"]
    m = len(spaces)
    angle = np.deg2rad(135) - 2 * np.pi * np.arange(m) / m
    xs, ys = np.cos(angle), np.sin(angle)
    for i, sp in enumerate(spaces):
        site.add_patch(Rectangle((xs[i] - 0.14, ys[i] - 0.14), 0.28, 0.28, fc=SPACE_FILL.get(sp["colour"], "#dddddd"),
                                 ec="#666666", lw=0.8))
        site.text(xs[i], ys[i] + 0.05, ACTION_SHORT.get(sp["action"], sp["action"][:3]), ha="center",
                  va="center", fontsize=6.5)
        site.text(xs[i], ys[i] - 0.08, str(i), ha="center", va="center", fontsize=5.5, color="#555555")
    for q in range(n):
        for k in range(2):
            x = int(s[_pb(q) + L.P_WPOS + k])
            if 0 <= x < m:
                site.plot([xs[x] * 1.27], [ys[x] * 1.27], marker="o", ms=10, color=seat_colour[q], mec="black")
    cent = int(s[L.G_CENT_POS])
    if 0 <= cent < m:
        site.plot([xs[cent] * 1.27], [ys[cent] * 1.27], marker="^", ms=11, color="#888888", mec="black")
    site.text(0, 0.12, "2S 1S: stones   Cap: capital\nS+W C+W S/W: with white\nEmp: Emperor tile  D2: draw 2\n"
              "Cen: Centurion  Tmp: Temple card\n(triangle: the Centurion)", ha="center", va="center", fontsize=6.5,
              color="#444444")
    site.set_xlim(-1.5, 1.5)
    site.set_ylim(-1.5, 1.5)
    site.set_aspect("equal")
    site.axis("off")
    site.set_title("The Construction Site at the end (fill: space colour)", fontsize=8.5)

    # each seat's score after each round; the last point is the final scoring
    rounds = np.arange(1, len(game.scores) + 1)
    for p in range(n):
        line.plot(rounds, game.scores[:, p], marker="o", ms=3, color=seat_colour[p],
                  label=f"seat {p}: {game.names[p]}")
    if len(rounds) > 1:
        line.axvspan(rounds[-1] - 0.5, rounds[-1] + 0.5, color="#eeeeee", zorder=0)
        line.text(rounds[-1], line.get_ylim()[1], "final\nscoring", ha="center", va="top", fontsize=7)
    line.set_xlabel("round (the last point: after the final scoring)")
    line.set_ylabel("score (VP)")
    line.legend(fontsize=8, loc="upper left")
    line.grid(alpha=0.3)
    winner = int(s[L.G_WINNER])
    fig.suptitle(f"A sample game: {n} players, seed {game.seed}; seat {winner} ({game.names[winner]}) wins "
                 f"with {int(game.scores[-1, winner])} VP after {len(rounds)} rounds")
    tight_layout(fig)
    return fig
