"""The "Beyond κ" table and the uncertainty lines in Markdown and HTML, drawn from a real analysed
document (tests/test_coefficient_gate.py's D8 study) and from a document written before they
existed."""

from __future__ import annotations

import copy
from pathlib import Path

from aoven_git.render.html import render_html
from aoven_git.render.markdown import render_markdown
from tests.test_coefficient_gate import plan_with, report


def _row(text: str, first: str) -> list[str]:
    line = next(ln for ln in text.splitlines() if ln.startswith(f"| {first} |") and "κ is" in ln)
    return [c.strip() for c in line.strip("|").split("|")]


def test_markdown_beyond_kappa_table_flags_the_paradox(tmp_path: Path) -> None:
    text = render_markdown(report(plan_with(tmp_path, None)))
    assert "**Beyond κ** (all raters" in text
    assert ("| dimension | agreement (weighted) | AC2 | Brennan–Prediger | prevalence index | "
            "bias index (largest pair) | κ paradox |") in text
    row = _row(text, "`D8`")
    assert row[1].startswith("0.989 ")  # 1 − 1/90
    assert row[4].endswith("(score 0)") and row[5].endswith("(cto\\~logician)")
    assert row[6].startswith("⚠️ κ is -0.0526 below 0.6 while weighted agreement is 98.89%")
    assert "The plan gates dimensions on" not in text  # cohen: nothing to say
    assert "Uncertainty (descriptive, not a rule)" not in text  # --bootstrap 0
    assert "**Each rater's means in the verdict pass**" in text


def test_gate_note_when_the_plan_gates_on_another_coefficient(tmp_path: Path) -> None:
    text = render_markdown(report(plan_with(tmp_path, "brennan-prediger")))
    assert ("The plan gates dimensions on brennan-prediger per rater pair, the min over pairs "
            "(rules.kappa.coefficient: brennan-prediger), threshold 0.600; the counts column "
            "follows it.") in text
    html = render_html(report(plan_with(tmp_path, "krippendorff")))
    assert "The plan gates dimensions on Krippendorff&#x27;s α over all raters" in html
    assert "<strong>Beyond κ</strong>" in html


def test_a_document_without_the_new_keys_renders_without_them(tmp_path: Path) -> None:
    doc = copy.deepcopy(report(plan_with(tmp_path, None)))
    for per_dim in doc["kappa"].values():
        for entry in per_dim.values():
            for key in ("coefficients", "pair_coefficients", "paradox", "gate"):
                del entry[key]
    del doc["uncertainty"]
    for text in (render_markdown(doc), render_html(doc)):
        assert "Beyond κ" not in text and "Each rater&#x27;s means" not in text
        assert "Each rater's means" not in text
