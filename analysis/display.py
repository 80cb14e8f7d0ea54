"""The report's tables as a designer reads them: human column names, each estimate with its
range in one cell ("26.4% (26.3–26.5)"), p-values as "< 0.001", cards and spaces by their
rulebook names, and only the columns that answer a question (the CSV keeps every column and
the internal codes). Each function takes an analysis table and returns the shown DataFrame.
"""
from __future__ import annotations

import numpy as np
import pandas as pd

from . import labels
from .labels import CATEGORY_LABELS
from .numbers import PP, p_cell, ranged
from .playstates import MIN_PLAYS

PLAYERS = "Players"
# the words every view of the card and space associations carries (the report, the dashboard)
ASSOCIATION = ("KNOWN BIAS: \"win rate when used\" is an association, not the card's or space's value. "
               "Seats use a card or space when they can, in longer games, with more turns and more cards, "
               "and a strong position both wins and lets a seat do more. The adjustment removes strategy "
               "and seat, not these: read large effects as leads to test with a rules variant, not as proof.")


def _rate(r, v="win_rate", lo="ci_lo", hi="ci_hi") -> str:
    return ranged(r[v], r[lo], r[hi])


def _points(r, v, lo, hi) -> str:
    return ranged(r[v], r[lo], r[hi], unit=PP, signed=True)


COUNT = (0.0, float("inf"))       # the possible values of a count or of VP scored: never below 0


def _mean(r, v, lo, hi, unit="", bounds=None) -> str:
    return ranged(r[v], r[lo], r[hi], scale=1.0, unit=unit, bounds=bounds)


def _pct(v, digits=1) -> str:
    return "" if not np.isfinite(v) else f"{100 * v:.{digits}f}%"


def too_rare(uses) -> str:
    return f"too rare to judge ({int(uses):,} plays)"


def _verdict(r, p="p_holm") -> str:
    if not r.get("significant", False):
        return "no clear difference"
    return "negligible" if r.get("negligible", False) else "significant"


def _frame(rows: list[dict]) -> pd.DataFrame:
    return pd.DataFrame(rows) if rows else pd.DataFrame()


def seats(adv: pd.DataFrame) -> pd.DataFrame:
    return _frame([{
        PLAYERS: int(r["n_players"]), "Seat": f"{int(r['seat'])}" + (" (first)" if r["seat"] == 0 else ""),
        "Games": f"{int(r['games']):,}", "Win rate (95% range)": _rate(r), "Fair share": _pct(r["fair_share"]),
        "Difference": ranged(r["diff"], r["ci_lo"] - r["fair_share"], r["ci_hi"] - r["fair_share"],
                             unit=PP, signed=True),
        "p (Holm)": p_cell(r["p_holm"]), "Verdict": _verdict(r),
        "Mean score (VP)": _mean(r, "mean_score", "score_lo", "score_hi"),
        "Mean margin (VP)": _mean(r, "mean_margin", "margin_lo", "margin_hi"),
    } for _, r in adv.iterrows()])


def fairness(tests: pd.DataFrame) -> pd.DataFrame:
    return _frame([{
        PLAYERS: int(r["n_players"]), "Seeds": f"{int(r['seeds']):,}",
        "Seat unfairness (95% range)": ranged(r["unfairness"], r["unfairness_lo"], r["unfairness_hi"],
                                              unit=PP),
        "Largest seat deviation": f"{100 * r['max_deviation']:.2f}{PP}",
        "p (all seats fair)": p_cell(r["p"]),
        "Verdict": ("consistent with fair seats" if not r["significant"] else
                    "not all fair, negligibly" if r["negligible"] else "not all fair"),
    } for _, r in tests.iterrows()])


def strategies(strat: pd.DataFrame, info: dict) -> pd.DataFrame:
    return _frame([{
        PLAYERS: int(r["n_players"]), "Strategy": labels.strategy_title(r["strategy"], info.get(r["strategy"])),
        "Seat-games": f"{int(r['seat_games']):,}", "Win rate (95% range)": _rate(r),
        "Fair share": _pct(r["fair_share"]), "Mean score (VP)": _mean(r, "mean_score", "score_lo", "score_hi"),
    } for _, r in strat.iterrows()])


