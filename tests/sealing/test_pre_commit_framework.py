"""The hook through the real pre-commit framework, installed from a copy of this project.

The copy is committed in a temporary repository (tests never rely on the project's own git
state); the framework's environment is built once per run under a temporary PRE_COMMIT_HOME that
every worker shares.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

from tests.conftest import ROOT, built_once
from tests.sealing.conftest import PEOPLE, Study, score_text

pytestmark = pytest.mark.slow

COPY = ["pyproject.toml", "README.md", "LICENSE", ".pre-commit-hooks.yaml", "aoven_git", "schemas",
        "tests/phase2", "hooks"]


@pytest.fixture(scope="session")
def hook_repo(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, str, Path]:
    """The copy of this project committed in a repository, and the framework's home: built once
    per run and shared by every worker (pre-commit locks its own store while it installs the
    hook's environment), so the framework's tests need not queue on one worker."""
    if shutil.which("pre-commit") is None:
        pytest.skip("pre-commit is not installed")
    folder = built_once(tmp_path_factory, "pre-commit", _project_snapshot)
    return folder / "repo", (folder / "rev").read_text().strip(), folder / "home"


def _project_snapshot(folder: Path) -> None:
    """This project's files committed in `folder/repo` (its id in `folder/rev`), `folder/home`
    for PRE_COMMIT_HOME."""
    repo = folder / "repo"
    repo.mkdir()
    (folder / "home").mkdir()
    for name in COPY:
        src = ROOT / name
        if src.is_dir():
            shutil.copytree(src, repo / name, symlinks=True,
                            ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
        elif src.exists():
            (repo / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(src, repo / name)
    if not (repo / "README.md").exists():
        (repo / "README.md").write_text("aoven-git\n")
    env = {**os.environ, "GIT_CONFIG_NOSYSTEM": "1", "GIT_CONFIG_GLOBAL": os.devnull,
           "GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@example.org",
           "GIT_COMMITTER_NAME": "t", "GIT_COMMITTER_EMAIL": "t@example.org"}
    for args in (["init", "-q"], ["add", "-A"], ["commit", "-q", "-m", "snapshot"]):
        subprocess.run(["git", *args], cwd=repo, check=True, env=env, capture_output=True)
    rev = subprocess.run(["git", "rev-parse", "HEAD"], cwd=repo, check=True, env=env,
                         capture_output=True, text=True).stdout.strip()
    (folder / "rev").write_text(rev + "\n")


def run(study: Study, home: Path, who: str, *args: str) -> subprocess.CompletedProcess[str]:
    name, email = PEOPLE[who]
    env = {**os.environ, "PRE_COMMIT_HOME": str(home), "GIT_AUTHOR_NAME": name, "GIT_AUTHOR_EMAIL": email,
           "GIT_COMMITTER_NAME": name, "GIT_COMMITTER_EMAIL": email}
    return subprocess.run(args, cwd=study.path, capture_output=True, text=True, env=env, check=False,
                          timeout=900)


def test_pre_commit_framework_refuses_bad_commit_and_passes_good_one(
        study: Study, hook_repo: tuple[Path, str, Path], monkeypatch: pytest.MonkeyPatch) -> None:
    repo, rev, home = hook_repo
    monkeypatch.setenv("PRE_COMMIT_HOME", str(home))  # commits made by helpers run the hook too
    study.start()
    study.write(".pre-commit-config.yaml",
                f"repos:\n  - repo: {repo}\n    rev: {rev}\n    hooks:\n      - id: aoven-git\n")
    study.by("lead", "pre-commit config", ".pre-commit-config.yaml")
    proc = run(study, home, "lead", "pre-commit", "install")
    assert proc.returncode == 0, proc.stderr

    study.write(study.score_path("cto"), score_text("cto"))
    run(study, home, "cto", "git", "add", study.score_path("cto"))
    bad = run(study, home, "cto", "git", "commit", "-q", "-m", "cto plaintext too early")
    assert bad.returncode != 0, bad.stdout + bad.stderr
    assert "required rater(s) logician have not sealed an overlapping pass in HEAD" in bad.stdout + bad.stderr

    run(study, home, "cto", "git", "reset", "-q")
    study.digest_seal("logician")  # a seal commit, through the framework hook as well
    run(study, home, "cto", "git", "add", study.score_path("cto"))
    good = run(study, home, "cto", "git", "commit", "-q", "-m", "cto content seal")
    assert good.returncode == 0, good.stdout + good.stderr
    assert "aoven-git" in good.stdout + good.stderr  # the framework did run our hook
    assert study.git("log", "-1", "--format=%s") == "cto content seal"
