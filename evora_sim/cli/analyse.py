"""Commands that read run folders: report, compare and compact. Their work is in
:mod:`evora_sim.cli.analyse_work` (the statistics) and :mod:`evora_sim.compact`, imported when the
command runs."""
from __future__ import annotations

from pathlib import Path

import click

from ..fsutil import OutputError, check_output_folder
from ..ladderplan import PLAN_FILE
from ..manifest import RunError
from .group import UserError, check_backend, check_out_arg, examples, min_effect_option


def scan_options(f):
    """Where the runs are read: here, or on the Dask cluster that holds them."""
    for opt in reversed([
        click.option("--backend", type=click.Choice(["local", "dask"]), default="local", show_default=True,
                     help="local: read the runs here; dask: each worker of a dask.distributed cluster reads "
                          "the pieces of the runs (at the same path, on the file system the workers share) "
                          "and returns only their statistics."),
        click.option("--scheduler", metavar="ADDRESS", help="With --backend dask: the scheduler, e.g. tcp://HOST:8786."),
    ]):
        f = opt(f)
    return f


@click.command(epilog=examples("evora report runs/default/p2 runs/default/p3 runs/default/p4 --out reports/default",
                              "evora report runs/skill --out reports/skill",
                              "evora report --ladder runs/random runs/greedy runs/mcts --out reports/ladder"))
@click.argument("runs", nargs=-1, required=True, metavar="RUN_DIR...")
@click.option("--out", required=True, metavar="DIR", callback=check_out_arg,
              help="Report folder: created, or replaced if it holds an earlier report and nothing else.")
@click.option("--allow-partial", is_flag=True, help="Analyse only the finished chunks of an incomplete run.")
@click.option("--players", "-n", "players", type=int, multiple=True, metavar="N",
              help="Only the runs of this player count (repeatable).")
@click.option("--ladder", "as_ladder", is_flag=True,
              help="The run folders are the rungs of a skill ladder, weakest first (same seeds and rules): "
                   "add the Skill section. A folder played by evora skill is read as its ladder without it.")
@click.option("--card-value", "card_value", metavar="DIR",
              help="An evora card-value folder: its tables (a card given, a card removed) join the report "
                   "after the observational card table.")
@click.option("--explain", "explain", metavar="DIR",
              help="An evora explain folder: its fixes (rule changes replayed on the run's seeds, ranked) join "
                   "the section Why and the answer.")
@click.option("--expert-run", "expert_dirs", multiple=True, metavar="DIR",
              help="A run with one strategy (the expert) in every seat, per player count (repeatable): the "
                   "answer quotes its seat figure beside the field's (evora run plays them).")
@min_effect_option
@scan_options
def report(runs, out, allow_partial, players, as_ladder, card_value, explain, min_effect, backend, scheduler,
           expert_dirs):
    """Write the balance report (report.html, report.md, CSV tables, figures) of run folders.
    The runs are read once, block by block, so a run of any size is reported in bounded memory."""
    from . import analyse_work as work  # lazy: the statistics, 2.6 s (measured); --help does not need them

    if as_ladder or (len(runs) == 1 and (Path(runs[0]) / PLAN_FILE).is_file()):
        if allow_partial or players or card_value or explain or expert_dirs:
            raise UserError("a skill ladder is reported whole: --allow-partial, --players, --card-value, --explain "
                            "and --expert-run do not apply to it")
        source = list(runs) if as_ladder else runs[0]
        if as_ladder and len(runs) < 2:
            raise UserError(f"--ladder needs at least two run folders (rungs, weakest first), got {len(runs)}")
        path = work.write_ladder_report(source, out, min_effect=min_effect, backend=backend, scheduler=scheduler)
        work.announce(path)
        return
    path = work.write_report(runs, out, allow_partial, players, min_effect=min_effect, backend=backend,
                        scheduler=scheduler, card_value=card_value, explain=explain, expert_dirs=expert_dirs)
    work.announce(path)


# ---------------------------------------------------------------------------------------------
# evora compare
# ---------------------------------------------------------------------------------------------
COMPARE_KIND = "compare"                           # the marker kind of a compare --out folder
_COMPARE_COLUMNS = {"metric", "a", "b", "diff", "lo", "hi", "p_holm"}
_COMPARE_FIGURE = {"Software": "evora compare"}   # PNG text: how a chart of ours is known again


