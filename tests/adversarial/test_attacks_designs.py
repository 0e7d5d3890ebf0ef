"""Attacks on the designs beyond one A/B (SPEC §3.1; docs/sealing.md, docs/score-files.md
"Replicates" and "Labels"): a rater who has read others' scores or wants to change their own after
sealing, and a lead who wants a design's decision to come out their way, in studies with several
conditions, replicates (`L1/TRT#2/V`), a labelled scale (PASS/FAIL), criteria, a decision table
and pass order (`after:`).

Each attack asserts the exact violation code it must produce (verify-seal, the installed hook, or
validation for a sheet); the honest shapes beside them stay clean. Seals and reveals are the exact
bytes the CLI would commit, made by hand (`Lab`), so each story controls its history; real
repositories, real git, the real CLI and the real hook.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from aoven_git.model import SheetId
from aoven_git.seals import format_seal, sha256
from tests.adversarial.conftest import Lab, at, expect, names, refused
from tests.conftest import run_cli
from tests.report_documents import checked_report
from tests.sealing.test_pre_commit_framework import hook_repo

__all__ = ["hook_repo"]

RATERS = ("cto", "logician")
QUESTIONS = ("L1", "L2")
CONDITIONS = ("CTRL", "TRT")
REPLICATES = (1, 2)

#: the two raters' (question, condition, replicate) → label: TRT passes more often on both probes
LABELS = {(q, c, r): "PASS" if c == "TRT" or (q, r) == ("L1", 1) else "FAIL"
          for q in QUESTIONS for c in CONDITIONS for r in REPLICATES}

CRITERIA = """\
criteria:
  - {id: L1-up, kind: rate, label: PASS, of: [TRT, CTRL], questions: [L1], above: 0}
  - {id: L2-up, kind: rate, label: PASS, of: [TRT, CTRL], questions: [L2], above: 0}
decisions:
  - {if: [L1-up], then: "adopt the L1 patch"}
  - {if: [L2-up], then: "adopt the L2 patch"}
  - {otherwise: "defer"}
"""

#: a probe study written from the seed's template: its `locked` list is the seed's, which names
#: neither `criteria`, `decisions` nor `replicates` (they did not exist when it was written)
PROBE_BASE = """\
version: 1
study: probes
study_dir: study
responses: "test_{condition}/{question}_{replicate}.md"
stripped_responses: "test_{condition}_stripped/{question}_{replicate}.md"
scale: {labels: [PASS, FAIL]}
replicates: 2
conditions:
  - {id: CTRL, name: Control, role: baseline}
  - {id: TRT, name: Treatment}
dimensions:
  - {id: V, name: Verdict, kind: quality}
questions:
  - {id: L1, text: "probe one"}
  - {id: L2, text: "probe two"}
rounds:
  - {id: main, questions: main}
raters:
  - {id: cto, name: CTO, emails: [cto@example.org]}
  - {id: logician, name: Logician, emails: [logician@example.org]}
passes:
  - {id: probe, conditions: [CTRL, TRT], dimensions: [V], primary: true}
rules:
  kappa: {weights: none, threshold: 0.6, aggregate: min, undefined: exclude}
