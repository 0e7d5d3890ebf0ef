"""Honest repositories an ordinary team has on day one, which must verify clean — through
verify-seal AND through the installed pre-commit hook (every commit below is a plain `git commit`
the hook judges): a second study in the same repository, aoven-git vendored with its bundled
example, an analysis script named `scores_*`, a `.gitattributes` of the team's own, a plan that is
not at the repository root (docs/sealing.md, "Copies of scores" and "Line endings and
.gitattributes"; docs/workflow.md, "The hook in every clone")."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from aoven_git.model import SheetId
from aoven_git.seals import format_seal, sha256
from tests.adversarial.conftest import RESPONSES, Lab, expect, refused, sheet_text
from tests.conftest import run_cli
from tests.sealing.conftest import PLAN

EXAMPLE = Path(__file__).resolve().parents[1] / "phase2"

pytestmark = pytest.mark.slow


class Elsewhere:
    """A second study of the same design in `<folder>/`, its plan at `<folder>/aoven.yaml`:
    sealed and revealed by hand through the hook, like `Lab`'s own study."""

    def __init__(self, lab: Lab, folder: str) -> None:
        self.lab, self.folder = lab, folder
        self.plan = f"{folder}/aoven.yaml"
        self.texts: dict[str, str] = {}

    def start(self) -> None:
        self.lab.write(self.plan, PLAN.replace("study_dir: study", f"study_dir: {self.folder}/study"))
        for path, text in RESPONSES.items():
            self.lab.write(f"{self.folder}/{path}", text)
        self.lab.put("lead", f"plan of {self.folder}", self.folder)

    def seal(self, rater: str, scores: tuple[int, int]) -> str:
        text = self.texts[rater] = sheet_text(rater, scores, nonce=f"{self.folder}-{rater}")
        seal = format_seal(sha256(text.encode()), f"scores_{rater}.md", SheetId(rater, "unblinded", "main"))
        return self.lab.file(rater, f"{self.folder}/study/seals/scores_{rater}.sha256", seal)

    def reveal(self, rater: str) -> str:
        return self.lab.file(rater, f"{self.folder}/study/scores_{rater}.md", self.texts[rater])

    def verify(self) -> tuple[int, dict]:
        res = run_cli("verify-seal", "--format", "json", "--plan", self.plan, cwd=self.lab.path)
        return res.code, json.loads(res.out)


def sealed_and_revealed(lab: Lab, scores: dict[str, tuple[int, int]] | None = None) -> None:
    """The root study: both raters seal, then reveal (every commit through the hook)."""
    scores = scores or {"cto": (1, 2), "logician": (2, 1)}
    for rater, s in scores.items():
        lab.seal(rater, s)
    for rater in scores:
        lab.reveal(rater)


def test_a_second_study_in_the_same_repository(lab: Lab) -> None:
    """Study 1 (the root plan, `study/`) is sealed and revealed; study 2 (`second/aoven.yaml`,
    `second/study/`) is sealed while study 1's sheets and seals lie readable beside it. Neither
    study's files are "other raters' scores" for the other; the hook checks both plans."""
    lab.start()
    lab.install_hook()
    sealed_and_revealed(lab)
    second = Elsewhere(lab, "second")
    second.start()
    res = lab.cli("lead", "install-hook", "--plan", "second/aoven.yaml")
    assert res.code == 0 and "second/aoven.yaml" in res.out, res.output
    second.seal("cto", (0, 3)), second.seal("logician", (3, 0))
    second.reveal("cto"), second.reveal("logician")
    expect(lab, [])
    code, data = second.verify()
    assert code == 0 and data["violations"] == [] and data["status"] == "complete", data
    # the hook does check the second study: a copy of its scores in its folder is refused
    lab.write("second/study/export.md", second.texts["cto"].replace("nonce:", "note:"))
    refused(lab.git_commit("cto", "export", "second/study/export.md"), "stray-scores")


def test_aoven_git_vendored_with_its_bundled_example(lab: Lab) -> None:
    """`vendor/aoven-git/` (docs/workflow.md suggests it for CI) holds the example study's
    `scores_*.md`: not this study's scores, so no seal is blocked and nothing is a copy."""
    lab.start()
    lab.install_hook()
    shutil.copytree(EXAMPLE, lab.path / "vendor/aoven-git/tests/phase2")
    lab.put("lead", "vendor aoven-git", "vendor")
    sealed_and_revealed(lab)
    shutil.copytree(EXAMPLE, lab.path / "vendor/aoven-git/aoven_git/_example")
    lab.put("lead", "vendor aoven-git's package too", "vendor")
    expect(lab, [])


def test_an_analysis_script_named_scores(lab: Lab) -> None:
    """`analysis/scores_plot.py` reads the revealed sheets to draw them: the hook lets it in before
    and after the seals, and verify-seal and the report find nothing."""
    lab.start()
    lab.install_hook()
    lab.file("lead", "analysis/scores_plot.py", "import csv\n# plots D1 and D2 per condition\n")
    sealed_and_revealed(lab)
    lab.file("lead", "analysis/scores_plot.py", "import csv\n# plots D1, D2 and their sum\n")
    expect(lab, [])
    res = run_cli("report", "--format", "json", cwd=lab.path)
    doc = json.loads(res.out)
    assert doc["seals"]["violations"] == [] and doc["verdict"] != "NOT-READY", doc["not_ready"]


