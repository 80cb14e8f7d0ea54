"""The ``evora`` command line: one click group, one sub-command per job.

User mistakes (bad player count, unknown strategy, malformed file) end with one line on
stderr and exit status 2, never a traceback. Every input is checked before anything runs.
"""
from __future__ import annotations

import json
import sys

import click


class UserError(click.ClickException):
    """A mistake in the user's input: printed as one line, exit status 2."""

    exit_code = 2

    def show(self, file=None):
        message = " ".join(self.format_message().split("\n"))
        click.echo(f"evora: error: {message}", err=True, file=file or sys.stderr)


def _usage_error(exc: click.UsageError) -> UserError:
    where = exc.ctx.command_path if exc.ctx is not None else "evora"
    return UserError(f"{exc.format_message().rstrip('.')} (see '{where} --help')")


class _Group(click.Group):
    """Usage mistakes (a missing option, a value that is not a number, an unknown command) end
    like every other user error: one line, exit status 2."""

    def make_context(self, info_name, args, parent=None, **extra):
        try:
            return super().make_context(info_name, args, parent=parent, **extra)
        except click.UsageError as exc:
            if isinstance(exc, getattr(click.exceptions, "NoArgsIsHelpError", ())):
                raise                                  # bare `evora`: show the help
            raise _usage_error(exc) from None

    def invoke(self, ctx):
        try:
            return super().invoke(ctx)
        except click.UsageError as exc:
            raise _usage_error(exc) from None


