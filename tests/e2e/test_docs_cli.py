"""`qlabench docs check` fails on a stale block and names it; `qlabench docs render` fixes it."""

from __future__ import annotations

from pathlib import Path

from typer.testing import CliRunner

from qlabench.cli import app

REPO = Path(__file__).resolve().parents[2]


def test_docs_check_fails_on_a_stale_block_until_render_rewrites_it(tmp_path, monkeypatch):
    monkeypatch.chdir(REPO)  # the checkout's catalog
    page = tmp_path / "page.md"
    page.write_text("# p\n<!-- qlabench:block results-catalog -->\nold table\n<!-- /qlabench:block -->\n")
    r = CliRunner().invoke(app, ["docs", "check", str(page)])
    assert r.exit_code == 1 and "block 'results-catalog' differs" in " ".join(r.output.split())
    assert "old table" in page.read_text()
    assert CliRunner().invoke(app, ["docs", "render", str(page)]).exit_code == 0
    assert "| `h200-study/` |" in page.read_text()
    r = CliRunner().invoke(app, ["docs", "check", str(page)])
    assert r.exit_code == 0, r.output
    page.write_text("<!-- qlabench:block nope -->\n<!-- /qlabench:block -->\n")
    r = CliRunner().invoke(app, ["docs", "check", str(page)])
    assert r.exit_code == 2 and "unknown block 'nope'" in r.output


def test_docs_render_and_check_of_a_missing_folder_or_non_utf8_file_are_one_line_exit_2(tmp_path, monkeypatch):
    monkeypatch.chdir(REPO)
    latin = tmp_path / "latin.md"
    latin.write_bytes(b"caf\xe9\n")
    for path, says in ((tmp_path / "missing.md", "no such file"), (tmp_path, "is a folder"),
                       (latin, "not UTF-8 text")):
        for cmd in ("check", "render"):
            r = CliRunner().invoke(app, ["docs", cmd, str(path)])
            assert r.exit_code == 2, (r.exit_code, r.exception)
            assert r.stderr.startswith(f"error: {path}: {says}") and r.stderr.count("\n") == 1, r.stderr
