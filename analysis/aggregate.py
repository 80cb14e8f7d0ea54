"""The sufficient statistics of a run's games, gathered block by block.

Everything the report, ``evora compare`` and the sweep summary show is computed from these, so a
run of any size is read once, a block at a time (:mod:`analysis.scan`), and nothing bigger than
a block is ever held. Each statistic keeps only what it needs:

- **counts and histograms** (:class:`Hist`, integer values per group): win counts, every scoring
  category, the score, the margin, column majorities held, rounds, turns and the tension figures,
  per cell of (strategy, seat) or per game. Means, standard deviations and every quantile the
  tables show are exact functions of a histogram, so they equal the row-level figures;
- **float moments** (:class:`Moments`: count, mean, sum of squared deviations, merged by Chan's
  formula) for the one real-valued per-seat figure, the majority share of a seat's score;
- **card-use x win cells**: per card (and Construction Site space), seed group, strategy and seat,
  the seat-games that used it and their wins. The regression and its cluster-robust variance
  work on these cells (:func:`analysis.stats.logistic_effect`);
- **per-seed arrays**, the only part that grows with the run, stated and compact: the win count
  of every seed and seat (``uint8``, one byte per seat per seed: 4 MB for 4 million rotated 4-player
  games), which the seat intervals and the fairness measure need, and for the headline metrics
  of ``compare`` and ``sweep`` (:class:`SeedSums`) about 40 bytes per seed as gathered (their
  float forms in :mod:`analysis.variants` bring ``compare``'s peak to ~150). The bootstrap of the
  ratings and the card-value variances pool whole seeds into at most 200 and 2,000 groups, as
  they always did.

A *cluster* is a seed of one run: its games under every seat rotation share its card stacks. As
the in-memory analysis did, clusters of one player count are numbered in the order (seed, run),
so the pooled groups (cluster number modulo the group count) are the same.

:class:`CountStats` holds one player count's statistics, :class:`SeedSums` one run's per-seed
sums; both merge (``merge``), so partial statistics computed where the data lies (a cluster
worker) are combined into the same totals as one pass here.
"""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from evora_sim import layout as L

from .explain_stats import SeatParts, decisive_turns, game_causes
from .fairness import distinct_rows
from .playstates import PlayStates

CATEGORIES = list(L.BREAKDOWN_NAMES)
MAJORITY_CATEGORIES = list(L.MAJORITY_NAMES)
HEIGHT_KEYS = {"vp_height_1": "h1", "vp_height_2": "h2", "vp_height_3": "h3",
               "vp_height_4": "h4", "vp_capitals": "capitals"}
OUTCOMES = ("outright", "tied", "white or unclaimed")
CARD_NAMES = list(L.EFFECT_NAMES + L.ITILE_NAMES)
TENSION_COLUMNS = ("lead_changes", "comeback", "winner_led_from", "decided_last_round")
BOOT_GROUPS = 200                # seed groups of the ratings' bootstrap
CLUSTER_GROUPS = 2000            # seed groups for the card and space value variances
HELD_CAP = 99                    # column majorities held, capped for the by-group distribution


