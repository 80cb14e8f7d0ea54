"""Analysis tables from run folders, as pandas DataFrames.

:func:`analysis.scan.scan` reads one or more run folders once, block by block, into the
sufficient statistics of :mod:`analysis.aggregate` (a :class:`~analysis.scan.Scan`); every
function below takes those and returns one small DataFrame; each statistic comes from
:mod:`analysis.stats`. No function here sees a row of the tables, so a run of any size is
analysed in the memory of its statistics. :func:`frame_stats` builds the same statistics from a
DataFrame of seat rows (synthetic data in the tests).

Ties for the win do not exist in the tables: the engine breaks them (D18: fewer parts left,
then the later seat), so every game has exactly one winner and ``win`` counts that winner.
Seats are numbered from 0 (seat 0 plays first).
"""
from __future__ import annotations

import numpy as np
import pandas as pd

from evora_sim import layout as L
from evora_sim.manifest import damaged_chunks, describe_damaged, forget_chunks
from evora_sim.rules import load_rules
from evora_sim.storage import RunResult, open_run

from . import labels
from .aggregate import (CARD_NAMES, CATEGORIES, HEIGHT_KEYS, MAJORITY_CATEGORIES, OUTCOMES,  # noqa: F401
                        TENSION_COLUMNS, CountStats, SeatBlock, UseRows, score_margin)
from .explain_stats import parts_table
from .fairness import seat_fairness
from .scan import AnalysisError, Scan, scan  # noqa: F401  (AnalysisError: the analysis' one-line error)
from .stats import (ALPHA, ELO, MIN_EFFECT, MIN_USES, binom_p, bradley_terry, bt_bootstrap, clustered_rate_p,
                    clustered_wilson, holm, logistic_effect, mean_ci_from, negligible, newcombe_diff_clustered,
                    quantiles_from_counts, rating_ranges, seed_records, wilson)


# ---------------------------------------------------------------------------------------------
# opening runs
# ---------------------------------------------------------------------------------------------
def runs_by_count(runs, where: str) -> dict:
    """The runs keyed by player count, for a comparison paired by count (``evora compare``, the
    dashboard's compare); AnalysisError naming ``where`` when two runs have the same count."""
    out = {}
    for r in runs:
        n = int(r.manifest["config"]["players"])
        if n in out:
            raise AnalysisError(f"{where} holds two runs of {n} players ({out[n].out} and {r.out}); "
                                "compare run folders one by one")
        out[n] = r
    return out


def open_runs(paths, allow_partial: bool = False, players=None) -> list[RunResult]:
    """Open run folders for analysis, or raise AnalysisError with one clear message: a folder
    that is not a run, an incomplete run (unless ``allow_partial``), runs of different rules,
    a run with nothing finished, or a selection (``players``) that leaves nothing. Files are
    checked here by their sizes; their checksums are checked as they are read."""
    runs, seen = [], set()
    for p in paths:
        run = open_run(p)                   # RunError: not a run folder
        where = str(run.out.resolve())
        if where in seen:
            continue
        seen.add(where)
        # a finished chunk whose file is gone counts as missing; one whose file changed is refused
        damaged = damaged_chunks(run.out, run.manifest, full=False)
        gone = {k for k, why in damaged.items() if why.endswith(" is missing")}
        changed = {k: why for k, why in damaged.items() if k not in gone}
        if changed:
            raise AnalysisError(f"{describe_damaged(p, changed)}; run the run's command again to replay it")
        missing = sorted({int(k) for k, v in run.manifest["chunks"].items() if v != "done"} | gone)
        if missing:
            if not allow_partial:
                shown = ", ".join(str(k) for k in missing[:10]) + (" ..." if len(missing) > 10 else "")
                total = len(run.manifest["chunks"])
                raise AnalysisError(
                    f"run {p} is incomplete: {len(missing)} of {total} chunks missing ({shown}); "
                    "finish it by running its command again, or analyse the finished chunks "
                    "with --allow-partial")
            manifest = {**run.manifest, "chunks": dict(run.manifest["chunks"]),
                        "chunk_files": dict(run.manifest["chunk_files"]), "parts": dict(run.manifest.get("parts", {}))}
            forget_chunks(manifest, gone)
            run = RunResult(run.out, manifest)
        if not run.done_chunks():
            raise AnalysisError(f"run {p} has no finished chunk to analyse")
        runs.append(run)
    if not runs:
        raise AnalysisError("no run folder given")
    hashes = {r.manifest["rules_hash"] for r in runs}
    if len(hashes) > 1:
        detail = ", ".join(f"{r.out}: {r.manifest['rules_hash']}" for r in runs)
        raise AnalysisError(f"the runs use different rules ({detail}); report them separately")
    if players:
        wanted = {int(n) for n in players}
        chosen = [r for r in runs if r.manifest["config"]["players"] in wanted]
        if not chosen:
            have = sorted({r.manifest["config"]["players"] for r in runs})
            raise AnalysisError(f"the selection is empty: no run has {_join(sorted(wanted))} players "
                                f"(the runs have {_join(have)})")
        runs = chosen
    return runs


