"""`validate`: study-level checks (duplicate sheets, quotes), file selection, CLI output and exit codes."""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import pytest

from aoven_git.plan import load_plan
from aoven_git.validation import validate_sources, work_tree_sources
from tests.conftest import DEFAULT_PLAN, GitRepo, run_cli
from tests.test_scorefile import line_of, long, scores, set_row, wide

STUDY = "tests/phase2"


@pytest.fixture
def study(tmp_path: Path) -> Path:
    """A plain folder with the default plan, one response per item and two clean score files."""
    root = tmp_path / "s"
    (root / STUDY).mkdir(parents=True)
    shutil.copy(DEFAULT_PLAN, root / "aoven.yaml")
    for c in "ab":
        (root / STUDY / f"test_{c}").mkdir()
        for q in range(1, 11):
            (root / STUDY / f"test_{c}" / f"q{q}.md").write_text(
                f"# Q{q}\n\n## Response\n\n[FACT] Answer {c.upper()}{q} says that apples are red.\n", "utf-8"
            )
    (root / STUDY / "scores_cto.md").write_text(wide(scores(1)), "utf-8")
    (root / STUDY / "scores_logician.md").write_text(
        long(scores(2)).replace("rater: cto", "rater: logician"), "utf-8"
    )
    return root


def test_clean_study_exits_0_with_summary(study: Path) -> None:
    r = run_cli("validate", cwd=study)
    assert r.code == 0, r.output
    assert "2 file(s), 320 cells, 0 error(s), 0 warning(s)" in r.out


def test_json_shape(study: Path) -> None:
    target = study / STUDY / "scores_logician.md"
    target.write_text(target.read_text("utf-8").replace("| Q1 | A | D7 |", "| Q1 | A | D9 |"), "utf-8")
    r = run_cli("validate", "--format", "json", cwd=study)
    assert r.code == 1
    doc = json.loads(r.out)
    assert doc["ok"] is False
    by_path = {f["path"]: f for f in doc["files"]}
    assert set(by_path) == {f"{STUDY}/scores_cto.md", f"{STUDY}/scores_logician.md"}
    cto = by_path[f"{STUDY}/scores_cto.md"]
    assert (cto["rater"], cto["pass"], cto["round"], cto["cells"]) == ("cto", "unblinded", "main", 160)
    assert cto["errors"] == [] and cto["warnings"] == []
    log = by_path[f"{STUDY}/scores_logician.md"]
    line = next(i for i, t in enumerate(target.read_text("utf-8").splitlines(), 1) if "| D9 |" in t)
    assert {"line": line, "code": "unknown-dimension"} in [
        {"line": e["line"], "code": e["code"]} for e in log["errors"]
    ]
    assert all(set(e) == {"line", "code", "message"} for e in log["errors"])


def test_text_output_is_compiler_style(study: Path) -> None:
    target = study / STUDY / "scores_cto.md"
    text = target.read_text("utf-8")
    lines = text.splitlines()
    row = next(i for i, t in enumerate(lines) if t.startswith("| Q2 Label | B |"))
    cells = lines[row].split("|")
    cells[3] = " 7 "
    lines[row] = "|".join(cells)
    target.write_text("\n".join(lines) + "\n", "utf-8")
    r = run_cli("validate", cwd=study)
    assert r.code == 1
    assert f"{STUDY}/scores_cto.md:{row + 1}: error[score-off-scale]: Q2/B/D1" in r.out
    assert "FAILED" in r.out.splitlines()[-1]


def test_github_format(study: Path) -> None:
    (study / STUDY / "scores_redteam.md").write_text("no table here\n", "utf-8")
    r = run_cli("validate", "--format", "github", cwd=study)
    assert r.code == 1
    assert f"::error file={STUDY}/scores_redteam.md,line=1,title=aoven-git no-score-table::" in r.out


def test_explicit_files_and_outside_study_dir(study: Path) -> None:
    r = run_cli("validate", f"{STUDY}/scores_cto.md", cwd=study)
    assert r.code == 0 and "1 file(s)" in r.out
    r = run_cli("validate", "aoven.yaml", cwd=study)
    assert r.code == 2 and "not a score or reconciliation file" in r.err
    r = run_cli("validate", f"{STUDY}/scores_nobody_here.md", cwd=study)
    assert r.code == 2 and "no such file" in r.err
    r = run_cli("validate", str(study.parent / "elsewhere.md"), cwd=study)
    assert r.code == 2


