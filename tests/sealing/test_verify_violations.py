"""Each history commits exactly one offence; verify-seal names it (code, rater, commit) and
reports nothing else. Only the offences whose subject is git itself are told here (an evil merge
resolution, a forged commit date); the rest are rows of tests/test_rules_pure_seal_rules.py, run on
paper."""

from __future__ import annotations

from tests.sealing.conftest import Study, codes, score_text


def only(data: dict, code: str) -> list[dict]:
    return [v for v in data["violations"] if v["code"] == code]


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

