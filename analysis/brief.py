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

from . import names
from .cardvalue import NOT_EXERCISED
from .numbers import PP, p_cell, p_text_words, pp, ranged
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
    from .explain import seat_words

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


def answers(adv: pd.DataFrame, tests: pd.DataFrame, runs, held: dict[int, str],
            min_effect: float = MIN_EFFECT, cards: pd.DataFrame | None = None, why: dict | None = None,
            explained: dict | None = None, expert: tuple | None = None) -> list[Answer]:
    """The first screen of each player count: the seat that deviates most from a fair share first,
    named in words, then the first player (where it is another and its deviation significant), how
    fair the seats are as a whole and with which players. ``cards``: the card table, to say when the
    players hardly play cards; ``why``: per player count the decomposition of the seats' deviations
    (``analysis.tables.why``); ``explained``: an ``evora explain`` result
    (``analysis.explain.read_summary``), whose best fix is quoted; ``expert``: the seat tables
    (``tables.seat_advantage``) of runs with the expert in every seat, quoted beside the field's."""
    out = []
    counts = sorted({int(r.manifest["config"]["players"]) for r in runs})
    for n in counts:
        if n in held:
            out.append(Answer(n, held[n], [BOTS], held=True))
            continue
        grp = adv[adv["n_players"] == n].copy()
        grp["avg_score"] = grp["mean_score"].mean()
        first = grp[grp["seat"] == 0].iloc[0]
        t = tests[tests["n_players"] == n].iloc[0]
        details = []
        worst = grp.loc[grp["diff"].abs().idxmax()]
        if int(worst["seat"]) != 0 and first["significant"]:
            details.append(_seat_sentence(first, n, min_effect))
        if np.isfinite(t["unfairness_lo"]):
            fair = ranged(t["unfairness"], t["unfairness_lo"], t["unfairness_hi"], unit=PP)
            if not t["significant"]:
                verdict = (f"consistent with fair seats ({p_text_words(t['p'])}): any unfairness is at most "
                           f"{100 * t['unfairness_hi']:.2g}{PP}")
            else:
                verdict = (f"the seats are not all fair ({p_text_words(t['p'])})"
                           + (f", but by less than the {pp(min_effect)} that matters" if t["negligible"] else ""))
            details.append(f"Is it fair? Seat unfairness, the typical seat's distance from a fair share: "
                           f"{fair}; {verdict}.")
        seat = int(worst["seat"])
        at_expert = expert_sentence(expert, n, seat, min_effect)
        if at_expert:
            details.insert(0, at_expert)
        few = hardly_any_cards(cards, n)
        if few:
            details.append(few)
        details.append(f"{BOTS} {int(first['games']):,} games per seat; seeds are the independent units.")
        out.append(Answer(n, _seat_sentence(worst, n, min_effect), details, why=_why(why, n, seat),
                          fix=_fix(explained, n)))
    return out


def expert_sentence(expert: tuple | None, n: int, seat: int, min_effect: float) -> str | None:
    """The same seat's figure among strong players (the built-in expert in every seat), and that
    field's seat unfairness, or None without an expert run for ``n`` players. ``expert``: the seat
    tables and, per player count, (the strategy's name, whether it is the built-in expert)."""
    if expert is None:
        return None
    adv, tests, players = expert
    grp = adv[adv["n_players"] == n].copy()
    if grp.empty:
        return None
    grp["avg_score"] = grp["mean_score"].mean()
    row = grp[grp["seat"] == seat].iloc[0]
    text = _seat_sentence(row, n, min_effect)
    text = text[0].lower() + text[1:]
    t = tests[tests["n_players"] == n].iloc[0]
    fair = (f"; seat unfairness {ranged(t['unfairness'], t['unfairness_lo'], t['unfairness_hi'], unit=PP)}"
            if np.isfinite(t["unfairness_lo"]) else "")
    name, shipped = players[n]
    who = ("At expert skill (the built-in expert, trained from the search player, in every seat; "
           if shipped else f"With {name} in every seat (")
    return f"{who}{int(row['games']):,} games): {text[:-1]}{fair}."


def _why(why: dict | None, n: int, seat: int) -> str:
    """The lead seat's deviation in one sentence by its causes, or how to get it."""
    from .explain import why_sentence

    if why and n in why:
        table, turns = why[n]
        return "Why? " + why_sentence(table, seat, n, turns)
    return ("Why? These runs were played before the game loop recorded where games are decided: play them "
            "again (the same command) for the decomposition.")


def _fix(explained: dict | None, n: int) -> str:
    """The best fix of an ``evora explain`` result for this player count, or how to measure the fixes."""
    from .numbers import ranged

    if explained is None or int(explained["about"]["players"]) != n:
        return ("What would fix it? evora explain RUN --out DIR replays the run's seeds under every rule change "
                "and ranks them; evora report --explain DIR shows them here.")
    fixes = explained["fixes"]
    none = fixes["change_made"].isna() | (fixes["change_made"] == "")
    if none.all():
        return ""
    base, best = fixes[none].iloc[0], fixes[~none].iloc[0]
    return (f"What would fix it? Best of the rule changes replayed on the same seeds: {best['arm']} "
            f"({best['change_made']}) leaves a seat unfairness of {ranged(best['unfairness'], best['lo'], best['hi'], unit=PP)}"
            f", against {ranged(base['unfairness'], base['lo'], base['hi'], unit=PP)} under the run's rules; "
            "every fix and what else it changes: section Why.")


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


def strongest_lines(top: pd.DataFrame, counts, experiment: dict | None = None, fields: dict | None = None) -> list[str]:
    """A sentence per player count for the strongest findings; ``experiment``: an ``evora
    card-value`` result (``analysis.cardvalue.read_summary``) whose causal figures are quoted
    (``fields``: the report's strategies per player count, to say when the experiment's differ)."""
    exp_n, given, field_ = _experiment_rows(experiment, fields or {})
    out = []
    for n in counts:
        d = top[top["n_players"] == n]
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
    diffs = names.rules_differences(rules)
    strategies = list(dict.fromkeys(s for r in runs for s in r.manifest["config"]["strategies"]))
    title = f"Évora balance report: {names.variant_title(rules)}; {', '.join(map(names.short_strategy, strategies))}"
    if diffs:
        rules_text = "; ".join(f"{k} = {names.value_text(v)} (default {names.value_text(d)})" for k, d, v in diffs)
    else:
        rules_text = "the default rules, unchanged"
    rows = [("Rules", rules_text),
            ("Board", RECONSTRUCTION if names.board_is_default(rules) else OWN_BOARD)]
    for r in sorted(runs, key=lambda r: r.manifest["config"]["players"]):
        cfg = r.manifest["config"]
        info = cfg.get("resolved_strategies", {})
        field_ = ", ".join(names.strategy_title(s, info.get(s)) for s in cfg["strategies"])
        rot = int(cfg["players"]) if cfg["seat_rotation"] else 1
        done = sum(min(cfg["games"], (int(k) + 1) * cfg["chunk_size"]) - int(k) * cfg["chunk_size"]
                   for k in r.done_chunks())
        seating = (f"{done * rot:,} games: {done:,} seeds x {rot} seat rotations" if rot > 1 else
                   f"{done:,} games, seats not rotated")
        rows.append((f"{cfg['players']} players", f"{field_}; {seating}"))
    return title, rows