def _join(xs) -> str:
    return " or ".join(str(x) for x in xs)


def frame_stats(seats: pd.DataFrame, uses: dict | None = None, rules: dict | None = None) -> Scan:
    """The statistics of seat rows given as a DataFrame (columns n_players, game_id, seat,
    strategy, score, rank, win, cluster, seat_rotation, and any scoring categories; missing
    categories count as 0), for synthetic data. ``uses``: {"cards" or "spaces": a matrix of
    counts aligned with the rows, a seat "used" column c when its count is above 0}."""
    rules = rules or load_rules().data
    out = Scan([])
    for n, grp in seats.groupby("n_players", sort=True):
        n = int(n)
        order = np.lexsort((grp["seat"].to_numpy(), grp["game_id"].to_numpy()))
        g = grp.iloc[order]
        games = len(g) // n
        strategies = sorted(str(s) for s in pd.unique(g["strategy"].astype(str)))
        code = pd.Categorical(g["strategy"].astype(str), categories=strategies).codes.astype(np.int64)
        clusters, cluster = np.unique(g["cluster"].to_numpy()[::n], return_inverse=True)
        rotated = bool(g["seat_rotation"].all()) if "seat_rotation" in g else False
        spaces = (uses or {}).get("spaces", np.zeros((0, 0))).shape[1]
        c = CountStats(n, strategies, len(clusters), rules, rotated, False,
                       cards=(uses or {}).get("cards", np.zeros((0, len(CARD_NAMES)))).shape[1], spaces=spaces)

        def grid(col):
            return (g[col].to_numpy() if col in g else np.zeros(len(g), np.int64)).reshape(games, n)

        block = SeatBlock(code.reshape(games, n), grid("score"), grid("rank"), grid("win").astype(bool),
                          {cat: grid(cat).astype(np.int64) for cat in CATEGORIES}, cluster.astype(np.int64))
        rows = {}
        for name, matrix in (uses or {}).items():
            sub = np.asarray(matrix)[seats.index.get_indexer(grp.index)][order]
            r, col = np.nonzero(sub)
            rows[name] = UseRows(r // n, r % n, col, sub[r, col].astype(np.int64),
                                 {e: np.zeros(len(r), np.int64) for e in ("vp", "temple_uses")})
        c.add(block, None, rows)
        out.counts[n] = c
    return out


def _by_n(data: Scan):
    for n in data.player_counts:
        yield n, data.counts[n]


def _summary(hist) -> dict:
    """mean, 95% interval, sd and count of a histogram's groups."""
    mean, sd, cnt = hist.moments()
    lo, hi = mean_ci_from(mean, sd, cnt)
    return {"mean": mean, "sd": sd, "n": cnt, "lo": lo, "hi": hi}


# ---------------------------------------------------------------------------------------------
# seats
# ---------------------------------------------------------------------------------------------
def seed_wins(data: Scan, n: int) -> np.ndarray:
    """Win counts per seed and seat of one player count, shape (seeds, n): a seed's games (its
    rotations) are summed, as they are one cluster (see :mod:`analysis.fairness`)."""
    return data.counts[n].seed_wins()


