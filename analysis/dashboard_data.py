"""The dashboard's data: run folders opened once, a slice of their games chosen by DuckDB, and
the report's own tables computed over that slice.

A slice (:class:`Slice`) is a set of conditions on a game: its player count, rules variant,
a strategy at the table (in a given seat), the winner's strategy, how it was decided
(``decided_by``, decided in the final round), its end condition, the round the end was
triggered, and any numeric column of the games table within a range. DuckDB answers it straight
from the runs' Parquet files (a query over the games and seats tables, read where they lie, no
copy), giving the matching game ids. The statistics then come from the report's own pass
(:func:`analysis.scan.scan`, restricted to those games) and the report's own table functions
(:mod:`analysis.tables`): the same sufficient statistics, seeds as the independent units, the
same intervals, tests and words. So a figure shown for a slice is the report's figure for the
same games, by construction, and no statistic is written twice.

Everything here is a plain function of the opened folders and a slice, testable without a
browser; :mod:`analysis.dashboard_page` draws the result and :mod:`evora_sim.cli.dashboard`
serves it.
"""
from __future__ import annotations

import hashlib
import os
import pickle
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from dataclasses import dataclass, field, replace
from pathlib import Path

import duckdb
import numpy as np
import pandas as pd

from evora_sim import NUMBA_CACHE
from evora_sim.fsutil import write_bytes_atomic
from evora_sim.manifest import MANIFEST, RunError, replay_command
from evora_sim.storage import RunResult, files, open_run, pieces, verify
from strategies.errors import StrategyError

from . import tables as T
from .explain_stats import read_summary
from .fairness import noncentrality_interval
from .scan import AnalysisError, Scan, has_column, plan, read_games, scan
from .stats import MIN_EFFECT
from .tables import open_runs, runs_by_count
from .variants import compare as compare_runs
from .variants import compare_lines, game_datas

# the columns a slice reads; a run of an older version that lacks one is refused with one line
NEEDED = {"games": ("game_id", "seed", "rounds", "turns", "end_trigger", "winner_seat", "decided_by",
                    "decided_last_round", "trigger_turn", "lead_changes", "comeback"),
          "seats": ("game_id", "seat", "strategy", "score", "win")}
# the numeric columns a slice may bound (the games table's, and the round the end was triggered)
RANGE_COLUMNS = {"rounds": "rounds played", "turns": "turns played", "trigger_round": "round the end was triggered",
                 "lead_changes": "lead changes", "comeback": "the winner's largest deficit overcome (VP)"}
USE_TABLES = ("cards", "spaces")   # read only for the associations: checked when first asked for
GAMES_SHOWN = 50                 # rows of the matching-games table


@dataclass(frozen=True)
class Slice:
    """Which games: every condition that is set must hold (None: any)."""

    players: int | None = None
    variant: str | None = None           # a variant's label (Source.variants); None: the first
    strategy: str | None = None          # a strategy at the table ...
    seat: int | None = None              # ... in this seat (only with ``strategy``)
    winner: str | None = None            # the winner's strategy
    decided_by: str | None = None        # vp, half_point, parts_left, seat_order, lot
    last_round: bool | None = None       # decided in the final round (the winner took the lead after the trigger)
    end_trigger: str | None = None       # temple_full, out_of_stones, round_limit
    ranges: tuple = ()                   # ((column of RANGE_COLUMNS, lo, hi), ...), bounds included

    def words(self) -> str:
        """The slice as a reader says it."""
        parts = []
        if self.players:
            parts.append(f"{self.players} players")
        if self.strategy:
            parts.append(f"{self.strategy} at the table" + (f" in seat {self.seat}" if self.seat is not None else ""))
        if self.winner:
            parts.append(f"won by {self.winner}")
        if self.decided_by:
            parts.append(f"decided by {self.decided_by}")
        if self.last_round is not None:
            parts.append("decided in the final round" if self.last_round else "not decided in the final round")
        if self.end_trigger:
            parts.append(f"ended by {self.end_trigger}")
        parts += [f"{RANGE_COLUMNS[c]} {lo:g} to {hi:g}" for c, lo, hi in self.ranges]
        return "; ".join(parts) if parts else "every game"


