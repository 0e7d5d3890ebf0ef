"""Honest histories verify cleanly: no violation, the right seals, the right status."""

from __future__ import annotations

import itertools

import pytest

from tests.adversarial.paper import paper_study
from tests.sealing.conftest import Study, codes

#: honest histories are the rules' subject, not git's: they run on paper (tests/adversarial/paper.py)
study = paper_study


def seal_kinds(data: dict) -> dict[str, str]:
    return {s["rater"]: s["kind"] for s in data["seals"]}


@pytest.mark.parametrize("order", list(itertools.permutations(["cto", "logician", "redteam"])))
def test_content_seals_on_parallel_branches_prove_no_order(study: Study, order: tuple[str, ...]) -> None:
    """Content seals serve a single rater: on parallel branches no seal is an ancestor of another
    rater's scores, so nothing proves anyone sealed first (whatever the merge order)."""
    base = study.start()
    for rater in order:
        study.branch(f"scores-{rater}", base)
        study.content_seal(rater)
    study.checkout("main")
    for rater in order:
        study.merge(f"scores-{rater}")
    res, data = study.verify()
    assert res.code == 1, res.output
    assert codes(data) == [("unproven-order", "cto"), ("unproven-order", "logician"),
                           ("unproven-order", "redteam")]
    # redteam is optional: its sheet is excluded instead of blocking
    assert data["excluded_raters"] == [{"rater": "redteam", "codes": ["unproven-order"]}]
    assert seal_kinds(data) == {"cto": "content", "logician": "content", "redteam": "content"}
    # each seal is the rater's own branch commit, never the merge that brought it in
    branch_tips = {r: study.git("rev-parse", f"scores-{r}") for r in order}
    assert {s["rater"]: s["commit"] for s in data["seals"]} == branch_tips


def test_digest_seals_then_reveals_on_one_branch(study: Study) -> None:
    study.start()
    seals = {r: study.digest_seal(r) for r in ("cto", "logician")}
    reveals = {r: study.reveal(r) for r in ("cto", "logician")}
    res, data = study.verify()
    assert res.code == 0, res.output
    assert data["status"] == "complete" and codes(data) == []
    for s in data["seals"]:
        assert s["kind"] == "digest"
        assert s["commit"] == seals[s["rater"]]
        assert s["revealed"] == reveals[s["rater"]]
        assert s["path"] == f"study/seals/scores_{s['rater']}.sha256"
    assert data["forced_reveals"] == []


def test_late_optional_rater_who_sealed_before_any_reveal(study: Study) -> None:
    study.start()
    study.digest_seal("cto")
    study.digest_seal("logician")
    study.digest_seal("redteam")  # optional, late, but before anything is readable
    for r in ("logician", "cto", "redteam"):
        study.reveal(r)
    res, data = study.verify()
    assert res.code == 0, res.output
    assert codes(data) == [] and data["status"] == "complete"
    assert seal_kinds(data) == {"cto": "digest", "logician": "digest", "redteam": "digest"}


def test_three_raters_digest_seals_on_branches_merged_then_revealed(study: Study) -> None:
    base = study.start()
    for r in ("cto", "logician", "redteam"):
        study.branch(f"seal-{r}", base)
        study.digest_seal(r)
    study.checkout("main")
    for r in ("redteam", "cto", "logician"):
        study.merge(f"seal-{r}")
    for r in ("cto", "logician", "redteam"):
        study.reveal(r)
    res, data = study.verify()
    assert res.code == 0, res.output
    assert codes(data) == []
    assert all(s["revealed"] for s in data["seals"])


def test_mixed_content_seal_last_after_others_digest_sealed(study: Study) -> None:
    """The last required rater may seal with content: every other rater's scores were fixed."""
    study.start()
    study.digest_seal("cto")
    study.content_seal("logician")
    study.reveal("cto")
    res, data = study.verify()
    assert res.code == 0, res.output
    assert codes(data) == []
    assert seal_kinds(data) == {"cto": "digest", "logician": "content"}


def test_pending_is_not_a_violation(study: Study) -> None:
    study.start()
    study.digest_seal("cto")
    res, data = study.verify()
    assert res.code == 0, res.output
    assert data["ok"] is True and data["status"] == "pending"
    assert data["pending"] == [{"rater": "logician", "pass": "unblinded", "round": "main"}]
    assert codes(data) == []


def test_plan_comment_and_unlocked_edits_after_seal_are_allowed(study: Study) -> None:
    from tests.sealing.conftest import PLAN

    study.start()
    study.digest_seal("cto")
    edited = "# a comment added after sealing\n" + PLAN.replace("study: sealing-test", "study: renamed-study")
    edited = edited.replace("scale: {min: 0, max: 3}", "scale:\n  min: 0\n  max: 3")
    study.write("aoven.yaml", edited)
    study.by("lead", "reformat plan", "aoven.yaml")
    study.digest_seal("logician")
    res, data = study.verify()
    assert res.code == 0, res.output
    assert codes(data) == []


def test_unrelated_commits_and_files_outside_study_are_ignored(study: Study) -> None:
    study.start()
    study.write("elsewhere/cto-notes.md", "not a study file")
    study.by("lead", "other folder", "elsewhere")
    study.digest_seal("cto")
    study.write("README.md", "hello")
    study.by("logician", "docs")
    study.digest_seal("logician")
    res, data = study.verify()
    assert res.code == 0, res.output
    assert codes(data) == [] and data["status"] == "complete"
    assert {s["path"] for s in data["seals"]} == {"study/seals/scores_cto.sha256",
                                                 "study/seals/scores_logician.sha256"}


def test_a_file_named_like_scores_elsewhere_is_no_copy_by_its_name(study: Study) -> None:
    """Outside the study folder a `scores_*` name alone proves nothing: only content matching a
    sheet makes a copy (docs/sealing.md, "Copies of scores")."""
    study.start()
    study.write("elsewhere/scores_cto.md", "not a study file")
    study.by("lead", "other folder", "elsewhere")
    study.digest_seal("cto")
    study.digest_seal("logician")
    study.reveal("cto")
    study.reveal("logician")
    res, data = study.verify()
    assert res.code == 0, res.output
    assert codes(data) == []
