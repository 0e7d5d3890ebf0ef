"""Review: plaintext the leak detector does not see (found by reading ledger.py and naming.py).

verify-seal counts a file under the study dir as someone's plaintext only when `ledger.role_of`
makes it a *candidate* and `ledger.content_sheets` then finds score cells in it. Every way around
those two gates lets a rater read another rater's scores in the repository and still seal clean.
Each test below is such a way; each asserts what the sealing rules (README, "aoven-git
verify-seal": copies of scores under the study dir are plaintext and `stray-scores`) say should
happen: the copy is reported and the later seal is `visible-at-seal`.

A control (`test_control_the_same_leak_in_notes_is_caught`) shows the same story with a plain
`study/notes.md`, which the rules do catch, so each failure below is the named gate, not the story.
"""

from __future__ import annotations

import pytest

from tests.adversarial.conftest import (
    PLAN,
    RESPONSES,
    SPLIT_PASS_PLAN,
    Lab,
    at,
    expect,
    sheet_text,
)
from tests.adversarial.paper import paper_lab
from tests.sealing.conftest import UNBLINDED_PASS, plan

#: the stories of this module test the sealing rules, not git: they run on paper
#: (tests/adversarial/paper.py); those marked `git` build a real repository
lab = paper_lab

LEAK = [("stray-scores", "cto"), ("visible-at-seal", "logician")]


def leak_then_seal(lab: Lab, path: str, content: str | bytes, *, plan: str = PLAN,
                   pass_id: str = "unblinded", responses: dict[str, str] | None = None) -> tuple[str, str]:
    """cto seals, then commits a copy of his scores at `path`; logician seals after reading it."""
    lab.start(plan, responses=responses)
    lab.seal("cto", pass_id=pass_id)
    leak = lab.file("cto", path, content, "working notes", no_verify=True)
    bad = lab.seal("logician", pass_id=pass_id)
    return leak, bad


def test_control_the_same_leak_in_notes_is_caught(lab: Lab) -> None:
    """The story every test here tells, with a path and content the detector does read."""
    leak, bad = leak_then_seal(lab, "study/notes.md", sheet_text("cto"))
    data = expect(lab, LEAK)
    assert at(data, "stray-scores", "cto")["commit"] == leak
    assert at(data, "visible-at-seal", "logician")["commit"] == bad


def test_leak_in_a_folder_shaped_like_a_response_folder(lab: Lab) -> None:
    """`naming.response_patterns` turns `test_{condition}/{question}.md` into `test_[^/]+/[^/]+.md`,
    so ANY `study/test_<x>/<y>.md` counts as a response and is never read. `study/test_notes/cto.md`
    is no response of the plan (no condition `notes`, no question `cto`)."""
    leak_then_seal(lab, "study/test_notes/cto.md", sheet_text("cto"))
    expect(lab, LEAK)


def test_leak_padded_past_the_candidate_size_limit(lab: Lab) -> None:
    """Candidates are read only up to `ledger.CANDIDATE_BYTES` (1 MiB); a larger blob is never
    fetched, so `ledger.content_sheets` sees no data and decides "no score table". An HTML comment of
    spaces is all it takes; the table at the top stays readable to anyone."""
    padded = sheet_text("cto") + "\n<!--" + " " * (1100 * 1024) + "-->\n"
    leak_then_seal(lab, "study/notes.md", padded)
    expect(lab, LEAK)


def test_leak_as_a_summary_table(lab: Lab) -> None:
    """A summary table (`| Q | D1 A | … | A Total | D1 B | … |`) states every score of the sheet,
    but a summary is "never a source of cells", so the parser returns no cells and the file is not
    plaintext."""
    summary = ("---\nrater: cto\n---\n\n# Totals\n\n"
               "| Q | D1 A | D2 A | A Total | D1 B | D2 B | B Total |\n|---|---|---|---|---|---|---|\n"
               "| Q1 | 1 | 2 | 3 | 1 | 2 | 3 |\n| Q2 | 1 | 2 | 3 | 1 | 2 | 3 |\n")
    leak_then_seal(lab, "study/notes.md", summary)
    expect(lab, LEAK)


