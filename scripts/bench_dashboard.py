"""Time to a usable page, a filter's answer and the server's memory of `evora dashboard` on a
large run (issue 53's acceptance: under 5 s, under 1 s and under 1.5 GB on 1,000,000 games).

    python scripts/bench_dashboard.py                       # plays 1,000,000 random games under /tmp, then deletes them
    python scripts/bench_dashboard.py --run runs/p4_1m      # an existing run (kept)

Each figure is the median of --repeat (3) starts of the server. The first start finds nothing
kept (the statistics per kind of game are gathered while it runs and kept in the tool's cache
folder, here a fresh one under /tmp, EVORA_CACHE_DIR); the later starts find them kept, as a
second `evora dashboard` of the same run does. Both are printed.

The server runs as the user starts it (`evora dashboard RUN --no-browser`); headless Chromium
(Debian's, driven by Playwright, started before the command as a user's browser is already
running) loads the page. "Usable": from the command's start until the page shows the first
slice's game count. "A filter": from choosing an end condition in the page
until the page shows the new count, twice at once (the statistics per kind of game still being
gathered in the background), and twice more after --settle seconds (they are gathered). Memory: the server process's peak resident set (VmHWM).
Beside "usable", the server's processor time until then: on a machine loaded by other jobs the
wall clock stretches, the processor time much less.
"""
from __future__ import annotations

import os
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from benchargs import Parser, UsageError, positive_int

CHROMIUM = "/usr/bin/chromium"


def _evora() -> list[str]:
    exe = Path(sys.executable).with_name("evora")
    return [str(exe)] if exe.exists() else [sys.executable, "-m", "evora_sim.cli"]


def _port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _peak_mb(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) / 1024
    return float("nan")


def _cpu_s(pid: int) -> float:
    """The processor time the process has used (user and system): on a loaded machine the wall
    clock stretches with the other jobs, this much less."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def measure(run: Path, settle: float, cache: Path) -> dict:
    """One start of the server, timed. The browser is running before the command starts (as the
    user's is: the command opens a tab in it), so its own start-up is not counted."""
    from playwright.sync_api import sync_playwright

    port = _port()
    with sync_playwright() as p:
        b = p.chromium.launch(executable_path=CHROMIUM, args=["--no-sandbox"])
        page = b.new_page()
        t0 = time.perf_counter()
        proc = subprocess.Popen([*_evora(), "dashboard", str(run), "--port", str(port), "--no-browser"],
                                stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                                env=dict(os.environ, EVORA_CACHE_DIR=str(cache)))
        try:
            line = ""
            while "dashboard: http" not in line:
                line = proc.stdout.readline()
                if not line and proc.poll() is not None:
                    raise RuntimeError(f"the dashboard stopped: exit {proc.returncode}")
            while True:              # an earlier version printed the address before it listened
                try:
                    page.goto(f"http://127.0.0.1:{port}/", timeout=120_000)
                    break
                except Exception as exc:                 # noqa: BLE001  (Playwright's own Error)
                    if "ERR_CONNECTION_REFUSED" not in str(exc) or time.perf_counter() - t0 > 120:
                        raise
                    time.sleep(0.02)
            page.locator("#game-count").wait_for(timeout=120_000)
            usable = time.perf_counter() - t0
            usable_cpu = _cpu_s(proc.pid)
            first = page.locator("#game-count").inner_text()

            def choose(select, value):
                nonlocal first
                t1 = time.perf_counter()
                page.locator(select).select_option(value)
                now = first
                while now == first and time.perf_counter() - t1 < 120:
                    page.wait_for_timeout(20)
                    now = page.locator("#game-count").inner_text()
                first = now
                return time.perf_counter() - t1

            answers = [choose(".f-end select", end) for end in ("temple_full", "out_of_stones")]
            page.wait_for_timeout(1000 * settle)         # the kinds of games gathered in the background
            later = [choose(".f-decided select", "vp"), choose(".f-last select", "yes")]
            return {"usable_s": usable, "usable_cpu_s": usable_cpu, "filter_s": answers, "later_s": later, "peak_mb": _peak_mb(proc.pid)}
        finally:
            b.close()
            proc.terminate()
            proc.wait(timeout=30)


def main() -> None:
    ap = Parser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--run", type=Path, help="An existing run folder (kept); default: play one under /tmp.")
    ap.add_argument("--games", type=positive_int, default=1_000_000, help="Games of the run played (random players).")
    ap.add_argument("--players", type=int, default=4, choices=(2, 3, 4))
    ap.add_argument("--settle", type=float, default=30.0,
                    help="Seconds waited after the first two filters, before two more (decided by VP, "
                         "then also in the final round): the statistics per kind of game are "
                         "gathered in the background meanwhile.")
    ap.add_argument("--repeat", type=positive_int, default=3,
                    help="Times the server is started and measured; the medians are printed.")
    try:
        args = ap.parse_args()
    except UsageError as exc:
        print(f"bench_dashboard: error: {exc}", file=sys.stderr)
        raise SystemExit(2) from None
    tmp = None
    run = args.run
    try:
        if run is None:
            tmp = Path(tempfile.mkdtemp(prefix="evora-dash-bench-", dir="/tmp"))
            run = tmp / "run"
            t = time.perf_counter()
            subprocess.run([*_evora(), "simulate", "-n", str(args.players), "--games", str(args.games),
                            "--strategies", "random", "--out", str(run), "-q"], check=True)
            print(f"played {args.games:,} games in {time.perf_counter() - t:.0f} s")
        cache = Path(tempfile.mkdtemp(prefix="evora-dash-cache-", dir="/tmp"))
        got = []
        for i in range(args.repeat):
            got.append(measure(run, args.settle, cache))
            print(f"  {i + 1}: usable {got[-1]['usable_s']:.1f} s ({got[-1]['usable_cpu_s']:.1f} s of processor), filters "
                  + ", ".join(f"{s:.2f} s" for s in got[-1]["filter_s"]) + "; after settling "
                  + ", ".join(f"{s:.2f} s" for s in got[-1]["later_s"]) + f", peak {got[-1]['peak_mb']:.0f} MB")
        shutil.rmtree(cache, ignore_errors=True)
        med = lambda xs: float(statistics.median(xs))       # noqa: E731
        if len(got) > 1:
            print(f"first start (nothing kept): usable {got[0]['usable_s']:.1f} s ({got[0]['usable_cpu_s']:.1f} s of "
                  f"processor); later starts (kept): usable {med([g['usable_s'] for g in got[1:]]):.1f} s "
                  f"({med([g['usable_cpu_s'] for g in got[1:]]):.1f} s of processor), filters "
                  + ", ".join(f"{med([g['filter_s'][k] for g in got[1:]]):.2f} s" for k in range(len(got[0]['filter_s']))))
        print(f"medians of {len(got)}:")
        print(f"usable page: {med([g['usable_s'] for g in got]):.1f} s (target < 5 s), the server's processor time "
              f"until then {med([g['usable_cpu_s'] for g in got]):.1f} s")
        print("a filter's answer: " + ", ".join(f"{med([g['filter_s'][k] for g in got]):.2f} s"
                                                for k in range(len(got[0]['filter_s']))) + " (target < 1 s)")
        print("a filter's answer after settling: " + ", ".join(f"{med([g['later_s'][k] for g in got]):.2f} s"
                                                                for k in range(len(got[0]['later_s']))))
        print(f"server peak memory: {med([g['peak_mb'] for g in got]):.0f} MB (target < 1,536 MB)")
    finally:
        if tmp is not None:
            shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
