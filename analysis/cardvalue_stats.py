"""Card value by experiment (``evora card-value``): what holding a card, or the card's being in
the game at all, does to win rates, measured by intervention on common seeds.

The observational card table of the report compares seats that played a card with seats that
did not: an association (a strong position both plays more cards and wins). Here the card is
the only thing that changes between two games of the same seed:

- **Given** (P11). In seed s, rotation r, the game where seat g holds one more of the card from
  the start, and the same game without it. ``won_given[s, g, r]``: did seat g win the first;
  ``won_base[s, g, r]``: did seat g win the second. Every seat is the given one in turn (the
  design balances who holds the card over seats and strategies), every seed under every seat
  rotation. The change in the given seat's win rate is the mean of the per-seed differences
  ``mean_{g,r}(won_given - won_base)``: seeds are the independent units (a seed's games share
  their stacks), so its interval is the t interval over seeds. (Summed over the given seats,
  each game without the card has exactly one winner, so its part is exactly 1/n a seed: the
  pairing removes the seat's own edge, and the variance is that of the games with the card.)
- **Removed** (P12). The game with the card taken out (an effect's copies replaced by the other
  two of its type) against the same game with it: the paired change in each strategy's win rate
  (per-seed wins, t interval over seeds) and in seat fairness (:func:`analysis.fairness.compare_fairness`,
  paired by seed).

Intervals are 95% for each card on its own; the p-values are Holm-corrected over the cards (and
over the strategies of the removal table) before anything is called significant.

A card that changed no game (every paired outcome the same: an instant tile whose given copy
was never the one taken) is **not exercised**: its "+0.00 (+0.00 to +0.00)" would be an interval
of zero width from no information, not a measured zero. Its estimate, interval and p-value are
left empty (NaN, ``exercised`` False), the tables say "not exercised: no game differed", and it
does not count among Holm's tests.
:func:`paired_power` is the power of the paired t test for a planted change, for planning
``--games`` and checking the test in the suite.
"""
from __future__ import annotations

import json
import textwrap
from pathlib import Path

import numpy as np
import pandas as pd
from scipy import stats

from . import numbers
from .fairness import compare_fairness
from .labels import card_title
from .search_stats import paired_rate_difference
from .stats import ALPHA, holm

POWER = 0.8            # the power behind the smallest detectable change that a table reports
NOT_EXERCISED = "not exercised: no game differed"
NO_ESTIMATE = {k: float("nan") for k in ("change", "lo", "hi", "p")}


def given_effect(won_given, won_base, alpha: float = ALPHA) -> dict:
    """The change in the given seat's win rate, from the paired outcomes of shape
    (seeds, given seats, rotations) (see the module); rates as fractions."""
    a = np.asarray(won_given, dtype=float)
    b = np.asarray(won_base, dtype=float)
    if a.shape != b.shape or a.ndim != 3:
        raise ValueError(f"paired outcomes must share one shape (seeds, seats, rotations), got {a.shape} and {b.shape}")
    seeds, per_seed = a.shape[0], a.shape[1] * a.shape[2]
    given, base = a.sum(axis=(1, 2)), b.sum(axis=(1, 2))
    diff, lo, hi, p = paired_rate_difference(base, given, per_seed, alpha)
    sd = float(np.std((given - base) / per_seed, ddof=1)) if seeds > 1 else float("nan")
    exercised = bool((a != b).any())
    out = {"change": diff, "lo": lo, "hi": hi, "p": p, "seeds": seeds, "games": int(a.size),
           "rate_given": float(a.mean()), "rate_without": float(b.mean()),
           "discordance": float((a != b).mean()), "seed_sd": sd,
           "detectable": detectable_change(sd, seeds, alpha), "exercised": exercised}
    return out if exercised else {**out, **NO_ESTIMATE, "seed_sd": float("nan"), "detectable": float("nan")}


def given_by_position(won_given, won_base, alpha: float = ALPHA) -> list[dict]:
    """:func:`given_effect` for each position of the field: the games in which the given seat
    held that strategy (rotation r seats the field's strategy i at seat (i + r) mod n, so at seat
    g sits strategy (g - r) mod n): n of a seed's n x n games each. Secondary: a quarter of the
    games, so wider intervals."""
    a, b = np.asarray(won_given), np.asarray(won_base)
    n = a.shape[1]
    pos = (np.arange(n)[:, None] - np.arange(a.shape[2])[None, :]) % n
    return [{"position": i, **given_effect(a[:, pos == i][:, :, None], b[:, pos == i][:, :, None], alpha)}
            for i in range(n)]