def test_leak_with_lower_case_ids_skips_the_prefilter(lab: Lab) -> None:
    """Ids are case-insensitive to the parser (`| q | cond | d1 | d2 |` is a valid score file), but
    `ledger.content_sheets` first requires a dimension id in its exact case (`b"D1" in data`)."""
    lower = sheet_text("cto").replace("| Q | Cond | D1 | D2 | Σ |", "| q | cond | d1 | d2 | σ |")
    leak_then_seal(lab, "study/notes.md", lower)
    expect(lab, LEAK)


def test_leak_whose_front_matter_names_a_pass_it_does_not_score(lab: Lab) -> None:
    """Two passes without a shared condition (`first`: A, `second`: B). cto pastes his `first`
    scores (condition A) under front matter `pass: second`: the parser drops every cell as not in
    pass `second`, so the file has no cells and is no plaintext at all, while the table in it is
    exactly cto's pass-`first` scores."""
    body = sheet_text("cto", pass_id="first", front_matter=False)
    leak_then_seal(lab, "study/notes.md", "---\nrater: cto\npass: second\n---\n\n" + body,
                   plan=SPLIT_PASS_PLAN, pass_id="first")
    expect(lab, LEAK)


BLIND_PLAN = plan(passes=[
    UNBLINDED_PASS, "{id: opaque, conditions: [A, B], dimensions: [D1, D2], stripped: true, blind: true}"])
BLIND_RESPONSES = RESPONSES | {f"study/test_a_stripped/{q}.md": f"# {q.upper()}\n\nStripped A.\n"
                               for q in ("q1", "q2")}


@pytest.mark.git
def test_leak_inside_the_blind_corpus_folder(lab: Lab) -> None:
    """Every file under `study/blind/<blind pass>/` is a `blind-item` to `ledger.role_of`, never a
    candidate, so a score table dropped there is not read."""
    assert BLIND_PLAN != PLAN
    leak_then_seal(lab, "study/blind/opaque/zz9notes.md", sheet_text("cto"), plan=BLIND_PLAN,
                   responses=BLIND_RESPONSES)
    expect(lab, LEAK)


def test_stripped_responses_moved_after_seal_hides_a_leak(lab: Lab) -> None:
    """`stripped_responses` is not a locked key (neither in this plan nor in the default one), so the
    lead may move the stripped copies after the first seal. The history is judged by the plan of
    the first seal (under which `study/notes_a/q1.md` is a candidate), but `verify` fetches blobs
    with `ledger.want_blob` of the plan at HEAD (under which it is a response): the leak's blob is
    never read."""
    lab.start()
    lab.seal("cto")
    lab.write("aoven.yaml", plan(stripped_responses='"notes_{condition}/{question}.md"'))
    lab.put("lead", "stripped copies go to notes_<condition>/", "aoven.yaml")
    lab.file("cto", "study/notes_a/q1.md", sheet_text("cto"), "working notes")
    lab.seal("logician")
    expect(lab, LEAK)


# --------------------------------------------------------------------------- amendments


AMENDED_PLAN = PLAN + "amendments:\n  - {id: recheck, title: Re-check, rationale: r, dimensions: [D1, D2]}\n"


def test_primary_scores_committed_as_an_amendment_before_others_sealed(lab: Lab) -> None:
    """`seal_rules.concerns` requires the same amendment, so an amendment sheet is never plaintext
    for the pre-registered seals. cto commits his scores as his `recheck` amendment file (it
    re-scores every cell of the pass, so it IS his score table) before logician sealed the
    pre-registered pass; logician reads it and seals. The only trace is logician's amendment sheet
    being *pending*: exit 0, and the primary pass reads `complete`."""
    lab.start(AMENDED_PLAN)
    lab.seal("cto")
    lab.file("cto", "study/amendments/recheck/scores_cto.md", sheet_text("cto"), "recheck", no_verify=True)
    bad = lab.seal("logician")
    data = expect(lab, [("visible-at-seal", "logician")])
    assert at(data, "visible-at-seal", "logician")["commit"] == bad


