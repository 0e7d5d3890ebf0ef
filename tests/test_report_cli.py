"""`aoven-git report` on the bundled example study, checked against independent references.

κ comes from scikit-learn, means and improvement from exact fractions computed here from the
score files' cells (read with the project's score-file parser, which is not what is under test),
following docs/statistics.md step by step. The Markdown rendering is pinned by a golden file; regenerate it
after an intended change with

    AOVEN_UPDATE_GOLDEN=1 python -m pytest tests/test_report_cli.py -q -k golden

and review the diff of tests/golden/example_report.md.
"""

from __future__ import annotations

import json
import math
import os
import shutil
import subprocess
from fractions import Fraction
from itertools import combinations
from pathlib import Path
from typing import Any

import pytest
from sklearn.metrics import cohen_kappa_score

from aoven_git import __version__
from aoven_git.plan import load_plan
from aoven_git.scorefile import parse_score_file
from tests.conftest import EXAMPLE, GitRepo, run_cli
from tests.report_documents import checked_report

GOLDEN = Path(__file__).resolve().parent / "golden" / "example_report.md"
STUDY = "tests/phase2"
RATERS = ("cto", "logician", "redteam")
PASSES = ("unblinded", "blinded")
DIMS = tuple(f"D{i}" for i in range(1, 9))
COUNTED = ("D1", "D2", "D3", "D4", "D5", "D6", "D8")
#: reconciliation.md of the example: the flagged cell and one unflagged cell get a consensus
CONSENSUS = {("Q6", "A", "D3"): 2, ("Q3", "B", "D5"): 1}
Key = tuple[str, str, str]
Scores = dict[tuple[str, str], dict[Key, int]]


def no_nan(text: str) -> Any:
    def refuse(const: str) -> Any:
        raise AssertionError(f"{const} in JSON output")

    return checked_report(text) if '"schema": "aoven-git/report/1"' in text else json.loads(
        text, parse_constant=refuse)


def report_json(root: Path, *args: str) -> dict[str, Any]:
    res = run_cli("report", "--format", "json", *args, cwd=root)
    assert res.code == 0, res.output
    return no_nan(res.out)


# --- the independent reference -------------------------------------------------------------------


def example_cells() -> Scores:
    """(rater, pass) → {(question, condition, dimension): score}, straight from the files."""
    plan = load_plan(EXAMPLE / "aoven.yaml")
    out: Scores = {}
    for path in sorted(EXAMPLE.glob("scores_*.md")):
        sheet = parse_score_file(plan, f"{STUDY}/{path.name}", path.read_bytes())
        assert sheet.ok, sheet.findings
        out[(sheet.sheet.rater, sheet.sheet.pass_id)] = {
            (c.key.question, c.key.condition, c.key.dimension): c.score for c in sheet.cells}
    assert sorted(out) == sorted((r, p) for r in RATERS for p in PASSES)
    assert all(len(out[(r, "unblinded")]) == 160 and len(out[(r, "blinded")]) == 80 for r in RATERS)
    return out


def resolved(scores: Scores, pass_id: str, consensus: dict[Key, int]) -> dict[Key, Fraction]:
    """Cells after consensus with `unflagged: mean`: agreement, else the consensus, else the exact mean."""
    sheets = [scores[(r, pass_id)] for r in RATERS]
    out = {}
    for key in sheets[0]:
        values = [s[key] for s in sheets]
        if len(set(values)) == 1:
            out[key] = Fraction(values[0])
        elif key in consensus:
            out[key] = Fraction(consensus[key])
        else:
            assert max(values) - min(values) <= 1, f"{key} is flagged but has no consensus"
            out[key] = Fraction(sum(values), len(values))
    return out


def mean(values: list[Fraction]) -> Fraction:
    return sum(values, Fraction(0)) / len(values)