@click.group(cls=_Group, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(package_name="evora-sim")
def main():
    """Simulate Évora and analyse its balance."""


# ---------------------------------------------------------------------------------------------
# reading the user's input: every failure becomes a UserError
# ---------------------------------------------------------------------------------------------
def _in_file(message: str, what: str, path: str) -> str:
    return message if str(path) in message else f"{what} {path}: {message}"


def _read_error(exc: Exception, what: str, path: str) -> UserError:
    if isinstance(exc, UnicodeDecodeError):
        return UserError(f"{what} {path} is not UTF-8 text")
    if isinstance(exc, OSError):
        return UserError(f"cannot read {what} {path}: {exc.strerror or exc}")
    return UserError(_in_file(str(exc), what, path))


def load_rules_arg(path):
    """The shipped rules, or the ``--rules`` file merged over them."""
    from .rules import RulesError, load_rules

    if path is None:
        return load_rules()
    try:
        return load_rules(path)
    except (RulesError, UnicodeDecodeError, OSError) as exc:
        raise _read_error(exc, "rules file", path) from None


def check_players_arg(n_players, rules) -> int:
    from .api import check_players

    try:
        n = check_players(n_players)
    except ValueError as exc:
        raise UserError(str(exc)) from None
    lo, hi = rules.data["players"]["min"], rules.data["players"]["max"]
    if not lo <= n <= hi:
        raise UserError(f"player count {n} is outside the rules' players.min..players.max ({lo} to {hi})")
    return n


def check_seed_arg(seed) -> int:
    if not 0 <= seed < 2**63:
        raise UserError(f"seed must be a whole number from 0 to 2**63-1, got {seed}")
    return seed


# ---------------------------------------------------------------------------------------------
# evora score
# ---------------------------------------------------------------------------------------------
@main.command()
@click.argument("position_file", metavar="FILE.json")
@click.option("--json", "as_json", is_flag=True, help="Print the scoring as JSON.")
@click.option("--rules", "rules_path", metavar="FILE", help="Rules file merged over the shipped rules.")
def score(position_file, as_json, rules_path):
    """Final scoring of the position in FILE.json: per seat, per category, and the winner."""
    from .position import PositionError, load_position, scoring_table
    from .replay import scoring_lines

    rules = load_rules_arg(rules_path)
    try:
        state = load_position(position_file, rules)
    except (PositionError, UnicodeDecodeError, OSError) as exc:
        raise _read_error(exc, "position file", position_file) from None
    check_players_arg(state.n_players, rules)
    table = scoring_table(state)
    if as_json:
        click.echo(json.dumps(table, indent=2))
    else:
        click.echo("\n".join(scoring_lines(table)))


# ---------------------------------------------------------------------------------------------
# evora replay
# ---------------------------------------------------------------------------------------------
@main.command()
@click.option("--players", "-n", "n_players", type=int, required=True, metavar="N", help="2, 3 or 4.")
@click.option("--seed", type=int, required=True, metavar="S", help="The game's seed.")
@click.option("--strategies", "spec", required=True, metavar="A,B,...",
              help="One strategy per seat, comma-separated, or one for every seat.")
@click.option("--rules", "rules_path", metavar="FILE", help="Rules file merged over the shipped rules.")
def replay(n_players, seed, spec, rules_path):
    """Play one seeded game and print it turn by turn, then its final scoring."""
    from strategies.registry import StrategyError, parse_strategies

    from .replay import replay_lines

    rules = load_rules_arg(rules_path)
    n = check_players_arg(n_players, rules)
    seed = check_seed_arg(seed)
    try:
        sids = parse_strategies(spec, n)
    except StrategyError as exc:
        raise UserError(str(exc)) from None
    click.echo("\n".join(replay_lines(rules, n, seed, sids)))


# ---------------------------------------------------------------------------------------------
# evora simulate
# ---------------------------------------------------------------------------------------------
def run_options(f):
    """Options shared by the commands that run experiments."""
    for opt in reversed([
        click.option("--players", "-n", "n_players", type=int, required=True, metavar="N", help="2, 3 or 4."),
        click.option("--games", type=int, required=True, metavar="N", help="Seeds to play (each once per rotation)."),
        click.option("--strategies", "spec", required=True, metavar="A,B,...",
                     help="One strategy per seat, comma-separated, or one for every seat."),
        click.option("--seed", type=int, default=1, show_default=True, help="The run seed; game seeds derive from it."),
        click.option("--jobs", type=int, default=-1, show_default=True, help="Processes; -1 = every core."),
        click.option("--out", required=True, metavar="DIR", help="The run folder (created, or resumed)."),
        click.option("--seat-rotation", is_flag=True,
                     help="Play every seed once under each cyclic rotation of the strategies."),
        click.option("--rules", "rules_path", metavar="FILE", help="Rules file merged over the shipped rules."),
        click.option("--backend", type=click.Choice(["loky", "dask"]), default="loky", show_default=True,
                     help="loky: processes on this machine; dask: a dask.distributed cluster."),
        click.option("--scheduler", metavar="ADDRESS", help="Dask scheduler, e.g. tcp://HOST:8786."),
        click.option("--chunk-size", type=int, default=None, metavar="N",
                     help="Seeds per chunk (the unit of parallel work and of resuming)."),
        click.option("--quiet", "-q", is_flag=True, help="No progress bar."),
    ]):
        f = opt(f)
    return f


def run_experiment(n_players, games, spec, seed, jobs, out, seat_rotation, rules_path, backend,
                   scheduler, chunk_size, quiet):
    """Check every argument, then run; user mistakes become one-line errors."""
    from strategies.registry import StrategyError

    from .runner import RunError, simulate

    rules = load_rules_arg(rules_path)
    check_players_arg(n_players, rules)
    command = "evora " + " ".join(sys.argv[1:])
    try:
        return simulate(n_players, games, spec, seed=seed, out=out, jobs=jobs,
                        seat_rotation=seat_rotation, rules=rules, backend=backend,
                        scheduler=scheduler, chunk_size=chunk_size, quiet=quiet, command=command)
    except (RunError, StrategyError) as exc:
        raise UserError(str(exc)) from None
    except KeyboardInterrupt:
        click.echo(f"\ninterrupted: finished chunks are kept in {out}; run the same command again "
                   "to play only the missing ones", err=True)
        sys.exit(130)


@main.command()
@run_options
def simulate(**kwargs):
    """Play many seeded games in parallel into Parquet tables (resumable)."""
    result = run_experiment(**kwargs)
    games = result.n_games
    click.echo(f"{games} games in {result.out} (tables: games, seats, cards, spaces)")


# ---------------------------------------------------------------------------------------------
# evora report / evora run
# ---------------------------------------------------------------------------------------------
def write_report(run_dirs, out, allow_partial=False):
    from analysis.report import build_report

    from .runner import RunError, open_run

    runs = []
    for d in run_dirs:
        try:
            run = open_run(d)
        except RunError as exc:
            raise UserError(str(exc)) from None
        missing = [k for k, v in run.manifest["chunks"].items() if v != "done"]
        if missing and not allow_partial:
            raise UserError(f"run {d} is incomplete: chunks {', '.join(missing[:10])}"
                            f"{' ...' if len(missing) > 10 else ''} are missing; finish it by running "
                            f"its command again, or analyse the finished chunks with --allow-partial")
        if not run.done_chunks():
            raise UserError(f"run {d} has no finished chunk to analyse")
        runs.append(run)
    return build_report(runs, out)


@main.command()
@click.argument("runs", nargs=-1, required=True, metavar="RUN_DIR...")
@click.option("--out", required=True, metavar="DIR", help="Report folder (replaced if it exists).")
@click.option("--allow-partial", is_flag=True, help="Analyse only the finished chunks of an incomplete run.")
def report(runs, out, allow_partial):
    """Write the balance report (report.html, report.md, CSV tables, figures) of run folders."""
    path = write_report(runs, out, allow_partial)
    click.echo(f"report: {path / 'report.html'}")


DEFAULT_FIELD = {2: "greedy", 3: "greedy", 4: "greedy"}


@main.command()
@click.option("--games", type=int, default=12_000, show_default=True, metavar="N",
              help="Games per player count (12,000 keeps seat intervals under +-1 point).")
@click.option("--seed", type=int, default=1, show_default=True, help="The run seed.")
@click.option("--jobs", type=int, default=-1, show_default=True, help="Processes; -1 = every core.")
@click.option("--out", default="runs/default", show_default=True, metavar="DIR", help="Run folders go here.")
@click.option("--report-dir", default="reports/default", show_default=True, metavar="DIR",
              help="The report goes here.")
@click.option("--quiet", "-q", is_flag=True, help="No progress bars.")
def run(games, seed, jobs, out, report_dir, quiet):
    """The main job: simulate 2, 3 and 4 players with the default field, then write the report."""
    from pathlib import Path

    dirs = []
    for n, spec in DEFAULT_FIELD.items():
        folder = str(Path(out) / f"p{n}")
        if not quiet:
            click.echo(f"{n} players: {games:,} games of {spec} -> {folder}", err=True)
        run_experiment(n_players=n, games=games, spec=spec, seed=seed, jobs=jobs, out=folder,
                       seat_rotation=False, rules_path=None, backend="loky", scheduler=None,
                       chunk_size=None, quiet=quiet)
        dirs.append(folder)
    path = write_report(dirs, report_dir)
    click.echo(f"report: {path / 'report.html'}")


if __name__ == "__main__":  # pragma: no cover
    main()
