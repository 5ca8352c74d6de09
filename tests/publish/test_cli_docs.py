"""`python -m qlabench_publish docs check` fails on a stale block and names it; `python -m qlabench_publish docs render` fixes it."""

from __future__ import annotations

from pathlib import Path

from typer.testing import CliRunner

from qlabench_publish.cli import app

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


def _check(page: Path, *lines: str):
    page.write_text("\n".join(["# p", "", *lines, ""]))
    r = CliRunner().invoke(app, ["docs", "check", str(page)])
    return r.exit_code, " ".join(r.output.split())


def test_docs_check_holds_every_decimal_of_a_page_to_a_block_a_cited_run_or_file(tmp_path, monkeypatch):
    monkeypatch.chdir(REPO)
    page = tmp_path / "page.md"
    code, out = _check(page, "Anywhere on any page, FlashInfer is 1.82x FLA.")
    assert code == 1 and f"{page}:3: 1.82x is stated outside the generated blocks" in out, out
    log = "docs/h200/logs/scaling-x2-20261129.log"  # '30 rows (30 ok) on cuda in 48.7s'
    code, out = _check(page, f"<!-- qlabench:dated file={log} -->", "the sweep took 48.7 s", "<!-- /qlabench:dated -->")
    assert code == 0 and "1 are checked against the runs and files their dated section cites" in out, out
    code, out = _check(page, f"<!-- qlabench:dated file={log} -->", "the sweep took 48.9 s", "<!-- /qlabench:dated -->")
    assert code == 1 and f"{page}:4: 48.9 s is in none of the file(s) {log} at the decimals shown" in out, out
    code, out = _check(page, "<!-- qlabench:dated run=results/h200-nope -->", "0.237 ms", "<!-- /qlabench:dated -->")
    assert code == 1 and f"{page}:3: the dated section cites run results/h200-nope, which does not exist" in out, out


def test_docs_check_counts_unchecked_lines_with_their_reason_and_refuses_one_without(tmp_path, monkeypatch):
    monkeypatch.chdir(REPO)
    page = tmp_path / "page.md"
    code, out = _check(page, '<!-- qlabench:unchecked why="FLA\'s own test tolerances" -->', "0.005 on o",
                       "<!-- /qlabench:unchecked -->")
    assert code == 0 and f"{page}: 1 unchecked: \"FLA's own test tolerances\" (line 4)" in out, out
    code, out = _check(page, '<!-- qlabench:unchecked why="" -->', "0.005 on o", "<!-- /qlabench:unchecked -->")
    assert code == 1 and f"{page}:3: an unchecked section gives no reason" in out, out
    code, out = _check(page, '<!-- qlabench:unchecked why="w" -->', "0.005 on o")
    assert code == 1 and f"{page}:3: the unchecked section opened here is never closed" in out, out
