"""Generated blocks in the docs: figures quoted in README.md and docs/*.md, rendered from the current evidence.

A block sits between markers in a markdown file:

    <!-- qlabench:block NAME -->
    ...what `qlabench docs render` writes...
    <!-- /qlabench:block -->

This package is the machinery, below the views (docs/ARCHITECTURE.md, "Floors of analyze"), and the blocks that
quote no view; a block that quotes a view's rendering is that view's (`study/blocks.py`, `serving/blocks.py`,
`cold_start/blocks.py`, `advise/blocks.py`), and the docs' full set is assembled above the views
(cli/blocks_registry.py: BLOCKS), passed to `render_files` and `check_files`.

    markers.py   finding and replacing blocks in a text (pure; the marker rules: code fences, line endings)
    params.py    a block's KEY=VALUE parameters: their checks and the wording of their errors
    context.py   what a block reads: the catalog, the current rows (loaded once), what a view derives from them
    registry.py  `render_block`: a marker's block by its function in the caller's name -> function mapping
    files.py     render / check every block of the docs (`qlabench docs render|check`)
    catalog.py   results/README.md's folder table (results-catalog)
    flashinfer.py  FlashInfer's CP choice and one library against another (flashinfer-cp, library-vs)
    prose.py     the numbers the prose states outside the blocks: a block's, a cited run's or file's, or marked
                 unchecked with the reason (prose_page.py reads a page's numbers and sections, prose_numbers.py
                 says what a number is and whether a source holds it, prose_sources.py reads what is cited)
"""

from qlabench.analyze.blocks.context import BlockContext
from qlabench.analyze.blocks.files import DOC_FILES, Stale, check_files, render_files
from qlabench.analyze.blocks.markers import Block, find_blocks, replace_blocks
from qlabench.analyze.blocks.registry import Blocks, render_block

__all__ = ["DOC_FILES", "Block", "BlockContext", "Blocks", "Stale", "check_files", "find_blocks", "render_block",
           "render_files", "replace_blocks"]
