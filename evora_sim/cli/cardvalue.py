"""``evora card-value``: each card's value by experiment (a card given to one seat at the start,
and the card taken out of the game), on common seeds. Every argument is checked before anything
is written; the experiment is :mod:`evora_sim.experiments.cardvalue_runs`, its statistics
:mod:`analysis.cardvalue_stats`."""
from __future__ import annotations

import sys
from pathlib import Path

import click

from strategies.errors import StrategyError

from ..fields import DEFAULT_FIELD
from ..manifest import RunError
from .group import (JOBS_DEFAULT, SET_HELP, STRATEGIES_HELP, UserError, check_out_arg, check_players_arg,
                    check_seed_arg, examples, load_rules_arg)

# Games per card: with these, --players 4 on the default field finishes within 10 minutes on 2
# cores with every interval within +-1 point (measured: reports/card_value_4p).
DEFAULT_GAMES = 14_400
DEFAULT_REMOVE_GAMES = 12_000


@click.command("card-value", epilog=examples(
    "evora card-value --players 4 --out runs/cards4",
    "evora card-value -n 3 --strategies balanced,greedy,cards --games 20000 --out runs/cards3",
    "evora card-value -n 4 --remove-games 0 --set height_vp.3=10 --out runs/cards_h3"))
@click.option("--players", "-n", "n_players", type=int, default=4, show_default=True, metavar="N", help="2, 3 or 4.")
@click.option("--games", type=int, default=DEFAULT_GAMES, show_default=True, metavar="N",
              help="Games per card with the card given: over every seed, each seat given it in turn under "
                   "every seat rotation (players x players games a seed), each paired with the same game "
                   "without it.")
@click.option("--remove-games", "remove_games", type=int, default=DEFAULT_REMOVE_GAMES, show_default=True,
              metavar="N", help="Games per card with the card taken out of the game (players games a seed); "
                                "0: no removal measure.")
@click.option("--strategies", "spec", default=None, metavar="A,B,...",
              help=STRATEGIES_HELP + " Default: the main job's field for the player count.")
@click.option("--seed", type=int, default=1, show_default=True, help="The experiment's seed.")
@click.option("--jobs", type=int, default=JOBS_DEFAULT, show_default=True,
              help="Processes playing the arms at once; -1 = every core.")
@click.option("--out", required=True, metavar="DIR", callback=check_out_arg,
              help="The experiment folder (created, or resumed: run the same command again).")
@click.option("--rules", "rules_path", metavar="FILE", help="Rules file merged over the shipped rules.")
@click.option("--set", "overrides", multiple=True, metavar="KEY=VALUE", help=SET_HELP)
@click.option("--backend", type=click.Choice(["loky", "dask"]), default="loky", show_default=True,
              help="loky: processes on this machine; dask: a dask.distributed cluster.")
@click.option("--scheduler", metavar="ADDRESS", help="Dask scheduler, e.g. tcp://HOST:8786.")
@click.option("--quiet", "-q", is_flag=True, help="No progress lines.")
def card_value(n_players, games, remove_games, spec, seed, out, rules_path, overrides, quiet, **kw):
    """Measure each card effect's and instant tile's value by intervention: one seat holds one more
    of it from the start (every seat in turn) against the same games without it, and the card
    taken out of the game against the game with it, all on common seeds. Writes DIR/summary:
    the tables (CSV) beside the observational card table of the same games, card_value.png and
    report.md."""
    from .. import runner  # lazy: 0.8 s (measured, pandas and the players); --help does not need it
    from ..experiments import cardvalue_runs, search  # lazy: the experiments, 2.5 s (measured)
    from .tuning_work import backend_from, field_names, interrupted  # lazy: with them

    rules = load_rules_arg(rules_path, overrides)
    n = check_players_arg(n_players, rules)
    check_seed_arg(seed)
    try:
        field = field_names(spec if spec is not None else DEFAULT_FIELD[n], n)
        if len(field) != n:
            raise UserError(f"--strategies {spec}: {len(field)} strategies for {n} seats; give one per seat, or one "
                            "for every seat")
        made = search.made_rotating(out, cardvalue_runs.KIND)
        plan = cardvalue_runs.Plan(n, tuple(field), games, remove_games, seed,
                                   runner.rotation_for(list(field), n, True if made else None), made)
        plan.check()
        cardvalue_runs.check_base_rules(rules)
        config = runner.make_config(n, plan.given_seeds, list(field), seed, plan.seat_rotation, None, rules)
        runner.check_strategies(config, rules)
        search.check_search_folder(Path(out), cardvalue_runs.card_value_doc(plan, rules, rules_path, overrides))
    except (StrategyError, RunError) as exc:
        raise UserError(str(exc)) from None
    backend = backend_from(kw)
    command = "evora " + " ".join(sys.argv[1:])
    try:
        result = cardvalue_runs.run_card_value(plan, out, rules, rules_path=rules_path, overrides=overrides, backend=backend,
                                command=command, notice=None if quiet else (lambda line: click.echo(line, err=True)))
    except (RunError, StrategyError) as exc:
        raise UserError(str(exc)) from None
    except KeyboardInterrupt:
        interrupted(out)
    click.echo("\n".join(result["lines"]))
    click.echo(f"card-value summary: {result['summary'] / 'report.md'}")
