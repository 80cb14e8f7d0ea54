"""The spec of the search player, ``mcts(iterations=1000, c=..., rollout=SPEC, reward=...,
horizon=..., leaf=..., finish=..., reuse=..., root=..., candidates=..., depth=..., others=...)``:
parsed, checked and named here, for :mod:`strategies.registry`.

The budget is counted in iterations, never in time, so a game stays a function of its seed.
"""
from __future__ import annotations

import math

from . import values
from .builtin import Strategy
from .compiled import KIND_MCTS, KIND_RANDOM
from .errors import StrategyError
from .features import NL
from .mcts import (
    FINISHES, HORIZON_AUTO, LEAVES, NX, OTHERS, REUSES, REWARDS, ROOTS, X_CANDIDATES, X_ITERATIONS, X_REUSE, X_ROOT,
    tree_bytes, tree_size,
)
from .planner import TOP_MAX
from .turn_search import turn_tree_bytes, turn_tree_nodes

NAME = "mcts"
DEFAULTS = {"iterations": 1000, "c": 0.7, "rollout": "cardheights", "reward": "margin", "horizon": "auto",
            "leaf": "eval", "finish": "rollout", "reuse": "turn", "root": "turn", "candidates": 8, "depth": 0, "others": "tree"}
OPTIONS = tuple(DEFAULTS)
TURN_ONLY = ("candidates", "depth", "others")     # options of the tree over whole turns (root=turn) alone
# what a decision tree, which has no use for them, holds for them: one fixed value each, so two
# decision trees that search alike compare and read back equal
DECISION_IDLE = {key: DEFAULTS[key] for key in TURN_ONLY}
# leaf, finish and root=turn work with the rollout's weights; a random rollout has none, so
# without them given it scores the totals, plays the turn out at random and searches decisions
RANDOM_DEFAULTS = {"leaf": "score", "finish": "rollout", "root": "decision"}
MAX_ITERATIONS = 1_000_000       # tree_bytes(10**6) ~ 76 MB; reuse=turn 8 times that
MAX_DEPTH = 64
DESCRIPTION = ("Searches: Monte Carlo tree search over the compiled engine, each iteration on a fresh "
               "sample of the unseen stack order; by default a tree over its own whole turns, the turn planner's "
               "best ones at each, every seat's turn a node where it chooses for itself.")
HELP = {
    "iterations": f"search iterations per decision, 1 to {MAX_ITERATIONS:,} (a decision with one legal "
                  "action is not searched)",
    "c": "exploration constant of the tree policy (UCB), a finite number >= 0",
    "rollout": "the policy that plays a position out: random or a built-in spec, e.g. greedy(plan=action)",
    "reward": "win (1 for the winner), margin (0.5 + 0.5 tanh(lead / 10 VP)) or rank (share of seats beaten)",
    "horizon": "turns after the root a rollout plays before it is scored (see leaf), 0 to 10,000: 0 plays to "
               "the end, auto is two rounds and a turn (2n + 1 turns at n players)",
    "leaf": "how a rollout cut at the horizon is scored: score (the totals if the game ended then) or eval "
            "(each seat's standing as the rollout policy values it; needs a built-in heuristic rollout)",
    "finish": "who plays the rest of the turn in progress in each iteration: rollout (the rollout policy) or "
              "plan (the rollout's weights planning the whole turn, as plan=turn; needs a heuristic rollout)",
    "reuse": "none (every decision searched from a new tree) or turn (the next decision of the seat in the "
             "same turn, if no card was drawn, continues the subtree of the action taken, adding its iterations)",
    "root": "decision (a tree over the decisions one at a time) or turn (a tree over the seat's own whole turns, "
            "the turn planner's best at each node, see candidates and depth; needs a built-in heuristic rollout)",
    "candidates": f"with root=turn, how many of the turn planner's best distinct turns are searched at each node "
                  f"of the tree, 1 to {TOP_MAX}",
    "depth": f"with root=turn, how many turns of its own the search's tree holds, 0 to {MAX_DEPTH}: 1 chooses "
             "among the candidates of the turn at hand only, 0 grows the tree as far as the horizon reaches",
    "others": "with root=turn, who plays the other seats' turns inside the tree: rollout (the rollout policy; the "
              "tree holds the seat's own turns) or tree (nodes of their own, each seat choosing among its planner's "
              "best turns for its own reward, max^n; depth then counts every seat's turns)",
}


