"""Searches over parameters: ``evora tune strategy`` (a strategy's weights) and ``evora balance``
(rules values toward a fair game; ``--compensation``: starting VP per seat). Every argument is
checked before anything is written (:mod:`evora_sim.cli.tuning_work`, imported when a command
runs); the search itself is :mod:`evora_sim.experiments`."""
from __future__ import annotations

import click

from .group import JOBS_DEFAULT, SET_HELP, STRATEGIES_HELP, CommandGroup, check_out_arg, examples

def search_options(f):
    for opt in reversed([
        click.option("--budget", type=int, required=True, metavar="GAMES",
                     help="Games the search may play (the confirmation on fresh seeds comes on top)."),
        click.option("--out", required=True, metavar="DIR", callback=check_out_arg,
                     help="The search folder (created, or resumed: run the same command again)."),
        click.option("--batch", type=int, default=None, metavar="K",
                     help="Candidates per round, all on the same seeds (default 8)."),
        click.option("--seeds", type=int, default=None, metavar="N",
                     help="Seeds each candidate plays at a round's first rung; the better half plays on "
                          "to twice as many (default: tune 50, balance 500)."),
        click.option("--finalists", type=int, default=None, metavar="K",
                     help="Round winners replayed on fresh seeds with the baseline (default 3)."),
        click.option("--confirm-seeds", type=int, default=None, metavar="N",
                     help="Fresh seeds of the confirmation (default: tune 2,000, balance 10,000); each is "
                          "played under every seat rotation."),
        click.option("--seed", type=int, default=1, show_default=True, help="The search seed."),
        click.option("--jobs", type=int, default=JOBS_DEFAULT, show_default=True,
                     help="Processes playing the candidates of a rung at once; -1 = every core."),
        click.option("--backend", type=click.Choice(["loky", "dask"]), default="loky", show_default=True,
                     help="loky: processes on this machine; dask: a dask.distributed cluster."),
        click.option("--scheduler", metavar="ADDRESS", help="Dask scheduler, e.g. tcp://HOST:8786."),
        click.option("--rules", "rules_path", metavar="FILE", help="Rules file merged over the shipped rules."),
        click.option("--set", "overrides", multiple=True, metavar="KEY=VALUE", help=SET_HELP),
        click.option("--quiet", "-q", is_flag=True, help="No progress lines."),
    ]):
        f = opt(f)
    return f


@click.group(cls=CommandGroup, epilog=examples("evora tune strategy balanced --against self --players 2 --budget 200000 --out runs/tune",
                  "evora tune strategy greedy --against balanced --players 4 --budget 100000 --out runs/tune4"))
def tune():
    """Search a strategy's weights (tune strategy)."""


@tune.command("strategy", epilog=examples("evora tune strategy balanced --against self --players 2 --budget 200000 --out runs/tune",
                  "evora tune strategy greedy --against balanced --players 4 --budget 100000 --out runs/tune4"))
@click.argument("base")
@click.option("--against", required=True, metavar="FIELD|self",
              help="The other seats: 'self' (BASE itself), one strategy for all, or one per other seat.")
@click.option("--players", "-n", "n_players", type=int, required=True, metavar="N", help="2, 3 or 4.")
@click.option("--param", "params", multiple=True, metavar="FEATURE=LO..HI|A,B",
              help="A weight to search (repeatable); default: every weight BASE gives a value, but vp (the "
                   "scale) and win, from 0 to 5 times it.")
@click.option("--name", default=None, metavar="NAME", help="The weight set's name (default tuned_BASE).")
@search_options
def tune_strategy(base, against, n_players, params, name, **kw):
    """Search the weights of BASE (a built-in heuristic or FILE.toml:NAME) for the highest win rate
    against --against at --players, and write them as a weight set (DIR/summary/strategy.toml,
    usable as strategy.toml:NAME)."""
    from . import tuning_work  # lazy: the experiments, 2.5 s (measured); --help does not need them

    tuning_work.tune_strategy(base, against, n_players, params, name, **kw)


@click.command(epilog=examples(
    "evora balance --players 4 --param temple.columns.4=12..16 --param supply.stones=12..16 --budget 480000 --out runs/bal",
    "evora balance --compensation --players 4 --budget 160000 --out runs/comp",
    "evora balance --compensation -n 2 --strategies expert --budget 20000 --confirm-seeds 1000 "
    "--confirm-at 'cardheights;expert' --out runs/comp2"))
@click.option("--param", "params", multiple=True, metavar="KEY=LO..HI|A,B,C",
              help="A rules key to search (repeatable): a range of whole numbers, or values (';' between "
                   "the values of a list-valued key, as in sweep).")
@click.option("--target", "targets", multiple=True, metavar="NAME[=LO..HI][:W]",
              help="Besides seat fairness (always): length=LO..HI (rounds), spread=LO..HI (the strategies' "
                   "spread, pp), trigger.NAME=LO..HI (share of games ending by NAME, in %).")
@click.option("--players", "-n", "players_text", default="4", show_default=True, metavar="N[,N...]",
              help="Player counts; the variant must be fair at all of them at once.")
@click.option("--strategies", "specs", multiple=True, metavar="A,B,...",
              help=STRATEGIES_HELP + " Repeatable, one field per player count (default: the main job's fields).")
@click.option("--penalty", type=float, default=0.25, show_default=True, metavar="P",
              help="Cost of each key changed from the base rules, on the objective's scale (the seat unfairness "
                   "squared: 0.25 weighs as much as an unfairness of 0.5 pp).")
@click.option("--compensation", is_flag=True,
              help="Estimate instead the starting VP per seat (players.start_vp) that equalise win rates.")
@click.option("--iterations", type=int, default=4, show_default=True, metavar="K",
              help="With --compensation: estimate, play the estimate in half VP, estimate again, until it "
                   "settles or K iterations (the budget is split over K).")
@click.option("--final-seeds", type=int, default=0, show_default=True, metavar="N",
              help="With --compensation: after the iterations, play what they settled on on N seeds of its own "
                   "and choose the half-VP values from that run alone (0: none). Its N x players games come "
                   "out of --budget.")
@click.option("--confirm-at", "confirm_at", default=None, metavar="SPEC;SPEC;...",
              help="With --compensation: also play the compensation found at each of these rungs (weakest first, "
                   "written as evora skill --ladder) on the confirmation's fresh seeds (--confirm-seeds each), and "
                   "say from which rung up every seat's interval contains the fair share.")
@search_options
def balance(params, targets, players_text, specs, penalty, compensation, iterations, final_seeds, confirm_at=None,
            **kw):
    """Search rules values (--param) toward a game whose seats are fair at every --players count
    (and any --target), confirm the best on fresh seeds, and write it as a rules file
    (DIR/summary/rules.toml, usable with --rules) and a report section."""
    from . import tuning_work  # lazy: the experiments, 2.5 s (measured); --help does not need them

    tuning_work.balance(params, targets, players_text, specs, penalty, compensation, iterations, final_seeds,
                        confirm_at, **kw)
