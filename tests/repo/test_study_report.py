"""The committed study page is what the command written at its top produces from the committed evidence:
the page a reader opens and the page `qlabench report` makes never disagree (they did: 97 against 111 of 203
rows within 10%)."""

from __future__ import annotations

import re
import shlex
from pathlib import Path

from qlabench.analyze.study import study_from_paths, write_report
from qlabench.store.files import read_results

REPO = next(p for p in Path(__file__).resolve().parents if (p / "pyproject.toml").is_file())
PAGE = REPO / "docs" / "flashqla-study" / "report.md"


def _command() -> list[str]:
    m = re.search(r"^Made by `(qlabench report [^`]+)`\.$", PAGE.read_text(), re.M)
    assert m, f"{PAGE} does not say which command made it"
    return shlex.split(m.group(1))


def _options(args: list[str]) -> tuple[list[str], dict[str, list[str]]]:
    results, opts, it = [], {}, iter(args[2:])
    for a in it:
        if a.startswith("--"):
            opts.setdefault(a, []).append(next(it))
        else:
            results.append(a)
    return results, opts


def test_the_committed_study_page_is_what_its_command_produces(tmp_path, monkeypatch):
    monkeypatch.chdir(REPO)
    args = _command()
    results, opts = _options(args)
    assert opts.get("--out") == ["docs/flashqla-study"]
    gpu = opts.get("--gpu", [None])[-1]
    study = study_from_paths(results, numerics=opts.get("--numerics", ()), command=shlex.join(args), gpu=gpu)
    layer = read_results(opts["--layer"]) if "--layer" in opts else None
    page = write_report(study, tmp_path, layer).page.read_text()
    assert page == PAGE.read_text(), "docs/flashqla-study/report.md is stale: run the command at its top"
