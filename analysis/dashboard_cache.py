"""The slices the dashboard has worked out, kept for the page's sessions.

Apart from the page (:mod:`analysis.dashboard_app`) because it imports no Panel: the command
starts working out the first slice with it while Panel and Bokeh are still being imported
(1.2 s of processor time, measured), so the games are read on the second core meanwhile.
"""
from __future__ import annotations

import threading
from collections import OrderedDict
from dataclasses import replace

from .dashboard_data import Slice, Source, build_cells, views
from .dashboard_page import views_html
from .seat_figure import FigureProcess

KEPT = 8                                   # slices kept computed


class Cache:
    """The views of the last few slices asked for (a slice and the views' options), each with its
    HTML: first without the seat figure (the numbers, at once), then with it (its figure drawn
    once, not for every page that shows it)."""

    def __init__(self, source: Source):
        self.source, self.kept = source, OrderedDict()
        self.lock = threading.Lock()          # the first slice is computed in a thread of its own
        self.building: set = set()            # groups whose Cells are being gathered
        self.figures = FigureProcess()        # the seat figures, drawn on the other core

    def build(self, label: str) -> None:
        """Gather a group's :class:`~analysis.dashboard_data.Cells` in a thread of its own, once:
        a filter on how games went then merges them instead of reading its games."""
        with self.lock:
            if label in self.building:
                return
            self.building.add(label)
        threading.Thread(target=build_cells, args=(self.source, label), daemon=True).start()

    def key(self, sl: Slice, *options) -> tuple:
        # the same slice however its variant was named (None: the first)
        return (replace(sl, variant=self.source.variant(sl.variant).label), *options)

    def get(self, sl: Slice, associations: bool, decomposition: bool = False, compare_with: str | None = None):
        """(Views, their HTML fragment without the figure)."""
        key = self.key(sl, associations, decomposition, compare_with)
        with self.lock:
            if key not in self.kept:
                v = views(self.source, key[0], associations, decomposition=decomposition, compare_with=compare_with)
                self.kept[key] = {"views": v, "fast": views_html(v, live=True, figure=False)}
                while len(self.kept) > KEPT:
                    self.kept.popitem(last=False)
            self.kept.move_to_end(key)
            got = self.kept[key]
        return got["views"], got["fast"]

    def full(self, sl: Slice, *options) -> str | None:
        """The HTML fragment of a slice :meth:`get` computed, with its figure (None if the slice
        is no longer kept). The figure is drawn in a process of its own, so a filter asked
        meanwhile is answered at once; the fragment is made when no slice is being worked out."""
        key = self.key(sl, *options)
        with self.lock:
            got = self.kept.get(key)
        if got is not None and "full" not in got:
            figure = self.figures.html(got["views"].adv)
            with self.source.turn(background=True):
                got["full"] = views_html(got["views"], live=True, figure_html=figure)
        return None if got is None else got["full"]
