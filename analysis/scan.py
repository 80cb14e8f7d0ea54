"""One pass over runs: every piece read once, block by block, into the statistics of
:mod:`analysis.aggregate`; here, or on a Dask cluster where the run folders lie.

The scanning layer is plain ``pyarrow.parquet`` with numpy, chosen by measurement
(``scripts/bench_scan.py``): one read of a block serves every statistic, a card row finds its
seat row by position (a block's games are contiguous) instead of a join, each piece's bytes are
checked against the manifest by the process that reads them, and a piece is a task as it stands
on a cluster. Measured on the 1,000,000-game run p4_field_1m (50 chunk files; seat wins, per-seed
wins and the card-use x win cells, the costliest join): pyarrow per file 1.4 s at 216 MB peak,
pyarrow.dataset 2.0 s at 421 MB, DuckDB 1.2 s at 272 MB (and a new dependency), dask.dataframe
7.1 s at 481 MB (its merge). DuckDB's speed edge is within noise; pyarrow's memory is the lowest.

With ``backend="dask"`` each piece is a task: the worker reads the piece from the run folder at
the same path (a file system the workers share, as a cluster's run folders are), checks it,
computes its statistics and returns them (kilobytes to a few megabytes, never the tables);
partial statistics are merged pairwise on the cluster and only the total comes back.
"""
from __future__ import annotations

import uuid
from dataclasses import dataclass, field, replace
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq

from evora_sim.cluster import connect_scheduler
from evora_sim.manifest import RunError
from evora_sim.ranking import DECIDED_BY
from evora_sim.rules import validate
from evora_sim.storage import Piece, RunResult, pieces, read_block, verify

from .aggregate import (CARD_NAMES, CATEGORIES, MAJORITY_CATEGORIES, TENSION_COLUMNS, CountStats, GameBlock, SeatBlock,
                        SeedSums, UseRows)
from .explain_stats import GAME_FACTS, SEAT_FACTS
from .playstates import PLAY_STATES
from .playstates import SEAT_COLUMNS as TURN_COLUMNS


class AnalysisError(RunError):
    """Run folders that cannot be analysed as asked (one clear message)."""


# ---------------------------------------------------------------------------------------------
# the plan: what every task needs to know, small enough to ship to a worker
# ---------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class Present:
    """The seeds of a run that are analysed (its finished chunks), as sorted ranges."""

    starts: np.ndarray
    ends: np.ndarray

    @classmethod
    def of(cls, run: RunResult) -> "Present":
        cfg = run.manifest["config"]
        size, seeds = cfg["chunk_size"], cfg["games"]
        starts, ends = [], []
        for k in sorted(run.done_chunks()):
            lo, hi = k * size, min(seeds, (k + 1) * size)
            if ends and ends[-1] == lo:
                ends[-1] = hi
            else:
                starts.append(lo)
                ends.append(hi)
        return cls(np.array(starts, np.int64), np.array(ends, np.int64))

    @property
    def count(self) -> int:
        return int((self.ends - self.starts).sum())

    def below(self, s: np.ndarray) -> np.ndarray:
        """How many analysed seeds are smaller than each of ``s``."""
        lengths = self.ends - self.starts
        before = np.concatenate([[0], np.cumsum(lengths)])
        i = np.searchsorted(self.starts, s, side="right") - 1
        inside = np.minimum(s - self.starts[np.maximum(i, 0)], lengths[np.maximum(i, 0)])
        return np.where(i >= 0, before[np.maximum(i, 0)] + inside, 0)

    def holds(self, s: np.ndarray) -> np.ndarray:
        i = np.searchsorted(self.starts, s, side="right") - 1
        return (i >= 0) & (s < self.ends[np.maximum(i, 0)])


@dataclass(frozen=True)
class CountPlan:
    """What the statistics of one player count need before the first block."""

    n: int
    strategies: tuple
    rules: dict
    rotated: bool
    tension: bool
    spaces: int
    present: tuple                  # (run index, Present) of every run of this player count
    explained: bool = False         # every run records where its games were decided
    timed: bool = False             # every run records the state of each card play (analysis.playstates)

    @property
    def clusters(self) -> int:
        return sum(p.count for _, p in self.present)

    def empty(self) -> CountStats:
        return CountStats(self.n, list(self.strategies), self.clusters, self.rules, self.rotated, self.tension,
                          spaces=self.spaces, explained=self.explained, timed=self.timed)

    def cluster(self, run: int, seeds: np.ndarray) -> np.ndarray:
        """The cluster number of each seed of run ``run``: its place among the analysed seeds of
        this player count in the order (seed, run)."""
        out = np.zeros(len(seeds), np.int64)
        for r, present in self.present:
            out += present.below(seeds)
            if r < run:
                out += present.holds(seeds)
        return out


