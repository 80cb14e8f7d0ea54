"""Games with custom Python strategies at the table, on the same compiled rules.

The loop is the batch driver's (:func:`evora_sim.gameloop.advance`), split where a custom strategy
must decide: compiled code plays every forced move and every built-in seat's decision, with the
same buffers and the same random stream as the batch driver, and returns to Python only when a
custom seat has a real choice (two or more legal actions, P5). Python asks that seat's
strategy, checks the answer and applies it with the compiled ``engine.apply_action``. No rule
is implemented here; a table of built-ins only plays exactly the games of ``play_batch``.

A custom seat gets a fresh copy of the state at every decision (it may change it, e.g. to look
ahead), the legal actions as a list of ints, and its own ``numpy`` Generator seeded from the
game seed and the seat. A class strategy is instantiated once per seat and game, so every game
is reproducible from its seed alone, whatever the batch, chunk or process that plays it.
"""
from __future__ import annotations

import ctypes
import signal
import threading
import time
import traceback
from contextlib import contextmanager

import numpy as np
from numba.core import event

from strategies.custom import is_custom
from strategies.errors import StrategyError
from strategies.registry import seat_arrays

from . import api
from . import engine as E
from . import layout as L
from .gameloop import (ILLEGAL, BatchResult, advance, buffers, is_play, new_result, record, refused, search_notes,
                       seat_strategies, start)
from .metrics import card_played


def seat_rng(seed: int, seat: int) -> np.random.Generator:
    """The random stream a custom strategy gets: one per game seed and seat."""
    return np.random.default_rng([int(seed), int(seat)])


def _where(exc: BaseException) -> str:
    """' (at FILE:LINE)' of the innermost frame of the strategy's traceback."""
    frames = traceback.extract_tb(exc.__traceback__)
    if len(frames) < 2:
        return ""
    last = frames[-1]
    return f" (at {last.filename}:{last.lineno})"


DEFAULT_DECISION_TIMEOUT = 60.0


class DecisionTimeout(BaseException):
    """A decision took longer than allowed. A BaseException, so that a strategy's own
    ``except Exception`` cannot swallow it."""


class _Clock(event.Listener):
    """A decision's clock, stopped while its own thread compiles (numba holds its compiler lock).

    A strategy's first call of a compiled reader (``api.finish``, ``api.score_now``, its own
    ``@njit`` code) compiles it, on a cold cache for minutes: that is the machine's start-up,
    not the strategy's thinking, and an alarm raised inside numba's compiler left it broken ("no
    compiled object yet for <Library 'play_on'>", blamed on the strategy). So the clock stops
    when a compile starts and runs on, with the time that was left, when it ends; an alarm due
    during a compile waits for its end. ``arm(seconds)``/``disarm()`` set and clear the timer,
    ``fire()`` stops the decision."""

    def __init__(self, seconds: float, arm, disarm, fire):
        self.left, self.arm, self.disarm, self.fire = float(seconds), arm, disarm, fire
        self.thread = threading.get_ident()
        self.compiling = 0
        self.due = False
        self.ends = None

    def start(self):
        self.ends = time.monotonic() + self.left
        self.arm(self.left)

    def expire(self, *_):
        if self.compiling:
            self.due = True
        else:
            self.fire()

    def on_start(self, ev):
        if threading.get_ident() == self.thread:
            self.compiling += 1
            if self.compiling == 1:
                self.disarm()
                self.left = max(self.ends - time.monotonic(), 0.0)

    def on_end(self, ev):
        if threading.get_ident() == self.thread and self.compiling:
            self.compiling -= 1
            if self.compiling == 0:
                self.ends = time.monotonic() + self.left
                self.arm(1e-3 if self.due else max(self.left, 1e-3))


def _raise_timeout():
    raise DecisionTimeout()


@contextmanager
def deadline(seconds: float):
    """Raise :class:`DecisionTimeout` in this thread once ``seconds`` have passed, not counting
    the time numba spends compiling in it (:class:`_Clock`). In the main thread a real-time
    timer (SIGALRM) interrupts even a blocking call; elsewhere (a Dask worker thread) the
    exception is raised at the thread's next Python instruction."""
    if threading.current_thread() is threading.main_thread() and hasattr(signal, "setitimer"):
        clock = _Clock(seconds, lambda t: signal.setitimer(signal.ITIMER_REAL, t),
                       lambda: signal.setitimer(signal.ITIMER_REAL, 0), _raise_timeout)
        previous = signal.signal(signal.SIGALRM, clock.expire)
        try:
            with event.install_listener("numba:compiler_lock", clock):
                clock.start()
                yield
        finally:
            signal.setitimer(signal.ITIMER_REAL, 0)
            signal.signal(signal.SIGALRM, previous)
        return
    ident = threading.get_ident()
    timers = []

    def arm(t):
        timers.append(threading.Timer(t, clock.expire))
        timers[-1].daemon = True
        timers[-1].start()

    clock = _Clock(seconds, arm, lambda: timers[-1].cancel(), lambda: ctypes.pythonapi.PyThreadState_SetAsyncExc(
        ctypes.c_ulong(ident), ctypes.py_object(DecisionTimeout)))
    try:
        with event.install_listener("numba:compiler_lock", clock):
            clock.start()
            yield
    finally:
        for timer in timers:
            timer.cancel()


