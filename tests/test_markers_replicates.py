"""Responses with replicates and several treatments (SPEC §3.1, §8): `strip-markers` and `markers`.

A plan with baseline A, treatments B and B1 and two sampled responses per (question, condition):
`strip-markers` writes one copy per replicate of every condition of a stripped pass, `--check`
notices a stale one, and `markers` counts every replicate of every treatment (or of `--condition
C`). Expected counts are written out by hand from the responses built here; the seed's outputs
stay as they were (tests/test_markers_cli.py, tests/test_strip_markers_cli.py).
"""

from __future__ import annotations

import json
from pathlib import Path

from tests.conftest import GitRepo, run_cli

PLAN = """\
version: 1
study: arms
study_dir: study
responses: "test_{condition}/{question}_{replicate}.md"
stripped_responses: "test_{condition}_stripped/{question}_{replicate}.md"
replicates: 2
scale: {min: 0, max: 3}
conditions:
  - {id: A, name: Baseline, role: baseline}
  - {id: B, name: Long form}
  - {id: B1, name: Short form}
transitions:
  - {id: 1, name: "FACT→HYP"}
dimensions:
  - {id: D1, name: One, kind: epistemic, transitions: [1]}
questions:
  - {id: Q1, text: "Why is the sky blue?", expects: [1]}
  - {id: Q2, text: "Do cats dream?", expects: [1]}
raters:
  - {id: cto, name: CTO}
  - {id: logician, name: Logician}
passes:
  - {id: open, conditions: [A, B, B1], dimensions: [D1], primary: true}
  - {id: quiet, conditions: [B, B1], dimensions: [D1], stripped: true}
markers: [FACT, HYP, LIMIT]
rules:
  pass: {treatment: B}
security: {require_signed: false, allowed_signers: null}
locked: [study_dir, responses, scale, conditions, transitions, dimensions, questions, passes, markers, rules]
"""
#: the markers each (condition, replicate) uses in its response part, the same for both questions:
#: B uses FACT and HYP in every sample, B1 uses FACT only in its second sample; A none
USES = {("A", 1): "", ("A", 2): "", ("B", 1): "[FACT] a. [HYP] b.", ("B", 2): "[FACT, HYP] a b.",
        ("B1", 1): "a b.", ("B1", 2): "[FACT] a b."}
PROMPT = "## Prompt\n\n[Aoven v0.1 | require: FACT, HYP, LIMIT]\nthe question\n\n"


def response(c: str, r: int) -> str:
    prompt = PROMPT if c != "A" else ""
    return f"# title\n\n{prompt}## Response\n\n{USES[(c, r)] or 'a b.'} Sample {r}.\n"


def study(tmp_path: Path) -> GitRepo:
    repo = GitRepo(tmp_path / "repo")
    repo.write("aoven.yaml", PLAN)
    for (c, r) in USES:
        for q in ("q1", "q2"):
            repo.write(f"study/test_{c.lower()}/{q}_{r}.md", response(c, r))
    repo.commit("plan and responses")
    return repo


def test_strip_markers_writes_one_copy_per_replicate_of_every_stripped_condition(tmp_path: Path) -> None:
    repo = study(tmp_path)
    res = run_cli("strip-markers", "--format", "json", cwd=repo.path)
    assert res.code == 0, res.output
    doc = json.loads(res.out)
    assert doc["written"] == [f"study/test_{c}_stripped/{q}_{r}.md"
                              for q in ("q1", "q2") for c in ("b", "b1") for r in (1, 2)]
    assert doc["errors"] == [] and doc["missing"] == []
    copy = (repo.path / "study/test_b_stripped/q2_2.md").read_text("utf-8")
    assert copy == f"# title\n\n{PROMPT}## Response\n\na b. Sample 2.\n"  # prompt kept, markers gone
    assert not (repo.path / "study/test_a_stripped").exists()  # A is not in a stripped pass


def test_strip_markers_check_names_the_stale_replicate(tmp_path: Path) -> None:
    repo = study(tmp_path)
    assert run_cli("strip-markers", cwd=repo.path).code == 0
    assert run_cli("strip-markers", "--check", cwd=repo.path).code == 0
    repo.write("study/test_b1/q1_2.md", response("B1", 2).replace("Sample 2", "Sample two"))
    res = run_cli("strip-markers", "--check", "--format", "json", cwd=repo.path)
    assert res.code == 1
    assert json.loads(res.out)["stale"] == ["study/test_b1_stripped/q1_2.md"]


def test_a_missing_replicate_is_an_error_naming_its_file(tmp_path: Path) -> None:
    repo = study(tmp_path)
    (repo.path / "study/test_b/q2_2.md").unlink()
    res = run_cli("strip-markers", cwd=repo.path)
    assert res.code == 1
    assert "study/test_b/q2_2.md: response missing (needed for study/test_b_stripped/q2_2.md)" in res.err


def test_markers_counts_every_replicate_of_every_treatment(tmp_path: Path) -> None:
    repo = study(tmp_path)
    res = run_cli("markers", "--format", "json", cwd=repo.path)
    assert res.code == 0, res.output
    doc = json.loads(res.out)
    # per question: B 2 FACT + 2 HYP over its two samples, B1 1 FACT; two questions
    assert doc["counts"] == {"FACT": 6, "HYP": 4, "LIMIT": 0}  # the prompt's LIMIT does not count
    assert doc["rarely_used"] == ["LIMIT"]
    assert doc["condition"] is None and doc["conditions"] == ["B", "B1"]
    assert doc["files"] == [f"study/test_{c}/{q}_{r}.md"
                            for q in ("q1", "q2") for c in ("b", "b1") for r in (1, 2)]
    text = run_cli("markers", cwd=repo.path).out
    assert text.startswith("markers in 8 B, B1 response(s) of round main:")


def test_markers_of_one_condition(tmp_path: Path) -> None:
    repo = study(tmp_path)
    doc = json.loads(run_cli("markers", "--condition", "B1", "--format", "json", cwd=repo.path).out)
    assert doc["counts"] == {"FACT": 2, "HYP": 0, "LIMIT": 0}
    assert doc["condition"] == "B1" and doc["conditions"] == ["B1"] and len(doc["files"]) == 4
    res = run_cli("markers", "--condition", "C", cwd=repo.path)
    assert res.code == 2 and "unknown condition 'C'" in res.err and "A, B, B1" in res.err


def test_a_missing_replicate_is_named_and_the_others_still_counted(tmp_path: Path) -> None:
    repo = study(tmp_path)
    (repo.path / "study/test_b/q1_2.md").unlink()
    res = run_cli("markers", "--format", "json", cwd=repo.path)
    assert res.code == 1
    doc = json.loads(res.out)
    assert doc["missing"] == ["study/test_b/q1_2.md"] and doc["counts"]["FACT"] == 5
