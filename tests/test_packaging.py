"""The wheel ships every package of the code: a package missing from pyproject's explicit list
installs fine in editable mode (the tests' mode) and breaks only for users of the wheel."""

from __future__ import annotations

import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def test_every_package_under_aoven_git_is_listed_in_pyproject() -> None:
    listed = set(tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]["packages"])
    found = {
        ".".join(init.parent.relative_to(ROOT).parts)
        for init in (ROOT / "aoven_git").rglob("__init__.py")
        if not any(part.startswith("_") for part in init.parent.relative_to(ROOT / "aoven_git").parts)
    }
    assert found == listed


def test_every_bundled_study_ships_as_package_data() -> None:
    """`demo --design` reads its study from the package: a bundle folder missing from the
    package-data globs works from a checkout and fails for users of the wheel."""
    setuptools = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]
    globs = setuptools["package-data"]["aoven_git"]
    bundles = sorted(p.name for p in (ROOT / "aoven_git").glob("_example*") if p.is_dir())
    assert {"_example", "_example_arms", "_example_probes"} <= set(bundles)
    for name in bundles:
        assert f"{name}/*" in globs and f"{name}/**/*" in globs, name
        nested = [f for f in (ROOT / "aoven_git" / name).rglob("*") if f.is_file()]
        assert nested, f"{name} is empty"
