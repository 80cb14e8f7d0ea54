"""``evora rules``: every rules key with its current value and what it allows, so a designer
finds ``white_stone.vp`` without the README."""
from __future__ import annotations

import re
import tomllib
from importlib.resources import files

import click

from analysis.labels import value_text

from ..rules import allowed, flatten, load_rules, rule_keys
from .group import examples, load_rules_arg, set_option


def meaning_pattern(key: str, words: dict) -> str:
    """The pattern of ``meanings.toml`` a key falls under: numbers as N, then heights as h."""
    key = re.sub(r"\.\d+(?=\.|$)", ".N", key)
    return key if key in words else re.sub(r"\.(h[1-4]|capitals)$", ".h", key)


def meanings() -> dict[str, str]:
    """What each rules key means, in the rulebook's words (``evora_sim/data/meanings.toml``)."""
    return tomllib.loads(files("evora_sim").joinpath("data/meanings.toml").read_text(encoding="utf-8"))


def rules_lines(rules, grep: str | None = None) -> list[str]:
    """One line per key: KEY, its value in these rules (marked * where it differs from the
    shipped rules), what it allows; under it, what the key means in the rulebook's words (once
    for the keys one pattern covers, such as every board space's colour)."""
    values, shipped = dict(flatten(rules.data)), dict(flatten(load_rules().data))
    rows = []
    for key in rule_keys(rules.data):
        if grep and grep.lower() not in key.lower():
            continue
        value = values.get(key)
        text = " ".join(value_text(value).split())
        if len(text) > 40:
            text = text[:37] + "..."
        mark = "*" if value != shipped.get(key) else " "
        rows.append((key, f"{mark} {text}", allowed(key)))
    if not rows:
        return [f"no rules key contains {grep!r}"]
    kw = max(len(r[0]) for r in rows)
    vw = max(len(r[1]) for r in rows)
    words, said = meanings(), set()
    lines = [f"{'KEY'.ljust(kw)}  {'  VALUE'.ljust(vw)}  ALLOWS", "    what it means (the rulebook's words)"]
    for k, v, a in rows:
        lines.append(f"{k.ljust(kw)}  {v.ljust(vw)}  {a}")
        pattern = meaning_pattern(k, words)
        if pattern not in said:
            said.add(pattern)
            lines.append(f"    {words.get(pattern, '(no description)')}")
    lines += ["", "* differs from the shipped rules. Change a value with --set KEY=VALUE (simulate, sweep, "
              "run, replay, duel, score) or a --rules FILE (a partial rules.toml; [[board.spaces]] "
              "replaces the whole Construction Site)."]
    return lines


@click.command(name="rules", epilog=examples("evora rules", "evora rules --grep majority",
                                             "evora rules --rules myboard.toml --set white_stone.vp=3"))
@click.option("--rules", "rules_path", metavar="FILE", help="Rules file merged over the shipped rules.")
@set_option
@click.option("--grep", metavar="TEXT", help="Only the keys containing TEXT.")
def list_rules(rules_path, overrides=(), grep=None):
    """List every rules key with its current value and what it allows."""
    rules = load_rules_arg(rules_path, overrides)
    click.echo("\n".join(rules_lines(rules, grep)))
