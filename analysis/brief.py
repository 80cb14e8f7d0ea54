"""The report's first screen, in a designer's words: for each player count, is it fair, by how
much, how sure, and measured with which players; the strongest card and space findings; and
what the run was (rules that differ from the default, the strategies, the board).

A card or space finding of the run's own games compares seats that played it with seats that
did not: an association (a seat doing well both plays more and wins), and its sentence says so.
Where the report also holds an experiment on the card (``evora card-value``: the card the only
difference between two games of the same seed), the sentence quotes that causal figure first.

The seat finding is held back where it would mislead: seats that held different strategies
without seat rotation measure the strategies as much as the seats.
"""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from . import labels
from .cardvalue_stats import NOT_EXERCISED
from .confirm_stats import fix_quote
from .explain_stats import confirmed_fixes, fairer_fixes, seat_words, why_sentence
from .labels import card_title
from .numbers import PP, p_text_words, pp, ranged
from .playstates import TIMING_COLUMNS, timing_clause
from .stats import FEW_CARD_PLAYS, MIN_EFFECT

RECONSTRUCTION = ("The Construction Site layout is a reconstruction (decision D1): the published "
                  "board's layout is not in the rulebook text, so these 16 spaces satisfy its "
                  "constraints but are not the printed board. Every Construction Site space finding "
                  "depends on it; enter the real layout in a rules file ([[board.spaces]], see the "
                  "README) to measure the real board.")
OWN_BOARD = ("The Construction Site layout is the one given by the rules (not the shipped "
             "reconstruction of decision D1).")
BOTS = "Measured among these bots, not people."


def held_back(runs) -> dict[int, str]:
    """Player counts whose seat finding is held back, with the reason and the way to get one:
    seats that held different strategies without seat rotation."""
    out = {}
    for r in runs:
        cfg = r.manifest["config"]
        if len(set(cfg["strategies"])) > 1 and not cfg["seat_rotation"]:
            n = int(cfg["players"])
            out[n] = (f"No seat finding for {n} players: the seats held different strategies "
                      f"({', '.join(cfg['strategies'])}) without seat rotation, so each seat's win rate "
                      "is also its strategy's. To measure the seats, play the run again with seat "
                      "rotation (the default of evora simulate; this run was played with "
                      "--no-seat-rotation or an earlier version).")
    return out


@dataclass
class Answer:
    """The first screen of one player count."""

    players: int
    lead: str                                   # the headline sentence
    details: list[str] = field(default_factory=list)
    held: bool = False
    why: str = ""                               # the lead finding's mechanism, in one sentence
    fix: str = ""                               # what would fix it: a link to the section WHY_TITLE


WHY_TITLE = "Why the seats win what they win"


def _vp_words(vp: float) -> str:
    if not np.isfinite(vp):
        return ""
    if abs(vp) < 0.5:
        return ", under 1 VP from an average seat's score"
    return f", about {abs(vp):.0f} VP {'more' if vp > 0 else 'less'} than an average seat"


def _seat_name(seat: int, n: int) -> str:
    return seat_words(seat, n).capitalize()


def _seat_sentence(row, n: int, min_effect: float) -> str:
    fair = 1 / n
    vp = row["mean_score"] - row["avg_score"]
    who = _seat_name(int(row["seat"]), n)
    rate = ranged(row["win_rate"], row["ci_lo"], row["ci_hi"])
    rate, rng = rate.split(" (", 1)
    text = f"{who} wins {rate} of {n}-player games (95% range {rng[:-1]}) instead of {100 * fair:.3g}%"
    if not row["significant"]:
        return text + ": no clear difference from a fair share."
    size = f"{100 * row['diff']:+.1f}{PP}{_vp_words(vp)}"
    small = f" (below the {pp(min_effect)} that matters)" if row["negligible"] else ""
    return f"{text}: {size}{small}."


def hardly_any_cards(cards: pd.DataFrame | None, n: int) -> str | None:
    """The sentence saying that the players of ``n``-player games hardly play cards (fewer than
    ``FEW_CARD_PLAYS`` plays a game, instant tiles included), or None: then a card finding says
    little about the cards, and the designer must hear it where the answer is."""
    if cards is None or cards.empty or "per_game" not in cards:
        return None
    plays = float(cards.loc[cards["n_players"] == n, "per_game"].sum())
    if plays >= FEW_CARD_PLAYS:
        return None
    return (f"These players hardly play cards at {n} players ({plays:.2f} card plays a game, instant tiles "
            "included): the card findings say little about the cards; measure them with players that use them "
            "(--strategies with cards, or evora card-value).")