security: {require_signed: false, allowed_signers: null}
locked: [study_dir, responses, scale, conditions, dimensions, questions, rounds, passes, rules]
"""
PROBES = PROBE_BASE + CRITERIA

RESPONSES = {f"study/test_{c.lower()}/{q.lower()}_{r}.md": f"# {q}\n\nThe answer of {c} to {q}, sample {r}.\n"
             for q in QUESTIONS for c in CONDITIONS for r in REPLICATES}


def probe_sheet(rater: str, labels: dict[tuple[str, str, int], str] | None = None, *,
                nonce: str | None = None) -> str:
    """A wide sheet with a Rep column, as `sheet` writes it, every cell labelled."""
    labels = labels or LABELS
    rows = "".join(f"| {q} | {c} | {r} | {labels[(q, c, r)]} |\n"
                   for q in QUESTIONS for c in CONDITIONS for r in REPLICATES)
    front = f"---\nrater: {rater}\npass: probe\nround: main\nnonce: {nonce or 'n-' + rater}\n---\n"
    return f"{front}\n# Scores of {rater}\n\n| Q | Cond | Rep | V |\n|---|---|---|---|\n{rows}"


class Probes(Lab):
    """A probe study: labelled sheets with replicates, digest-sealed and revealed by hand."""

    def begin(self, plan: str = PROBES) -> str:
        return self.start(plan, responses=RESPONSES)

    def seal_sheet(self, rater: str, text: str | None = None, **kw: object) -> str:
        text = text if text is not None else probe_sheet(rater)
        self.texts[(rater, "probe")] = text
        data = format_seal(sha256(text.encode()), f"scores_{rater}.md", SheetId(rater, "probe", "main"))
        return self.file(rater, f"study/seals/scores_{rater}.sha256", data, f"seal {rater}", **kw)

    def reveal_sheet(self, rater: str, text: str | None = None, **kw: object) -> str:
        body = text if text is not None else self.texts[(rater, "probe")]
        return self.file(rater, f"study/scores_{rater}.md", body, f"reveal {rater}", **kw)

    def sealed_and_revealed(self) -> None:
        for r in RATERS:
            self.seal_sheet(r)
        for r in RATERS:
            self.reveal_sheet(r)

    def report(self) -> dict:
        res = self.cli("lead", "report", "--format", "json", "--bootstrap", "0")
        assert res.code == 0 and "Traceback" not in res.output, res.output
        return checked_report(res.out)


@pytest.fixture
def probes(tmp_path: object) -> Probes:
    return Probes(tmp_path / "probes")  # type: ignore[operator]


def plan_change(data: dict) -> str:
    return at(data, "plan-changed-after-seal", None)["message"]


# --------------------------------------------------------------------------- the honest study


def test_an_honest_probe_study_verifies_and_decides_row_one(probes: Probes) -> None:
    probes.begin()
    probes.sealed_and_revealed()
    assert expect(probes, [])["status"] == "complete"
    doc = probes.report()
    assert doc["decision"]["status"] == "decided" and doc["decision"]["row"] == 1
    assert doc["decision"]["then"] == "adopt the L1 patch" and doc["verdict"] == "PASS"


def test_criteria_may_change_before_the_first_seal(probes: Probes) -> None:
    """Pre-registration ends at the first seal: a loosened bound before it is no violation."""
    probes.begin(PROBE_BASE + CRITERIA.replace("above: 0}\n  - {id: L2", "at_least: 0}\n  - {id: L2"))
    probes.file("lead", "aoven.yaml", PROBES, "tighten L1-up before scoring")
    probes.sealed_and_revealed()
    assert expect(probes, [])["status"] == "complete"


# --------------------------------------------------------------------------- the lead's plan


def test_a_bound_loosened_after_the_reveal(probes: Probes) -> None:
    """Honest scores: L2 moved, L1 did not (TRT and CTRL pass L1 equally) → row 2. The lead turns
    L1-up's `above: 0` into `at_least: 0` after the reveal, so row 1 is taken instead. `criteria`
    is not under the seed's `locked`; it is frozen all the same."""
    labels = {**LABELS, ("L1", "CTRL", 2): "PASS"}
    probes.begin()
    for r in RATERS:
        probes.seal_sheet(r, probe_sheet(r, labels))
    for r in RATERS:
        probes.reveal_sheet(r)
    assert probes.report()["decision"]["row"] == 2
    loosened = PROBES.replace("questions: [L1], above: 0}", "questions: [L1], at_least: 0}")
    change = probes.file("lead", "aoven.yaml", loosened, "clarify L1-up")
    data = expect(probes, [("plan-changed-after-seal", None)])
    assert at(data, "plan-changed-after-seal", None)["commit"] == change
    assert "criteria[L1-up]" in plan_change(data)
    doc = probes.report()
    assert doc["verdict"] == "NOT-READY" and doc["decision"]["status"] == "not-ready"


def test_the_decision_table_reordered_after_the_reveal(probes: Probes) -> None:
    """Both criteria hold: row 1 ("adopt the L1 patch") is the decision. Swapping the two rows
    after the reveal would make it "adopt the L2 patch"."""
    probes.begin()
    probes.sealed_and_revealed()
    swapped = PROBES.replace(
        '  - {if: [L1-up], then: "adopt the L1 patch"}\n  - {if: [L2-up], then: "adopt the L2 patch"}\n',
        '  - {if: [L2-up], then: "adopt the L2 patch"}\n  - {if: [L1-up], then: "adopt the L1 patch"}\n')
    assert swapped != PROBES
    probes.file("lead", "aoven.yaml", swapped, "rows in priority order")
    assert "decisions" in plan_change(expect(probes, [("plan-changed-after-seal", None)]))
    assert probes.report()["verdict"] == "NOT-READY"


def test_a_decision_table_added_to_a_seed_plan_after_the_reveal(probes: Probes) -> None:
    """A plan without criteria is the seed's; adding criteria and decisions once the scores are
    readable would replace the pre-registered verdict by one written after the fact."""
    probes.begin(PROBE_BASE)
    probes.sealed_and_revealed()
    probes.file("lead", "aoven.yaml", PROBES, "add the decision table")
    message = plan_change(expect(probes, [("plan-changed-after-seal", None)]))
    assert "criteria" in message and "decisions" in message


def test_replicates_raised_after_the_first_seal(probes: Probes) -> None:
    """A third sampled response per item after the seals: the cells raters sealed are no longer
    the study's cells."""
    probes.begin()
    probes.seal_sheet("cto")
    probes.file("lead", "aoven.yaml", PROBES.replace("replicates: 2", "replicates: 3"), "one more sample")
    assert "replicates: 2 → 3" in plan_change(expect(probes, [("plan-changed-after-seal", None)]))


def test_criteria_removed_from_locked_after_the_first_seal(probes: Probes) -> None:
    """Removing a key from `locked` is itself a change (regression for designs)."""
    probes.begin(PROBES.replace("locked: [", "locked: [criteria, decisions, "))
    probes.seal_sheet("cto")
    probes.file("lead", "aoven.yaml", PROBES, "unlock the criteria")
    assert "removed from `locked`: criteria, decisions" in plan_change(
        expect(probes, [("plan-changed-after-seal", None)]))


