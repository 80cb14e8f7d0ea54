"""evora dashboard: explore run folders in the browser, sliced, with the report's figures. The
work is :mod:`evora_sim.cli.dashboard_work`, imported when the command runs."""
from __future__ import annotations

import click

from .group import check_out_arg, examples



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
def dashboard(runs, port, host, export, no_browser, allow_partial, associations, decomposition, compare, **filters):
    """Explore run folders in the browser: every view of the report (seats and the seat unfairness,
    strategies, card and space associations, game length, margins, lead changes, majorities, where
    the seats' wins were decided, the matching games with their replay logs) for the games a set
    of filters keeps, and two groups compared as evora compare does. RUN_DIR: run folders, or
    folders of runs (evora run's output, a sweep, a skill ladder, an explain folder: each run,
    rung, sweep point or arm a group). Served on this machine only unless --host says otherwise;
    --export writes one page and needs no server."""
    # ``filters``: the "Start with ..." options (--players to --range), the first slice of games
    from . import dashboard_work  # lazy: the dashboard's statistics and panel, 3 s (measured); not for --help

    dashboard_work.dashboard(runs, filters, port, host, export, no_browser, allow_partial, associations, decomposition,
                             compare)
