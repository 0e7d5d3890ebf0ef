"""Copies of scores that must be caught (docs/sealing.md, "Copies of scores"): inside the study
folder any score table — Markdown, CSV or TSV — that is not a sheet's file, under any spelling of
the folder's name; outside it, any file whose content is a sheet of the study (the very bytes, or
most of its cells re-typed). Each attack asserts the exact codes verify-seal reports, and that
`seal` and the installed hook refuse what could only be a violation."""

from __future__ import annotations

import unicodedata

import pytest

from tests.adversarial.conftest import RESPONSES, Lab, at, expect, refused, sheet_text
from tests.adversarial.paper import paper_lab
from tests.sealing.conftest import PLAN

#: the stories of this module test the sealing rules, not git: they run on paper
#: (tests/adversarial/paper.py); those marked `git` build a real repository
lab = paper_lab


def csv_export(rater: str, scores: tuple[int, int] = (1, 2), *, sep: str = ",",
               edit: bool = False) -> str:
    """What a spreadsheet export of a rater's sheet looks like (one cell changed with `edit`)."""
    rows = [sep.join(("question", "condition", "D1", "D2"))]
    rows += [sep.join((q, c, str(scores[0]), str(scores[1]))) for q in ("Q1", "Q2") for c in ("A", "B")]
    if edit:
        rows[1] = sep.join(("Q1", "A", str(3 - scores[0]), str(scores[1])))
    return "\n".join(rows) + "\n"


@pytest.mark.git
@pytest.mark.parametrize("sep", [",", "\t"], ids=["csv", "tsv"])
def test_scores_exported_as_csv_into_the_study_folder_refuse_the_next_seal(lab: Lab, sep: str) -> None:
    """cto seals, then exports the sheet as CSV (or TSV) into the study folder, past the hook.
    logician's `seal` is refused, nothing changed; sealing by hand anyway is reported once cto
    reveals: the export states cto's cells, so logician sealed after reading them."""
    lab.start()
    lab.seal("cto", (0, 3))
    name = "export.csv" if sep == "," else "export.tsv"
    leak = lab.file("cto", f"study/{name}", csv_export("cto", (0, 3), sep=sep), no_verify=True)
    lab.write(lab.score_path("logician"), sheet_text("logician", (2, 2)))
    before = lab.snapshot()
    res = lab.cli("logician", "seal", "--rater", "logician")
    assert res.code == 1, res.output
    assert f"study/{name}" in res.output and "stray-scores" in res.output
    assert lab.snapshot() == before
    expect(lab, [("stray-scores", None)])
    bad = lab.seal("logician", (2, 2), no_verify=True)
    lab.reveal("cto")
    data = expect(lab, [("stray-scores", "cto"), ("visible-at-seal", "logician")])
    assert at(data, "stray-scores", "cto")["commit"] == leak
    assert at(data, "visible-at-seal", "logician")["commit"] == bad


@pytest.mark.git
def test_the_hook_refuses_a_csv_export_in_the_study_folder(lab: Lab) -> None:
    lab.start()
    lab.install_hook()
    lab.seal("cto", (0, 3))
    head = lab.head()
    lab.write("study/export.csv", csv_export("cto", (0, 3)))
    refused(lab.git_commit("cto", "export", "study/export.csv"), "stray-scores")
    assert lab.head() == head


@pytest.mark.git
def test_a_csv_without_scores_in_the_study_folder_is_no_copy(lab: Lab) -> None:
    """A CSV table that names no question, condition or dimension of the plan is not scores."""
    lab.start()
    lab.install_hook()
    lab.file("lead", "study/word_counts.csv", "file,words\nq1.md,120\nq2.md,95\n")
    lab.seal("cto"), lab.seal("logician")
    lab.reveal("cto"), lab.reveal("logician")
    expect(lab, [])


NFC_DIR = unicodedata.normalize("NFC", "étude")
NFD_DIR = unicodedata.normalize("NFD", "étude")
ACCENTED = PLAN.replace("study_dir: study", f"study_dir: {NFC_DIR}")
assert NFC_DIR != NFD_DIR and ACCENTED != PLAN