# ---------------------------------------------------------------------------------------------
# histograms and moments
# ---------------------------------------------------------------------------------------------
class Hist:
    """Counts of integer values per group: ``counts[group, value - lo]``; grows to fit."""

    __slots__ = ("lo", "counts")

    def __init__(self, groups: int = 1):
        self.lo = 0
        self.counts = np.zeros((groups, 0), dtype=np.int64)

    @property
    def groups(self) -> int:
        return self.counts.shape[0]

    @property
    def axis(self) -> np.ndarray:
        return np.arange(self.lo, self.lo + self.counts.shape[1])

    def add(self, values, codes=None) -> None:
        values = np.asarray(values).reshape(-1)
        if not len(values):
            return
        vmin, vmax = int(values.min()), int(values.max())
        width = vmax - vmin + 1
        flat = values.astype(np.int64) - vmin
        if codes is not None:
            flat = np.asarray(codes, dtype=np.int64).reshape(-1) * width + flat
        part = np.bincount(flat, minlength=self.groups * width).reshape(self.groups, width)
        self._add(vmin, part)

    def _add(self, lo: int, part: np.ndarray) -> None:
        if not part.shape[1]:
            return
        if not self.counts.shape[1]:
            self.lo, self.counts = lo, part.astype(np.int64, copy=True)
            return
        new_lo = min(self.lo, lo)
        new_hi = max(self.lo + self.counts.shape[1], lo + part.shape[1])
        if (new_lo, new_hi) != (self.lo, self.lo + self.counts.shape[1]):
            grown = np.zeros((self.groups, new_hi - new_lo), dtype=np.int64)
            grown[:, self.lo - new_lo:self.lo - new_lo + self.counts.shape[1]] = self.counts
            self.lo, self.counts = new_lo, grown
        self.counts[:, lo - self.lo:lo - self.lo + part.shape[1]] += part

    def merge(self, other: "Hist") -> None:
        self._add(other.lo, other.counts)

    def trimmed(self) -> "Hist":
        """The same counts on the axis from the smallest to the largest value seen."""
        seen = np.flatnonzero(self.counts.sum(axis=0))
        out = Hist(self.groups)
        if len(seen):
            out.lo = self.lo + int(seen[0])
            out.counts = self.counts[:, seen[0]:seen[-1] + 1].copy()
        return out

    def total(self) -> "Hist":
        """All groups as one."""
        out = Hist(1)
        out.lo, out.counts = self.lo, self.counts.sum(axis=0, keepdims=True)
        return out

    def select(self, rows) -> "Hist":
        """Groups ``rows`` (an index array) summed, or each kept apart with a 2-d index."""
        out = Hist(1)
        out.lo, out.counts = self.lo, self.counts[np.asarray(rows)].sum(axis=0, keepdims=True)
        return out

    def regroup(self, groups: np.ndarray, n_groups: int) -> "Hist":
        """Groups summed into new groups: old group i goes to ``groups[i]``."""
        out = Hist(n_groups)
        out.lo = self.lo
        out.counts = np.zeros((n_groups, self.counts.shape[1]), dtype=np.int64)
        np.add.at(out.counts, np.asarray(groups), self.counts)
        return out

    def n(self) -> np.ndarray:
        return self.counts.sum(axis=1)

    def moments(self):
        """Per group: mean, standard deviation (ddof 1) and count; NaN where undefined."""
        x = self.axis.astype(float)
        n = self.n().astype(float)
        with np.errstate(invalid="ignore", divide="ignore"):
            mean = self.counts @ x / n
            var = ((x[None, :] - mean[:, None]) ** 2 * self.counts).sum(axis=1) / (n - 1)
        return mean, np.sqrt(np.where(n > 1, var, np.nan)), n

    def percentile(self, qs, group: int = 0) -> np.ndarray:
        """``np.percentile`` (linear interpolation) of group ``group``'s values, ``qs`` in %."""
        counts = self.counts[group]
        total = int(counts.sum())
        cum = np.cumsum(counts)
        pos = (total - 1) * np.asarray(qs, dtype=float) / 100.0
        below = np.floor(pos).astype(np.int64)
        frac = pos - below
        ax = self.axis
        v0 = ax[np.searchsorted(cum, below, side="right")].astype(float)
        v1 = ax[np.searchsorted(cum, np.minimum(below + 1, total - 1), side="right")].astype(float)
        return np.where(frac >= 0.5, v1 - (v1 - v0) * (1 - frac), v0 + (v1 - v0) * frac)

    def max(self, group: int = 0) -> int:
        seen = np.flatnonzero(self.counts[group])
        return int(self.lo + seen[-1])

    def count(self, value: int, group: int = 0) -> int:
        i = value - self.lo
        return int(self.counts[group, i]) if 0 <= i < self.counts.shape[1] else 0

    def count_at_most(self, value: int, group: int = 0) -> int:
        return int(self.counts[group, :max(0, value - self.lo + 1)].sum())


