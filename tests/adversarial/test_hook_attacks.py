"""Attacks at commit time: the real pre-commit hook (installed with `aoven-git install-hook`, run
by a plain `git commit`) refuses, naming the rule in its message, and `aoven-git seal` refuses to
seal what could only be a violation or a plan that is not ready to freeze. A refused commit or
seal changes nothing."""

from __future__ import annotations

import pytest

from tests.adversarial.conftest import (
    BLINDED,
    NO_SECURITY,
    RESPONSES,
    SIGNED_SECURITY,
    TWO_PASS_PLAN,
    UNBLINDED,
    Lab,
    refused,
    sheet_text,
)
from tests.sealing.conftest import PLAN, plan

CTO = "  - {id: cto, name: CTO, emails: [cto@example.org]}\n"
LOGICIAN = "  - {id: logician, name: Logician, emails: [logician@example.org]}\n"


def armed(lab: Lab) -> str:
    """Install the hook once the history to attack is built (the hook reads the index and HEAD,
    not how HEAD came about); returns HEAD, which a refused commit must leave unchanged."""
    lab.install_hook()
    return lab.head()


def all_sealed_and_revealed(lab: Lab) -> None:
    for r in ("cto", "logician"):
        lab.seal(r)
    for r in ("cto", "logician"):
        lab.reveal(r)


@pytest.mark.parametrize("kind", ["digest", "content"])
def test_hook_refuses_a_seal_when_another_raters_plaintext_is_in_head(lab: Lab, kind: str) -> None:
    lab.start()
    all_sealed_and_revealed(lab)
    before = armed(lab)
    if kind == "digest":
        text = sheet_text("redteam")
        lab.write(lab.seal_path("redteam"), lab.seal_bytes("redteam", text))
        proc = lab.git_commit("redteam", "seal", lab.seal_path("redteam"))
    else:
        lab.write(lab.score_path("redteam"), sheet_text("redteam"))
        proc = lab.git_commit("redteam", "scores", lab.score_path("redteam"))
    refused(proc, "visible-at-seal")
    assert lab.head() == before


def test_hook_refuses_a_blinded_seal_after_unblinded_reveals(lab: Lab) -> None:
    lab.start(TWO_PASS_PLAN)
    for r in ("cto", "logician"):
        lab.seal(r)
    for r in ("cto", "logician"):
        lab.reveal(r)
    before = armed(lab)
    text = sheet_text("cto", pass_id=BLINDED)
    lab.write(lab.seal_path("cto", BLINDED), lab.seal_bytes("cto", text, BLINDED))
    refused(lab.git_commit("cto", "seal blinded", lab.seal_path("cto", BLINDED)), "visible-at-seal")
    assert lab.head() == before


def test_hook_refuses_plaintext_while_an_overlapping_pass_is_unsealed(lab: Lab) -> None:
    """Everyone sealed unblinded, nobody sealed blinded: an unblinded reveal would show B scores
    to raters who have still to score B blind. `reveal --force` (AOVEN_GIT_FORCE) overrides."""
    lab.start(TWO_PASS_PLAN)
    for r in ("cto", "logician"):
        lab.seal(r)
    before = armed(lab)
    lab.write(lab.score_path("cto"), lab.texts[("cto", UNBLINDED)])
    proc = lab.git_commit("cto", "reveal", lab.score_path("cto"))
    assert proc.returncode != 0 and "Traceback" not in proc.stderr
    assert "logician" in proc.stderr and BLINDED in proc.stderr, proc.stderr
    assert lab.head() == before
    forced = lab.git_commit("cto", "reveal (forced)", lab.score_path("cto"),
                            env={"AOVEN_GIT_FORCE": "reveal"})
    assert forced.returncode == 0, forced.stderr


def test_hook_refuses_a_second_file_for_a_sheet(lab: Lab) -> None:
    lab.start()
    lab.seal("logician")
    lab.content("cto")
    before = armed(lab)
    lab.write("study/scores_cto_unblinded.md", sheet_text("cto", (0, 0)))
    refused(lab.git_commit("cto", "second file", "study/scores_cto_unblinded.md"), "duplicate-sheet")
    assert lab.head() == before


def test_hook_refuses_an_alias_seal_file(lab: Lab) -> None:
    lab.start()
    lab.seal("cto")
    before = armed(lab)
    alias = "study/seals/scores_cto_main.sha256"
    lab.write(alias, lab.seal_bytes("cto", sheet_text("cto", (0, 0), nonce="x")))
    refused(lab.git_commit("cto", "another seal", alias), "duplicate-sheet")
    assert lab.head() == before


