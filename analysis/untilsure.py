"""A run played until sure (``--until-ci``), in the words the reports use: the stopping rule's
level and the record the runner writes into each manifest (:mod:`evora_sim.sequential`).

Here, not beside the runner, because the report and the sweep summary describe such runs and the
statistics layer imports no runner (the layers are in ``.importlinter``).
"""
from __future__ import annotations

ALPHA = 0.05        # the stopping rule's overall error: each of the K planned looks at level 1 - ALPHA/K


def describe(record: dict) -> str:
    return (f"--until-ci {record['width']}: {record['reason']} after {record['looks_done']} of "
            f"{len(record['looks_planned'])} planned looks, at {record['stopped_at_seeds']:,} seeds "
            f"(largest adjusted half-width {record['history'][-1]['max_half_width']:.3g}; each look "
            f"at level 1 - {ALPHA}/{len(record['looks_planned'])}, Bonferroni over the planned looks)")
