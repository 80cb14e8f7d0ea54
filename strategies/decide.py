"""The compiled decision of a built-in seat, whatever its kind, and the buffers it works in.

One place dispatches on the strategy kind, so the game loop (``evora_sim.gameloop.advance``)
knows nothing of how a seat decides.
"""
from numba import njit

from .compiled import KIND_MCTS, NF
from .mcts import ROOT_TURN, X_ROOT, forget_tree, mcts_choose, new_search_work
from .policy import new_policy_work, policy_choose
from .turn_search import forget_turn, new_turn_work, turn_choose


def new_buffers(tree_nodes: int = 1, turn_tree=(1, 1)):
    """Every seat's scratch work, allocated once per batch: a policy's, the search's with
    room for ``tree_nodes`` nodes (the largest search budget at the table, plus one), and the
    search over whole turns' with a tree of ``turn_tree`` (nodes, candidate turns a node)."""
    return new_policy_work(), new_search_work(tree_nodes), new_turn_work(*turn_tree)


@njit(cache=True, inline="always")
def new_game(work):
    """Nothing a seat kept from a decision of an earlier game is used in the next one, so a game
    is the same whichever games the batch played before it."""
    forget_tree(work[1])
    forget_turn(work[2])


@njit(cache=True, inline="always")
def choose(kind, W, p, s, R, legal, n, rs, work):
    """The action of seat ``p``'s compiled strategy of ``kind`` (weights and options: row ``p``
    of ``W``)."""
    policy_work, search_work, turn_work = work
    if kind == KIND_MCTS:
        if W[p, NF + X_ROOT] == ROOT_TURN:
            return turn_choose(s, R, W, p, legal, n, rs, search_work, turn_work)
        return mcts_choose(s, R, W, p, legal, n, rs, search_work)
    return policy_choose(kind, W, p, s, R, legal, n, rs, policy_work)