@dataclass
class Field:
    """One field's seat figures at a player count: its seats' rows of ``tables.seat_advantage``
    (with ``avg_score``), its fairness test row, and who played, in words."""

    rows: pd.DataFrame
    test: pd.Series
    who: str                                    # 'good players (the built-in expert in every seat)'
    short: str                                  # 'good players', 'the simple bots'

    @classmethod
    def of(cls, adv: pd.DataFrame, tests: pd.DataFrame, n: int, who: str, short: str) -> "Field | None":
        grp = adv[adv["n_players"] == n].copy().sort_values("seat")
        if grp.empty:
            return None
        grp["avg_score"] = grp["mean_score"].mean()
        return cls(grp, tests[tests["n_players"] == n].iloc[0], who, short)

    def row(self, seat: int):
        return self.rows[self.rows["seat"] == seat].iloc[0]

    @property
    def worst(self) -> int:
        """The seat that deviates most from a fair share, either way (at a tie, as at 2 players
        always, the seat ahead)."""
        d = self.rows["diff"].to_numpy(dtype=float)
        key = np.round(np.abs(d), 12) + 1e-13 * np.sign(d)
        return int(self.rows["seat"].iloc[int(np.argmax(key))])

    def deviating(self) -> list[int]:
        """The seats whose deviation is significant (Holm over the seats), largest first."""
        d = self.rows[self.rows["significant"].astype(bool)]
        return [int(s) for s in d.sort_values("diff", key=abs, ascending=False, kind="stable")["seat"]]

    def direction(self, n: int) -> tuple[int, int] | None:
        """(seat, +1 or -1): the seat ahead by most among the significant ones, else the one behind
        by most; None when no seat deviates significantly."""
        sig = self.rows[self.rows["significant"].astype(bool)]
        if sig.empty:
            return None
        ahead = sig[sig["diff"] > 0]
        if len(ahead):
            return int(ahead.loc[ahead["diff"].idxmax(), "seat"]), 1
        return int(sig.loc[sig["diff"].idxmin(), "seat"]), -1

    def standing(self, n: int) -> str:
        """'the first seat is ahead', 'the last seat is behind', 'no seat is clearly ahead'."""
        d = self.direction(n)
        if d is None:
            return "no seat is clearly ahead or behind"
        return f"{_seat_words(d[0], n)} is {'ahead' if d[1] > 0 else 'behind'}"

    def unfairness(self, min_effect: float) -> str | None:
        t = self.test
        if not np.isfinite(t["unfairness_lo"]):
            return None
        fair = ranged(t["unfairness"], t["unfairness_lo"], t["unfairness_hi"], unit=PP)
        if not t["significant"]:
            verdict = (f"consistent with fair seats ({p_text_words(t['p'])}): any unfairness is at most "
                       f"{100 * t['unfairness_hi']:.2g}{PP}")
        else:
            verdict = (f"the seats are not all fair ({p_text_words(t['p'])})"
                       + (f", but by less than the {pp(min_effect)} that matters" if t["negligible"] else ""))
        return f"seat unfairness, the typical seat's distance from a fair share: {fair}; {verdict}"


def _seat_words(seat: int, n: int) -> str:
    return seat_words(seat, n).replace(" player", " seat")


def reversed_seats(strong: Field, bots: Field) -> list[int]:
    """The seats significantly off a fair share in both fields, in opposite directions."""
    out = []
    for s in strong.rows["seat"]:
        a, b = strong.row(int(s)), bots.row(int(s))
        if a["significant"] and b["significant"] and np.sign(a["diff"]) != np.sign(b["diff"]):
            out.append(int(s))
    return out


def _size_differs(a, b) -> float | None:
    """The difference of one seat's deviation between two independent fields when a z test on it
    (standard errors from the 95% ranges) rejects at 5%, else None."""
    z95 = 1.959964
    se = np.hypot((a["ci_hi"] - a["ci_lo"]) / (2 * z95), (b["ci_hi"] - b["ci_lo"]) / (2 * z95))
    d = float(a["diff"] - b["diff"])
    return d if se > 0 and abs(d) / se > z95 else None