@dataclass
class Moments:
    """Count, mean and sum of squared deviations of real values, merged without losing
    precision (Chan, Golub and LeVeque)."""

    n: int = 0
    mean: float = 0.0
    m2: float = 0.0

    def add(self, values: np.ndarray) -> None:
        if len(values):
            m = float(values.mean())
            self.merge(Moments(len(values), m, float(((values - m) ** 2).sum())))

    def merge(self, other: "Moments") -> None:
        if not other.n:
            return
        n = self.n + other.n
        delta = other.mean - self.mean
        self.mean += delta * other.n / n
        self.m2 += other.m2 + delta * delta * self.n * other.n / n
        self.n = n

    @property
    def sd(self) -> float:
        return float(np.sqrt(self.m2 / (self.n - 1))) if self.n > 1 else float("nan")


def row_any(a: np.ndarray) -> np.ndarray:
    """``a.any(axis=1)`` of a (games, n) bool array, a column at a time: numpy's reduction along a
    last axis of a few seats is several times slower, and every block (every dashboard slice)
    goes through here."""
    out = a[:, 0].copy()
    for j in range(1, a.shape[1]):
        out |= a[:, j]
    return out


def row_sum(a: np.ndarray) -> np.ndarray:
    """``a.sum(axis=1)`` (as int64) of a (games, n) integer or bool array, a column at a time
    (see :func:`row_any`)."""
    out = a[:, 0].astype(np.int64)
    for j in range(1, a.shape[1]):
        out += a[:, j]
    return out


def score_margin(scores: np.ndarray) -> np.ndarray:
    """Own score minus the best other seat's score in the same game; ``scores`` (games, n)."""
    scores = scores.astype(np.int32)
    top2 = np.sort(scores, axis=1)[:, -2:]
    other = np.where(scores == top2[:, 1:2], top2[:, 0:1], top2[:, 1:2])
    return scores - other


# ---------------------------------------------------------------------------------------------
# a block of games, as arrays
# ---------------------------------------------------------------------------------------------
@dataclass
class SeatBlock:
    """The seat rows of a block's games, as (games, n) arrays ordered by game and seat."""

    strategy: np.ndarray             # codes into the player count's strategy names
    score: np.ndarray
    rank: np.ndarray
    win: np.ndarray                  # bool
    cats: dict                       # scoring category -> (games, n) VP
    cluster: np.ndarray              # (games,) the cluster number of each game's seed
    before: np.ndarray | None = None  # (games, n) the leader before each seat's turn after the trigger
    turns: dict | None = None        # turns_leading -> (games, n), or None (an older run)

    @property
    def n(self) -> int:
        return self.score.shape[1]


@dataclass
class GameBlock:
    """The game rows of a block, in the same order as its :class:`SeatBlock`."""

    rounds: np.ndarray
    turns: np.ndarray
    end_trigger: np.ndarray          # codes into ``end_names``
    end_names: list
    tension: dict | None = None      # TENSION_COLUMNS -> (games,), or None (an older run)
    facts: dict | None = None        # where decided (analysis.explain_stats): decided_by codes, leader_at_trigger,
                                     # trigger_seat -> (games,), or None (an older run)


@dataclass
class UseRows:
    """Rows of the cards or spaces table: game (index into the block), seat, column (card or
    space), the count that makes a seat a user (plays, uses) and other sums (VP, Temple uses)."""

    game: np.ndarray
    seat: np.ndarray
    column: np.ndarray
    count: np.ndarray
    extras: dict = field(default_factory=dict)


