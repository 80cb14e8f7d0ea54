"""Interrupt a search command with real signals and check that resuming gives the same result.

    python scripts/check_resume.py --work /tmp/resume --after 20,15 -- \
        evora tune strategy balanced --against self --players 2 --budget 20000 --jobs 1

The command (everything after ``--``, without ``--out``) is run twice: once straight through into
WORK/straight, and once into WORK/interrupted, stopped by SIGINT after the first number of
seconds, started again and killed by SIGKILL after the next, ... then run to the end. The
summary folders' files (every CSV and result file, not the figures' bytes) must be identical.
Prints what it did and the files compared; exits 1 if any differs.
"""
from __future__ import annotations

import argparse
import filecmp
import signal
import subprocess
import sys
import time
from pathlib import Path

COMPARED = (".csv", ".toml")


def run(cmd: list[str], out: Path, stop_after: float | None, sig: int) -> int:
    # Ctrl-C as at a terminal: a job started in the background has SIGINT ignored, which its
    # children would inherit
    proc = subprocess.Popen(cmd + ["--out", str(out), "--quiet"], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
    if stop_after is None:
        _, err = proc.communicate()
        if proc.returncode:
            sys.exit(f"command failed ({proc.returncode}): {err.decode()[-500:]}")
        return proc.returncode
    try:
        proc.wait(timeout=stop_after)
        return proc.returncode                  # finished before the signal
    except subprocess.TimeoutExpired:
        proc.send_signal(sig)
        proc.wait()
        if proc.returncode == 0:
            sys.exit(f"the command went on to the end after {signal.Signals(sig).name}: nothing was interrupted")
        return proc.returncode


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--work", required=True, help="An empty folder for the two searches.")
    parser.add_argument("--after", default="20,15", help="Seconds before each interruption, comma-separated.")
    parser.add_argument("command", nargs=argparse.REMAINDER, help="-- then the command, without --out.")
    args = parser.parse_args()
    cmd = args.command[1:] if args.command[:1] == ["--"] else args.command
    work = Path(args.work)
    work.mkdir(parents=True, exist_ok=True)
    t = time.time()
    run(cmd, work / "straight", None, 0)
    print(f"straight run: {time.time() - t:.0f} s")
    signals = [signal.SIGINT, signal.SIGKILL]
    for i, seconds in enumerate(float(x) for x in args.after.split(",")):
        sig = signals[i % 2]
        code = run(cmd, work / "interrupted", seconds, sig)
        print(f"interrupted run {i + 1}: {signal.Signals(sig).name} after {seconds:g} s (exit status {code})")
    run(cmd, work / "interrupted", None, 0)
    print("resumed to the end")
    a, b = work / "straight" / "summary", work / "interrupted" / "summary"
    names = sorted(p.name for p in a.iterdir() if p.suffix in COMPARED)
    same = True
    for name in names:
        equal = filecmp.cmp(a / name, b / name, shallow=False)
        same &= equal
        print(f"  {name}: {'identical' if equal else 'DIFFERENT'}")
    print("same result" if same else "RESULTS DIFFER")
    return 0 if same else 1


if __name__ == "__main__":
    sys.exit(main())