def contrast(strong: Field, bots: Field, n: int) -> str:
    """The first sentence when a report holds a strong field beside the bots': which seat is ahead
    among each, naming a reversal, or a difference of size, where there is one."""
    s_dir, b_dir = strong.direction(n), bots.direction(n)
    flipped = reversed_seats(strong, bots)
    head = f"Among {strong.short} {strong.standing(n)}; among {bots.short} {bots.standing(n)}"
    if flipped:
        if n == 2:
            return f"{head}: the seat finding reverses with skill."
        return f"{head}: the seat finding reverses with skill for {' and '.join(_seat_words(s, n) for s in flipped)}."
    if s_dir != b_dir:
        return head + "."
    if s_dir is None:
        return f"Among {strong.short}, as among {bots.short}, no seat is clearly ahead or behind."
    seat = s_dir[0]
    size = _size_differs(strong.row(seat), bots.row(seat))
    if size is None:
        return f"Among {strong.short} {strong.standing(n)}, as among {bots.short}."
    more = "more" if abs(strong.row(seat)["diff"]) > abs(bots.row(seat)["diff"]) else "less"
    return (f"Among {strong.short} {strong.standing(n)}, as among {bots.short}, but by {abs(100 * size):.1f}{PP} "
            f"{more} (a significant difference of size).")


def _field_details(f: Field, n: int, min_effect: float, skip: int | None, alone: bool = False) -> list[str]:
    """Every other seat off a fair share, then the field's seat unfairness (``alone``: the report's
    only field, so the question need not say among whom)."""
    # at 2 players the other seat is the mirror of the first: no sentence of its own
    out = [] if n == 2 else [_seat_sentence(f.row(s), n, min_effect) for s in f.deviating() if s != skip]
    fair = f.unfairness(min_effect)
    if fair:
        out.append(f"Is it fair{'' if alone else ' among ' + f.short}? " + fair[0].upper() + fair[1:] + ".")
    return out


def answers(adv: pd.DataFrame, tests: pd.DataFrame, runs, held: dict[int, str],
            min_effect: float = MIN_EFFECT, cards: pd.DataFrame | None = None, why: dict | None = None,
            explained: dict | None = None, expert: tuple | None = None) -> list[Answer]:
    """The first screen of each player count, led by the strongest play measured. With a strong
    field (``expert``: the seat tables, ``tables.seat_advantage``, of runs with one strong player in
    every seat, the players by count, and their ``why``), the first sentence says which seat is
    ahead among good players and among the bots, naming a reversal; then the strong field's seat
    that deviates most, every other seat that deviates, its seat unfairness, its Why; the bots'
    figures follow in the detail. Without one, the bots' findings as they are. ``cards``: to say
    when the players hardly play cards; ``why``: per player count the decomposition of the bots'
    seats' deviations (``analysis.tables.why``); ``explained``: an ``evora explain`` result whose
    fix is quoted only when it is significantly fairer."""
    out = []
    counts = sorted({int(r.manifest["config"]["players"]) for r in runs})
    bot_names = {int(r.manifest["config"]["players"]): ", ".join(dict.fromkeys(r.manifest["config"].get("strategies", [])))
                 for r in runs}
    for n in counts:
        strong = strong_field(expert, n)
        bots = None if n in held else Field.of(adv, tests, n, f"these bots ({bot_names[n]})",
                                               f"the simple bots ({bot_names[n]})" if strong else "these bots")
        if strong is None and bots is None:
            out.append(Answer(n, held[n], [BOTS], held=True))
            continue
        lead_field = strong or bots
        named = strong.direction(n) if strong is not None else None      # the seat the first sentence names
        seat = named[0] if named else lead_field.worst
        lead = _seat_sentence(lead_field.row(seat), n, min_effect)
        details = _field_details(lead_field, n, min_effect, skip=seat, alone=strong is None)
        few = hardly_any_cards(cards, n)
        if strong is not None:
            e_why = expert[3] if len(expert) > 3 and expert[3] else None
            lead = (contrast(strong, bots, n) + " " if bots is not None else "") + \
                f"Among {strong.short}: " + lead[0].lower() + lead[1:]
            details.append(f"Who: {strong.who}; {int(strong.row(seat)['games']):,} games; seeds are the "
                           f"independent units. {STRONG_NOTE}")
            if bots is not None:
                b_seat = bots.worst
                b_lines = [_seat_sentence(bots.row(b_seat), n, min_effect),
                           *_field_details(bots, n, min_effect, skip=b_seat)]
                details.append(f"Among {bots.short}, {int(bots.row(b_seat)['games']):,} games per seat: "
                               + " ".join(b_lines))
                if why and n in why:
                    details.append(f"Why, among {bots.short}? " + _why(why, n, b_seat)[len("Why? "):])
            else:
                details.append(held[n])
            if few:
                details.append(few)
            why_text = _why(e_why, n, seat, among=strong.short)
        else:
            if few:
                details.append(few)
            details.append(f"{BOTS} {int(bots.row(seat)['games']):,} games per seat; seeds are the independent units.")
            why_text = _why(why, n, seat)
        out.append(Answer(n, lead, details, why=why_text, fix=fix_sentence(explained, n)))
    return out