@pytest.fixture(scope="module")
def reference() -> dict[str, Any]:
    scores = example_cells()
    unblinded = resolved(scores, "unblinded", CONSENSUS)
    blinded = resolved(scores, "blinded", {})
    questions = [f"Q{i}" for i in range(1, 11)]
    assert {q for q, _, _ in unblinded} == set(questions)

    def aggregate(q: str, c: str) -> Fraction:
        return sum((unblinded[(q, c, d)] for d in COUNTED), Fraction(0))

    need = math.ceil(Fraction(5, 8) * len(COUNTED))
    improved = [q for q in questions
                if sum(unblinded[(q, "B", d)] < unblinded[(q, "A", d)] for d in COUNTED) >= need]
    means = {c: mean([aggregate(q, c) for q in questions]) for c in "AB"}
    spread = {k: max(scores[(r, "unblinded")][k] for r in RATERS) - min(scores[(r, "unblinded")][k]
                                                                        for r in RATERS)
              for k in unblinded}
    return {
        "scores": scores,
        "means": means,
        "improvement": (means["A"] - means["B"]) / means["A"],
        "dim_mean": {(d, c): mean([unblinded[(q, c, d)] for q in questions]) for d in DIMS for c in "AB"},
        "improved": improved,
        "aggregates": {(q, c): aggregate(q, c) for q in questions for c in "AB"},
        "divergence": mean([abs(blinded[k] - unblinded[k]) for k in blinded]),
        "flagged": sorted(f"{q}/{c}/{d}" for (q, c, d), s in spread.items() if s > 1),
        "disagreeing": sorted(f"{q}/{c}/{d}" for (q, c, d), s in spread.items() if s > 0),
    }


