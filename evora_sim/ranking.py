"""The order of the seats at the end of a game, in one place: D18 (more VP; then fewer parts left;
then the later seat in turn order) with V2's half point of starting VP between the VP and the
parts (docs/RULES.md). The engine compiles it (``engine.final_scoring``, the search player's win
reward); the result tables' ranks and the seat compensation's re-scoring call it on arrays, so
every reader of "who is ahead" uses the same rule.

Plain arithmetic on purpose: the same function works on the engine's integers under numba and
elementwise on numpy arrays.
"""
from __future__ import annotations

import numpy as np

PARTS_ROOM = 1024        # more than any supply (supply.stones and supply.capitals are at most 99 each)
SEAT_ROOM = 8            # more than any player count


def order_key(total, half, parts_left, seat):
    """A number, larger the better the seat ends: ``total`` VP (whole), then ``half`` (1 when the
    seat's starting VP carry V2's half point, else 0), then fewer ``parts_left``, then the later
    ``seat``. No two seats of a game share a key. The total is widened to 64 bits first, so a
    table's 16-bit scores cannot overflow."""
    return ((np.int64(total) * 2 + half) * PARTS_ROOM + (PARTS_ROOM - 1 - parts_left)) * SEAT_ROOM + seat


# Which step of the order above put the winner ahead of the runner-up (the games table's
# ``decided_by``): more VP, V2's half point, fewer parts left, the later seat (D18), or the lot of
# a shared victory (V4, which stands for the parts and the seat).
DECIDED_BY = ("vp", "half_point", "parts_left", "seat_order", "lot")


def deciding_step(total, half, parts_left, shared=False):
    """The code into ``DECIDED_BY`` of each game (rows) from the winner's and the runner-up's
    ``total``, ``half`` and ``parts_left`` (arrays of shape (games, 2), the winner first);
    ``shared``: the rules share a victory tied on VP (V4)."""
    total, half, parts_left = (np.asarray(a) for a in (total, half, parts_left))
    tied_steps = np.where(shared, 4, np.where(parts_left[:, 0] != parts_left[:, 1], 2, 3))
    return np.where(total[:, 0] != total[:, 1], 0, np.where(half[:, 0] != half[:, 1], 1, tied_steps)).astype(np.int8)

