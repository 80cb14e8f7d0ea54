"""The report: a designer's brief first (is it fair, by how much, how sure, measured with which
players; the strongest card and space findings), then the detail: readable tables (every table
also as CSV, with the internal codes), figures of the effects, a sample game drawn as a picture
with its replay log, and the runs' manifests folded away at the end.

``build_report`` writes ``report.html`` (one file, figures embedded, opens offline; the sample
game's log beside it), ``report.md`` with the figures beside it (PNG and SVG) and every table as
CSV. It is written into a temporary folder and renamed into place, so a failed build never leaves
a half report behind.
"""
from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property
from pathlib import Path

import pandas as pd

from evora_sim.fsutil import atomic_folder
from strategies.registry import is_shipped_expert

from . import brief
from . import cardvalue_stats as CV
from . import display
from .display import ASSOCIATION
from . import explain_stats as X
from . import game_picture, labels, numbers, page, plots
from . import tables as T
from .confirm_stats import shown_confirmation
from .playstates import TIMING_COLUMNS
from .scan import scan
from .sections import Section, Table
from .skill_report import skill_part
from .stats import MIN_EFFECT, p_text, verdict
from .untilsure import describe
from .variants import from_sums, run_metrics

REPORT_KIND = "report"          # the marker kind of a report folder (evora_sim.fsutil)
TIES = ("Every game has exactly one winner: the engine breaks ties for the win by the rules "
        "(D18: fewer parts left, then the later seat).")


@dataclass
class Report:
    title: str
    header: list                   # (label, text)
    notices: list                  # partial runs, run until sure
    answers: list                  # brief.Answer per player count
    answer_figure: tuple           # (title, stem, draw)
    strongest: list                # sentences
    strongest_figure: tuple | None
    findings: list                 # the other findings in words
    sections: list
    sample: object = None          # evora_sim.sample_game.SampleGame, or None
    sample_note: str = ""


def _by_count(items) -> str:
    """'a (2 players), b (3), c (4)' from [(n, text), ...]."""
    items = list(items)
    return ", ".join(f"{t} ({n} players)" if i == 0 else f"{t} ({n})" for i, (n, t) in enumerate(items))


def _est(v, lo, hi, scale=100.0, unit="%", signed=False) -> str:
    return numbers.estimate(v, lo, hi, scale, unit, signed)


def _pct(v, digits=1) -> str:
    return f"{100 * v:.{digits}f}%"


def strategy_findings(rat, mu, min_effect: float = MIN_EFFECT) -> list[str]:
    out = []
    for n, grp in rat.groupby("n_players"):
        grp = grp.sort_values("elo", ascending=False)
        if len(grp) < 2:
            continue
        top, second, low = grp.iloc[0], grp.iloc[1], grp.iloc[-1]
        row = mu[(mu["n_players"] == n) & (mu["strategy"] == top["strategy"]) & (mu["opponent"] == second["strategy"])]
        # one decimal when the interval is narrower than 2 Elo points (large runs)
        dec = 1 if (grp["ci_hi"] - grp["ci_lo"]).max() < 2 else 0
        text = (f"In {n}-player games {top['strategy']} rates highest (Elo {top['elo']:+.{dec}f}, 95% CI "
                f"{top['ci_lo']:+.{dec}f} to {top['ci_hi']:+.{dec}f}")
        text += (f"; lowest: {low['strategy']} {low['elo']:+.{dec}f}, {low['ci_lo']:+.{dec}f} to "
                 f"{low['ci_hi']:+.{dec}f})" if len(grp) > 2 else ")")
        if len(row):
            r = row.iloc[0]
            what = f"wins against {second['strategy']} in" if n == 2 else f"finishes ahead of {second['strategy']} in"
            text += (f": it {what} {_est(r['win_rate'], r['ci_lo'], r['ci_hi'])} of their "
                     f"{'games' if n == 2 else 'shared games'}, "
                     f"{verdict(r['p_holm'], size=r['win_rate'] - 0.5, min_effect=min_effect)}, {p_text(r['p_holm'])}.")
        else:
            text += "."
        out.append(text)
    return out