def split_options(spec: str, body: str) -> list[tuple[str, str]]:
    """``key=value`` pairs of ``body``, split at its top-level commas (a rollout spec may hold
    parentheses and commas of its own)."""
    parts, depth, start = [], 0, 0
    for i, ch in enumerate(body + ","):
        if ch == "(":
            depth += 1
        elif ch == ")":
            depth -= 1
        elif ch == "," and depth == 0:
            parts.append(body[start:i].strip())
            start = i + 1
    out = []
    for part in parts:
        if not part:
            if body.strip():
                raise StrategyError(f"strategy {spec!r}: empty option between commas")
            continue
        key, eq, value = part.partition("=")
        if not eq or not key.strip():
            raise StrategyError(f"strategy {spec!r}: {part!r} is not option=value "
                                f"(options: {', '.join(OPTIONS)})")
        out.append((key.strip().lower(), value.strip()))
    return out


def _whole(spec, key, value, lo, hi) -> int:
    return values.whole(value, f"strategy {spec!r}: {key}", lo, hi, StrategyError, expected=f"{key}: {HELP[key]}")


def parse_mcts(spec: str, body: str | None, parse_spec) -> Strategy:
    """The search player of ``mcts(...)``; ``parse_spec`` resolves the rollout spec."""
    given = dict(DEFAULTS)
    seen = set()
    for key, value in split_options(spec, body or ""):
        if key not in DEFAULTS:
            raise StrategyError(f"strategy {spec!r}: unknown option {key!r} (mcts takes: {', '.join(OPTIONS)})")
        if key in seen:
            raise StrategyError(f"strategy {spec!r}: option {key!r} given twice")
        seen.add(key)
        given[key] = value
    iterations = _whole(spec, "iterations", given["iterations"], 1, MAX_ITERATIONS)
    horizon = HORIZON_AUTO if str(given["horizon"]).lower() == "auto" else \
        _whole(spec, "horizon", given["horizon"], 0, 10_000)
    c = _finite(spec, "c", given["c"])
    reward = _one_of(spec, "reward", given["reward"], REWARDS)
    rollout = _rollout(spec, str(given["rollout"]), parse_spec)
    if rollout.kind == KIND_RANDOM:          # no weights to value or plan with: what the defaults become
        given.update({k: v for k, v in RANDOM_DEFAULTS.items() if k not in seen})
    leaf = _one_of(spec, "leaf", given["leaf"], LEAVES)
    finish = _one_of(spec, "finish", given["finish"], FINISHES)
    reuse = _one_of(spec, "reuse", given["reuse"], REUSES)
    root = _one_of(spec, "root", given["root"], ROOTS)
    candidates = _whole(spec, "candidates", given["candidates"], 1, TOP_MAX)
    depth = _whole(spec, "depth", given["depth"], 0, MAX_DEPTH)
    others = _one_of(spec, "others", given["others"], OTHERS)
    if root == "decision":
        idle = [key for key in TURN_ONLY if key in seen]
        if idle:
            raise StrategyError(f"strategy {spec!r}: {idle[0]}= does nothing with root=decision, which searches "
                                f"decisions one at a time ({idle[0]}: {HELP[idle[0]]})")
        candidates, depth, others = DECISION_IDLE.values()
    for key, value, uses in (("leaf", leaf, "values positions"), ("finish", finish, "plans"),
                             ("root", root, "plans")):
        if value != RANDOM_DEFAULTS[key] and rollout.kind == KIND_RANDOM:
            raise StrategyError(f"strategy {spec!r}: {key}={value} {uses} with the rollout's weights, and "
                                f"rollout=random has none ({key}: {HELP[key]})")
    options = {"iterations": iterations, "c": c, "rollout": rollout.name, "reward": reward,
               "horizon": "auto" if horizon == HORIZON_AUTO else horizon,
               "leaf": leaf, "finish": finish, "reuse": reuse, "root": root}
    if root == "turn":
        options.update({"candidates": candidates, "depth": depth, "others": others})
    # the full spec, every option written: a table stays readable when the defaults change
    name = f"{NAME}({', '.join(f'{k}={_text(v)}' for k, v in options.items())})"
    search = (float(iterations), c, float(rollout.kind), float(REWARDS.index(reward)), float(horizon),
              float(LEAVES.index(leaf)), float(FINISHES.index(finish)), float(REUSES.index(reuse)),
              float(ROOTS.index(root)), float(candidates), float(depth), float(OTHERS.index(others)))
    return Strategy(name, KIND_MCTS, rollout.weights, DESCRIPTION, search=search, rollout=rollout.name,
                    learned=rollout.learned)


