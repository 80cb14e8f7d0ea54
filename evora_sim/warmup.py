"""The one-time compile, said out loud and done once.

Every built-in game runs in one compiled entry, ``batch.compiled_batch`` (the engine, the planners and
the search player, chosen at run time by the seats' kinds). numba compiles it on first use and
caches it (``evora_sim.NUMBA_CACHE``), which takes minutes on a cold cache: without a word a
progress bar would sit at 0% all that time, and every worker process would compile it again at
once. So a command that plays games first asks :func:`compiled` whether the cache holds it; if
not, it says so (:data:`NOTICE`) and compiles it here, before the bar starts and before any
worker loads it from the cache.

numba compiles a function and every function it calls one after the other, in one process, so a
cold compile kept one core busy and the other idle for minutes. A called function compiled
with ``cache=True`` is saved on its own, and a caller compiled later loads it from the cache
instead of compiling it again. So on a cold cache :func:`compile_now` splits the work in two,
along the compile's longest chain (measured with numba's compile events, 2026-12-07: about
280 s in one process, of which the expert's position value ``evaluate`` is 44 s, the planner's
turn search 43 s more and the engine's step 22 s). A second process compiles the position
value, then the turn planner as the search player's rollouts call it, then the search player
(:data:`PLANNER_PART`); this one meanwhile compiles the engine's step first (the planner calls
it: by the time the second process needs it, it is in the cache), then the functions the
planner, the search player and the game loop call that do not wait for the planner
(:data:`ENGINE_PART`). The batch driver is compiled last, finding every part in the cache,
while a process of its own compiles the Python API's entries (:func:`api_entries`: a decision,
finishing a turn, the score now), which runs no game but would otherwise compile on its first
call: compiled here they cost the second core, not the wait.
Each part is compiled for exactly the argument types the driver passes it
(``part_signatures``; ``tests/test_runner.py`` checks them against a cache the driver filled):
a part compiled for other types would only be compiled again.
"""
from __future__ import annotations

import os
import subprocess

import numpy as np
from numba import typeof, types

from strategies.compiled import evaluate, heuristic
from strategies.mcts import mcts_choose, new_search_work, plan_choose_seat, random_playout, seat_rewards
from strategies.policy import new_policy_work
from strategies.turn_search import new_turn_work, turn_choose

from . import api
from . import engine as E
from . import metrics as M
from .batch import compiled_batch, play_batch
from .rules import load_rules
from .this_python import python_command

COMPILE_MINUTES = "2 to 4"      # measured 2026-12-07: 2 min on an idle 2-core machine (3 min 25 s at a load of 6)
NOTICE = (f"compiling the engine and players (first run only, about {COMPILE_MINUTES} minutes on a 2-core "
          "machine; later runs load it from the cache)")

# the functions each process compiles ahead of the driver (see the module's docstring)
# (in the order each is compiled; a part's callees are loaded from the cache when the other process
# saved them first, so each list starts with what the other one needs soonest)
PLANNER_PART = ("evaluate", "plan_choose_seat", "mcts_choose", "turn_choose")
ENGINE_PART = ("take_action", "pass_frame", "random_playout", "seat_rewards", "heuristic", "end_triggered",
               "turn_begins", "card_played")


def compiled() -> bool | None:
    """Whether numba's cache holds the compiled batch driver for today's sources (None: this
    numba cannot say). Loading the cache index checks the source's stamp, as numba does before
    it loads the code."""
    try:
        return bool(compiled_batch._cache._cache_file._load_index())
    except Exception:                      # numba's internals moved: do not guess
        return None


def ensure_compiled(notice=None) -> bool:
    """Compile the batch driver unless the cache holds it, telling ``notice`` first; whether it
    compiled. One short game of random players is enough: every strategy runs in the same entry."""
    if compiled() is not False:
        return False
    if notice is not None:
        notice(NOTICE)
    compile_now()
    return True


