"""`aoven-git markers` on the example study (refinement R5: markers used fewer than 2 times).

The expected counts come from an independent count made here with one plain regex over the
response part of each B file, not from the counting code under test.
"""

from __future__ import annotations

import json
import re
from collections import Counter
from pathlib import Path

from tests.conftest import PLAN_MARKERS, run_cli

STUDY = "tests/phase2"
MARKERS = list(PLAN_MARKERS)


def independent_count(folder: Path) -> Counter[str]:
    """Each `[...]` after the Response heading; every `,`/`;`-separated part that starts with a
    marker name (followed by a non-letter) counts once for that marker."""
    counts: Counter[str] = Counter()
    word = re.compile(r"\s*([A-Z]+)(?![A-Za-z])")
    for path in sorted(folder.glob("q*.md")):
        body = path.read_text("utf-8").split("\n## Response\n", 1)[1]
        for content in re.findall(r"\[([^\[\]\n]*)\]", body):
            for part in re.split(r"[,;]", content):
                m = word.match(part)
                if m and m.group(1) in MARKERS:
                    counts[m.group(1)] += 1
    return counts


def test_counts_match_an_independent_count(example_study: Path) -> None:
    r = run_cli("markers", "--format", "json", cwd=example_study)
    assert r.code == 0, r.output
    doc = json.loads(r.out)
    expected = independent_count(example_study / STUDY / "test_b")
    assert list(doc["counts"]) == MARKERS  # every plan marker, in plan order, zeros included
    assert doc["counts"] == {m: expected[m] for m in MARKERS}
    assert doc["rarely_used"] == [m for m in MARKERS if expected[m] < 2]
    # what the example README promises
    assert doc["rarely_used"] == ["ANALOGY", "EMOTION"]
    assert doc["counts"]["EMOTION"] == 0 and doc["counts"]["FACT"] == max(doc["counts"].values())
    assert doc["round"] == "main" and doc["missing"] == [] and len(doc["files"]) == 10


def test_the_prompt_line_does_not_count(example_study: Path) -> None:
    # every B prompt names markers in its [Aoven v0.1 | require: …, CONF | …] line
    folder = example_study / STUDY / "test_b"
    assert all(
        re.search(r"\[Aoven v0\.1 \| require: [A-Z, ]*, CONF \|", p.read_text("utf-8"))
        for p in folder.glob("q*.md")
    )
    doc = json.loads(run_cli("markers", "--format", "json", cwd=example_study).out)
    whole_file = Counter()
    for p in folder.glob("q*.md"):
        for content in re.findall(r"\[([^\[\]\n]*)\]", p.read_text("utf-8")):
            whole_file.update(
                m
                for part in re.split(r"[,;]", content)
                for m in MARKERS
                if re.match(rf"\s*{m}(?![A-Za-z])", part)
            )
    assert whole_file["CONF"] == doc["counts"]["CONF"] + 10  # ", CONF" of the ten prompt lines
    assert doc["counts"]["CONF"] == independent_count(folder)["CONF"]


def test_stack_counts_each_marker(example_study: Path) -> None:
    folder = example_study / STUDY / "test_b"
    before = json.loads(run_cli("markers", "--format", "json", cwd=example_study).out)["counts"]
    q4 = folder / "q4.md"
    q4.write_text(q4.read_text("utf-8") + "\n[EMOTION, ANALOGY(weak)] A stacked token.\n", "utf-8")
    after = json.loads(run_cli("markers", "--format", "json", cwd=example_study).out)
    assert after["counts"]["EMOTION"] == before["EMOTION"] + 1
    assert after["counts"]["ANALOGY"] == before["ANALOGY"] + 1
    assert "ANALOGY" not in after["rarely_used"] and "EMOTION" in after["rarely_used"]


def test_text_output(example_study: Path) -> None:
    r = run_cli("markers", cwd=example_study)
    assert r.code == 0
    assert re.search(r"^  FACT\s+\d+$", r.out, re.M)
    assert "used fewer than 2 times: ANALOGY, EMOTION" in r.out


def test_missing_response_is_exit_1_with_the_list(example_study: Path) -> None:
    (example_study / STUDY / "test_b" / "q6.md").unlink()
    (example_study / STUDY / "test_b" / "q8.md").unlink()
    r = run_cli("markers", "--format", "json", cwd=example_study)
    assert r.code == 1
    doc = json.loads(r.out)
    assert doc["missing"] == [f"{STUDY}/test_b/q6.md", f"{STUDY}/test_b/q8.md"]
    assert doc["counts"] == {m: independent_count(example_study / STUDY / "test_b")[m] for m in MARKERS}
    r = run_cli("markers", cwd=example_study)
    assert r.code == 1 and f"{STUDY}/test_b/q6.md" in r.err


def test_round_option(example_study: Path) -> None:
    assert run_cli("markers", "--round", "main", cwd=example_study).code == 0
    r = run_cli("markers", "--round", "retest9", cwd=example_study)
    assert r.code == 2 and "retest9" in r.err


def test_an_unknown_round_is_a_usage_error_naming_the_rounds(example_study: Path) -> None:
    r = run_cli("markers", "--round", "nope", cwd=example_study)
    assert r.code == 2 and "unknown round 'nope' (plan rounds: main" in r.err
    assert r.out == ""