# one strong player's finding need not be another's: at 2 players the expert and the search player,
# about as strong, put different seats ahead (reports/p2_skill); evora skill measures it per rung
STRONG_NOTE = ("The expert is a learned bot, trained to play like the search player; good play by bots, "
               "not people, and another strong player can disagree on the seats: evora skill measures the "
               "finding at every skill.")


def strong_field(expert: tuple | None, n: int) -> Field | None:
    """The strong field at ``n`` players from ``answers``' ``expert`` argument (its players: per
    count the strategy's name and whether it recorded the shipped expert's weights), or None."""
    if expert is None:
        return None
    adv, tests, players = expert[:3]
    if n not in players:
        return None
    name, shipped = players[n]
    who = ("good players (the built-in expert, trained from the search player, in every seat)"
           if shipped else f"good players ({name} in every seat)")
    return Field.of(adv, tests, n, who, "good players")


def _why(why: dict | None, n: int, seat: int, among: str | None = None) -> str:
    """The lead seat's deviation in one sentence by its causes, or how to get it."""
    where = f", among {among}" if among else ""
    if why and n in why:
        table, turns = why[n]
        return f"Why{where}? " + why_sentence(table, seat, n, turns)
    return (f"Why{where}? These runs were played before the game loop recorded where games are decided: play them "
            "again (the same command) for the decomposition.")


def fix_sentence(explained: dict | None, n: int) -> str:
    """The best fix of an ``evora explain`` result for this player count, quoted only when it was
    confirmed: significantly fairer on the replayed seeds (paired, Holm over the changes) and again
    on fresh seeds among the run's players, quoted with that confirmation (where, how many seeds,
    the intervals); else that none is confirmed or none is fairer; or how to measure the fixes.
    A fix ranked first on the seeds that ranked it looks better than it is (winner's curse).
    Public: a test gives it explain results a real run cannot be made to hold."""
    if explained is None or int(explained["about"]["players"]) != n:
        return ("What would fix it? evora explain RUN --out DIR replays the run's seeds under every rule change "
                "and ranks them; evora report --explain DIR shows them here.")
    fixes = explained["fixes"]
    none = fixes["change_made"].isna() | (fixes["change_made"] == "")
    if none.all():
        return ""
    base = fixes[fixes["arm"] == "the run's rules"]
    base = base.iloc[0] if len(base) else fixes[none].iloc[0]
    players = _explained_players(explained)
    now = ranged(base["unfairness"], base["lo"], base["hi"], unit=PP)
    better = fairer_fixes(fixes)
    if better.empty:
        return (f"What would fix it? None of the {int((~none).sum())} rule changes replayed on the same seeds{players} "
                f"makes the seats significantly fairer than the run's rules ({now}; paired test, Holm over the "
                "changes); every change and what else it changes: section Why.")
    confirmed = confirmed_fixes(fixes)
    if confirmed.empty or explained.get("confirmation") is None:
        best = better.iloc[0]
        return (f"What would fix it? No fix is confirmed{players}: the fairest of the rule changes replayed on the "
                f"same seeds, {best['arm']} ({best['change_made']}), was not found fairer on fresh seeds (or not "
                "played on them: evora explain with --confirm-seeds), and its figures on the seeds that ranked it "
                "first favour it; every fix and what else it changes: section Why.")
    best = confirmed.iloc[0]
    return (f"What would fix it? {best['arm']} ({best['change_made']}), confirmed: "
            + fix_quote(explained["confirmation"], best["arm"], "the run's rules", n)
            + "; every fix and what else it changes: section Why.")


