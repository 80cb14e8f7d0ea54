#!/usr/bin/env python
"""Benchmark the search player: iterations per second, seconds per game, memory.

    python scripts/bench_mcts.py [--iterations 20000] [--games 20] [--spec 'mcts(iterations=1000)']
                                 [--field balanced] [--repeats 5]

In one process, on one core:

- ``iterations_per_second=``: one decision from the 4-player start (the first setup
  placement) searched by ``mcts(iterations=N, rollout=random, horizon=H)``: with the default
  ``--horizon 0`` every iteration plays a random game to its end (the search player's own
  default horizon, 8 turns, is far cheaper): the median of ``--repeats`` searches.
- ``seconds_per_game=``: 4-player games with one ``--spec`` seat and three ``--field`` seats
  (the search seat rotating through the seats), each timed alone: the median of ``--games``.
- ``peak_rss_mb=``: the process's peak resident memory after both (``resource.getrusage``),
  and ``tree_mb=``: what the search tree of ``--spec`` takes of it.
- Where a game's time goes, over ``--census`` more games (the search seat in each seat in
  turn; 0 skips it): the turn searches the planner inside the search ran a game
  (``plan_searches_per_game=``, for the rollouts and for each new node's candidate turns), the
  end-of-turn positions they evaluated (``positions_per_game=``), the share of turn plans the
  plan cache supplied unsearched (``plan_cache_share=``), and the game's time per position
  evaluated (``ns_per_position=``, everything included).

The first search and game compile or load numba's cache and are not timed (``warmup_seconds=``).
Mistakes in the arguments end with one line on stderr and exit status 2.
"""
from __future__ import annotations

import resource
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))     # this checkout's engine, also without an installed package

from benchargs import Parser, UsageError, positive_int  # noqa: E402

SEED_BASE = 8_000_000


def parse_args(argv):
    ap = Parser(prog="bench_mcts.py", description="Speed and memory of the search player.")
    ap.add_argument("--iterations", type=positive_int, default=20000,
                    help="iterations of the timed search from the 4-player start (default 20000)")
    ap.add_argument("--games", type=positive_int, default=20, help="timed 4-player games (default 20)")
    ap.add_argument("--spec", default="mcts(iterations=1000)", help="the search seat's spec")
    ap.add_argument("--field", default="balanced", help="the other three seats' spec (default balanced)")
    ap.add_argument("--repeats", type=positive_int, default=5, help="timed searches (default 5)")
    ap.add_argument("--census", type=int, default=4,
                    help="games whose planner counters are printed after the timed ones (default 4; 0: none)")
    ap.add_argument("--horizon", type=int, default=0,
                    help="turns each random rollout of the timed search plays (default 0: to the end)")
    return ap.parse_args(argv)


def _strategies(args):
    from strategies.registry import StrategyError, parse_spec
    try:
        spec = parse_spec(args.spec)
        field = parse_spec(args.field)
        random_search = parse_spec(f"mcts(iterations={args.iterations}, rollout=random, horizon={args.horizon})")
    except StrategyError as exc:
        raise UsageError(str(exc)) from None
    if not spec.search:
        raise UsageError(f"--spec {args.spec!r} is not a search player (mcts(...))")
    return spec, field, random_search


def one_search(search, seed: int) -> float:
    """Seconds of one search of ``search`` at the first decision of a 4-player game."""
    import numpy as np

    from evora_sim import api, gameloop
    from evora_sim.rules import load_rules
    from strategies.decide import choose
    from strategies.registry import seat_arrays
    rules = load_rules()
    state = api.new_game(rules, 4, seed)
    legal = np.array(api.legal_actions(state), dtype=np.int32)
    kinds, W = seat_arrays([search] * 4)
    _, _, rs, work, _ = gameloop.buffers(4, [search])
    rs[0] = np.uint64(seed)
    t0 = time.process_time()
    choose(kinds[0], W, 0, state.arr, rules.packed, legal, len(legal), rs, work)
    return time.process_time() - t0


def one_game(spec, field, seat: int, seed: int) -> float:
    import numpy as np

    from evora_sim.batch import play_batch
    from evora_sim.rules import load_rules
    seats = [field] * 4
    seats[seat] = spec
    t0 = time.process_time()
    play_batch(load_rules(), 4, np.array([seed], dtype=np.int64), seats)
    return time.process_time() - t0


def main(argv=None) -> int:
    try:
        args = parse_args(sys.argv[1:] if argv is None else argv)
        t0 = time.perf_counter()
        spec, field, random_search = _strategies(args)
    except UsageError as exc:
        print(f"bench_mcts.py: error: {exc}", file=sys.stderr)
        return 2
    from strategies.search_spec import search_tree_bytes
    one_search(random_search, SEED_BASE - 1)
    one_game(spec, field, 0, SEED_BASE - 1)
    print(f"warmup_seconds={time.perf_counter() - t0:.3f}", flush=True)

    rates = []
    for r in range(args.repeats):
        dt = one_search(random_search, SEED_BASE + r)
        rates.append(args.iterations / dt)
        print(f"search {r + 1}/{args.repeats}: {args.iterations} iterations (rollout=random, horizon={args.horizon}, 4-player start) "
              f"in {dt:.3f} s: {rates[-1]:,.0f} iterations/s", flush=True)
    print(f"iterations_per_second={statistics.median(rates):.0f}", flush=True)

    times = []
    for g in range(args.games):
        dt = one_game(spec, field, g % 4, SEED_BASE + 1000 + g)
        times.append(dt)
        print(f"game {g + 1}/{args.games}: {spec.name} in seat {g % 4}, three {field.name}: {dt:.2f} s", flush=True)
    print(f"seconds_per_game={statistics.median(times):.3f}")
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(f"peak_rss_mb={peak:.0f}")
    print(f"tree_mb={search_tree_bytes(spec) / 2**20:.2f}")
    if args.census > 0:
        census(spec, field, args.census)
    return 0


def census(spec, field, games: int) -> None:
    """Print the search's planner counters per game over ``games`` games (``batch.plan_census``):
    the first ``games`` of the timed games again, same seeds and seats, so the counters describe
    the games whose time was printed."""
    import numpy as np

    from evora_sim.batch import plan_census
    from evora_sim.rules import load_rules
    rules = load_rules()
    totals = {"searches": 0.0, "positions": 0.0, "cache_hits": 0.0}
    seconds = 0.0
    for g in range(games):
        seats = [field] * 4
        seats[g % 4] = spec
        t0 = time.process_time()
        c = plan_census(rules, 4, np.array([SEED_BASE + 1000 + g], dtype=np.int64), seats)["search"]
        seconds += time.process_time() - t0
        for k in totals:
            totals[k] += c[k] / games
    print(f"census of {games} games ({spec.name} in each seat in turn, three {field.name}):")
    print(f"plan_searches_per_game={totals['searches']:.0f}")
    print(f"positions_per_game={totals['positions']:.0f}")
    plans = totals["searches"] + totals["cache_hits"]
    print(f"plan_cache_share={totals['cache_hits'] / max(plans, 1):.3f}")
    print(f"ns_per_position={1e9 * seconds / games / max(totals['positions'], 1):.0f}")


if __name__ == "__main__":
    sys.exit(main())
