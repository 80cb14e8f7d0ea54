"""The compiled decision of a built-in seat, whatever its kind, and the buffers it works in.

One place dispatches on the strategy kind, so the game loop (``evora_sim.batch.advance``)
knows nothing of how a seat decides, and the evaluation model (``compiled``) and the turn
planner (``planner``) do not import each other in a circle.
"""
import numpy as np
from numba import njit

from evora_sim.layout import STATE_SIZE
from evora_sim.rng import randbelow

from .compiled import KIND_HEURISTIC, KIND_PLANNER, heuristic, new_work
from .planner import new_plan_work, plan_choose


def new_buffers():
    """Every seat's scratch work, allocated once per batch and shared by the seats (each kind
    checks that what it finds there belongs to the decision at hand)."""
    return tuple(new_work(STATE_SIZE)) + new_plan_work()


@njit(cache=True, inline="always")
def choose(kind, W, p, s, R, legal, n, rs, work):
    """The action of seat ``p``'s compiled strategy of ``kind`` (weights: row ``p`` of ``W``)."""
    t, t2, legal2, memo, ps, pl, bk, bv, line, hk, key, val, stamp, plan, meta = work
    if kind == KIND_PLANNER:
        return plan_choose(s, R, W, legal, n, rs, t, legal2, ps, pl, bk, bv, line, hk, key, val, stamp, plan,
                           meta)
    if kind == KIND_HEURISTIC:
        return heuristic(s, R, W, legal, n, rs, t, t2, legal2, memo)
    return np.int64(legal[randbelow(rs, n)])