def matchups(mu: pd.DataFrame) -> pd.DataFrame:
    return _frame([{
        PLAYERS: int(r["n_players"]), "Strategy": r["strategy"], "Against": r["opponent"],
        "Measured as": r["measure"], "Games": f"{int(r['games']):,}", "Rate (95% range)": _rate(r),
        "p (Holm)": p_cell(r["p_holm"]),
    } for _, r in mu.iterrows()])


def ratings(rat: pd.DataFrame) -> pd.DataFrame:
    return _frame([{
        PLAYERS: int(r["n_players"]), "Strategy": r["strategy"],
        "Elo (95% range)": ranged(r["elo"], r["ci_lo"], r["ci_hi"], scale=1.0, unit="", signed=True),
        "Comparisons": f"{int(r['comparisons']):,}",
    } for _, r in rat.iterrows()])


def exposure(t: pd.DataFrame, what: str) -> pd.DataFrame:
    """Card or space value, each by its rulebook name (``what``: 'card' or 'space')."""
    rows = []
    for _, r in t.iterrows():
        row = {PLAYERS: int(r["n_players"]), what.capitalize(): r["name"],
               "Per game": f"{r['per_game']:.2f}", "Seat-games using it": _pct(r["share_used"])}
        if "vp_per_play" in t.columns:
            row["VP per play"] = "" if not np.isfinite(r["vp_per_play"]) else f"{r['vp_per_play']:.1f}"
        rare = bool(r.get("too_rare", False))
        row.update({
            "Win rate used / not": f"{_pct(r['win_used'])} / {_pct(r['win_not'])}",
            "Adjusted difference (95% range)": "" if rare else _points(r, "adj_diff", "adj_lo", "adj_hi"),
            "p (Holm)": p_cell(r["p_adj_holm"]), "Verdict": too_rare(r["times"]) if rare else _verdict(r),
        })
        rows.append(row)
    return _frame(rows)


def card_timing(t: pd.DataFrame) -> pd.DataFrame:
    """When each card is played (analysis.playstates): how late, after the trigger, by a leader;
    a card played too rarely to judge shows its estimates without ranges."""
    rows = []
    for _, r in t.iterrows():
        if r["times"] <= 0:
            continue
        rare = r["times"] < MIN_PLAYS

        def cell(v):
            return _pct(r[v]) if rare else ranged(r[v], r[f"{v}_lo"], r[f"{v}_hi"])

        rows.append({
            PLAYERS: int(r["n_players"]), "Card": r["name"], "Plays": f"{int(r['times']):,}",
            "Place in the game (95% range)": cell("mean_place"), "After the end was triggered": cell("share_final_round"),
            "By a seat leading on VP": cell("share_leading"),
            "All turns begun leading": ranged(r["turns_leading"], r["turns_leading_lo"], r["turns_leading_hi"]),
            "p (Holm)": too_rare(r["times"]) if rare else p_cell(r["leading_p_holm"]),
        })
    return _frame(rows)


def vp_by_category(vp: pd.DataFrame) -> pd.DataFrame:
    return _frame([{
        PLAYERS: int(r["n_players"]), "By": r["by"], "Group": r["group"],
        "Category": CATEGORY_LABELS.get(r["category"], "final score"),
        "Mean VP (95% range)": _mean(r, "mean", "ci_lo", "ci_hi", bounds=COUNT), "Median": f"{r['median']:g}",
        "Seat-games scoring": _pct(r["share_nonzero"]),
    } for _, r in vp.iterrows()])


def majority_outcomes(t: pd.DataFrame) -> pd.DataFrame:
    return _frame([{
        PLAYERS: int(r["n_players"]), "Majority": r["majority"], "Outcome": r["outcome"],
        "Share of games (95% range)": ranged(r["share"], r["ci_lo"], r["ci_hi"]),
    } for _, r in t.iterrows()])


