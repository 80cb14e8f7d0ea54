"""The work behind ``evora dashboard``: every argument checked, the run folders opened, then one
page exported or the live page served. Imported when the command runs: the dashboard's
statistics take about 2 s to import, Panel about 1 s more (measured), which ``--help`` does
not need; Panel is imported only to serve, once the first slice's games are being read."""
from __future__ import annotations

import socket
import threading
from dataclasses import replace
from pathlib import Path

import click

from analysis.dashboard_cache import Cache
from analysis.dashboard_data import RANGE_COLUMNS, Slice, kept_cells, open_source, run_folders, views, warm
from analysis.dashboard_page import page, written_by_dashboard

from ..fsutil import write_bytes_atomic
from ..manifest import RunError
from ..sample_game import game_log
from .group import UserError

LOCAL_HOSTS = ("127.0.0.1", "localhost", "::1")


def _check_export(path) -> None:
    """``--export FILE.html``: new, or a page an earlier export wrote (nothing else is replaced)."""
    f = Path(path)
    if f.suffix.lower() not in (".html", ".htm"):
        raise UserError(f"--export {path}: the page is written as FILE.html; give a name ending in .html")
    if f.is_symlink() or (f.exists() and not (f.is_file() and written_by_dashboard(f))):
        raise UserError(f"--export {path} exists and was not written by evora dashboard; nothing is overwritten: "
                        "choose another name or delete it yourself")
    if not f.parent.is_dir():
        raise UserError(f"--export {path}: the folder {f.parent} does not exist")


def _check_port(host: str, port: int) -> None:
    """Refuse a port another program holds before the runs are read (one line, not a traceback)."""
    try:
        infos = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)
    except OSError as exc:
        raise UserError(f"--host {host}: not an address of this machine ({exc.strerror or exc})") from None
    family, kind, proto, _, address = infos[0]
    with socket.socket(family, kind, proto) as s:
        s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)     # as the server itself binds
        try:
            s.bind(address)
        except OSError as exc:
            raise UserError(f"--port {port}: cannot listen on {host}:{port} ({exc.strerror or exc}); another "
                            "program holds it: choose another --port") from None


def _range(value: str):

    col, sep, bounds = value.partition("=")
    lo, sep2, hi = bounds.partition(":")
    try:
        if not (sep and sep2) or col not in RANGE_COLUMNS:
            raise ValueError
        return col, float(lo), float(hi)
    except ValueError:
        raise UserError(f"--range {value}: expected COLUMN=LO:HI with COLUMN one of {', '.join(RANGE_COLUMNS)} "
                        "(e.g. --range rounds=10:12)") from None


def _check_choice(option: str, value, allowed) -> None:
    if value is not None and value not in allowed:
        raise UserError(f"{option} {value}: the runs hold {', '.join(map(str, allowed)) or 'none'}")