def majority_findings(share, outcomes, margin, shape, triggers) -> list[str]:
    """The descriptive figures, each with the number of seat-games or games behind it."""
    out = []
    rows = [(n, grp.set_index("group")) for n, grp in share.groupby("n_players")]
    out.append("Majorities (columns, heights 1-4, capitals) give "
               + _by_count((n, _est(g.loc['all seats', 'mean_share'], g.loc['all seats', 'ci_lo'], g.loc['all seats', 'ci_hi'])
                            + f" of {int(g.loc['all seats', 'seat_games']):,} seat-games") for n, g in rows)
               + " of a seat's final score; for winners "
               + _by_count((n, f"{_pct(g.loc['winners', 'mean_share'])} of {int(g.loc['winners', 'seat_games']):,}")
                           for n, g in rows) + " (descriptive).")
    if len(outcomes):
        nob = outcomes[outcomes["outcome"] == "white or unclaimed"]
        top = nob.loc[nob["share"].idxmax()]
        out.append(f"The {top['majority']} majority is scored by no player (held by white or "
                   f"unclaimed) in {_est(top['share'], top['ci_lo'], top['ci_hi'])} of "
                   f"{int(top['n_players'])}-player games ({int(top['games']):,} games), the most of "
                   "any majority (descriptive).")
    out.append("Median margin of victory "
               + _by_count((int(r["n_players"]), f"{r['median']:.0f} VP of {int(r['games']):,} games")
                           for _, r in margin.iterrows())
               + "; games decided by the tie-break "
               + _by_count((int(r["n_players"]), _est(r['share_tiebreak'], r['tiebreak_lo'], r['tiebreak_hi']))
                           for _, r in margin.iterrows()) + " (descriptive).")
    ends = []
    for _, r in shape.iterrows():
        tr = triggers[triggers["n_players"] == r["n_players"]]
        main = tr.loc[tr["share"].idxmax()]
        ends.append((int(r["n_players"]), f"{_pct(main['share'], 0)} {main['end_trigger'].replace('_', ' ')}"))
    out.append("Games last "
               + _by_count((int(r["n_players"]), _est(r['rounds_mean'], r['rounds_lo'], r['rounds_hi'], 1, '')
                            + f" rounds over {int(r['games']):,} games") for _, r in shape.iterrows())
               + " on average; the most common end: " + _by_count(ends) + " (descriptive).")
    lim = triggers[(triggers["end_trigger"] == "round_limit") & (triggers["count"] > 0)]
    for _, r in lim.iterrows():
        out.append(f"{int(r['count']):,} {int(r['n_players'])}-player games hit the simulation's round "
                   "limit (P4) instead of a rule's end trigger.")
    return out


def until_sure(data) -> pd.DataFrame:
    """The headline metrics of each run played with --until-ci at the level its stopping keeps
    valid (1 - 0.05/K over its K planned looks); ``data``: a scan holding those runs' sums."""
    frames = []
    for i, r in enumerate(data.runs):
        seq = r.manifest.get("sequential")
        if seq:
            table = run_metrics(from_sums(data.sums[i], r.manifest), alpha=seq["alpha_per_look"])
            table.insert(0, "run", str(r.out))
            table["level"] = 1 - seq["alpha_per_look"]
            table["interval"] = [numbers.bracket(x.value, x.lo, x.hi, *numbers.units(x.kind)) for x in table.itertuples()]
            frames.append(table)
    return pd.concat(frames, ignore_index=True) if frames else pd.DataFrame()




