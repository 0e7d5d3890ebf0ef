"""Amendments in the report, end to end on real git: the bundled example replayed by `demo --keep`
(pre-registered PASS, exploratory FAIL with `d8-marker-load`), then a second amendment appended
to that history, first with a required rater pending, then complete.

Every expected number is computed here from the score files themselves (read with the project's
score-file parser, which is not what is under test) following docs/statistics.md: cells after
consensus by hand, κ with scikit-learn, means and improvement in exact fractions. The changed
cells are checked against this computation and against the table in tests/phase2/README.md.
"""

from __future__ import annotations

import math
import re
import shutil
import subprocess
from collections.abc import Callable
from fractions import Fraction
from itertools import combinations
from pathlib import Path
from typing import Any

import pytest
from sklearn.metrics import cohen_kappa_score

from aoven_git.plan import load_plan
from aoven_git.scorefile import parse_score_file
from tests.conftest import EXAMPLE, Result, run_cli
from tests.report_documents import checked_report
from tests.test_render_html import _chromium, _console_lines, _run_chromium, parse

STUDY = "tests/phase2"
RATERS = ("cto", "logician", "redteam")
QUESTIONS = tuple(f"Q{i}" for i in range(1, 11))
DIMS = tuple(f"D{i}" for i in range(1, 9))
CONSENSUS = {("Q6", "A", "D3"): 2, ("Q3", "B", "D5"): 1}  # reconciliation.md of the example
Key = tuple[str, str, str]
Scores = dict[str, dict[Key, int]]
#: the second amendment appended in these tests: D7 of B re-scored by the two required raters
D7_RESCORES = {"cto": (1, 1, 1, 1, 1, 1, 1, 1, 2, 1), "logician": (1, 1, 1, 1, 1, 1, 1, 1, 2, 1)}
D7_ENTRY = """  - id: d7-clarity
    title: Marker density counts against clarity
    rationale: Second ruling, for the tests.
    dimensions: [D7]
    conditions: [B]
    passes: [unblinded]
"""
PEOPLE = {r: (r.title(), f"{r}@example.org") for r in (*RATERS, "lead")}


# --------------------------------------------------------------------------- the reference


def read_cells(path: Path) -> dict[Key, int]:
    plan = load_plan(EXAMPLE / "aoven.yaml")
    rel = path.relative_to(EXAMPLE).as_posix()
    sheet = parse_score_file(plan, f"{STUDY}/{rel}", path.read_bytes())
    assert sheet.ok, sheet.findings
    return {(c.key.question, c.key.condition, c.key.dimension): c.score for c in sheet.cells}


def example_scores() -> Scores:
    return {r: read_cells(EXAMPLE / f"scores_{r}.md") for r in RATERS}


def amended(scores: Scores, rescores: dict[str, dict[Key, int]], in_scope: Callable[[Key], bool]) -> Scores:
    """Each rater's cells in the scope replaced by their re-scores; a rater without re-scores has
    no cells there."""
    out = {}
    for rater in scores:
        kept = {k: v for k, v in scores[rater].items() if not in_scope(k)}
        kept.update(rescores.get(rater, {}))
        out[rater] = kept
    return out


def resolved(scores: Scores, consensus: dict[Key, int]) -> dict[Key, Fraction]:
    """Agreement, else the consensus, else (unflagged) the exact mean of the raters who scored it."""
    out = {}
    for key in {k for s in scores.values() for k in s}:
        values = [s[key] for s in scores.values() if key in s]
        assert max(values) - min(values) <= 1 or key in consensus, f"{key} is flagged"
        if len(set(values)) == 1:
            out[key] = Fraction(values[0])
        elif key in consensus:
            out[key] = Fraction(consensus[key])
        else:
            out[key] = Fraction(sum(values), len(values))
    return out


def kappa_min(scores: Scores, dim: str) -> float:
    """The minimum over rater pairs of quadratic κ over the items both scored (scikit-learn)."""
    values = []
    for a, b in combinations(scores, 2):
        items = sorted(k for k in scores[a] if k[2] == dim and k in scores[b])
        values.append(cohen_kappa_score([scores[a][k] for k in items], [scores[b][k] for k in items],
                                        labels=[0, 1, 2, 3], weights="quadratic"))
    return min(values)


