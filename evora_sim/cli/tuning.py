"""Searches over parameters: ``evora tune strategy`` (a strategy's weights) and ``evora balance``
(rules values toward a fair game; ``--compensation``: starting VP per seat). Every argument is
checked before anything is written; the search itself is :mod:`evora_sim.experiments`."""
from __future__ import annotations

import sys

import click

from .group import (INTERRUPTED, JOBS_DEFAULT, STRATEGIES_HELP, SET_HELP, UserError, CommandGroup,
                    check_out_arg, check_players_arg, check_seed_arg, examples, load_rules_arg)

TUNE_DEFAULTS = {"batch": 8, "seeds": 50, "finalists": 3, "confirm_seeds": 2000}
BALANCE_DEFAULTS = {"batch": 8, "seeds": 500, "finalists": 3, "confirm_seeds": 10_000}


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


def _check_budget(budget) -> None:
    """--budget is games in all, bounded as ``--games`` is (``manifest.MAX_GAMES``): a larger one
    could never be played, and the search would set out to play it instead of saying so."""
    from ..manifest import MAX_GAMES

    if not 1 <= budget <= MAX_GAMES:
        raise UserError(f"--budget must be a number of games from 1 to {MAX_GAMES:,}, got {budget:,}")


def _settings(kw: dict, defaults: dict):
    from ..experiments.search import Settings

    values = {k: kw[k] if kw.get(k) is not None else v for k, v in defaults.items()}
    _check_budget(kw["budget"])
    if not 2 <= values["batch"] <= 64:
        raise UserError(f"--batch must be from 2 to 64 candidates a round, got {values['batch']}")
    if not 2 <= values["seeds"] <= 1_000_000:
        raise UserError(f"--seeds must be from 2 to 1,000,000, got {values['seeds']}")
    if not 1 <= values["finalists"] <= 16:
        raise UserError(f"--finalists must be from 1 to 16, got {values['finalists']}")
    if not 2 <= values["confirm_seeds"] <= 10_000_000:
        raise UserError(f"--confirm-seeds must be from 2 to 10,000,000, got {values['confirm_seeds']}")
    check_seed_arg(kw["seed"])
    return Settings(budget=kw["budget"], seed=kw["seed"], **values)


def backend_from(kw: dict):
    """The backend, with a Dask scheduler probed once before anything is written."""
    from ..experiments.arms import Backend
    from ..runner import RunError, check_jobs, connect_scheduler

    try:
        jobs = check_jobs(kw["jobs"])
        if kw["backend"] == "dask":
            if not kw["scheduler"]:
                raise RunError("--backend dask needs --scheduler ADDRESS (for example tcp://HOST:8786)")
            connect_scheduler(kw["scheduler"]).close()
    except RunError as exc:
        raise UserError(str(exc)) from None
    return Backend(jobs, kw["backend"], kw["scheduler"])


def _notice(quiet: bool):
    return None if quiet else (lambda line: click.echo(line, err=True))


def _run(problem, settings, kw):
    """Check the folder and budget, then search; user mistakes as one line, Ctrl-C resumable."""
    from strategies.registry import StrategyError

    from ..experiments.search import check_budget, check_search_folder, run_search, search_doc
    from ..runner import RunError

    from pathlib import Path

    try:
        check_budget(problem, settings)
        check_search_folder(Path(kw["out"]), search_doc(problem, settings))
    except RunError as exc:
        raise UserError(str(exc)) from None
    backend = backend_from(kw)
    command = "evora " + " ".join(sys.argv[1:])
    try:
        result = run_search(problem, settings, kw["out"], backend, command, _notice(kw["quiet"]))
    except (RunError, StrategyError) as exc:
        raise UserError(str(exc)) from None
    except KeyboardInterrupt:
        interrupted(kw["out"])
    click.echo("\n".join(result.lines))
    click.echo(f"search summary: {result.summary / 'report.md'}")


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
    from strategies.registry import StrategyError

    from ..experiments.tune import TuneProblem
    from ..rules import RulesError

    rules = load_rules_arg(kw["rules_path"], kw["overrides"])
    check_players_arg(n_players, rules)
    settings = _settings(kw, TUNE_DEFAULTS)
    try:
        problem = TuneProblem(base, against, n_players, rules, params, name)
    except (StrategyError, RulesError) as exc:
        raise UserError(str(exc)) from None
    _run(problem, settings, kw)


def _counts(text: str, rules) -> list[int]:
    items = [x.strip() for x in str(text).split(",") if x.strip()]
    if not items or not all(x.isdigit() for x in items):
        raise UserError(f"--players {text!r}: give player counts, e.g. 4 or 2,3,4")
    counts = sorted({int(x) for x in items})
    for n in counts:
        check_players_arg(n, rules)
    return counts