def tension_findings(t: pd.DataFrame) -> list[str]:
    if t.empty:
        return []
    return ["The lead (by score after each round) changes "
            + _by_count((int(r["n_players"]), _est(r["lead_changes_mean"], r["lead_changes_lo"],
                                                    r["lead_changes_hi"], 1, "") + " times per game")
                        for _, r in t.iterrows())
            + "; the winner takes the lead for good only in the last round, the final scoring included, in "
            + _by_count((int(r["n_players"]), numbers.ranged(r["share_last_round"], r["last_round_lo"],
                                                             r["last_round_hi"]) + " of games")
                        for _, r in t.iterrows()) + " (descriptive; see Game shape)."]


def _seat_section(adv, tests, dists, held, runs, min_effect) -> Section:
    negligible_note = (f" 'negligible': below {numbers.pp(min_effect)} of win rate, the smallest "
                       "difference that matters (evora report --min-effect), even when significant.")
    note = ("Each seat's win rate with its 95% range against the fair share 1/n. With seat rotation a "
            "seed's games share their card stacks, so the seed is the independent unit (ranges "
            "widened by the seeds' design effect); each seat is tested, Holm-corrected over the seats "
            "of a player count (at 2 players the two seats are one question, one test). The second "
            "table measures fairness as a whole: the seat unfairness is the root mean square of the "
            "seats' deviations from the fair share (0 = every seat wins 1/n), estimated without the "
            "upward bias of noise, with a Feldman-Cousins range that stays valid at and near a fair "
            "game, and the Hotelling test of \"all seats fair\" with seeds as units "
            "(analysis/fairness.py)." + negligible_note + " Mean margin: own score minus the best "
            "other score in the game.")
    keep_adv = adv[~adv["n_players"].isin(list(held))]
    keep_tests = tests[~tests["n_players"].isin(list(held))]
    figures = []               # the seats' deviations are drawn in the answer, above
    tables = []
    if len(keep_adv):
        tables = [Table("seat_advantage", keep_adv, display.seats(keep_adv)),
                  Table("seat_test", keep_tests, display.fairness(keep_tests))]
        dists = {n: d for n, d in dists.items() if n not in held}
        figures.append(("Final score distribution by seat", "score_by_seat", lambda: plots.score_by_seat(dists)))
    return Section("Seat advantage", note, tables, figures, notice=" ".join(held.values()))


TIMING_CAPTION = (
    "When each card is played (descriptive: it can suggest why a card is associated with winning, not show it): "
    "its plays' mean place in the game "
    "(the round played in over the game's rounds: 100% is the last round), the share played after the end "
    "was triggered, and the share played in a turn its seat began leading on VP (the totals the final "
    "scoring would give had the game ended then; a tie is no lead), against the share of all turns begun "
    "leading; p: that difference (under 2,000 plays an exact test given each seed group's own rate of turns "
    "begun leading, from 2,000 a t test on seed groups), Holm over the cards played 100 times or more. A card "
    "played mostly late or by leaders may look strong because strong positions play it. 95% ranges over seeds.")


