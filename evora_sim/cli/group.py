"""The ``evora`` click group and the argument checkers every command shares.

User mistakes (bad player count, unknown strategy, malformed file) end with one line on
stderr and exit status 2, never a traceback. Every input is checked before anything runs.

The group loads a command's module only when that command runs or shows its own help
(:data:`COMMANDS`, click's lazy loading of subcommands): ``evora --help`` lists the commands
from the table without importing any of them. A command module imports at its top what costs
little; the runner, the statistics, the experiments and the compiled players (0.2 to 3 s each,
measured; ``evora --help`` takes about 0.7 s) are imported inside the command that uses them,
with the measured cost beside the import (docs/code.md).
"""
from __future__ import annotations

import importlib
import math
import sys
from contextlib import contextmanager

import click

from strategies.errors import StrategyError

from ..fsutil import OutputError, check_out_path
from ..manifest import RunError
from ..rules import RulesError, load_rules, player_count_problem


class UserError(click.ClickException):
    """A mistake in the user's input: printed as one line, exit status 2."""

    exit_code = 2

    def show(self, file=None):
        message = " ".join(self.format_message().split("\n"))
        # a control character from the user's input (a key "\x1e" in a JSON file) is shown
        # escaped: printed raw it could break the one line or the terminal
        message = "".join(c if c.isprintable() else repr(c)[1:-1] for c in message)
        click.echo(f"evora: error: {message}", err=True, file=file or sys.stderr)


def _usage_error(exc: click.UsageError) -> UserError:
    where = exc.ctx.command_path if exc.ctx is not None else "evora"
    return UserError(f"{exc.format_message().rstrip('.')} (see '{where} --help')")


INTERRUPTED = 130           # the exit status of a command stopped by Ctrl-C (128 + SIGINT), on every command


class CommandGroup(click.Group):
    """Usage mistakes (a missing option, a value that is not a number, an unknown command) end
    like every other user error: one line, exit status 2. A KeyboardInterrupt (Ctrl-C, or one a
    custom strategy raises) ends every command alike: one line, exit status 130, where click
    would say "Aborted!" with status 1."""

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
        except KeyboardInterrupt:
            click.echo("\ninterrupted", err=True)
            sys.exit(INTERRUPTED)


# Every command of ``evora``: the module of evora_sim.cli that defines it, the name of its click
# command there, and the line ``evora --help`` shows for it (the command's own --help shows its
# docstring). A new command is one row here and its function in a module.
COMMANDS: dict[str, tuple[str, str, str]] = {
    "balance": ("tuning", "balance", "Search rules values toward fair seats; write them as rules."),
    "card-value": ("cardvalue", "card_value", "Measure each card's and instant tile's value by intervention."),
    "compact": ("analyse", "compact", "Pack a run's finished chunks into fewer, larger files."),
    "compare": ("analyse", "compare", "How each headline metric moved from RUN_A to RUN_B."),
    "dashboard": ("dashboard", "dashboard", "Explore run folders in the browser, sliced."),
    "duel": ("play", "duel", "Head-to-head: seat-rotated games of strategies A and B."),
    "explain": ("explain", "explain", "Why RUN's seats win what they win, and what would fix it."),
    "replay": ("play", "replay", "Play one seeded game and print it turn by turn."),
    "report": ("analyse", "report", "Write the balance report of run folders."),
    "rules": ("rules_list", "list_rules", "List every rules key, its value and what it allows."),
    "run": ("runs", "run", "The main job: 2, 3 and 4 players seat-rotated, then the report."),
    "score": ("play", "score", "Final scoring of the position in FILE.json."),
    "simulate": ("runs", "simulate", "Play many seeded games in parallel into Parquet tables."),
    "skill": ("skill", "skill", "Play a skill ladder: which findings hold for stronger players."),
    "strategies": ("play", "list_strategies", "List the built-in strategies, the expert and the features."),
    "sweep": ("experiments", "sweep", "Play every combination of --param values; summarise them."),
    "train": ("train", "train", "Train the expert's evaluation for these rules."),
    "tune": ("tuning", "tune", "Search a strategy's weights (tune strategy)."),
}


class LazyGroup(CommandGroup):
    """The ``evora`` group: its commands are the rows of :data:`COMMANDS`, each module imported
    the first time one of its commands is asked for (click's documented lazy loading)."""

    def list_commands(self, ctx):
        return sorted(COMMANDS)

    def get_command(self, ctx, cmd_name):
        if cmd_name not in COMMANDS:
            return None
        module, attribute, summary = COMMANDS[cmd_name]
        command = getattr(importlib.import_module(f"{__package__}.{module}"), attribute)
        command.short_help = summary
        return command

    def format_commands(self, ctx, formatter):
        """The commands with their summaries from the table: no command module is imported."""
        with formatter.section("Commands"):
            formatter.write_dl([(name, COMMANDS[name][2]) for name in self.list_commands(ctx)])