def _mean_known(values) -> float:
    """The mean of the values that are known (not NaN); NaN when none is (a run too small for a
    clustered interval), without numpy's warning about an empty mean."""
    known = [v for v in values if not np.isnan(v)]
    return float(np.mean(known)) if known else np.nan


def seat_advantage(data: Scan, min_effect: float = MIN_EFFECT) -> tuple[pd.DataFrame, pd.DataFrame]:
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
    for n, c in _by_n(data):
        fair = 1.0 / n
        wins = c.wins_cell.reshape(-1, n).sum(axis=0)
        sc, mg = _summary(c.by_seat("score")), _summary(c.by_seat("margin"))
        games = sc["n"].astype(np.int64)
        seat_ids = np.flatnonzero(games)
        wins, games = wins[seat_ids], games[seat_ids]
        per_seed = c.seed_wins()
        win_rows, seeds_with = c.seed_win_rows()
        rotated = c.rotated
        equal = rotated and bool((win_rows.sum(axis=1) == n).all())
        lo, hi = wilson(wins, games)
        pvals, deffs = [binom_p(k, m, fair) for k, m in zip(wins, games)], [np.nan] * len(wins)
        if equal:                   # n games per seed: the seed is the cluster
            for i, s in enumerate(seat_ids):
                lo[i], hi[i], deffs[i] = clustered_wilson(per_seed[:, s], n)
                pvals[i] = clustered_rate_p(per_seed[:, s], n, fair)[0]
        f = seat_fairness(win_rows, counts=seeds_with)
        if n == 2:                  # seat 1 wins exactly the games seat 0 does not: one test
            pvals = [f.p, f.p]
        adj = np.asarray(pvals, dtype=float) if n == 2 else holm(pvals)
        for i, seat in enumerate(seat_ids):
            diff = wins[i] / games[i] - fair
            rows.append({
                "n_players": n, "seat": int(seat), "games": int(games[i]), "wins": int(wins[i]),
                "win_rate": wins[i] / games[i], "ci_lo": lo[i], "ci_hi": hi[i], "fair_share": fair,
                "diff": diff, "p_binom": pvals[i], "p_holm": adj[i],
                "significant": bool(adj[i] < ALPHA), "negligible": bool(negligible(diff, min_effect)),
                "design_effect": deffs[i],
                "mean_score": sc["mean"][seat], "score_lo": sc["lo"][seat], "score_hi": sc["hi"][seat],
                "mean_margin": mg["mean"][seat], "margin_lo": mg["lo"][seat], "margin_hi": mg["hi"][seat],
                "seat_rotation": rotated,
            })
        tests.append({"n_players": n, "games": int(games.min()), "seeds": f.seeds,
                      "unfairness": f.rms, "unfairness_lo": f.rms_lo, "unfairness_hi": f.rms_hi,
                      "mean_square": f.mean_square, "max_deviation": f.max_deviation,
                      "t_squared": f.statistic, "df1": f.df[0], "df2": f.df[1], "p": f.p,
                      "significant": bool(f.p < ALPHA), "negligible": bool(negligible(f.rms, min_effect)),
                      "seat_rotation": rotated, "design_effect": _mean_known(deffs) if equal else np.nan})
    return pd.DataFrame(rows), pd.DataFrame(tests)


def strategy_win_rates(data: Scan) -> pd.DataFrame:
    """Win rate and mean score of each strategy per player count (over its seat-games)."""
    rows = []
    for n, c in _by_n(data):
        wins = c.wins_cell.reshape(-1, n).sum(axis=1)
        sc = _summary(c.by_strategy("score"))
        for i, name in enumerate(c.strategies):
            if sc["n"][i]:
                rows.append({"n_players": n, "strategy": name, "seat_games": int(sc["n"][i]), "wins": int(wins[i]),
                             "mean_score": sc["mean"][i], "sd": sc["sd"][i]})
    agg = pd.DataFrame(rows, columns=["n_players", "strategy", "seat_games", "wins", "mean_score", "sd"])
    lo, hi = wilson(agg["wins"], agg["seat_games"])
    slo, shi = mean_ci_from(agg["mean_score"], agg["sd"], agg["seat_games"])
    agg = agg.assign(win_rate=agg["wins"] / agg["seat_games"], ci_lo=lo, ci_hi=hi,
                     fair_share=1 / agg["n_players"].astype(float), score_lo=slo, score_hi=shi)
    return agg[["n_players", "strategy", "seat_games", "wins", "win_rate", "ci_lo", "ci_hi",
                "fair_share", "mean_score", "score_lo", "score_hi"]]


