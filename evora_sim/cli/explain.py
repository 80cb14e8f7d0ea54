"""``evora explain RUN``: why the run's seats win what they win (each seat's deviation from a fair
share split by where its games were decided) and what each rule change would do about it (the
run's seeds replayed under every mechanism switch and a seat compensation, paired). Every argument
is checked before anything is written; the experiment is :mod:`evora_sim.experiments.explain_runs`, its
statistics :mod:`analysis.explain_stats`."""
from __future__ import annotations

import sys
from pathlib import Path

import click

from strategies.errors import StrategyError

from ..manifest import RunError
from ..rules import RulesError
from .group import JOBS_DEFAULT, UserError, check_out_arg, examples


@click.command("explain", epilog=examples(
    "evora explain runs/p4 --out runs/p4_why",
    "evora explain runs/p2 --confirm-seeds 1000 --confirm-at 'cardheights;expert' --out runs/p2_why",
    "evora explain runs/p4 --backend dask --scheduler tcp://HOST:8786 --out runs/p4_why"))
@click.argument("run_dir", metavar="RUN")
@click.option("--seeds", type=int, default=None, metavar="N",
              help="Seeds of RUN replayed under each rule change (each under the run's seat rotations); "
                   "default: its first 2,500, or all it has when fewer.")
@click.option("--compensation/--no-compensation", default=True, show_default=True,
              help="Also replay the seat compensation (starting VP per seat) that re-scoring RUN's games "
                   "says would equalise the seats.")
@click.option("--confirm-seeds", "confirm_seeds", type=int, default=None, metavar="N",
              help="Fresh seeds (a run seed of their own) on which the best fix and the run's rules are played "
                   "again by the run's players; the fix is quoted only if it is fairer there. Default: as many as "
                   "--seeds; 0: none (no fix is quoted).")
@click.option("--confirm-at", "confirm_at", default=None, metavar="SPEC;SPEC;...",
              help="Also confirm the best fix at these rungs (weakest first, written as evora skill --ladder), "
                   "and say from which rung up every seat's interval contains the fair share.")
@click.option("--jobs", type=int, default=JOBS_DEFAULT, show_default=True,
              help="Processes playing the arms at once; -1 = every core.")
@click.option("--out", required=True, metavar="DIR", callback=check_out_arg,
              help="The experiment folder (created, or resumed: run the same command again).")
@click.option("--backend", type=click.Choice(["loky", "dask"]), default="loky", show_default=True,
              help="loky: processes on this machine; dask: a dask.distributed cluster.")
@click.option("--scheduler", metavar="ADDRESS", help="Dask scheduler, e.g. tcp://HOST:8786.")
@click.option("--quiet", "-q", is_flag=True, help="No progress lines.")
def explain(run_dir, seeds, compensation, out, quiet, confirm_seeds=None, confirm_at=None, **kw):
    """Explain RUN's seat findings: each seat's deviation from a fair share split into the part won
    in the final round after the end was triggered, the part won by each tie-break step and the
    rest, with 95% intervals over seeds; then RUN's seeds replayed under every mechanism switch
    (how the game ends once triggered, the tie-break, the setup order) and a seat compensation,
    paired with RUN's games, ranked by the seat unfairness they leave; the best fix is played again
    on fresh seeds and quoted only if it is fairer there. Writes DIR/summary: the
    tables (CSV, which evora report --explain DIR reads) and report.md."""
    from ..experiments import explain_runs, search  # lazy: the experiments, 2.5 s (measured); not for --help
    from .tuning_work import backend_from, interrupted  # lazy: with them (the runner, 0.8 s, measured)

    try:
        plan = explain_runs.open_plan(run_dir, seeds, compensation, confirm_seeds, confirm_at, made_in=out)
        search.check_search_folder(Path(out), explain_runs.explain_doc(plan, out))
    except (StrategyError, RunError, RulesError) as exc:
        raise UserError(str(exc)) from None
    backend = backend_from(kw)
    command = "evora " + " ".join(sys.argv[1:])
    try:
        result = explain_runs.run_explain(plan, out, backend=backend, command=command,
                             notice=None if quiet else (lambda line: click.echo(line, err=True)))
    except (RunError, StrategyError, RulesError) as exc:
        raise UserError(str(exc)) from None
    except KeyboardInterrupt:
        interrupted(out)
    click.echo("\n".join(result["lines"]))
    click.echo(f"explain summary: {result['summary'] / 'report.md'}")