STRAYS = [
    ("docs/scores_cto.txt", None), ("Study/scores_cto.md", None), ("study/sub/scores_cto.md", None),
    ("study/scores_cto.md.txt", None),
    ("study/notes.md", "---\nrater: cto\n---\n\n" + sheet_text("cto", front_matter=False)),
]


@pytest.mark.parametrize(("path", "content"), STRAYS, ids=[p for p, _ in STRAYS])
def test_hook_refuses_a_stray_copy(lab: Lab, path: str, content: str | None) -> None:
    lab.start()
    for r in ("cto", "logician"):
        lab.seal(r)
    before = armed(lab)
    lab.write(path, content or lab.texts[("cto", UNBLINDED)])
    refused(lab.git_commit("cto", "a copy", path), "stray-scores")
    assert lab.head() == before


def test_hook_refuses_a_raters_seal_committed_by_another_author(lab: Lab) -> None:
    lab.start()
    before = armed(lab)
    lab.write(lab.seal_path("cto"), lab.seal_bytes("cto", sheet_text("cto")))
    refused(lab.git_commit("lead", "seal for cto", lab.seal_path("cto")), "unauthorized-author")
    assert lab.head() == before


PLAN_EDITS = [
    (CTO, CTO.replace("[cto@example.org]", "[cto@example.org, lead@example.org]")),
    (LOGICIAN, LOGICIAN.replace("]}", "], required: false}")),
    (LOGICIAN, ""),
    (LOGICIAN, LOGICIAN + "  - {id: friend, name: Friend, emails: [friend@example.org]}\n"),
    (NO_SECURITY, SIGNED_SECURITY),
]


@pytest.mark.parametrize(("old", "new"), PLAN_EDITS,
                         ids=["email-added", "required-false", "rater-removed", "rater-added", "security"])
def test_hook_refuses_rater_and_security_plan_edits_after_the_first_seal(lab: Lab, old: str,
                                                                         new: str) -> None:
    lab.start()
    lab.seal("cto")
    before = armed(lab)
    lab.write("aoven.yaml", PLAN.replace(old, new))
    refused(lab.git_commit("lead", "edit the plan", "aoven.yaml"), "plan-changed-after-seal")
    assert lab.head() == before


def test_hook_allows_a_comment_in_the_raters_after_the_first_seal(lab: Lab) -> None:
    lab.start()
    lab.seal("cto")
    armed(lab)
    lab.write("aoven.yaml", PLAN.replace(LOGICIAN, LOGICIAN + "  # logician joined in March\n"))
    proc = lab.git_commit("lead", "comment", "aoven.yaml")
    assert proc.returncode == 0, proc.stderr


def test_hook_refuses_renaming_a_sealed_score_file(lab: Lab) -> None:
    lab.start()
    lab.seal("logician")
    lab.content("cto")
    before = armed(lab)
    lab.git("mv", "study/scores_cto.md", "study/scores_cto_main.md")
    proc = lab.git_commit("cto", "rename")
    assert proc.returncode != 0 and "Traceback" not in proc.stderr
    assert "deleted-after-seal" in proc.stderr or "duplicate-sheet" in proc.stderr, proc.stderr
    assert lab.head() == before


# --------------------------------------------------------------------------- aoven-git seal


def refused_seal(lab: Lab, rater: str, *words: str) -> None:
    path = lab.score_path(rater)
    text = sheet_text(rater)
    lab.write(path, text)
    before = lab.snapshot()
    res = lab.cli(rater, "seal", "--rater", rater)
    assert res.code == 1, res.output
    assert "Traceback" not in res.output
    for word in words:
        assert word in res.err, res.err
    assert lab.snapshot() == before
    assert (lab.path / path).read_text() == text  # no nonce written either


def test_seal_command_refuses_when_another_raters_plaintext_is_in_head(lab: Lab) -> None:
    lab.start()
    all_sealed_and_revealed(lab)
    refused_seal(lab, "redteam", "study/scores_cto.md")


def test_seal_command_refuses_a_placeholder_question_text(lab: Lab) -> None:
    lab.start(plan(questions=['{id: Q1, text: "First?", expects: [1]}',
                              '{id: Q2, text: "(to be written before scoring)", expects: [1]}']))
    refused_seal(lab, "cto", "Q2")


def test_seal_command_refuses_while_a_response_is_not_committed(lab: Lab) -> None:
    missing = "study/test_b/q2.md"
    lab.start(responses={p: t for p, t in RESPONSES.items() if p != missing})
    lab.write(missing, RESPONSES[missing])  # written, but not committed
    refused_seal(lab, "cto", "test_b/q2.md")
