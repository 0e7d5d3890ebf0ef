"""Each history commits exactly one offence; verify-seal names it (code, rater, commit) and
reports nothing else."""

from __future__ import annotations

from tests.sealing.conftest import PLAN, REDTEAM, Study, codes, plan, score_text


def only(data: dict, code: str) -> list[dict]:
    return [v for v in data["violations"] if v["code"] == code]


def test_sealing_after_another_raters_content_was_merged(study: Study) -> None:
    base = study.start()
    study.branch("cto", base)
    study.content_seal("cto")
    study.checkout("main")
    study.merge("cto")
    bad = study.content_seal("logician")  # cto's scores were readable on main
    res, data = study.verify()
    assert res.code == 1
    assert data["status"] == "violated" and data["ok"] is False
    assert codes(data) == [("visible-at-seal", "logician")]
    v = only(data, "visible-at-seal")[0]
    assert v["commit"] == bad
    assert "study/scores_cto.md" in v["message"]


def test_digest_seal_after_content_visible_on_a_merged_branch(study: Study) -> None:
    """The branch carrying cto's scores was merged into logician's branch before logician sealed."""
    base = study.start()
    study.branch("cto", base)
    cto = study.content_seal("cto")
    study.branch("logician", base)
    study.git("merge", "-q", "--no-edit", "cto", author=("Logician", "logician@example.org"))
    bad = study.digest_seal("logician")
    _res, data = study.verify()
    assert codes(data) == [("visible-at-seal", "logician")]
    assert only(data, "visible-at-seal")[0]["commit"] == bad
    assert cto[:10] in only(data, "visible-at-seal")[0]["message"]


def test_content_added_then_deleted_before_second_seal_is_still_visible(study: Study) -> None:
    study.start()
    added = study.content_seal("cto")
    study.git("rm", "-q", "study/scores_cto.md")
    deleted = study.by("cto", "oops, remove my scores")
    bad = study.digest_seal("logician")
    res, data = study.verify()
    assert res.code == 1
    # logician could have read cto's scores; cto's sealed file disappearing is an offence too
    assert codes(data) == [("deleted-after-seal", "cto"), ("visible-at-seal", "logician")]
    assert only(data, "visible-at-seal")[0]["commit"] == bad
    assert added[:10] in only(data, "visible-at-seal")[0]["message"]
    assert only(data, "deleted-after-seal")[0]["commit"] == deleted


def test_content_added_and_deleted_on_a_side_branch_is_still_visible(study: Study) -> None:
    """History simplification must not hide a branch whose net effect on the study is nil."""
    base = study.start()
    study.branch("peek", base)
    study.write("study/reconciliation.md", "| Cell | Rater | Justification | Consensus |\n")
    study.by("lead", "draft reconciliation", "study/reconciliation.md")
    study.git("rm", "-q", "study/reconciliation.md")
    study.by("lead", "remove draft")
    study.checkout("main")
    study.merge("peek")
    bad = study.digest_seal("cto")
    study.digest_seal("logician")
    _res, data = study.verify()
    assert codes(data) == [("visible-at-seal", "cto"), ("visible-at-seal", "logician")]
    assert only(data, "visible-at-seal")[0]["commit"] == bad
    assert "study/reconciliation.md" in only(data, "visible-at-seal")[0]["message"]


def test_two_raters_in_one_commit(study: Study) -> None:
    study.start()
    study.write(study.score_path("cto"), score_text("cto"))
    study.write(study.score_path("logician"), score_text("logician"))
    both = study.by("lead", "both score files", "study")
    res, data = study.verify()
    assert res.code == 1
    found = codes(data)
    assert ("sealed-together", "cto") in found and ("sealed-together", "logician") in found
    # the lead committed them: authorship is reported as well, and nothing else
    assert found == [("sealed-together", "cto"), ("sealed-together", "logician"),
                     ("unauthorized-author", "cto"), ("unauthorized-author", "logician")]
    assert {v["commit"] for v in data["violations"]} == {both}