def _written_by_compare(path) -> bool:
    """Whether the file ``path`` (FILE.csv, or FILE.png beside it) is an earlier output of evora
    compare: a table whose header holds compare's columns, a chart tagged by it."""
    try:
        with open(path, "rb") as fh:
            head = fh.read(4096)
    except OSError:
        return False
    if str(path).lower().endswith(".png"):
        return b"Software\x00" + _COMPARE_FIGURE["Software"].encode() in head
    first = head.split(b"\n", 1)[0].decode("utf-8", "replace").strip()
    return _COMPARE_COLUMNS <= set(first.split(","))


def check_compare_out(out) -> None:
    """``compare --out``, checked before any run is read, by the rule of report folders: a folder
    must be new, empty or an earlier compare folder holding nothing else; FILE.csv and the
    FILE.png beside it must each be new or an earlier output of evora compare."""
    out = Path(out)
    if out.suffix.lower() != ".csv":
        try:
            check_output_folder(out, COMPARE_KIND)
        except OutputError as exc:
            raise UserError(str(exc)) from None
        return
    for f in (out, out.with_suffix(".png")):
        if f.is_symlink() or (f.exists() and not (f.is_file() and _written_by_compare(f))):
            raise UserError(f"--out {out}: {f} exists and was not written by evora compare; nothing is "
                            "overwritten: choose another --out or delete it yourself")


@click.command(epilog=examples("evora compare runs/base runs/white6 --out compare/",
                              "evora compare runs/default runs/variant --out variant.csv",
                              "evora compare runs/base/p4 runs/white6/p4"))
@click.argument("run_a", metavar="RUN_A")
@click.argument("run_b", metavar="RUN_B")
@click.option("--out", default=None, metavar="PATH", callback=check_out_arg,
              help="Write the table and a before/after chart: FILE.csv (and FILE.png), or a folder "
                   "(compare.csv, compare.txt, compare.png).")
@click.option("--allow-partial", is_flag=True, help="Use only the finished chunks of an incomplete run.")
@min_effect_option
@scan_options
def compare(run_a, run_b, out, allow_partial, min_effect, backend, scheduler):
    """How each headline metric moved from RUN_A to RUN_B (B - A, 95% intervals; paired by
    seed when both runs hold the same seeded games; 'moved' is Holm-corrected over the
    metrics). RUN_A and RUN_B are run folders, or evora run output folders: their runs are
    paired by player count."""
    from . import analyse_work as work  # lazy: the statistics, 2.6 s (measured); --help does not need them

    check_backend(backend, scheduler)
    if out:
        check_compare_out(out)
    table, lines = work.compare_folders(run_a, run_b, allow_partial, min_effect, backend, scheduler)
    click.echo("\n".join(lines))
    if out:
        path = work.write_compare(out, table, lines, COMPARE_KIND, _COMPARE_FIGURE)
        click.echo(f"written: {path}")


# ---------------------------------------------------------------------------------------------
# evora compact
# ---------------------------------------------------------------------------------------------
@click.command(epilog=examples("evora compact runs/big/p4"))
@click.argument("run", metavar="RUN_DIR")
def compact(run):
    """Pack a run's finished chunks into fewer, larger files (parts of up to 1,000,000 games,
    row groups of about 100,000): atomic, recorded in the manifest with the files' checksums,
    and resume stays intact. Finished runs of 200,000 games or more are compacted when they
    end; this does it for any run, finished or not. A damaged chunk is left where it is (and
    named) for the run's command to replay."""
    from ..compact import compact as pack  # lazy: 0.6 s (measured, pyarrow); --help does not need it

    try:
        done = pack(run)
    except (RunError, OutputError) as exc:
        raise UserError(str(exc)) from None
    except OSError as exc:
        raise UserError(f"cannot compact {run}: {exc.strerror or exc}") from None
    click.echo(f"{run}: {done.chunks:,} chunks packed into {len(done.parts)} new part"
               f"{'' if len(done.parts) == 1 else 's'}; {done.files_before:,} -> {done.files_after:,} files per table")
    for k, why in sorted(done.skipped.items()):
        click.echo(f"chunk {k} left in its own files: {why}; run the run's command again to replay it", err=True)