@dataclass
class Variant:
    """Runs played under one set of rules (one report's worth): a sweep point, a variant."""

    label: str
    runs: list
    tasks: list = field(default_factory=list)
    _why_tasks: list | None = None

    cells: "Cells | None" = None

    def plan(self, explained: bool) -> list:
        """The plan of the slices' pass: with the decomposition's columns or without (each its
        own plan, so the blocks kept for one are not mistaken for the other's)."""
        if not explained:
            return self.tasks
        if self._why_tasks is None:
            self._why_tasks = _tasks(self.runs, explained=True)
        return self._why_tasks

    @property
    def player_counts(self) -> list[int]:
        return sorted({int(r.manifest["config"]["players"]) for r in self.runs})


class Store:
    """The blocks of games already read, kept as the statistics take them (decoded, in memory),
    so the next slice folds them again without reading or decoding a file: a filter then costs
    the statistics' own arithmetic over its games. Kept for the whole session: the seat and game
    columns the report's pass reads come to about 170 bytes a game (the card and space tables,
    read only for the associations, are not kept)."""

    def __init__(self):
        self.blocks: dict = {}

    def read(self, task, block, with_seed: bool):
        # a block's cluster numbers depend on its player count's plan (task.count): one entry each
        key = (task.out, block.lo, block.hi, id(task.count), with_seed)
        if key not in self.blocks:
            self.blocks[key] = read_games(task, block, with_seed)
        return self.blocks[key]

    def prefetch(self, tasks) -> None:
        """Read every block of ``tasks`` two at a time (Parquet reads release the interpreter: the
        machine's second core reads while the first decodes)."""
        with ThreadPoolExecutor(max_workers=2) as pool:
            list(pool.map(lambda tb: self.read(tb[0], tb[1], False), [(t, b) for t in tasks for b in t.piece.blocks]))


@dataclass
class Source:
    """Opened run folders, grouped by their rules, and the DuckDB views over their tables."""

    variants: list
    runs: list                            # every run, in the views' ``run`` numbering
    con: object = None
    store: Store = field(default_factory=Store)
    uses_checked: bool = False            # the card and space tables' checksums verified
    explained: list = field(default_factory=list)    # evora explain folders among the folders given
    _choices: dict | None = None
    _compared: dict = field(default_factory=dict)

    def __post_init__(self):
        self._work = threading.Lock()
        self._asking = 0

    @contextmanager
    def turn(self, background: bool = False):
        """Hold the statistics' turn: a slice asked for goes first; background work (the
        :class:`Cells`, a step at a time) waits while one is asked, so it never slows a filter
        by more than a step."""
        if background:
            while self._asking:
                time.sleep(0.01)
        else:
            self._asking += 1
        try:
            with self._work:
                yield
        finally:
            if not background:
                self._asking -= 1

    def variant(self, label: str | None) -> Variant:
        if label is None:
            return self.variants[0]
        for v in self.variants:
            if v.label == label:
                return v
        raise AnalysisError(f"no variant {label!r}; the folders hold {', '.join(v.label for v in self.variants)}")

    def choices(self) -> dict:
        """What each filter may be set to, from the runs themselves (asked once: every page
        opened asks again)."""
        if self._choices is None:
            self._choices = self._find_choices()
        return self._choices

    def _find_choices(self) -> dict:
        # one pass over the games table for every filter's values (each its own query: a scan each)
        cols = ", ".join(f"min({c}), max({c})" for c in RANGE_COLUMNS)
        got = self.con.cursor().execute(
            f"SELECT list(DISTINCT end_trigger ORDER BY end_trigger), list(DISTINCT decided_by ORDER BY decided_by), "
            f"{cols} FROM games").fetchone()
        bounds = {col: (int(got[2 + 2 * i]), int(got[3 + 2 * i])) for i, col in enumerate(RANGE_COLUMNS)}
        strategies = sorted({s for r in self.runs for s in r.manifest["config"]["strategies"]})
        return {"players": sorted({int(r.manifest["config"]["players"]) for r in self.runs}),
                "variants": [v.label for v in self.variants], "strategies": strategies,
                "end_trigger": list(got[0]), "decided_by": list(got[1]), "bounds": bounds,
                "seats": max(int(r.manifest["config"]["players"]) for r in self.runs)}

    def verify_uses(self) -> None:
        """Check the card and space tables' checksums, once, before the associations first read
        them (opening checks only the games and seats tables, which every slice reads)."""
        if not self.uses_checked:
            for r in self.runs:
                for piece in pieces(r.out, r.manifest):
                    verify(r.out, piece, USE_TABLES)
            self.uses_checked = True


