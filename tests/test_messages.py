"""Messages that name what is wrong and how to fix it (issue "A study a team can finish", item 6):
output suffixes the report cannot write, a dependency missing from the running Python, and the
score-file mistakes people really make."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import ROOT, run_cli

# --------------------------------------------------------------------------- report -o suffixes


@pytest.mark.parametrize("name", ["report.pdf", "report.txt", "Report.DOCX"])
def test_report_refuses_an_output_suffix_it_cannot_write(example_study: Path, tmp_path: Path,
                                                         name: str) -> None:
    target = tmp_path / name
    res = run_cli("report", "-o", str(target), cwd=example_study)
    assert res.code == 2, res.output
    suffix = Path(name).suffix.lower()
    assert f"aoven-git cannot write {suffix} files; the accepted suffixes are .md, .markdown, .json, " \
           ".html, .htm" in res.err
    assert not target.exists()
    assert "Traceback" not in res.output


def test_report_refuses_before_writing_any_of_several_outputs(example_study: Path, tmp_path: Path) -> None:
    good, bad = tmp_path / "report.html", tmp_path / "report.pdf"
    res = run_cli("report", "-o", str(good), "-o", str(bad), cwd=example_study)
    assert res.code == 2 and "cannot write .pdf files" in res.err, res.output
    assert not good.exists() and not bad.exists()


def test_report_without_a_suffix_still_takes_the_format(example_study: Path, tmp_path: Path) -> None:
    target = tmp_path / "summary"
    res = run_cli("report", "--format", "json", "--bootstrap", "0", "-o", str(target), cwd=example_study)
    assert res.code == 0, res.output
    assert target.read_text(encoding="utf-8").startswith("{")


# --------------------------------------------------------------------------- missing dependency

#: run aoven-git as `python -m aoven_git` would, with `blocked` made unimportable
BLOCKER = """\
import importlib.abc, runpy, sys
blocked = sys.argv[1]
class Blocker(importlib.abc.MetaPathFinder):
    def find_spec(self, name, path=None, target=None):
        if name == blocked or name.startswith(blocked + "."):
            raise ModuleNotFoundError(f"No module named {name!r}", name=name)
        return None
sys.meta_path.insert(0, Blocker())
sys.argv = ["aoven-git", *sys.argv[2:]]
runpy.run_module("aoven_git", run_name="__main__", alter_sys=True)
"""


def run_without(module: str, *args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-c", BLOCKER, module, *args], cwd=cwd, capture_output=True,
                          text=True, check=False, env={"PYTHONPATH": str(ROOT), "PATH": "/usr/bin:/bin"})


def assert_names_interpreter_and_fix(proc: subprocess.CompletedProcess[str], module: str,
                                     package: str) -> None:
    assert proc.returncode == 2, proc.stderr
    assert proc.stderr.startswith(f"aoven-git: error: the Python running aoven-git ({sys.executable}) has no "
                                  f"module named '{module}' ({package}, which aoven-git needs)."), proc.stderr
    assert f"Fix: install aoven-git for this Python: {sys.executable} -m pip install aoven-git" in proc.stderr
    assert "bug in aoven-git" not in proc.stderr and "Traceback" not in proc.stderr


def test_a_dependency_a_command_imports_is_named_with_the_interpreter(example_study: Path) -> None:
    proc = run_without("scipy", "report", cwd=example_study)
    assert_names_interpreter_and_fix(proc, "scipy", "scipy")


def test_gitpython_missing_is_named_with_the_interpreter(tmp_path: Path) -> None:
    proc = run_without("git", "demo", "--keep", str(tmp_path / "demo"), cwd=tmp_path)
    assert_names_interpreter_and_fix(proc, "git", "GitPython")


def test_click_missing_before_the_cli_loads_is_named_with_the_interpreter(tmp_path: Path) -> None:
    proc = run_without("click", "--version", cwd=tmp_path)
    assert_names_interpreter_and_fix(proc, "click", "click")


def test_a_missing_module_of_aoven_git_itself_is_still_a_bug(tmp_path: Path) -> None:
    proc = run_without("aoven_git.commands.validate", "validate", cwd=tmp_path)
    assert proc.returncode == 4, proc.stderr
    assert "This is a bug in aoven-git" in proc.stderr
