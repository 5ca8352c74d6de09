"""The package's shape, as docs/ARCHITECTURE.md draws it: layers, allowed arrows, no circles, cheap core.

The import graph is read from the source (every `import`, lazy ones inside functions included), so
an arrow against the layers fails here even when it is only taken at run time.
"""

from __future__ import annotations

import ast
import re
import subprocess
import sys
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parents[1] / "qlabench"

# Bottom to top. A module may import its own layer and the layers below it, except where ALLOWED
# narrows that: the instruments and the backends stand on the data model alone (storing results is
# the run's business), and analysis reads stored results only, so it must not reach measurement,
# backends or runs. docs/ARCHITECTURE.md draws the same graph.
LAYERS = ("core", "store", "measure", "backends", "run", "analyze", "workflows", "cli")
ALLOWED = {layer: set(LAYERS[: i + 1]) for i, layer in enumerate(LAYERS)}
ALLOWED["measure"] = {"core", "measure"}
ALLOWED["backends"] = {"core", "measure", "backends"}
ALLOWED["analyze"] = {"core", "store", "analyze"}

MAX_MODULE_LINES = 400

# Floors inside analyze/ (docs/ARCHITECTURE.md, "Floors of analyze"): a package may import its own modules and
# those of a lower floor, never a higher or an equal one. The evidence layer at the bottom, the views' kit above
# it, the answer to a question (what advise, the site and the study page all rank with) above that, and the views
# on top: each a package with its library entry point, none importing another; what quotes several views is put
# together above them, in the command line (or, for this repository's docs, in publish/: tests/publish/).
ANALYZE_FLOORS = {"evidence": 0, "data": 0, "kit": 1, "answer": 2,
                  "advise": 3, "cold_start": 3, "compare": 3, "layer": 3, "numerics": 3, "plot": 3,
                  "serving": 3, "show": 3, "site": 3, "sm_budget": 3, "study": 3, "large_batch": 3}


