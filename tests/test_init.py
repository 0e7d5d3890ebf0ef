"""init writes a working study skeleton and never overwrites without --force."""

from __future__ import annotations

from pathlib import Path

from aoven_git.plan import load_plan
from tests.conftest import DEFAULT_PLAN, GitRepo, run_cli


def test_init_writes_a_plan_that_loads_and_keeps_its_comments(git_repo: GitRepo) -> None:
    result = run_cli("init", cwd=git_repo.path)
    assert result.code == 0, result.output
    plan_file = git_repo.path / "aoven.yaml"
    assert plan_file.read_bytes() == DEFAULT_PLAN.read_bytes()
    assert plan_file.read_text().startswith("# yaml-language-server: $schema=.aoven/plan.schema.json")
    assert (git_repo.path / ".aoven" / "plan.schema.json").is_file()
    assert (git_repo.path / ".pre-commit-config.yaml").is_file()
    assert (git_repo.path / "tests" / "phase2" / "README.md").is_file()
    assert load_plan(plan_file).study == "aoven-v0.1"
    assert run_cli("check-plan", cwd=git_repo.path).code == 0


def test_init_refuses_to_overwrite_and_writes_nothing(tmp_path: Path) -> None:
    (tmp_path / ".pre-commit-config.yaml").write_text("repos: []\n")
    result = run_cli("init", "--repo", str(tmp_path))
    assert result.code == 2
    assert ".pre-commit-config.yaml" in result.err and "--force" in result.err
    assert not (tmp_path / "aoven.yaml").exists()
    assert (tmp_path / ".pre-commit-config.yaml").read_text() == "repos: []\n"


def test_init_force_overwrites(tmp_path: Path) -> None:
    (tmp_path / "aoven.yaml").write_text("junk")
    assert run_cli("init", "--repo", str(tmp_path), "--force").code == 0
    assert (tmp_path / "aoven.yaml").read_bytes() == DEFAULT_PLAN.read_bytes()


def test_init_outside_git_says_so(tmp_path: Path) -> None:
    result = run_cli("init", "--repo", str(tmp_path))
    assert result.code == 0
    assert "git init" in result.out
