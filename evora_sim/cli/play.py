"""Commands that play or show single games and strategies: score, replay, strategies, duel."""
from __future__ import annotations

import json
import textwrap

import click

from strategies.errors import StrategyError

from ..manifest import RunError
from ..rules import load_rules
from .group import (STRATEGIES_HELP, UserError, check_players_arg, check_seed_arg, decision_timeout_option,
                    examples, jobs_option, load_rules_arg, read_error, set_option, warn_other_rules)


@click.command(epilog=examples("evora score position.json", "evora score position.json --json",
                              "evora score position.json --set white_stone.vp=3"))
@click.argument("position_file", metavar="FILE.json")
@click.option("--json", "as_json", is_flag=True, help="Print the scoring as JSON.")
@click.option("--rules", "rules_path", metavar="FILE", help="Rules file merged over the shipped rules.")
@set_option
def score(position_file, as_json, rules_path, overrides=()):
    """Final scoring of the position in FILE.json: per seat, per category, and the winner. The
    file's format is in the README ("Scoring a position")."""
    from .. import position, replay  # lazy: they load the players, 0.2 s (measured); --help does not need them

    rules = load_rules_arg(rules_path, overrides)
    try:
        state = position.load_position(position_file, rules)
    except (position.PositionError, UnicodeDecodeError, OSError) as exc:
        raise read_error(exc, "position file", position_file) from None
    check_players_arg(state.n_players, rules)
    table = position.scoring_table(state)
    if as_json:
        click.echo(json.dumps(table, indent=2))
    else:
        click.echo("\n".join(replay.scoring_lines(table)))



@click.command(epilog=examples(
    "evora replay -n 4 --seed 7 --strategies balanced,cards,emperor,greedy",
    "evora replay -n 2 --seed 3 --strategies greedy,random --set white_stone.vp=6"))
@click.option("--players", "-n", "n_players", type=int, required=True, metavar="N", help="2, 3 or 4.")
@click.option("--seed", type=int, required=True, metavar="S", help="The game's seed.")
@click.option("--strategies", "spec", required=True, metavar="A,B,...",
              help=STRATEGIES_HELP)
@click.option("--rules", "rules_path", metavar="FILE", help="Rules file merged over the shipped rules.")
@set_option
@decision_timeout_option
def replay(n_players, seed, spec, rules_path, overrides=(), decision_timeout=None):
    """Play one seeded game and print it turn by turn, then its final scoring."""
    from strategies.registry import parse_strategies  # lazy: the players, 0.2 s (measured); not for --help

    from ..replay import replay_lines  # lazy: with the players

    rules = load_rules_arg(rules_path, overrides)
    n = check_players_arg(n_players, rules)
    seed = check_seed_arg(seed)
    try:
        seats = parse_strategies(spec, n)
        lines = replay_lines(rules, n, seed, seats, decision_timeout)
    except StrategyError as exc:
        raise UserError(str(exc)) from None
    click.echo("\n".join(lines))


@click.command(name="strategies", epilog=examples("evora strategies",
                                                "evora replay -n 2 --seed 1 --strategies 'balanced(column=2)',greedy"))
def list_strategies():
    """List the built-in strategies: name, description and weights; the search player and the
    expert; then the features."""
    from strategies import builtin, compiled, custom, registry, search_spec  # lazy: the players, 0.2 s (measured)

    width = max(len(s.name) for s in builtin.BUILTINS)
    lines = ["Built-in strategies (each heuristic scores positions by a weighted sum of the features "
             "below):", ""]
    for st in builtin.BUILTINS:
        lines.append(f"  {st.name.ljust(width)}  {st.description}")
        if st.is_heuristic:
            lines.append(f"  {''.ljust(width)}  weights: {registry.format_weights(st.weight_dict())}")
            lines.append(f"  {''.ljust(width)}  plan: {st.plan}")
        else:
            lines.append(f"  {''.ljust(width)}  weights: none (no evaluation)")
    lines += ["", "Plans (the option plan=, e.g. 'greedy(plan=action)'):"]
    lines += [f"  {name.ljust(6)}  {text}" for name, text in builtin.PLAN_HELP.items()]
    lines += ["", f"The search player: {search_spec.NAME}(option=value, ...)", f"  {search_spec.DESCRIPTION}"]
    ow = max(len(k) for k in search_spec.DEFAULTS)
    lines += [f"  {k.ljust(ow)}  {search_spec.HELP[k]} (default {search_spec.DEFAULTS[k]})" for k in search_spec.DEFAULTS]
    lines += ["", *expert_lines()]
    fw = max(len(f) for f in compiled.FEATURES)
    lines += ["", "Features (weight names), for the player to move:"]
    lines += [f"  {f.ljust(fw)}  {builtin.FEATURE_HELP[f]}" for f in compiled.FEATURES]
    try:
        eps = custom.entry_points()
    except Exception:                      # a broken installation must not hide the built-ins
        eps = {}
    if eps:
        lines += ["", f"Installed custom strategies (entry points {custom.GROUP}):"]
        lines += [f"  {name}  = {ep.value}" for name, ep in sorted(eps.items())]
    lines += ["",
              "Specs: NAME, NAME(plan=..., feature=weight, ...) e.g. 'balanced(column=2, emperor=0.5)', "
              "FILE.toml:NAME (a weight set), FILE.py:NAME (a custom Python strategy).",
              "Equal values are broken by the game's random stream, so every game is reproducible "
              "from its seed."]
    click.echo("\n".join(lines))


