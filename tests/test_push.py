"""`--push` on seal, reveal, unblind and disagreements --write: pull with rebase, commit, push; a
rejected push is retried once, then explained; a pull that cannot run refuses before committing
(docs/workflow.md, "A team without GitHub"). A real bare remote and the raters' own clones."""

from __future__ import annotations

import subprocess
from dataclasses import dataclass
from pathlib import Path

import pytest

from tests.conftest import Result, run_cli
from tests.sealing.conftest import PEOPLE, Study, score_text


@dataclass
class Team:
    origin: Path
    lead: Study
    cto: Study
    logician: Study

    def remote(self, *args: str) -> str:
        return subprocess.run(["git", "--git-dir", str(self.origin), *args], capture_output=True, text=True,
                              check=True).stdout.strip()


def clone(origin: Path, path: Path) -> Study:
    subprocess.run(["git", "clone", "-q", str(origin), str(path)], check=True, capture_output=True)
    return Study(path)  # `git init` again in a clone changes nothing


def as_(monkeypatch: pytest.MonkeyPatch, who: str, s: Study, *args: str) -> Result:
    name, email = PEOPLE[who]
    for var, value in (("GIT_AUTHOR_NAME", name), ("GIT_AUTHOR_EMAIL", email),
                       ("GIT_COMMITTER_NAME", name), ("GIT_COMMITTER_EMAIL", email)):
        monkeypatch.setenv(var, value)
    return run_cli(*args, cwd=s.path)


@pytest.fixture
def team(tmp_path: Path) -> Team:
    origin = tmp_path / "origin.git"
    subprocess.run(["git", "init", "-q", "--bare", str(origin)], check=True)
    lead = Study(tmp_path / "lead")
    lead.start()
    lead.write("notes.md", "meeting: monday\n")
    lead.by("lead", "notes", "notes.md")
    lead.git("remote", "add", "origin", str(origin))
    lead.git("push", "-q", "-u", "origin", "main")
    return Team(origin, lead, clone(origin, tmp_path / "cto"), clone(origin, tmp_path / "logician"))


def state(s: Study, rater: str) -> tuple[str, str, bytes]:
    return (s.git("rev-parse", "HEAD"), s.git("status", "--porcelain", "--untracked-files=all"),
            (s.path / s.score_path(rater)).read_bytes())


def push_from_on_next_commit(s: Study, other: Study) -> None:
    """A post-commit hook in `s` that pushes `other`'s branch once: someone else pushes between
    the command's commit and its push, as on a busy shared remote."""
    hook = s.path / ".git" / "hooks" / "post-commit"
    flag = s.path / ".git" / "pushed-once"
    hook.write_text("#!/bin/sh\n"
                    f"[ -e '{flag}' ] && exit 0\ntouch '{flag}'\n"
                    "unset GIT_INDEX_FILE GIT_DIR GIT_WORK_TREE\n"
                    f"git -C '{other.path}' push -q origin HEAD:main\n")
    hook.chmod(0o755)


def test_seal_push_puts_the_seal_on_the_remote(team: Team, monkeypatch: pytest.MonkeyPatch) -> None:
    cto = team.cto
    cto.write(cto.score_path("cto"), score_text("cto"))
    res = as_(monkeypatch, "cto", cto, "seal", "--rater", "cto", "--push")
    assert res.code == 0, res.output
    assert team.remote("rev-parse", "main") == cto.git("rev-parse", "HEAD")
    assert team.remote("show", "--name-only", "--format=", "main") == cto.seal_path("cto")
    assert "pushed" in res.out and "origin/main" in res.out
    assert team.remote("ls-tree", "-r", "--name-only", "main").count("scores_cto.md") == 0  # digest only