def card_value_section(experiment: dict, cards: pd.DataFrame, fields: dict) -> Section:
    """The section of an ``evora card-value`` result (:func:`analysis.cardvalue_stats.read_summary`),
    beside an observational card table of the same field: the report's own (``fields``: the
    strategies of its runs per player count) when its games had the experiment's player count
    and strategies, else the experiment's baseline games'."""
    cfg = experiment["config"]
    n = int(cfg["players"])
    given, removed, fair = experiment["given"], experiment["removed"], experiment["fairness"]
    same = fields.get(n) == sorted(cfg["field"])
    observed = cards[cards["n_players"] == n] if same else experiment["observed"]
    where = ("this report's" if same else
             "the experiment's own baseline games' (this report's games had "
             + (f"other strategies: {', '.join(fields[n])})" if n in fields else f"no {n}-player games)"))
    note = (f"From evora card-value at {n} players ({', '.join(cfg['field'])}; {int(given['games'].iloc[0]):,} "
            f"paired games a card given, every seat in turn under every rotation"
            + (f"; {int(removed['games'].iloc[0]):,} games a card removed" if removed is not None else "")
            + "). " + CV.EXPLAINED + " Ranges are 95% for each card, seeds as units; p-values Holm-corrected "
            "over the cards (removal: over every card and strategy); a card that changed no game is no "
            f"measurement ('{CV.NOT_EXERCISED}') and not among Holm's tests; * = significant after Holm. The figure "
            f"sets each card beside {where} observational estimate (win rate when played, adjusted).")
    tables = [Table("card_value_given", given, CV.shown_given(given), folded=False)]
    by_strategy = experiment["given_by_strategy"]
    if by_strategy is not None:
        tables.append(Table("card_value_given_by_strategy", by_strategy, CV.shown_by_strategy(by_strategy), caption=(
            "The given card's change by the strategy that held it (pp; a quarter of the games each, so "
            "wider ranges; Holm over every card and strategy).")))
    if removed is not None:
        tables += [Table("card_value_removed", removed, CV.shown_by_strategy(removed), caption=(
                       "Change in each strategy's win rate when the card is taken out of the game (pp)."),
                         folded=False),
                   Table("card_value_removed_fairness", fair, CV.shown_fairness(fair))]
    return Section("Card value by experiment", note, tables,
                   [("Card value by experiment", "card_value_experiment",
                     lambda: CV.card_value_figure(given, removed, observed))])


def why_section(why: dict, explained: dict | None, held: dict) -> Section:
    """The Why section: each seat's deviation split by where its games were decided, per player
    count (from the runs' own games), and, from an ``evora explain`` result, the fixes ranked and
    what else each changes."""
    frames, shown = [], []
    for n, (table, _) in sorted(why.items()):
        if n in held:
            continue
        frames.append(table.assign(n_players=n))
        shown.append(X.shown_parts(table).assign(Players=n))
    tables = []
    if frames:
        df = pd.concat(frames, ignore_index=True)
        tables.append(Table("why_decomposition", df, pd.concat(shown, ignore_index=True), folded=False))
    note = X.METHOD
    if explained is not None:
        about = explained["about"]
        note += (f" The fixes come from evora explain at {int(about['players'])} players ({explained['config']['run']}, "
                 f"its first {int(about['seeds_replayed']):,} seeds replayed under each change).")
        tables += [Table("why_fixes", explained["fixes"], X.shown_fixes(explained["fixes"]), folded=False,
                         caption="The rule changes ranked by the seat unfairness they leave (paired with the run's "
                                 "games on the same seeds; Holm over the changes). These figures favour the fix "
                                 "ranked first, chosen on them: it is quoted only once confirmed on fresh seeds "
                                 "(On fresh seeds)."),
                   *([Table("why_confirmation", explained["confirmation"],
                            shown_confirmation(explained["confirmation"]), folded=False,
                            caption="The fix ranked first and the run's rules played again on fresh seeds (the "
                                    "only figures of it quoted; seats' intervals simultaneous over the seats and "
                                    "rungs).")] if explained.get("confirmation") is not None else []),
                   Table("why_side_effects", explained["measures"], X.shown_measures(explained["measures"]),
                         caption="What else each change does to the game (paired differences over seeds).")]
    else:
        note += (" The fixes are not in this report: evora explain RUN --out DIR replays a run's seeds under each "
                 "rule change, and evora report --explain DIR shows them here.")
    if not frames:
        note += (" No run of this report records where its games were decided (they were played before the "
                 "game loop recorded it): play them again for the decomposition.")
    return Section(brief.WHY_TITLE, note, tables)


