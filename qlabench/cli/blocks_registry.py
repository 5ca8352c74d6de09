"""Every block the docs may hold: name -> the function that renders it. Assembled here, above the views, because
a block quotes its view's own rendering and views import no other view: the study's tables (study/blocks.py),
the serving ranking (serving/blocks.py), the cold-start table (cold_start/blocks.py), advise's answer
(advise/blocks.py); the blocks that quote no view are the blocks machinery's own (analyze/blocks/).
`qlabench docs render|check` passes BLOCKS to `render_files` / `check_files`; so does any caller rendering the
docs as they are committed."""

from __future__ import annotations

from qlabench.analyze.advise.blocks import advise_block, answer_runs_block
from qlabench.analyze.blocks import Blocks
from qlabench.analyze.blocks.catalog import results_catalog_block
from qlabench.analyze.blocks.flashinfer import flashinfer_cp_block, library_vs_block
from qlabench.analyze.cold_start.blocks import cold_start_block
from qlabench.analyze.serving.blocks import serving_against_block
from qlabench.analyze.study.blocks import auto_cp_regret_block, study_summary_block

# In this order in an unknown block's error ("known: ...").
BLOCKS: Blocks = {
    "advise": advise_block,
    "answer-runs": answer_runs_block,
    "auto-cp-regret": auto_cp_regret_block,
    "cold-start": cold_start_block,
    "flashinfer-cp": flashinfer_cp_block,
    "library-vs": library_vs_block,
    "study-summary": study_summary_block,
    "results-catalog": results_catalog_block,
    "serving-against": serving_against_block,
}