@pytest.mark.parametrize(("label", "edit"), [
    ("re-cased", ("labels: [PASS, FAIL]", "labels: [Pass, Fail]")),
    ("reordered", ("labels: [PASS, FAIL]", "labels: [FAIL, PASS]")),
    ("grown", ("labels: [PASS, FAIL]", "labels: [PASS, FAIL, HARM]")),
    ("condition's name", ("{id: TRT, name: Treatment}", "{id: TRT, name: Patched}")),
])
def test_scale_labels_and_conditions_edited_after_the_first_seal(probes: Probes, label: str,
                                                                 edit: tuple[str, str]) -> None:
    """`scale` and `conditions` are under the seed's `locked`: a label re-spelled, reordered or
    added, or a condition's name edited, after the first seal is a plan change (the name is what
    the report and the decision's reader see)."""
    probes.begin()
    probes.seal_sheet("cto")
    changed = PROBES.replace(*edit)
    assert changed != PROBES, label
    probes.file("lead", "aoven.yaml", changed, f"scale: {label}")
    expect(probes, [("plan-changed-after-seal", None)])


def test_a_condition_renamed_after_the_reveal(probes: Probes) -> None:
    """TRT renamed TREAT everywhere (conditions, pass, criteria) after the reveal."""
    probes.begin()
    probes.sealed_and_revealed()
    probes.file("lead", "aoven.yaml", PROBES.replace("TRT", "TREAT"), "a clearer name")
    message = plan_change(expect(probes, [("plan-changed-after-seal", None)]))
    assert "conditions" in message and "criteria" in message


def test_the_decisions_text_edited_after_the_reveal(probes: Probes) -> None:
    """`then:` is what the team acts on: "adopt the L1 patch" rewritten after the reveal."""
    probes.begin()
    probes.sealed_and_revealed()
    probes.file("lead", "aoven.yaml", PROBES.replace("adopt the L1 patch", "adopt both patches"),
                "wording")
    assert "adopt both patches" in plan_change(expect(probes, [("plan-changed-after-seal", None)]))


def test_the_hook_refuses_a_bound_loosened_after_the_first_seal(probes: Probes) -> None:
    probes.begin()
    probes.install_hook()
    probes.seal_sheet("cto")
    probes.write("aoven.yaml", PROBES.replace("questions: [L2], above: 0}", "questions: [L2], at_least: 0}"))
    head = probes.head()
    proc = probes.git_commit("lead", "clarify L2-up", "aoven.yaml")
    refused(proc, "plan-changed-after-seal")
    assert "criteria[L2-up]" in proc.stderr
    assert probes.head() == head


def test_the_hook_lets_a_new_comment_on_the_criteria_through(probes: Probes) -> None:
    """Only data is frozen: a comment next to the criteria is no change."""
    probes.begin()
    probes.install_hook()
    probes.seal_sheet("cto")
    probes.write("aoven.yaml", PROBES.replace("criteria:\n", "criteria:   # pre-registered\n"))
    proc = probes.git_commit("lead", "comment", "aoven.yaml")
    assert proc.returncode == 0, proc.stderr
    assert expect(probes, [])["status"] == "pending"


# --------------------------------------------------------------------------- a rater's sheet


def test_a_label_recased_between_seal_and_reveal(probes: Probes) -> None:
    """`PASS` → `pass`: the parser reads the same cells, but the seal fixed bytes, not readings.
    A reveal of other bytes proves nothing about what was sealed (docs/sealing.md): the rule
    stands as it is, and `reveal --restore` brings back the sealed bytes."""
    probes.begin()
    for r in RATERS:
        probes.seal_sheet(r)
    recased = probes.texts[("cto", "probe")].replace("| PASS |", "| pass |")
    reveal = probes.reveal_sheet("cto", recased)
    probes.reveal_sheet("logician")
    data = expect(probes, [("digest-mismatch", "cto")])
    assert at(data, "digest-mismatch", "cto")["commit"] == reveal


def test_a_label_recased_after_the_reveal(probes: Probes) -> None:
    probes.begin()
    probes.sealed_and_revealed()
    text = probes.texts[("cto", "probe")]
    probes.file("cto", "study/scores_cto.md", text.replace("| FAIL |", "| Fail |"), "tidy")
    expect(probes, [("modified-after-seal", "cto")])


def test_replicates_renumbered_in_a_sheet_between_seal_and_reveal(probes: Probes) -> None:
    """cto swaps `#1` and `#2` of L1/CTRL after sealing (their PASS moves to the other sample)."""
    probes.begin()
    for r in RATERS:
        probes.seal_sheet(r)
    sealed = probes.texts[("cto", "probe")]
    swapped = sealed.replace("| L1 | CTRL | 1 | PASS |\n| L1 | CTRL | 2 | FAIL |\n",
                             "| L1 | CTRL | 1 | FAIL |\n| L1 | CTRL | 2 | PASS |\n")
    assert swapped != sealed
    probes.reveal_sheet("cto", swapped)
    probes.reveal_sheet("logician")
    expect(probes, [("digest-mismatch", "cto")])


