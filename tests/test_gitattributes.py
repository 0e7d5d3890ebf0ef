"""Which `.gitattributes` lines decide how git stores a study file (aoven_git/gitattributes.py):
the patterns as gitattributes(5) reads them, and the attributes that change stored bytes."""

from __future__ import annotations

import pytest

from aoven_git.gitattributes import applies_to, candidates, matches, storage_lines

SHEET = "tests/phase2/scores_cto.md"
SEAL = "tests/phase2/seals/scores_cto.sha256"


@pytest.mark.parametrize(("pattern", "base", "path", "expected"), [
    ("*", "", SHEET, True),
    ("*.md", "", SHEET, True),
    ("*.md", "", SEAL, False),
    ("scores_*", "", SHEET, True),
    ("tests/phase2/**", "", SEAL, True),
    ("/tests/phase2/*.md", "", SHEET, True),
    ("tests/*.md", "", SHEET, False),  # `*` stops at `/`
    ("**/seals/*", "", SEAL, True),
    ("phase2/*.md", "tests", SHEET, True),  # anchored at the file's own folder
    ("*.md", "docs", SHEET, False),
    ("tests/phase2/", "", SHEET, False),  # a folder pattern never matches a file
    ("scores_[a-c]to.md", "", SHEET, True),
    ("scores_[!c]to.md", "", SHEET, False),
])
def test_patterns(pattern: str, base: str, path: str, expected: bool) -> None:
    assert matches(pattern, base, path) is expected


def test_only_lines_that_change_stored_bytes_of_study_files_count() -> None:
    text = ("# line endings\n* text=auto\n*.png binary\n*.md diff=markdown\ntests/phase2/** -text\n"
            "[attr]raw -text -diff\n*.sha256 raw\ndocs/*.md eol=lf\n")
    assert storage_lines(text, "", [SHEET, SEAL]) == [
        "* text=auto", "tests/phase2/** -text", "[attr]raw -text -diff", "*.sha256 raw"]


def test_which_gitattributes_files_speak_about_the_study_folder() -> None:
    assert candidates("tests/phase2") == [".gitattributes", "tests/.gitattributes",
                                          "tests/phase2/.gitattributes"]
    assert applies_to(".gitattributes", "tests/phase2")
    assert applies_to("tests/phase2/seals/.gitattributes", "tests/phase2")
    assert not applies_to("docs/.gitattributes", "tests/phase2")
    assert not applies_to("tests/phase2/gitattributes", "tests/phase2")
