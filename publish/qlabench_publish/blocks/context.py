"""What the blocks read, loaded once per render: the catalog and its current rows (the backends' facts come
from their declarations, core/backend_decl.py, as in every view). What a view builds on those rows for its own
blocks (the study's Study) it builds through `derived`, once per render, without this module knowing the view."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any, TypeVar

import pandas as pd

from qlabench.analyze.evidence.current import CurrentEvidence, current_evidence
from qlabench.store.catalog import Catalog, load_catalog
from qlabench.core.text import md_code

T = TypeVar("T")


@dataclass
class BlockContext:
    catalog: Catalog = field(default_factory=load_catalog)
    # build -> what it built from this context: every block that asks for it shares one (study.py's Study)
    built: dict[Callable[[BlockContext], Any], Any] = field(default_factory=dict, repr=False, compare=False)

    @cached_property
    def evidence(self) -> CurrentEvidence:
        return current_evidence(self.catalog)

    @property
    def rows(self) -> pd.DataFrame:
        return self.evidence.rows

    def derived(self, build: Callable[[BlockContext], T]) -> T:
        """What `build` makes of this context, made on the first call and kept: a view's own reading of the
        current evidence, shared by its blocks in one render."""
        if build not in self.built:
            self.built[build] = build(self)
        return self.built[build]

    def run_label(self, run_id: str) -> str:
        """A run as the docs cite it: its id and the results path of the file holding it."""
        for f in self.evidence.files:
            if f.stem == run_id or run_id in f.stem:
                rel = f.relative_to(self.catalog.root.parent) if f.is_relative_to(self.catalog.root.parent) else f
                return f"{md_code(run_id)} ({md_code(rel.parent)})"
        return md_code(run_id)