def test_replicate_rows_renumbered_after_the_reveal(probes: Probes) -> None:
    """The same swap written as Rep numbers (`2`, `1`) on rows left in place, after the reveal."""
    probes.begin()
    probes.sealed_and_revealed()
    text = probes.texts[("cto", "probe")]
    swapped = text.replace("| L1 | CTRL | 1 | PASS |\n| L1 | CTRL | 2 | FAIL |\n",
                           "| L1 | CTRL | 2 | PASS |\n| L1 | CTRL | 1 | FAIL |\n")
    assert swapped != text
    probes.file("cto", "study/scores_cto.md", swapped, "rows in sample order")
    expect(probes, [("modified-after-seal", "cto")])


def validate_codes(probes: Probes, text: str) -> tuple[int, list[str]]:
    probes.write("study/scores_cto.md", text)
    res = probes.cli("cto", "validate", "--format", "json", "study/scores_cto.md")
    assert "Traceback" not in res.output, res.output
    doc = json.loads(res.out)
    entry = doc["files"][0]
    found = [f["code"] for f in (*entry["errors"], *entry["warnings"])]
    return res.code, found


SMUGGLED_ROWS = {
    "rep column alias R2": "| L1 | TRT | R2 | FAIL |\n",
    "rep column alias Rep 2": "| L1 | TRT | Rep 2 | FAIL |\n",
    "rep column alias #2": "| L1 | TRT | #2 | FAIL |\n",
    "hash after the condition": "| L1 | TRT#2 | 2 | FAIL |\n",
    "fused item": "| L1/TRT#2 | TRT | 2 | FAIL |\n",
}


@pytest.mark.parametrize("row", sorted(SMUGGLED_ROWS))
def test_a_second_copy_of_a_cell_under_a_rep_alias(probes: Probes, row: str) -> None:
    """A second row for L1/TRT#2 (the first says PASS), spelt with another accepted form of the
    replicate, so a reader that kept the last row would read FAIL: `duplicate-cell`, and the sheet
    cannot be sealed."""
    probes.begin()
    text = probe_sheet("cto").replace("| L1 | TRT | 2 | PASS |\n",
                                      "| L1 | TRT | 2 | PASS |\n" + SMUGGLED_ROWS[row])
    code, found = validate_codes(probes, text)
    assert code == 1 and found == ["duplicate-cell"], found


def test_a_second_table_under_a_rep_alias_is_a_rescore_that_does_not_count(probes: Probes) -> None:
    """An appended table scoring L1/TRT#2 again (`TRT#2`) is `rescored-in-file` (a warning): the
    first table stands, for every reader (validate, report)."""
    probes.begin()
    text = probe_sheet("cto") + "\n\n| Q | Cond | V |\n|---|---|---|\n| L1 | TRT#2 | FAIL |\n"
    code, found = validate_codes(probes, text)
    assert code == 0 and found == ["rescored-in-file"], found


def test_a_rep_column_disagreeing_with_the_condition_is_not_read(probes: Probes) -> None:
    probes.begin()
    text = probe_sheet("cto").replace("| L1 | TRT | 2 | PASS |", "| L1 | TRT#1 | 2 | PASS |")
    code, found = validate_codes(probes, text)
    assert code == 1 and "unknown-replicate" in found, found


def sectioned_sheet(swap: bool) -> str:
    """A sectioned sheet: `## L1`, `### TRT`, `#### Rep 1` headings, each over a table with a Rep
    column; with `swap`, L1/TRT's tables say the other replicate than their heading."""
    body = ""
    for q in QUESTIONS:
        body += f"## {q}\n"
        for c in CONDITIONS:
            body += f"### {c}\n"
            for r in REPLICATES:
                column = 3 - r if swap and (q, c) == ("L1", "TRT") else r
                row = f"| V | {column} | {LABELS[(q, c, column)]} |"
                body += f"#### Rep {r}\n\n| Dim | Rep | Score |\n|---|---|---|\n{row}\n\n"
    return f"---\nrater: cto\npass: probe\nround: main\n---\n\n{body}"


@pytest.mark.xfail(strict=True, reason="a Rep column silently overrides the `#### Rep N` heading above "
                   "its table (score_cells: the column comes first); only `#N` after the condition is "
                   "checked against the column")
def test_a_rep_column_contradicting_its_heading_is_unknown_replicate(probes: Probes) -> None:
    """Under `#### Rep 1` a table whose Rep column says 2: a reader of the sealed sheet sees the
    heading, the tool reads the column. Two readings of one sealed sheet are one too many: the
    row should be `unknown-replicate`, as a `TRT#1` against a Rep column of 2 is."""
    probes.begin()
    code, found = validate_codes(probes, sectioned_sheet(swap=True))
    assert code == 1 and "unknown-replicate" in found, found


def test_a_sectioned_sheet_whose_rep_column_agrees_with_its_headings_is_valid(probes: Probes) -> None:
    probes.begin()
    assert validate_codes(probes, sectioned_sheet(swap=False)) == (0, [])


def test_an_honest_sheet_with_every_accepted_rep_form_is_valid(probes: Probes) -> None:
    probes.begin()
    text = probe_sheet("cto").replace("| L1 | TRT | 2 |", "| L1 | TRT | #2 |").replace(
        "| L2 | CTRL | 2 |", "| L2 | CTRL | Rep 2 |").replace("| L2 | TRT | 1 |", "| L2 | TRT | R1 |")
    assert validate_codes(probes, text) == (0, [])