def test_missing_plan_is_exit_2(tmp_path: Path) -> None:
    r = run_cli("validate", cwd=tmp_path)
    assert r.code == 2 and "plan" in r.err


def test_unknown_rater_and_symlink_in_work_tree(study: Path) -> None:
    (study / STUDY / "scores_bob.md").write_text(wide(scores()), "utf-8")
    os.symlink("scores_cto.md", study / STUDY / "scores_redteam.md")
    plan = load_plan(study / "aoven.yaml")
    files, links = work_tree_sources(study, plan)
    assert links == {f"{STUDY}/scores_redteam.md"}
    assert files[f"{STUDY}/scores_redteam.md"] == b"scores_cto.md"  # never followed
    report = validate_sources(plan, files, root=study, symlinks=links)
    found = {(p, f.code, f.line) for p, fs in report.findings.items() for f in fs}
    assert (f"{STUDY}/scores_bob.md", "unknown-rater", 1) in found
    assert (f"{STUDY}/scores_redteam.md", "symlink", 1) in found
    assert not report.ok


def test_duplicate_sheet(study: Path) -> None:
    (study / STUDY / "scores_cto_main.md").write_text(wide(scores(3)), "utf-8")
    plan = load_plan(study / "aoven.yaml")
    files, _ = work_tree_sources(study, plan)
    report = validate_sources(plan, files, root=study)
    dup = [(p, f.line) for p, fs in report.findings.items() for f in fs if f.code == "duplicate-sheet"]
    assert dup == [(f"{STUDY}/scores_cto_main.md", 1)]
    assert "scores_cto.md" in report.findings[f"{STUDY}/scores_cto_main.md"][0].message


def quoted(study: Path, quote: str) -> tuple[Path, int]:
    """Put a quote in the citation of Q3/A/D7 of the logician's (long layout) file."""
    target = study / STUDY / "scores_logician.md"
    text = target.read_text("utf-8")
    score = scores(2)[("Q3", "A", "D7")]
    text = set_row(text, "Q3", "A", "D7", f'{score} |  | "{quote}" |')
    target.write_text(text, "utf-8")
    return target, line_of(text, "| Q3 | A | D7 |")


def test_quote_found_is_silent(study: Path) -> None:
    quoted(study, "Answer A3 says that apples")  # the [FACT] marker may be left out
    r = run_cli("validate", "--format", "json", cwd=study)
    assert r.code == 0, r.output
    assert all(not f["warnings"] for f in json.loads(r.out)["files"])


def test_quote_found_in_another_response(study: Path) -> None:
    _, line = quoted(study, "Answer B7 says")
    r = run_cli("validate", "--format", "json", cwd=study)
    assert r.code == 0  # a warning, not an error
    warnings = next(f for f in json.loads(r.out)["files"] if f["path"].endswith("logician.md"))["warnings"]
    assert [(w["line"], w["code"]) for w in warnings] == [(line, "quote-not-found")]
    assert f"{STUDY}/test_b/q7.md" in warnings[0]["message"]
    assert f"{STUDY}/test_a/q3.md" in warnings[0]["message"]


def test_quote_nowhere(study: Path) -> None:
    _, line = quoted(study, "bananas are blue")
    plan = load_plan(study / "aoven.yaml")
    files, _ = work_tree_sources(study, plan)
    report = validate_sources(plan, files, root=study)
    w = [f for f in report.findings[f"{STUDY}/scores_logician.md"] if f.code == "quote-not-found"]
    assert [f.line for f in w] == [line] and "occurs in" not in w[0].message


def test_stripped_pass_matches_the_stripped_text(study: Path) -> None:
    """Before strip-markers ran, the stripped copy is derived; a quote with a marker is not in it."""
    s = {k: v for k, v in scores().items() if k[1] == "B"}
    text = long(s, front="---\nrater: cto\npass: blinded\n---\n")
    text = text.replace(
        "| Q1 | B | D7 | " + str(s[("Q1", "B", "D7")]) + " |  |  |",
        "| Q1 | B | D7 | " + str(s[("Q1", "B", "D7")]) + ' |  | "Answer B1 says" |',
    )
    text = text.replace(
        "| Q2 | B | D7 | " + str(s[("Q2", "B", "D7")]) + " |  |  |",
        "| Q2 | B | D7 | " + str(s[("Q2", "B", "D7")]) + ' |  | "[FACT] Answer B2" |',
    )
    plan = load_plan(study / "aoven.yaml")
    report = validate_sources(plan, {f"{STUDY}/scores_cto_blinded.md": text.encode()}, root=study)
    w = [f for f in report.findings[f"{STUDY}/scores_cto_blinded.md"] if f.code == "quote-not-found"]
    assert len(w) == 1 and "Q2/B/D7" in w[0].message


