#!/usr/bin/env python
"""Benchmark the compiled engine: games per second of ``play_batch``.

    python scripts/bench_engine.py --players 4 --strategy random --games 2000 [--repeats 5] [--cold]
    python scripts/bench_engine.py --players 4 --strategy 'greedy(plan=action)' --games 2000

In one process: import, compile (or load numba's cache) and play a first game, printed as
``warmup_seconds=``; then play ``--games`` games ``--repeats`` times with the strategy in every
seat, each run on its own seeds, printing each run's games/s; the last line is
``games_per_second=<median of the runs>``. For a turn-planning strategy (``plan=turn``, every
heuristic's default) it then plays ``--census`` more games counting the searches' work and
prints, per turn played, ``searches_per_turn=``, ``decisions_expanded_per_turn=``,
``end_of_turn_positions_per_turn=`` (evaluated) and ``distinct_end_of_turn_positions_per_turn=``:
the distinct positions bound the work, so this is the cost made visible. Last it times one
engine step and one evaluation on the positions of a few of those games and prints
``floor_games_per_second=``: the speed if each distinct end-of-turn position cost one step and
one evaluation and nothing else (``planner_floor``), the most a search without bounds allows.

``--cold`` first clears the package's numba cache (the ``*.nbi`` / ``*.nbc`` files under
``evora_sim/`` and ``strategies/``, and the package's cache folder if it configures one) in a
fresh subprocess, which then compiles from scratch and plays one game: ``cold_start_seconds=``.
The cache it writes is what the warm-up of this process then loads.

Mistakes in the arguments end with one line on stderr and exit status 2.
"""
from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))     # this checkout's engine, also without an installed package

from benchargs import Parser, UsageError, players, positive_int  # noqa: E402

FLOOR_GAMES = 3         # games whose positions time the parts of the floor

SEED_BASE = 7_000_000   # first seed of the timed runs; the warm-up game uses SEED_BASE - 1


def parse_args(argv):
    ap = Parser(prog="bench_engine.py", description="Games per second of the compiled engine.")
    ap.add_argument("--players", type=players, default=4, help="2, 3 or 4 (default 4)")
    ap.add_argument("--strategy", default="random",
                    help="a strategy spec in every seat: a built-in, or e.g. 'greedy(plan=action)' (default random)")
    ap.add_argument("--games", type=positive_int, required=True, help="games per timed run")
    ap.add_argument("--repeats", type=positive_int, default=5, help="timed runs (default 5)")
    ap.add_argument("--census", type=int, default=200,
                    help="games of the turn planner's census after the timed runs (default 200; 0: none)")
    ap.add_argument("--cold", action="store_true",
                    help="first clear the numba cache and time a cold start in a subprocess")
    ap.add_argument("--_cold-child", dest="cold_child", action="store_true", help=argparse.SUPPRESS)
    return ap.parse_args(argv)


def strategy_id(spec: str):
    """The strategy of ``spec`` (a built-in name or any spec of strategies.registry)."""
    from strategies.registry import StrategyError, parse_spec
    try:
        return parse_spec(spec)
    except StrategyError as exc:
        raise UsageError(str(exc)) from None


# ---- the numba cache --------------------------------------------------------------------------
def _package_dirs() -> list[Path]:
    import importlib.util
    dirs = []
    for pkg in ("evora_sim", "strategies"):
        spec = importlib.util.find_spec(pkg)
        if spec is not None and spec.submodule_search_locations:
            dirs += [Path(p).resolve() for p in spec.submodule_search_locations]
    return dirs


def _cache_dirs(pkg_dirs: list[Path]) -> list[Path]:
    """Where numba keeps the compiled code of the package's modules: ``__pycache__`` beside
    the sources, or the matching sub-folder of a configured ``numba.config.CACHE_DIR``.
    Call after importing the package (it may configure the cache folder when imported)."""
    out = [d / "__pycache__" for d in pkg_dirs]
    import numba
    base = getattr(numba.config, "CACHE_DIR", "") or ""
    if base:
        try:
            from numba.core.caching import _CacheLocator
            subpath = _CacheLocator.get_suitable_cache_subpath
        except Exception:             # numba moved it: its documented layout, re-derived
            import hashlib

            def subpath(py_file):
                parent = os.path.dirname(os.path.abspath(py_file))
                return "_".join([os.path.split(parent)[-1], hashlib.sha1(parent.encode()).hexdigest()])
        for d in pkg_dirs:
            out.append(Path(base) / subpath(str(d / "__init__.py")))
    return out


def clear_cache(cache_dirs: list[Path]) -> int:
    removed = 0
    for d in cache_dirs:
        if d.is_dir():
            for pattern in ("*.nbi", "*.nbc"):
                for f in d.rglob(pattern):
                    f.unlink(missing_ok=True)
                    removed += 1
    return removed


