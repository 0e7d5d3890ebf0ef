"""Review 5, the attacker: the hook's DEFERRED exemption and `disagreements --write`'s file choice.

The hook lets a reconciliation in while it still lacks rows or values (`missing-justification`,
`missing-consensus`): each rater commits their own rows later. The attacks ask whether that
exemption lets a consensus count that no rater defended with a quote, whether `--write` can be
made to write someone else's rows or outside the study folder (odd amendment ids, a symlinked
amendment folder), and whether anything crashes (exit 4). Plus the honest amendment loop
(docs/workflow.md §6) through the installed hook.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from tests.adversarial.conftest import PLAN, RECONCILIATION_DRAFT, TWO_PASS_PLAN, Lab
from tests.adversarial.test_honest_reconciliation import cells, fill, own_rows, report, revealed, validate

pytestmark = pytest.mark.slow

AMENDMENT = ("amendments:\n  - {id: d1-ruling, title: Ruling, rationale: the anchors were read two ways, "
             "dimensions: [D1], conditions: [A]}\n")
FOLDER = "study/amendments/d1-ruling"


def rescores(rater: str, value: int) -> str:
    rows = "".join(f"| {q} | A | {value} |\n" for q in ("Q1", "Q2"))
    return (f"---\nrater: {rater}\npass: unblinded\nround: main\namendment: d1-ruling\n---\n\n"
            f"# Re-scores of {rater}\n\n| Q | Cond | D1 |\n|---|---|---|\n{rows}")


def amended(lab: Lab) -> None:
    """The study revealed, then the amendment's re-scores sealed and revealed by the real CLI
    (cto 0, logician 3: both re-scored cells flagged)."""
    revealed(lab, PLAN + AMENDMENT, passes=("unblinded",))
    for rater, value in (("cto", 0), ("logician", 3)):
        lab.write(f"{FOLDER}/scores_{rater}.md", rescores(rater, value))
        res = lab.cli(rater, "seal", "--rater", rater, "--amendment", "d1-ruling")
        assert res.code == 0, res.output
    for rater in ("cto", "logician"):
        res = lab.cli(rater, "reveal", "--rater", rater, "--amendment", "d1-ruling")
        assert res.code == 0, res.output


def test_honest_amendment_reconciliation_through_the_hook(lab: Lab) -> None:
    amended(lab)
    path = own_rows(lab, "cto", 1, "--amendment", "d1-ruling")
    assert path == f"{FOLDER}/reconciliation.md"
    code, errors = validate(lab)
    assert code == 1 and {c for _, c in errors} == {"missing-justification"}, errors
    own_rows(lab, "logician", 1, "--amendment", "d1-ruling")
    assert validate(lab) == (0, [])
    res, data = lab.verify()
    assert res.code == 0 and data["violations"] == [], res.output
    doc = report(lab)
    assert "Traceback" not in json.dumps(doc)


# --------------------------------------------------------------------------- DEFERRED


def test_a_consensus_with_an_empty_justification_is_not_counted(lab: Lab) -> None:
    """cto and logician each commit `| Q1/A/D1 | me |  | 2 |`: a value, no justification, so no
    quote. The hook lets it in (`missing-justification` is deferred), but a flagged cell is only
    settled once every rater defended it with a quote (docs/sealing.md, reconciliation.py): the
    cell must not count as a unanimous consensus, and validate must say what is missing."""
    revealed(lab)
    text = RECONCILIATION_DRAFT + "| Q1/A/D1 | cto |  | 2 |\n"
    lab.write("study/reconciliation.md", text)
    assert lab.git_commit("cto", "cto: 2", "study/reconciliation.md").returncode == 0
    lab.write("study/reconciliation.md", text + "| Q1/A/D1 | logician |  | 2 |\n")
    assert lab.git_commit("logician", "logician: 2", "study/reconciliation.md").returncode == 0
    code, errors = validate(lab)
    assert code == 1 and ("study/reconciliation.md", "missing-justification") in errors, errors
    doc = report(lab)
    assert doc["verdict"] == "NOT-READY"
    assert any("reconciliation.md is invalid" in r for r in doc["not_ready"]), doc["not_ready"]
    # the report's reconciliation section shows the cell as settled all the same
    assert cells(doc, "unblinded").get("Q1/A/D1") != "unanimous", doc["reconciliation"]["cells"]


def test_a_row_prefilled_for_another_rater_is_not_hers(lab: Lab) -> None:
    """cto writes logician's row too (`--rater logician`), with a value she never stated, and
    commits it (the hook only warns). logician's own `--write` must still give her a row of her own
    to fill (the prefilled one is not her statement) or at least say it is someone else's, not
    "already has your row"; and the cell must not be unanimous."""
    revealed(lab)
    own_rows(lab, "cto", 2)
    res = lab.cli("cto", "disagreements", "--write", "--rater", "logician")
    assert res.code == 0, res.output
    text = fill((lab.path / "study/reconciliation.md").read_bytes().decode(), "logician", 2)
    lab.write("study/reconciliation.md", text)
    proc = lab.git_commit("cto", "cto fills in logician", "study/reconciliation.md")
    assert proc.returncode == 0 and "unattributed-row" in proc.stderr, proc.stderr
    assert set(cells(report(lab), "unblinded").values()) != {"unanimous"}
    res = lab.cli("logician", "disagreements", "--write")
    assert res.code == 0, res.output
    assert "already has your row" not in res.out, res.out


# --------------------------------------------------------------------------- where --write writes


@pytest.mark.parametrize("ident", ["../../outside", "d1-ruling/../../..", "D1-RULING", "", "d1-ruling/"])
def test_odd_amendment_ids_are_usage_errors_and_write_nothing(lab: Lab, ident: str) -> None:
    amended(lab)
    before = lab.snapshot()
    res = lab.cli("cto", "disagreements", "--write", "--amendment", ident)
    assert res.code == 2, res.output
    assert "Traceback" not in res.output
    assert lab.snapshot() == before
    assert not (lab.path.parent / "outside").exists()


def test_a_symlinked_amendment_folder_is_not_written_through(lab: Lab, tmp_path: Path) -> None:
    """The amendment folder is replaced, in cto's work tree, by a symbolic link to a folder
    outside the repository holding the same files. `--write` must not create a file outside the
    repository (as it refuses a symlinked reconciliation file)."""
    amended(lab)
    outside = tmp_path / "elsewhere"
    os.rename(lab.path / FOLDER, outside)
    os.symlink(outside, lab.path / FOLDER)
    res = lab.cli("cto", "disagreements", "--write", "--amendment", "d1-ruling")
    assert "Traceback" not in res.output
    assert not (outside / "reconciliation.md").exists(), res.output
    assert res.code in (0, 1), res.output


def test_a_symlinked_study_folder_reconciliation_is_refused(lab: Lab) -> None:
    """`study/reconciliation.md` is a committed symbolic link to a file outside the study folder:
    `--write` refuses to write through it (exit 1), nothing changes."""
    revealed(lab)
    lab.write("NOTES.md", "notes\n")
    os.symlink("../NOTES.md", lab.path / "study/reconciliation.md")
    before = (lab.path / "NOTES.md").read_bytes()
    res = lab.cli("cto", "disagreements", "--write")
    assert res.code == 1, res.output
    assert (lab.path / "NOTES.md").read_bytes() == before


def test_an_alias_of_another_pass_is_not_extended(lab: Lab) -> None:
    """Only `reconciliation_blinded.md` exists; `--write` for the primary pass must start the
    primary pass's own file, not extend the blinded one."""
    revealed(lab, TWO_PASS_PLAN)
    own_rows(lab, "cto", 2, "--pass", "blinded", pass_id="blinded")
    res = lab.cli("logician", "disagreements", "--write", "--format", "json")
    assert res.code == 0, res.output
    assert json.loads(res.out)["reconciliation"] == "study/reconciliation.md"