# --------------------------------------------------------------------------- responses


def test_replicate_responses_swapped_by_the_lead_after_the_first_seal(probes: Probes) -> None:
    """The lead swaps TRT's sample 1 and 2 of L1 after the raters sealed: the responses they
    scored moved under their cells (`responses_changed_after_seal` reports it as
    `plan-changed-after-seal`)."""
    probes.begin()
    for r in RATERS:
        probes.seal_sheet(r)
    one, two = "study/test_trt/l1_1.md", "study/test_trt/l1_2.md"
    probes.write(one, RESPONSES[two])
    probes.write(two, RESPONSES[one])
    probes.put("lead", "renumber the samples", one, two)
    message = plan_change(expect(probes, [("plan-changed-after-seal", None)]))
    assert "study/test_trt/l1_1.md" in message


def test_responses_of_a_later_round_added_after_the_first_seal_are_clean(probes: Probes) -> None:
    probes.begin()
    for r in RATERS:
        probes.seal_sheet(r)
    probes.file("lead", "study/test_trt/notes.md", "not a response\n")
    assert expect(probes, [])["status"] == "complete"


# --------------------------------------------------------------------------- pass order

LAYER1 = "{id: layer1, conditions: [CTRL, TRT], dimensions: [V], primary: true}"
LAYER2 = "{id: layer2, conditions: [CTRL, TRT], dimensions: [W], after: [layer1]}"
VERDICT_DIM = "  - {id: V, name: Verdict, kind: quality}\n"
LAYERED = (PROBE_BASE.replace(VERDICT_DIM, VERDICT_DIM + "  - {id: W, name: Wording, kind: quality}\n")
           .replace("  - {id: probe, conditions: [CTRL, TRT], dimensions: [V], primary: true}\n",
                    f"  - {LAYER1}\n  - {LAYER2}\n"))


class Layered(Probes):
    """The probe study in two layers: V (layer1) sealed before W (layer2)."""

    def stem(self, rater: str, pass_id: str) -> str:  # type: ignore[override]
        return f"scores_{rater}" if pass_id == "layer1" else f"scores_{rater}_{pass_id}"

    def layer_text(self, rater: str, pass_id: str) -> str:
        dim = "V" if pass_id == "layer1" else "W"
        return probe_sheet(rater, nonce=f"n-{rater}-{pass_id}").replace(
            "pass: probe", f"pass: {pass_id}").replace("| V |", f"| {dim} |")

    def layer_seal(self, rater: str, pass_id: str, *, path: str | None = None) -> str:
        stem = self.stem(rater, pass_id)
        data = format_seal(sha256(self.layer_text(rater, pass_id).encode()), f"{stem}.md",
                           SheetId(rater, pass_id, "main"))
        self.write(path or f"study/seals/{stem}.sha256", data)
        return self.put(rater, f"seal {rater} {pass_id}", "study")


@pytest.fixture
def layered(tmp_path: object) -> Layered:
    lab = Layered(tmp_path / "layered")  # type: ignore[operator]
    lab.begin(LAYERED)
    return lab


def test_layer1_sealed_in_an_evil_merge_of_the_layer2_branch(layered: Layered) -> None:
    """cto seals layer 2 on a branch, then merges it adding the layer-1 seal in the merge commit
    itself: the seal is in a descendant of the layer-2 seal, never its proper ancestor."""
    layered.branch("w")
    early = layered.layer_seal("cto", "layer2")
    layered.checkout("main")
    layered.git("merge", "-q", "--no-ff", "--no-commit", "w")
    stem = layered.stem("cto", "layer1")
    layered.write(f"study/seals/{stem}.sha256",
                  format_seal(sha256(layered.layer_text("cto", "layer1").encode()), f"{stem}.md",
                              SheetId("cto", "layer1", "main")))
    merge = layered.put("cto", "merge w, seal layer 1", "study", no_verify=True)
    assert layered.is_ancestor(early, merge)
    v = at(expect(layered, [("pass-order", "cto")]), "pass-order", "cto")
    assert v["commit"] == early


def test_layer2_seal_cherry_picked_after_layer1_and_merged_too(layered: Layered) -> None:
    """The early layer-2 seal is cherry-picked onto main after the layer-1 seal (the same bytes,
    now a descendant of it), and the original branch is merged too: the early commit is still a
    first commit of the sheet."""
    start = layered.head()
    layered.branch("w", start)
    early = layered.layer_seal("cto", "layer2")
    layered.checkout("main")
    sealed = layered.layer_seal("cto", "layer1")
    layered.git("cherry-pick", early, author=("CTO", "cto@example.org"))
    layered.land("w")
    data = expect(layered, [("pass-order", "cto")])
    v = at(data, "pass-order", "cto")
    assert v["commit"] == early and names(v, sealed)


def test_layer2_under_a_miscased_alias_before_layer1(layered: Layered) -> None:
    """`Scores_cto_layer2.md` — the very file on a case-insensitive disk — committed before the
    layer-1 seal: a wrong-case score name is `stray-scores` (docs/sealing.md, "Pass order": a copy
    under another name is not `pass-order`)."""
    layered.file("cto", "study/Scores_cto_layer2.md", layered.layer_text("cto", "layer2"), "layer 2")
    layered.layer_seal("cto", "layer1")
    data = expect(layered, [("stray-scores", "cto")])
    assert at(data, "stray-scores", "cto")["path"] == "study/Scores_cto_layer2.md"


