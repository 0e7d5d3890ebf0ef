"""`seal` seals against the committed plan only: a plan edited in the work tree or staged, and
not committed, is refused before anything is written (docs/commands.md, `seal`)."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.conftest import Result, run_cli
from tests.sealing.conftest import PEOPLE, Study, score_text


def seal_as_cto(s: Study, monkeypatch: pytest.MonkeyPatch, *args: str) -> Result:
    name, email = PEOPLE["cto"]
    for var, value in (("GIT_AUTHOR_NAME", name), ("GIT_AUTHOR_EMAIL", email),
                       ("GIT_COMMITTER_NAME", name), ("GIT_COMMITTER_EMAIL", email)):
        monkeypatch.setenv(var, value)
    return run_cli("seal", "--rater", "cto", *args, cwd=s.path)


@pytest.fixture
def scored(tmp_path: Path) -> Study:
    s = Study(tmp_path / "repo")
    s.start()
    s.write(s.score_path("cto"), score_text("cto"))
    return s


def state(s: Study, home: Path) -> tuple[str, str, str, bytes, list[Path]]:
    return (s.git("rev-parse", "HEAD"), s.git("status", "--porcelain", "--untracked-files=all"),
            s.git("diff", "--cached", "--stat"), (s.path / s.score_path("cto")).read_bytes(),
            sorted(home.rglob("*.md")))


@pytest.mark.parametrize("push", [(), ("--push",)], ids=["", "push"])
@pytest.mark.parametrize("staged", [False, True], ids=["work-tree", "staged"])
def test_seal_refuses_an_uncommitted_plan_change(scored: Study, staged: bool, push: tuple[str, ...],
                                                  tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """With --push the plan is judged before the pull (which would refuse less precisely)."""
    s = scored
    home = tmp_path / "home"
    monkeypatch.setenv("AOVEN_GIT_HOME", str(home))
    plan = (s.path / "aoven.yaml").read_text()
    s.write("aoven.yaml", plan.replace("scale: {min: 0, max: 3}", "scale: {min: 0, max: 4}"))
    if staged:
        s.git("add", "aoven.yaml")
    before = state(s, home)
    res = seal_as_cto(s, monkeypatch, *push)
    assert res.code == 2
    assert "aoven.yaml: the plan differs from the one committed in HEAD" in res.err
    assert "git commit -- aoven.yaml" in res.err and "git checkout HEAD -- aoven.yaml" in res.err
    assert state(s, home) == before
    assert not (s.path / s.seal_path("cto")).exists()


def test_seal_refuses_a_staged_change_undone_in_the_work_tree(scored: Study,
                                                              monkeypatch: pytest.MonkeyPatch) -> None:
    """The index would make the next commit's plan differ from what the seal was checked against."""
    s = scored
    plan = (s.path / "aoven.yaml").read_text()
    s.write("aoven.yaml", plan + "\n# a staged remark\n")
    s.git("add", "aoven.yaml")
    s.write("aoven.yaml", plan)
    assert seal_as_cto(s, monkeypatch).code == 2


def test_seal_with_the_plan_as_committed_seals(scored: Study, monkeypatch: pytest.MonkeyPatch) -> None:
    s = scored
    plan = (s.path / "aoven.yaml").read_text()
    s.write("aoven.yaml", plan + "\n# a remark\n")
    s.by("lead", "plan: a remark", "aoven.yaml")
    res = seal_as_cto(s, monkeypatch)
    assert res.code == 0, res.output
    assert s.git("show", "--name-only", "--format=", "HEAD") == s.seal_path("cto")