def _explained_players(explained: dict) -> str:
    """', among balanced, greedy': the players of the run an ``evora explain`` replayed."""
    cfg = explained.get("config") or {}
    strategies = (cfg.get("run_config") or {}).get("strategies") if isinstance(cfg, dict) else None
    if not isinstance(strategies, list) or not strategies:
        return ""
    return ", among " + ", ".join(dict.fromkeys(map(str, strategies)))


def strongest(cards: pd.DataFrame, spaces: pd.DataFrame, k: int = 3) -> pd.DataFrame:
    """The ``k`` strongest significant card and space findings per player count (largest
    adjusted difference in win rate when used), with their rulebook names."""
    frames = []
    for t, kind in ((cards, "card"), (spaces, "space")):
        if t is None or t.empty:
            continue
        d = t[t["significant"]].copy()
        d["label"] = d["name"]
        d["kind"] = kind
        d["code"] = d[kind]
        timing = [c for c in TIMING_COLUMNS if c in d.columns]
        frames.append(d[["n_players", "kind", "code", "label", "adj_diff", "adj_lo", "adj_hi", "p_adj_holm",
                         "negligible", *timing]])
    if not frames:
        return pd.DataFrame(columns=["n_players", "kind", "label", "adj_diff", "adj_lo", "adj_hi"])
    d = pd.concat(frames, ignore_index=True)
    d["size"] = d["adj_diff"].abs()
    d = d.sort_values(["n_players", "size"], ascending=[True, False])
    return d.groupby("n_players", group_keys=False).head(k).reset_index(drop=True)


def _experiment_rows(experiment: dict | None, fields: dict) -> tuple[int | None, dict, str]:
    """An ``evora card-value`` result's given-card rows by card, its player count, and how its
    field compares with the report's games at that count (``fields``: their strategies)."""
    if experiment is None:
        return None, {}, ""
    cfg = experiment["config"]
    n = int(cfg["players"])
    field_ = "" if fields.get(n) == sorted(cfg["field"]) else f", with its own field: {', '.join(cfg['field'])}"
    return n, {r["card"]: r for _, r in experiment["given"].iterrows()}, field_


def _card_item(r, n: int, exp_n, given: dict, field_: str) -> str:
    """One strongest finding: a card's causal figure where the experiment measured it, then the
    run's association, named as one in the sentence itself."""
    verb = "play it" if r["kind"] == "card" else "use it"
    board = "; reconstructed board" if r["kind"] == "space" else ""
    small = ", negligible" if r["negligible"] else ""
    seen = (f"seats that {verb} win {ranged(r['adj_diff'], r['adj_lo'], r['adj_hi'], unit=PP, signed=True)} "
            f"({p_text_words(r['p_adj_holm'])}{small}{board}")
    when = timing_clause(r) if r["kind"] == "card" else ""
    when = f", {when}" if when else ""
    g = given.get(r["code"]) if r["kind"] == "card" and n == exp_n else None
    if g is None:
        return f"{r['label']}: {seen}; an association, not the {r['kind']}'s effect){when}"
    if not bool(g.get("exercised", True)) or not np.isfinite(g["change"]):
        return (f"{r['label']}: {seen}; an association, not the card's effect; in the experiment "
                f"(evora card-value{field_}) {NOT_EXERCISED}){when}")
    caused = ranged(g["change"], g["lo"], g["hi"], unit=PP, signed=True)
    return (f"{r['label']}: holding one more from the start changes the holder's win rate by {caused} "
            f"(experiment: evora card-value{field_}; {p_text_words(g['p_holm'])}); {seen}; an association){when}")


ASSOCIATION_PLAYS = 1_000     # plays of a card below which its association is not quoted beside an experiment
EXPERIMENT_TOP = 3


