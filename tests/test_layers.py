"""The layers run one way: a module imports its own package and the layers below it, never one above."""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
LAYERS = ("core", "kernels", "validators", "generators", "trainers", "pipelines", "flows", "cli")


def _synth_imports(path: Path) -> list[tuple[int, str]]:
    """Every absolute `synth.*` import in a module (top level, inside functions and under TYPE_CHECKING)."""
    found = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            found += [(node.lineno, alias.name) for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            found += [(node.lineno, node.module)]
            if node.module == "synth":
                found += [(node.lineno, f"synth.{alias.name}") for alias in node.names]
    return [(line, name) for line, name in found if name.split(".")[0] == "synth"]


def upward_imports(root: Path = ROOT) -> list[str]:
    """`file:line: module` for each import under `root` that runs up a layer."""
    found = []
    for layer in LAYERS:
        for path in sorted((root / layer).rglob("*.py")):
            for line, name in _synth_imports(path):
                parts = name.split(".")
                target = parts[1] if len(parts) > 1 else None
                if target in LAYERS and LAYERS.index(target) > LAYERS.index(layer):
                    found.append(f"{path.relative_to(root)}:{line}: {name}")
    return found


def test_no_module_imports_a_higher_layer():
    assert upward_imports() == []


def test_the_walk_sees_upward_imports_anywhere_in_a_module(tmp_path):
    (tmp_path / "core").mkdir()
    (tmp_path / "validators").mkdir()
    (tmp_path / "core" / "a.py").write_text("def f():\n    from synth.pipelines.runner import build_pipeline\n")
    (tmp_path / "validators" / "b.py").write_text("import synth.core.steps\nfrom synth import generators\n")
    assert upward_imports(tmp_path) == ["core/a.py:2: synth.pipelines.runner", "validators/b.py:2: synth.generators"]


def test_every_layer_is_a_package_folder():
    assert all((ROOT / layer / "__init__.py").is_file() for layer in LAYERS)
