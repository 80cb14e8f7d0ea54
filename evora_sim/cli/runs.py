"""Commands that play many games into run folders: simulate and the main job, run. The work is
:mod:`evora_sim.cli.runs_work`, imported when the command runs."""
from __future__ import annotations

import click

from ..fields import EXPERT_GAMES, SHORT_BUDGET
from .group import SET_HELP, STRATEGIES_HELP, check_out_arg, decision_timeout_option, examples, jobs_option, set_option


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
    from . import runs_work  # lazy: the runner, the sequential looks and the statistics, 3 s (measured)

    runs_work.simulate(until_ci, max_games, ci_metrics, **kwargs)


DEFAULT_GAMES = 48_000


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
    from . import runs_work  # lazy: the runner, the sequential looks and the statistics, 3 s (measured)

    runs_work.run(games, seed, jobs, out, report_dir, quiet, rules_path, overrides, seat_rotation, with_skill,
                  expert_games)