def expert_lines(width: int = 100) -> list[str]:
    """The built-in expert for ``evora strategies``: what it is, how far it looks at each player
    count, and how its weights were made, from its weights file (so the listing cannot drift
    from the player)."""
    from strategies import learned, registry  # lazy: the players, 0.2 s (measured)

    from ..experiments.train_runs import made_by_counts  # lazy: the trainer, 0.8 s (measured)

    weights = learned.shipped_expert(StrategyError)
    replies, ahead, by_reach = dict(weights.replies), dict(weights.ahead_from), {}
    for n in weights.counts:
        k, t = replies.get(n, 0), ahead.get(n, 0.0)
        late = f" from {100 * t:g}% of the game's progress on (before: one turn)" if t else ""
        by_reach.setdefault(f"it looks a round ahead from its {k} best turns{late}" if k else "it plans one turn",
                            []).append(str(n))
    reach = "; ".join(f"at {' and '.join(counts)} players {what}" for what, counts in by_reach.items())
    lines = [f"The expert: {registry.EXPERT_NAME}, or {registry.EXPERT_NAME}(replies=K)",
             *textwrap.wrap(f"{weights.description} {reach.capitalize()}; {registry.EXPERT_NAME}(replies=K) looks "
                            f"ahead from its K best turns at every player count (0: one turn), from the start, "
                            f"or with ahead_from=T from progress T on (0 to 1: the Temple filled or a seat's stones used, "
                            f"whichever is further).",
                            width, initial_indent="  ", subsequent_indent="  ", break_on_hyphens=False),
             f"  How its weights were made (strategies/{learned.SHIPPED}, "
             + ("under the shipped rules):" if weights.rules_hash == load_rules().hash else
                f"under the rules of hash {weights.rules_hash}, not the shipped ones):")]
    for n, how in sorted(made_by_counts(weights.made_by).items()):
        lines += textwrap.wrap(f"{n} players: {how}", width, initial_indent="    ", subsequent_indent="      ",
                               break_on_hyphens=False, break_long_words=False)
    return lines + ["  How strong it is now: reports/expert_strength; the docs' Strategies page, \"The expert\"."]


@click.command(epilog=examples(
    "evora duel majority builder --players 2 --games 2000",
    "evora duel strategies/examples/cautious.py:Cautious greedy --players 4 --games 2000",
    "evora duel 'balanced(column=2)',greedy,random,random --games 4000"))
@click.argument("specs", nargs=-1, required=True, metavar="A B | A,B,B,B")
@click.option("--players", "-n", "n_players", type=int, default=None, metavar="N",
              help="2, 3 or 4 (default: the field's size, or 2 for A B). With A B and N > 2 the "
                   "field is A against N-1 x B.")
@click.option("--games", type=int, default=2000, show_default=True, metavar="N",
              help="Games in all, rounded up to whole seeds x seat rotations.")
@click.option("--seed", type=int, default=1, show_default=True, help="The run seed; game seeds derive from it.")
@jobs_option
@click.option("--rules", "rules_path", metavar="FILE", help="Rules file merged over the shipped rules.")
@set_option
@click.option("--out", "out", metavar="DIR", default=None,
              help="Keep the games in this run folder: the same command resumes a duel that was "
                   "stopped, playing only what is missing. Default: a temporary folder.")
@click.option("--quiet", "-q", is_flag=True, help="No progress bar.")
@decision_timeout_option
def duel(specs, n_players, games, seed, jobs, rules_path, out, quiet, overrides=(), decision_timeout=None):
    """Head-to-head: seat-rotated games of strategies A and B (or a field A,B,B,B) over the same
    seeds; each strategy's win rate with a 95% interval, and with two strategies A's lead over B
    in VP a game with its 95% interval."""
    from ..duel import duel as play_duel, duel_field, duel_lines  # lazy: 1.9 s (measured); not for --help

    rules = load_rules_arg(rules_path, overrides)
    if n_players is not None:
        check_players_arg(n_players, rules)
    seed = check_seed_arg(seed)
    try:
        field = duel_field(specs, n_players)
        check_players_arg(len(field), rules)
        warn_other_rules(field, rules)
        result = play_duel(field, games, seed=seed, jobs=jobs, rules=rules, quiet=quiet,
                           decision_timeout=decision_timeout, out=out)
    except (RunError, StrategyError) as exc:
        raise UserError(str(exc)) from None
    click.echo("\n".join(duel_lines(result)))

