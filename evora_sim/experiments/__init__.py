"""Experiments: several *arms* (rules + strategies + player count) played on the *same* seeds,
then compared paired.

- :mod:`.arms`: an arm, and playing a set of arms on common seeds into run folders through
  :func:`evora_sim.runner.simulate` (so resuming, chunk checksums and the Dask backend are the
  runner's);
- :mod:`.space`: the parameters a search may change (rules keys, strategy weights) and how the
  command line names them;
- :mod:`.search`: the one search engine (optuna's TPE sampler, rounds on common seeds,
  successive halving, a confirmation on fresh seeds), resumable;
- :mod:`.tune` (``evora tune strategy``), :mod:`.balance` (``evora balance``) and
  :mod:`.compensation` (``evora balance --compensation``): recipes over it.

The statistics they report live in :mod:`analysis` (:mod:`analysis.search_stats`,
:mod:`analysis.compensation_stats`, :mod:`analysis.fairness`); data flows experiments -> run folders ->
analysis.
"""
