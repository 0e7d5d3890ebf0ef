"""Rendering a design's criteria and decision (SPEC §3.1; docs/report.md, "Criteria and the
decision") in Markdown — the GitHub job summary — and HTML, on hand-made documents of the
CONTRACT shape (tests/design_documents.py): the decision beside the verdict, the criteria table
with exact values, each criterion's values and chart, the decision table with each row's outcome,
what blocks an open decision; a labelled scale without means; a seed document as before."""

from __future__ import annotations

import importlib.util
import re
from fractions import Fraction
from pathlib import Path
from typing import Any

import pytest
from markdown_it import MarkdownIt

from aoven_git.render.html import render_html
from aoven_git.render.markdown import render_markdown
from tests.design_documents import (
    DESIGN_VARIANTS,
    by_id,
    contested_document,
    design_document,
    not_ready_document,
    otherwise_document,
    probe_document,
    undecided_document,
)

HERE = Path(__file__).resolve().parent
EVIL = "<script>alert(1)</script>"


def _load(name: str) -> Any:
    """A sibling test module, loaded by path (its helpers: table parsing, the small DOM)."""
    spec = importlib.util.spec_from_file_location(f"_designs_{name}", HERE / f"{name}.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


_MD = _load("test_render_markdown")
_HTML = _load("test_render_html")
md_tables, table_with, sample = _MD.md_tables, _MD.table_with, _MD.sample
parse, by_html_id = _HTML.parse, _HTML.by_id


def _column(rows: list[list[str]], header: str) -> list[str]:
    i = rows[0].index(header)
    return [r[i] for r in rows[1:]]


def _by_first(rows: list[list[str]]) -> dict[str, list[str]]:
    return {r[0]: r for r in rows[1:]}


# --- a seed document does not move ----------------------------------------------------------------


def test_seed_document_has_rules_and_no_design_section() -> None:
    """The sample (no `criteria`) keeps its Rules section and golden file; nothing of a design
    appears in either format."""
    text = render_markdown(sample())
    assert text == (HERE / "golden" / "report_sample.md").read_text(encoding="utf-8")
    assert "## Rules" in text and "## Decision" not in text and "**Decision:**" not in text
    page = render_html(sample())
    assert 'id="rules"' in page and 'id="criteria"' not in page and "section.criterion" not in page


def test_a_design_without_its_keys_renders_as_the_seed() -> None:
    """The design path is taken on the `criteria` key alone: the same document without it is
    drawn exactly as a seed document with the same keys."""
    doc = design_document()
    seedlike = {k: v for k, v in doc.items() if k not in ("criteria", "decision")}
    text = render_markdown(seedlike)
    assert "## Rules" in text and "## Criteria" not in text
    assert render_markdown(doc) != text


# --- the headline ---------------------------------------------------------------------------------


def test_decision_line_stands_next_to_the_verdict() -> None:
    lines = render_markdown(design_document()).splitlines()
    at = lines.index("## 🟢 Verdict: **PASS**")
    assert lines[at + 2] == "**Decision:** adopt P1+P2 — row 2 of 3"
    page = parse(render_html(design_document()))
    verdict = by_html_id(page, "verdict")
    line = by_html_id(page, "decision-line")
    assert line.parent is verdict and "adopt P1+P2 — row 2 of 3" in line.all_text()


def test_headline_says_the_decision_and_the_criteria_met_and_not_met() -> None:
    text = render_markdown(design_document())
    assert ("Row 2 is taken: B1-same, B1-lighter, B1-seed all hold; row 1 fails on B2-same; the decision "
            "is “adopt P1+P2”.") in text
    assert ("**Criteria:** 5 of 6 met (B1-same, B1-lighter, B1-seed, B2-lighter, B2-seed); not met: "
            "B2-same.") in text
    html_text = by_html_id(parse(render_html(design_document())), "verdict").all_text()
    assert "Row 2 is taken" in html_text and "not met: B2-same" in html_text


def test_otherwise_row_says_every_row_above_failed() -> None:
    text = render_markdown(otherwise_document())
    assert "**Decision:** defer R1 — row 3 of 3" in text
    assert ("No row's criteria all hold (row 1 fails on B1-lighter, B2-same, B2-lighter; row 2 fails on "
            "B1-lighter), so the decision is the otherwise row 3: “defer R1”.") in text


def test_ordinal_design_shows_every_condition_mean_and_the_improvement() -> None:
    text = render_markdown(design_document())
    assert ("**Improvement** (B against A): 42.9% · **mean aggregate** A 11.10, B 6.33, B1 6.10, B2 6.90 · "
            "**counted dimensions** 7 of 8") in text
    cards = [n.all_text() for n in parse(render_html(design_document())).root.find_all("div", "figure")]
    assert any(c.startswith("Mean B2") and "6.90" in c for c in cards)
    assert any(c.startswith("Decision") and "adopt P1+P2" in c for c in cards)
    assert any(c.startswith("Criteria hold") and "5 / 6" in c for c in cards)


# --- the criteria table ---------------------------------------------------------------------------


def test_criteria_table_values_exact_bound_and_outcome() -> None:
    rows = table_with(render_markdown(design_document()), "criterion")
    assert rows[0] == ["criterion", "kind", "what it tests", "values", "bound", "satisfy the bound",
                       "outcome"]
    found = _by_first(rows)
    same = found["B2-same"]
    assert same[2] == "mean B2 − mean B on each of D1–D6, |v| ≤ 1/2"
    # integers as they are, other values with their exact fraction
    assert same[3] == "D1 0; D2 +0.67 (2/3); D3 +0.10 (1/10); D4 -0.20 (-1/5); D5 0; D6 +0.25 (1/4)"
    assert same[4] == "|v| ≤ 0.5" and same[5] == "5 of 6 satisfy (all needed)" and same[6] == "❌ fails"
    assert found["B1-lighter"][3:] == ["sum -0.30 (-3/10)", "v < 0", "1 of 1 satisfy (all needed)",
                                       "✅ holds"]
    assert found["B1-seed"][3:] == ["—", "—", "2 of 2 pass rules met", "✅ holds"]


def test_each_criterion_lists_its_values_and_which_satisfy_the_bound() -> None:
    text = render_markdown(design_document())
    rows = table_with(text, "dimension", "satisfies |v| ≤ 0.5")
    assert rows[0] == ["dimension", "value", "exact", "satisfies |v| ≤ 0.5"]
    tables = [t for t in md_tables(text) if t[0][0] == "dimension" and "satisfies |v| ≤ 0.5" in t[0]]
    b2 = _by_first(tables[1])  # B1-same, then B2-same
    assert b2["D2"] == ["D2", "+0.67", "2/3", "❌ no"]
    assert b2["D3"] == ["D3", "+0.10", "1/10", "✅ yes"]
    assert b2["D1"] == ["D1", "0.00", "", "✅ yes"]
    assert "### `B2-same` mean B2 − mean B on each of D1–D6, \\|v\\| ≤ 1/2: ❌ fails" in text


def test_seed_criterion_shows_its_own_rules() -> None:
    rows = table_with(render_markdown(design_document()), "rule")
    assert _column(rows, "rule") == ["B1-seed.pass.improvement", "B1-seed.pass.questions",
                                     "B1-seed.fail.improvement"]
    assert _column(rows, "value")[0] == "42.9% (143/333)"


def test_rate_criterion_with_require() -> None:
    doc = probe_document()
    text = render_markdown(doc)
    found = _by_first(table_with(text, "criterion"))
    assert found["L-moved"][3] == "L1 +0.67 (2/3); L2 +0.33 (1/3); L3 0; L4 +0.33 (1/3); L5 -0.33 (-1/3)"
    assert found["L-moved"][4:] == ["v > 0", "3 of 5 satisfy (3 needed)", "✅ holds"]
    questions = _by_first(table_with(text, "question", "satisfies v > 0"))
    assert questions["L3"][3] == "❌ no" and questions["L5"][1:] == ["-0.33", "-1/3", "❌ no"]


# --- the decision table ---------------------------------------------------------------------------


@pytest.mark.parametrize(("builder", "outcomes"), [
    (design_document, ["❌ fails", "✅ taken", "not reached"]),
    (otherwise_document, ["❌ fails", "❌ fails", "✅ taken"]),
    (undecided_document, ["⏸️ blocked", "not reached", "not reached"]),
    (not_ready_document, ["not reached", "not reached", "not reached"]),
])
def test_decision_table_gives_each_row_its_outcome(builder: Any, outcomes: list[str]) -> None:
    rows = table_with(render_markdown(builder()), "row", "then")
    assert _column(rows, "then") == ["adopt P1+P2+P3", "adopt P1+P2", "defer R1"]
    assert _column(rows, "outcome") == outcomes
    assert _column(rows, "if every criterion holds")[2] == "otherwise"


def test_undecided_decision_names_the_blocking_criterion_and_why() -> None:
    text = render_markdown(undecided_document())
    assert "**Decision:** undecided — blocked by B2-seed at row 1 of 3" in text
    assert "**Blocked by:** `B2-seed`" in text
    assert "1. row 1 is not definitely failing: B2-seed is undecided" in text
    rows = table_with(text, "row", "then")
    assert _column(rows, "why")[0] == "open: B2-seed (undecided)"
    assert "- D7 does not count under the agreement gate (κ 0.412 \\< 0.6)" in text
    section = by_html_id(parse(render_html(undecided_document())), "decision").all_text()
    assert "Blocked by: B2-seed" in section and "row 1 is not definitely failing" in section


def test_contested_decision_shows_the_extremes() -> None:
    text = render_markdown(contested_document())
    assert "**Decision:** contested — blocked by B2-same at row 1 of 3" in text
    rows = table_with(text, "criterion")
    assert rows[0][-1] == "at the contested extremes"
    assert _by_first(rows)["B2-same"][-2:] == ["⚖️ contested", "best case holds, worst case fails"]
    assert _by_first(rows)["B1-same"][-1] == ""
    assert "⚖️ **Contested cells at their extremes:** best case holds, worst case fails." in text
    html_text = by_html_id(parse(render_html(contested_document())), "criterion-4").all_text()
    assert "Contested cells at their extremes: best case holds, worst case fails." in html_text


# --- charts ---------------------------------------------------------------------------------------


def _x(node: Any, attr: str) -> float:
    return float(node.attrs[attr])


def test_one_chart_per_criterion_with_values_except_seed() -> None:
    page = render_html(design_document())
    tree = parse(page)
    charts = tree.root.find_all("svg", "chart-criterion")
    assert [c.attrs["id"] for c in charts] == [f"chart-criterion-{i}" for i in (1, 2, 4, 5)]
    for i in (3, 6):
        section = by_html_id(tree, f"criterion-{i}").all_text()
        assert "No chart: a seed criterion is the seed's verdict" in section


def test_bars_to_scale_coloured_and_labelled_by_the_bound() -> None:
    """B2-same: one bar per dimension from zero, lengths proportional to the values, D2 (2/3)
    misses |v| ≤ 1/2 and says so in words; the band runs from −1/2 to 1/2 around zero."""
    doc = design_document()
    chart = by_html_id(parse(render_html(doc)), "chart-criterion-4")
    bars = chart.find_all("rect", "criterion-bar")
    values = by_id(doc, "B2-same")["values_exact"]
    assert len(bars) == len(values) == 6
    zero = _x(chart.find_all("line", "zero")[0], "x1")
    scale = []
    for bar, (dim, exact) in zip(bars, values.items(), strict=True):
        v = Fraction(exact)
        assert ("misses" in bar.classes()) == (abs(v) > Fraction(1, 2)), dim
        if v:
            left, width = _x(bar, "x"), _x(bar, "width")
            end = left + width if v > 0 else left
            assert (left == pytest.approx(zero, abs=0.11)) == (v > 0)
            scale.append((end - zero) / float(v))
    assert max(scale) == pytest.approx(min(scale), rel=0.02)
    band = chart.find_all("rect", "bound-band")[0]
    lo, hi = _x(band, "x"), _x(band, "x") + _x(band, "width")
    assert zero - lo == pytest.approx(hi - zero, abs=0.2)
    assert (hi - zero) / 0.5 == pytest.approx(scale[0], rel=0.02)
    statuses = [t.all_text() for t in chart.find_all("text", "criterion-status")]
    assert statuses == ["✓ meets", "✗ misses", "✓ meets", "✓ meets", "✓ meets", "✓ meets"]


def test_one_sided_bound_is_one_dashed_line_at_its_value() -> None:
    chart = by_html_id(parse(render_html(probe_document())), "chart-criterion-1")
    lines = chart.find_all("line", "bound")
    zero = _x(chart.find_all("line", "zero")[0], "x1")
    assert len(lines) == 1 and _x(lines[0], "x1") == pytest.approx(zero)
    assert not chart.find_all("rect", "bound-band")
    assert "bound v > 0" in chart.all_text()
    assert [("meets" in b.classes()) for b in chart.find_all("rect", "criterion-bar")] == [
        True, True, False, True, False]


def test_not_ready_design_draws_no_chart_and_withholds_values() -> None:
    doc = not_ready_document()
    page = render_html(doc)
    assert "chart-criterion" not in page.split("</style>", 1)[1]
    assert "No charts: the criteria values are withheld while the verdict is NOT-READY." in page
    text = render_markdown(doc)
    rows = table_with(text, "criterion")
    assert set(_column(rows, "values")) == {"withheld", "—"}
    assert set(_column(rows, "satisfy the bound")) == {"—", "withheld"}
    assert "**Decision:** withheld while the verdict is NOT-READY" in text
    assert "Values are withheld while the verdict is NOT-READY." in text
    assert "### `B1-same`" not in text  # no per-criterion values while withheld


# --- a labelled (nominal) scale -------------------------------------------------------------------


def test_nominal_scale_has_no_means_no_improvement_no_none() -> None:
    doc = probe_document()
    text = render_markdown(doc)
    assert "Means per dimension" not in text and "Improvement" not in text and "mean aggregate" not in text
    assert not re.search(r"\b(None|nan|NaN|null)\b", text)
    assert "## Agreement (κ)" in text and "α is Krippendorff's α (nominal)" in text
    assert "Settings: no weights" in text
    assert "A labelled scale has no aggregates; each question's rate is under Criteria." in text
    page = render_html(doc)
    tree = parse(page)
    for ident in ("chart-means", "chart-questions", "means"):
        assert f'id="{ident}"' not in page
    cards = [n.all_text() for n in tree.root.find_all("div", "figure")]
    assert not any(c.startswith(("Improvement", "Mean")) for c in cards)
    assert not re.search(r"\b(None|nan|NaN|null)\b", tree.root.all_text())
    assert "Agreement (κ)" in by_html_id(tree, "agreement").all_text()


# --- every variant: safe and clean ----------------------------------------------------------------


@pytest.mark.parametrize("name", sorted(DESIGN_VARIANTS))
def test_design_variants_are_self_contained_and_never_say_none(name: str) -> None:
    doc = DESIGN_VARIANTS[name]()
    page = render_html(doc)
    tree = parse(page)
    assert not tree.root.find_all("script") and "http://" not in page and "https://" not in page
    assert not re.search(r"\b(None|nan|NaN|null|Infinity)\b", tree.root.all_text()), name
    text = render_markdown(doc)
    assert not re.search(r"\b(None|nan|NaN|null|Infinity)\b", text), name
    for table in md_tables(text):  # every row of every table has as many cells as its header
        assert {len(r) for r in table} == {len(table[0])}


def test_user_text_in_criteria_and_decision_is_escaped() -> None:
    doc = design_document()
    crit = by_id(doc, "B2-same")
    crit.update(id=EVIL, text=f"{EVIL} | `t` **b**", values={EVIL: 0.5, **crit["values"]},
                values_exact={EVIL: "1/2", **crit["values_exact"]},
                satisfied={EVIL: True, **crit["satisfied"]},
                reasons=[f"{EVIL}\nline"])
    doc["decision"]["rows"][0].update(then=EVIL, **{"if": [EVIL, "B1-same"]})
    doc["decision"].update(then=f"adopt {EVIL}", blocking=[EVIL], reasons=[EVIL])
    page = render_html(doc)
    assert "<script>" not in page and "&lt;script&gt;" in page
    text = render_markdown(doc)
    rendered = MarkdownIt("commonmark").enable("table").render(text)
    assert "<script" not in rendered and "<strong>b</strong>" not in rendered
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in rendered
    assert "**Decision:** adopt \\<script\\>alert(1)\\</script\\> — row 2 of 3" in text
    for table in md_tables(text):
        assert {len(r) for r in table} == {len(table[0])}


# --- values that are not there --------------------------------------------------------------------


def test_an_undefined_value_is_said_not_drawn() -> None:
    """B1-same with D4 undefined (a mean over no cell): the tables say "undefined", the chart
    draws the five other bars and writes "undefined" in D4's row."""
    doc = design_document()
    same = by_id(doc, "B1-same")
    same["values"]["D4"] = same["values_exact"]["D4"] = None
    del same["satisfied"]["D4"]
    same.update(outcome="undecided", reasons=["the mean of B1 on D4 is undefined"])
    text = render_markdown(doc)
    assert "D3 +0.33 (1/3); D4 undefined; D5" in _by_first(table_with(text, "criterion"))["B1-same"][3]
    values = _by_first(table_with(text, "dimension", "satisfies |v| ≤ 0.5"))
    assert values["D4"] == ["D4", "undefined", "", "—"]
    chart = by_html_id(parse(render_html(doc)), "chart-criterion-1")
    assert len(chart.find_all("rect", "criterion-bar")) == 5
    undefined = [t.all_text() for t in chart.find_all("text", "criterion-undefined")]
    assert len(undefined) == 1 and undefined[0].startswith("undefined")
    statuses = [t.all_text() for t in chart.find_all("text", "criterion-status")]
    assert statuses == ["✓ meets"] * 3 + ["undefined"] + ["✓ meets"] * 2


def test_a_design_whose_every_value_is_undefined_has_no_chart() -> None:
    doc = design_document()
    lighter = by_id(doc, "B1-lighter")
    lighter.update(values={"sum": None}, values_exact={"sum": None}, satisfied={}, outcome="undecided")
    tree = parse(render_html(doc))
    assert "No chart: no value is defined." in by_html_id(tree, "criterion-2").all_text()
    assert not by_html_id(tree, "criterion-2").find_all("svg")


def test_a_sparse_design_document_still_renders() -> None:
    """No criterion and no decision key (a document cut short): both formats render, saying
    nothing that is not there, never None."""
    doc = design_document(criteria=[])
    del doc["decision"]
    for text in (render_markdown(doc), parse(render_html(doc)).root.all_text()):
        assert "0 of 0 met" in text
        assert not re.search(r"\b(None|nan|NaN|null)\b", text)


def test_amendment_chart_marks_moved_cells_written_with_a_replicate() -> None:
    """With replicates a cell is written `Q2/B#2/D8`: its condition is still B, so the amendment's
    chart marks D8 of B as moved (it used to compare `B#2` with `B` and mark nothing)."""
    report = _MD.amended_report()
    entry = report["amendments"][0]
    for change in entry["consensus_changes"]:
        change["cell"] = change["cell"].replace("/B/", "/B#2/")
    svg = by_html_id(parse(render_html(report)), "chart-amendment-1")
    [mark] = svg.find_all("path", "moved-mark")
    assert mark.all_text() == "D8 B: 3 cells moved (Q2/B#2/D8, Q3/B#2/D8, Q9/B#2/D8)"


def test_many_values_are_cut_in_the_criteria_table_and_all_listed_below() -> None:
    """A rate criterion over twelve probes: the criteria table writes eight values and says how
    many more there are; the criterion's own table and chart have all twelve."""
    moved = {f"P{i}": Fraction(i - 4, 12) for i in range(1, 13)}
    doc = probe_document()
    doc["criteria"][0].update(values={k: float(v) for k, v in moved.items()},
                              values_exact={k: str(v) for k, v in moved.items()},
                              satisfied={k: v > 0 for k, v in moved.items()})
    text = render_markdown(doc)
    cell = _by_first(table_with(text, "criterion"))["L-moved"][3]
    assert cell.startswith("P1 -0.25 (-1/4); P2 -0.17 (-1/6);")
    assert cell.endswith("; and 4 more (listed below)")
    assert "P8 +0.33 (1/3)" in cell and "P9" not in cell
    assert len(table_with(text, "question", "satisfies v > 0")) == 13
    chart = by_html_id(parse(render_html(doc)), "chart-criterion-1")
    assert len(chart.find_all("rect", "criterion-bar")) == 12  # P4 is 0: a bar one unit wide


def test_means_of_every_condition_in_table_and_chart() -> None:
    """The four-arm study: the means table has a column per condition, the chart a bar per
    condition and dimension, heights to scale, the excluded D7 faded."""
    doc = design_document()
    rows = table_with(render_markdown(doc), "dimension", "mean B2")
    assert rows[0][3:7] == ["mean A", "mean B", "mean B1", "mean B2"]
    assert _by_first(rows)["D2"][3:7] == ["2.20", "1.23", "1.20", "1.90"]
    chart = by_html_id(parse(render_html(doc)), "chart-means")
    assert "chart-conditions" in chart.classes()
    bars = chart.find_all("rect", "bar-condition")
    assert len(bars) == 8 * 4
    height = {b.children[0].all_text(): _x(b, "height") for b in bars}
    assert height["D2: B2 1.90"] / height["D1: B1 0.90"] == pytest.approx(1.9 / 0.9, rel=0.02)
    faded = [b.children[0].all_text() for b in bars if b.attrs.get("fill-opacity") == "0.35"]
    assert faded == ["D7: A 1.20", "D7: B 1.00", "D7: B1 0.80", "D7: B2 0.90"]
    legend = [t.all_text() for t in chart.find_all("text", "legend")]
    assert legend == ["A (baseline)", "B", "B1", "B2"]
