"""What the blocks read, loaded once per render: the catalog, its current rows, the study built on them, and
the backends' declared calls (handed in by the command: analyze does not import the backends)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from functools import cached_property

import pandas as pd

from qlabench.analyze.current import CurrentEvidence, current_evidence, history_notes
from qlabench.store.catalog import Catalog, load_catalog


@dataclass
class BlockContext:
    catalog: Catalog = field(default_factory=load_catalog)
    calls: Mapping[str, str] | None = None  # {backend: Backend.call_signature}; None: blocks name backends only
    autotuning: frozenset[str] = frozenset()  # backends whose library autotunes (Backend.autotune_modules)
    size_dependent: frozenset[str] | None = None  # backends whose path depends on the size (None: unknown)

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