def test_layer2_after_layer1_on_a_merged_branch_is_clean(layered: Layered) -> None:
    sealed = layered.layer_seal("cto", "layer1")
    layered.branch("w", sealed)
    layered.layer_seal("cto", "layer2")
    layered.checkout("main")
    layered.layer_seal("logician", "layer1")
    layered.land("w")
    layered.layer_seal("logician", "layer2")
    assert expect(layered, [])["status"] == "complete"


def test_after_dropped_from_the_plan_after_the_first_seal(layered: Layered) -> None:
    """`passes` is under the seed's `locked`; and the order is judged by the plan of the first
    seal either way."""
    early = layered.layer_seal("cto", "layer2")
    layered.layer_seal("cto", "layer1")
    layered.file("lead", "aoven.yaml", LAYERED.replace(", after: [layer1]", ""), "no order")
    data = expect(layered, [("pass-order", "cto"), ("plan-changed-after-seal", None)])
    assert at(data, "pass-order", "cto")["commit"] == early


def test_validate_cli_is_the_reader_of_the_sheets(probes: Probes) -> None:
    """Sanity of the helpers: the honest sheet validates as the plan's complete sheet."""
    probes.begin()
    probes.write("study/scores_cto.md", probe_sheet("cto"))
    res = run_cli("validate", "--format", "json", "study/scores_cto.md", cwd=probes.path)
    assert res.code == 0, res.output
    assert json.loads(res.out)["files"][0]["cells"] == 2 * 2 * 2


def test_criteria_changed_on_a_branch_cut_before_the_first_seal_merged_after_the_reveal(
        probes: Probes) -> None:
    """The lead prepares the loosened bound on a branch from before any seal and merges it once
    the scores are readable: the merge brings a plan the first seal did not freeze."""
    start = probes.begin()
    probes.branch("tweak", start)
    loosened = PROBES.replace("questions: [L1], above: 0}", "questions: [L1], at_least: 0}")
    probes.file("lead", "aoven.yaml", loosened, "prepare")
    probes.checkout("main")
    probes.sealed_and_revealed()
    merge = probes.land("tweak")
    data = expect(probes, [("plan-changed-after-seal", None)])
    assert at(data, "plan-changed-after-seal", None)["commit"] == merge


# --------------------------------------------------------------------------- the plan and the CLI


def test_labels_that_differ_only_in_letter_case_are_a_plan_error(probes: Probes) -> None:
    """With `labels: [PASS, pass]` a cell `Pass` reads as whichever the case-insensitive match
    finds first: what the rater meant is not on the page. Expected: a plan error (exit 2) at the
    scale's line, as any ambiguous plan is."""
    probes.write("aoven.yaml", PROBES.replace("labels: [PASS, FAIL]", "labels: [PASS, pass]"))
    res = run_cli("check-plan", cwd=probes.path)
    assert res.code == 2 and "Traceback" not in res.output, res.output
    assert "aoven.yaml:6" in res.output and "scale" in res.output


def test_seal_and_reveal_of_a_replicated_labelled_sheet_through_the_cli(probes: Probes) -> None:
    """The honest path through the real commands: sheet, seal, reveal, verify-seal."""
    probes.begin()
    probes.install_hook()
    for r in RATERS:
        probes.write(f"study/scores_{r}.md", probe_sheet(r).replace(f"nonce: n-{r}\n", ""))
        res = probes.cli(r, "seal", "--rater", r)
        assert res.code == 0, res.output
    for r in RATERS:
        res = probes.cli(r, "reveal", "--rater", r)
        assert res.code == 0, res.output
    assert expect(probes, [])["status"] == "complete"


# --------------------------------------------------------------------------- the pre-commit framework


@pytest.mark.slow
def test_the_framework_hook_refuses_a_reordered_decision_table_and_passes_a_seal(
        probes: Probes, hook_repo: tuple[Path, str, Path], monkeypatch: pytest.MonkeyPatch) -> None:
    """The hook as the pre-commit framework runs it (installed from a copy of this project): a
    seal goes through; the decision rows swapped after it are refused, naming the code."""
    from tests.adversarial.test_attacks_hook_framework import use_framework

    probes.begin()
    use_framework(probes.path, hook_repo, ("Lead", "lead@example.org"), monkeypatch)
    probes.texts[("cto", "probe")] = text = probe_sheet("cto")
    probes.write("study/seals/scores_cto.sha256",
                 format_seal(sha256(text.encode()), "scores_cto.md", SheetId("cto", "probe", "main")))
    sealed = probes.git_commit("cto", "seal cto", "study")
    assert sealed.returncode == 0, sealed.stdout + sealed.stderr
    swapped = PROBES.replace('then: "adopt the L1 patch"}\n  - {if: [L2-up], then: "adopt the L2 patch"}',
                             'then: "adopt the L2 patch"}\n  - {if: [L2-up], then: "adopt the L1 patch"}')
    assert swapped != PROBES
    probes.write("aoven.yaml", swapped)
    head = probes.head()
    proc = probes.git_commit("lead", "rows in priority order", "aoven.yaml")
    out = proc.stdout + proc.stderr
    assert proc.returncode != 0 and "plan-changed-after-seal" in out and "decisions" in out, out
    assert "Traceback" not in out and probes.head() == head


