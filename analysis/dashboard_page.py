"""The dashboard's views as HTML: one fragment, shown in the live page and saved whole by
``--export``, so the exported page and the page in the browser show the same numbers.

Each table is the report's own shown table (:mod:`analysis.display`: the same columns, ranges
and words) of the slice's analysis tables, and the figure is the report's seat figure. Every
text from a run (strategy names, folder paths, rules options) is escaped: a name holding HTML
shows as text, and the page runs no script of its own.
"""
from __future__ import annotations

import html

from . import display
from . import explain_stats as X
from .dashboard_data import Views
from .page import CSS
from .seat_figure import figure_html as seat_figure
from .display import ASSOCIATION

GENERATOR = "evora dashboard"          # how an exported page is known again (its meta tag)
ESC = html.escape

DASH_CSS = CSS + """
.slice{background:#f6f8fa;border:1px solid #d0d7de;border-radius:6px;padding:.4em .8em}
td code{white-space:pre-wrap}
"""


def _table(key: str, df) -> str:
    if df is None or not len(df):
        return f"<p id='{key}' class='caption'>No rows for this slice.</p>"
    return f"<div id='{key}'>" + df.to_html(index=False, border=0, escape=True) + "</div>"


REPLAY_PATH = "/replay"             # the live server's page of one game's replay log (text)


def replay_href(run_no: int, game_id: int) -> str:
    """The address, on the live server, of the replay log of game ``game_id`` of run number
    ``run_no``: numbers only, so nothing from a folder reaches the address."""
    return f"{REPLAY_PATH}?run={int(run_no)}&game={int(game_id)}"


def _games(df, live: bool) -> str:
    """The matching games; ``live``: each with a link to its replay log on the server (an
    exported page has no server: it shows the command that prints the log)."""
    if not len(df):
        return "<p id='games' class='caption'>No game matches.</p>"
    shown = df.drop(columns=["replay", "run_no"]).copy()
    rows = []
    for (_, r), (_, s) in zip(df.iterrows(), shown.iterrows()):
        cells = "".join(f"<td>{ESC(str(v))}</td>" for v in s.tolist())
        log = (f"<a class='replay' target='_blank' rel='noopener' href='{replay_href(r['run_no'], r['game_id'])}'>"
               f"log</a> " if live else "")
        rows.append(f"<tr>{cells}<td>{log}<code>{ESC(r['replay'])}</code></td></tr>")
    head = "".join(f"<th>{ESC(c)}</th>" for c in [*shown.columns, "replay (prints the game's log)"])
    return f"<div id='games'><table><thead><tr>{head}</tr></thead><tbody>{''.join(rows)}</tbody></table></div>"


def _compare(c) -> str:
    """``evora compare``'s own lines for each player count (the same function, the same words)."""
    parts = [f"<h2>Compare: {ESC(c.a)} (A) with {ESC(c.b)} (B)</h2>",
             "<p>What <code>evora compare A B</code> prints: each headline metric B - A with its 95% range, "
             "paired by seed when both hold the same seeded games, Holm-corrected over the metrics. Over every "
             "game of the player count: the other filters pick games by how they went, which differs between "
             "the two runs' games of one seed, so they would break the pairing.</p>"]
    for n, lines in sorted(c.lines.items()):
        parts.append(f"<h3>{n} players</h3><pre id='compare-{n}'>{ESC(chr(10).join(lines))}</pre>")
    return "<div id='compare'>" + "".join(parts) + "</div>"


def _why(v: Views) -> list[str]:
    parts = ["<h2>Where the seats' wins were decided</h2>", f"<p>{ESC(X.METHOD)}</p>"]
    if not v.why:
        parts.append("<p id='why' class='caption'>No decomposition for this slice: its runs do not record where "
                     "their games were decided (played by an earlier version), or it holds a single seed.</p>")
    for n, (table, _) in sorted((v.why or {}).items()):
        parts += [f"<h3>{n} players</h3>", _table(f"why-{n}", X.shown_parts(table))]
    for i, (folder, fixes) in enumerate(v.fixes):
        parts += [f"<h3>The rule changes evora explain ranked ({ESC(folder)})</h3>",
                  "<p>Its own table, over its replayed seeds (not this slice): the changes ranked by the seat "
                  "unfairness they leave; the first is quoted only once confirmed on fresh seeds.</p>",
                  _table(f"fixes-{i}", X.shown_fixes(fixes))]
    return parts


