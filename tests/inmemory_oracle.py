"""The in-memory analysis as it was before the streaming pass (issue 17), kept only as the test
oracle: it loads whole tables into pandas and computes every table from the rows. The streaming
report (:mod:`analysis.scan`, :mod:`analysis.aggregate`) must give the same numbers; see
tests/test_streaming.py. Not used by the package.
"""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from evora_sim import layout as L
from evora_sim.runner import RunError, RunResult
from evora_sim.storage import read_chunk

from analysis import labels
from analysis.fairness import seat_fairness
from analysis.playstates import PLAY_STATES, PlayStates
from analysis.scan import AnalysisError
from analysis.stats import (ALPHA, ELO, MIN_EFFECT, MIN_USES, binom_p, bradley_terry, bt_bootstrap, clustered_rate_p,
                    rating_ranges, seed_records,
                    clustered_wilson, holm, logistic_effect, mean_ci_from, negligible,
                    newcombe_diff_clustered, quantiles_from_counts, wilson)

CATEGORIES = list(L.BREAKDOWN_NAMES)
MAJORITY_CATEGORIES = ["vp_column_majority", "vp_height_1", "vp_height_2", "vp_height_3",
                       "vp_height_4", "vp_capitals"]
HEIGHT_KEYS = {"vp_height_1": "h1", "vp_height_2": "h2", "vp_height_3": "h3",
               "vp_height_4": "h4", "vp_capitals": "capitals"}
CARD_NAMES = list(L.EFFECT_NAMES + L.ITILE_NAMES)
SEAT_COLUMNS = ["game_id", "seat", "strategy", "score", "rank", "win", *CATEGORIES]
BOOT_GROUPS = 200
CLUSTER_GROUPS = 2000            # seed groups for the card and space value variances


# ---------------------------------------------------------------------------------------------
# reading
# ---------------------------------------------------------------------------------------------
@dataclass
class Dataset:
    """Seat and game rows of one or more runs.

    ``seats`` holds, per run, one block of ``n`` rows (seats 0..n-1) per game, with the
    run's index, its player count and the game's seed cluster (``cluster``: one seed played
    under every seat rotation is one cluster). ``games`` holds one row per game. The card and
    space matrices (:meth:`matrix`) are aligned with ``seats`` row for row.
    """

    runs: list[RunResult]
    seats: pd.DataFrame
    games: pd.DataFrame
    offsets: list[int]
    _matrices: dict = field(default_factory=dict, repr=False)

    @property
    def player_counts(self) -> list[int]:
        return sorted(int(n) for n in self.seats["n_players"].unique())

    def rules(self, n: int | None = None) -> dict:
        for run in self.runs:
            if n is None or run.manifest["config"]["players"] == n:
                return run.manifest["rules"]
        return self.runs[0].manifest["rules"]

    def n_spaces(self) -> int:
        return max(len(r.manifest["rules"]["board"]["spaces"]) for r in self.runs)

    def matrix(self, table: str, column: str) -> np.ndarray:
        """Per seat row, the ``column`` of the cards (``plays``, ``vp``, ``temple_uses``) or
        spaces (``uses``) table spread over one matrix column per card or space (0 if the
        table has no row)."""
        key = (table, column)
        if key not in self._matrices:
            self._build(table)
        return self._matrices[key]

    def _build(self, table: str) -> None:
        if table == "cards":
            key_col, width, values = "card", len(CARD_NAMES), ["plays", "vp", "temple_uses"]
            if all(has_column(run, "cards", c) for run in self.runs for c in PLAY_STATES):
                values += list(PLAY_STATES)
        else:
            key_col, width, values = "space", self.n_spaces(), ["uses"]
        total = len(self.seats)
        mats = {v: np.zeros((total, width), dtype=np.int32) for v in values}
        gid = self.seats["game_id"].to_numpy()
        for r, run in enumerate(self.runs):
            n = run.manifest["config"]["players"]
            start = self.offsets[r]
            stop = self.offsets[r + 1]
            block_gid = gid[start:stop:n]
            lookup = np.full(int(block_gid.max()) + 1 if len(block_gid) else 0, -1, dtype=np.int64)
            lookup[block_gid] = np.arange(len(block_gid))
            for chunk in iter_chunks(run, table, ["game_id", "seat", key_col, *values]):
                g = chunk["game_id"].to_numpy()
                ok = g < len(lookup)
                block = np.where(ok, lookup[np.minimum(g, len(lookup) - 1)], -1)
                keep = block >= 0
                rows = start + block[keep] * n + chunk["seat"].to_numpy()[keep]
                col = chunk[key_col]
                col = (col.cat.codes if hasattr(col, "cat") else col).to_numpy()[keep].astype(np.int64)
                inside = col < width
                for v in values:
                    mats[v][rows[inside], col[inside]] = chunk[v].to_numpy()[keep][inside]
        for v in values:
            self._matrices[(table, v)] = mats[v]


def iter_chunks(run: RunResult, name: str, columns: list[str]):
    """The run's finished chunks of table ``name``, one DataFrame at a time."""
    for k in sorted(run.done_chunks()):
        yield _read(run, name, k, columns)


def _read(run: RunResult, name: str, k: int, columns) -> pd.DataFrame:
    try:
        return read_chunk(run.out, run.manifest, name, k, columns)
    except RunError as exc:
        raise AnalysisError(str(exc)) from None


