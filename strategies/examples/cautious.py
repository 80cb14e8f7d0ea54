"""Cautious: the worked example of a custom strategy in plain Python.

It plays it safe with the Temple's columns: it builds where it already holds the majority, it
does not give up a column it holds if it can help it, and otherwise takes the action that
leaves it best placed if the game ended now. Every rule comes from the compiled engine through
``evora_sim.api``; the strategy looks ahead on its own copies of the state.

Name it wherever a strategy is named::

    evora duel strategies/examples/cautious.py:Cautious random --games 200
    evora replay --players 4 --seed 7 \\
        --strategies strategies/examples/cautious.py:Cautious,greedy,greedy,greedy

The protocol (``strategies/custom.py``): a class with ``choose(self, state, legal_actions,
rng)`` returning one of ``legal_actions``. ``state`` is this decision's own copy of the game
(changing it affects nothing), ``rng`` a numpy Generator seeded from the game seed and the
seat: draw all randomness from it and every game is reproducible from its seed.
"""
from __future__ import annotations

from evora_sim import api

HOLD = 3        # what holding a column is worth, in VP, beyond the 5 VP it would score now
LOSE = 8        # what losing a column it holds costs, in VP, on top of that
BUILD_ON = 2    # bonus for building on a column it already holds


class Cautious:
    """Builds where it holds the column majority, keeps its columns, else the best score now."""

    def choose(self, state, legal_actions, rng):
        me = api.current_player(state)
        held = self.columns_held(state, me)
        best, best_value = [], float("-inf")
        # of several columns with the same content only the first is tried (same outcome)
        for action in api.distinct_actions(state, legal_actions):
            value = self.value(state, action, me, held)
            if value > best_value:
                best, best_value = [action], value
            elif value == best_value:
                best.append(action)
        return best[int(rng.integers(len(best)))]          # equal values: the seat's own stream

    def value(self, state, action, me, held):
        """How good ``action`` is once the effect it opens (the site action, a card, a tile)
        is finished: finish it on a copy, one decision at a time, each time the best next step
        (the first best on equal values)."""
        after = state.clone()                                # a copy of the copy: look ahead freely
        api.apply_action(after, action)
        while api.in_effect(after) and api.current_player(after) == me:
            options = api.legal_actions(after)
            if len(options) == 1:
                api.apply_action(after, options[0])
                continue
            best, best_value = None, float("-inf")
            for option in api.distinct_actions(after, options):
                tried = after.clone()
                api.apply_action(tried, option)
                v = self.standing(tried, me, held)
                if v > best_value:
                    best, best_value = tried, v
            after = best
        bonus = BUILD_ON if api.action_column(action) in held else 0
        return self.standing(after, me, held) + bonus

    @staticmethod
    def standing(state, me, held):
        """Its total if the game ended now, plus HOLD per column it holds, minus LOSE per column
        it held before this decision and holds no more."""
        holders = api.column_holders(state)
        lost = sum(1 for c in held if holders[c] != me)
        return api.score_now(state, me) + HOLD * holders.count(me) - LOSE * lost

    @staticmethod
    def columns_held(state, seat):
        """The columns on which ``seat``'s majority worker stands (D7)."""
        return [c for c, holder in enumerate(api.column_holders(state)) if holder == seat]