# ---------------------------------------------------------------------------------------------
# one player count
# ---------------------------------------------------------------------------------------------
@dataclass
class Exposure:
    """Card-use (or space-use) x win cells of one player count: per column, seed group and cell
    of (strategy, seat), the seat-games that used it (``n1``) and their wins (``w1``); the
    number of times used and other sums per column."""

    columns: int
    extras: tuple
    w1: np.ndarray
    n1: np.ndarray
    times: np.ndarray
    sums: dict
    added: bool = False             # any use added: a pass without the use tables adds none

    @classmethod
    def empty(cls, columns: int, groups: int, cells: int, extras=()) -> "Exposure":
        # two zeros, not a copy: the system hands out zero pages untouched until written, so a
        # pass that reads no use table (every slice but the associations) pays nothing for them
        shape = (columns, groups, cells)
        return cls(columns, tuple(extras), np.zeros(shape, np.int64), np.zeros(shape, np.int64),
                   np.zeros(columns, np.int64), {e: np.zeros(columns, np.int64) for e in extras})

    def merge(self, other: "Exposure") -> None:
        if not other.added:                  # all zeros (megabytes each): nothing to add
            return
        self.added = True
        self.w1 += other.w1
        self.n1 += other.n1
        self.times += other.times
        for e in self.extras:
            self.sums[e] += other.sums[e]


