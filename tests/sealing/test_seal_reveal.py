"""`aoven-git seal` / `reveal` end to end, through the CLI, with the hook installed."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path

import pytest

from aoven_git.seals import parse_seal, sha256
from tests.conftest import EXAMPLE, GitRepo, Result, run_cli
from tests.sealing.conftest import PEOPLE, Study, codes, score_text


def as_rater(monkeypatch: pytest.MonkeyPatch, who: str) -> None:
    name, email = PEOPLE[who]
    for var, value in (("GIT_AUTHOR_NAME", name), ("GIT_AUTHOR_EMAIL", email),
                       ("GIT_COMMITTER_NAME", name), ("GIT_COMMITTER_EMAIL", email)):
        monkeypatch.setenv(var, value)


def cli(study: Study, monkeypatch: pytest.MonkeyPatch, who: str, *args: str) -> Result:
    as_rater(monkeypatch, who)
    return run_cli(*args, cwd=study.path)


@pytest.fixture
def hooked(study: Study, monkeypatch: pytest.MonkeyPatch) -> Study:
    study.start()
    res = cli(study, monkeypatch, "lead", "install-hook")
    assert res.code == 0, res.output
    return study


def snapshot(study: Study) -> tuple[str, str, str]:
    return (study.git("rev-parse", "HEAD"), study.git("status", "--porcelain", "--untracked-files=all"),
            study.git("diff", "--cached", "--stat"))


def test_full_digest_workflow(hooked: Study, monkeypatch: pytest.MonkeyPatch) -> None:
    s = hooked
    s.write(s.score_path("cto"), score_text("cto"))
    s.write(s.score_path("logician"), score_text("logician", (2, 2)))
    res = cli(s, monkeypatch, "cto", "seal", "--rater", "cto")
    assert res.code == 0, res.output
    seal_commit = s.git("rev-parse", "HEAD")
    assert s.git("show", "--name-only", "--format=", seal_commit) == s.seal_path("cto")
    assert "Aoven-Seal: cto/unblinded/main" in s.git("log", "-1", "--format=%B")
    data = (s.path / s.score_path("cto")).read_bytes()
    assert b"\nnonce: " in data  # a random nonce makes the digest unguessable
    seal = parse_seal((s.path / s.seal_path("cto")).read_bytes())
    assert not isinstance(seal, tuple) and seal.digest == sha256(data)
    if shutil.which("sha256sum"):  # auditable with coreutils
        proc = subprocess.run(["sha256sum", "-c", "seals/scores_cto.sha256"], cwd=s.path / "study",
                              capture_output=True, text=True, check=False)
        assert proc.returncode == 0 and "scores_cto.md: OK" in proc.stdout

    # committing the plaintext now is refused by the hook: logician has not sealed
    s.git("add", s.score_path("cto"))
    proc = subprocess.run(["git", "commit", "-q", "-m", "cto plaintext"], cwd=s.path, capture_output=True,
                          text=True, check=False, env={**os.environ})
    assert proc.returncode != 0
    assert "required rater(s) logician have not sealed" in proc.stderr
    # cto has sealed already: the hint is to wait, then reveal (not to seal again)
    assert "cto has sealed: wait until they have too, then run `aoven-git reveal --rater cto`" in proc.stderr
    s.git("reset", "-q", "--", s.score_path("cto"))

    # reveal refuses too, changing nothing
    before = snapshot(s)
    res = cli(s, monkeypatch, "cto", "reveal", "--rater", "cto")
    assert res.code == 1 and "missing: logician" in res.err
    assert snapshot(s) == before

    res = cli(s, monkeypatch, "logician", "seal", "--rater", "logician")
    assert res.code == 0, res.output
    for r in ("cto", "logician"):
        res = cli(s, monkeypatch, r, "reveal", "--rater", r)
        assert res.code == 0, res.output
        assert s.git("show", "--name-only", "--format=", "HEAD") == s.score_path(r)
    res = run_cli("verify-seal", "--format", "json", cwd=s.path)
    data = json.loads(res.out)
    assert res.code == 0 and data["status"] == "complete" and codes(data) == []
    assert {x["kind"] for x in data["seals"]} == {"digest"} and all(x["revealed"] for x in data["seals"])


def test_seal_no_commit_only_stages(hooked: Study, monkeypatch: pytest.MonkeyPatch) -> None:
    s = hooked
    s.write(s.score_path("cto"), score_text("cto"))
    head = s.git("rev-parse", "HEAD")
    res = cli(s, monkeypatch, "cto", "seal", "--rater", "cto", "--no-commit")
    assert res.code == 0, res.output
    assert s.git("rev-parse", "HEAD") == head
    assert s.git("diff", "--cached", "--name-only") == s.seal_path("cto")


def test_seal_with_file_argument(hooked: Study, monkeypatch: pytest.MonkeyPatch) -> None:
    s = hooked
    s.write(s.score_path("cto"), score_text("cto"))
    res = cli(s, monkeypatch, "cto", "seal", "study/scores_cto.md")
    assert res.code == 0, res.output
    assert (s.path / s.seal_path("cto")).exists()


def test_seal_refuses_invalid_score_file_and_changes_nothing(hooked: Study,
                                                             monkeypatch: pytest.MonkeyPatch) -> None:
    s = hooked
    text = score_text("cto").replace("| Q2 | B | 1 | 2 | 3 |", "| Q2 | B | 7 | 2 | 9 |")
    s.write(s.score_path("cto"), text)
    before = snapshot(s)
    res = cli(s, monkeypatch, "cto", "seal", "--rater", "cto")
    assert res.code == 1
    assert "not valid" in res.err and "study/scores_cto.md:" in res.err
    assert snapshot(s) == before
    assert (s.path / s.score_path("cto")).read_text() == text
    assert not (s.path / s.seal_path("cto")).exists()


@pytest.mark.parametrize(("args", "code", "message"), [
    (("--rater", "mallory"), 2, "unknown rater 'mallory'"),
    (("--rater", "cto", "--pass", "nope"), 2, "unknown pass 'nope'"),
    (("--rater", "cto", "--round", "nope"), 2, "unknown round 'nope'"),
    (("notes/scores_cto.md",), 2, "outside the study dir"),
    (("study/test_a/q1.md",), 2, "is not a score file"),
    ((), 2, "say which rater"),
])
def test_seal_usage_errors(hooked: Study, monkeypatch: pytest.MonkeyPatch, args: tuple[str, ...],
                           code: int, message: str) -> None:
    hooked.write("notes/scores_cto.md", score_text("cto"))
    before = snapshot(hooked)
    res = cli(hooked, monkeypatch, "cto", "seal", *args)
    assert res.code == code, res.output
    assert message in res.err
    assert snapshot(hooked) == before


def test_seal_refuses_missing_symlinked_and_committed_files(hooked: Study,
                                                            monkeypatch: pytest.MonkeyPatch) -> None:
    s = hooked
    res = cli(s, monkeypatch, "cto", "seal", "--rater", "cto")
    assert res.code == 1 and "does not exist" in res.err
    s.write("study/real.md", score_text("cto"))
    os.symlink("real.md", s.path / s.score_path("cto"))
    res = cli(s, monkeypatch, "cto", "seal", "--rater", "cto")
    assert res.code == 1 and "symbolic link" in res.err
    assert not (s.path / s.seal_path("cto")).exists()
    s.write(s.score_path("logician"), score_text("logician"))
    s.git("add", s.score_path("logician"))
    s.git("commit", "-q", "--no-verify", "-m", "content seal", author=PEOPLE["logician"])
    res = cli(s, monkeypatch, "logician", "seal", "--rater", "logician")
    assert res.code == 1 and "already committed" in res.err


def test_seal_refuses_foreign_identity(hooked: Study, monkeypatch: pytest.MonkeyPatch) -> None:
    s = hooked
    s.write(s.score_path("cto"), score_text("cto"))
    before = snapshot(s)
    res = cli(s, monkeypatch, "logician", "seal", "--rater", "cto")
    assert res.code == 1 and "unauthorized-author" in res.err
    assert snapshot(s) == before
    assert b"nonce" not in (s.path / s.score_path("cto")).read_bytes()


def test_reveal_refuses_changed_file_and_unsealed(hooked: Study, monkeypatch: pytest.MonkeyPatch) -> None:
    s = hooked
    s.write(s.score_path("cto"), score_text("cto"))
    res = cli(s, monkeypatch, "cto", "reveal", "--rater", "cto")
    assert res.code == 1 and "not sealed in HEAD" in res.err
    assert cli(s, monkeypatch, "cto", "seal", "--rater", "cto").code == 0
    s.write(s.score_path("logician"), score_text("logician"))
    assert cli(s, monkeypatch, "logician", "seal", "--rater", "logician").code == 0
    path = s.path / s.score_path("cto")
    sealed = path.read_text()
    path.write_text(sealed.replace("| Q1 | A | 1 | 2 | 3 |", "| Q1 | A | 0 | 2 | 2 |"))
    before = snapshot(s)
    res = cli(s, monkeypatch, "cto", "reveal", "--rater", "cto")
    assert res.code == 1 and "changed since it was sealed" in res.err
    assert snapshot(s) == before
    path.write_text(sealed)
    assert cli(s, monkeypatch, "cto", "reveal", "--rater", "cto").code == 0
    res = cli(s, monkeypatch, "cto", "reveal", "--rater", "cto")
    assert res.code == 1 and "already committed" in res.err


def test_forced_reveal_is_recorded(hooked: Study, monkeypatch: pytest.MonkeyPatch) -> None:
    s = hooked
    s.write(s.score_path("cto"), score_text("cto"))
    assert cli(s, monkeypatch, "cto", "seal", "--rater", "cto").code == 0
    res = cli(s, monkeypatch, "cto", "reveal", "--rater", "cto", "--force")
    assert res.code == 0, res.output
    assert "revealed before logician sealed" in res.err
    forced = s.git("rev-parse", "HEAD")
    assert "Aoven-Force: reveal" in s.git("log", "-1", "--format=%B")
    res = run_cli("verify-seal", "--format", "json", cwd=s.path)
    data = json.loads(res.out)
    assert res.code == 0 and data["status"] == "pending"
    assert data["forced_reveals"] == [
        {"rater": "cto", "pass": "unblinded", "round": "main", "commit": forced, "unsealed": ["logician"]}]


def test_not_a_repository(tmp_path: Path) -> None:
    (tmp_path / "aoven.yaml").write_text("version: 1\n")
    for cmd in ("seal", "reveal"):
        res = run_cli(cmd, "--rater", "cto", cwd=tmp_path)
        assert res.code == 3 and "not a git repository" in res.err


def test_seal_unstages_a_plaintext_copy_left_in_the_index(
    hooked: Study, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A rater whose plaintext commit the hook refused still has the file staged; sealing must not
    leave that nonce-less copy in the index for the next `git commit` to publish."""
    s = hooked
    s.write(s.score_path("cto"), score_text("cto"))
    s.git("add", s.score_path("cto"))
    res = cli(s, monkeypatch, "cto", "seal", "--rater", "cto", "--pass", "unblinded")
    assert res.code == 0, res.output
    assert "unstaged again" in res.out
    assert s.git("diff", "--cached", "--name-only") == ""
    assert s.git("show", "--name-only", "--format=", "HEAD") == s.seal_path("cto")
    assert b"\nnonce: " in (s.path / s.score_path("cto")).read_bytes()  # the work-tree copy stays


def test_seal_hint_names_the_pass_to_reveal(tmp_path: Path) -> None:
    """After sealing a non-primary pass the printed reveal command must name that pass: the bare
    `reveal --rater cto` would reveal (or refuse) the primary pass instead."""
    repo = GitRepo(tmp_path / "study")
    shutil.copy(EXAMPLE / "aoven.yaml", repo.path / "aoven.yaml")
    for sub in ("test_a", "test_b", "test_b_stripped"):
        shutil.copytree(EXAMPLE / sub, repo.path / "tests" / "phase2" / sub)
    repo.commit("plan and responses", author=("Lead", "lead@example.org"))
    shutil.copy(EXAMPLE / "scores_cto_blinded.md", repo.path / "tests" / "phase2" / "scores_cto_blinded.md")
    repo.git("config", "user.email", "cto@example.org")
    res = run_cli("seal", "--rater", "cto", "--pass", "blinded", cwd=repo.path)
    assert res.code == 0, res.output
    assert "aoven-git reveal --rater cto --pass blinded" in res.out
