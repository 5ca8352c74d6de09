"""The sweep progress bar prints a non-ok row's reason verbatim, brackets and all."""

import io

from rich.console import Console

from qlabench.progress import RichProgress


class _Row:
    status, backend, mode, h_qk, h_v, total_tokens = "skipped", "flash_qla", "fwd", 2, 8, 8192
    reason = "backend unavailable: flash-qla is not installed (pip install 'qlabench[gpu]')"


def test_reason_with_brackets_is_not_eaten_as_rich_markup():
    buf = io.StringIO()
    with RichProgress(Console(file=buf, width=200)) as prog:
        prog.start(1)
        prog.point_done(_Row())
    assert "pip install 'qlabench[gpu]'" in buf.getvalue()
