"""When each card is played: in what state of the game, so that a card finding can be read.

A card's association with winning (the report's Card value table) says nothing of why. Part of
the answer is *when* the card is played: a card the leaders play late looks strong because strong
positions play it, and a card played early by seats behind looks weak for the same reason. The
game loop counts, for every play (``evora_sim.metrics.card_timing.card_played``), whether its seat began the
turn leading on VP (the totals the final scoring would give had the game ended then, a tie being
no lead), whether the end had been triggered, and the round; and for every seat the turns it began
leading, the rate a card's "played while leading" compares with.

Every figure is a ratio of sums over seed groups (the seed is the independent unit: a seed's
games share its stacks): shares with :func:`analysis.stats.clustered_share`'s interval, the mean
place with :func:`analysis.stats.ratio_ci`'s, the leader test with :func:`analysis.stats.ratio_diff`. They describe where the
plays happen; they are associations, not the card's effect (``evora card-value`` measures that).
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from evora_sim.recorded import PLAY_STATES

from .numbers import p_text_words, ranged
from .stats import ALPHA, clustered_share, conditional_share_p, holm, ratio_ci, ratio_diff

SEAT_COLUMNS = ("turns_leading",)   # the seats table's column the baseline reads (with the games' turns)
LATE, EARLY = 0.6, 0.45             # mean place in the game (round / rounds) called late, early
MIN_PLAYS = 100                     # plays of a card before its "by the leader" is tested
EXACT_PLAYS = 2_000                 # below, the leader test is exact (conditional_share_p); from here the t test
# the card table's columns this module adds (PlayStates.table, beside the card and its plays)
TIMING_COLUMNS = [f"{m}{end}" for m in ("mean_place", "share_final_round", "share_leading", "turns_leading")
                  for end in ("", "_lo", "_hi")] + ["leading_diff", "leading_diff_lo", "leading_diff_hi", "leading_p",
                                                    "leading_p_holm"]


@dataclass
class PlayStates:
    """Per card and seed group: plays, plays in a turn begun leading, plays after the trigger,
    and the plays' places in their games (round / the game's rounds, summed); per seed group:
    turns and turns begun leading."""

    plays: np.ndarray
    leading: np.ndarray
    final: np.ndarray
    place: np.ndarray
    turns: np.ndarray
    turns_leading: np.ndarray

    @classmethod
    def empty(cls, cards: int, groups: int) -> "PlayStates":
        z = np.zeros((cards, groups))
        return cls(z.copy(), z.copy(), z.copy(), z.copy(), np.zeros(groups), np.zeros(groups))

    def add(self, group: np.ndarray, rounds: np.ndarray, turns: np.ndarray, turns_leading: np.ndarray,
            game: np.ndarray, card: np.ndarray, plays: np.ndarray, states: dict) -> None:
        """Fold a block in: per game its seed ``group``, ``rounds`` and ``turns``, per seat
        (games, n) its ``turns_leading``; per cards-table row its ``game`` (index into the block),
        ``card`` and ``plays``, and the PLAY_STATES columns in ``states``."""
        groups = self.turns.shape[0]
        self.turns += np.bincount(group, weights=turns, minlength=groups)
        self.turns_leading += np.bincount(group, weights=turns_leading.sum(axis=1), minlength=groups)
        cards = self.plays.shape[0]
        cell = card.astype(np.int64) * groups + group[game]
        size = cards * groups
        place = states["play_round_sum"] / np.maximum(rounds[game], 1)
        for acc, w in ((self.plays, plays), (self.leading, states["plays_leading"]),
                       (self.final, states["plays_final_round"]), (self.place, place)):
            acc += np.bincount(cell, weights=w, minlength=size).reshape(cards, groups)

    def merge(self, other: "PlayStates") -> None:
        for name in ("plays", "leading", "final", "place", "turns", "turns_leading"):
            getattr(self, name).__iadd__(getattr(other, name))

    def table(self, labels: list[str]) -> pd.DataFrame:
        """Per card: plays, the share of them in a turn begun leading, after the trigger, and their
        mean place in the game, each with its 95% interval; and the baseline, the share of all
        turns begun leading."""
        base = clustered_share(self.turns_leading, self.turns)
        rows = []
        for c, label in enumerate(labels[:self.plays.shape[0]]):
            x = self.plays[c]
            row = {"card": label, "plays": int(x.sum())}
            for name, y in (("share_leading", self.leading[c]), ("share_final_round", self.final[c])):
                row[name], row[f"{name}_lo"], row[f"{name}_hi"] = clustered_share(y, x)
            v, lo, hi = ratio_ci(self.place[c], x)      # a mean place in (0, 1]: the interval within it
            row["mean_place"], row["mean_place_lo"], row["mean_place_hi"] = v, max(lo, 0.0), min(hi, 1.0)
            row["turns_leading"], row["turns_leading_lo"], row["turns_leading_hi"] = base
            d, lo, hi, p = ratio_diff(self.leading[c], x, self.turns_leading, self.turns)
            if 0 < x.sum() < EXACT_PLAYS:
                p = conditional_share_p(self.leading[c], x, self.turns_leading, self.turns)
            row.update(leading_diff=d, leading_diff_lo=lo, leading_diff_hi=hi, leading_p=p)
            rows.append(row)
        out = pd.DataFrame(rows)
        # Holm over the cards played often enough to judge (as the Card value table's verdicts)
        judged = (out["plays"] >= MIN_PLAYS) & np.isfinite(out["leading_p"])
        out["leading_p_holm"] = np.nan
        out.loc[judged, "leading_p_holm"] = holm(out.loc[judged, "leading_p"].to_numpy())
        return out


def timing_words(mean_place: float) -> str:
    """A card's mean place in the game in a designer's words."""
    if not np.isfinite(mean_place):
        return "never played"
    if mean_place >= LATE:
        return "late"
    if mean_place <= EARLY:
        return "early"
    return "mid-game"


def timing_clause(row) -> str:
    """When a card finding's card is played, for the report's sentence: how late, and how often
    by a seat that began its turn leading, against how often seats begin a turn leading (more
    or fewer only where Holm's test says so); empty where the run does not record it."""
    place = row.get("mean_place", np.nan)
    if not np.isfinite(place):
        return ""
    late = ranged(place, row["mean_place_lo"], row["mean_place_hi"])
    lead = ranged(row["share_leading"], row["share_leading_lo"], row["share_leading_hi"])
    base = ranged(row["turns_leading"], row["turns_leading_lo"], row["turns_leading_hi"])
    p = row.get("leading_p_holm", np.nan)
    if np.isfinite(p) and p < ALPHA:
        than = f"{'more' if row['leading_diff'] > 0 else 'fewer'} than the {base} of all turns (Holm {p_text_words(p)})"
    else:
        than = f"against {base} of all turns, no significant difference"
    return (f"played {timing_words(place)}, at {late} of the game on average, and {lead} of its plays by a seat that "
            f"began the turn leading on VP, {than}")



__all__ = ["timing_clause", "MIN_PLAYS", "TIMING_COLUMNS", "PlayStates", "PLAY_STATES", "SEAT_COLUMNS", "timing_words"]