def test_reveal_push_pulls_the_others_seals_first(team: Team, monkeypatch: pytest.MonkeyPatch) -> None:
    cto, logician = team.cto, team.logician
    cto.write(cto.score_path("cto"), score_text("cto"))
    assert as_(monkeypatch, "cto", cto, "seal", "--rater", "cto", "--push").code == 0
    logician.write(logician.score_path("logician"), score_text("logician", (2, 2)))
    assert as_(monkeypatch, "logician", logician, "seal", "--rater", "logician", "--push").code == 0
    res = as_(monkeypatch, "cto", cto, "reveal", "--rater", "cto")
    assert res.code == 1 and "not every required rater has sealed" in res.err  # the seal is not here yet
    res = as_(monkeypatch, "cto", cto, "reveal", "--rater", "cto", "--push")
    assert res.code == 0, res.output
    assert team.remote("show", "--name-only", "--format=", "main") == cto.score_path("cto")
    res, data = cto.verify()
    assert data["violations"] == [] and res.code == 0, res.output


def test_rejected_push_is_retried_once_and_succeeds(team: Team, monkeypatch: pytest.MonkeyPatch) -> None:
    cto, logician = team.cto, team.logician
    logician.write(logician.score_path("logician"), score_text("logician", (2, 2)))
    assert as_(monkeypatch, "logician", logician, "seal", "--rater", "logician").code == 0  # not pushed yet
    theirs = logician.git("rev-parse", "HEAD")
    push_from_on_next_commit(cto, logician)
    cto.write(cto.score_path("cto"), score_text("cto"))
    res = as_(monkeypatch, "cto", cto, "seal", "--rater", "cto", "--push")
    assert res.code == 0, res.output
    assert "someone had pushed first" in res.out
    ours = cto.git("rev-parse", "HEAD")
    assert team.remote("rev-parse", "main") == ours
    assert cto.git("rev-parse", "HEAD^") == theirs  # rebased onto the seal pushed in between
    assert cto.git("show", "--name-only", "--format=", "HEAD") == cto.seal_path("cto")
    res, data = cto.verify()
    assert data["violations"] == [], res.output


def test_pull_conflict_refuses_before_committing(team: Team, monkeypatch: pytest.MonkeyPatch) -> None:
    cto, logician = team.cto, team.logician
    cto.write("notes.md", "meeting: tuesday\n")
    cto.by("cto", "notes: tuesday", "notes.md")
    logician.write("notes.md", "meeting: friday\n")
    logician.by("logician", "notes: friday", "notes.md")
    logician.git("push", "-q")
    cto.write(cto.score_path("cto"), score_text("cto"))
    before = state(cto, "cto")
    res = as_(monkeypatch, "cto", cto, "seal", "--rater", "cto", "--push")
    assert res.code == 1
    assert "pulling origin/main with rebase failed" in res.err and "Nothing was committed" in res.err
    assert "git pull --rebase" in res.err
    assert state(cto, "cto") == before
    assert not any((cto.path / ".git" / d).exists() for d in ("rebase-merge", "rebase-apply"))


def test_rejected_push_with_a_conflict_is_explained(team: Team, monkeypatch: pytest.MonkeyPatch) -> None:
    """The retry's pull conflicts: the seal stays committed here, unpushed, and the message says
    what to run."""
    cto, logician = team.cto, team.logician
    cto.write("notes.md", "meeting: tuesday\n")
    cto.by("cto", "notes: tuesday", "notes.md")
    logician.write("notes.md", "meeting: friday\n")
    logician.by("logician", "notes: friday", "notes.md")
    push_from_on_next_commit(cto, logician)
    cto.write(cto.score_path("cto"), score_text("cto"))
    res = as_(monkeypatch, "cto", cto, "seal", "--rater", "cto", "--push")
    assert res.code == 1
    assert "someone pushed to origin/main first" in res.err and "is here, not pushed" in res.err
    assert "git pull --rebase" in res.err and "git push" in res.err
    assert cto.git("show", "--name-only", "--format=", "HEAD") == cto.seal_path("cto")
    assert team.remote("rev-parse", "main") == logician.git("rev-parse", "HEAD")
    assert not (cto.path / ".git" / "rebase-merge").exists()


def test_no_upstream_refuses_before_committing(team: Team, monkeypatch: pytest.MonkeyPatch) -> None:
    cto = team.cto
    cto.git("switch", "-q", "-c", "local-only", "--no-track")
    cto.write(cto.score_path("cto"), score_text("cto"))
    before = state(cto, "cto")
    res = as_(monkeypatch, "cto", cto, "seal", "--rater", "cto", "--push")
    assert res.code == 2 and "no upstream" in res.err and "git push -u" in res.err
    assert state(cto, "cto") == before


