"""What the blocks read, loaded once per render: the catalog, its current rows and the study built on them
(the backends' facts come from their declarations, core/backend_decl.py, as in every view)."""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import cached_property

import pandas as pd

from qlabench.analyze.evidence.current import CurrentEvidence, current_evidence, history_notes
from qlabench.store.catalog import Catalog, load_catalog


@dataclass
class BlockContext:
    catalog: Catalog = field(default_factory=load_catalog)

    @cached_property
    def evidence(self) -> CurrentEvidence:
        return current_evidence(self.catalog)

    @property
    def rows(self) -> pd.DataFrame:
        return self.evidence.rows

    @cached_property
    def study(self):
        """The study page's Study on the current evidence, as `qlabench report` builds it."""
        from qlabench.analyze.study import build_study

        root = self.catalog.root.parent
        sources = [str(p.relative_to(root)) if p.is_relative_to(root) else str(p) for p in self.evidence.paths]
        return build_study(self.rows, sources=sources, history=history_notes(self.catalog))

    def run_label(self, run_id: str) -> str:
        """A run as the docs cite it: its id and the results path of the file holding it."""
        for f in self.evidence.files:
            if f.stem == run_id or run_id in f.stem:
                rel = f.relative_to(self.catalog.root.parent) if f.is_relative_to(self.catalog.root.parent) else f
                return f"`{run_id}` (`{rel.parent}`)"
        return f"`{run_id}`"