def _fields(specs, counts: list[int]) -> dict[int, str]:
    """--strategies for each count: a field of n strategies is that count's; one strategy fills
    every seat of the counts without their own; the default field otherwise."""
    from strategies.registry import StrategyError, split_specs

    from ..fields import DEFAULT_FIELD

    fields = {n: DEFAULT_FIELD[n] for n in counts}
    given = {}
    for spec in specs:
        try:
            k = len(split_specs(spec))
        except StrategyError as exc:
            raise UserError(str(exc)) from None
        if k == 1:
            given.update({n: spec for n in counts if n not in given})
        elif k in counts:
            given[k] = spec
        else:
            raise UserError(f"--strategies {spec}: {k} strategies fit none of --players {','.join(map(str, counts))}; "
                            "give one per seat of a player count, or one for every seat")
    fields.update(given)
    return fields


def field_names(spec: str, n: int) -> list[str]:
    """The field's strategy per seat (rotation 0), normalised: one strategy fills every seat."""
    from strategies.registry import parse_spec, split_specs

    field = [parse_spec(x).name for x in split_specs(spec)]
    return field * n if len(field) == 1 else field


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
    import math

    from strategies.registry import StrategyError

    from ..experiments.balance import BalanceProblem
    from ..rules import RulesError

    rules = load_rules_arg(kw["rules_path"], kw["overrides"])
    counts = _counts(players_text, rules)
    fields = _fields(specs, counts)
    if compensation:
        return _compensation(params, targets, counts, fields, iterations, final_seeds, kw, confirm_at)
    if final_seeds:
        raise UserError(f"--final-seeds {final_seeds} is for --compensation only: add --compensation or drop it")
    if confirm_at is not None:
        raise UserError(f"--confirm-at {confirm_at!r} is for --compensation only: add --compensation or drop it")
    if not (math.isfinite(penalty) and penalty >= 0):
        raise UserError(f"--penalty must be a number, 0 or more (the objective's scale), got {penalty}")
    settings = _settings(kw, BALANCE_DEFAULTS)
    try:
        problem = BalanceProblem(counts, fields, params, targets, penalty, kw["rules_path"], kw["overrides"])
    except (StrategyError, RulesError) as exc:
        raise UserError(str(exc)) from None
    _run(problem, settings, kw)


def _compensation(params, targets, counts, fields, iterations, final_seeds, kw, confirm_at=None):
    from pathlib import Path

    from strategies.registry import StrategyError

    from ..experiments.compensation import check_budget, compensation_doc, run_compensation
    from ..experiments.confirm import parse_rungs
    from ..experiments.search import check_search_folder
    from ..runner import RunError

    if params or targets:
        raise UserError("--compensation searches players.start_vp itself: drop --param and --target")
    _check_budget(kw["budget"])
    if len(counts) != 1:
        raise UserError(f"--compensation estimates one player count's starting VP (players.start_vp is one list "
                        f"for every count): give one --players, got {','.join(map(str, counts))}")
    if not 1 <= iterations <= 10:
        raise UserError(f"--iterations must be from 1 to 10, got {iterations}")
    if final_seeds != 0 and not 2 <= final_seeds <= 10_000_000:
        raise UserError(f"--final-seeds must be 0 (no final run) or from 2 to 10,000,000, got {final_seeds}")
    n = counts[0]
    confirm = kw["confirm_seeds"] if kw["confirm_seeds"] is not None else BALANCE_DEFAULTS["confirm_seeds"]
    if not 2 <= confirm <= 10_000_000:
        raise UserError(f"--confirm-seeds must be from 2 to 10,000,000, got {confirm}")
    check_seed_arg(kw["seed"])
    try:
        check_budget(n, kw["budget"], iterations, final_seeds)
        field = field_names(fields[n], n)
        rungs = parse_rungs(confirm_at, n) if confirm_at is not None else []
        doc = compensation_doc(n, field, kw["budget"], iterations, confirm, kw["seed"], kw["rules_path"],
                               kw["overrides"], final_seeds, rungs)
        check_search_folder(Path(kw["out"]), doc)
    except (StrategyError, RunError) as exc:
        raise UserError(str(exc)) from None
    backend = backend_from(kw)
    command = "evora " + " ".join(sys.argv[1:])
    try:
        result = run_compensation(n, field, kw["budget"], kw["out"], iterations=iterations, confirm_seeds=confirm,
                                  seed=kw["seed"], rules_path=kw["rules_path"], overrides=kw["overrides"],
                                  backend=backend, command=command, notice=_notice(kw["quiet"]),
                                  final_seeds=final_seeds, confirm_at=rungs)
    except (RunError, StrategyError) as exc:
        raise UserError(str(exc)) from None
    except KeyboardInterrupt:
        interrupted(kw["out"])
    click.echo("\n".join(result["lines"]))
    click.echo(f"summary: {result['summary'] / 'report.md'}")


def interrupted(out):
    click.echo(f"\ninterrupted: what was played is kept in {out}; run the same command again to go on "
               "(same result)", err=True)
    sys.exit(INTERRUPTED)
