"""The statistics of a search (``evora tune strategy``, ``evora balance``): what a candidate
scores, how the confirmation on fresh seeds is reported, the figure and the report section.

Every run of a search plays each seed under every seat rotation, so a seed's games are one
cluster: per-seed counts are the units of every interval here.

- A strategy's **win rate** against a field: the games its seat won, over its seat-games; the
  confirmation interval is Wilson's on the effective sample (seat-games over the design effect
  of the per-seed wins, :func:`analysis.stats.clustered_wilson`). Against the baseline it is
  **paired by seed** (both played the same seeds): a t interval on the per-seed differences.
- **Seat fairness**: the seat unfairness of :mod:`analysis.fairness` (unbiased mean square seat
  deviation, Feldman-Cousins interval) and its paired change from the baseline.
- The confirmation compares several finalists with the baseline and one is then chosen: its
  intervals are at level ``1 - alpha / k`` (Bonferroni over the ``k`` finalists, and over the
  player counts for fairness), so the chosen one's intervals still cover with at least
  ``1 - alpha``; p-values are Holm-adjusted over the same family.
"""
from __future__ import annotations

import json

import numpy as np
import pandas as pd
from scipy import stats

from . import numbers
from .fairness import compare_fairness, seat_fairness
from .markdown import md as md_text
from .markdown import md_code, md_command, md_fenced
from .stats import clustered_wilson, holm

POINTS2 = 1e4          # a mean square of win rates in points squared


# ---------------------------------------------------------------------------------------------
# per-seed counts from a run's games table (game_id = seed index x rotations + rotation)
# ---------------------------------------------------------------------------------------------
GAME_COLUMNS = ["game_id", "rotation", "winner_seat", "rounds", "end_trigger"]


def games_of(run) -> pd.DataFrame:
    return run.table("games", GAME_COLUMNS)


def seed_index(games: pd.DataFrame, players: int, rotations: int | None = None) -> np.ndarray:
    """Each game's seed (``rotations`` games a seed; default ``players``, every rotation)."""
    return games["game_id"].to_numpy() // (players if rotations is None else rotations)


def _per_seed(games: pd.DataFrame, players: int, column: np.ndarray) -> tuple[np.ndarray, int]:
    idx = seed_index(games, players)
    c = int(idx.max()) + 1 if len(idx) else 0
    return np.bincount(idx, weights=column, minlength=c), c


def candidate_wins(games: pd.DataFrame, players: int) -> np.ndarray:
    """Per seed, the games won by the field's first strategy (rotation r seats it at seat r)."""
    won = (games["winner_seat"].to_numpy() == games["rotation"].to_numpy()).astype(float)
    return _per_seed(games, players, won)[0]


def seat_wins(games: pd.DataFrame, players: int, rotations: int | None = None) -> np.ndarray:
    """Wins per seed and seat, shape (seeds, players) (``rotations``: games a seed, default ``players``)."""
    idx = seed_index(games, players, rotations)
    c = int(idx.max()) + 1 if len(idx) else 0
    cells = idx * players + games["winner_seat"].to_numpy().astype(np.int64)
    return np.bincount(cells, minlength=c * players).reshape(c, players).astype(float)


def strategy_wins(games: pd.DataFrame, players: int, rotations: int | None = None) -> np.ndarray:
    """Wins per seed and field position (the field's strategy i sits at seat (i + r) mod n in
    rotation r), shape (seeds, players) (``rotations``: games a seed, default ``players``)."""
    idx = seed_index(games, players, rotations)
    c = int(idx.max()) + 1 if len(idx) else 0
    pos = (games["winner_seat"].to_numpy() - games["rotation"].to_numpy()) % players
    return np.bincount(idx * players + pos, minlength=c * players).reshape(c, players).astype(float)