def reference(scores: Scores) -> dict[str, Any]:
    """Counted dimensions, means, improvement and per-dimension deltas of the unblinded pass."""
    cells = resolved(scores, CONSENSUS)
    counted = [d for d in DIMS if kappa_min(scores, d) >= 0.6]

    def aggregate(q: str, c: str) -> Fraction:
        return sum((cells[(q, c, d)] for d in counted), Fraction(0))

    means = {c: sum((aggregate(q, c) for q in QUESTIONS), Fraction(0)) / len(QUESTIONS) for c in "AB"}
    delta = {d: sum((cells[(q, "B", d)] - cells[(q, "A", d)] for q in QUESTIONS), Fraction(0))
             / len(QUESTIONS) for d in DIMS}
    need = math.ceil(Fraction(5, 8) * len(counted))
    improving = sum(1 for q in QUESTIONS
                    if sum(cells[(q, "B", d)] < cells[(q, "A", d)] for d in counted) >= need)
    return {"cells": cells, "counted": counted, "means": means, "delta": delta, "improving": improving,
            "improvement": (means["A"] - means["B"]) / means["A"]}


def d8_rescores() -> dict[str, dict[Key, int]]:
    return {r: read_cells(EXAMPLE / "amendments" / "d8-marker-load" / f"scores_{r}.md") for r in RATERS}


def readme_changes() -> set[tuple[str, str, int, int]]:
    """(cell, rater, from, to) from the `before → after` table of tests/phase2/README.md."""
    text = (EXAMPLE / "README.md").read_text(encoding="utf-8")
    names = {"CTO": "cto", "Logician": "logician", "Red Team": "redteam"}
    out = set()
    for line in text.splitlines():
        cols = [c.strip() for c in line.strip().strip("|").split("|")]
        if cols[0] in names and len(cols) == 12:
            for q, value in zip(QUESTIONS, cols[1:11], strict=True):
                m = re.fullmatch(r"(\d) → (\d)", value)
                if m:
                    out.add((f"{q}/B/D8", names[cols[0]], int(m.group(1)), int(m.group(2))))
    return out


# --------------------------------------------------------------------------- the example, replayed


@pytest.fixture
def kept(demo_history: tuple[Result, Path]) -> tuple[Result, Path]:
    """`demo --keep`, replayed once per session (tests/conftest.py); read here, copied to change."""
    return demo_history


def test_the_example_amendment_beside_the_preregistered_verdict(kept: tuple[Result, Path]) -> None:
    res, keep = kept
    doc = checked_report((keep / "aoven-report.json").read_text(encoding="utf-8"))
    assert doc["verdict"] == "PASS" and doc["improvement_exact"] == "139/346"  # never changed
    [entry] = doc["amendments"]
    assert (entry["id"], entry["verdict"], entry["label"], entry["preregistered_verdict"]) == (
        "d8-marker-load", "FAIL", "exploratory", "PASS")
    assert entry["not_ready"] == [] and entry["pending_raters"] == {"unblinded": []}

    base, rescores = example_scores(), d8_rescores()
    layer = amended(base, rescores, lambda k: k[1:] == ("B", "D8"))
    expected = {(f"{q}/{c}/{d}", r, base[r][(q, c, d)], v)
                for r, cells in rescores.items() for (q, c, d), v in cells.items() if base[r][(q, c, d)] != v}
    assert expected == readme_changes()
    got = {(c["cell"], c["rater"], c["from"], c["to"]) for c in entry["changed_cells"]}
    assert got == expected and len(entry["changed_cells"]) == 9
    assert {c["pass"] for c in entry["changed_cells"]} == {"unblinded"}

    ref = reference(layer)
    assert ref["means"] == {"A": Fraction(173, 15), "B": Fraction(36, 5)}  # tests/phase2/README.md
    assert Fraction(entry["improvement_exact"]) == ref["improvement"] == Fraction(65, 173)
    assert entry["improvement"] == float(Fraction(65, 173))
    assert {c: Fraction(v) for c, v in entry["means_exact"].items()} == ref["means"]
    assert entry["counted_dimensions"] == ref["counted"] == doc["counted_dimensions"]
    d8 = next(d for d in entry["dimensions"] if d["id"] == "D8")
    assert Fraction(d8["delta_exact"]) == ref["delta"]["D8"] == Fraction(3, 5)
    kappa = entry["kappa"]["unblinded"]["D8"]
    assert list(entry["kappa"]) == ["unblinded"] and list(entry["kappa"]["unblinded"]) == ["D8"]
    assert kappa["value"] == pytest.approx(kappa_min(layer, "D8"), abs=1e-12)
    assert kappa["value_exact"] == "117/137" and kappa["counts"] is True

    old = resolved(base, CONSENSUS)
    moved = {(c["cell"], Fraction(c["from_exact"]), Fraction(c["to_exact"]))
             for c in entry["consensus_changes"]}
    assert moved == {(f"{q}/{c}/{d}", old[(q, c, d)], ref["cells"][(q, c, d)]) for (q, c, d) in ref["cells"]
                     if (c, d) == ("B", "D8") and old[(q, c, d)] != ref["cells"][(q, c, d)]}
    assert {(r["id"], r["from"], r["to"]) for r in entry["rules_changed"]} == {
        ("pass.load.D8", "met", "not-met"), ("fail.load.D8", "not-met", "met")}
    assert "d8-marker-load (Marker tokens count toward cognitive load): FAIL" in res.out
    assert "pre-registered verdict stays PASS" in res.out


