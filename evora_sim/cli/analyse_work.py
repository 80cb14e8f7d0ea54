"""The report's and compare's work behind ``evora report``, ``compare``, ``run`` and ``skill``:
open the run folders (one-line errors), build the report, compare two runs.

It imports the statistics at its top (about 2.6 s, measured), so the command modules import it
inside the command that runs, never at their own top: their ``--help`` stays quick.
"""
from __future__ import annotations

import io
from pathlib import Path

import click
import pandas as pd

from analysis.cardvalue_stats import read_summary as read_card_value
from analysis.explain_stats import read_summary as read_explain
from analysis.page import ANSWER_FILE
from analysis.report import REPORT_KIND, build_report
from analysis.skill_stats import check_ladder, open_ladder
from analysis.tables import AnalysisError, open_runs, runs_by_count
from analysis.variants import compare as compare_runs
from analysis.variants import compare_lines, compare_plot, game_datas
from strategies.errors import StrategyError
from strategies.registry import from_resolved

from ..fsutil import OutputError, atomic_folder, check_out_path, check_output_folder, write_bytes_atomic
from ..manifest import MANIFEST, RunError
from ..sample_game import report_sample
from .group import UserError, check_backend


def announce(path) -> None:
    """What a command that wrote a report prints last, on stdout: the answer's headline per
    player count (the report's ``ANSWER_FILE``), then where the report is. The answer is what the
    designer ran the command for, so it is on the terminal when the run ends."""
    answer = Path(path) / ANSWER_FILE
    if answer.is_file():
        click.echo(answer.read_text(encoding="utf-8"), nl=False)
    click.echo(f"report: {Path(path) / 'report.html'}")


def check_report_dir(out, option="--out") -> None:
    """The report folder must be new, empty, or an earlier report holding nothing else: checked
    before any work, so a refused folder costs nothing and loses nothing."""
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
    check_report_dir(out, option)
    check_backend(backend, scheduler)
    experiment = _summary(read_card_value, "--card-value", card_value)
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


# ---------------------------------------------------------------------------------------------
# evora compare
# ---------------------------------------------------------------------------------------------
def runs_of(path, allow_partial=False) -> dict:
    """The runs of ``path`` by player count: a run folder, or a folder of runs such as an
    ``evora run`` output folder (p2, p3, p4), whose runs are paired by player count."""
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


def compare_folders(run_a, run_b, allow_partial, min_effect, backend, scheduler):
    """The compare table of every player count the two folders share, and its printed lines."""
    a, b = runs_of(run_a, allow_partial), runs_of(run_b, allow_partial)
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
    return pd.concat(tables, ignore_index=True), lines


def _figure_bytes(figure, metadata: dict) -> bytes:
    buf = io.BytesIO()
    figure.savefig(buf, format="png", dpi=110, bbox_inches="tight", metadata=metadata)
    return buf.getvalue()


def write_compare(out, df, lines, kind: str, metadata: dict, stem="compare"):
    """Write ``df`` as CSV (``out`` ending in .csv; its chart beside it as FILE.png) or into the
    folder ``out`` (STEM.csv, STEM.txt with the printed lines, STEM.png), each file whole or not
    at all; ``out`` was checked by ``analyse.check_compare_out``. The chart is tagged with
    ``metadata``, so a later compare knows it again."""
    out = Path(out)
    table = df.to_csv(index=False).encode("utf-8")
    figure = compare_plot(df)
    try:
        if out.suffix.lower() == ".csv":
            out.parent.mkdir(parents=True, exist_ok=True)
            write_bytes_atomic(out, table)
            write_bytes_atomic(out.with_suffix(".png"), _figure_bytes(figure, metadata))
            return out
        with atomic_folder(out, kind) as tmp:
            (tmp / f"{stem}.csv").write_bytes(table)
            (tmp / f"{stem}.txt").write_text("\n".join(lines) + "\n", encoding="utf-8")
            (tmp / f"{stem}.png").write_bytes(_figure_bytes(figure, metadata))
        return out / f"{stem}.csv"
    except OutputError as exc:
        raise UserError(str(exc)) from None
    except OSError as exc:
        raise UserError(f"cannot write {out}: {exc.strerror or exc}") from None