def test_two_raters_in_one_commit_same_author_rule_only(study: Study) -> None:
    """Same offence with the authorship check out of the way (raters without emails)."""
    no_emails = plan(raters=["{id: cto, name: CTO, emails: []}", "{id: logician, name: Logician, emails: []}",
                             REDTEAM])
    study.start(no_emails)
    study.write(study.score_path("cto"), score_text("cto"))
    study.write(study.score_path("logician"), score_text("logician"))
    study.by("lead", "both score files", "study")
    _, data = study.verify()
    assert codes(data) == [("sealed-together", "cto"), ("sealed-together", "logician")]


def test_edit_to_a_sealed_file(study: Study) -> None:
    study.start()
    study.digest_seal("cto")
    study.digest_seal("logician")
    study.reveal("cto")
    study.reveal("logician")
    edited = study.sealed["cto"].replace("| Q1 | A | 1 | 2 | 3 |", "| Q1 | A | 0 | 2 | 2 |")
    study.write(study.score_path("cto"), edited)
    edit = study.by("cto", "second thoughts")
    res, data = study.verify()
    assert res.code == 1
    assert codes(data) == [("modified-after-seal", "cto")]
    v = data["violations"][0]
    assert v["commit"] == edit and v["path"] == "study/scores_cto.md"


def test_edit_on_a_branch_is_reported_once_not_at_every_merge(study: Study) -> None:
    study.start()
    study.digest_seal("logician")
    study.content_seal("cto")
    study.branch("fix")
    study.write(study.score_path("cto"), score_text("cto", (0, 0)))
    edit = study.by("cto", "edit on a branch")
    study.checkout("main")
    study.write("study/notes.txt", "on main meanwhile")
    study.by("lead", "meanwhile")
    study.merge("fix")
    study.write("study/notes.txt", "more")
    study.by("lead", "more commits")
    _, data = study.verify()
    assert codes(data) == [("modified-after-seal", "cto")]
    assert data["violations"][0]["commit"] == edit


def test_edit_to_a_seal_file(study: Study) -> None:
    study.start()
    study.digest_seal("cto")
    study.digest_seal("logician")
    text = score_text("cto", (0, 0), nonce="other")
    from aoven_git.model import SheetId
    from aoven_git.seals import format_seal, sha256

    study.write(study.seal_path("cto"), format_seal(sha256(text.encode()), "scores_cto.md",
                                                    SheetId("cto", "unblinded", "main")))
    edit = study.by("cto", "reseal")
    _, data = study.verify()
    assert codes(data) == [("modified-after-seal", "cto")]
    assert data["violations"][0]["commit"] == edit
    assert data["violations"][0]["path"] == "study/seals/scores_cto.sha256"


def test_deleted_seal_file(study: Study) -> None:
    study.start()
    study.digest_seal("cto")
    study.git("rm", "-q", study.seal_path("cto"))
    gone = study.by("cto", "unseal")
    study.digest_seal("logician")
    res, data = study.verify()
    assert res.code == 1
    assert codes(data) == [("deleted-after-seal", "cto")]
    assert data["violations"][0]["commit"] == gone


def test_merge_that_drops_a_sealed_file(study: Study) -> None:
    """An evil merge resolution that leaves the sealed file out is caught at the merge."""
    base = study.start()
    study.branch("cto", base)
    study.content_seal("cto")
    study.checkout("main")
    study.digest_seal("logician")
    study.git("merge", "-q", "--no-ff", "--no-commit", "cto")
    study.git("rm", "-q", "--cached", "study/scores_cto.md")
    (study.path / "study/scores_cto.md").unlink()
    merge = study.by("lead", "merge but drop cto")
    _, data = study.verify()
    # cto's content seal on a parallel branch is not after logician's seal either
    assert codes(data) == [("deleted-after-seal", "cto"), ("unproven-order", "logician")]
    assert [v["commit"] for v in data["violations"] if v["code"] == "deleted-after-seal"] == [merge]


def test_revealed_bytes_differ_from_digest(study: Study) -> None:
    study.start()
    study.digest_seal("cto")
    study.digest_seal("logician")
    other = study.sealed["cto"].replace("| Q2 | B | 1 | 2 | 3 |", "| Q2 | B | 0 | 1 | 1 |")
    bad = study.reveal("cto", text=other)
    study.reveal("logician")
    res, data = study.verify()
    assert res.code == 1
    assert codes(data) == [("digest-mismatch", "cto")]
    assert data["violations"][0]["commit"] == bad


