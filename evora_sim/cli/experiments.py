"""Experiments over several arms on common seeds: sweep."""
from __future__ import annotations

import sys

import click

from .group import UserError, check_players_arg, examples, load_rules_arg, min_effect_option
from .runs import check_until, play_until_ci, run_experiment, run_options, settle_size, until_ci_options


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
    from pathlib import Path

    from strategies.registry import StrategyError

    from analysis.sweep import SUMMARY_KIND, summary, summary_lines, write_summary
    from analysis.tables import AnalysisError

    from ..fsutil import OutputError, check_output_folder
    from ..rules import RulesError
    from ..runner import RunError, check_jobs, check_strategies, make_config
    from ..sweep import plan, prepare_sweep

    base_rules = load_rules_arg(kw["rules_path"], kw["overrides"])
    check_players_arg(kw["n_players"], base_rules)
    max_seeds = settle_size(kw, max_games)
    check_until(until_ci, max_seeds, kw["seeds"])
    try:
        the_plan = plan(list(params), kw["rules_path"], kw["overrides"])
    except RulesError as exc:
        raise UserError(str(exc)) from None
    command = "evora " + " ".join(sys.argv[1:])
    out = Path(kw["out"])
    try:
        check_jobs(kw["jobs"])
        check_output_folder(out / "summary", SUMMARY_KIND, "--out", RunError)
        for c in the_plan["combos"]:                    # every argument checked before any game
            config = make_config(kw["n_players"], max(kw["seeds"], max_seeds or 0), kw["spec"], kw["seed"],
                                 kw["seat_rotation"], kw["chunk_size"], c["rules"])
        check_strategies(config, c["rules"], kw["decision_timeout"])
        base = {"players": kw["n_players"], "strategies": kw["spec"], "seed": kw["seed"],
                "seat_rotation": kw["seat_rotation"], "chunk_size": kw["chunk_size"],
                "rules_file": kw["rules_path"], "set": list(kw["overrides"]),
                "seeds": kw["seeds"], "until_ci": until_ci, "max_seeds": max_seeds,
                "ci_metrics": ci_metrics if until_ci is not None else None}
        prepare_sweep(out, the_plan, base)
    except (RunError, StrategyError) as exc:
        raise UserError(str(exc)) from None
    arms = [(str(out / c["name"]), c["rules"]) for c in the_plan["combos"]]
    if until_ci is not None:
        _, text = play_until_ci(arms, kw, until_ci, max_seeds, ci_metrics, command)
        click.echo(text)
    else:
        for folder, rules in arms:
            if not kw["quiet"]:
                click.echo(f"{Path(folder).name}", err=True)
            run_experiment(**{**kw, "out": folder}, rules=rules)
    keys = [k for k, _ in the_plan["params"]]
    try:
        # read here: the sweep's runs were written on this machine, and the workers that played
        # them need not share its disk (evora report --backend dask is for runs that they do)
        df = summary(out, min_effect / 100)
        path = write_summary(out, df, min_effect / 100)
    except (AnalysisError, RunError, OutputError) as exc:
        raise UserError(str(exc)) from None
    except OSError as exc:
        raise UserError(f"cannot write the sweep summary to {out}: {exc.strerror or exc}") from None
    click.echo("\n".join(summary_lines(df, keys)))
    click.echo(f"sweep summary: {path / 'sweep.html'}")