class Accented(Lab):
    """The test study in a folder whose name has an accent (NFC, as the plan writes it)."""

    def score_path(self, rater: str, pass_id: str = "unblinded") -> str:  # type: ignore[override]
        return f"{NFC_DIR}/{self.stem(rater, pass_id)}.md"

    def seal_path(self, rater: str, pass_id: str = "unblinded") -> str:  # type: ignore[override]
        return f"{NFC_DIR}/seals/{self.stem(rater, pass_id)}.sha256"

    def begin(self) -> None:
        self.write("aoven.yaml", ACCENTED)
        for path, text in RESPONSES.items():
            self.write(path.replace("study/", f"{NFC_DIR}/", 1), text)
        self.put("lead", "plan and responses", "aoven.yaml", NFC_DIR)


@pytest.fixture
def accented(tmp_path) -> Accented:  # type: ignore[no-untyped-def]
    return Accented(tmp_path / "accented")


@pytest.mark.parametrize("folder", [NFD_DIR, "ÉTUDE"], ids=["nfd", "upper-case"])
def test_scores_under_another_spelling_of_the_study_folder_are_strays(accented: Accented,
                                                                       folder: str) -> None:
    """The NFD spelling of `étude/` (byte-different, the same on screen and, on macOS, the same
    folder) or its upper-case twin: a score table there is a stray copy, and plaintext."""
    accented.begin()
    accented.seal("cto")
    leak = accented.file("cto", f"{folder}/notes.md", sheet_text("cto"), no_verify=True)
    bad = accented.seal("logician", (2, 1))
    data = expect(accented, [("stray-scores", "cto"), ("visible-at-seal", "logician")])
    assert at(data, "stray-scores", "cto")["commit"] == leak
    assert at(data, "visible-at-seal", "logician")["commit"] == bad


def test_the_hook_refuses_scores_under_the_nfd_spelling(accented: Accented) -> None:
    accented.begin()
    accented.install_hook()
    accented.seal("cto")
    head = accented.head()
    accented.write(f"{NFD_DIR}/notes.md", sheet_text("cto"))
    refused(accented.git_commit("cto", "notes", NFD_DIR), "stray-scores")
    assert accented.head() == head


@pytest.mark.git
def test_an_exact_copy_of_a_sealed_file_outside_the_study_folder(lab: Lab) -> None:
    """The very bytes cto sealed, committed elsewhere before logician seals: their SHA-256 is
    the seal's digest, so it is cto's plaintext before any reveal, and `seal` refuses."""
    lab.start()
    lab.seal("cto")
    leak = lab.file("cto", "backup/scores_mine.md", lab.texts[("cto", "unblinded")], no_verify=True)
    lab.write(lab.score_path("logician"), sheet_text("logician", (2, 1)))
    res = lab.cli("logician", "seal", "--rater", "logician")
    assert res.code == 1 and "backup/scores_mine.md" in res.output, res.output
    data = expect(lab, [("stray-scores", "cto")])
    assert at(data, "stray-scores", "cto")["commit"] == leak


def test_a_retyped_and_edited_copy_outside_the_study_folder(lab: Lab) -> None:
    """cto's scores re-typed as a CSV with one cell changed, under `analysis/`: not the sealed
    bytes, but once cto reveals it agrees with the sheet on 7 of 8 cells, so it is a copy."""
    lab.start()
    lab.seal("cto", (0, 3))
    leak = lab.file("lead", "analysis/scores_cto.csv", csv_export("cto", (0, 3), edit=True), no_verify=True)
    bad = lab.seal("logician", (2, 1))
    lab.reveal("cto"), lab.reveal("logician")
    data = expect(lab, [("stray-scores", "cto"), ("visible-at-seal", "logician")])
    assert at(data, "stray-scores", "cto")["commit"] == leak
    assert at(data, "visible-at-seal", "logician")["commit"] == bad


def test_a_table_sharing_only_the_ids_outside_is_no_copy(lab: Lab) -> None:
    """Outside the study folder a table of the plan's ids whose scores mostly differ from every
    sheet is no copy (fewer than 3/4 of any sheet's cells agree)."""
    lab.start()
    lab.file("lead", "analysis/scores_simulated.csv", csv_export("x", (3, 0)))
    lab.seal("cto", (0, 3)), lab.seal("logician", (2, 1))
    lab.reveal("cto"), lab.reveal("logician")
    expect(lab, [])