def load(runs: list[RunResult]) -> Dataset:
    """Seat and game rows of ``runs`` (see :class:`Dataset`)."""
    seat_frames, game_frames, offsets = [], [], [0]
    for r, run in enumerate(runs):
        cfg = run.manifest["config"]
        n, rot = cfg["players"], (cfg["players"] if cfg["seat_rotation"] else 1)
        s = pd.concat([_read(run, "seats", k, SEAT_COLUMNS)
                       for k in sorted(run.done_chunks())], ignore_index=True)
        s = _blocks(s, n)
        s["strategy"] = s["strategy"].astype(str)
        s.insert(0, "run", np.int8(r))
        s.insert(1, "n_players", np.int8(n))
        s["seat_rotation"] = bool(cfg["seat_rotation"])
        s["cluster"] = (s["game_id"].to_numpy() // rot).astype(np.int64) * len(runs) + r
        seat_frames.append(s)
        offsets.append(offsets[-1] + len(s))
        cols = ["game_id", "rounds", "turns", "end_trigger", "winner_seat"]
        cols += [c for c in TENSION_COLUMNS if has_column(run, "games", c)]
        g = pd.concat([_read(run, "games", k, cols) for k in sorted(run.done_chunks())], ignore_index=True)
        g["end_trigger"] = g["end_trigger"].astype(str)
        g.insert(0, "run", np.int8(r))
        g.insert(1, "n_players", np.int8(n))
        game_frames.append(g)
    seats = pd.concat(seat_frames, ignore_index=True)
    seats["strategy"] = seats["strategy"].astype("category")
    games = pd.concat(game_frames, ignore_index=True)
    games["end_trigger"] = games["end_trigger"].astype("category")
    if seats.empty:
        raise AnalysisError("the selected runs hold no games")
    return Dataset(runs, seats, games, offsets)


TENSION_COLUMNS = ("lead_changes", "comeback", "winner_led_from", "decided_last_round")


def has_column(run: RunResult, table: str, column: str) -> bool:
    from analysis.scan import has_column as present

    return present(run, table, column)


def _blocks(s: pd.DataFrame, n: int) -> pd.DataFrame:
    """Seat rows in blocks of n per game, seats 0..n-1 (how the runner writes them; sorted
    here only if a table was written otherwise)."""
    seat = s["seat"].to_numpy()
    gid = s["game_id"].to_numpy()
    if len(s) % n == 0:
        blocks_ok = np.array_equal(seat.reshape(-1, n), np.broadcast_to(np.arange(n), (len(s) // n, n)))
        if blocks_ok and (gid.reshape(-1, n) == gid[::n, None]).all():
            return s
    s = s.iloc[np.lexsort((seat, gid))].reset_index(drop=True)
    counts = np.bincount(pd.factorize(s["game_id"])[0])
    if len(s) % n or not (counts == n).all():
        raise AnalysisError(f"the seat table does not hold {n} seats for every game")
    return s


def load_seats(runs: list[RunResult], columns: list[str] | None = None) -> pd.DataFrame:
    """Seat rows of several runs (see :func:`load`)."""
    return load(runs).seats


def per_game(seats: pd.DataFrame, column: str, n: int) -> np.ndarray:
    """``column`` of the seat rows of one player count as a (games, n) array."""
    return seats[column].to_numpy().reshape(-1, n)


def by_player_count(seats: pd.DataFrame):
    """(n, the seat rows of games of n players) for each player count: the grouping every table
    here and its streamed counterpart (tests/test_streaming.py) are compared on."""
    for n, grp in seats.groupby("n_players", observed=True, sort=True):
        yield int(n), grp


def _summary(grouped, col: str) -> pd.DataFrame:
    """mean, 95% interval, sd and count of ``col`` per group."""
    agg = grouped[col].agg(["mean", "std", "count"])
    lo, hi = mean_ci_from(agg["mean"], agg["std"], agg["count"])
    return agg.assign(lo=lo, hi=hi)


# ---------------------------------------------------------------------------------------------
# seats
# ---------------------------------------------------------------------------------------------
def score_margin(grp: pd.DataFrame, n: int) -> np.ndarray:
    """Own score minus the best other seat's score in the same game, per seat row."""
    scores = per_game(grp, "score", n).astype(np.int32)
    top2 = np.sort(scores, axis=1)[:, -2:]
    other = np.where(scores == top2[:, 1:2], top2[:, 0:1], top2[:, 1:2])
    return (scores - other).reshape(-1)


def seed_wins(grp: pd.DataFrame, n: int) -> np.ndarray:
    """Win counts per seed and seat of one player count, shape (seeds, n): a seed's games (its
    rotations) are summed, as they are one cluster (see :mod:`analysis.fairness`)."""
    _, inv = np.unique(grp["cluster"].to_numpy(), return_inverse=True)
    cells = inv.astype(np.int64) * n + grp["seat"].to_numpy().astype(np.int64)
    seeds = int(inv.max()) + 1 if len(inv) else 0
    return np.bincount(cells, weights=grp["win"].to_numpy(), minlength=seeds * n).reshape(seeds, n)


def seat_advantage(seats: pd.DataFrame, min_effect: float = MIN_EFFECT) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Per player count and seat: win rate with its Wilson interval against the fair share 1/n
    and a test per seat, clustered by seed when every seed was played under each rotation (the
    design effect of the per-seed win counts: above 1 the effective sample is used, below 1 the
    plain, conservative interval and exact binomial test), Holm-corrected over the seats from 3
    players on. At 2 players the two seats' tests are one test, the t test of seat 0's per-seed
    win counts (the same test as "all seats fair" below), and it is not corrected. Mean score
    and score margin with intervals; ``negligible`` when the seat is within ``min_effect`` of
    its fair share.
    Second table, per player count: the seat unfairness (root mean square seat deviation) with
    its interval and the test of "all seats fair" (:func:`analysis.fairness.seat_fairness`)."""
    rows, tests = [], []
    for n, grp in by_player_count(seats):
        fair = 1.0 / n
        margin = score_margin(grp, n)
        frame = pd.DataFrame({"seat": grp["seat"].to_numpy(), "win": grp["win"].to_numpy(),
                              "score": grp["score"].to_numpy(), "margin": margin})
        by_seat = frame.groupby("seat")
        wins = by_seat["win"].sum().to_numpy()
        games = by_seat["win"].size().to_numpy()
        seat_ids = by_seat["win"].size().index.to_numpy()
        per_seed = seed_wins(grp, n)
        rotated = bool(grp["seat_rotation"].all()) if "seat_rotation" in grp else False
        equal = rotated and bool((per_seed.sum(axis=1) == n).all())
        lo, hi = wilson(wins, games)
        pvals, deffs = [binom_p(k, m, fair) for k, m in zip(wins, games)], [np.nan] * len(wins)
        if equal:                   # n games per seed: the seed is the cluster
            for i, s in enumerate(seat_ids):
                lo[i], hi[i], deffs[i] = clustered_wilson(per_seed[:, s], n)
                pvals[i] = clustered_rate_p(per_seed[:, s], n, fair)[0]
        f = seat_fairness(per_seed)
        if n == 2:                  # seat 1 wins exactly the games seat 0 does not: one test
            pvals = [f.p, f.p]
        adj = np.asarray(pvals, dtype=float) if n == 2 else holm(pvals)
        sc, mg = _summary(by_seat, "score"), _summary(by_seat, "margin")
        for i, seat in enumerate(seat_ids):
            diff = wins[i] / games[i] - fair
            rows.append({
                "n_players": n, "seat": int(seat), "games": int(games[i]), "wins": int(wins[i]),
                "win_rate": wins[i] / games[i], "ci_lo": lo[i], "ci_hi": hi[i], "fair_share": fair,
                "diff": diff, "p_binom": pvals[i], "p_holm": adj[i],
                "significant": bool(adj[i] < ALPHA), "negligible": bool(negligible(diff, min_effect)),
                "design_effect": deffs[i],
                "mean_score": sc["mean"].iloc[i], "score_lo": sc["lo"].iloc[i], "score_hi": sc["hi"].iloc[i],
                "mean_margin": mg["mean"].iloc[i], "margin_lo": mg["lo"].iloc[i], "margin_hi": mg["hi"].iloc[i],
                "seat_rotation": rotated,
            })
        tests.append({"n_players": n, "games": int(games.min()), "seeds": f.seeds,
                      "unfairness": f.rms, "unfairness_lo": f.rms_lo, "unfairness_hi": f.rms_hi,
                      "mean_square": f.mean_square, "max_deviation": f.max_deviation,
                      "t_squared": f.statistic, "df1": f.df[0], "df2": f.df[1], "p": f.p,
                      "significant": bool(f.p < ALPHA), "negligible": bool(negligible(f.rms, min_effect)),
                      "seat_rotation": rotated, "design_effect": float(np.nanmean(deffs)) if equal else np.nan})
    return pd.DataFrame(rows), pd.DataFrame(tests)


def strategy_win_rates(seats: pd.DataFrame) -> pd.DataFrame:
    """Win rate and mean score of each strategy per player count (over its seat-games)."""
    g = seats.groupby(["n_players", "strategy"], observed=True)
    agg = g.agg(seat_games=("win", "size"), wins=("win", "sum"),
                mean_score=("score", "mean"), sd=("score", "std")).reset_index()
    lo, hi = wilson(agg["wins"], agg["seat_games"])
    slo, shi = mean_ci_from(agg["mean_score"], agg["sd"], agg["seat_games"])
    agg = agg.assign(win_rate=agg["wins"] / agg["seat_games"], ci_lo=lo, ci_hi=hi,
                     fair_share=1 / agg["n_players"].astype(float), score_lo=slo, score_hi=shi)
    agg["strategy"] = agg["strategy"].astype(str)
    return agg[["n_players", "strategy", "seat_games", "wins", "win_rate", "ci_lo", "ci_hi",
                "fair_share", "mean_score", "score_lo", "score_hi"]]


# ---------------------------------------------------------------------------------------------
# strategy match-ups and ratings
# ---------------------------------------------------------------------------------------------
def _pair_counts(grp: pd.DataFrame, n: int, n_groups: int):
    """Pairwise comparisons of one player count: ``wins[g, a, b]`` = times strategy a finished
    ahead of strategy b (lower rank) in bootstrap group g. Seats with the same strategy are not
    compared. Returns (strategy names, wins)."""
    names = list(grp["strategy"].cat.remove_unused_categories().cat.categories)
    codes = pd.Categorical(grp["strategy"].astype(str), categories=names).codes.reshape(-1, n).astype(np.int64)
    rank = per_game(grp, "rank", n)
    clusters = grp["cluster"].to_numpy()[::n]
    _, inv = np.unique(clusters, return_inverse=True)
    gidx = (inv % n_groups).astype(np.int64)
    S = len(names)
    wins = np.zeros(n_groups * S * S)
    for i in range(n):
        for j in range(i + 1, n):
            a, b = codes[:, i], codes[:, j]
            diff = a != b
            ahead = (rank[:, i] < rank[:, j])[diff]
            a, b, gg = a[diff], b[diff], gidx[diff]
            wins += np.bincount(gg * S * S + a * S + b, weights=ahead, minlength=wins.size)
            wins += np.bincount(gg * S * S + b * S + a, weights=~ahead, minlength=wins.size)
    return names, wins.reshape(n_groups, S, S)


def matchups(seats: pd.DataFrame) -> pd.DataFrame:
    """Each strategy against each other, per player count: in 2-player games the share of
    their games it won; in 3-4-player (mixed) fields the share of games with both at the table
    in which it finished ahead of the other. Wilson intervals; exact binomial test against 50%,
    Holm-corrected over the pairs of a player count."""
    rows = []
    for n, grp in by_player_count(seats):
        names, w = _pair_counts(grp, n, 1)
        w = w[0]
        S = len(names)
        block = []
        for a in range(S):
            for b in range(S):
                m = w[a, b] + w[b, a]
                if a == b or m == 0:
                    continue
                lo, hi = wilson(w[a, b], m)
                block.append({"n_players": n, "strategy": names[a], "opponent": names[b],
                              "measure": "won the game" if n == 2 else "finished ahead",
                              "games": int(m), "wins": int(w[a, b]), "win_rate": w[a, b] / m,
                              "ci_lo": float(lo), "ci_hi": float(hi),
                              "p": binom_p(w[a, b], m, 0.5), "_pair": (min(a, b), max(a, b))})
        if block:
            pairs = sorted({r["_pair"] for r in block})
            pmap = dict(zip(pairs, holm([next(r["p"] for r in block if r["_pair"] == pr) for pr in pairs])))
            for r in block:
                r["p_holm"] = pmap[r.pop("_pair")]
                r["significant"] = bool(r["p_holm"] < ALPHA)
            rows += block
    cols = ["n_players", "strategy", "opponent", "measure", "games", "wins", "win_rate", "ci_lo",
            "ci_hi", "p", "p_holm", "significant"]
    return pd.DataFrame(rows, columns=cols)


def ratings(seats: pd.DataFrame, n_boot: int = 1000, seed: int = 0) -> pd.DataFrame:
    """Bradley-Terry ratings of the strategies per player count, fitted to the pairwise
    "finished ahead" counts and shown on the Elo scale (mean 0; a 100-point gap means the
    higher rated finishes ahead 64% of the time). 95% intervals from a bootstrap over seeds
    (games of one seed stay together)."""
    rows = []
    for n, grp in by_player_count(seats):
        names, gw = _pair_counts(grp, n, min(BOOT_GROUPS, grp["cluster"].nunique()))
        if len(names) < 2:
            continue
        total = gw.sum(axis=0)
        est = bradley_terry(total) * ELO
        boot = bt_bootstrap(gw, n_boot=n_boot, seed=seed) * ELO
        lo, hi = np.percentile(boot, [2.5, 97.5], axis=0)
        lost, met, _ = seed_records([gw])      # near-perfect records: open ranges (stats.rating_ranges)
        lo, hi = (x * ELO for x in rating_ranges(lo / ELO, hi / ELO, lost, met))
        comps = total.sum(axis=1) + total.sum(axis=0)
        for i, name in enumerate(names):
            rows.append({"n_players": n, "strategy": name, "elo": est[i], "ci_lo": lo[i], "ci_hi": hi[i],
                         "comparisons": int(comps[i]), "wins": int(total[i].sum())})
    out = pd.DataFrame(rows, columns=["n_players", "strategy", "elo", "ci_lo", "ci_hi", "comparisons", "wins"])
    return out.sort_values(["n_players", "elo"], ascending=[True, False]).reset_index(drop=True)


# ---------------------------------------------------------------------------------------------
# card and Construction Site value
# ---------------------------------------------------------------------------------------------
def exposure_table(seats: pd.DataFrame, counts: np.ndarray, labels: list[str], vp: np.ndarray | None = None,
                   temple: np.ndarray | None = None, what: str = "card",
                   min_effect: float = MIN_EFFECT) -> pd.DataFrame:
    """Per player count and column of ``counts`` (aligned with the seat rows; a seat "used"
    it when its count is above 0): how often it was used, the win rate of seats that used it and
    of seats that did not, their difference and the difference adjusted for strategy and seat
    (the win rate when used, adjusted: logistic regression, average marginal effect), Holm over
    the columns within a player count. Every interval and test takes the seed as the
    independent unit (the seats of a game share one winner, a seed's rotations its stacks): the
    raw difference through its design effect (:func:`stats.newcombe_diff_clustered`), the
    regression through a cluster-robust covariance. Beyond CLUSTER_GROUPS seeds, whole seeds
    are pooled into that many groups (seed index modulo it) for these variances: a sum of
    independent seeds is independent of the other sums, so the variance estimates stay
    unbiased, with CLUSTER_GROUPS - 1 degrees of freedom, at a fraction of the cost."""
    rows = []
    for n, grp in by_player_count(seats):
        idx = grp.index.to_numpy()
        sl = slice(idx[0], idx[-1] + 1) if len(idx) and idx[-1] - idx[0] + 1 == len(idx) else idx
        cnt = counts[sl]
        win = grp["win"].to_numpy().astype(float)
        strat = grp["strategy"].cat.codes.to_numpy().astype(np.int64)
        seat = grp["seat"].to_numpy().astype(np.int64)
        _, seed = np.unique(grp["cluster"].to_numpy(), return_inverse=True)
        seed %= CLUSTER_GROUPS                      # whole seeds pooled into groups, see above
        n_seeds = int(seed.max()) + 1
        S = int(strat.max()) + 1
        B = S * n                                   # cells of (strategy, seat)
        seed_cell = seed.astype(np.int64) * B + strat * n + seat
        all_wins = np.bincount(seed_cell, weights=win, minlength=n_seeds * B).reshape(n_seeds, B)
        all_n = np.bincount(seed_cell, minlength=n_seeds * B).reshape(n_seeds, B).astype(float)
        n_games = len(grp) // n
        block = []
        for c, label in enumerate(labels):
            used = np.flatnonzero(cnt[:, c] > 0)
            # per seed and (strategy, seat) cell: wins and seat-games of the seats that used it
            w1 = np.bincount(seed_cell[used], weights=win[used], minlength=n_seeds * B).reshape(n_seeds, B)
            n1 = np.bincount(seed_cell[used], minlength=n_seeds * B).reshape(n_seeds, B).astype(float)
            w0, n0 = all_wins - w1, all_n - n1
            d, dlo, dhi, p_raw, deff = newcombe_diff_clustered(w1.sum(axis=1), n1.sum(axis=1),
                                                               w0.sum(axis=1), n0.sum(axis=1))
            ww, nn = np.concatenate([w0.sum(axis=0), w1.sum(axis=0)]), np.concatenate([n0.sum(axis=0), n1.sum(axis=0)])
            k1, n1_total, k0, n0_total = ww[B:].sum(), nn[B:].sum(), ww[:B].sum(), nn[:B].sum()
            times = int(cnt[:, c].sum(dtype=np.int64))
            cells = pd.DataFrame({"used": np.repeat([0, 1], B), "strategy": np.tile(np.repeat(np.arange(S), n), 2),
                                  "seat": np.tile(np.arange(n), 2 * S), "wins": ww, "n": nn})
            adj = logistic_effect(cells, "used", ["strategy", "seat"],
                                  clusters=(np.hstack([w0, w1]), np.hstack([n0, n1])))
            row = {"n_players": n, what: label, "times": times, "per_game": times / n_games,
                   "seat_games_used": int(n1_total), "share_used": n1_total / len(grp)}
            if vp is not None:
                row["vp_per_play"] = vp[sl][:, c].sum(dtype=np.int64) / times if times else np.nan
            if temple is not None:
                row["temple_uses"] = int(temple[sl][:, c].sum(dtype=np.int64))
            lo1, hi1 = wilson(k1, n1_total)
            lo0, hi0 = wilson(k0, n0_total)
            row.update({"win_used": k1 / n1_total if n1_total else np.nan, "win_used_lo": float(lo1),
                        "win_used_hi": float(hi1),
                        "win_not": k0 / n0_total if n0_total else np.nan, "win_not_lo": float(lo0),
                        "win_not_hi": float(hi0),
                        "diff": d, "diff_lo": dlo, "diff_hi": dhi, "design_effect": deff, "p_raw": p_raw,
                        **adj})
            block.append(row)
        for r in block:                       # too rare to judge: no verdict, not among Holm's tests
            r.update(too_rare=r["seat_games_used"] < MIN_USES, p_adj_holm=np.nan, significant=False,
                     negligible=False)
        judged = [r for r in block if not r["too_rare"]]
        for r, p in zip(judged, holm([r["p_adj"] for r in judged])):
            r["p_adj_holm"] = p
            r["significant"] = bool(np.isfinite(p) and p < ALPHA)
            r["negligible"] = bool(negligible(r["adj_diff"], min_effect)) if np.isfinite(r["adj_diff"]) else False
        rows += block
    return pd.DataFrame(rows)


def card_timing(data: Dataset) -> pd.DataFrame:
    """When each card is played, from the whole tables: the per-seed-group sums built here row by
    row, the figures by the same table step as the report's (analysis.playstates)."""
    if not all(has_column(run, "seats", "turns_leading") and has_column(run, "cards", c)
               for run in data.runs for c in PLAY_STATES):
        return pd.DataFrame()
    seats = data.seats
    lead = pd.concat([_read(run, "seats", k, ["game_id", "seat", "turns_leading"]).assign(run=np.int8(r))
                      for r, run in enumerate(data.runs) for k in sorted(run.done_chunks())], ignore_index=True)
    lead = seats[["run", "game_id", "seat"]].merge(lead, on=["run", "game_id", "seat"], how="left")
    game = seats[["run", "game_id"]].merge(data.games[["run", "game_id", "rounds", "turns"]], on=["run", "game_id"],
                                           how="left")
    frames = []
    for n, grp in by_player_count(seats):
        idx = grp.index.to_numpy()
        _, seed = np.unique(grp["cluster"].to_numpy(), return_inverse=True)
        group = seed % CLUSTER_GROUPS
        G = int(group.max()) + 1
        ps = PlayStates.empty(len(CARD_NAMES), G)
        first = grp["seat"].to_numpy() == 0           # one row per game for the game's turns
        ps.turns[:] = np.bincount(group[first], weights=game["turns"].to_numpy()[idx][first], minlength=G)
        ps.turns_leading[:] = np.bincount(group, weights=lead["turns_leading"].to_numpy()[idx], minlength=G)
        rounds = game["rounds"].to_numpy()[idx].astype(float)
        for c in range(len(CARD_NAMES)):
            def col(v):
                return data.matrix("cards", v)[idx, c].astype(float)
            for acc, w in ((ps.plays, col("plays")), (ps.leading, col("plays_leading")),
                           (ps.final, col("plays_final_round")), (ps.place, col("play_round_sum") / rounds)):
                acc[c] = np.bincount(group, weights=w, minlength=G)
        frames.append(ps.table(CARD_NAMES).assign(n_players=n))
    return pd.concat(frames, ignore_index=True)


def card_value(data: Dataset, min_effect: float = MIN_EFFECT) -> pd.DataFrame:
    """Per player count, for each of the 12 card effects and 4 instant tiles: times played from
    hand (tiles: taken), plays per game, the VP scored while resolving a play, Temple uses of
    the effect; the win rate of seats that played it at least once vs. seats that did not, and
    the win rate when played, adjusted for strategy and seat (see :func:`exposure_table`)."""
    t = exposure_table(data.seats, data.matrix("cards", "plays"), CARD_NAMES, data.matrix("cards", "vp"),
                       data.matrix("cards", "temple_uses"), "card", min_effect)
    t.insert(2, "name", t["card"].map(labels.card_title))     # the rulebook's words; the code stays
    timing = card_timing(data)
    if not timing.empty:
        t = t.merge(timing.drop(columns="plays"), on=["n_players", "card"], how="left")
    return t


def space_labels(rules: dict) -> list[str]:
    out = []
    for i, sp in enumerate(rules["board"]["spaces"]):
        extra = ""
        if "stacks" in sp:
            extra = " " + "+".join(sp["stacks"])
        elif "types" in sp:
            extra = " " + "+".join(sp["types"])
        out.append(f"{i:02d} {sp['action']}{extra} ({sp['colour']})")
    return out


def space_value(data: Dataset, min_effect: float = MIN_EFFECT) -> pd.DataFrame:
    """The same as :func:`card_value` for each Construction Site space (its action carried out
    by the seat at least once); the tables record no VP per space."""
    spaces = space_labels(data.rules())
    t = exposure_table(data.seats, data.matrix("spaces", "uses")[:, :len(spaces)], spaces, None, None,
                       "space", min_effect)
    titles = dict(zip(spaces, labels.space_titles(data.rules())))
    t.insert(2, "name", t["space"].map(titles))
    return t


# ---------------------------------------------------------------------------------------------
# majorities and score composition
# ---------------------------------------------------------------------------------------------
def _group_codes(grp: pd.DataFrame, by: str) -> tuple[np.ndarray, list[str]]:
    if by == "strategy":
        col = grp["strategy"].cat.remove_unused_categories()
        return col.cat.codes.to_numpy().astype(np.int64), [str(c) for c in col.cat.categories]
    seat = grp["seat"].to_numpy().astype(np.int64)
    return seat, [str(s) for s in range(int(seat.max()) + 1)]


def _counts(codes: np.ndarray, n_groups: int, values: np.ndarray):
    """Distribution of integer ``values`` per group: (value axis, counts[group, value])."""
    vmin, vmax = int(values.min()), int(values.max())
    width = vmax - vmin + 1
    c = np.bincount(codes * width + (values.astype(np.int64) - vmin), minlength=n_groups * width)
    return np.arange(vmin, vmax + 1), c.reshape(n_groups, width)


def _moments(axis: np.ndarray, counts: np.ndarray):
    n = counts.sum(axis=1).astype(float)
    with np.errstate(invalid="ignore", divide="ignore"):
        mean = counts @ axis / n
        var = (counts @ (axis.astype(float) ** 2) - n * mean ** 2) / (n - 1)
    return mean, np.sqrt(np.maximum(var, 0)), n


def vp_by_category(seats: pd.DataFrame) -> pd.DataFrame:
    """Distribution of the VP from each scoring category (and of the final score), by seat and
    by strategy, per player count: mean with 95% interval, sd, quartiles, 90th percentile and
    the share of seat-games that scored anything in it."""
    rows = []
    for n, grp in by_player_count(seats):
        for by in ("seat", "strategy"):
            codes, names = _group_codes(grp, by)
            for cat in CATEGORIES + ["score"]:
                axis, counts = _counts(codes, len(names), grp[cat].to_numpy())
                mean, sd, cnt = _moments(axis, counts)
                lo, hi = mean_ci_from(mean, sd, cnt)
                for i, gname in enumerate(names):
                    if cnt[i] == 0:
                        continue
                    q = quantiles_from_counts(axis, counts[i], [0.25, 0.5, 0.75, 0.9])
                    nz = 1 - counts[i][axis == 0].sum() / cnt[i]
                    rows.append({"n_players": n, "by": by, "group": gname, "category": cat,
                                 "mean": mean[i], "ci_lo": lo[i], "ci_hi": hi[i], "sd": sd[i],
                                 "q25": q[0], "median": q[1], "q75": q[2], "p90": q[3],
                                 "share_nonzero": nz, "seat_games": int(cnt[i])})
    return pd.DataFrame(rows)


def score_distribution(seats: pd.DataFrame) -> dict[int, tuple[np.ndarray, np.ndarray]]:
    """Final score distribution per player count and seat: (score axis, counts[seat, score])."""
    out = {}
    for n, grp in by_player_count(seats):
        out[n] = _counts(grp["seat"].to_numpy().astype(np.int64), n, grp["score"].to_numpy())
    return out


def majority_outcomes(data: Dataset) -> pd.DataFrame:
    """For each height majority (1-4) and the capitals majority, per player count: the share of
    games in which one player won it outright, players tied for it, or no player scored it
    (the majority was held by white or nobody had the parts: the tables cannot tell these two
    apart), with Wilson intervals."""
    rows = []
    for n, grp in by_player_count(data.seats):
        rules = data.rules(n)
        for cat, key in HEIGHT_KEYS.items():
            full = rules["height_majority"][key]
            tie = rules["height_majority_tie"][key]
            v = per_game(grp, cat, n)
            nonzero = (v > 0).sum(axis=1)
            if full != tie:
                outright = (v == full).any(axis=1)
                tied = ~outright & (v == tie).any(axis=1)
            else:
                outright = nonzero == 1
                tied = nonzero > 1
            nobody = nonzero == 0
            games = v.shape[0]
            for outcome, mask in (("outright", outright), ("tied", tied),
                                  ("white or unclaimed", nobody)):
                k = int(mask.sum())
                lo, hi = wilson(k, games)
                rows.append({"n_players": n, "majority": key, "outcome": outcome, "games": games,
                             "count": k, "share": k / games, "ci_lo": float(lo), "ci_hi": float(hi)})
    return pd.DataFrame(rows)


def columns_held(data: Dataset) -> pd.DataFrame:
    """Column majorities held per player per game (column-majority VP / VP per column), by seat
    and by strategy per player count: mean with interval and the shares holding 0, 1, 2, 3 and
    4 or more; plus, per game, the share of the Temple's columns held by anyone."""
    rows = []
    for n, grp in by_player_count(data.seats):
        rules = data.rules(n)
        per_col = rules["majority"]["column_vp"]
        if per_col <= 0:           # nothing to read a column's holder off
            continue
        held = grp["vp_column_majority"].to_numpy() // per_col
        for by in ("seat", "strategy"):
            codes, names = _group_codes(grp, by)
            axis, counts = _counts(codes, len(names), np.minimum(held, 99))
            mean, sd, cnt = _moments(axis, counts)
            lo, hi = mean_ci_from(mean, sd, cnt)
            for i, gname in enumerate(names):
                if cnt[i] == 0:
                    continue
                row = {"n_players": n, "by": by, "group": gname, "seat_games": int(cnt[i]),
                       "mean_held": mean[i], "ci_lo": lo[i], "ci_hi": hi[i]}
                for h in range(5):
                    sel = (axis == h) if h < 4 else (axis >= 4)
                    row[f"share_{h}{'+' if h == 4 else ''}"] = counts[i][sel].sum() / cnt[i]
                rows.append(row)
        ncols = rules["temple"]["columns"][str(n)]
        total = held.reshape(-1, n).sum(axis=1) / ncols
        m, sd = total.mean(), total.std(ddof=1) if len(total) > 1 else np.nan
        lo, hi = mean_ci_from(m, sd, len(total))
        rows.append({"n_players": n, "by": "game", "group": f"all seats ({ncols} columns)",
                     "seat_games": len(total), "mean_held": m * ncols,
                     "ci_lo": float(lo) * ncols, "ci_hi": float(hi) * ncols,
                     "share_of_columns": m})
    return pd.DataFrame(rows)


def majority_share(seats: pd.DataFrame) -> pd.DataFrame:
    """The share of the final score that comes from majorities (column majorities, heights 1-4
    and capitals), per player count: for all seats, winners, and each strategy; pooled (sum of
    majority VP / sum of scores) and as the mean of each seat's own share (seats with a positive
    score) with its interval."""
    rows = []
    for n, grp in by_player_count(seats):
        maj = grp[MAJORITY_CATEGORIES].to_numpy().sum(axis=1, dtype=np.int64)
        score = grp["score"].to_numpy().astype(np.int64)
        groups = [("all seats", np.ones(len(grp), bool)), ("winners", grp["win"].to_numpy())]
        groups += [(f"strategy {s}", (grp["strategy"] == s).to_numpy())
                   for s in grp["strategy"].cat.remove_unused_categories().cat.categories]
        for label, mask in groups:
            sc, mj = score[mask], maj[mask]
            pos = sc > 0
            share = mj[pos] / sc[pos]
            m = share.mean() if len(share) else np.nan
            sd = share.std(ddof=1) if len(share) > 1 else np.nan
            lo, hi = mean_ci_from(m, sd, len(share))
            rows.append({"n_players": n, "group": label, "seat_games": int(mask.sum()),
                         "pooled_share": mj.sum() / sc.sum() if sc.sum() else np.nan,
                         "mean_share": m, "ci_lo": float(lo), "ci_hi": float(hi),
                         "mean_majority_vp": mj.mean() if len(mj) else np.nan})
    return pd.DataFrame(rows)


def victory_margin(seats: pd.DataFrame) -> pd.DataFrame:
    """Margin of victory per player count: the winner's score minus the best other score, with
    its mean, interval and quantiles, and the shares of games decided by the tie-break (margin
    0: the engine's D18 tie-break picked the winner) and by 5 VP or less."""
    rows = []
    for n, grp in by_player_count(seats):
        win = per_game(grp, "win", n)
        margin = score_margin(grp, n).reshape(-1, n)[win]
        g = len(margin)
        m, sd = margin.mean(), margin.std(ddof=1) if g > 1 else np.nan
        lo, hi = mean_ci_from(m, sd, g)
        q = np.percentile(margin, [10, 25, 50, 75, 90])
        k0, k5 = int((margin == 0).sum()), int((margin <= 5).sum())
        t_lo, t_hi = wilson(k0, g)
        f_lo, f_hi = wilson(k5, g)
        rows.append({"n_players": n, "games": g, "mean_margin": m, "ci_lo": float(lo), "ci_hi": float(hi),
                     "sd": sd, "p10": q[0], "q25": q[1], "median": q[2], "q75": q[3], "p90": q[4],
                     "max": int(margin.max()),
                     "share_tiebreak": k0 / g, "tiebreak_lo": float(t_lo), "tiebreak_hi": float(t_hi),
                     "share_within_5": k5 / g, "within_5_lo": float(f_lo), "within_5_hi": float(f_hi)})
    return pd.DataFrame(rows)


def victory_margins(seats: pd.DataFrame) -> dict[int, np.ndarray]:
    """The margin of victory of every game, per player count (for the histogram)."""
    out = {}
    for n, grp in by_player_count(seats):
        out[n] = score_margin(grp, n).reshape(-1, n)[per_game(grp, "win", n)]
    return out


# ---------------------------------------------------------------------------------------------
# game shape
# ---------------------------------------------------------------------------------------------
def game_shape(data: Dataset | list) -> pd.DataFrame:
    """Rounds and turns per game and final scores, per player count: means with intervals and
    quantiles; the share of each end trigger is in :func:`end_triggers`."""
    if not isinstance(data, Dataset):
        data = load(data)
    rows = []
    for n, g in data.games.groupby("n_players", observed=True):
        s = data.seats.loc[(data.seats["n_players"] == n).to_numpy(), ["score", "win"]]
        row = {"n_players": int(n), "games": len(g)}
        for col in ("rounds", "turns"):
            v = g[col].to_numpy()
            sd = v.std(ddof=1) if len(v) > 1 else np.nan
            lo, hi = mean_ci_from(v.mean(), sd, len(v))
            q = np.percentile(v, [10, 50, 90])
            row.update({f"{col}_mean": v.mean(), f"{col}_lo": float(lo), f"{col}_hi": float(hi),
                        f"{col}_p10": q[0], f"{col}_median": q[1], f"{col}_p90": q[2],
                        f"{col}_max": int(v.max())})
        sc = s["score"].to_numpy()
        ws = sc[s["win"].to_numpy()]
        q = np.percentile(sc, [10, 50, 90])
        row.update({"score_mean": sc.mean(), "score_sd": sc.std(ddof=1) if len(sc) > 1 else np.nan,
                    "score_p10": q[0], "score_median": q[1], "score_p90": q[2],
                    "winner_score_mean": ws.mean(), "winner_score_median": float(np.median(ws))})
        rows.append(row)
    return pd.DataFrame(rows)


def end_triggers(data: Dataset) -> pd.DataFrame:
    """Share of games per end trigger and player count, with Wilson intervals."""
    rows = []
    for n, g in data.games.groupby("n_players", observed=True):
        counts = g["end_trigger"].astype(str).value_counts()
        for trig in [t for t in L.END_NAMES if t != "none"] + sorted(set(counts.index) - set(L.END_NAMES)):
            k = int(counts.get(trig, 0))
            lo, hi = wilson(k, len(g))
            rows.append({"n_players": int(n), "end_trigger": trig, "games": len(g), "count": k,
                         "share": k / len(g), "ci_lo": float(lo), "ci_hi": float(hi)})
    return pd.DataFrame(rows)


def tension(data: Dataset) -> pd.DataFrame:
    """How close the games are, per player count, from the leader after each round by score
    (the last round's standing is the final score, led by the winner): lead changes per game
    (mean with interval, share of games without one), the largest deficit the winner came back
    from (VP, quantiles), how many rounds before the end the winner took the lead for good, and
    the share of games decided in the last round (Wilson interval). Empty for runs of versions
    that did not count these."""
    rows = []
    games = data.games
    if not set(TENSION_COLUMNS) <= set(games.columns):
        return pd.DataFrame()
    for n, g in games.groupby("n_players", observed=True):
        ch = g["lead_changes"].to_numpy().astype(float)
        sd = ch.std(ddof=1) if len(ch) > 1 else np.nan
        lo, hi = mean_ci_from(ch.mean(), sd, len(ch))
        cb = g["comeback"].to_numpy()
        before = (g["rounds"] - g["winner_led_from"]).to_numpy()
        k = int(g["decided_last_round"].sum())
        llo, lhi = wilson(k, len(g))
        rows.append({"n_players": int(n), "games": len(g), "lead_changes_mean": ch.mean(),
                     "lead_changes_lo": float(lo), "lead_changes_hi": float(hi),
                     "share_no_change": float((ch == 0).mean()),
                     "comeback_mean": cb.mean(), "comeback_median": float(np.median(cb)),
                     "comeback_p90": float(np.percentile(cb, 90)), "comeback_max": int(cb.max()),
                     "led_rounds_median": float(np.median(before)), "led_rounds_mean": before.mean(),
                     "decided_last_round": k, "share_last_round": k / len(g),
                     "last_round_lo": float(llo), "last_round_hi": float(lhi)})
    return pd.DataFrame(rows)


# ---------------------------------------------------------------------------------------------
# headline metrics per game (analysis/variants.py before the streaming pass)
# ---------------------------------------------------------------------------------------------
from analysis.fairness import compare_fairness  # noqa: E402
from analysis.stats import negligible  # noqa: E402
from analysis.variants import (UNFAIRNESS, linearised_ratio, ratio_with_se, difference_row, ratio_ci,  # noqa: E402
                               setup_differences)
from analysis import numbers  # noqa: E402

@dataclass
class GameData:
    """One run as per-game numerator / denominator arrays for every metric, plus the seeds."""

    n_players: int
    game_id: np.ndarray
    seed: np.ndarray
    cluster: np.ndarray                      # cluster code per game (the seed)
    metrics: dict                            # name -> (num per game, den per game, kind)

    def names(self) -> list[str]:
        return list(self.metrics)

    def seed_wins(self) -> np.ndarray:
        """Win counts per seed (cluster) and seat, shape (seeds, seats)."""
        c = int(self.cluster.max()) + 1 if len(self.cluster) else 0
        return np.stack([np.bincount(self.cluster, weights=self.metrics[f"seat {s} win rate"][0], minlength=c)
                         for s in range(self.n_players)], axis=1)


def game_data(run: RunResult) -> GameData:
    """The per-game arrays of a run's finished chunks."""
    n = int(run.manifest["config"]["players"])
    cols = ["game_id", "seat", "strategy", "score", "win"] + MAJORITY_CATEGORIES
    seats = _blocks(run.table("seats", cols), n)
    order = np.argsort(seats["game_id"].to_numpy()[::n], kind="stable")
    rows = (order[:, None] * n + np.arange(n)[None, :]).reshape(-1)
    seats = seats.iloc[rows].reset_index(drop=True)
    games = run.table("games", ["game_id", "seed", "rounds"])
    games = games.sort_values("game_id", kind="stable").reset_index(drop=True)
    gid = seats["game_id"].to_numpy()[::n]
    if len(gid) != len(games) or not np.array_equal(gid, games["game_id"].to_numpy()):
        raise AnalysisError(f"run {run.out}: the seat and game tables do not hold the same games")
    win = seats["win"].to_numpy().reshape(-1, n).astype(float)
    score = seats["score"].to_numpy().reshape(-1, n).astype(float)
    maj = seats[MAJORITY_CATEGORIES].to_numpy().sum(axis=1).reshape(-1, n).astype(float)
    ones = np.ones(len(gid))
    m: dict = {}
    for s in range(n):
        m[f"seat {s} win rate"] = (win[:, s], ones, "rate")
    strat = seats["strategy"].astype(str).to_numpy().reshape(-1, n)
    names = sorted(set(strat.reshape(-1)))
    if len(names) > 1:
        for name in names:
            mine = strat == name
            m[f"{name} win rate"] = ((win * mine).sum(axis=1), mine.sum(axis=1).astype(float), "rate")
    m["mean score"] = (score.sum(axis=1), np.full(len(gid), float(n)), "mean")
    total = score.sum(axis=1)
    share = np.divide(maj.sum(axis=1), total, out=np.zeros(len(gid)), where=total > 0)
    m["majority share of score"] = (share, ones, "share")
    m["game length (rounds)"] = (games["rounds"].to_numpy().astype(float), ones, "mean")
    seed = games["seed"].to_numpy()
    _, cluster = np.unique(seed, return_inverse=True)
    return GameData(n, gid, seed, cluster, m)


def run_metrics(run: RunResult | GameData, alpha: float = ALPHA) -> pd.DataFrame:
    """Every headline metric of one run with its 1 - alpha interval: metric, kind, value, lo,
    hi, games. The seat unfairness follows the seat win rates."""
    data = run if isinstance(run, GameData) else game_data(run)
    rows = []
    for name, (num, den, kind) in data.metrics.items():
        v, lo, hi = ratio_ci(num, den, data.cluster, alpha)
        if kind in ("rate", "share"):
            lo, hi = max(lo, 0.0), min(hi, 1.0)
        rows.append({"metric": name, "kind": kind, "value": v, "lo": lo, "hi": hi,
                     "games": len(num)})
    f = seat_fairness(data.seed_wins(), alpha=alpha)
    rows.insert(data.n_players, {"metric": UNFAIRNESS, "kind": "unfairness", "value": f.rms,
                                 "lo": f.rms_lo, "hi": f.rms_hi, "games": len(data.game_id)})
    return pd.DataFrame(rows)


def pairing(a: GameData, b: GameData) -> tuple[np.ndarray, np.ndarray] | None:
    """Row indexes of the games both runs hold (same game id, same seed), or None when the runs
    share no such game (independent samples)."""
    common, ia, ib = np.intersect1d(a.game_id, b.game_id, assume_unique=True, return_indices=True)
    if len(common) == 0:
        return None
    same = a.seed[ia] == b.seed[ib]
    if not same.all():
        return None
    return ia, ib


def _sub(data: GameData, idx: np.ndarray, cluster: np.ndarray) -> GameData:
    return GameData(data.n_players, data.game_id[idx], data.seed[idx], cluster,
                    {k: (v[0][idx], v[1][idx], v[2]) for k, v in data.metrics.items()})


def compare(run_a: RunResult, run_b: RunResult, alpha: float = ALPHA,
            min_effect: float = MIN_EFFECT) -> tuple[pd.DataFrame, dict]:
    """How each headline metric moved from run A to run B: metric, kind, a, b, diff (B - A), lo,
    hi (1 - alpha), p, p_holm (Holm over the metrics compared), moved, negligible, method.
    Paired by seed when both runs hold the same games (only those games are used). The seat
    unfairness row's diff is the change in the mean square seat deviation (see the module)."""
    a, b = game_data(run_a), game_data(run_b)
    if a.n_players != b.n_players:
        raise AnalysisError(f"the runs have different player counts ({a.n_players} and {b.n_players}); "
                            "compare runs of one player count")
    pair = pairing(a, b)
    info = {"paired": pair is not None, "games_a": len(a.game_id), "games_b": len(b.game_id),
            "setup": setup_differences(run_a.manifest, run_b.manifest), "alpha": alpha,
            "min_effect": min_effect}
    if pair is not None:
        ia, ib = pair
        _, cl = np.unique(a.seed[ia], return_inverse=True)
        c = int(cl.max()) + 1
        info.update(games_paired=len(ia), seeds_paired=c)
        a, b = _sub(a, ia, cl), _sub(b, ib, cl)
    rows = []
    for name in a.metrics:
        if name not in b.metrics:
            continue
        (na, da, kind), (nb, db, _) = a.metrics[name], b.metrics[name]
        if pair is not None:
            ra, za = linearised_ratio(na, da, a.cluster, c)
            rb, zb = linearised_ratio(nb, db, b.cluster, c)
            se = (zb - za).std(ddof=1) / np.sqrt(c) if c > 1 else float("nan")
            rows.append(difference_row(name, kind, ra, rb, rb - ra, se, c - 1,
                                       "paired by seed (t on per-seed differences)", alpha))
        else:
            (ra, sa, ca), (rb, sb, cb) = ratio_with_se(na, da, a.cluster), ratio_with_se(nb, db, b.cluster)
            se = float(np.hypot(sa, sb))
            df = se ** 4 / (sa ** 4 / (ca - 1) + sb ** 4 / (cb - 1)) if se > 0 else float("nan")
            rows.append(difference_row(name, kind, ra, rb, rb - ra, se, df,
                                       "independent runs (cluster-robust, Welch t)", alpha))
    fc = compare_fairness(a.seed_wins(), b.seed_wins(), paired=pair is not None, alpha=alpha)
    rows.insert(a.n_players, {"metric": UNFAIRNESS, "kind": "unfairness", "a": fc.a.rms, "b": fc.b.rms,
                              "diff": fc.diff, "lo": fc.lo, "hi": fc.hi, "p": fc.p,
                              "method": fc.method + "; diff = change in mean square seat deviation"})
    table = pd.DataFrame(rows)
    table["p_holm"] = holm(table["p"])
    table["moved"] = table["p_holm"] < alpha
    size = np.where(table["metric"] == UNFAIRNESS, table["b"] - table["a"], table["diff"])
    table["negligible"] = table["kind"].map(numbers.in_points) & negligible(size, min_effect)
    cols = ["metric", "kind", "a", "b", "diff", "lo", "hi", "p", "p_holm", "moved", "negligible", "method"]
    return table[cols], info




# ---------------------------------------------------------------------------------------------
# the seat fairness comparison on every seed's row
# ---------------------------------------------------------------------------------------------
from scipy import stats  # noqa: E402

from analysis.fairness import FairnessComparison, seat_deviations, u_statistic_variance, seat_fairness as _seat_fairness  # noqa: E402


def compare_fairness_every_seed(wins_a, wins_b, paired: bool, alpha: float = ALPHA) -> FairnessComparison:
    """:func:`analysis.fairness.compare_fairness` as it was before it worked on distinct rows:
    on float copies of every seed's row (the oracle of its distinct-row form)."""
    fa, fb = _seat_fairness(wins_a, alpha=alpha), _seat_fairness(wins_b, alpha=alpha)
    _, ea, _ = seat_deviations(wins_a)
    _, eb, _ = seat_deviations(wins_b)
    n = ea.shape[1] + 1
    if paired and len(ea) != len(eb):
        raise ValueError("paired comparison: both runs need the same seeds, row for row")
    nan = float("nan")
    diff = (fb.mean_square - fa.mean_square)
    if min(len(ea), len(eb)) < 3:
        return FairnessComparison(fa, fb, paired, min(len(ea), len(eb)), diff, nan, nan, nan, nan, alpha)
    if paired:
        c, k = ea.shape
        metric = np.diag(np.r_[np.ones(k), -np.ones(k)])          # b.b' - a.a'
        var = u_statistic_variance(np.hstack([eb, ea]), metric) / n ** 2
        df = c - 1
    else:
        va = u_statistic_variance(ea, np.eye(ea.shape[1])) / n ** 2
        vb = u_statistic_variance(eb, np.eye(eb.shape[1])) / n ** 2
        var = va + vb
        c = len(ea) + len(eb)
        # Welch-Satterthwaite degrees of freedom
        df = var ** 2 / (va ** 2 / (len(ea) - 1) + vb ** 2 / (len(eb) - 1)) if var > 0 else c - 2
    se = float(np.sqrt(var))
    if not se > 0:
        return FairnessComparison(fa, fb, paired, c, diff, diff, diff, nan, nan, alpha)
    t = diff / se
    half = float(stats.t.isf(alpha / 2, df)) * se
    return FairnessComparison(fa, fb, paired, len(ea) if paired else c, diff, diff - half, diff + half,
                              float(2 * stats.t.sf(abs(t), df)), float(stats.t.cdf(t, df)), alpha)