@pytest.fixture(scope="module")
def example_report(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    root = tmp_path_factory.mktemp("example") / "study"
    shutil.copytree(EXAMPLE, root / STUDY)
    shutil.copy(EXAMPLE / "aoven.yaml", root / "aoven.yaml")
    return report_json(root)


# --- numbers -------------------------------------------------------------------------------------


def test_the_reference_agrees_with_the_example_readme(reference: dict[str, Any]) -> None:
    """The README of tests/phase2 states these by hand; the reference is checked against it first."""
    assert reference["means"] == {"A": Fraction(173, 15), "B": Fraction(69, 10)}
    assert reference["improvement"] == Fraction(139, 346)
    assert reference["flagged"] == ["Q6/A/D3"]
    assert len(reference["disagreeing"]) == 21
    assert reference["divergence"] == Fraction(37, 240)
    assert reference["improved"] == ["Q1", "Q2", "Q3", "Q6", "Q7", "Q8", "Q9", "Q10"]


def test_verdict_and_seals_outside_git(example_report: dict[str, Any]) -> None:
    r = example_report
    assert r["verdict"] == "PASS"
    assert r["seals"]["status"] == "not-verified" and r["seals"]["verified"] is False
    assert r["schema"] == "aoven-git/report/1" and r["round"] == "main"
    assert r["validation"]["ok"] is True and r["not_ready"] == []
    assert r["verdict_pass"] == "unblinded" and r["b_scores_from"] == "unblinded"
    assert r["raters"] == {"unblinded": list(RATERS), "blinded": list(RATERS)}


def test_kappa_equals_sklearn(example_report: dict[str, Any], reference: dict[str, Any]) -> None:
    """Quadratic weights over the full 0..3 scale, per pass, dimension and pair; the dimension's
    value is the minimum over pairs, `mean` is Light's κ. The JSON carries full precision, and
    the exact κ next to it; both are compared with sklearn's float."""
    scores = reference["scores"]
    for pass_id in PASSES:
        for dim in DIMS:
            entry = example_report["kappa"][pass_id][dim]
            pairs = {}
            for a, b in combinations(RATERS, 2):
                keys = sorted(k for k in scores[(a, pass_id)] if k[2] == dim)
                k = cohen_kappa_score([scores[(a, pass_id)][x] for x in keys],
                                      [scores[(b, pass_id)][x] for x in keys],
                                      labels=[0, 1, 2, 3], weights="quadratic")
                assert not math.isnan(k)
                pairs[f"{a}~{b}"] = k
                got = entry["pairs"][f"{a}~{b}"]
                assert got == pytest.approx(k, abs=1e-12), (pass_id, dim, a, b)
                assert float(Fraction(entry["pairs_exact"][f"{a}~{b}"])) == pytest.approx(k, abs=1e-12)
            assert entry["n"] == len(keys)
            assert entry["value"] == pytest.approx(min(pairs.values()), abs=1e-12)
            assert entry["mean"] == pytest.approx(sum(pairs.values()) / 3, abs=1e-12)
            assert entry["value"] == float(Fraction(entry["value_exact"]))
            assert entry["counts"] is (min(pairs.values()) >= 0.6)
    counted = [d for d in DIMS if example_report["kappa"]["unblinded"][d]["counts"]]
    assert counted == list(COUNTED) == example_report["counted_dimensions"]
    assert list(example_report["excluded_dimensions"]) == ["D7"]


def test_means_and_improvement_are_the_exact_fractions(example_report: dict[str, Any],
                                                        reference: dict[str, Any]) -> None:
    r = example_report
    assert {c: Fraction(v) for c, v in r["means_exact"].items()} == reference["means"]
    assert Fraction(r["improvement_exact"]) == reference["improvement"]
    assert r["improvement_exact"] == "139/346"
    assert r["improvement"] == 139 / 346  # the float nearest the exact value, not a rounded one
    for dim in r["dimensions"]:
        d = dim["id"]
        a, b = reference["dim_mean"][(d, "A")], reference["dim_mean"][(d, "B")]
        assert (Fraction(dim["mean_A_exact"]), Fraction(dim["mean_B_exact"])) == (a, b), d
        assert Fraction(dim["delta_exact"]) == b - a, d
        assert dim["counted"] is (d in COUNTED)
    improves = [q["id"] for q in r["questions"] if q["improves"]]
    assert improves == reference["improved"]
    for q in r["questions"]:
        for c in "AB":
            expected = float(reference["aggregates"][(q["id"], c)])
            assert q[f"aggregate_{c}"] == expected
            assert Fraction(q[f"aggregate_{c}_exact"]) == reference["aggregates"][(q["id"], c)]
    assert Fraction(r["blinding"]["divergence_exact"]) == reference["divergence"]
    assert r["blinding"]["used"] == "unblinded"


def test_disagreeing_cells_and_their_resolution(example_report: dict[str, Any],
                                                 reference: dict[str, Any]) -> None:
    r = example_report
    assert r["flagged_cells"] == reference["flagged"] and r["contested_cells"] == []
    by_cell = {c["cell"]: c for c in r["cells"] if c["pass"] == "unblinded"}
    assert sorted(by_cell) == reference["disagreeing"]
    assert by_cell["Q6/A/D3"]["scores"] == {"cto": 1, "logician": 3, "redteam": 2}
    assert (by_cell["Q6/A/D3"]["resolution"], by_cell["Q6/A/D3"]["value_exact"]) == ("consensus", "2")
    assert (by_cell["Q3/B/D5"]["resolution"], by_cell["Q3/B/D5"]["value_exact"]) == ("consensus", "1")
    scores = reference["scores"]
    for cell, entry in by_cell.items():
        if cell in ("Q6/A/D3", "Q3/B/D5"):
            continue
        key = tuple(cell.split("/"))
        values = [scores[(rater, "unblinded")][key] for rater in RATERS]
        assert entry["resolution"] == "mean", cell
        assert Fraction(entry["value_exact"]) == Fraction(sum(values), 3), cell


# --- renderings and options ----------------------------------------------------------------------


def test_markdown_matches_golden(example_study: Path) -> None:
    res = run_cli("report", cwd=example_study)
    assert res.code == 0, res.output
    text = res.out.replace(f"aoven-git {__version__}", "aoven-git {VERSION}")
    if os.environ.get("AOVEN_UPDATE_GOLDEN") == "1":
        GOLDEN.write_text(text, encoding="utf-8")
        pytest.skip("golden file rewritten; review the diff")
    assert text == GOLDEN.read_text(encoding="utf-8")
    assert "**PASS**" in text and "139/346" in text


def test_output_file_holds_what_stdout_would(example_study: Path, tmp_path: Path) -> None:
    for fmt in ("markdown", "json", "html"):
        printed = run_cli("report", "--format", fmt, cwd=example_study)
        target = tmp_path / f"report.{fmt}"
        res = run_cli("report", "--format", fmt, "-o", str(target), cwd=example_study)
        assert res.code == 0, res.output
        assert res.out == ""
        assert "PASS" in res.err and str(target) in res.err
        assert target.read_text(encoding="utf-8") == printed.out
    html = (tmp_path / "report.html").read_text(encoding="utf-8")
    assert html.lstrip().lower().startswith("<!doctype html")
    for chart in ("chart-means", "chart-kappa", "chart-questions"):
        assert f'id="{chart}"' in html
    # an unwritable target is a usage error, not a traceback
    res = run_cli("report", "-o", str(tmp_path / "no-such-dir" / "r.md"), cwd=example_study)
    assert res.code == 2 and "Traceback" not in res.output


def _edit(path: Path, old: str, new: str) -> None:
    text = path.read_text(encoding="utf-8")
    assert old in text, old
    path.write_text(text.replace(old, new), encoding="utf-8")


def _make(root: Path, verdict: str) -> None:
    """Turn the example into a study whose verdict is `verdict`, by changing only plan thresholds
    or the reconciliation (the improvement stays 139/346 ≈ 40.2%)."""
    plan, recon = root / "aoven.yaml", root / STUDY / "reconciliation.md"
    if verdict == "FAIL":  # 40.2% < fail line 50%
        _edit(plan, "pass: {improvement: 0.20,", "pass: {improvement: 0.60,")
        _edit(plan, "fail: {improvement: 0.10}", "fail: {improvement: 0.50}")
    elif verdict == "INCONCLUSIVE":  # below the 50% pass line, above the 10% fail line
        _edit(plan, "pass: {improvement: 0.20,", "pass: {improvement: 0.50,")
    elif verdict == "CONTESTED":
        # Q6/A/D3 left open between 1 and 3: improvement 136/343 ≈ 39.7% or 142/349 ≈ 40.7%,
        # on either side of a 40% pass line
        _edit(plan, "pass: {improvement: 0.20,", "pass: {improvement: 0.40,")
        text = recon.read_text(encoding="utf-8").splitlines(keepends=True)
        recon.write_text("".join(ln.replace("| 2 |", "| contested |") if ln.startswith("| Q6/A/D3")
                                 else ln for ln in text), encoding="utf-8")
    elif verdict == "NOT-READY":  # the flagged cell has no consensus
        recon.unlink()


FAIL_ON_EXITS = {  # verdict → exit code for --fail-on fail, inconclusive, not-ready
    "PASS": (0, 0, 0),
    "FAIL": (1, 1, 1),
    "INCONCLUSIVE": (0, 1, 1),
    "CONTESTED": (0, 1, 1),
    "NOT-READY": (0, 0, 1),
}


@pytest.mark.parametrize("verdict", list(FAIL_ON_EXITS))
def test_fail_on_levels(example_study: Path, verdict: str) -> None:
    _make(example_study, verdict)
    assert report_json(example_study)["verdict"] == verdict
    for level, expected in zip(("fail", "inconclusive", "not-ready"), FAIL_ON_EXITS[verdict], strict=True):
        res = run_cli("report", "--format", "json", "--fail-on", level, cwd=example_study)
        assert res.code == expected, (level, res.err)
        assert no_nan(res.out)["verdict"] == verdict  # the report is written whatever the exit
    assert run_cli("report", "--fail-on", "sometimes", cwd=example_study).code == 2


def test_contested_reports_both_extremes(example_study: Path) -> None:
    _make(example_study, "CONTESTED")
    r = report_json(example_study)
    assert r["contested_cells"] == ["Q6/A/D3"]
    assert r["extremes"]["best"]["verdict"] == "PASS"
    assert r["extremes"]["worst"]["verdict"] == "INCONCLUSIVE"
    assert r["extremes"]["best"]["improvement"] == 142 / 349
    assert r["extremes"]["worst"]["improvement"] == 136 / 343
    assert (r["extremes"]["best"]["improvement_exact"], r["extremes"]["worst"]["improvement_exact"]) == (
        "142/349", "136/343")


def git_rev(repo: Path, rev: str) -> str:
    import subprocess

    return subprocess.run(["git", "rev-parse", rev], cwd=repo, capture_output=True, text=True,
                          check=True).stdout.strip()


def test_rev_reports_committed_files_not_the_work_tree(demo_repo: Path) -> None:
    repo = demo_repo  # `demo --keep`'s honest history: reconciliation, then an amendment
    recon = subprocess.run(["git", "log", "--reverse", "--format=%H", "--grep", "^Reconciliation: "],
                           cwd=repo, capture_output=True, text=True, check=True).stdout.split()[0]
    # uncommitted work-tree edits: the reconciliation is gone, a logician file is broken
    (repo / STUDY / "reconciliation.md").unlink()
    (repo / STUDY / "scores_logician_blinded.md").write_text("not a score file\n", encoding="utf-8")

    head = report_json(repo, "--rev", "HEAD")
    assert head["verdict"] == "PASS" and head["improvement_exact"] == "139/346"
    assert head["validation"]["ok"] is True
    assert head["seals"]["status"] == "complete"
    q6 = next(c for c in head["cells"] if c["cell"] == "Q6/A/D3" and c["pass"] == "unblinded")
    assert (q6["resolution"], q6["value_exact"]) == ("consensus", "2")

    # before the raters' reconciliation commits (one each): the flagged cell has no consensus yet
    before = report_json(repo, "--rev", f"{recon}~1")
    assert before["verdict"] == "NOT-READY" and before["validation"]["ok"] is True
    assert any("Q6/A/D3" in reason for reason in before["not_ready"]), before["not_ready"]
    assert before["source"]["revision"] == git_rev(repo, f"{recon}~1")
    assert before["source"]["work_tree"] is False

    # by default the committed files of HEAD, and the uncommitted edits keep it NOT-READY
    work = report_json(repo)
    assert work["verdict"] == "NOT-READY" and work["validation"]["ok"] is True
    assert work["source"]["clean"] is False and work["source"]["revision"] == git_rev(repo, "HEAD")
    assert work["source"]["uncommitted"] == [f"{STUDY}/reconciliation.md (D)",
                                             f"{STUDY}/scores_logician_blinded.md (M)"]
    assert any(r.startswith("uncommitted changes to study files") for r in work["not_ready"])
    # --work-tree previews the edits, labelled as such
    preview = report_json(repo, "--work-tree")
    assert preview["source"]["work_tree"] is True and preview["validation"]["ok"] is False
    assert [f["path"] for f in preview["validation"]["files"] if f["errors"]] == [
        f"{STUDY}/scores_logician_blinded.md"]
    assert preview["reconciliation"]["attribution"] == "not-checked"


# --- bad input -----------------------------------------------------------------------------------


def _refused(res: Any, code: int, *words: str) -> None:
    assert res.code == code, res.output
    assert "Traceback" not in res.output
    for w in words:
        assert w in res.err, (w, res.err)


def test_unknown_round(example_study: Path) -> None:
    _refused(run_cli("report", "--round", "retest9", cwd=example_study), 2, "retest9")


def test_unknown_rev(tmp_path: Path) -> None:
    repo = GitRepo(tmp_path / "repo")
    shutil.copytree(EXAMPLE, repo.path / STUDY)
    shutil.copy(EXAMPLE / "aoven.yaml", repo.path / "aoven.yaml")
    repo.commit("study")
    _refused(run_cli("report", "--rev", "no-such-branch", cwd=repo.path), 2, "no-such-branch")


def test_no_plan(tmp_path: Path) -> None:
    (tmp_path / "empty").mkdir()
    _refused(run_cli("report", cwd=tmp_path / "empty"), 2, "aoven.yaml")
    _refused(run_cli("report", "--plan", str(tmp_path / "missing.yaml"), cwd=tmp_path / "empty"), 2,
             "missing.yaml")


@pytest.mark.parametrize("content", [
    "not a score file at all\n",
    "| Q | Cond | D1 |\n|---|---|---|\n| Q1 | A | 7 |\n",
    "\udcff",
])
def test_invalid_score_file_is_not_ready_and_named(example_study: Path, content: str) -> None:
    path = example_study / STUDY / "scores_logician.md"
    if content == "\udcff":
        path.write_bytes(b"\xff\xfe not utf-8 \xff")
    else:
        path.write_text(content, encoding="utf-8")
    for fmt in ("json", "markdown", "html"):
        res = run_cli("report", "--format", fmt, cwd=example_study)
        assert res.code == 0, res.output
        assert "Traceback" not in res.output
        assert "scores_logician.md" in res.out
    r = report_json(example_study)
    assert r["verdict"] == "NOT-READY"
    assert r["validation"]["ok"] is False
    bad = [f for f in r["validation"]["files"] if f["errors"]]
    assert [f["path"] for f in bad] == [f"{STUDY}/scores_logician.md"]
    assert any("scores_logician.md" in reason for reason in r["not_ready"]), r["not_ready"]
    assert run_cli("report", "--fail-on", "not-ready", cwd=example_study).code == 1


def test_no_nan_when_kappa_is_undefined(tmp_path: Path) -> None:
    """Every rater gives every cell the same score: κ is undefined on every dimension. The JSON
    says so with null and a reason, never NaN, and the verdict cannot be PASS."""
    from tests.sealing.conftest import PLAN, score_text

    root = tmp_path / "study"
    (root / "study" / "test_a").mkdir(parents=True)
    (root / "aoven.yaml").write_text(PLAN, encoding="utf-8")
    for q in ("q1", "q2"):
        for c in ("a", "b"):
            (root / "study" / f"test_{c}").mkdir(exist_ok=True)
            (root / "study" / f"test_{c}" / f"{q}.md").write_text(f"# {q}\n\nAn answer.\n", encoding="utf-8")
    for rater in RATERS:
        (root / "study" / f"scores_{rater}.md").write_text(score_text(rater), encoding="utf-8")
    res = run_cli("report", "--format", "json", cwd=root)
    assert res.code == 0 and res.out, res.output
    r = no_nan(res.out)
    for dim, entry in r["kappa"]["unblinded"].items():
        assert entry["value"] is None and entry["reason"], dim
        assert entry["counts"] is False
        assert all(v is None for v in entry["pairs"].values())
    assert r["counted_dimensions"] == []
    assert r["verdict"] != "PASS"
    assert "NaN" not in run_cli("report", cwd=root).out
    assert "NaN" not in run_cli("report", "--format", "html", cwd=root).out


def test_uncommitted_plan_in_git_says_seals_were_not_verified(example_study: Path) -> None:
    repo = GitRepo(example_study)  # `git init` in the example folder; nothing committed
    repo.write("README.md", "study\n")
    repo.commit("a first commit without the plan", "README.md")
    r = report_json(example_study)
    assert r["verdict"] == "NOT-READY"
    assert r["seals"]["verified"] is False
    assert any("not committed" in reason for reason in r["not_ready"]), r["not_ready"]


def test_from_json_renders_without_recomputing(example_study: Path, tmp_path: Path) -> None:
    saved = tmp_path / "r.json"
    assert run_cli("report", "--format", "json", "-o", str(saved), cwd=example_study).code == 0
    direct = run_cli("report", "--format", "markdown", cwd=example_study)
    # the study may change afterwards: rendering the saved JSON must not look at it
    shutil.rmtree(example_study / STUDY)
    again = run_cli("report", "--from-json", str(saved), "--format", "markdown", cwd=example_study)
    assert again.code == 0 and again.out == direct.out
    html = run_cli("report", "--from-json", str(saved), "--format", "html", cwd=example_study)
    assert html.code == 0 and 'id="chart-means"' in html.out


def test_from_json_refuses_what_is_not_a_report(tmp_path: Path) -> None:
    for name, content in (("x.json", '{"verdict": "PASS"}'), ("y.json", "not json"), ("z.json", "[]")):
        (tmp_path / name).write_text(content)
        res = run_cli("report", "--from-json", str(tmp_path / name), cwd=tmp_path)
        assert res.code == 2 and name in res.err and "Traceback" not in res.output
    assert run_cli("report", "--from-json", str(tmp_path / "missing.json"), cwd=tmp_path).code == 2