# ---- timing -----------------------------------------------------------------------------------
def first_game(players: int, sid: int) -> float:
    """Seconds to import, compile (or load the cache) and play one game."""
    t0 = time.perf_counter()
    import numpy as np
    from evora_sim.batch import play_batch
    from evora_sim.rules import load_rules
    play_batch(load_rules(), players, np.array([SEED_BASE - 1], dtype=np.int64), [sid] * players)
    return time.perf_counter() - t0


def cold_child(args) -> int:
    """Runs in a fresh interpreter: clear the cache, then time the first game."""
    pkg_dirs = _package_dirs()
    import evora_sim  # noqa: F401  (may point numba at its own cache folder)
    dirs = _cache_dirs(pkg_dirs)
    removed = clear_cache(dirs)
    seconds = first_game(args.players, strategy_id(args.strategy))
    print(json.dumps({"cold_start_seconds": seconds, "removed": removed,
                      "cache_dirs": [str(d) for d in dirs]}))
    return 0


def run_cold(args) -> float:
    cmd = [sys.executable, str(Path(__file__).resolve()), "--_cold-child", "--players", str(args.players),
           "--strategy", args.strategy, "--games", "1"]
    proc = subprocess.run(cmd, capture_output=True, text=True)
    if proc.returncode != 0:
        tail = (proc.stderr.strip().splitlines() or ["no output"])[-1]
        raise RuntimeError(f"cold-start subprocess failed (exit {proc.returncode}): {tail}")
    info = json.loads(proc.stdout.strip().splitlines()[-1])
    print(f"cold start: removed {info['removed']} cached files from "
          f"{', '.join(info['cache_dirs'])}")
    return float(info["cold_start_seconds"])


def print_floor(rules, n_players, seeds, sids, census, census_games) -> None:
    """The parts' costs and the floor they set (``planner_floor``): how fast this planner could
    be if it did nothing but reach and score its distinct end-of-turn positions once each."""
    from planner_floor import BATCHES, floor_games_per_second, part_costs   # imports the engine
    from strategies.registry import seat_arrays
    _, weights = seat_arrays(sids)
    parts = part_costs(rules, n_players, seeds, sids, weights)
    turns = census["turns"] / census_games
    floor = floor_games_per_second(census["distinct"], turns, parts["step_ns"], parts["evaluate_ns"])
    print(f"parts timed on {parts['pairs']} (position, action) pairs of {len(seeds)} games "
          f"(fastest of {BATCHES} batches each):")
    print(f"step_ns={parts['step_ns']:.1f}")
    print(f"evaluate_ns={parts['evaluate_ns']:.1f}")
    print(f"turns_per_game={turns:.1f}")
    print(f"floor_games_per_second={floor:.0f} (one step and one evaluation per distinct "
          f"end-of-turn position and nothing else: a search without bounds cannot be faster)")


def main(argv=None) -> int:
    try:
        args = parse_args(sys.argv[1:] if argv is None else argv)
        if args.cold_child:
            return cold_child(args)
        t0 = time.perf_counter()
        sid = strategy_id(args.strategy)      # imports the engine modules (part of the warm-up)
        t_import = time.perf_counter() - t0
    except UsageError as exc:
        print(f"bench_engine.py: error: {exc}", file=sys.stderr)
        return 2

    if args.cold:
        print(f"cold_start_seconds={run_cold(args):.3f}", flush=True)

    warm = t_import + first_game(args.players, sid)
    print(f"warmup_seconds={warm:.3f}", flush=True)

    import numpy as np
    from evora_sim.batch import play_batch
    from evora_sim.gameloop import GAME_COLUMNS
    from evora_sim.rules import load_rules
    rules = load_rules()
    sids = [sid] * args.players
    rates = []
    for r in range(args.repeats):
        seeds = np.arange(args.games, dtype=np.int64) + SEED_BASE + r * args.games
        t0 = time.perf_counter()
        res = play_batch(rules, args.players, seeds, sids)
        dt = time.perf_counter() - t0
        rates.append(args.games / dt)
        decisions = int(res.games[:, GAME_COLUMNS.index("decisions")].sum())
        print(f"run {r + 1}/{args.repeats}: {args.games} games ({args.players} players, {args.strategy}) "
              f"in {dt:.3f} s: {rates[-1]:.1f} games/s, "
              f"{decisions / dt:,.0f} decisions/s", flush=True)
    print(f"games_per_second={statistics.median(rates):.1f}")
    if getattr(sid, "plan", None) == "turn" and args.census > 0:
        from evora_sim.batch import plan_census
        seeds = np.arange(args.census, dtype=np.int64) + SEED_BASE - 1 - args.census
        c = plan_census(rules, args.players, seeds, sids)
        print(f"census of {args.census} games ({c['turns']} turns), per turn played:")
        print(f"searches_per_turn={c['searches']:.2f}")
        print(f"decisions_expanded_per_turn={c['nodes']:.1f}")
        print(f"end_of_turn_positions_per_turn={c['leaves']:.1f}")
        print(f"distinct_end_of_turn_positions_per_turn={c['distinct']:.1f}")
        print_floor(rules, args.players, seeds[:FLOOR_GAMES], sids, c, args.census)
    return 0


if __name__ == "__main__":
    sys.exit(main())