# --------------------------------------------------------------------------- amendments

AMENDMENT = ("amendments:\n  - {id: v2, title: TRT ruling, rationale: a hedge is a fail, "
             "dimensions: [V], conditions: [TRT]}\n")


def rescore_sheet(rater: str, label: str) -> str:
    rows = "".join(f"| {q} | TRT | {r} | {label} |\n" for q in QUESTIONS for r in REPLICATES)
    return (f"---\nrater: {rater}\npass: probe\nround: main\nnonce: a-{rater}\n---\n\n"
            f"| Q | Cond | Rep | V |\n|---|---|---|---|\n{rows}")


def amended_probe_study(probes: Probes) -> dict:
    """The probe study revealed, then amendment v2 declared (allowed: appending) and both raters'
    re-scores of every TRT response as FAIL sealed and revealed: the report's document."""
    probes.begin()
    probes.sealed_and_revealed()
    probes.file("lead", "aoven.yaml", PROBES + AMENDMENT, "declare amendment v2")
    for r in RATERS:
        text = rescore_sheet(r, "FAIL")
        probes.texts[(r, "v2")] = text
        data = format_seal(sha256(text.encode()), f"scores_{r}.md", SheetId(r, "probe", "main", "v2"))
        probes.file(r, f"study/amendments/v2/seals/scores_{r}.sha256", data, f"re-seal {r}")
    for r in RATERS:
        probes.file(r, f"study/amendments/v2/scores_{r}.md", probes.texts[(r, "v2")], f"re-reveal {r}")
    assert expect(probes, [])["status"] == "complete"
    return probes.report()


def test_an_amendment_rescoring_the_treatment_never_moves_the_decision(probes: Probes) -> None:
    """Re-scores after the reveal are exploratory: the pre-registered decision stays row 1."""
    doc = amended_probe_study(probes)
    assert doc["decision"]["row"] == 1 and doc["decision"]["then"] == "adopt the L1 patch"
    assert doc["verdict"] == "PASS"
    assert [a["id"] for a in doc["amendments"]] == ["v2"]


def test_an_amendment_of_a_labelled_design_reports_its_decision_not_a_seed_verdict(probes: Probes) -> None:
    """CONTRACT: on a nominal scale there are no means, no improvement and no seed verdict; with
    `decisions` the verdict summarises the decision. The amendment's exploratory layer says the
    same kind of thing as the pre-registered one: every TRT response re-scored FAIL, neither
    criterion holds, the exploratory decision is `otherwise` ("defer", FAIL). (It once averaged
    label positions: means CTRL 3/4, TRT 1, "PASS → FAIL: improvement -33.33% is below 10%".)"""
    amended = amended_probe_study(probes)["amendments"][0]
    assert amended["verdict"] == "FAIL" and amended["summary"] == "Decision: defer (row 3)"
    assert amended["improvement"] is None and set(amended["means"].values()) <= {None}
    assert amended["preregistered_verdict"] == "PASS"
    for fmt in ("markdown", "html"):
        res = probes.cli("lead", "report", "--format", fmt, "--bootstrap", "0")
        assert res.code == 0 and "Traceback" not in res.output, res.output
        assert "-33.33%" not in res.out and "row 1 (adopt the L1 patch) fails: L1-up fails" in res.out, fmt


# --------------------------------------------------------------------------- the templates


@pytest.mark.parametrize("design", ["seed", "arms", "probes"])
def test_every_init_template_freezes_what_a_decision_is_read_from(design: str) -> None:
    """What moves a decision — the criteria, the table, the replicates, the scale and its labels,
    the conditions, the passes and their order, the rules — is frozen at the first seal in the
    plan `init --design` writes: by its `locked` list, or always (`frozen_rules.DESIGN_FROZEN`)."""
    from aoven_git.frozen_rules import ALWAYS_FROZEN, DESIGN_FROZEN
    from aoven_git.plan import DESIGN_TEMPLATES, load_plan

    frozen = {*load_plan(DESIGN_TEMPLATES[design]).locked, *ALWAYS_FROZEN, *DESIGN_FROZEN}
    needed = {"criteria", "decisions", "replicates", "scale", "conditions", "passes", "rules",
              "questions", "rounds", "dimensions", "responses"}
    assert needed <= frozen, needed - frozen


# --------------------------------------------------------------------------- reading before scoring


def test_layer2_sealed_after_reading_anothers_revealed_layer1(layered: Layered) -> None:
    """Everyone sealed layer 1; logician reveals it before cto has scored layer 2 (the layers
    share both conditions): cto's layer-2 seal follows readable layer-1 scores of the same
    responses."""
    for r in RATERS:
        layered.layer_seal(r, "layer1")
    layered.layer_seal("logician", "layer2")
    layered.file("logician", "study/scores_logician.md", layered.layer_text("logician", "layer1"),
                 "reveal logician layer1")
    late = layered.layer_seal("cto", "layer2")
    data = expect(layered, [("visible-at-seal", "cto")])
    assert at(data, "visible-at-seal", "cto")["commit"] == late