def test_uncommitted_tracked_change_refuses_before_committing(team: Team,
                                                              monkeypatch: pytest.MonkeyPatch) -> None:
    cto = team.cto
    cto.write("notes.md", "meeting: tuesday\n")
    cto.write(cto.score_path("cto"), score_text("cto"))
    before = state(cto, "cto")
    res = as_(monkeypatch, "cto", cto, "seal", "--rater", "cto", "--push")
    assert res.code == 1 and "uncommitted changes to notes.md" in res.err and "stash" in res.err
    assert state(cto, "cto") == before


def test_push_and_no_commit_is_a_usage_error(team: Team, monkeypatch: pytest.MonkeyPatch) -> None:
    cto = team.cto
    cto.write(cto.score_path("cto"), score_text("cto"))
    before = state(cto, "cto")
    res = as_(monkeypatch, "cto", cto, "seal", "--rater", "cto", "--push", "--no-commit")
    assert res.code == 2 and state(cto, "cto") == before


@pytest.fixture
def revealed(team: Team) -> Team:
    """Both raters sealed and revealed on the remote, every cell flagged (spread 2)."""
    lead = team.lead
    lead.digest_seal("cto", (1, 2))
    lead.digest_seal("logician", (3, 0))
    lead.reveal("cto")
    lead.reveal("logician")
    lead.git("push", "-q")
    for s in (team.cto, team.logician):
        s.git("pull", "-q", "--rebase")
    return team