GITATTRIBUTES = "aoven.yaml -text\nstudy/** -text\n"


def crlf_sealed(lab: Lab) -> None:
    """The study with init's `.gitattributes`; cto's sheet saved with CRLF and digest-sealed with
    the real `aoven-git seal`, logician sealed too."""
    lab.write(".gitattributes", GITATTRIBUTES)
    lab.start()
    lab.put("lead", "attributes", ".gitattributes")
    lab.install_hook()
    lab.write(lab.score_path("cto"), sheet_text("cto").replace("\n", "\r\n").encode())
    res = lab.cli("cto", "seal", "--rater", "cto")
    assert res.code == 0, res.output
    lab.seal("logician", (2, 1))


def test_gitattributes_lines_for_other_files_after_the_seal(lab: Lab) -> None:
    """A CRLF sheet, sealed; the team then adds `*.png binary` and `docs/*.md text` (lines that
    do not cover study files): the hook lets them in, and the reveal of the unchanged file works."""
    crlf_sealed(lab)
    lab.write(".gitattributes", GITATTRIBUTES + "*.png binary\ndocs/*.md text\n")
    proc = lab.git_commit("lead", "attributes for images", ".gitattributes")
    assert proc.returncode == 0, proc.stderr
    res = lab.cli("cto", "reveal", "--rater", "cto")
    assert res.code == 0, res.output
    lab.reveal("logician")
    expect(lab, [])


def test_a_text_auto_line_after_the_seal_is_refused_and_never_blamed_on_the_sheet(lab: Lab) -> None:
    """`* text=auto` between seal and reveal would make git store cto's CRLF sheet as other bytes.
    The hook refuses it (the first seal froze those lines); committed past the hook, the reveal
    names `.gitattributes`, never "changed since it was sealed", and verify-seal reports the line."""
    crlf_sealed(lab)
    head = lab.head()
    lab.write(".gitattributes", GITATTRIBUTES + "* text=auto\n")
    proc = lab.git_commit("lead", "normalise line endings", ".gitattributes")
    refused(proc, "attributes-changed-after-seal")
    assert lab.head() == head
    bad = lab.put("lead", "normalise line endings", ".gitattributes", no_verify=True)
    before = lab.snapshot()
    res = lab.cli("cto", "reveal", "--rater", "cto")
    assert res.code == 1 and ".gitattributes" in res.output, res.output
    assert "changed since it was sealed" not in res.output
    assert lab.snapshot() == before
    data = expect(lab, [("attributes-changed-after-seal", None)])
    assert data["violations"][0]["commit"] == bad and "* text=auto" in data["violations"][0]["message"]


def test_a_plan_not_at_the_root(lab: Lab) -> None:
    """The plan at `studies/one/aoven.yaml`: `install-hook --plan` records it, and the hook,
    which runs without options, finds it — it lets the honest seals and reveals in and refuses a
    stray copy in that study's folder."""
    one = Elsewhere(lab, "studies/one")
    one.start()
    res = lab.cli("lead", "install-hook", "--plan", "studies/one/aoven.yaml")
    assert res.code == 0, res.output
    assert lab.git("config", "--get-all", "aoven-git.plan") == "studies/one/aoven.yaml"
    one.seal("cto", (1, 2))
    lab.write("studies/one/study/cto.tsv", "question\tcondition\tD1\tD2\nQ1\tA\t1\t2\nQ2\tA\t1\t2\n")
    refused(lab.git_commit("cto", "export", "studies/one/study/cto.tsv"), "stray-scores")
    lab.git("reset", "-q")
    (lab.path / "studies/one/study/cto.tsv").unlink()
    one.seal("logician", (2, 1))
    one.reveal("cto"), one.reveal("logician")
    code, data = one.verify()
    assert code == 0 and data["violations"] == [], data


def test_a_hook_that_finds_no_plan_says_so(lab: Lab) -> None:
    """No plan at the root and none recorded: the commit goes through, but the hook says on stderr
    that it checked nothing and how to point it at the plan."""
    lab.write("README.md", "A study, soon.\n")
    lab.install_hook()
    proc = lab.git_commit("lead", "readme", "README.md")
    assert proc.returncode == 0, proc.stderr
    assert "no plan at aoven.yaml" in proc.stderr and "install-hook --plan" in proc.stderr


def test_install_hook_refuses_a_plan_that_does_not_exist(lab: Lab) -> None:
    lab.write("README.md", "x\n")
    lab.put("lead", "readme")
    res = lab.cli("lead", "install-hook", "--plan", "studies/missing.yaml")
    assert res.code == 2 and "studies/missing.yaml" in res.output, res.output
    assert not (lab.path / ".git/hooks/pre-commit").exists()
    assert lab.git("config", "--get-all", "aoven-git.plan", check=False) == ""
