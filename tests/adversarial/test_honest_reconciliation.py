"""Review 5, the honest team: docs/workflow.md §5–6 played with the installed hook.

Each rater writes their own reconciliation rows with `aoven-git disagreements --write`, fills
them in and commits them with a plain `git commit` (the hook installed by `install-hook` runs).
Every honest commit must pass the hook; between the commits `validate` names what is still
missing; at the end `validate` is clean and the report reaches a verdict over the consensus.
Shapes: the primary pass, the stripped `blinded` pass (quotes from the stripped text), a rater
who writes `contested`, a CRLF file, the lead's merge of the reconciliation branch (concluded by
`git commit`, so the hook runs), a `git mv` to an accepted alias, an amendment's reconciliation.
"""

from __future__ import annotations

import json
import re
import subprocess

import pytest

from tests.adversarial.conftest import TWO_PASS_PLAN, Lab, expect

pytestmark = pytest.mark.slow

FLAGGED = [f"{q}/{c}/D1" for q in ("Q1", "Q2") for c in ("A", "B")]


def quote_for(cell: str, pass_id: str) -> str:
    """A phrase really in the response the cell was scored on (tests/adversarial/conftest.py)."""
    q, c, _ = cell.split("/")
    if pass_id == "blinded":
        return f"A stripped response ({q.lower()})"
    return f"A response ({c.lower()}, {q.lower()})"


def fill(text: str, rater: str, value: int | str, pass_id: str = "unblinded") -> str:
    """The rater's own empty rows (as `disagreements --write` leaves them) filled in."""
    def one(m: re.Match[str]) -> str:
        cell = m.group(1)
        return f'| {cell} | {rater} | It says "{quote_for(cell, pass_id)}" and no more | {value} |'

    new, n = re.subn(rf"^\| (\S+) \| {rater} \|  \|  \|(?=\r?$)", one, text, flags=re.M)
    assert n, text
    return new


def revealed(lab: Lab, plan: str = TWO_PASS_PLAN, passes: tuple[str, ...] = ("unblinded", "blinded")) -> None:
    """Plan committed, hook installed, both raters sealed and revealed every pass: D1 flagged."""
    lab.start(plan)
    lab.install_hook()
    for p in passes:
        for rater, scores in (("cto", (0, 2)), ("logician", (3, 2))):
            lab.seal(rater, scores, pass_id=p)
    for p in passes:
        for rater in ("cto", "logician"):
            lab.reveal(rater, pass_id=p)


def write_rows(lab: Lab, rater: str, *args: str) -> dict:
    res = lab.cli(rater, "disagreements", "--write", "--format", "json", *args)
    assert res.code == 0, res.output
    return json.loads(res.out)


def own_rows(lab: Lab, rater: str, value: int | str, *args: str, pass_id: str = "unblinded",
             crlf: bool = False) -> str:
    """`disagreements --write` as `rater`, fill in, `git commit` through the hook: accepted."""
    path = write_rows(lab, rater, *args)["reconciliation"]
    text = fill((lab.path / path).read_bytes().decode("utf-8"), rater, value, pass_id)
    if crlf:
        text = text.replace("\r\n", "\n").replace("\n", "\r\n")
    (lab.path / path).write_bytes(text.encode("utf-8"))
    proc = lab.git_commit(rater, f"Reconciliation: {rater}'s rows", path)
    assert proc.returncode == 0, proc.stderr
    assert "Traceback" not in proc.stderr
    return path


def validate(lab: Lab, *files: str) -> tuple[int, list[tuple[str, str]]]:
    res = lab.cli("lead", "validate", "--format", "json", *files)
    assert "Traceback" not in res.output, res.output
    doc = json.loads(res.out)
    return res.code, sorted((f["path"], e["code"]) for f in doc["files"] for e in f["errors"])


def report(lab: Lab) -> dict:
    res = lab.cli("lead", "report", "--format", "json", "--bootstrap", "0")
    assert res.code in (0, 1), res.output
    return json.loads(res.out)


def cells(doc: dict, pass_id: str) -> dict[str, str]:
    return {c["cell"]: c["state"] for c in doc["reconciliation"]["cells"] if c["pass"] == pass_id}


def not_ready_reasons(doc: dict) -> str:
    return json.dumps(doc.get("verdict", {}))


# --------------------------------------------------------------------------- the primary pass


def test_primary_pass_row_by_row_through_the_hook(lab: Lab) -> None:
    """cto commits his rows; validate names logician's missing rows; logician commits hers; the
    cells are unanimous and validate is clean."""
    revealed(lab)
    path = own_rows(lab, "cto", 2)
    assert path == "study/reconciliation.md"
    code, errors = validate(lab)
    assert code == 1 and {c for _, c in errors} == {"missing-justification"}, errors
    own_rows(lab, "logician", 2)
    assert validate(lab) == (0, [])
    expect(lab, [])
    assert set(cells(report(lab), "unblinded").values()) == {"unanimous"}


def test_a_rater_who_writes_contested(lab: Lab) -> None:
    """logician writes `contested`: the hook takes it, validate is clean (nothing is missing),
    the cells are contested."""
    revealed(lab)
    own_rows(lab, "cto", 2)
    own_rows(lab, "logician", "contested")
    assert validate(lab) == (0, [])
    assert set(cells(report(lab), "unblinded").values()) == {"contested"}


