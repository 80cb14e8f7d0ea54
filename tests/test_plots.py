"""Figures and tables that cannot mislead (issue 44, point 5): the forest plots share one x range
and keep their texts apart (checked on the drawn figure: no two texts overlap), a card no game
exercised or too rare to judge is named and never drawn at 0, and the answer says when the
players hardly play cards. The report as a whole is checked in Chromium (test_report_page.py)."""
from __future__ import annotations

import itertools

import numpy as np
import pandas as pd
import pytest

from analysis import brief, display, plots
from analysis import tables as T
from analysis.cardvalue_stats import card_value_figure
from analysis.stats import MIN_USES
from evora_sim.layout import CARD_NAMES
from evora_sim.runner import Execution, simulate


def overlapping_texts(fig) -> list[tuple[str, str]]:
    """Every pair of visible, non-empty texts of ``fig`` whose drawn boxes intersect (titles,
    axis labels, tick labels, legends, the figure's own titles)."""
    from matplotlib.text import Text

    fig.canvas.draw()
    renderer = fig.canvas.get_renderer()
    seen, boxes = set(), []
    for t in fig.findobj(Text):
        if id(t) in seen or not t.get_visible() or not t.get_text().strip():
            continue
        seen.add(id(t))
        box = t.get_window_extent(renderer)
        if box.width > 0 and box.height > 0:
            boxes.append((t.get_text(), box.shrunk(0.98, 0.9)))
    return [(a, b) for (a, x), (b, y) in itertools.combinations(boxes, 2) if x.overlaps(y)]


def _xlims(fig):
    return {tuple(round(v, 6) for v in ax.get_xlim()) for ax in fig.axes if ax.get_visible()}


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    """A 2-player run of the main job's field (which plays almost no cards) and a 4-player run
    of players that do."""
    base = tmp_path_factory.mktemp("plots")
    return [simulate(2, 200, "balanced,greedy", seed=3, out=base / "p2", execution=Execution(chunk_size=100)),
            simulate(4, 300, "balanced,cards,emperor,greedy", seed=4, out=base / "p4",
                     execution=Execution(chunk_size=150))]


@pytest.fixture(scope="module")
def cards(runs):
    return T.card_value(T.scan(runs))


def test_a_card_too_rarely_played_gets_no_verdict_and_is_named_not_drawn(cards):
    """Issue 44: a card played 21 times in 48,000 games got a verdict and a plotted estimate of
    -50 pp from one play. Below MIN_USES seat-games it is "too rare to judge (N plays)", out of
    Holm's count, not among the findings, and named in the plot instead of drawn."""
    rare = cards[cards["seat_games_used"] < MIN_USES]
    assert len(rare) and rare["too_rare"].all() and not rare["significant"].any()
    assert rare["p_adj_holm"].isna().all()
    shown = display.exposure(cards, "card")
    verdicts = shown.loc[cards["too_rare"].to_numpy(), "Verdict"]
    assert all(v.startswith("too rare to judge (") and v.endswith(" plays)") for v in verdicts)
    judged = cards[~cards["too_rare"]]
    assert len(judged) and judged["p_adj_holm"].notna().any()
    fig = plots.forest(cards.assign(card=cards["name"]), "card", "Card value")
    labels = [t.get_text() for ax in fig.axes for t in ax.get_yticklabels()]
    assert sum("too rare to judge" in x for x in labels) == len(rare)
    for ax in fig.axes:                                   # no marker on a row that is not judged
        for line in ax.lines:
            if line.get_transform() != ax.transData:      # the line at 0 spans the axes, not data
                continue
            x, y = np.asarray(line.get_xdata(), float), np.asarray(line.get_ydata(), float)
            named = [i for i, t in enumerate(ax.get_yticklabels()) if "too rare" in t.get_text()]
            assert not any(np.isfinite(x[np.isclose(np.round(y), i)]).any() for i in named)


def test_forest_panels_share_one_x_range_and_no_text_overlaps(cards):
    """Issue 44: each panel had its own x range and the panels' x titles ran into each other."""
    fig = plots.forest(cards.assign(card=cards["name"]), "card", "Card value (win rate when played, adjusted)")
    assert len(fig.axes) == 2 and len(_xlims(fig)) == 1
    assert overlapping_texts(fig) == []


def test_the_answer_says_when_the_players_hardly_play_cards(runs, cards):
    """At 2 players the main job's field plays almost no cards: the answer says so, and not at 4
    players, where these players play many."""
    plays = cards.groupby("n_players")["per_game"].sum()
    assert plays[2] < 1 <= plays[4]
    assert brief.hardly_any_cards(cards, 2) and "hardly play cards at 2 players" in brief.hardly_any_cards(cards, 2)
    assert brief.hardly_any_cards(cards, 4) is None


def _given(exercised):
    rows = []
    for k, card in enumerate(CARD_NAMES):
        on = exercised[k]
        rows.append({"card": card, "change": 0.05 + 0.01 * k if on else np.nan, "lo": 0.01 + 0.01 * k if on else np.nan,
                     "hi": 0.09 + 0.01 * k if on else np.nan, "exercised": on})
    return pd.DataFrame(rows)


def test_card_value_figure_names_an_unexercised_tile_and_never_draws_it_at_zero():
    """Issue 44: an instant tile that no game could measure was drawn at 0, as if worthless."""
    exercised = [True] * len(CARD_NAMES)
    tile = CARD_NAMES.index("tile_flip_both")
    exercised[tile] = False
    given = _given(exercised)
    observed = pd.DataFrame({"card": CARD_NAMES, "adj_diff": 0.02, "adj_lo": 0.0, "adj_hi": 0.04,
                             "too_rare": [k == tile for k in range(len(CARD_NAMES))], "times": 5})
    removed = pd.DataFrame([{"card": c, "position": p, "strategy": s, "change": np.nan if k == tile else -0.02,
                             "lo": np.nan if k == tile else -0.04, "hi": np.nan if k == tile else 0.0}
                            for k, c in enumerate(CARD_NAMES) for p, s in enumerate(["balanced", "cards"])])
    fig = card_value_figure(given, removed, observed)
    ax = fig.axes[0]
    label = ax.get_yticklabels()[tile].get_text()
    assert "not exercised" in label
    for a in fig.axes:
        for line in a.lines:
            if line.get_transform() != a.transData:
                continue
            x, y = np.asarray(line.get_xdata(), float), np.asarray(line.get_ydata(), float)
            near = np.abs(y - tile) < 0.45
            assert not np.isfinite(x[near]).any(), "the unexercised tile was drawn"
    assert len(_xlims(fig)) == 1
    assert overlapping_texts(fig) == []


def test_a_figure_saved_twice_is_the_same_files_byte_for_byte(tmp_path):
    """A report made again from the same games must diff clean (issue 52): matplotlib writes a
    date into each SVG and draws its clip-path ids at random unless told otherwise."""
    import matplotlib.pyplot as plt

    written = []
    for folder in ("a", "b"):
        fig, ax = plt.subplots()
        ax.bar(["first", "last"], [0.4, 0.6])           # bars are clipped: the SVG gets clip-path ids
        plots.save(fig, tmp_path / folder, "seats")
        written.append([(tmp_path / folder / f"seats.{ext}").read_bytes() for ext in ("png", "svg")])
    assert b"clip-path" in written[0][1] and b"<dc:date>" not in written[0][1]
    assert written[0] == written[1]