def module_name(path: Path, root: Path) -> str:
    parts = list(path.relative_to(root.parent).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def import_graph(root: Path) -> dict[str, set[str]]:
    """module -> the package modules it imports (a `from pkg import sub` counts as importing pkg.sub)."""
    files = {module_name(p, root): p for p in root.rglob("*.py")}
    graph: dict[str, set[str]] = {m: set() for m in files}
    for mod, path in files.items():
        is_pkg = path.name == "__init__.py"
        for node in ast.walk(ast.parse(path.read_text(), str(path))):
            targets: list[str] = []
            if isinstance(node, ast.ImportFrom):
                base = node.module or ""
                if node.level:  # relative: resolve against this module's package
                    pkg = mod.split(".") if is_pkg else mod.split(".")[:-1]
                    pkg = pkg[: len(pkg) - (node.level - 1)]
                    base = ".".join(pkg + ([base] if base else []))
                for alias in node.names:
                    sub = f"{base}.{alias.name}"
                    targets.append(sub if sub in files else base)
            elif isinstance(node, ast.Import):
                targets = [a.name for a in node.names]
            for t in targets:
                if t in files and t != mod:
                    graph[mod].add(t)
    return graph


def layer_of(module: str) -> str | None:
    parts = module.split(".")
    return parts[1] if len(parts) > 1 and parts[1] in LAYERS else None


def arrows_against_layers(graph: dict[str, set[str]]) -> list[str]:
    bad = []
    for mod, targets in graph.items():
        src = layer_of(mod)
        for t in sorted(targets):
            dst = layer_of(t)
            if src and dst and dst not in ALLOWED[src]:
                bad.append(f"{mod} -> {t} ({src} may not import {dst})")
    return bad


def analyze_unit(module: str) -> str | None:
    """'qlabench.analyze.answer.rows' -> 'answer': the package (or top module) of analyze/ a module is in."""
    parts = module.split(".")
    return parts[2] if len(parts) > 2 and parts[1] == "analyze" else None


def arrows_against_floors(graph: dict[str, set[str]]) -> list[str]:
    """Imports inside analyze/ from a floor to one not below it (or from a package no floor holds)."""
    bad = []
    for mod, targets in graph.items():
        src = analyze_unit(mod)
        if src is None:
            continue
        if src not in ANALYZE_FLOORS:
            bad.append(f"{mod}: analyze/{src} is on no floor (tests/test_layers.py: ANALYZE_FLOORS)")
            continue
        for t in sorted(targets):
            dst = analyze_unit(t)
            if dst is None or dst == src:
                continue
            if ANALYZE_FLOORS.get(dst, 99) >= ANALYZE_FLOORS[src]:
                bad.append(f"{mod} -> {t} (analyze/{src} may not import analyze/{dst})")
    return bad


def circles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components of more than one module (Tarjan), each a circle of imports."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in graph.get(v, ()):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                found.append(sorted(comp))

    for v in graph:
        if v not in index:
            visit(v)
    return found


# -- the checks can fail: synthetic graphs --------------------------------------------------------
def test_an_upward_arrow_is_reported():
    g = {"qlabench.core.point": {"qlabench.run.sweep"}, "qlabench.run.sweep": set()}
    assert arrows_against_layers(g) == ["qlabench.core.point -> qlabench.run.sweep (core may not import run)"]


def test_analysis_may_not_reach_backends():
    g = {"qlabench.analyze.report": {"qlabench.backends.fla", "qlabench.store.files"},
         "qlabench.backends.fla": set(), "qlabench.store.files": set()}
    assert len(arrows_against_layers(g)) == 1


def test_instruments_and_backends_may_not_reach_the_store():
    g = {"qlabench.measure.oracle_cache": {"qlabench.store.keys", "qlabench.core.point"},
         "qlabench.backends.fla": {"qlabench.store.files", "qlabench.measure.inputs"},
         "qlabench.store.keys": set(), "qlabench.store.files": set(), "qlabench.core.point": set(),
         "qlabench.measure.inputs": set()}
    assert arrows_against_layers(g) == [
        "qlabench.measure.oracle_cache -> qlabench.store.keys (measure may not import store)",
        "qlabench.backends.fla -> qlabench.store.files (backends may not import store)",
    ]


def test_an_import_up_a_floor_of_analyze_is_reported():
    g = {"qlabench.analyze.evidence.newer": {"qlabench.analyze.compare.kernels"},
         "qlabench.analyze.kit.labels": {"qlabench.analyze.evidence.problem"},
         "qlabench.analyze.answer.ranking": {"qlabench.analyze.kit.ties", "qlabench.analyze.advise.suite"},
         "qlabench.analyze.kit.ties": {"qlabench.analyze.answer.ranking"},
         "qlabench.analyze.show.view": {"qlabench.analyze.answer.answer", "qlabench.analyze.kit.labels"},
         "qlabench.analyze.site.rankings": {"qlabench.analyze.advise.suite", "qlabench.analyze.answer.answer"},
         "qlabench.analyze.answer.rows": {"qlabench.analyze.site.rankings"},
         "qlabench.analyze.newview.x": set()}
    assert sorted(arrows_against_floors(g)) == [
        "qlabench.analyze.answer.ranking -> qlabench.analyze.advise.suite (analyze/answer may not import "
        "analyze/advise)",
        "qlabench.analyze.answer.rows -> qlabench.analyze.site.rankings (analyze/answer may not import analyze/site)",
        "qlabench.analyze.evidence.newer -> qlabench.analyze.compare.kernels (analyze/evidence may not import "
        "analyze/compare)",
        "qlabench.analyze.kit.ties -> qlabench.analyze.answer.ranking (analyze/kit may not import analyze/answer)",
        "qlabench.analyze.newview.x: analyze/newview is on no floor (tests/test_layers.py: ANALYZE_FLOORS)",
        "qlabench.analyze.site.rankings -> qlabench.analyze.advise.suite (analyze/site may not import analyze/advise)"]


def test_no_view_imports_another():
    """A view quoting another view's rendering is refused: the site's serving page is drawn from the section the
    serving view makes, handed to it by the command line, never by importing the serving view's figures."""
    g = {"qlabench.analyze.site.serving": {"qlabench.analyze.serving.figures", "qlabench.analyze.site.html"},
         "qlabench.analyze.cold_start.table": {"qlabench.analyze.serving.frame", "qlabench.analyze.kit.tables"}}
    assert sorted(arrows_against_floors(g)) == [
        "qlabench.analyze.cold_start.table -> qlabench.analyze.serving.frame (analyze/cold_start may not import "
        "analyze/serving)",
        "qlabench.analyze.site.serving -> qlabench.analyze.serving.figures (analyze/site may not import "
        "analyze/serving)"]


def test_the_floors_of_analyze_hold():
    """No import up from the evidence layer, the kit or the answer floor, and no view importing another view
    (docs/ARCHITECTURE.md)."""
    assert arrows_against_floors(import_graph(PACKAGE)) == []


def test_the_architecture_floor_table_names_every_package_and_module():
    """docs/ARCHITECTURE.md's floor table puts each package on its ANALYZE_FLOORS floor and names every module."""
    text = (PACKAGE.parent / "docs" / "ARCHITECTURE.md").read_text().split("## Floors of analyze", 1)[1]
    floors, named = {}, set()
    for floor, packages, holds in re.findall(r"^\| (\d) \| (.+?) \| (.+) \|$", text, re.M):
        packages = re.findall(r"`(\w+)/`", packages)
        floors |= {pkg: int(floor) for pkg in packages}
        for where, files in re.findall(r"`(?:(\w+)/)?\{?([\w,]+)\}?\.py`", holds):
            named |= {f"{where or packages[0]}/{f}.py" for f in files.split(",")}
    assert floors == ANALYZE_FLOORS
    modules = {str(p.relative_to(PACKAGE / "analyze")) for p in (PACKAGE / "analyze").glob("*/*.py")
               if p.name != "__init__.py"}
    assert modules - named == set(), "modules the floor table does not name"
    assert {n for n in named if n.split("/")[0] in floors} - modules == set(), "the table names modules that are gone"


def test_a_circle_is_reported():
    g = {"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}
    assert circles(g) == [["a", "b", "c"]]


def test_relative_and_lazy_imports_are_read(tmp_path):
    pkg = tmp_path / "qlabench"
    (pkg / "core").mkdir(parents=True)
    (pkg / "run").mkdir()
    for f in ("__init__.py", "core/__init__.py", "run/__init__.py", "run/sweep.py"):
        (pkg / f).write_text("")
    (pkg / "core" / "point.py").write_text("def f():\n    from ..run import sweep\n")
    g = import_graph(pkg)
    assert g["qlabench.core.point"] == {"qlabench.run.sweep"}
    assert arrows_against_layers(g)


# -- the package itself ----------------------------------------------------------------------------
def test_every_module_sits_in_a_layer():
    stray = [m for m in import_graph(PACKAGE) if m.count(".") >= 1 and layer_of(m) is None
             and m not in ("qlabench.__main__",)]
    assert stray == [], f"modules outside the layers: {stray}"


def test_no_arrow_runs_against_the_layers():
    assert arrows_against_layers(import_graph(PACKAGE)) == []


def test_the_architecture_table_states_the_allowed_imports():
    text = (PACKAGE.parent / "docs" / "ARCHITECTURE.md").read_text()
    stated = {}
    for layer, may in re.findall(r"^\| `(\w+)/` \| ([^|]+?) \|", text, re.M):
        below = LAYERS[: LAYERS.index(layer)]
        words = {"nothing of qlabench": (), "all of the above": below, "everything": below,
                 "everything but cli": [x for x in LAYERS if x not in ("cli", layer)]}
        stated[layer] = set(words[may] if may in words else may.split(", "))
    assert stated == {layer: ALLOWED[layer] - {layer} for layer in LAYERS}


def test_no_import_circles():
    assert circles(import_graph(PACKAGE)) == []


def test_no_module_over_the_size_limit():
    long = {str(p.relative_to(PACKAGE.parent)): n for p in PACKAGE.rglob("*.py")
            if (n := len(p.read_text().splitlines())) > MAX_MODULE_LINES}
    assert long == {}, f"modules over {MAX_MODULE_LINES} lines: {long}"


def _loaded_after(statement: str) -> set[str]:
    code = f"import sys\n{statement}\nprint(' '.join(sorted(sys.modules)))"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True,
                         cwd=PACKAGE.parent)
    return set(out.stdout.split())


CORE_MODULES = sorted(m for m in import_graph(PACKAGE) if layer_of(m) == "core")


@pytest.mark.parametrize("heavy", ["torch", "pandas", "pyarrow"])
def test_the_data_model_imports_no_heavy_library(heavy):
    loaded = _loaded_after("\n".join(f"import {m}" for m in CORE_MODULES) + "\nimport qlabench")
    assert heavy not in loaded


def test_analysis_and_store_import_no_torch():
    mods = sorted(m for m in import_graph(PACKAGE) if layer_of(m) in ("store", "analyze"))
    assert "torch" not in _loaded_after("\n".join(f"import {m}" for m in mods))


def test_a_new_view_needs_only_the_evidence_layer_and_the_kit(tmp_path, make_row):
    """docs/ARCHITECTURE.md's example view imports evidence, kit and pandas alone, and runs."""
    from qlabench.store.files import write_rows

    doc = (PACKAGE.parent / "docs" / "ARCHITECTURE.md").read_text()
    code = doc.split("## Floors of analyze", 1)[1].split("```python\n", 1)[1].split("```", 1)[0]
    imported = {n.module for n in ast.walk(ast.parse(code)) if isinstance(n, ast.ImportFrom)}
    imported |= {a.name for n in ast.walk(ast.parse(code)) if isinstance(n, ast.Import) for a in n.names}
    assert {m for m in imported if m.startswith("qlabench.")} <= {
        "qlabench.analyze.evidence", "qlabench.analyze.kit.backends", "qlabench.analyze.kit.labels",
        "qlabench.analyze.kit.tables", "qlabench.analyze.kit.ties"}
    assert {m for m in imported if not m.startswith("qlabench.")} == {"pandas"}
    write_rows(tmp_path / "r.parquet", [make_row(backend="naive-chunk", median_ms=1.0, device="NVIDIA H200"),
                                        make_row(backend="naive-recurrent", median_ms=3.0, device="NVIDIA H200")])
    scope: dict = {}
    exec(compile(code, "ARCHITECTURE.md", "exec"), scope)
    text = scope["fastest"]([tmp_path])
    assert "| NVIDIA H200 |" in text and "naive chunked (torch)" in text and "run run-1:" in text