class _Table:
    """One table: the seats' strategies and the buffers every game of a batch reuses."""

    def __init__(self, rules, n_players, strategies, decision_timeout=None):
        self.rules = rules
        self.timeout = DEFAULT_DECISION_TIMEOUT if decision_timeout is None else float(decision_timeout)
        self.R = rules.packed
        self.n = n_players
        self.strategies = strategies
        self.kinds, self.W = seat_arrays(strategies)
        self.custom = np.array([is_custom(x) for x in strategies], dtype=np.bool_)
        self.s = E.new_state()
        _, self.legal, self.rs, self.work, self.track = buffers(n_players, strategies)
        for p, x in enumerate(strategies):      # load every custom strategy before any game
            if is_custom(x):
                x.obj()

    def play(self, seed: int, log: np.ndarray) -> int:
        """Play the game of ``seed`` in ``self.s``; record actions in ``log``. Returns steps."""
        s, R = self.s, self.R
        seed = int(seed)
        start(s, R, self.n, np.int64(seed), self.rs, self.work)
        players = {p: x.new_player() for p, x in enumerate(self.strategies) if is_custom(x)}
        rngs = {p: seat_rng(seed, p) for p in players}
        steps = 0
        cap = log.shape[0]
        while True:
            k, steps = advance(s, R, self.kinds, self.W, self.custom, self.legal, self.rs, self.work,
                               log, steps, self.track)
            if k == ILLEGAL:
                raise refused(self.strategies, s, self.track, steps, seed)
            if k == 0:
                return steps
            p = int(s[L.G_CUR])
            legal = self.legal[:k].tolist()          # the engine's list, kept for the check
            view = api.engine_state(s.copy(), self.rules, seed)
            who = f"strategy {self.strategies[p].name!r} (seat {p})"
            at = f"at decision {steps + 1} ({self._point()}) of the game with seed {seed}"
            try:
                with deadline(self.timeout):
                    a = players[p](view, list(legal), rngs[p])   # its own copy to keep or change
            except DecisionTimeout:
                raise StrategyError(f"{who} did not decide within {self.timeout:g} s {at} "
                                    "(--decision-timeout)") from None
            except SystemExit as exc:
                raise StrategyError(f"{who} called sys.exit({exc.code!r}) {at}; a strategy must "
                                    "return an action") from None
            except Exception as exc:
                raise StrategyError(
                    f"{who} raised {type(exc).__name__}: {exc}{_where(exc)} {at}") from exc
            if isinstance(a, (int, np.integer)) and not isinstance(a, (bool, np.bool_)) and int(a) in legal:
                a = int(a)
            else:
                raise StrategyError(
                    f"strategy {self.strategies[p].name!r} (seat {p}) chose {self._action(a)}, which is "
                    f"not legal at decision {steps + 1} ({self._point()}) of the game with seed "
                    f"{seed}; legal actions: {', '.join(self._action(x) for x in legal)}")
            if steps < cap:
                log[steps] = a
            if is_play(a):
                card_played(s, R, np.int64(a), self.track)
            E.apply_action(s, R, np.int64(a))
            steps += 1

    def _point(self) -> str:
        s = self.s
        state = api.State(s, self.rules, 0)
        return (f"'{api.decision_name(state)}', round {int(s[L.G_ROUND])}, "
                f"turn {int(s[L.G_NTURNS]) + 1}, seat {int(s[L.G_CUR])} to decide")

    def _action(self, a) -> str:
        if isinstance(a, (int, np.integer)) and not isinstance(a, (bool, np.bool_)):
            if 0 <= int(a) < L.N_ACTIONS:
                return f"action {int(a)} ({api.describe_action(api.State(self.s, self.rules, 0), int(a))})"
            return f"action {int(a)} (no such action code)"
        return f"{a!r} (not an action code)"


def play_mixed_batch(rules, n_players: int, seeds, strategies, decision_timeout=None, logs=None) -> BatchResult:
    """:func:`evora_sim.batch.play_batch` with custom Python strategies at the table: the same
    arrays, the same games for the built-in seats' random stream; row ``g`` of ``logs``, if it
    has one, receives game ``g``'s actions."""
    seeds = np.ascontiguousarray(seeds, dtype=np.int64)
    table = _Table(rules, n_players, seat_strategies(n_players, strategies), decision_timeout)
    res = new_result(seeds, n_players)
    nolog = np.empty(0, dtype=np.int64)
    for g in range(seeds.shape[0]):
        steps = table.play(int(seeds[g]), logs[g] if logs is not None and g < len(logs) else nolog)
        record(table.s, n_players, g, steps, res.games, res.seats, res.stats, res.states, table.track)
    return res


def play_mixed_game(rules, n_players: int, seed: int, strategies, max_log: int = 100_000,
                    decision_timeout=None, notes: list | None = None):
    """:func:`evora_sim.batch.play_game` with custom strategies: (final state, action log)."""
    table = _Table(rules, n_players, seat_strategies(n_players, strategies), decision_timeout)
    log = np.zeros(max_log, dtype=np.int64)
    steps = table.play(int(seed), log)
    if notes is not None:
        notes.extend(search_notes(table.work))
    return table.s, log[:min(steps, max_log)].copy()


__all__ = ["play_mixed_batch", "play_mixed_game", "seat_rng", "deadline", "DecisionTimeout",
           "DEFAULT_DECISION_TIMEOUT"]