def dashboard(runs, filters: dict, port, host, export, no_browser, allow_partial, associations, decomposition,
              compare):
    """The command ``evora dashboard``, every argument checked before a page is made. ``filters``:
    the first slice's options, by the names of :class:`Slice`'s fields (``ranges`` as typed)."""
    if export:
        _check_export(export)
    else:
        _check_port(host, port)
    sl = Slice(**{**filters, "ranges": tuple(_range(r) for r in filters["ranges"])})
    players, variant, strategy, seat = sl.players, sl.variant, sl.strategy, sl.seat
    winner, decided_by, end_trigger = sl.winner, sl.decided_by, sl.end_trigger
    if seat is not None and strategy is None:
        raise UserError("--seat narrows --strategy (the seat it sits in); give --strategy too")
    if compare and len(runs) != 2:
        raise UserError(f"--compare compares two run folders, RUN_A RUN_B; {len(runs)} given")
    try:
        source = open_source(runs, allow_partial=allow_partial)
    except RunError as exc:
        raise UserError(str(exc)) from None
    ch = source.choices()
    compare_with = None
    if compare:
        variant, compare_with = _sides(source, runs)
        sl = replace(sl, variant=variant)
    _check_choice("--players", players, ch["players"])
    _check_choice("--variant", variant, ch["variants"])
    _check_choice("--strategy", strategy, ch["strategies"])
    _check_choice("--winner", winner, ch["strategies"])
    _check_choice("--decided-by", decided_by, ch["decided_by"])
    _check_choice("--end", end_trigger, ch["end_trigger"])
    if seat is not None and not 0 <= seat < ch["seats"]:
        raise UserError(f"--seat {seat}: the seats are 0 to {ch['seats'] - 1}")
    title = "evora dashboard: " + ", ".join(str(r) for r in runs)
    if export:
        try:
            v = views(source, sl, associations, decomposition=decomposition, compare_with=compare_with)
            write_bytes_atomic(Path(export), page(v, title).encode("utf-8"))
        except RunError as exc:
            raise UserError(str(exc)) from None
        except OSError as exc:
            raise UserError(f"cannot write {export}: {exc.strerror or exc}") from None
        click.echo(f"exported: {export} ({v.games:,} games)")
        return
    if host not in LOCAL_HOSTS:
        click.echo(f"evora: warning: --host {host}: the dashboard can be read by any machine that reaches this "
                   "address, with no login; use it on a network you trust", err=True)
    serve_dashboard(source, sl, title, host, port, not no_browser,
                    dict(initial_associations=associations, initial_decomposition=decomposition,
                         initial_compare=compare_with))


def _sides(source, runs) -> tuple[str, str]:
    """--compare: the groups of RUN_A and of RUN_B (one each)."""
    sides = []
    for arg in runs:
        labels = sorted({label for _, label in run_folders([arg])} & set(source.choices()["variants"]))
        if len(labels) != 1:
            raise UserError(f"--compare {arg}: it holds {len(labels)} groups of runs ({', '.join(labels)}); "
                            "give one run folder, or one folder of runs of one rules, for each side")
        sides.append(labels[0])
    if sides[0] == sides[1]:
        raise UserError(f"--compare: {runs[0]} and {runs[1]} are the same runs")
    return sides[0], sides[1]


def serve_dashboard(source, sl, title, host, port, show, options):
    """The first slice is worked out in a thread while the browser loads the page, which then
    fills in. If an earlier start kept the group's statistics per kind of game
    (:class:`analysis.dashboard_data.Cells`, in the tool's cache folder) no game is read: the
    first slice and every filter on how games went merge them. Otherwise the group's games are
    read (a filter then finds them in memory) and the statistics per kind of game are gathered in
    the background, giving way to any filter asked, and kept for the next start. Public: the
    seam where tests of the command stop before a server listens."""
    cache = Cache(source)

    def first():
        # the seat unfairness's band (a second of arithmetic) while the first group's games are read;
        # the first slice needs it, so it waits for it rather than working it out a second time
        band = threading.Thread(target=warm, args=(source,), daemon=True)
        band.start()
        if not kept_cells(source, sl.variant):     # gathered by an earlier start: no game read
            source.store.prefetch(source.variant(sl.variant).tasks)
        band.join()
        try:
            cache.get(sl, options["initial_associations"], options["initial_decomposition"],
                      options["initial_compare"])
        except RunError:                      # shown in the page when it asks
            pass

    threading.Thread(target=first, daemon=True).start()
    # lazy: Panel and Bokeh, 1.2 s of processor time to import (measured), imported while the
    # first slice's games are read on the other core (Parquet reads release the interpreter)
    from analysis.dashboard_app import replay_handler, server

    where = f"[{host}]" if ":" in host else host
    origins = [f"{where}:{port}"] + ([f"localhost:{port}", f"127.0.0.1:{port}"] if host in LOCAL_HOSTS else [])
    try:
        listening = server(cache, sl, title, options, host, port, show, origins, replay_handler(source, game_log))
    except OSError as exc:
        raise UserError(f"--port {port}: cannot listen on {host}:{port} ({exc.strerror or exc})") from None
    # said once the port is listening: the address answers as soon as it is printed
    click.echo(f"dashboard: http://{where}:{port}/  (Ctrl-C stops it)")
    listening.start()
    listening.io_loop.start()
