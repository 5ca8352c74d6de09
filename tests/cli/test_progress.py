"""The sweep progress bar prints a non-ok row's reason verbatim, brackets and all."""

import io

from rich.console import Console

from qlabench.cli.progress import RichProgress


class _Row:
    status, backend, mode, h_qk, h_v, total_tokens = "skipped", "flash_qla", "fwd", 2, 8, 8192
    layout, batch, seqlens = "varlen", 1, (8192,)
    reason = "backend unavailable: flash-qla is not installed (pip install 'qlabench[gpu]')"


def test_reason_with_brackets_is_not_eaten_as_rich_markup():
    buf = io.StringIO()
    with RichProgress(Console(file=buf, width=200)) as prog:
        prog.start(1)
        prog.point_done(_Row())
    assert "pip install 'qlabench[gpu]'" in buf.getvalue()


class _OkRow:
    status, backend, mode, h_qk, h_v, total_tokens, reason = "ok", "flash_qla", "fwd", 16, 16, 131072, None
    median_ms, cp_world_size, cp_mode = 1.9651, 2, "dual"
    layout, batch, seqlens = "varlen", 1, (32768,) * 4


def test_log_output_gets_a_line_per_finished_point():
    # a file is not a terminal: the bar is drawn only at the end, so each ok point is a line of its own
    buf = io.StringIO()
    with RichProgress(Console(file=buf, width=200)) as prog:
        prog.start(1)
        prog.point_done(_OkRow())
    assert "ok flash_qla [cp2 dual] fwd h16/16 4x32768 packed: 1.965 ms" in buf.getvalue()


def test_terminal_output_leaves_ok_points_to_the_bar():
    buf = io.StringIO()
    with RichProgress(Console(file=buf, width=200, force_terminal=True)) as prog:
        prog.start(1)
        prog.point_done(_OkRow())
    assert "1.965 ms" not in buf.getvalue()


def test_a_sweep_refused_before_it_starts_leaves_no_bar():
    buf = io.StringIO()
    try:
        with RichProgress(Console(file=buf, width=200)):
            raise RuntimeError("refused before start()")
    except RuntimeError:
        pass
    assert buf.getvalue() == ""


def test_the_bar_survives_several_sweeps_in_one_context():
    # gate and selfbench run more than one sweep under one progress object
    buf = io.StringIO()
    with RichProgress(Console(file=buf, width=200)) as prog:
        for _ in range(2):
            prog.start(1)
            prog.point_done(_Row())
    assert buf.getvalue().count("pip install 'qlabench[gpu]'") == 2


def test_log_output_ends_in_a_short_count_and_elapsed_line():
    # at 80 columns the bar's last line once ended in '0:08:... 0:00:...'
    buf = io.StringIO()
    with RichProgress(Console(file=buf, width=80)) as prog:
        prog.start(1)
        prog.point_started(type("P", (), {"label": lambda self: "naive-chunk fwd_bwd h2/4 96+288 float32 " * 3})())
        prog.point_done(_OkRow())
    last = buf.getvalue().strip().splitlines()[-1]
    assert last.startswith("1/1 points,") and last.endswith("elapsed") and "…" not in last


class _HostileRow(_Row):
    status, backend = "error", "my\x1b]0;title\x07-kernel"
    reason = "RuntimeError: \x1b[2J\x1b[H\x1b]0;pwned\x07 kernel failed"


class _Point:
    def label(self):
        return "my\x1b[2J-kernel [bold]fwd"


def test_a_plugins_escape_sequences_are_shown_never_obeyed_in_the_progress_line():
    # was: the exception message's ANSI/OSC sequence reached the terminal raw (cleared it, set its title)
    from qlabench.cli.app import SafeConsole

    for console in (Console(file=io.StringIO(), width=200, force_terminal=True),
                    SafeConsole(file=io.StringIO(), width=200, force_terminal=True)):
        with RichProgress(console) as prog:
            prog.start(1)
            prog.point_started(_Point())
            prog.point_done(_HostileRow())
        out = console.file.getvalue()
        assert r"RuntimeError: \x1b[2J\x1b[H\x1b]0;pwned\x07 kernel failed" in out
        assert "\x1b[2J" not in out and "\x1b]0;" not in out and "\x07" not in out


def test_the_consoles_of_the_command_line_show_control_characters_in_whatever_they_print():
    from rich.table import Table
    from rich.text import Text

    from qlabench.cli.app import SafeConsole

    c = SafeConsole(file=io.StringIO(), width=120, force_terminal=True)
    t = Table()
    t.add_column("name")
    t.add_row("a\x1b[2Jb")
    c.print(t)
    c.print("plain \x1b]0;t\x07 \u202e")
    c.print(Text("text \x1b[H"))
    out = c.file.getvalue()
    assert "\x1b[2J" not in out and "\x1b]0" not in out and "\x07" not in out and "\u202e" not in out
    assert "\x1b[H" not in out and r"\x1b[2J" in out and r"\u202e" in out


def test_a_terminal_bar_counts_the_priced_seconds_down():
    """`advise --measure` hands the bar each point's seconds as the evidence prices them: what is left shrinks by
    each finished point's price, and a point never priced takes nothing off."""
    from qlabench.core.point import Point

    def p(T):
        return Point(backend="flash_qla", mode="fwd", layout="dense", batch=1, seqlens=(T,), h_qk=2, h_v=8, K=128,
                     V=128, dtype="bfloat16")

    prices = {p(1024): 90.0, p(2048): 30.0, p(4096): None}
    prog = RichProgress(Console(file=io.StringIO(), width=200, force_terminal=True), prices)
    with prog:
        prog.start(3)
        seen = [prog._bar.tasks[0].fields["priced"]]
        for point in prices:
            prog.point_started(point)
            prog.point_done(_OkRow())
            seen.append(prog._bar.tasks[0].fields["priced"])
    assert seen == ["~2.0 min left, priced", "~30 s left, priced", "~0 s left, priced", "~0 s left, priced"]
