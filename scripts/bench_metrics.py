#!/usr/bin/env python
"""What the recorded metrics cost: random games of the full game loop (``play_batch``, every
metric recorded) against the same games played by a bare loop that records nothing.

    python scripts/bench_metrics.py --players 4 --games 10000 --repeats 9

The bare loop is the game loop without its hooks: the engine's legal actions and step, and a
random seat's draw from the same random stream, so both play exactly the same games, compiled
without reference counts as ``compiled_batch`` is (with them the bare loop ran about a fifth
slower, and the ratio looked better than it was). The two
run alternately in one process, each on the same seeds, timed in the process's CPU time
(``time.process_time``: on a shared machine, time spent waiting for a core is not counted), so
a machine whose load changes between runs still gives a fair ratio: each repeat prints both
speeds and their ratio, and the last lines
are ``bare_games_per_second=``, ``recorded_games_per_second=`` (medians) and
``recorded_over_bare=`` (the median of the repeats' ratios; 1 would be free). Compare two trees
by running a copy of this script in each (it imports the checkout it sits in): the bare loop
is the engine alone, the same in both.

Mistakes in the arguments end with one line on stderr and exit status 2.
"""
from __future__ import annotations

import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))     # this checkout's engine, also without an installed package

import numpy as np  # noqa: E402
from benchargs import Parser, UsageError, players, positive_int  # noqa: E402
from numba import njit  # noqa: E402

from evora_sim import engine as E  # noqa: E402
from evora_sim import layout as L  # noqa: E402
from evora_sim.batch import play_batch  # noqa: E402
from evora_sim.rng import STRATEGY_STREAM, randbelow, seed_stream  # noqa: E402
from evora_sim.rules import load_rules  # noqa: E402

SEED_BASE = 7_000_000   # as bench_engine.py's timed runs


@njit(_nrt=False)     # as compiled_batch: no reference counts on the calls into the engine
def bare_batch(R, n, seeds, s, legal, rs):
    """Random games as ``gameloop.advance`` plays them, with no hook: the decisions played."""
    steps = 0
    for g in range(seeds.shape[0]):
        E.init_game(s, R, n, seeds[g])
        seed_stream(rs, seeds[g], STRATEGY_STREAM)
        k = E.legal_actions(s, R, legal)
        while k > 0:
            a = np.int64(legal[0]) if k == 1 else np.int64(legal[randbelow(rs, k)])
            k = E.step(s, R, a, legal)
            steps += 1
    return steps


def main(argv=None) -> int:
    ap = Parser(prog="bench_metrics.py", description="The recorded metrics' cost in random games.")
    ap.add_argument("--players", type=players, default=4, help="2, 3 or 4 (default 4)")
    ap.add_argument("--games", type=positive_int, default=10_000, help="games per timed run (default 10000)")
    ap.add_argument("--repeats", type=positive_int, default=9, help="timed pairs of runs (default 9)")
    try:
        args = ap.parse_args(argv)
    except UsageError as exc:
        print(f"bench_metrics.py: error: {exc}", file=sys.stderr)
        return 2
    rules, n = load_rules(), args.players
    s, legal, rs = E.new_state(), np.empty(L.N_ACTIONS, dtype=np.int32), np.zeros(1, dtype=np.uint64)
    seeds = np.arange(args.games, dtype=np.int64) + SEED_BASE
    few = seeds[:20]                    # compile both, and check that they play the same games
    if bare_batch(rules.packed, n, few, s, legal, rs) != int(play_batch(rules, n, few, ["random"] * n).games[:, 4].sum()):
        print("bench_metrics.py: error: the bare loop did not play the game loop's games", file=sys.stderr)
        return 1
    bare, recorded = [], []
    for r in range(args.repeats):
        t0 = time.process_time()
        bare_batch(rules.packed, n, seeds, s, legal, rs)
        t1 = time.process_time()
        play_batch(rules, n, seeds, ["random"] * n)
        t2 = time.process_time()
        bare.append(args.games / (t1 - t0))
        recorded.append(args.games / (t2 - t1))
        print(f"run {r + 1}/{args.repeats}: bare {bare[-1]:.0f} games/s, recorded {recorded[-1]:.0f} games/s (CPU time), "
              f"ratio {recorded[-1] / bare[-1]:.3f}", flush=True)
    print(f"bare_games_per_second={statistics.median(bare):.1f}")
    print(f"recorded_games_per_second={statistics.median(recorded):.1f}")
    print(f"recorded_over_bare={statistics.median(x / b for x, b in zip(recorded, bare)):.3f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
