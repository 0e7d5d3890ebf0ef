"""Every `module.name` that the docs and docstrings cite exists, so a reader who follows a
citation finds the function (docs/design.md: "A rule is found by its name").

A citation is the name of a module of aoven_git (`gitio`, `seal_rules`; `hook` for
`commands/hook.py`), optionally written `aoven_git.gitio`, followed by `.name`, in docs/*.md or
in a docstring of the code or the tests. File names (`plan.md`, `hook.py`) are no citations. A few
words read like one but name a variable's field or a plan key: NOT_CITATIONS lists them with what
they are.
"""

from __future__ import annotations

import ast
import importlib
import re
from collections.abc import Iterator
from functools import cache
from pathlib import Path

from tests.conftest import ROOT

#: what follows a module name when the text names a file, not a function
FILE_SUFFIXES = frozenset({"md", "py", "yaml", "yml", "json", "html", "svg", "sha256", "txt", "toml",
                           "csv", "png", "sh", "bak", "bin"})

#: (file, text) pairs that look like citations and are not, with what they are
NOT_CITATIONS = {
    ("docs/blinding.md", "blind.leak_patterns"): "the plan key `leak_patterns` of a blind pass",
    ("aoven_git/blinding.py", "blind.leak_patterns"): "the plan key `leak_patterns` of a blind pass",
    ("aoven_git/naming.py", "sheet.rater"): "a field of a SheetId variable",
    ("aoven_git/studyfile.py", "sheet.rater"): "a field of a SheetId variable",
    ("aoven_git/validation.py", "sheet.amendment"): "a field of a SheetId variable",
    ("aoven_git/sealing.py", "report.rows"): "a field of a report variable",
    ("aoven_git/sealing.py", "report.unattributed"): "a field of a report variable",
    ("aoven_git/anchors.py", "report.anchors"): "a field of a SealReport variable",
    ("docs/report.md", "seals.timestamps"): "a key of the report's JSON",
    ("docs/commands.md", "report.pdf"): "a file name (a suffix `report` refuses)",
    ("aoven_git/commands/report.py", "report.pdf"): "a file name (a suffix `report` refuses)",
    ("tests/test_coefficients.py", "github.com"): "the address of the irrCAC package a reference names",
}

#: stale citations in aoven_git/ itself, which this test-only change may not edit; each entry
#: says where the name lives now. The test fails once one is fixed, so the entry goes too.
KNOWN_STALE_IN_CODE: dict[tuple[str, str], str] = {}


@cache
def modules() -> dict[str, tuple[str, ...]]:
    """Each module's short name and the importable modules it may mean (`markers` is both the
    grammar module and the command)."""
    found: dict[str, list[str]] = {}
    for path in sorted((ROOT / "aoven_git").rglob("*.py")):
        if path.stem.startswith("__"):
            continue
        dotted = ".".join(path.relative_to(ROOT).with_suffix("").parts)
        found.setdefault(path.stem, []).append(dotted)
    return {name: tuple(dotted) for name, dotted in found.items()}


def citation_pattern() -> re.Pattern[str]:
    names = "|".join(sorted(map(re.escape, modules()), key=len, reverse=True))
    # not part of a longer dotted name, a path or a word: `self.plan.x` and `tests/plan.x` are no citations
    return re.compile(rf"(?<![\w./-])(?:aoven_git\.)?({names})\.([A-Za-z_]\w*)")


def docstrings(path: Path) -> Iterator[tuple[int, str]]:
    """(first line, text) of every module, class and function docstring of a Python file."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    for node in ast.walk(tree):
        if isinstance(node, ast.Module | ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef):
            text = ast.get_docstring(node, clean=False)
            if text is not None:
                yield node.body[0].lineno, text


def texts() -> Iterator[tuple[str, int, str]]:
    """(file, first line, text) of every place a citation may stand."""
    for doc in sorted((ROOT / "docs").glob("*.md")):
        yield doc.relative_to(ROOT).as_posix(), 1, doc.read_text(encoding="utf-8")
    sources = [*(ROOT / "aoven_git").rglob("*.py"), *(ROOT / "tests").rglob("*.py")]
    for path in sorted(sources):
        if "phase2" in path.parts:
            continue
        for line, text in docstrings(path):
            yield path.relative_to(ROOT).as_posix(), line, text


def resolves(module: str, name: str) -> bool:
    return any(hasattr(importlib.import_module(dotted), name) for dotted in modules()[module])


def citations() -> Iterator[tuple[str, int, str, bool]]:
    """(file, line, `module.name`, whether it exists) for every citation."""
    pattern = citation_pattern()
    for where, first, text in texts():
        for match in pattern.finditer(text):
            module, name = match.groups()
            if name in FILE_SUFFIXES:
                continue
            line = first + text.count("\n", 0, match.start())
            yield where, line, f"{module}.{name}", resolves(module, name)


def test_every_citation_names_a_function_that_exists() -> None:
    stale = [f"{where}:{line}: {cited}" for where, line, cited, ok in citations()
             if not ok and (where, cited) not in NOT_CITATIONS and (where, cited) not in KNOWN_STALE_IN_CODE]
    assert stale == [], "cited but not found (rename the citation, or list a non-citation in " \
                        "NOT_CITATIONS):\n" + "\n".join(stale)


def test_the_scan_finds_the_citations_of_the_design_document() -> None:
    """The scan is not vacuous: docs/design.md's own examples are found and resolve."""
    found = {(where, cited): ok for where, _, cited, ok in citations()}
    for cited in ("seal_rules.visible_at_seal", "verdict.which_b_scores", "plan.REFERENCES"):
        assert found.get(("docs/design.md", cited)) is True, cited


def test_the_exception_lists_hold_no_dead_entries() -> None:
    """Every listed non-citation still stands where it is listed (and still does not resolve),
    and every known stale citation in the code is still stale: a fixed one leaves the list."""
    unresolved = {(where, cited) for where, _, cited, ok in citations() if not ok}
    assert set(NOT_CITATIONS) <= unresolved, set(NOT_CITATIONS) - unresolved
    assert set(KNOWN_STALE_IN_CODE) <= unresolved, set(KNOWN_STALE_IN_CODE) - unresolved
    for module_name in KNOWN_STALE_IN_CODE.values():
        module, name = module_name.split(".")
        assert resolves(module, name), f"{module_name}: the replacement named here does not exist"