def _experiment_items(n: int, given: dict, cards: pd.DataFrame | None, field_: str, alpha: float = 0.05) -> list[str]:
    """The strongest cards by the experiment (the card the only difference between paired games):
    its significant changes (Holm over the cards), largest first; beside each, the run's
    association, quoted only from ``ASSOCIATION_PLAYS`` plays up (an association from a few
    hundred plays, most of them in the final round, led the answer against the experiment)."""
    rows = [g for g in given.values() if bool(g.get("exercised", True)) and np.isfinite(g["change"])
            and g["p_holm"] < alpha]
    rows.sort(key=lambda g: -abs(g["change"]))
    obs = ({} if cards is None or cards.empty else
           {r["card"]: r for _, r in cards[cards["n_players"] == n].iterrows()})
    items = []
    for g in rows[:EXPERIMENT_TOP]:
        caused = ranged(g["change"], g["lo"], g["hi"], unit=PP, signed=True)
        text = (f"{card_title(g['card'])}: holding one more from the start changes the holder's win rate by {caused} "
                f"(experiment: evora card-value{field_}; {p_text_words(g['p_holm'])})")
        o = obs.get(g["card"])
        if o is not None and np.isfinite(o.get("adj_diff", np.nan)):
            times = int(o["times"])
            if times >= ASSOCIATION_PLAYS:
                text += (f"; in the run's games seats that play it win "
                         f"{ranged(o['adj_diff'], o['adj_lo'], o['adj_hi'], unit=PP, signed=True)} "
                         f"({p_text_words(o['p_adj_holm'])}; an association, from {times:,} plays)")
            else:
                text += (f"; its association in the run's games is not quoted: {times:,} plays, fewer than "
                         f"{ASSOCIATION_PLAYS:,}")
        items.append(text)
    if not items:
        items.append(f"in the experiment (evora card-value{field_}) no card changes the holder's win rate "
                     "significantly (Holm over the cards)")
    return items


def strongest_lines(top: pd.DataFrame, counts, experiment: dict | None = None, fields: dict | None = None,
                    cards: pd.DataFrame | None = None) -> list[str]:
    """A sentence per player count for the strongest findings; ``experiment``: an ``evora
    card-value`` result (``analysis.cardvalue_stats.read_summary``): at its player count the strongest
    cards are the experiment's, each with the run's association beside it (``cards``: the
    report's card table) when played often enough, and the space findings follow; ``fields``: the
    report's strategies per player count, to say when the experiment's differ."""
    exp_n, given, field_ = _experiment_rows(experiment, fields or {})
    out = []
    for n in counts:
        d = top[top["n_players"] == n]
        if n == exp_n:
            items = _experiment_items(n, given, cards, field_)
            items += [_card_item(r, n, None, {}, "") for _, r in d.iterrows() if r["kind"] == "space"]
            out.append(f"{n} players: " + "; ".join(items) + ".")
            continue
        if d.empty:
            out.append(f"{n} players: no card or space is linked to a significantly different win rate "
                       "once strategy and seat are adjusted for.")
            continue
        items = [_card_item(r, n, exp_n, given, field_) for _, r in d.iterrows()]
        out.append(f"{n} players: " + "; ".join(items) + ".")
    return out


def run_header(runs, rules: dict) -> tuple[str, list[tuple[str, str]]]:
    """The title and the header's rows: what differs from the default rules, the board, and per
    player count the strategies (with their plans), the games and the seating."""
    diffs = labels.rules_differences(rules)
    strategies = list(dict.fromkeys(s for r in runs for s in r.manifest["config"]["strategies"]))
    title = f"Évora balance report: {labels.variant_title(rules)}; {', '.join(map(labels.short_strategy, strategies))}"
    if diffs:
        rules_text = "; ".join(f"{k} = {labels.value_text(v)} (default {labels.value_text(d)})" for k, d, v in diffs)
    else:
        rules_text = "the default rules, unchanged"
    rows = [("Rules", rules_text),
            ("Board", RECONSTRUCTION if labels.board_is_default(rules) else OWN_BOARD)]
    for r in sorted(runs, key=lambda r: r.manifest["config"]["players"]):
        cfg = r.manifest["config"]
        info = cfg.get("resolved_strategies", {})
        field_ = ", ".join(labels.strategy_title(s, info.get(s)) for s in cfg["strategies"])
        rot = int(cfg["players"]) if cfg["seat_rotation"] else 1
        done = sum(min(cfg["games"], (int(k) + 1) * cfg["chunk_size"]) - int(k) * cfg["chunk_size"]
                   for k in r.done_chunks())
        seating = (f"{done * rot:,} games: {done:,} seeds x {rot} seat rotations" if rot > 1 else
                   f"{done:,} games, seats not rotated")
        rows.append((f"{cfg['players']} players", f"{field_}; {seating}"))
    return title, rows
