"""Every block the docs may hold: name -> the function that renders it. Named here, in the command line, so that
the machinery (blocks/files.py, blocks/registry.py) imports no block: the study's tables (blocks/study.py), the
serving ranking (blocks/serving.py), the cold-start table (blocks/cold_start.py), FLA's fair-tuning table (blocks/fla_fair.py), a table quoted from a committed page (blocks/page_table.py), one run's three times per call (blocks/three_times.py), what a script of scripts/ prints (blocks/script.py), advise's answer
(blocks/advise.py), the catalog's folder table (blocks/catalog.py) and FlashInfer's tables (blocks/flashinfer.py).
`python -m qlabench_publish docs render|check` passes BLOCKS to `render_files` / `check_files`; so does any caller
rendering the docs as they are committed."""

from __future__ import annotations

from qlabench_publish.blocks.advise import advise_block, answer_runs_block
from qlabench_publish.blocks import Blocks
from qlabench_publish.blocks.catalog import results_catalog_block
from qlabench_publish.blocks.fla_fair import fla_fair_block
from qlabench_publish.blocks.page_table import page_table_block
from qlabench_publish.blocks.script import script_block
from qlabench_publish.blocks.three_times import three_times_block
from qlabench_publish.blocks.flashinfer import flashinfer_cp_block, library_vs_block
from qlabench_publish.blocks.cold_start import cold_start_block
from qlabench_publish.blocks.serving import serving_against_block
from qlabench_publish.blocks.study import auto_cp_regret_block, study_summary_block

# In this order in an unknown block's error ("known: ...").
BLOCKS: Blocks = {
    "advise": advise_block,
    "answer-runs": answer_runs_block,
    "auto-cp-regret": auto_cp_regret_block,
    "cold-start": cold_start_block,
    "fla-fair": fla_fair_block,
    "flashinfer-cp": flashinfer_cp_block,
    "library-vs": library_vs_block,
    "page-table": page_table_block,
    "script": script_block,
    "study-summary": study_summary_block,
    "three-times": three_times_block,
    "results-catalog": results_catalog_block,
    "serving-against": serving_against_block,
}