# --------------------------------------------------------------------------- study_dir spelling


@pytest.mark.parametrize("study_dir", ["./study", "study/."])
def test_unnormalised_study_dir_hides_the_reconciliation(lab: Lab, study_dir: str) -> None:
    """The plan accepts `study_dir: ./study` (and `study/.`) and keeps it as written, while
    `ledger.tracked` and the role checks compare path *strings* with `study_dir + "/"`: nothing
    under the study dir but `scores_*` names is tracked, so a reconciliation committed before
    logician sealed is invisible (compare `test_reconciliation_committed_before_rater_sealed`)."""
    lab.start(plan(study_dir=study_dir))
    lab.seal("cto")
    recon = lab.recon()
    bad = lab.seal("logician")
    data = expect(lab, [("visible-at-seal", "logician")])
    v = at(data, "visible-at-seal", "logician")
    assert v["commit"] == bad and recon[:7] in v["message"]


@pytest.mark.git
def test_study_at_the_repository_root_is_a_plan_error(lab: Lab) -> None:
    """`study_dir: .` would make every file of the repository a study file: the plan refuses it
    (exit 2, at its line) instead of reading the history under a spelling the rules cannot
    compare (docs/plan.md, `study_dir`)."""
    lab.write("aoven.yaml", plan(study_dir="."))
    for path, text in RESPONSES.items():
        lab.write(path.removeprefix("study/"), text)
    lab.put("lead", "plan and responses")
    res, _ = lab.verify()
    assert res.code == 2 and "study_dir: '.' must name a folder inside the repository" in res.err


@pytest.mark.git
@pytest.mark.parametrize("study_dir", ["./study", "study/", "study/."])
def test_seal_command_works_with_a_valid_study_dir_spelling(lab: Lab, study_dir: str) -> None:
    """HONEST: the same plans make `aoven-git seal` refuse every honest rater ("responses of pass
    unblinded are not committed: ./test_a/q1.md …"): HEAD paths never start with `./`."""
    prefix = "study/"
    lab.write("aoven.yaml", plan(study_dir=study_dir))
    for path, text in RESPONSES.items():
        lab.write(prefix + path.removeprefix("study/"), text)
    lab.put("lead", "plan and responses")
    lab.write(f"{prefix}scores_cto.md", sheet_text("cto"))
    res = lab.cli("cto", "seal", "--rater", "cto")
    assert res.code == 0, res.output
    assert lab.git("show", "--name-only", "--format=", "HEAD") == f"{prefix}seals/scores_cto.sha256"


@pytest.mark.git
def test_scores_appended_to_a_response_after_the_first_seal(lab: Lab) -> None:
    """Response files are exempt from the leak check ("not a response file"), and nothing freezes
    them, although `seal` refuses until they are committed because "the first seal freezes the
    plan". cto appends his score table to `study/test_a/q1.md` after sealing ("fix typo");
    logician reads it and seals. Nothing is reported, and the text raters scored has changed.
    Read with the readiness rule, a response edited after the first seal is a change of what was
    frozen."""
    lab.start()
    lab.seal("cto")
    response = (lab.path / "study/test_a/q1.md").read_text()
    edit = lab.file("cto", "study/test_a/q1.md", response + "\n" + sheet_text("cto", front_matter=False),
                    "fix typo")
    lab.seal("logician")
    data = expect(lab, [("plan-changed-after-seal", None)])
    assert at(data, "plan-changed-after-seal", None)["commit"] == edit
