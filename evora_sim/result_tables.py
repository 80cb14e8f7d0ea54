"""Batch arrays -> the four result tables (games, seats, cards, spaces) as pandas DataFrames.

Column names and meanings are the contract analysts read (README, "Result tables"). Ranks
follow the final scoring's order (``ranking.order_key``: D18, with V2's half point of starting VP
between the VP and the parts), so the rank-1 seat is the game's winner.
"""
from __future__ import annotations

import numpy as np
import pandas as pd

from . import layout as L
from . import metrics as M
from .gameloop import GAME_COLUMNS, SEAT_COLUMNS, BatchResult
from .ranking import DECIDED_BY, deciding_step, order_key

CARD_NAMES = L.EFFECT_NAMES + L.ITILE_NAMES
TABLES = ("games", "seats", "cards", "spaces")


def ranks(score: np.ndarray, parts_left: np.ndarray, half=0, lot=None) -> np.ndarray:
    """Rank 1..n per game (rows) in the final scoring's order (``half``: per seat, 1 when its
    starting VP carry V2's half point); no two seats share a rank. ``lot``: per game, the lot of a
    shared victory (V4, ``engine.draw_lot``), whose order then stands for the parts and the seat."""
    n = score.shape[1]
    if lot is None:
        key = order_key(score, np.asarray(half, dtype=np.int64), parts_left.astype(np.int64), np.arange(n)[None, :])
    else:
        place = (np.asarray(lot, dtype=np.int64)[:, None] >> (2 * np.arange(n))[None, :]) & 3
        key = order_key(score, np.asarray(half, dtype=np.int64), 0, place)
    return 1 + (key[:, None, :] > key[:, :, None]).sum(axis=2)


def decided_by(score: np.ndarray, parts_left: np.ndarray, rank: np.ndarray, half=0, shared: bool = False):
    """Each game's ``DECIDED_BY`` code: the step of the final scoring's order that put its winner
    (rank 1) ahead of the runner-up (rank 2)."""
    order = np.argsort(rank, axis=1)[:, :2]
    half = np.broadcast_to(np.asarray(half, dtype=np.int64), score.shape)
    first_two = [np.take_along_axis(a, order, axis=1) for a in (score, half, parts_left)]
    return deciding_step(*first_two, shared=shared)


def batch_tables(res: BatchResult, game_ids: np.ndarray, rotation: int,
                 seat_strategies: list[str], half=0, shared: bool = False) -> dict[str, pd.DataFrame]:
    """The four tables of a batch; ``half`` as in :func:`ranks` (from ``Rules.half_points``);
    ``shared``: the rules share a victory tied on VP (V4, ``Rules.shared_victory``)."""
    g, n, _ = res.seats.shape
    col = {name: i for i, name in enumerate(GAME_COLUMNS)}
    scol = {name: i for i, name in enumerate(SEAT_COLUMNS)}
    score = res.seats[:, :, scol["score"]]
    left = res.seats[:, :, scol["parts_left"]]
    rank = ranks(score, left, half, res.games[:, col["tie_lot"]] if shared else None)
    games = pd.DataFrame({
        "game_id": game_ids.astype(np.int64),
        "seed": res.seeds.astype(np.int64),
        "n_players": np.full(g, n, dtype=np.int8),
        "rotation": np.full(g, rotation, dtype=np.int8),
        "rounds": res.games[:, col["rounds"]].astype(np.int16),
        "turns": res.games[:, col["turns"]].astype(np.int16),
        "end_trigger": pd.Categorical.from_codes(res.games[:, col["end_trigger"]], categories=L.END_NAMES),
        "winner_seat": res.games[:, col["winner_seat"]].astype(np.int8),
        # the recorded metrics' columns (evora_sim.metrics: what each one means is in its module)
        **{c.name: res.games[:, col[c.name]].astype(c.dtype) for c in M.columns("games")},
        "decided_by": pd.Categorical.from_codes(decided_by(score, left, rank, half, shared), categories=DECIDED_BY),
    })
    if res.actions is not None:             # recorded (runner.simulate's record_actions): the whole game
        steps = np.minimum(res.games[:, col["decisions"]], res.actions.shape[1])
        games["actions"] = [res.actions[i, :steps[i]].astype(np.int16) for i in range(g)]
    seats = {
        "game_id": np.repeat(game_ids.astype(np.int64), n),
        "seat": np.tile(np.arange(n, dtype=np.int8), g),
        "strategy": pd.Categorical(np.tile(np.array(seat_strategies, dtype=object), g)),
        "score": score.reshape(-1).astype(np.int16),
        "rank": rank.reshape(-1).astype(np.int8),
        "win": (rank == 1).reshape(-1),
    }
    for name in L.BREAKDOWN_NAMES:
        seats[name] = res.seats[:, :, scol[name]].reshape(-1).astype(np.int16)
    seats["parts_left"] = left.reshape(-1).astype(np.int8)
    for c in M.columns("seats"):
        seats[c.name] = res.seats[:, :, scol[c.name]].reshape(-1).astype(c.dtype)
    seats = pd.DataFrame(seats)

    plays = res.stats[:, :, L.S_PLAYS:L.S_PLAYS + L.NTRACK]
    vp = res.stats[:, :, L.S_PLAY_VP:L.S_PLAY_VP + L.NTRACK]
    temple = np.zeros_like(plays)
    temple[:, :, :L.NEFF] = res.stats[:, :, L.S_TEMPLE_USES:L.S_TEMPLE_USES + L.NEFF]
    gi, si, ci = np.nonzero((plays > 0) | (temple > 0))
    cards = pd.DataFrame({
        "game_id": game_ids[gi].astype(np.int64),
        "seat": si.astype(np.int8),
        "card": pd.Categorical.from_codes(ci, categories=CARD_NAMES),
        "plays": plays[gi, si, ci].astype(np.int16),
        "vp": vp[gi, si, ci].astype(np.int16),
        "temple_uses": temple[gi, si, ci].astype(np.int16),
        **{c.name: res.states[gi, si, j, ci].astype(c.dtype) for j, c in enumerate(M.columns("cards"))},
    })
    uses = res.stats[:, :, L.S_SPACE_USES:L.S_SPACE_USES + L.MAXS]
    gi, si, xi = np.nonzero(uses > 0)
    spaces = pd.DataFrame({
        "game_id": game_ids[gi].astype(np.int64),
        "seat": si.astype(np.int8),
        "space": xi.astype(np.int8),
        "uses": uses[gi, si, xi].astype(np.int16),
    })
    return {"games": games, "seats": seats, "cards": cards, "spaces": spaces}


def concat_tables(parts: list[dict[str, pd.DataFrame]]) -> dict[str, pd.DataFrame]:
    return {name: pd.concat([p[name] for p in parts], ignore_index=True) for name in TABLES}
