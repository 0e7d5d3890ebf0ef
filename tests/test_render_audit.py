"""The report's provenance and audit sections, in Markdown and HTML, on hand-made documents.

Source line and banners (committed and clean, a work-tree preview, outside git, uncommitted
changes behind a NOT-READY), deviations from the published defaults, the reconciliation (each
rater's own proposal; unanimous, contested and missing cells; rows someone else wrote), optional
raters excluded for seal violations, and the seal timeline. Markdown tables are read back with a
real GFM parser (markdown-it-py), HTML with the standard library parser.
"""

from __future__ import annotations

import importlib.util
import re
from pathlib import Path
from typing import Any

import pytest
from markdown_it import MarkdownIt

from aoven_git.render.html import render_html
from aoven_git.render.markdown import SUMMARY_LIMIT, render_markdown, truncate_summary


def _load(name: str) -> Any:
    """Helpers of the neighbouring render tests, loaded by path so any pytest import mode works."""
    path = Path(__file__).with_name(name)
    spec = importlib.util.spec_from_file_location(f"_audit_{path.stem}", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


_MD = _load("test_render_markdown.py")
_HTML = _load("test_render_html.py")
sample, md_tables, table_with = _MD.sample, _MD.md_tables, _MD.table_with
work_tree_report, outside_git_report, audit_report = (
    _MD.work_tree_report, _MD.outside_git_report, _MD.audit_report)
parse, by_id = _HTML.parse, _HTML.by_id
FULL = "9c1e5a7f3b2d4e6f8a0b1c2d3e4f5a6b7c8d9e0f"


def section(markdown: str, heading: str) -> str:
    """The text of one `## heading` section."""
    start = markdown.index(f"## {heading}")
    end = markdown.find("\n## ", start + 1)
    return markdown[start:] if end < 0 else markdown[start:end]


def rendered(markdown: str) -> str:
    return MarkdownIt("commonmark").enable("table").render(markdown)


def html_rows(node: Any) -> list[list[str]]:
    return [[c.all_text() for c in tr.children if c.tag in ("td", "th")] for tr in node.find_all("tr")]


# --- source line and banners ---------------------------------------------------------------------


def test_source_line_of_a_clean_committed_report() -> None:
    text = render_markdown(sample())
    assert ("**Source:** revision `9c1e5a7` · work tree clean · aoven-git 0.1.0 · generated "
            "2026-11-26 10:00:00 UTC") in text
    assert text.index("**Source:**") < text.index("Verdict:")  # near the top, before the verdict
    assert "> ⛔" not in text and "> ⚠️" not in text  # nothing to warn about
    tree = parse(render_html(sample()))
    source = by_id(tree, "source")
    assert "revision 9c1e5a7" in source.all_text() and "work tree clean" in source.all_text()
    (rev,) = [c for c in source.find_all("code") if c.attrs.get("title")]
    assert rev.attrs["title"] == FULL and rev.all_text() == "9c1e5a7"  # the full id as tooltip
    assert not [n for n in tree.root.iter() if n.attrs.get("id") == "source-banner"]


def test_work_tree_preview_is_bannered_before_the_verdict() -> None:
    text = render_markdown(work_tree_report())
    banner = "> ⛔ **Computed from uncommitted files — seals not verified for these files.**"
    assert banner in text
    assert text.index(banner) < text.index("## 🟢 Verdict")
    assert "> - `tests/phase2/scores_cto.md` (modified)" in text
    assert "> - `tests/phase2/reconciliation.md` (not tracked)" in text
    assert "computed from the work tree (2 uncommitted study files)" in text
    assert "not covered by them" in section(text, "Seals")
    assert ("⚠️ **Attribution not checked:** Computed from uncommitted files: who wrote each reconciliation "
            "row was not checked; every row is counted") in section(text, "Reconciliation")
    tree = parse(render_html(work_tree_report()))
    node = by_id(tree, "source-banner")
    assert {"banner", "b-bad"} <= node.classes() and node.attrs.get("role") == "alert"
    assert "Computed from uncommitted files — seals not verified for these files" in node.all_text()
    order = [n.attrs.get("id") for n in tree.root.iter() if n.attrs.get("id") in ("source-banner", "verdict")]
    assert order == ["source-banner", "verdict"]
    assert [li.all_text() for li in node.find_all("li")] == [
        "tests/phase2/scores_cto.md (modified)", "tests/phase2/reconciliation.md (not tracked)"]


def test_outside_git_says_nothing_was_verified() -> None:
    text = render_markdown(outside_git_report())
    assert "**Source:** not a git repository · files read from the folder · aoven-git 0.1.0" in text
    assert "> ⚠️ **Outside git: nothing was verified.**" in text
    top = text.split("## ")[0]  # the title, the source line and the banner
    assert "who wrote each reconciliation row was not checked" in top
    assert "Attribution not checked" in section(text, "Reconciliation")
    assert "revision" not in top
    node = by_id(parse(render_html(outside_git_report())), "source-banner")
    assert "b-warn" in node.classes() and "Outside git" in node.all_text()


def test_uncommitted_changes_make_the_not_ready_obvious() -> None:
    r = sample()
    r["verdict"] = "NOT-READY"
    r["source"].update(clean=False, uncommitted=["tests/phase2/scores_cto.md (M)"])
    text = render_markdown(r)
    banner = text.split("## ")[0]
    assert "> ⛔ **Uncommitted changes to study files.**" in banner
    assert "computed from the committed revision 9c1e5a7" in banner
    assert "keep the verdict NOT-READY until they are committed" in banner
    assert "1 uncommitted study file ·" in text
    # the same changes under a verdict that is not NOT-READY (an old document): no such claim
    r["verdict"] = "PASS"
    assert "keep the verdict NOT-READY" not in render_markdown(r)
    assert "Uncommitted changes to study files" in by_id(parse(render_html(r)), "source-banner").all_text()


def test_long_file_lists_are_cut_with_a_count() -> None:
    r = work_tree_report()
    r["source"]["uncommitted"] = [f"study/f{i:02}.md (??)" for i in range(25)]
    text = render_markdown(r)
    assert text.count("> - `study/f") == 20
    assert "> - and 5 more (see the JSON report)" in text
    assert len(by_id(parse(render_html(r)), "source-banner").find_all("li")) == 21


def test_rev_and_a_repository_without_commits() -> None:
    r = sample()
    r["source"].update(rev="v1.0", clean=None)
    assert "revision `9c1e5a7` · --rev `v1.0` · work tree not compared" in render_markdown(r)
    r = work_tree_report()
    r["source"].update(revision=None)
    text = render_markdown(r)
    assert "**Source:** no commit yet" in text
    assert "the repository has no commit yet, so no seal covers them" in text


# --- deviations ----------------------------------------------------------------------------------


def test_deviations_list_each_path_value_default_and_line() -> None:
    text = render_markdown(audit_report())
    part = section(text, "Deviations from the published defaults")
    assert "departs from the defaults aoven-git init writes in 2 places" in part
    assert ("- `rounds[main].questions`: \\[Q1, Q2, Q3, Q4\\] (default \\[Q1, Q2, Q3, Q4, Q5, Q6, Q7, Q8, "
            "Q9, Q10\\]): removed Q5, Q6, Q7, Q8, Q9, Q10 · line 74") in part
    assert "- `locked`: removed blind · line 115" in part  # two lists cut to the same text: the detail
    assert ("📝 **Plan:** departs from the published defaults in 2 places: rounds\\[main\\].questions, "
            "locked") in text
    node = by_id(parse(render_html(audit_report())), "deviations")
    items = [li.all_text() for li in node.find_all("li")]
    assert items[0].startswith("rounds[main].questions: [Q1, Q2, Q3, Q4] (default [Q1,")
    assert items[0].endswith("removed Q5, Q6, Q7, Q8, Q9, Q10 · line 74")


def test_no_deviations_and_no_deviation_key() -> None:
    r = sample()
    r["deviations"] = []
    text = render_markdown(r)
    assert "The plan uses the defaults aoven-git init writes everywhere." in section(text, "Deviations")
    assert "**Plan:**" not in text
    assert "uses the defaults" in by_id(parse(render_html(r)), "deviations").all_text()
    del r["deviations"]
    assert "## Deviations" not in render_markdown(r)
    tree = parse(render_html(r))
    assert not [n for n in tree.root.iter() if n.attrs.get("id") == "deviations"]
    assert "#deviations" not in {a.attrs.get("href") for a in tree.root.find_all("a")}


def test_many_deviations_are_folded() -> None:
    r = sample()
    r["deviations"] = [{"path": f"rules.x{i}", "default": "1", "value": "2", "line": i, "detail": ""}
                       for i in range(30)]
    part = section(render_markdown(r), "Deviations")
    assert "<details>\n<summary>30 departures from the defaults</summary>" in part
    assert part.count("\n- `rules.x") == 30
    assert ("published defaults in 30 places: rules.x0, rules.x1, rules.x2, rules.x3, rules.x4, rules.x5 "
            "and 24 more") in render_markdown(r)


# --- reconciliation ------------------------------------------------------------------------------


def test_unanimous_cell_shows_each_raters_proposal_and_quote() -> None:
    text = render_markdown(sample())
    part = section(text, "Reconciliation")
    assert "1 reconciled cell: 1 unanimous." in part
    rows = table_with(part, "cell", also="justification and quote")
    assert rows[0] == ["cell", "consensus", "rater", "proposes", "justification and quote", "line"]
    assert rows[1][:4] == ["Q6/A/D3", "✅ unanimous: 2", "cto", "2"]
    assert rows[2][:4] == ["", "", "logician", "2"] and rows[3][:4] == ["", "", "redteam", "2"]
    assert rows[2][4].startswith('"As of my last update" tells the reader')
    assert "Every cell here is in pass unblinded." in part
    assert "<details>" not in part  # a short list stays open


def test_contested_and_missing_cells_come_first_with_every_rater() -> None:
    text = render_markdown(audit_report())
    part = section(text, "Reconciliation")
    assert "3 reconciled cells: 1 contested, 1 missing a rater's own value, 1 unanimous." in part
    open_cells = table_with(part, "cell", also="pass")
    assert open_cells[0] == ["cell", "pass", "consensus", "rater", "proposes", "justification and quote",
                             "line"]
    assert open_cells[1][:5] == ["Q2/B/D8", "unblinded", "⚖️ contested: 1 or 2", "cto", "1"]
    assert open_cells[2][3:5] == ["logician", "2"] and open_cells[3][3:5] == ["redteam", "contested"]
    assert open_cells[4][:5] == ["Q4/A/D1", "blinded", "❗ missing: logician", "cto", "2"]
    assert open_cells[5][3:6] == ["logician", "❗ not stated",
                                  "no row of their own: the cell has no consensus"]
    assert part.index("**Open cells**") < part.index("**Unanimous cells:**")
    tree = parse(render_html(audit_report()))
    node = by_id(tree, "reconciliation")
    tables = node.find_all("table")
    first = html_rows(tables[0])
    assert first[1][:5] == ["Q2/B/D8", "unblinded", "contested: 1 or 2", "cto", "1"]
    assert first[5][3:5] == ["logician", "not stated"]
    assert "t-bad" in tables[0].find_all("tr")[5].find_all("td")[4].classes()


def test_unattributed_rows_are_listed_with_the_fix() -> None:
    text = render_markdown(audit_report())
    part = section(text, "Reconciliation")
    assert "⚠️ **1 row ignored:** not written by the rater they name." in part
    assert "Fix: the rater must write and commit their own row." in part
    rows = table_with(part, "row")
    assert rows[0] == ["row", "cell", "named rater", "written by", "commit", "why ignored"]
    assert rows[1] == ["tests/phase2/reconciliation_blinded.md:9", "Q4/A/D1", "logician", "lead@example.org",
                       "a993ee0", "last written by lead@example.org, not by logician"]
    verdict = text.split("## Rules")[0]
    assert ("⚠️ **Reconciliation:** 1 row ignored because someone other than the rater it names "
            "wrote it") in verdict
    tree = parse(render_html(audit_report()))
    ignored = html_rows(by_id(tree, "reconciliation").find_all("table", "unattributed")[0])
    assert ignored[1][0] == "tests/phase2/reconciliation_blinded.md:9" and ignored[1][3] == "lead@example.org"
    assert "1 row ignored" in by_id(tree, "verdict").all_text()


def test_an_uncommitted_row_says_so() -> None:
    r = audit_report()
    r["reconciliation"]["unattributed"][0].update(author=None, commit=None,
                                                  message="the line has no commit (not committed)")
    row = table_with(section(render_markdown(r), "Reconciliation"), "row")[1]
    assert row[3:6] == ["not committed", "—", "the line has no commit (not committed)"]


def test_many_unanimous_cells_are_folded_and_the_summary_stays_small() -> None:
    """A large study: 3000 unanimous cells with long quotes. The open cells stay visible, the
    unanimous ones fold, and the job summary is cut under 1 MiB with every fold closed."""
    r = audit_report()
    quote = "“" + "a long quotation from the response " * 6 + "”"
    r["reconciliation"]["cells"] += [
        {"cell": f"Q{q}/A/D{d}", "pass": "unblinded", "state": "unanimous", "value": 1, "missing": [],
         "proposals": [{"rater": rr, "consensus": 1, "justification": quote, "line": 10 + q, "author": None}
                       for rr in ("cto", "logician", "redteam")]}
        for q in range(1, 376) for d in range(1, 9)]
    text = render_markdown(r)
    part = section(text, "Reconciliation")
    summary = "<summary>3001 unanimous cells: each rater&#x27;s proposal and quote</summary>"
    assert f"<details>\n{summary}\n" in part
    assert part.index("Q2/B/D8") < part.index("<details>")  # the open cells are outside the fold
    assert len(text.encode()) > SUMMARY_LIMIT
    cut = truncate_summary(text)
    assert len(cut.encode()) <= SUMMARY_LIMIT
    assert cut.count("<details>") == cut.count("</details>")  # the note is not hidden in a fold
    assert cut.rstrip().endswith("The full report is in the JSON and HTML report artifacts.")
    assert "## 🟢 Verdict" in cut and "Q2/B/D8" in cut
    html_text = render_html(r)
    fold = by_id(parse(html_text), "reconciliation").find_all("details")
    assert len(fold) == 1 and len(fold[0].find_all("tr")) == 1 + 3001 * 3


# --- excluded raters -----------------------------------------------------------------------------


def test_excluded_optional_rater_in_verdict_raters_and_seals() -> None:
    text = render_markdown(audit_report())
    line = ("**Excluded raters:** `redteam` (visible-at-seal): optional raters whose seal violations leave "
            "their sheets out of agreement and consensus; they do not block the verdict.")
    assert line in text.split("## Rules")[0] and line in section(text, "Seals")
    raters = table_with(text, "rater", also="pass blinded")
    assert raters[3] == ["redteam", "Red Team", "optional", "⛔ excluded", "⛔ excluded"]
    assert "pending" not in " ".join(raters[3])
    violations = table_with(section(text, "Seals"), "code")
    assert violations[0][-1] == "effect" and violations[1][-1] == "excludes redteam"
    tree = parse(render_html(audit_report()))
    rows = html_rows(by_id(tree, "raters"))
    assert ["redteam", "Red Team", "optional", "excluded", "excluded"] in rows
    assert "redteam (visible-at-seal)" in by_id(tree, "seals").all_text()


def test_a_required_raters_violation_blocks_next_to_an_excluded_one() -> None:
    r = audit_report()
    r["seals"]["violations"].append({"code": "modified-after-seal", "rater": "cto", "commit": None,
                                     "message": "scores_cto.md changed after its seal"})
    effects = [row[-1] for row in table_with(section(render_markdown(r), "Seals"), "code")[1:]]
    assert effects == ["excludes redteam", "blocks the verdict"]
    # without any excluded rater the table keeps its old columns
    assert table_with(section(render_markdown(_MD.not_ready_report()), "Seals"), "code")[0] == [
        "code", "rater", "commit", "message"]


def test_excluded_raters_from_an_older_seals_part() -> None:
    """A document whose only record is verify-seal's part (codes, no messages)."""
    r = audit_report()
    del r["excluded_raters"]
    assert "`redteam` (visible-at-seal)" in render_markdown(r)


# --- timeline ------------------------------------------------------------------------------------


def test_timeline_in_history_order_with_short_commits_and_authors() -> None:
    r = sample()
    r["seals"]["timeline"] = r["seals"]["timeline"][:3] + r["seals"]["timeline"][-1:]
    part = section(render_markdown(r), "Seals")
    rows = table_with(part, "commit", also="event")
    assert rows[0] == ["commit", "event", "rater", "pass", "author"]
    assert rows[1] == ["1a2b3c4", "🔒 digest seal", "cto", "unblinded", "cto@example.org"]
    assert rows[4] == ["9c1e5a7", "✍️ reconciliation rows", "—", "unblinded", "redteam@example.org"]
    assert "Round for every row: main." in part and "<details>" not in part  # short: not folded


def test_long_timeline_folds_in_markdown_but_not_in_html() -> None:
    part = section(render_markdown(sample()), "Seals")
    fold = part[part.index("<details>"):part.index("</details>")]
    assert "<summary>15 commits: who sealed, revealed and reconciled</summary>" in fold
    assert len(table_with(fold, "commit", also="event")) == 16
    table = by_id(parse(render_html(sample())), "seals").find_all("table", "timeline")[0]
    rows = html_rows(table)
    assert len(rows) == 16 and rows[7][:3] == ["708192a", "reveal", "cto"]
    assert not by_id(parse(render_html(sample())), "seals").find_all("details")


def test_amendment_column_only_when_an_event_has_one() -> None:
    r = sample()
    r["seals"]["timeline"][0]["amendment"] = "v012-d7d8"
    r["seals"]["timeline"][0]["round"] = "retest1"
    rows = table_with(render_markdown(r), "commit", also="event")
    assert rows[0] == ["commit", "event", "rater", "pass", "round", "amendment", "author"]
    assert rows[1][4:6] == ["retest1", "v012-d7d8"]


# --- all variants --------------------------------------------------------------------------------


ALLOWED_TAGS = {"p", "h1", "h2", "h3", "table", "thead", "tbody", "tr", "th", "td", "code", "strong", "em",
                "ol", "ul", "li", "blockquote", "hr", "details", "summary"}


OWN = [sample, work_tree_report, outside_git_report, audit_report]


@pytest.mark.parametrize("make", [*OWN, _MD.evil_report])
def test_only_folds_are_raw_html_and_they_are_balanced(make: Any) -> None:
    """The Markdown's only raw HTML is our own `<details>`/`<summary>`: every other tag in the
    rendered page comes from Markdown syntax, so no user text became markup."""
    text = render_markdown(make())
    assert text.count("<details>") == text.count("</details>")
    tags = set(re.findall(r"<([a-z0-9]+)[\s>]", rendered(text)))
    assert tags <= ALLOWED_TAGS, tags - ALLOWED_TAGS


@pytest.mark.parametrize("make", OWN)
def test_html_carries_no_markdown_syntax(make: Any) -> None:
    text = parse(render_html(make())).root.all_text()
    assert "**" not in text and "`" not in text
