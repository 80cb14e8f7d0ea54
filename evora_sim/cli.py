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


STRATEGIES_HELP = ("One strategy per seat, comma-separated, or one for every seat: a built-in "
                   "(evora strategies), NAME(feature=weight, ...), FILE.toml:NAME or FILE.py:NAME.")


# ---------------------------------------------------------------------------------------------
# evora replay
# ---------------------------------------------------------------------------------------------
@main.command()
@click.option("--players", "-n", "n_players", type=int, required=True, metavar="N", help="2, 3 or 4.")
@click.option("--seed", type=int, required=True, metavar="S", help="The game's seed.")
@click.option("--strategies", "spec", required=True, metavar="A,B,...",
              help=STRATEGIES_HELP)
@click.option("--rules", "rules_path", metavar="FILE", help="Rules file merged over the shipped rules.")
def replay(n_players, seed, spec, rules_path):
    """Play one seeded game and print it turn by turn, then its final scoring."""
    from strategies.registry import StrategyError, parse_strategies

    from .replay import replay_lines

    rules = load_rules_arg(rules_path)
    n = check_players_arg(n_players, rules)
    seed = check_seed_arg(seed)
    try:
        seats = parse_strategies(spec, n)
        lines = replay_lines(rules, n, seed, seats)
    except StrategyError as exc:
        raise UserError(str(exc)) from None
    click.echo("\n".join(lines))


