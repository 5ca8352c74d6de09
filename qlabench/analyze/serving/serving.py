"""The serving analysis in one object: the prepared rows and every table the page and the console show."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field

import pandas as pd

from qlabench.analyze.serving.frame import SERVING_MODES, peaks, serving_frame
from qlabench.analyze.serving.winners import crossings, not_ok, over_peak, winner_ranges, winners
from qlabench.core import versions
from qlabench.core.errors import QlabenchError
from qlabench.core.libraries import version_key



@dataclass(frozen=True)
class Serving:
    rows: pd.DataFrame  # serving_frame: one row per point and variant, the newest
    winners: pd.DataFrame  # per (group, batch)
    crossings: pd.DataFrame  # per group, where the winner changes
    ranges: pd.DataFrame  # per group, the winners as batch ranges
    not_ok: pd.DataFrame
    over_peak: pd.DataFrame
    peaks: pd.DataFrame  # the measured HBM peaks per device
    sources: tuple[str, ...] = field(default=())

    @property
    def l2_counts(self) -> dict[str, int]:
        """How many rows the run said kept their states in L2 (True), did not (False), or gave no hint."""
        hint = self.rows["l2_resident"]
        return {"resident": int((hint == True).sum()), "not resident": int((hint == False).sum()),  # noqa: E712
                "no hint": int(hint.isna().sum())}

    @property
    def has_fraction(self) -> bool:
        """Whether any row has an hbm_frac (a measured peak: GPU rows)."""
        return bool(self.rows["pct_hbm"].notna().any())

    def versions(self) -> pd.DataFrame:
        """Per backend, the versions of the libraries its rows' calls used (several: the rows mix runs); '-' where
        a backend's call does not use a library another's does."""
        recs = []
        for backend, g in self.rows.groupby("backend", sort=True):
            rec = {"backend": backend}
            for r in g[[c for c in versions.READ if c in g.columns]].to_dict("records"):
                for lib, v in versions.versions_of(r).items():  # the libraries its call used (core/versions.py)
                    rec.setdefault(lib, set()).add(v)
            recs.append({k: v if k == "backend" else ", ".join(sorted(v, key=version_key)) for k, v in rec.items()})
        out = pd.DataFrame(recs).fillna("-")
        return out[[c for c in out.columns if c != "torch"] + [c for c in out.columns if c == "torch"]]  # torch: all

    def summary_line(self) -> str:
        counts = self.rows["status"].value_counts().to_dict()
        status = ", ".join(f"{n} {s}" for s, n in counts.items())
        n_groups = self.rows["group"].nunique()
        return (f"{len(self.rows)} serving rows ({status}) in {n_groups} group{'s' * (n_groups != 1)}; "
                f"{len(self.crossings)} winner change{'s' * (len(self.crossings) != 1)}; "
                f"{len(self.over_peak)} above 100% of the bandwidth limit")


def build_serving(df: pd.DataFrame, sources: Iterable[str] = ()) -> Serving:
    """The serving analysis of result rows; QlabenchError when they hold no decode or mtp row."""
    d = serving_frame(df)
    if d.empty:
        raise QlabenchError(f"no serving rows (modes {', '.join(SERVING_MODES)}) in these results")
    w = winners(d)
    return Serving(rows=d, winners=w, crossings=crossings(d, w), ranges=winner_ranges(w), not_ok=not_ok(d),
                   over_peak=over_peak(d), peaks=peaks(d), sources=tuple(str(s) for s in sources))


def serving_from_paths(paths: Iterable) -> Serving:
    """build_serving over result files or folders."""
    from qlabench.analyze.evidence import believed, read_evidence
    from qlabench.analyze.evidence.hbm_peaks import one_peak_from

    paths = list(paths)
    # every run: the frame keeps the newest row per point and device itself; one peak per GPU model (the best
    # any run beside these measured), so two pages never divide the same step by two peaks
    rows = one_peak_from(read_evidence(paths, all_runs=True).rows, paths)
    return build_serving(believed(rows), sources=paths)