def per_seed_mean(games: pd.DataFrame, players: int, values: np.ndarray, alpha: float):
    """A per-game quantity's mean with a seed-clustered t interval; (mean, lo, hi)."""
    sums, c = _per_seed(games, players, np.asarray(values, dtype=float))
    counts = np.bincount(seed_index(games, players), minlength=c)
    m = sums.sum() / counts.sum()
    z = (sums - m * counts) / counts.mean()
    se = z.std(ddof=1) / np.sqrt(c) if c > 1 else float("nan")
    half = float(stats.t.isf(alpha / 2, c - 1)) * se if c > 1 else float("nan")
    return float(m), float(m - half), float(m + half)


# ---------------------------------------------------------------------------------------------
# tune: a strategy's win rate
# ---------------------------------------------------------------------------------------------
def win_rate(games: pd.DataFrame, players: int) -> float:
    wins = candidate_wins(games, players)
    return float(wins.sum() / (len(wins) * players)) if len(wins) else float("nan")


def paired_rate_difference(a: np.ndarray, b: np.ndarray, players: int, alpha: float):
    """B - A in win rate from per-seed wins of both on the same seeds; (diff, lo, hi, p)."""
    d = (np.asarray(b, float) - np.asarray(a, float)) / players
    c = len(d)
    mean = float(d.mean())
    se = float(d.std(ddof=1) / np.sqrt(c)) if c > 1 else float("nan")
    if not se > 0:
        return mean, mean, mean, (1.0 if mean == 0 else 0.0)
    half = float(stats.t.isf(alpha / 2, c - 1)) * se
    return mean, mean - half, mean + half, float(2 * stats.t.sf(abs(mean / se), c - 1))


def rate_confirmation(base: np.ndarray, finalists: list[np.ndarray], labels: list[str], players: int,
                      alpha: float) -> tuple[pd.DataFrame, int]:
    """One row for the baseline and each finalist: win rate with its interval and the paired
    difference from the baseline (finalists at level 1 - alpha / k, Holm over the k). The chosen
    finalist: the highest confirmed win rate."""
    k = max(1, len(finalists))
    level = alpha / k
    z_base, z_fin = stats.norm.isf(alpha / 2), stats.norm.isf(level / 2)
    rows = []
    lo, hi, _ = clustered_wilson(base, players, z_base)
    rows.append({"arm": "baseline", "values": labels[0], "measure": "win rate", "players": players,
                 "seeds": len(base), "games": len(base) * players, "value": base.sum() / (len(base) * players),
                 "lo": lo, "hi": hi, "level": 1 - alpha, "diff": 0.0, "diff_lo": 0.0, "diff_hi": 0.0,
                 "p": np.nan})
    for j, wins in enumerate(finalists):
        lo, hi, _ = clustered_wilson(wins, players, z_fin)
        d, dlo, dhi, p = paired_rate_difference(base, wins, players, level)
        rows.append({"arm": f"finalist {j + 1}", "values": labels[j + 1], "measure": "win rate",
                     "players": players, "seeds": len(wins), "games": len(wins) * players,
                     "value": wins.sum() / (len(wins) * players), "lo": lo, "hi": hi, "level": 1 - level,
                     "diff": d, "diff_lo": dlo, "diff_hi": dhi, "p": p})
    table = pd.DataFrame(rows)
    table["p_holm"] = np.nan
    if finalists:
        table.loc[1:, "p_holm"] = holm(table["p"].iloc[1:].to_numpy())
    chosen = int(np.argmax(table["value"].iloc[1:].to_numpy())) if finalists else None
    table["chosen"] = [False] + [j == chosen for j in range(len(finalists))]
    table["headline"] = True
    return table, chosen


# ---------------------------------------------------------------------------------------------
# balance: seat fairness and the optional targets
# ---------------------------------------------------------------------------------------------
def miss(value: float, lo: float, hi: float) -> float:
    """How far ``value`` lies outside [lo, hi] (0 inside)."""
    return float(max(lo - value, 0.0, value - hi))


