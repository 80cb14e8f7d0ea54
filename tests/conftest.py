"""The compiled engine is built once, in the controlling process, before the test workers start.

pytest-xdist runs one worker per core, and every worker that first plays a game compiled the same
numba code on its own: on the 2-core CI machine both workers compiled at once (4.5-6 minutes each,
the same work twice), about a quarter of the whole run. Built here first, it is loaded from the
cache by every worker (evora_sim.NUMBA_CACHE is keyed on the sources, so it cannot be stale). The
warm-up builds what most tests reach: the batch driver (every built-in strategy runs in it) and the
Python API's entries (``warmup.api_entries``). A failure here only costs the time it saved: the
workers then compile as before, and the tests report any real error themselves."""
from __future__ import annotations

import pytest


def _warm() -> None:
    from evora_sim.warmup import api_entries, compile_now, compiled

    if compiled() is False:
        print("\ncompiling the engine once for every test worker (a few minutes on a cold cache)", flush=True)
    compile_now(meanwhile=_test_checks)
    api_entries()            # compiled beside the driver on a cold cache; loaded (or compiled) here


def _test_checks() -> None:
    """The suite's own compiled invariant checks (tests/invariant_checks.py: about 50 s of compile
    on a cold cache, which a worker spent inside its first invariant test while the other worker
    went on) are compiled while this process would wait for the planner's compile."""
    from evora_sim import api
    from invariant_checks import check_state, check_step

    state = api.new_game(None, 2, 1)
    check_state(state.arr, state.rules)
    check_step(state.arr, state.arr, state.rules)


@pytest.hookimpl(tryfirst=True)
def pytest_sessionstart(session):
    if hasattr(session.config, "workerinput"):          # a worker: the controller has built it
        return
    try:
        _warm()
    except Exception as exc:                            # noqa: BLE001 - the tests themselves will say
        print(f"\nengine warm-up skipped: {exc}", flush=True)


# The longest test files first (pytest --durations, 2026-12-06; 2 workers). xdist hands each
# worker a whole file and the next one as it finishes, in the order collected: a long file that
# comes last keeps one worker busy while the other waits, which on the 2-core CI machine made the
# run minutes longer than its work. A file not listed keeps its place after these.
LONGEST_FIRST = ("test_docs.py", "test_skill.py", "test_search.py", "test_untrusted_property.py",
                 "test_streaming.py", "test_explain.py", "test_invariants.py", "test_runner.py",
                 "test_analysis.py", "test_confirm.py", "test_train.py")


def pytest_collection_modifyitems(items):
    rank = {name: i for i, name in enumerate(LONGEST_FIRST)}
    items.sort(key=lambda item: rank.get(item.path.name, len(rank)))      # stable: files stay whole