class ReportData:
    """What the sections of a report read: the runs, their one scan (:mod:`analysis.scan`) and
    the tables made from it, each made on first use and kept, so a section names the tables it
    needs and a table no section reads is never made. The inputs a command adds (a skill ladder,
    an ``evora card-value`` result, an explain summary, strong-play runs) are here too, None when
    the command has none."""

    def __init__(self, runs, n_boot: int = 1000, min_effect: float = MIN_EFFECT, backend: str = "local",
                 scheduler: str | None = None, ladder=None, card_value: dict | None = None,
                 explained: dict | None = None, expert_runs=None):
        self.runs, self.n_boot, self.min_effect = runs, n_boot, min_effect
        self.backend, self.scheduler = backend, scheduler
        self.ladder, self.card_value, self.explained, self.expert_runs = ladder, card_value, explained, expert_runs
        sequential = [i for i, r in enumerate(runs) if r.manifest.get("sequential")]
        self.data = scan(runs, report=True, sums=sequential, backend=backend, scheduler=scheduler)
        self.rules = self.data.rules()
        self.held = brief.held_back(runs)
        self.info = {k: v for r in runs for k, v in r.manifest["config"].get("resolved_strategies", {}).items()}
        self.fields = {int(r.manifest["config"]["players"]): sorted(r.manifest["config"]["strategies"]) for r in runs}
        self._tables = {}

    @cached_property
    def seats(self) -> tuple:
        """(the seat advantage table, its tests)."""
        return T.seat_advantage(self.data, self.min_effect)

    @cached_property
    def skill(self):
        """The skill ladder's part of the report (:func:`analysis.skill_report.skill_part`), or None."""
        if self.ladder is None:
            return None
        return skill_part(self.ladder, self.min_effect, backend=self.backend, scheduler=self.scheduler)

    def table(self, name: str, *args):
        """``analysis.tables.NAME(data, *args)``, made once."""
        key = (name, *args)
        if key not in self._tables:
            self._tables[key] = getattr(T, name)(self.data, *args)
        return self._tables[key]

    strat = property(lambda self: self.table("strategy_win_rates"))
    mu = property(lambda self: self.table("matchups"))
    rat = property(lambda self: self.table("ratings", self.n_boot))
    cards = property(lambda self: self.table("card_value", self.min_effect))
    spaces = property(lambda self: self.table("space_value", self.min_effect))
    vp = property(lambda self: self.table("vp_by_category"))
    outcomes = property(lambda self: self.table("majority_outcomes"))
    share = property(lambda self: self.table("majority_share"))
    margin = property(lambda self: self.table("victory_margin"))
    shape = property(lambda self: self.table("game_shape"))
    tension = property(lambda self: self.table("tension"))
    triggers = property(lambda self: self.table("end_triggers"))
    why = property(lambda self: self.table("why"))

    @cached_property
    def sure(self) -> pd.DataFrame:
        return until_sure(self.data)


# ---------------------------------------------------------------------------------------------
# the sections, in the report's order: each a function of the report's data that returns its
# Section, or None when the report has no such section. A new section is one new function here
# and its place in SECTIONS.
# ---------------------------------------------------------------------------------------------
def skill_section(d: ReportData) -> Section | None:
    return d.skill.section if d.skill is not None else None


def seat_section(d: ReportData) -> Section:
    adv, tests = d.seats
    return _seat_section(adv, tests, d.table("score_distribution"), d.held, d.runs, d.min_effect)


def why_seats_section(d: ReportData) -> Section:
    return why_section(d.why, d.explained, d.held)


def strategy_section(d: ReportData) -> Section:
    strat, rat, mu = d.strat, d.rat, d.mu
    return Section("Strategy match-ups",
                   "Win rate of each strategy over its seat-games (95% ranges); each strategy against each "
                   "other (2 players: the share of their games it won; 3-4 players: the share of shared "
                   "games in which it finished ahead; exact binomial test against 50%, Holm over the pairs); "
                   "Bradley-Terry ratings on the Elo scale (mean 0; +100 = ahead of a 0-rated strategy 64% of "
                   "the time) with ranges from a bootstrap over seeds.",
                   [Table("strategy_win_rates", strat, display.strategies(strat, d.info)),
                    Table("ratings", rat, display.ratings(rat)),
                    Table("matchups", mu, display.matchups(mu))],
                   [("Strategy match-ups", "matchups", lambda: plots.matchup_heatmap(mu))] if len(mu) else [])


