"""``evora train``: fit the expert's evaluation to the search player's turns, for these rules.
Every argument is checked before anything is played; the recipe is
:mod:`evora_sim.experiments.train_runs`."""
from __future__ import annotations

import shlex

import click

from strategies.errors import StrategyError

from ..fields import DEFAULT_DUEL_GAMES, DEFAULT_GAMES, DEFAULT_TEACHER
from ..manifest import RunError
from ..rules import RulesError
from .group import JOBS_DEFAULT, SET_HELP, UserError, check_out_arg, examples, load_rules_arg


@click.command("train", epilog=examples(
    "evora train --players 4 --out runs/expert",
    "evora train --players 2 --games 400 --start cardheights --seed 4002 --out runs/expert   # the shipped 2-player weights",
    "evora train --players 4 --set white_stone.vp=6 --out runs/expert_white6"))
@click.option("--players", "-n", type=int, default=4, show_default=True, help="Player count to train for (2-4).")
@click.option("--games", type=int, default=None, metavar="N",
              help="Teacher games to learn from; default "
                   + ", ".join(f"{g} at {n} players" for n, g in DEFAULT_GAMES.items()) + " (about 30 "
                   "minutes on 2 cores). What more games gave: docs/commands/train.md.")
@click.option("--teacher", default=DEFAULT_TEACHER, show_default=True, metavar="SPEC",
              help="The player whose turns are imitated (it plays itself).")
@click.option("--start", default=None, metavar="SPEC",
              help="Weights the fit starts from: a weighted player or learned weights. Default: "
                   "DIR/expert.toml's, else the built-in expert (rulebook rules), else cardheights. The new "
                   "weights must beat the player they would replace, whatever the start.")
@click.option("--replies", type=str, default=None, metavar="K",
              help="How many of its best turns the trained expert values by the next seat's reply (0-32; "
                   "0: it plans one turn), from the point of the game where the built-in expert starts to "
                   "(its ahead_from at that player count). Default: the built-in expert's at that player count.")
@click.option("--duel-games", type=int, default=DEFAULT_DUEL_GAMES, show_default=True, metavar="N",
              help="Games of the check: the new weights in one seat, the player they would replace "
                   "(DIR/expert.toml's, else the built-in expert) in the others, every seed under every seat "
                   "order, in these rules.")
@click.option("--seed", type=int, default=1, show_default=True, help="Seed of the teacher games (the duel uses seed+1).")
@click.option("--rules", "rules_file", metavar="FILE", help="Rules file merged over the shipped rules: train for them.")
@click.option("--set", "overrides", multiple=True, metavar="KEY=VALUE", help=SET_HELP)
@click.option("--jobs", type=int, default=JOBS_DEFAULT, show_default=True, help="Processes; -1 = every core.")
@click.option("--out", required=True, metavar="DIR", callback=check_out_arg,
              help="Folder of the training (created, or resumed: run the same command again); the weights "
                   "are written to DIR/expert.toml.")
@click.option("--backend", type=click.Choice(["loky", "dask"]), default="loky", show_default=True,
              help="loky: processes on this machine; dask: a dask.distributed cluster (teacher games).")
@click.option("--scheduler", metavar="ADDRESS", help="Dask scheduler, e.g. tcp://HOST:8786.")
@click.option("--quiet", "-q", is_flag=True, help="No progress lines.")
def train(players, games, teacher, start, replies, duel_games, seed, rules_file, overrides, out, quiet, **kw):
    """Train the expert for these rules: the teacher (by default the search player) plays itself,
    every one of its turns is set beside the turn planner's best alternatives, a conditional logit
    fits the weights under which the teacher's turns rank first, and the new weights duel the
    player they would replace (DIR/expert.toml's, else the built-in expert) in these rules on
    fresh seeds. Writes DIR/expert.toml (use it as --strategies DIR/expert.toml:expert) only when
    they win significantly more than a fair share; else DIR/candidate.toml."""
    from ..experiments.train_runs import plan_training, run_training  # lazy: 0.8 s (measured); not for --help
    from .tuning_work import backend_from, interrupted  # lazy: the experiments, 2.5 s (measured)

    rules = load_rules_arg(rules_file, overrides)
    try:
        plan = plan_training(players, games, teacher, seed, duel_games, rules, out, start, replies)
    except (StrategyError, RunError, RulesError) as exc:
        raise UserError(str(exc)) from None
    backend = backend_from(kw)
    command = _command(plan, start, rules_file, overrides, out)
    try:
        result = run_training(plan, out, jobs=kw["jobs"], backend=backend, command=command, quiet=quiet,
                              notice=None if quiet else (lambda line: click.echo(line, err=True)))
    except (RunError, StrategyError, RulesError) as exc:
        raise UserError(str(exc)) from None
    except KeyboardInterrupt:
        interrupted(out)
    click.echo("\n".join(result.lines))


def _command(plan, start, rules_file, overrides, out) -> str:
    """The command that makes these weights again, every choice spelled out (recorded in the file)."""
    words = ["evora", "train", "--players", str(plan.players), "--games", str(plan.games), "--teacher", plan.teacher]
    if start is not None:
        words += ["--start", start]
    words += ["--replies", str(plan.replies), "--seed", str(plan.seed), "--duel-games", str(plan.duel_games)]
    if rules_file:
        words += ["--rules", str(rules_file)]
    for o in overrides:
        words += ["--set", o]
    return shlex.join(words + ["--out", str(out)])
