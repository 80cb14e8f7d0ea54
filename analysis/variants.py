"""Headline metrics of a run, and how they move between runs (``evora compare``, ``evora sweep``).

Every headline metric is a ratio of sums over games: a seat's win rate (wins / games), a
strategy's win rate (its wins / its seat-games), the mean score (points / seat-games), the game
length (rounds / games), the majority share of the score (per game: VP from majorities / all VP,
averaged over games). Its 95% interval treats the **seed** as the unit (the games one seed gives
under every seat rotation are one cluster): the cluster-robust delta method (linearisation of
the ratio), with a t quantile on clusters - 1 degrees of freedom. With one game per seed this is
the ordinary t interval of a mean (for a win rate: the Wald interval).

Between two runs the difference is **paired** when both hold the same games (same game ids with
the same seeds: common random numbers, e.g. the same ``--seed`` under two rule variants): the
interval then comes from the per-seed differences of the linearised metric, which removes the
variation the two runs share. Otherwise the runs are independent samples: Newcombe's hybrid
score interval for a win rate, a normal interval from the two variances for the other metrics.

The seat advantage spread (best seat's win rate minus the worst seat's) is not a ratio: its
interval is a percentile bootstrap over seeds (paired runs: the same seeds redrawn in both).
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd
from scipy import stats

from evora_sim.runner import RunResult

from .stats import newcombe_diff
from .tables import MAJORITY_CATEGORIES, AnalysisError, _blocks

N_BOOT = 1000


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


def _cluster_sums(num, den, cluster, n_clusters):
    return (np.bincount(cluster, weights=num, minlength=n_clusters),
            np.bincount(cluster, weights=den, minlength=n_clusters))


def _linearised(num, den, cluster, n_clusters):
    """Ratio of sums and its per-cluster linearised values (mean 0); (ratio, z per cluster)."""
    nc, dc = _cluster_sums(num, den, cluster, n_clusters)
    ratio = nc.sum() / dc.sum()
    return ratio, (nc - ratio * dc) / dc.mean()


def _t(df, alpha: float = 0.05) -> float:
    return float(stats.t.ppf(1 - alpha / 2, df)) if df >= 1 else float("nan")


def ratio_ci(num, den, cluster, alpha: float = 0.05) -> tuple[float, float, float]:
    """Ratio of sums with its cluster-robust 1 - alpha interval; (value, lo, hi)."""
    c = int(cluster.max()) + 1 if len(cluster) else 0
    if c == 0:
        return float("nan"), float("nan"), float("nan")
    r, z = _linearised(num, den, cluster, c)
    if c < 2:
        return float(r), float("nan"), float("nan")
    half = _t(c - 1, alpha) * z.std(ddof=1) / np.sqrt(c)
    return float(r), float(r - half), float(r + half)


def _spread_boot(data: GameData, weights_list) -> np.ndarray:
    """Seat win-rate spread (max - min) for each bootstrap weight vector over clusters."""
    n = data.n_players
    c = int(data.cluster.max()) + 1
    wins = np.stack([np.bincount(data.cluster, weights=data.metrics[f"seat {s} win rate"][0], minlength=c)
                     for s in range(n)])            # (n, c)
    games = np.bincount(data.cluster, minlength=c).astype(float)
    out = []
    for w in weights_list:
        rates = (wins @ w) / (games @ w)
        out.append(rates.max() - rates.min())
    return np.asarray(out)


def _boot_weights(c: int, seed: int = 0, n_boot: int = N_BOOT):
    rng = np.random.default_rng(seed)
    return [np.bincount(rng.integers(0, c, c), minlength=c).astype(float) for _ in range(n_boot)]


def spread(data: GameData, n_boot: int = N_BOOT, alpha: float = 0.05) -> tuple[float, float, float]:
    """Seat advantage spread (best seat's win rate - worst seat's) with a bootstrap interval."""
    c = int(data.cluster.max()) + 1
    est = float(_spread_boot(data, [np.ones(c)])[0])
    if c < 2:
        return est, float("nan"), float("nan")
    boot = _spread_boot(data, _boot_weights(c, 0, n_boot))
    lo, hi = np.percentile(boot, [100 * alpha / 2, 100 * (1 - alpha / 2)])
    return est, float(lo), float(hi)


def subset(data: GameData, mask: np.ndarray) -> GameData:
    """The games of ``mask`` only (clusters renumbered)."""
    _, cl = np.unique(data.seed[mask], return_inverse=True)
    return GameData(data.n_players, data.game_id[mask], data.seed[mask], cl,
                    {k: (v[0][mask], v[1][mask], v[2]) for k, v in data.metrics.items()})


def run_metrics(run: RunResult | GameData, n_boot: int = N_BOOT, alpha: float = 0.05) -> pd.DataFrame:
    """Every headline metric of one run with its 1 - alpha interval: metric, kind, value, lo,
    hi, games."""
    data = run if isinstance(run, GameData) else game_data(run)
    rows = []
    for name, (num, den, kind) in data.metrics.items():
        v, lo, hi = ratio_ci(num, den, data.cluster, alpha)
        if kind in ("rate", "share"):
            lo, hi = max(lo, 0.0), min(hi, 1.0)
        rows.append({"metric": name, "kind": kind, "value": v, "lo": lo, "hi": hi,
                     "games": len(num)})
    v, lo, hi = spread(data, n_boot, alpha)
    rows.insert(data.n_players, {"metric": "seat advantage spread", "kind": "rate", "value": v,
                                 "lo": lo, "hi": hi, "games": len(data.game_id)})
    return pd.DataFrame(rows)


# ---------------------------------------------------------------------------------------------
# compare
# ---------------------------------------------------------------------------------------------
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


def compare(run_a: RunResult, run_b: RunResult, n_boot: int = N_BOOT) -> tuple[pd.DataFrame, dict]:
    """How each headline metric moved from run A to run B: metric, a, b, diff (B - A), lo, hi,
    method. Paired by seed when both runs hold the same games (only those games are used)."""
    a, b = game_data(run_a), game_data(run_b)
    if a.n_players != b.n_players:
        raise AnalysisError(f"the runs have different player counts ({a.n_players} and {b.n_players}); "
                            "compare runs of one player count")
    pair = pairing(a, b)
    info = {"paired": pair is not None, "games_a": len(a.game_id), "games_b": len(b.game_id),
            "setup": setup_differences(run_a.manifest, run_b.manifest)}
    rows = []
    if pair is not None:
        ia, ib = pair
        _, cl = np.unique(a.seed[ia], return_inverse=True)
        c = int(cl.max()) + 1
        info.update(games_paired=len(ia), seeds_paired=c)
        for name in a.metrics:
            if name not in b.metrics:
                continue
            na, da, kind = a.metrics[name]
            nb, db, _ = b.metrics[name]
            ra, za = _linearised(na[ia], da[ia], cl, c)
            rb, zb = _linearised(nb[ib], db[ib], cl, c)
            d = rb - ra
            half = _t(c - 1) * (zb - za).std(ddof=1) / np.sqrt(c) if c > 1 else float("nan")
            rows.append({"metric": name, "kind": kind, "a": ra, "b": rb, "diff": d,
                         "lo": d - half, "hi": d + half, "method": "paired by seed (t on per-seed differences)"})
        # spread: bootstrap over the shared seeds, the same draw for both runs
        sub_a = GameData(a.n_players, a.game_id[ia], a.seed[ia], cl,
                         {k: (v[0][ia], v[1][ia], v[2]) for k, v in a.metrics.items()})
        sub_b = GameData(b.n_players, b.game_id[ib], b.seed[ib], cl,
                         {k: (v[0][ib], v[1][ib], v[2]) for k, v in b.metrics.items()})
        w = _boot_weights(c, 0, n_boot) if c > 1 else []
        sa, sb = _spread_boot(sub_a, [np.ones(c)])[0], _spread_boot(sub_b, [np.ones(c)])[0]
        if w:
            boot = _spread_boot(sub_b, w) - _spread_boot(sub_a, w)
            lo, hi = np.percentile(boot, [2.5, 97.5])
        else:
            lo = hi = float("nan")
        rows.insert(a.n_players, {"metric": "seat advantage spread", "kind": "rate", "a": sa, "b": sb,
                                  "diff": sb - sa, "lo": float(lo), "hi": float(hi),
                                  "method": "paired bootstrap over seeds"})
    else:
        ma, mb = run_metrics(a, n_boot).set_index("metric"), run_metrics(b, n_boot).set_index("metric")
        for name in ma.index:
            if name not in mb.index:
                continue
            ra, rb = ma.loc[name, "value"], mb.loc[name, "value"]
            kind = ma.loc[name, "kind"]
            if name.endswith("win rate"):
                na, da, _ = a.metrics[name]
                nb, db, _ = b.metrics[name]
                d, lo, hi = newcombe_diff(nb.sum(), db.sum(), na.sum(), da.sum())
                method = "independent runs (Newcombe hybrid score)"
            else:
                d = rb - ra
                # each run's standard error from its own interval: variances add
                ha = (ma.loc[name, "hi"] - ma.loc[name, "lo"]) / 2
                hb = (mb.loc[name, "hi"] - mb.loc[name, "lo"]) / 2
                half = np.sqrt(ha ** 2 + hb ** 2)
                lo, hi = d - half, d + half
                method = "independent runs (normal, variances added)"
            rows.append({"metric": name, "kind": kind, "a": ra, "b": rb, "diff": float(d),
                         "lo": float(lo), "hi": float(hi), "method": method})
    return pd.DataFrame(rows), info


def _fmt_value(v: float, kind: str) -> str:
    if not np.isfinite(v):
        return "n/a"
    return f"{100 * v:.1f}%" if kind in ("rate", "share") else f"{v:.2f}"


def _fmt_diff(d: float, lo: float, hi: float, kind: str) -> str:
    scale, unit = (100.0, " points") if kind in ("rate", "share") else (1.0, "")
    if not np.isfinite(lo):
        return f"{scale * d:+.2f}{unit} (no interval)"
    half = max(hi - d, d - lo)
    sym = abs((hi - d) - (d - lo)) <= 1e-9 * max(1.0, abs(half))
    if sym:
        return f"{scale * d:+.2f} ± {scale * half:.2f}{unit}"
    return f"{scale * d:+.2f}{unit} [{scale * lo:+.2f}, {scale * hi:+.2f}]"


def _flatten(node, prefix=""):
    if isinstance(node, dict):
        for k, v in node.items():
            yield from _flatten(v, f"{prefix}{k}.")
    elif isinstance(node, list) and node and all(isinstance(x, dict) for x in node):
        for i, v in enumerate(node):
            yield from _flatten(v, f"{prefix}{i}.")
    else:
        yield prefix[:-1], node


def setup_differences(manifest_a: dict, manifest_b: dict) -> list[str]:
    """What differs between two runs' set-ups: each rules key (as a --set would name it), the
    strategies, the player count; so a reader knows what a moved metric was moved by."""
    out = []
    ra, rb = dict(_flatten(manifest_a.get("rules", {}))), dict(_flatten(manifest_b.get("rules", {})))
    for key in sorted(set(ra) | set(rb)):
        if ra.get(key) != rb.get(key):
            out.append(f"rules {key}: {ra.get(key)!r} -> {rb.get(key)!r}")
    ca, cb = manifest_a.get("config", {}), manifest_b.get("config", {})
    for key in ("players", "strategies", "seat_rotation"):
        if ca.get(key) != cb.get(key):
            out.append(f"{key}: {ca.get(key)!r} -> {cb.get(key)!r}")
    return out


def compare_lines(table: pd.DataFrame, info: dict, name_a: str, name_b: str) -> list[str]:
    how = (f"paired by seed: {info['games_paired']:,} games on {info['seeds_paired']:,} shared seeds"
           if info["paired"] else
           f"independent runs (no shared seeds): {info['games_a']:,} and {info['games_b']:,} games")
    lines = [f"A = {name_a}", f"B = {name_b}"]
    setup = info.get("setup", [])
    lines += ["What differs: " + ("; ".join(setup) if setup else "nothing in the rules or the field")]
    if any(s.startswith("strategies:") for s in setup):
        lines += ["Note: the fields differ, so strategy metrics present in only one run are left out."]
    lines += [f"Differences B - A with 95% intervals; {how}.", ""]
    width = max(len(m) for m in table["metric"])
    for r in table.itertuples():
        moved = "moved" if np.isfinite(r.lo) and (r.lo > 0 or r.hi < 0) else "no clear change"
        lines.append(f"{r.metric.ljust(width)}  {_fmt_value(r.a, r.kind):>8} -> {_fmt_value(r.b, r.kind):>8}  "
                     f"{_fmt_diff(r.diff, r.lo, r.hi, r.kind)}  ({moved})")
    return lines