# ---------------------------------------------------------------------------------------------
# strategy match-ups and ratings
# ---------------------------------------------------------------------------------------------
def matchups(data: Scan) -> pd.DataFrame:
    """Each strategy against each other, per player count: in 2-player games the share of
    their games it won; in 3-4-player (mixed) fields the share of games with both at the table
    in which it finished ahead of the other. Wilson intervals; exact binomial test against 50%,
    Holm-corrected over the pairs of a player count."""
    rows = []
    for n, c in _by_n(data):
        w = c.pairs.sum(axis=0)
        S = len(c.strategies)
        block = []
        for a in range(S):
            for b in range(S):
                m = w[a, b] + w[b, a]
                if a == b or m == 0:
                    continue
                lo, hi = wilson(w[a, b], m)
                block.append({"n_players": n, "strategy": c.strategies[a], "opponent": c.strategies[b],
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


def ratings(data: Scan, n_boot: int = 1000, seed: int = 0) -> pd.DataFrame:
    """Bradley-Terry ratings of the strategies per player count, fitted to the pairwise
    "finished ahead" counts and shown on the Elo scale (mean 0; a 100-point gap means the
    higher rated finishes ahead 64% of the time). 95% intervals from a bootstrap over seeds
    (games of one seed stay together, seeds pooled into at most 200 groups), made honest where a
    record is near-perfect (:func:`stats.rating_ranges`): a bootstrap over a record a strategy
    never lost resamples that record and printed false precision. Its units here are the
    bootstrap groups, no more than the seeds, so the near-perfect test and the exact limit are
    conservative (wider) when seeds are pooled."""
    rows = []
    for n, c in _by_n(data):
        if len(c.strategies) < 2:
            continue
        gw = c.pairs
        total = gw.sum(axis=0)
        est = bradley_terry(total) * ELO
        boot = bt_bootstrap(gw, n_boot=n_boot, seed=seed) * ELO
        lo, hi = np.percentile(boot, [2.5, 97.5], axis=0)
        lost, met, _ = seed_records([gw])
        lo, hi = (x * ELO for x in rating_ranges(lo / ELO, hi / ELO, lost, met))
        comps = total.sum(axis=1) + total.sum(axis=0)
        for i, name in enumerate(c.strategies):
            rows.append({"n_players": n, "strategy": name, "elo": est[i], "ci_lo": lo[i], "ci_hi": hi[i],
                         "comparisons": int(comps[i]), "wins": int(total[i].sum())})
    out = pd.DataFrame(rows, columns=["n_players", "strategy", "elo", "ci_lo", "ci_hi", "comparisons", "wins"])
    return out.sort_values(["n_players", "elo"], ascending=[True, False]).reset_index(drop=True)


# ---------------------------------------------------------------------------------------------
# card and Construction Site value
# ---------------------------------------------------------------------------------------------
def exposure_table(data: Scan, table: str, labels: list[str], what: str = "card",
                   min_effect: float = MIN_EFFECT) -> pd.DataFrame:
    """Per player count and column of the ``table`` ("cards" or "spaces") use counts (a seat
    "used" it when its count is above 0): how often it was used, the win rate of seats that used
    it and of seats that did not, their difference and the difference adjusted for strategy and
    seat (the win rate when used, adjusted: logistic regression, average marginal effect), Holm
    over the columns within a player count. Every interval and test takes the seed as the
    independent unit (the seats of a game share one winner, a seed's rotations its stacks): the
    raw difference through its design effect (:func:`stats.newcombe_diff_clustered`), the
    regression through a cluster-robust covariance. Beyond CLUSTER_GROUPS seeds, whole seeds
    are pooled into that many groups (seed index modulo it) for these variances: a sum of
    independent seeds is independent of the other sums, so the variance estimates stay
    unbiased, with CLUSTER_GROUPS - 1 degrees of freedom, at a fraction of the cost."""
    rows = []
    for n, c in _by_n(data):
        exp = c.uses[table]
        S = len(c.strategies)
        B = S * n                                   # cells of (strategy, seat)
        all_wins, all_n = c.cell_w, c.cell_n
        seat_rows = c.games * n
        block = []
        for col, label in enumerate(labels[:exp.columns]):
            w1, n1 = exp.w1[col], exp.n1[col]
            w0, n0 = all_wins - w1, all_n - n1
            d, dlo, dhi, p_raw, deff = newcombe_diff_clustered(w1.sum(axis=1), n1.sum(axis=1),
                                                               w0.sum(axis=1), n0.sum(axis=1))
            ww, nn = np.concatenate([w0.sum(axis=0), w1.sum(axis=0)]), np.concatenate([n0.sum(axis=0), n1.sum(axis=0)])
            k1, n1_total, k0, n0_total = ww[B:].sum(), nn[B:].sum(), ww[:B].sum(), nn[:B].sum()
            times = int(exp.times[col])
            cells = pd.DataFrame({"used": np.repeat([0, 1], B), "strategy": np.tile(np.repeat(np.arange(S), n), 2),
                                  "seat": np.tile(np.arange(n), 2 * S), "wins": ww, "n": nn})
            adj = logistic_effect(cells, "used", ["strategy", "seat"],
                                  clusters=(np.hstack([w0, w1]), np.hstack([n0, n1])))
            row = {"n_players": n, what: label, "times": times, "per_game": times / c.games,
                   "seat_games_used": int(n1_total), "share_used": n1_total / seat_rows}
            if "vp" in exp.extras:
                row["vp_per_play"] = exp.sums["vp"][col] / times if times else np.nan
            if "temple_uses" in exp.extras:
                row["temple_uses"] = int(exp.sums["temple_uses"][col])
            lo1, hi1 = wilson(k1, n1_total)
            lo0, hi0 = wilson(k0, n0_total)
            row.update({"win_used": k1 / n1_total if n1_total else np.nan, "win_used_lo": float(lo1),
                        "win_used_hi": float(hi1),
                        "win_not": k0 / n0_total if n0_total else np.nan, "win_not_lo": float(lo0),
                        "win_not_hi": float(hi0),
                        "diff": d, "diff_lo": dlo, "diff_hi": dhi, "design_effect": deff, "p_raw": p_raw,
                        **adj})
            block.append(row)
        # too rare to judge (fewer than MIN_USES seat-games used it): no verdict, and not among
        # Holm's tests; an estimate from a handful of plays is noise, not a finding
        judged = [r for r in block if r["seat_games_used"] >= MIN_USES]
        for r in block:
            r.update(too_rare=r["seat_games_used"] < MIN_USES, p_adj_holm=np.nan, significant=False,
                     negligible=False)
        for r, p in zip(judged, holm([r["p_adj"] for r in judged])):
            r["p_adj_holm"] = p
            r["significant"] = bool(np.isfinite(p) and p < ALPHA)
            r["negligible"] = bool(negligible(r["adj_diff"], min_effect)) if np.isfinite(r["adj_diff"]) else False
        rows += block
    return pd.DataFrame(rows)


def card_value(data: Scan, min_effect: float = MIN_EFFECT) -> pd.DataFrame:
    """Per player count, for each of the 12 card effects and 4 instant tiles: times played from
    hand (tiles: taken), plays per game, the VP scored while resolving a play, Temple uses of
    the effect; the win rate of seats that played it at least once vs. seats that did not, and
    the win rate when played, adjusted for strategy and seat (see :func:`exposure_table`)."""
    t = exposure_table(data, "cards", CARD_NAMES, "card", min_effect)
    t.insert(2, "name", t["card"].map(labels.card_title))     # the rulebook's words; the code stays
    timing = card_timing(data)
    if not timing.empty:
        t = t.merge(timing.drop(columns="plays"), on=["n_players", "card"], how="left")
    return t


def card_timing(data: Scan) -> pd.DataFrame:
    """Per player count and card, when it is played (:mod:`analysis.playstates`): the share of
    its plays in a turn its seat began leading, after the end was triggered, and their mean place
    in the game, with 95% intervals over seeds; empty when a run does not record it."""
    frames = []
    for n, c in _by_n(data):
        if c.play_states is not None:
            frames.append(c.play_states.table(CARD_NAMES).assign(n_players=n))
    return pd.concat(frames, ignore_index=True) if frames else pd.DataFrame()


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


def space_value(data: Scan, min_effect: float = MIN_EFFECT) -> pd.DataFrame:
    """The same as :func:`card_value` for each Construction Site space (its action carried out
    by the seat at least once); the tables record no VP per space."""
    spaces = space_labels(data.rules())
    t = exposure_table(data, "spaces", spaces, "space", min_effect)
    titles = dict(zip(spaces, labels.space_titles(data.rules())))
    t.insert(2, "name", t["space"].map(titles))
    return t


# ---------------------------------------------------------------------------------------------
# majorities and score composition
# ---------------------------------------------------------------------------------------------
def _grouped(c: CountStats, by: str, name: str):
    """Histogram ``name`` by seat or by strategy, and the group names."""
    if by == "strategy":
        return c.by_strategy(name).trimmed(), list(c.strategies)
    return c.by_seat(name).trimmed(), [str(s) for s in range(c.n)]


def vp_by_category(data: Scan) -> pd.DataFrame:
    """Distribution of the VP from each scoring category (and of the final score), by seat and
    by strategy, per player count: mean with 95% interval, sd, quartiles, 90th percentile and
    the share of seat-games that scored anything in it."""
    rows = []
    for n, c in _by_n(data):
        for by in ("seat", "strategy"):
            for cat in CATEGORIES + ["score"]:
                h, group_names = _grouped(c, by, cat)
                mean, sd, cnt = h.moments()
                lo, hi = mean_ci_from(mean, sd, cnt)
                axis = h.axis
                for i, gname in enumerate(group_names):
                    if cnt[i] == 0:
                        continue
                    q = quantiles_from_counts(axis, h.counts[i], [0.25, 0.5, 0.75, 0.9])
                    nz = 1 - h.counts[i][axis == 0].sum() / cnt[i]
                    rows.append({"n_players": n, "by": by, "group": gname, "category": cat,
                                 "mean": mean[i], "ci_lo": lo[i], "ci_hi": hi[i], "sd": sd[i],
                                 "q25": q[0], "median": q[1], "q75": q[2], "p90": q[3],
                                 "share_nonzero": nz, "seat_games": int(cnt[i])})
    return pd.DataFrame(rows)


def score_distribution(data: Scan) -> dict[int, tuple[np.ndarray, np.ndarray]]:
    """Final score distribution per player count and seat: (score axis, counts[seat, score])."""
    out = {}
    for n, c in _by_n(data):
        h = c.by_seat("score").trimmed()
        out[n] = (h.axis, h.counts)
    return out


def majority_outcomes(data: Scan) -> pd.DataFrame:
    """For each height majority (1-4) and the capitals majority, per player count: the share of
    games in which one player won it outright, players tied for it, or no player scored it
    (the majority was held by white or nobody had the parts: the tables cannot tell these two
    apart), with Wilson intervals."""
    rows = []
    for n, c in _by_n(data):
        games = c.games
        for j, key in enumerate(HEIGHT_KEYS.values()):
            for o, outcome in enumerate(OUTCOMES):
                k = int(c.outcomes[j, o])
                lo, hi = wilson(k, games)
                rows.append({"n_players": n, "majority": key, "outcome": outcome, "games": games,
                             "count": k, "share": k / games, "ci_lo": float(lo), "ci_hi": float(hi)})
    return pd.DataFrame(rows)


def columns_held(data: Scan) -> pd.DataFrame:
    """Column majorities held per player per game (column-majority VP / VP per column), by seat
    and by strategy per player count: mean with interval and the shares holding 0, 1, 2, 3 and
    4 or more; plus, per game, the share of the Temple's columns held by anyone."""
    rows = []
    for n, c in _by_n(data):
        for by in ("seat", "strategy"):
            h, group_names = _grouped(c, by, "held")
            axis = h.axis
            mean, sd, cnt = h.moments()
            lo, hi = mean_ci_from(mean, sd, cnt)
            for i, gname in enumerate(group_names):
                if cnt[i] == 0:
                    continue
                row = {"n_players": n, "by": by, "group": gname, "seat_games": int(cnt[i]),
                       "mean_held": mean[i], "ci_lo": lo[i], "ci_hi": hi[i]}
                for k in range(5):
                    sel = (axis == k) if k < 4 else (axis >= 4)
                    row[f"share_{k}{'+' if k == 4 else ''}"] = h.counts[i][sel].sum() / cnt[i]
                rows.append(row)
        ncols = data.rules(n)["temple"]["columns"][str(n)]
        mean, sd, cnt = c.per_game["held_total"].moments()
        if cnt[0] == 0:            # majority.column_vp = 0: no column's holder can be read off the tables
            continue
        m, sd, games = mean[0] / ncols, sd[0] / ncols, int(cnt[0])
        lo, hi = mean_ci_from(m, sd, games)
        rows.append({"n_players": n, "by": "game", "group": f"all seats ({ncols} columns)",
                     "seat_games": games, "mean_held": m * ncols,
                     "ci_lo": float(lo) * ncols, "ci_hi": float(hi) * ncols,
                     "share_of_columns": m})
    return pd.DataFrame(rows)


def majority_share(data: Scan) -> pd.DataFrame:
    """The share of the final score that comes from majorities (column majorities, heights 1-4
    and capitals), per player count: for all seats, winners, and each strategy; pooled (sum of
    majority VP / sum of scores) and as the mean of each seat's own share (seats with a positive
    score) with its interval."""
    rows = []
    for n, c in _by_n(data):
        for label, (count, mj, sc, mom) in c.share.items():
            m = mom.mean if mom.n else np.nan
            lo, hi = mean_ci_from(m, mom.sd, mom.n)
            rows.append({"n_players": n, "group": label, "seat_games": int(count),
                         "pooled_share": mj / sc if sc else np.nan,
                         "mean_share": m, "ci_lo": float(lo), "ci_hi": float(hi),
                         "mean_majority_vp": mj / count if count else np.nan})
    return pd.DataFrame(rows)


def victory_margin(data: Scan) -> pd.DataFrame:
    """Margin of victory per player count: the winner's score minus the best other score, with
    its mean, interval and quantiles, and the shares of games decided by the tie-break (margin
    0: the engine's D18 tie-break picked the winner) and by 5 VP or less."""
    rows = []
    for n, c in _by_n(data):
        h = c.winner["margin"]
        mean, sd, cnt = h.moments()
        g, m, sd = int(cnt[0]), mean[0], sd[0]
        lo, hi = mean_ci_from(m, sd, g)
        q = h.percentile([10, 25, 50, 75, 90])
        k0, k5 = h.count(0), h.count_at_most(5)
        t_lo, t_hi = wilson(k0, g)
        f_lo, f_hi = wilson(k5, g)
        rows.append({"n_players": n, "games": g, "mean_margin": m, "ci_lo": float(lo), "ci_hi": float(hi),
                     "sd": sd, "p10": q[0], "q25": q[1], "median": q[2], "q75": q[3], "p90": q[4],
                     "max": h.max(),
                     "share_tiebreak": k0 / g, "tiebreak_lo": float(t_lo), "tiebreak_hi": float(t_hi),
                     "share_within_5": k5 / g, "within_5_lo": float(f_lo), "within_5_hi": float(f_hi)})
    return pd.DataFrame(rows)


def victory_margins(data: Scan) -> dict:
    """The distribution of the margin of victory, per player count (a Hist, for the figure)."""
    return {n: c.winner["margin"] for n, c in _by_n(data)}


# ---------------------------------------------------------------------------------------------
# game shape
# ---------------------------------------------------------------------------------------------
def _mean_row(h, prefix: str, qs=(10, 50, 90), names=("p10", "median", "p90")) -> dict:
    mean, sd, cnt = h.moments()
    lo, hi = mean_ci_from(mean[0], sd[0], cnt[0])
    q = h.percentile(list(qs))
    row = {f"{prefix}_mean": mean[0], f"{prefix}_lo": float(lo), f"{prefix}_hi": float(hi)}
    row.update({f"{prefix}_{k}": v for k, v in zip(names, q)})
    return row


def game_shape(data: Scan) -> pd.DataFrame:
    """Rounds and turns per game and final scores, per player count: means with intervals and
    quantiles; the share of each end trigger is in :func:`end_triggers`."""
    rows = []
    for n, c in _by_n(data):
        row = {"n_players": int(n), "games": c.games}
        for col in ("rounds", "turns"):
            h = c.per_game[col]
            row.update(_mean_row(h, col))
            row[f"{col}_max"] = h.max()
        sc, ws = c.hists["score"].total(), c.winner["score"]
        mean, sd, _ = sc.moments()
        q = sc.percentile([10, 50, 90])
        row.update({"score_mean": mean[0], "score_sd": sd[0],
                    "score_p10": q[0], "score_median": q[1], "score_p90": q[2],
                    "winner_score_mean": ws.moments()[0][0], "winner_score_median": float(ws.percentile([50])[0])})
        rows.append(row)
    return pd.DataFrame(rows)


def game_lengths(data: Scan) -> dict:
    """Rounds per game, per player count (a Hist, for the figure)."""
    return {n: c.per_game["rounds"] for n, c in _by_n(data)}


def end_triggers(data: Scan) -> pd.DataFrame:
    """Share of games per end trigger and player count, with Wilson intervals."""
    rows = []
    for n, c in _by_n(data):
        games = c.games
        for trig in [t for t in L.END_NAMES if t != "none"] + sorted(set(c.ends) - set(L.END_NAMES)):
            k = int(c.ends.get(trig, 0))
            lo, hi = wilson(k, games)
            rows.append({"n_players": int(n), "end_trigger": trig, "games": games, "count": k,
                         "share": k / games, "ci_lo": float(lo), "ci_hi": float(hi)})
    return pd.DataFrame(rows)


def tension(data: Scan) -> pd.DataFrame:
    """How close the games are, per player count, from the leader after each round by score
    (the last round's standing is the final score, led by the winner): lead changes per game
    (mean with interval, share of games without one), the largest deficit the winner came back
    from (VP, quantiles), how many rounds before the end the winner took the lead for good, and
    the share of games decided in the last round (Wilson interval). Only the player counts whose
    runs count these (runs of earlier versions do not): empty without any."""
    rows = []
    for n, c in _by_n(data):
        if not c.tension:
            continue
        g = c.games
        ch, cb, before = c.per_game["lead_changes"], c.per_game["comeback"], c.per_game["led_rounds"]
        mean, sd, cnt = ch.moments()
        lo, hi = mean_ci_from(mean[0], sd[0], cnt[0])
        k = c.decided_last_round
        llo, lhi = wilson(k, g)
        rows.append({"n_players": int(n), "games": g, "lead_changes_mean": mean[0],
                     "lead_changes_lo": float(lo), "lead_changes_hi": float(hi),
                     "share_no_change": ch.count(0) / g,
                     "comeback_mean": cb.moments()[0][0], "comeback_median": float(cb.percentile([50])[0]),
                     "comeback_p90": float(cb.percentile([90])[0]), "comeback_max": cb.max(),
                     "led_rounds_median": float(before.percentile([50])[0]), "led_rounds_mean": before.moments()[0][0],
                     "decided_last_round": k, "share_last_round": k / g,
                     "last_round_lo": float(llo), "last_round_hi": float(lhi)})
    return pd.DataFrame(rows)


def why(data: Scan) -> dict:
    """Per player count whose runs record where their games were decided (runs of earlier versions
    do not): the decomposition of each seat's deviation from a fair share by cause
    (:func:`analysis.explain_stats.parts_table`) and the final round's wins by the seat on whose turn the
    lead was taken."""
    return {n: (parts_table(c.parts), c.parts.turns) for n, c in _by_n(data) if c.explained and c.parts.seeds > 1}


def tension_distributions(data: Scan) -> dict:
    """Per player count with tension figures: the Hists of lead changes, the winner's comeback
    and the rounds before the end the winner led for good (for the figure)."""
    return {n: {"lead_changes": c.per_game["lead_changes"], "comeback": c.per_game["comeback"],
                "_led": c.per_game["led_rounds"]} for n, c in _by_n(data) if c.tension}
