"""Messages that name what is wrong and how to fix it (issue "A study a team can finish", item 6):
output suffixes the report cannot write, a dependency missing from the running Python, and the
score-file mistakes people really make."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import EXAMPLE, ROOT, GitRepo, run_cli

# --------------------------------------------------------------------------- report -o suffixes


@pytest.mark.parametrize("name", ["report.pdf", "report.txt", "Report.DOCX"])
def test_report_refuses_an_output_suffix_it_cannot_write(example_study: Path, tmp_path: Path,
                                                         name: str) -> None:
    target = tmp_path / name
    res = run_cli("report", "-o", str(target), cwd=example_study)
    assert res.code == 2, res.output
    suffix = Path(name).suffix.lower()
    assert f"aoven-git cannot write {suffix} files; the accepted suffixes are .md, .markdown, .json, " \
           ".html, .htm" in res.err
    assert not target.exists()
    assert "Traceback" not in res.output


def test_report_refuses_before_writing_any_of_several_outputs(example_study: Path, tmp_path: Path) -> None:
    good, bad = tmp_path / "report.html", tmp_path / "report.pdf"
    res = run_cli("report", "-o", str(good), "-o", str(bad), cwd=example_study)
    assert res.code == 2 and "cannot write .pdf files" in res.err, res.output
    assert not good.exists() and not bad.exists()


def test_report_without_a_suffix_still_takes_the_format(example_study: Path, tmp_path: Path) -> None:
    target = tmp_path / "summary"
    res = run_cli("report", "--format", "json", "--bootstrap", "0", "-o", str(target), cwd=example_study)
    assert res.code == 0, res.output
    assert target.read_text(encoding="utf-8").startswith("{")


# --------------------------------------------------------------------------- missing dependency

#: run aoven-git as `python -m aoven_git` would, with `blocked` made unimportable
BLOCKER = """\
import importlib.abc, runpy, sys
blocked = sys.argv[1]
class Blocker(importlib.abc.MetaPathFinder):
    def find_spec(self, name, path=None, target=None):
        if name == blocked or name.startswith(blocked + "."):
            raise ModuleNotFoundError(f"No module named {name!r}", name=name)
        return None
