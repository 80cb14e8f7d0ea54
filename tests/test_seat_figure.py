"""The dashboard's seat figure drawn in a process of its own is the figure the server would draw:
the same bytes, and the server draws it itself when the process stops or cannot draw it."""
import pandas as pd
import pytest

from analysis.seat_figure import FigureProcess, figure_html


def _seats(rate0: float = 0.55) -> pd.DataFrame:
    return pd.DataFrame({"n_players": [2, 2], "seat": [0, 1], "win_rate": [rate0, 1 - rate0],
                         "ci_lo": [rate0 - 0.05, 0.40], "ci_hi": [rate0 + 0.05, 0.50], "games": [1000, 1000]})


def test_the_figure_process_draws_the_same_bytes_and_the_server_takes_over_when_it_stops():
    figures = FigureProcess()
    try:
        for rate in (0.55, 0.60):
            assert figures.html(_seats(rate)) == figure_html(_seats(rate))
        assert figures.html(_seats(0.55)) != figures.html(_seats(0.60))
        first = figures._proc
        first.kill()
        first.wait()
        assert figures.html(_seats(0.60)) == figure_html(_seats(0.60))     # drawn by the server
        assert figures.html(_seats(0.55)) == figure_html(_seats(0.55))     # a new process
        assert figures._proc is not None and figures._proc is not first
        assert figures.html(None) == "" and figures.html(_seats().iloc[:0]) == ""
    finally:
        figures.close()


def test_a_table_the_process_cannot_draw_shows_the_servers_own_error():
    figures = FigureProcess()
    try:
        with pytest.raises(KeyError):
            figures.html(pd.DataFrame({"seat": [0, 1]}))
        assert figures.html(_seats()) == figure_html(_seats())     # the process goes on
    finally:
        figures.close()