def test_missing_response_and_foreign_file(study: Path) -> None:
    (study / STUDY / "test_a" / "q3.md").unlink()
    _, line = quoted(study, "anything")
    plan = load_plan(study / "aoven.yaml")
    files, _ = work_tree_sources(study, plan)
    files["README.md"] = b"# readme"
    report = validate_sources(plan, files, root=study)
    found = {(p, f.code, f.line) for p, fs in report.findings.items() for f in fs}
    assert (f"{STUDY}/scores_logician.md", "response-missing", line) in found
    assert ("README.md", "not-a-score-file", 1) in found


def test_reconciliation_files_are_listed(study: Path) -> None:
    (study / STUDY / "reconciliation.md").write_text(
        "| Cell | Rater | Justification | Consensus |\n", "utf-8"
    )
    r = run_cli("validate", "--format", "json", cwd=study)
    files = {f["path"]: f for f in json.loads(r.out)["files"]}
    assert files[f"{STUDY}/reconciliation.md"]["kind"] == "reconciliation"


def test_example_study_validates(example_study: Path) -> None:
    if not list((example_study / STUDY).glob("scores_*.md")):
        pytest.skip("example score files not written yet")
    r = run_cli("validate", "--format", "json", cwd=example_study)
    assert r.code == 0, r.out
    doc = json.loads(r.out)
    scores = [f for f in doc["files"] if f["kind"] == "score"]
    assert all(f["cells"] in (80, 160) for f in scores if "amendment" not in f)
    # the example's amendment re-scores D8 of B in the unblinded pass: 10 questions x 1 cell
    amended = {f["rater"]: f["cells"] for f in scores if f.get("amendment") == "d8-marker-load"}
    assert amended == {"cto": 10, "logician": 10, "redteam": 10}


# --------------------------------------------------------------------------- --staged


def test_staged_reads_the_index_not_the_work_tree(git_repo: GitRepo) -> None:
    shutil.copy(DEFAULT_PLAN, git_repo.path / "aoven.yaml")
    good = wide(scores())
    bad = good.replace("| Q1 Label | A |", "| Q77 Label | A |")
    git_repo.write(f"{STUDY}/scores_cto.md", good)
    git_repo.git("add", "-A")
    git_repo.write(f"{STUDY}/scores_cto.md", bad)  # unstaged edit
    assert run_cli("validate", "--staged", cwd=git_repo.path).code == 0
    assert run_cli("validate", cwd=git_repo.path).code == 1
    git_repo.git("add", "-A")
    git_repo.write(f"{STUDY}/scores_cto.md", good)  # the index is now the bad one
    r = run_cli("validate", "--staged", f"{STUDY}/scores_cto.md", cwd=git_repo.path)
    assert r.code == 1 and "unknown-question" in r.out
    assert run_cli("validate", cwd=git_repo.path).code == 0


def test_staged_unknown_file_and_outside_git(git_repo: GitRepo, tmp_path: Path) -> None:
    shutil.copy(DEFAULT_PLAN, git_repo.path / "aoven.yaml")
    git_repo.write(f"{STUDY}/scores_cto.md", wide(scores()))
    r = run_cli("validate", "--staged", f"{STUDY}/scores_cto.md", cwd=git_repo.path)
    assert r.code == 2 and "not in the git index" in r.err
    plain = tmp_path / "plain"
    plain.mkdir()
    shutil.copy(DEFAULT_PLAN, plain / "aoven.yaml")
    r = run_cli("validate", "--staged", cwd=plain)
    assert r.code == 3 and "not a git repository" in r.err


def test_staged_symlink_is_an_error(git_repo: GitRepo) -> None:
    shutil.copy(DEFAULT_PLAN, git_repo.path / "aoven.yaml")
    git_repo.write(f"{STUDY}/scores_cto.md", wide(scores()))
    os.symlink("scores_cto.md", git_repo.path / STUDY / "scores_logician.md")
    git_repo.git("add", "-A")
    r = run_cli("validate", "--staged", "--format", "json", cwd=git_repo.path)
    assert r.code == 1
    files = {f["path"]: f for f in json.loads(r.out)["files"]}
    assert [e["code"] for e in files[f"{STUDY}/scores_logician.md"]["errors"]] == ["symlink"]
