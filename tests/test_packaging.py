"""The distribution ships every sub-package and matches the package version."""

import importlib.metadata
import tomllib
from pathlib import Path

import synth

ROOT = Path(synth.__file__).parent


def test_every_package_folder_is_listed_in_pyproject():
    listed = set(tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]["packages"])
    found = {"synth"}
    for init in ROOT.rglob("__init__.py"):
        relative = init.parent.relative_to(ROOT)
        if relative.parts and relative.parts[0] in {"tests", "build", ".venv"}:
            continue
        if relative.parts:
            found.add("synth." + ".".join(relative.parts))
    assert found == listed


def test_installed_version_matches_the_code():
    assert importlib.metadata.version("synth") == synth.__version__
