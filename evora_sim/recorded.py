"""Names of what the game loop records that the statistics read back from the tables.

The game loop (:mod:`evora_sim.gameloop`, the play layer) fills these columns and the analysis
(:mod:`analysis.playstates`, the statistics layer) reads them by name; the statistics import no
play module (the layers are in ``.importlinter``), so the names live here, below both.
"""
from __future__ import annotations

PLAY_STATES = ("plays_leading", "plays_final_round", "play_round_sum")   # the cards table's columns
