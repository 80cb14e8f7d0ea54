"""Peak memory and time of `evora report` on run folders: the acceptance benchmark of the
streaming analysis (issue 17). Each report runs in its own child process, so the peak
(its maximum resident set, from the kernel) is that report's alone.

    python scripts/bench_report.py runs/p4_1m runs/p4_4m          # one report per run, side by side
    python scripts/bench_report.py runs/p4_4m --repeat 2

Prints, per run: games, Parquet files per table, wall seconds, peak MB, and the ratio of each
peak to the first one's (the issue asks that 1M -> 4M games grows the peak by at most 30%).
"""
from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path

CHILD = """
import resource, sys, time
from evora_sim.cli import main
t0 = time.perf_counter()
try:
    main(["report", sys.argv[1], "--out", sys.argv[2]], standalone_mode=False)
finally:
    print("BENCH", time.perf_counter() - t0, resource.getrusage(resource.RUSAGE_SELF).ru_maxrss, file=sys.stderr)
"""


def describe(run: Path) -> tuple[int, int]:
    m = json.loads((run / "manifest.json").read_text())
    return int(m["config"]["games"]) * (m["config"]["players"] if m["config"]["seat_rotation"] else 1), \
        len(list((run / "seats").glob("*.parquet")))


def one(run: Path) -> tuple[float, float]:
    with tempfile.TemporaryDirectory() as tmp:
        t0 = time.perf_counter()
        proc = subprocess.run([sys.executable, "-c", CHILD, str(run), str(Path(tmp) / "report")],
                              capture_output=True, text=True)
        wall = time.perf_counter() - t0
    if proc.returncode:
        sys.exit(f"report of {run} failed:\n{proc.stderr[-2000:]}")
    line = [x for x in proc.stderr.splitlines() if x.startswith("BENCH ")][-1].split()
    return wall, int(line[2]) / 1024


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("runs", nargs="+", type=Path)
    ap.add_argument("--repeat", type=int, default=1)
    args = ap.parse_args()
    first = None
    print(f"{'run':40s} {'games':>12s} {'files':>6s} {'wall s':>8s} {'peak MB':>9s} {'vs first':>9s}")
    for run in args.runs:
        games, files = describe(run)
        for _ in range(args.repeat):
            wall, peak = one(run)
            first = first or peak
            print(f"{str(run):40s} {games:12,d} {files:6d} {wall:8.1f} {peak:9.0f} {peak / first:8.2f}x",
                  flush=True)


if __name__ == "__main__":
    main()
