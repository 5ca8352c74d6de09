"""Write qlabench's published tables from FlashQLA's repository: every `benchmark/benchmark_results_*.txt`
as a CSV in qlabench/analyze/data/, and flashqla_published.json beside them (each table's source file,
commit, header and stack).

    git clone https://github.com/QwenLM/FlashQLA /tmp/FlashQLA
    python scripts/flashqla_published.py /tmp/FlashQLA/.git            # write the tables
    python scripts/flashqla_published.py /tmp/FlashQLA/.git --check    # exit 1 where a shipped one differs

Reads the repository with `git show` at the last commit that changed each results file: the benchmark
script of that commit defines what each case label packs, and its setup.py the flash-qla version. The
times are carried as printed (qlabench/analyze/data/flashqla_text.py); nothing here is typed by hand.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import re
import subprocess
import sys
from pathlib import Path

from qlabench.analyze.data.flashqla_text import parse_results, script_layouts, to_csv
from qlabench.analyze.data.published_tables import MANIFEST

DATA = Path(__file__).resolve().parents[1] / "qlabench" / "analyze" / "data"
RESULTS = re.compile(r"benchmark/benchmark_results_(\w+)\.txt")
SCRIPT = "benchmark/bench_gated_delta_rule.py"
_SETUP_VERSION = re.compile(r"""version\s*=\s*["']([^"']+)["']""")


def git(git_dir: str, *args: str) -> str:
    return subprocess.run(["git", "--git-dir", git_dir, *args], capture_output=True, text=True, check=True).stdout


def tables(git_dir: str, repository: str) -> tuple[dict[str, str], dict]:
    """({csv file name: its text}, the manifest) from the repository's newest commit."""
    files, records = {}, []
    paths = [p for p in git(git_dir, "ls-tree", "-r", "--name-only", "HEAD", "benchmark/").split() if RESULTS.fullmatch(p)]
    for path in sorted(paths):
        commit = git(git_dir, "log", "-1", "--format=%H", "HEAD", "--", path).strip()
        text = git(git_dir, "show", f"{commit}:{path}")
        bench = parse_results(text, script_layouts(git(git_dir, "show", f"{commit}:{SCRIPT}")))
        version = _SETUP_VERSION.search(git(git_dir, "show", f"{commit}:setup.py"))
        if version is None:
            sys.exit(f"{commit}:setup.py names no version")
        name = f"flashqla_{RESULTS.fullmatch(path).group(1).lower()}_published.csv"
        files[name] = to_csv(bench.rows)
        records.append({
            "gpu": bench.gpu, "csv": name, "repository": repository, "path": path, "commit": commit,
            "source_sha256": hashlib.sha256(text.encode()).hexdigest(),
            "csv_sha256": hashlib.sha256(files[name].encode()).hexdigest(),
            "script": SCRIPT, "header": list(bench.header), "config": bench.config, "libraries": bench.libraries,
            "flash_qla_version": version.group(1), "flash_qla_version_from": f"setup.py at {commit[:7]}",
            "modes": list(dict.fromkeys(r["mode"] for r in bench.rows)), "rows": len(bench.rows),
            "notes": list(bench.notes)})
    manifest = {"about": "FlashQLA's published benchmark tables, converted by scripts/flashqla_published.py; "
                         "do not edit by hand", "tables": records}
    return files, manifest


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("git_dir", help="FlashQLA's git directory (a clone's .git, or a bare repository)")
    ap.add_argument("--repository", default="QwenLM/FlashQLA", help="How the source is named in the provenance")
    ap.add_argument("--out", type=Path, default=DATA, help="Folder for the CSVs and the manifest")
    ap.add_argument("--check", action="store_true", help="Write nothing; exit 1 where a file differs")
    args = ap.parse_args()
    files, manifest = tables(args.git_dir, args.repository)
    files[MANIFEST] = json.dumps(manifest, indent=1) + "\n"
    stale = [n for n, t in files.items() if not (args.out / n).is_file() or (args.out / n).read_bytes() != t.encode()]
    for name in stale:
        print(f"{'differs' if args.check else 'wrote'}: {args.out / name}")
        if not args.check:
            (args.out / name).write_bytes(files[name].encode())
    if not stale:
        print(f"{len(files) - 1} tables and {MANIFEST}: up to date in {args.out}")
    return 1 if args.check and stale else 0


if __name__ == "__main__":
    sys.exit(main())