def balance_measures(games: pd.DataFrame, players: int, targets: list, alpha: float = 0.05) -> dict:
    """The measures a balance target reads, for one player count: the seat unfairness (its
    unbiased mean square in points squared, and the root in points), the mean game length
    (rounds), the strategy spread (the same unbiased measure over the field's strategies), each
    end trigger's share (points). ``targets``: (name, lo, hi, weight) of the optional targets."""
    f = seat_fairness(seat_wins(games, players), alpha=alpha)
    out = {"fairness_ms": f.mean_square * POINTS2, "unfairness": f.rms * 100, "unfairness_lo": f.rms_lo * 100,
           "unfairness_hi": f.rms_hi * 100}
    for name, *_ in targets:
        if name == "length":
            out["length"], out["length_lo"], out["length_hi"] = per_seed_mean(
                games, players, games["rounds"].to_numpy(), alpha)
        elif name == "spread":
            s = seat_fairness(strategy_wins(games, players), alpha=alpha)
            out["spread"], out["spread_lo"], out["spread_hi"] = s.rms * 100, s.rms_lo * 100, s.rms_hi * 100
        elif name.startswith("trigger."):
            hit = (games["end_trigger"].astype(str).to_numpy() == name[len("trigger."):]).astype(float)
            v, lo, hi = per_seed_mean(games, players, hit, alpha)
            out[name], out[name + "_lo"], out[name + "_hi"] = 100 * v, 100 * lo, 100 * hi
    return out


def balance_objective(measures: list[dict], targets: list, changed: int, penalty: float) -> float:
    """What balance minimises: the mean over the player counts of the seat unfairness's mean
    square (points squared), plus each target's weight times the mean square of its miss
    (rounds, or points), plus ``penalty`` per changed key."""
    total = float(np.mean([m["fairness_ms"] for m in measures]))
    for name, lo, hi, weight in targets:
        total += weight * float(np.mean([miss(m[name], lo, hi) ** 2 for m in measures]))
    return total + penalty * changed


def fairness_confirmation(base: dict, finalists: list[dict], labels: list[str], alpha: float,
                          objectives: list[float], targets: list) -> tuple[pd.DataFrame, int]:
    """Per player count (``base`` and each finalist: {players: games table}): each arm's seat
    unfairness with its interval, the paired change in its mean square from the baseline, and
    the targets' values. Finalists at level 1 - alpha / (k x counts); p-values Holm-adjusted
    over the same family. The chosen finalist: the lowest confirmed objective."""
    counts = sorted(base)
    k = max(1, len(finalists) * len(counts))
    level = alpha / k
    rows = []
    for arm, games_by_n, label, a in [("baseline", base, labels[0], alpha)] + [
            (f"finalist {j + 1}", g, labels[j + 1], level) for j, g in enumerate(finalists)]:
        for n in counts:
            games = games_by_n[n]
            wins = seat_wins(games, n)
            f = seat_fairness(wins, alpha=a)
            row = {"arm": arm, "values": label, "measure": "seat unfairness (pp)", "players": n,
                   "seeds": f.seeds, "games": f.games, "value": 100 * f.rms, "lo": 100 * f.rms_lo,
                   "hi": 100 * f.rms_hi, "level": 1 - a, "diff": 0.0, "diff_lo": 0.0, "diff_hi": 0.0,
                   "p": np.nan, "headline": True}
            if arm != "baseline":
                c = compare_fairness(seat_wins(base[n], n), wins, paired=True, alpha=a)
                row.update(diff=c.diff * POINTS2, diff_lo=c.lo * POINTS2, diff_hi=c.hi * POINTS2, p=c.p)
            rows.append(row)
            m = balance_measures(games, n, targets, alpha=a)
            for name, lo, hi, _ in targets:
                rows.append({"arm": arm, "values": label, "measure": f"{name} (target {lo:g}..{hi:g})",
                             "players": n, "seeds": f.seeds, "games": f.games, "value": m[name],
                             "lo": m[name + "_lo"], "hi": m[name + "_hi"], "level": 1 - a,
                             "headline": False})
    table = pd.DataFrame(rows)
    fin = (table["arm"] != "baseline") & table["headline"]
    table["p_holm"] = np.nan
    if fin.any():
        table.loc[fin, "p_holm"] = holm(table.loc[fin, "p"].to_numpy())
    obj = {"baseline": objectives[0], **{f"finalist {j + 1}": v for j, v in enumerate(objectives[1:])}}
    table["objective"] = table["arm"].map(obj)
    chosen = int(np.argmin(objectives[1:])) if finalists else None
    table["chosen"] = table["arm"] == (f"finalist {chosen + 1}" if chosen is not None else "")
    return table, chosen


