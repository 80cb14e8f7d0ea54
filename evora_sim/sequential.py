"""Run until sure: ``--until-ci WIDTH`` adds games look by look until the intervals of the named
headline metrics are narrow enough, with intervals that stay valid under this stopping.

The looks are planned in advance: the run is analysed at ``--games`` seeds, then at twice as
many, four times, ... up to ``--max-games`` (the last look at exactly the maximum), so there are
``K`` looks. Each look's intervals are computed at level ``1 - 0.05 / K`` (Bonferroni over the K
planned looks): with probability at least 95% *every* look's interval covers the true value at
once, so the interval reported at whichever look the run stops at covers with at least 95%,
however the stopping depended on the data. The run stops at the first look where every named
metric's adjusted half-width is below WIDTH, or at the maximum. Seeds are never redrawn: look
``j`` is the first ``n_j`` seeds of the run, so the games are those a plain run of ``n_j`` seeds
would play.
"""
from __future__ import annotations

import json
import math
from dataclasses import replace
from pathlib import Path

from analysis.numbers import units
from analysis.untilsure import ALPHA
from analysis.variants import GROUPS, game_data, metric_group, run_metrics, subset

from .manifest import write_manifest
from .runlock import folder_lock
from .runner import (
    DEFAULT_CHUNK, MANIFEST, Execution, RunError, check_jobs, check_size, growing_chunk, open_run, read_manifest,
    rotation_for, simulate,
)

METHOD = ("Bonferroni over the planned looks: the run is analysed at the planned sample sizes "
          "(doubling from --games up to --max-games, K looks) and each look's intervals use level "
          "1 - 0.05/K, so the interval at the look where the run stops covers with at least 95% "
          "whatever the stopping time (a confidence sequence on the planned looks). Metric "
          "intervals: cluster-robust (seed = cluster) delta-method t intervals; the seat "
          "unfairness: the Feldman-Cousins interval of analysis/fairness.py.")
OLD_NAMES = {"spread": "fairness"}     # the seat advantage spread's successor


def ci_metrics() -> dict[str, str]:
    """The metric groups --ci-metrics accepts, with what each holds."""
    return GROUPS


def schedule(initial: int, max_games: int, chunk_size: int) -> list[int]:
    """Seeds at each planned look: ``initial`` doubling, capped by (and ending at) ``max_games``.
    Every look but the last is a whole number of chunks, so adding games never moves a game."""
    if max_games < initial:
        raise RunError(f"--max-games ({max_games}) must be at least --games ({initial})")
    looks, n = [], initial
    while n < max_games:
        looks.append(n)
        n *= 2
    looks.append(max_games)
    bad = [x for x in looks[:-1] if x % chunk_size]
    if bad:
        raise RunError(f"--until-ci: the looks ({', '.join(map(str, looks))} seeds) must be whole "
                       f"chunks of {chunk_size}; give --games as a multiple of --chunk-size")
    return looks


def looks_chunk(outs, initial: int, jobs: int) -> int:
    """Seeds in each chunk of a run until sure when ``--chunk-size`` is not given.

    A folder that already holds a run keeps its own chunks, so a run resumes whatever ``--jobs``
    says. Otherwise every look but the last must be whole chunks (``schedule``), and the looks
    double from ``initial``, so the chunk divides ``initial``: the divisor nearest (by ratio) to
    a ``jobs``-th of it, so that the first look gives every process a chunk and each later
    look twice as many. The first look used to be one chunk, played by one process however many
    there were: for a slow player, half of a 2-core machine idle for the first two looks. Not
    smaller than that: each chunk is a file, and a fast player's run that doubles to its
    maximum would otherwise write hundreds."""
    target = min(DEFAULT_CHUNK, math.ceil(initial / max(1, jobs)))
    # a prime first look keeps the chunk it always had
    return growing_chunk(outs, initial, target) or min(DEFAULT_CHUNK, initial)


