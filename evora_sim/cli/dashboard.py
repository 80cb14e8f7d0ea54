"""evora dashboard: explore run folders in the browser, sliced, with the report's figures."""
from __future__ import annotations

import threading
from dataclasses import replace

import click

from .group import UserError, check_out_arg, examples

LOCAL_HOSTS = ("127.0.0.1", "localhost", "::1")


def _check_export(path) -> None:
    """``--export FILE.html``: new, or a page an earlier export wrote (nothing else is replaced)."""
    from pathlib import Path

    from analysis.dashboard_page import written_by_dashboard

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
    import socket

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
    from analysis.dashboard_data import RANGE_COLUMNS

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


@click.command(epilog=examples("evora dashboard runs/default",
                              "evora dashboard runs/default/p4 --end temple_full --export temple.html",
                              "evora dashboard runs/sweep --port 5010 --no-browser"))
@click.argument("runs", nargs=-1, required=True, metavar="RUN_DIR...")
@click.option("--port", type=click.IntRange(1, 65535), default=5006, show_default=True,
              help="The port the page is served on.")
@click.option("--host", default="127.0.0.1", show_default=True,
              help="The address to listen on. Anything but this machine (127.0.0.1, localhost, ::1) lets other "
                   "machines read the runs: a warning says so.")
@click.option("--export", "export", metavar="FILE.html", callback=check_out_arg,
              help="Write a static, self-contained page of the views of the slice given by the options, and "
                   "stop (no server).")
@click.option("--no-browser", is_flag=True, help="Do not open a browser tab (print the address only).")
@click.option("--allow-partial", is_flag=True, help="Use only the finished chunks of an incomplete run.")
@click.option("--players", "-n", type=int, help="Start with the games of this player count.")
@click.option("--variant", help="Start with this group: a run, rung, sweep point or arm, as the page lists it.")
@click.option("--strategy", help="Start with the games that have this strategy at the table.")
@click.option("--seat", type=int, help="With --strategy: in this seat (0 plays first).")
@click.option("--winner", help="Start with the games this strategy won.")
@click.option("--decided-by", help="Start with the games decided by this step: vp, half_point, parts_left, "
                                   "seat_order, lot.")
@click.option("--final-round/--not-final-round", "last_round", default=None,
              help="Start with the games decided in the final round (or not).")
@click.option("--end", "end_trigger", help="Start with the games ended this way: temple_full, out_of_stones, "
                                            "round_limit.")
@click.option("--range", "ranges", multiple=True, metavar="COLUMN=LO:HI",
              help="Start with the games whose column lies in LO..HI (repeatable): rounds, turns, trigger_round, "
                   "lead_changes, comeback.")
@click.option("--associations", is_flag=True, help="Also the card and space associations (the slowest view).")
@click.option("--decomposition", is_flag=True,
              help="Also each seat's deviation split by where its games were decided (the report's Why table), "
                   "and the fixes of the evora explain folders given.")
@click.option("--compare", "compare", is_flag=True,
              help="RUN_A RUN_B: compare them as evora compare does (paired by seed when they hold the same "
                   "seeded games); the page opens on RUN_A.")
def dashboard(runs, port, host, export, no_browser, allow_partial, players, variant, strategy, seat, winner,
              decided_by, last_round, end_trigger, ranges, associations, decomposition, compare):
    """Explore run folders in the browser: every view of the report (seats and the seat unfairness,
    strategies, card and space associations, game length, margins, lead changes, majorities, where
    the seats' wins were decided, the matching games with their replay logs) for the games a set
    of filters keeps, and two groups compared as evora compare does. RUN_DIR: run folders, or
    folders of runs (evora run's output, a sweep, a skill ladder, an explain folder: each run,
    rung, sweep point or arm a group). Served on this machine only unless --host says otherwise;
    --export writes one page and needs no server."""
    from analysis.dashboard_data import Slice, open_source, views
    from analysis.dashboard_page import page

    from ..fsutil import write_bytes_atomic
    from ..runner import RunError

    if export:
        _check_export(export)
    else:
        _check_port(host, port)
    sl = Slice(players=players, variant=variant, strategy=strategy, seat=seat, winner=winner, decided_by=decided_by,
               last_round=last_round, end_trigger=end_trigger, ranges=tuple(_range(r) for r in ranges))
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
            write_bytes_atomic(__import__("pathlib").Path(export), page(v, title).encode("utf-8"))
        except RunError as exc:
            raise UserError(str(exc)) from None
        except OSError as exc:
            raise UserError(f"cannot write {export}: {exc.strerror or exc}") from None
        click.echo(f"exported: {export} ({v.games:,} games)")
        return
    if host not in LOCAL_HOSTS:
        click.echo(f"evora: warning: --host {host}: the dashboard can be read by any machine that reaches this "
                   "address, with no login; use it on a network you trust", err=True)
    _serve(source, sl, title, host, port, not no_browser,
           dict(initial_associations=associations, initial_decomposition=decomposition, initial_compare=compare_with))


def _sides(source, runs) -> tuple[str, str]:
    """--compare: the groups of RUN_A and of RUN_B (one each)."""
    from analysis.dashboard_data import run_folders

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


def _serve(source, sl, title, host, port, show, options):
    """The first slice is read in a thread while the server's modules load (Panel, Bokeh:
    seconds) and the browser loads the page, which then fills in (a filter then finds the
    games in memory); then the group's statistics per kind of game are gathered in the
    background (:class:`analysis.dashboard_data.Cells`), giving way to any filter asked."""
    from analysis.dashboard_app import Cache, app, replay_handler
    from analysis.dashboard_data import warm
    from analysis.dashboard_page import REPLAY_PATH

    from ..manifest import RunError
    from ..sample_game import game_log

    cache = Cache(source)

    def first():
        # the seat unfairness's band (a second of arithmetic) while the first group's games are read;
        # the first slice needs it, so it waits for it rather than working it out a second time
        band = threading.Thread(target=warm, args=(source,), daemon=True)
        band.start()
        source.store.prefetch(source.variant(sl.variant).tasks)
        band.join()
        try:
            cache.get(sl, options["initial_associations"], options["initial_decomposition"],
                      options["initial_compare"])
        except RunError:                      # shown in the page when it asks
            pass

    threading.Thread(target=first, daemon=True).start()
    import panel as pn
    where = f"[{host}]" if ":" in host else host
    origins = [f"{where}:{port}"] + ([f"localhost:{port}", f"127.0.0.1:{port}"] if host in LOCAL_HOSTS else [])
    try:
        server = pn.serve({"/": lambda: app(cache, sl, title, **options)}, port=port, address=host, show=show,
                          websocket_origin=origins, title=title, print=False, start=False,
                          extra_patterns=[(REPLAY_PATH, replay_handler(source, game_log))])
    except OSError as exc:
        raise UserError(f"--port {port}: cannot listen on {host}:{port} ({exc.strerror or exc})") from None
    # said once the port is listening: the address answers as soon as it is printed
    click.echo(f"dashboard: http://{where}:{port}/  (Ctrl-C stops it)")
    server.start()
    server.io_loop.start()
