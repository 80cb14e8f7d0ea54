"""What no player knows, sampled without reading it: the order of each stack below its top card
(docs/RULES.md, P10).

A player that looks past its own turn meets cards its own draws would expose. The search player
and the planner looking at the next turns (``planner``) both play on a *determinization*: the
cards below every top put in canonical order, then shuffled from the player's own random
stream. Whatever the true order, the same stream gives the same sample, so a decision made on it
cannot depend on the true order.
"""
from numba import njit

from evora_sim.layout import MAXSTACK, NTYPES, STACK_CARDS, STACK_LEN, STACK_TOP
from evora_sim.rng import randbelow


@njit(cache=True, _nrt=False)
def determinize(s, rs):
    """Put each stack's cards below its top card in canonical order, then shuffle them: one
    sample of what nobody knows, drawn without reading it."""
    for t in range(NTYPES):
        base = STACK_CARDS + t * MAXSTACK
        lo = s[STACK_TOP + t] + 1
        hi = s[STACK_LEN + t]
        for i in range(lo + 1, hi):                    # insertion sort: at most 8 cards
            x = s[base + i]
            j = i - 1
            while j >= lo and s[base + j] > x:
                s[base + j + 1] = s[base + j]
                j -= 1
            s[base + j + 1] = x
        for i in range(hi - 1, lo, -1):                # Fisher-Yates
            j = lo + randbelow(rs, i - lo + 1)
            x = s[base + i]
            s[base + i] = s[base + j]
            s[base + j] = x