def strategy_change(wins_with, wins_without, games_per_seed: int, alpha: float = ALPHA) -> dict:
    """One strategy's paired change in win rate (without the card minus with it, per-seed wins
    on the same seeds)."""
    diff, lo, hi, p = paired_rate_difference(wins_with, wins_without, games_per_seed, alpha)
    exercised = bool((np.asarray(wins_with) != np.asarray(wins_without)).any())
    out = {"change": diff, "lo": lo, "hi": hi, "p": p, "seeds": len(wins_with),
           "games": len(wins_with) * games_per_seed,
           "rate_with": float(np.sum(wins_with) / (len(wins_with) * games_per_seed)),
           "rate_without": float(np.sum(wins_without) / (len(wins_without) * games_per_seed)),
           "exercised": exercised}
    return out if exercised else {**out, **NO_ESTIMATE}


def paired_power(change: float, seed_sd: float, seeds: int, alpha: float = ALPHA) -> float:
    """The chance that the two-sided paired t test on ``seeds`` per-seed differences of standard
    deviation ``seed_sd`` rejects "no change" at ``alpha`` when the true change is ``change``
    (noncentral t)."""
    df = seeds - 1
    crit = stats.t.isf(alpha / 2, df)
    nc = change * np.sqrt(seeds) / seed_sd
    return float(stats.nct.sf(crit, df, nc) + stats.nct.cdf(-crit, df, nc))


def detectable_change(seed_sd: float, seeds: int, alpha: float = ALPHA, power: float = POWER) -> float:
    """The smallest true change the paired test finds with ``power`` (normal approximation)."""
    if not (seeds > 1 and np.isfinite(seed_sd)):
        return float("nan")
    return float((stats.t.isf(alpha / 2, seeds - 1) + stats.norm.ppf(power)) * seed_sd / np.sqrt(seeds))


def seeds_for(half_width: float, seed_sd: float, alpha: float = ALPHA) -> int:
    """Seeds a paired t interval needs for a half-width of at most ``half_width``."""
    z = stats.norm.isf(alpha / 2)
    n = int(np.ceil((z * seed_sd / half_width) ** 2))
    while n > 1 and stats.t.isf(alpha / 2, n - 1) * seed_sd / np.sqrt(n) > half_width:
        n += 1
    return max(n, 2)


def _holm_column(table: pd.DataFrame) -> pd.DataFrame:
    """p-values Holm-corrected over the rows that have one (a card not exercised has none)."""
    table = table.copy()
    table["p_holm"] = holm(table["p"].to_numpy(dtype=float))
    table["significant"] = table["p_holm"] < ALPHA
    return table


def given_table(effects: dict[str, dict]) -> pd.DataFrame:
    """One row per card: its :func:`given_effect`, p-values Holm-corrected over the cards."""
    return _holm_column(pd.DataFrame([{"card": card, **e} for card, e in effects.items()]))


def given_strategy_table(by_position: dict[str, list[dict]], field: list[str]) -> pd.DataFrame:
    """One row per card and field position: :func:`given_by_position`, Holm over every row."""
    return _holm_column(pd.DataFrame([{"card": card, "strategy": field[e["position"]], **e}
                                      for card, rows in by_position.items() for e in rows]))


def removal_table(strategy_wins: dict[str, tuple[np.ndarray, np.ndarray]], seat_wins: dict[str, tuple[np.ndarray, np.ndarray]],
                  field: list[str], games_per_seed: int, alpha: float = ALPHA) -> tuple[pd.DataFrame, pd.DataFrame]:
    """The card taken out of the game against the game with it, paired by seed. ``strategy_wins``
    and ``seat_wins``: per card, (with, without) per-seed wins of shape (seeds, players), by the
    field's strategy and by seat. Returns (per card and strategy: the change in its win rate,
    Holm over every row; per card: the change in seat fairness, Holm over the cards)."""
    rows, fair = [], []
    for card, (with_card, without) in strategy_wins.items():
        for i, name in enumerate(field):
            rows.append({"card": card, "position": i, "strategy": name,
                         **strategy_change(with_card[:, i], without[:, i], games_per_seed, alpha)})
        cmp = compare_fairness(*seat_wins[card], paired=True, alpha=alpha)
        fair.append({"card": card, "unfairness_with": cmp.a.rms, "unfairness_without": cmp.b.rms,
                     "mean_square_change": cmp.diff, "lo": cmp.lo, "hi": cmp.hi, "p": cmp.p,
                     "seeds": cmp.seeds, "games": int(cmp.b.games)})
    return _holm_column(pd.DataFrame(rows)), _holm_column(pd.DataFrame(fair))