def card_section(d: ReportData) -> Section:
    cards = d.cards
    return Section("Card value",
                   "For each card effect (played from hand) and instant bonus tile (taken), per player count: "
                   "plays per game, the share of seat-games that played it, VP scored while resolving one "
                   "play; the win rate of seats that played it against those that did not, and the "
                   "difference adjusted for strategy and seat (logistic regression, seed-clustered standard "
                   "errors; p-values Holm-corrected over the 16). card_value.csv keeps the internal codes "
                   "and the raw differences. " + ASSOCIATION,
                   [Table("card_value", cards, display.exposure(cards, "card"), folded=False),
                    *([Table("card_timing", cards[["n_players", "card", "name", "times", *TIMING_COLUMNS]],
                             display.card_timing(cards), caption=TIMING_CAPTION)]
                      if "mean_place" in cards.columns else [])],
                   [("Card value (win rate when played, adjusted)", "card_value",
                     lambda: plots.forest(cards.assign(card=cards["name"]), "card",
                                          "Card effects and instant tiles: win rate when played vs. not"))])


def card_experiment_section(d: ReportData) -> Section | None:
    """An ``evora card-value`` result, right after the card table it answers."""
    return card_value_section(d.card_value, d.cards, d.fields) if d.card_value is not None else None


def space_section(d: ReportData) -> Section:
    spaces = d.spaces
    note = ("The same for each Construction Site space (its action carried out at least once by "
            "the seat; the tables record no VP per space), with the same bias: a seat's position "
            "decides which spaces it can reach and wants. The space_value.csv keeps each space's "
            "internal code.")
    board_notice = brief.RECONSTRUCTION if labels.board_is_default(d.rules) else brief.OWN_BOARD
    return Section("Construction Site spaces", note,
                   [Table("space_value", spaces, display.exposure(spaces, "space"), folded=False)],
                   [("Construction Site spaces (win rate when used, adjusted)", "space_value",
                     lambda: plots.forest(spaces.assign(space=spaces["name"]), "space",
                                          "Construction Site spaces: win rate when used vs. not"))],
                   notice=board_notice)


def majority_section(d: ReportData) -> Section:
    share, margin, outcomes, vp = d.share, d.margin, d.outcomes, d.vp
    held_cols = d.table("columns_held")
    margins = d.table("victory_margins")
    return Section("Majority scoring",
                   "VP from each scoring category by seat and by strategy; height and capitals majorities "
                   "won outright, tied, or scored by no player (white held it, or no colour had the parts: "
                   "the tables cannot tell these apart); column majorities held at the end; the share of the "
                   "score from majorities; the margin of victory (winner minus runner-up). " + TIES,
                   [Table("majority_share", share, display.majority_share(share)),
                    Table("victory_margin", margin, display.victory_margin(margin)),
                    Table("majority_outcomes", outcomes, display.majority_outcomes(outcomes)),
                    Table("columns_held", held_cols, display.columns_held(held_cols)),
                    Table("vp_by_category", vp, display.vp_by_category(vp))],
                   [("Score breakdown by strategy", "score_breakdown", lambda: plots.score_breakdown(vp)),
                    ("Majority outcomes", "majority_outcomes", lambda: plots.majority_outcomes(outcomes)),
                    ("Margin of victory", "victory_margin", lambda: plots.victory_margin(margins))])


