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


def load_rules_arg(path, overrides=()):
    """The shipped rules, or the ``--rules`` file merged over them, then the ``--set KEY=VALUE``
    overrides; the result validated as a whole (a one-line error names the key)."""
    from .rules import RulesError, load_rules

    overrides = tuple(overrides or ())
    if path is not None:
        try:
            load_rules(path)
        except (RulesError, UnicodeDecodeError, OSError) as exc:
            raise _read_error(exc, "rules file", path) from None
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
@set_option
def score(position_file, as_json, rules_path, overrides=()):
    """Final scoring of the position in FILE.json: per seat, per category, and the winner."""
    from .position import PositionError, load_position, scoring_table
    from .replay import scoring_lines

    rules = load_rules_arg(rules_path, overrides)
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
@set_option
def replay(n_players, seed, spec, rules_path, overrides=()):
    """Play one seeded game and print it turn by turn, then its final scoring."""
    from strategies.registry import StrategyError, parse_strategies

    from .replay import replay_lines

    rules = load_rules_arg(rules_path, overrides)
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
        click.option("--set", "overrides", multiple=True, metavar="KEY=VALUE", help=SET_HELP),
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
                   scheduler, chunk_size, quiet, overrides=(), rules=None):
    """Check every argument, then run; user mistakes become one-line errors."""
    from strategies.registry import StrategyError

    from .runner import RunError, simulate

    if rules is None:
        rules = load_rules_arg(rules_path, overrides)
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


def until_ci_options(f):
    for opt in reversed([
        click.option("--until-ci", "until_ci", type=float, default=None, metavar="WIDTH",
                     help="Keep adding games (doubling from --games) until the 95% half-width of "
                          "the --ci-metrics is below WIDTH (percentage points for rates and shares; "
                          "VP or rounds for means), or --max-games. Intervals are Bonferroni-"
                          "adjusted over the planned looks, so they stay valid under this stopping."),
        click.option("--max-games", type=int, default=None, metavar="N",
                     help="With --until-ci: the most seeds to play (default 32 x --games)."),
        click.option("--ci-metrics", default="seats", show_default=True, metavar="A,B",
                     help="With --until-ci: seats, spread, strategies, score, majority, length."),
    ]):
        f = opt(f)
    return f


def _until_ci(arms, kw, until_ci, max_games, ci_metrics, command):
    """Run ``arms`` ((out, rules) pairs) with --until-ci; user mistakes as one-line errors."""
    from strategies.registry import StrategyError

    from .runner import RunError
    from .sequential import describe, parse_ci_metrics, run_until_ci

    def on_look(j, k, n, worst):
        if not kw["quiet"]:
            click.echo(f"look {j} of {k}: {n:,} seeds, largest adjusted half-width {worst:.3g} "
                       f"(target {until_ci})", err=True)

    try:
        metrics = parse_ci_metrics(ci_metrics)
        games = kw["games"]
        record = run_until_ci(arms, kw["n_players"], kw["spec"], initial_games=games,
                              max_games=max_games if max_games is not None else 32 * games,
                              width=until_ci, metrics=metrics, seed=kw["seed"],
                              seat_rotation=kw["seat_rotation"], chunk_size=kw["chunk_size"],
                              jobs=(-1 if kw["jobs"] is None else kw["jobs"]), quiet=kw["quiet"],
                              command=command, backend=kw["backend"], scheduler=kw["scheduler"],
                              on_look=on_look)
    except (RunError, StrategyError) as exc:
        raise UserError(str(exc)) from None
    except KeyboardInterrupt:
        click.echo("\ninterrupted: finished chunks are kept; run the same command again to go on",
                   err=True)
        sys.exit(130)
    return record, describe(record)


def _check_until(until_ci, max_games, games):
    if until_ci is None:
        if max_games is not None:
            raise UserError("--max-games needs --until-ci WIDTH")
        return
    if not until_ci > 0:
        raise UserError(f"--until-ci must be a positive width, got {until_ci}")
    if max_games is not None and max_games < games:
        raise UserError(f"--max-games ({max_games}) must be at least --games ({games})")


