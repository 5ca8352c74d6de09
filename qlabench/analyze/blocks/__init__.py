"""Generated blocks in the docs: figures quoted in README.md and docs/*.md, rendered from the current evidence.

A block sits between markers in a markdown file:

    <!-- qlabench:block NAME -->
    ...what `qlabench docs render` writes...
    <!-- /qlabench:block -->

    markers.py   finding and replacing blocks in a text (pure; the marker rules: code fences, line endings)
    params.py    a block's KEY=VALUE parameters: their checks and the wording of their errors
    context.py   what a block reads: the catalog, the current rows, the study, the backends' calls (loaded once)
    registry.py  BLOCKS: block name -> the function that renders it (advice.py, flashinfer.py, study.py,
                 catalog.py hold them)
    files.py     render / check every block of the docs (`qlabench docs render|check`)
    prose.py     the numbers the prose states outside the blocks: a block's, a cited run's or file's, or marked
                 unchecked with the reason (prose_page.py reads a page's numbers and sections, prose_numbers.py
                 says what a number is and whether a source holds it, prose_sources.py reads what is cited)
"""

from qlabench.analyze.blocks.context import BlockContext
from qlabench.analyze.blocks.files import DOC_FILES, Stale, check_files, render_files
from qlabench.analyze.blocks.markers import Block, find_blocks, replace_blocks
from qlabench.analyze.blocks.registry import BLOCKS

__all__ = ["BLOCKS", "DOC_FILES", "Block", "BlockContext", "Stale", "check_files", "find_blocks", "render_files",
           "replace_blocks"]
