"""Progress a person can see move, on every command that plays games.

On a terminal, tqdm's bar (games done, games/s, time left); off a terminal (nohup, a pipe, CI)
one line at most every ``PROGRESS_SECONDS``, so a log stays readable and a long run does not
look hung; nothing with ``--quiet``. Games are counted as they are played, not only as a chunk
ends: a chunk is played in slices (:func:`slices`) and each slice is reported, from a worker
process through a :class:`Relay`. Intervals and clocks are parameters, so tests never race the
machine's speed.
"""
from __future__ import annotations

import math
import multiprocessing
import sys
import threading
import time

from tqdm import tqdm

PROGRESS_SECONDS = 15.0       # off a terminal: a progress line at most this often (10-30 s asked)
SLICES = 20                   # a chunk is played in this many slices, each one reported


def slices(seeds: int, parts: int = SLICES) -> list[tuple[int, int]]:
    """(start, stop) of the slices a chunk of ``seeds`` seeds is played in: the games are the
    same played in one call or in slices (each depends on its own seed only)."""
    step = max(1, math.ceil(seeds / parts))
    return [(a, min(seeds, a + step)) for a in range(0, seeds, step)]


def duration(seconds: float) -> str:
    """A time left in words: '40 s', '12 min', '2.5 h', 'an unknown time'."""
    if not seconds == seconds:                # nan
        return "an unknown time"
    if seconds < 90:
        return f"{seconds:.0f} s"
    if seconds < 5400:
        return f"{seconds / 60:.0f} min"
    return f"{seconds / 3600:.1f} h"


class NoBar:
    def update(self, n):
        pass

    def close(self):
        pass


def per_second(rate: float) -> str:
    """A rate as a progress line shows it: whole numbers from 10 up, else two significant digits,
    so the search player's 0.14 games a second (4 players, two cores) does not read as 0."""
    return f"{rate:,.0f}" if rate >= 10 else f"{rate:.2g}"


class Lines:
    """Progress off a terminal: one line on ``stream`` (stderr) at most every ``interval``
    seconds of ``clock``, with games done, games/s and the time left."""

    def __init__(self, total: int, done: int, interval: float | None = None, clock=time.monotonic,
                 stream=None, what: str = "games"):
        self.total, self.done, self.start_done = total, done, done
        self.interval = PROGRESS_SECONDS if interval is None else interval
        self.clock, self.stream, self.what = clock, stream, what
        self.start = self.last = clock()

    def update(self, n):
        if not n:
            return
        self.done += n
        now = self.clock()
        if now - self.last < self.interval or self.done >= self.total:
            return
        self.last = now
        rate = (self.done - self.start_done) / max(now - self.start, 1e-9)
        left = (self.total - self.done) / rate if rate > 0 else float("nan")
        print(f"evora: {self.done:,} of {self.total:,} {self.what} ({100 * self.done / self.total:.0f}%), "
              f"{per_second(rate)} {self.what}/s, about {duration(left)} left", file=self.stream or sys.stderr,
              flush=True)

    def close(self):
        pass


def bar(total_games: int, done_games: int, quiet: bool, interval: float | None = None):
    """tqdm's bar on a terminal, :class:`Lines` off one, :class:`NoBar` if quiet."""
    if quiet:
        return NoBar()
    if not sys.stderr.isatty():
        return Lines(total_games, done_games, interval)
    return tqdm(total=total_games, initial=done_games, unit="game", unit_scale=True,
                disable=quiet or not sys.stderr.isatty(), dynamic_ncols=True, smoothing=0.1)


class Chunks:
    """Games reported slice by slice (``games``) and chunk by chunk (``chunk``, the chunk's
    whole count once it is written): the bar moves within a chunk and never counts a game
    twice. Thread-safe: a :class:`Relay`'s thread reports slices while the run reports chunks."""

    def __init__(self, sink):
        self.sink, self.lock, self.partial, self.finished = sink, threading.Lock(), {}, set()

    def games(self, k, n):
        with self.lock:
            if k in self.finished:           # a slice relayed after its chunk was counted whole
                return
            self.partial[k] = self.partial.get(k, 0) + n
            self.sink.update(n)

    def chunk(self, k, n):
        with self.lock:
            self.finished.add(k)
            self.sink.update(n - self.partial.pop(k, 0))


class Sent:
    """The sink a run in a worker process reports to: its games go to the parent's
    :class:`Relay` (``send``), which moves the one bar there."""

    def __init__(self, send):
        self.send = send

    def update(self, n):
        if n:
            self.send(None, n)

    def close(self):
        pass


class Locked:
    """A sink shared by threads (runs on a Dask cluster, each waited for by a thread)."""

    def __init__(self, sink):
        self.sink, self.lock = sink, threading.Lock()

    def update(self, n):
        with self.lock:
            self.sink.update(n)

    def close(self):
        pass


class _Sender:
    """What a worker process holds: a picklable callable that sends (key, games) to the parent."""

    def __init__(self, queue):
        self.queue = queue

    def __call__(self, key, n):
        self.queue.put((key, n))


class Relay:
    """Slices played in worker processes, reported to ``receive(key, n)`` in this one: a managed
    queue (picklable, so loky's workers can take it) read by a thread until closed."""

    def __init__(self, receive):
        self.receive = receive
        self.manager = multiprocessing.get_context("spawn").Manager()
        self.queue = self.manager.Queue()
        self.send = _Sender(self.queue)
        self.thread = threading.Thread(target=self._listen, name="evora-progress", daemon=True)
        self.thread.start()

    def _listen(self):
        while True:
            try:
                item = self.queue.get()
            except (EOFError, OSError):      # the manager is gone
                return
            if item is None:
                return
            self.receive(*item)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        try:
            self.queue.put(None)
            self.thread.join(5)
        except (EOFError, OSError):
            pass
        self.manager.shutdown()
        return False
