"""``evora rules``: every rules key with its current value and what it allows, so a designer
finds ``white_stone.vp`` without the README."""
from __future__ import annotations

import click

from .group import examples, load_rules_arg, main, set_option


def rules_lines(rules, grep: str | None = None) -> list[str]:
    """One line per key: KEY, its value in these rules (marked * where it differs from the
    shipped rules), what it allows."""
    from analysis.names import flatten, value_text

    from ..rules import allowed, load_rules, rule_keys

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
    lines = [f"{'KEY'.ljust(kw)}  {'  VALUE'.ljust(vw)}  ALLOWS"]
    lines += [f"{k.ljust(kw)}  {v.ljust(vw)}  {a}" for k, v, a in rows]
    lines += ["", "* differs from the shipped rules. Change a value with --set KEY=VALUE (simulate, sweep, "
              "run, replay, duel, score) or a --rules FILE (a partial rules.toml; [[board.spaces]] "
              "replaces the whole Construction Site)."]
    return lines


@main.command(name="rules", epilog=examples("evora rules", "evora rules --grep majority",
                                             "evora rules --rules myboard.toml --set white_stone.vp=3"))
@click.option("--rules", "rules_path", metavar="FILE", help="Rules file merged over the shipped rules.")
@set_option
@click.option("--grep", metavar="TEXT", help="Only the keys containing TEXT.")
def list_rules(rules_path, overrides=(), grep=None):
    """List every rules key with its current value and what it allows."""
    rules = load_rules_arg(rules_path, overrides)
    click.echo("\n".join(rules_lines(rules, grep)))
