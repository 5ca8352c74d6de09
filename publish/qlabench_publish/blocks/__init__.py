"""Generated blocks in the docs: figures quoted in README.md and docs/*.md, rendered from the current evidence.

A block sits between markers in a markdown file:

    <!-- qlabench:block NAME -->
    ...what `python -m qlabench_publish docs render` writes...
    <!-- /qlabench:block -->

This package is the machinery, the blocks that quote no view, and one module per view whose rendering the docs
quote (`study.py`, `serving.py`, `cold_start.py`, `advise.py`); it imports qlabench's views, which know nothing of
it (docs/ARCHITECTURE.md, "The product and this repository's publishing"). The docs' full set is named in
cli/blocks_registry.py (BLOCKS) and passed to `render_files` and `check_files`, so the machinery imports no block.

    markers.py   finding and replacing blocks in a text (pure; the marker rules: code fences, line endings)
    params.py    a block's KEY=VALUE parameters: their checks and the wording of their errors
    context.py   what a block reads: the catalog, the current rows (loaded once), what a view derives from them
    registry.py  `render_block`: a marker's block by its function in the caller's name -> function mapping
    files.py     render / check every block of the docs (`python -m qlabench_publish docs render|check`)
    catalog.py   results/README.md's folder table (results-catalog)
    flashinfer.py  FlashInfer's CP choice and one library against another (flashinfer-cp, library-vs)
    advise.py    advise's answer per case, as a table, and how many runs each answer draws on (advise, answer-runs)
    study.py     the study page's headline and one library's auto-CP regret (study-summary, auto-cp-regret)
    serving.py   every serving variant against one baseline (serving-against)
    cold_start.py  the cold-start table of one catalog entry (cold-start)
    prose.py     the numbers the prose states outside the blocks: a block's, a cited run's or file's, or marked
                 unchecked with the reason (prose_page.py reads a page's numbers and sections, prose_numbers.py
                 says what a number is and whether a source holds it, prose_sources.py reads what is cited)
"""

from qlabench_publish.blocks.context import BlockContext
from qlabench_publish.blocks.files import DOC_FILES, Stale, check_files, render_files
from qlabench_publish.blocks.markers import Block, find_blocks, replace_blocks
from qlabench_publish.blocks.registry import Blocks, render_block

__all__ = ["DOC_FILES", "Block", "BlockContext", "Blocks", "Stale", "check_files", "find_blocks", "render_block",
           "render_files", "replace_blocks"]
