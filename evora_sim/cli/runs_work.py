"""The work behind ``evora simulate``, ``run`` and ``sweep``: the run's size settled, every
argument and output checked before any game, then the runs played (to a width with --until-ci)
and reported. Imported when one of them runs: the runner, the sequential looks and the
statistics take about 3 s to import (measured), which their ``--help`` does not need."""
from __future__ import annotations

import sys
from dataclasses import replace
from pathlib import Path

import click

from analysis.sweep_stats import SUMMARY_KIND, summary, summary_lines, write_summary
from analysis.tables import AnalysisError
from analysis.untilsure import describe
from strategies.errors import StrategyError
from strategies.registry import EXPERT_NAME

from .. import ladderplan, runner   # through the modules: tests stand in for runner.simulate, default_ladder
from ..fields import DEFAULT_FIELD, EXPERT_GAMES, SHORT_BUDGET
from ..fsutil import OutputError, check_output_folder
from ..manifest import RunError
from ..rules import RulesError
from ..sequential import parse_ci_metrics, run_until_ci
from ..sweep import plan, prepare_sweep
from . import analyse_work, skill_work
from .group import INTERRUPTED, UserError, check_players_arg, load_rules_arg, playing, warn_other_rules


def _whole(value, option: str) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise UserError(f"{option} must be a positive whole number, got {value}")
    return value


def settle_size(kw: dict, max_games=None) -> int | None:
    """Resolve the seat rotation (None: on when the seats hold different strategies) and turn
    --games (games in all) or --seeds into ``kw["seeds"]``, the seeds the runner plays. Returns
    --max-games as seeds (None without it). One meaning of --games on every command: games."""
    games, seeds = kw.pop("games", None), kw.get("seeds")
    if (games is None) == (seeds is None):
        raise UserError("give --games N (games in all) or --seeds N (seeds, each played once per "
                        "seat rotation), not " + ("both" if games is not None else "neither"))
    try:
        kw["seat_rotation"] = runner.rotation_for(kw["spec"], kw["n_players"], kw["seat_rotation"])
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


def command_line() -> str:
    """The command as typed, which a run's manifest records."""
    return "evora " + " ".join(sys.argv[1:])


def execution_of(kw: dict) -> runner.Execution:
    """How a command's runs are played, from its options (:func:`runs.run_options`)."""
    return runner.Execution(jobs=kw["jobs"], backend=kw["backend"], scheduler=kw["scheduler"],
                            chunk_size=kw["chunk_size"], quiet=kw["quiet"], command=command_line(),
                            decision_timeout=kw.get("decision_timeout"))


def run_experiment(n_players, seeds, spec, seed, out, seat_rotation, rules, execution: runner.Execution):
    """Check the players against ``rules``, then run; user mistakes become one-line errors."""
    check_players_arg(n_players, rules)
    with playing(out):
        warn_other_rules(runner.resolve_strategies(spec, n_players), rules)
        return runner.simulate(n_players, seeds, spec, seed=seed, out=out, seat_rotation=seat_rotation, rules=rules,
                               execution=execution)


def run_options_experiment(kw: dict, rules, out=None):
    """``run_experiment`` with a command's options (:func:`runs.run_options`), into ``out``
    (default: its ``--out``)."""
    return run_experiment(kw["n_players"], kw["seeds"], kw["spec"], kw["seed"], kw["out"] if out is None else out,
                          kw["seat_rotation"], rules, execution_of(kw))


def play_until_ci(arms, kw, until_ci, max_seeds, ci_metrics, command):
    """Run ``arms`` ((out, rules) pairs) with --until-ci; user mistakes as one-line errors."""
    def on_look(j, k, n, worst):
        if not kw["quiet"]:
            click.echo(f"look {j} of {k}: {n:,} seeds, largest adjusted half-width {worst:.3g} "
                       f"(target {until_ci})", err=True)

    try:
        metrics = parse_ci_metrics(ci_metrics)
        seeds = kw["seeds"]
        execution = replace(execution_of(kw), jobs=-1 if kw["jobs"] is None else kw["jobs"], command=command)
        record = run_until_ci(arms, kw["n_players"], kw["spec"], initial_games=seeds,
                              max_games=max_seeds if max_seeds is not None else 32 * seeds,
                              width=until_ci, metrics=metrics, seed=kw["seed"],
                              seat_rotation=kw["seat_rotation"], on_look=on_look, execution=execution)
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


