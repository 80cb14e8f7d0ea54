"""Commands that read run folders: report, compare and compact."""
from __future__ import annotations

import click

from .group import UserError, check_out_arg, examples, min_effect_option


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


def check_backend(backend, scheduler) -> None:
    if backend == "dask" and not scheduler:
        raise UserError("--backend dask needs --scheduler ADDRESS (for example tcp://HOST:8786)")


def check_report_dir(out, option="--out") -> None:
    """The report folder must be new, empty, or an earlier report holding nothing else: checked
    before any work, so a refused folder costs nothing and loses nothing."""
    from analysis.report import REPORT_KIND

    from ..fsutil import OutputError, check_out_path, check_output_folder

    try:
        check_out_path(out, option)
        check_output_folder(out, REPORT_KIND, option)
    except OutputError as exc:
        raise UserError(str(exc)) from None


def write_report(run_dirs, out, allow_partial=False, players=None, option="--out", min_effect=1.0,
                 backend="local", scheduler=None, ladder_dir=None, card_value=None, explain=None, expert_dirs=()):
    """Open the run folders (one-line errors for a folder that is not a run, an incomplete run
    without ``allow_partial``, runs of different rules, an empty selection) and the card-value
    and explain folders if given, then build the report into ``out`` (with the Skill section of
    the ladder in ``ladder_dir``, if given; the answer quotes the seat figures of ``expert_dirs``,
    runs with one strategy in every seat, one per player count)."""
    from analysis.cardvalue import read_summary
    from analysis.explain import read_summary as read_explain
    from analysis.skill import open_ladder
    from analysis.tables import open_runs

    from ..runner import RunError

    check_report_dir(out, option)
    check_backend(backend, scheduler)
    experiment = _summary(read_summary, "--card-value", card_value)
    explained = _summary(read_explain, "--explain", explain)
    try:
        runs = open_runs(run_dirs, allow_partial=allow_partial, players=players)
        ladder = open_ladder(ladder_dir) if ladder_dir is not None else None
        experts = _expert_runs(expert_dirs, runs, allow_partial)
    except RunError as exc:
        raise UserError(str(exc)) from None
    return _build(runs, out, min_effect, backend, scheduler, ladder=ladder, card_value=experiment,
                  explained=explained, expert_runs=experts)


def _expert_runs(dirs, runs, allow_partial):
    """The strong-play runs quoted in the answer: each one strategy in every seat, one per player
    count, a count the report holds, the report's rules."""
    from analysis.tables import open_runs
    from strategies.registry import StrategyError, from_resolved

    from ..runner import RunError

    out, seen = [], set()
    counts = {int(r.manifest["config"]["players"]) for r in runs}
    for d in dirs or ():
        r = open_runs([d], allow_partial=allow_partial)[0]
        cfg = r.manifest["config"]
        n = int(cfg["players"])
        if len(set(cfg["strategies"])) != 1:
            raise RunError(f"--expert-run {d}: its seats hold {', '.join(cfg['strategies'])}; a strong-play run "
                           "has one strategy in every seat (e.g. evora simulate --strategies expert)")
        if n in seen or n not in counts:
            raise RunError(f"--expert-run {d}: {n} players " + ("twice" if n in seen else
                           f"(the report's runs are of {', '.join(map(str, sorted(counts)))} players)"))
        if cfg["rules_hash"] != runs[0].manifest["config"]["rules_hash"]:
            raise RunError(f"--expert-run {d}: played under other rules than the report's runs")
        name = cfg["strategies"][0]
        try:
            from_resolved(name, (cfg.get("resolved_strategies") or {}).get(name), run_code=False)
        except StrategyError as exc:
            raise RunError(f"--expert-run {d}: its recorded player cannot be read back ({exc})") from None
        seen.add(n)
        out.append(r)
    return out


def _summary(read, option: str, folder):
    """An experiment folder's summary read by ``read`` (None without one); one line if it has none."""
    if folder is None:
        return None
    try:
        return read(folder)
    except (ValueError, OSError) as exc:
        raise UserError(f"{option} {folder}: {exc}") from None


def _build(runs, out, min_effect, backend, scheduler, **parts):
    """Build the report of opened runs into ``out``; a run that cannot be read or an output that
    cannot be written becomes the one-line user error."""
    from analysis.report import build_report

    from ..fsutil import OutputError
    from ..runner import RunError
    from ..sample_game import report_sample

    try:
        return build_report(runs, out, min_effect=min_effect / 100, backend=backend, scheduler=scheduler,
                            sample=report_sample(runs), **parts)
    except (RunError, OutputError) as exc:
        raise UserError(str(exc)) from None
    except OSError as exc:
        raise UserError(f"cannot write the report to {out}: {exc.strerror or exc}") from None


