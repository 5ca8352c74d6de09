"""Options several commands share (cli/options.py): `--suite NAME` against a file of that name in the working
directory."""

from __future__ import annotations

from typer.testing import CliRunner

from qlabench.cli import app
from qlabench.core.spec import SUITES_DIR


def test_a_file_named_like_a_suite_never_replaces_it_silently(tmp_path, monkeypatch):
    # was: `--suite quick-cpu` ran ./quick-cpu (another suite) without a word, because a file of that name existed
    monkeypatch.chdir(tmp_path)
    text = (SUITES_DIR / "quick-cpu.toml").read_text().replace('name = "quick-cpu"', 'name = "shadow"')
    (tmp_path / "quick-cpu").write_text(text)
    r = CliRunner().invoke(app, ["run", "sweep", "--suite", "quick-cpu", "--dry-run"])
    assert r.exit_code == 0, r.output
    out = " ".join(r.output.split())
    assert "in suite 'quick-cpu'" in out and "shadow" not in out
    assert "note: --suite quick-cpu: took the suite quick-cpu" in out and "pass ./quick-cpu for the file" in out
    r = CliRunner().invoke(app, ["run", "sweep", "--suite", "./quick-cpu", "--dry-run"])  # a path: the file
    assert r.exit_code == 0 and "in suite 'shadow'" in r.output and "note:" not in r.output, r.output
    (tmp_path / "mine").write_text(text)  # no suite of that name: the file, said
    r = CliRunner().invoke(app, ["run", "sweep", "--suite", "mine", "--dry-run"])
    assert r.exit_code == 0 and "in suite 'shadow'" in r.output, r.output
    assert "no suite has that name; took the file mine" in " ".join(r.output.split())