def test_markdown_shows_both_verdicts_and_the_changed_cells(kept: tuple[Result, Path]) -> None:
    _, keep = kept
    text = (keep / "aoven-report.md").read_text(encoding="utf-8")
    assert "## 🟢 Verdict: **PASS**" in text
    part = text[text.index("## Amendments (exploratory)"):text.index("## Self-bias")]
    assert "### 🧪 `d8-marker-load`: Marker tokens count toward cognitive load" in part
    assert "> **Exploratory** · re-scores D8 of B in pass unblinded (10 cells per rater)" in part
    assert "| verdict | 🟢 PASS | 🔴 FAIL |" in part
    assert "| improvement | 40.2% | 37.6% |" in part
    for cell, rater, before, after in readme_changes():
        assert f"| `{cell}` | `{rater}` | {before} | {after} |" in part
    assert "| `D8` | 0.800 | 0.854 |" in part
    assert "🧪 **Exploratory, after amendments:** `d8-marker-load` 🔴 FAIL" in text


def test_html_shows_both_verdicts_and_the_amendment_chart(kept: tuple[Result, Path], tmp_path: Path) -> None:
    _, keep = kept
    page = keep / "aoven-report.html"
    tree = parse(page.read_text(encoding="utf-8"))
    [section] = [n for n in tree.root.iter() if n.attrs.get("id") == "amendment-d8-marker-load"]
    cards = [n.all_text() for n in section.find_all("div", "verdict")]
    assert len(cards) == 2 and "PASS" in cards[0] and "pre-registered" in cards[0].lower()
    assert "FAIL" in cards[1] and "exploratory" in cards[1].lower()
    [svg] = section.find_all("svg", "chart-amendment")
    assert svg.attrs["id"] == "chart-amendment-1"
    assert len(svg.find_all("rect", "amended-band")) == 1  # D8 only
    marks = svg.find_all("path", "moved-mark")
    assert len(marks) == 1 and "D8 B: 4 cells moved" in marks[0].all_text()
    bars = {n.all_text() for n in svg.find_all("rect", "bar-new")}
    assert "D8 B, exploratory: 1.40" in bars and "D8 A, exploratory: 0.80" in bars
    assert "D8 B, pre-registered: 1.10" in {n.all_text() for n in svg.find_all("rect", "bar-pre")}
    if _chromium() is None:
        pytest.skip("chromium not installed: no chromium/chromium-browser/google-chrome on PATH")
    dom = _run_chromium(tmp_path, page, "--dump-dom")
    assert dom.returncode == 0, dom.stderr[-2000:]
    assert 'id="chart-amendment-1"' in dom.stdout and 'id="amendment-d8-marker-load"' in dom.stdout
    assert _console_lines(dom.stderr) == []


# --------------------------------------------------------------------------- a second amendment


def git(repo: Path, *args: str, who: str = "lead") -> str:
    name, email = PEOPLE[who]
    env = {"GIT_AUTHOR_NAME": name, "GIT_AUTHOR_EMAIL": email, "GIT_COMMITTER_NAME": name,
           "GIT_COMMITTER_EMAIL": email}
    import os

    proc = subprocess.run(["git", *args], cwd=repo, capture_output=True, text=True, check=True,
                          env={**os.environ, **env})
    return proc.stdout


def as_rater(monkeypatch: pytest.MonkeyPatch, who: str) -> None:
    name, email = PEOPLE[who]
    for var, value in (("GIT_AUTHOR_NAME", name), ("GIT_AUTHOR_EMAIL", email),
                       ("GIT_COMMITTER_NAME", name), ("GIT_COMMITTER_EMAIL", email)):
        monkeypatch.setenv(var, value)


def d7_sheet(rater: str) -> str:
    rows = "".join(f"| {q} | B | D7 | {v} |\n" for q, v in zip(QUESTIONS, D7_RESCORES[rater], strict=True))
    return f"| Question | Condition | Dimension | Score |\n|---|---|---|---|\n{rows}"