def parse_ci_metrics(text: str) -> list[str]:
    names = [OLD_NAMES.get(x.strip(), x.strip()) for x in str(text).split(",") if x.strip()]
    known = ci_metrics()
    bad = [x for x in names if x not in known]
    if bad or not names:
        raise RunError(f"--ci-metrics: unknown metric {', '.join(map(repr, bad)) or repr(text)} "
                       f"(expected a comma-separated list of {', '.join(known)})")
    return list(dict.fromkeys(names))


def half_widths(table, groups: list[str]) -> dict[str, float]:
    """Half-width per selected metric, in report units (points for rates, shares and the seat
    unfairness)."""
    out = {}
    for r in table[table["metric"].map(metric_group).isin(groups)].itertuples():
        out[r.metric] = float(units(r.kind)[0] * (r.hi - r.lo) / 2)
    return out


def run_until_ci(arms, players, strategies, *, initial_games: int, max_games: int, width: float,
                 metrics=("seats",), seed: int = 1, seat_rotation: bool | None = None, on_look=None,
                 execution: Execution = Execution()) -> dict:
    """Play every arm (``(out, rules)`` pairs: one run, or a sweep's combinations, all on the
    same seeds) look by look until every arm's named metrics have an adjusted half-width below
    ``width``, or ``max_games`` seeds. Records the method and the looks in each manifest; returns
    the record. ``on_look(look, looks, seeds, worst half-width)`` is told of each look;
    ``execution``: how the runs are played (its chunk size, when None, :func:`looks_chunk`'s)."""

    if not (isinstance(width, (int, float)) and math.isfinite(width) and width > 0):
        raise RunError(f"--until-ci must be a positive width, got {width!r}")
    groups = list(metrics)
    if not isinstance(initial_games, int) or initial_games < 2:
        raise RunError(f"--games must be at least 2 with --until-ci, got {initial_games!r}")
    chunk = execution.chunk_size
    if chunk is None:
        chunk = looks_chunk([out for out, _ in arms], initial_games, check_jobs(execution.jobs))
    execution = replace(execution, chunk_size=chunk)
    seat_rotation = rotation_for(strategies, players, seat_rotation)     # None: rotate a mixed field
    check_size(players, max_games, seat_rotation, chunk)
    looks = schedule(initial_games, max_games, chunk)
    k = len(looks)
    alpha = ALPHA / k
    history = []
    record = None
    for j, n in enumerate(looks):
        worst, per_arm = 0.0, []
        for out, rules in arms:
            target = n
            if (Path(out) / MANIFEST).is_file():
                target = max(n, int(read_manifest(Path(out))["config"]["games"]))
            result = simulate(players, target, strategies, seed=seed, out=out, seat_rotation=seat_rotation,
                              rules=rules, extend=True, execution=execution)
            data = game_data(open_run(result.out))
            data = subset(data, data.seed_index < n)
            table = run_metrics(data, alpha=alpha)
            hw = half_widths(table, groups)
            per_arm.append({"out": str(out), "half_widths": hw})
            worst = max(worst, max(hw.values()) if hw else float("inf"))
        history.append({"look": j + 1, "seeds": n, "max_half_width": worst})
        if on_look is not None:
            on_look(j + 1, k, n, worst)
        done = worst < width
        if done or j == k - 1:
            record = {"method": METHOD, "width": width, "width_units": "percentage points for rates "
                      "and shares; VP or rounds for means", "metrics": groups,
                      "looks_planned": looks, "alpha_per_look": alpha, "looks_done": j + 1,
                      "stopped_at_seeds": n,
                      "reason": "width reached" if done else "maximum games reached (width not reached)",
                      "history": history, "final": per_arm}
            break
    for out, _ in arms:
        with folder_lock(out, RunError):
            manifest = read_manifest(Path(out))
            manifest["sequential"] = record
            write_manifest(Path(out), manifest)
    return record


def dumps(record: dict) -> str:
    return json.dumps(record, indent=1)
