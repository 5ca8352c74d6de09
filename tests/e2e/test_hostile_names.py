"""Round 5 (docs/ROBUSTNESS.md): names and texts from a kernel's package or a crafted results file, through every
writer. A backend named like markup, a control sequence in a reason, a host or a run id; a file that holds rows
without a run id, or a version that is no number. What each writer must do: the terminal shows control characters
as escapes, markdown shows the text literally (one cell per cell, no tag, no comment, no link), the site escapes,
the CSV keeps one field per name, and file names stay under their folder."""

from __future__ import annotations

import csv
import io
import re

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from typer.testing import CliRunner

from qlabench.cli import app
from qlabench.store.files import write_rows
from qlabench.store.schema import METADATA_KEY

ESC = "\x1b[2J\x1b[H\x1b]0;pwned\x07"
HOSTILE = ["<script>alert('ep')</script>", "<!--", "a|b", "[x](javascript:alert(1))", f"esc{ESC}x",
           "../../etc/passwd", "rtl\u202eevil", "n" * 300]
REASON = f"RuntimeError: {ESC}<script>x</script>|[y](javascript:z)"


@pytest.fixture
def tree(make_row, tmp_path):
    """A base and a head folder: naive-chunk and a row per hostile name, an error row with a hostile reason, a
    hostile host; a second head file whose rows carry no run id."""
    def rows(run):
        out = [make_row(run_id=run, host=f"h{ESC}")]
        out += [make_row(run_id=run, backend=h, median_ms=1.0 + i / 10) for i, h in enumerate(HOSTILE)]
        out.append(make_row(run_id=run, backend="fla", status="error", reason=REASON))
        return out

    write_rows(tmp_path / "base" / "t" / "r1.parquet", rows("r1"))
    write_rows(tmp_path / "head" / "t" / "r2.parquet", rows("r2"))
    return tmp_path


def _run(*args):
    r = CliRunner().invoke(app, [str(a) for a in args])
    assert r.exception is None or isinstance(r.exception, SystemExit), repr(r.exception)
    return r


def _no_control(text: str) -> None:
    assert "\x1b" not in text and "\x07" not in text and "\u202e" not in text, repr(text[:400])


def _literal_markdown(text: str) -> None:
    """No tag, comment or link the data opens, and a table row has as many cells as its header."""
    _no_control(text)
    assert "<script" not in text and "<!--" not in text.replace("<!-- qlabench:comment -->", "")
    assert not re.search(r"(?<!\\)\]\(javascript", text)  # a link opens only on an unescaped `](`
    header = None
    for line in text.splitlines():
        if line.startswith("|"):
            cells = len(re.findall(r"(?<!\\)\|", line))
            header = header or cells
            assert cells == header, line[:200]
        else:
            header = None


def test_the_terminal_shows_control_characters_as_escapes(tree):
    # was: the ANSI/OSC sequence of an exception message reached the terminal raw (it cleared the screen)
    for args in (["show", tree / "base"], ["compare", tree / "base", tree / "head"]):
        r = _run(*args)
        _no_control(r.output)
        assert r"\x1b" in r.output, r.output


def test_markdown_shows_every_name_literally(tree):
    # was: <script>, <!-- raw and `a|b` splitting the table's cell (show --format markdown, compare's comment)
    outputs = [_run("show", tree / "base", "-f", "markdown").stdout]
    outputs += [_run("compare", tree / "base", tree / "head", "-f", f).stdout for f in ("markdown", "comment")]
    for text in outputs:
        _literal_markdown(text)
        assert "&lt;script>" in text and "a\\|b" in text and "[x\\](javascript" in text


def test_the_report_and_the_site_show_names_literally_and_run_nothing(tree):
    out = tree / "report"
    assert _run("report", tree / "base", "-o", out).exit_code == 0
    _literal_markdown((out / "report.md").read_text())
    site = tree / "site"
    assert _run("site", tree / "base", "-o", site).exit_code == 0
    for page in site.glob("*.html"):
        text = page.read_text(encoding="utf-8")
        _no_control(text)
        assert "<script>alert" not in text and "<!--<" not in text


def test_csv_keeps_one_field_per_name_and_no_control_character(tree):
    from qlabench.core.text import visible

    text = _run("show", tree / "base", "-f", "csv").stdout
    _no_control(text)
    header = next(csv.reader(io.StringIO(text)))
    for name in HOSTILE:
        assert visible(name) in header  # one field, as it is (controls made visible)


def test_file_names_made_from_names_stay_in_their_folder(tree):
    from qlabench.core.names import slug
    from qlabench.core.text import visible

    for name in HOSTILE:
        s = slug(name)
        assert "/" not in s and ".." != s and len(s) <= 100 and s == visible(s) and s


def test_markdown_escape_is_one_routine_and_literal():
    from qlabench.core.text import md_text

    assert md_text("a|b") == "a\\|b" and md_text("<!--") == "&lt;!--" and md_text("x\ny") == "x y"
    assert md_text(ESC) == "\\\\x1b[2J\\\\x1b[H\\\\x1b]0;pwned\\\\x07"
    assert md_text("[x](javascript:alert(1))") == "[x\\](javascript:alert(1))"


def test_rows_without_a_run_id_are_shown_under_an_unknown_run(make_row, tmp_path):
    # was: one row of the file silently missing from `show` (and called missing by `compare`)
    path = write_rows(tmp_path / "f.parquet", [make_row(run_id="r1"), make_row(run_id="r1", backend="fla")])
    t = pq.read_table(path)
    i = t.schema.get_field_index("run_id")
    pq.write_table(t.set_column(i, t.schema.field(i), pa.array([None, "r1"], pa.string())), path)
    r = _run("show", path)
    assert r.exit_code == 0, r.output
    out = " ".join(r.output.split())
    assert f"run unknown run ({path})" in out and f"1 row(s) carry no run id: shown as run 'unknown run ({path})'" in out
    assert "fla" in out and "naive-chunk" in out


@pytest.mark.parametrize("version,said", [(b"abc", "is 'abc', not a whole number"),
                                          (b"-3", "schema version -3 is none qlabench ever wrote")])
def test_a_file_refused_for_its_schema_version_is_named(make_row, tmp_path, version, said):
    # was: "invalid literal for int() with base 10: b'abc'", naming no file
    path = write_rows(tmp_path / "v.parquet", [make_row()])
    t = pq.read_table(path)
    pq.write_table(t.replace_schema_metadata({**t.schema.metadata, METADATA_KEY: version}), path)
    for args in (["show", path], ["compare", path, path], ["merge", path, "--into", tmp_path / "m.parquet"]):
        r = _run(*args)
        assert r.exit_code == 2 and str(path) in r.output and said in " ".join(r.output.split()), (args, r.output)


def test_a_column_of_the_wrong_type_is_refused_naming_the_file_and_column(make_row, tmp_path):
    path = write_rows(tmp_path / "c.parquet", [make_row()])
    t = pq.read_table(path)
    i = t.schema.get_field_index("median_ms")
    pq.write_table(t.set_column(i, "median_ms", pa.array(["fast"])), path)
    r = _run("show", path)
    assert r.exit_code == 2 and f"{path}: column 'median_ms' holds string" in r.output, r.output