def compile_now(meanwhile=None) -> None:
    """Load the batch driver, compiling it first if the cache lacks it (in two processes when
    two cores are free to do it). ``meanwhile``, if given, is called once this process has
    compiled its part, while the second process may still be compiling the planner (about a
    minute on 2 cores): the test suite compiles its own checks there."""
    split = compiled() is False and cores() > 1
    helper = _start_part("compile_part", PLANNER_PART) if split else None
    entries = None
    try:
        compile_part(ENGINE_PART)
        if meanwhile is not None:
            meanwhile()
        if helper is not None:
            helper.wait()
            entries = _start_part("api_entries")
        play_batch(load_rules(), 2, np.array([1], dtype=np.int64), ["random", "random"])
        if entries is not None:
            entries.wait()
    finally:
        for process in (helper, entries):
            if process is not None and process.poll() is None:     # stopped here: its work is void
                process.kill()
                process.wait()


def api_entries() -> None:
    """Compile (or load) the Python API's compiled entries by calling each as a user's first call
    would: a built-in's decision for a planner, the expert and the search player, finishing the
    turn, and the score now."""
    state = api.new_game(None, 2, 1)
    for spec in ("cardheights", "expert", "mcts(iterations=8)"):
        api.apply_action(state, api.choose(spec, state, 1))
    api.finish(state)
    api.score_now(state, 0)


def part_signatures() -> dict:
    """Each ahead-compiled function and the argument types the batch driver calls it with: the
    state, the rules (read-only), the legal actions and the random stream are the driver's
    own arrays, the seats' weights ``W`` a 2-D float array; ``k`` (legal actions), the horizon
    and a card are int64, the seat and turn int32; the metrics' tally is int64."""
    state, legal, stream = types.int32[::1], types.int32[::1], types.uint64[::1]
    weights, tally, i64, i32 = types.float64[:, ::1], types.int64[::1], types.int64, types.int32
    rules = typeof(load_rules().packed)
    return {
        "evaluate": (evaluate, (state, rules, i32, weights, i32)),
        "plan_choose_seat": (plan_choose_seat, (weights, state, rules, legal, i64, stream, typeof(new_policy_work()))),
        "mcts_choose": (mcts_choose, (state, rules, weights, i32, legal, i64, stream, typeof(new_search_work(1)))),
        "turn_choose": (turn_choose, (state, rules, weights, i32, legal, i64, stream, typeof(new_search_work(1)),
                                      typeof(new_turn_work(1, 1)))),
        "take_action": (E.take_action, (state, rules, i64, legal, types.boolean)),
        "pass_frame": (E.pass_frame, (state, rules, legal)),
        "random_playout": (random_playout, (state, rules, legal, i64, stream, i64, i32)),
        "seat_rewards": (seat_rewards, (state, rules, i64, i64, weights, types.float64[::1], types.float64[::1])),
        "heuristic": (heuristic, (state, rules, weights, legal, i64, stream, legal, legal, legal, types.float64[::1])),
        "end_triggered": (M.end_triggered, (state, rules, tally)),
        "turn_begins": (M.turn_begins, (state, rules, tally)),
        "card_played": (M.card_played, (state, rules, i64, tally)),
    }


def compile_part(names) -> None:
    """Compile (or load from the cache) the functions ``names`` of :func:`part_signatures`."""
    signatures = part_signatures()
    for name in names:
        function, signature = signatures[name]
        function.compile(signature)


def cores() -> int:
    """The cores this process may run on (its CPU affinity, which a container or ``taskset``
    may set below the machine's count). Here, below the runner, so that the compile can ask too."""
    try:
        return len(os.sched_getaffinity(0)) or 1
    except (AttributeError, OSError):        # no affinity on this platform
        return os.cpu_count() or 1


def _start_part(function: str, *args):
    """A process calling this module's ``function`` with ``args`` (plain values), from this very
    copy of the code (its folder first on the path), or None if one cannot be started (then this
    process compiles it all, as before)."""
    command, env = python_command(f"from evora_sim.warmup import {function}; {function}(*{args!r})")
    try:
        return subprocess.Popen(command, env=env, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                                stderr=subprocess.DEVNULL)
    except OSError:
        return None
