"""Text from runs and commands written into Markdown (report.md, an experiment's report): shown as
text, never as markup. A folder's name, a strategy's name or a command may hold a backtick, a
bracket or HTML (``<img onerror=...>``); each helper escapes for where its text goes: prose
(:func:`md`), a code span (:func:`md_code`), a fenced block (:func:`md_fenced`)."""
from __future__ import annotations

import html
import re


def md(text) -> str:
    """Text from the runs as Markdown shows it and never as markup: HTML escaped, one line, no
    link or image (``](`` broken)."""
    text = html.escape(" ".join(str(text).splitlines()), quote=False)
    return text.replace("](", "]\\(")


def md_code(text) -> str:
    """``text`` as an inline code span: fenced by one backtick more than its longest run, so it
    cannot close the span early (Markdown shows a span's content as it is)."""
    text = " ".join(str(text).splitlines())
    fence = "`" * (max((len(r) for r in re.findall("`+", text)), default=0) + 1)
    return f"{fence} {text} {fence}"


def md_fenced(text: str, lang: str = "") -> list[str]:
    """``text`` as a fenced code block (lines): fenced by more backticks than its longest run, so
    nothing in it (a folder's name in a configuration) can end the block early."""
    fence = "`" * max(3, max((len(r) for r in re.findall("`+", text)), default=0) + 1)
    return [f"{fence}{lang}", text, fence]


def md_command(command) -> str:
    """The line naming the command that wrote a report (a code span; "" without one): the
    command holds what the user typed, folder names included, so it is never markup."""
    return f"Command: {md_code(command)}" if command else ""
