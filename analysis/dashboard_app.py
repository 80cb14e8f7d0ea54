"""The live dashboard page (Panel): filters on the left, the slice's views on the right.

Every filter feeds one :class:`~analysis.dashboard_data.Slice`; a change recomputes the views
(:func:`analysis.dashboard_data.views`) and redraws the one HTML fragment
(:func:`analysis.dashboard_page.views_html`) that ``--export`` also writes, so the live page
and an exported page show the same numbers. Slices already computed are kept (a few), as
several browser tabs and a filter set back ask for the same slice again.
"""
from __future__ import annotations

import html
import io
import threading

import panel as pn
from tornado.ioloop import IOLoop
from tornado.web import RequestHandler

from evora_sim.manifest import RunError

from .dashboard_cache import Cache
from .dashboard_data import RANGE_COLUMNS, Slice, Source, replay_text
from .scan import AnalysisError
from .dashboard_page import DASH_CSS, REPLAY_PATH, page

ANY = "any"


def _opt(value):
    return None if value in (ANY, None, "") else value


def app(cache: Cache, initial: Slice, title: str, initial_associations: bool = False,
        initial_decomposition: bool = False, initial_compare: str | None = None):
    """A Panel layout for one browser session."""
    ch = cache.source.choices()

    def select(name, options, value, css):
        return pn.widgets.Select(name=name, options=[ANY, *map(str, options)], css_classes=[css],
                                 value=ANY if value is None else str(value), width=250)

    w = {
        "variant": pn.widgets.Select(name="Group: run, rung, sweep point, arm", options=ch["variants"], width=250,
                                     value=initial.variant or ch["variants"][0], css_classes=["f-variant"]),
        "players": select("Players", ch["players"], initial.players, "f-players"),
        "strategy": select("A strategy at the table", ch["strategies"], initial.strategy, "f-strategy"),
        "seat": select("... in seat", range(ch["seats"]), initial.seat, "f-seat"),
        "winner": select("Won by", ch["strategies"], initial.winner, "f-winner"),
        "decided_by": select("Decided by", ch["decided_by"], initial.decided_by, "f-decided"),
        "last_round": select("Decided in the final round", ["yes", "no"],
                             None if initial.last_round is None else ("yes" if initial.last_round else "no"),
                             "f-last"),
        "end_trigger": select("End condition", ch["end_trigger"], initial.end_trigger, "f-end"),
    }
    first = initial.ranges[0] if initial.ranges else None
    w["range"] = pn.widgets.Select(name="Numeric column in a range", options=["none", *RANGE_COLUMNS], width=250,
                                   value=first[0] if first else "none", css_classes=["f-range"])
    w["lo"] = pn.widgets.IntInput(name="from", value=int(first[1]) if first else 0, width=120, css_classes=["f-lo"])
    w["hi"] = pn.widgets.IntInput(name="to", value=int(first[2]) if first else 999, width=120, css_classes=["f-hi"])
    w["assoc"] = pn.widgets.Checkbox(name="card and space associations (slower)", value=initial_associations,
                                     css_classes=["f-assoc"])
    w["decomposition"] = pn.widgets.Checkbox(name="where the seats' wins were decided", css_classes=["f-why"],
                                             value=initial_decomposition)
    w["compare"] = pn.widgets.Select(name="Compare the group with (paired by seed)", options=["none", *ch["variants"]],
                                     value=initial_compare or "none", width=250, css_classes=["f-compare"])
    out = pn.pane.HTML("", sizing_mode="stretch_width", stylesheets=[DASH_CSS], css_classes=["views"])
    state = {}

    def current() -> Slice:
        players = _opt(w["players"].value)
        seat = _opt(w["seat"].value)
        last = _opt(w["last_round"].value)
        ranges = ((w["range"].value, w["lo"].value, w["hi"].value),) if w["range"].value != "none" else ()
        return Slice(players=None if players is None else int(players), variant=w["variant"].value,
                     strategy=_opt(w["strategy"].value), seat=None if seat is None else int(seat),
                     winner=_opt(w["winner"].value), decided_by=_opt(w["decided_by"].value),
                     last_round=None if last is None else last == "yes", end_trigger=_opt(w["end_trigger"].value),
                     ranges=ranges)

    def options():
        return (bool(w["assoc"].value), bool(w["decomposition"].value),
                w["compare"].value if w["compare"].value != "none" else None)

    def update(*_):
        sl, opts = current(), options()
        try:
            v, fragment = cache.get(sl, *opts)
        except RunError as exc:
            out.object = f"<p class='notice' id='error'>{html.escape(str(exc))}</p>"
            return
        state["views"], state["asked"] = v, (sl, opts)
        out.object = fragment
        # the numbers are shown; the figure is drawn in a thread (the page answers meanwhile) and follows
        doc = pn.state.curdoc
        threading.Thread(target=lambda: figure(doc, sl, opts), daemon=True).start()
        cache.build(v.slice.variant)             # once the page shows its first numbers, not before

    def figure(doc, sl, opts):
        markup = cache.full(sl, *opts)
        if markup is not None:
            doc.add_next_tick_callback(lambda: show(sl, opts, markup))

    def show(sl, opts, markup):
        if state.get("asked") == (sl, opts):      # not a slice left behind since
            out.object = markup

    def export():
        return io.BytesIO(page(state["views"], title).encode("utf-8")) if "views" in state else io.BytesIO(b"")

    for widget in w.values():
        widget.param.watch(update, "value")
    out.object = "<p id='loading'>Reading the games ...</p>"
    pn.state.onload(update)                  # the page shows first, then its views
    download = pn.widgets.FileDownload(callback=export, filename="evora-dashboard.html", width=250,
                                       label="Export this view (HTML)", css_classes=["f-export"])
    side = pn.Column(pn.pane.Markdown(f"### {title}", width=250), *w.values(), download, width=280)
    return pn.Row(side, out, sizing_mode="stretch_width")


def replay_handler(source: Source, game_log):
    """The live server's replay page (:data:`analysis.dashboard_page.REPLAY_PATH`): a game's log
    as plain text (``?run=N&game=G``, numbers only; the log is text, never HTML, so no name from a
    folder can become markup), played again from its seed with the players the run recorded
    (:func:`analysis.dashboard_data.replay_text`: no code from the folder is run); ``game_log``
    plays it (passed in by the command, see there)."""
    class Replay(RequestHandler):
        async def get(self):
            self.set_header("Content-Type", "text/plain; charset=utf-8")
            self.set_header("X-Content-Type-Options", "nosniff")
            try:
                run, game = int(self.get_argument("run")), int(self.get_argument("game"))
            except ValueError:
                self.set_status(400)
                self.finish("evora: error: the address names a game by two numbers: ?run=N&game=G\n")
                return
            try:
                # played in a thread: the page's filters are answered meanwhile
                text = await IOLoop.current().run_in_executor(None, replay_text, source, run, game, game_log)
            except AnalysisError as exc:
                self.set_status(404)
                self.finish(f"evora: error: {exc}\n")
                return
            self.finish(text)

    return Replay


def server(cache: Cache, initial: Slice, title: str, options: dict, host: str, port: int, show: bool,
           origins: list[str], replay):
    """The page's server, not yet started (``replay``: the handler of :func:`replay_handler`)."""
    return pn.serve({"/": lambda: app(cache, initial, title, **options)}, port=port, address=host, show=show,
                    websocket_origin=origins, title=title, print=False, start=False,
                    extra_patterns=[(REPLAY_PATH, replay)])