def card_value_figure(given: pd.DataFrame, removed: pd.DataFrame | None, observed: pd.DataFrame):
    """Forest plot of the 16 cards: the given seat's change in win rate (95%) beside the
    observational "win rate when played, adjusted"; and, with the removal measure, each
    strategy's change in win rate when the card is taken out."""
    # lazy: matplotlib, 0.8 s of processor (measured); every page that shows a report's words (the dashboard's) imports this module
    from .plots import COLOURS, plt, shared_limits, tight_layout, unjudged_label

    cards = list(given["card"])
    y = np.arange(len(cards))
    panels = 2 if removed is not None else 1
    fig, axes = plt.subplots(1, panels, figsize=(6.2 * panels, 0.32 * len(cards) + 2.0), sharey=True, sharex=True,
                             squeeze=False)
    ax = axes[0][0]
    obs = observed.set_index("card").reindex(cards)
    # a card no game exercised, or observed too rarely to judge, is named and not drawn (never at 0)
    given_off = np.array([not bool(r.get("exercised", True)) for _, r in given.iterrows()])
    obs_off = np.array([bool(r.get("too_rare", False)) if not pd.isna(r.get("too_rare", False)) else True
                        for _, r in obs.iterrows()])
    drawn = []
    for off, (v, lo, hi, hide, name, colour) in enumerate([
            (given["change"], given["lo"], given["hi"], given_off, "given at the start (causal)", COLOURS[0]),
            (obs["adj_diff"], obs["adj_lo"], obs["adj_hi"], obs_off, "played vs. not, adjusted (association)",
             "#8c8c8c")]):
        v, lo, hi = (np.where(hide, np.nan, 100 * np.asarray(x, dtype=float)) for x in (v, lo, hi))
        drawn += [lo, hi]
        ax.errorbar(v, y + (-0.15 if off == 0 else 0.15), xerr=np.clip(np.nan_to_num([v - lo, hi - v]), 0, None),
                    fmt="o", ms=3.5, color=colour, ecolor=colour, capsize=2, label=name)
    ax.axvline(0, color="black", linewidth=0.8)
    labels = []
    for c, (_, g), (_, o) in zip(cards, given.iterrows(), obs.iterrows()):
        name = card_title(c)
        if not bool(g.get("exercised", True)):
            name += " (given copy not exercised)"
        elif not pd.isna(o.get("too_rare", np.nan)) and bool(o.get("too_rare")):
            name = unjudged_label(name, o)
        labels.append(name)
    ax.set_yticks(y, labels, fontsize=8)
    ax.invert_yaxis()
    ax.set_xlabel(textwrap.fill("change in win rate (percentage points; 95%, seeds as units)", 44))
    ax.set_title("Holding one more of the card")
    ax.grid(axis="x", alpha=0.3)
    ax.legend(loc="lower left", bbox_to_anchor=(0, 1.06), fontsize=8)
    if removed is not None:
        bx = axes[0][1]
        names = removed.drop_duplicates("position").sort_values("position")["strategy"].tolist()
        for k, name in enumerate(names):
            d = removed[removed["position"] == k].set_index("card").reindex(cards)
            v, lo, hi = (100 * d[c].to_numpy(float) for c in ("change", "lo", "hi"))
            drawn += [lo, hi]
            bx.errorbar(v, y + (k - (len(names) - 1) / 2) * 0.16, xerr=np.clip(np.nan_to_num([v - lo, hi - v]), 0, None),
                        fmt="o", ms=3, color=COLOURS[k % len(COLOURS)], capsize=1.5, label=f"{k}: {name}")
        bx.axvline(0, color="black", linewidth=0.8)
        bx.set_xlabel(textwrap.fill("change in the strategy's win rate without the card (percentage points; 95%)", 44))
        bx.set_title("The card taken out of the game")
        bx.grid(axis="x", alpha=0.3)
        bx.legend(loc="lower left", bbox_to_anchor=(0, 1.06), fontsize=8, ncol=2)
    ax.set_xlim(*shared_limits(*drawn))
    tight_layout(fig)
    return fig