def _finite(spec, key, value) -> float:
    """A finite number >= 0."""
    return values.number(value, f"strategy {spec!r}: {key}", 0.0, math.inf, StrategyError,
                         expected=f"{key}: {HELP[key]}")


def _one_of(spec, key, value, allowed) -> str:
    x = str(value).lower()
    if x not in allowed:
        raise StrategyError(f"strategy {spec!r}: {key}={value!r} is not allowed ({key} is one of: "
                            f"{', '.join(allowed)})")
    return x


def _text(v) -> str:
    if isinstance(v, float):
        return str(int(v)) if v.is_integer() else repr(v)
    return str(v)


def _rollout(spec: str, text: str, parse_spec) -> Strategy:
    """The rollout policy: random or a built-in (with inline weights or plan), never a file,
    a Python strategy or another search player (a search inside every rollout step would cost
    iterations squared)."""
    if not text:
        raise StrategyError(f"strategy {spec!r}: rollout= needs a spec ({HELP['rollout']})")
    head = text.split("(", 1)[0].strip().lower()
    if ":" in text.split("(", 1)[0]:
        raise StrategyError(f"strategy {spec!r}: rollout={text!r} is not a built-in ({HELP['rollout']})")
    if head == NAME:
        raise StrategyError(f"strategy {spec!r}: rollout={text!r} is a search player; a rollout is played "
                            f"by a policy ({HELP['rollout']})")
    try:
        rollout = parse_spec(text)
    except StrategyError as exc:
        raise StrategyError(f"strategy {spec!r}: rollout: {exc}") from None
    if not isinstance(rollout, Strategy) or not (rollout.kind == KIND_RANDOM or rollout.is_heuristic):
        raise StrategyError(f"strategy {spec!r}: rollout={text!r} is not a built-in ({HELP['rollout']})")
    return rollout


def search_row(strategy: Strategy) -> list[float]:
    """The options columns of a seat's row of W (zeros for a policy)."""
    return list(strategy.search) if strategy.search else [0.0] * NX


def learned_row(strategy: Strategy, n: int) -> list[float]:
    """The learned evaluation's columns of a seat's row of W at ``n`` players: the flag, then its
    weights, its replies and from where in the game it looks ahead (zeros for a hand-weighted
    strategy). A search player's are its rollout's, replies none: a rollout plans one ply."""
    if not strategy.learned:
        return [0.0] * (NL + 4)
    weights = strategy.learned_for(n)
    if weights is None:
        have = ", ".join(str(k) for k, _ in strategy.learned)
        raise StrategyError(f"strategy {strategy.name!r} has no learned weights for {n} players (it has: {have}); "
                            f"train them with evora train --players {n}")
    return [1.0, *weights, float(strategy.replies_for(n)), float(strategy.ahead_from_for(n))]


def resolved_search(strategy: Strategy, resolved) -> dict:
    """A search player in plain data for manifests (``resolved`` describes its rollout)."""
    it, c, _, reward, horizon, leaf, finish, reuse, root, candidates, depth, others = strategy.search
    return {"kind": "mcts", "iterations": int(it), "c": c, "reward": REWARDS[int(reward)],
            "horizon": "auto" if horizon == HORIZON_AUTO else int(horizon), "leaf": LEAVES[int(leaf)],
            "finish": FINISHES[int(finish)], "reuse": REUSES[int(reuse)], "root": ROOTS[int(root)],
            "candidates": int(candidates), "depth": int(depth), "others": OTHERS[int(others)], "rollout": strategy.rollout,
            "rollout_resolved": resolved(_rollout_of(strategy)), "tree_bytes": search_tree_bytes(strategy)}