# ---------------------------------------------------------------------------------------------
# opening
# ---------------------------------------------------------------------------------------------
DEPTH = 4          # folders looked into below a folder given: a skill folder's why/r1/arms/CHANGE


def run_folders(paths) -> list[tuple[Path, str]]:
    """The run folders named, each with the label of the group it is shown in: a run folder
    itself, or any folder holding runs below it (``evora run``'s p2, p3, p4 and its expert runs;
    a sweep's points; a skill folder's rungs; an explain folder's arms), up to ``DEPTH`` folders
    down. Runs of one folder's player counts (p2, p3, p4) share its label; a rung, a sweep point,
    an arm is a label of its own. A symbolic link is not followed (a folder from someone else
    may point anywhere). A folder that holds no run is passed on, for the run check to refuse by
    name."""
    out = []
    for p in paths:
        top = Path(p)
        found = [top] if (top / MANIFEST).is_file() else sorted(_runs_below(top, DEPTH))
        for folder in found or [top]:
            rel = folder.relative_to(top).parts
            if rel and _player_folder(rel[-1]):
                rel = rel[:-1]
            out.append((folder, "/".join((_head(top), *rel))))
    return out


def _head(top: Path) -> str:
    """A folder given, as its label begins: its name (a run named p4 with its parent's name)."""
    base = top.resolve()
    return f"{base.parent.name}/{base.name}" if _player_folder(base.name) else base.name


def _player_folder(name: str) -> bool:
    return len(name) == 2 and name[0] == "p" and name[1].isdigit()


def _runs_below(folder: Path, depth: int):
    if depth == 0 or folder.is_symlink() or not folder.is_dir():
        return
    for sub in sorted(folder.iterdir()):
        if sub.is_symlink() or not sub.is_dir():
            continue
        if (sub / MANIFEST).is_file():
            yield sub
        else:
            yield from _runs_below(sub, depth - 1)


def explain_folders(paths) -> list[Path]:
    """The ``evora explain`` folders among and below ``paths`` (their ``summary/`` and
    ``search.json``): the fixes they ranked are shown beside the decomposition."""
    out = []
    for p in paths:
        top = Path(p)
        for folder in [top, *(q.parent for q in top.rglob("search.json") if q.parent != top)]:
            if (folder / "search.json").is_file() and (folder / "summary").is_dir() and not folder.is_symlink():
                out.append(folder)
    return sorted(set(out))


def open_source(paths, allow_partial: bool = False) -> Source:
    """Open the run folders of ``paths`` with the report's checks (:func:`analysis.tables.open_runs`:
    not a run, incomplete, damaged by size), the checksums of the games and seats files verified
    once (the card and space files' before the associations first read them), and refuse a run of
    an older version whose tables lack a column a slice reads; RunError, one line, otherwise.
    Runs are grouped by their folder's label (:func:`run_folders`) and their rules: a group is
    one report's worth, a slice's "variant"."""

    folders = run_folders(paths)
    if not folders:
        raise AnalysisError("no run folder given")
    groups: dict[tuple, list] = {}
    for f, label in folders:
        groups.setdefault((label, open_run(f).manifest["rules_hash"]), []).append(f)
    variants, labels = [], set()
    for (label, rules), group in groups.items():
        runs = open_runs(group, allow_partial=allow_partial)
        for r in runs:
            for table, cols in NEEDED.items():
                missing = [c for c in cols if not has_column(r, table, c)]
                if missing:
                    raise AnalysisError(
                        f"run {r.out} was played by an older version of evora-sim: its {table} table has no "
                        f"{', '.join(missing)} column{'s' if len(missing) > 1 else ''}, which the dashboard slices "
                        f"by; play it again with this version ({r.manifest.get('command', 'its command')})")
            for piece in pieces(r.out, r.manifest):
                verify(r.out, piece, tuple(NEEDED))
        if label in labels:
            label += f" (rules {rules})"
        labels.add(label)
        variants.append(Variant(label, runs, _tasks(runs, explained=False)))
    every = [r for v in variants for r in v.runs]
    source = Source(variants, every, explained=explain_folders(paths))
    source.con = _views(every)
    return source