@dataclass(frozen=True)
class Task:
    """One piece of one run, and what to gather from it."""

    out: str
    config: dict
    run: int
    piece: Piece
    count: CountPlan | None          # the report's statistics, or None
    sums: tuple | None               # this run's strategies for its per-seed sums, or None
    tension: bool


# ---------------------------------------------------------------------------------------------
# reading a block
# ---------------------------------------------------------------------------------------------
def _codes(column, names) -> np.ndarray:
    """Codes into ``names`` of a dictionary-encoded (or plain string) column."""
    lookup = {name: i for i, name in enumerate(names)}
    parts = []
    for chunk in column.chunks:
        if pa.types.is_dictionary(chunk.type):
            values = np.asarray([lookup.get(str(v), -1) for v in chunk.dictionary.to_pylist()], np.int64)
            parts.append(values[chunk.indices.to_numpy(zero_copy_only=False)] if len(values) else
                         np.full(len(chunk), -1, np.int64))
        else:
            parts.append(np.array([lookup.get(str(v), -1) for v in chunk.to_pylist()], np.int64))
    return np.concatenate(parts) if parts else np.zeros(0, np.int64)


def _names(column) -> tuple[np.ndarray, list]:
    """A dictionary-encoded (or plain string) column as codes into the list of its values."""
    seen: dict = {}
    parts = []
    for chunk in column.chunks:
        if hasattr(chunk, "dictionary"):
            mapped = np.array([seen.setdefault(str(v), len(seen)) for v in chunk.dictionary.to_pylist()], np.int64)
            parts.append(mapped[chunk.indices.to_numpy(zero_copy_only=False)])
        else:
            parts.append(np.array([seen.setdefault(str(v), len(seen)) for v in chunk.to_pylist()], np.int64))
    return (np.concatenate(parts) if parts else np.zeros(0, np.int64)), list(seen)


def _np(table, name) -> np.ndarray:
    return table.column(name).to_numpy()


def _seat_block(task: Task, block, cluster_of) -> tuple[SeatBlock, np.ndarray, np.ndarray]:
    """The block's seat rows as (games, n) arrays, a game's seats 0..n-1 in a row; the codes of
    the run's own strategies (for its per-seed sums); and each game's id, in that order."""
    n = task.config["players"]
    report = task.count is not None
    cats = CATEGORIES if report else MAJORITY_CATEGORIES
    explained = report and task.count.explained
    timed = report and task.count.timed
    cols = ["seat", "strategy", "score", "win", *cats] + (["rank"] if report else []) + (
        list(SEAT_FACTS) if explained else []) + (list(TURN_COLUMNS) if timed else [])
    t = read_block(Path(task.out), task.config, block, "seats", cols)
    games = block.hi - block.lo
    gid, seat = _np(t, "game_id"), _np(t, "seat")
    if len(seat) == games * n and (seat.reshape(-1, n) == np.arange(n)).all() \
            and (gid.reshape(-1, n) == gid[::n, None]).all():
        order = None                 # as the runner writes them: already in blocks of n
        ids = gid[::n]
    else:
        pos = (gid - block.lo) * n + seat.astype(np.int64)
        if not ((seat >= 0) & (seat < n)).all() or not (np.bincount(pos, minlength=games * n) == 1).all():
            raise AnalysisError(f"{block.name(Path(task.out), 'seats')} does not hold seats 0 to {n - 1} "
                                "once for every game")
        order = np.empty(games * n, np.int64)
        order[pos] = np.arange(len(pos))
        ids = np.arange(block.lo, block.hi)

    def grid(values):
        values = np.asarray(values)
        return (values if order is None else values[order]).reshape(games, n)

    names = task.count.strategies if report else task.sums
    codes = _codes(t.column("strategy"), names)
    if (codes < 0).any():
        raise AnalysisError(f"{block.name(Path(task.out), 'seats')} holds a strategy its manifest does not name")
    win = t.column("win").to_numpy(zero_copy_only=False)
    sb = SeatBlock(grid(codes), grid(_np(t, "score")), grid(_np(t, "rank")) if report else None,
                   grid(win), {c: grid(_np(t, c)) for c in cats}, cluster_of(ids),
                   grid(_np(t, SEAT_FACTS[0])) if explained else None,
                   {c: grid(_np(t, c)) for c in TURN_COLUMNS} if timed else None)
    run_codes = None
    if task.sums is not None:
        run_codes = sb.strategy if not report else np.asarray(
            [task.sums.index(s) if s in task.sums else -1 for s in task.count.strategies], np.int64)[sb.strategy]
    return sb, run_codes, ids


