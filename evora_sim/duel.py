"""Head-to-head: ``evora duel A B``. Seat-rotated games over the same seeds, and each
strategy's win rate with a 95% Wilson interval clustered by seed.

Every seed is played once under each cyclic rotation of the field (rotation ``r`` seats the
field's strategy ``i`` at seat ``(i + r) mod n``), so each strategy sits in every seat equally
often against the same card stacks. The games are a normal run of :func:`runner.simulate`
(into a temporary folder, or into ``--out``), so custom Python strategies and ``--jobs`` work as
in ``evora simulate``, and a duel kept in a folder resumes as a run does: a duel of search
players takes hours, and an interrupted one should cost only its unfinished chunks.

The games of one seed (its rotations) share the card stacks, so they are not independent
trials: each interval is Wilson's on the effective sample, seat-games divided by the design
effect of the per-seed win counts when that exceeds 1 (:func:`analysis.stats.clustered_wilson`).

A field of two strategies (A against B, or A against several B) also gets A's mean lead in VP:
a game's lead is A's score minus the mean score of the B seats, and the interval is Student's t
over the seeds' mean leads, the seed being the unit for the same reason. A win rate says how
often, the lead says by how much, and a lead can show a difference between two close players in
fewer games than the win rate does: it counts every VP, not only who finished first.

Ties: the engine breaks equal VP by fewer parts left, then the later seat in turn order (D18),
so every game has exactly one winner and no game counts as a draw.
"""
from __future__ import annotations

import math
import tempfile
from dataclasses import dataclass, field as dataclass_field

import numpy as np

from analysis.stats import clustered_wilson, mean_ci
from strategies.errors import StrategyError
from strategies.registry import parse_spec, resolve_each, split_specs

from .runner import Execution, RunError, check_jobs, simulate

# how each way of settling a tie on VP reads in the duel's last line (evora_sim.ranking.DECIDED_BY)
TIE_WORDS = {"half_point": "by the half point (V2)", "parts_left": "by fewer parts left (D18)",
             "seat_order": "by the later seat (D18)"}


def ties_line(decided: dict[str, int], games: int) -> str:
    """What the duel's games did with ties on VP, from their own ``decided_by`` counts, so the
    line holds under every tie-break rule (a shared victory of V4 is a lot, not a tie broken)."""
    broken = {k: decided.get(k, 0) for k in TIE_WORDS if decided.get(k, 0)}
    lots = decided.get("lot", 0)
    parts = []
    if broken:
        how = " and ".join(f"{TIE_WORDS[k]} in {n:,}" for k, n in broken.items())
        parts.append(f"{sum(broken.values()):,} of {games:,} games were tied on VP, broken {how}")
    if lots:
        parts.append(f"{lots:,} of {games:,} were shared victories (end.tie_break=shared), each recorded "
                     "as won by one of the tied seats drawn by lot, each equally likely (V4)")
    if not parts:
        return f"ties: none of the {games:,} games was tied on VP, so every game has exactly one winner"
    return "ties: " + "; ".join(parts) + ", so every game has exactly one recorded winner"


@dataclass
class DuelRow:
    strategy: str
    seats_per_game: int
    seat_games: int
    wins: int
    mean_score: float
    interval: tuple[float, float]     # 95%, clustered by seed
    design_effect: float              # of the per-seed win counts (nan if undefined)

    @property
    def win_rate(self) -> float:
        return self.wins / self.seat_games if self.seat_games else float("nan")


@dataclass
class DuelLead:
    """A's mean lead over B in VP a game, with its 95% t interval over the seeds' mean leads."""
    strategy: str
    other: str
    mean: float
    interval: tuple[float, float]
    seeds: int


@dataclass
class DuelResult:
    field: list[str]
    players: int
    seeds: int
    games: int
    seed: int
    rows: list[DuelRow]
    out: str | None = None            # the run folder that keeps the games, if any
    lead: DuelLead | None = None      # with two strategies in the field
    decided: dict = dataclass_field(default_factory=dict)    # games by how the winner was decided (decided_by)


def duel_field(specs, players: int | None) -> list:
    """The seats' strategies, in field order, from the command's arguments: each argument one
    spec or a comma-separated field. Two strategies and ``players`` > 2 make the field A, B, B
    (, B): one A against the others."""
    items = [item for arg in specs for item in split_specs(arg)]
    if len(items) < 2:
        raise StrategyError(f"a duel needs at least two strategies, got {len(items)}: "
                            "evora duel A B, or a field like A,B,B,B")
    if players is None:
        players = len(items) if len(items) > 2 else 2
    if len(items) == 2 and players > 2:
        items = [items[0]] + [items[1]] * (players - 1)
    if len(items) != players:
        raise StrategyError(f"{len(items)} strategies given for {players} players: give two "
                            f"(A against {players - 1} x B) or one per seat")
    return resolve_each(items, parse_spec)


def seed_leads(seats, strategy: str, other: str, players: int) -> np.ndarray:
    """Each seed's mean lead of ``strategy`` over ``other``: per game, its seats' mean score
    minus the other's seats' mean score, then the mean over the seed's rotations (``game_id`` is
    seed index x rotations + rotation, as the duel plays them)."""
    game = seats["game_id"].to_numpy()
    score = seats["score"].to_numpy(dtype=float)
    names = seats["strategy"].to_numpy()
    n_games = int(game.max()) + 1

    def per_game_mean(name):
        mine = names == name
        total = np.bincount(game[mine], weights=score[mine], minlength=n_games)
        return total / np.bincount(game[mine], minlength=n_games)

    lead = per_game_mean(strategy) - per_game_mean(other)
    return lead.reshape(-1, players).mean(axis=1)


