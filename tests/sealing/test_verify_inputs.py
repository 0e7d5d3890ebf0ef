"""Bad input and edge histories: clear messages, the documented exit codes, constant git calls."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest

from aoven_git import gitio
from aoven_git.sealing import verify
from tests.conftest import run_cli
from tests.sealing.conftest import PEOPLE, Study, codes, score_text


def test_not_a_git_repository(tmp_path: Path) -> None:
    (tmp_path / "aoven.yaml").write_text("version: 1\n")
    res = run_cli("verify-seal", cwd=tmp_path)
    assert res.code == 3
    assert "not a git repository" in res.err
    assert "Traceback" not in res.output


def test_unknown_revision(study: Study) -> None:
    study.start()
    res = run_cli("verify-seal", "--rev", "no-such-branch", cwd=study.path)
    assert res.code == 2
    assert "unknown revision 'no-such-branch'" in res.err


def test_option_looking_revision_is_not_passed_to_git(study: Study) -> None:
    study.start()
    res = run_cli("verify-seal", "--rev=--output=/tmp/x", cwd=study.path)
    assert res.code == 2 and "unknown revision" in res.err


@pytest.mark.parametrize("what", ["tree", "blob"])
def test_revision_naming_a_tree_or_blob_is_named_as_such(study: Study, what: str) -> None:
    study.start()
    sha = study.git("rev-parse", "HEAD^{tree}" if what == "tree" else "HEAD:aoven.yaml")
    res = run_cli("verify-seal", "--rev", sha, cwd=study.path)
    assert res.code == 2 and f"names a {what}, not a commit" in res.err
    assert "Traceback" not in res.output


def test_annotated_tag_and_detached_head_verify(study: Study) -> None:
    study.start()
    sealed = study.digest_seal("cto")
    study.git("tag", "-a", "sealed", "-m", "all sealed")
    study.git("checkout", "-q", "--detach", "HEAD")
    for args in (("--rev", "sealed"), ()):
        res, data = study.verify(*args)
        assert res.code == 0 and data["commit"] == sealed and data["status"] == "pending"


def test_repository_without_commits(study: Study) -> None:
    study.write("aoven.yaml", "version: 1\n")
    res = run_cli("verify-seal", cwd=study.path)
    assert res.code == 2 and "HEAD has no commit yet" in res.err
    assert "Traceback" not in res.output


def test_plan_not_committed(study: Study) -> None:
    study.write("README.md", "x")
    study.by("lead", "start")
    study.write("aoven.yaml", "version: 1\n")
    res = run_cli("verify-seal", cwd=study.path)
    assert res.code == 2
    assert "not committed" in res.err


def test_verify_older_revision(study: Study) -> None:
    study.start()
    first = study.digest_seal("cto")
    study.content_seal("logician")
    study.git("rm", "-q", study.seal_path("cto"))
    study.by("cto", "remove seal")
    _, data = study.verify()
    assert codes(data) == [("deleted-after-seal", "cto")]
    res, data = study.verify("--rev", first)
    assert res.code == 0 and data["status"] == "pending" and data["commit"] == first


def test_shallow_clone_exit_3(study: Study, tmp_path: Path) -> None:
    study.start()
    study.digest_seal("cto")
    study.digest_seal("logician")
    clone = tmp_path / "shallow"
    subprocess.run(["git", "clone", "-q", "--depth", "1", f"file://{study.path}", str(clone)], check=True)
    res = run_cli("verify-seal", cwd=clone)
    assert res.code == 3
    assert "shallow" in res.err and "fetch" in res.err
    res = run_cli("verify-seal", "--format", "json", cwd=clone)
    data = json.loads(res.out)
    assert res.code == 3 and data["ok"] is False and codes(data) == [("shallow-history", None)]


def test_corrupt_seal_file(study: Study) -> None:
    study.start()
    study.write(study.seal_path("cto"), "deadbeef  scores_cto.md\n")
    bad = study.by("cto", "hand-made seal")
    study.digest_seal("logician")
    res, data = study.verify()
    assert res.code == 1
    assert codes(data) == [("corrupt-seal", "cto")]
    v = data["violations"][0]
    assert v["commit"] == bad and v["message"].startswith("study/seals/scores_cto.sha256:1:")


def test_seal_file_naming_the_wrong_sheet(study: Study) -> None:
    from aoven_git.model import SheetId
    from aoven_git.seals import format_seal

    study.start()
    wrong = SheetId("logician", "unblinded", "main")
    study.write(study.seal_path("cto"), format_seal("0" * 64, "scores_cto.md", wrong))
    study.by("cto", "copy-paste seal")
    _, data = study.verify()
    assert codes(data) == [("corrupt-seal", "cto")]
    assert "names logician/unblinded/main" in data["violations"][0]["message"]


def test_seal_file_for_unknown_rater(study: Study) -> None:
    study.start()
    study.write("study/seals/scores_mallory.sha256", f"{'a' * 64}  scores_mallory.md\n")
    bad = study.by("lead", "who is mallory")
    res, data = study.verify()
    assert res.code == 1
    assert codes(data) == [("corrupt-seal", None)]
    assert data["violations"][0]["commit"] == bad
    assert "scores_mallory.sha256 names no rater" in data["violations"][0]["message"]


def test_score_file_for_unknown_rater(study: Study) -> None:
    study.start()
    study.write("study/scores_mallory.md", score_text("mallory"))
    study.by("lead", "unknown rater")
    _, data = study.verify()
    assert codes(data) == [("stray-scores", None)]
    assert "`mallory` names no rater of the plan" in data["violations"][0]["message"]


def test_symlinked_score_file(study: Study) -> None:
    study.start()
    study.digest_seal("logician")
    study.write("elsewhere.txt", "a file outside the study dir\n")
    os.symlink("../elsewhere.txt", study.path / "study/scores_cto.md")
    bad = study.by("cto", "link", "study")
    res, data = study.verify()
    assert res.code == 1
    assert codes(data) == [("symlink", "cto")]
    assert data["violations"][0]["commit"] == bad


def test_score_file_outside_study_dir_is_a_stray_copy(study: Study) -> None:
    """Outside the study folder a copy is found by its content (docs/sealing.md, "Copies of
    scores"): this one states cto's cells, recognised once cto's sheet is revealed."""
    study.start()
    study.digest_seal("cto")
    study.write("notes/scores_cto.md", score_text("cto"))
    copy = study.by("lead", "someone's copy elsewhere")
    study.digest_seal("logician")
    study.reveal("cto")
    res, data = study.verify()
    assert res.code == 1
    assert codes(data) == [("stray-scores", "cto"), ("visible-at-seal", "logician")]
    assert [v["commit"] for v in data["violations"] if v["code"] == "stray-scores"] == [copy]


def test_merge_of_unrelated_history_whose_first_parent_never_had_the_study(study: Study) -> None:
    """The merge's diff is against a first parent outside the path-limited history: its state
    is read from the tree, so a sealed file dropped by that merge is still caught."""
    study.start()
    study.content_seal("cto")
    study.git("checkout", "-q", "--orphan", "other")
    study.git("rm", "-q", "-rf", ".")
    study.write("other.txt", "unrelated project")
    study.by("lead", "unrelated root")
    study.git("merge", "-q", "--no-commit", "--allow-unrelated-histories", "main")
    study.git("rm", "-q", "--cached", "study/scores_cto.md")
    (study.path / "study/scores_cto.md").unlink()
    merge = study.by("lead", "merge main, dropping cto's file")
    _, data = study.verify()
    assert ("deleted-after-seal", "cto") in codes(data)
    assert [v["commit"] for v in data["violations"] if v["code"] == "deleted-after-seal"] == [merge]


def test_constant_number_of_git_calls(study: Study, monkeypatch: pytest.MonkeyPatch) -> None:
    calls: list[list[str]] = []
    real = gitio.run_git

    def counting(args: list[str], *a: object, **k: object) -> subprocess.CompletedProcess[bytes]:
        calls.append(args)
        return real(args, *a, **k)  # type: ignore[arg-type]

    monkeypatch.setattr(gitio, "run_git", counting)
    study.start()
    study.digest_seal("cto")
    verify(study.path, "aoven.yaml")
    small = len(calls)
    for i in range(30):
        study.write(f"study/notes{i % 3}.txt", f"note {i}")
        study.by("lead", f"note {i}")
        if i % 10 == 0:
            study.branch(f"b{i}")
            study.write(f"study/side{i}.txt", "x")
            study.by("lead", "side")
            study.checkout("main")
            study.merge(f"b{i}")
    study.digest_seal("logician")
    study.reveal("cto")
    study.reveal("logician")
    calls.clear()
    report = verify(study.path, "aoven.yaml")  # with the history cache of the first verify
    assert report.ok and len(report.seals) == 2
    # a re-verify adds `merge-base --is-ancestor` and `rev-list` of the new commits, whatever
    # their number, and walks only those (docs/sealing.md, "The history cache")
    assert len(calls) == small + 2 == report.git_calls
    walks = [c[0] for c in calls if c[0] in ("log", "merge-base", "rev-list")]
    assert walks == ["merge-base", "rev-list", "log"]
    assert (study.path / ".git" / "aoven-git" / "history.cache").is_file()
    (study.path / ".git" / "aoven-git" / "history.cache").unlink()
    calls.clear()
    report = verify(study.path, "aoven.yaml")  # a first verify: the same calls as the small history
    assert report.ok and len(report.seals) == 2
    assert len(calls) == small == report.git_calls
    assert sum(1 for c in calls if c[0] == "log") == 1
    assert not any(c[0] in ("diff", "show", "diff-tree", "merge-base") for c in calls)


def test_text_and_github_formats(study: Study) -> None:
    study.start()
    study.content_seal("cto")
    study.content_seal("logician")
    res = run_cli("verify-seal", cwd=study.path)
    assert res.code == 1
    assert "visible-at-seal [logician]" in res.out
    res = run_cli("verify-seal", "--format", "github", cwd=study.path)
    assert res.code == 1
    assert res.out.startswith("::error file=study/scores_logician.md,title=verify-seal%3A visible-at-seal::")


def test_reveal_author_check_uses_rater_emails_case_insensitively(study: Study) -> None:
    study.start()
    study.digest_seal("cto", who="cto")
    name, email = PEOPLE["logician"]
    PEOPLE["LOGICIAN"] = (name, email.upper())
    try:
        study.digest_seal("logician", who="LOGICIAN")
    finally:
        del PEOPLE["LOGICIAN"]
    _, data = study.verify()
    assert codes(data) == []


def test_merge_with_own_change_whose_first_parent_is_outside_the_limited_history(study: Study) -> None:
    """The merge is kept in the path-limited log with one rewritten parent, while its diff is
    against a first parent that touched nothing: the base state must come from that parent."""
    study.start()
    study.digest_seal("cto")
    study.branch("logician")
    study.digest_seal("logician")
    study.checkout("main")
    study.write("README.md", "unrelated")
    study.by("lead", "unrelated on main")
    study.git("merge", "-q", "--no-ff", "--no-commit", "logician")
    study.write("study/notes.txt", "a note written while merging")
    study.git("add", "study/notes.txt")
    study.by("lead", "merge logician with a note")
    study.reveal("cto")
    study.reveal("logician")
    res, data = study.verify()
    assert res.code == 0, res.output
    assert codes(data) == [] and data["status"] == "complete"


def test_score_file_name_in_the_wrong_letter_case(study: Study) -> None:
    """`Scores_CTO.md` is readable by everyone (and is `scores_cto.md` on a case-insensitive disk):
    never silently ignored."""
    study.start()
    study.write("study/Scores_CTO.md", score_text("cto"))
    miscased = study.by("cto", "scores", "study/Scores_CTO.md")
    study.write("study/Notes.md", "not a study file\n")
    study.by("lead", "notes", "study/Notes.md")
    res, data = study.verify()
    assert res.code == 1 and codes(data) == [("stray-scores", "cto")]
    (v,) = data["violations"]
    assert v["commit"] == miscased and "Scores_CTO.md" in v["message"]