def test_the_hook_refuses_a_recased_reveal(probes: Probes) -> None:
    """A reveal committed by hand with `PASS` re-cased `pass`: the hook checks the digest."""
    probes.begin()
    probes.install_hook()
    for r in RATERS:
        probes.seal_sheet(r)
    probes.write("study/scores_cto.md", probes.texts[("cto", "probe")].replace("| PASS |", "| pass |"))
    head = probes.head()
    refused(probes.git_commit("cto", "reveal cto", "study/scores_cto.md"), "digest-mismatch")
    assert probes.head() == head
    probes.write("study/scores_cto.md", probes.texts[("cto", "probe")])
    proc = probes.git_commit("cto", "reveal cto", "study/scores_cto.md")
    assert proc.returncode == 0, proc.stderr


def test_the_hook_refuses_replicate_responses_swapped_after_the_first_seal(probes: Probes) -> None:
    probes.begin()
    probes.install_hook()
    probes.seal_sheet("cto")
    one, two = "study/test_trt/l1_1.md", "study/test_trt/l1_2.md"
    probes.write(one, RESPONSES[two])
    probes.write(two, RESPONSES[one])
    head = probes.head()
    refused(probes.git_commit("lead", "renumber the samples", one, two), "plan-changed-after-seal")
    assert probes.head() == head


def test_seal_refuses_a_replicated_layer2_before_the_raters_layer1_seal(layered: Layered) -> None:
    """`seal --pass layer2` of a labelled, replicated sheet while cto has not sealed layer 1
    (logician's layer-1 seal orders nothing of cto's): refused, nothing changed."""
    layered.layer_seal("logician", "layer1")
    text = layered.layer_text("cto", "layer2").replace("nonce: n-cto-layer2\n", "")
    layered.write("study/scores_cto_layer2.md", text)
    before = layered.snapshot()
    res = layered.cli("cto", "seal", "--rater", "cto", "--pass", "layer2")
    assert res.code == 1 and "Traceback" not in res.output, res.output
    assert "pass-order" in res.err and "aoven-git seal --rater cto --pass layer1" in res.err
    assert layered.snapshot() == before
    assert (layered.path / "study/scores_cto_layer2.md").read_text() == text


def test_a_rater_withdrawn_after_the_reveal_keeps_their_scores_in_the_decision(probes: Probes) -> None:
    """The lead withdraws logician, whose labels disagree, once the scores are readable, hoping
    the decision moves. The pass was complete at the withdrawal: logician's sheet still counts
    (docs/sealing.md, "Withdrawals"), the decision stands, and the report lists the withdrawal as
    a deviation after the reveal."""
    disagreeing = {**LABELS, ("L1", "TRT", 1): "FAIL", ("L1", "TRT", 2): "FAIL"}
    probes.begin()
    probes.seal_sheet("cto")
    probes.seal_sheet("logician", probe_sheet("logician", disagreeing))
    for r in RATERS:
        probes.reveal_sheet(r)
    before = probes.report()
    withdraw = "withdrawals:\n  - {rater: logician, reason: left the team, category: unforeseen}\n"
    probes.file("lead", "aoven.yaml", PROBES + withdraw, "withdraw logician")
    data = expect(probes, [])
    assert data["withdrawals"][0]["kept"] == [{"pass": "probe", "round": "main"}]
    after = probes.report()
    assert after["decision"] == before["decision"] and after["criteria"] == before["criteria"]
    events = [e for e in after["protocol_deviations"]["events"] if e["kind"] == "withdrawal"]
    assert [(e["rater"], e["after_reveal"]) for e in events] == [("logician", ["probe"])], events


# --------------------------------------------------------------------------- blind passes


def test_a_blind_pass_over_three_conditions_and_replicates_shows_no_condition_or_replicate(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A rater's whole view of a blind pass over A, B, B1 with two samples each, before the key:
    the blinding commit (message, trailers, file names) and the sheet `sheet` writes. Neither
    names a condition or a replicate, and the sheet lists the ids in id order (random), never in
    (question, condition, replicate) order."""
    from tests.test_blinding_designs import ITEMS, ArmsStudy, blind

    study = ArmsStudy(tmp_path / "repo", monkeypatch)
    study.start()
    _, key = blind(study, tmp_path)
    message = study.git("log", "-1", "--format=%B")
    names = study.git("show", "--name-only", "--format=", "HEAD")
    tells = re.compile(r"\b(?:B1?|A)\b|#\d|(?i:sample|replicate|rep \d)")
    assert not tells.search(message) and not tells.search(names.replace("study/", "")), (message, names)
    res = study.run("cto", "sheet", "--rater", "cto", "--pass", "hidden")
    assert res.code == 0, res.output
    rows = re.findall(r"^\| ([a-z0-9]{12}) \|", res.out, flags=re.MULTILINE)
    assert rows == sorted(e.blind_id for e in key.entries) and len(rows) == len(ITEMS)
    body = res.out.split("\n| Item", 1)[1]
    assert not re.search(r"\b(?:B1|Rep|Cond)\b|#\d", body), body