def test_commit_authored_by_another_rater(study: Study) -> None:
    study.start()
    bad = study.digest_seal("cto", who="logician")
    study.digest_seal("logician")
    res, data = study.verify()
    assert res.code == 1
    assert codes(data) == [("unauthorized-author", "cto")]
    v = data["violations"][0]
    assert v["commit"] == bad and "logician@example.org" in v["message"]


def test_forged_earlier_commit_date_does_not_fool_it(study: Study) -> None:
    """logician seals after cto's content is in history, but dates the commit a year earlier."""
    study.start()
    study.content_seal("cto")
    old = "2001-01-01T00:00:00+0000"
    study.write(study.score_path("logician"), score_text("logician"))
    bad = study.commit("backdated", study.score_path("logician"), author=("Logician", "logician@example.org"),
                       env={"GIT_AUTHOR_DATE": old, "GIT_COMMITTER_DATE": old})
    assert study.git("log", "-1", "--format=%cI", bad).startswith("2001")
    _, data = study.verify()
    assert codes(data) == [("visible-at-seal", "logician")]
    assert data["violations"][0]["commit"] == bad


def test_locked_plan_key_changed_after_first_seal(study: Study) -> None:
    study.start()
    study.digest_seal("cto")
    study.write("aoven.yaml", plan(scale="{min: 0, max: 4}"))
    change = study.by("lead", "widen the scale")
    study.digest_seal("logician")
    res, data = study.verify()
    assert res.code == 1
    assert codes(data) == [("plan-changed-after-seal", None)]
    v = data["violations"][0]
    assert v["commit"] == change and "scale.max: 3 → 4" in v["message"]


def test_plan_change_on_a_branch_merged_after_a_seal(study: Study) -> None:
    base = study.start()
    study.branch("replan", base)
    study.write("aoven.yaml", plan(markers="[FACT]"))
    study.by("lead", "drop a marker")
    study.checkout("main")
    study.digest_seal("cto")
    merge = study.merge("replan")
    _, data = study.verify()
    assert codes(data) == [("plan-changed-after-seal", None)]
    assert data["violations"][0]["commit"] == merge
    assert "markers: [FACT, HYP] → [FACT] (removed HYP)" in data["violations"][0]["message"]


def test_unlocking_a_key_after_seal(study: Study) -> None:
    study.start()
    study.digest_seal("cto")
    unlocked = "[study_dir, responses, scale, conditions, transitions, dimensions, questions, passes, rules]"
    study.write("aoven.yaml", plan(locked=unlocked))  # markers no longer locked
    change = study.by("lead", "unlock markers")
    _, data = study.verify()
    assert codes(data) == [("plan-changed-after-seal", None)]
    assert data["violations"][0]["commit"] == change
    assert "removed from `locked`: markers" in data["violations"][0]["message"]


def test_plan_broken_after_seal(study: Study) -> None:
    study.start()
    study.digest_seal("cto")
    study.write("aoven.yaml", PLAN + "scale: [unclosed\n")
    change = study.by("lead", "break the plan")
    study.write("aoven.yaml", PLAN)
    study.by("lead", "restore the plan")
    _, data = study.verify()
    # reported once, where the plan stopped being the frozen one; restoring it is no offence
    assert [v["code"] for v in data["violations"]] == ["plan-changed-after-seal"]
    assert data["violations"][0]["commit"] == change
    assert "no longer parses" in data["violations"][0]["message"]


def test_forced_reveal_is_reported_not_a_violation(study: Study) -> None:
    study.start()
    study.digest_seal("cto")
    forced = study.reveal("cto", message="reveal cto early\n\nAoven-Force: reveal (unsealed: logician)")
    study.digest_seal("logician")
    _res, data = study.verify()
    # logician sealed with cto's plaintext in the history: that is still a violation
    assert codes(data) == [("visible-at-seal", "logician")]
    assert data["forced_reveals"] == [
        {"rater": "cto", "pass": "unblinded", "round": "main", "commit": forced, "unsealed": ["logician"]}]