def test_disagreements_write_push_merges_both_raters_rows(revealed: Team,
                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    cto, logician = revealed.cto, revealed.logician
    rec = "study/reconciliation.md"
    res = as_(monkeypatch, "logician", logician, "disagreements", "--write")  # written, not committed
    assert res.code == 0 and (logician.path / rec).is_file(), res.output
    logician.git("add", rec)  # staged as workflow.md says for a new file: carried across all the same
    res = as_(monkeypatch, "cto", cto, "disagreements", "--write", "--push")
    assert res.code == 0, res.output
    assert f"committed {rec}" in res.out and "pushed" in res.out
    res = as_(monkeypatch, "logician", logician, "disagreements", "--write", "--push")
    assert res.code == 0, res.output
    text = revealed.remote("show", f"main:{rec}")
    assert text.count("| cto |") == 8 and text.count("| logician |") == 8
    assert text.count("# Reconciliation") == 1
    authors = revealed.remote("log", "--format=%ae", "main", "--", rec).split()
    assert authors == ["logician@example.org", "cto@example.org"]


def test_disagreements_push_needs_write(revealed: Team, monkeypatch: pytest.MonkeyPatch) -> None:
    res = as_(monkeypatch, "cto", revealed.cto, "disagreements", "--push")
    assert res.code == 2 and "--write" in res.err


def test_disagreements_push_refuses_both_sides_editing_one_row(revealed: Team,
                                                               monkeypatch: pytest.MonkeyPatch) -> None:
    """Someone else pushed an edit of cto's own row while cto edited it: never two rows for one
    cell and rater; nothing committed, cto's edit kept."""
    cto, logician = revealed.cto, revealed.logician
    rec = "study/reconciliation.md"
    assert as_(monkeypatch, "cto", cto, "disagreements", "--write", "--push").code == 0
    logician.git("pull", "-q", "--rebase")
    path = logician.path / rec
    path.write_text(path.read_text().replace("| Q1/A/D1 | cto |  |  |", "| Q1/A/D1 | cto | \"x\" | 1 |"))
    logician.by("logician", "edit cto's row", rec)
    logician.git("push", "-q")
    mine = (cto.path / rec).read_text().replace("| Q1/A/D1 | cto |  |  |", "| Q1/A/D1 | cto | \"y\" | 2 |")
    (cto.path / rec).write_text(mine)
    head = cto.git("rev-parse", "HEAD")
    res = as_(monkeypatch, "cto", cto, "disagreements", "--write", "--push")
    assert res.code == 1 and "cannot be merged" in res.err and "Nothing was committed" in res.err
    assert cto.git("rev-parse", "HEAD") == head and (cto.path / rec).read_text() == mine


def test_unblind_push_is_offered(team: Team) -> None:
    """unblind takes --push like the other committing commands (its refusals run before the pull)."""
    res = run_cli("unblind", "--help", cwd=team.cto.path)
    assert res.code == 0 and "--push" in res.out
    res = run_cli("unblind", "--pass", "unblinded", "--key", "nope.json", "--push", cwd=team.cto.path)
    assert res.code == 2 and team.cto.git("rev-parse", "HEAD") == team.remote("rev-parse", "main")


def test_attack_a_reveal_pushed_in_between_keeps_the_seal_unpushed(team: Team,
                                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    """Logician reveals (without waiting for cto's seal) and pushes while cto's `seal --push` is
    between its commit and its push: rebased onto that reveal, cto's seal would be
    visible-at-seal, so it is not pushed."""
    cto, logician = team.cto, team.logician
    logician.digest_seal("logician")
    logician.reveal("logician")
    push_from_on_next_commit(cto, logician)
    cto.write(cto.score_path("cto"), score_text("cto"))
    res = as_(monkeypatch, "cto", cto, "seal", "--rater", "cto", "--push")
    assert res.code == 1
    assert "visible-at-seal" in res.err and "is here, not pushed" in res.err
    assert team.remote("rev-parse", "main") == logician.git("rev-parse", "HEAD")
    assert team.remote("ls-tree", "-r", "--name-only", "main").count("scores_cto.sha256") == 0


def test_unblind_push_pulls_the_seals_then_pushes_the_key(tmp_path: Path,
                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    """The lead's clone is behind the raters' seals: `unblind --push` pulls them, commits the key
    and pushes it."""
    from aoven_git.blinding import BlindKey, parse_key
    from tests.test_blind_e2e import KEY_JSON, BlindStudy

    origin = tmp_path / "origin.git"
    subprocess.run(["git", "init", "-q", "--bare", str(origin)], check=True)
    raters = BlindStudy(tmp_path / "raters", monkeypatch)
    raters.start()
    key_file = tmp_path / "keys" / "hidden.json"
    assert raters.run("lead", "blind", "--pass", "hidden", "--key-out", str(key_file)).code == 0
    key = parse_key(key_file.read_bytes(), pass_id="hidden")
    assert isinstance(key, BlindKey)
    raters.git("remote", "add", "origin", str(origin))
    raters.git("push", "-q", "-u", "origin", "main")
    subprocess.run(["git", "clone", "-q", str(origin), str(tmp_path / "lead")], check=True)
    lead = BlindStudy(tmp_path / "lead", monkeypatch)
    for rater in ("cto", "logician"):
        raters.seal_all(rater, key)
    raters.git("push", "-q")
    res = lead.run("lead", "unblind", "--pass", "hidden", "--key", str(key_file))
    assert res.code == 1 and "missing: cto, logician" in res.err  # the seals are not here yet
    res = lead.run("lead", "unblind", "--pass", "hidden", "--key", str(key_file), "--push")
    assert res.code == 0, res.output
    assert subprocess.run(["git", "--git-dir", str(origin), "show", "--name-only", "--format=", "main"],
                          capture_output=True, text=True, check=True).stdout.strip() == KEY_JSON
    assert lead.git("rev-parse", "HEAD") == subprocess.run(
        ["git", "--git-dir", str(origin), "rev-parse", "main"], capture_output=True, text=True,
        check=True).stdout.strip()


def test_unreachable_remote_refuses_before_committing(team: Team, monkeypatch: pytest.MonkeyPatch) -> None:
    cto = team.cto
    cto.git("remote", "set-url", "origin", str(team.origin.parent / "gone.git"))
    cto.write(cto.score_path("cto"), score_text("cto"))
    before = state(cto, "cto")
    res = as_(monkeypatch, "cto", cto, "seal", "--rater", "cto", "--push")
    assert res.code == 2 and "could not fetch from origin" in res.err and "Nothing was committed" in res.err
    assert state(cto, "cto") == before
