"""evora skill: the same seeds at every rung of a skill ladder, the rungs' strength from duels at
the ladder's player count, and a report that says which findings hold for stronger players."""
from __future__ import annotations

import math
import sys
import time
from pathlib import Path

import click

from ..ladderplan import MAX_BUDGET
from .analyse import check_backend, check_report_dir
from .group import (UserError, check_out_arg, check_players_arg, examples, jobs_option, load_rules_arg,
                    min_effect_option, playing, set_option)


def check_ladder_folder(out: Path) -> dict | None:
    """``out`` must be new, empty, or an earlier ladder (its plan is returned):
    :func:`fsutil.check_folder_kind`."""
    from ..fsutil import check_folder_kind
    from ..ladderplan import PLAN_FILE, read_plan
    from ..runner import RunError

    def holds_plan(folder: Path) -> bool:
        return (folder / PLAN_FILE).exists() or (folder / PLAN_FILE).is_symlink()

    try:
        return read_plan(out) if check_folder_kind(out, holds_plan, "an evora skill ladder", "--out", RunError) else None
    except RunError as exc:
        raise UserError(str(exc)) from None


def make_plan(out, old, players, rungs, seed, rules, games, duel_games, budget, jobs, quiet):
    """The ladder's plan: the one ``out`` holds (resumed), or a new one sized by ``games`` or by
    a timed pilot that fits ``budget`` minutes."""
    from ..ladder import (MIN_DUEL_SEEDS, MIN_SEEDS, PILOT_SHARE, PilotOverrun, default_duel_seeds, pilot,
                          size_to_budget, smallest_budget)
    from ..ladderplan import PLAN_FILE, Plan, check_duels, duel_games_per_seed, duel_plan, load_plan, same_design
    from ..warmup import ensure_compiled
    from ..runner import check_jobs

    per_seed = duel_games_per_seed(players)
    if old is not None:
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
        return plan, None
    cores = check_jobs(jobs)
    expected = None
    costs = {}
    if games is None or duel_games is None:
        say = (lambda line: click.echo(line, err=True)) if not quiet else None
        floor = smallest_budget(players, rungs, cores)
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
            costs = pilot(players, rungs, rules, seed, on_step=say, deadline=started + PILOT_SHARE * budget * 60)
        except PilotOverrun as exc:
            took = (time.monotonic() - started) / 60
            need = math.ceil(took * exc.total / max(exc.done, 1) / PILOT_SHARE)
            raise UserError(f"--budget {budget:g} minutes is too short for this ladder: the timing pilot took "
                            f"{took:.1f} minutes, more than its {PILOT_SHARE:.0%} of the budget, and had timed "
                            f"{exc.done} of its {exc.total} steps; give --budget {need} or more, or --games") from None
        spent = (time.monotonic() - started) / 60                 # the pilot counts against the budget
        seeds, duel_seeds, expected = size_to_budget(costs, rungs, players, budget, cores, spent)
    seeds = games if games is not None else seeds
    duel_seeds = -(-duel_games // per_seed) if duel_games is not None else (
        duel_seeds if games is None else default_duel_seeds(seeds, players))
    plan = Plan(players, rungs, seed, seeds, duel_seeds, rules.hash, budget if games is None else None, costs)
    plan.duels = duel_plan(rungs, players, duel_seeds)
    return plan, expected


@click.command(epilog=examples(
    "evora skill --players 4",
    "evora skill --players 4 --set emperor_tile.values=12,12 --out runs/skill-emp --report-dir reports/skill-emp",
    "evora skill -n 2 --ladder 'random;greedy;mcts(iterations=300)' --games 400 --out runs/sk2"))
@click.option("--players", "-n", "n_players", type=int, default=4, show_default=True, metavar="N", help="2, 3 or 4.")
@click.option("--ladder", "ladder_text", default=None, metavar="SPEC;SPEC;...",
              help="The rungs, weakest first, ';' between them; a rung is one strategy for every seat or a "
                   "field A,B,... with one per seat. Default: random; greedy(plan=action); the main job's "
                   "field; mcts(iterations=100); mcts(iterations=400).")
@click.option("--games", type=int, default=None, metavar="N",
              help="Games per rung (seeds: a mixed field plays each seed once per seat rotation). Default: "
                   "as many as --budget allows.")
@click.option("--duel-games", "duel_games", type=int, default=None, metavar="N",
              help="Games per pair of rungs (every pair at 2 players, neighbouring rungs at 3 and 4), for "
                   "the ratings, at the ladder's player count with the seats split between the two rungs, "
                   "seats rotated: a seed is 2 games at 2 players, 4 at 4 ([A,A,B,B]), 6 at 3 ([A,A,B] and "
                   "[A,B,B]); rounded up to whole seeds. Default: as many as --budget allows (about --games, "
                   "at least 20 seeds, when --games is given).")
@click.option("--budget", type=float, default=15.0, show_default=True, metavar="MINUTES",
              help="Without --games: the wall time the ladder may take here, report included; a timed pilot "
                   "of every rung sizes it.")
@click.option("--seed", type=int, default=1, show_default=True, help="The run seed, shared by every rung.")
@click.option("--explain-seeds", "explain_seeds", type=int, default=0, show_default=True, metavar="N",
              help="Also explain every rung (evora explain): its first N seeds replayed under each rule change "
                   "and its own seat compensation, the best fix confirmed on N fresh seeds, so the report says "
                   "whether a fix holds for stronger players. 0: none. Costs about 8 x N games a rung (x its "
                   "rotations), outside --budget.")
