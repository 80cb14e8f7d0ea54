"""Commands that play many games into run folders: simulate and the main job, run."""
from __future__ import annotations

import sys

import click

from ..fields import DEFAULT_FIELD
from .analyse import check_report_dir, write_report
from .group import (INTERRUPTED, STRATEGIES_HELP, SET_HELP, UserError, check_out_arg, check_players_arg,
                    decision_timeout_option, examples, jobs_option, load_rules_arg, playing, set_option,
                    warn_other_rules)


GAMES_HELP = ("Games to play in all: seeds x seat rotations, rounded up to whole seeds (with "
              "seat rotation each seed is played once in every rotation).")


def run_options(f):
    """Options shared by the commands that run experiments."""
    for opt in reversed([
        click.option("--players", "-n", "n_players", type=int, required=True, metavar="N", help="2, 3 or 4."),
        click.option("--games", type=int, default=None, metavar="N", help=GAMES_HELP),
        click.option("--seeds", type=int, default=None, metavar="N",
                     help="Instead of --games: the seeds to play (games = seeds x seat rotations)."),
        click.option("--strategies", "spec", required=True, metavar="A,B,...", help=STRATEGIES_HELP),
        click.option("--seed", type=int, default=1, show_default=True, help="The run seed; game seeds derive from it."),
        jobs_option,
        click.option("--out", required=True, metavar="DIR", callback=check_out_arg,
                     help="The run folder (created, or resumed)."),
        click.option("--seat-rotation/--no-seat-rotation", "seat_rotation", default=None,
                     help="Play every seed once under each cyclic rotation of the strategies, so every "
                          "strategy sits in every seat on the same deals. On by default when the seats "
                          "hold different strategies (without it a seat's win rate is also its "
                          "strategy's); --no-seat-rotation turns it off."),
        click.option("--rules", "rules_path", metavar="FILE", help="Rules file merged over the shipped rules."),
        click.option("--set", "overrides", multiple=True, metavar="KEY=VALUE", help=SET_HELP),
        click.option("--backend", type=click.Choice(["loky", "dask"]), default="loky", show_default=True,
                     help="loky: processes on this machine; dask: a dask.distributed cluster."),
        click.option("--scheduler", metavar="ADDRESS", help="Dask scheduler, e.g. tcp://HOST:8786."),
        click.option("--chunk-size", type=int, default=None, metavar="N",
                     help="Seeds per chunk (the unit of parallel work and of resuming)."),
        click.option("--quiet", "-q", is_flag=True, help="No progress bar or progress lines."),
        decision_timeout_option,
    ]):
        f = opt(f)
    return f


def _whole(value, option: str) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise UserError(f"{option} must be a positive whole number, got {value}")
    return value


