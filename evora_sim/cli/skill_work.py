"""The work behind ``evora skill`` (and ``evora run --skill``): the ladder's plan, sized by a
timed pilot or by --games, every folder checked before a game, then the rungs and duels played
and the rungs explained. Imported when the command runs: the runner, the ladder and the
experiments take 2.5 s to import (measured), which ``evora skill --help`` does not need."""
from __future__ import annotations

import math
import sys
import time
from dataclasses import dataclass
from pathlib import Path

import click

from strategies.errors import StrategyError

from ..experiments.arms import Backend
from ..experiments.explain_runs import MIN_SEEDS as MIN_EXPLAIN_SEEDS
from ..experiments.explain_runs import explain_ladder
from ..fsutil import check_folder_kind
from .. import ladder  # pilot and size_to_budget are called through the module: tests stand in for them
from ..ladder import (MIN_DUEL_SEEDS, MIN_SEEDS, PILOT_SHARE, PilotOverrun, check_folders, default_duel_seeds,
                      play, smallest_budget)
from ..ladderplan import (MAX_BUDGET, PLAN_FILE, Plan, check_duels, default_ladder, duel_games_per_seed, duel_plan,
                          load_plan, parse_ladder, read_plan, rung_members, same_design, write_plan)
from ..manifest import RunError
from ..runner import check_jobs
from ..warmup import ensure_compiled
from . import analyse_work
from .group import UserError, check_backend, check_players_arg, load_rules_arg, playing


@dataclass(frozen=True)
class SkillOptions:
    """What ``evora skill`` was asked, option by option (the names of its options' parameters),
    handed to the work as one value rather than sixteen positions."""

    n_players: int
    ladder_text: str | None
    games: int | None
    duel_games: int | None
    budget: float | None               # None: ladder.DEFAULT_BUDGET, or the smallest ladder when that is longer
    seed: int
    jobs: int
    out: str
    report_dir: str
    rules_path: str | None
    overrides: tuple
    backend: str
    scheduler: str | None
    quiet: bool
    explain_seeds: int
    min_effect: float


def skill(options: SkillOptions):
    """The command ``evora skill``, its arguments checked before any game."""
    games, duel_games, budget, seed, jobs, out = (options.games, options.duel_games, options.budget, options.seed,
                                                  options.jobs, options.out)
    backend, scheduler, quiet = options.backend, options.scheduler, options.quiet
    explain_seeds, report_dir = options.explain_seeds, options.report_dir
    rules = load_rules_arg(options.rules_path, options.overrides)
    n = check_players_arg(options.n_players, rules)
    for value, option in ((games, "--games"), (duel_games, "--duel-games")):
        if value is not None and value < 1:
            raise UserError(f"{option} must be a positive whole number, got {value}")
    if budget is not None and not (math.isfinite(budget) and 0 < budget <= MAX_BUDGET):
        raise UserError(f"--budget must be a number of minutes above 0 and at most {MAX_BUDGET:g} (a week), "
                        f"got {budget}")
    check_backend(backend, scheduler)
    analyse_work.check_report_dir(report_dir, "--report-dir")
    rungs = parse_rungs(options.ladder_text, n)
    check_explain_seeds(explain_seeds, games)          # before any pilot when --games says the size
    plan = prepare_ladder(Path(out), n, rungs, seed, rules, games, duel_games, budget, jobs, quiet)
    check_explain_seeds(explain_seeds, plan.seeds)
    play_ladder(Path(out), plan, rules, jobs, backend, scheduler, quiet)
    if explain_seeds:
        explain_rungs(Path(out), plan, explain_seeds, jobs, backend, scheduler, quiet)
    path = analyse_work.write_ladder_report(out, report_dir, option="--report-dir", min_effect=options.min_effect,
                               backend="dask" if backend == "dask" else "local", scheduler=scheduler)
    analyse_work.announce(path)