def _tasks(runs, explained: bool) -> list:
    """The report's plan for ``runs``, without the card timing (the dashboard does not show it)
    and with the decomposition's columns only when asked (``explained``: they cost a third of a
    slice's time)."""
    tasks = plan(runs)
    return [replace(t, count=replace(t.count, explained=explained and t.count.explained, timed=False))
            for t in tasks]


def _sql_list(files) -> str:
    return "[" + ", ".join("'" + str(f).replace("'", "''") + "'" for f in files) + "]"


def _views(runs: list[RunResult]):
    """A DuckDB connection with the views ``games`` and ``seats`` over every run's Parquet files
    (each row with its run's number, player count and seat rotations)."""

    con = duckdb.connect(":memory:", config={"threads": 2})
    games, seats = [], []
    for i, r in enumerate(runs):
        cfg = r.manifest["config"]
        n = int(cfg["players"])
        g = ", ".join(c for c in NEEDED["games"])
        games.append(f"SELECT {i} AS run, {n} AS players, {g}, trigger_turn // {n} + 1 AS trigger_round "
                     f"FROM read_parquet({_sql_list(files(r.out, r.manifest, 'games'))})")
        s = ", ".join(NEEDED["seats"])
        seats.append(f"SELECT {i} AS run, {s} FROM read_parquet({_sql_list(files(r.out, r.manifest, 'seats'))})")
    con.execute("CREATE VIEW games AS " + " UNION ALL ".join(games))
    con.execute("CREATE VIEW seats AS " + " UNION ALL ".join(seats))
    return con


# ---------------------------------------------------------------------------------------------
# a slice
# ---------------------------------------------------------------------------------------------
def where(source: Source, sl: Slice) -> tuple[str, list]:
    """The SQL condition on ``games g`` for the slice, and its parameters (every value a
    parameter; a column name only from RANGE_COLUMNS)."""
    variant = source.variant(sl.variant)
    ids = [source.runs.index(r) for r in variant.runs]
    conds, params = [f"g.run IN ({', '.join(map(str, ids))})"], []
    for column, value in (("players", sl.players), ("end_trigger", sl.end_trigger), ("decided_by", sl.decided_by),
                          ("decided_last_round", sl.last_round)):
        if value is not None:
            conds.append(f"g.{column} = ?")
            params.append(value)
    for col, lo, hi in sl.ranges:
        if col not in RANGE_COLUMNS:
            raise AnalysisError(f"cannot bound {col!r}; the numeric columns are {', '.join(RANGE_COLUMNS)}")
        conds.append(f"g.{col} BETWEEN ? AND ?")
        params += [lo, hi]
    if sl.strategy is not None:
        seat = " AND s.seat = ?" if sl.seat is not None else ""
        conds.append(f"EXISTS (SELECT 1 FROM seats s WHERE s.run = g.run AND s.game_id = g.game_id "
                     f"AND s.strategy = ?{seat})")
        params += [sl.strategy] + ([sl.seat] if sl.seat is not None else [])
    if sl.winner is not None:
        conds.append("EXISTS (SELECT 1 FROM seats s WHERE s.run = g.run AND s.game_id = g.game_id "
                     "AND s.win AND s.strategy = ?)")
        params.append(sl.winner)
    return " AND ".join(conds), params


def matching(source: Source, sl: Slice) -> dict[int, np.ndarray]:
    """Per run (its number in ``source.runs``): a bool per game id, the games of the slice."""
    cond, params = where(source, sl)
    got = source.con.cursor().execute(f"SELECT run, game_id FROM games g WHERE {cond}", params).fetchnumpy()
    out = {}
    for i, r in enumerate(source.runs):
        cfg = r.manifest["config"]
        total = int(cfg["games"]) * (int(cfg["players"]) if cfg["seat_rotation"] else 1)
        mask = np.zeros(total, bool)
        mask[got["game_id"][got["run"] == i]] = True
        out[i] = mask
    return out


@dataclass
class Views:
    """Every table of one slice: the report's tables (see :mod:`analysis.tables`) and the
    matching games. ``cards`` and ``spaces`` are None unless asked for (their pass is the
    costliest), ``why`` (the decomposition) likewise; ``fixes`` are the explain folders' own
    tables; ``compare`` the paired comparison of two groups when one was asked for."""

    slice: Slice
    games: int
    adv: pd.DataFrame
    tests: pd.DataFrame
    strat: pd.DataFrame
    shape: pd.DataFrame
    triggers: pd.DataFrame
    margin: pd.DataFrame
    tension: pd.DataFrame
    majorities: pd.DataFrame
    columns: pd.DataFrame
    share: pd.DataFrame
    vp: pd.DataFrame
    table: pd.DataFrame
    info: dict
    cards: pd.DataFrame | None = None
    spaces: pd.DataFrame | None = None
    why: dict | None = None
    fixes: list = field(default_factory=list)
    compare: Comparison | None = None