def test_an_alias_in_the_amendment_folder_is_extended(lab: Lab) -> None:
    """The amendment's team renamed its file to `reconciliation_main.md`: `--write` extends it."""
    amended(lab)
    own_rows(lab, "cto", 1, "--amendment", "d1-ruling")
    lab.git("mv", f"{FOLDER}/reconciliation.md", f"{FOLDER}/reconciliation_main.md")
    assert lab.git_commit("lead", "rename").returncode == 0
    assert own_rows(lab, "logician", 1, "--amendment", "d1-ruling") == f"{FOLDER}/reconciliation_main.md"
    assert validate(lab) == (0, [])


@pytest.mark.parametrize("body", [
    b"\xff\xfe not utf-8",
    b"---\npass: [unclosed\n",
    b"| Cell | Rater |\n|---|---|\n| Q1/A/D1 | cto |\n",
    b"> | Cell | Rater | Justification | Consensus |\n> |---|---|---|---|\n",
    b"| Rater | Cell | Consensus | Justification | Extra |\n|---|---|---|---|---|\n| x |\n",
])
def test_odd_existing_reconciliation_files_never_crash(lab: Lab, body: bytes) -> None:
    revealed(lab)
    lab.write("study/reconciliation.md", body)
    res = lab.cli("cto", "disagreements", "--write")
    assert res.code in (0, 1), res.output
    assert "Traceback" not in res.output and "internal error" not in res.output.lower(), res.output