def _game_block(task: Task, block, ids: np.ndarray, with_seed: bool) -> tuple[GameBlock, np.ndarray | None]:
    """The block's game rows in the order of ``ids`` (the seat block's games)."""
    explained = task.count is not None and task.count.explained
    cols = ["rounds", "turns", "end_trigger"] + (list(TENSION_COLUMNS) if task.tension else [])
    cols += ["decided_by", "leader_at_trigger", "trigger_seat"] if explained else []
    cols += ["seed"] if with_seed else []
    t = read_block(Path(task.out), task.config, block, "games", cols)
    where = np.empty(block.hi - block.lo, np.int64)
    where[_np(t, "game_id") - block.lo] = np.arange(t.num_rows)
    order = where[ids - block.lo]
    ends, end_names = _names(t.column("end_trigger"))
    tension = None
    if task.tension:
        tension = {c: t.column(c).to_numpy(zero_copy_only=False)[order] for c in TENSION_COLUMNS}
    facts = None
    if explained:
        decided = _codes(t.column("decided_by"), DECIDED_BY)
        if (decided < 0).any():
            raise AnalysisError(f"{block.name(Path(task.out), 'games')} holds a decided_by other than "
                                f"{', '.join(DECIDED_BY)}")
        facts = {"decided_by": decided[order],
                 "leader_at_trigger": _np(t, "leader_at_trigger")[order], "trigger_seat": _np(t, "trigger_seat")[order]}
    gb = GameBlock(_np(t, "rounds")[order], _np(t, "turns")[order], ends[order], end_names, tension, facts)
    return gb, (_np(t, "seed")[order] if with_seed else None)


def _use_rows(task: Task, block, slot: np.ndarray) -> dict:
    """The block's card and space rows; ``slot``: each game's place in the seat block."""
    out = Path(task.out)
    timed = list(PLAY_STATES) if task.count.timed else []
    cards = read_block(out, task.config, block, "cards", ["seat", "card", "plays", "vp", "temple_uses", *timed])
    spaces = read_block(out, task.config, block, "spaces", ["seat", "space", "uses"])
    return {
        "cards": UseRows(slot[_np(cards, "game_id") - block.lo], _np(cards, "seat"),
                         _codes(cards.column("card"), CARD_NAMES), _np(cards, "plays"),
                         {"vp": _np(cards, "vp"), "temple_uses": _np(cards, "temple_uses"),
                          **{c: _np(cards, c) for c in timed}}),
        "spaces": UseRows(slot[_np(spaces, "game_id") - block.lo], _np(spaces, "seat"),
                          _np(spaces, "space"), _np(spaces, "uses")),
    }


def _kept(seats: SeatBlock, games: GameBlock, ids: np.ndarray, keep: np.ndarray):
    """The games of a block that ``keep`` (a bool per game, in the block's order) selects."""
    keep = np.flatnonzero(keep)          # positions once: a dozen arrays are taken by them
    sub = lambda d: None if d is None else {k: v[keep] for k, v in d.items()}     # noqa: E731
    seats = SeatBlock(seats.strategy[keep], seats.score[keep], None if seats.rank is None else seats.rank[keep],
                      seats.win[keep], sub(seats.cats), seats.cluster[keep],
                      None if seats.before is None else seats.before[keep], sub(seats.turns))
    games = GameBlock(games.rounds[keep], games.turns[keep], games.end_trigger[keep], games.end_names,
                      sub(games.tension), sub(games.facts))
    return seats, games, ids[keep]


def _rows_of(rows: UseRows, ok: np.ndarray) -> UseRows:
    return UseRows(rows.game[ok], rows.seat[ok], rows.column[ok], rows.count[ok],
                   {e: v[ok] for e, v in rows.extras.items()})