def views(source: Source, sl: Slice, associations: bool = False, min_effect: float | None = None,
          decomposition: bool = False, compare_with: str | None = None) -> Views:
    """The report's tables over the games of ``sl``. ``associations``: also the card and space
    associations (the card and space tables are read). ``decomposition``: also each seat's
    deviation split by where its games were decided (the report's Why table), and the fixes of
    the explain folders given. ``compare_with``: a group (a variant's label) compared with the
    slice's group, paired by seed (:func:`compare`)."""
    min_effect = MIN_EFFECT if min_effect is None else min_effect
    with source.turn():
        return _slice_views(source, sl, associations, min_effect, decomposition, compare_with)


def _slice_views(source, sl, associations, min_effect, decomposition, compare_with) -> Views:
    variant = source.variant(sl.variant)
    info = {k: v for r in variant.runs for k, v in r.manifest["config"].get("resolved_strategies", {}).items()}
    if variant.cells is not None and Cells.answers(sl) and not associations and not decomposition:
        data = Scan(variant.runs, variant.cells.counts(sl))
    else:
        masks = matching(source, sl)
        local = {variant.runs.index(r): masks[source.runs.index(r)] for r in variant.runs}
        tasks = [t for t in variant.plan(decomposition) if sl.players is None or int(t.config["players"]) == sl.players]
        if associations:
            source.verify_uses()
        data = scan(variant.runs, tasks=tasks, keep=lambda run, ids: local[run][ids], uses=associations,
                    checked=True, read=source.store.read)
    data.counts = {n: c for n, c in data.counts.items() if c.games}
    total = sum(c.games for c in data.counts.values())
    adv, tests = T.seat_advantage(data, min_effect)
    out = Views(sl, total, adv, tests, T.strategy_win_rates(data), T.game_shape(data), T.end_triggers(data),
                T.victory_margin(data), T.tension(data), T.majority_outcomes(data), T.columns_held(data),
                T.majority_share(data), T.vp_by_category(data), games_table(source, sl), info)
    if associations and data.counts:
        out.cards, out.spaces = T.card_value(data, min_effect), T.space_value(data, min_effect)
    if decomposition:
        out.why = T.why(data)
        out.fixes = explained_fixes(source)
    if compare_with is not None:
        out.compare = compare(source, variant.label, compare_with, sl.players, min_effect)
    return out


def explained_fixes(source: Source) -> list[tuple[str, pd.DataFrame]]:
    """The fixes each explain folder given ranked (its summary's own table, read as the report
    reads it: CSV, no code run)."""
    out = []
    for folder in source.explained:
        try:
            out.append((str(folder), read_summary(folder)["fixes"]))
        except (ValueError, OSError) as exc:
            raise AnalysisError(str(exc)) from None
    return out


# ---------------------------------------------------------------------------------------------
# two groups compared
# ---------------------------------------------------------------------------------------------
@dataclass
class Comparison:
    """``evora compare``'s tables of group A against group B, per player count both hold."""

    a: str
    b: str
    tables: dict                       # players -> (table, info) of analysis.variants.compare
    lines: dict                        # players -> the lines evora compare prints


def compare(source: Source, label_a: str, label_b: str, players: int | None = None,
            min_effect: float | None = None) -> Comparison:
    """Group A against group B as ``evora compare`` puts them (its own function,
    :func:`analysis.variants.compare`: paired by seed when both hold the same seeded games),
    for ``players`` or every player count both hold. Over every game of the player count: the
    other conditions of a slice pick games by how they went, which differs between the two
    runs' games of a seed, so they would break the pairing. Kept once computed (a pass over
    both groups' games)."""
    min_effect = MIN_EFFECT if min_effect is None else min_effect
    a, b = source.variant(label_a), source.variant(label_b)
    if a is b:
        raise AnalysisError(f"compare: {label_a!r} with itself; choose two different groups")
    by_a, by_b = (runs_by_count(v.runs, f"compare: {v.label!r}") for v in (a, b))
    counts = sorted(set(by_a) & set(by_b) & ({players} if players else set(by_a)))
    if not counts:
        raise AnalysisError(f"compare: {label_a!r} and {label_b!r} have no player count in common"
                            + (f" at {players} players" if players else ""))
    tables, lines = {}, {}
    for n in counts:
        key = (a.label, b.label, n, min_effect)
        if key not in source._compared:
            da, db = game_datas([by_a[n], by_b[n]])
            table, info = compare_runs(da, db, min_effect=min_effect)
            source._compared[key] = (table, info, compare_lines(table, info, str(by_a[n].out), str(by_b[n].out)))
        table, info, text = source._compared[key]
        tables[n], lines[n] = (table, info), text
    return Comparison(a.label, b.label, tables, lines)


