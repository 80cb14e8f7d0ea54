"""The work behind ``evora tune strategy`` and ``evora balance`` (and the backend of ``explain``,
``train`` and ``card-value``): every argument checked before anything is written, then the
search. Imported when a command runs: the experiments take 2.5 s to import (measured), which
their ``--help`` does not need."""
from __future__ import annotations

import math
import sys
from pathlib import Path

import click

from strategies.errors import StrategyError
from strategies.registry import parse_spec, split_specs

from ..experiments import compensation as seat_compensation  # through the modules: tests stand in
from ..experiments import search                             # for run_compensation and run_search
from ..experiments.arms import Backend
from ..experiments.balance import BalanceProblem
from ..experiments.confirm import parse_rungs
from ..experiments.tune import TuneProblem
from ..fields import DEFAULT_FIELD
from ..manifest import MAX_GAMES, RunError
from ..rules import RulesError
from .. import runner  # connect_scheduler through the module: tests stand in for it
from ..runner import check_jobs
from .group import INTERRUPTED, UserError, check_players_arg, check_seed_arg, load_rules_arg

TUNE_DEFAULTS = {"batch": 8, "seeds": 50, "finalists": 3, "confirm_seeds": 2000}
BALANCE_DEFAULTS = {"batch": 8, "seeds": 500, "finalists": 3, "confirm_seeds": 10_000}


def _check_budget(budget) -> None:
    """--budget is games in all, bounded as ``--games`` is (``manifest.MAX_GAMES``): a larger one
    could never be played, and the search would set out to play it instead of saying so."""
    if not 1 <= budget <= MAX_GAMES:
        raise UserError(f"--budget must be a number of games from 1 to {MAX_GAMES:,}, got {budget:,}")


def _settings(kw: dict, defaults: dict):
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
    return search.Settings(budget=kw["budget"], seed=kw["seed"], **values)


def backend_from(kw: dict):
    """The backend, with a Dask scheduler probed once before anything is written."""
    try:
        jobs = check_jobs(kw["jobs"])
        if kw["backend"] == "dask":
            if not kw["scheduler"]:
                raise RunError("--backend dask needs --scheduler ADDRESS (for example tcp://HOST:8786)")
            runner.connect_scheduler(kw["scheduler"]).close()
    except RunError as exc:
        raise UserError(str(exc)) from None
    return Backend(jobs, kw["backend"], kw["scheduler"])


def _notice(quiet: bool):
    return None if quiet else (lambda line: click.echo(line, err=True))


def _run(problem, settings, kw):
    """Check the folder and budget, then search; user mistakes as one line, Ctrl-C resumable."""
    try:
        search.check_budget(problem, settings)
        search.check_search_folder(Path(kw["out"]), search.search_doc(problem, settings))
    except RunError as exc:
        raise UserError(str(exc)) from None
    backend = backend_from(kw)
    command = "evora " + " ".join(sys.argv[1:])
    try:
        result = search.run_search(problem, settings, kw["out"], backend, command, _notice(kw["quiet"]))
    except (RunError, StrategyError) as exc:
        raise UserError(str(exc)) from None
    except KeyboardInterrupt:
        interrupted(kw["out"])
    click.echo("\n".join(result.lines))
    click.echo(f"search summary: {result.summary / 'report.md'}")


def tune_strategy(base, against, n_players, params, name, **kw):
    """The command ``evora tune strategy``."""
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
    field = [parse_spec(x).name for x in split_specs(spec)]
    return field * n if len(field) == 1 else field


def balance(params, targets, players_text, specs, penalty, compensation, iterations, final_seeds, confirm_at=None,
            **kw):
    """The command ``evora balance``."""
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
        field = field_names(fields[n], n)
        rungs = parse_rungs(confirm_at, n) if confirm_at is not None else []
        plan = seat_compensation.Compensation(n, tuple(field), kw["budget"], iterations, confirm, kw["seed"],
                                              kw["rules_path"], tuple(kw["overrides"]), final_seeds, tuple(rungs),
                                              seat_compensation.made_rotating(kw["out"]))
        seat_compensation.check_budget(n, kw["budget"], iterations, final_seeds, plan.rotations)
        search.check_search_folder(Path(kw["out"]), plan.doc())
    except (StrategyError, RunError) as exc:
        raise UserError(str(exc)) from None
    backend = backend_from(kw)
    command = "evora " + " ".join(sys.argv[1:])
    try:
        result = seat_compensation.run_compensation(plan, kw["out"], backend=backend, command=command,
                                                    notice=_notice(kw["quiet"]))
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