sys.meta_path.insert(0, Blocker())
sys.argv = ["aoven-git", *sys.argv[2:]]
runpy.run_module("aoven_git", run_name="__main__", alter_sys=True)
"""


def run_without(module: str, *args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-c", BLOCKER, module, *args], cwd=cwd, capture_output=True,
                          text=True, check=False, env={"PYTHONPATH": str(ROOT), "PATH": "/usr/bin:/bin"})


def assert_names_interpreter_and_fix(proc: subprocess.CompletedProcess[str], module: str,
                                     package: str) -> None:
    assert proc.returncode == 2, proc.stderr
    assert proc.stderr.startswith(f"aoven-git: error: the Python running aoven-git ({sys.executable}) has no "
                                  f"module named '{module}' ({package}, which aoven-git needs)."), proc.stderr
    assert f"Fix: install aoven-git for this Python: {sys.executable} -m pip install aoven-git" in proc.stderr
    assert "bug in aoven-git" not in proc.stderr and "Traceback" not in proc.stderr


def test_a_dependency_a_command_imports_is_named_with_the_interpreter(example_study: Path) -> None:
    proc = run_without("scipy", "report", cwd=example_study)
    assert_names_interpreter_and_fix(proc, "scipy", "scipy")


def test_gitpython_missing_is_named_with_the_interpreter(tmp_path: Path) -> None:
    proc = run_without("git", "demo", "--keep", str(tmp_path / "demo"), cwd=tmp_path)
    assert_names_interpreter_and_fix(proc, "git", "GitPython")


def test_click_missing_before_the_cli_loads_is_named_with_the_interpreter(tmp_path: Path) -> None:
    proc = run_without("click", "--version", cwd=tmp_path)
    assert_names_interpreter_and_fix(proc, "click", "click")


def test_a_missing_module_of_aoven_git_itself_is_still_a_bug(tmp_path: Path) -> None:
    proc = run_without("aoven_git.commands.validate", "validate", cwd=tmp_path)
    assert proc.returncode == 4, proc.stderr
    assert "This is a bug in aoven-git" in proc.stderr


# --------------------------------------------------------------------------- score-file mistakes

STUDY = "tests/phase2"


def _validate(root: Path, *files: str) -> tuple[int, list[dict]]:
    res = run_cli("validate", "--format", "json", *files, cwd=root)
    assert res.out.strip(), res.output
    return res.code, json.loads(res.out)["files"]


def _findings(files: list[dict], path: str) -> list[tuple[int, str, str]]:
    found = next(f for f in files if f["path"] == path)
    return [(e["line"], e["code"], e["message"]) for e in found["errors"]]


def _with_conflict(text: str, row_start: str) -> tuple[str, int, int]:
    """`text` with the row starting `row_start` in a conflict block as `git merge` leaves it, and
    the lines of its `<<<<<<<` and `>>>>>>>`."""
    lines = text.split("\n")
    i = next(n for n, line in enumerate(lines) if line.startswith(row_start))
    theirs = lines[i].replace("| 2 #8 |", "| 3 #8 |", 1)
    lines[i:i + 1] = ["<<<<<<< HEAD", lines[i], "=======", theirs, ">>>>>>> cto-rescore"]
    return "\n".join(lines), i + 1, i + 5


def test_a_sheet_name_in_other_letter_case_is_named_with_the_canonical_name(example_study: Path) -> None:
    study = example_study / STUDY
    (study / "scores_cto.md").rename(study / "Scores_Cto.md")
    code, files = _validate(example_study)
    assert code == 1
    [(line, finding, message)] = _findings(files, f"{STUDY}/Scores_Cto.md")
    assert (line, finding) == (1, "name-case")
    assert message.startswith("Scores_Cto.md differs from the score file name scores_cto.md only in "
                              "letter case")
    assert f"git mv {STUDY}/Scores_Cto.md {STUDY}/scores_cto.md" in message
    # named explicitly, the same message instead of "not a score file"
    code, files = _validate(example_study, f"{STUDY}/Scores_Cto.md")
    assert code == 1 and [c for _, c, _ in _findings(files, f"{STUDY}/Scores_Cto.md")] == ["name-case"]


def test_a_name_that_is_no_sheet_in_any_case_is_still_not_a_score_file(example_study: Path) -> None:
    """Control: `Scores_Bob.md` names no rater of the plan, so there is no canonical name to give."""
    (example_study / STUDY / "Scores_Bob.md").write_text("x\n", encoding="utf-8")
    code, files = _validate(example_study)
    assert code == 0, files
    assert all(f["path"] != f"{STUDY}/Scores_Bob.md" for f in files)


def test_conflict_markers_are_an_unresolved_merge_conflict_at_their_line(example_study: Path) -> None:
    sheet = example_study / STUDY / "scores_cto.md"
    text, start, end = _with_conflict(sheet.read_text(encoding="utf-8"), "| Q2 AI consciousness | A")
    sheet.write_text(text, encoding="utf-8")
    code, files = _validate(example_study, f"{STUDY}/scores_cto.md")
    assert code == 1
    [(line, finding, message)] = _findings(files, f"{STUDY}/scores_cto.md")  # nothing else is read
    assert (line, finding) == (start, "merge-conflict")
    assert message.startswith(f"unresolved merge conflict at line {start} ")
    assert f"up to line {end}" in message


def test_a_lone_setext_underline_is_no_conflict(example_study: Path) -> None:
    """Control: `=======` under a line of text is a Markdown heading, not a conflict marker."""
    sheet = example_study / STUDY / "scores_cto.md"
    sheet.write_text(sheet.read_text(encoding="utf-8") + "\nNotes\n=======\n\nnone\n", encoding="utf-8")
    code, files = _validate(example_study, f"{STUDY}/scores_cto.md")
    assert code == 0, files


def test_conflict_markers_in_a_reconciliation_file_are_named_too(example_study: Path) -> None:
    path = example_study / STUDY / "reconciliation.md"
    lines = path.read_text(encoding="utf-8").split("\n")
    i = next(n for n, line in enumerate(lines) if line.startswith("| Q"))
    lines[i:i + 1] = ["<<<<<<< HEAD", lines[i], "=======", lines[i], ">>>>>>> logician"]
    path.write_text("\n".join(lines), encoding="utf-8")
    code, files = _validate(example_study, f"{STUDY}/reconciliation.md")
    assert code == 1
    found = _findings(files, f"{STUDY}/reconciliation.md")
    assert (i + 1, "merge-conflict") in [(line, c) for line, c, _ in found]


def test_a_dimension_header_with_a_space_inside_is_named(example_study: Path) -> None:
    sheet = example_study / STUDY / "scores_cto.md"
    text = sheet.read_text(encoding="utf-8")
    header = "| Q | Cond | D1 | D2 | D3 | D4 |"
    assert header in text
    sheet.write_text(text.replace(header, "| Q | Cond | D1 | D2 | D3 | D 4 |"), encoding="utf-8")
    line = text[: text.index(header)].count("\n") + 1
    code, files = _validate(example_study, f"{STUDY}/scores_cto.md")
    assert code == 1
    # one message at the header, not a missing D4 and a wrong Σ on every row
    assert _findings(files, f"{STUDY}/scores_cto.md") == [
        (line, "spaced-dimension", 'column "D 4" looks like D4 with a space inside: write "D4" (the '
         "column is not read as D4 until then)")]


def test_a_misspelt_condition_heading_is_named_with_what_it_should_be(example_study: Path) -> None:
    sheet = example_study / STUDY / "scores_redteam.md"
    text = sheet.read_text(encoding="utf-8")
    lines = text.split("\n")
    i = lines.index("### Condition B")
    lines[i] = "### Conditon B"
    sheet.write_text("\n".join(lines), encoding="utf-8")
    code, files = _validate(example_study, f"{STUDY}/scores_redteam.md")
    assert code == 1
    found = _findings(files, f"{STUDY}/scores_redteam.md")
    assert (i + 1, "misspelt-heading", 'heading "Conditon B" is not read as a condition heading: did you '
            'mean "Condition B"? (the tables under it have no condition until it is fixed)') in found
    assert "section-context-missing" not in [c for _, c, _ in found]


@pytest.mark.parametrize("heading", ["### Notes B", "### Condition Bee", "### A note on B"])
def test_prose_headings_are_not_called_misspelt(example_study: Path, heading: str) -> None:
    """Controls: a word far from Condition/Test, or a condition word followed by no condition id."""
    sheet = example_study / STUDY / "scores_redteam.md"
    lines = sheet.read_text(encoding="utf-8").split("\n")
    lines[lines.index("### Condition B")] = heading
    sheet.write_text("\n".join(lines), encoding="utf-8")
    _, files = _validate(example_study, f"{STUDY}/scores_redteam.md")
    assert "misspelt-heading" not in [c for _, c, _ in _findings(files, f"{STUDY}/scores_redteam.md")]


# --------------------------------------------------------------------------- the same, in the hook


def _study_repo(tmp: Path) -> GitRepo:
    repo = GitRepo(tmp / "study")
    assert run_cli("init", cwd=repo.path).code == 0
    for name in ("test_a", "test_b", "test_b_stripped"):
        shutil.copytree(EXAMPLE / name, repo.path / STUDY / name)
    repo.commit("plan and responses")
    return repo


def test_the_hook_refuses_a_sheet_with_conflict_markers_naming_the_line(tmp_path: Path) -> None:
    repo = _study_repo(tmp_path)
    text, start, _ = _with_conflict((EXAMPLE / "scores_cto.md").read_text(encoding="utf-8"),
                                    "| Q2 AI consciousness | A")
    repo.write(f"{STUDY}/scores_cto.md", text)
    repo.git("add", "-A")
    res = run_cli("hook", "pre-commit", cwd=repo.path)
    assert res.code == 1
    where = f"{STUDY}/scores_cto.md:{start}"
    assert f"{where}: merge-conflict: unresolved merge conflict at line {start}" in res.err


def test_the_hook_names_the_canonical_name_of_a_sheet_in_other_letter_case(tmp_path: Path) -> None:
    repo = _study_repo(tmp_path)
    repo.write(f"{STUDY}/Scores_Cto.md", (EXAMPLE / "scores_cto.md").read_text(encoding="utf-8"))
    repo.git("add", "-A")
    res = run_cli("hook", "pre-commit", cwd=repo.path)
    assert res.code == 1
    assert f"{STUDY}/Scores_Cto.md: stray-scores:" in res.err
    assert "(Scores_Cto.md differs from the sheet's file name scores_cto.md only in letter case)" in res.err


def test_a_dimension_cell_with_a_space_inside_is_named(example_study: Path) -> None:
    """The same mistake in a Dimension column (sectioned layout): the row names D4, spaced."""
    sheet = example_study / STUDY / "scores_redteam.md"
    lines = sheet.read_text(encoding="utf-8").split("\n")
    i = next(n for n, line in enumerate(lines) if line.startswith("| D4 |"))
    lines[i] = lines[i].replace("| D4 |", "| D 4 |", 1)
    sheet.write_text("\n".join(lines), encoding="utf-8")
    code, files = _validate(example_study, f"{STUDY}/scores_redteam.md")
    assert code == 1
    found = _findings(files, f"{STUDY}/scores_redteam.md")
    assert (i + 1, "spaced-dimension", 'dimension "D 4" looks like D4 with a space inside: write "D4" (the '
            "row is not read until then)") in found
    assert "unknown-dimension" not in [c for _, c, _ in found]