@main.command()
@run_options
@until_ci_options
def simulate(until_ci=None, max_games=None, ci_metrics="seats", **kwargs):
    """Play many seeded games in parallel into Parquet tables (resumable)."""
    _check_until(until_ci, max_games, kwargs["games"])
    if until_ci is not None:
        rules = load_rules_arg(kwargs["rules_path"], kwargs["overrides"])
        check_players_arg(kwargs["n_players"], rules)
        _, text = _until_ci([(kwargs["out"], rules)], kwargs, until_ci, max_games, ci_metrics,
                            "evora " + " ".join(sys.argv[1:]))
        click.echo(text)
        from .runner import open_run

        result = open_run(kwargs["out"])
    else:
        result = run_experiment(**kwargs)
    games = result.n_games
    click.echo(f"{games} games in {result.out} (tables: games, seats, cards, spaces)")


# ---------------------------------------------------------------------------------------------
# evora sweep
# ---------------------------------------------------------------------------------------------
@main.command()
@run_options
@click.option("--param", "params", multiple=True, required=True, metavar="KEY=V1,V2,...",
              help="A rules value to sweep (repeatable: every combination is played). List values "
                   "are separated by ';': emperor_tile.values=3,5;4,6.")
@until_ci_options
def sweep(params, until_ci=None, max_games=None, ci_metrics="seats", **kw):
    """Play every combination of the --param values on the same seeds (one run folder each under
    --out, resumable), then write the summary: each headline metric against the values with 95%
    intervals (--out/summary: sweep.csv, sweep.png, sweep.md, sweep.html)."""
    from pathlib import Path

    from strategies.registry import StrategyError

    from analysis.sweep import summary, summary_lines, write_summary
    from analysis.tables import AnalysisError

    from .rules import RulesError
    from .runner import RunError, make_config
    from .sweep import plan, prepare_sweep

    _check_until(until_ci, max_games, kw["games"])
    base_rules = load_rules_arg(kw["rules_path"], kw["overrides"])
    check_players_arg(kw["n_players"], base_rules)
    try:
        the_plan = plan(list(params), kw["rules_path"], kw["overrides"])
    except RulesError as exc:
        raise UserError(str(exc)) from None
    command = "evora " + " ".join(sys.argv[1:])
    out = Path(kw["out"])
    try:
        for c in the_plan["combos"]:                    # every argument checked before any game
            make_config(kw["n_players"], kw["games"], kw["spec"], kw["seed"], kw["seat_rotation"],
                        kw["chunk_size"], c["rules"])
        base = {"players": kw["n_players"], "strategies": kw["spec"], "seed": kw["seed"],
                "seat_rotation": kw["seat_rotation"], "chunk_size": kw["chunk_size"],
                "rules_file": kw["rules_path"], "set": list(kw["overrides"]),
                "games": kw["games"], "until_ci": until_ci, "max_games": max_games,
                "ci_metrics": ci_metrics if until_ci is not None else None}
        prepare_sweep(out, the_plan, base)
    except (RunError, StrategyError) as exc:
        raise UserError(str(exc)) from None
    arms = [(str(out / c["name"]), c["rules"]) for c in the_plan["combos"]]
    if until_ci is not None:
        _, text = _until_ci(arms, kw, until_ci, max_games, ci_metrics, command)
        click.echo(text)
    else:
        for folder, rules in arms:
            if not kw["quiet"]:
                click.echo(f"{Path(folder).name}", err=True)
            run_experiment(**{**kw, "out": folder}, rules=rules)
    keys = [k for k, _ in the_plan["params"]]
    try:
        df = summary(out)
        path = write_summary(out)
    except (AnalysisError, RunError) as exc:
        raise UserError(str(exc)) from None
    except OSError as exc:
        raise UserError(f"cannot write the sweep summary to {out}: {exc.strerror or exc}") from None
    click.echo("\n".join(summary_lines(df, keys)))
    click.echo(f"sweep summary: {path / 'sweep.html'}")


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


# ---------------------------------------------------------------------------------------------
# evora compare
# ---------------------------------------------------------------------------------------------
def _open_one(path, allow_partial=False):
    from analysis.tables import open_runs

    from .runner import RunError

    try:
        return open_runs([path], allow_partial=allow_partial)[0]
    except RunError as exc:
        raise UserError(str(exc)) from None