# ---------------------------------------------------------------------------------------------
# the table of candidates, the figure, the report section
# ---------------------------------------------------------------------------------------------
def candidates_table(trials: list[dict], dims) -> pd.DataFrame:
    """One row per candidate drawn: round, slot, its values, the rung it reached, the seeds it
    played, its score, whether it won its round (unplayable draws: state 'fail' and the reason)."""
    rows = []
    for t in trials:
        row = {"round": t.get("round"), "slot": t["slot"], "state": t["state"]}
        row.update({d.key: t["values"][d.key] for d in dims})
        row.update({"rung": t.get("rung"), "seeds": t.get("seeds"), "score": t.get("score"),
                    "round_winner": bool(t.get("round_winner", False)), "reason": t.get("reason", "")})
        for k, v in (t.get("details") or {}).items():
            row[k] = v
        rows.append(row)
    return pd.DataFrame(rows)


def search_figure(trials: pd.DataFrame, confirmation: pd.DataFrame, direction: str, score_name: str,
                  kind: str):
    """Left: every candidate's score in the order drawn (larger points: more seeds), the round
    winners joined by the best so far. Right: the confirmation on fresh seeds with intervals."""
    # lazy: matplotlib, 0.8 s of processor (measured); the dashboard's page reaches this module through the report's words
    from .plots import COLOURS, plt, tight_layout

    fig, (ax, bx) = plt.subplots(1, 2, figsize=(12, 4.2), gridspec_kw={"width_ratios": [2, 1]})
    done = trials[trials["state"] == "complete"].reset_index(drop=True)
    if len(done):
        x = np.arange(len(done))
        seeds = done["seeds"].to_numpy(dtype=float)
        ax.scatter(x, done["score"], s=8 + 40 * seeds / seeds.max(), color=COLOURS[0], alpha=0.5,
                   label="candidate (size: seeds played)")
        w = done[done["round_winner"]]
        best = w["score"].cummax() if direction == "maximize" else w["score"].cummin()
        ax.step(w.index, best, where="post", color=COLOURS[1], label="best round winner so far")
        ax.scatter(w.index, w["score"], color=COLOURS[1], s=18, marker="D")
    ax.set_xlabel("candidate (in the order drawn)")
    ax.set_ylabel(score_name)
    ax.set_title(f"Search ({'higher' if direction == 'maximize' else 'lower'} is better; scores on the "
                 "rounds' seeds, biased by selection)", fontsize=9)
    ax.legend(fontsize=7)
    head = confirmation[confirmation["headline"]].reset_index(drop=True)
    labels = [f"{r.arm}" + (f", {r.players}p" if head["players"].nunique() > 1 else "") for r in head.itertuples()]
    scale = 100.0 if kind == "tune" else 1.0
    y = np.arange(len(head))
    colours = [COLOURS[1] if c else COLOURS[0] for c in head["chosen"]]
    for yi, r, colour in zip(y, head.itertuples(), colours):
        bx.errorbar([scale * r.value], [yi], xerr=[[scale * (r.value - r.lo)], [scale * (r.hi - r.value)]],
                    fmt="o", color=colour, capsize=3)
    bx.set_yticks(y)
    bx.set_yticklabels(labels, fontsize=7)
    bx.invert_yaxis()
    bx.set_xlabel(head["measure"].iloc[0] + (" (%)" if kind == "tune" else "") if len(head) else "")
    bx.set_title("Confirmation on fresh seeds (chosen in orange)", fontsize=9)
    tight_layout(fig)
    return fig