def check_ladder_folder(out: Path) -> dict | None:
    """``out`` must be new, empty, or an earlier ladder (its plan is returned):
    :func:`fsutil.check_folder_kind`."""
    def holds_plan(folder: Path) -> bool:
        return (folder / PLAN_FILE).exists() or (folder / PLAN_FILE).is_symlink()

    try:
        return read_plan(out) if check_folder_kind(out, holds_plan, "an evora skill ladder", "--out", RunError) else None
    except RunError as exc:
        raise UserError(str(exc)) from None


def make_plan(out, old, players, rungs, seed, rules, games, duel_games, budget, jobs, quiet):
    """The ladder's plan: the one ``out`` holds (resumed), or a new one sized by ``games`` or by
    a timed pilot that fits ``budget`` minutes."""
    if old is not None:
        return resumed_plan(out, old, players, rungs, seed, rules, games, duel_games), None
    per_seed = duel_games_per_seed(players)
    expected, costs = None, {}
    if games is None or duel_games is None:
        seeds, duel_seeds, expected, budget, costs = fit_budget(players, rungs, seed, rules, budget, check_jobs(jobs),
                                                                quiet)
    seeds = games if games is not None else seeds
    duel_seeds = -(-duel_games // per_seed) if duel_games is not None else (
        duel_seeds if games is None else default_duel_seeds(seeds, players))
    plan = Plan(players, rungs, seed, seeds, duel_seeds, rules.hash, budget if games is None else None, costs)
    plan.duels = duel_plan(rungs, players, duel_seeds)
    return plan, expected