@jobs_option
@click.option("--out", default="runs/skill", show_default=True, metavar="DIR", callback=check_out_arg,
              help="The ladder's run folders go here (created, or resumed).")
@click.option("--report-dir", default="reports/skill", show_default=True, metavar="DIR", callback=check_out_arg,
              help="The report goes here.")
@click.option("--rules", "rules_path", metavar="FILE", help="Rules file merged over the shipped rules.")
@set_option
@click.option("--backend", type=click.Choice(["loky", "dask"]), default="loky", show_default=True,
              help="loky: processes on this machine; dask: a dask.distributed cluster.")
@click.option("--scheduler", metavar="ADDRESS", help="Dask scheduler, e.g. tcp://HOST:8786.")
@click.option("--quiet", "-q", is_flag=True, help="No progress lines or bars.")
@min_effect_option
def skill(n_players, ladder_text, games, duel_games, budget, seed, jobs, out, report_dir, rules_path,
          overrides=(), backend="loky", scheduler=None, quiet=False, explain_seeds=0, min_effect=1.0):
    """Play the same seeds at every rung of a skill ladder (every seat filled by the rung's
    players), measure the rungs' strength in duels at the ladder's player count (the seats
    split between two rungs), and write a report whose Skill section says, finding by finding,
    whether it holds for stronger players. Resumable: run the same command again to finish an
    interrupted ladder."""
    rules = load_rules_arg(rules_path, overrides)
    n = check_players_arg(n_players, rules)
    for value, option in ((games, "--games"), (duel_games, "--duel-games")):
        if value is not None and value < 1:
            raise UserError(f"{option} must be a positive whole number, got {value}")
    if not (math.isfinite(budget) and 0 < budget <= MAX_BUDGET):
        raise UserError(f"--budget must be a number of minutes above 0 and at most {MAX_BUDGET:g} (a week), "
                        f"got {budget}")
    check_backend(backend, scheduler)
    check_report_dir(report_dir, "--report-dir")
    rungs = parse_rungs(ladder_text, n)
    check_explain_seeds(explain_seeds, games)          # before any pilot when --games says the size
    plan = prepare_ladder(Path(out), n, rungs, seed, rules, games, duel_games, budget, jobs, quiet)
    check_explain_seeds(explain_seeds, plan.seeds)
    play_ladder(Path(out), plan, rules, jobs, backend, scheduler, quiet)
    if explain_seeds:
        explain_rungs(Path(out), plan, explain_seeds, jobs, backend, scheduler, quiet)
    from .analyse import write_ladder_report

    path = write_ladder_report(out, report_dir, option="--report-dir", min_effect=min_effect,
                               backend="dask" if backend == "dask" else "local", scheduler=scheduler)
    click.echo(f"report: {path / 'report.html'}")


def check_explain_seeds(seeds: int, rung_seeds: int | None) -> None:
    """0, or at least explain's minimum and at most the seeds a rung plays (when known)."""
    from ..experiments.explain import MIN_SEEDS

    top = f"the {rung_seeds:,} seeds a rung plays" if rung_seeds is not None else "the seeds a rung plays"
    if seeds != 0 and not (MIN_SEEDS <= seeds and (rung_seeds is None or seeds <= rung_seeds)):
        raise UserError(f"--explain-seeds must be 0 (none) or a whole number from {MIN_SEEDS} to {top}, got {seeds}")


def explain_rungs(out: Path, plan, seeds: int, jobs, backend, scheduler, quiet) -> None:
    """Every rung explained (``experiments.explain.explain_ladder``); one-line errors."""
    from ..experiments.arms import Backend
    from ..experiments.explain import explain_ladder
    from ..runner import check_jobs

    say = None if quiet else (lambda line: click.echo(line, err=True))
    with playing(out):
        explain_ladder(out, plan, seeds, Backend(check_jobs(jobs), backend, scheduler), "evora " + " ".join(sys.argv[1:]), say)


def parse_rungs(ladder_text, n: int) -> list[str]:
    """--ladder (or the default ladder of ``n`` players), every rung checked."""
    from strategies.registry import StrategyError

    from ..ladderplan import default_ladder, parse_ladder, rung_members
    from ..runner import RunError

    try:
        rungs = parse_ladder(ladder_text) if ladder_text is not None else default_ladder(n)
        for r in rungs:
            rung_members(r, n)
    except (RunError, StrategyError) as exc:
        raise UserError(str(exc)) from None
    return rungs


def prepare_ladder(out: Path, n, rungs, seed, rules, games, duel_games, budget, jobs, quiet=False):
    """The ladder's plan, every folder checked, before any game; one-line errors."""
    from strategies.registry import StrategyError

    from ..ladder import check_folders

    from ..ladderplan import duel_games_per_seed
    from ..runner import RunError, check_jobs

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
    from ..ladder import play
    from ..ladderplan import write_plan

    write_plan(out, plan)
    command = "evora " + " ".join(sys.argv[1:])
    say = None if quiet else (lambda line: click.echo(line, err=True))
    with playing(out):
        play(plan, out, rules, jobs, backend=backend, scheduler=scheduler, quiet=quiet, command=command,
             on_step=say)
