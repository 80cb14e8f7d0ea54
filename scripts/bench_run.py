#!/usr/bin/env python
"""Benchmark the experiment runner (`evora simulate`): wall time, games/s, parallel speed-up,
Parquet share of the run time and peak resident memory.

    python scripts/bench_run.py [--games 1000000] [--jobs 2] [--small 100000] [--strategy greedy]
                                [--players 4] [--chunk-size N]

Steps, all into a temporary folder that is removed at the end:

1. warm-up: a tiny run with ``--jobs 1`` (compiles or loads numba's cache), so compile time is
   not measured;
2. the main run: ``--games`` games, the strategy in every seat, ``--jobs`` processes: wall time,
   games/s, peak resident memory of this process (the parent) and of its worker processes;
3. the speed-up: ``--small`` games with ``--jobs 1`` and with ``--jobs``; speed-up =
   games/s(jobs N) / games/s(jobs 1);
4. Parquet writing: one full chunk played and written in this process, ``play_chunk`` and
   ``write_chunk`` timed apart: write share = write / (play + write). Workers do exactly this
   per chunk, so the share is that of the whole run.

Peak memory: with psutil installed, the resident memory of this process and every descendant is
sampled every 0.1 s during the main run (``peak_rss_total_mb`` is the largest sum at one
instant). Without it, ``getrusage`` gives the parent's peak and the largest single worker's
peak once the workers have exited; the total is then parent + jobs x worker (an upper bound).

Output: ``key=value`` lines; the targets of the issue (1,000,000 greedy games in at most
240 s on 2 cores, speed-up >= 1.8, Parquet under 10 %) are checked as ``meets_*``; the last
line is ``games_per_second=<main run>``. Bad arguments: one line on stderr, exit status 2.
"""
from __future__ import annotations

import os
import resource
import sys
import tempfile
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))     # this checkout's package, also without an installed one

from benchargs import Parser, UsageError, players, positive_int  # noqa: E402

TARGET_SECONDS_1M = 240.0
TARGET_SPEEDUP = 1.8
TARGET_WRITE_SHARE = 0.10


def parse_args(argv):
    p = Parser(prog="bench_run.py", description=__doc__.split("\n\n")[0])
    p.add_argument("--games", type=positive_int, default=1_000_000, help="games of the main run")
    p.add_argument("--jobs", type=positive_int, default=2, help="processes of the main run")
    p.add_argument("--small", type=positive_int, default=100_000,
                   help="games of each of the two speed-up runs (jobs 1 and jobs N)")
    p.add_argument("--strategy", default="greedy", help="the strategy in every seat")
    p.add_argument("--players", type=players, default=4)
    p.add_argument("--chunk-size", type=positive_int, default=None,
                   help="seeds per chunk (default: the runner's)")
    return p.parse_args(argv)


# ---------------------------------------------------------------------------------------------
# memory
# ---------------------------------------------------------------------------------------------
def _maxrss_mb(who) -> float:
    kb = resource.getrusage(who).ru_maxrss            # kilobytes on Linux
    return kb / (1 << 20) if sys.platform == "darwin" else kb / 1024


class TreeSampler:
    """Peak resident memory of this process and of all its descendants (needs psutil)."""

    def __init__(self, interval: float = 0.1):
        import psutil

        self.psutil = psutil
        self.me = psutil.Process()
        self.interval = interval
        self.peak_total = self.peak_parent = self.peak_children = 0
        self.peak_workers = 0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def sample(self):
        try:
            parent = self.me.memory_info().rss
        except self.psutil.Error:
            return
        children = 0
        workers = 0
        for child in self.me.children(recursive=True):
            try:
                children += child.memory_info().rss
                workers += 1
            except self.psutil.Error:
                pass
        self.peak_parent = max(self.peak_parent, parent)
        self.peak_children = max(self.peak_children, children)
        self.peak_total = max(self.peak_total, parent + children)
        self.peak_workers = max(self.peak_workers, workers)

    def _run(self):
        while not self._stop.is_set():
            self.sample()
            self._stop.wait(self.interval)

    def __enter__(self):
        self._thread.start()
        return self

    def __exit__(self, *exc):
        self._stop.set()
        self._thread.join()
        self.sample()


def _shutdown_workers() -> None:
    """End loky's reusable worker processes, so that getrusage(RUSAGE_CHILDREN) counts them."""
    try:
        from joblib.externals.loky import get_reusable_executor

        get_reusable_executor().shutdown(wait=True)
    except Exception:                                   # nothing started, or another joblib
        pass


# ---------------------------------------------------------------------------------------------
# the benchmark
# ---------------------------------------------------------------------------------------------
def timed_run(runner, tmp: Path, name: str, jobs: int, chunk_size: int | None, **kw) -> tuple[float, int]:
    out = tmp / name
    t0 = time.perf_counter()
    result = runner.simulate(out=out, **kw, execution=runner.Execution(jobs=jobs, chunk_size=chunk_size, quiet=True))
    wall = time.perf_counter() - t0
    n = result.n_games
    expected = kw["games"] * (kw["players"] if kw.get("seat_rotation") else 1)
    if n != expected:
        raise RuntimeError(f"run {name}: {n} games written, expected {expected}")
    return wall, n