def settle_size(kw: dict, max_games=None) -> int | None:
    """Resolve the seat rotation (None: on when the seats hold different strategies) and turn
    --games (games in all) or --seeds into ``kw["seeds"]``, the seeds the runner plays. Returns
    --max-games as seeds (None without it). One meaning of --games on every command: games."""
    from strategies.registry import StrategyError

    from ..runner import RunError, rotation_for

    games, seeds = kw.pop("games", None), kw.get("seeds")
    if (games is None) == (seeds is None):
        raise UserError("give --games N (games in all) or --seeds N (seeds, each played once per "
                        "seat rotation), not " + ("both" if games is not None else "neither"))
    try:
        kw["seat_rotation"] = rotation_for(kw["spec"], kw["n_players"], kw["seat_rotation"])
    except (RunError, StrategyError) as exc:
        raise UserError(str(exc)) from None
    rotations = kw["n_players"] if kw["seat_rotation"] else 1
    if seeds is None:
        kw["seeds"] = -(-_whole(games, "--games") // rotations)
    else:
        _whole(seeds, "--seeds")
    if max_games is None:
        return None
    return -(-_whole(max_games, "--max-games") // (1 if games is None else rotations))


def run_experiment(n_players, seeds, spec, seed, jobs, out, seat_rotation, rules_path, backend,
                   scheduler, chunk_size, quiet, overrides=(), rules=None, decision_timeout=None):
    """Check every argument, then run; user mistakes become one-line errors."""
    from ..runner import resolve_strategies, simulate

    if rules is None:
        rules = load_rules_arg(rules_path, overrides)
    check_players_arg(n_players, rules)
    command = "evora " + " ".join(sys.argv[1:])
    with playing(out):
        warn_other_rules(resolve_strategies(spec, n_players), rules)
        return simulate(n_players, seeds, spec, seed=seed, out=out, jobs=jobs,
                        seat_rotation=seat_rotation, rules=rules, backend=backend,
                        scheduler=scheduler, chunk_size=chunk_size, quiet=quiet, command=command,
                        decision_timeout=decision_timeout)


def until_ci_options(f):
    for opt in reversed([
        click.option("--until-ci", "until_ci", type=float, default=None, metavar="WIDTH",
                     help="Keep adding games (doubling from --games) until the half-width of the "
                          "--ci-metrics' 95% intervals, Bonferroni-adjusted over the planned looks "
                          "(so they stay valid under this stopping), is below WIDTH (percentage "
                          "pp for rates, shares and the seat unfairness; VP or rounds for "
                          "means), or --max-games. Report and sweep show these adjusted intervals."),
        click.option("--max-games", type=int, default=None, metavar="N",
                     help="With --until-ci: the most games to play (seeds with --seeds; default 32 x "
                          "--games)."),
        click.option("--ci-metrics", default="seats", show_default=True, metavar="A,B",
                     help="With --until-ci: seats, fairness (the seat unfairness; 'spread' is its old "
                          "name), strategies, score, majority, length."),
    ]):
        f = opt(f)
    return f


def play_until_ci(arms, kw, until_ci, max_seeds, ci_metrics, command):
    """Run ``arms`` ((out, rules) pairs) with --until-ci; user mistakes as one-line errors."""
    from analysis.untilsure import describe
    from strategies.registry import StrategyError

    from ..runner import RunError
    from ..sequential import parse_ci_metrics, run_until_ci

    def on_look(j, k, n, worst):
        if not kw["quiet"]:
            click.echo(f"look {j} of {k}: {n:,} seeds, largest adjusted half-width {worst:.3g} "
                       f"(target {until_ci})", err=True)

    try:
        metrics = parse_ci_metrics(ci_metrics)
        seeds = kw["seeds"]
        record = run_until_ci(arms, kw["n_players"], kw["spec"], initial_games=seeds,
                              max_games=max_seeds if max_seeds is not None else 32 * seeds,
                              width=until_ci, metrics=metrics, seed=kw["seed"],
                              seat_rotation=kw["seat_rotation"], chunk_size=kw["chunk_size"],
                              jobs=(-1 if kw["jobs"] is None else kw["jobs"]), quiet=kw["quiet"],
                              command=command, backend=kw["backend"], scheduler=kw["scheduler"],
                              on_look=on_look, decision_timeout=kw.get("decision_timeout"))
    except (RunError, StrategyError) as exc:
        raise UserError(str(exc)) from None
    except KeyboardInterrupt:
        click.echo("\ninterrupted: finished chunks are kept; run the same command again to go on",
                   err=True)
        sys.exit(INTERRUPTED)
    return record, describe(record)


def check_until(until_ci, max_seeds, seeds):
    if until_ci is None:
        if max_seeds is not None:
            raise UserError("--max-games needs --until-ci WIDTH")
        return
    if not until_ci > 0:
        raise UserError(f"--until-ci must be a positive width, got {until_ci}")
    if max_seeds is not None and max_seeds < seeds:
        raise UserError(f"--max-games must be at least --games ({max_seeds:,} seeds < {seeds:,})")


@click.command(epilog=examples(
    "evora simulate -n 4 --games 20000 --strategies balanced,cards,emperor,greedy --out runs/base",
    "evora simulate -n 4 --games 20000 --strategies balanced,cards,emperor,greedy --out runs/white6 "
    "--set white_stone.vp=6",
    "evora simulate -n 2 --seeds 5000 --strategies greedy --no-seat-rotation --out runs/mirror"))
@run_options
@until_ci_options
def simulate(until_ci=None, max_games=None, ci_metrics="seats", **kwargs):
    """Play many seeded games in parallel into Parquet tables (resumable). --games counts games
    in all: with seat rotation (the default for a mixed field) 20000 games are 5000 seeds x 4
    rotations at 4 players."""
    rules = load_rules_arg(kwargs["rules_path"], kwargs["overrides"])
    check_players_arg(kwargs["n_players"], rules)
    max_seeds = settle_size(kwargs, max_games)
    check_until(until_ci, max_seeds, kwargs["seeds"])
    if until_ci is not None:
        _, text = play_until_ci([(kwargs["out"], rules)], kwargs, until_ci, max_seeds, ci_metrics,
                            "evora " + " ".join(sys.argv[1:]))
        click.echo(text)
        from ..runner import open_run

        result = open_run(kwargs["out"])
    else:
        result = run_experiment(**kwargs, rules=rules)
    games = result.n_games
    click.echo(f"{games} games in {result.out} (tables: games, seats, cards, spaces)")


DEFAULT_GAMES = 48_000
SHORT_BUDGET = 5.0          # minutes: evora run --skill's ladder
EXPERT_GAMES = 8_000        # per player count: the expert field's seat rates within about +-1 pp


@click.command(epilog=examples(
    "evora run",
    "evora run --games 4000 --out runs/quick --report-dir reports/quick",
    "evora run --set white_stone.vp=6 --out runs/white6 --report-dir reports/white6"))
@click.option("--games", type=int, default=DEFAULT_GAMES, show_default=True, metavar="N",
              help="Games per player count, rounded up to whole seeds x seat rotations (48,000 "
                   "keeps every seat's win-rate interval within +-0.5 pp).")
@click.option("--seed", type=int, default=1, show_default=True, help="The run seed.")
@jobs_option
@click.option("--seat-rotation/--no-seat-rotation", "seat_rotation", default=True, show_default=True,
              help="Play every seed under each rotation of the field (the fields are mixed, so a "
                   "report without it states no seat finding).")
@click.option("--out", default="runs/default", show_default=True, metavar="DIR", callback=check_out_arg,
              help="Run folders go here.")
@click.option("--report-dir", default="reports/default", show_default=True, metavar="DIR", callback=check_out_arg,
              help="The report goes here.")
@click.option("--rules", "rules_path", metavar="FILE", help="Rules file merged over the shipped rules.")
@set_option
@click.option("--skill", "with_skill", is_flag=True,
              help="Also play a short skill ladder at the largest player count (evora skill's default ladder "
                   f"without its top rung) sized to about {SHORT_BUDGET:g} minutes, into OUT/skill, and add "
                   "the Skill section to the report: which findings hold for stronger players. evora skill "
                   "plays a full one.")
@click.option("--expert-games", type=int, default=None, metavar="N",
              help=f"Games per player count with the built-in expert in every seat, whose seat figures the "
                   f"answer quotes beside the field's (strong play). Default: --games, at most {EXPERT_GAMES:,} "
                   "(each seat's rate within about +-1 pp); 0: none.")
@click.option("--quiet", "-q", is_flag=True, help="No progress bars.")
def run(games, seed, jobs, out, report_dir, quiet, rules_path=None, overrides=(), seat_rotation=True,
        with_skill=False, expert_games=None):
    """The main job: simulate 2, 3 and 4 players, each with a field of built-in strategies under
    seat rotation, then write the report. Its run folder (--out) can be given to evora compare
    whole: each player count's runs are paired."""
    from pathlib import Path

    from ..runner import RunError, check_folder, check_jobs, make_config

    if games < 1:
        raise UserError(f"--games must be a positive whole number, got {games}")
    if expert_games is not None and expert_games < 0:
        raise UserError(f"--expert-games must be 0 (none) or a positive whole number, got {expert_games}")
    expert_games = min(games, EXPERT_GAMES) if expert_games is None else expert_games
    rules = load_rules_arg(rules_path, overrides)
    lo, hi = rules.data["players"]["min"], rules.data["players"]["max"]
    rotations = {n: n if seat_rotation else 1 for n in DEFAULT_FIELD}
    plan = [(n, spec, str(Path(out) / f"p{n}"), -(-games // rotations[n]))   # whole seeds x rotations
            for n, spec in DEFAULT_FIELD.items() if lo <= n <= hi]
    if not plan:
        raise UserError(f"these rules allow {lo} to {hi} players; the main job plays 2, 3 and 4")
    from strategies.registry import EXPERT_NAME

    experts = ([(n, EXPERT_NAME, str(Path(out) / "expert" / f"p{n}"), expert_games) for n, *_ in plan]
               if expert_games else [])
    check_report_dir(report_dir, "--report-dir")        # every output checked before any game
    try:
        check_jobs(jobs)
        for n, spec, folder, seeds in plan:
            check_folder(Path(folder), make_config(n, seeds, spec, seed, seat_rotation, None, rules))
        for n, spec, folder, seeds in experts:
            check_folder(Path(folder), make_config(n, seeds, spec, seed, False, None, rules))
    except RunError as exc:
        raise UserError(str(exc)) from None
    ladder_dir = ladder = None
    if with_skill:
        from ..ladderplan import default_ladder
        from .skill import prepare_ladder

        top = max(n for n, *_ in plan)
        ladder_dir = Path(out) / "skill"
        rungs = default_ladder(top)[:-1]
        ladder = prepare_ladder(ladder_dir, top, rungs, seed, rules, None, None, SHORT_BUDGET, jobs, quiet)
    dirs = []
    for n, spec, folder, seeds in plan:
        if not quiet:
            rot = rotations[n]
            click.echo(f"{n} players: {seeds * rot:,} games ({seeds:,} seeds x {rot} seat rotation"
                       f"{'s' if rot > 1 else ''}) of {spec} -> {folder}", err=True)
        run_experiment(n_players=n, seeds=seeds, spec=spec, seed=seed, jobs=jobs, out=folder,
                       seat_rotation=seat_rotation, rules_path=rules_path, backend="loky", scheduler=None,
                       chunk_size=None, quiet=quiet, rules=rules)
        dirs.append(folder)
    for n, spec, folder, seeds in experts:
        if not quiet:
            click.echo(f"{n} players, strong play: {seeds:,} games of the {spec} in every seat -> {folder}", err=True)
        run_experiment(n_players=n, seeds=seeds, spec=spec, seed=seed, jobs=jobs, out=folder,
                       seat_rotation=False, rules_path=rules_path, backend="loky", scheduler=None,
                       chunk_size=None, quiet=quiet, rules=rules)
    if ladder is not None:
        from .skill import play_ladder

        play_ladder(ladder_dir, ladder, rules, jobs, quiet=quiet)
    path = write_report(dirs, report_dir, option="--report-dir", ladder_dir=ladder_dir,
                        expert_dirs=[folder for _, _, folder, _ in experts])
    click.echo(f"report: {path / 'report.html'}")