def _shown(confirmation: pd.DataFrame, kind: str) -> pd.DataFrame:
    out = confirmation.copy()
    scale, unit = (100.0, "%") if kind == "tune" else (1.0, "")
    out["value [interval]"] = [numbers.bracket(r.value, r.lo, r.hi, scale, unit) for r in out.itertuples()]
    if "diff" in out:
        base = {r.players: r.value for r in out.itertuples() if r.arm == "baseline"}
        out["change from baseline [interval]"] = [
            "" if r.arm == "baseline" or not np.isfinite(r.diff) else
            numbers.bracket(r.diff, r.diff_lo, r.diff_hi, 100.0, numbers.PP, signed=True) if kind == "tune" else
            # the seat unfairness: its own change in pp (its test, on the mean square, is the p-value)
            f"{r.value - base.get(r.players, np.nan):+.2f}{numbers.PP}" for r in out.itertuples()]
    out["level"] = [f"{100 * v:.4g}%" for v in out["level"]]
    keep = [c for c in ("arm", "players", "measure", "value [interval]", "change from baseline [interval]",
                        "p_holm", "level", "seeds", "games", "objective", "chosen", "values") if c in out]
    out = out[keep]
    if "p_holm" in out:
        out["p_holm"] = ["" if not np.isfinite(p) else ("<0.001" if p < 0.001 else f"{p:.3f}") for p in out["p_holm"]]
    return out


def report_section(kind: str, command: str, doc: dict, trials: pd.DataFrame, confirmation: pd.DataFrame,
                   lines: list[str], png: str, files: list[str], extra: list[str]) -> str:
    """The search as a Markdown report section (what came from the user's input escaped:
    :mod:`analysis.page`)."""
    done = trials[trials["state"] == "complete"]
    settings = doc["config"]["settings"]
    title = {"tune": "Tuning a strategy's weights", "balance": "Balancing the rules"}.get(kind, kind)
    md = [f"## {title}", "", md_command(command), "",
          f"Search: {trials['round'].nunique() if len(trials) else 0} rounds of {settings['batch']} candidates "
          f"(optuna's TPE sampler), {len(done)} candidates played ({int((trials['state'] == 'fail').sum())} "
          f"unplayable draws skipped); each round on common seeds, successive halving from "
          f"{settings['seeds']} seeds; budget {settings['budget']:,} games; search seed {settings['seed']}.",
          "", f"![the search]({png})", "",
          "### Confirmation on fresh seeds (the only figures to quote)", "",
          f"The best {settings['finalists']} round winners and the baseline replayed on "
          f"{settings['confirm_seeds']:,} fresh seeds each (every seed under each seat rotation), paired "
          "by seed against the baseline. Finalists' intervals are Bonferroni-adjusted over the "
          "finalists (and player counts), p-values Holm-adjusted: the chosen one keeps its coverage. "
          "The search scores above are biased up by selection (winner's curse) and are not reported.",
          "", _shown(confirmation, kind).to_markdown(index=False), ""]
    md += [md_text(line) for line in lines] + [""]
    if files:
        md += ["Result: " + ", ".join(md_code(f) for f in files), ""]
    md += [md_text(line) for line in extra]
    md += ["", "<details><summary>Search configuration</summary>", "",
           *md_fenced(json.dumps(doc["config"], indent=1), "json"), "</details>", ""]
    return "\n".join(md)