def write_share(runner, rules, players, strategy, chunk_size, tmp: Path, repeats: int = 2):
    """(play seconds, write seconds) of ``repeats`` full chunks played and written here."""
    config = runner.make_config(players, chunk_size * repeats, strategy, 99, False, chunk_size, rules)
    play = write = 0.0
    for k in range(repeats):
        t0 = time.perf_counter()
        tables = runner.play_chunk(config, rules, k)
        t1 = time.perf_counter()
        runner.write_chunk(tmp / "write-share", k, tables)
        t2 = time.perf_counter()
        play += t1 - t0
        write += t2 - t1
    return play, write


def main(argv=None) -> int:
    try:
        args = parse_args(sys.argv[1:] if argv is None else argv)
        from strategies.registry import StrategyError, parse_strategies

        try:
            parse_strategies(args.strategy, args.players)
        except StrategyError as exc:
            raise UsageError(f"--strategy: {exc}") from None
    except UsageError as exc:
        print(f"bench_run.py: error: {exc}", file=sys.stderr)
        return 2

    from evora_sim import __version__, runner
    from evora_sim.rules import load_rules

    rules = load_rules()
    base = dict(players=args.players, strategies=args.strategy, seed=1, rules=rules)
    chunk = args.chunk_size or min(runner.DEFAULT_CHUNK, args.games)
    print(f"package_version={__version__}")
    print(f"cpu_count={os.cpu_count()}")
    print(f"loadavg_1min={os.getloadavg()[0]:.2f}")
    print(f"players={args.players}")
    print(f"strategy={args.strategy}")
    print(f"games={args.games}")
    print(f"jobs={args.jobs}")
    print(f"chunk_size={chunk}")

    try:
        import psutil  # noqa: F401
        have_psutil = True
    except ImportError:
        have_psutil = False

    with tempfile.TemporaryDirectory(prefix="evora-bench-run-") as tmpdir:
        tmp = Path(tmpdir)
        t0 = time.perf_counter()
        timed_run(runner, tmp, "warm", 1, 50, **{**base, "games": 100})
        print(f"warmup_seconds={time.perf_counter() - t0:.2f}")

        # the main run
        if have_psutil:
            with TreeSampler() as mem:
                wall, n = timed_run(runner, tmp, "main", args.jobs, args.chunk_size, games=args.games, **base)
        else:
            wall, n = timed_run(runner, tmp, "main", args.jobs, args.chunk_size, games=args.games, **base)
        parent_peak = _maxrss_mb(resource.RUSAGE_SELF)
        rate = n / wall
        print(f"main_wall_seconds={wall:.2f}")
        print(f"main_games={n}")
        size = sum(p.stat().st_size for p in (tmp / "main").rglob("*") if p.is_file())
        print(f"output_mb={size / 2**20:.1f}")
        print(f"output_bytes_per_game={size / n:.0f}")

        # speed-up on the smaller run (the pool of the main run is reused for jobs N)
        small = dict(base, games=args.small)
        wall1, n1 = timed_run(runner, tmp, "small-j1", 1, args.chunk_size, **small)
        wallN, nN = timed_run(runner, tmp, f"small-j{args.jobs}", args.jobs, args.chunk_size, **small)
        rate1, rateN = n1 / wall1, nN / wallN
        speedup = rateN / rate1
        print(f"small_games={args.small}")
        print(f"small_jobs1_seconds={wall1:.2f}")
        print(f"small_jobs1_games_per_second={rate1:.1f}")
        print(f"small_jobs{args.jobs}_seconds={wallN:.2f}")
        print(f"small_jobs{args.jobs}_games_per_second={rateN:.1f}")
        print(f"speedup={speedup:.3f}")

        # Parquet's share: full chunks played and written here, timed apart
        play_s, write_s = write_share(runner, rules, args.players, args.strategy, chunk, tmp)
        share = write_s / (play_s + write_s)
        print(f"chunk_play_seconds={play_s / 2:.3f}")
        print(f"chunk_write_seconds={write_s / 2:.3f}")
        print(f"parquet_write_share={share:.4f}")

    _shutdown_workers()
    child_peak = _maxrss_mb(resource.RUSAGE_CHILDREN)
    print(f"peak_rss_parent_mb={parent_peak:.0f}")
    print(f"peak_rss_largest_child_mb={child_peak:.0f}")
    if have_psutil:
        print(f"peak_rss_children_mb={mem.peak_children / 2**20:.0f}")
        print(f"peak_rss_total_mb={mem.peak_total / 2**20:.0f}")
        print(f"child_processes={mem.peak_workers}")
        print("memory_method=psutil samples of the process tree every 0.1 s during the main run")
    else:
        print(f"peak_rss_total_mb={parent_peak + args.jobs * child_peak:.0f}")
        print("memory_method=getrusage: parent + jobs x largest child (upper bound)")

    projected = 1_000_000 / rate
    print(f"projected_1M_seconds={projected:.1f}")
    print(f"meets_time_target={projected <= TARGET_SECONDS_1M} (<= {TARGET_SECONDS_1M:.0f} s for 1,000,000 games)")
    print(f"meets_speedup_target={speedup >= TARGET_SPEEDUP} (>= {TARGET_SPEEDUP})")
    print(f"meets_write_target={share < TARGET_WRITE_SHARE} (< {TARGET_WRITE_SHARE:.0%})")
    print(f"games_per_second={rate:.1f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
