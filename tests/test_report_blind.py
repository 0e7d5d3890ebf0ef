"""A blind pass in the report, in real git through the CLI: pending until its key is committed,
then its cells mapped back through the key, its κ computed and the pass used as the stripped pass
of the divergence rule.

The oracle is independent of the code under test: the test knows every item's (question,
condition) from the key file it reads itself, fills the opaque sheets from that, and computes κ
with scikit-learn over the (question, condition) items.
"""

from __future__ import annotations

import re
from fractions import Fraction
from pathlib import Path
from typing import Any

import pytest
from sklearn.metrics import cohen_kappa_score

from aoven_git.blinding import BlindKey, parse_key
from aoven_git.plan import load_plan
from aoven_git.verdict import blinding_pass
from tests.conftest import run_cli
from tests.report_documents import checked_report
from tests.test_blind_e2e import PLAN, BlindStudy

Item = tuple[str, str]
#: each rater's (D1, D2) per item, unblinded and blind (the blind ones vary, so κ is not trivial)
UNBLINDED = {("Q1", "A"): (2, 2), ("Q1", "B"): (1, 1), ("Q2", "A"): (3, 2), ("Q2", "B"): (1, 0)}
HIDDEN = {
    "cto": {("Q1", "A"): (2, 1), ("Q1", "B"): (1, 0), ("Q2", "A"): (3, 2), ("Q2", "B"): (0, 0)},
    "logician": {("Q1", "A"): (2, 1), ("Q1", "B"): (1, 1), ("Q2", "A"): (3, 3), ("Q2", "B"): (1, 0)},
}


def fill_hidden(s: BlindStudy, rater: str, key: BlindKey) -> None:
    """The rater's opaque sheet (from `sheet`), filled by (question, condition) through the key."""
    res = s.run(rater, "sheet", "--rater", rater, "--pass", "hidden")
    assert res.code == 0, res.output
    item = {e.blind_id: (e.question, e.condition) for e in key.entries}

    def fill(m: re.Match[str]) -> str:
        d1, d2 = HIDDEN[rater][item[m.group(1)]]
        return f"| {m.group(1)} | {d1} | {d2} | {d1 + d2} |"

    s.write(f"study/scores_{rater}_hidden.md",
            re.sub(r"^\| ([a-z0-9]{12}) \|  \|  \|  \|", fill, res.out, flags=re.M))


def fill_unblinded(s: BlindStudy, rater: str) -> None:
    rows = "".join(f"| {q} | {c} | {d1} | {d2} |\n" for (q, c), (d1, d2) in UNBLINDED.items())
    head = f"---\nrater: {rater}\n---\n\n| Q | Cond | D1 | D2 |\n|---|---|---|---|\n"
    s.write(f"study/scores_{rater}.md", head + rows)


def report(s: BlindStudy, *args: str) -> dict[str, Any]:
    res = run_cli("report", "--format", "json", "--bootstrap", "0", *args, cwd=s.path)
    assert res.code == 0, res.output
    return checked_report(res.out)


