"""Experiments over several arms on common seeds: sweep. The work is
:mod:`evora_sim.cli.runs_work`, imported when the command runs."""
from __future__ import annotations

import click

from .group import examples, min_effect_option
from .runs import run_options, until_ci_options


@click.command(epilog=examples(
    "evora sweep -n 4 --strategies balanced,cards,emperor,greedy --games 20000 "
    "--param height_majority.h3=10,15,20 --out runs/h3",
    "evora sweep -n 4 --strategies balanced,cards,emperor,greedy --games 8000 "
    "--param emperor_tile.values='3,5;4,6' --out runs/tiles",
    "evora sweep -n 3 --strategies balanced,cards,emperor --games 6000 --until-ci 1 "
    "--param white_stone.vp=1,2,3 --out runs/white"))
@run_options
@click.option("--param", "params", multiple=True, required=True, metavar="KEY=V1,V2,...",
              help="A rules value to sweep (repeatable: every combination is played). List values "
                   "are separated by ';': emperor_tile.values=3,5;4,6.")
@until_ci_options
@min_effect_option
def sweep(params, until_ci=None, max_games=None, ci_metrics="seats", min_effect=1.0, **kw):
    """Play every combination of the --param values on the same seeds (one run folder each under
    --out, resumable), then write the summary: each headline metric against the values with 95%
    intervals, and each combination's difference from the current rule's value (--out/summary:
    sweep.csv, sweep.png, sweep.md, sweep.html). --games counts games per combination."""
    from . import runs_work  # lazy: the runner, the sequential looks and the statistics, 3 s (measured)

    runs_work.sweep(params, until_ci, max_games, ci_metrics, min_effect, **kw)