def _write_table(out, df, lines, stem):
    """Write ``df`` as CSV (``out`` ending in .csv) or into the folder ``out`` (STEM.csv and
    STEM.txt with the printed lines)."""
    from pathlib import Path

    out = Path(out)
    try:
        if out.suffix.lower() == ".csv":
            out.parent.mkdir(parents=True, exist_ok=True)
            df.to_csv(out, index=False)
            return out
        if out.exists() and not out.is_dir():
            raise UserError(f"--out {out} exists and is not a folder")
        out.mkdir(parents=True, exist_ok=True)
        df.to_csv(out / f"{stem}.csv", index=False)
        (out / f"{stem}.txt").write_text("\n".join(lines) + "\n", encoding="utf-8")
        return out / f"{stem}.csv"
    except OSError as exc:
        raise UserError(f"cannot write {out}: {exc.strerror or exc}") from None


@main.command()
@click.argument("run_a", metavar="RUN_A")
@click.argument("run_b", metavar="RUN_B")
@click.option("--out", default=None, metavar="PATH",
              help="Write the table: FILE.csv, or a folder (compare.csv, compare.txt).")
@click.option("--allow-partial", is_flag=True, help="Use only the finished chunks of an incomplete run.")
def compare(run_a, run_b, out, allow_partial):
    """How each headline metric moved from RUN_A to RUN_B (B - A, 95% intervals; paired by
    seed when both runs hold the same seeded games)."""
    from analysis.tables import AnalysisError
    from analysis.variants import compare as compare_runs
    from analysis.variants import compare_lines

    a, b = _open_one(run_a, allow_partial), _open_one(run_b, allow_partial)
    try:
        table, info = compare_runs(a, b)
    except AnalysisError as exc:
        raise UserError(str(exc)) from None
    lines = compare_lines(table, info, run_a, run_b)
    click.echo("\n".join(lines))
    if out:
        table = table.assign(paired=info["paired"], run_a=str(run_a), run_b=str(run_b))
        path = _write_table(out, table, lines, "compare")
        click.echo(f"written: {path}")


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
@click.option("--rules", "rules_path", metavar="FILE", help="Rules file merged over the shipped rules.")
@set_option
@click.option("--quiet", "-q", is_flag=True, help="No progress bars.")
def run(games, seed, jobs, out, report_dir, quiet, rules_path=None, overrides=()):
    """The main job: simulate 2, 3 and 4 players, each with a field of built-in strategies under
    seat rotation, then write the report."""
    from pathlib import Path

    if games < 1:
        raise UserError(f"--games must be a positive whole number, got {games}")
    rules = load_rules_arg(rules_path, overrides)
    lo, hi = rules.data["players"]["min"], rules.data["players"]["max"]
    dirs = []
    for n, spec in DEFAULT_FIELD.items():
        if not lo <= n <= hi:
            continue
        folder = str(Path(out) / f"p{n}")
        seeds = -(-games // n)                      # every seed is played under n rotations
        if not quiet:
            click.echo(f"{n} players: {seeds * n:,} games ({seeds:,} seeds x {n} seat rotations) "
                       f"of {spec} -> {folder}", err=True)
        run_experiment(n_players=n, games=seeds, spec=spec, seed=seed, jobs=jobs, out=folder,
                       seat_rotation=True, rules_path=rules_path, backend="loky", scheduler=None,
                       chunk_size=None, quiet=quiet, rules=rules)
        dirs.append(folder)
    if not dirs:
        raise UserError(f"these rules allow {lo} to {hi} players; the main job plays 2, 3 and 4")
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
@set_option
@click.option("--quiet", "-q", is_flag=True, help="No progress bar.")
def duel(specs, n_players, games, seed, jobs, rules_path, quiet, overrides=()):
    """Head-to-head: seat-rotated games of strategies A and B (or a field A,B,B,B) over the same
    seeds; each strategy's win rate with a 95% interval."""
    from strategies.registry import StrategyError

    from .duel import duel as play_duel
    from .duel import duel_field, duel_lines
    from .runner import RunError

    rules = load_rules_arg(rules_path, overrides)
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