def shape_section(d: ReportData) -> Section:
    shape, triggers, tension, data = d.shape, d.triggers, d.tension, d.data
    return Section("Game shape",
                   "How long games last and how they end; and how close they are, counted by the engine as "
                   "the games are played: the leader after each round by score (a shared lead is no leader; "
                   "the last round's standing is the final score, so its leader is the winner), the lead "
                   "changes per game, the largest deficit after a round that the winner came back from, how "
                   "many rounds before the end the winner took the lead for good, and the share of games "
                   "decided in the last round (95% ranges).",
                   [Table("game_shape", shape, display.game_shape(shape)),
                    Table("end_triggers", triggers, display.end_triggers(triggers))]
                   + ([Table("tension", tension, display.tension(tension))] if len(tension) else []),
                   [("Game length", "game_length", lambda: plots.game_length(T.game_lengths(data)))]
                   + ([("Game tension", "tension", lambda: plots.tension(T.tension_distributions(data)))]
                      if len(tension) else []))


def until_sure_section(d: ReportData) -> Section | None:
    sure = d.sure
    if not len(sure):
        return None
    return Section(
        "Run until sure",
        "Runs played with --until-ci: the headline metrics with the ranges their stopping keeps valid, "
        "at level 1 - 0.05/K over the K planned looks: cluster-robust (seed = cluster) t intervals, and "
        "the Feldman-Cousins interval for the seat unfairness (pp). The other sections show plain "
        "95% ranges.",
        [Table("until_sure", sure, display.until_sure(sure))])


SECTIONS = (skill_section, seat_section, why_seats_section, strategy_section, card_section,
            card_experiment_section, space_section, majority_section, shape_section, until_sure_section)


def notices(runs) -> list[str]:
    """The notices above the brief: partial runs, and runs played until sure."""
    out = []
    for r in runs:
        if len(r.done_chunks()) < len(r.manifest["chunks"]):
            out.append(f"PARTIAL RUN: {r.out} is incomplete; only {len(r.done_chunks())} of "
                       f"{len(r.manifest['chunks'])} chunks are analysed.")
        seq = r.manifest.get("sequential")
        if seq:
            out.append(f"RUN UNTIL SURE: {r.out} was played with {describe(seq)}. Method: "
                       f"{seq['method']} The other tables show plain 95% ranges, which do not "
                       "account for the stopping; the headline metrics with the adjusted ranges "
                       f"(level {1 - seq['alpha_per_look']:.4g}) are in the section 'Run until sure'.")
    return out


def analyse(runs, n_boot: int = 1000, min_effect: float = MIN_EFFECT, backend: str = "local",
            scheduler: str | None = None, ladder=None, card_value: dict | None = None,
            explained: dict | None = None, expert_runs=None, sample=None) -> Report:
    """Every table and figure of the report, from one pass over the runs (:mod:`analysis.scan`;
    ``backend="dask"``: on the cluster at ``scheduler``): the brief, then each of ``SECTIONS``.
    ``ladder`` (:class:`analysis.skill_stats.Ladder`): a Skill section first, and the findings'
    robustness to skill said first among the findings. ``card_value``: an ``evora card-value``
    result (:func:`analysis.cardvalue_stats.read_summary`), shown after the card table. ``expert_runs``:
    runs with the expert in every seat, whose seat figures the answer quotes beside the field's.
    ``sample``: the sample game and the note said in its place
    (:func:`evora_sim.sample_game.report_sample`), played by the command that makes the report:
    the statistics play no games."""
    d = ReportData(runs, n_boot, min_effect, backend, scheduler, ladder, card_value, explained, expert_runs)
    title, header = brief.run_header(runs, d.rules)
    answers, answer_figure = _answers(d)
    top = brief.strongest(d.cards, d.spaces)
    strongest = brief.strongest_lines(top, d.data.player_counts, card_value, d.fields, d.cards)
    strongest_figure = (("Strongest card and space findings", "strongest", lambda: plots.strongest(top))
                        if len(top) else None)
    findings = (strategy_findings(d.rat, d.mu, min_effect)
                + majority_findings(d.share, d.outcomes, d.margin, d.shape, d.triggers)
                + tension_findings(d.tension))
    sections = [sec for build in SECTIONS if (sec := build(d)) is not None]
    if d.skill is not None:
        findings = d.skill.findings + findings
        header = header + [d.skill.header]
    game, sample_note = sample or (None, "")
    return Report(title, header, notices(runs), answers, answer_figure, strongest, strongest_figure, findings,
                  sections, game, sample_note)


