"""`--format comment` (analyze/compare/comment.py) and a plugin's own version in the environment guard
(envguard.backend_diff): the rows a kernel repository's CI compares."""

from __future__ import annotations

import pandas as pd

from qlabench.analyze.compare.comment import MARKER, comment
from qlabench.analyze.compare.comparison import compare_frames
from qlabench.analyze.compare.envguard import backend_diff


def _side(make_row, version: str, sha: str, status: str = "ok", ms: float = 1.0) -> pd.DataFrame:
    rows = []
    for r in range(3):
        t = ms * (1 + 0.001 * r)
        kw = dict(status=status, reason="o off by 5%", median_ms=None, samples_ms=(), n_samples=0) \
            if status != "ok" else dict(median_ms=t, samples_ms=(t,) * 5, n_samples=5)
        rows.append(make_row(backend="my-gdn", replicate=r, backend_dist="my-gdn", backend_version=version,
                             backend_git_sha=sha, backend_git_dirty=False, **kw).as_dict())
    return pd.DataFrame(rows)


def test_a_plugins_version_and_commit_are_reported_and_a_new_major_blocks(make_row):
    base, head = _side(make_row, "0.1.0", "aaa"), _side(make_row, "0.1.1", "bbb")
    diff = {f.name: f for f in backend_diff(base, head)}
    assert (diff["my-gdn version"].base, diff["my-gdn version"].head) == (("0.1.0",), ("0.1.1",))
    assert diff["my-gdn commit"].head == ("bbb",) and not any(f.blocking for f in diff.values())
    assert backend_diff(base, _side(make_row, "0.2.0", "aaa"))[0].blocking  # 0.x: a new minor is a new major
    assert backend_diff(base, base) == []


def test_the_comment_has_fla_s_columns_its_marker_first_and_fails_a_kernel_gone_wrong(make_row):
    c = compare_frames(_side(make_row, "0.1.0", "aaa"), _side(make_row, "0.1.0", "bbb", status="incorrect"),
                       base_label="base", head_label="head")
    text = comment(c)
    assert text.splitlines()[0] == MARKER
    assert "| backend | mode | heads | layout | base ms | head ms | change | noise floor | verdict |" in text
    (row,) = [line for line in text.splitlines() if line.startswith("| my-gdn ")]
    cells = [x.strip() for x in row.strip("|").split("|")]
    assert cells[:4] == ["my-gdn", "fwd", "h2/4", "1x64"] and "(fails)" in cells[-1]
    assert "my-gdn commit: aaa -> bbb" in text and c.exit_code == 1