# ---------------------------------------------------------------------------------------------
# the statistics kept per kind of game: a filter on how games went merges them, reading nothing
# ---------------------------------------------------------------------------------------------
@dataclass
class Cells:
    """A group's games split by every condition a slice puts on how a game went (player count,
    end condition, decided by, decided in the final round, the winners' strategies), with the
    report's statistics of each kind of game gathered once (:class:`analysis.aggregate.CountStats`,
    by the report's own pass restricted to them). The statistics are sums over games, and a
    CountStats merges exactly (the report merges its pieces the same way), so a slice of these
    conditions is the merge of its kinds' statistics: the same figures as folding its games,
    in milliseconds instead of a pass over the games."""

    keys: pd.DataFrame                  # a row per kind: players, end_trigger, decided_by, decided_last_round, winners
    stats: list                         # per kind: its CountStats
    empty: dict                         # players -> an empty CountStats of the group's plan
    strategies: list                    # the winners' bit i is strategies[i]

    @staticmethod
    def answers(sl: Slice) -> bool:
        """Whether the slice is one of these conditions only."""
        return sl.strategy is None and not sl.ranges

    def counts(self, sl: Slice) -> dict:
        """Per player count, the merged statistics of the slice's games."""
        k = self.keys
        ok = np.ones(len(k), bool)
        for column, value in (("players", sl.players), ("end_trigger", sl.end_trigger),
                              ("decided_by", sl.decided_by), ("decided_last_round", sl.last_round)):
            if value is not None:
                ok &= (k[column] == value).to_numpy()
        if sl.winner is not None:
            bit = 1 << self.strategies.index(sl.winner) if sl.winner in self.strategies else 0
            ok &= (k["winners"].to_numpy() & bit) != 0
        out = {}
        for i in np.flatnonzero(ok):
            n = int(k["players"].iat[i])
            out.setdefault(n, self.empty[n].empty()).merge(self.stats[i])
        return out


def build_cells(source: Source, label: str | None = None) -> Cells | None:
    """The :class:`Cells` of a group (kept on it; None with more strategies than bits). A pass
    over its games per kind of game, on the blocks already read: done once, in the background,
    after the first page is shown."""
    variant = source.variant(label)
    if variant.cells is not None or kept_cells(source, variant.label):
        return variant.cells
    strategies = source.choices()["strategies"]
    if len(strategies) > 62:
        return None
    local = {source.runs.index(r): i for i, r in enumerate(variant.runs)}
    bits = " ".join(f"WHEN ? THEN {1 << i}" for i in range(len(strategies)))
    con = source.con.cursor()
    kind = "players, end_trigger, decided_by, decided_last_round, winners"
    con.execute(
        f"CREATE OR REPLACE TEMP TABLE kinds AS SELECT g.run, g.game_id, g.players, g.end_trigger, g.decided_by, "
        f"g.decided_last_round, coalesce(w.winners, 0) AS winners FROM games g LEFT JOIN "
        f"(SELECT run, game_id, bit_or(CASE strategy {bits} ELSE 0 END) AS winners FROM seats WHERE win "
        f"GROUP BY run, game_id) w ON w.run = g.run AND w.game_id = g.game_id "
        f"WHERE g.run IN ({', '.join(map(str, local))})", strategies)
    con.execute(f"CREATE OR REPLACE TEMP TABLE kind_keys AS SELECT *, row_number() OVER (ORDER BY {kind}) - 1 AS cell "
                f"FROM (SELECT DISTINCT {kind} FROM kinds)")
    keys = con.execute("SELECT * FROM kind_keys ORDER BY cell").df()
    got = con.execute(f"SELECT k.run, k.game_id, c.cell FROM kinds k JOIN kind_keys c USING ({kind})").fetchnumpy()
    con.execute("DROP TABLE kinds; DROP TABLE kind_keys")
    cell_of = {}
    for run, i in local.items():
        cfg = source.runs[run].manifest["config"]
        of = np.full(int(cfg["games"]) * (int(cfg["players"]) if cfg["seat_rotation"] else 1), -1, np.int64)
        mine = got["run"] == run
        of[got["game_id"][mine]] = got["cell"][mine]
        cell_of[i] = of
    stats = []
    for c in range(len(keys)):
        n = int(keys["players"].iat[c])
        stats.append(None)
        for task in (t for t in variant.tasks if int(t.config["players"]) == n):
            with source.turn(background=True):          # a piece at a time: a filter waits for one at most
                part = scan(variant.runs, tasks=[task], keep=lambda run, ids, c=c: cell_of[run][ids] == c,
                            uses=False, checked=True, read=source.store.read)
            if n in part.counts:
                stats[c] = part.counts[n] if stats[c] is None else stats[c].merge(part.counts[n])
    empty = {int(t.config["players"]): t.count for t in variant.tasks}
    variant.cells = Cells(keys, stats, empty, strategies)
    _keep_cells(source, variant)
    return variant.cells


