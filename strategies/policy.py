"""The compiled decision of a policy (random, or a heuristic valuing one decision or planning
its turn), and the buffers it works in.

A policy decides from the position alone; the search player (``mcts``) plays policies in its
rollouts, and ``decide`` dispatches every kind. Kept apart so that the evaluation model
(``compiled``), the turn planner (``planner``) and the search do not import each other in a
circle.
"""
import numpy as np
from numba import njit

from evora_sim.layout import STATE_SIZE
from evora_sim.rng import randbelow

from .compiled import KIND_HEURISTIC, KIND_PLANNER, heuristic, new_work
from .planner import forget_plan, new_cache_generation, new_plan_work, plan_choose


# a policy's work: compiled.new_work's buffers (two states, the legal actions, the memo), then the
# planner's ``PlanWork`` at this index
PLANNER_WORK = 4


def new_policy_work():
    """A policy's scratch work, allocated once per batch and shared by the seats (each kind
    checks that what it finds there belongs to the decision at hand)."""
    return tuple(new_work(STATE_SIZE)) + (new_plan_work(),)


def plan_meta(work):
    """The turn planner's meta array (its plan's key and its counters) in a policy's work."""
    return work[PLANNER_WORK].meta


@njit(cache=True, inline="always")
def policy_choose(kind, W, p, s, R, legal, n, rs, work):
    """The action of seat ``p``'s compiled strategy of ``kind`` (weights: row ``p`` of ``W``)."""
    t, t2, legal2, memo, planner = work
    if kind == KIND_PLANNER:
        return plan_choose(s, R, W, legal, n, rs, t, legal2, planner)
    if kind == KIND_HEURISTIC:
        return heuristic(s, R, W, legal, n, rs, t, t2, legal2, memo)
    return np.int64(legal[randbelow(rs, n)])


@njit(cache=True, inline="always")
def forget_plans(work):
    """No plan of an earlier decision is followed at the next one (see ``planner.forget_plan``)."""
    forget_plan(work[PLANNER_WORK].meta)


@njit(cache=True, inline="always")
def new_rollout_cache(work):
    """A search begins: the turn planners playing its rollouts in ``work`` reuse the plans they
    made at a visible position earlier in this search, and none from before it
    (``planner.new_plan_cache``)."""
    new_cache_generation(work[PLANNER_WORK].meta)