def simulate(until_ci=None, max_games=None, ci_metrics="seats", **kwargs):
    """The command ``evora simulate``."""
    rules = load_rules_arg(kwargs["rules_path"], kwargs["overrides"])
    check_players_arg(kwargs["n_players"], rules)
    max_seeds = settle_size(kwargs, max_games)
    check_until(until_ci, max_seeds, kwargs["seeds"])
    if until_ci is not None:
        _, text = play_until_ci([(kwargs["out"], rules)], kwargs, until_ci, max_seeds, ci_metrics,
                                command_line())
        click.echo(text)
        result = runner.open_run(kwargs["out"])
    else:
        result = run_options_experiment(kwargs, rules)
    games = result.n_games
    click.echo(f"{games} games in {result.out} (tables: games, seats, cards, spaces)")


def run(games, seed, jobs, out, report_dir, quiet, rules_path=None, overrides=(), seat_rotation=True,
        with_skill=False, expert_games=None):
    """The command ``evora run``, every output checked before any game."""
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
    experts = ([(n, EXPERT_NAME, str(Path(out) / "expert" / f"p{n}"), expert_games) for n, *_ in plan]
               if expert_games else [])
    analyse_work.check_report_dir(report_dir, "--report-dir")        # every output checked before any game
    try:
        cores = runner.check_jobs(jobs)
        # each field as runner.simulate will chunk it (a folder made before keeps its chunks)
        fields = [(*field, seat_rotation) for field in plan] + [(*field, False) for field in experts]
        for n, spec, folder, seeds, rotate in fields:
            config = runner.make_config(n, seeds, spec, seed, rotate, None, rules)
            runner.check_folder(Path(folder), runner.chunk_for(folder, config, cores))
    except RunError as exc:
        raise UserError(str(exc)) from None
    ladder_dir = ladder = None
    if with_skill:
        top = max(n for n, *_ in plan)
        ladder_dir = Path(out) / "skill"
        rungs = ladderplan.default_ladder(top)[:-1]
        ladder = skill_work.prepare_ladder(ladder_dir, top, rungs, seed, rules, None, None, SHORT_BUDGET, jobs, quiet)
    dirs = []
    execution = runner.Execution(jobs=jobs, quiet=quiet, command=command_line())
    for n, spec, folder, seeds in plan:
        if not quiet:
            rot = rotations[n]
            click.echo(f"{n} players: {seeds * rot:,} games ({seeds:,} seeds x {rot} seat rotation"
                       f"{'s' if rot > 1 else ''}) of {spec} -> {folder}", err=True)
        run_experiment(n, seeds, spec, seed, folder, seat_rotation, rules, execution)
        dirs.append(folder)
    for n, spec, folder, seeds in experts:
        if not quiet:
            click.echo(f"{n} players, strong play: {seeds:,} games of the {spec} in every seat -> {folder}", err=True)
        run_experiment(n, seeds, spec, seed, folder, False, rules, execution)
    if ladder is not None:
        skill_work.play_ladder(ladder_dir, ladder, rules, jobs, quiet=quiet)
    path = analyse_work.write_report(dirs, report_dir, option="--report-dir", ladder_dir=ladder_dir,
                                     expert_dirs=[folder for _, _, folder, _ in experts])
    analyse_work.announce(path)


def sweep(params, until_ci=None, max_games=None, ci_metrics="seats", min_effect=1.0, **kw):
    """The command ``evora sweep``, every argument checked before any game."""
    base_rules = load_rules_arg(kw["rules_path"], kw["overrides"])
    check_players_arg(kw["n_players"], base_rules)
    max_seeds = settle_size(kw, max_games)
    check_until(until_ci, max_seeds, kw["seeds"])
    try:
        the_plan = plan(list(params), kw["rules_path"], kw["overrides"])
    except RulesError as exc:
        raise UserError(str(exc)) from None
    command = command_line()
    out = Path(kw["out"])
    try:
        runner.check_jobs(kw["jobs"])
        check_output_folder(out / "summary", SUMMARY_KIND, "--out", RunError)
        for c in the_plan["combos"]:                    # every argument checked before any game
            config = runner.make_config(kw["n_players"], max(kw["seeds"], max_seeds or 0), kw["spec"], kw["seed"],
                                 kw["seat_rotation"], kw["chunk_size"], c["rules"])
        runner.check_strategies(config, c["rules"], kw["decision_timeout"])
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
            run_options_experiment(kw, rules, out=folder)
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
