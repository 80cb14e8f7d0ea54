"""The report's seat figure (win rate by seat, 95% Wilson intervals) as an inline image, and a
process of its own that draws it for the live dashboard.

Why a process: drawing the figure holds the interpreter (Matplotlib is 0.8 s of processor time
to import and about half a second to draw), and the server draws it just after a slice's numbers
are shown, which is when an analyst picks the next filter. In the server, that filter waited for
the figure (1.6-1.9 s on a 1,000,000-game run, against a 1-s line); in a process of its own the
figure is drawn on the machine's other core and the filter is answered meanwhile. The process
is started at the first figure and reads the figures' tables from a pipe, so it stops with the
server; if it cannot be started or stops, the figure is drawn in the server as before.
"""
from __future__ import annotations

import base64
import io
import pickle
import struct
import subprocess
import sys
import threading

import pandas as pd

from evora_sim.this_python import python_command

SIZE = struct.Struct("<Q")              # a message's length, before it


def seat_figure_png(adv: pd.DataFrame) -> bytes:
    """The report's seat figure of the seat table ``adv`` (:func:`analysis.tables.seat_advantage`)
    as PNG bytes."""
    from . import plots       # lazy: Matplotlib, 0.8 s of processor time (measured), only where a figure is drawn

    fig = plots.seat_win_rates(adv)
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=90, bbox_inches="tight")
    plots.plt.close(fig)
    return buf.getvalue()


def seat_figure_html(png: bytes) -> str:
    data = base64.b64encode(png).decode()
    return (f"<figure><img id='seat-figure' alt='Win rate by seat' style='max-width:100%' "
            f"src='data:image/png;base64,{data}'><figcaption>Win rate by seat, with 95% Wilson "
            f"intervals</figcaption></figure>")


def figure_html(adv: pd.DataFrame | None) -> str:
    """The seat figure drawn here, as HTML ("" for no seats)."""
    if adv is None or not len(adv):
        return ""
    return seat_figure_html(seat_figure_png(adv))


def _read(stream, n: int) -> bytes:
    data = stream.read(n)
    if len(data) != n:
        raise EOFError("the figure process stopped")
    return data


class FigureProcess:
    """The seat figure drawn in a process of its own (see the module's note); one figure at a
    time, in the order asked."""

    def __init__(self):
        self._proc: subprocess.Popen | None = None
        self._lock = threading.Lock()

    def html(self, adv: pd.DataFrame | None) -> str:
        """As :func:`figure_html`, drawn in the process."""
        if adv is None or not len(adv):
            return ""
        with self._lock:
            try:
                proc = self._started()
                data = pickle.dumps(adv, protocol=pickle.HIGHEST_PROTOCOL)
                proc.stdin.write(SIZE.pack(len(data)) + data)
                proc.stdin.flush()
                (n,) = SIZE.unpack(_read(proc.stdout, SIZE.size))
                if not n:                     # it could not draw this one: drawn here, where an error shows
                    return figure_html(adv)
                png = _read(proc.stdout, n)
            except (OSError, EOFError, ValueError):
                self.close()
                return figure_html(adv)
        return seat_figure_html(png)

    def _started(self) -> subprocess.Popen:
        if self._proc is None or self._proc.poll() is not None:
            command, env = python_command("from analysis.seat_figure import serve; serve()")
            self._proc = subprocess.Popen(command, env=env, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                          stderr=subprocess.DEVNULL)
        return self._proc

    def close(self) -> None:
        proc, self._proc = self._proc, None
        if proc is not None:
            for stream in (proc.stdin, proc.stdout):
                try:
                    stream.close()
                except OSError:
                    pass
            try:
                proc.wait(timeout=5)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()


def serve() -> None:
    """The figure process: a seat table in (pickled, from the server that started it), its PNG out,
    until the server closes the pipe. A table it cannot draw answers with no bytes."""
    ins, outs = sys.stdin.buffer, sys.stdout.buffer
    while True:
        head = ins.read(SIZE.size)
        if len(head) != SIZE.size:
            return
        (n,) = SIZE.unpack(head)
        try:
            png = seat_figure_png(pickle.loads(_read(ins, n)))
        except EOFError:
            return
        except Exception:                  # noqa: BLE001  (the server draws it itself and shows the error)
            png = b""
        outs.write(SIZE.pack(len(png)) + png)
        outs.flush()
