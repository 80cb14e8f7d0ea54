"""A fix played on fresh seeds at a ladder of rungs (``evora balance --compensation --confirm-at``,
``evora explain``'s confirmation): the statistics are :mod:`analysis.confirm_stats`.

A rung is written as in ``evora skill --ladder`` (one strategy for every seat, or a field
``A,B,...`` with one per seat), the rungs weakest first, so a designer can paste the ladder a
finding was measured on. Every rung plays the same fresh seeds (one run seed, common random
numbers, every seed under each seat rotation, or once where every seat holds one player), so the
rungs differ only in their players. The
seeds are fresh: before any game, their game seeds are checked to share none with the games the
fix was chosen on (:func:`check_fresh`), so a fix is never judged on the games that chose it.
Each rung is an ordinary run folder: playing the same command again finishes an interrupted one.
"""
from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

from analysis.confirm_stats import per_seed_wins, seat_rows
from analysis.fairness import compare_fairness
from analysis.stats import ALPHA, holm
from strategies.registry import split_specs

from ..ladderplan import parse_ladder, rung_members
from ..manifest import RunError
from ..runner import rotation_for
from ..seeds import game_seeds
from .arms import Arm, Backend, play_arms

CHUNK = 1000            # seeds per chunk of a rung's run: the unit of resuming


def parse_rungs(text: str, players: int) -> list[str]:
    """``SPEC;SPEC;...`` as rungs (one is enough: a fix may be confirmed at one skill), each
    checked to seat ``players`` (RunError or StrategyError, one line)."""
    rungs = [text.strip()] if text is not None and ";" not in text and text.strip() else parse_ladder(text)
    for r in rungs:
        rung_members(r, players)
    return rungs


def rung_field(rung: str, players: int) -> tuple[str, ...]:
    """The strategy of every seat (rotation 0) of a rung."""
    items = split_specs(rung)
    return tuple(items * players if len(items) == 1 else items)


def check_fresh(used, fresh: tuple[int, int], what: str) -> None:
    """RunError unless the ``fresh`` seeds (run seed, seeds) share no game seed with any of
    ``used`` (the (run seed, seeds) the fix was chosen on). Distinct run seeds make a shared game
    seed all but impossible; this checks it on the seeds themselves, so a seed declared by hand
    (or a changed derivation) cannot make a confirmation judge the games that chose it."""
    new = game_seeds(fresh[0], 0, fresh[1])
    for run_seed, seeds in used:
        shared = np.intersect1d(new, game_seeds(run_seed, 0, seeds))
        if len(shared):
            raise RunError(f"{what}: {len(shared):,} of its {fresh[1]:,} seeds (run seed {fresh[0]}) were also played "
                           f"by the games the fix was chosen on (run seed {run_seed}); a confirmation needs fresh "
                           "seeds")


def seed_table(stages) -> pd.DataFrame:
    """The seeds each stage played, declared: stage, run seed, seed indices (first and last)."""
    return pd.DataFrame([{"stage": name, "run_seed": run_seed, "first_seed": 0, "last_seed": seeds - 1,
                          "seeds": seeds} for name, run_seed, seeds in stages])


def rung_folder(out, rung: int, arm: int, reuse: dict | None = None) -> str:
    """The run folder of arm ``arm`` at rung ``rung`` (both counted from 0) of :func:`confirm_at`
    into ``out``: the one ``reuse`` names for it, else ``out/r<rung + 1>/a<arm>``. One rule for
    playing the rungs and for a caller that reads more of their games than the table holds."""
    return str((reuse or {}).get((rung, arm), Path(out) / f"r{rung + 1}" / f"a{arm}"))


def confirm_at(out, players: int, rungs: list, arms: list[tuple[str, object]], fresh: tuple[int, int],
               backend: Backend = Backend(), command: str = "", quiet: bool = True, *, root,
               paired_with: str | None = None, reuse: dict | None = None,
               seat_rotation: bool | None = True) -> pd.DataFrame:
    """A rung is a spec (:func:`parse_rungs`) or a (label, strategy per seat) pair.
    Play every arm (label, rules) at every rung on the ``fresh`` seeds ((run seed, seeds), as
    :func:`check_fresh` takes them): seeds ``0 .. seeds - 1`` of the run seed, into
    ``out/rN/<arm number>``; the table of :func:`analysis.confirm_stats.seat_rows` with ``rung`` and
    ``label`` on every row, seats' intervals simultaneous over the seats and
    rungs (95% for the changes, ``ALPHA``). ``paired_with``: an arm's label; each other arm's seat unfairness is then compared
    with it at each rung on the same seeds (``analysis.fairness.compare_fairness``, paired; the
    p-values Holm-adjusted over the rungs and arms), in rows ``measure`` = "change of unfairness".
    ``reuse``: {(rung, arm number): run folder} already played with these players, rules, seeds
    and run seed (the fitting field's own confirmation), grown or read instead of played again.
    ``seat_rotation``: every seed under every rotation (True), or (None) as each rung's players
    need (``runner.default_rotation``: a rung of one player plays each seed once, as its rotations
    would all be the same game). Each run's folder: :func:`rung_folder`."""
    out = Path(out)
    run_seed, seeds = fresh
    rungs = [(r, rung_field(r, players)) if isinstance(r, str) else (r[0], tuple(r[1])) for r in rungs]
    plan = [(i, rung, j, label, rules) for i, rung in enumerate(rungs) for j, (label, rules) in enumerate(arms)]
    reuse = reuse or {}
    runs = play_arms([Arm(rung_folder(out, i, j, reuse), players, rung[1], rules,
                          rotation_for(rung[1], players, seat_rotation))
                      for i, rung, j, _, rules in plan], seeds, run_seed, min(seeds, CHUNK), backend, command,
                     quiet=quiet, root=root)
    rows, wins, changes = [], {}, []
    for (i, rung, _, label, _), run in zip(plan, runs):
        w = per_seed_wins(run.table("seats", ["game_id", "seat", "win"]), players, run.rotations)
        wins[i, label] = w
        rows += seat_rows(label, w, players, ALPHA, players * len(rungs), run.rotations, rung=i, label=rung[0],
                          run_seed=run_seed)
    if paired_with is not None:
        for i, rung in enumerate(rungs):
            for label, _ in arms:
                if label != paired_with:
                    c = compare_fairness(wins[i, paired_with], wins[i, label], paired=True, alpha=ALPHA)
                    changes.append({"rung": i, "label": rung[0], "run_seed": run_seed, "arm": label, "seat": -1,
                                    "measure": "change of unfairness (pp^2)", "value": 1e4 * c.diff,
                                    "lo": 1e4 * c.lo, "hi": 1e4 * c.hi, "level": 1 - ALPHA, "p": c.p,
                                    "seeds": c.seeds, "games": int(wins[i, label].sum())})
        if changes:
            for row, p in zip(changes, holm([r["p"] for r in changes])):
                row["p_holm"] = float(p)
                row["fairer"] = bool(p < ALPHA and row["value"] < 0)
    return pd.DataFrame(rows + changes)