# --------------------------------------------------------------------------- the blind pass


def test_blind_pass_reconciliation_by_question_through_the_hook(tmp_path: Path,
                                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    """A blind pass: raters disagree on condition A items (2 vs 0 on D1); after unblinding and the
    reveals, `disagreements --pass hidden` lists the cells by question and condition
    (docs/blinding.md, "What the report shows"); each rater's rows, quoting the stripped text they
    read, pass the hook, and validate is clean."""
    from aoven_git.blinding import parse_key
    from tests.test_blind_e2e import BlindStudy

    s = BlindStudy(tmp_path / "repo", monkeypatch)
    s.start()
    key_file = tmp_path / "keys" / "hidden.json"
    assert s.run("lead", "blind", "--pass", "hidden", "--key-out", str(key_file)).code == 0
    key = parse_key(key_file.read_bytes(), pass_id="hidden")
    for rater, a in (("cto", (0, 1)), ("logician", (3, 1))):
        s.fill_unblinded(rater)
        s.fill_blind(rater, key, {"A": a, "B": (1, 0)})  # type: ignore[arg-type]
        for p in ("unblinded", "hidden"):
            res = s.run(rater, "seal", "--rater", rater, "--pass", p)
            assert res.code == 0, res.output
    s.unblind_and_reveal(key_file)
    quote = {"Q1": "Sunlight scatters off air molecules", "Q2": "Cats probably dream"}
    for rater in ("cto", "logician"):
        res = s.run(rater, "disagreements", "--pass", "hidden", "--write", "--format", "json")
        assert res.code == 0, res.output
        doc = json.loads(res.out)
        assert sorted(doc["flagged"]) == ["Q1/A/D1", "Q2/A/D1"], doc
        path = s.path / doc["reconciliation"]
        text = path.read_text(encoding="utf-8")
        for q in ("Q1", "Q2"):
            text = text.replace(f"| {q}/A/D1 | {rater} |  |  |",
                                f'| {q}/A/D1 | {rater} | It says "{quote[q]}" | 1 |')
        path.write_text(text, encoding="utf-8")
        s.git("add", "--", doc["reconciliation"])
        name, email = ("Cto", "cto@example.org") if rater == "cto" else ("Logician", "logician@example.org")
        proc = s.git("commit", "-q", "-m", f"{rater}'s rows", author=(name, email), check=False)
        assert "refused" not in proc, proc
    res = s.run("lead", "validate", "--format", "json")
    assert res.code == 0, res.out