def resumed_plan(out, old, players, rungs, seed, rules, games, duel_games):
    """The plan ``out`` holds, if it is this ladder's and ``games`` and ``duel_games`` (when given)
    agree with it."""
    per_seed = duel_games_per_seed(players)
    why = same_design(old, players, rungs, seed, rules.hash)
    if why:
        raise UserError(f"--out {out} holds another ladder ({why}); choose another --out to play this one")
    plan = load_plan(old, f"{out / PLAN_FILE}")
    check_duels(plan, f"{out / PLAN_FILE}")          # the rungs are the user's again: so must the duels be
    if games is not None and games != plan.seeds:
        raise UserError(f"--out {out} holds this ladder with --games {plan.seeds:,}, not {games:,}; give "
                        f"--games {plan.seeds:,} (or none) to finish it, or another --out")
    if duel_games is not None and -(-duel_games // per_seed) != plan.duel_seeds:
        raise UserError(f"--out {out} holds this ladder with --duel-games {per_seed * plan.duel_seeds:,} "
                        f"({plan.duel_seeds:,} seeds, {per_seed} games each at {players} players); give that (or "
                        "none) to finish it, or another --out")
    return plan


def fit_budget(players, rungs, seed, rules, budget, cores, quiet):
    """Seeds a rung and a duel pair that fit ``budget`` minutes (``None``: the default budget, or
    the smallest ladder if that is too short), from a timed pilot that counts against it. Returns
    (seeds, duel seeds, expected minutes, the budget, the pilot's costs)."""
    say = (lambda line: click.echo(line, err=True)) if not quiet else None
    floor = smallest_budget(players, rungs, cores)
    given = budget is not None
    if not given:                        # the default must run: at least the smallest ladder
        budget = max(ladder.DEFAULT_BUDGET, float(math.ceil(floor)))
    if budget < floor:
        need = math.ceil(floor)
        raise UserError(f"--budget {budget:g} minutes is too short for this ladder on {cores} core"
                        f"{'s' if cores > 1 else ''}: its search players alone need at least {need} minutes for "
                        f"the smallest ladder ({MIN_SEEDS} seeds a rung, {MIN_DUEL_SEEDS} a duel pair) and the "
                        f"timing pilot; give --budget {need} or more, fewer or cheaper rungs, or --games")
    ensure_compiled(say)                                       # a one-time compile is not the ladder's
    if say:
        say(f"sizing the ladder to --budget {budget:g} minutes: a short timed pilot (one seed a rung, one "
            f"game a duel player; at most {PILOT_SHARE:.0%} of the budget)")
    started = time.monotonic()
    try:
        costs = ladder.pilot(players, rungs, rules, seed, on_step=say, deadline=started + PILOT_SHARE * budget * 60)
    except PilotOverrun as exc:
        took = (time.monotonic() - started) / 60
        need = math.ceil(took * exc.total / max(exc.done, 1) / PILOT_SHARE)
        raise UserError(f"--budget {budget:g} minutes is too short for this ladder: the timing pilot took "
                        f"{took:.1f} minutes, more than its {PILOT_SHARE:.0%} of the budget, and had timed "
                        f"{exc.done} of its {exc.total} steps; give --budget {need} or more, or --games") from None
    spent = (time.monotonic() - started) / 60                 # the pilot counts against the budget
    try:
        seeds, duel_seeds, expected = ladder.size_to_budget(costs, rungs, players, budget, cores, spent)
    except RunError:
        if given:
            raise
        seeds, duel_seeds, expected = ladder.smallest_ladder(costs, rungs, players, cores, spent)
        budget = math.ceil(expected)
        if say:
            say(f"the default budget of {ladder.DEFAULT_BUDGET:g} minutes is too short for this ladder on {cores} "
                f"core{'s' if cores > 1 else ''}: playing the smallest one ({seeds} seeds a rung, {duel_seeds} a "
                f"duel pair), about {budget} minutes; give --budget or --games for a larger ladder")
    return seeds, duel_seeds, expected, budget, costs


def check_explain_seeds(seeds: int, rung_seeds: int | None) -> None:
    """0, or at least explain's minimum and at most the seeds a rung plays (when known)."""
    top = f"the {rung_seeds:,} seeds a rung plays" if rung_seeds is not None else "the seeds a rung plays"
    if seeds != 0 and not (MIN_EXPLAIN_SEEDS <= seeds and (rung_seeds is None or seeds <= rung_seeds)):
        raise UserError(f"--explain-seeds must be 0 (none) or a whole number from {MIN_EXPLAIN_SEEDS} to {top}, "
                        f"got {seeds}")


def explain_rungs(out: Path, plan, seeds: int, jobs, backend, scheduler, quiet) -> None:
    """Every rung explained (``experiments.explain_runs.explain_ladder``); one-line errors."""
    say = None if quiet else (lambda line: click.echo(line, err=True))
    with playing(out):
        explain_ladder(out, plan, seeds, Backend(check_jobs(jobs), backend, scheduler), "evora " + " ".join(sys.argv[1:]), say)


def parse_rungs(ladder_text, n: int) -> list[str]:
    """--ladder (or the default ladder of ``n`` players), every rung checked."""
    try:
        rungs = parse_ladder(ladder_text) if ladder_text is not None else default_ladder(n)
        for r in rungs:
            rung_members(r, n)
    except (RunError, StrategyError) as exc:
        raise UserError(str(exc)) from None
    return rungs


def prepare_ladder(out: Path, n, rungs, seed, rules, games, duel_games, budget, jobs, quiet=False):
    """The ladder's plan, every folder checked, before any game; one-line errors."""
    old = check_ladder_folder(out)
    try:
        check_jobs(jobs)
        plan, expected = make_plan(out, old, n, rungs, seed, rules, games, duel_games, budget, jobs, quiet)
        check_folders(plan, out, rules)
    except (RunError, StrategyError) as exc:
        raise UserError(str(exc)) from None
    if not quiet:
        sized = f" (expected {expected:.1f} minutes)" if expected else ""
        click.echo(f"ladder of {len(rungs)} rungs at {n} players: {plan.seeds:,} seeds a rung, "
                   f"{duel_games_per_seed(n) * plan.duel_seeds:,} duel games ({n}-player) a pair of rungs{sized} "
                   f"-> {out}", err=True)
    return plan


def play_ladder(out: Path, plan, rules, jobs, backend="loky", scheduler=None, quiet=False) -> None:
    """Write the plan, then play what is missing of it."""
    write_plan(out, plan)
    command = "evora " + " ".join(sys.argv[1:])
    say = None if quiet else (lambda line: click.echo(line, err=True))
    with playing(out):
        play(plan, out, rules, jobs, backend=backend, scheduler=scheduler, quiet=quiet, command=command,
             on_step=say)