def columns_held(t: pd.DataFrame) -> pd.DataFrame:
    rows = []
    for _, r in t.iterrows():
        row = {PLAYERS: int(r["n_players"]), "By": r["by"], "Group": r["group"],
               "Columns held (95% range)": _mean(r, "mean_held", "ci_lo", "ci_hi", bounds=COUNT)}
        for h in ("0", "1", "2", "3", "4+"):
            v = r.get(f"share_{h}", np.nan)
            row[f"holding {h}"] = _pct(v) if pd.notna(v) else ""
        rows.append(row)
    return _frame(rows)


def majority_share(t: pd.DataFrame) -> pd.DataFrame:
    return _frame([{
        PLAYERS: int(r["n_players"]), "Group": r["group"], "Seat-games": f"{int(r['seat_games']):,}",
        "Share of score from majorities (95% range)": ranged(r["mean_share"], r["ci_lo"], r["ci_hi"]),
        "Pooled share": _pct(r["pooled_share"]),
    } for _, r in t.iterrows()])


def victory_margin(t: pd.DataFrame) -> pd.DataFrame:
    return _frame([{
        PLAYERS: int(r["n_players"]), "Games": f"{int(r['games']):,}",
        "Mean margin, VP (95% range)": _mean(r, "mean_margin", "ci_lo", "ci_hi"),
        "Median margin": f"{r['median']:g} VP",
        "Decided by the tie-break (95% range)": ranged(r["share_tiebreak"], r["tiebreak_lo"], r["tiebreak_hi"]),
        "Within 5 VP (95% range)": ranged(r["share_within_5"], r["within_5_lo"], r["within_5_hi"]),
    } for _, r in t.iterrows()])


def game_shape(t: pd.DataFrame) -> pd.DataFrame:
    return _frame([{
        PLAYERS: int(r["n_players"]), "Games": f"{int(r['games']):,}",
        "Rounds (95% range)": _mean(r, "rounds_mean", "rounds_lo", "rounds_hi", bounds=COUNT),
        "Rounds, 10th-90th percentile": f"{r['rounds_p10']:g}-{r['rounds_p90']:g}",
        "Turns per game": f"{r['turns_mean']:.1f}", "Mean score (VP)": f"{r['score_mean']:.1f}",
        "Winner's mean score (VP)": f"{r['winner_score_mean']:.1f}",
    } for _, r in t.iterrows()])


def end_triggers(t: pd.DataFrame) -> pd.DataFrame:
    return _frame([{
        PLAYERS: int(r["n_players"]), "End of the game": str(r["end_trigger"]).replace("_", " "),
        "Games": f"{int(r['count']):,}", "Share (95% range)": ranged(r["share"], r["ci_lo"], r["ci_hi"]),
    } for _, r in t.iterrows()])


def tension(t: pd.DataFrame) -> pd.DataFrame:
    return _frame([{
        PLAYERS: int(r["n_players"]), "Games": f"{int(r['games']):,}",
        "Lead changes per game (95% range)": _mean(r, "lead_changes_mean", "lead_changes_lo", "lead_changes_hi", bounds=COUNT),
        "Games without a lead change": _pct(r["share_no_change"]),
        "Winner's comeback, VP (median; 90th pct)": f"{r['comeback_median']:g}; {r['comeback_p90']:g}",
        "Winner led for good, rounds before the end (median)": f"{r['led_rounds_median']:g}",
        "Decided in the last round (95% range)": ranged(r["share_last_round"], r["last_round_lo"],
                                                        r["last_round_hi"]),
    } for _, r in t.iterrows()])


def until_sure(t: pd.DataFrame) -> pd.DataFrame:
    return _frame([{"Run": r["run"], "Metric": r["metric"], "Value (adjusted range)": r["interval"],
                    "Level": f"{100 * r['level']:.4g}%", "Games": f"{int(r['games']):,}"}
                   for _, r in t.iterrows()])
