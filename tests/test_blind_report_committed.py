"""The committed report of a blind pass with a flagged cell (docs/blinding.md, "What the report
shows"; docs/design.md, "One reading of a study").

A blind pass: the raters disagree on condition A (D1: 0 against 3), seal honestly, the lead unblinds,
everyone reveals, and each rater writes and commits their own reconciliation rows by question and
condition (`disagreements --write`, through the installed hook). The report of the committed
revision must read the blind sheets through the committed key exactly as `report --work-tree`,
`validate` and `disagreements` do: the reconciliation settles the flagged cells and the verdict
is reached, the same in JSON, Markdown and HTML, and the same as the work-tree preview.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from aoven_git.blinding import BlindKey, parse_key
from tests.conftest import run_cli
from tests.test_blind_e2e import BlindStudy

QUOTE = {"Q1": "Sunlight scatters off air molecules", "Q2": "Cats probably dream"}
FLAGGED = ["Q1/A/D1", "Q2/A/D1"]


def reconciled_blind_study(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> BlindStudy:
    """The honest blind study with a flagged cell, reconciled row by row by each rater."""
    s = BlindStudy(tmp_path / "repo", monkeypatch)
    s.start()
    key_file = tmp_path / "keys" / "hidden.json"
    assert s.run("lead", "blind", "--pass", "hidden", "--key-out", str(key_file)).code == 0
    key = parse_key(key_file.read_bytes(), pass_id="hidden")
    assert isinstance(key, BlindKey)
    for rater, a in (("cto", (0, 1)), ("logician", (3, 1))):
        s.fill_unblinded(rater)
        s.fill_blind(rater, key, {"A": a, "B": (1, 0)})
        for p in ("unblinded", "hidden"):
            res = s.run(rater, "seal", "--rater", rater, "--pass", p)
            assert res.code == 0, res.output
    s.unblind_and_reveal(key_file)
    for rater in ("cto", "logician"):
        res = s.run(rater, "disagreements", "--pass", "hidden", "--write", "--format", "json")
        assert res.code == 0, res.output
        doc = json.loads(res.out)
        assert sorted(doc["flagged"]) == FLAGGED, doc
        path = s.path / doc["reconciliation"]
        text = path.read_text(encoding="utf-8")
        for q in ("Q1", "Q2"):
            text = text.replace(f"| {q}/A/D1 | {rater} |  |  |",
                                f'| {q}/A/D1 | {rater} | It says "{QUOTE[q]}" | 2 |')
        path.write_text(text, encoding="utf-8")
        s.git("add", "--", doc["reconciliation"])
        before = s.head()
        s.git("commit", "-q", "-m", f"{rater}'s rows", author=(rater.title(), f"{rater}@example.org"))
        assert s.head() != before  # the installed hook let the rater's own rows in
    assert s.git("status", "--porcelain", "--untracked-files=all") == ""
    return s


def report(s: BlindStudy, *args: str) -> str:
    res = run_cli("report", "--bootstrap", "0", *args, cwd=s.path)
    assert res.code == 0, res.output
    return res.out


def verdict_of_markdown(text: str) -> str:
    found = re.search(r"\b(PASS|FAIL|INCONCLUSIVE|CONTESTED|NOT-READY)\b", text)
    assert found, text[:2000]
    return found.group(1)


def test_the_committed_report_of_a_reconciled_blind_pass_reaches_a_verdict(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    s = reconciled_blind_study(tmp_path, monkeypatch)
    committed = json.loads(report(s, "--format", "json"))
    preview = json.loads(report(s, "--format", "json", "--work-tree"))
    assert committed["source"]["work_tree"] is False and committed["source"]["clean"] is True
    assert committed["verdict"] != "NOT-READY", json.dumps(committed["validation"], indent=1)[:3000]
    assert committed["verdict"] == preview["verdict"]
    hidden = {c["cell"]: c["state"] for c in committed["reconciliation"]["cells"] if c["pass"] == "hidden"}
    assert hidden == dict.fromkeys(FLAGGED, "unanimous"), committed["reconciliation"]
    assert committed["validation"]["errors"] == 0, committed["validation"]
    assert verdict_of_markdown(report(s, "--format", "markdown")) == committed["verdict"]
    html = report(s, "--format", "html")
    assert committed["verdict"] in html and "NOT-READY" not in html


def test_every_source_reads_the_same_blind_study(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """`read_study` over the work tree, the index and the committed revision: the same sheets mapped
    back through the key, the same reconciliation rows, and no validation error from any of them
    (`validate`, `validate --staged` and the report's validation agree)."""
    from aoven_git.plan import load_plan
    from aoven_git.validation import index_study, read_study, revision_study, work_tree_study

    s = reconciled_blind_study(tmp_path, monkeypatch)
    plan = load_plan(s.path / "aoven.yaml")
    readings = [read_study(work_tree_study(s.path, plan)), read_study(index_study(s.path, plan)),
                read_study(revision_study(s.path, plan, s.head()))]
    for reading in readings:
        assert reading.validation.ok, reading.validation.as_dict()
        hidden = {str(c.key) for sheet in reading.sheets if sheet.sheet.pass_id == "hidden"
                  for c in sheet.cells}
        assert {k.rsplit("/", 1)[0] for k in hidden} == {f"{q}/{c}" for q in ("Q1", "Q2") for c in "AB"}
    cells = [sorted((sh.path, str(c.key), c.score) for sh in r.sheets for c in sh.cells) for r in readings]
    assert cells[0] == cells[1] == cells[2]
    rows = [sorted((rec.path, str(row.key), row.rater, row.consensus) for rec in r.reconciliations
                   for row in rec.rows) for r in readings]
    assert rows[0] == rows[1] == rows[2] and len(rows[0]) == 4
    for args in ((), ("--staged",)):
        res = run_cli("validate", "--format", "json", *args, cwd=s.path)
        assert res.code == 0, res.out
