"""`qlabench advise`: which GDN kernel for a model, TP degree, workload and sequence mix, from recorded rows.

The answer itself (the question, the rows of each case, the ranking, the caveats, the first calls, the engine
lines) is the answer floor's (analyze/answer/), which the site and the study page rank with too (and this
repository's docs blocks, publish/qlabench_publish/blocks/advise.py); what is advise's own:

    advice.py    `advise`: the answer with the suite measuring what it is missing; `missing_on`: on one GPU model
    suite.py     that suite (`--suite-out`), in the regime and check size the ranking reads
"""

from qlabench.analyze.advise.advice import Advice, advise, missing_on

__all__ = ["Advice", "advise", "missing_on"]