@dataclass
class CountStats:
    """Every statistic of one player count (see the module). ``strategies``: the count's
    strategy names, sorted; cells are ``strategy * n + seat``."""

    n: int
    strategies: list
    clusters: int                    # seeds (of every run of this count) analysed
    rules: dict
    rotated: bool
    tension: bool
    cards: int = len(CARD_NAMES)
    spaces: int = 0
    games: int = 0
    hists: dict = field(default_factory=dict)       # per cell: categories, score, margin, held
    per_game: dict = field(default_factory=dict)    # per game: rounds, turns, held_total, tension
    winner: dict = field(default_factory=dict)      # the winner's margin and score
    wins_cell: np.ndarray = None
    decided_last_round: int = 0
    ends: dict = field(default_factory=dict)        # end trigger -> games
    outcomes: np.ndarray = None                     # (majority, outcome) games
    share: dict = field(default_factory=dict)       # group -> [seat-games, mj, score, Moments]
    pairs: np.ndarray = None                        # (boot group, a, b): a finished ahead of b
    cell_w: np.ndarray = None                       # (seed group, cell) wins
    cell_n: np.ndarray = None                       # (seed group, cell) seat-games
    uses: dict = field(default_factory=dict)        # "cards" / "spaces" -> Exposure
    segments: list = field(default_factory=list)    # (clusters: array or range, wins (k, n) uint8)
    explained: bool = False                         # every run records where its games were decided
    parts: SeatParts | None = None                  # ... and then the decomposition (analysis.explain_stats)
    timed: bool = False                             # every run records the state of each card play
    play_states: PlayStates | None = None           # ... and then when the cards are played

    def __post_init__(self):
        S, n = len(self.strategies), self.n
        if self.wins_cell is None:
            self.wins_cell = np.zeros(S * n)
            self.hists = {k: Hist(S * n) for k in [*CATEGORIES, "score", "margin", "held"]}
            keys = ["rounds", "turns", "held_total"] + (["lead_changes", "comeback", "led_rounds"] if self.tension else [])
            self.per_game = {k: Hist() for k in keys}
            self.winner = {"margin": Hist(), "score": Hist()}
            self.outcomes = np.zeros((len(HEIGHT_KEYS), len(OUTCOMES)), np.int64)
            self.share = {g: [0, 0, 0, Moments()] for g in self.share_groups()}
            self.pairs = np.zeros((self.boot_groups, S, S))
            self.cell_w = np.zeros((self.seed_groups, S * n), np.int64)
            self.cell_n = np.zeros((self.seed_groups, S * n), np.int64)
            self.uses = {"cards": Exposure.empty(self.cards, self.seed_groups, S * n, ("vp", "temple_uses")),
                         "spaces": Exposure.empty(self.spaces, self.seed_groups, S * n)}
            self.parts = SeatParts(n) if self.explained else None
            self.play_states = PlayStates.empty(self.cards, self.seed_groups) if self.timed else None

    @property
    def boot_groups(self) -> int:
        return max(1, min(BOOT_GROUPS, self.clusters))

    @property
    def seed_groups(self) -> int:
        return max(1, min(CLUSTER_GROUPS, self.clusters))

    @property
    def cells(self) -> int:
        return len(self.strategies) * self.n

    def share_groups(self) -> list:
        return ["all seats", "winners"] + [f"strategy {s}" for s in self.strategies]

    def empty_like(self) -> "CountStats":
        return CountStats(self.n, self.strategies, self.clusters, self.rules, self.rotated, self.tension,
                          self.cards, self.spaces, explained=self.explained, timed=self.timed)

    # -- gathering ------------------------------------------------------------------------
    def add(self, seats: SeatBlock, games: GameBlock | None = None, uses: dict | None = None) -> None:
        """Fold one block in: its seats, its games and its card and space rows."""
        n, G = self.n, seats.score.shape[0]
        if not G:
            return
        self.games += G
        seat = np.broadcast_to(np.arange(n), (G, n))
        cell = (seats.strategy.astype(np.int64) * n + seat).reshape(-1)
        win = seats.win.reshape(-1)
        self.wins_cell += np.bincount(cell, weights=win, minlength=self.cells)
        for cat in CATEGORIES:
            self.hists[cat].add(seats.cats[cat], cell)
        self.hists["score"].add(seats.score, cell)
        margin = score_margin(seats.score)
        self.hists["margin"].add(margin, cell)
        column_vp = self.rules["majority"]["column_vp"]
        if column_vp > 0:          # columns held are read off their VP: none to read when a column scores 0
            held = seats.cats["vp_column_majority"] // column_vp
            self.hists["held"].add(np.minimum(held, HELD_CAP), cell)
            self.per_game["held_total"].add(row_sum(held))
        self.winner["margin"].add(margin[seats.win])
        self.winner["score"].add(seats.score[seats.win])
        self._outcomes(seats)
        self._shares(seats)
        self._pairs(seats)
        group = seats.cluster % self.seed_groups
        key = np.repeat(group * self.cells, n) + cell       # (seed group, cell) of each seat row
        self.cell_w += np.bincount(key[win], minlength=self.cell_w.size).reshape(self.cell_w.shape)
        self.cell_n += np.bincount(key, minlength=self.cell_n.size).reshape(self.cell_n.shape)
        u, inv = np.unique(seats.cluster, return_inverse=True)
        per_seed = np.bincount(np.repeat(inv * n, n) + seat.reshape(-1), weights=win, minlength=len(u) * n)
        if len(u) and u[-1] - u[0] + 1 == len(u):          # a run's block: consecutive seeds
            u = range(int(u[0]), int(u[-1]) + 1)             # kept as its ends, not 8 bytes a seed
        self.segments.append((u, per_seed.reshape(len(u), n).astype(np.uint8)))
        if games is not None:
            self._games(games)
            if self.explained:
                self._decided(seats, games)
        uses = {name: self._valid(rows, self.uses[name].columns) for name, rows in (uses or {}).items()}
        for name, rows in uses.items():
            self._uses(name, rows, key, win)
        if self.play_states is not None and games is not None and "cards" in uses:
            rows = uses["cards"]
            self.play_states.add(group, games.rounds, games.turns, seats.turns["turns_leading"],
                                 rows.game, rows.column, rows.count, rows.extras)

    def _outcomes(self, seats: SeatBlock) -> None:
        full_of, tie_of = self.rules["height_majority"], self.rules["height_majority_tie"]
        for j, (cat, key) in enumerate(HEIGHT_KEYS.items()):
            full, tie = full_of[key], tie_of[key]
            v = seats.cats[cat]
            nonzero = row_sum(v > 0)
            if full != tie:
                outright = row_any(v == full)
                tied = ~outright & row_any(v == tie)
            else:
                outright, tied = nonzero == 1, nonzero > 1
            self.outcomes[j] += [int(outright.sum()), int(tied.sum()), int((nonzero == 0).sum())]

    def _shares(self, seats: SeatBlock) -> None:
        maj = sum(seats.cats[c].astype(np.int64) for c in MAJORITY_CATEGORIES)
        score = seats.score.astype(np.int64)
        pos = score > 0
        share = np.zeros(score.shape)
        np.divide(maj, score, out=share, where=pos)
        masks = [np.ones(score.shape, bool), seats.win] + [seats.strategy == i for i in range(len(self.strategies))]
        for g, mask in zip(self.share_groups(), masks):
            acc = self.share[g]
            acc[0] += int(mask.sum())
            acc[1] += int(maj[mask].sum())
            acc[2] += int(score[mask].sum())
            acc[3].add(share[mask & pos])

    def _pairs(self, seats: SeatBlock) -> None:
        """As finishing order: ``pairs[g, a, b]`` += games of boot group g in which strategy a
        finished ahead of strategy b (seats of one strategy are not compared)."""
        S, n = len(self.strategies), self.n
        codes, rank = seats.strategy.astype(np.int64), seats.rank
        gidx = seats.cluster % self.boot_groups
        flat = np.zeros(self.pairs.size)
        for i in range(n):
            for j in range(i + 1, n):
                a, b = codes[:, i], codes[:, j]
                diff = a != b
                ahead = (rank[:, i] < rank[:, j])[diff]
                a, b, gg = a[diff], b[diff], gidx[diff]
                flat += np.bincount(gg * S * S + a * S + b, weights=ahead, minlength=flat.size)
                flat += np.bincount(gg * S * S + b * S + a, weights=~ahead, minlength=flat.size)
        self.pairs += flat.reshape(self.pairs.shape)

    def _games(self, games: GameBlock) -> None:
        self.per_game["rounds"].add(games.rounds)
        self.per_game["turns"].add(games.turns)
        counts = np.bincount(games.end_trigger.astype(np.int64), minlength=len(games.end_names))
        for name, c in zip(games.end_names, counts):
            if c:
                self.ends[str(name)] = self.ends.get(str(name), 0) + int(c)
        if self.tension:
            t = games.tension
            self.per_game["lead_changes"].add(t["lead_changes"])
            self.per_game["comeback"].add(t["comeback"])
            self.per_game["led_rounds"].add(games.rounds.astype(np.int64) - t["winner_led_from"])
            self.decided_last_round += int(np.asarray(t["decided_last_round"]).sum())

    def _decided(self, seats: SeatBlock, games: GameBlock) -> None:
        """Fold the block's games into the decomposition of the seats' deviations."""
        f = games.facts
        winner = np.argmax(seats.win, axis=1)
        cause = game_causes(f["decided_by"], winner, f["leader_at_trigger"])
        decisive = decisive_turns(f["trigger_seat"], f["leader_at_trigger"], seats.before, winner)
        self.parts.add(seats.cluster, winner, cause, decisive)

    def _valid(self, rows: UseRows, columns: int) -> UseRows:
        """The rows whose seat and column exist at this player count (the others left out)."""
        col, seat = rows.column, rows.seat
        if len(col) and not (seat.max() < self.n and col.min() >= 0 and col.max() < columns):
            ok = (seat < self.n) & (col >= 0) & (col < columns)
            return UseRows(rows.game[ok], seat[ok], col[ok], rows.count[ok], {e: v[ok] for e, v in rows.extras.items()})
        return rows

    def _uses(self, name: str, rows: UseRows, key: np.ndarray, win: np.ndarray) -> None:
        exp = self.uses[name]
        exp.added = True
        col, seat, game, count = rows.column, rows.seat, rows.game, rows.count
        col = col.astype(np.int64, copy=False)
        exp.times += np.bincount(col, weights=count, minlength=exp.columns).astype(np.int64)
        for e in exp.extras:
            exp.sums[e] += np.bincount(col, weights=rows.extras[e], minlength=exp.columns).astype(np.int64)
        flat = game.astype(np.int64, copy=False) * self.n + seat
        used = count > 0
        if not used.all():
            col, flat = col[used], flat[used]
        cells = col * (self.seed_groups * self.cells) + key[flat]
        size = exp.w1.size
        exp.n1 += np.bincount(cells, minlength=size).reshape(exp.n1.shape)
        exp.w1 += np.bincount(cells[win[flat]], minlength=size).reshape(exp.w1.shape)

    # -- combining ------------------------------------------------------------------------
    def merge(self, other: "CountStats") -> "CountStats":
        """Add ``other`` (the same player count, other games) into this one; returns self."""
        self.games += other.games
        self.wins_cell += other.wins_cell
        for d, o in ((self.hists, other.hists), (self.per_game, other.per_game), (self.winner, other.winner)):
            for k in d:
                d[k].merge(o[k])
        self.decided_last_round += other.decided_last_round
        for k, v in other.ends.items():
            self.ends[k] = self.ends.get(k, 0) + v
        self.outcomes += other.outcomes
        for g, acc in self.share.items():
            o = other.share[g]
            acc[0] += o[0]
            acc[1] += o[1]
            acc[2] += o[2]
            acc[3].merge(o[3])
        self.pairs += other.pairs
        self.cell_w += other.cell_w
        self.cell_n += other.cell_n
        for k in self.uses:
            self.uses[k].merge(other.uses[k])
        self.segments += other.segments
        if self.parts is not None:
            self.parts.merge(other.parts)
        if self.play_states is not None:
            self.play_states.merge(other.play_states)
        return self

    # -- reading --------------------------------------------------------------------------
    def seed_wins(self) -> np.ndarray:
        """Win counts per seed and seat, shape (seeds, n), seeds in cluster order: a seed's games
        (its rotations) are summed, as they are one cluster (:mod:`analysis.fairness`)."""
        if not self.segments:
            return np.zeros((0, self.n), np.uint8)
        if self._each_cluster_once():            # as every run is read: filled in place, no sort
            out = np.zeros((self.clusters, self.n), np.uint8)
            for u, w in self.segments:
                out[u] = w
            return out
        ids = np.concatenate([u for u, _ in self.segments])
        wins = np.concatenate([w for _, w in self.segments])
        order = np.argsort(ids, kind="stable")
        ids, wins = ids[order], wins[order]
        if len(ids) > 1 and (np.diff(ids) == 0).any():         # a seed split over blocks
            # sorted, so each seed's rows are a run: summed run by run (np.add.at, the obvious
            # way, took 0.5 s on the 48 kinds of game of a 1,000,000-game run; this, milliseconds)
            starts = np.flatnonzero(np.r_[True, ids[1:] != ids[:-1]])
            return np.add.reduceat(wins.astype(np.int64), starts, axis=0)
        return wins

    def _each_cluster_once(self) -> bool:
        """Whether the segments hold clusters 0..clusters-1 once each (every cluster is in one
        block, as a chunk holds whole seeds): each segment's ids are distinct, so if all are seen
        and their number is the clusters', none is repeated."""
        if sum(len(u) for u, _ in self.segments) != self.clusters or \
                not all(len(u) == 0 or (u[0] >= 0 and u[-1] < self.clusters) for u, _ in self.segments):
            return False
        seen = np.zeros(self.clusters, bool)
        for u, _ in self.segments:
            seen[u] = True
        return bool(seen.all())

    def seed_win_rows(self) -> tuple[np.ndarray, np.ndarray]:
        """The per-seed win counts as their distinct rows and how many seeds have each (a seed's
        row sums to its rotations, so there are a few dozen at most): what the seat fairness
        needs, without float copies of every seed's row."""
        if not self._each_cluster_once():
            return distinct_rows(self.seed_wins())
        found: dict = {}
        for _, w in self.segments:
            rows, counts = distinct_rows(w)
            for row, k in zip(map(tuple, rows.tolist()), counts.tolist()):
                found[row] = found.get(row, 0) + k
        keys = sorted(found)
        return np.array(keys, np.int64).reshape(-1, self.n), np.array([found[k] for k in keys], np.int64)

    def by_seat(self, name: str) -> Hist:
        """Histogram ``name`` per seat (strategies summed)."""
        return self.hists[name].regroup(np.arange(self.cells) % self.n, self.n)

    def by_strategy(self, name: str) -> Hist:
        """Histogram ``name`` per strategy (seats summed)."""
        return self.hists[name].regroup(np.arange(self.cells) // self.n, len(self.strategies))


# ---------------------------------------------------------------------------------------------
# one run's headline metrics, per seed (compare, sweep, run until sure)
# ---------------------------------------------------------------------------------------------
@dataclass
class SeedSums:
    """Per seed of one run (seed index = game id // rotations): its seed value, games, each
    seat's wins, each strategy's wins and seat-games, the sum of scores, of the games' majority
    share of the score and of rounds. ``segments`` hold blocks until :meth:`arrays` joins
    them in seed order."""

    n: int
    strategies: list
    segments: list = field(default_factory=list)

    def add(self, seeds: np.ndarray, seed_values: np.ndarray, strategy: np.ndarray, seats: SeatBlock,
            rounds: np.ndarray) -> None:
        """One block: ``seeds`` the seed index of each game, ``strategy`` codes into this run's
        strategies."""
        if not len(seeds):
            return
        n, S = self.n, len(self.strategies)
        u, sidx = np.unique(seeds, return_inverse=True)
        k = len(u)
        seat = np.broadcast_to(np.arange(n), seats.score.shape)
        win = seats.win.astype(float)
        score = seats.score.astype(np.int64)
        total = score.sum(axis=1)
        maj = sum(seats.cats[c].astype(np.int64) for c in MAJORITY_CATEGORIES).sum(axis=1)
        share = np.zeros(len(total))
        np.divide(maj, total, out=share, where=total > 0)
        values = np.zeros(k, np.int64)
        values[sidx] = seed_values
        rep = np.repeat(sidx, n)
        seg = {
            "seed": u.astype(np.int64), "value": values,
            "games": np.bincount(sidx, minlength=k).astype(np.uint8),
            "seat_wins": np.bincount(rep * n + seat.reshape(-1), weights=win.reshape(-1),
                                     minlength=k * n).reshape(k, n).astype(np.uint8),
            "strat_wins": np.bincount(rep * S + strategy.reshape(-1), weights=win.reshape(-1),
                                      minlength=k * S).reshape(k, S).astype(np.uint8),
            "strat_seats": np.bincount(rep * S + strategy.reshape(-1), minlength=k * S).reshape(k, S).astype(np.uint8),
            "score": np.bincount(sidx, weights=total, minlength=k).astype(np.int64),
            "share": np.bincount(sidx, weights=share, minlength=k),
            "rounds": np.bincount(sidx, weights=rounds, minlength=k).astype(np.int64),
        }
        self.segments.append(seg)

    def merge(self, other: "SeedSums") -> "SeedSums":
        self.segments += other.segments
        return self

    def arrays(self) -> dict:
        """The per-seed arrays, in seed order (a seed's games are always in one block)."""
        keys = ["seed", "value", "games", "seat_wins", "strat_wins", "strat_seats", "score", "share", "rounds"]
        if not self.segments:
            S = len(self.strategies)
            return {"seed": np.zeros(0, np.int64), "value": np.zeros(0, np.int64), "games": np.zeros(0, np.uint8),
                    "seat_wins": np.zeros((0, self.n), np.uint8), "strat_wins": np.zeros((0, S), np.uint8),
                    "strat_seats": np.zeros((0, S), np.uint8), "score": np.zeros(0, np.int64),
                    "share": np.zeros(0), "rounds": np.zeros(0, np.int64)}
        segs = sorted(self.segments, key=lambda s: int(s["seed"][0]))
        out = {k: np.concatenate([s[k] for s in segs]) for k in keys}
        self.segments = [out]
        return out
