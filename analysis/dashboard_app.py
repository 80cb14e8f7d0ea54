"""The live dashboard page (Panel): filters on the left, the slice's views on the right.

Every filter feeds one :class:`~analysis.dashboard_data.Slice`; a change recomputes the views
(:func:`analysis.dashboard_data.views`) and redraws the one HTML fragment
(:func:`analysis.dashboard_page.views_html`) that ``--export`` also writes, so the live page
and an exported page show the same numbers. Slices already computed are kept (a few), as
several browser tabs and a filter set back ask for the same slice again.
"""
from __future__ import annotations

import threading
from collections import OrderedDict
from dataclasses import replace

from .dashboard_data import RANGE_COLUMNS, Slice, Source, views
from .dashboard_page import DASH_CSS, page, views_html

ANY = "any"
KEPT = 8                                   # slices kept computed


class Cache:
    """The views of the last few slices asked for (a slice and the associations flag), each with
    its HTML (its figure drawn once, not for every page that shows it)."""

    def __init__(self, source: Source):
        self.source, self.kept = source, OrderedDict()
        self.lock = threading.Lock()          # the first slice is computed in a thread of its own

    def get(self, sl: Slice, associations: bool):
        """(Views, their HTML fragment)."""
        # the same slice however its variant was named (None: the first)
        key = (replace(sl, variant=self.source.variant(sl.variant).label), associations)
        with self.lock:
            if key not in self.kept:
                v = views(self.source, key[0], associations)
                self.kept[key] = (v, views_html(v))
                while len(self.kept) > KEPT:
                    self.kept.popitem(last=False)
            self.kept.move_to_end(key)
            return self.kept[key]


def _opt(value):
    return None if value in (ANY, None, "") else value


def app(cache: Cache, initial: Slice, title: str, initial_associations: bool = False):
    """A Panel layout for one browser session."""
    import panel as pn

    ch = cache.source.choices()

    def select(name, options, value, css):
        return pn.widgets.Select(name=name, options=[ANY, *map(str, options)], css_classes=[css],
                                 value=ANY if value is None else str(value), width=250)

    w = {
        "variant": pn.widgets.Select(name="Rules variant / sweep point", options=ch["variants"], width=250,
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

    def update(*_):
        from evora_sim.manifest import RunError

        try:
            v, fragment = cache.get(current(), bool(w["assoc"].value))
        except RunError as exc:
            import html

            out.object = f"<p class='notice' id='error'>{html.escape(str(exc))}</p>"
            return
        state["views"] = v
        out.object = fragment

    def export():
        import io

        return io.BytesIO(page(state["views"], title).encode("utf-8")) if "views" in state else io.BytesIO(b"")

    for widget in w.values():
        widget.param.watch(update, "value")
    out.object = "<p id='loading'>Reading the games ...</p>"
    pn.state.onload(update)                  # the page shows first, then its views
    download = pn.widgets.FileDownload(callback=export, filename="evora-dashboard.html", width=250,
                                       label="Export this view (HTML)", css_classes=["f-export"])
    side = pn.Column(pn.pane.Markdown(f"### {title}", width=250), *w.values(), download, width=280)
    return pn.Row(side, out, sizing_mode="stretch_width")