def seal_d7(repo: Path, rater: str, monkeypatch: pytest.MonkeyPatch) -> None:
    path = repo / STUDY / "amendments" / "d7-clarity" / f"scores_{rater}.md"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(d7_sheet(rater), encoding="utf-8")
    as_rater(monkeypatch, rater)
    res = run_cli("seal", "--rater", rater, "--amendment", "d7-clarity", cwd=repo)
    assert res.code == 0, res.output


def report_json(repo: Path) -> dict[str, Any]:
    res = run_cli("report", "--format", "json", "--bootstrap", "0", cwd=repo)
    assert res.code == 0, res.output
    return checked_report(res.out)


def test_an_amendment_with_a_pending_rater_is_not_ready_on_its_own_line(
    kept: tuple[Result, Path], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _, keep = kept
    repo = tmp_path / "repo"
    shutil.copytree(keep, repo)
    plan = repo / "aoven.yaml"
    text = plan.read_text(encoding="utf-8")
    plan.write_text(text.replace("\nlocked:", "\n" + D7_ENTRY + "\nlocked:", 1), encoding="utf-8")
    git(repo, "commit", "-q", "-am", "Declare amendment d7-clarity")
    seal_d7(repo, "cto", monkeypatch)
    cto_file = repo / STUDY / "amendments" / "d7-clarity" / "scores_cto.md"
    sealed = cto_file.read_bytes()
    cto_file.unlink()  # it stays on cto's machine until the reveal

    doc = report_json(repo)
    assert doc["verdict"] == "PASS" and doc["not_ready"] == []  # the pre-registered verdict stands
    assert [(a["id"], a["verdict"]) for a in doc["amendments"]] == [("d8-marker-load", "FAIL"),
                                                                     ("d7-clarity", "NOT-READY")]
    second = doc["amendments"][1]
    assert second["pending_raters"] == {"unblinded": ["cto", "logician"]}
    assert "required rater logician has not sealed the re-scores of amendment d7-clarity for pass unblinded" \
        in second["not_ready"]
    assert second["improvement"] is None and second["means"] == {"A": None, "B": None}  # withheld
    md = run_cli("report", "--bootstrap", "0", cwd=repo).out
    assert "`d8-marker-load` 🔴 FAIL; `d7-clarity` ⚪ NOT-READY" in md
    part = md[md.index("### 🧪 `d7-clarity`"):md.index("## Self-bias")]
    assert "⚪ NOT-READY (exploratory) beside the pre-registered PASS" in part
    assert "- required rater logician has not sealed the re-scores of amendment d7-clarity" in part

    # logician seals, both reveal: the second amendment is computed on top of the first
    cto_file.write_bytes(sealed)
    seal_d7(repo, "logician", monkeypatch)
    for rater in ("cto", "logician"):
        as_rater(monkeypatch, rater)
        res = run_cli("reveal", "--rater", rater, "--amendment", "d7-clarity", cwd=repo)
        assert res.code == 0, res.output
    doc = report_json(repo)
    assert doc["verdict"] == "PASS"
    second = doc["amendments"][1]
    assert second["not_ready"] == [] and second["verdict"] != "NOT-READY"
    rescores = {r: {(q, "B", "D7"): v for q, v in zip(QUESTIONS, vs, strict=True)}
                for r, vs in D7_RESCORES.items()}
    layer = amended(amended(example_scores(), d8_rescores(), lambda k: k[1:] == ("B", "D8")),
                    rescores, lambda k: k[1:] == ("B", "D7"))
    assert "redteam" in layer and not any(k[1:] == ("B", "D7") for k in layer["redteam"])  # did not re-score
    ref = reference(layer)
    assert second["counted_dimensions"] == ref["counted"]
    assert Fraction(second["improvement_exact"]) == ref["improvement"]
    assert {c: Fraction(v) for c, v in second["means_exact"].items()} == ref["means"]
    d7 = second["kappa"]["unblinded"]["D7"]
    assert d7["value"] == pytest.approx(kappa_min(layer, "D7"), abs=1e-12)
    assert d7["pair_n"] == {"cto~logician": 20, "cto~redteam": 10, "logician~redteam": 10}
    d8 = next(d for d in second["dimensions"] if d["id"] == "D8")
    assert Fraction(d8["delta_exact"]) == Fraction(3, 5)  # the first amendment's D8 is still in
    assert {(c["cell"], c["rater"]) for c in second["changed_cells"]} == {
        ("Q6/B/D7", "cto"), ("Q6/B/D7", "logician"), ("Q9/B/D7", "logician")}