# the statistics per kind of game are kept in the tool's own cache folder, never in a run folder
# (someone else's folders stay untouched): the next start on the same files answers a filter on
# how games went at once, without reading a game
CELLS_FOLDER = "dashboard"
CELLS_FORMAT = 1            # raised when what is kept changes shape


def _code_key() -> bytes:
    """The sources that gather the statistics (the analysis package and the engine's tables):
    a change to any of them makes the kept statistics stale."""
    h = hashlib.sha256(str(CELLS_FORMAT).encode())
    root = Path(__file__).resolve().parent
    for f in sorted([*root.glob("*.py"), *root.parent.joinpath("evora_sim").glob("*.py")]):
        h.update(f.name.encode() + b"\0" + f.read_bytes())
    return h.digest()


def cells_file(source: Source, variant: Variant) -> Path:
    """Where the :class:`Cells` of ``variant`` are kept: named after the code, the strategies'
    numbering and every block the group's pass reads, each file by its path, size, inode and
    change times (a chunk rewritten or damaged gets a new change time, so it is read again and
    its checksum checked as any new file is)."""
    h = hashlib.sha256(_code_key())
    h.update(repr(source.choices()["strategies"]).encode())
    for t in variant.tasks:
        h.update(f"{Path(t.out).resolve()}|{t.config}".encode())
        for b in t.piece.blocks:
            for table in NEEDED:
                st = os.stat(b.file(t.out, table))
                h.update(f"{b.lo}:{b.hi}:{table}:{st.st_size}:{st.st_ino}:{st.st_mtime_ns}:{st.st_ctime_ns}".encode())
    # beside numba's cache, in the tool's own folder (EVORA_CACHE_DIR, else ~/.cache/evora-sim)
    return Path(NUMBA_CACHE).parent / CELLS_FOLDER / f"cells-{h.hexdigest()[:32]}.pickle"


def kept_cells(source: Source, label: str | None = None) -> bool:
    """Take the group's :class:`Cells` from the cache folder if an earlier start gathered them
    over the same files with the same code; whether it did. A pickle, as numba's cache beside
    it: the folder is the user's own, written by this tool only (a run folder, which may come
    from someone else, is never unpickled)."""
    variant = source.variant(label)
    try:
        keys, stats, strategies = pickle.loads(cells_file(source, variant).read_bytes())
    except Exception:                     # noqa: BLE001  (missing, stale or unreadable: gathered again)
        return False
    for st in stats:
        st.uses = st.empty_like().uses    # not kept: never gathered here (the associations read their games)
    variant.cells = Cells(keys, stats, {int(t.config["players"]): t.count for t in variant.tasks}, strategies)
    return True


def _keep_cells(source: Source, variant: Variant) -> None:
    c = variant.cells
    try:
        f = cells_file(source, variant)
        f.parent.mkdir(parents=True, exist_ok=True)
        stats = [replace(st, uses={}) for st in c.stats]     # empty (see kept_cells): 4 MB of zeros a kind
        write_bytes_atomic(f, pickle.dumps((c.keys, stats, c.strategies), protocol=pickle.HIGHEST_PROTOCOL))
    except OSError:
        pass                              # a cache that cannot be written: gathered again next time


