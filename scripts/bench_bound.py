#!/usr/bin/env python
"""What the turn bound (``strategies/turn_bound.py``) saves a turn planner: the same turn searches
run exactly and with branch and bound, side by side.

    python scripts/bench_bound.py [--players 4] [--strategy cardheights] [--games 3] [--repeats 5]

Why: a bound lets the search skip a line that cannot beat the best end of turn already found,
but computing it costs more than one evaluation. Whether it pays is a measurement, not an
argument: this prints, per turn search, the end-of-turn positions evaluated and the time with
and without it.

The decisions are every decision of ``--games`` games of ``--strategy`` in every seat (setup
excluded), each searched from scratch, once with ``planner.M_BOUND`` off and once on, in
alternating timed passes on one core (medians of ``--repeats``; the machines are shared, so
read the ratio, which both passes share the load of). Printed:
``positions_per_search_exact=``, ``positions_per_search_bound=``, ``bounds_per_search=``,
``pruned_per_search=``, ``us_per_search_exact=``, ``us_per_search_bound=`` and
``bound_speedup=`` (exact time over bound time; below 1 the bound costs more than it saves).
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

from benchargs import Parser, UsageError, players, positive_int  # noqa: E402

SEED_BASE = 7_500_000


def parse_args(argv):
    ap = Parser(prog="bench_bound.py", description="What the turn bound saves a turn planner.")
    ap.add_argument("--players", type=players, default=4, help="2, 3 or 4 (default 4)")
    ap.add_argument("--strategy", default="cardheights",
                    help="a turn-planning built-in (default cardheights)")
    ap.add_argument("--games", type=positive_int, default=3,
                    help="games whose decisions are searched (default 3)")
    ap.add_argument("--repeats", type=positive_int, default=5, help="timed passes each way (default 5)")
    return ap.parse_args(argv)


def decisions(rules, n_players: int, seeds, sid):
    """Every decision after the setup with more than one legal action, of the games of ``seeds``:
    (state, legal actions, their count)."""
    from evora_sim import layout as L
    from evora_sim.batch import game_decisions

    return [(s, legal, n) for seed in seeds
            for s, legal, n, _ in game_decisions(rules, n_players, int(seed), [sid] * n_players)
            if s[L.G_PHASE] not in (L.PH_SETUP, L.PH_TERMINAL) and n > 1]


def main(argv=None) -> int:
    try:
        args = parse_args(sys.argv[1:] if argv is None else argv)
        import numpy as np

        from evora_sim import layout as L
        from evora_sim.rules import load_rules
        from strategies import planner as P
        from strategies.errors import StrategyError
        from strategies.registry import parse_spec
        try:
            sid = parse_spec(args.strategy)
        except StrategyError as e:
            raise UsageError(str(e)) from None
        if getattr(sid, "plan", None) != "turn":
            raise UsageError(f"--strategy must be a turn-planning built-in, got {args.strategy!r}")
    except UsageError as e:
        print(f"bench_bound.py: error: {e}", file=sys.stderr)
        return 2
    rules = load_rules()
    R = rules.packed
    W = np.array([sid.weights] * args.players, dtype=np.float64)
    seeds = np.arange(args.games, dtype=np.int64) + SEED_BASE
    found = decisions(rules, args.players, seeds, sid)
    ps, pl, bk, bv, line, hk, key, val, stamp, _, meta, top, _ = P.new_plan_work()
    rs = np.zeros(1, dtype=np.uint64)

    def run(bound: int):
        meta[:] = 0
        meta[P.M_BOUND] = bound
        t0 = time.perf_counter()
        for s, legal, n in found:
            P.search_turn(s.copy(), R, W, int(s[L.G_CUR]), legal, n, rs, ps, pl, bk, bv, line, hk, key, val,
                          stamp, meta, top)
        return time.perf_counter() - t0, meta.copy()

    run(0), run(1)                                 # compile, warm the caches
    times = {0: [], 1: []}
    counts = {}
    for _ in range(args.repeats):
        for bound in (0, 1):
            dt, m = run(bound)
            times[bound].append(dt)
            counts[bound] = m
    k = len(found)
    exact, bound = statistics.median(times[0]), statistics.median(times[1])
    print(f"{k} turn searches ({args.games} games of {args.strategy}, {args.players} players), "
          f"medians of {args.repeats} passes each way")
    print(f"positions_per_search_exact={counts[0][P.M_LEAVES] / k:.1f}")
    print(f"positions_per_search_bound={counts[1][P.M_LEAVES] / k:.1f}")
    print(f"bounds_per_search={counts[1][P.M_BOUNDS] / k:.1f}")
    print(f"pruned_per_search={counts[1][P.M_PRUNED] / k:.1f}")
    print(f"us_per_search_exact={exact / k * 1e6:.1f}")
    print(f"us_per_search_bound={bound / k * 1e6:.1f}")
    print(f"bound_speedup={exact / bound:.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