def read_games(task: Task, block, with_seed: bool) -> tuple:
    """One block's seat and game rows as the statistics take them: (SeatBlock, the run's own
    strategy codes or None, game ids, GameBlock, seeds or None), games in the same order."""
    rot = task.config["players"] if task.config["seat_rotation"] else 1

    def cluster_of(ids):
        return task.count.cluster(task.run, ids // rot) if task.count is not None else ids // rot

    seats, run_codes, ids = _seat_block(task, block, cluster_of)
    games, seed = _game_block(task, block, ids, with_seed)
    return seats, run_codes, ids, games, seed


def scan_piece(task: Task, partial: dict | None = None, keep=None, uses: bool = True, checked: bool = False,
               read=None) -> dict:
    """Fold one piece into ``partial`` ({"counts": {n: CountStats}, "sums": {run: SeedSums}};
    a new one when None) and return it. Checks the piece's files first.
    ``keep(run, ids)``: a bool per game id, the games folded (a slice of the run, as the dashboard
    asks; None: every game); a block with none of them is not read. ``uses``: whether the card
    and space tables are read (the costliest part; without them their cells stay empty).
    ``checked``: the piece's checksums were verified before (the dashboard checks them once, on
    opening, not at every slice); each block's games are still checked as they are read.
    ``read``: how a block's games are read (:func:`read_games`, the default; the dashboard keeps
    what it read in memory and answers the next slice from there)."""
    cfg = task.config
    n, rot = cfg["players"], cfg["players"] if cfg["seat_rotation"] else 1
    partial = partial if partial is not None else {"counts": {}, "sums": {}}
    if not checked:
        verify(Path(task.out), task.piece)  # every table, read or not: a damaged run is named whole
    count = sums = None
    if task.count is not None:
        count = partial["counts"].setdefault(n, task.count.empty())
    if task.sums is not None:
        sums = partial["sums"].setdefault(task.run, SeedSums(n, list(task.sums)))
    read = read_games if read is None else read
    for block in task.piece.blocks:
        if keep is not None and not keep(task.run, np.arange(block.lo, block.hi)).any():
            continue
        seats, run_codes, ids, games, seed = read(task, block, sums is not None)
        chosen = None if keep is None else keep(task.run, ids)
        if chosen is not None and not chosen.all():
            seats, games, ids = _kept(seats, games, ids, chosen)
            seed = None if seed is None else seed[chosen]
            run_codes = None if run_codes is None else run_codes[chosen]
        if count is not None:
            slot = np.full(block.hi - block.lo, -1, np.int64)
            slot[ids - block.lo] = np.arange(len(ids))
            found = _use_rows(task, block, slot) if uses else {}
            if chosen is not None:
                found = {k: _rows_of(r, r.game >= 0) for k, r in found.items()}
            count.add(seats, games, found)
        if sums is not None:
            sums.add(ids // rot, seed, run_codes, seats, games.rounds.astype(np.int64))
    return partial


def merge(a: dict, b: dict) -> dict:
    """Two partial results as one."""
    for n, c in b["counts"].items():
        if n in a["counts"]:
            a["counts"][n].merge(c)
        else:
            a["counts"][n] = c
    for r, s in b["sums"].items():
        if r in a["sums"]:
            a["sums"][r].merge(s)
        else:
            a["sums"][r] = s
    return a


# ---------------------------------------------------------------------------------------------
# the pass
# ---------------------------------------------------------------------------------------------
@dataclass
class Scan:
    """The statistics of ``runs``: per player count (``counts``) and per run (``sums``, the
    per-seed sums of the headline metrics, for the runs asked)."""

    runs: list
    counts: dict = field(default_factory=dict)
    sums: dict = field(default_factory=dict)

    @property
    def player_counts(self) -> list[int]:
        return sorted(self.counts)

    def rules(self, n: int | None = None) -> dict:
        """The rules of the runs (of ``n`` players), completed with the keys added since a run was
        played, at their neutral values (``players.start_vp``, the [experiment] table): an older
        run then reads as the default rules it played, not as a variant."""
        for run in self.runs:
            if n is None or run.manifest["config"]["players"] == n:
                return validate(run.manifest["rules"]).data
        return validate(self.runs[0].manifest["rules"]).data


def has_column(run: RunResult, table: str, column: str) -> bool:
    """Whether every finished file of the run's ``table`` holds ``column`` (runs of earlier
    versions lack the tension columns), from the Parquet footers."""
    found = pieces(run.out, run.manifest)
    try:
        return bool(found) and all(column in pq.read_schema(p.blocks[0].file(run.out, table)).names for p in found)
    except (OSError, pa.ArrowException):
        return False            # a damaged file: the pass's own check (storage.verify) names it


def _tension(run: RunResult) -> bool:
    return all(has_column(run, "games", c) for c in TENSION_COLUMNS)


def has_facts(run: RunResult) -> bool:
    """Whether the run's tables record where each game was decided (runs of earlier versions do
    not: analysis.explain_stats's decomposition needs them)."""
    return (all(has_column(run, "games", c) for c in GAME_FACTS)
            and all(has_column(run, "seats", c) for c in SEAT_FACTS))


def has_play_states(run: RunResult) -> bool:
    """Whether the run's tables record the state of each card play (runs of earlier versions do
    not: analysis.playstates needs them)."""
    return (all(has_column(run, "cards", c) for c in PLAY_STATES)
            and all(has_column(run, "seats", c) for c in TURN_COLUMNS))


def plan(runs: list[RunResult], report: bool = True, sums=()) -> list[Task]:
    """The tasks of a pass: every piece of every run; ``report``: the player counts' statistics,
    ``sums``: the runs (indexes) whose per-seed sums are wanted."""
    tension = [_tension(r) for r in runs]
    facts = [has_facts(r) for r in runs] if report else []
    timed = [has_play_states(r) for r in runs] if report else []
    plans = {}
    if report:
        by_n: dict[int, list[int]] = {}
        for i, r in enumerate(runs):
            by_n.setdefault(int(r.manifest["config"]["players"]), []).append(i)
        for n, idx in by_n.items():
            rules = runs[idx[0]].manifest["rules"]
            strategies = tuple(sorted({s for i in idx for s in runs[i].manifest["config"]["strategies"]}))
            plans[n] = CountPlan(n, strategies, rules, all(runs[i].manifest["config"]["seat_rotation"] for i in idx),
                                 all(tension[i] for i in idx), len(rules["board"]["spaces"]),
                                 tuple((i, Present.of(runs[i])) for i in idx), all(facts[i] for i in idx),
                                 all(timed[i] for i in idx))
    tasks = []
    for i, run in enumerate(runs):
        cfg = run.manifest["config"]
        own = tuple(sorted(set(cfg["strategies"]))) if i in set(sums) else None
        count = plans.get(int(cfg["players"]))
        if count is None and own is None:
            continue
        for piece in pieces(run.out, run.manifest):
            tasks.append(Task(str(run.out), cfg, i, piece, count, own, count is not None and count.tension))
    return tasks


def scan(runs: list[RunResult], report: bool = True, sums=(), backend: str = "local",
         scheduler: str | None = None, tasks: list[Task] | None = None, keep=None, uses: bool = True,
         checked: bool = False, read=None) -> Scan:
    """Read ``runs`` once (see the module). ``backend="dask"``: on the cluster at ``scheduler``.
    ``tasks``: the plan, when made before (:func:`plan`); ``keep``, ``uses``, ``checked`` and
    ``read``: see :func:`scan_piece` (here only)."""
    tasks = plan(runs, report, sums) if tasks is None else tasks
    if backend == "dask":
        partial = _on_cluster(tasks, scheduler)
    else:
        partial = {"counts": {}, "sums": {}}
        for task in tasks:
            scan_piece(task, partial, keep, uses, checked, read)
    return Scan(runs, partial["counts"], partial["sums"])


def _on_cluster(tasks: list[Task], scheduler: str | None) -> dict:
    """Each task on a worker; the partial results merged pairwise on the cluster."""

    if not scheduler:
        raise AnalysisError("--backend dask needs --scheduler ADDRESS (for example tcp://HOST:8786)")
    client = connect_scheduler(scheduler)
    token = uuid.uuid4().hex
    # a worker runs in its own folder: it reads the runs by their absolute paths
    tasks = [replace(t, out=str(Path(t.out).absolute())) for t in tasks]
    try:
        futures = [client.submit(scan_piece, t, key=f"evora-scan-{i}-{token}", pure=False)
                   for i, t in enumerate(tasks)]
        level = 0
        while len(futures) > 1:
            nxt = [client.submit(merge, futures[i], futures[i + 1], key=f"evora-merge-{level}-{i}-{token}",
                                 pure=False) for i in range(0, len(futures) - 1, 2)]
            if len(futures) % 2:
                nxt.append(futures[-1])
            futures, level = nxt, level + 1
        return futures[0].result() if futures else {"counts": {}, "sums": {}}
    finally:
        client.close()