def warm(source: Source) -> None:
    """Work every process does once, done before a filter asks: the seat unfairness's
    Feldman-Cousins band of each player count (about a second of arithmetic the first time, then
    read from the tool's cache folder, see :func:`analysis.fairness._kept`), which the first slice
    near fairness would otherwise wait for."""
    for n in sorted({int(r.manifest["config"]["players"]) for r in source.runs}):
        noncentrality_interval(1.0, n - 1)


def games_table(source: Source, sl: Slice, limit: int = GAMES_SHOWN) -> pd.DataFrame:
    """The first ``limit`` games of the slice (by run and game id): seed, seats' strategies and
    scores, winner, how it ended and was decided, and the ``evora replay`` command that plays it
    again (the run's rules options included)."""
    cond, params = where(source, sl)
    q = (f"SELECT g.run, g.game_id, g.seed, g.players, g.rounds, g.end_trigger, g.decided_by, g.winner_seat, "
         f"list(s.strategy ORDER BY s.seat) AS strategies, list(s.score ORDER BY s.seat) AS scores "
         f"FROM (SELECT * FROM games g WHERE {cond} ORDER BY g.run, g.game_id LIMIT {int(limit)}) g "
         f"JOIN seats s ON s.run = g.run AND s.game_id = g.game_id "
         f"GROUP BY ALL ORDER BY g.run, g.game_id")
    df = source.con.cursor().execute(q, params).df()
    rows = []
    for _, r in df.iterrows():
        run = source.runs[int(r["run"])]
        names = [str(x) for x in r["strategies"]]
        rows.append({"run_no": int(r["run"]), "run": str(run.out), "game_id": int(r["game_id"]), "seed": int(r["seed"]),
                     "n_players": int(r["players"]), "strategies": ",".join(names),
                     "scores": " ".join(str(int(x)) for x in r["scores"]), "winner_seat": int(r["winner_seat"]),
                     "rounds": int(r["rounds"]), "end_trigger": r["end_trigger"], "decided_by": r["decided_by"],
                     "replay": replay_command(run.manifest, int(r["players"]), int(r["seed"]), names)})
    return pd.DataFrame(rows, columns=["run_no", "run", "game_id", "seed", "n_players", "strategies", "scores", "winner_seat",
                                       "rounds", "end_trigger", "decided_by", "replay"])


def replay_text(source: Source, run: int, game_id: int, game_log) -> str:
    """The ``evora replay`` log of game ``game_id`` of run number ``run`` (of ``source.runs``), as
    the command prints it, preceded by the command: played again from its seed with the players
    its manifest recorded (no custom Python strategy loaded from a folder, see
    :func:`evora_sim.sample_game.recorded_players`). AnalysisError if there is no such game or it
    cannot be replayed from the folder. ``game_log`` (``evora_sim.sample_game.game_log``) is passed
    in by the command: the statistics layer reads tables and plays no game (.importlinter)."""
    if not 0 <= run < len(source.runs):
        raise AnalysisError(f"no run number {run}")
    got = source.con.cursor().execute(
        "SELECT g.seed, g.players, list(s.strategy ORDER BY s.seat) FROM games g JOIN seats s "
        "ON s.run = g.run AND s.game_id = g.game_id WHERE g.run = ? AND g.game_id = ? GROUP BY ALL",
        [int(run), int(game_id)]).fetchone()
    if got is None:
        raise AnalysisError(f"run {source.runs[run].out} has no game {game_id}")
    seed, n, names = int(got[0]), int(got[1]), [str(x) for x in got[2]]
    m = source.runs[run].manifest
    try:
        lines = game_log(m, n, seed, names)
    except (StrategyError, ValueError) as exc:
        raise AnalysisError(f"game {game_id} of {source.runs[run].out} cannot be replayed from the run folder: "
                            f"{exc}") from None
    return "\n".join([f"$ {replay_command(m, n, seed, names)}", "", *lines]) + "\n"


__all__ = ["Slice", "Source", "Variant", "Views", "Cells", "Comparison", "open_source", "views", "matching", "where",
           "games_table", "warm", "build_cells", "kept_cells", "run_folders", "compare", "replay_text", "RANGE_COLUMNS", "RunError"]