FIGURE_SLOT = "<p id='seat-figure-slot' class='caption'>Drawing the figure ...</p>"


def views_html(v: Views, live: bool = False, figure: bool = True, figure_html: str | None = None) -> str:
    """Every view of one slice, as an HTML fragment (``live``: with the links of the live
    server, see :func:`_games`). ``figure=False``: a slot in the seat figure's place (the live
    page shows the numbers first and the figure, the slowest part to make, a moment later);
    ``figure_html``: the seat figure drawn elsewhere (:class:`analysis.seat_figure.FigureProcess`),
    else it is drawn here."""
    parts = [f"<p class='slice' id='slice'>Slice: {ESC(v.slice.words())}. "
             f"<b id='game-count'>{v.games:,}</b> games match.</p>"]
    if v.compare is not None:
        parts.append(_compare(v.compare))
    if not v.games:
        return "\n".join(parts) + "<p>No game matches this slice: loosen a filter.</p>"
    parts += [
        "<h2>Seats</h2>",
        "<p>Win rate of each seat against its fair share, 95% ranges with the seed as the independent unit "
        "(a seed's rotations share its card stacks), Holm-corrected over the seats; the seat unfairness is the "
        "root mean square of the seats' deviations, with its test of all seats fair. A slice that keeps only "
        "some of a seed's rotations gets the plain (unclustered) interval, as the report would.</p>",
        (seat_figure(v.adv) if figure_html is None else figure_html) if figure else FIGURE_SLOT, _table("seats", display.seats(v.adv)), _table("fairness", display.fairness(v.tests)),
        "<h2>Strategies</h2>", _table("strategies", display.strategies(v.strat, v.info)),
        "<h2>Game length, margins and lead changes</h2>",
        _table("shape", display.game_shape(v.shape)), _table("margin", display.victory_margin(v.margin)),
        _table("ends", display.end_triggers(v.triggers)), _table("tension", display.tension(v.tension)),
        "<h2>Majorities and the score</h2>",
        "<p>How each height majority and the capitals majority went, the column majorities held per player, "
        "the share of the score that comes from majorities, and each category's VP.</p>",
        _table("majorities", display.majority_outcomes(v.majorities)),
        _table("columns-held", display.columns_held(v.columns)),
        _table("majority-share", display.majority_share(v.share)),
        _table("vp", display.vp_by_category(v.vp)),
    ]
    if v.why is not None:
        parts += _why(v)
    if v.cards is not None:
        parts += ["<h2>Card and space associations</h2>", f"<p class='notice'>{ESC(ASSOCIATION)}</p>",
                  _table("cards", display.exposure(v.cards, "card")),
                  _table("spaces", display.exposure(v.spaces, "space"))]
    how = ("each <b>log</b> link shows the game's replay log (played again from its seed), and each command prints "
           "it" if live else "each command prints the game's log (evora replay plays it again from its seed)")
    parts += ["<h2>Matching games</h2>",
              f"<p>The first {len(v.table)} matching games with their seeds; {how}.</p>", _games(v.table, live)]
    return "\n".join(parts)


def page(v: Views, title: str) -> str:
    """A self-contained page of the views (no script, no link out): what ``--export`` writes."""
    return (f"<!doctype html><html lang='en'><head><meta charset='utf-8'>"
            f"<meta name='generator' content='{GENERATOR}'><title>{ESC(title)}</title>"
            f"<style>{DASH_CSS}</style></head><body><h1>{ESC(title)}</h1>{views_html(v)}</body></html>")


def written_by_dashboard(path) -> bool:
    """Whether the file ``path`` is an earlier export of the dashboard (its meta tag in the first
    kilobytes): only such a file is replaced by ``--export``."""
    try:
        with open(path, "rb") as fh:
            head = fh.read(4096)
    except OSError:
        return False
    return f"<meta name='generator' content='{GENERATOR}'>".encode() in head
