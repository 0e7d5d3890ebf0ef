"""`sheet`: a blank score file that validate rejects until filled in, and accepts once filled."""

from __future__ import annotations

import json
import random
import shutil
from pathlib import Path

import pytest

from tests.conftest import DEFAULT_PLAN, run_cli

STUDY = "tests/phase2"
ANNOTATE = {"D1": 8, "D5": 5}  # annotate:true dimensions of the default plan and one transition each


@pytest.fixture
def study(tmp_path: Path) -> Path:
    root = tmp_path / "s"
    (root / STUDY).mkdir(parents=True)
    shutil.copy(DEFAULT_PLAN, root / "aoven.yaml")
    return root


def fill_wide(text: str, rng: random.Random) -> str:
    out = []
    header: list[str] = []
    for line in text.splitlines():
        cells = line.split("|")
        if line.startswith("| Q |"):
            header = [c.strip() for c in cells]
        elif line.startswith("| Q") and header:
            total = 0
            for i, name in enumerate(header):
                if name.startswith("D"):
                    score = rng.randint(0, 3)
                    total += score
                    cells[i] = f" {score} #{ANNOTATE[name]} " if score and name in ANNOTATE else f" {score} "
            cells[header.index("Σ")] = f" {total} "
            line = "|".join(cells)
        out.append(line)
    return "\n".join(out) + "\n"


def fill_long(text: str, rng: random.Random) -> str:
    out = []
    for line in text.splitlines():
        cells = line.split("|")
        if line.startswith("| Q") and not line.startswith("| Question"):
            dim = cells[3].strip()
            score = rng.randint(0, 3)
            cells[4] = f" {score} "
            if score and dim in ANNOTATE:
                cells[5] = f" #{ANNOTATE[dim]} "
            line = "|".join(cells)
        out.append(line)
    return "\n".join(out) + "\n"


@pytest.mark.parametrize("layout", ["wide", "long"])
@pytest.mark.parametrize(
    ("pass_id", "name", "cells"),
    [("unblinded", "scores_cto.md", 160), ("blinded", "scores_cto_blinded.md", 80)],
)
def test_blank_sheet_fails_then_filled_sheet_passes(
    study: Path, layout: str, pass_id: str, name: str, cells: int
) -> None:
    r = run_cli("sheet", "--rater", "cto", "--pass", pass_id, "--layout", layout, cwd=study)
    assert r.code == 0, r.output
    blank = r.out
    assert blank.startswith(f"---\nrater: cto\npass: {pass_id}\nround: main\nplan_version: 1\n---\n")
    target = study / STUDY / name
    target.write_text(blank, "utf-8")
    r = run_cli("validate", "--format", "json", cwd=study)
    assert r.code == 1
    errors = json.loads(r.out)["files"][0]["errors"]
    items = cells // 8
    assert [e["code"] for e in errors] == ["missing-cell"] * items

    filled = (fill_wide if layout == "wide" else fill_long)(blank, random.Random(3))
    target.write_text(filled, "utf-8")
    r = run_cli("validate", "--format", "json", cwd=study)
    assert r.code == 0, r.out
    f = json.loads(r.out)["files"][0]
    assert (f["rater"], f["pass"], f["cells"], f["layout"]) == ("cto", pass_id, cells, layout)


def test_filled_sheet_without_annotations_fails(study: Path) -> None:
    blank = run_cli("sheet", "--rater", "logician", "--layout", "long", cwd=study).out
    filled = fill_long(blank, random.Random(4)).replace(" #8 ", "  ")
    (study / STUDY / "scores_logician.md").write_text(filled, "utf-8")
    r = run_cli("validate", cwd=study)
    assert r.code == 1 and "missing-annotation" in r.out


def test_unknown_ids_exit_2_listing_known(study: Path) -> None:
    r = run_cli("sheet", "--rater", "bob", cwd=study)
    assert r.code == 2 and "cto, logician, redteam" in r.err
    r = run_cli("sheet", "--rater", "cto", "--pass", "nope", cwd=study)
    assert r.code == 2 and "unblinded, blinded" in r.err
    r = run_cli("sheet", "--rater", "cto", "--round", "retest9", cwd=study)
    assert r.code == 2 and "main" in r.err


def test_output_file_is_never_overwritten_without_force(study: Path) -> None:
    target = study / STUDY / "scores_cto.md"
    r = run_cli("sheet", "--rater", "cto", "-o", str(target), cwd=study)
    assert r.code == 0 and target.read_text("utf-8").startswith("---\nrater: cto\n")
    target.write_text("my scores", "utf-8")
    r = run_cli("sheet", "--rater", "cto", "-o", str(target), cwd=study)
    assert r.code == 2 and "--force" in r.err
    assert target.read_text("utf-8") == "my scores"
    r = run_cli("sheet", "--rater", "cto", "-o", str(target), "--force", cwd=study)
    assert r.code == 0 and target.read_text("utf-8").startswith("---")


def test_output_name_disagreeing_with_front_matter_gets_a_note(study: Path) -> None:
    r = run_cli(
        "sheet", "--rater", "cto", "--pass", "blinded", "-o", str(study / STUDY / "mine.md"), cwd=study
    )
    assert r.code == 0 and f"{STUDY}/scores_cto_blinded.md" in r.err