def write_ladder_report(source, out, option="--out", min_effect=1.0, backend="local", scheduler=None):
    """The report of a skill ladder: ``source`` is the folder ``evora skill`` played (rungs and
    duels), or a list of run folders named as rungs, weakest first (no duels, so no ratings).
    The sections after Skill describe the top rung."""
    from analysis.skill import check_ladder, open_ladder
    from analysis.tables import open_runs

    from ..runner import RunError

    check_report_dir(out, option)
    check_backend(backend, scheduler)
    try:
        if isinstance(source, (list, tuple)):
            ladder = check_ladder(open_runs(list(source)))
            if len(ladder.runs) < len(source):
                raise RunError("a run folder is named twice as a rung; name each rung once")
        else:
            ladder = open_ladder(source)
    except RunError as exc:
        raise UserError(str(exc)) from None
    # the sections after Skill describe the top rung: its fixes too, when the ladder explained it
    top = ladder.explained[-1] if ladder.explained else None
    return _build([ladder.runs[-1]], out, min_effect, backend, scheduler, ladder=ladder, explained=top)


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
    from pathlib import Path

    from ..ladderplan import PLAN_FILE

    if as_ladder or (len(runs) == 1 and (Path(runs[0]) / PLAN_FILE).is_file()):
        if allow_partial or players or card_value or explain or expert_dirs:
            raise UserError("a skill ladder is reported whole: --allow-partial, --players, --card-value, --explain "
                            "and --expert-run do not apply to it")
        source = list(runs) if as_ladder else runs[0]
        if as_ladder and len(runs) < 2:
            raise UserError(f"--ladder needs at least two run folders (rungs, weakest first), got {len(runs)}")
        path = write_ladder_report(source, out, min_effect=min_effect, backend=backend, scheduler=scheduler)
        click.echo(f"report: {path / 'report.html'}")
        return
    path = write_report(runs, out, allow_partial, players, min_effect=min_effect, backend=backend,
                        scheduler=scheduler, card_value=card_value, explain=explain, expert_dirs=expert_dirs)
    click.echo(f"report: {path / 'report.html'}")


# ---------------------------------------------------------------------------------------------
# evora compare
# ---------------------------------------------------------------------------------------------
def _open_runs(path, allow_partial=False) -> dict:
    """The runs of ``path`` by player count: a run folder, or a folder of runs such as an
    ``evora run`` output folder (p2, p3, p4), whose runs are paired by player count."""
    from pathlib import Path

    from analysis.tables import AnalysisError, open_runs, runs_by_count

    from ..manifest import MANIFEST
    from ..runner import RunError

    folder = Path(path)
    subs = sorted(p for p in folder.iterdir() if (p / MANIFEST).is_file()) if folder.is_dir() else []
    paths = [folder] if (folder / MANIFEST).is_file() or not subs else subs
    try:
        runs = [open_runs([p], allow_partial=allow_partial)[0] for p in paths]
    except RunError as exc:
        raise UserError(str(exc)) from None
    try:
        return runs_by_count(runs, str(path))
    except AnalysisError as exc:
        raise UserError(str(exc)) from None


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
    from pathlib import Path

    from ..fsutil import OutputError, check_output_folder

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


def _figure_bytes(figure) -> bytes:
    import io

    buf = io.BytesIO()
    figure.savefig(buf, format="png", dpi=110, bbox_inches="tight", metadata=_COMPARE_FIGURE)
    return buf.getvalue()


def _write_table(out, df, lines, stem, figure=None):
    """Write ``df`` as CSV (``out`` ending in .csv; the chart beside it as FILE.png) or into the
    folder ``out`` (STEM.csv, STEM.txt with the printed lines, STEM.png), each file whole or not
    at all; ``out`` was checked by :func:`check_compare_out`."""
    from pathlib import Path

    from ..fsutil import OutputError, atomic_folder, write_bytes_atomic

    out = Path(out)
    table = df.to_csv(index=False).encode("utf-8")
    try:
        if out.suffix.lower() == ".csv":
            out.parent.mkdir(parents=True, exist_ok=True)
            write_bytes_atomic(out, table)
            if figure is not None:
                write_bytes_atomic(out.with_suffix(".png"), _figure_bytes(figure))
            return out
        with atomic_folder(out, COMPARE_KIND) as tmp:
            (tmp / f"{stem}.csv").write_bytes(table)
            (tmp / f"{stem}.txt").write_text("\n".join(lines) + "\n", encoding="utf-8")
            if figure is not None:
                (tmp / f"{stem}.png").write_bytes(_figure_bytes(figure))
        return out / f"{stem}.csv"
    except OutputError as exc:
        raise UserError(str(exc)) from None
    except OSError as exc:
        raise UserError(f"cannot write {out}: {exc.strerror or exc}") from None


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
    import pandas as pd

    from analysis.variants import compare as compare_runs
    from analysis.variants import compare_lines, compare_plot, game_datas

    from ..runner import RunError

    check_backend(backend, scheduler)
    if out:
        check_compare_out(out)
    a, b = _open_runs(run_a, allow_partial), _open_runs(run_b, allow_partial)
    counts = sorted(set(a) & set(b))
    if not counts:
        raise UserError(f"{run_a} and {run_b} have no player count in common (runs of "
                        f"{', '.join(map(str, sorted(a)))} and {', '.join(map(str, sorted(b)))} players); "
                        "compare runs of the same player counts")
    tables, lines = [], []
    try:                                     # every run read in one pass
        datas = game_datas([r for n in counts for r in (a[n], b[n])], backend, scheduler)
    except RunError as exc:                  # AnalysisError, or a chunk that cannot be read
        raise UserError(str(exc)) from None
    for i, n in enumerate(counts):
        try:
            table, info = compare_runs(datas[2 * i], datas[2 * i + 1], min_effect=min_effect / 100)
        except RunError as exc:
            raise UserError(str(exc)) from None
        if len(counts) > 1:
            lines += ([""] if lines else []) + [f"== {n} players =="]
        lines += compare_lines(table, info, str(a[n].out), str(b[n].out))
        tables.append(table.assign(n_players=n, paired=info["paired"], run_a=str(a[n].out),
                                   run_b=str(b[n].out)))
    click.echo("\n".join(lines))
    if out:
        table = pd.concat(tables, ignore_index=True)
        path = _write_table(out, table, lines, "compare", compare_plot(table))
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
    from ..compact import compact as pack
    from ..fsutil import OutputError
    from ..runner import RunError

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