def search_tree_size(strategy: Strategy) -> int:
    """Nodes the search tree of a search player needs (``mcts.tree_size``)."""
    return tree_size(*_tree_budget(strategy))


def search_tree_bytes(strategy: Strategy) -> int:
    """Memory of a search player's trees: the decision tree (``mcts.tree_bytes``; with
    root=turn it searches the setup placements) and with root=turn the tree over whole turns
    (``turn_search.turn_tree_bytes``)."""
    out = tree_bytes(*_tree_budget(strategy))
    if is_turn_search(strategy):
        out += turn_tree_bytes(int(strategy.search[X_ITERATIONS]), int(strategy.search[X_CANDIDATES]))
    return out


def is_turn_search(strategy: Strategy) -> bool:
    return bool(strategy.search) and ROOTS[int(strategy.search[X_ROOT])] == "turn"


def turn_tree_shape(strategy: Strategy) -> tuple[int, int]:
    """Nodes and candidate turns a node of the tree over whole turns needs (1, 1 without it)."""
    if not is_turn_search(strategy):
        return 1, 1
    return turn_tree_nodes(int(strategy.search[X_ITERATIONS])), int(strategy.search[X_CANDIDATES])


def _tree_budget(strategy: Strategy) -> tuple[int, str]:
    return int(strategy.search[X_ITERATIONS]), REUSES[int(strategy.search[X_REUSE])]


def _rollout_of(strategy: Strategy) -> Strategy:
    kind = int(strategy.search[2])
    return Strategy(strategy.rollout, kind, strategy.weights, learned=strategy.learned)


def from_resolved_search(name: str, info: dict, from_resolved) -> Strategy:
    """The search player a manifest describes, each option checked against the range the spec
    parser allows (a manifest may have been edited: a huge budget would exhaust memory)."""
    rollout = from_resolved(info["rollout"], info["rollout_resolved"])
    if not isinstance(rollout, Strategy) or not (rollout.kind == KIND_RANDOM or rollout.is_heuristic):
        raise StrategyError(f"strategy {name!r}: its rollout is not a built-in ({HELP['rollout']})")
    if info.get("root", "decision") == "decision":
        # older manifests wrote the decision tree's idle options with other values
        info = {**info, **DECISION_IDLE}
    horizon = info["horizon"]
    search = (float(_whole(name, "iterations", info["iterations"], 1, MAX_ITERATIONS)), _finite(name, "c", info["c"]),
              float(rollout.kind), float(REWARDS.index(_one_of(name, "reward", info["reward"], REWARDS))),
              float(HORIZON_AUTO if horizon == "auto" else _whole(name, "horizon", horizon, 0, 10_000)),
              # manifests from before these options had leaf=score, finish=rollout, reuse=none
              float(LEAVES.index(_one_of(name, "leaf", info.get("leaf", "score"), LEAVES))),
              float(FINISHES.index(_one_of(name, "finish", info.get("finish", "rollout"), FINISHES))),
              float(REUSES.index(_one_of(name, "reuse", info.get("reuse", "none"), REUSES))),
              # and from before root=: decision, candidates 8 (unused by decision); from before
              # depth=, root=turn chose among the candidates of the turn at hand only
              float(ROOTS.index(_one_of(name, "root", info.get("root", "decision"), ROOTS))),
              float(_whole(name, "candidates", info.get("candidates", 8), 1, TOP_MAX)),
              float(_whole(name, "depth", info.get("depth", 1), 0, MAX_DEPTH)),
              # and from before others=: the rollout played them
              float(OTHERS.index(_one_of(name, "others", info.get("others", "rollout"), OTHERS))))
    return Strategy(name, KIND_MCTS, rollout.weights, DESCRIPTION, search=search, rollout=rollout.name,
                    learned=rollout.learned)
