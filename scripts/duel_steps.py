#!/usr/bin/env python
"""Is each step of a ladder of duels significant? One line per kept duel, Holm over the steps.

    python scripts/duel_steps.py runs/ladder_1000_250 runs/ladder_4000_1000

Each folder is a finished ``evora duel A B --out DIR`` (A the step's upper rung). For each step:
A's win rate against its fair share (the score test on the seeds, clustered as the duel's
interval is, ``analysis.stats.clustered_rate_p``) and A's lead in VP against 0 (Student's t over
the seeds' mean leads, the duel's lead interval). Each family of p-values (win rate, lead) is
Holm-adjusted over the steps, and a step is significant in a family when its adjusted p is below
0.05. The two families answer different questions (how often A wins, by how much it scores
more); neither stands in for the other.

Mistakes (a folder that is not a finished duel of two strategies) end with one line on stderr
and exit status 2.
"""
from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
from scipy import stats

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from benchargs import Parser, UsageError  # noqa: E402


def step(folder: Path) -> dict:
    """One duel's two tests (unadjusted) from its kept run folder."""
    from analysis.stats import clustered_rate_p, clustered_wilson, mean_ci
    from evora_sim.duel import seed_leads
    from evora_sim.runner import RunError, open_run
    try:
        run = open_run(folder)
    except (RunError, OSError, ValueError) as exc:
        raise UsageError(str(exc)) from None
    m = run.manifest
    if m.get("command") != "evora duel":
        raise UsageError(f"{folder}: made by {m.get('command')!r}, not evora duel")
    missing = [k for k, v in m["chunks"].items() if v != "done"]
    if missing:
        raise UsageError(f"{folder}: {len(missing)} of {len(m['chunks'])} chunks not played yet; "
                         "run its evora duel command again to finish it")
    field = m["config"]["strategies"]
    names = list(dict.fromkeys(field))
    if len(names) != 2:
        raise UsageError(f"{folder}: a duel of {len(names)} strategies; a step is A against B")
    players = len(field)
    seeds = m["config"]["games"]
    seats = run.table("seats", columns=["game_id", "strategy", "score", "win"])
    seats["strategy"] = seats["strategy"].astype(str)
    a, b = names
    per_game = field.count(a)
    mine = seats[seats["strategy"] == a]
    wins = np.bincount(mine["game_id"].to_numpy() // players, weights=mine["win"].to_numpy(), minlength=seeds)
    trials = per_game * players
    fair = per_game / players
    p_win, _ = clustered_rate_p(wins, trials, fair)
    lo, hi, _ = clustered_wilson(wins, trials)
    leads = seed_leads(seats, a, b, players)
    lead, llo, lhi = mean_ci(leads)
    t = lead / (leads.std(ddof=1) / np.sqrt(len(leads)))
    p_lead = float(2 * stats.t.sf(abs(t), len(leads) - 1))
    return {"folder": str(folder), "a": a, "b": b, "seeds": seeds, "games": seeds * players,
            "rate": wins.sum() / (seeds * trials), "fair": fair, "ci": (lo, hi), "p_win": p_win,
            "lead": lead, "lead_ci": (llo, lhi), "p_lead": p_lead}


def main(argv=None) -> int:
    from analysis.stats import ALPHA, holm
    ap = Parser(prog="duel_steps.py", description="Holm-adjusted tests of a ladder of kept duels.")
    ap.add_argument("folders", nargs="+", type=Path, help="finished evora duel --out folders, one a step")
    try:
        args = ap.parse_args(sys.argv[1:] if argv is None else argv)
        steps = [step(f) for f in args.folders]
    except UsageError as exc:
        print(f"duel_steps.py: error: {exc}", file=sys.stderr)
        return 2
    adj_win = holm([s["p_win"] for s in steps])
    adj_lead = holm([s["p_lead"] for s in steps])
    print(f"{len(steps)} step{'s' if len(steps) > 1 else ''}; p-values Holm-adjusted over the steps, significant below {ALPHA}")
    def verdict(p, ahead, s):
        if not p < ALPHA:
            return "not significant"
        return f"significant: {s['a'] if ahead else s['b']} ahead"

    for s, pw, pl in zip(steps, adj_win, adj_lead):
        lo, hi = s["ci"]
        llo, lhi = s["lead_ci"]
        print(f"{s['a']} against {s['b']}: {s['games']:,} games ({s['seeds']:,} seeds), {s['folder']}")
        print(f"  win rate {100 * s['rate']:.1f}% [{100 * lo:.1f}%, {100 * hi:.1f}%] against a fair "
              f"{100 * s['fair']:.1f}%: adjusted p = {pw:.2g}, {verdict(pw, s['rate'] > s['fair'], s)}")
        print(f"  lead {s['lead']:+.2f} VP a game [{llo:+.2f}, {lhi:+.2f}] against 0: adjusted p = {pl:.2g}, "
              f"{verdict(pl, s['lead'] > 0, s)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