# ---------------------------------------------------------------------------------------------
# evora simulate
# ---------------------------------------------------------------------------------------------
def run_options(f):
    """Options shared by the commands that run experiments."""
    for opt in reversed([
        click.option("--players", "-n", "n_players", type=int, required=True, metavar="N", help="2, 3 or 4."),
        click.option("--games", type=int, required=True, metavar="N", help="Seeds to play (each once per rotation)."),
        click.option("--strategies", "spec", required=True, metavar="A,B,...", help=STRATEGIES_HELP),
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
def write_report(run_dirs, out, allow_partial=False, players=None):
    """Open the run folders (one-line errors for a folder that is not a run, an incomplete run
    without ``allow_partial``, runs of different rules, an empty selection), then build the
    report into ``out``."""
    from pathlib import Path

    from analysis.report import build_report
    from analysis.tables import open_runs

    from .runner import MANIFEST, RunError

    try:
        runs = open_runs(run_dirs, allow_partial=allow_partial, players=players)
    except RunError as exc:
        raise UserError(str(exc)) from None
    out_path = Path(out)
    if out_path.exists() and (not out_path.is_dir() or (out_path / MANIFEST).exists() or (
            any(out_path.iterdir()) and not (out_path / "report.html").exists())):
        raise UserError(f"--out {out} exists and is not a report folder; choose another --out")
    try:
        return build_report(runs, out)
    except RunError as exc:
        raise UserError(str(exc)) from None
    except OSError as exc:
        raise UserError(f"cannot write the report to {out}: {exc.strerror or exc}") from None


@main.command()
@click.argument("runs", nargs=-1, required=True, metavar="RUN_DIR...")
@click.option("--out", required=True, metavar="DIR", help="Report folder (replaced if it exists).")
@click.option("--allow-partial", is_flag=True, help="Analyse only the finished chunks of an incomplete run.")
@click.option("--players", "-n", "players", type=int, multiple=True, metavar="N",
              help="Only the runs of this player count (repeatable).")
def report(runs, out, allow_partial, players):
    """Write the balance report (report.html, report.md, CSV tables, figures) of run folders."""
    path = write_report(runs, out, allow_partial, players)
    click.echo(f"report: {path / 'report.html'}")


# The main job's fields: the strongest built-ins of a 2-player round robin (balanced, cards),
# then emperor and greedy - mid-table, with plans of their own (Emperor tiles; its own total) -
# so seats are measured in competent, varied play. Seat rotation puts every strategy in every
# seat on the same seeds, so seat effects are not strategy effects. random and the weakest
# specialists stay out: a weak seat-mate hands wins to the others and blurs seat effects.
DEFAULT_FIELD = {2: "balanced,cards", 3: "balanced,cards,emperor", 4: "balanced,cards,emperor,greedy"}
DEFAULT_GAMES = 48_000


@main.command()
@click.option("--games", type=int, default=DEFAULT_GAMES, show_default=True, metavar="N",
              help="Games per player count, rounded up to whole rotations (48,000 keeps every "
                   "seat's win-rate interval within +-0.5 point).")
@click.option("--seed", type=int, default=1, show_default=True, help="The run seed.")
@click.option("--jobs", type=int, default=-1, show_default=True, help="Processes; -1 = every core.")
@click.option("--out", default="runs/default", show_default=True, metavar="DIR", help="Run folders go here.")
@click.option("--report-dir", default="reports/default", show_default=True, metavar="DIR",
              help="The report goes here.")
@click.option("--quiet", "-q", is_flag=True, help="No progress bars.")
def run(games, seed, jobs, out, report_dir, quiet):
    """The main job: simulate 2, 3 and 4 players, each with a field of built-in strategies under
    seat rotation, then write the report."""
    from pathlib import Path

    if games < 1:
        raise UserError(f"--games must be a positive whole number, got {games}")
    dirs = []
    for n, spec in DEFAULT_FIELD.items():
        folder = str(Path(out) / f"p{n}")
        seeds = -(-games // n)                      # every seed is played under n rotations
        if not quiet:
            click.echo(f"{n} players: {seeds * n:,} games ({seeds:,} seeds x {n} seat rotations) "
                       f"of {spec} -> {folder}", err=True)
        run_experiment(n_players=n, games=seeds, spec=spec, seed=seed, jobs=jobs, out=folder,
                       seat_rotation=True, rules_path=None, backend="loky", scheduler=None,
                       chunk_size=None, quiet=quiet)
        dirs.append(folder)
    path = write_report(dirs, report_dir)
    click.echo(f"report: {path / 'report.html'}")


# ---------------------------------------------------------------------------------------------
# evora strategies / evora duel
# ---------------------------------------------------------------------------------------------
@main.command(name="strategies")
def list_strategies():
    """List the built-in strategies: name, description and weights; then the features."""
    from strategies.builtin import BUILTINS, FEATURE_HELP
    from strategies.compiled import FEATURES, KIND_HEURISTIC
    from strategies.custom import GROUP, entry_points
    from strategies.registry import format_weights

    width = max(len(s.name) for s in BUILTINS)
    lines = ["Built-in strategies (each heuristic scores every legal action by a weighted sum of "
             "the features below):", ""]
    for st in BUILTINS:
        lines.append(f"  {st.name.ljust(width)}  {st.description}")
        weights = format_weights(st.weight_dict()) if st.kind == KIND_HEURISTIC else "none (no evaluation)"
        lines.append(f"  {''.ljust(width)}  weights: {weights}")
    fw = max(len(f) for f in FEATURES)
    lines += ["", "Features (weight names), for the player to move:"]
    lines += [f"  {f.ljust(fw)}  {FEATURE_HELP[f]}" for f in FEATURES]
    try:
        eps = entry_points()
    except Exception:                      # a broken installation must not hide the built-ins
        eps = {}
    if eps:
        lines += ["", f"Installed custom strategies (entry points {GROUP}):"]
        lines += [f"  {name}  = {ep.value}" for name, ep in sorted(eps.items())]
    lines += ["",
              "Specs: NAME, NAME(feature=weight, ...) e.g. 'balanced(column=2, emperor=0.5)', "
              "FILE.toml:NAME (a weight set), FILE.py:NAME (a custom Python strategy).",
              "Equal values are broken by the game's random stream, so every game is reproducible "
              "from its seed."]
    click.echo("\n".join(lines))


@main.command()
@click.argument("specs", nargs=-1, required=True, metavar="A B | A,B,B,B")
@click.option("--players", "-n", "n_players", type=int, default=None, metavar="N",
              help="2, 3 or 4 (default: the field's size, or 2 for A B). With A B and N > 2 the "
                   "field is A against N-1 x B.")
@click.option("--games", type=int, default=2000, show_default=True, metavar="N",
              help="Games in all, rounded up to whole seeds x seat rotations.")
@click.option("--seed", type=int, default=1, show_default=True, help="The run seed; game seeds derive from it.")
@click.option("--jobs", type=int, default=1, show_default=True, help="Processes; -1 = every core.")
@click.option("--rules", "rules_path", metavar="FILE", help="Rules file merged over the shipped rules.")
@click.option("--quiet", "-q", is_flag=True, help="No progress bar.")
def duel(specs, n_players, games, seed, jobs, rules_path, quiet):
    """Head-to-head: seat-rotated games of strategies A and B (or a field A,B,B,B) over the same
    seeds; each strategy's win rate with a 95% interval."""
    from strategies.registry import StrategyError

    from .duel import duel as play_duel
    from .duel import duel_field, duel_lines
    from .runner import RunError

    rules = load_rules_arg(rules_path)
    if n_players is not None:
        check_players_arg(n_players, rules)
    seed = check_seed_arg(seed)
    try:
        field = duel_field(specs, n_players)
        check_players_arg(len(field), rules)
        result = play_duel(field, games, seed=seed, jobs=jobs, rules=rules, quiet=quiet)
    except (RunError, StrategyError) as exc:
        raise UserError(str(exc)) from None
    click.echo("\n".join(duel_lines(result)))


if __name__ == "__main__":  # pragma: no cover
    main()