def test_a_crlf_reconciliation(lab: Lab) -> None:
    """cto's editor saves CRLF; logician's `--write` extends the CRLF file and keeps CRLF."""
    revealed(lab)
    path = own_rows(lab, "cto", 2, crlf=True)
    own_rows(lab, "logician", 2)
    data = (lab.path / path).read_bytes()
    assert b"\r\n" in data and b"\n" not in data.replace(b"\r\n", b"")
    assert validate(lab) == (0, [])
    assert set(cells(report(lab), "unblinded").values()) == {"unanimous"}


def test_the_stripped_pass_quotes_the_stripped_text(lab: Lab) -> None:
    """`--pass blinded`: its own file, quotes from the stripped copies."""
    revealed(lab)
    path = own_rows(lab, "cto", 2, "--pass", "blinded", pass_id="blinded")
    assert path == "study/reconciliation_blinded.md"
    own_rows(lab, "logician", 2, "--pass", "blinded", pass_id="blinded")
    code, errors = validate(lab, path)
    assert (code, errors) == (0, []), errors


def test_the_lead_merges_the_reconciliation_branch_by_git_commit(lab: Lab) -> None:
    """Rows on `reconcile/unblinded`; main moved on meanwhile; the lead merges with `--no-commit`
    and concludes with `git commit` — the hook runs on a staged file full of the raters' rows."""
    revealed(lab)
    lab.branch("reconcile/unblinded")
    own_rows(lab, "cto", 2)
    own_rows(lab, "logician", 2)
    lab.checkout("main")
    lab.file("lead", "NOTES.md", "notes\n", "notes")
    lab.git("merge", "-q", "--no-ff", "--no-commit", "reconcile/unblinded")
    proc = lab.git_commit("lead", "Merge reconcile/unblinded")
    assert proc.returncode == 0, proc.stderr
    assert len(lab.git("rev-list", "--parents", "-n1", "HEAD").split()) == 3
    expect(lab, [])
    assert set(cells(report(lab), "unblinded").values()) == {"unanimous"}


def test_git_mv_to_an_accepted_alias_then_write_again(lab: Lab) -> None:
    """cto's rows in `reconciliation.md`; the lead `git mv`s it to `reconciliation_main.md`
    (through the hook); logician's `--write` extends the alias; every row stays its rater's."""
    revealed(lab)
    own_rows(lab, "cto", 2)
    lab.git("mv", "study/reconciliation.md", "study/reconciliation_main.md")
    proc = lab.git_commit("lead", "rename the reconciliation")
    assert proc.returncode == 0, proc.stderr
    assert own_rows(lab, "logician", 2) == "study/reconciliation_main.md"
    assert not (lab.path / "study/reconciliation.md").exists()
    assert validate(lab) == (0, [])
    data = expect(lab, [])
    assert {(r["rater"], r["attributed"]) for r in data["reconciliation_rows"]} == {
        ("cto", True), ("logician", True)}
    assert set(cells(report(lab), "unblinded").values()) == {"unanimous"}


RECONCILIATION = "study/reconciliation.md"


def conflicting_branches(lab: Lab) -> tuple[str, str]:
    """Both raters' rows on their own branches; main has merged cto's and is merging logician's,
    with a conflict on `reconciliation.md`. Returns the two branches' versions of the file."""
    revealed(lab)
    base = lab.head()
    lab.branch("r-cto", base)
    own_rows(lab, "cto", 2)
    lab.branch("r-log", base)
    own_rows(lab, "logician", 2)
    lab.checkout("main")
    lab.git("merge", "-q", "--no-ff", "--no-edit", "r-cto", author=("Lead", "lead@example.org"))
    proc = subprocess.run(["git", "merge", "--no-ff", "--no-commit", "r-log"], cwd=lab.path,
                          capture_output=True, text=True, check=False)
    assert proc.returncode != 0, proc.stdout  # both added the file: a conflict
    return lab.git("show", f"r-cto:{RECONCILIATION}"), lab.git("show", f"r-log:{RECONCILIATION}")


def resolve(lab: Lab, cto: str, logician_rows: list[str]) -> subprocess.CompletedProcess[str]:
    """The lead keeps cto's file and appends logician's rows, then concludes the merge with a plain
    `git commit` (the installed hook runs)."""
    (lab.path / RECONCILIATION).write_text(cto.rstrip("\n") + "\n" + "\n".join(logician_rows) + "\n",
                                           encoding="utf-8")
    return lab.git_commit("lead", "Merge r-log", RECONCILIATION)


def test_a_merge_conflict_between_two_raters_rows_concluded_by_commit(lab: Lab) -> None:
    """cto and logician each start the file on their own branch (both run `--write` on the same
    base); the lead merges both, resolves the conflict by keeping both raters' rows and commits
    through the hook."""
    cto, log = conflicting_branches(lab)
    done = resolve(lab, cto, [ln for ln in log.splitlines() if "| logician |" in ln])
    assert done.returncode == 0, done.stderr
    assert validate(lab) == (0, [])
    expect(lab, [])
    assert set(cells(report(lab), "unblinded").values()) == {"unanimous"}
