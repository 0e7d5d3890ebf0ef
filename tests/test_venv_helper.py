"""The test suite's own virtual-environment helper must work when the tests run inside a virtual
environment (what the README's commands produce for most users), not only from a base interpreter
that happens to hold every package."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

from tests.test_team_workflow import make_venv

IMPORTS = "import click, git, jsonschema, ruamel.yaml, aoven_git.cli; print(aoven_git.__file__)"


def _run(python: Path, cwd: Path) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV", "PYTHONHOME")}
    return subprocess.run([str(python), "-c", IMPORTS], cwd=cwd, env=env, capture_output=True, text=True,
                          check=False)


def test_venv_with_aoven_git_sees_the_running_interpreters_packages(tmp_path: Path) -> None:
    """No PYTHONPATH, outside the checkout: only the helper's site directories can supply them."""
    python = make_venv(tmp_path / "with", with_aoven_git=True)
    proc = _run(python, tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip().endswith("aoven_git/__init__.py")


def test_venv_without_aoven_git_is_bare(tmp_path: Path) -> None:
    python = make_venv(tmp_path / "bare", with_aoven_git=False)
    proc = _run(python, tmp_path)
    assert proc.returncode == 1
    assert "No module named" in proc.stderr
