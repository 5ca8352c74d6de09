"""The product and this repository's publishing stay apart (docs/ARCHITECTURE.md, "The product and this
repository's publishing"): qlabench never imports qlabench_publish, which imports qlabench freely; the publishing
package keeps the package's own rules (no import circle, no module over the size limit, a docstring atop each)."""

from __future__ import annotations

import ast
from pathlib import Path

from test_layers import MAX_MODULE_LINES, circles, import_graph

REPO = Path(__file__).resolve().parents[2]
PRODUCT = REPO / "qlabench"
PUBLISH = REPO / "publish" / "qlabench_publish"


def _imported(path: Path) -> set[str]:
    names = set()
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.ImportFrom) and node.module and not node.level:
            names.add(node.module)
        elif isinstance(node, ast.Import):
            names |= {a.name for a in node.names}
    return names


def test_the_product_never_imports_the_publishing():
    found = [f"{p.relative_to(REPO)}: {m}" for p in sorted(PRODUCT.rglob("*.py")) for m in sorted(_imported(p))
             if m.split(".")[0] == "qlabench_publish"]
    assert found == [], found


def test_the_publishing_has_no_import_circle_and_no_long_module():
    assert circles(import_graph(PUBLISH)) == []
    long = {str(p.relative_to(REPO)): n for p in PUBLISH.rglob("*.py")
            if (n := len(p.read_text().splitlines())) > MAX_MODULE_LINES}
    assert long == {}


def test_every_publishing_module_says_what_it_is_for():
    bare = [str(p.relative_to(REPO)) for p in sorted(PUBLISH.rglob("*.py"))
            if p.read_text().strip() and not ast.get_docstring(ast.parse(p.read_text()))]
    assert bare == [], bare