def duel_lead(seats, names: list[str], players: int) -> DuelLead | None:
    """The first strategy's lead over the second, for a field of exactly two strategies."""
    if len(names) != 2:
        return None
    leads = seed_leads(seats, names[0], names[1], players)
    mean, lo, hi = mean_ci(leads)
    return DuelLead(names[0], names[1], mean, (lo, hi), len(leads))


def duel(field: list, games: int, seed: int = 1, jobs: int = 1, rules=None,
         quiet: bool = True, decision_timeout: float | None = None, out=None) -> DuelResult:
    """Play ``games`` games (rounded up to whole seeds x rotations) of the ``field`` (one
    strategy per seat), every seed under every cyclic rotation, and count each strategy's wins.
    With ``out`` the games are kept there, and the same duel run again finishes what is
    missing (another duel in that folder is refused)."""
    players = len(field)
    if isinstance(games, bool) or not isinstance(games, int) or games < 1:
        raise RunError(f"--games must be a positive whole number, got {games!r}")
    seeds = math.ceil(games / players)
    check_jobs(jobs)

    def play(folder):
        # no chunk size: several chunks a job (progress comes through an hour-long duel), and a
        # duel kept in a folder resumes in its own chunks whatever --jobs says now
        run = simulate(players, seeds, list(field), seed=seed, out=folder, seat_rotation=True, rules=rules,
                       execution=Execution(jobs=jobs, quiet=quiet, command="evora duel",
                                           decision_timeout=decision_timeout))
        decided = run.table("games", columns=["decided_by"])["decided_by"].astype(str).value_counts()
        return run.table("seats", columns=["game_id", "strategy", "score", "win"]), decided.to_dict()

    if out is None:
        with tempfile.TemporaryDirectory(prefix="evora-duel-") as tmp:
            seats, decided = play(f"{tmp}/run")
    else:
        seats, decided = play(out)
    seats["strategy"] = seats["strategy"].astype(str)
    names = list(dict.fromkeys(x.name for x in field))
    rows = []
    for name in names:
        grp = seats[seats["strategy"] == name]
        per_game = sum(x.name == name for x in field)
        # game_id = seed index x rotations + rotation: a seed's games are one cluster
        per_seed = np.bincount(grp["game_id"].to_numpy() // players, weights=grp["win"].to_numpy(),
                               minlength=seeds)
        lo, hi, deff = clustered_wilson(per_seed, per_game * players)
        rows.append(DuelRow(name, per_game, len(grp), int(grp["win"].sum()), float(grp["score"].mean()),
                            (lo, hi), deff))
    return DuelResult([x.name for x in field], players, seeds, seeds * players, seed, rows,
                      None if out is None else str(out), duel_lead(seats, names, players), decided)


def _pct(x: float) -> str:
    return f"{100 * x:.1f}%"


def duel_lines(res: DuelResult) -> list[str]:
    """The duel's table as text lines."""
    field = ", ".join(res.field)
    lines = [f"Duel: {res.players} players, field {field}",
             f"{res.games} games = {res.seeds} seeds x {res.players} seat rotations "
             f"(run seed {res.seed})"]
    if res.out:
        lines.append(f"games kept in {res.out}: the same command finishes the duel if it is stopped")
    lines.append("")
    header = ["strategy", "seats/game", "seat-games", "wins", "win rate", "95% CI", "mean score", "deff"]
    body = []
    for r in res.rows:
        lo, hi = r.interval
        deff = f"{r.design_effect:.2f}" if np.isfinite(r.design_effect) else "-"
        body.append([r.strategy, str(r.seats_per_game), str(r.seat_games), str(r.wins),
                     _pct(r.win_rate), f"[{_pct(lo)}, {_pct(hi)}]", f"{r.mean_score:.1f}", deff])
    widths = [max(len(row[i]) for row in [header] + body) for i in range(len(header))]

    def fmt(cells):
        return "  ".join(c.ljust(w) if i == 0 else c.rjust(w)
                         for i, (c, w) in enumerate(zip(cells, widths))).rstrip()

    lines += [fmt(header)] + [fmt(row) for row in body]
    if res.lead is not None:
        ld = res.lead
        lo, hi = ld.interval
        spread = (f", 95% CI [{lo:+.2f}, {hi:+.2f}] (t over {ld.seeds:,} seeds' mean leads; 0 = no difference in VP)"
                  if ld.seeds > 1 else " (one seed: no interval)")
        lines += ["", f"{ld.strategy} leads {ld.other} by {ld.mean:+.2f} VP a game{spread}"]
    lines += ["",
              f"win rate = wins / seat-games (a game won by one of a strategy's seats counts once); "
              f"a fair share is {_pct(1 / res.players)} per seat",
              "95% CI: Wilson, clustered by seed (a seed's rotations share its card stacks): with a "
              "design effect (deff) above 1 it uses seat-games / deff as the sample",
              ties_line(res.decided, res.games)]
    return lines


__all__ = ["duel_field", "duel", "duel_lines", "duel_lead", "seed_leads", "DuelLead", "DuelResult", "DuelRow",
           "ties_line"]