@pytest.fixture
def sealed(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[BlindStudy, Path, BlindKey]:
    """Blinded by the lead; both required raters sealed and revealed both passes; key not committed."""
    s = BlindStudy(tmp_path / "repo", monkeypatch)
    s.start()
    key_file = tmp_path / "keys" / "hidden.json"
    assert s.run("lead", "blind", "--pass", "hidden", "--key-out", str(key_file)).code == 0
    key = parse_key(key_file.read_bytes(), pass_id="hidden")
    assert isinstance(key, BlindKey)
    for rater in ("cto", "logician"):
        fill_unblinded(s, rater)
        fill_hidden(s, rater, key)
        for pass_id in ("unblinded", "hidden"):
            res = s.run(rater, "seal", "--rater", rater, "--pass", pass_id)
            assert res.code == 0, res.output
    for rater in ("cto", "logician"):
        for pass_id in ("unblinded", "hidden"):
            res = s.run(rater, "reveal", "--rater", rater, "--pass", pass_id)
            assert res.code == 0, res.output
    return s, key_file, key


def test_a_blind_pass_is_pending_until_its_key_is_committed(
    sealed: tuple[BlindStudy, Path, BlindKey]
) -> None:
    s, _, _ = sealed
    doc = report(s)
    assert doc["blind_passes"] == [{"pass": "hidden", "state": "pending", "problem": None,
                                    "key": "study/blind/hidden/key.json", "used_by_verdict": True}]
    assert doc["kappa"]["hidden"] == {}  # agreement waits for the key, like the cells
    assert doc["verdict"] == "NOT-READY"
    assert any("blind pass hidden is pending" in r and "key.json is not committed" in r
               for r in doc["not_ready"])
    assert doc["kappa"]["unblinded"]["D1"]["value"] == 1.0  # the other pass is reported as usual
    md = run_cli("report", "--bootstrap", "0", cwd=s.path).out
    assert "### Pass `hidden` (blind)" in md and "is pending: its key" in md
    assert "**Blind pass** `hidden`" in md
    html = run_cli("report", "--bootstrap", "0", "--format", "html", cwd=s.path).out
    assert "scored blind and is pending" in html and 'id="chart-kappa-2"' not in html


def test_after_unblinding_the_cells_map_back_and_the_pass_counts(
    sealed: tuple[BlindStudy, Path, BlindKey]
) -> None:
    s, key_file, _ = sealed
    res = s.run("lead", "unblind", "--pass", "hidden", "--key", str(key_file))
    assert res.code == 0, res.output
    doc = report(s)
    assert doc["blind_passes"][0]["state"] == "unblinded"
    assert not any("blind" in r for r in doc["not_ready"]), doc["not_ready"]
    assert doc["verdict"] != "NOT-READY", doc["not_ready"]
    items = sorted(UNBLINDED)
    for i, dim in enumerate(("D1", "D2")):
        expected = cohen_kappa_score([HIDDEN["cto"][x][i] for x in items],
                                     [HIDDEN["logician"][x][i] for x in items],
                                     labels=[0, 1, 2, 3], weights="quadratic")
        entry = doc["kappa"]["hidden"][dim]
        assert entry["pairs"]["cto~logician"] == pytest.approx(expected, abs=1e-12)
        assert entry["n"] == 4  # every (question, condition), under its real name
    # the blind pass is the stripped pass of the divergence rule: mean |blind − unblinded| over B
    assert blinding_pass(load_plan(s.path / "aoven.yaml")).id == "hidden"
    assert doc["blinding"]["pass"] == "hidden"
    b_items = [x for x in items if x[1] == "B"]
    diffs = [abs(Fraction(HIDDEN["cto"][x][i] + HIDDEN["logician"][x][i], 2) - UNBLINDED[x][i])
             for x in b_items for i in range(2)]
    assert Fraction(doc["blinding"]["divergence_exact"]) == sum(diffs, Fraction(0)) / len(diffs)
    cells = {c["cell"] for c in doc["cells"] if c["pass"] == "hidden"}
    assert cells == {"Q1/B/D2", "Q2/A/D2", "Q2/B/D1"}  # the disagreements, named by question and condition
    md = run_cli("report", "--bootstrap", "0", cwd=s.path).out
    assert "is unblinded: its cells are mapped back through study/blind/hidden/key.json" in md


def test_the_work_tree_preview_reads_the_key_from_the_work_tree(
    sealed: tuple[BlindStudy, Path, BlindKey]
) -> None:
    s, key_file, _ = sealed
    s.write("study/blind/hidden/key.json", key_file.read_bytes())  # placed, not committed
    committed = report(s)
    assert committed["blind_passes"][0]["state"] == "pending"
    preview = report(s, "--work-tree")
    assert preview["blind_passes"][0]["state"] == "unblinded"
    assert preview["kappa"]["hidden"]["D1"]["n"] == 4
    # a key that is not the canonical key of the pass is named with its line, not trusted
    s.write("study/blind/hidden/key.json", key_file.read_bytes().replace(b'"format"', b'"formats"'))
    bad = report(s, "--work-tree")
    assert bad["blind_passes"][0]["state"] == "invalid-key"
    assert any("the key of blind pass hidden cannot be read: study/blind/hidden/key.json:" in r
               for r in bad["not_ready"])


def test_with_a_stripped_and_a_blind_pass_the_first_in_plan_order_is_compared(tmp_path: Path) -> None:
    """The divergence rule compares one stripped pass with the verdict pass: the first stripped
    pass over the treatment in plan order (docs/blinding.md, "What the report shows")."""
    both = PLAN.replace(
        "  - {id: hidden,",
        "  - {id: blinded, conditions: [B], dimensions: [D1, D2], stripped: true}\n  - {id: hidden,")
    for text, expected in ((both, "blinded"), (_swap_passes(both), "hidden")):
        (tmp_path / "aoven.yaml").write_text(text, encoding="utf-8")
        chosen = blinding_pass(load_plan(tmp_path / "aoven.yaml"))
        assert chosen is not None and chosen.id == expected


def _swap_passes(text: str) -> str:
    lines = text.splitlines(keepends=True)
    i = next(n for n, line in enumerate(lines) if line.startswith("  - {id: blinded,"))
    lines[i], lines[i + 1] = lines[i + 1], lines[i]
    return "".join(lines)


def test_a_pending_blind_pass_the_verdict_does_not_use_blocks_nothing(tmp_path: Path) -> None:
    """With a stripped pass listed first, the divergence rule compares that one; the blind pass
    after it is reported as pending without holding up the verdict."""
    from aoven_git.analysis import analyse
    from aoven_git.model import Cell, CellKey, ScoreSheet, SheetId

    both = PLAN.replace(
        "  - {id: hidden,",
        "  - {id: blinded, conditions: [B], dimensions: [D1, D2], stripped: true}\n  - {id: hidden,")
    (tmp_path / "aoven.yaml").write_text(both, encoding="utf-8")
    plan = load_plan(tmp_path / "aoven.yaml")

    def sheet(rater: str, pass_id: str, conditions: str) -> ScoreSheet:
        keys = [((q, c), i) for (q, c) in sorted(UNBLINDED) for i in range(2) if c in conditions]
        cells = tuple(Cell(CellKey(q, c, f"D{i + 1}"), UNBLINDED[(q, c)][i], n)
                      for n, ((q, c), i) in enumerate(keys, 1))
        path = f"study/scores_{rater}_{pass_id}.md"
        return ScoreSheet(path, SheetId(rater, pass_id, "main"), "long", cells)

    sheets = [sheet(r, p, c) for r in ("cto", "logician") for p, c in (("unblinded", "AB"), ("blinded", "B"))]
    seals = {"ok": True, "status": "complete", "seals": [], "violations": []}
    doc = analyse(plan, sheets=sheets, seals=seals, bootstrap=0, blind_keys={}).as_dict()
    assert doc["blind_passes"] == [{"pass": "hidden", "state": "pending", "problem": None,
                                    "key": "study/blind/hidden/key.json", "used_by_verdict": False}]
    assert doc["blinding"]["pass"] == "blinded"
    assert doc["pending_raters"]["hidden"] == ["cto", "logician"]
    assert doc["verdict"] != "NOT-READY", doc["not_ready"]
    assert not any("hidden" in r for r in doc["not_ready"])
