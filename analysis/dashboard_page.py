"""The dashboard's views as HTML: one fragment, shown in the live page and saved whole by
``--export``, so the exported page and the page in the browser show the same numbers.

Each table is the report's own shown table (:mod:`analysis.display`: the same columns, ranges
and words) of the slice's analysis tables, and the figure is the report's seat figure. Every
text from a run (strategy names, folder paths, rules options) is escaped: a name holding HTML
shows as text, and the page runs no script of its own.
"""
from __future__ import annotations

import base64
import html
import io

from . import display
from .dashboard_data import Views
from .page import CSS
from .report import ASSOCIATION

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


def _figure(adv) -> str:
    """The report's seat figure (win rate by seat with 95% Wilson intervals) as an inline PNG."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from . import plots

    if adv is None or not len(adv):
        return ""
    fig = plots.seat_win_rates(adv)
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=90, bbox_inches="tight")
    plt.close(fig)
    data = base64.b64encode(buf.getvalue()).decode()
    return (f"<figure><img id='seat-figure' alt='Win rate by seat' style='max-width:100%' "
            f"src='data:image/png;base64,{data}'><figcaption>Win rate by seat, with 95% Wilson "
            f"intervals</figcaption></figure>")


def _games(df) -> str:
    if not len(df):
        return "<p id='games' class='caption'>No game matches.</p>"
    shown = df.drop(columns=["replay"]).copy()
    rows = []
    for (_, r), (_, s) in zip(df.iterrows(), shown.iterrows()):
        cells = "".join(f"<td>{ESC(str(v))}</td>" for v in s.tolist())
        rows.append(f"<tr>{cells}<td><code>{ESC(r['replay'])}</code></td></tr>")
    head = "".join(f"<th>{ESC(c)}</th>" for c in [*shown.columns, "replay (prints the game's log)"])
    return f"<div id='games'><table><thead><tr>{head}</tr></thead><tbody>{''.join(rows)}</tbody></table></div>"


def views_html(v: Views) -> str:
    """Every view of one slice, as an HTML fragment."""
    parts = [f"<p class='slice' id='slice'>Slice: {ESC(v.slice.words())}. "
             f"<b id='game-count'>{v.games:,}</b> games match.</p>"]
    if not v.games:
        return parts[0] + "<p>No game matches this slice: loosen a filter.</p>"
    parts += [
        "<h2>Seats</h2>",
        "<p>Win rate of each seat against its fair share, 95% ranges with the seed as the independent unit "
        "(a seed's rotations share its card stacks), Holm-corrected over the seats; the seat unfairness is the "
        "root mean square of the seats' deviations, with its test of all seats fair. A slice that keeps only "
        "some of a seed's rotations gets the plain (unclustered) interval, as the report would.</p>",
        _figure(v.adv), _table("seats", display.seats(v.adv)), _table("fairness", display.fairness(v.tests)),
        "<h2>Strategies</h2>", _table("strategies", display.strategies(v.strat, v.info)),
        "<h2>Game length, margins and lead changes</h2>",
        _table("shape", display.game_shape(v.shape)), _table("margin", display.victory_margin(v.margin)),
        _table("ends", display.end_triggers(v.triggers)), _table("tension", display.tension(v.tension)),
    ]
    if v.cards is not None:
        parts += ["<h2>Card and space associations</h2>", f"<p class='notice'>{ESC(ASSOCIATION)}</p>",
                  _table("cards", display.exposure(v.cards, "card")),
                  _table("spaces", display.exposure(v.spaces, "space"))]
    parts += ["<h2>Matching games</h2>",
              f"<p>The first {len(v.table)} matching games with their seeds; each command prints the game's "
              "log (evora replay plays it again from its seed).</p>", _games(v.table)]
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