# ---------------------------------------------------------------------------------------------
# the report's section (evora report --card-value DIR)
# ---------------------------------------------------------------------------------------------
SUMMARY_FILES = {"given": "card_value_given.csv", "given_by_strategy": "card_value_given_by_strategy.csv",
                 "removed": "card_value_removed.csv",
                 "fairness": "card_value_removed_fairness.csv", "observed": "card_value_observed.csv"}
EXPLAINED = ("The report's Card value table is an association: seats that played a card against seats that "
             "did not. Here the card is the only difference between two games on the same seed (common "
             "random numbers): the change in the given seat's win rate is the causal value of holding one "
             "more of the card from the start; the removal tables say what the game loses without it.")


def _marked(table: pd.DataFrame) -> pd.DataFrame:
    """A table written before cards that changed no game were marked (see the module): marked
    now (given: no paired outcome differed; removed: every seed's wins the same, a zero-width
    interval at 0), and its p-values Holm-corrected again without them."""
    same = table["discordance"] == 0 if "discordance" in table else (
        (table["lo"] == 0) & (table["hi"] == 0) & (table["change"] == 0))
    table = table.assign(exercised=~same)
    table.loc[same, list(NO_ESTIMATE)] = np.nan
    return _holm_column(table)


def read_summary(folder) -> dict:
    """The tables an ``evora card-value`` folder wrote (its ``summary/``), and its settings; the
    removal tables are None when it was run with ``--remove-games 0``. ValueError if ``folder``
    holds no card-value summary."""
    folder = Path(folder)
    summary = folder / "summary"
    if not (summary / SUMMARY_FILES["given"]).is_file() or not (folder / "search.json").is_file():
        raise ValueError(f"{folder} holds no finished evora card-value experiment (no summary/{SUMMARY_FILES['given']})")
    out = {k: pd.read_csv(summary / f) if (summary / f).is_file() else None for k, f in SUMMARY_FILES.items()}
    for k in ("given", "given_by_strategy", "removed"):
        if out[k] is not None and "exercised" not in out[k]:
            out[k] = _marked(out[k])
    out["config"] = json.loads((folder / "search.json").read_text(encoding="utf-8"))["config"]
    return out


def change_cell(row, unit: str) -> str:
    """A change with its 95% interval in brackets, or :data:`NOT_EXERCISED`."""
    if not getattr(row, "exercised", True):
        return NOT_EXERCISED
    return numbers.bracket(row.change, row.lo, row.hi, 100, unit, signed=True)


def shown_given(given: pd.DataFrame) -> pd.DataFrame:
    return pd.DataFrame({
        "Card": [card_title(c) for c in given["card"]],
        "Change in the given seat's win rate": [change_cell(r, numbers.PP) for r in given.itertuples()],
        "Win rate given / without": [f"{100 * r.rate_given:.1f}% / {100 * r.rate_without:.1f}%" for r in given.itertuples()],
        "Games changed": [f"{100 * x:.0f}%" for x in given["discordance"]],
        "Paired games (seeds)": [f"{int(r.games):,} ({int(r.seeds):,})" for r in given.itertuples()],
        "p (Holm)": [numbers.p_cell(p) for p in given["p_holm"]]})


def shown_by_strategy(removed: pd.DataFrame) -> pd.DataFrame:
    """A change per card (rows) and field position (columns), ``*`` where significant after Holm."""
    cells = removed.assign(cell=[change_cell(r, "") + (" *" if r.significant else "") for r in removed.itertuples()],
                           who=[f"{r.position}: {r.strategy}" for r in removed.itertuples()])
    table = cells.pivot(index="card", columns="who", values="cell").reindex(list(dict.fromkeys(removed["card"])))
    table.insert(0, "Card", [card_title(c) for c in table.index])
    return table.reset_index(drop=True)


def shown_fairness(fair: pd.DataFrame) -> pd.DataFrame:
    return pd.DataFrame({
        "Card": [card_title(c) for c in fair["card"]],
        "Seat unfairness with / without (pp)": [f"{100 * r.unfairness_with:.2f} / {100 * r.unfairness_without:.2f}"
                                                 for r in fair.itertuples()],
        "Change without the card (pp; tested on the mean square)": [
            f"{100 * (r.unfairness_without - r.unfairness_with):+.2f}" for r in fair.itertuples()],
        "p (Holm)": [numbers.p_cell(p) for p in fair["p_holm"]]})