@click.group(cls=LazyGroup, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(package_name="evora-sim")
def main():
    """Simulate Évora and analyse its balance."""


# ---------------------------------------------------------------------------------------------
# reading the user's input: every failure becomes a UserError
# ---------------------------------------------------------------------------------------------
def _in_file(message: str, what: str, path: str) -> str:
    return message if str(path) in message else f"{what} {path}: {message}"


def read_error(exc: Exception, what: str, path: str) -> UserError:
    if isinstance(exc, UnicodeDecodeError):
        return UserError(f"{what} {path} is not UTF-8 text")
    if isinstance(exc, OSError):
        return UserError(f"cannot read {what} {path}: {exc.strerror or exc}")
    return UserError(_in_file(str(exc), what, path))


def load_rules_arg(path, overrides=()):
    """The shipped rules, or the ``--rules`` file merged over them, then the ``--set KEY=VALUE``
    overrides; the result validated as a whole (a one-line error names the key)."""
    overrides = tuple(overrides or ())
    if path is not None:
        try:
            load_rules(path)
        except (RulesError, UnicodeDecodeError, OSError) as exc:
            raise read_error(exc, "rules file", path) from None
    if path is None and not overrides:
        return load_rules()
    try:
        return load_rules(path, overrides)
    except RulesError as exc:
        message = str(exc)
        if not message.startswith("--set"):
            message = f"--set {' '.join(overrides)}: the resulting rules are not playable: {message}"
        raise UserError(message) from None


SET_HELP = ("Override one rules value, KEY=VALUE (repeatable): height_vp.3=2, emperor_tile.values=4,6, "
            "majority.column_vp=4, board.spaces.5.action=draw2 with board.spaces.5.stacks=governor,emperor.")


def set_option(f):
    return click.option("--set", "overrides", multiple=True, metavar="KEY=VALUE", help=SET_HELP)(f)


def check_players_arg(n_players, rules) -> int:
    from ..api import check_players  # lazy: the api loads the players, 0.2 s (measured); not for --help

    try:
        n = check_players(n_players)
    except ValueError as exc:
        raise UserError(str(exc)) from None
    problem = player_count_problem(rules, n)
    if problem:
        raise UserError(problem)
    return n


def warn_other_rules(seats, rules) -> None:
    """A warning line on stderr for each strategy whose learned weights were trained for other
    rules than these (their file records the rules' hash): they play, not as trained weights would."""
    from strategies.registry import other_rules  # lazy: the players, 0.2 s (measured); not for --help

    for line in dict.fromkeys(filter(None, (other_rules(s, rules.hash) for s in seats))):
        click.echo(f"evora: warning: {line}", err=True)


def check_out_arg(ctx, param, value):
    """click callback of every output path option: refuse ``""``, ``.`` and its parents (they
    hold the user's own files) before anything runs."""
    if value is None:
        return None
    option = "--" + param.name.replace("_", "-") if param is not None else "--out"
    try:
        check_out_path(value, option)
    except OutputError as exc:
        raise UserError(str(exc)) from None
    return value


def decision_timeout_option(f):
    return click.option(
        "--decision-timeout", type=float, default=60.0, show_default=True, metavar="SECONDS",
        callback=_check_timeout,
        help="Longest a custom Python strategy may take for one decision; then the run stops with "
             "one line naming the strategy and the game's seed.")(f)


def _check_timeout(ctx, param, value):
    if value is not None and not (math.isfinite(value) and 0 < value <= 86_400):
        raise UserError(f"--decision-timeout must be a number of seconds above 0 and at most 86400, got {value}")
    return value


def check_backend(backend, scheduler) -> None:
    if backend == "dask" and not scheduler:
        raise UserError("--backend dask needs --scheduler ADDRESS (for example tcp://HOST:8786)")


def check_seed_arg(seed) -> int:
    if not 0 <= seed < 2**63:
        raise UserError(f"seed must be a whole number from 0 to 2**63-1, got {seed}")
    return seed



STRATEGIES_HELP = ("One strategy per seat, comma-separated, or one for every seat: a built-in "
                   "(evora strategies), NAME(feature=weight, ...), FILE.toml:NAME or FILE.py:NAME.")


def _check_min_effect(ctx, param, value):
    if value is not None and not (0 <= value < 100):
        raise UserError(f"--min-effect must be a number of percentage points from 0 to 100, got {value}")
    return value


def min_effect_option(f):
    """--min-effect POINTS: the smallest difference in win rate that matters to the designer;
    smaller findings are called negligible even when significant, and a skill ladder's findings
    are judged settled against it."""
    return click.option("--min-effect", "min_effect", type=float, default=1.0, show_default=True,
                        metavar="PP", callback=_check_min_effect,
                        help="Smallest difference in win rate that matters, in percentage points: smaller "
                             "findings are marked negligible even when significant, and a skill ladder's "
                             "finding has settled where its top rungs agree within it.")(f)



def examples(*commands: str) -> str:
    """The epilog every command's ``--help`` ends with: one to three examples, printed as
    written (click's ``\\b`` keeps its lines unwrapped)."""
    if not 1 <= len(commands) <= 3:
        raise ValueError("a command's help shows 1 to 3 examples")
    return "\b\nExamples:\n" + "\n".join(f"  {c}" for c in commands)


JOBS_DEFAULT = -1          # one default for every command that plays games: every core


def jobs_option(f):
    return click.option("--jobs", type=int, default=JOBS_DEFAULT, show_default=True, metavar="N",
                        help="Processes; -1 = every core.")(f)


@contextmanager
def playing(out):
    """Around the games of a command: a run error becomes the one-line user error, and Ctrl-C
    says what is kept in ``out`` and exits with status 130."""
    try:
        yield
    except (RunError, StrategyError) as exc:
        raise UserError(str(exc)) from None
    except KeyboardInterrupt:
        click.echo(f"\ninterrupted: finished chunks are kept in {out}; run the same command again to play "
                   "only the missing ones", err=True)
        sys.exit(INTERRUPTED)
