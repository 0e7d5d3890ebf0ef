"""Rendering of the exploratory layer and of blind passes from hand-made report documents:
both verdicts side by side, the NOT-READY line of a pending amendment, the amendment chart drawn
to scale, escaping, and documents written before these keys existed."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from aoven_git.render.html import render_html
from aoven_git.render.markdown import render_markdown
from tests.test_render_html import _chromium, _console_lines, _f, _run_chromium, by_id, parse
from tests.test_render_markdown import EVIL, amended_report, evil_amended_report, legacy_report, sample


def section(text: str, title: str) -> str:
    start = text.index(f"## {title}")
    end = text.find("\n## ", start + 3)
    return text[start:end if end != -1 else None]


# --------------------------------------------------------------------------- Markdown


def test_markdown_amendments_beside_the_preregistered_verdict() -> None:
    text = render_markdown(amended_report())
    assert ("🧪 **Exploratory, after amendments:** `d8-load` 🔴 FAIL; `d7-clarity` ⚪ NOT-READY. The "
            "pre-registered verdict stays **PASS** (see Amendments).") in text
    part = section(text, "Amendments (exploratory)")
    assert text.index("## Reconciliation") < text.index("## Amendments") < text.index("## Self-bias")
    first = part[part.index("### 🧪 `d8-load`"):part.index("### 🧪 `d7-clarity`")]
    assert "> **Exploratory** · re-scores D8 of B in pass unblinded (10 cells per rater)" in first
    assert "🔴 FAIL (exploratory) beside the pre-registered PASS: D8 (Cognitive load) load rises" in first
    assert "| verdict | 🟢 PASS | 🔴 FAIL |" in first
    assert "| improvement | 42.9% | 30.0% |" in first
    assert "| mean aggregate B | 6.33 | 8.40 |" in first
    assert "| `fail.load.D8` | D8 (Cognitive load): mean B − mean A \\> 0.5 | +0.20 → +0.80 | 0.50 | " \
           "not met → met: fails |" in first
    assert "| `Q9/B/D8` | `logician` | 1 | 2 |" in first
    assert "| `Q2/B/D8` | 1.00 (agreed) | 2.00 (agreed) |" in first
    second = part[part.index("### 🧪 `d7-clarity`"):]
    assert "⚪ NOT-READY (exploratory) beside the pre-registered PASS: required rater logician" in second
    assert "**Not ready because:**\n\n- required rater logician has not revealed the re-scores" in second
    assert "| verdict | 🟢 PASS | ⚪ NOT-READY |" in second
    assert "| improvement | 42.9% | withheld |" in second  # held back while NOT-READY, not undefined
    assert "Changed scores: each rater's re-score that differs from their score before: none." in second


def test_markdown_blind_pass_pending() -> None:
    text = render_markdown(amended_report())
    agreement = section(text, "Agreement (weighted κ)")
    blinded = agreement[agreement.index("### Pass `blinded` (blind)"):]
    assert blinded.split("\n")[2].startswith("⏳ Pass blinded was scored blind and is pending")
    assert "| dimension |" not in blinded  # no κ table before the key
    blinding = section(text, "Blinding")
    assert "⏳ **Blind pass** `blinded`: Pass blinded was scored blind and is pending" in blinding
    assert "The verdict uses this pass, so it stays NOT-READY until then." in blinding


def test_markdown_escapes_user_text_in_amendments() -> None:
    text = render_markdown(evil_amended_report())
    part = section(text, "Amendments (exploratory)")
    prose = re.sub(r"`[^`]*`", "", part)  # code spans show their text verbatim, as everywhere
    assert "<script>" not in prose and "\\<script\\>alert(1)\\</script\\>" in prose
    assert "<script>" not in re.sub(r"`[^`]*`", "", section(text, "Blinding"))


def test_documents_without_the_new_keys_render_as_before() -> None:
    for doc in (legacy_report(), sample()):
        text = render_markdown(doc)
        assert "Amendments" not in text and "Blind pass" not in text and "Exploratory" not in text
        html = render_html(doc)
        assert 'href="#amendments"' not in html and 'class="exploratory-note"' not in html
    empty = sample()
    empty["amendments"], empty["blind_passes"] = [], []
    assert render_markdown(empty) == render_markdown(sample())
    assert 'id="amendments"' not in render_html(empty)


# --------------------------------------------------------------------------- HTML


def test_html_both_verdicts_side_by_side_and_the_chart_to_scale() -> None:
    tree = parse(render_html(amended_report()))
    [note] = tree.root.find_all("p", "exploratory-note")
    assert "After amendments: d8-load FAIL; d7-clarity NOT-READY." in note.all_text()
    links = [a.all_text() for a in tree.root.find_all("a") if a.attrs.get("href") == "#amendments"]
    assert "Amendments" in links
    first = by_id(tree, "amendment-d8-load")
    cards = first.find_all("div", "verdict")
    assert [c.find_all("span", "badge")[0].all_text() for c in cards] == ["PASS", "FAIL"]
    assert ["v-pass" in c.classes() for c in cards] == [True, False] and "v-fail" in cards[1].classes()
    svg = by_id(tree, "chart-amendment-1")
    assert svg.attrs.get("role") == "img" and "d8-load" in (svg.attrs.get("aria-label") or "")
    pre = {b.children[0].all_text(): b for b in svg.find_all("rect", "bar-pre")}
    new = {b.children[0].all_text(): b for b in svg.find_all("rect", "bar-new")}
    assert len(pre) == len(new) == 16  # 8 dimensions × (A, B)
    b_pre, b_new = pre["D8 B, pre-registered: 1.00"], new["D8 B, exploratory: 1.60"]
    assert _f(b_new, "height") / _f(b_pre, "height") == pytest.approx(1.6, rel=0.02)
    d1 = pre["D1 A, pre-registered: 2.00"]
    assert _f(d1, "height") / _f(b_pre, "height") == pytest.approx(2.0, rel=0.02)
    bottoms = {round(_f(b, "y") + _f(b, "height"), 1) for b in (*pre.values(), *new.values())}
    assert len(bottoms) == 1
    assert len(svg.find_all("rect", "amended-band")) == 1
    [mark] = svg.find_all("path", "moved-mark")
    assert mark.all_text() == "D8 B: 3 cells moved (Q2/B/D8, Q3/B/D8, Q9/B/D8)"
    # the NOT-READY amendment: its verdict grey, its means withheld (no exploratory bars)
    second = by_id(tree, "amendment-d7-clarity")
    assert "v-grey" in second.find_all("div", "verdict")[1].classes()
    assert "required rater logician has not revealed" in second.all_text()
    assert by_id(tree, "chart-amendment-2").find_all("rect", "bar-new") == []


def test_html_blind_pass_pending() -> None:
    tree = parse(render_html(amended_report()))
    agreement = by_id(tree, "agreement").all_text()
    assert "Pass blinded (blind)" in agreement and "scored blind and is pending" in agreement
    assert [n for n in tree.root.iter() if n.attrs.get("id") == "chart-kappa-2"] == []
    blinding = by_id(tree, "blinding").all_text()
    assert "Blind pass blinded: Pass blinded was scored blind and is pending" in blinding


def test_html_escapes_user_text_in_amendments() -> None:
    doc = render_html(evil_amended_report())
    tree = parse(doc)
    assert not tree.root.find_all("script")
    assert "<script>alert(1)</script>" not in doc
    assert EVIL in by_id(tree, "amendments").all_text()
    assert not re.search(r"\b(nan|NaN|None|null)\b", tree.root.all_text())


@pytest.mark.slow
def test_chromium_renders_amendments_without_console_errors(tmp_path: Path) -> None:
    if _chromium() is None:
        pytest.skip("chromium not installed: no chromium/chromium-browser/google-chrome on PATH")
    page = tmp_path / "amended.html"
    page.write_text(render_html(amended_report()), encoding="utf-8")
    proc = _run_chromium(tmp_path, page, "--dump-dom")
    assert proc.returncode == 0, proc.stderr[-2000:]
    for ident in ("chart-amendment-1", "chart-amendment-2", "amendment-d8-load"):
        assert f'id="{ident}"' in proc.stdout
    assert _console_lines(proc.stderr) == []