def _answers(d: ReportData) -> tuple[list, tuple]:
    """The brief's answer per player count, and its figure: each seat's deviation from a fair
    share among the bots, and among good players beside them when the report has strong-play runs."""
    adv, tests = d.seats
    held = d.held
    why = d.why
    expert = None
    bots_adv = adv[~adv["n_players"].isin(list(held))]
    answer_figure = ("Each seat's deviation from a fair share", "seat_deviation",
                     lambda: plots.seat_deviation(bots_adv, held))
    if d.expert_runs:
        e_data = scan(d.expert_runs, report=True, backend=d.backend, scheduler=d.scheduler)
        e_adv, e_tests = T.seat_advantage(e_data, d.min_effect)
        expert = (e_adv, e_tests, {int(r.manifest["config"]["players"]): _field_player(r) for r in d.expert_runs},
                  T.why(e_data) or None)
        # the strongest play drawn first, the bots' beside it
        answer_figure = ("Each seat's deviation from a fair share, among good players and among the bots",
                         "seat_deviation", lambda: plots.seat_deviation(
                             e_adv, {n: t for n, t in held.items() if n not in set(e_adv["n_players"])},
                             beside=bots_adv, labels=("good players", "the bots")))
    answers = brief.answers(adv, tests, d.runs, held, d.min_effect, d.cards, why if why else None, d.explained,
                            expert)
    return answers, answer_figure


def _field_player(run) -> tuple[str, bool]:
    """The strategy in every seat of a strong-play run, and whether it is the built-in expert by
    what the run recorded (its weights), not by its name."""
    cfg = run.manifest["config"]
    name = cfg["strategies"][0]
    return name, is_shipped_expert(name, (cfg.get("resolved_strategies") or {}).get(name))


def build_report(runs, out: str | Path, n_boot: int = 1000, min_effect: float = MIN_EFFECT,
                 backend: str = "local", scheduler: str | None = None, ladder=None,
                 card_value: dict | None = None, explained: dict | None = None, expert_runs=None,
                 sample=None) -> Path:
    out = Path(out)
    rep = analyse(runs, n_boot=n_boot, min_effect=min_effect, backend=backend, scheduler=scheduler, ladder=ladder,
                  card_value=card_value, explained=explained, expert_runs=expert_runs, sample=sample)
    shown = (list(runs) + ([r for r in ladder.runs if r not in runs] if ladder is not None else [])
             + list(expert_runs or []))
    manifests = [(str(r.out), r.manifest, (len(r.done_chunks()), len(r.manifest["chunks"]))) for r in shown]
    with atomic_folder(out, REPORT_KIND) as tmp:
        figures = {}
        first = [rep.answer_figure] + ([rep.strongest_figure] if rep.strongest_figure else [])
        for title, stem, draw in first + [f for sec in rep.sections for f in sec.figures]:
            if stem not in figures:
                figures[stem] = plots.save(draw(), tmp, stem)
        for sec in rep.sections:
            for t in sec.tables:
                t.df.to_csv(tmp / f"{t.name}.csv", index=False)
        if rep.sample is not None:
            figures["sample_game"] = plots.save(game_picture.draw(rep.sample), tmp, "sample_game")
            (tmp / "sample_game.txt").write_text(
                f"$ {rep.sample.command}\n\n" + "\n".join(rep.sample.log) + "\n", encoding="utf-8")
        page.write_markdown(tmp / "report.md", rep, figures, manifests)
        (tmp / page.ANSWER_FILE).write_text(page.answer_text(rep), encoding="utf-8")
        page.write_html(tmp / "report.html", rep, figures, manifests)
    return out
